"""lax.slice(x, (1,), (2,), (3,)) (numpy's x[1:2:3], one element) of x = arange(4) cut over 4 devices
(one element per shard, the stride longer than the shard), jitted: XLA's SPMD partitioner emits a slice
typed s32[1] that yields 2 elements and the HLO verifier rejects the program (JaxRuntimeError INTERNAL
"during context [hlo verifier]: Expected instruction to have shape equal to s32[2], actual shape is
s32[1]"). It should return [1], as it does unsharded. The form the conformance suite met is
lax.slice of int32[2, 2, 4] P('b', None, 'a') on a (4, 2) mesh, start (0, 0, 1), limit (1, 1, 2),
strides (1, 1, 3), eagerly and under jit. Exits 1 while so."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys
import numpy as np
import jax
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:4]), ("a",))
x = np.arange(4, dtype=np.int32)
f = jax.jit(lambda v: lax.slice(v, (1,), (2,), (3,)))
expected = x[1:2:3]
print("numpy:", expected)
try:
    got = np.asarray(f(jax.device_put(x, NamedSharding(mesh, P("a")))))
except Exception as e:  # JaxRuntimeError (XlaRuntimeError on old releases)
    print(f"jax raised {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    sys.exit(1)
print("jax:  ", got)
sys.exit(0 if np.array_equal(got, expected) else 1)
