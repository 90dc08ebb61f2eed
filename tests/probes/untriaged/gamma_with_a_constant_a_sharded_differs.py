"""jax.random.gamma(key, 2.0, (8,)) (the shape parameter a a Python constant) jitted with
out_shardings=P('a') over eight CPU devices is a few ulps off the same draw jitted unsharded, with
jax_threefry_partitionable on (JAX documents Threefry draws as identical across shardings). With a
passed as a traced argument the two agree. Exits 1 while they differ."""
import os
os.environ['JAX_PLATFORMS'] = 'cpu'
os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'
import sys
import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.config.update('jax_threefry_partitionable', True)
mesh = Mesh(np.array(jax.devices()[:8]), ('a',))
f = lambda key: jax.random.gamma(key, 2.0, (8,))
key = jax.random.key(3)
sharded = np.asarray(jax.jit(f, out_shardings=NamedSharding(mesh, P('a')))(key))
unsharded = np.asarray(jax.jit(f)(key))
g = lambda key, a: jax.random.gamma(key, a, (8,))
traced = np.asarray(jax.jit(g, out_shardings=NamedSharding(mesh, P('a')))(key, np.float32(2.0)))
print('jax', jax.__version__)
print('sharded:  ', sharded.tolist())
print('unsharded:', unsharded.tolist())
print('ulps apart:', (sharded.view(np.int32).astype(np.int64) - unsharded.view(np.int32)).tolist())
print('a traced, sharded, equals the unsharded draw:', traced.tobytes() == unsharded.tobytes())
sys.exit(0 if sharded.tobytes() == unsharded.tobytes() else 1)
