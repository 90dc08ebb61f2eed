"""Strategies for device meshes over given device ids: shapes from factorizations of the device
count, distinct axis names, and sub-meshes over a subset of the devices."""

from __future__ import annotations

import functools
from typing import Sequence, Tuple

from hypothesis import strategies as st

from conformance.model.layout import MeshModel

# A small, fixed pool keeps the number of distinct meshes (and so of compiled programs) small.
AXIS_NAME_POOL = ("a", "b", "x", "y")


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
def meshes(draw, device_ids: Sequence[int], *, min_axes: int = 1, max_axes: int = 4,
           subsets: bool = True, reorder: bool = True) -> MeshModel:
    """A mesh over devices from ``device_ids``:

    * all of them, or (``subsets``) a leading subset;
    * in the given order, or (``reorder``) a permuted one;
    * with a shape from the factorizations of its device count, ``min_axes`` to ``max_axes`` axes.

    Shrinks towards all devices, in order, on one axis.
    """
    ids = tuple(device_ids)
    if not ids:
        raise ValueError("meshes() needs at least one device id")
    chosen = list(ids)
    if subsets and len(ids) > 1 and draw(st.booleans()):
        chosen = chosen[:draw(st.integers(1, len(ids) - 1))]
    if reorder and len(chosen) > 1 and draw(st.booleans()):
        chosen = draw(st.permutations(chosen))
    shape = draw(mesh_shapes(len(chosen), min_axes=min_axes, max_axes=max_axes))
    return MeshModel(tuple(chosen), shape, draw(axis_names(len(shape))))
