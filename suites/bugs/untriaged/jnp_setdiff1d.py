"""jnp.setdiff1d called eagerly on a one-element operand laid out P('x') over a size-1 mesh axis
(the other operand P('a')) raises instead of answering: on an Explicit mesh AssertionError (0, P('x',))
from array.make_array_from_callback, on an Auto mesh IndexError "list assignment index out of range"
from pjit._pjit_call_impl_python. Under jit it computes."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType

x0 = np.array([3], np.int32)
x1 = np.array([1, 2], np.int32)
expected = np.array([3], np.int32)
failed = False
for kind in (AxisType.Explicit, AxisType.Auto):
    mesh = jax.make_mesh((2, 4, 1), ("a", "b", "x"), axis_types=(kind,) * 3)
    with jax.set_mesh(mesh):
        args = (jax.device_put(x0, NamedSharding(mesh, P("x"))), jax.device_put(x1, NamedSharding(mesh, P("a"))))
        for way, f in (("eager", jnp.setdiff1d), ("jit", jax.jit(jnp.setdiff1d, static_argnames="size"))):
            try:
                got = np.asarray(f(*args, size=1, fill_value=-100))
            except Exception as e:
                got = f"{type(e).__name__}: {e}"
            print(kind, way, "got", got, "expected", expected)
            failed |= not (isinstance(got, np.ndarray) and np.array_equal(got, expected))
sys.exit(1 if failed else 0)
