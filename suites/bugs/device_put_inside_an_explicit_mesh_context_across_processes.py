# jax.device_put of a host value onto a sharding over the devices of every process (multi-controller
# JAX), inside the context of an Explicit mesh (jax.sharding.use_mesh / jax.set_mesh, which JAX asks
# for around Explicit-axis computations), raises ValueError "For primitive reduce_sum, context mesh
# AbstractMesh('a': 4, axis_types=(Explicit,)) should match the aval mesh AbstractMesh('processes': 2,
# 'local_devices': 2, ...)": device_put checks that every process passes the same value with
# multihost_utils.assert_equal, whose own computation (over a mesh of its own) runs under the user's
# context mesh. Outside the context the same call is accepted.
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
from jax.sharding import NamedSharding, PartitionSpec as P

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


AxisType = getattr(jax.sharding, "AxisType", None)
enter = getattr(jax, "set_mesh", None) or getattr(jax.sharding, "use_mesh", None)
if AxisType is None or enter is None:
    print(f"process {process}: this JAX has no Explicit mesh axes or no mesh context: the bug cannot show")
    end(0)
try:
    mesh = jax.make_mesh((4,), ("a",), axis_types=(AxisType.Explicit,), devices=jax.devices())
except TypeError:
    mesh = jax.make_mesh((4,), ("a",), axis_types=(AxisType.Explicit,))
x = np.arange(8, dtype=np.float32)  # the same value on every process
try:
    with enter(mesh):
        y = jax.device_put(x, NamedSharding(mesh, P("a")))
except ValueError as e:
    print(f"process {process}: device_put inside the mesh context raised ValueError: {str(e).splitlines()[0][:240]}")
    print(f"process {process}: expected its shards of {x.tolist()}, as outside the context")
    end(1)
got = {s.device.id: np.asarray(s.data).tolist() for s in y.addressable_shards}
print(f"process {process}: got shards {got}")
end(0)
