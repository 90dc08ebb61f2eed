# jnp.array(x, ndmin=3, device=NamedSharding(mesh, P(None, 'a', None))) of a 2-d x raises ValueError
# ("Sharding ... is only valid for values of rank at least 3, but was applied to a value of rank 2"):
# the sharding is applied to x before ndmin adds its dimension. jnp.array's docstring: "device:
# (optional) Device or Sharding to which the created array will be committed", and the created array
# has rank 3 (numpy's np.array(x, ndmin=3) has shape (1, 8, 2)). Exits 0 where jnp.array takes no
# device= (before 0.4.31): no bug to measure.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import inspect
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

if "device" not in inspect.signature(jnp.array).parameters:
    print("jnp.array takes no device= here: nothing to measure")
    sys.exit(0)
mesh = Mesh(np.array(jax.devices()[:8]), ("a",))
s = NamedSharding(mesh, P(None, "a", None))
x = np.arange(16, dtype=np.int32).reshape(8, 2)
expected = np.array(x, ndmin=3)
print("expected: shape", expected.shape, "laid out P(None, 'a', None)")
try:
    got = jnp.array(x, ndmin=3, device=s)
except Exception as e:  # the finding
    print("got: raised", type(e).__name__, str(e).splitlines()[0][:200])
    sys.exit(1)
print("got:", got.shape, got.sharding.spec)
sys.exit(0 if np.array_equal(np.asarray(got), expected) and got.sharding.is_equivalent_to(s, 3) else 1)
