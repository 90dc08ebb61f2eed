"""jnp.vectorize of an elementwise lambda on an Explicit mesh, x cut over 'a' and y replicated (same
shape): ValueError "Mapped away dimension of inputs passed to vmap should be sharded the same", where
the same arithmetic ``x * y - x`` is accepted (broadcasting takes the one sharded entry) and
jnp.vectorize documents numpy's broadcasting. Not a ShardingTypeError. Exits 1 while it raises."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Explicit,) * 2)
x, y = np.array([0, 1], np.int32), np.array([2, 3], np.int32)
with jax.set_mesh(mesh):
    xs = jax.device_put(x, NamedSharding(mesh, P("a")))
    ys = jax.device_put(y, NamedSharding(mesh, P()))
    print("plain arithmetic:", np.asarray(xs * ys - xs))
    try:  # jnp.matvec, vecmat and vecdot are jnp.vectorize of a product: the same refusal
        m = jax.device_put(np.ones((2, 2, 2), np.float32), NamedSharding(mesh, P("a")))
        print("matvec:", np.asarray(jnp.matvec(m, np.ones((2, 2), np.float32))))
    except Exception as e:
        print("matvec (matrices cut over 'a', vectors replicated) raised", type(e).__name__, str(e)[:200])
    try:
        got = np.asarray(jnp.vectorize(lambda a, b: a * b - a)(xs, ys))
    except Exception as e:
        print("vectorize raised", type(e).__name__, str(e)[:300])
        sys.exit(1)
print("vectorize:", got, "expected", x * y - x)
sys.exit(0 if np.array_equal(got, x * y - x) else 1)
