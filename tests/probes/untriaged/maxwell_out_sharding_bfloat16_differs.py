"""jax.random.maxwell(key, (8, 2), jnp.bfloat16, out_sharding=P('a', None)) jitted on an Explicit
mesh of eight CPU devices is one bfloat16 ulp off the same draw jitted unsharded at two elements,
with jax_threefry_partitionable on (JAX documents Threefry draws as identical across shardings).
The normal draws it takes the norm of are equal; jnp.linalg.norm of the same bfloat16 values differs:
on one device (and on an Auto mesh) XLA keeps the float32 sum of squares into the sqrt (excess
precision, --xla_allow_excess_precision, on by default), on the Explicit mesh the sharding
annotation between them rounds it to bfloat16 first. With XLA_FLAGS adding
--xla_allow_excess_precision=false the two agree (EXTRA=--xla_allow_excess_precision=false).
Every release with maxwell's out_sharding (0.10.2 to 0.12.0.1). Exits 1 while they differ."""
import os
os.environ['JAX_PLATFORMS'] = 'cpu'
os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8 ' + os.environ.get('EXTRA', '')
import sys
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

jax.config.update('jax_threefry_partitionable', True)
mesh = Mesh(np.array(jax.devices()[:8]), ('a',), axis_types=(jax.sharding.AxisType.Explicit,))
f = lambda key, **out: jax.random.maxwell(key, (8, 2), jnp.bfloat16, **out)
key = jax.random.key(0)
unsharded = np.asarray(jax.jit(f)(key))
with jax.set_mesh(mesh):
    sharded = np.asarray(jax.jit(lambda key: f(key, out_sharding=P('a', None)))(key))
print('jax', jax.__version__)
print('sharded:  ', sharded.astype(np.float32).ravel().tolist())
print('unsharded:', unsharded.astype(np.float32).ravel().tolist())
print('bfloat16 ulps apart:', (sharded.view(np.int16).astype(np.int32) - unsharded.view(np.int16)).ravel().tolist())
sys.exit(0 if sharded.tobytes() == unsharded.tobytes() else 1)
