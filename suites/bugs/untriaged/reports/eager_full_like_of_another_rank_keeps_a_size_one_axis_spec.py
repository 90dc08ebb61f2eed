"""Eager jnp.setdiff1d(ar1, ar2, size=1) with ar1 = [3] laid out P('x') over a size-1 mesh axis raises
instead of returning [3]: setdiff1d makes its fill value with lax.full_like(arr1, ..., shape=()),
and eager full_like reuses arr1's sharding whenever it is fully replicated (a spec naming only size-1
axes is), whatever the shape asked: a rank-0 value gets the rank-1 spec P('x'). On an Auto mesh
(any release) the scalar is made, and the jitted where that reads it fails to lower: IndexError
'list assignment index out of range'; on an Explicit mesh full_like itself raises
AssertionError (0, P('x',)). Under jit the same call returns [3]. Exits 1 while either raises."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

ar1 = np.array([3], np.int32)
ar2 = np.array([1, 2], np.int32)
expected = np.setdiff1d(ar1, ar2)  # [3]

meshes = [("Auto", Mesh(np.array(jax.devices()[:1]), ("x",)))]
try:
    from jax.sharding import AxisType
    meshes.append(("Explicit", jax.make_mesh((1,), ("x",), axis_types=(AxisType.Explicit,))))
except (ImportError, TypeError, AttributeError):
    print(f"(no Explicit mesh axes in this JAX: the Auto mesh only)")

failed = False
for kind, mesh in meshes:
    x = jax.device_put(ar1, NamedSharding(mesh, P("x")))  # one device; 'x' has size 1
    for way, f in (("eager", jnp.setdiff1d), ("jit", jax.jit(jnp.setdiff1d, static_argnames="size"))):
        try:
            got = np.asarray(f(x, ar2, size=1))
        except Exception as e:
            if kind == "Explicit" and "sharding rule for scatter" in str(e):  # 0.5.3-0.7.0
                print(f"{kind} {way}: not applicable: this JAX has no Explicit sharding rule for "
                      f"scatter-add, which setdiff1d reaches first ({type(e).__name__})")
                continue
            print(f"{kind} {way}: raised {type(e).__name__}: {str(e).splitlines()[0][:150] if str(e) else ''}")
            print(f"{kind} {way}: expected {expected.tolist()}")
            failed = True
            continue
        print(f"{kind} {way}: got {got.tolist()}, expected {expected.tolist()}")
        failed |= not np.array_equal(got, expected)
sys.exit(1 if failed else 0)
