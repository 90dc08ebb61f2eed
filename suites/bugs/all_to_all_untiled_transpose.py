# The gradient of an untiled lax.all_to_all whose concat_axis differs from its split_axis fails: its
# transpose re-applies the untiled dimension insertion to the cotangent.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec as P

try:
    shard_map = jax.shard_map
except AttributeError:
    from jax.experimental.shard_map import shard_map

mesh = Mesh(np.array(jax.devices()[:2]), ("i",))
# Each device d holds x[d] of shape (2, 2); all_to_all(split_axis=0, concat_axis=1, tiled=False) gives it
# (2, 2): element [c, s] is device s's x[s, d, c]. The gradient of sum(w * that) is all_to_all(w, 1, 0).
f = shard_map(lambda b: lax.all_to_all(b[0], "i", 0, 1, tiled=False)[None], mesh=mesh,
              in_specs=(P("i"),), out_specs=P("i"))
x = np.arange(2 * 2 * 2, dtype=np.float32).reshape(2, 2, 2)
w = np.arange(2 * 2 * 2, dtype=np.float32).reshape(2, 2, 2)
# the transpose: expected[d, s, c] = w[s, c, d]
expected = np.stack([np.stack([w[s, :, d] for s in range(2)]) for d in range(2)])
try:
    got = np.asarray(jax.grad(lambda x: jnp.sum(w * f(x)))(x))
except Exception as e:  # what JAX raises is the bug
    print("jax.grad raised:", type(e).__name__, str(e).splitlines()[0][:300])
    print("expected:", expected.tolist())
    sys.exit(1)
print("got:     ", got.tolist())
print("expected:", expected.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
