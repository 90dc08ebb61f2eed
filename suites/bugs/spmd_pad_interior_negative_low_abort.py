# XLA aborts the process (spmd_partitioner.cc "Check failed: get_first_valid_element_offset_on_dilated_shard(0)
# == swd->padding_low()") partitioning lax.pad with interior padding and a negative low edge.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
x = jax.device_put(np.array([1, 2], dtype=np.float32), NamedSharding(mesh, P("a")))

# interior padding gives [1, 0, 2]; the low edge of -1 drops the first element
f = jax.jit(lambda x: lax.pad(x, np.float32(0), [(-1, 0, 1)]),
            out_shardings=NamedSharding(mesh, P()))
expected = np.array([0, 2], dtype=np.float32)
print("expected:", expected, flush=True)
got = np.asarray(f(x))  # the process aborts here while the bug is there
print("got:     ", got)
sys.exit(0 if np.array_equal(got, expected) else 1)
