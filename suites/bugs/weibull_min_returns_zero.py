# jax.random.weibull_min's docstring: "f(x; sigma, c) ~ x^(c - 1) exp(-(x / sigma)^c) on the domain
# 0 < x < inf". It draws u = uniform(key, shape, dtype, minval=0, maxval=1), documented on [0, 1), and
# returns the inverse CDF (-log1p(-u)) ** (1 / concentration) * scale, which is exactly 0 at u = 0:
# nothing keeps u = 0 out (as gumbel's uniform(minval=finfo.tiny) or logistic's do). In bfloat16 the
# uniform draw has 7 random mantissa bits, so u = 0 (and the result 0) comes once in 128 values; in
# float32 once in 2^23. With concentration 200 the true chance of a value below 0.8 * scale is about
# 1e-20, so a draw of 100 keys x 16 values should hold no 0 at all.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_threefry_partitionable", True)
scale = np.array([1, 100], jnp.bfloat16)
concentration = np.array([200, 200], jnp.bfloat16)
zeros = []
for seed in range(100):
    key = jax.random.key(seed)
    x = np.asarray(jax.random.weibull_min(key, scale, concentration, (8, 2), jnp.bfloat16)).astype(np.float32)
    u = np.asarray(jax.random.uniform(key, (8, 2), jnp.bfloat16, 0, 1)).astype(np.float32)  # its uniform draw
    zeros += [(seed, tuple(int(i) for i in ij), float(u[tuple(ij)])) for ij in np.argwhere(x <= 0)]
print("jax.random.weibull_min(jax.random.key(seed), scale=[1, 100], concentration=[200, 200], (8, 2), "
      "jnp.bfloat16), seeds 0-99:")
for seed, index, u in zeros[:10]:
    print(f"  seed {seed}, index {index}: got 0.0 (its uniform draw u = {u}); "
          f"expected a value in (0, inf), about 1 * scale (0.8 * scale or less: chance about 1e-20)")
print(f"values <= 0: got {len(zeros)} of 1600, expected 0")
sys.exit(1 if zeros else 0)
