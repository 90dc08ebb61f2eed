"""Strategies for device meshes: shapes from factorizations of the device count, distinct axis
names, and sub-meshes over a subset of the devices.

Device ids default to the devices this process addresses, looked up when the strategy draws, so
the same strategy adapts to 8 forced CPU devices, 1 GPU or a TPU slice.
"""

from __future__ import annotations

import functools
from typing import Optional, Sequence, Tuple

from hypothesis import strategies as st

from conformance.model import MeshModel

# A small, fixed pool keeps the number of distinct meshes (and so of compiled programs) small.
AXIS_NAME_POOL = ("a", "b", "x", "y")


def resolve_device_ids(device_ids: Optional[Sequence[int]]) -> Tuple[int, ...]:
    """``device_ids`` as a tuple, or the live devices' ids when it is None."""
    if device_ids is None:
        from conformance.jaxbridge import live_device_ids
        return live_device_ids()
    return tuple(device_ids)


@functools.lru_cache(maxsize=None)
def factorizations(n: int, min_axes: int = 1, max_axes: int = 4) -> Tuple[Tuple[int, ...], ...]:
    """Every ordered tuple of ``min_axes``..``max_axes`` positive integers whose product is ``n``
    (size-1 axes included), fewest axes first."""
    def ordered(n, k):
        if k == 0:
            return [()] if n == 1 else []
        return [(d,) + rest for d in range(n, 0, -1) if n % d == 0 for rest in ordered(n // d, k - 1)]
    return tuple(shape for k in range(min_axes, max_axes + 1) for shape in ordered(n, k))


def mesh_shapes(n_devices: int, *, min_axes: int = 1, max_axes: int = 4) -> st.SearchStrategy:
    """Mesh shapes with ``n_devices`` devices; shrinks towards one axis holding all of them."""
    return st.sampled_from(factorizations(n_devices, min_axes, max_axes))


def axis_names(n: int) -> st.SearchStrategy:
    """``n`` distinct axis names from the pool, in any order; shrinks towards ('a', 'b', ...)."""
    return st.permutations(AXIS_NAME_POOL).map(lambda names: tuple(names[:n]))


@st.composite
def meshes(draw, device_ids: Optional[Sequence[int]] = None, *, min_axes: int = 1,
           max_axes: int = 4, subsets: bool = True, reorder: bool = True) -> MeshModel:
    """A mesh over all of ``device_ids`` or (``subsets``) a subset of them, in the given order or
    (``reorder``) a permuted one, with a shape from the factorizations of its device count.

    Shrinks towards all devices, in order, on one axis.
    """
    ids = resolve_device_ids(device_ids)
    chosen = list(ids)
    if subsets and len(ids) > 1 and draw(st.booleans()):
        chosen = chosen[:draw(st.integers(1, len(ids) - 1))]
    if reorder and len(chosen) > 1 and draw(st.booleans()):
        chosen = draw(st.permutations(chosen))
    shape = draw(mesh_shapes(len(chosen), min_axes=min_axes, max_axes=max_axes))
    return MeshModel(tuple(chosen), shape, draw(axis_names(len(shape))))
