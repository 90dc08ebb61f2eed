# On an Explicit mesh, jnp.reshape(x, (4,)) of x int32[2, 2] sharded P('a', ('b', 'x')), x a size-1
# mesh axis, raises a bare AssertionError (sharded P('a', 'b') it gives P(('a', 'b'))).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2, 1), ("a", "b", "x"), axis_types=(AxisType.Explicit,) * 3)
x = np.arange(4, dtype=np.int32).reshape(2, 2)
expected = x.reshape(4).tolist()
try:
    got = np.asarray(jnp.reshape(jax.device_put(x, NamedSharding(mesh, P("a", ("b", "x")))), (4,))).tolist()
except Exception as e:
    got = f"{type(e).__name__}: {str(e).partition(chr(10))[0] or '(no message)'}"
print("got:     ", got)
print("expected:", expected, "laid out P(('a', 'b', 'x')) or P(('a', 'b')) (x has size 1)")
sys.exit(0 if got == expected else 1)
