# jax.make_array_from_callback with the shape given as a list (its annotation is Shape, a
# Sequence[int]) raises TypeError: unhashable type: 'list' where the same call with a tuple works.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]), ("a",))
x = np.arange(16, dtype=np.int32).reshape(8, 2)
sharding = NamedSharding(mesh, P("a"))
expected = np.asarray(jax.make_array_from_callback((8, 2), sharding, lambda i: x[i]))
try:
    got = np.asarray(jax.make_array_from_callback([8, 2], sharding, lambda i: x[i])).tolist()
except Exception as e:
    got = f"{type(e).__name__}: {e}"
print("got:     ", got)
print("expected:", expected.tolist())
sys.exit(0 if got == expected.tolist() else 1)
