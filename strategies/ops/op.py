"""The type of an operation-catalogue entry."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Tuple

import numpy as np
from hypothesis import strategies as st

from conformance.model import dtypes


@dataclass(frozen=True)
class Op:
    """One catalogue entry: an array operation to run on sharded inputs.

    * ``source``: the JAX function as Python text, a lambda over the operands with static arguments
      as keywords (``"lambda x, *, axis: jnp.sum(x, axis=axis)"``); the bridge evaluates it once
      (``bridge.function_of``), and reproduction scripts quote it as is;
    * ``reference``: numpy's answer, ``reference(*operands, **static)``;
    * ``inputs``: a strategy of ``(operands, static)``: numpy operands (which get shardings) and
      static keyword arguments (ints, tuples, slices: baked into the traced function);
    * ``rtol``/``atol``: the comparison, exact unless stated;
    * ``result``: how the result's dtype follows from the operands' (a rule of
      ``conformance.model.dtypes.RULES``), the join of their types unless stated;
    * ``covers``: the public functions of JAX's namespaces that ``source`` calls by name, as
      ``"jnp.<name>"`` or ``"lax.<name>"`` (what the vocabulary's coverage counts; an operator such as
      ``x + y`` covers none).
    """

    name: str
    family: str
    source: str
    reference: Callable
    inputs: st.SearchStrategy
    rtol: float = 0.0
    atol: float = 0.0
    result: str = "promote"
    covers: Tuple[str, ...] = ()
    explicit: bool = True

    def __post_init__(self):
        if self.result not in dtypes.RULES:
            raise dtypes.UnknownRule(f"{self.name}: no dtype rule {self.result!r}; "
                                     f"the rules are {sorted(dtypes.RULES)}")
        bad = [name for name in self.covers if not re.fullmatch(r"(jnp|lax)\.[a-z_0-9]+", name)]
        if bad:
            raise ValueError(f"{self.name}: covers names {bad}; each must be 'jnp.<name>' or 'lax.<name>'")

    def result_dtype(self, operands: Iterable, *, x64: bool = False) -> np.dtype:
        """The model's dtype of this operation's result on ``operands`` (numpy, in order)."""
        return dtypes.of_operands(self.result, operands, x64)
