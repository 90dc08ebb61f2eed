"""The ways a catalogue operation (suites/test_sharding_invariance.py) or a generated program
(suites/test_programs.py) runs on sharded inputs, as a type.

Vocabulary:

- a **way** is one of (a) eagerly on committed sharded inputs, (b) under ``jit`` with
  ``in_shardings``/``out_shardings``, (c) under ``jit`` with sharding constraints inside (``reshard``
  on Explicit axes);
- its **label** (its value) starts the name of every check made in it (``(b) jit with
  in/out_shardings output v3``), which is what a known deviation's symptom matches with ``at``;
- its **letter** (``(b)``) names it where a subprocess reports what it ran (``(b)/(c) in a
  subprocess``: both jit ways in one interpreter);
- a known deviation's symptom names the ways it shows in (``ways = ["(b)", "(c)"]``), read from
  the failed check's name by ``ran_in``.

Code that asks which way a call ran in compares members (``call.way is Way.EAGER``), never a
prefix of a label.
"""

from __future__ import annotations

import enum
import re
from typing import FrozenSet, Tuple, Union


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
# a check's name starts with a way's label, or with letters joined by "/" (a subprocess's), then a space
LEADING_LETTERS = re.compile(r"^(\([abc]\)(?:/\([abc]\))*)(?: |$)")


def ran_in(check: str) -> FrozenSet[Way]:
    """The ways the check named ``check`` ran in, as its name starts: ``(b) jit with in/out_shardings
    output v3`` -> {(b)}, ``(b)/(c) in a subprocess`` -> {(b), (c)}; none for any other check."""
    for way in Way:
        if check == way.value or check.startswith(way.value + " "):
            return frozenset({way})
    found = LEADING_LETTERS.match(check)
    return frozenset(Way.of(letter) for letter in found[1].split("/")) if found else frozenset()
