"""Run only by tests/test_compilation_cache.py, in a subprocess: one program, x * $PROBE_FACTOR,
jitted over a mesh of the run's devices and checked against numpy; the log says how many programs
the persistent compilation cache served in this process. Not collected by `pytest tests/`.

$PROBE_STALE_KEY=1 plants a fault in the cache: every program gets one key, so a changed program is
served the executable of the one compiled before it (stale).
"""

import os

import jax
import numpy as np
import pytest
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
