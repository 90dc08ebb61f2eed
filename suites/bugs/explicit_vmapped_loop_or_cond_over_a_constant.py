# On an Explicit mesh, jax.vmap over a dimension cut on mesh axis 'a' of a lax.fori_loop (or scan, while_loop,
# cond with a batched predicate) whose carry starts as a Python/numpy constant raises
#   ValueError: Resource axis: a of P('a',) is not found in mesh: ().
# The loop's batching rule re-traces the body with the carry batched: core.unmapped_aval inserts the vmapped
# mesh axis 'a' into the carry aval's sharding, but a constant's aval carries an empty AbstractMesh, so the new
# NamedSharding names an axis its mesh lacks. The same loop without a mesh, or with the carry made inside the
# mesh (jnp.float32(0) eagerly), computes 2*q. jnp.searchsorted (method 'scan', the default, and
# 'scan_unrolled') hits this from 0.10.2 on, and with it digitize, interp, histogram*, isin(binary_search).
# Prints what JAX gives and numpy's answer; exits 1 while the bug is there, 0 once fixed.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import numpy as np
import jax
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P

AxisType = getattr(jax.sharding, "AxisType", None)
mesh_context = getattr(jax, "set_mesh", None) or getattr(jax.sharding, "use_mesh", None)
if AxisType is None or mesh_context is None:
    print("not applicable: this JAX has no Explicit mesh axes (jax.sharding.AxisType with jax.set_mesh or "
          "jax.sharding.use_mesh)")
    sys.exit(0)

q = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
expected = q + q  # two iterations of c + q from c = 0
mesh = jax.make_mesh((2,), ("a",), axis_types=(AxisType.Explicit,))
f = jax.vmap(lambda v: lax.fori_loop(0, 2, lambda i, c: c + v, np.float32(0)))
with mesh_context(mesh):
    qs = jax.device_put(q, NamedSharding(mesh, P("a")))
    try:
        got = np.asarray(f(qs))
    except Exception as e:  # the bug
        print("expected:", expected.tolist())
        print("got:      raised", type(e).__name__, str(e)[:200])
        sys.exit(1)
print("expected:", expected.tolist())
print("got:     ", got.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
