# On an Explicit mesh, x[idx] with x and idx sharded over the same mesh axis raises an internal
# DuplicateSpecError instead of a ShardingTypeError.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2,), ("a",), axis_types=(AxisType.Explicit,))
x = jax.device_put(np.arange(4.0).reshape(2, 2), NamedSharding(mesh, P(None, "a")))  # f32[2,2@a]
idx = jax.device_put(np.array([1, 0]), NamedSharding(mesh, P("a")))                 # i32[2@a]

# The result would be f32[2@a,2@a]. jnp.take(x, idx, axis=0) on the same operands
# raises ShardingTypeError "Use `.at[...].get(out_sharding=)` ...".
with jax.set_mesh(mesh):
    try:
        got = x[idx]
    except Exception as e:
        print(f"got:      {type(e).__name__}: {str(e).splitlines()[0]}")
        print("expected: ShardingTypeError (as jnp.take(x, idx, axis=0) raises), or [[2.0, 3.0], [0.0, 1.0]]")
        sys.exit(0 if type(e).__name__ == "ShardingTypeError" else 1)
expected = np.arange(4.0).reshape(2, 2)[[1, 0]]
print("got:     ", np.asarray(got).tolist())
print("expected:", expected.tolist())
sys.exit(0 if np.array_equal(np.asarray(got), expected) else 1)
