"""lax.conv_general_dilated(lhs, rhs, (1,), 'SAME', batch_group_count=2) with lhs int8[16, 2, 4] put on an
Auto mesh of 8 devices split along its batch dimension (NamedSharding(mesh, P('a'))) raises
IndivisibleError ("shape=[2, 1, 1, 4] is incompatible with mesh_shape ... dim_size=2 is not divisible by
axis_size=8") instead of returning the grouped convolution (the same call on the unsharded lhs works).
Exits 1 while the bug is there."""
import os
import sys
os.environ['JAX_PLATFORMS'] = 'cpu'
os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('a',))
rng = np.random.default_rng(0)
lhs = rng.integers(64, 128, (16, 2, 4)).astype(np.int8)
rhs = rng.integers(64, 128, (2, 2, 3)).astype(np.int8)
expected = np.asarray(lax.conv_general_dilated(lhs, rhs, (1,), 'SAME', batch_group_count=2,
                                               preferred_element_type=jnp.int32))
print('jax', jax.__version__)
try:
    got = lax.conv_general_dilated(jax.device_put(lhs, NamedSharding(mesh, P('a'))), rhs, (1,), 'SAME',
                                   batch_group_count=2, preferred_element_type=jnp.int32)
except Exception as e:  # noqa: BLE001 - the finding
    print('got: raised', type(e).__name__, str(e).splitlines()[0][:300])
    print('expected (the unsharded call): shape', expected.shape)
    sys.exit(1)
print('got: shape', got.shape, 'equal to the unsharded call:', np.array_equal(np.asarray(got), expected))
sys.exit(0 if np.array_equal(np.asarray(got), expected) else 1)
