"""The ways a catalogue operation (suites/test_sharding_invariance.py) or a generated program
(suites/test_programs.py) runs on sharded inputs, as a type.

Vocabulary:

- a **way** is one of (a) eagerly on committed sharded inputs, (b) under ``jit`` with
  ``in_shardings``/``out_shardings``, (c) under ``jit`` with sharding constraints inside (``reshard``
  on Explicit axes);
- its **label** (its value) starts the name of every check made in it (``(b) jit with
  in/out_shardings output v3``), which is what a known deviation's symptom matches with ``at``;
- its **letter** (``(b)``) names it where a subprocess reports what it ran.

Code that asks which way a call ran in compares members (``call.way is Way.EAGER``), never a
prefix of a label.
"""

from __future__ import annotations

import enum
from typing import Tuple, Union


class Way(enum.StrEnum):
    """One way a sharded example runs (its value is its label)."""

    EAGER = "(a) eager"
    JIT_SHARDINGS = "(b) jit with in/out_shardings"
    JIT_CONSTRAINTS = "(c) jit with sharding constraints"

    @property
    def letter(self) -> str:
        """``(a)``, ``(b)`` or ``(c)``."""
        return self.value[:3]

    @property
    def jitted(self) -> bool:
        return self is not Way.EAGER

    @classmethod
    def of(cls, way: Union["Way", str]) -> "Way":
        """The way ``way`` names: a member, its label, or its letter; a ValueError otherwise."""
        for member in cls:
            if way in (member, member.value, member.letter):
                return member
        raise ValueError(f"{way!r} names no way: one of {', '.join(m.value for m in cls)} (or its letter)")


JIT_WAYS: Tuple[Way, ...] = (Way.JIT_SHARDINGS, Way.JIT_CONSTRAINTS)
