# jit of lax.pad with interior padding gives wrong values when its output is sharded ([1, 0, 2, 0,
# 2, 0] or [1, 0, 2, 2, 0, 3] for [1, 0, 2, 0, 3, 0]).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
x = jax.device_put(np.array([1, 2, 3], dtype=np.float32), NamedSharding(mesh, P()))

f = jax.jit(lambda x: lax.pad(x, np.float32(0), [(0, 1, 1)]),
            out_shardings=NamedSharding(mesh, P("a")))
got = np.asarray(f(x))
expected = np.array([1, 0, 2, 0, 3, 0], dtype=np.float32)
print("got:     ", got)
print("expected:", expected)
sys.exit(0 if np.array_equal(got, expected) else 1)
