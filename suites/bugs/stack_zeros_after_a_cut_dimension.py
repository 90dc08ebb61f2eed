# jax.jit of jnp.stack into an output that cuts the new dimension over one mesh axis and the
# dimension before it over another returns zeros for part of the result.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"  # a 2x2 mesh
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("a", "b"))
x = np.array([1, 2], np.int32)
f = jax.jit(lambda x, y: jnp.stack([x, y], axis=1), out_shardings=NamedSharding(mesh, P("a", "b")))
got = np.asarray(f(x, x))
expected = np.stack([x, x], axis=1)  # [[1, 1], [2, 2]]
print("got:     ", got.tolist())
print("expected:", expected.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
