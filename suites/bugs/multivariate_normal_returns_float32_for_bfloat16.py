# jax.random.multivariate_normal(key, mean, cov, (8,), jnp.bfloat16, method) with float32 mean and
# cov returns a float32 array for every method ('cholesky', 'eigh', 'svd'): only the standard normal
# draws are made in the dtype asked; they are then multiplied by the float32 factor of cov and added
# to the float32 mean, and the result keeps the promoted dtype. Its docstring says "dtype: optional,
# a float dtype for the returned values" and "Returns: A random array with the specified dtype and
# shape given by shape + mean.shape[-1:]", so the result should be bfloat16 of shape (8, 3). (Giving
# mean and cov in bfloat16 is no way out: eigh, svd and cholesky refuse bfloat16 on CPU.)
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np

mean = np.array([50.0, -50.0, 0.0], np.float32)
cov = np.diag([0.01, 4.0, 1.0]).astype(np.float32)
wrong = 0
for method in ("cholesky", "eigh", "svd"):
    x = jax.random.multivariate_normal(jax.random.key(0), mean, cov, (8,), jnp.bfloat16, method)
    got = (x.dtype.name, x.shape)
    expected = ("bfloat16", (8, 3))
    print(f"method={method!r}:\n  got:      dtype {got[0]}, shape {got[1]}\n"
          f"  expected: dtype {expected[0]}, shape {expected[1]}")
    wrong += got != expected
sys.exit(1 if wrong else 0)
