"""The bench's reference workload: a fixed amount of JAX work, run in the same sitting as the suites,
so that a run's time is stated as a ratio to it (machines differ twofold from day to day; ratios
hold across them).

    python -m reports.reference              the workload's seconds, as JSON (run by ``bench``)

240 small distinct programs on an (a=2, b=4) mesh of the run's devices: 6 operations x 4 input
layouts x 10 shapes, each jitted, compiled and run once, its result checked against numpy (so that
none is skipped), with no persistent compilation cache. Timed from the first program to the last
(JAX's import and backend start-up are not counted). It needs 8 devices: the bench runs it with 8
forced CPU devices, or on the devices present where they are 8 or more (the first 8).
"""

from __future__ import annotations

import json
import time

SHAPES = tuple((8 * r, 8 * c) for r, c in ((1, 1), (1, 2), (2, 1), (2, 2), (1, 3), (3, 1), (2, 3), (3, 2),
                                            (1, 4), (4, 1)))
LAYOUTS = (("a", "b"), ("b", "a"), (None, "a"), ("b", None))  # in; out: the two entries swapped


def _operations():
    import jax.numpy as jnp
    import numpy as np

    return {  # name: (the jitted function, numpy's, which result dimension is reduced to 1 or None)
        "affine": (lambda x: x * 2.0 + 1.0, lambda x: x * 2.0 + 1.0, None),
        "sin": (jnp.sin, np.sin, None),
        "sum rows": (lambda x: x.sum(axis=0, keepdims=True), lambda x: x.sum(axis=0, keepdims=True), 0),
        "sum columns": (lambda x: x.sum(axis=1, keepdims=True), lambda x: x.sum(axis=1, keepdims=True), 1),
        "max": (lambda x: x.max(axis=1, keepdims=True) - x, lambda x: x.max(axis=1, keepdims=True) - x, None),
        "gram": (lambda x: x @ x.T / 64.0, lambda x: x @ x.T / 64.0, None),
    }


OPERATIONS = ("affine", "sin", "sum rows", "sum columns", "max", "gram")
PROGRAMS = len(SHAPES) * len(LAYOUTS) * len(OPERATIONS)  # 240


def run() -> dict:
    """Compile and run the workload once: its seconds and program count (an AssertionError if a
    result differs from numpy's)."""
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    jax.config.update("jax_enable_compilation_cache", False)
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("a", "b"))
    started = time.monotonic()
    count = 0
    for name, (fn, reference, reduced) in _operations().items():
        for layout in LAYOUTS:
            out_layout = [layout[1], layout[0]]
            if reduced is not None:
                out_layout[reduced] = None
            into = NamedSharding(mesh, PartitionSpec(*layout))
            out = NamedSharding(mesh, PartitionSpec(*out_layout))
            for shape in SHAPES:
                x0 = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 7.0
                got = np.asarray(jax.jit(fn, in_shardings=into, out_shardings=out)(jax.device_put(x0, into)))
                np.testing.assert_allclose(got, reference(x0), rtol=1e-5, atol=1e-4, err_msg=name)
                count += 1
    return {"seconds": round(time.monotonic() - started, 3), "programs": count}


if __name__ == "__main__":
    print(json.dumps(run()))
