"""jax.random.weibull_min's docstring: values on 0 < x < inf. In bfloat16 it returns 0 whenever its
bfloat16 uniform draw is 0 (1 in 128): the inverse CDF (-log1p(-u)) ** (1 / concentration) * scale
of u = 0. With concentration 200 the true chance of a value below 0.8 * scale is about 1e-20, yet
about 1 in 128 values is 0. Exits 1 while one of 100 draws of (8, 2) holds a 0."""
import sys
import numpy as np
import jax
import jax.numpy as jnp

jax.config.update('jax_threefry_partitionable', True)
print('jax', jax.__version__)
scale, concentration = np.array([1, 100], jnp.bfloat16), np.array([200, 200], jnp.bfloat16)
zeros = []
for i in range(100):
    x = np.asarray(jax.random.weibull_min(jax.random.key(i), scale, concentration, (8, 2), jnp.bfloat16))
    zeros += [(i, tuple(int(j) for j in ij)) for ij in np.argwhere(x.astype(np.float32) == 0)]
print('(key, index) of the zeros:', zeros)
sys.exit(1 if zeros else 0)
