"""Strategies for pmap and collective examples: which devices, argument pytrees with matching
in_axes, out_axes, and the parameters of each collective (axis_index_groups, permutations, axes)."""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np
from hypothesis import strategies as st

from conformance.model.layout import DeviceIds
from conformance.model.spmd import DeviceSelection, arg_axes, tree_leaves

from .arrays import arrays, dtype_of, without_subnormals
from .meshes import leading
from .odds import mostly
from .reuse import permuted, reused, sampled_from

LEAF_DTYPES = ("int8", "int32", "float32")


@reused
@st.composite
def device_counts(draw, n: int, *, min_size: int = 1) -> int:
    """How many of ``n`` devices to use, ``min_size`` or more: two or more but for 1 in 32 draws
    (on one device no value can be confused with another device's). Shrinks towards ``n``."""
    several = draw(mostly(32)) and n >= 2
    low = max(min_size, 2) if several else min_size
    return draw(sampled_from(tuple(range(n, low - 1, -1))))


@reused
@st.composite
def device_selections(draw, device_ids: Sequence[int], *, min_size: int = 1) -> DeviceSelection:
    """All of ``device_ids`` (the local devices); or the first k (pmap's own choice); or
    (``devices=``) the first k of one of ``device_orders``; k from ``device_counts`` (the first k
    as ``meshes.leading`` takes them: in a multi-controller run, reaching every process). Shrinks
    towards all devices, implicitly."""
    ids = tuple(device_ids)
    kind = draw(sampled_from(["all", "first", "explicit"]))
    if kind == "all" or len(ids) <= min_size:
        return DeviceSelection(tuple(ids), False)
    k = draw(device_counts(len(ids), min_size=min_size))
    if kind == "first":
        return DeviceSelection(tuple(leading(device_ids, k)), False)
    order = draw(sampled_from(device_orders(ids)))
    return DeviceSelection(tuple(leading(DeviceIds(order, getattr(device_ids, "groups", ())), k)), True)


def device_orders(ids: Sequence[int]) -> Tuple[Tuple[int, ...], ...]:
    """A few orders of ``ids`` that break any assumption of device order: as given, reversed,
    interleaved (even positions, then odd ones), and rotated by one. Drawing from these, not from
    every permutation, keeps the space of pmapped programs small enough that compilations are
    reused across examples (measured: the collectives and pmap suites compile ~1900 programs
    per default run with any permutation)."""
    ids = tuple(ids)
    orders = (ids, ids[::-1], ids[::2] + ids[1::2], ids[1:] + ids[:1])
    return tuple(dict.fromkeys(orders))


@reused
@st.composite
def leaves(draw, size: int, axis: Optional[int], *, dtype=None, max_rank: int = 2):
    """An array leaf: for ``axis`` None of any rank 0..max_rank, else of rank > axis with
    ``size`` at ``axis``; other sides 1..3; its values varying but for 1 in 16 draws (``arrays``'s
    ``repeated``: the devices then get slices that differ)."""
    rank = draw(st.integers(0 if axis is None else axis + 1, max(max_rank, 0 if axis is None else axis + 1)))
    shape = [draw(st.integers(1, 3)) for _ in range(rank)]
    if axis is not None:
        shape[axis] = size
    dtype = dtype or dtype_of(draw(sampled_from(LEAF_DTYPES)))
    return draw(arrays(dtype, tuple(shape), finite=True, max_magnitude=1e3, repeated=16))


@st.composite
def argument_trees(draw, size: int):
    """``(args, in_axes)``: 1-3 positional arguments, each a leaf, a tuple or list of two leaves,
    or a dict {'a', 'b'} of leaves, with in_axes a tuple of one prefix per argument (an int or None
    for the whole argument, or a container of per-leaf ints and Nones); at least one leaf is mapped.
    When every leaf is mapped along axis 0, in_axes may be the plain int 0."""
    args, axes = [], []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(sampled_from(["leaf", "tuple", "list", "dict"]))
        if kind == "leaf" or draw(st.booleans()):
            axis = draw(sampled_from([None, 0, 1]))
            count = 1 if kind == "leaf" else 2
            parts = [draw(leaves(size, axis)) for _ in range(count)]
            prefix = axis
        else:
            part_axes = [draw(sampled_from([None, 0, 1])) for _ in range(2)]
            parts = [draw(leaves(size, a)) for a in part_axes]
            prefix = {"tuple": tuple, "list": list}.get(kind, lambda p: dict(zip("ab", p)))(part_axes)
        args.append(parts[0] if kind == "leaf" else
                    tuple(parts) if kind == "tuple" else list(parts) if kind == "list" else
                    dict(zip("ab", parts)))
        axes.append(prefix)
    leaf_axes = tree_leaves(arg_axes(tuple(args), tuple(axes)))
    if all(a is None for a in leaf_axes):
        args[0] = draw(leaves(size, 0))
        axes[0] = 0
        leaf_axes = tree_leaves(arg_axes(tuple(args), tuple(axes)))
    in_axes = tuple(axes)
    if all(a == 0 for a in leaf_axes) and draw(st.booleans()):
        in_axes = 0
    return tuple(args), in_axes


@reused
@st.composite
def index_groups(draw, size: int):
    """None, or ``size`` devices split into equal groups (of a size dividing ``size``), members in
    any order."""
    if draw(st.booleans()):
        return None
    group_size = draw(sampled_from([d for d in range(1, size + 1) if size % d == 0]))
    order = draw(permuted(range(size)))
    return tuple(tuple(order[i:i + group_size]) for i in range(0, size, group_size))


@reused
@st.composite
def permutations_pairs(draw, size: int):
    """A ppermute ``perm``: 1 to ``size`` (source, destination) pairs, each device at most once on
    either side; partial (some devices receive nothing) or full. (The empty perm, which crashed
    JAX 0.4.30, is a separate test run in a subprocess.)"""
    sources = draw(permuted(range(size)))
    targets = draw(permuted(range(size)))
    count = draw(st.integers(1, size))
    return tuple((int(s), int(t)) for s, t in zip(sources[:count], targets[:count]))


def group_size(groups, size: int) -> int:
    return size if groups is None else len(groups[0])


def sample_values(dtype_name: str, shape, *, subnormals: bool = True) -> st.SearchStrategy:
    """Per-device values (the leading dimension, or two, indexing the devices): finite floats of
    magnitude <= 100 (sums stay within a stated tolerance), subnormal floats only if
    ``subnormals``, any ints or bools; varying from device to device but for 1 in 32 draws
    (``arrays``'s ``repeated``)."""
    return arrays(dtype_of(dtype_name), tuple(shape), finite=True, max_magnitude=100.0,
                  subnormals=subnormals, repeated=32)


def small_floats(shape, *, divisor: float = 50.0) -> st.SearchStrategy:
    """float32 ``sample_values`` without subnormals, divided by ``divisor`` (magnitude <= 100 /
    ``divisor``: derivatives and loops stay small), the quotients that fall below the smallest normal
    set to 0, so that no operand is subnormal (met on 0.5.0, seed 2420009782: a custom vjp's
    cotangent 4.3e-37 / 50 = 8.6e-39 gave XLA 0 where numpy's rule gave 1.2e-38)."""
    return sample_values("float32", shape, subnormals=False).map(
        lambda v: without_subnormals(v / np.float32(divisor)))


def stacked(values: Sequence[np.ndarray]) -> np.ndarray:
    return np.stack([np.asarray(v) for v in values])


# The collectives that act on each element alone: one value shape per rank, since a program is
# compiled per shape and the shape tells them nothing the groups and devices do not
ELEMENTWISE_COLLECTIVES = ("psum", "pmean", "pmax", "pmin", "ppermute")
ELEMENTWISE_VALUE_SHAPES = ((), (3,), (2, 3))


@reused
@st.composite
def collective_parameters(draw, name: str, size: int, max_rank: int = 2, grouped: bool = True):
    """``(groups, params, shape)`` for a collective of ``name`` over ``size`` devices (as
    suites/test_collectives.py takes them): axis_index_groups (``index_groups``; none for ppermute
    and axis_index), its parameters, and a per-device value shape of rank 0..``max_rank``, sides 1..3,
    that they fit (built, not filtered); for the elementwise ones, one shape per rank
    (``ELEMENTWISE_VALUE_SHAPES``):

    * all_gather: ``axis`` and ``tiled``;
    * psum_scatter: ``dim`` (its side the group size, times 1 or 2 when tiled) and ``tiled``;
    * all_to_all: ``split`` (sized as psum_scatter's dim), ``concat`` another dimension in 2 draws
      of 3 where the rank allows (else the same), and then in 3 draws of 4 sized as the split side
      too, so that the call with the two exchanged is valid too (and another), and ``tiled``;
    * ppermute: ``perm`` (``permutations_pairs``);
    * axis_index: nothing, and a scalar value shape: it reads no value (JAX drops the operand from
      the program), so a drawn shape would only ask for the same program again.

    ``grouped=False``: no axis_index_groups (vmap's collectives take none)."""
    if name == "axis_index":
        return None, {}, ()
    groups = draw(index_groups(size)) if name != "ppermute" and grouped else None
    g = group_size(groups, size)
    if name in ELEMENTWISE_COLLECTIVES:
        return groups, ({"perm": draw(permutations_pairs(size))} if name == "ppermute" else {}), draw(
            sampled_from(ELEMENTWISE_VALUE_SHAPES[:max_rank + 1]))
    rank = draw(st.integers(0, max_rank))
    shape = [draw(st.integers(1, 3)) for _ in range(rank)]
    params = {}
    if name == "all_gather":
        tiled = draw(st.booleans()) and rank > 0
        params = {"axis": draw(st.integers(0, rank - 1 if tiled else rank)), "tiled": tiled}
    elif name in ("psum_scatter", "all_to_all"):
        if rank == 0:
            shape, rank = [1], 1
        tiled = draw(st.booleans())
        dim = draw(st.integers(0, rank - 1))
        shape[dim] = g * (draw(st.integers(1, 2)) if tiled else 1)
        if name == "psum_scatter":
            params = {"dim": dim, "tiled": tiled}
        else:
            concat = draw(sampled_from([d for d in range(rank) if d != dim])) if rank > 1 and draw(mostly(3)) else dim
            if concat != dim and draw(mostly(4)):
                shape[concat] = g * (draw(st.integers(1, 2)) if tiled else 1)
            params = {"split": dim, "concat": concat, "tiled": tiled}
    elif name == "ppermute":
        params = {"perm": draw(permutations_pairs(size))}
    return groups, params, tuple(shape)
