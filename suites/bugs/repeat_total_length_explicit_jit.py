# jax.jit(lambda y, r: jnp.repeat(y, r, axis=0, total_repeat_length=16, out_sharding=P('a'))) inside
# the context of an Explicit mesh ('a'=8), with y int32[8, 2] and the array of repeats r put on the
# mesh replicated, raises ValueError: "For primitive slice, context mesh AbstractMesh(... Auto ...)
# should match the aval mesh AbstractMesh(... Explicit ...)": an intermediate of JAX's own
# implementation is traced under a context mesh whose axes are Auto. jnp.repeat's docstring:
# "total_repeat_length: this must be specified statically for jnp.repeat to be compatible with
# jax.jit ... If sum(repeats) is smaller than total_repeat_length, the final value will be repeated",
# and out_sharding lays the result out as asked; so the call should return numpy's repeat padded with
# the last row to 16 rows, laid out P('a').
# Exits 0 on a release without Explicit axes or without jnp.repeat(out_sharding=): no bug to measure.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import inspect
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

if not hasattr(jax.sharding, "AxisType") or "out_sharding" not in inspect.signature(jnp.repeat).parameters:
    print("no Explicit axes or no jnp.repeat(out_sharding=) on this release: nothing to measure")
    sys.exit(0)

mesh = Mesh(np.array(jax.devices()[:8]), ("a",), axis_types=(jax.sharding.AxisType.Explicit,))
x = np.arange(16, dtype=np.int32).reshape(8, 2)
repeats = np.array([1, 3, 0, 2, 2, 1, 3, 1], np.int32)  # sum 13: padded with the last row to 16
expected = np.concatenate([np.repeat(x, repeats, axis=0), np.repeat(x[-1:], 3, axis=0)])
use_mesh = jax.set_mesh if hasattr(jax, "set_mesh") else jax.sharding.use_mesh
with use_mesh(mesh):
    y = jax.device_put(x, NamedSharding(mesh, P()))
    r = jax.device_put(repeats, NamedSharding(mesh, P()))
    try:
        out = jax.jit(lambda y, r: jnp.repeat(y, r, axis=0, total_repeat_length=16, out_sharding=P("a")))(y, r)
        got = (np.asarray(out).tolist(), tuple(out.sharding.spec)[:1])
    except Exception as e:
        got = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
print("got:     ", got)
print("expected:", (expected.tolist(), ("a",)))
sys.exit(0 if got == (expected.tolist(), ("a",)) else 1)
