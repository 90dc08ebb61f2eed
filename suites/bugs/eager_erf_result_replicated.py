# lax.erf(x) of a float32[4] x committed over two CPU devices as NamedSharding(mesh, P('a')) returns its
# result replicated on both devices, where every other elementwise operation (lax.erfc, lax.sin, ...) keeps
# P('a'): JAX lowers erf to chlo.erf with the operand's sharding on the argument and none on the result, and
# the partitioner does not carry the operand's sharding through it. The jax.Array tutorial: an elementwise
# operation's output is sharded as its input.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
x = jax.device_put(np.array([0.0, 0.25, 0.5, 1.0], np.float32), NamedSharding(mesh, P("a")))
specs = {name: getattr(jax.lax, name)(x).sharding for name in ("erf", "erfc", "sin")}
print("expected: every result NamedSharding(..., P('a'))")
for name, sharding in specs.items():
    print(f"got:      lax.{name}: {sharding}")
sys.exit(0 if all(getattr(s, "spec", None) == P("a") for s in specs.values()) else 1)
