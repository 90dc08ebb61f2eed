# jnp.percentile / jnp.quantile (and the nan- forms) with method='inverted_cdf' raise TypeError
# ("lax.mul requires arguments to have the same dtypes") whenever q's float dtype is not a's:
# jax/_src/numpy/reductions.py, _quantile, inverted_cdf branch, `target_w = lax.mul(q_f, tw_f)`
# multiplies q (kept in its own dtype: percentile promotes q alone, never with a) by the total
# weight, which is in a's dtype (a and weights promoted together). Every other method handles q in its
# own dtype and returns a's dtype. With jax_enable_x64, float32 a and a float64 q (a numpy float64
# array or a Python float) raise, weights or not; without it, float16 a with a float32 q does. numpy
# returns the weighted inverted-CDF percentiles below (an element of a per q), as JAX does for the
# same call without x64 (the three calls here should all give them).
# On releases that lack `weights=` (or method='inverted_cdf') the calls raise TypeError/ValueError
# for the unknown keyword or method: that is printed as what JAX returned, and the script exits 1.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["JAX_ENABLE_X64"] = "1"
import sys

import jax
import jax.numpy as jnp
import numpy as np

a = np.array([[3, -1, 2, 0], [1, 1, -4, 2]], np.float32)
q = np.array([10.0, 50.0, 90.0])  # float64
w = np.array([1, 3, 2, 1], np.float32)  # the weights of a's columns (axis 1)
# numpy >= 2.0: np.percentile(a, q, axis=1, method='inverted_cdf', weights=np.broadcast_to(w, a.shape)),
# and the same without weights: row 0 sorted -1, 0, 2, 3 (weights 3, 1, 2, 1; cumulative 3, 4, 6, 7), the
# first element whose cumulative weight reaches q% of 7; row 1 sorted -4, 1, 1, 2 (weights 2, 1, 3, 1).
expected = np.array([[-1.0, -4.0], [0.0, 1.0], [3.0, 2.0]])
print("x64", jax.config.jax_enable_x64)
calls = {
    "jnp.percentile(a float32, q float64, axis=1, method='inverted_cdf', weights=w float32)":
        lambda: jnp.percentile(a, q, axis=1, method="inverted_cdf", weights=w),
    "jnp.percentile(a float32, q float64, axis=1, method='inverted_cdf')":
        lambda: jnp.percentile(a, q, axis=1, method="inverted_cdf"),
    "jnp.percentile(a float16, q float32, axis=1, method='inverted_cdf', weights=w float16)":
        lambda: jnp.percentile(a.astype(np.float16), q.astype(np.float32), axis=1, method="inverted_cdf",
                               weights=w.astype(np.float16)),
}
wrong = 0
for call, f in calls.items():
    print(call)
    try:
        got = np.asarray(f())
        print(f"  got:      {got.tolist()} ({got.dtype})")
        ok = got.shape == expected.shape and np.array_equal(got.astype(np.float64), expected)
    except Exception as e:  # (the finding: any exception is what JAX returned)
        print(f"  got:      raised {type(e).__name__}: {str(e).splitlines()[0][:160]}")
        ok = False
    print(f"  expected: {expected.tolist()}")
    wrong += not ok
sys.exit(1 if wrong else 0)
