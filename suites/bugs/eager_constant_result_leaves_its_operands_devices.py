# jnp.imag(x) of a real float32[4] x committed over two CPU devices as NamedSharding(mesh, P('a')) returns
# zeros on device 0 alone (a SingleDeviceSharding) instead of laid out as x, and lax.integer_pow(x, 0) returns
# ones replicated, not cut as x: a function whose result ignores its operand's values is jitted, jit drops
# the unused input, and the input's layout with it (jax-ml/jax#26040). jnp.zeros_like(x), the same zeros
# by another route, keeps P('a'): the result of an operation on committed arrays should live where they do.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
x = jax.device_put(np.arange(4, dtype=np.float32), NamedSharding(mesh, P("a")))
i = jax.device_put(np.arange(4, dtype=np.int32), NamedSharding(mesh, P("a")))


def layout(y):
    return {d.id: index for d, index in sorted(y.sharding.devices_indices_map(y.shape).items(), key=lambda t: t[0].id)}


want = layout(x)
got = {"jnp.imag(x)": layout(jnp.imag(x)), "lax.integer_pow(i, 0)": layout(jax.lax.integer_pow(i, 0)),
       "jnp.zeros_like(x)": layout(jnp.zeros_like(x))}
print("expected: each result laid out as x:", want)
for call, found in got.items():
    print(f"got:      {call}: {found}")
sys.exit(0 if all(found == want for found in got.values()) else 1)
