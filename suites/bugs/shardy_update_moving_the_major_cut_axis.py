# Jitted x.at[1:].set(x[:-1]) of an array cut over two mesh axes, into a layout that cuts another dimension
# over the first of them, returns per-device buffers of the wrong shape (Shardy, since JAX 0.7.0).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:4]).reshape((2, 2)), ("a", "b"))
x0 = np.arange(8, dtype=np.float32).reshape(4, 2)
x = jax.device_put(x0, NamedSharding(mesh, P(("a", "b"))))  # rows cut over both axes
f = jax.jit(lambda x: x.at[1:].set(x[:-1]), out_shardings=NamedSharding(mesh, P(None, "a")))
expected = np.concatenate([x0[:1], x0[:-1]])
try:
    got = np.asarray(f(x))
except Exception as e:  # 0.7.0-0.11.2: ValueError 'could not broadcast'; 0.12: JaxRuntimeError 'Shape mismatch'
    print("raised:  ", type(e).__name__, str(e)[:200])
    print("expected:", expected.tolist())
    sys.exit(1)
print("got:     ", got.tolist())
print("expected:", expected.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
