# with_sharding_constraint(P(None, 'a')) of a zero-size value inside jit is dropped: the result comes back replicated
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
sharding = NamedSharding(mesh, P(None, "a"))
x = np.zeros((0, 2), np.int32)

z = jax.jit(lambda a: jax.lax.with_sharding_constraint(a + 1, sharding))(x)
got = [s.data.shape for s in z.addressable_shards]
expected = [sharding.shard_shape(x.shape)] * 2  # [(0, 1), (0, 1)], as jax.device_put(x, sharding) gives
print("got:      shard shapes", got, "under", z.sharding)
print("expected: shard shapes", expected, "under", sharding)
sys.exit(0 if got == expected and z.sharding.is_equivalent_to(sharding, x.ndim) else 1)
