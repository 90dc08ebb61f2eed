"""lax.conv_with_general_padding (conv_general_dilated) with lhs_dilation=2 and a negative low padding,
its lhs cut along that spatial dimension over 2 devices (Auto mesh): XLA's SPMD partitioner aborts the
process (spmd_partitioner.cc "Check failed: get_first_valid_element_offset_on_dilated_shard(0) ==
swd->padding_low()"). Unsharded, the same call returns numpy's answer. The sharded call runs in a
child process (the abort kills it); exits 1 while the abort is there."""
import subprocess
import sys

CHILD = r'''
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import numpy as np
import jax
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
x = np.arange(8, dtype=np.float32).reshape(1, 1, 8)
k = np.ones((1, 1, 1), np.float32)
f = lambda x, k: lax.conv_with_general_padding(x, k, (1,), ((-1, 0),), (2,), (1,))
unsharded = np.asarray(f(x, k))
# numpy: x dilated by 2 (zeros between), the first element cropped (low padding -1), a 1-wide kernel of ones
dilated = np.zeros(15, np.float32); dilated[::2] = x[0, 0]
expected = dilated[1:].reshape(1, 1, 14)
print("unsharded equals numpy:", np.array_equal(unsharded, expected), flush=True)
mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
xs = jax.device_put(x, NamedSharding(mesh, P(None, None, "a")))
got = np.asarray(jax.jit(f)(xs, k))
print("sharded got", got.ravel(), "expected", expected.ravel())
sys_exit = 0 if np.array_equal(got, expected) else 1
raise SystemExit(sys_exit)
'''

if __name__ == "__main__":
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
    print(r.stdout)
    if r.returncode:
        failed = [line for line in r.stderr.splitlines() if "Check failed" in line]
        print("sharded run died with return code", r.returncode, ":", failed or r.stderr[-600:])
        sys.exit(1)
    print("fixed: the sharded call returned numpy's answer")
