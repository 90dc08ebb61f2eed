"""A grouped convolution (lax.conv_general_dilated with feature_group_count=2, as
lax.conv_general_dilated_local and depthwise convolutions emit) whose kernel is cut on its output-feature
dimension over mesh axis 'a' of a (2, 2) mesh (so replicated over 'b'), jitted into a replicated
output: XLA's SPMD partitioner corrupts the heap while compiling (glibc "free(): invalid pointer" in
hlo_sharding_util::InferDotOperandSharding, reached from PartitionConv -> PartitionDotGroupOnBatchImpl)
and the process dies with SIGABRT. It should return x * w per feature group, as it does unsharded. The
sharded call runs in a child process; exits 1 while the child dies or differs, 0 once it returns numpy's
answer."""
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
mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("a", "b"))
x = np.array([1.0, 2.0], np.float32).reshape(1, 2, 1)   # [batch, feature, width]
w = np.array([3.0, 4.0], np.float32).reshape(2, 1, 1)   # [out feature, in feature per group, width]
f = lambda x, w: lax.conv_general_dilated(x, w, (1,), [(0, 0)], feature_group_count=2)
expected = (x.ravel() * w.ravel()).reshape(1, 2, 1)     # each group: one feature times its 1x1 kernel
print("unsharded:", np.asarray(f(x, w)).ravel(), "numpy:", expected.ravel(), flush=True)
g = jax.jit(f, in_shardings=(NamedSharding(mesh, P()), NamedSharding(mesh, P("a"))),
            out_shardings=NamedSharding(mesh, P()))
got = np.asarray(g(x, w))
print("sharded:  ", got.ravel(), flush=True)
raise SystemExit(0 if np.array_equal(got, expected) else 1)
'''

if __name__ == "__main__":
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
    print(r.stdout, end="")
    if r.returncode < 0:
        lines = [l for l in r.stderr.splitlines() if "Check failed" in l or "free()" in l or "corrupt" in l]
        print("sharded compile killed the process: signal", -r.returncode, lines or r.stderr[-400:])
        sys.exit(1)
    if r.returncode:
        print("child exited", r.returncode, r.stderr[-600:])
        sys.exit(1)
    print("fixed: the sharded call returned numpy's answer")
