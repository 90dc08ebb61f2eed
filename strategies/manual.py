"""Strategies for manual (shard_map) code over several mesh axes: all_to_all over a pair of mesh
axes at once, and a body's input laid out over a mesh whose axes the suites make Explicit. Model
objects only (``MeshModel``, spec tuples, shapes); the suites draw the values and build the JAX
objects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Tuple

from hypothesis import strategies as st

from conformance.model.layout import MeshModel, Spec, spec_axes

from .meshes import axis_names, factorizations
from .odds import mostly
from .reuse import permuted, sampled_from
from .specs import cutting_specs, sharding_specs


def _shapes_with_two_cutting_axes(n: int, max_axes: int = 3) -> Tuple[Tuple[int, ...], ...]:
    """Mesh shapes of ``n`` devices, 2..``max_axes`` axes, with at least two axes of size > 1."""
    return tuple(s for s in factorizations(n, 2, max_axes) if sum(size > 1 for size in s) >= 2)


@st.composite
def multi_axis_meshes(draw, device_ids: Sequence[int], *, max_axes: int = 3) -> MeshModel:
    """A mesh of two to ``max_axes`` axes over all of ``device_ids``, in order or permuted: mostly
    (15 in 16, where the device count allows one) with two or more axes of size > 1, so that a
    collective over two axes spans both. Shrinks towards the devices in order on the first such
    shape (``(4, 2)`` on 8 devices)."""
    ids = tuple(device_ids)
    wide = _shapes_with_two_cutting_axes(len(ids), max_axes)
    use_wide = draw(mostly(16)) and bool(wide)
    shape = draw(sampled_from(wide if use_wide else factorizations(len(ids), 2, max_axes)))
    if len(ids) > 1 and draw(st.booleans()):
        ids = tuple(draw(permuted(ids)))
    return MeshModel(ids, shape, draw(axis_names(len(shape))))


@dataclass(frozen=True)
class AllToAllExample:
    """``lax.all_to_all(v, over, split, concat, tiled=tiled)`` in a shard_map body on ``mesh``,
    each device's ``v`` of ``shape`` (the split dimension a multiple of the group size)."""

    mesh: MeshModel
    over: Tuple[str, str]
    split: int
    concat: int
    tiled: bool
    shape: Tuple[int, ...]

    @property
    def group_size(self) -> int:
        return self.mesh.axis_sizes[self.over[0]] * self.mesh.axis_sizes[self.over[1]]


@st.composite
def all_to_all_over_two_axes(draw, device_ids: Sequence[int]) -> AllToAllExample:
    """An all_to_all over a pair of a mesh's axes (in a drawn order, mostly both of size > 1: see
    ``multi_axis_meshes``): a value of rank 2 (3 in 4 draws, so that concat and split can differ) or
    1, split and concat dimensions differing in 2 draws of 3 where the rank allows, tiled or not; the split side
    is the group size (times 1 or 2 when tiled), and so is the concat side, where it differs, in 3
    draws of 4 (so that the call with split and concat exchanged is valid too, and another), the
    other sides 1 or 2. Shrinks towards rank 2,
    split 0 and concat 1 (both sides the group size), untiled."""
    mesh = draw(multi_axis_meshes(device_ids))
    cutting = [a for a in mesh.axis_names if mesh.axis_sizes[a] > 1]
    first_pool = cutting if len(cutting) >= 2 else list(mesh.axis_names)
    first = draw(sampled_from(first_pool))
    rest = [a for a in first_pool if a != first] or [a for a in mesh.axis_names if a != first]
    over = (first, draw(sampled_from(rest)))
    g = mesh.axis_sizes[over[0]] * mesh.axis_sizes[over[1]]
    rank = 2 if draw(mostly(4)) else 1
    split = draw(st.integers(0, rank - 1))
    concat = draw(sampled_from([d for d in range(rank) if d != split])) if rank > 1 and draw(mostly(3)) else split
    tiled = draw(st.booleans())
    shape = [draw(st.integers(1, 2)) for _ in range(rank)]
    shape[split] = g * (draw(st.integers(1, 2)) if tiled else 1)
    if concat != split and draw(mostly(4)):  # (then the call with split and concat exchanged is valid too)
        shape[concat] = g * (draw(st.integers(1, 2)) if tiled else 1)
    return AllToAllExample(mesh, over, split, concat, tiled, tuple(shape))


@st.composite
def laid_out_inputs(draw, device_ids: Sequence[int], *, max_axes: int = 3) -> Tuple[MeshModel, Tuple[int, ...], Spec]:
    """``(mesh, shape, spec)``: a mesh of 1..``max_axes`` axes over all of ``device_ids`` (in order
    or permuted), an int array shape of rank 1..2 whose sides are multiples of the mesh's axis sizes,
    and a spec for it, mostly cutting (``sharding_specs``). Shrinks towards one axis and a spec that
    splits the first dimension over it."""
    ids = tuple(device_ids)
    shape_of_mesh = draw(sampled_from(factorizations(len(ids), 1, max_axes)))
    if len(ids) > 1 and draw(st.booleans()):
        ids = tuple(draw(permuted(ids)))
    mesh = MeshModel(ids, shape_of_mesh, draw(axis_names(len(shape_of_mesh))))
    rank = draw(st.integers(1, 2))
    shape = tuple(len(ids) * draw(st.integers(1, 2)) if d == 0 else draw(sampled_from((1, 2, len(ids))))
                  for d in range(rank))
    return mesh, shape, draw(sharding_specs(mesh, shape))


@st.composite
def inputs_varying_over_an_axis(draw, device_ids: Sequence[int]) -> Tuple[MeshModel, Tuple[int, ...], Spec, str]:
    """``(mesh, shape, spec, axis)``: as ``laid_out_inputs``, but the spec always cuts
    (``cutting_specs``; the first dimension's side is a multiple of the device count, so some axis of
    size > 1 can cut it) and ``axis`` is one of the axes of size > 1 it names, which a body's value
    then varies over. Needs two devices or more."""
    ids = tuple(device_ids)
    if len(ids) < 2:
        raise ValueError("inputs_varying_over_an_axis() needs two devices or more")
    shape_of_mesh = draw(sampled_from(tuple(s for s in factorizations(len(ids), 1, 3) if max(s) > 1)))
    if draw(st.booleans()):
        ids = tuple(draw(permuted(ids)))
    mesh = MeshModel(ids, shape_of_mesh, draw(axis_names(len(shape_of_mesh))))
    rank = draw(st.integers(1, 2))
    shape = tuple(len(ids) * draw(st.integers(1, 2)) if d == 0 else draw(sampled_from((1, 2, len(ids))))
                  for d in range(rank))
    spec = draw(cutting_specs(mesh, shape))
    named = [a for axes in spec_axes(spec) for a in axes if mesh.axis_sizes[a] > 1]
    return mesh, shape, spec, draw(sampled_from(named))
