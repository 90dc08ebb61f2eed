"""Does this JAX serve a program with a donated input right from its persistent compilation cache
(CPU, 8 devices)? Exit 1 if the served program's result differs from numpy's. A measuring script
for the releases (not collected by pytest): python -m conformance.runner.release_envs run
tests/probes/cache_serves_a_donated_program.py. Measured 2026-12-05: wrong on 0.4.30-0.4.35
(compat.PERSISTENT_CACHE_ON_CPU)."""
import sys

from cache_serves_programs_across_processes import twice  # (beside this script: its folder is on sys.path)

PROGRAM = r'''
x0 = np.arange(4, dtype=np.uint32).reshape(2, 2)
f = jax.jit(lambda x: -jnp.sum(x, axis=0, keepdims=True), in_shardings=NamedSharding(mesh, P("a")),
            out_shardings=NamedSharding(mesh, P()), donate_argnums=0)
got = np.asarray(f(jax.device_put(x0, NamedSharding(mesh, P("a")))))
want = -x0.sum(axis=0, keepdims=True, dtype=np.uint32)
print(len(hits), got.tolist(), want.tolist(), int(np.array_equal(got, want)))
'''

if __name__ == "__main__":
    lines, _ = twice(PROGRAM)
    import jax
    print(jax.__version__, "| compiled:", lines[0], "| served:", lines[1])
    sys.exit(0 if all(line.endswith(" 1") for line in lines) and lines[1].startswith(("1 ", "2 ")) else 1)
