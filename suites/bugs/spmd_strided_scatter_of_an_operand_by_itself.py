# x.at[::2].min(x) of x = [[0, 1]] split P(None, 'a') over two CPU devices, jitted into a replicated
# output, returns [[0, 0]] where numpy returns x.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
x = np.arange(2, dtype=np.uint32).reshape(1, 2)
f = jax.jit(lambda x: x.at[::2].min(x), in_shardings=NamedSharding(mesh, P(None, "a")),
            out_shardings=NamedSharding(mesh, P()))
expected = np.minimum(x, x)
got = np.asarray(f(jax.device_put(x, NamedSharding(mesh, P(None, "a")))))
print("expected:", expected.tolist(), flush=True)
print("got:     ", got.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
