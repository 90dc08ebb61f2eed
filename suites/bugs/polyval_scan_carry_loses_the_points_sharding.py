"""On an Explicit mesh, jnp.polyval(p, x) with the points x cut over a mesh axis (p replicated) raises
TypeError "scan body function carry input and carry output must have equal types ... The input carry
y has type int32[4] but the corresponding output carry component has type int32[4@a]": polyval starts
its scan's carry with lax.full_like(x_arr, 0, shape=shape, ...), which inside polyval's jit is typed
replicated (full_like keeps a traced x's sharding only when shape is None), while the body's
y * x_arr + p is cut like x. An elementwise polynomial of a cut array is well typed (numpy's answer,
typed like x); the Auto mesh computes it. Exits 1 while it raises or differs from numpy."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

try:
    from jax.sharding import AxisType
    mesh = jax.make_mesh((2,), ("a",), axis_types=(AxisType.Explicit,))
except (ImportError, TypeError, AttributeError) as e:
    print(f"not applicable: no Explicit mesh axes in this JAX ({e})")
    sys.exit(0)
if getattr(jax._src.core, "ShardingTypeError", None) is None:
    print("not applicable: this JAX has Explicit axes but no ShardingTypeError "
          "(explicit sharding's first form)")
    sys.exit(0)
use_mesh = getattr(jax, "set_mesh", None) or jax.sharding.use_mesh

p = np.array([1, 2, 3], np.int32)      # x**2 + 2x + 3, replicated
x = np.arange(4, dtype=np.int32)       # the points, cut P('a')
expected = np.polyval(p, x)
with use_mesh(mesh):
    xs = jax.device_put(x, NamedSharding(mesh, P("a")))
    try:
        got = jnp.polyval(p, xs)
    except Exception as e:
        print(f"polyval(p, x cut P('a')): raised {type(e).__name__}: {' '.join(str(e).split())[:260]}")
        print(f"expected: {expected.tolist()} (typed like x, P('a'))")
        sys.exit(1)
print(f"polyval(p, x cut P('a')): got {np.asarray(got).tolist()} laid out {got.sharding.spec}, "
      f"expected {expected.tolist()}")
sys.exit(0 if np.array_equal(np.asarray(got), expected) else 1)
