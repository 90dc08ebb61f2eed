"""lax.ragged_dot (and lax.ragged_dot_general) on an Explicit mesh, every operand replicated:
NotImplementedError "Explicit sharding inference for ragged_dot_general is not currently implemented.
Please specify out_sharding." (jax/_src/lax/lax.py _ragged_dot_general_sharding_rule raises whenever
out_sharding is None), not a ShardingTypeError, even where nothing is cut and the result is plainly
replicated. Exits 1 while it raises or differs from numpy."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys
import numpy as np
import jax
from jax import lax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Explicit,) * 2)
x = np.arange(8, dtype=np.float32).reshape(4, 2)
y = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
g = np.array([1, 3], np.int32)
expected = np.concatenate([x[:1] @ y[0], x[1:] @ y[1]])
print("unsharded equals numpy:", np.array_equal(np.asarray(lax.ragged_dot(x, y, g)), expected))
with jax.set_mesh(mesh):
    args = [jax.device_put(v, NamedSharding(mesh, P())) for v in (x, y, g)]
    try:
        got = np.asarray(lax.ragged_dot(*args))
    except Exception as e:
        print("replicated operands: raised", type(e).__name__, str(e)[:200])
        sys.exit(1)
print("got", got, "expected", expected)
sys.exit(0 if np.array_equal(got, expected) else 1)
