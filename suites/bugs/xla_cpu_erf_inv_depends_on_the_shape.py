# XLA:CPU computes lax.erf_inv of the same float32 value differently by the array's shape: an
# (8, 4) array (and (16, 4)) gives 0.7639444 where a (32,), (4, 8) or (1, 4) array gives
# 0.76394445. jax.random.normal is erf_inv of a uniform draw, so normal draws under vmap of eight
# keys placed one per device (each device transforms a (1, 4) block) differ from the same draws
# jitted unsharded (one (8, 4) block), though the random bits agree.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

erf_inv = jax.jit(jax.lax.erf_inv)
x = np.float32(0.72002727)
by_shape = {shape: np.asarray(erf_inv(np.full(shape, x, np.float32))).reshape(-1)[0].item()
            for shape in [(8, 4), (32,), (4, 8), (1, 4)]}
print("erf_inv(0.72002727) by shape:", by_shape)

jax.config.update("jax_threefry_partitionable", True)
mesh = Mesh(np.array(jax.devices()[:8]), ("a",))
keys = jax.random.wrap_key_data(np.arange(16, dtype=np.uint32).reshape(8, 2))
draws = jax.vmap(lambda key: jax.random.normal(key, (4,)))
got = np.asarray(jax.jit(draws, out_shardings=NamedSharding(mesh, P()))(
    jax.device_put(keys, NamedSharding(mesh, P("a")))))
expected = np.asarray(jax.jit(draws)(keys))
print("got:     ", got[3].tolist())
print("expected:", expected[3].tolist())
sys.exit(0 if got.tobytes() == expected.tobytes() and len(set(by_shape.values())) == 1 else 1)
