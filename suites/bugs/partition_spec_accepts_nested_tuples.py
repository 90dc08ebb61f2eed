# PartitionSpec((('a',),)) (a tuple inside an entry's tuple) is accepted, and device_put lays an
# array out with it, where JAX's fix says a nested tuple "means nothing and has no semantics" and
# refuses it with ValueError.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]), ("a",))
x = np.arange(16, dtype=np.int32).reshape(8, 2)
try:
    y = jax.device_put(x, NamedSharding(mesh, P((("a",),))))
    print("got:      accepted, laid out as", y.sharding.spec)
    refused = False
except (TypeError, ValueError) as e:
    print("got:     ", type(e).__name__, e)
    refused = True
print("expected: ValueError (a tuple inside PartitionSpec cannot contain a nested tuple)")
sys.exit(0 if refused else 1)
