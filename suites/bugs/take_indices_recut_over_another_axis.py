# jax.jit of jnp.take whose operand and indices are cut over one mesh axis, into an output that cuts
# the indices' dimension over a larger one, fails XLA's HLO verifier.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"  # a 4x2 mesh: 'a' must be larger than 'b'
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("a", "b"))
x = jax.device_put(np.arange(4, dtype=np.int32).reshape(2, 2), NamedSharding(mesh, P("b")))
i = jax.device_put(np.array([0, 1, 1, 0], np.int32), NamedSharding(mesh, P("b")))
expected = np.take(np.asarray(x), np.asarray(i), axis=1)  # [[0, 1, 1, 0], [2, 3, 3, 2]]
f = jax.jit(lambda x, i: jnp.take(x, i, axis=1), out_shardings=NamedSharding(mesh, P(None, "a")))
try:
    got = np.asarray(f(x, i))
except Exception as e:  # INVALID_ARGUMENT: during context [hlo verifier]: Slice dim size 2 greater than ...
    print("got:      raises", type(e).__name__, " ".join(str(e).split())[:200])
    print("expected:", expected.tolist())
    sys.exit(1)
print("got:     ", got.tolist())
print("expected:", expected.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
