# jnp.asarray(x, out_sharding=P('a')) of a numpy array x inside an Explicit mesh 'a' of eight CPU
# devices returns x's values on one device (SingleDeviceSharding, uncommitted) instead of laid out
# P('a'); jnp.array(x, copy=False, out_sharding=P('a')) likewise, while jnp.array(x, out_sharding=P('a'))
# lays it out as asked. jnp.asarray hands copy=False (bool(None)) and out_sharding to jnp.array, whose
# no-copy fast path for numpy inputs ("Use device_put to avoid a copy for ndarray inputs") checks
# `device is None` but not `out_sharding`, and returns api.device_put(object) ("Keep the output
# uncommitted"). jnp.array's docstring: "out_sharding: (optional) PartitionSpec or NamedSharding
# representing the sharding of the created array"; asarray takes the same parameter and passes it on,
# so the result should be a NamedSharding with spec P('a'). On a release whose jnp.asarray has no
# out_sharding (before 0.8.0) the bug is not there.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import inspect
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

if "out_sharding" not in inspect.signature(jnp.asarray).parameters or not hasattr(jax.sharding, "AxisType"):
    print("this JAX: jnp.asarray has no out_sharding parameter (the bug is not there)")
    sys.exit(0)

mesh = Mesh(np.array(jax.devices()[:8]), ("a",), axis_types=(jax.sharding.AxisType.Explicit,))
x = np.arange(16, dtype=np.int32).reshape(8, 2)
with (jax.set_mesh if hasattr(jax, "set_mesh") else jax.sharding.use_mesh)(mesh):
    expected = jnp.array(x, out_sharding=P("a"))
    got = {"jnp.array(x, copy=False, out_sharding=P('a'))": jnp.array(x, copy=False, out_sharding=P("a")),
           "jnp.asarray(x, out_sharding=P('a'))": jnp.asarray(x, out_sharding=P("a"))}


def laid_out(a):
    return (type(a.sharding).__name__, tuple(a.sharding.spec) if isinstance(a.sharding, NamedSharding) else None,
            np.asarray(a).tolist() == x.tolist())


print("expected (as jnp.array(x, out_sharding=P('a'))): (sharding type, spec, values right) =", laid_out(expected))
for name, a in got.items():
    print(f"got {name}: {laid_out(a)}")
sys.exit(0 if all(laid_out(a) == ("NamedSharding", ("a",), True) for a in got.values()) else 1)
