"""How a known deviation shows, and whether a failure is it.

Vocabulary:

* a **failure** is what a property or a reproduction raised: a ``ConformanceFailure`` (a check of
  ``Case`` disagreed: its ``check`` names it, ``shows`` says what it saw, ``raised`` the exception a
  call raised where it should have returned) or any other exception (the call itself raised);
* ``Seen`` is a failure reduced to what a symptom is matched against: the exception class name (or
  none, for a wrong value), its message (or the check's finding), the check's name, what it shows;
* a ``Symptom`` is an entry's statement of how its deviation shows: an exception (``raises``, one
  or more class names, a ``match`` pattern searched in its message, and ``raised_in``, a pattern
  searched in the innermost frame that raised it, ``module.function``: what names a bare
  ``AssertionError``, whose message is empty), or a wrong outcome
  (``wrong``: values, layout, dtype, shape, mismatch or accepted) at a named check (``at``, a
  pattern searched in the check's name: the step of a program, the output), in the ways it names
  (``ways``: ``conformance.checking.ways``, read from the check's name by ``ran_in``) and, for a random
  property's wrong values or layout, how they are wrong (``where``, a pattern of
  ``conformance.checking.wrongness`` that must hold for what the check compared), and, for a
  random property, the kind of mesh (``mesh``: Auto or Explicit) it is limited to.

A failure of the oracle (the unsharded run and its comparison with numpy, run inside
``Case.oracle()``, which tags it: ``Seen.oracle``) is never explained by a symptom: the oracle is
what every other check meets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Sequence, Tuple

from . import wrongness
from .case import SHOWS, ConformanceFailure, is_oracle_failure
from .ways import Way, ran_in

MESH_KINDS = ("Auto", "Explicit")
SYMPTOM_KEYS = ("raises", "match", "raised_in", "wrong", "at", "ways", "where", "mesh")


@dataclass(frozen=True)
class Seen:
    """A failure as symptoms read it: ``raised`` (an exception class name, "" for a wrong outcome),
    ``message`` (the exception's message, or the check's one-line finding), ``check`` (the name of
    the check that failed, "" for an exception of the test itself), ``shows`` (one of SHOWS),
    ``oracle`` (raised inside ``Case.oracle()``: never a symptom) and, for a wrong outcome, what the
    check compared (``expected``, ``got``)."""

    raised: str
    message: str
    check: str
    shows: str
    frame: str = ""  # where an exception was raised: its innermost frame, ``module.function``
    expected: object = field(default=None, compare=False, repr=False)
    got: object = field(default=None, compare=False, repr=False)
    oracle: bool = False

    @classmethod
    def of(cls, failure: BaseException) -> "Seen":
        oracle = is_oracle_failure(failure)
        if isinstance(failure, ConformanceFailure):
            if failure.shows == "raised":  # (the call's exception is the context the failure was raised in)
                return cls(failure.raised, failure.raised_message, failure.check, "raised",
                           getattr(failure, "raised_in", "") or innermost_frame(failure.__context__), oracle=oracle)
            return cls("", failure.finding, failure.check, failure.shows or "mismatch",
                       expected=failure.expected, got=failure.got, oracle=oracle)
        return cls(type(failure).__name__, str(failure), "", "raised", innermost_frame(failure), oracle=oracle)

    def describe(self) -> str:
        """One line: ``ValueError 'msg' at check '...'`` or ``wrong values at check '...'``."""
        at = f" at check {self.check!r}" if self.check else ""
        message = " ".join(self.message.split())
        message = message if len(message) <= 200 else message[:200] + " ..."
        if self.shows == "raised":
            return f"{self.raised} {message!r}{at}"
        return f"wrong {self.shows}{at}: {message}"


def innermost_frame(exception: Optional[BaseException]) -> str:
    """``module.function`` of the innermost frame of ``exception``'s traceback ("" without one)."""
    tb = getattr(exception, "__traceback__", None)
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return f"{tb.tb_frame.f_globals.get('__name__', '?')}.{tb.tb_frame.f_code.co_name}"


@dataclass(frozen=True)
class Symptom:
    """How a deviation shows (see the module's vocabulary): exactly one of ``raises`` and
    ``wrong``; ``match`` and ``at`` are regular expressions, searched."""

    raises: Tuple[str, ...] = ()
    match: str = ""
    wrong: str = ""
    at: str = ""
    mesh: str = ""
    raised_in: str = ""
    where: str = ""  # a name in conformance.checking.wrongness.WRONGNESS
    ways: Tuple[Way, ...] = ()  # the ways the failed check must have run in (ways.ran_in); () any

    @classmethod
    def parse(cls, table) -> "Symptom":
        """A symptom from its TOML table; a ValueError says what is wrong with it, in one line."""
        if not isinstance(table, dict):
            raise ValueError(f"symptom must be a table ({{ raises = ..., match = ... }} or "
                             f"{{ wrong = ..., at = ... }}), not {table!r}")
        unknown = sorted(set(table) - set(SYMPTOM_KEYS))
        if unknown:
            raise ValueError(f"symptom has unknown key(s) {', '.join(unknown)} (known: {', '.join(SYMPTOM_KEYS)})")
        raises = table.get("raises", ())
        raises = (raises,) if isinstance(raises, str) else tuple(raises)
        if not all(isinstance(r, str) and r.isidentifier() for r in raises):
            raise ValueError(f"symptom raises = {table.get('raises')!r}: name exception classes, e.g. \"ValueError\"")
        wrong = table.get("wrong", "")
        if bool(raises) == bool(wrong):
            raise ValueError("symptom must say either raises (an exception) or wrong (a wrong outcome at a check)")
        if wrong and (wrong not in SHOWS or wrong == "raised"):
            raise ValueError(f"symptom wrong = {wrong!r}, not one of "
                             f"{', '.join(s for s in SHOWS if s != 'raised')}")
        mesh = table.get("mesh", "")
        if mesh and mesh not in MESH_KINDS:
            raise ValueError(f"symptom mesh = {mesh!r}, not one of {', '.join(MESH_KINDS)}")
        for key in ("match", "at", "raised_in"):
            try:
                re.compile(table.get(key, ""))
            except (re.error, TypeError) as e:
                raise ValueError(f"symptom {key} = {table.get(key)!r} is not a regular expression: {e}") from None
        where = table.get("where", "")
        if where and where not in wrongness.WRONGNESS:
            raise ValueError(f"symptom where = {where!r}, not one of {', '.join(wrongness.WRONGNESS)}")
        if where and wrongness.SHOWN_BY[where] != wrong:
            raise ValueError(f"symptom where = {where!r} says how {wrongness.SHOWN_BY[where]} are wrong: it goes "
                             f"with wrong = \"{wrongness.SHOWN_BY[where]}\"")
        named = table.get("ways", [])
        if "ways" in table and (not isinstance(named, list) or not named):
            raise ValueError(f"symptom ways = {named!r}: a list of the ways it shows in, e.g. [\"(b)\", \"(c)\"]")
        try:
            ways = tuple(Way.of(w) for w in named)
        except ValueError as e:
            raise ValueError(f"symptom ways: {e}") from None
        if table.get("raised_in") and not raises:
            raise ValueError("symptom raised_in names where an exception is raised: it goes with raises")
        if table.get("match") == "^$" and not table.get("raised_in"):
            raise ValueError("symptom raises an exception with an empty message (a bare assert, anywhere in JAX): name "
                             "the function that raises it (raised_in = a pattern of the innermost frame's "
                             "'module.function'), or match its message")
        return cls(raises, table.get("match", ""), wrong, table.get("at", ""), mesh, table.get("raised_in", ""), where,
                   ways)

    def describe(self) -> str:
        what = ("raises " + " or ".join(self.raises)) if self.raises else f"wrong {self.wrong}"
        parts = [what]
        if self.match:
            parts.append(f"message matching {self.match!r}")
        if self.raised_in:
            parts.append(f"raised in {self.raised_in!r}")
        if self.ways:
            parts.append(f"in {'/'.join(w.letter for w in self.ways)}")
        if self.at:
            parts.append(f"at a check matching {self.at!r}")
        if self.where:
            parts.append(f"where {self.where}")
        if self.mesh:
            parts.append(f"on {self.mesh} meshes")
        return ", ".join(parts)

    def why_not(self, seen: Seen, mesh_kind: Optional[str] = None, candidates: Sequence[object] = ()) -> Optional[str]:
        """None when ``seen`` (on a mesh of ``mesh_kind``, when the property says; of an example
        whose ``candidates`` a ``where`` pattern reads) is this symptom; otherwise the first reason
        it is not, as a phrase."""
        if seen.oracle:
            return "a failure of the oracle (the unsharded run, or its comparison with numpy) is never excused"
        if self.mesh and mesh_kind is None:
            return f"the symptom is limited to {self.mesh} meshes, and this property does not say its mesh's kind"
        if self.mesh and mesh_kind != self.mesh:
            return f"the mesh is {mesh_kind}, the symptom is limited to {self.mesh} meshes"
        if self.raises:
            if seen.shows != "raised" or seen.raised not in self.raises:
                return f"expected {' or '.join(self.raises)}, saw {seen.describe()}"
        elif seen.shows != self.wrong:
            return f"expected wrong {self.wrong}, saw {seen.describe()}"
        if self.match and not re.search(self.match, seen.message):
            return f"the message does not match {self.match!r}: saw {seen.describe()}"
        if self.raised_in and not re.search(self.raised_in, seen.frame):
            return f"it was raised in {seen.frame or 'an unknown frame'}, not one matching {self.raised_in!r}"
        ran = ran_in(seen.check) if self.ways else frozenset()
        if self.ways and not ran & set(self.ways):
            return (f"the check ran in {'/'.join(sorted(w.letter for w in ran)) or 'no way'}, not in "
                    f"{'/'.join(w.letter for w in self.ways)}: saw {seen.describe()}")
        if self.at and not re.search(self.at, seen.check):
            return f"the check is not one matching {self.at!r}: saw {seen.describe()}"
        if self.where and not wrongness.holds(self.where, candidates, seen.expected, seen.got):
            return (f"its {self.wrong} are not wrong as {self.where} says "
                    f"({' '.join(wrongness.WRONGNESS[self.where].__doc__.split())}): saw {seen.describe()}")
        return None
