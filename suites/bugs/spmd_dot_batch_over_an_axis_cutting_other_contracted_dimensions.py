# jit of lax.dot_general(x, y) ('bkl,bkl->b'), x P('b', None, 'a'), y P('b', 'a'), out_shardings
# P('a') on a (4, 2) mesh returns zeros in half the result.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("a", "b"))
x = np.arange(64, dtype=np.int32).reshape(4, 4, 4) % 7
y = np.arange(64, dtype=np.int32).reshape(4, 4, 4) % 5
xs = jax.device_put(x, NamedSharding(mesh, P("b", None, "a")))
ys = jax.device_put(y, NamedSharding(mesh, P("b", "a")))

f = jax.jit(lambda x, y: lax.dot_general(x, y, (((1, 2), (1, 2)), ((0,), (0,)))),
            out_shardings=NamedSharding(mesh, P("a")))
expected = np.einsum("bkl,bkl->b", x, y)
got = np.asarray(f(xs, ys))
print("got:     ", got.tolist())
print("expected:", expected.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
