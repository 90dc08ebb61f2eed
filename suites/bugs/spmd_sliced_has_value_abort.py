# XLA aborts (hlo_sharding_util.cc "Check failed: sliced.has_value()") resharding a value split over
# 'b' onto the combined axes ('b', 'x').
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=6"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:6]).reshape(2, 3), ("b", "x"))
x = np.arange(12, dtype=np.int32).reshape(2, 6)
a = jax.device_put(x, NamedSharding(mesh, P("b")))

f = jax.jit(lambda a: -a, out_shardings=NamedSharding(mesh, P(None, ("b", "x"))))
expected = -x
print("expected:", expected.tolist(), flush=True)
got = np.asarray(f(a))  # the process aborts here while the bug is there
print("got:     ", got.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
