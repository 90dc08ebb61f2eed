"""lax.conv_general_dilated of lhs f32[1, 1, 4] and a 2-wide kernel f32[1, 1, 2], both cut along their
spatial dimension over mesh axis 'b' of a (4, 2) mesh (so each is replicated over the 4 devices of
axis 'a'), jitted into an output cut the same way: XLA's SPMD partitioner splits the convolution window
across the 2 devices of 'b' (halo exchange by collective-permute) and then sums the partial results
with an all-reduce over all 8 devices (replica_groups={{0,...,7}}) instead of within each pair along
'b', so every value comes back multiplied by 4, the size of 'a'. It should return numpy's answer, as it
does unsharded. jnp.convolve / jnp.correlate / jnp.polymul reach the same partitioning when only their
shorter operand is cut (see spmd_convolution_window_sum_over_all_devices_jnp_convolve.py). Exits 1
while the values are wrong."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys
import numpy as np
import jax
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("a", "b"))
lhs = np.array([1.0, 2.0, 3.0, 4.0], np.float32).reshape(1, 1, 4)   # [batch, feature, width]
rhs = np.array([1.0, 10.0], np.float32).reshape(1, 1, 2)            # [out feature, in feature, width]
cut = NamedSharding(mesh, P(None, None, "b"))
f = jax.jit(lambda a, b: lax.conv_general_dilated(a, b, (1,), [(1, 0)]),
            in_shardings=(cut, cut), out_shardings=cut)
got = np.asarray(f(lhs, rhs)).ravel()
# out[i] = sum_k padded[i + k] * rhs[k], padded = [0, 1, 2, 3, 4] (low padding 1)
padded = np.concatenate([[0.0], lhs.ravel()])
expected = np.array([padded[i] * 1.0 + padded[i + 1] * 10.0 for i in range(4)], np.float32)
print("jax:  ", got)
print("numpy:", expected)
sys.exit(0 if np.allclose(got, expected) else 1)
