# lax.psum_scatter with a negative scatter_dimension and lax.all_to_all with negative split_axis /
# concat_axis fail to lower (a StableHLO verifier error, or "Operation creation failed") inside a
# shard_map body, where all_gather normalizes a negative axis and the same calls with the positive
# axes work.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec as P

try:
    shard_map = jax.shard_map
except AttributeError:
    from jax.experimental.shard_map import shard_map

mesh = Mesh(np.array(jax.devices()[:8]), ("a",))
x = np.arange(64, dtype=np.int32).reshape(8, 8)
wrong = 0
for name, negative, positive in (
        ("psum_scatter(b, 'a', scatter_dimension=-1, tiled=True)",
         lambda b: lax.psum_scatter(b, "a", scatter_dimension=-1, tiled=True),
         lambda b: lax.psum_scatter(b, "a", scatter_dimension=1, tiled=True)),
        ("all_to_all(b, 'a', -1, -2, tiled=True)",
         lambda b: lax.all_to_all(b, "a", -1, -2, tiled=True),
         lambda b: lax.all_to_all(b, "a", 1, 0, tiled=True))):
    run = lambda f: np.asarray(jax.jit(shard_map(f, mesh=mesh, in_specs=P("a"), out_specs=P("a")))(x))
    expected = run(positive)
    try:
        got = run(negative)
        right = got.tolist() == expected.tolist()
    except Exception as e:
        got, right = f"{type(e).__name__}: {' '.join(str(e).split())[:200]}", False
    print(f"{name}:\n  got:      {got if isinstance(got, str) else got.tolist()}\n  expected: {expected.tolist()}")
    wrong += not right
sys.exit(1 if wrong else 0)
