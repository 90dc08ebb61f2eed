"""On an Explicit mesh, jnp.polyadd(a1, a2) (and jnp.polysub) of a shorter operand cut over a mesh
axis and a longer replicated one raises ValueError 'Incompatible types for broadcasting' (from
ops/scatter.py _scatter_impl's jnp.broadcast_to(y, ..., out_sharding=indexer.slice_sharding)),
where the Auto mesh and the elementwise a2[2:] + a1 compute, and lax.scatter_add of the same operands
raises the documented ShardingTypeError. polyadd is a2.at[-2:].add(a1), so x.at[2:].add(u) fails the
same way. Exits 1 while a ValueError (or a wrong value) comes back; 0 on numpy's answer or on a
ShardingTypeError (the documented rejection)."""
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
use_mesh = getattr(jax, "set_mesh", None) or getattr(jax.sharding, "use_mesh", None)
if use_mesh is None:
    print(f"not applicable: neither jax.set_mesh nor jax.sharding.use_mesh in this JAX")
    sys.exit(0)
ShardingTypeError = getattr(getattr(jax, "_src").core, "ShardingTypeError", None)
if ShardingTypeError is None:  # 0.5.3: Explicit axes, but no ShardingTypeError and no scatter rule yet
    print(f"not applicable: this JAX has Explicit axes but no ShardingTypeError (explicit sharding's first form)")
    sys.exit(0)

a1 = np.array([1, 2], np.int32)          # the shorter operand, cut P('a')
a2 = np.array([1, 2, 3, 4], np.int32)    # the longer operand, replicated P()
failed = False
with use_mesh(mesh):
    a1s = jax.device_put(a1, NamedSharding(mesh, P("a")))
    a2s = jax.device_put(a2, NamedSharding(mesh, P()))
    for name, f, ref in (("polyadd", jnp.polyadd, np.polyadd), ("polysub", jnp.polysub, np.polysub),
                         ("a2.at[2:].add(a1)", lambda p, q: q.at[2:].add(p), lambda p, q: q + np.r_[0, 0, p])):
        expected = ref(a1, a2)
        try:
            got = np.asarray(f(a1s, a2s))
        except Exception as e:
            documented = ShardingTypeError is not None and isinstance(e, ShardingTypeError)
            print(f"{name}: raised {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            print(f"{name}: expected {expected.tolist()} (or a ShardingTypeError)")
            failed |= not documented
            continue
        print(f"{name}: got {got.tolist()}, expected {expected.tolist()}")
        failed |= not np.array_equal(got, expected)
sys.exit(1 if failed else 0)
