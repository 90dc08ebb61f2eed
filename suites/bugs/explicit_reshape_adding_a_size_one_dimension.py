# On an Explicit mesh, jnp.reshape of a sharded array that adds, drops or moves a size-1 dimension
# fails inside lax's reshape sharding rule (ShardingTypeError, bare AssertionError, IndexError).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",), axis_types=(AxisType.Explicit,))
ok = True
for shape, new_shape in [((2, 2), (1, 4)), ((2, 1, 2), (4, 1)), ((4, 2), (2, 2, 2, 1))]:
    x = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    expected = x.reshape(new_shape).tolist()
    try:
        got = np.asarray(jnp.reshape(jax.device_put(x, NamedSharding(mesh, P("a"))), new_shape)).tolist()
    except Exception as e:
        got = f"{type(e).__name__}: {str(e).partition(chr(10))[0] or '(no message)'}"
    print(f"jnp.reshape(x{list(shape)} sharded P('a'), {new_shape})")
    print("  got:     ", got)
    print("  expected:", expected)
    ok = ok and got == expected
sys.exit(0 if ok else 1)
