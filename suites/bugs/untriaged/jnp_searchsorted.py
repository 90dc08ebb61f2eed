"""jnp.searchsorted (method='scan', the default, and 'scan_unrolled') of a query sharded over an Explicit
mesh axis raises ValueError "Resource axis: a of P('a',) is not found in mesh: ()." (unsharded: fine).
The same error reaches jnp.digitize, jnp.interp, jnp.histogram/histogramdd and jnp.isin(method='binary_search')."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType

a = np.array([-3.0, 0.0, 2.0, 5.0], np.float32)
v = np.array([-4.0, 1.0, 2.0, 7.0, 0.0, 3.0], np.float32)
expected = np.searchsorted(a, v)
mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Explicit,) * 2)
failed = False
for method in ("scan", "scan_unrolled"):
    with jax.set_mesh(mesh):
        vs = jax.device_put(v, NamedSharding(mesh, P("a")))
        try:
            got = np.asarray(jax.jit(lambda a, v: jnp.searchsorted(a, v, method=method))(a, vs))  # noqa: B023 - called in this iteration
        except Exception as e:
            got = f"{type(e).__name__}: {e}"
    print(method, "got", got, "expected", expected)
    failed |= not (isinstance(got, np.ndarray) and np.array_equal(got, expected))
sys.exit(1 if failed else 0)
