# jax.random.normal jitted into an output cut over eight CPU devices is two ulps off the unsharded
# draw at element 2 (the random bits are equal).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.config.update("jax_threefry_partitionable", True)
mesh = Mesh(np.array(jax.devices()[:8]), ("a",))
key = jax.random.wrap_key_data(np.array([1411, 1596981141], dtype=np.uint32))
f = lambda key: jax.random.normal(key, (8,))
got = np.asarray(jax.jit(f, out_shardings=NamedSharding(mesh, P("a")))(key))
expected = np.asarray(jax.jit(f)(key))
print("got:     ", got.tolist())
print("expected:", expected.tolist())
sys.exit(0 if got.tobytes() == expected.tobytes() else 1)
