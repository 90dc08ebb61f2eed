# jax.jit(lambda x: (lambda v: v.at[::2].max(v))(x[0:1])) of x = [0, 1] sharded P('a') on an (a=2,
# b=4) mesh returns [1]: the update, a slice of the cut operand, is read from the other shard.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("a", "b"))
x = np.arange(2, dtype=np.uint32)
f = jax.jit(lambda x: (lambda v: v.at[::2].max(v))(x[0:1]), in_shardings=NamedSharding(mesh, P("a")),
            out_shardings=NamedSharding(mesh, P()))
got = np.asarray(f(jax.device_put(x, NamedSharding(mesh, P("a")))))
expected = np.maximum(x[0:1], x[0:1])  # [0]: the element's max with itself
print(f"got:      {got.tolist()}")
print(f"expected: {expected.tolist()}")
sys.exit(0 if np.array_equal(got, expected) else 1)
