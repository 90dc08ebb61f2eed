"""Run only by tests/test_compilation_cache.py, in a subprocess: two programs jitted over a mesh of
the run's devices and checked against numpy, x * $PROBE_FACTOR and one that donates its input (which
some releases' caches serve wrongly: the runner must not use the cache there); the log says how many
programs the persistent compilation cache served in this process. Not collected by `pytest tests/`.

$PROBE_STALE_KEY=1 plants a fault in the cache: every program gets one key, so a changed program is
served the executable of the one compiled before it (stale).
"""

import os

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from conformance.runner import state

if os.environ.get("PROBE_STALE_KEY"):
    from jax._src import compilation_cache

    compilation_cache.get_cache_key = lambda *args, **kwargs: "one-key-for-every-program"


def test_the_program_asked_for_runs(request):
    """x * factor over the devices gives numpy's x * factor, whatever the cache holds."""
    factor = float(os.environ["PROBE_FACTOR"])
    mesh = Mesh(np.array(jax.devices()), ("a",))
    sharding = NamedSharding(mesh, PartitionSpec("a"))
    x0 = np.arange(2.0 * len(jax.devices()), dtype=np.float32)
    got = np.asarray(jax.jit(lambda x: x * factor)(jax.device_put(x0, sharding)))
    ledger = request.config.stash[state.COMPILES]
    with open(os.environ["PROBE_LOG"], "a") as log:
        log.write(f"factor {factor} served {ledger.served}\n")
    np.testing.assert_array_equal(got, x0 * factor,
                                  err_msg=f"jit(lambda x: x * {factor}) [got, but should be x0 * {factor}]")


def test_a_donated_program_asked_for_runs(request):
    """-sum(x, axis=0) of a donated x split over the devices gives numpy's, whatever the cache holds."""
    import jax.numpy as jnp

    mesh = Mesh(np.array(jax.devices()), ("a",))
    sharding = NamedSharding(mesh, PartitionSpec("a"))
    x0 = np.arange(2 * len(jax.devices()), dtype=np.uint32).reshape(len(jax.devices()), 2)
    expected = -x0.sum(axis=0, keepdims=True, dtype=np.uint32)
    before = request.config.stash[state.COMPILES].served
    f = jax.jit(lambda x: -jnp.sum(x, axis=0, keepdims=True), in_shardings=sharding,
                out_shardings=NamedSharding(mesh, PartitionSpec()), donate_argnums=0)
    got = np.asarray(f(jax.device_put(x0.copy(), sharding)))
    with open(os.environ["PROBE_LOG"], "a") as log:
        log.write(f"donated served {request.config.stash[state.COMPILES].served - before}\n")
    np.testing.assert_array_equal(got, expected, err_msg="jit(-sum(x, axis=0), donate_argnums=0) [got, but should be]")
