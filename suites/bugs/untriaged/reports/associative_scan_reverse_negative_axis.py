"""lax.associative_scan(lax.add, x, reverse=True, axis=-1) raises TypeError "rev dimensions must have
every element be nonnegative, got (-1,)": with reverse=True it calls lax.rev(elem, [axis]) on the
axis as given, before util.canonicalize_axis resolves a negative one (jax/_src/lax/control_flow/
loops.py, associative_scan). reverse=False accepts axis=-1 (JAX's own tests scan over negative
axes), and reverse=True accepts axis=1. Not sharding-related. Exits 1 while so."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import numpy as np
from jax import lax

x = np.arange(6, dtype=np.int32).reshape(2, 3)
expected = np.flip(np.cumsum(np.flip(x, -1), -1), -1)   # reversed partial sums along the last axis
print("reverse=True, axis=1 :", np.asarray(lax.associative_scan(lax.add, x, reverse=True, axis=1)).tolist())
print("reverse=False, axis=-1:", np.asarray(lax.associative_scan(lax.add, x, axis=-1)).tolist())
try:
    got = np.asarray(lax.associative_scan(lax.add, x, reverse=True, axis=-1))
except Exception as e:
    print(f"reverse=True, axis=-1: raised {type(e).__name__}: {e}")
    print(f"expected: {expected.tolist()}")
    sys.exit(1)
print(f"reverse=True, axis=-1: got {got.tolist()}, expected {expected.tolist()}")
sys.exit(0 if np.array_equal(got, expected) else 1)
