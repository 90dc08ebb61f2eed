"""lax.conv_general_dilated_local of x float32[2, 2, 3] replicated with a kernel float32[1, 2, 3] laid out
P(None, 'a') on a (2, 4) Auto mesh, jitted into P(): XLA aborts the process while compiling (found by the
vocabulary's lax.conv_general_dilated_local, nightly profile, seed 11, on 0.10.2). Dies with SIGABRT while
the bug is there; prints the result and exits 0 otherwise."""
import os
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]).reshape((2, 4)), ("a", "b"))
x = np.array([[[0, 1, 2], [3, 4, 5]], [[6, 7, 8], [-8, -7, -6]]], np.float32)
kernel = np.array([[[0, 1, 2], [3, 4, 5]]], np.float32)
f = jax.jit(lambda a, k: lax.conv_general_dilated_local(a, k, (1,), "SAME", (1,)),
            in_shardings=(NamedSharding(mesh, P()), NamedSharding(mesh, P(None, "a"))),
            out_shardings=NamedSharding(mesh, P()))
print("unsharded:", lax.conv_general_dilated_local(x, kernel, (1,), "SAME", (1,)).tolist())
print("jitted:   ", f(x, kernel).tolist())
