# jax.random.truncated_normal's docstring: values "on the domain lower < x < upper", "Returns values in
# the open interval (lower, upper)". It draws u = uniform(key, shape, dtype, minval=erf(lower / sqrt2),
# maxval=erf(upper / sqrt2)), whose [minval, maxval) includes erf(0) = 0 itself, so with lower = 0 it
# computes sqrt2 * erf_inv(0) = 0 (in bfloat16 once in 128 values). It then clamps to
# [nextafter(lower, inf), nextafter(upper, -inf)] "to the open interval", but nextafter(0, inf) is the
# smallest subnormal (bfloat16 9.2e-41, float32 1.4e-45), which XLA:CPU's max reads as 0 (JAX runs CPU
# code with denormals flushed to zero, as lax.nextafter's docstring notes, pointing to finfo.tiny as
# the smallest usable value): the clamp leaves 0 = lower in place. The draws should all lie in (0, 0.5).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_threefry_partitionable", True)
lower, upper = np.array([0, -1], jnp.bfloat16), np.array([0.5, 0], jnp.bfloat16)
lo, hi = lower.astype(np.float32), upper.astype(np.float32)
outside = []
for seed in range(100):
    x = np.asarray(jax.random.truncated_normal(jax.random.key(seed), lower, upper, (8, 2), jnp.bfloat16))
    x = x.astype(np.float32)
    bad = ~((x > lo) & (x < hi))
    outside += [(seed, tuple(int(i) for i in ij), float(x[tuple(ij)])) for ij in np.argwhere(bad)]
print("jax.random.truncated_normal(jax.random.key(seed), lower=[0, -1], upper=[0.5, 0], (8, 2), jnp.bfloat16), "
      "seeds 0-99:")
for seed, (i, j), v in outside[:10]:
    print(f"  seed {seed}, index {(i, j)}: got {v}; expected a value in ({lo[j]}, {hi[j]})")
print(f"values outside (lower, upper): got {len(outside)} of 1600, expected 0")
# the step: the clamp's bound nextafter(0, inf) is a subnormal, and the jitted max reads it as 0
zero = np.zeros((), jnp.bfloat16)
bound = jax.jit(lambda z: lax.nextafter(z, jnp.array(np.inf, jnp.bfloat16)))(zero)
clamped = jax.jit(jnp.maximum)(zero, bound)
print(f"nextafter(bfloat16 0, inf) = {float(bound)!r}; jit(jnp.maximum)(0, it) = {float(clamped)!r} "
      f"(numpy: {float(np.maximum(np.float32(0), np.float32(bound)))!r})")
sys.exit(1 if outside else 0)
