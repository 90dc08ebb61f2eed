"""Examples for the catalogue's operations: the operands and static arguments an entry draws,
numpy's answer, a mesh and axis type, a spec per operand and one for the output, drawn so that
most examples shard something, and the dimensions an operation works along most of all."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence, Tuple

import numpy as np
from hypothesis import strategies as st

from conformance.model.layout import MeshModel, Spec
from strategies.meshes import cutting_meshes
from strategies.odds import mostly
from strategies.reuse import sampled_from
from strategies.specs import can_cut, cutting_axes, cutting_specs, dividing_specs, pick

from .op import Op


@dataclass(frozen=True)
class ExampleParts:
    """One drawn example of an operation: its operands and static arguments, numpy's answer
    (``expected``), a mesh and axis type, one spec per operand and the requested output spec."""

    operands: Tuple[np.ndarray, ...]
    static: dict
    expected: np.ndarray
    mesh: MeshModel
    axis_type: str
    in_specs: Tuple[Spec, ...]
    out_spec: Spec


def focus_dims(op: Op, operands: Sequence[np.ndarray], static: dict) -> Tuple[Tuple[int, ...], ...]:
    """Per operand, the dimensions an operation works along, where a cut puts the partitioner to
    the test: those a reduction or scan reduces (its static ``axis``; None: all of them), those a
    contraction sums over (einsum's letters missing from the output; the last dimension of
    matmul's and dot's ``x`` and the contracted one of ``y``); none for other operations."""
    none = ((),) * len(operands)
    if op.family in ("reduction", "scan") and operands:
        rank = np.ndim(operands[0])
        axis = static.get("axis")
        if not rank:
            return none
        dims = range(rank) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        return (tuple(sorted({d % rank for d in dims})),) + none[1:]
    if op.family == "contraction":
        if "subscripts" in static:
            inputs, output = static["subscripts"].split("->")
            return tuple(tuple(d for d, letter in enumerate(term) if letter not in output)
                         for term in inputs.split(","))
        x, y = operands
        return (np.ndim(x) - 1,), (0 if np.ndim(y) == 1 else np.ndim(y) - 2,)
    return none


@st.composite
def catalogue_examples(draw, op: Op, device_ids: Sequence[int], axis_types: Sequence[str]) -> ExampleParts:
    """An example of ``op`` over devices from ``device_ids``, with axes of a type from
    ``axis_types``:

    * operands and static arguments from the op's ``inputs``, and numpy's answer;
    * a mesh (any sub-mesh or order, ``cutting_meshes``), mostly one with an axis of size > 1 that
      divides a side of the dimensions the op works along (``focus_dims``), else of any operand
      or the output;
    * a spec per operand and for the output that divides its shape: one of them, where any can
      be, cuts over an axis of size > 1 (``cutting_specs``; 3 in 4 an operand with focus
      dimensions where one can be cut, cut along one of them 3 in 4), the others are any dividing
      spec (replicated, or sharded on any dimensions, the reduced, scanned, sliced or joined ones
      included).

    The minimal example (every choice the simplest: the example Hypothesis runs first) cuts the
    first operand along its first focus dimension (else its first dimension an axis divides) over
    the first such axis of a mesh of all the devices in order: ``(2,)`` over ``'a'`` of a
    ``(2, 4)`` mesh for most entries. Choices are drawn whether or not they can matter, so that
    shrinking heads there too, rather than towards operands nothing can cut.
    """
    operands, static = draw(op.inputs)
    with np.errstate(all="ignore"), warnings.catch_warnings():  # integers wrap around, as in JAX; numpy's
        warnings.simplefilter("ignore", RuntimeWarning)  # nan-reductions warn of an all-NaN slice, and answer NaN
        expected = np.asarray(op.reference(*operands, **static))
    shapes = [np.shape(x) for x in operands] + [expected.shape]
    focus = focus_dims(op, operands, static) + ((),)
    focus_sides = [shape[d] for shape, dims in zip(shapes, focus) for d in dims if shape[d] > 1]
    mesh = draw(cutting_meshes(device_ids, focus_sides or [side for shape in shapes for side in shape]))
    axis_type = draw(sampled_from(tuple(axis_types)))
    cuttable = [k for k, shape in enumerate(shapes) if can_cut(mesh, shape)]
    focused = [k for k in cuttable if set(cutting_axes(mesh, shapes[k])) & set(focus[k])]
    take_focused = draw(mostly())  # drawn either way, as are the choices below (see specs.pick)
    cut = pick(draw, (focused if focused and take_focused else cuttable) or [0])
    specs = tuple(draw(cutting_specs(mesh, shape, prefer=focus[k], where_possible=True) if k == cut
                       else dividing_specs(mesh, shape))
                  for k, shape in enumerate(shapes))
    return ExampleParts(tuple(operands), static, expected, mesh, axis_type, specs[:-1], specs[-1])
