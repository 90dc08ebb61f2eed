# jit(out_shardings=P(None, 'a')) of a zero-size array raises 'Unexpected XLA sharding override', or
# returns shards of the full shape under that sharding
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
expected = [sharding.shard_shape(x.shape)] * 2  # [(0, 1), (0, 1)], as jax.device_put(x, sharding) gives

try:
    z = jax.jit(lambda a: a + 1, out_shardings=sharding)(x)
except AssertionError as e:
    print("got:      AssertionError:", str(e).splitlines()[0])
    print("expected: shard shapes", expected)
    sys.exit(1)
got = [s.data.shape for s in z.addressable_shards]
print("got:      shard shapes", got, "under z.sharding.spec =", z.sharding.spec)
print("expected: shard shapes", expected)
sys.exit(0 if got == expected else 1)
