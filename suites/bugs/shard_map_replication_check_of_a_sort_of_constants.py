# jax.jit(shard_map(lambda x: x + jax.random.permutation(jax.random.key(7), 4).astype(x.dtype), mesh=mesh,
# in_specs=P(), out_specs=P()))(x) on a 1-d mesh of 8 CPU devices, x int32[8, 4], raises
# TypeError: 'NoneType' object is not iterable while tracing (jax.random.choice(key, 10, (4,),
# replace=False) the same). Localized: permutation/choice shuffle by a jitted lax.sort of (random bits,
# values), whose operands are all constants of the body; shard_map's replication check (_check_rep,
# check_rep=True, the default) gives sort_p the standard check, which returns None for operands that are
# all constants, and for a multiple-results primitive _check_rep only broadcasts a *set* to the outputs,
# so it does map(write, e.outvars, None). Nothing in shard_map's documentation excludes a random
# permutation (or any sort) of the body's own constants; the value should be x plus the permutation drawn
# outside shard_map with the same key (the body is replicated: in_specs=P(), out_specs=P()).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

if hasattr(jax, "shard_map"):
    shard_map = jax.shard_map
else:  # the experimental shard_map on older releases
    from jax.experimental.shard_map import shard_map

mesh = Mesh(np.array(jax.devices()[:8]).reshape((8,)), ("a",))
x = np.arange(32, dtype=np.int32).reshape((8, 4))
draws = {
    "jax.random.permutation(jax.random.key(7), 4)": lambda: jax.random.permutation(jax.random.key(7), 4),
    "jax.random.choice(jax.random.key(7), 10, (4,), replace=False)":
        lambda: jax.random.choice(jax.random.key(7), 10, (4,), replace=False),
}
wrong = 0
for name, draw in draws.items():
    expected = x + np.asarray(draw()).astype(x.dtype)  # drawn outside shard_map, same key
    f = lambda x, draw=draw: x + draw().astype(x.dtype)
    try:
        got = np.asarray(jax.jit(shard_map(f, mesh=mesh, in_specs=P(), out_specs=P()))(x))
        shown = got[0].tolist()
        ok = np.array_equal(got, expected)
    except Exception as e:  # the bug's symptom is the exception
        shown = f"raised {type(e).__name__}: {' '.join(str(e).split())[:200]}"
        ok = False
    print(f"jit(shard_map(x + {name})), x int32[8, 4] on mesh(a=8):\n"
          f"  got (row 0): {shown}\n  expected:    {expected[0].tolist()}")
    wrong += not ok
sys.exit(1 if wrong else 0)
