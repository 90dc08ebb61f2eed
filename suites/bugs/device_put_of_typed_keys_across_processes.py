# jax.device_put of an uncommitted typed PRNG key array (jax.random.wrap_key_data of host data, the
# same on every process) onto a sharding over the devices of every process (multi-controller JAX)
# raises ValueError "device_put's second argument must be a Device or a Sharding which represents
# addressable devices", where the same call with an uncommitted jax.Array of the key data (or a numpy
# array) is accepted: device_put's multi-controller path takes only ArrayImpl and numpy/Python values
# as host values, and a key array is neither. make_array_from_callback builds the same sharded keys.
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
sharding = NamedSharding(mesh, P("a"))
data = np.arange(8, dtype=np.uint32).reshape(4, 2)  # four keys, the same on every process
try:
    jax.device_put(jax.numpy.asarray(data), sharding)
except ValueError as e:  # (0.4.30: device_put onto other processes' devices is refused as unsupported)
    print(f"process {process}: device_put refuses every host value here, so the bug cannot show: "
          f"{str(e).splitlines()[0][:160]}")
    end(0)
keys = jax.random.wrap_key_data(data)
try:
    placed = jax.device_put(keys, sharding)
except ValueError as e:  # what JAX raises is the bug
    first_line = str(e).splitlines()[0][:200]
    print(f"process {process}: device_put of the uncommitted key array raised ValueError: {first_line}")
    print(f"process {process}: expected it placed as device_put places jnp.asarray(data) (accepted)")
    end(1)
got = {s.device.id: np.asarray(jax.random.key_data(s.data)).tolist() for s in placed.addressable_shards}
print(f"process {process}: got key data shards {got}")
end(0)
