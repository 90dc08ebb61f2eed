# jax.random.binomial(key, n, p, (8, 2), jnp.float16) with n and p float16 arrays of shape (2,) raises
# TypeError "lax.clamp requires arguments to have the same dtypes, got float32, float16, float32"
# instead of drawing float16 counts. Its docstring says "n: a float or array of floats broadcast-
# compatible with shape representing the number of trials", "dtype: optional, a float dtype for the
# returned values", and the result is "A random array with the specified dtype and with shape given
# by shape": float16 counts, each an integer in [0, n] of its column.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np

if not hasattr(jax.random, "binomial"):
    print("jax.random.binomial does not exist in this release: the bug is not here")
    sys.exit(0)
n = np.array([3, 7], np.float16)
p = np.array([0.25, 0.75], np.float16)
try:
    x = np.asarray(jax.random.binomial(jax.random.key(0), n, p, (8, 2), jnp.float16))
    got = (f"{x.dtype} {x.shape}, integer counts in [0, n]: "
           f"{bool(np.all((x >= 0) & (x <= n) & (x == np.round(x))))}")
except TypeError as e:
    got = f"TypeError: {' '.join(str(e).split())[:200]}"
expected = "float16 (8, 2), integer counts in [0, n]: True"
print("got:     ", got)
print("expected:", expected)
sys.exit(0 if got == expected else 1)
