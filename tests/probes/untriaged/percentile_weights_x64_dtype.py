"""With jax_enable_x64, jnp.percentile(a float32, q float64, axis=1, method='inverted_cdf', weights=<float32>)
raises TypeError ("lax.mul requires arguments to have the same dtypes, got float64, float32") instead of
returning numpy's weighted percentiles (the same call without x64 does). Exits 1 while the bug is there."""
import os
import sys
os.environ['JAX_PLATFORMS'] = 'cpu'
os.environ['JAX_ENABLE_X64'] = '1'
import numpy as np
import jax
import jax.numpy as jnp

a = np.array([[3, -1, 2, 0], [1, 1, -4, 2]], np.float32)
q = np.array([10.0, 50.0, 90.0])
w = np.array([1, 3, 2, 1], np.float32)
expected = np.percentile(a, q, axis=1, method='inverted_cdf', weights=np.broadcast_to(w, a.shape))
print('jax', jax.__version__, 'x64', jax.config.jax_enable_x64)
try:
    got = jnp.percentile(a, q, axis=1, method='inverted_cdf', weights=w)
except Exception as e:  # noqa: BLE001 - the finding
    print('got: raised', type(e).__name__, str(e).splitlines()[0][:200])
    print('expected:', expected.tolist())
    sys.exit(1)
print('got:', np.asarray(got).tolist(), 'expected:', expected.tolist())
sys.exit(0 if np.array_equal(np.asarray(got, np.float64), expected) else 1)
