"""Does this JAX serve CPU programs from its persistent compilation cache? Five jitted programs and a
pmap compiled in one process, served in the next; exit 1 if not all six are served right. A
measuring script for the releases (not collected by pytest): python -m conformance.runner.release_envs
run tests/probes/cache_serves_programs_across_processes.py. Measured 2026-12-05: every release serves
the jitted ones; 0.8.0-0.10.1 compile the pmap again (its key differs from one process to the next)."""
import os
import subprocess
import sys
import tempfile

# What every measuring child runs first: 8 CPU devices, the cache in the folder given as its argument,
# kept for every program, its hits counted in `hits`, and an (a=2, b=4) mesh.
PRELUDE = (r'''
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
jax.config.update("jax_compilation_cache_dir", sys.argv[1])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
hits = []
jax.monitoring.register_event_listener('''
           r'''lambda e, **k: hits.append(e) if e == "/jax/compilation_cache/cache_hits" else None)
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("a", "b"))
''')

PROGRAMS = r'''
for i in range(5):
    f = jax.jit(lambda x, i=i: (x * i + jnp.sin(x)).sum(0), out_shardings=NamedSharding(mesh, P("b")))
    x = jax.device_put(np.full((8, 8), i, np.float32), NamedSharding(mesh, P("a", "b")))
    got = np.asarray(f(x)); want = (np.full((8, 8), i * i, np.float32) + np.sin(np.full((8, 8), i, np.float32))).sum(0)
    assert np.allclose(got, want, rtol=1e-5), (i, got, want)
g = jax.pmap(lambda x: x * 2)
assert np.allclose(np.asarray(g(np.arange(8.0, dtype=np.float32))), np.arange(8.0) * 2)
print(len(hits))
'''


def twice(program: str):
    """``PRELUDE + program`` run in two fresh processes on one new cache folder: the last line each
    printed, and how many files the folder then holds; exit status 1 (with the child's error) if a
    child fails."""
    with tempfile.TemporaryDirectory() as d:
        runs = [subprocess.run([sys.executable, "-c", PRELUDE + program, d], capture_output=True, text=True)
                for _ in range(2)]
        for r in runs:
            if r.returncode:
                print("child failed:", r.stderr[-800:])
                sys.exit(1)
        return [r.stdout.strip().splitlines()[-1] for r in runs], len(os.listdir(d))


if __name__ == "__main__":
    lines, entries = twice(PROGRAMS)
    hits = [int(line.split()[-1]) for line in lines]
    import jax
    print(jax.__version__, "hits cold/warm:", hits, "entries:", entries)
    sys.exit(0 if hits == [0, 6] else 1)
