"""Strategies for device meshes over given device ids: shapes from factorizations of the device
count, distinct axis names, and sub-meshes over a subset of the devices; and meshes that can cut
given array sides."""

from __future__ import annotations

import functools
from typing import Sequence, Tuple

from hypothesis import strategies as st

from conformance.model.layout import MeshModel, leading

from .odds import mostly
from .reuse import permuted, reused, sampled_from

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
    return sampled_from(factorizations(n_devices, min_axes, max_axes))


@reused
def axis_names(n: int) -> st.SearchStrategy:
    """``n`` distinct axis names from the pool, in any order; shrinks towards ('a', 'b', ...)."""
    return permuted(AXIS_NAME_POOL).map(lambda names: tuple(names[:n]))


@reused
@st.composite
def meshes(draw, device_ids: Sequence[int], *, min_axes: int = 1, max_axes: int = 4,
           subsets: bool = True, reorder: bool = True) -> MeshModel:
    """A mesh over devices from ``device_ids``:

    * all of them, or (``subsets``) a leading subset (``leading``: one that reaches every process
      in a multi-controller run);
    * in the given order, or (``reorder``) a permuted one;
    * with a shape from the factorizations of its device count, ``min_axes`` to ``max_axes`` axes.

    Shrinks towards all devices, in order, on one axis.
    """
    ids = tuple(device_ids)
    if not ids:
        raise ValueError("meshes() needs at least one device id")
    chosen = list(ids)
    if subsets and len(ids) > 1 and draw(st.booleans()):
        chosen = leading(device_ids, draw(st.integers(1, len(ids) - 1)))
    if reorder and len(chosen) > 1 and draw(st.booleans()):
        chosen = draw(permuted(chosen))
    shape = draw(mesh_shapes(len(chosen), min_axes=min_axes, max_axes=max_axes))
    return MeshModel(tuple(chosen), shape, draw(axis_names(len(shape))))


def cuts_a_side(shape: Sequence[int], sides: Sequence[int]) -> bool:
    """Whether a mesh of ``shape`` has an axis of size > 1 whose size divides one of ``sides``."""
    return any(n > 1 and side % n == 0 for n in shape for side in sides)


@functools.lru_cache(maxsize=None)
def cutting_factorizations(n: int, sides: Tuple[int, ...], min_axes: int = 1,
                           max_axes: int = 4) -> Tuple[Tuple[int, ...], ...]:
    """The factorizations of ``n`` with an axis that cuts one of ``sides``: fewest axes first,
    then those whose first cutting axis comes earliest."""
    def first_cut(shape):
        return min(k for k, size in enumerate(shape) if cuts_a_side((size,), sides))
    found = [shape for shape in factorizations(n, min_axes, max_axes) if cuts_a_side(shape, sides)]
    return tuple(sorted(found, key=lambda shape: (len(shape), first_cut(shape))))


@reused
@st.composite
def cutting_meshes(draw, device_ids: Sequence[int], sides: Sequence[int], *, min_axes: int = 1,
                   max_axes: int = 4, subsets: bool = True, reorder: bool = True) -> MeshModel:
    """A mesh as ``meshes`` draws it, but mostly (99 in 100, where the devices allow one) with an
    axis of size > 1 that divides one of ``sides`` (the sides of the arrays to cut; sides 0 and 1
    count for nothing):

    * all the devices, or (``subsets``) a leading subset, of a count that has such a shape (a
      subset when all of them have none, e.g. 3 or 6 of 8 devices for a side 3);
    * in the given order, or (``reorder``) a permuted one;
    * a shape from the factorizations of that count, ``min_axes`` to ``max_axes`` axes, with such an
      axis.

    Shrinks towards all devices in order over the fewest axes, the cutting one first (e.g.
    ``(2, 4)`` on 8 devices for a side 2). Its choices are drawn whether or not they can matter,
    so that a mesh that cuts nothing is no shorter a choice sequence (see ``specs.pick``).
    """
    ids = tuple(device_ids)
    if not ids:
        raise ValueError("cutting_meshes() needs at least one device id")
    sides = tuple(sorted({int(s) for s in sides if s > 1}))
    counts = [k for k in range(len(ids), 0, -1) if k == len(ids) or subsets]
    fitting = [k for k in counts if cutting_factorizations(k, sides, min_axes, max_axes)]
    fit = draw(mostly(100)) and bool(fitting)  # drawn either way: no shorter a choice sequence
    chosen = list(ids)
    smaller = [k for k in (fitting if fit else counts) if k < len(ids)]
    subset = draw(st.booleans()) if subsets and len(ids) > 1 else False
    if smaller and (subset or (fit and fitting[0] < len(ids))):
        chosen = leading(device_ids, draw(sampled_from(smaller)))
    if reorder and len(chosen) > 1 and draw(st.booleans()):
        chosen = draw(permuted(chosen))
    shapes = (cutting_factorizations(len(chosen), sides, min_axes, max_axes) if fit
              else factorizations(len(chosen), min_axes, max_axes))
    if not shapes:  # (``leading`` took every device, to reach every process: no count cuts a side)
        shapes = factorizations(len(chosen), min_axes, max_axes)
    shape = draw(sampled_from(shapes))
    return MeshModel(tuple(chosen), shape, draw(axis_names(len(shape))))
