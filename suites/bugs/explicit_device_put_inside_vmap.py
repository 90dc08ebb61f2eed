# Under jit(vmap(f)) on an Explicit mesh, f(v) = -jax.device_put(v, NamedSharding(mesh, P(None, 'a')))
# should cut each value's last dimension (the spec names the unbatched value's dimensions, as a
# sharding constraint's batching rule reads it); device_put's batching rule hands the spec to the
# batched value instead, whose size-1 dimension P(None, 'a') cannot cut: a ValueError.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",), axis_types=(AxisType.Explicit,))
x = np.arange(4, dtype=np.uint32).reshape(2, 1, 2)  # a batch of two [1, 2] values
f = jax.jit(jax.vmap(lambda v: -jax.device_put(v, NamedSharding(mesh, P(None, "a")))))
enter = getattr(jax, "set_mesh", None) or jax.sharding.use_mesh
with enter(mesh):
    try:
        got = np.asarray(f(jax.device_put(x, NamedSharding(mesh, P())))).tolist()
    except Exception as e:
        got = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
print("got:     ", got)
print("expected:", (-x).tolist())
sys.exit(0 if got == (-x).tolist() else 1)
