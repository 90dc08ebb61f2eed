# jnp.astype(x, dtype, device=...) ignores device: given NamedSharding(mesh, P('a')) over eight CPU devices
# for an int32[8, 2] laid out P(), the float16 result stays laid out P(); given jax.devices()[5] for a numpy
# int32[3, 2], the int8 result is on device 0. jnp.astype's docstring on 0.4.30 (numpy's, wrapped) says
# "device : str, optional  The device on which to place the returned array", and from 0.4.31 "device:
# optionally specify the device to which the output will be committed": the results should be laid out
# P('a') and on device 5. (0.4.30's astype hands device to _place_array, whose body is a TODO that ignores
# it; 0.4.31 passes it to convert_element_type's sharding.) On a release whose jnp.astype has no device
# the bug is not there.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import inspect
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

if "device" not in inspect.signature(jnp.astype).parameters:
    print("this JAX: jnp.astype has no device parameter (the bug is not there)")
    sys.exit(0)

mesh = Mesh(np.array(jax.devices()[:8]), ("a",))
s = NamedSharding(mesh, P("a"))
x = np.arange(16, dtype=np.int32).reshape(8, 2)
to_sharding = jnp.astype(jax.device_put(x, NamedSharding(mesh, P())), jnp.float16, device=s)
small = np.arange(6, dtype=np.int32).reshape(3, 2)
to_device = jnp.astype(small, jnp.int8, device=jax.devices()[5])
got = (tuple(to_sharding.sharding.spec) if isinstance(to_sharding.sharding, NamedSharding) else to_sharding.sharding,
       sorted(d.id for d in to_device.devices()))
values = (np.asarray(to_sharding).tolist() == x.astype(np.float16).tolist()
          and np.asarray(to_device).tolist() == small.astype(np.int8).tolist())
print("expected: device=NamedSharding(mesh, P('a')) -> spec ('a',); device=jax.devices()[5] -> devices [5];"
      " values right")
print(f"got:      device=NamedSharding(mesh, P('a')) -> spec {got[0]}; device=jax.devices()[5] -> devices {got[1]};"
      f" values right: {values}")
sys.exit(0 if got == (("a",), [5]) and values else 1)
