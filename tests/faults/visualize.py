"""visualize_array_sharding's picture."""

import contextlib
import io
import re

from .registry import fault, jax_module, wrap


def replacing_visualize(replace):
    """Like ``registry.replacing``, for visualize_array_sharding: replaced where JAX defines it and
    where the suites call it (``jax.debug``)."""
    def plant():
        from jax._src import debugging
        wrap(debugging, "visualize_array_sharding", replace)
        jax_module().debug.visualize_array_sharding = debugging.visualize_array_sharding
    return plant


@fault("visualize-shifted-labels", "visualize_array_sharding labels each cell with the next device id",
       suites=("visualize",))
@replacing_visualize
def visualize_shifted_labels(original):
    def visualize_array_sharding(arr, **kwargs):
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            original(arr, **kwargs)
        shifted = re.sub(r"(?<=[A-Z] )(\d+)", lambda m: str(int(m[1]) + 1), buffer.getvalue())
        print(shifted, end="")
    return visualize_array_sharding


@fault("visualize-accepts-any-rank", "visualize_array_sharding prints nothing for 0-d and 3-d arrays",
       suites=("visualize",))
@replacing_visualize
def visualize_accepts_any_rank(original):
    def visualize_array_sharding(arr, **kwargs):
        if arr.ndim in (1, 2):
            return original(arr, **kwargs)
        print("")
    return visualize_array_sharding
