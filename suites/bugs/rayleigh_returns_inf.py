# jax.random.rayleigh's docstring: "f(x; sigma) ~ x e^(-x^2 / (2 sigma^2)) on the domain -inf < x < inf",
# where sigma > 0 is the scale: no value is inf. It draws u = uniform(key, shape, dtype), documented on
# [0, 1), and returns scale * sqrt(-2 * log(u)), which is inf at u = 0: log(0) = -inf, and nothing keeps
# u = 0 out (logistic draws with minval=finfo(dtype).tiny, cauchy with minval=eps; exponential and
# weibull_min take log1p(-u); geometric maps u = 0 to 1 since jax-ml/jax#38075, "to avoid inf in
# log_u"). In float16 the uniform draw has 10 random mantissa bits, so u = 0 (and the result inf) comes
# once in 1024 values; in bfloat16 once in 128, in float32 once in 2^23. Not a sharding matter: the
# one-device draw is inf at the same place.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_threefry_partitionable", True)
scale = np.array([1, 0.01], jnp.float16)
f = jax.jit(lambda key, scale, shape: jax.random.rayleigh(key, scale, shape, jnp.float16), static_argnums=2)
u_of = jax.jit(lambda key, shape: jax.random.uniform(key, shape, jnp.float16), static_argnums=1)
bad = 0
# the key test_random_samplers drew on 0.6.1 (its rayleigh-float16 row), then key(0) with many values
for spelled, key, shape in [("jax.random.wrap_key_data(np.array([81, 2692594], np.uint32))",
                             jax.random.wrap_key_data(np.array([81, 2692594], np.uint32)), (8, 2)),
                            ("jax.random.key(0)", jax.random.key(0), (4096, 2))]:
    x = np.asarray(f(key, scale, shape)).astype(np.float32)
    u = np.asarray(u_of(key, shape)).astype(np.float32)  # its uniform draw
    where = np.argwhere(~np.isfinite(x) | (x < 0))
    print(f"jax.jit(jax.random.rayleigh)({spelled}, scale=[1, 0.01], {shape}, jnp.float16):")
    for ij in where[:6]:
        ij = tuple(int(i) for i in ij)
        print(f"  index {ij}: got {x[ij]} (its uniform draw u = {u[ij]}); expected a finite value >= 0, "
              f"at most about {float(scale[ij[1]]) * np.sqrt(-2 * np.log(2.0**-10)):.3g} (u = 2^-10, the least u > 0)")
    print(f"  values outside [0, inf): got {len(where)} of {x.size}, expected 0")
    bad += len(where)
sys.exit(1 if bad else 0)
