# On an Explicit mesh of two CPU devices, lax.igamma(a, x) of a float32[2] a cut as P('a') and x replicated
# raises ShardingTypeError "select `which` must be scalar or have the same sharding as cases": igamma's own
# implementation selects between values computed from a and from x, sharded differently, and the select rule
# refuses them (as it refused jnp.where of broadcast-compatible shardings, jax-ml/jax#37853). Every other
# elementwise operation of them (lax.add, lax.atan2, lax.zeta) is typed as the cut operand is; so should
# igamma be (igammac, betainc and jnp.ldexp the same).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

if not hasattr(jax.sharding, "AxisType") or not hasattr(jax, "set_mesh"):
    print("this JAX has no Explicit mesh axes with jax.set_mesh (the bug is not there)")
    sys.exit(0)
mesh = jax.make_mesh((2,), ("a",), axis_types=(jax.sharding.AxisType.Explicit,))
a_host, x_host = np.array([1.5, 2.5], np.float32), np.array([1.0, 3.0], np.float32)
expected = np.asarray(jax.lax.igamma(a_host, x_host))
a = jax.device_put(a_host, NamedSharding(mesh, P("a")))
x = jax.device_put(x_host, NamedSharding(mesh, P()))
print("expected:", expected.tolist(), "laid out P('a') (lax.add(a, x) is:", jax.lax.add(a, x).sharding.spec, ")")
with jax.set_mesh(mesh):
    try:
        got = jax.lax.igamma(a, x)
    except Exception as e:  # (the bug)
        print("got:      raised", type(e).__name__, str(e)[:200])
        sys.exit(1)
print("got:     ", np.asarray(got).tolist(), "laid out", got.sharding.spec)
sys.exit(0 if np.array_equal(np.asarray(got), expected) and got.sharding.spec == P("a") else 1)
