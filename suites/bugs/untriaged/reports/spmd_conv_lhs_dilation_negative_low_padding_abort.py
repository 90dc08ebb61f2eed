"""lax.conv_with_general_padding (conv_general_dilated) with lhs_dilation=2 and low padding -1, so the
padded input starts on a hole of the dilation, its lhs f32[1, 1, 2] cut along that spatial dimension
over 2 devices: XLA's SPMD partitioner aborts the process (spmd_partitioner.cc "Check failed:
get_first_valid_element_offset_on_dilated_shard(0) == swd->padding_low() (1 vs. -1)", in
PartitionedHlo::ReshardAsWindowedInput, the same CHECK as lax.pad with interior padding and a negative
low edge). It should return [0, 2] (x = [1, 2] dilated to [1, 0, 2], its first element cropped, times
a 1-wide kernel of ones), as it does unsharded. The sharded call runs in a child process; exits 1
while it dies or differs."""
import subprocess
import sys

CHILD = r'''
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np
import jax
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
x = np.array([1.0, 2.0], np.float32).reshape(1, 1, 2)
k = np.ones((1, 1, 1), np.float32)
f = lambda x, k: lax.conv_with_general_padding(x, k, (1,), ((-1, 0),), (2,), (1,))
expected = np.array([0.0, 2.0], np.float32).reshape(1, 1, 2)  # [1, 0, 2] without its first element
print("unsharded:", np.asarray(f(x, k)).ravel(), "numpy:", expected.ravel(), flush=True)
mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
got = np.asarray(jax.jit(f)(jax.device_put(x, NamedSharding(mesh, P(None, None, "a"))), k))
print("sharded:  ", got.ravel(), flush=True)
raise SystemExit(0 if np.array_equal(got, expected) else 1)
'''

if __name__ == "__main__":
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
    print(r.stdout, end="")
    if r.returncode < 0:
        failed = [line.split("] ", 1)[-1] for line in r.stderr.splitlines() if "Check failed" in line]
        print("sharded compile killed the process: signal", -r.returncode, failed or r.stderr[-400:])
        sys.exit(1)
    if r.returncode:
        print("child exited", r.returncode, r.stderr[-600:])
        sys.exit(1)
    print("fixed: the sharded call returned numpy's answer")
