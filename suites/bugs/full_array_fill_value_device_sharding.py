# jnp.full((8, 2), np.array([3, 4], np.int16), device=NamedSharding(mesh, P('a'))) on an Auto mesh of eight
# devices raises ValueError ("PartitionSpec passed to jnp.broadcast_to cannot contain axis names that are
# of type Auto") where a scalar fill_value is placed as asked, and 0.4.31-0.10.1 return the broadcast
# values committed to the sharding. jnp.full's docstring: "fill_value: scalar or array with which to fill
# the created array" and "device: (optional) Device or Sharding to which the created array will be
# committed". Exits 0 where jnp.full takes no device= (before 0.4.31): no bug to measure.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import inspect
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

if "device" not in inspect.signature(jnp.full).parameters:
    print("jnp.full takes no device= here: nothing to measure")
    sys.exit(0)
mesh = Mesh(np.array(jax.devices()[:8]), ("a",))
s = NamedSharding(mesh, P("a"))
fill = np.array([3, 4], np.int16)
expected = np.broadcast_to(fill, (8, 2))
print("expected:", expected.tolist(), "laid out P('a')")
try:
    got = jnp.full((8, 2), fill, device=s)
except Exception as e:  # the finding
    print("got: raised", type(e).__name__, str(e).splitlines()[0][:200])
    sys.exit(1)
print("got:", np.asarray(got).tolist(), got.sharding)
sys.exit(0 if (np.asarray(got) == expected).all() and got.sharding.is_equivalent_to(s, 2) else 1)
