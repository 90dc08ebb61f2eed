"""lax.fft on an Explicit mesh with an FFT dimension cut: fft_p has no sharding rule and its abstract
evaluation keeps the operand's sharding (jax/_src/lax/fft.py fft_abstract_eval: ``x.update(shape=shape,
dtype=dtype)``), so the program asks XLA for an FFT over a cut dimension and the compile aborts the
process (or, where it survives, must equal numpy). The call runs in a child process; exits 1 while it
dies or differs."""
import subprocess
import sys

CHILD = r'''
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys
import numpy as np
import jax
from jax import lax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ("y",), axis_types=(AxisType.Explicit,))
x = (np.arange(3 * 6 * 8) % 7 + 1j * (np.arange(3 * 6 * 8) % 5)).astype(np.complex64).reshape(3, 6, 8)
expected = np.fft.fftn(x, axes=(1, 2))
print("unsharded close to numpy:", np.allclose(np.asarray(lax.fft(x, "FFT", (6, 8))), expected, atol=1e-3), flush=True)
with jax.set_mesh(mesh):
    xs = jax.device_put(x, NamedSharding(mesh, P(None, None, "y")))
    got = np.asarray(jax.jit(lambda v: lax.fft(v, "FFT", (6, 8)))(xs))
print("sharded close to numpy:", np.allclose(got, expected, atol=1e-3))
sys.exit(0 if np.allclose(got, expected, atol=1e-3) else 1)
'''

if __name__ == "__main__":
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
    print(r.stdout)
    if r.returncode:
        failed = [line for line in r.stderr.splitlines() if "Check failed" in line or "Error" in line]
        print("sharded run failed with return code", r.returncode, ":", failed[:3] or r.stderr[-600:])
        sys.exit(1)
    print("fixed")
