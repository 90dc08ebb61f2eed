"""Strategies for PositionalSharding cases: a device order, an initial shape, and a chain of
``reshape`` / ``replicate`` operations, with the model's result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

from hypothesis import strategies as st

from conformance.positional import PositionalModel, apply_operations

from .meshes import factorizations, resolve_device_ids

# An operation is ("reshape", shape) or ("replicate", axis, keepdims); axis None means all axes.
Operation = tuple


def describe_operations(operations: Sequence[Operation]) -> str:
    """The chain as Python: ``.reshape(4, 2).replicate(0, keepdims=True)``."""
    parts = []
    for op in operations:
        if op[0] == "reshape":
            parts.append(f".reshape{tuple(op[1])}")
        else:
            keepdims = op[2] if len(op) > 2 else True
            parts.append(f".replicate({op[1]}, keepdims={keepdims})")
    return "".join(parts)


@dataclass(frozen=True)
class PositionalCase:
    """``PositionalSharding(np.array(devices).reshape(initial_shape))`` followed by ``operations``."""

    devices: Tuple[int, ...]
    initial_shape: Tuple[int, ...]
    operations: Tuple[Operation, ...]

    @property
    def model(self) -> PositionalModel:
        start = PositionalModel.of([*self.devices]).reshape(*self.initial_shape)
        return apply_operations(start, self.operations)


@st.composite
def operation(draw, model: PositionalModel, *, max_rank: int = 3) -> Operation:
    """One operation valid for ``model``: a reshape to any factorization of its set count (1 to
    ``max_rank`` dims), or a replicate along any axis (negative too) or all axes, with keepdims
    either way while the rank stays >= 1."""
    rank = len(model.shape)
    if draw(st.booleans()):
        return ("reshape", draw(st.sampled_from(factorizations(len(model.cells), 1, max_rank))))
    axis = draw(st.one_of(st.none(), st.integers(-rank, rank - 1)))
    keepdims = rank < 2 or axis is None or draw(st.booleans())
    return ("replicate", axis, keepdims)


@st.composite
def positional_cases(draw, device_ids: Optional[Sequence[int]] = None, *, max_ops: int = 3):
    """A device order (all devices or a leading subset, permuted or not), an initial shape from the
    factorizations of its size, and a chain of operations valid for the sets at each step."""
    ids = list(resolve_device_ids(device_ids))
    if len(ids) > 1 and draw(st.booleans()):
        ids = ids[:draw(st.integers(1, len(ids) - 1))]
    if len(ids) > 1 and draw(st.booleans()):
        ids = draw(st.permutations(ids))
    initial = draw(st.sampled_from(factorizations(len(ids), 1, 3)))
    model = PositionalModel.of(ids).reshape(*initial)
    ops = []
    for _ in range(draw(st.integers(0, max_ops))):
        ops.append(draw(operation(model)))
        model = apply_operations(model, ops[-1:])
    return PositionalCase(tuple(ids), tuple(initial), tuple(ops))
