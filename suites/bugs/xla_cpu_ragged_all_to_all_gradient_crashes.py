# On CPU, jax.jit of a shard_map body over 4 devices taking jax.grad of a loss of
# lax.ragged_all_to_all (each device sending one value to each) kills the process while XLA compiles
# it (SIGABRT on 0.7.1, SIGSEGV on 0.7.2), where XLA:CPU's answer to a program holding
# ragged-all-to-all is an error, UNIMPLEMENTED "HLO opcode `ragged-all-to-all` is not supported by
# XLA:CPU" (0.5.3-0.7.0 and from 0.8.0, for this gradient and for the call alone). The heap is
# corrupted ("double free or corruption"), so a try may end well: five tries, each in a subprocess;
# exit 1 while the compilation kills the process in any of them.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"  # (the children force their own 4)
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import inspect
import subprocess
import sys

import jax.lax

CHILD = r'''
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import jax, jax.numpy as jnp, numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec as P
if hasattr(jax, "shard_map"):
    shard_map, check = jax.shard_map, {"check_vma": False}
else:
    from jax.experimental.shard_map import shard_map
    check = {"check_rep": False}
n = 4
mesh = Mesh(np.array(jax.devices()[:n]), ("a",))
def loss(y):
    i = lax.axis_index("a")
    r = lax.ragged_all_to_all(y, jnp.zeros(n, y.dtype), jnp.arange(n, dtype=jnp.int32), jnp.ones(n, jnp.int32),
                              jnp.full(n, i, jnp.int32), jnp.ones(n, jnp.int32), axis_name="a")
    return jnp.sum(r ** 2) * (i + 1)
f = jax.jit(shard_map(lambda b: jax.grad(loss)(b[0])[None], mesh=mesh, in_specs=P("a"), out_specs=P("a"), **check))
try:
    print("computed", np.asarray(f(np.arange(16, dtype=np.float32).reshape(4, 4))).tolist())
except Exception as e:
    print("raised", type(e).__name__, " ".join(str(e).split())[:200])
'''
if not hasattr(jax.lax, "ragged_all_to_all") or \
        "axis_name" not in inspect.signature(jax.lax.ragged_all_to_all).parameters:
    print("lax.ragged_all_to_all(axis_name=) does not exist in this release: the bug is not here")
    sys.exit(0)
statuses = []
for _ in range(5):
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=dict(os.environ))
    statuses.append(done.returncode)
    print("exit status:", done.returncode, "|", done.stdout.strip()[-200:], "|", done.stderr.strip()[-120:])
print(f"got:      exit statuses {statuses}\nexpected: exit statuses [0, 0, 0, 0, 0] (an error raised, or the gradient "
      "computed)")
sys.exit(0 if statuses == [0] * 5 else 1)
