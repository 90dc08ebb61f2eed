# lax.ragged_dot(lhs, rhs, group_sizes, group_offset=jnp.array([0])) and lax.ragged_dot_general(...,
# group_offset=jnp.array([0])) raise TypeError, eagerly "unhashable type: 'ArrayImpl'" and under jit
# "parameters to jaxpr equations must have __hash__ and __eq__ methods ... group_offset was not
# hashable" (on 0.4.30-0.6.2 jit gets as far as the lowering's NotImplementedError 'Unimplemented
# group_offset support.' instead): the array is bound as a static primitive parameter, and every
# lowering (default, GPU, TPU) refuses any group_offset that is not None. Both docstrings document the parameter as
# usable: "group_offset: Optional. (1,) shaped array that indicates the group in group_sizes to start
# computing from. If not specified, defaults to [0]." So group_offset=[0] should return what the
# default returns.
# Exits 0 on a release whose ragged_dot has no group_offset: no bug to measure.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import inspect
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

if not hasattr(lax, "ragged_dot") or "group_offset" not in inspect.signature(lax.ragged_dot).parameters:
    print("lax.ragged_dot takes no group_offset on this release: nothing to measure")
    sys.exit(0)

lhs = np.arange(12, dtype=np.float32).reshape(6, 2)
rhs = np.arange(24, dtype=np.float32).reshape(3, 2, 4)
sizes = np.array([1, 3, 2], np.int32)
expected = np.concatenate([lhs[0:1] @ rhs[0], lhs[1:4] @ rhs[1], lhs[4:6] @ rhs[2]])
calls = {"lax.ragged_dot": lambda o: lax.ragged_dot(lhs, rhs, sizes, group_offset=o)}
if hasattr(lax, "ragged_dot_general"):
    dims = lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), [0], [0])
    calls["lax.ragged_dot_general"] = lambda o: lax.ragged_dot_general(lhs, rhs, sizes, dims, group_offset=o)
wrong = 0
for name, f in calls.items():
    for way, call in (("eager", f), ("jit", jax.jit(f))):
        try:
            got = np.asarray(call(jnp.array([0], jnp.int32))).tolist()
        except Exception as e:
            got = f"{type(e).__name__}: {' '.join(str(e).split())[:200]}"
        print(f"{name} ({way}), group_offset=[0]:\n  got:      {got}\n  expected: {expected.tolist()}")
        wrong += got != expected.tolist()
sys.exit(1 if wrong else 0)
