# A one-element slice of a float32 vector split over two devices, jitted into a replicated output,
# comes back +0.0 where the vector holds -0.0.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
x = np.array([-0.0, 1.0], np.float32)
f = jax.jit(lambda x: x[0:1], in_shardings=NamedSharding(mesh, P("a")), out_shardings=NamedSharding(mesh, P()))
expected = x[0:1]
got = np.asarray(f(x))
print("expected:", expected.tolist(), "sign bit", np.signbit(expected).tolist(), flush=True)
print("got:     ", got.tolist(), "sign bit", np.signbit(got).tolist())
sys.exit(0 if got.tobytes() == expected.tobytes() else 1)
