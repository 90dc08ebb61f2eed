"""The type of an operation-catalogue entry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from hypothesis import strategies as st


@dataclass(frozen=True)
class Op:
    """One catalogue entry: an array operation to run on sharded inputs.

    * ``source``: the JAX function as Python text, a lambda over the operands with static arguments
      as keywords (``"lambda x, *, axis: jnp.sum(x, axis=axis)"``); the bridge evaluates it once
      (``bridge.function_of``), and reproduction scripts quote it as is;
    * ``reference``: numpy's answer, ``reference(*operands, **static)``;
    * ``inputs``: a strategy of ``(operands, static)``: numpy operands (which get shardings) and
      static keyword arguments (ints, tuples, slices: baked into the traced function);
    * ``rtol``/``atol``: the comparison, exact unless stated.
    """

    name: str
    family: str
    source: str
    reference: Callable
    inputs: st.SearchStrategy
    rtol: float = 0.0
    atol: float = 0.0
