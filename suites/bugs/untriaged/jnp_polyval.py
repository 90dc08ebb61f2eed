"""jnp.polyval on an Explicit mesh: with the points x cut over 'a', it raises TypeError (its scan's carry,
``lax.full_like(x, 0, shape=...)``, is unsharded while ``y * x + p`` is cut: "scan body function carry
input and carry output must have equal types"); with the coefficients p cut, ValueError ("0th dimension
of all xs should be replicated"). Neither is a ShardingTypeError, and the first is a well-typed call
(an elementwise polynomial of a cut array). Exits 1 while either raises."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((8,), ("a",), axis_types=(AxisType.Explicit,))
p = np.array([1, 2, 3], np.int32)
x = np.arange(8, dtype=np.int32)
failed = False
with jax.set_mesh(mesh):
    for name, args in (("x cut", (p, jax.device_put(x, NamedSharding(mesh, P("a"))))),
                       ("p cut", (jax.device_put(np.arange(8, dtype=np.int32), NamedSharding(mesh, P("a"))), x))):
        try:
            got = np.asarray(jnp.polyval(*args))
            expected = np.polyval(np.asarray(args[0]), np.asarray(args[1]))
            print(name, "got", got, "expected", expected)
            failed |= not np.array_equal(got, expected)
        except Exception as e:
            print(name, "raised", type(e).__name__, str(e)[:300])
            failed = True
sys.exit(1 if failed else 0)
