"""On an Explicit mesh, lax.ragged_dot (and lax.ragged_dot_general) of operands that are all
replicated raises NotImplementedError "Explicit sharding inference for ragged_dot_general is not
currently implemented. Please specify out_sharding." (jax/_src/lax/lax.py
_ragged_dot_general_sharding_rule raises whenever out_sharding is None, since JAX 0.10.1), though the
result of replicated operands is plainly replicated; with out_sharding=P() it computes. Exits 1 while the call without out_sharding raises
anything but a ShardingTypeError (0.6.0-0.10.0 raise the generic ShardingTypeError 'sharding rule for
ragged_dot_general is not implemented'), or differs from numpy."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys

import numpy as np
import jax
from jax import lax
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

lhs = np.arange(8, dtype=np.float32).reshape(4, 2)      # (m, k)
rhs = np.arange(8, dtype=np.float32).reshape(2, 2, 2)   # (g, k, n)
group_sizes = np.array([1, 3], np.int32)                # rows 0 | 1..3
expected = np.concatenate([lhs[:1] @ rhs[0], lhs[1:] @ rhs[1]])
with use_mesh(mesh):
    args = [jax.device_put(v, NamedSharding(mesh, P())) for v in (lhs, rhs, group_sizes)]
    try:
        got = np.asarray(lax.ragged_dot(*args))
    except ShardingTypeError as e:  # 0.6.0-0.10.0: the generic missing-rule ShardingTypeError
        print(f"replicated operands: raised ShardingTypeError (the documented rejection): {str(e).splitlines()[0][:160]}")
        sys.exit(0)
    except Exception as e:
        print(f"replicated operands: raised {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        print(f"expected: {expected.tolist()} (replicated)")
        sys.exit(1)
print(f"got {got.tolist()}, expected {expected.tolist()}")
sys.exit(0 if np.array_equal(got, expected) else 1)
