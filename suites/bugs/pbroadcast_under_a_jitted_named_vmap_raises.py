# jax.jit(jax.vmap(lambda v: lax.pbroadcast(v, 'i', 2), axis_name='i')) of x int32[4, 4] raises
# TypeError "take requires ndarray or scalar arguments, got <class 'list'>": pbroadcast's batching
# rule indexes the batch with a Python list, which jnp.take refuses once the batch is a tracer. The
# same vmap without jit returns x[2] for every batch member, as pbroadcast's docstring says ("Array(s)
# with x being copied from the source index slice of axis_name"), so the jitted call should too.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax import lax

if not hasattr(lax, "pbroadcast"):
    print("jax.lax.pbroadcast does not exist in this release: the bug is not here")
    sys.exit(0)
x = np.arange(16, dtype=np.int32).reshape(4, 4)
expected = np.broadcast_to(x[2], x.shape).tolist()
try:
    got = np.asarray(jax.jit(jax.vmap(lambda v: lax.pbroadcast(v, "i", 2), axis_name="i"))(x)).tolist()
except TypeError as e:
    got = f"TypeError: {e}"
print(f"got:      {got}\nexpected: {expected}")
sys.exit(0 if got == expected else 1)
