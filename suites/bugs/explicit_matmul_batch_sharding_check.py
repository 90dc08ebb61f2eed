# On an Explicit mesh, x @ y with the batch dimension sharded on y only raises ValueError
# "Incompatible types for matmul arguments" (0.10.1 returns the right values).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2,), ("a",), axis_types=(AxisType.Explicit,))
a = np.arange(2, dtype=np.float32).reshape(2, 1, 1)
b = np.arange(2, dtype=np.float32).reshape(2, 1, 1) + 2
x = jax.device_put(a, NamedSharding(mesh, P()))     # f32[2,1,1], replicated
y = jax.device_put(b, NamedSharding(mesh, P("a")))  # f32[2@a,1,1], batch dimension sharded
expected = a @ b

# jnp.einsum("bij,bjk->bik", x, y) and lax.dot_general on the same operands return `expected`
# up to 0.11.0 and raise ShardingTypeError "dot_general requires lhs batch dimensions and rhs
# batch dimensions to have the same sharding" from 0.11.1 on; either is right for x @ y.
try:
    got = x @ y
except Exception as e:
    print(f"got:      {type(e).__name__}: {str(e).splitlines()[0]}")
    print("expected:", expected.tolist(), "or ShardingTypeError, as jnp.einsum gives")
    sys.exit(0 if type(e).__name__ == "ShardingTypeError" else 1)
print("got:     ", np.asarray(got).tolist())
print("expected:", expected.tolist())
sys.exit(0 if np.array_equal(np.asarray(got), expected) else 1)
