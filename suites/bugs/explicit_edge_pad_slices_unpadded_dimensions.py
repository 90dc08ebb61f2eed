# On an Explicit mesh, jnp.pad(x, ((0, 0), (0, 0)), mode='edge') of x sharded along a dimension pads
# nothing, yet raises ShardingTypeError: _pad_edge slices the edges of every dimension, unpadded ones too.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2,), ("a",), axis_types=(AxisType.Explicit,))
x = np.arange(4, dtype=np.int32).reshape(2, 2)
xs = jax.device_put(x, NamedSharding(mesh, P("a")))  # i32[2@a, 2]

# jnp.pad(mode='symmetric' or 'reflect') skips such dimensions since JAX's 1f556c1262; mode 'edge' does not.
expected = np.pad(x, ((0, 0), (0, 0)), mode="edge")
try:
    got = jnp.pad(xs, ((0, 0), (0, 0)), mode="edge")
except Exception as e:
    print(f"got:      {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    print(f"expected: {expected.tolist()} laid out P('a')")
    sys.exit(1)
print(f"got:      {np.asarray(got).tolist()} laid out {got.sharding.spec}")
print(f"expected: {expected.tolist()} laid out P('a')")
sys.exit(0 if np.array_equal(np.asarray(got), expected) and got.sharding.is_equivalent_to(xs.sharding, 2) else 1)
