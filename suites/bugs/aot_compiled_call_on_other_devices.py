# A function compiled ahead of time for an input laid out P('a') over devices 0-1 accepts an
# argument laid out P('a') over devices 2-3 and computes on it, where JAX's AOT documentation says a
# compiled function does not reshard its arguments (later releases raise ValueError: "Computation
# was compiled for input shardings that disagree with the shardings of arguments passed to it").
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

devices = jax.devices()
mesh, other = Mesh(np.array(devices[:2]), ("a",)), Mesh(np.array(devices[2:4]), ("a",))
x0 = np.arange(4, dtype=np.int32).reshape(2, 2)
compiled = jax.jit(lambda x: x * 2 + 1, in_shardings=NamedSharding(mesh, P("a"))).lower(
    jax.device_put(x0, NamedSharding(mesh, P("a")))).compile()
try:
    got = compiled(jax.device_put(x0, NamedSharding(other, P("a"))))
    print("got:      returned", np.asarray(got).tolist(), "on devices", sorted(d.id for d in got.sharding.device_set))
    refused = False
except ValueError as e:
    print("got:      ValueError:", " ".join(str(e).split())[:200])
    refused = True
print("expected: ValueError (the argument is on other devices than compiled for)")
sys.exit(0 if refused else 1)
