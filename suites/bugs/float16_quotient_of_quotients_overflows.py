# jax.jit(lambda a, b, c, d: (a / b) / (c / d)) on CPU with every operand a float16 scalar returns NaN
# for 969.5 / 1000 over 1016 / 1000, where each quotient is about 1 and the answer is 0.954 (numpy's,
# and JAX's own eager result): XLA:CPU's algebraic simplifier rewrites the quotient of quotients as
# (a * d) / (b * c), whose float16 products (969500, 1016000) overflow float16's largest finite value,
# 65504, so it computes inf / inf. An algebraic rewrite must not change a result that is finite and
# well inside the dtype's range. It makes jax.random.f in float16 NaN: its draw is
# (chi2_num / dfnum) / (chi2_den / dfden), every draw with dfnum = dfden = 1000.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np

a, b, c, d = (np.float16(v) for v in (969.5, 1000, 1016, 1000))
expected = (a / b) / (c / d)
got = np.asarray(jax.jit(lambda a, b, c, d: (a / b) / (c / d))(a, b, c, d))
eager = np.asarray((jnp.asarray(a) / b) / (jnp.asarray(c) / d))
print("got (jitted):", got, got.dtype)
print("eager:       ", eager)
print("expected:    ", expected, expected.dtype)
sys.exit(0 if got.tobytes() == expected.tobytes() else 1)
