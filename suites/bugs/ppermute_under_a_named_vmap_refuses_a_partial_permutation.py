# jax.vmap(lambda v: lax.ppermute(v, 'i', perm=[(0, 1)]), axis_name='i') of x int32[4, 4] raises
# AssertionError "Permutation doesn't match the axis size!": ppermute's batching rule asserts that perm
# names every batch member. ppermute's docstring allows a partial permutation ("For each index of the
# axis axis_name that does not correspond to a destination index in perm, the corresponding values
# in the result are filled with zeros"), which pmap and shard_map give, so the vmapped call should
# return x[0] at batch member 1 and zeros elsewhere.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax import lax

x = np.arange(16, dtype=np.int32).reshape(4, 4)
expected = np.zeros_like(x)
expected[1] = x[0]
try:
    got = np.asarray(jax.vmap(lambda v: lax.ppermute(v, "i", perm=[(0, 1)]), axis_name="i")(x)).tolist()
except AssertionError as e:
    got = f"AssertionError: {e}"
print(f"got:      {got}\nexpected: {expected.tolist()}")
sys.exit(0 if got == expected.tolist() else 1)
