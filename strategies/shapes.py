"""Strategies for global shapes that a spec divides (built, not filtered: a per-shard shape times
the tiling) and shapes it deliberately does not divide, plus whole layouts."""

from __future__ import annotations

import math
from typing import Optional, Sequence

from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance.model.layout import Layout, MeshModel, Spec, spec_axes, spec_tiling

from .meshes import meshes
from .reuse import reused, sampled_from
from .specs import partition_specs


@reused
@st.composite
def shard_shapes(draw, rank: int, *, max_side: int = 3, zero_size: bool = True):
    """A per-shard shape of ``rank`` dims with sides 1..max_side; now and then (``zero_size``) one
    side is 0."""
    shape = list(draw(_array_shapes(rank, max_side)))
    if zero_size and rank and draw(st.integers(0, 7)) == 7:
        shape[draw(st.integers(0, rank - 1))] = 0
    return tuple(shape)


@reused
def _array_shapes(rank: int, max_side: int) -> st.SearchStrategy:
    return hnp.array_shapes(min_dims=rank, max_dims=rank, min_side=1, max_side=max_side)


def tiled(block: Sequence[int], tiling: Sequence[int]):
    return tuple(b * t for b, t in zip(block, tiling))


def congruent_shapes(mesh: MeshModel, spec: Spec, rank: int, *, max_side: int = 3,
                     zero_size: bool = True) -> st.SearchStrategy:
    """Global shapes that ``spec`` divides on ``mesh``: a shard shape times the tiling."""
    return _tiled_shapes(tuple(spec_tiling(mesh, spec, rank)), rank, max_side, zero_size)


@reused
def _tiled_shapes(tiling: tuple, rank: int, max_side: int, zero_size: bool) -> st.SearchStrategy:
    return shard_shapes(rank, max_side=max_side, zero_size=zero_size).map(lambda b: tiled(b, tiling))


def can_be_incongruent(mesh: MeshModel, spec: Spec, rank: int) -> bool:
    """True when some dimension is cut more than once, so some shape does not divide."""
    return any(t > 1 for t in spec_tiling(mesh, spec, rank))


@reused
@st.composite
def incongruent_shapes(draw, mesh: MeshModel, spec: Spec, rank: int, *, max_side: int = 3):
    """Global shapes that ``spec`` does not divide: one or more tiled dimensions get a remainder."""
    tiling = spec_tiling(mesh, spec, rank)
    tiled_dims = [i for i, t in enumerate(tiling) if t > 1]
    if not tiled_dims:
        raise ValueError(f"spec {spec} cuts no dimension on mesh {mesh.shape}: every shape divides")
    shape = list(tiled(draw(shard_shapes(rank, max_side=max_side, zero_size=False)), tiling))
    broken = draw(st.lists(sampled_from(tiled_dims), min_size=1, unique=True))
    for dim in broken:
        shape[dim] = shape[dim] - tiling[dim] + draw(st.integers(1, tiling[dim] - 1))
    return tuple(shape)


@reused
@st.composite
def with_cutting_axis(draw, mesh: MeshModel, spec: Spec, rank: int) -> Spec:
    """``spec`` with one mesh axis of size > 1, unused by it, added to one of its dimensions."""
    used = {name for axes in spec_axes(spec) for name in axes}
    cutting = [name for name, size in mesh.axis_sizes.items() if size > 1 and name not in used]
    if not cutting or rank == 0:
        raise ValueError(f"no unused axis of {mesh.axis_sizes} can cut a rank-{rank} array")
    name = draw(sampled_from(cutting))
    dim = draw(st.integers(0, rank - 1))
    entries = list(spec) + [None] * (dim + 1 - len(spec))
    axes = spec_axes(entries)[dim]
    entries[dim] = axes + (name,) if axes else name
    return tuple(entries)


@reused
@st.composite
def layouts(draw, device_ids: Sequence[int], *, min_rank: int = 0, max_rank: int = 3,
            congruent: Optional[bool] = True, max_side: int = 3, zero_size: bool = True,
            **mesh_kwargs) -> Layout:
    """A model ``Layout``: a mesh over ``device_ids`` (``mesh_kwargs`` go to ``meshes``), a valid
    spec and a global shape of ``min_rank`` to ``max_rank`` dimensions, sides up to ``max_side``
    per shard.

    * ``congruent=True`` builds a shape the spec divides (``zero_size``: now and then a side is 0);
    * ``False`` a shape it does not (the spec is made to cut some dimension, so this needs two or
      more devices);
    * ``None`` draws either, an incongruent one only where the spec cuts some dimension.
    """
    mesh = draw(meshes(device_ids, **mesh_kwargs) if congruent is not False
                else _meshes_of_several_devices(tuple(device_ids), tuple(sorted(mesh_kwargs.items()))))
    rank = draw(st.integers(max(min_rank, 1) if congruent is False else min_rank, max_rank))
    spec = draw(partition_specs(mesh, rank))
    if congruent is False and not can_be_incongruent(mesh, spec, rank):
        spec = draw(with_cutting_axis(mesh, spec, rank))
    if congruent is None:
        congruent = not can_be_incongruent(mesh, spec, rank) or draw(st.booleans())
    if congruent:
        shape = draw(congruent_shapes(mesh, spec, rank, max_side=max_side, zero_size=zero_size))
    else:
        shape = draw(incongruent_shapes(mesh, spec, rank, max_side=max_side))
    return Layout(mesh, spec, shape)


@reused
def _meshes_of_several_devices(device_ids: tuple, mesh_kwargs: tuple) -> st.SearchStrategy:
    return meshes(device_ids, **dict(mesh_kwargs)).filter(lambda m: m.size > 1)


@st.composite
def layouts_sharing_shape(draw, mesh_list: Sequence[MeshModel], rank: int, *, max_side: int = 2,
                          zero_size: bool = True):
    """One Layout per mesh in ``mesh_list``, each with its own drawn spec, all over one global shape
    that every spec divides (a shard shape times the per-dimension lcm of the tilings)."""
    specs = [draw(partition_specs(mesh, rank)) for mesh in mesh_list]
    tilings = [spec_tiling(mesh, spec, rank) for mesh, spec in zip(mesh_list, specs)]
    lcm = tuple(math.lcm(*column) for column in zip(*tilings)) if rank else ()
    shape = tiled(draw(shard_shapes(rank, max_side=max_side, zero_size=zero_size)), lcm)
    return tuple(Layout(mesh, spec, shape) for mesh, spec in zip(mesh_list, specs))
