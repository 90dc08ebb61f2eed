# jit of jnp.pad(x, ((0, 2), (1, 0)), mode='edge') of x int32[2, 2] P('a', 'b') on a (2, 2) mesh, out_shardings
# P('b'), fails XLA's HLO verifier ("Expected instruction to have shape equal to s32[2,1], actual shape is s32[2,2]").
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("a", "b"))
x = np.arange(4, dtype=np.int32).reshape(2, 2)
a = jax.device_put(x, NamedSharding(mesh, P("a", "b")))

f = jax.jit(lambda a: jnp.pad(a, ((0, 2), (1, 0)), mode="edge"), out_shardings=NamedSharding(mesh, P("b")))
expected = np.pad(x, ((0, 2), (1, 0)), mode="edge")
print("expected:", expected.tolist())
try:
    got = np.asarray(f(a))
except Exception as e:  # the bug: the HLO verifier refuses the partitioned program
    print("got:      raised", type(e).__name__, str(e).splitlines()[0][:200])
    sys.exit(1)
print("got:     ", got.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
