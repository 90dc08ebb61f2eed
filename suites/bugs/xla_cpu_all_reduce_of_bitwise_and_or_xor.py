"""lax.reduce_and / reduce_or / reduce_xor of an int32 vector split over two CPU devices (eager or
jit) fails to compile: XLA's SPMD partitioner turns the reduction over the split dimension into a
local reduce plus an all-reduce whose to_apply is the same s32 and/or/xor, and XLA:CPU's thunk
emitter refuses it: UNIMPLEMENTED "Unsupported reduction computation: %region... and(...)"
(MatchReductionInstruction knows add, multiply, minimum, maximum, and and/or of pred only; never
xor). Bool and/or compile (as min/max); bool xor fails too. Unsplit, each computes. Exits 1 while any
of the four fails."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ["JAX_PLATFORMS"] = "cpu"
import sys

import numpy as np
import jax
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:2]), ("a",))


def reducer(name, op):
    """lax.reduce_<name> where this release has it, else lax.reduce with lax.bitwise_<name> and its
    identity (the same reduce_<name> primitive; older releases expose only that)."""
    if hasattr(lax, f"reduce_{name}"):
        return getattr(lax, f"reduce_{name}")
    return lambda v, axes: lax.reduce(v, np.array(True if name == "and" else False, v.dtype)
                                      if v.dtype == np.bool_ else np.array(-1 if name == "and" else 0, v.dtype),
                                      op, axes)


reduce_and, reduce_or, reduce_xor = (reducer("and", lax.bitwise_and), reducer("or", lax.bitwise_or),
                                     reducer("xor", lax.bitwise_xor))
i32 = np.array([6, 3], np.int32)
pred = np.array([True, False])
cases = (("reduce_and int32", reduce_and, i32, 6 & 3), ("reduce_or int32", reduce_or, i32, 6 | 3),
         ("reduce_xor int32", reduce_xor, i32, 6 ^ 3), ("reduce_xor bool", reduce_xor, pred, True ^ False),
         ("reduce_and bool (control)", reduce_and, pred, False), ("reduce_or bool (control)", reduce_or, pred, True))
failed = False
for name, fn, operand, expected in cases:
    split = jax.device_put(operand, NamedSharding(mesh, P("a")))
    try:
        got = int(jax.jit(lambda v: fn(v, (0,)))(split))  # noqa: B023 - called in this iteration
        print(f"{name}, split over 2 devices: got {got}, expected {int(expected)}")
        failed |= got != int(expected)
    except Exception as e:
        print(f"{name}, split over 2 devices: raised {type(e).__name__}: {str(e).splitlines()[0][:120]}")
        print(f"{name}: expected {int(expected)} (unsplit: {int(fn(operand, (0,)))})")
        failed = True
sys.exit(1 if failed else 0)
