"""lax.fft (type FFT, length 2) of x complex64[1, 1, 2] cut along its last (transformed) dimension over
2 devices, jitted: XLA's SPMD partitioner (HandleFft's distributed FFT, taken for rank >= 3 forward
FFTs tiled on the last dimension over all partitions) aborts the process (fft_handler.cc "Check failed:
size_per_partition % num_partitions == 0 (1 vs. 0)") when it cannot pad the 1-element shards by halo
exchange. It should return numpy's np.fft.fft(x) = [[[3, -1]]], as it does unsharded. The sharded call
runs in a child process; exits 1 while it dies or differs."""
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
x = np.array([1, 2], np.complex64).reshape(1, 1, 2)
expected = np.fft.fft(x, axis=-1)
f = lambda v: lax.fft(v, "FFT", (2,))
print("unsharded:", np.asarray(f(x)).ravel(), "numpy:", expected.ravel(), flush=True)
mesh = Mesh(np.array(jax.devices()[:2]), ("a",))
got = np.asarray(jax.jit(f)(jax.device_put(x, NamedSharding(mesh, P(None, None, "a")))))
print("sharded:  ", got.ravel(), flush=True)
raise SystemExit(0 if np.allclose(got, expected, atol=1e-5) else 1)
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
