"""jax.random.truncated_normal's docstring: values on the open domain lower < x < upper. In bfloat16
with lower = 0 it returns 0 itself now and then (e.g. 0.0 for bounds (0, 0.5)): its clamp to
nextafter(lower) = the smallest positive subnormal is flushed to 0. Exits 1 while some value of 20
draws of (8, 2) is outside the open interval."""
import sys
import numpy as np
import jax
import jax.numpy as jnp

jax.config.update('jax_threefry_partitionable', True)
print('jax', jax.__version__)
lower, upper = np.array([0, -1], jnp.bfloat16), np.array([0.5, 0], jnp.bfloat16)
outside = []
for i in range(100):
    x = np.asarray(jax.random.truncated_normal(jax.random.key(i), lower, upper, (8, 2), jnp.bfloat16))
    bad = ~((x.astype(np.float32) > lower.astype(np.float32)) & (x.astype(np.float32) < upper.astype(np.float32)))
    outside += [(i, float(v)) for v in x[bad]]
print('(key, value) outside (lower, upper):', outside)
sys.exit(1 if outside else 0)
