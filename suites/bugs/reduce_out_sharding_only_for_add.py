# lax.reduce(operands, init_values, computation, dimensions, out_sharding=P('a')) on an Explicit mesh
# lays its result out as asked only when the computation is lax.add: with another monoid reducer JAX
# recognises (lax.max with the dtype's minimum as init) it raises a bare NotImplementedError (no
# message: jax/_src/lax/lax.py reduce, "if out_sharding is not None and monoid_reducer is not
# reduce_sum: raise NotImplementedError"), and with a computation it does not recognise (a lambda,
# or several operands) the generic path never passes out_sharding on: the result is returned
# replicated, P(None,), the parameter silently ignored. lax.reduce's signature takes
# out_sharding: NamedSharding | P | None for every computation (its docstring names no exception,
# only that init_values and computation must form a monoid), so every form should return the
# reduction laid out P('a'), as the lax.add form does.
# Exits 0 on a release whose lax.reduce has no out_sharding (or no Explicit axes): no bug to measure.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import inspect
import sys

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

if "out_sharding" not in inspect.signature(lax.reduce).parameters or not hasattr(jax.sharding, "AxisType"):
    print("lax.reduce takes no out_sharding on this release (or no Explicit axes): nothing to measure")
    sys.exit(0)

mesh = Mesh(np.array(jax.devices()[:8]), ("a",), axis_types=(jax.sharding.AxisType.Explicit,))
x = np.arange(32, dtype=np.int32).reshape(8, 4)
use_mesh = jax.set_mesh if hasattr(jax, "set_mesh") else jax.sharding.use_mesh
calls = {
    "lax.add": (lambda y: lax.reduce(y, np.int32(0), lax.add, (1,), out_sharding=P("a")), x.sum(1)),
    "lax.max": (lambda y: lax.reduce(y, np.int32(-2 ** 31), lax.max, (1,), out_sharding=P("a")), x.max(1)),
    "a lambda": (lambda y: lax.reduce(y, np.int32(0), lambda p, q: p + q, (1,), out_sharding=P("a")), x.sum(1)),
    "two operands": (lambda y: lax.reduce((y, y), (np.int32(0), np.int32(0)),
                                          lambda p, q: (p[0] + q[0], p[1] + q[1]), (1,), out_sharding=P("a"))[0],
                     x.sum(1)),
}
wrong = 0
with use_mesh(mesh):
    y = jax.device_put(x, NamedSharding(mesh, P()))
    for name, (call, values) in calls.items():
        try:
            r = call(y)
            got = (tuple(r.sharding.spec), np.asarray(r).tolist())
        except Exception as e:
            got = f"{type(e).__name__}: {' '.join(str(e).split())[:200]!r}"
        expected = (("a",), values.tolist())
        print(f"{name}:\n  got:      {got}\n  expected: {expected}")
        wrong += got != expected
sys.exit(1 if wrong else 0)
