"""Strategies for PartitionSpecs (as model spec tuples): valid ones for a mesh and rank, ones
that divide a shape (and ones that cut it over an axis of size > 1), and invalid ones of a stated
kind."""

from __future__ import annotations

import math
from typing import Dict, List, Sequence

from hypothesis import strategies as st

from conformance.model.layout import MeshModel, Spec, spec_axes

from .odds import mostly
from .reuse import permuted, reused, sampled_from

UNKNOWN_AXIS_NAMES = ("z", "w", "unknown")


@reused
@st.composite
def partition_specs(draw, mesh: MeshModel, rank: int) -> Spec:
    """A valid spec for ``mesh`` and an array of ``rank`` dimensions.

    Each mesh axis is used at most once; an entry is None, one axis (bare or as a 1-tuple) or a
    tuple of axes in any order; unused axes and trailing Nones (up to the rank) may appear or not.
    Shrinks towards ``()``, the fully replicated spec.
    """
    entries = [[] for _ in range(rank)]
    if rank:
        order = draw(permuted(mesh.axis_names))
        for name in order[:draw(st.integers(0, len(order)))]:
            entries[draw(st.integers(0, rank - 1))].append(name)
    spec = []
    for axes in entries:
        if not axes:
            spec.append(None)
        elif len(axes) == 1:
            spec.append(tuple(axes) if draw(st.booleans()) else axes[0])
        else:
            spec.append(tuple(axes))
    shortest = max((i + 1 for i, axes in enumerate(entries) if axes), default=0)
    return tuple(spec[:draw(st.integers(shortest, rank))])


# Choices are drawn whether or not they can matter (a boolean where no axis fits, an index into
# one option), so that a spec that cuts nothing is no shorter a choice sequence than one that
# cuts: Hypothesis shrinks towards fewer choices first, which would otherwise lead it away from
# shapes a mesh axis divides.
def pick(draw, options: Sequence):
    """One of ``options`` (by index: one choice, even for a single option); shrinks towards the
    first."""
    return options[draw(st.integers(0, len(options) - 1))]


def _dividing_entries(draw, mesh: MeshModel, shape, entries, unused) -> list:
    """``entries`` (a tuple of axis names per dimension) with more of the ``unused`` axes added:
    each dimension, visited in a drawn order, takes zero or more whose sizes' product divides
    what its entry leaves of its side."""
    entries = list(entries)
    if not shape:
        draw(st.booleans())  # what a dimension would take: rank 0 is no shorter than rank 1
    for dim in draw(permuted(range(len(shape)))):
        left = shape[dim] // math.prod(mesh.axis_sizes[n] for n in entries[dim])
        while True:
            fitting = [n for n in unused if left % mesh.axis_sizes[n] == 0]
            if not draw(st.booleans()) or not fitting:
                break
            name = pick(draw, fitting)
            unused.remove(name)
            entries[dim] += (name,)
            left //= mesh.axis_sizes[name]
    return entries


def _spec_of(draw, entries) -> Spec:
    """The spec of per-dimension axis tuples: one axis bare or as a 1-tuple, trailing Nones (up to
    the rank) or not."""
    bare = [draw(st.booleans()) for _ in entries or [()]]  # a choice per entry, cut or not
    spec = [None if not axes else axes[0] if bare_one and len(axes) == 1 else axes
            for axes, bare_one in zip(entries, bare)]
    shortest = max((i + 1 for i, axes in enumerate(entries) if axes), default=0)
    return tuple(spec[:draw(st.integers(shortest, len(entries)))])


@reused
@st.composite
def dividing_specs(draw, mesh: MeshModel, shape) -> Spec:
    """A valid spec for ``mesh`` that divides ``shape``: each dimension, visited in a drawn order,
    takes zero or more unused mesh axes whose sizes' product divides its side, so that replicated,
    one-axis and many-axis entries all occur on every dimension. Shrinks towards ``()``."""
    entries = _dividing_entries(draw, mesh, shape, [()] * len(shape), list(mesh.axis_names))
    return _spec_of(draw, entries)


def cutting_axes(mesh: MeshModel, shape) -> Dict[int, List[str]]:
    """For each dimension of ``shape`` some mesh axis of size > 1 can cut, those axes (the ones
    whose size divides its side), in mesh order."""
    found = {}
    for dim, side in enumerate(shape):
        names = [n for n in mesh.axis_names if mesh.axis_sizes[n] > 1 and side % mesh.axis_sizes[n] == 0]
        if names:
            found[dim] = names
    return found


def can_cut(mesh: MeshModel, shape) -> bool:
    """Whether some mesh axis of size > 1 divides some side of ``shape``."""
    return bool(cutting_axes(mesh, shape))


@reused
@st.composite
def cutting_specs(draw, mesh: MeshModel, shape, *, prefer: Sequence[int] = (),
                  where_possible: bool = False) -> Spec:
    """A spec for ``mesh`` that divides ``shape`` and cuts it over a mesh axis of size > 1:

    * the cut: mostly (3 in 4) a dimension of ``prefer`` (where one can be cut: the dimensions an
      operation reduces or contracts), else any that can be; over any axis of size > 1 that
      divides its side;
    * then, as ``dividing_specs`` adds them, more unused axes on any dimension.

    Where no such axis divides any side (see ``can_cut``): a ValueError, or (``where_possible``) a
    dividing spec, drawn with as many choices. Shrinks towards the first such dimension of
    ``prefer`` (else the first that can be cut) cut over its first such axis, and nothing else.
    """
    can = cutting_axes(mesh, shape)
    if not can and not where_possible:
        raise ValueError(f"no axis of size > 1 of the mesh {mesh.axis_sizes} divides a side of {tuple(shape)}")
    preferred = [d for d in dict.fromkeys(prefer) if d in can]
    others = [d for d in can if d not in preferred]
    take_preferred = draw(mostly())
    dims = (preferred if preferred and (take_preferred or not others) else others or preferred) or [None]
    dim = pick(draw, dims)
    names = can.get(dim, [None])
    name = pick(draw, names)
    entries = [()] * len(shape)
    if dim is not None:
        entries[dim] = (name,)
    entries = _dividing_entries(draw, mesh, shape, entries, [n for n in mesh.axis_names if n != name])
    return _spec_of(draw, entries)


@reused
@st.composite
def sharding_specs(draw, mesh: MeshModel, shape, *, prefer: Sequence[int] = ()) -> Spec:
    """Mostly (3 in 4) a cutting spec (``cutting_specs``) where ``shape`` can be cut, else a
    dividing one (``dividing_specs``: replicated included). Shrinks towards the cutting one (drawn
    either way, so that the dividing one is no shorter a choice sequence)."""
    cut = draw(mostly())
    spec = draw(cutting_specs(mesh, shape, prefer=prefer, where_possible=True))
    return spec if cut and can_cut(mesh, shape) else draw(dividing_specs(mesh, shape))


INVALID_KINDS = ("unknown-axis", "repeated-axis", "too-long")


@st.composite
def invalid_partition_specs(draw, mesh: MeshModel, rank: int):
    """``(spec, kind)``: a spec that names an axis the mesh lacks, uses a mesh axis twice, or has
    more entries than ``rank``. Unknown and repeated axes need ``rank >= 1``."""
    kinds = INVALID_KINDS if rank else ("too-long",)
    kind = draw(sampled_from(kinds))
    spec = list(draw(partition_specs(mesh, rank)))
    spec += [None] * (rank - len(spec))
    if kind == "too-long":
        return tuple(spec + [None] * draw(st.integers(1, 2))), kind

    def add(dim, name):
        axes = spec_axes(spec)[dim]
        spec[dim] = axes + (name,) if axes else name

    if kind == "unknown-axis":
        add(draw(st.integers(0, rank - 1)), draw(sampled_from(UNKNOWN_AXIS_NAMES)))
    else:
        name = draw(sampled_from(mesh.axis_names))
        used = [i for i, axes in enumerate(spec_axes(spec)) if name in axes]
        for dim in ([] if used else [draw(st.integers(0, rank - 1))]) + [draw(st.integers(0, rank - 1))]:
            add(dim, name)
    return tuple(spec), kind


def restricted_to(spec: Spec, axes) -> Spec:
    """``spec`` naming only the mesh axes in ``axes`` (the others dropped from every entry), e.g.
    the specs of a shard_map manual over those axes only. A dropped axis leaves its dimension
    divided by the rest, so a dividing spec stays dividing."""
    entries = []
    for names in spec_axes(spec):
        kept = tuple(n for n in names if n in axes)
        entries.append(None if not kept else kept[0] if len(kept) == 1 else kept)
    while entries and entries[-1] is None:
        entries.pop()
    return tuple(entries)


def broadcast_operand_spec(result_spec: Spec, operand_shape, result_shape) -> Spec:
    """The spec of an operand that broadcasts to ``result_shape``, matching ``result_spec``: the
    dimensions are aligned from the right; one of the result's size becomes its entry, a broadcast
    one (size 1 under a larger side) stays unsharded."""
    entries = spec_axes(result_spec) + ((),) * (len(result_shape) - len(result_spec))
    offset = len(result_shape) - len(operand_shape)
    spec = []
    for dim, side in enumerate(operand_shape):
        names = entries[offset + dim] if side == result_shape[offset + dim] else ()
        spec.append(None if not names else names[0] if len(names) == 1 else names)
    while spec and spec[-1] is None:
        spec.pop()
    return tuple(spec)
