# jax.vmap(lambda *xs: jnp.concatenate(xs, axis=0)), eagerly, of two replicated operands of
# [2, 2, 2] and one [2, 8, 2] cut over eight devices along the joined dimension raises
# IndivisibleError (an intermediate [1, 4, 1, 2] "not divisible by" the axis of 8) instead of
# joining each example's pieces.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]), ("a",))
x0 = np.arange(8, dtype=np.int32).reshape(2, 2, 2)
x1 = x0 + 8
x2 = np.arange(32, dtype=np.int32).reshape(2, 8, 2) + 16
args = [jax.device_put(x, NamedSharding(mesh, s)) for x, s in ((x0, P()), (x1, P()), (x2, P(None, "a")))]
expected = np.concatenate([x0, x1, x2], axis=1)
try:
    got = np.asarray(jax.vmap(lambda *xs: jnp.concatenate(xs, axis=0))(*args))
    right = got.tolist() == expected.tolist()
    print("got:     ", "the expected values" if right else got.tolist())
except Exception as e:
    right = False
    print("got:     ", type(e).__name__, " ".join(str(e).split())[:200])
print("expected: np.concatenate([x0, x1, x2], axis=1), shape", expected.shape)
sys.exit(0 if right else 1)
