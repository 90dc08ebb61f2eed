# lax.dynamic_update_slice with a traced start that needs clamping drops the update when the operand
# is sharded along the updated dimension.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
x = jax.device_put(np.arange(2, dtype=np.float32), NamedSharding(mesh, P("a")))
update = np.full((1,), 9, np.float32)
start = np.int32(5)  # out of range: dynamic_update_slice clamps it to 2 - 1 = 1

f = jax.jit(lambda x, u, start: lax.dynamic_update_slice(x, u, (start,)))
got = np.asarray(f(x, update, start))
expected = np.array([0, 9], np.float32)
print("got:     ", got)
print("expected:", expected)
sys.exit(0 if np.array_equal(got, expected) else 1)
