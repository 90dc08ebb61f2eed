# jax.device_put of a host numpy value holding a NaN onto a sharding over the devices of every
# process (multi-controller JAX) raises AssertionError "... passed to device_put is not the same on
# each process", though every process passes the same bits: device_put checks the value with
# multihost_utils.assert_equal, which compares with np.array_equal, where NaN != NaN.
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


mesh = Mesh(np.array(jax.devices()), ("a",))  # four devices, two per process
x = np.array([1.0, np.nan, 2.0, 3.0], np.float32)  # the same value on every process
try:
    y = jax.device_put(x, NamedSharding(mesh, P("a")))
except ValueError as e:  # (0.4.30: device_put onto other processes' devices is refused as unsupported)
    print(f"process {process}: device_put refused the sharding as documented, so the bug cannot show: "
          f"{str(e).splitlines()[0][:160]}")
    end(0)
except AssertionError as e:  # what JAX raises is the bug
    print(f"process {process}: device_put raised AssertionError: {str(e).splitlines()[0][:200]}")
    print(f"process {process}: expected its shards of {x.tolist()}")
    end(1)
got = {s.device.id: np.asarray(s.data).tolist() for s in y.addressable_shards}
print(f"process {process}: got shards {got}")
end(0)
