"""Does this JAX serve a program with a donated input right from its persistent compilation cache
(CPU, 8 devices)? Exit 1 if the served program's result differs from numpy's. A measuring script
for the releases (not collected by pytest): python -m conformance.runner.release_envs run
tests/probes/cache_serves_a_donated_program.py. Measured 2026-12-05: wrong on 0.4.30-0.4.35
(compat.PERSISTENT_CACHE_ON_CPU)."""
import os, subprocess, sys, tempfile
CHILD = r'''
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
jax.config.update("jax_compilation_cache_dir", sys.argv[1])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
hits = []
jax.monitoring.register_event_listener(lambda e, **k: hits.append(e) if e == "/jax/compilation_cache/cache_hits" else None)
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("a", "b"))
x0 = np.arange(4, dtype=np.uint32).reshape(2, 2)
f = jax.jit(lambda x: -jnp.sum(x, axis=0, keepdims=True), in_shardings=NamedSharding(mesh, P("a")),
            out_shardings=NamedSharding(mesh, P()), donate_argnums=0)
got = np.asarray(f(jax.device_put(x0, NamedSharding(mesh, P("a")))))
want = -x0.sum(axis=0, keepdims=True, dtype=np.uint32)
print(len(hits), got.tolist(), want.tolist(), int(np.array_equal(got, want)))
'''
with tempfile.TemporaryDirectory() as d:
    runs = [subprocess.run([sys.executable, "-c", CHILD, d], capture_output=True, text=True) for _ in range(2)]
    for r in runs:
        if r.returncode:
            print("child failed:", r.stderr[-600:]); sys.exit(1)
    lines = [r.stdout.strip().splitlines()[-1] for r in runs]
    import jax
    print(jax.__version__, "| compiled:", lines[0], "| served:", lines[1])
    sys.exit(0 if all(l.endswith(" 1") for l in lines) and lines[1].startswith(("1 ", "2 ")) else 1)
