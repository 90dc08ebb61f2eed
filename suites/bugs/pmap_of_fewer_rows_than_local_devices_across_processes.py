# jax.pmap without devices= over fewer rows than this process's devices, in a job of several processes
# (multi-controller JAX), raises an internal error, and a different one on each process (an empty
# AssertionError on process 0, numpy's "zero-size array to reduction operation minimum which has no
# identity" ValueError on process 1), where one process runs the same call on its first device, and
# pmap's documentation says the mapped axis may be smaller than the device count (the first devices
# are used) and, for several processes, that each passes its local rows. Either the call runs, or it
# is refused with one clear message on every process; an internal error is the bug.
# Run as is: it starts two processes of two CPU devices each (gloo), and exits 1 while the bug is there.
import os
import socket
import subprocess
import sys

if "REPRO_PROCESS" not in os.environ:  # the launcher: two copies of this script, one JAX job
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    copies = [subprocess.Popen([sys.executable, __file__], env=dict(
        os.environ, REPRO_PROCESS=str(i), REPRO_PORT=str(port), JAX_PLATFORMS="cpu",
        JAX_NUM_CPU_DEVICES="2", XLA_FLAGS="--xla_force_host_platform_device_count=2")) for i in range(2)]
    sys.exit(max(p.wait(timeout=300) for p in copies))

import jax
import numpy as np

for option, value in (("jax_cpu_collectives_implementation", "gloo"), ("jax_enable_empty_arrays", True)):
    try:
        jax.config.update(option, value)
    except (AttributeError, ValueError, KeyError):
        pass
process = int(os.environ["REPRO_PROCESS"])
jax.distributed.initialize(f"127.0.0.1:{os.environ['REPRO_PORT']}", 2, process)


def end(code: int):
    """Leave the JAX job together (a copy that leaves first can crash the other's runtime), then exit."""
    sys.stdout.flush()
    try:
        jax.distributed.shutdown()
    finally:
        os._exit(code)


x = np.full((1, 3), process + 1.0, np.float32)  # one row on each process, which has two devices
try:
    got = jax.pmap(lambda v: v * 2)(x)
except (AssertionError, IndexError, KeyError, TypeError) as e:  # JAX's bookkeeping failing: the bug
    print(f"process {process}: pmap raised {type(e).__name__}: {str(e)[:200]!r}")
    print(f"process {process}: expected {(x * 2).tolist()}, or a refusal naming the row count")
    end(1)
except ValueError as e:
    message = str(e).splitlines()[0][:200]
    internal = "zero-size array" in message or "reduction operation" in message
    print(f"process {process}: pmap raised ValueError {message!r}" + (" (numpy's, not a refusal)" if internal else ""))
    end(1 if internal else 0)
print(f"process {process}: got {np.asarray(got).tolist()}")
end(0)
