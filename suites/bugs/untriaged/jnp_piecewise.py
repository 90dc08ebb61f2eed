"""jnp.piecewise of an operand sharded over an Explicit mesh axis, its conditions unsharded, raises
ValueError "Mapped away dimension of inputs passed to vmap should be sharded the same"."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType

x = np.array([-2.0, -1.0, 1.0, 3.0], np.float32)
c0, c1 = x < 0, x > 2
expected = np.piecewise(x, [c0, c1], [lambda v: v * 2, -1.0, lambda v: v - 3])
mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Explicit,) * 2)
with jax.set_mesh(mesh):
    xs = jax.device_put(x, NamedSharding(mesh, P("a")))
    try:
        got = np.asarray(jax.jit(lambda x, c0, c1: jnp.piecewise(
            x, [c0, c1], [lambda v: v * 2, -1.0, lambda v: v - 3]))(xs, c0, c1))
    except Exception as e:
        got = f"{type(e).__name__}: {e}"
print("got", got, "expected", expected)
sys.exit(0 if isinstance(got, np.ndarray) and np.array_equal(got, expected) else 1)
