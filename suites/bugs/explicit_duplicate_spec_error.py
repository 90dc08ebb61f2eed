# On an Explicit mesh, jnp.where whose operands broadcast one mesh axis onto two result dimensions
# raises an internal DuplicateSpecError instead of a ShardingTypeError.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2,), ("a",), axis_types=(AxisType.Explicit,))
x = jax.device_put(np.arange(2), NamedSharding(mesh, P("a")))                 # i32[2@a]
y = jax.device_put(np.arange(2).reshape(2, 1), NamedSharding(mesh, P("a")))   # i32[2@a,1]

# The result would be i32[2@a,2@a]. `x + y` on the same operands raises
# ShardingTypeError "add operation ... produces an illegally sharded result".
try:
    got = jnp.where(True, x, y)
except Exception as e:
    print(f"got:      {type(e).__name__}: {str(e).splitlines()[0]}")
    print("expected: ShardingTypeError (as x + y raises), or",
          np.where(True, np.arange(2), np.arange(2).reshape(2, 1)).tolist())
    sys.exit(0 if type(e).__name__ == "ShardingTypeError" else 1)
expected = np.where(True, np.arange(2), np.arange(2).reshape(2, 1))
print("got:     ", np.asarray(got).tolist())
print("expected:", expected.tolist())
sys.exit(0 if np.array_equal(np.asarray(got), expected) else 1)
