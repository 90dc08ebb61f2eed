# On an Explicit mesh, jnp.argpartition(x, 3, axis=0) of x float32[12, 2] cut over mesh axis 'a' on dimension 1
# (not the partitioned one) raises
#   ValueError: Mapped away dimension of inputs passed to vmap should be sharded the same.
#   Got inconsistent axis specs: None vs a
# jnp.argpartition (jax/_src/numpy/sorting.py) builds its proxy with lax.full(arr.shape, 1.0), replicated, and
# vmaps `a.at[i].set(0)` over it together with the bottom-k indices from lax.top_k, which keep x's cut; vmap
# refuses the two. jnp.partition of the same x, and jnp.argsort(x, axis=0) (JAX's test_argsort_error), keep
# the cut and compute. Prints what JAX gives and numpy's answer; exits 1 while the bug is there, 0 once fixed.
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

k = 3
x = np.arange(24, dtype=np.float32)[::-1].reshape(2, 12).T.copy()  # (12, 2), each column descending
expected = np.sort(x, axis=0)  # a valid partition: the k smallest first (any order), then x's k-th, then the rest
mesh = jax.make_mesh((2,), ("a",), axis_types=(AxisType.Explicit,))
with mesh_context(mesh):
    xs = jax.device_put(x, NamedSharding(mesh, P(None, "a")))
    try:
        idx = np.asarray(jnp.argpartition(xs, k, axis=0))
    except Exception as e:  # the bug
        print("expected: x[idx] with", expected[:k].T.tolist(), "(any order) before", expected[k].tolist())
        print("got:      raised", type(e).__name__, str(e)[:200])
        sys.exit(1)
got = np.take_along_axis(x, idx, axis=0)
ok = (np.array_equal(np.sort(got[:k], axis=0), expected[:k]) and np.array_equal(got[k], expected[k])
      and np.array_equal(np.sort(got[k + 1:], axis=0), expected[k + 1:]))
print("expected: x[idx] with", expected[:k].T.tolist(), "(any order) before", expected[k].tolist())
print("got:      x[idx] with", got[:k].T.tolist(), "before", got[k].tolist())
sys.exit(0 if ok else 1)
