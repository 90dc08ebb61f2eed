"""On an Explicit mesh, jnp.polyval(p, x) with the coefficients p cut over a mesh axis (x replicated)
raises ValueError "0th dimension of all xs should be replicated. Got P('a',)": polyval scans over p
(lax.scan(..., y, p_arr)), and lax.scan refuses xs whose scanned dimension is cut
(jax/_src/lax/control_flow/loops.py _infer_scan_length), a refusal JAX's own tests assert as
ValueError (tests/pjit_test.py ShardingInTypesTest.test_scan), not the ShardingTypeError of an
unresolvable sharding; lax.scan over the cut p directly raises the same. The Auto mesh computes it.
Exits 1 while polyval raises anything but a ShardingTypeError, or differs from numpy."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
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
ShardingTypeError = getattr(getattr(jax, "_src").core, "ShardingTypeError", None)
if ShardingTypeError is None:
    print(f"not applicable: this JAX has Explicit axes but no ShardingTypeError (explicit sharding's first form)")
    sys.exit(0)
use_mesh = getattr(jax, "set_mesh", None) or getattr(jax.sharding, "use_mesh")

p = np.array([0, 1, 2, 3], np.int32)   # x**2 + 2x + 3 (leading 0), cut P('a')
x = np.arange(4, dtype=np.int32)       # the points, replicated
expected = np.polyval(p, x)
with use_mesh(mesh):
    ps = jax.device_put(p, NamedSharding(mesh, P("a")))
    try:
        got = jnp.polyval(ps, x)
    except ShardingTypeError as e:
        print(f"polyval(p cut P('a'), x): raised ShardingTypeError (the documented rejection): {str(e)[:200]}")
        sys.exit(0)
    except Exception as e:
        print(f"polyval(p cut P('a'), x): raised {type(e).__name__}: {' '.join(str(e).split())[:200]}")
        print(f"expected: {expected.tolist()} (or a ShardingTypeError)")
        sys.exit(1)
print(f"polyval(p cut P('a'), x): got {np.asarray(got).tolist()}, expected {expected.tolist()}")
sys.exit(0 if np.array_equal(np.asarray(got), expected) else 1)
