"""lax.slice of x int32[2, 2, 4] laid out P('b', None, 'a') on an Auto (a=4, b=2) mesh, start (0, 0, 1),
limit (1, 1, 2), strides (1, 1, 3): a one-element slice. Eagerly (and under jit) XLA's SPMD
partitioner emits an ill-shaped slice and the HLO verifier aborts the compile (JaxRuntimeError
INTERNAL "Expected instruction to have shape equal to s32[2,1,2], actual shape is s32[1,1,1]");
unsharded it returns [[[1]]]. Exits 1 while so."""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"
import numpy as np
import jax
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("a", "b"))
x = np.arange(16, dtype=np.int32).reshape(2, 2, 4)
f = lambda v: lax.slice(v, (0, 0, 1), (1, 1, 2), (1, 1, 3))
expected = x[0:1, 0:1, 1:2:3]
print("unsharded:", np.asarray(f(x)).tolist(), "expected:", expected.tolist())
sharded = jax.device_put(x, NamedSharding(mesh, P("b", None, "a")))
failed = False
for way, call in (("eager", lambda: f(sharded)), ("jit", lambda: jax.jit(f)(sharded))):
    try:
        got = np.asarray(call())
        print(f"{way}: got {got.tolist()}")
        failed |= not np.array_equal(got, expected)
    except Exception as e:
        print(f"{way} raised {type(e).__name__}: {str(e).splitlines()[0][:300]}")
        failed = True
raise SystemExit(1 if failed else 0)
