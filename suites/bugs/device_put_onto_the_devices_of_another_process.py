# jax.device_put of a host value onto a sharding whose devices all belong to process 0 of a
# two-process job (multi-controller JAX), called by both processes with the same value as JAX asks:
# process 0, which holds every device, places it; process 1, which holds none, runs device_put's
# check that every process passes the same value (multihost_utils.assert_equal), a collective that
# process 0 never joins, and fails after gloo's 30 s wait with XlaRuntimeError "Gloo context
# initialization failed: DEADLINE_EXCEEDED" (0.4.33-0.5.2; a hang on some runs). It should return an
# array of which process 1 holds no shard, as 0.5.3 and later do (shardings with no local devices:
# https://github.com/jax-ml/jax/pull/25972; meshes over a subset of processes are documented in
# https://github.com/jax-ml/jax/pull/34264).
# Run as is: it starts two processes of two CPU devices each (gloo), and exits 1 while the bug is
# there (a process failing, or not back from device_put within 60 s).
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
    try:
        sys.exit(max(p.wait(timeout=60) for p in copies))
    except subprocess.TimeoutExpired:
        for p in copies:
            p.kill()
        print("process 1 did not come back from device_put within 60 s (it waits in assert_equal's "
              "collective, which process 0 never enters); expected an array with no shard on process 1")
        sys.exit(1)

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

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


mesh = Mesh(np.array([d for d in jax.devices() if d.process_index == 0]), ("a",))  # process 0's 2 devices
x = np.arange(8, dtype=np.float32)  # the same value on every process
try:
    y = jax.device_put(x, NamedSharding(mesh, P("a")))
except ValueError as e:  # before 0.4.31, device_put of a host value across processes: not supported
    print(f"process {process}: refused, as documented before multi-controller device_put: {str(e)[:160]}")
    end(0)
print(f"process {process}: device_put returned, {len(y.addressable_shards)} shard(s) here", flush=True)
end(0)
