# lax.dynamic_slice with an out-of-range traced start gives wrong values when its output is sharded
# (the start is clamped against the shard size, not the slice size).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
x = np.arange(3, dtype=np.int32)
start = np.int32(2)  # out of range: dynamic_slice clamps it to 3 - 2 = 1

f = jax.jit(lambda x, start: lax.dynamic_slice(x, (start,), (2,)),
            out_shardings=NamedSharding(mesh, P("a")))
got = np.asarray(f(x, start))
expected = x[1:3]
print("got:     ", got)
print("expected:", expected)
sys.exit(0 if np.array_equal(got, expected) else 1)
