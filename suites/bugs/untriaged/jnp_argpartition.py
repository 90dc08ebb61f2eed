"""jnp.argpartition of an array sharded over an Explicit mesh axis on a dimension other than the
partitioned one raises ValueError "Mapped away dimension of inputs passed to vmap should be sharded
the same" (sorting.py argpartition: the proxy lax.full(arr.shape, 1.0) is built unsharded and vmapped
together with the sharded bottom indices)."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType

x = np.arange(24, dtype=np.float32)[::-1].reshape(2, 12).T.copy()  # (12, 2)
expected = np.sort(x, axis=0)[3]
mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Explicit,) * 2)
with jax.set_mesh(mesh):
    xs = jax.device_put(x, NamedSharding(mesh, P(None, "a")))
    try:
        idx = jax.jit(lambda x: jnp.argpartition(x, 3, axis=0))(xs)
        got = np.take_along_axis(x, np.asarray(idx), axis=0)[3]
    except Exception as e:
        got = f"{type(e).__name__}: {e}"
print("got", got, "expected", expected)
sys.exit(0 if isinstance(got, np.ndarray) and np.array_equal(got, expected) else 1)
