# jax.random.f(key, dfnum, dfden, (8, 2)) with dfnum and dfden float32 arrays of shape (2,) raises
# TypeError "div: arrays must have the same number of dimensions, got {1, 2}": the draw divides
# the chi-square draws of shape (8, 2) by dfnum and dfden with lax.div, which does not broadcast, and
# the jnp.broadcast_to of dfnum and dfden to shape that 0.10.0 did first is gone. Its docstring says
# "dfnum: a float or array of floats broadcast-compatible with shape representing the numerator's
# df of the distribution" (dfden likewise) and "shape: optional, a tuple of nonnegative integers
# specifying the result shape. Must be broadcast-compatible with dfnum and dfden", so it should
# return the (8, 2) draw, as 0.10.0 and 0.12.0 do. float32, so that the float16 overflow of the
# quotient of quotients (XLA:CPU) plays no part.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np

dfnum = np.array([3.0, 4.0], np.float32)
dfden = np.array([5.0, 6.0], np.float32)
try:
    x = np.asarray(jax.random.f(jax.random.key(1), dfnum, dfden, (8, 2)))
    got = f"shape {x.shape}, all finite and >= 0: {bool(np.all(np.isfinite(x) & (x >= 0)))}"
except TypeError as e:
    got = f"TypeError: {' '.join(str(e).split())[:200]}"
expected = "shape (8, 2), all finite and >= 0: True"
print("got:     ", got)
print("expected:", expected)
sys.exit(0 if got == expected else 1)
