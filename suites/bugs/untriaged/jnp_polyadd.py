"""jnp.polyadd (and jnp.polysub, which calls it) on an Explicit mesh, the shorter operand cut: ValueError
(not a ShardingTypeError), from ``a1.at[-n:].add(a2)`` of the longer replicated operand with the cut
shorter one: "Incompatible types for broadcasting: input type=int32[2@b] and requested type=int32[2]",
or "Sharding spec ('a',) implies that array axis 0 is partitioned 4 times, but does not evenly divide
the dimension size 2". Exits 1 while it raises or differs from numpy."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("a", "b"), axis_types=(AxisType.Explicit,) * 2)
x, y = np.array([1, 2], np.int32), np.array([1, 2, 3, 4], np.int32)
failed = False
with jax.set_mesh(mesh):
    for spec in (P("b"),):
        xs = jax.device_put(x, NamedSharding(mesh, spec))
        ys = jax.device_put(y, NamedSharding(mesh, P()))
        for name, f, ref in (("polyadd", jnp.polyadd, np.polyadd), ("polysub", jnp.polysub, np.polysub)):
            try:
                got = np.asarray(f(xs, ys))
                print(name, spec, "got", got, "expected", ref(x, y))
                failed |= not np.array_equal(got, ref(x, y))
            except Exception as e:
                print(name, spec, "raised", type(e).__name__, str(e)[:200])
                failed = True
sys.exit(1 if failed else 0)
