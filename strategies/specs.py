"""Strategies for PartitionSpecs (as model spec tuples): valid ones for a mesh and rank, and
invalid ones of a stated kind."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.model.layout import MeshModel, Spec, spec_axes

UNKNOWN_AXIS_NAMES = ("z", "w", "unknown")


@st.composite
def partition_specs(draw, mesh: MeshModel, rank: int) -> Spec:
    """A valid spec for ``mesh`` and an array of ``rank`` dimensions.

    Each mesh axis is used at most once; an entry is None, one axis (bare or as a 1-tuple) or a
    tuple of axes in any order; unused axes and trailing Nones (up to the rank) may appear or not.
    Shrinks towards ``()``, the fully replicated spec.
    """
    entries = [[] for _ in range(rank)]
    if rank:
        order = draw(st.permutations(mesh.axis_names))
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


@st.composite
def dividing_specs(draw, mesh: MeshModel, shape) -> Spec:
    """A valid spec for ``mesh`` that divides ``shape``: each dimension, visited in a drawn order,
    takes zero or more unused mesh axes whose sizes' product divides its side, so that replicated,
    one-axis and many-axis entries all occur on every dimension. Shrinks towards ``()``."""
    rank = len(shape)
    entries = [()] * rank
    unused = list(mesh.axis_names)
    for dim in draw(st.permutations(range(rank))):
        left = shape[dim]
        while True:
            fitting = [n for n in unused if left % mesh.axis_sizes[n] == 0]
            if not fitting or not draw(st.booleans()):
                break
            name = draw(st.sampled_from(fitting))
            unused.remove(name)
            entries[dim] += (name,)
            left //= mesh.axis_sizes[name]
    spec = [None if not axes else axes[0] if len(axes) == 1 and draw(st.booleans()) else axes
            for axes in entries]
    shortest = max((i + 1 for i, axes in enumerate(entries) if axes), default=0)
    return tuple(spec[:draw(st.integers(shortest, rank))])


INVALID_KINDS = ("unknown-axis", "repeated-axis", "too-long")


@st.composite
def invalid_partition_specs(draw, mesh: MeshModel, rank: int):
    """``(spec, kind)``: a spec that names an axis the mesh lacks, uses a mesh axis twice, or has
    more entries than ``rank``. Unknown and repeated axes need ``rank >= 1``."""
    kinds = INVALID_KINDS if rank else ("too-long",)
    kind = draw(st.sampled_from(kinds))
    spec = list(draw(partition_specs(mesh, rank)))
    spec += [None] * (rank - len(spec))
    if kind == "too-long":
        return tuple(spec + [None] * draw(st.integers(1, 2))), kind

    def add(dim, name):
        axes = spec_axes(spec)[dim]
        spec[dim] = axes + (name,) if axes else name

    if kind == "unknown-axis":
        add(draw(st.integers(0, rank - 1)), draw(st.sampled_from(UNKNOWN_AXIS_NAMES)))
    else:
        name = draw(st.sampled_from(mesh.axis_names))
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
