# Jitted jnp.concatenate of a lax.dynamic_slice's value with itself, one copy constrained to be replicated,
# into an output cut over one of two mesh axes, never returns: its kernels spin (CPU, since JAX 0.7.2).
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import faulthandler
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:4]).reshape((2, 2)), ("b", "x"))


def f(x, i):
    v = lax.dynamic_slice(x, (i,), (5,))
    return jnp.concatenate((lax.with_sharding_constraint(v, NamedSharding(mesh, P())), v))


x, i = np.arange(8, dtype=np.uint32), np.int32(1)
expected = np.concatenate([x[1:6], x[1:6]])
compiled = jax.jit(f, out_shardings=NamedSharding(mesh, P("b"))).lower(x, i).compile()
print("expected:", expected.tolist(), flush=True)
# A 10-element program runs in microseconds; while the bug is there it never returns, and Python's
# faulthandler prints where it waits and exits with status 1 after 1 s.
faulthandler.dump_traceback_later(1, exit=True)
got = np.asarray(compiled(x, i))
faulthandler.cancel_dump_traceback_later()
print("got:     ", got.tolist())
sys.exit(0 if np.array_equal(got, expected) else 1)
