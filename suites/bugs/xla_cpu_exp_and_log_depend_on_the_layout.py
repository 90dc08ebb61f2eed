# XLA:CPU computes jnp.exp (and jnp.log) of the same float32 value differently when the operation is
# fused with a change of its result's shape or layout: jit(lambda x: jnp.exp(x).T) of a (4, 1) array
# (exp fused with a bitcast to (1, 4)) returns 1.4549915 for exp(0.375) where jit(jnp.exp) of the
# same array returns 1.4549913 (0.11.2 returns 1.4549913 both ways); log(2.625) likewise, 0.9650809
# for 0.96508086. On an Explicit mesh, jit(jnp.exp) from P('b', None, 'a') into P(None, ('a', 'b'))
# computes exp in the operand's layout fused with the copy that relays it out, so the sharded result
# is an ulp off the unsharded one at 3 of 16 elements.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

fused = {}
for name, f, value in [("exp", jnp.exp, 0.375), ("exp(x).T", lambda x: jnp.exp(x).T, 0.375),
                       ("log", jnp.log, 2.625), ("log(x).T", lambda x: jnp.log(x).T, 2.625)]:
    fused[name] = np.asarray(jax.jit(f)(np.full((4, 1), value, np.float32))).reshape(-1)[0].item()
print("exp of a (4, 1) array of 0.375, log of one of 2.625:", fused)

mesh = jax.make_mesh((2, 2), ("a", "b"), axis_types=(jax.sharding.AxisType.Explicit,) * 2,
                     devices=jax.devices()[:4])
x = (np.arange(16, dtype=np.float32) / 8).reshape(2, 4, 2)
got = np.asarray(jax.jit(jnp.exp, out_shardings=NamedSharding(mesh, P(None, ("a", "b"))))(
    jax.device_put(x, NamedSharding(mesh, P("b", None, "a")))))
expected = np.asarray(jax.jit(jnp.exp)(x))
print("got at (0, 1, 1):     ", got[0, 1, 1])
print("expected at (0, 1, 1):", expected[0, 1, 1])
same = fused["exp"] == fused["exp(x).T"] and fused["log"] == fused["log(x).T"]
sys.exit(0 if got.tobytes() == expected.tobytes() and same else 1)
