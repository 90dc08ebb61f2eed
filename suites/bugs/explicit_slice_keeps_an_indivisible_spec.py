# On an Explicit mesh, an empty slice x[0:0, :1] and a range update x.at[:, :1].set(v) of x sharded two ways along
# dimension 1 keep x's spec on a dimension of size 1 and raise a divisibility ValueError instead of a ShardingTypeError.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2,), ("a",), axis_types=(AxisType.Explicit,))
x = jax.device_put(np.arange(4.0).reshape(2, 2), NamedSharding(mesh, P(None, "a")))  # f32[2,2@a]

# Under jax.jit the same slice raises ShardingTypeError "slicing on sharded dims where
# out dim (1) is not divisible by mesh axes (2) ... is not implemented".
cases = [
    ("x[0:0, :1]", lambda: x[0:0, :1], np.zeros((0, 1))),
    ("x.at[:, :1].set(9.0)", lambda: x.at[:, :1].set(9.0), np.array([[9.0, 1.0], [9.0, 3.0]])),
]
ok = True
with jax.set_mesh(mesh):
    for text, call, expected in cases:
        try:
            got = np.asarray(call())
            print(f"{text}\n  got:      {got.shape} {got.tolist()}")
            good = got.shape == expected.shape and np.array_equal(got, expected)
        except Exception as e:
            print(f"{text}\n  got:      {type(e).__name__}: {str(e).splitlines()[0]}")
            good = type(e).__name__ == "ShardingTypeError"
        print(f"  expected: ShardingTypeError, or {expected.shape} {expected.tolist()}")
        ok = ok and good
sys.exit(0 if ok else 1)
