# jax.grad, inside a shard_map body over 4 devices, of sum(lax.pbroadcast(y, 'a', 1) ** 2) for y
# float32[2] raises TypeError "full must be called with scalar fill_value, got fill_value.shape
# (2,)": pbroadcast's transpose rule (_pbroadcast_transpose_rule) builds the source's cotangent with
# lax.full_like(t, psum(t)), which takes a scalar fill value only. pbroadcast is linear (its
# docstring: every device gets "x being copied from the source index slice of axis_name"), so its
# gradient is the cotangents summed onto the source and zeros elsewhere, for any shape; 0.4.30's rule
# (jnp.where(is_source, tsum, zeros_like(t))) gives that. Traced only (jax.make_jaxpr): the error is
# raised before lowering, so it shows on CPU, where XLA has no collective-broadcast to run.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec as P

if hasattr(jax, "shard_map"):
    shard_map, check = jax.shard_map, {"check_vma": False}
else:
    from jax.experimental.shard_map import shard_map
    check = {"check_rep": False}
mesh = Mesh(np.array(jax.devices()[:4]), ("a",))
body = lambda b: jax.grad(lambda y: jnp.sum(lax.pbroadcast(y, "a", 1) ** 2))(b[0])[None]
f = shard_map(body, mesh=mesh, in_specs=P("a"), out_specs=P("a"), **check)
x = np.arange(8, dtype=np.float32).reshape(4, 2)
try:
    jax.make_jaxpr(f)(x)
    got = "traced"
except TypeError as e:
    got = f"TypeError: {e}"
print(f"got:      {got}\nexpected: traced")
sys.exit(0 if got == "traced" else 1)
