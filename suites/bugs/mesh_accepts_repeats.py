# jax.sharding.Mesh accepts a device given twice and an axis name given twice; the mesh then fails
# later with an unrelated error, or lays an array out wrong
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

d = jax.devices()
accepted = False
for what, devices, names in [("device d0 twice", np.array([d[0], d[0]]), ("a",)),
                             ("axis name 'a' twice", np.array(d[:2]).reshape(2, 1), ("a", "a"))]:
    try:
        mesh = Mesh(devices, names)
    except ValueError as e:
        first_line = str(e).partition("\n")[0]
        print(f"got:      {what}: ValueError: {first_line}")
        continue
    accepted = True
    try:
        y = jax.device_put(np.arange(devices.size), NamedSharding(mesh, P("a")))
        later = (f"device_put of arange({devices.size}) onto P('a') gives shards "
                 f"{[s.data.tolist() for s in y.addressable_shards]}")
    except Exception as e:
        first_line = str(e).partition("\n")[0]
        later = f"device_put onto P('a') raised {type(e).__name__}: {first_line}"
    print(f"got:      {what}: accepted, mesh.shape = {dict(mesh.shape)} for devices of shape {devices.shape}; {later}")
print("expected: ValueError from Mesh for each (a mesh holds each device once and names each axis once)")
sys.exit(1 if accepted else 0)
