# On an Explicit mesh, jnp.reshape(x, (1, 4, 1)) of x int32[2, 2] sharded P('a') raises an internal
# IndexError from lax's reshape sharding rule.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",), axis_types=(AxisType.Explicit,))
x = np.arange(4, dtype=np.int32).reshape(2, 2)
expected = x.reshape(1, 4, 1).tolist()
try:
    got = np.asarray(jnp.reshape(jax.device_put(x, NamedSharding(mesh, P("a"))), (1, 4, 1))).tolist()
except Exception as e:
    got = f"{type(e).__name__}: {str(e).partition(chr(10))[0] or '(no message)'}"
print("got:     ", got)
print("expected:", expected, "laid out P(None, 'a', None), or a ShardingTypeError")
sys.exit(0 if got == expected or got.startswith("ShardingTypeError") else 1)
