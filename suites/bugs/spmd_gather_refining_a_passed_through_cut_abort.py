# XLA aborts (spmd_partitioner_util.cc "Check failed: grouped_sharding.device_groups.num_groups() ==
# reference.device_groups.num_groups()") on a jnp.take into an output that cuts a dimension the
# operand passes through over ('b', 'x') where the operand cuts it over 'b'.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("b", "x"))
x = np.arange(8, dtype=np.int32).reshape(2, 4)
i = np.zeros(1, np.int32)

f = jax.jit(lambda x, i: jnp.take(x, i, axis=0), out_shardings=NamedSharding(mesh, P(None, ("b", "x"))))
expected = x[i]
print("expected:", expected.tolist(), flush=True)
# the process aborts here while the bug is there
got = np.asarray(f(jax.device_put(x, NamedSharding(mesh, P(None, "b"))), i))
print("got:     ", got.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
