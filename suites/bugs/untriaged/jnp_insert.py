"""jnp.insert and jnp.diagflat of an operand sharded on an Explicit mesh raise ValueError ("Incompatible
types for broadcasting", from the scatter of the operand into unsharded zeros, jax/_src/ops/scatter.py
_scatter_impl -> jnp.broadcast_to with the slice's sharding) where a sharding conflict is a
ShardingTypeError. Same deviation as the suite's known one for .at[] updates sharded unlike their
operand (test_explicit_scatter_update_conflict_is_a_sharding_type_error). Exits 1 while so."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
x = jax.device_put(np.arange(2, dtype=np.int32), NamedSharding(mesh, P("a")))
wrong = 0
with jax.set_mesh(mesh):
    for call, fn, expected in (("jnp.insert(x, 0, 0)", lambda: jnp.insert(x, 0, 0), np.insert(np.arange(2), 0, 0)),
                               ("jnp.diagflat(x)", lambda: jnp.diagflat(x), np.diagflat(np.arange(2)))):
        try:
            print(call, "got", np.asarray(fn()).tolist(), "expected", expected.tolist())
        except Exception as e:  # (the deviation: any exception but a ShardingTypeError)
            print(call, "raised", type(e).__name__, str(e)[:300])
            print("  expected: the values", expected.tolist(), "or a ShardingTypeError")
            wrong += type(e).__name__ != "ShardingTypeError"
sys.exit(1 if wrong else 0)
