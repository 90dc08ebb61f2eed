# jnp.from_dlpack(x, copy=True) of a numpy array x whose buffer is 64-byte aligned returns a
# jax.Array that shares x's memory: its buffer pointer is x's, and writing x afterwards (x[...] = -7)
# changes the JAX array's values. jnp.from_dlpack's docstring: "copy: An optional boolean, controlling
# whether or not a copy is performed. If copy=True then a copy is always performed, even if unpacked
# onto the same device." So the result should keep x's values as they were at the call. (From 0.8.1
# jax/_src/dlpack.py leaves the copy to jaxlib's dlpack_managed_tensor_to_buffer, "copy was already
# handled by dlpack_managed_tensor_to_buffer", and then drops it; on CPU jaxlib aliases an aligned
# buffer. A buffer that is not aligned to what XLA needs is always copied, so the script aligns its
# buffer itself to be deterministic: numpy's own allocations are only sometimes 64-byte aligned.)
# Exits 0 on a release whose from_dlpack has no copy parameter: no bug to measure.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import inspect
import sys

import jax.numpy as jnp
import numpy as np

if "copy" not in inspect.signature(jnp.from_dlpack).parameters:
    print("jnp.from_dlpack takes no copy on this release: nothing to measure")
    sys.exit(0)


def aligned(a, alignment=64):
    """A copy of ``a`` in a buffer whose address is a multiple of ``alignment``."""
    buffer = np.empty(a.nbytes + alignment, np.uint8)
    start = (-buffer.ctypes.data) % alignment
    out = buffer[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


wrong = 0
for trial in range(5):
    x = aligned(np.arange(16, dtype=np.int32).reshape(4, 4) + trial)
    expected = x.copy()
    y = jnp.from_dlpack(x, copy=True)
    shared = y.addressable_data(0).unsafe_buffer_pointer() == x.ctypes.data
    x[...] = -7
    got = np.asarray(y)
    print(f"trial {trial}: buffer shared with the numpy source: {shared}\n"
          f"  got:      {got.ravel()[:4].tolist()}\n  expected: {expected.ravel()[:4].tolist()}")
    wrong += shared or not np.array_equal(got, expected)
sys.exit(1 if wrong else 0)
