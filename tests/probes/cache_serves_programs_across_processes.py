"""Does this JAX serve CPU programs from its persistent compilation cache? Five jitted programs and a
pmap compiled in one process, served in the next; exit 1 if not all six are served right. A
measuring script for the releases (not collected by pytest): python -m conformance.runner.release_envs
run tests/probes/cache_serves_programs_across_processes.py. Measured 2026-12-05: every release serves
the jitted ones; 0.8.0-0.10.1 compile the pmap again (its key differs from one process to the next)."""
import os, subprocess, sys, tempfile
CHILD = r'''
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
jax.config.update("jax_compilation_cache_dir", sys.argv[1])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
hits = []
jax.monitoring.register_event_listener(lambda e, **k: hits.append(e) if e == "/jax/compilation_cache/cache_hits" else None)
mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(2, 4), ("a", "b"))
for i in range(5):
    f = jax.jit(lambda x, i=i: (x * i + jnp.sin(x)).sum(0), out_shardings=NamedSharding(mesh, P("b")))
    x = jax.device_put(np.full((8, 8), i, np.float32), NamedSharding(mesh, P("a", "b")))
    got = np.asarray(f(x)); want = (np.full((8, 8), i * i, np.float32) + np.sin(np.full((8, 8), i, np.float32))).sum(0)
    assert np.allclose(got, want, rtol=1e-5), (i, got, want)
g = jax.pmap(lambda x: x * 2)
assert np.allclose(np.asarray(g(np.arange(8.0, dtype=np.float32))), np.arange(8.0) * 2)
print(len(hits))
'''
with tempfile.TemporaryDirectory() as d:
    out = [subprocess.run([sys.executable, "-c", CHILD, d], capture_output=True, text=True) for _ in range(2)]
    for o in out:
        if o.returncode:
            print("child failed:", o.stderr[-800:]); sys.exit(1)
    hits = [int(o.stdout.split()[-1]) for o in out]
    import jax
    print(jax.__version__, "hits cold/warm:", hits, "entries:", len(os.listdir(d)))
    sys.exit(0 if hits == [0, 6] else 1)
