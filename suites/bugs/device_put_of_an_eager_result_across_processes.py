# jax.device_put of a global array (multi-controller JAX: two processes of two CPU devices each,
# the array cut over all four) onto another sharding of the same devices raises a bare
# AssertionError when the array is the result of an eager jnp.flip (its sharding a GSPMDSharding,
# not a NamedSharding): device_put's cross-process reshard (_different_device_order_reshard)
# asserts that the input's sharding is a NamedSharding. The same reshard of the array before the
# operation is accepted. It should return the value laid out as asked.
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


mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("a", "b"))  # four devices, two per process
x0 = np.arange(2, dtype=np.uint32)  # the same value on every process
x = jax.make_array_from_callback(x0.shape, NamedSharding(mesh, P("a")), lambda index: x0[index])
y = jax.numpy.flip(x, axis=0)  # an eager operation on the global array
print(f"process {process}: flip's result is laid out by a {type(y.sharding).__name__}", flush=True)
try:
    z = jax.device_put(y, NamedSharding(mesh, P()))
except AssertionError as e:  # what JAX raises is the bug
    print(f"process {process}: device_put of the flip onto P() raised AssertionError {str(e)!r}")
    print(f"process {process}: expected {x0[::-1].tolist()} replicated, as device_put(x, P()) gives {x0.tolist()}")
    end(1)
got = {s.device.id: np.asarray(s.data).tolist() for s in z.addressable_shards}
print(f"process {process}: got shards {got}")
end(0 if all(v == x0[::-1].tolist() for v in got.values()) else 1)
