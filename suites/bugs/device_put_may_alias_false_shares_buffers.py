# jax.device_put(x, s, may_alias=False), where x is already committed to the sharding s (eight CPU
# devices, P('a')), returns a new jax.Array whose eight device buffers are x's own buffers
# (unsafe_buffer_pointer() equal on every shard): no copy is made. device_put's docstring: "may_alias:
# bool or None ... If False, `x` will be copied. If true, `x` may be aliased depending on the runtime's
# implementation." and "Returns: A copy of ``x`` that resides on ``device``." So with may_alias=False
# none of the result's buffers should be x's. (jaxlib's BatchedCopyToDeviceWithSharding reused the
# input whenever the source and destination devices and memory kinds matched, whatever the copy
# semantics; from 0.6.0 it reuses it only for ArrayCopySemantics.kReuseInput.) The "copy" is not
# independent of x: after x.delete(), reading it raises RuntimeError: Array has been deleted. On a
# release whose device_put has no may_alias the bug is not there.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import inspect
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

if "may_alias" not in inspect.signature(jax.device_put).parameters:
    print("this JAX: jax.device_put has no may_alias parameter (the bug is not there)")
    sys.exit(0)

mesh = Mesh(np.array(jax.devices()[:8]), ("a",))
s = NamedSharding(mesh, P("a"))
x = jax.device_put(np.arange(16, dtype=np.float32).reshape(8, 2), s)
out = jax.device_put(x, s, may_alias=False)
buffers = lambda a: {sh.data.unsafe_buffer_pointer() for sh in a.addressable_shards}
shared = len(buffers(out) & buffers(x))
values_right = np.asarray(out).tolist() == np.asarray(x).tolist()
x.delete()
try:
    after = np.asarray(out).tolist() == np.arange(16, dtype=np.float32).reshape(8, 2).tolist()
except Exception as e:
    after = f"{type(e).__name__}: {e}"
print("expected: the result is x: False | buffers shared with x: 0 of 8 | values right: True"
      " | readable after x.delete(): True (a copy)")
print(f"got:      the result is x: {out is x} | buffers shared with x: {shared} of 8 | values right: {values_right}"
      f" | readable after x.delete(): {after}")
sys.exit(1 if out is x or shared or not values_right or after is not True else 0)
