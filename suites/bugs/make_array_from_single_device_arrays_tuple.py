# jax.make_array_from_single_device_arrays with the arrays given as a tuple (annotated
# Sequence[Array]) raises TypeError: incompatible function arguments (its C++ constructor takes a
# list), where a list works.
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
pieces = tuple(jax.device_put(x[index], device)
               for device, index in sharding.addressable_devices_indices_map(x.shape).items())
try:
    got = np.asarray(jax.make_array_from_single_device_arrays(x.shape, sharding, pieces)).tolist()
except Exception as e:
    got = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
print("got:     ", got)
print("expected:", x.tolist())
sys.exit(0 if got == x.tolist() else 1)
