"""Strategies for PositionalSharding chains: a device order, an initial shape, and a chain of
``reshape`` / ``replicate`` operations valid at each step."""

from __future__ import annotations

from typing import Sequence

from hypothesis import strategies as st

from conformance.model.positional import Operation, PositionalChain, PositionalModel, apply_operations

from .meshes import factorizations, leading
from .reuse import permuted, sampled_from


@st.composite
def operation(draw, model: PositionalModel, *, max_rank: int = 3) -> Operation:
    """One operation valid for ``model``: a reshape to any factorization of its set count (1 to
    ``max_rank`` dims), or a replicate along any axis (negative too) or all axes, with keepdims
    either way while the rank stays >= 1."""
    rank = len(model.shape)
    if draw(st.booleans()):
        return ("reshape", draw(sampled_from(factorizations(len(model.cells), 1, max_rank))))
    axis = draw(st.one_of(st.none(), st.integers(-rank, rank - 1)))
    keepdims = rank < 2 or axis is None or draw(st.booleans())
    return ("replicate", axis, keepdims)


@st.composite
def positional_chains(draw, device_ids: Sequence[int], *, max_ops: int = 3) -> PositionalChain:
    """A chain over ``device_ids``:

    * a device order: all of them or a leading subset, permuted or not;
    * an initial shape from the factorizations of its size;
    * 0 to ``max_ops`` operations, each valid for the sets at its step.
    """
    ids = list(device_ids)
    if len(ids) > 1 and draw(st.booleans()):
        ids = leading(device_ids, draw(st.integers(1, len(ids) - 1)))
    if len(ids) > 1 and draw(st.booleans()):
        ids = draw(permuted(ids))
    initial = draw(sampled_from(factorizations(len(ids), 1, 3)))
    model = PositionalModel.of(ids).reshape(*initial)
    ops = []
    for _ in range(draw(st.integers(0, max_ops))):
        ops.append(draw(operation(model)))
        model = apply_operations(model, ops[-1:])
    return PositionalChain(tuple(ids), tuple(initial), tuple(ops))
