# On an Explicit mesh, jnp.roll(x, 1, axis=1) of x int32[1, 4] sharded P('x') over a size-1 axis
# raises ShardingTypeError: its slice x[:, 3:4], all of whose dimensions have size 1, is typed
# P(None, None) (since JAX 0.11.0).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((1,), ("x",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:1])
x0 = np.arange(4, dtype=np.int32).reshape(1, 4)
expected = np.roll(x0, 1, axis=1)
with jax.set_mesh(mesh):
    x = jax.device_put(x0, NamedSharding(mesh, P("x")))
    print("x[:, 3:4] is typed", jax.typeof(x[:, 3:4]).sharding.spec, "(should keep P('x', None))")
    try:
        got = jnp.roll(x, 1, axis=1)
    except Exception as e:
        print("raised:  ", type(e).__name__, str(e)[:300])
        print("expected:", expected.tolist(), "typed P('x', None)")
        sys.exit(1)
    print("got:     ", np.asarray(got).tolist(), jax.typeof(got).sharding.spec)
    print("expected:", expected.tolist(), "typed P('x', None)")
    sys.exit(0 if np.array_equal(np.asarray(got), expected) and jax.typeof(got).sharding.spec == P("x", None) else 1)
