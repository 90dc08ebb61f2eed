# jit of lax.slice with a stride longer than the dimension, of a sharded array, returns the wrong
# element ([0] for x[1:2:3] of [0, 1]).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
x = np.arange(2, dtype=np.float32)
a = jax.device_put(x, NamedSharding(mesh, P("a")))

f = jax.jit(lambda a: lax.slice(a, (1,), (2,), (3,)), out_shardings=NamedSharding(mesh, P()))
got = np.asarray(f(a))
expected = x[1:2:3]
print("got:     ", got)
print("expected:", expected)
sys.exit(0 if np.array_equal(got, expected) else 1)
