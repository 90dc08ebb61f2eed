# NamedSharding.shard_shape of a shape with fewer dimensions than the PartitionSpec has entries
# raises IndexError instead of ValueError.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
sharding = NamedSharding(mesh, P(None, "a"))  # two entries, for a value of rank 1

# jax.device_put(np.arange(2), sharding) and sharding.check_compatible_aval((2,)) raise
# ValueError "... is only valid for values of rank at least 2, but was applied to a value of rank 1".
try:
    got = sharding.shard_shape((2,))
except Exception as e:
    print(f"got:      {type(e).__name__}: {str(e).splitlines()[0]}")
    print("expected: ValueError: ... is only valid for values of rank at least 2, but was applied to a value of rank 1")
    sys.exit(0 if isinstance(e, ValueError) else 1)
print("got:     ", got)
print("expected: ValueError: ... is only valid for values of rank at least 2, but was applied to a value of rank 1")
sys.exit(1)
