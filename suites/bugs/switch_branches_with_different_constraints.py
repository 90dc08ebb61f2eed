# jit of lax.switch whose branches constrain their outputs to different shardings fails XLA's HLO verifier.
import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
s = lambda *spec: NamedSharding(mesh, P(*spec))
f = jax.jit(lambda k, x, y: lax.switch(jnp.sum(k), [lambda x, y: lax.with_sharding_constraint(x * 2 + y, s("a")),
                                                     lambda x, y: lax.with_sharding_constraint(jnp.sin(x) * y, s())],
                                       x, y),
            out_shardings=s())
k0, x0, y0 = np.zeros(2, np.int32), np.arange(2, dtype=np.float32), np.ones(2, np.float32)
k, x, y = (jax.device_put(a, s("a")) for a in (k0, x0, y0))
expected = x0 * 2 + y0
try:
    got = np.asarray(f(k, x, y))
except Exception as e:  # what JAX raises is the bug
    print("jit raised:", type(e).__name__, str(e).splitlines()[0][:300])
    print("expected:", expected.tolist())
    sys.exit(1)
print("got:     ", got.tolist())
print("expected:", expected.tolist())
sys.exit(0 if np.allclose(got, expected) else 1)
