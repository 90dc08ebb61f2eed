"""Strategies for operand layouts an operation must see through: constraints that leave some
dimensions UNCONSTRAINED, reshapes that merge or split a sharded dimension, and ``dot_general`` /
``einsum`` over drawn dimension numbers with sharded contracting and batch dimensions.

Model objects only (no JAX): shapes, dimension numbers, spec tuples and numpy operands. The suite
(``suites/test_operand_layouts.py``) turns them into JAX calls. Most draws put a mesh axis of size
> 1 where the operation works: on a constrained dimension, on the merged or split dimension, on a
contracting or batch dimension (``tests/test_operand_layout_strategies.py`` holds the floors).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence, Tuple

import numpy as np
from hypothesis import strategies as st

from conformance.model.layout import MeshModel, Spec, spec_axes

from .arrays import ramps, varied
from .meshes import cutting_meshes
from .odds import mostly
from .reuse import permuted, sampled_from
from .specs import sharding_specs

Shape = Tuple[int, ...]
SIDES = (4, 2, 8)  # few distinct sides: few distinct compiled programs; 2, 4 and 8 cut on 8 devices
SMALL = 8  # operand elements lie in -SMALL..SMALL: int32 sums of products stay far from overflow


def small_ints(shape: Shape) -> st.SearchStrategy:
    """int32 arrays of ``shape`` with elements in -8..8, varying from element to element but for 1
    in 16 draws (``arrays.varied``: a ramp, with a few drawn elements put in)."""
    shape = tuple(shape)
    return varied(ramps(np.int32, shape, bound=SMALL), st.integers(-SMALL, SMALL), np.int32, shape, repeated=16)


def full_spec(spec: Spec, rank: int) -> Spec:
    """``spec`` with one entry per dimension (missing trailing entries None)."""
    return tuple(spec) + (None,) * (rank - len(spec))


def cut_dims(mesh: MeshModel, spec: Spec) -> frozenset:
    """The dimensions ``spec`` shards over a mesh axis of size > 1."""
    return frozenset(d for d, axes in enumerate(spec_axes(spec)) if any(mesh.axis_sizes[n] > 1 for n in axes))


# --- constraints with UNCONSTRAINED dimensions ------------------------------------------------------
@dataclass(frozen=True)
class PartlyConstrained:
    """A ``with_sharding_constraint`` whose spec leaves the dimensions ``unconstrained`` to JAX
    (``PartitionSpec.UNCONSTRAINED``) and asks ``spec``'s entries of the others (``spec`` has one
    entry per dimension; those of the unconstrained dimensions are None and name no axis), applied
    under jit to ``x``, given laid out as ``in_spec``; on a mesh of ``axis_type`` axes."""

    mesh: MeshModel
    axis_type: str
    x: np.ndarray
    in_spec: Spec
    spec: Spec
    unconstrained: Tuple[int, ...]

    @property
    def constrained(self) -> Tuple[int, ...]:
        return tuple(d for d in range(np.ndim(self.x)) if d not in self.unconstrained)


@st.composite
def partly_constrained(draw, device_ids: Sequence[int], axis_types: Sequence[str] = ("Auto",)) -> PartlyConstrained:
    """An int32 array of rank 2 or 3 (sides from 4, 2, 8); one or more of its dimensions
    UNCONSTRAINED (all of them 1 in 8 draws); a mesh of up to 2 axes, mostly one that cuts a
    constrained dimension; the constrained dimensions' entries drawn as ``sharding_specs`` draws a
    spec for them alone (mostly cutting one); an input spec drawn the same way (mostly differing
    from the constraint). Shrinks towards a (4, 4) array, its first dimension unconstrained and its
    second cut, on all the devices in order."""
    rank = draw(st.integers(2, 3))
    shape = tuple(draw(sampled_from(SIDES)) for _ in range(rank))
    axis_type = draw(sampled_from(tuple(axis_types)))
    count = draw(st.integers(1, rank - 1)) if draw(mostly(8)) else rank
    unconstrained = tuple(sorted(draw(permuted(range(rank)))[:count]))
    constrained = [d for d in range(rank) if d not in unconstrained]
    mesh = draw(cutting_meshes(device_ids, [shape[d] for d in constrained] or shape, max_axes=2))
    asked = iter(full_spec(draw(sharding_specs(mesh, tuple(shape[d] for d in constrained))), len(constrained)))
    spec = tuple(None if d in unconstrained else next(asked) for d in range(rank))
    in_spec = draw(sharding_specs(mesh, shape))
    return PartlyConstrained(mesh, axis_type, draw(small_ints(shape)), in_spec, spec, unconstrained)


# --- reshapes that merge or split dimensions ----------------------------------------------------------
@dataclass(frozen=True)
class Reshape:
    """``x.reshape(new_shape)`` where ``new_shape`` merges the consecutive dimensions ``dims`` of
    ``x`` into one (``kind`` "merge"), or splits the one dimension ``dims[0]`` into consecutive ones
    ("split"); ``x`` laid out as ``in_spec``, the result asked for as ``out_spec`` (Auto meshes) on
    a mesh of ``axis_type`` axes. ``new_dims``: the result's dimensions that the merge or split makes."""

    mesh: MeshModel
    axis_type: str
    x: np.ndarray
    new_shape: Shape
    kind: str
    dims: Tuple[int, ...]
    new_dims: Tuple[int, ...]
    in_spec: Spec
    out_spec: Spec


SPLITS = {4: ((2, 2),), 8: ((2, 4), (4, 2), (2, 2, 2)), 2: ((2, 1), (1, 2))}


@st.composite
def reshapes(draw, device_ids: Sequence[int], axis_types: Sequence[str] = ("Auto",)) -> Reshape:
    """A merge or a split (half each):

    * merge: an operand of rank 2 or 3 (sides from 4, 2, 8), two or (rank 3) three consecutive
      dimensions merged into one;
    * split: an operand of rank 1 or 2 (sides from 8, 4, 2), one dimension split into two or
      three consecutive ones (8 -> 2x4, 4x2, 2x2x2; 4 -> 2x2; 2 -> 2x1, 1x2);

    a mesh of up to 2 axes, mostly one that cuts the operand; the input spec mostly cutting a merged
    or the split dimension (``sharding_specs`` preferring them), the output spec mostly cutting a
    dimension the reshape makes. Shrinks towards a small merge or split (such as (4,) -> (2, 2)), its
    merged or split dimension cut, on all the devices in order."""
    axis_type = draw(sampled_from(tuple(axis_types)))
    if draw(sampled_from(("merge", "split"))) == "merge":
        rank = draw(st.integers(2, 3))
        shape = tuple(draw(sampled_from(SIDES)) for _ in range(rank))
        width = draw(st.integers(2, rank))
        first = draw(st.integers(0, rank - width))
        dims = tuple(range(first, first + width))
        new_shape = shape[:first] + (math.prod(shape[first:first + width]),) + shape[first + width:]
        kind, new_dims = "merge", (first,)
    else:
        rank = draw(st.integers(1, 2))
        shape = tuple(draw(sampled_from((8, 4, 2))) for _ in range(rank))
        dim = draw(st.integers(0, rank - 1))
        parts = draw(sampled_from(SPLITS[shape[dim]]))
        dims = (dim,)
        new_shape = shape[:dim] + parts + shape[dim + 1:]
        kind, new_dims = "split", tuple(range(dim, dim + len(parts)))
    mesh = draw(cutting_meshes(device_ids, shape, max_axes=2))
    in_spec = draw(sharding_specs(mesh, shape, prefer=dims))
    out_spec = draw(sharding_specs(mesh, new_shape, prefer=new_dims))
    return Reshape(mesh, axis_type, draw(small_ints(shape)), new_shape, kind, dims, new_dims, in_spec, out_spec)


# --- dot_general and einsum over drawn dimension numbers ---------------------------------------------
@dataclass(frozen=True)
class Contraction:
    """``lax.dot_general(x, y, ((contracting), (batch)))`` (``spelling`` "dot_general") or the same
    contraction as ``jnp.einsum(subscripts, x, y)`` ("einsum", its result's letters in ``out``'s
    order), ``x`` and ``y`` laid out as ``lhs_spec`` and ``rhs_spec``, the result asked for as
    ``out_spec`` (Auto meshes), on a mesh of ``axis_type`` axes.

    Letters name the logical dimensions: ``lhs``/``rhs`` spell the operands' dimensions (batch
    letters from "bc", contracting from "kl", x's free from "m", y's free from "n"), ``out`` the
    result's."""

    mesh: MeshModel
    axis_type: str
    spelling: str
    x: np.ndarray
    y: np.ndarray
    lhs: str
    rhs: str
    out: str
    lhs_spec: Spec
    rhs_spec: Spec
    out_spec: Spec

    @property
    def batch_letters(self) -> str:
        return "".join(c for c in self.lhs if c in "bc")

    @property
    def contracting_letters(self) -> str:
        return "".join(c for c in self.lhs if c in "kl")

    @property
    def contracting(self) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
        letters = self.contracting_letters
        return tuple(self.lhs.index(c) for c in letters), tuple(self.rhs.index(c) for c in letters)

    @property
    def batch(self) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
        letters = self.batch_letters
        return tuple(self.lhs.index(c) for c in letters), tuple(self.rhs.index(c) for c in letters)

    @property
    def dimension_numbers(self):
        return (self.contracting, self.batch)

    @property
    def subscripts(self) -> str:
        return f"{self.lhs},{self.rhs}->{self.out}"

    @property
    def out_shape(self) -> Shape:
        side = dict(zip(self.lhs, self.x.shape)) | dict(zip(self.rhs, self.y.shape))
        return tuple(side[c] for c in self.out)

    def focus_dims(self) -> Tuple[frozenset, frozenset]:
        """Per operand, its contracting and batch dimensions (where a cut tests the partitioner)."""
        (lc, rc), (lb, rb) = self.contracting, self.batch
        return frozenset(lc + lb), frozenset(rc + rb)


def dot_general_out(lhs: str, rhs: str) -> str:
    """``dot_general``'s result letters: batch (in the lhs's order), the lhs's free, the rhs's free."""
    batch = [c for c in lhs if c in rhs and c in "bc"]
    return "".join(batch + [c for c in lhs if c not in rhs] + [c for c in rhs if c not in lhs])


@st.composite
def contractions(draw, device_ids: Sequence[int], axis_types: Sequence[str] = ("Auto",)) -> Contraction:
    """0 or 1 batch dimensions, 1 or 2 contracting ones, 0 or 1 free dimension per operand (sides
    from 4, 2, 8), each operand's dimensions in a drawn order; spelled as ``dot_general`` or
    ``einsum`` (half each; einsum's result letters in a drawn order); int32 operands in -8..8; a
    mesh of up to 2 axes, mostly one that cuts them; each operand's spec mostly cutting one of its
    contracting or batch dimensions (``sharding_specs`` preferring them), the output spec as
    ``sharding_specs`` draws it. Shrinks towards ``dot_general`` of x[k] and y[k], k cut, on all the
    devices in order."""
    spelling = draw(sampled_from(("dot_general", "einsum")))
    axis_type = draw(sampled_from(tuple(axis_types)))
    batch = "b"[:draw(st.integers(0, 1))]
    contracted = "kl"[:draw(st.integers(1, 2))]
    lhs = "".join(draw(permuted(batch + contracted + "m"[:draw(st.integers(0, 1))])))
    rhs = "".join(draw(permuted(batch + contracted + "n"[:draw(st.integers(0, 1))])))
    side = {c: draw(sampled_from(SIDES)) for c in sorted(set(lhs + rhs))}
    out = dot_general_out(lhs, rhs)
    if spelling == "einsum":
        out = "".join(draw(permuted(out)))
    x_shape, y_shape = tuple(side[c] for c in lhs), tuple(side[c] for c in rhs)
    mesh = draw(cutting_meshes(device_ids, x_shape + y_shape, max_axes=2))
    focus = lambda term, other: [d for d, c in enumerate(term) if c in other]
    lhs_spec = draw(sharding_specs(mesh, x_shape, prefer=focus(lhs, rhs)))
    rhs_spec = draw(sharding_specs(mesh, y_shape, prefer=focus(rhs, lhs)))
    out_shape = tuple(side[c] for c in out)
    out_spec = draw(sharding_specs(mesh, out_shape))
    return Contraction(mesh, axis_type, spelling, draw(small_ints(x_shape)), draw(small_ints(y_shape)),
                       lhs, rhs, out, lhs_spec, rhs_spec, out_spec)


def contraction_reference(c: Contraction) -> np.ndarray:
    """numpy's answer: ``np.einsum`` over the letters (int32 stays int32; the sums are exact)."""
    return np.einsum(c.subscripts, c.x, c.y)
