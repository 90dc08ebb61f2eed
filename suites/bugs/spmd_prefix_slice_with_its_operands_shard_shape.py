# jit of (constrain(-x, P()), constrain(x[0:1], P())) with x split over two devices fails XLA's HLO
# verifier ("Expected instruction to have shape equal to u32[2], actual shape is u32[1]").
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
c = jax.lax.with_sharding_constraint
x = np.arange(2, dtype=np.uint32)
a = jax.device_put(x, NamedSharding(mesh, P("a")))

f = jax.jit(lambda a: (lambda a: (c(-a, NamedSharding(mesh, P())), c(a[0:1], NamedSharding(mesh, P()))))(
    c(a, NamedSharding(mesh, P("a")))))
expected = (-x, x[0:1])
print("expected:", expected)
try:
    got = tuple(np.asarray(o) for o in f(a))
except Exception as e:  # the bug: the HLO verifier refuses the partitioned program
    print("got:      raised", type(e).__name__, str(e).splitlines()[0][:200])
    sys.exit(1)
print("got:     ", got)
sys.exit(0 if all(np.array_equal(g, e) for g, e in zip(got, expected)) else 1)
