"""lax.reduce_and (and reduce_or / reduce_xor) of an int32 operand sharded over two CPU devices:
XLA raises UNIMPLEMENTED "Unsupported reduction computation" (the cross-device all-reduce of a
bitwise and/or/xor on s32; of xor on pred too), eagerly and under jit; unsharded it computes.
Exits 1 while so."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"
import numpy as np
import jax
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
x = np.array([6, 3], dtype=np.int32)
failed = False
for name, fn, expected in (("reduce_and", lax.reduce_and, 6 & 3), ("reduce_or", lax.reduce_or, 6 | 3),
                           ("reduce_xor", lax.reduce_xor, 6 ^ 3)) + (("reduce_xor bool", lax.reduce_xor, True),):
    print(name, "unsharded:", fn(np.array([True, False]) if "bool" in name else x, (0,)), "expected:", expected)
    operand = np.array([True, False]) if "bool" in name else x
    sharded = jax.device_put(operand, NamedSharding(mesh, P("a")))
    for way, call in (("eager", lambda: fn(sharded, (0,))), ("jit", lambda: jax.jit(lambda v: fn(v, (0,)))(sharded))):  # noqa: B023 - called in this iteration
        try:
            got = int(call())
            print(f"  {way} sharded: got {got}, expected {expected}")
            failed |= got != expected
        except Exception as e:
            print(f"  {way} sharded raised {type(e).__name__}: {str(e).splitlines()[0][:150]}")
            failed = True
raise SystemExit(1 if failed else 0)
