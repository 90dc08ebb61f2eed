# On an Explicit mesh, jnp.vectorize(lambda a, b: a * b - a)(x, y) with x float32[4] cut over mesh axis 'a'
# and y (same shape) replicated raises
#   ValueError: Mapped away dimension of inputs passed to vmap should be sharded the same.
#   Got inconsistent axis specs: a vs None
# jnp.vectorize maps every operand whose broadcast dimension has size > 1 with in_axes=0 and hands them to
# jax.vmap as they are, and vmap refuses mapped dimensions sharded differently. The same arithmetic x * y - x
# is accepted (a cut and a replicated dimension broadcast to the cut one) and gives x*y-x sharded P('a');
# vectorize documents NumPy broadcasting, so it should too. jnp.matvec, vecmat, vecdot, jnp.piecewise (cut x,
# unsharded conditions) and jnp.frompyfunc ufuncs are built on jnp.vectorize and raise the same.
# Prints what JAX gives and numpy's answer; exits 1 while the bug is there, 0 once fixed.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

AxisType = getattr(jax.sharding, "AxisType", None)
mesh_context = getattr(jax, "set_mesh", None) or getattr(jax.sharding, "use_mesh", None)
if AxisType is None or mesh_context is None:
    print("not applicable: this JAX has no Explicit mesh axes (jax.sharding.AxisType with jax.set_mesh or "
          "jax.sharding.use_mesh)")
    sys.exit(0)

x = np.array([0.0, 1.0, 2.0, 3.0], np.float32)
y = np.array([2.0, 3.0, 4.0, 5.0], np.float32)
expected = x * y - x
mesh = jax.make_mesh((2,), ("a",), axis_types=(AxisType.Explicit,))
with mesh_context(mesh):
    xs = jax.device_put(x, NamedSharding(mesh, P("a")))
    ys = jax.device_put(y, NamedSharding(mesh, P()))
    same = np.asarray(xs * ys - xs).tolist()
    print("expected:", expected.tolist(), "(x * y - x on the same operands gives", same, ")")
    try:
        got = np.asarray(jnp.vectorize(lambda a, b: a * b - a)(xs, ys))
    except Exception as e:  # the bug
        print("got:      raised", type(e).__name__, str(e)[:200])
        sys.exit(1)
print("got:     ", got.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
