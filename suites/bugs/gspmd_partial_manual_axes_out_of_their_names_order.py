# A jitted shard_map manual over axes {'b', 'a'} of a (b=2, a=2, x=2) mesh, 'x' automatic, fails to
# partition under GSPMD: "Incompatible manual sharding" (the default partitioner before JAX 0.7.0;
# with jax.config.update("jax_use_shardy_partitioner", False) it fails on every release from 0.5.1).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]).reshape((2, 2, 2)), ("b", "a", "x"))
if hasattr(jax, "shard_map"):
    body = jax.shard_map(lambda x: -x, mesh=mesh, in_specs=(P(),), out_specs=P(), axis_names={"b", "a"})
else:  # before 0.6.1: the experimental shard_map, the automatic axes named by auto=
    from jax.experimental.shard_map import shard_map
    body = shard_map(lambda x: -x, mesh=mesh, in_specs=(P(),), out_specs=P(), auto=frozenset({"x"}))
x = np.arange(2, dtype=np.int32)
expected = -x
print("expected:", expected.tolist())
try:
    got = np.asarray(jax.jit(body)(jax.device_put(x, NamedSharding(mesh, P()))))
except Exception as e:  # the bug's symptom is the exception
    print("got:      raised", type(e).__name__, str(e)[:300])
    sys.exit(1)
print("got:     ", got.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
