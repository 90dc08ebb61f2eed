# jax.random.multinomial(key, n, p, shape=(8,)) with p of shape (3,) reads shape as the whole result
# shape, not the batch shape: it broadcasts n to shape[:-1] and p to shape, so it raises ValueError
# (n a scalar: "Incompatible types for broadcasting" (0.10.2; "shapes" on some releases); n of shape
# (8,): "Cannot broadcast to shape with fewer dimensions"). Its docstring says "shape: optional, a
# tuple of nonnegative integers specifying the result batch shape, that is, the prefix of the result
# shape excluding the last axis"
# and "Returns: An array of counts ... with shape p.shape if shape is None, otherwise
# shape + (p.shape[-1],)", so both calls should return counts of shape (8, 3).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np

if not hasattr(jax.random, "multinomial"):
    print("jax.random.multinomial does not exist in this release (it arrived in 0.5.3): the bug is not here")
    sys.exit(0)
p = np.array([0.5, 0.0, 0.5], np.float32)
wrong = 0
for n in (np.float32(5), np.arange(8, dtype=np.float32)):
    try:
        got = jax.random.multinomial(jax.random.key(1), n, p, shape=(8,)).shape
    except ValueError as e:
        got = f"ValueError: {' '.join(str(e).split())[:200]}"
    print(f"n of shape {np.shape(n)}:\n  got:      {got}\n  expected: (8, 3)")
    wrong += got != (8, 3)
sys.exit(1 if wrong else 0)
