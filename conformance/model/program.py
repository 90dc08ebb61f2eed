"""Generated programs, as data: chains of catalogue operations and layout changes over named
arrays, with numpy's value of every name (``strategies.programs`` draws them; the suites run them).

Vocabulary:

* a *value* is a named array of the program: an input ``x<i>`` (numpy data, placed by its spec), or
  a step's result ``v<i>``;
* a *step* is ``result = <catalogue entry>(operands, **static)``, or a *layout change*
  ``result = constrain(value, NamedSharding(mesh, spec))`` (``with_sharding_constraint``, or
  ``reshard`` on Explicit axes) or ``result = jax.device_put(value, ...)``;
* a *program* is a mesh and its axis type, its inputs with their specs, its steps, its outputs
  (with the specs a jit asks for them), the inputs a jit donates, and numpy's value of every name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from .layout import MeshModel, Spec

LAYOUT_CHANGES = ("constraint", "device_put")


@dataclass(frozen=True)
class Step:
    """``result = op(*operands, **static)``: ``op`` a catalogue entry (``strategies.ops.BY_NAME``)
    whose JAX function is ``source`` (a lambda, as the catalogue writes it), or a layout change
    (``LAYOUT_CHANGES``) of its one operand to ``spec``."""

    result: str
    op: str
    operands: Tuple[str, ...]
    static: Tuple[Tuple[str, object], ...] = ()
    spec: Optional[Spec] = None
    source: str = ""

    @property
    def changes_layout(self) -> bool:
        return self.op in LAYOUT_CHANGES

    @property
    def kwargs(self) -> dict:
        return dict(self.static)


@dataclass(frozen=True, eq=False)
class Program:
    """A drawn program and numpy's value of each of its values (``values``: name -> array)."""

    mesh: MeshModel
    axis_type: str
    inputs: Tuple[str, ...]
    in_specs: Tuple[Spec, ...]
    steps: Tuple[Step, ...]
    outputs: Tuple[str, ...]
    out_specs: Tuple[Spec, ...]
    donated: Tuple[int, ...]
    values: Tuple[Tuple[str, np.ndarray], ...]

    def value(self, name: str) -> np.ndarray:
        return dict(self.values)[name]

    @property
    def arrays(self) -> Tuple[np.ndarray, ...]:
        return tuple(self.value(name) for name in self.inputs)
