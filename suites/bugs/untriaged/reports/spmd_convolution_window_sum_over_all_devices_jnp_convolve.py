"""The form the conformance suite met: jnp.convolve(x, y) with x = [1, 2] (the shorter operand, so
conv_general_dilated's kernel) cut over mesh axis 'b' of a (4, 2) mesh, y = [1, 2, 3] replicated, jitted
into an output cut over 'b' (Auto mesh). Shardy propagation (JAX's default partitioner from 0.7.0) also
cuts the lhs along 'b', and XLA's SPMD partitioner then all-reduces the window's partial sums over all 8
devices instead of the 2 along 'b': every value comes back multiplied by 4 ([4, 16, 28, 24] for numpy's
[1, 4, 7, 6]). Exits 1 while the values are wrong."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("a", "b"))
x = np.array([1.0, 2.0], np.float32)
y = np.array([1.0, 2.0, 3.0], np.float32)
cut = NamedSharding(mesh, P("b"))
f = jax.jit(jnp.convolve, in_shardings=(cut, NamedSharding(mesh, P())), out_shardings=cut)
got = np.asarray(f(x, y))
expected = np.convolve(x, y)
print("jax:  ", got)
print("numpy:", expected)
sys.exit(0 if np.allclose(got, expected) else 1)
