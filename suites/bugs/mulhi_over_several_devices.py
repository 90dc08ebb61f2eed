# lax.mulhi(x, x) of an int32[2] x committed over two CPU devices (P('a'), or P()) fails to compile:
# "INTERNAL: Unable to convert MHLO to StableHLO" (the partitioned program holds an 'mhlo.unknown'
# operation), where on one device it returns the high halves of the 64-bit products. lax.mulhi's
# docstring: "the high bits of the product", with no word about devices.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

if not hasattr(jax.lax, "mulhi"):
    print("this JAX has no lax.mulhi (the bug is not there)")
    sys.exit(0)
mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
x = np.array([3, -(2 ** 30)], np.int32)
expected = ((x.astype(np.int64) * x.astype(np.int64)) >> 32).astype(np.int32)
print("expected:", expected.tolist())
try:
    got = np.asarray(jax.lax.mulhi(*[jax.device_put(x, NamedSharding(mesh, P("a")))] * 2))
except Exception as e:  # (the bug)
    print("got:      raised", type(e).__name__, str(e)[:300])
    sys.exit(1)
print("got:     ", got.tolist())
sys.exit(0 if got.tolist() == expected.tolist() else 1)
