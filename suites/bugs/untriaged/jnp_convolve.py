"""jnp.convolve of x (length 2, cut over the size-2 axis "b" of a (4, 2) mesh of 8 devices) with a
longer replicated y (length 3), jitted with the output asked cut the same way (Auto mesh): wrong
values. jnp swaps the operands (the shorter one is the kernel), so the cut operand is
conv_general_dilated's rhs. Exits 1 while the values are wrong."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("a", "b"))
x = np.array([0.0, 1.0], np.float32)
y = np.array([0.0, 1.0, 2.0], np.float32)
expected = np.convolve(x, y)
unsharded = np.asarray(jnp.convolve(x, y))
cut = NamedSharding(mesh, P("b"))
got = np.asarray(jax.jit(jnp.convolve, in_shardings=(cut, NamedSharding(mesh, P())), out_shardings=cut)(
    jax.device_put(x, cut), y))
print("numpy    ", expected)
print("unsharded", unsharded)
print("sharded  ", got)
sys.exit(0 if np.array_equal(got, expected) else 1)
