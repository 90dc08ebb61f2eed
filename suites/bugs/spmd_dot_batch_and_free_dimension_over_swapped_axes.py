# jit of lax.dot_general(x, y) ('bkm,kb->bm'), x P('a', 'b'), y P('b', 'a'), out_shardings P('b',
# 'a') on a (2, 4) mesh returns zeros in half the result.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("a", "b"))
x = np.arange(64, dtype=np.int32).reshape(4, 4, 4) % 7
y = np.arange(16, dtype=np.int32).reshape(4, 4) % 5
xs = jax.device_put(x, NamedSharding(mesh, P("a", "b")))
ys = jax.device_put(y, NamedSharding(mesh, P("b", "a")))

f = jax.jit(lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((0,), (1,)))),
            out_shardings=NamedSharding(mesh, P("b", "a")))
expected = np.einsum("bkm,kb->bm", x, y)
got = np.asarray(f(xs, ys))
print("got:     ", got.tolist())
print("expected:", expected.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
