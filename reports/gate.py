"""The upgrade gate: the verdict of ``python -m reports compare BASE NEW``, the question "can we move
from the JAX of BASE to the JAX of NEW".

Vocabulary:

* a verdict is *safe* (exit 0: no property that held on BASE fails or is a known deviation on NEW,
  apart from the regressions a team has accepted), *regressions* (exit 1) or *not comparable*
  (exit 3: the two runs do not measure the same thing, so no change between them means anything);
* a *known regression* is a property that passes on BASE and is a known deviation on NEW: a strict
  entry's xfail, or a random property whose examples an entry excused on NEW that is not in effect
  on BASE's JAX (an excuse that BASE's JAX could have used too is only a draw);
* an *acceptance* is a regression a team has decided to take on, written in a file given with
  ``--accept`` (``[[accept]]`` tables: ``test``, the property's id as the report has it, and
  ``reason``, why it is taken; ``jax``, optional, the NEW releases it holds for);
* two runs are *comparable* when both are complete, ran tests, ran the same selection (paths,
  ``-m``, ``-k``, ``--deselect``), on the same backend, device and process count, profile, example
  count and x64 setting, and, run by the same suite commit, the same properties.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from conformance import toml_schema

from .compare import REGRESSIONS as GATED
from .compare import Change, ordered
from .record import ReportError, format_version, run_options

SAFE, REGRESSIONS, NOT_COMPARABLE = "safe", "regressions", "not comparable"
EXIT_STATUS = {SAFE: 0, REGRESSIONS: 1, NOT_COMPARABLE: 3}
SELECTION_FORMAT = 7  # the first report format that records the selection

# What must agree between the two runs, as (environment key, how it is named to a reader).
SAME_RUN = (("backend", "backend"), ("device_count", "device count"), ("process_count", "process count"),
            ("profile", "Hypothesis profile"), ("max_examples", "examples per property"), ("x64", "x64"))
SELECTION_PARTS = (("paths", "paths"), ("markers", "-m"), ("keywords", "-k"), ("deselect", "--deselect"))
ACCEPT_SCHEMA = toml_schema.Schema(
    table="accept", holds="[[accept]] tables", noun="acceptance",
    keys=(toml_schema.Key("test", str, required=True), toml_schema.Key("reason", str, required=True),
          toml_schema.Key("jax", str)))


@dataclass(frozen=True)
class Acceptance:
    """A regression a team has decided to take on: the property, why, and (optionally) the NEW
    JAX releases it holds for; ``where`` is its ``file:line``."""

    test: str
    reason: str
    jax: str
    where: str

    def covers(self, test: str, new_jax: str) -> bool:
        return test == self.test and (not self.jax or SpecifierSet(self.jax).contains(new_jax, prereleases=True))


@dataclass(frozen=True)
class Verdict:
    """The gate's answer: its name, why (each line one reason or count), and the changes behind it."""

    name: str
    reasons: Tuple[str, ...]
    changes: Tuple[Change, ...]

    @property
    def exit_status(self) -> int:
        return EXIT_STATUS[self.name]

    def line(self) -> str:
        return f"VERDICT: {self.name.upper()}" + (f" ({'; '.join(self.reasons)})" if self.reasons else "")


# --- comparability ---------------------------------------------------------------------------
def selection_words(selection: Optional[dict]) -> str:
    """A selection as pytest arguments (``suites/ -m mesh``)."""
    if not selection:
        return "suites/"
    words = list(selection.get("paths") or ["suites/"])
    if selection.get("markers"):
        words += ["-m", selection["markers"]]
    if selection.get("keywords"):
        words += ["-k", selection["keywords"]]
    for node in selection.get("deselect") or ():
        words += ["--deselect", node]
    return " ".join(shlex.quote(w) for w in words)


def rerun_command(base: dict) -> str:
    """The command that runs the suites as BASE ran them (with the installed JAX)."""
    env = base["environment"]
    return " ".join(["pytest", selection_words(env.get("selection")), *run_options(env)])


def run_problems(name: str, record: dict) -> List[str]:
    """Why one run cannot stand in a comparison: incomplete (and where it stopped), or no test."""
    problems = []
    if record["status"] != "complete":
        running = record.get("running")
        problems.append(f"{name} is incomplete" + (f" (it stopped in {running})" if running else
                                                   " (it stopped before it ended)"))
    if not record["tests"]:
        problems.append(f"{name} ran no test")
    return problems


def shown(value) -> str:
    return "none" if value in (None, "", [], ()) else (" ".join(value) if isinstance(value, list) else str(value))


def part_words(label: str, value) -> str:
    """One part of a selection as a reader would type it (``-m 'mesh or visualize'``, ``no -k``)."""
    if value in (None, "", [], ()):
        return f"no {label}"
    return f"{label} " + " ".join(shlex.quote(v) for v in (value if isinstance(value, list) else [value]))


def differences(base: dict, new: dict) -> List[str]:
    """How NEW was run unlike BASE: selection, backend, devices, profile (each one reason)."""
    b, n = base["environment"], new["environment"]
    out = []
    for key, label in SAME_RUN:
        if key in b and key in n and b[key] != n[key]:
            out.append(f"NEW ran with {label} {shown(n[key])} (BASE: {shown(b[key])})")
    if format_version(base) >= SELECTION_FORMAT and format_version(new) >= SELECTION_FORMAT:
        bs, ns = b.get("selection") or {}, n.get("selection") or {}
        for key, label in SELECTION_PARTS:
            if (bs.get(key) or None) != (ns.get(key) or None):
                out.append(f"NEW selected other tests: {part_words(label, ns.get(key))} "
                           f"(BASE: {part_words(label, bs.get(key))})")
    return out


def missing_properties(base: dict, new: dict) -> List[str]:
    """Properties one run has and the other lacks, when the same suite commit ran both (a run of the
    same suite and selection holds the same properties; with another commit they are the suite's
    change, listed as added or removed)."""
    commit = lambda r: ((r["environment"].get("suite") or {}).get("commit"))
    if commit(base) is None or commit(base) != commit(new):
        return []
    before, after = {t["id"] for t in base["tests"]}, {t["id"] for t in new["tests"]}
    out = []
    for name, lacking in (("NEW", sorted(before - after)), ("BASE", sorted(after - before))):
        if lacking:
            out.append(f"{name} lacks {len(lacking)} propert{'y' if len(lacking) == 1 else 'ies'} the other ran "
                       f"(first: {lacking[0]})")
    return out


def comparability(base: dict, new: dict) -> List[str]:
    """Every reason the two runs are not comparable (empty when they are)."""
    return (run_problems("BASE", base) + run_problems("NEW", new) + differences(base, new)
            + missing_properties(base, new))


# --- acceptances ------------------------------------------------------------------------------
def load_acceptances(path: Path) -> List[Acceptance]:
    """Read an ``--accept`` file; a malformed one is a ReportError naming ``file:line``."""
    if not path.is_file():
        raise ReportError(f"--accept {path}: no such file")
    out = []
    for entry in toml_schema.read(path, ACCEPT_SCHEMA, error=ReportError)[1]:
        try:
            SpecifierSet(entry.get("jax"))
        except InvalidSpecifier:
            entry.refuse(f"has an invalid jax range {entry['jax']!r} (a quoted range, e.g. \">=0.12\")", "jax")
        out.append(Acceptance(test=entry["test"], reason=entry["reason"], jax=entry.get("jax"), where=entry.where()))
    return out


def with_acceptances(changes: Sequence[Change], acceptances: Sequence[Acceptance], new_jax: str) -> List[Change]:
    """``changes`` with the regressions a team accepted turned into ``accepted`` (the reason shown)."""
    out = []
    for c in changes:
        taken = next((a for a in acceptances if c.kind in GATED and a.covers(c.test, new_jax)), None)
        out.append(Change("accepted", c.test, c.base, c.new, f"{c.detail} | accepted at {taken.where}: {taken.reason}")
                   if taken else c)
    return ordered(out)


def unused_acceptances(changes: Sequence[Change], acceptances: Sequence[Acceptance]) -> List[Acceptance]:
    """Acceptances that matched no regression (stale, or for another pair of releases)."""
    used = {c.test for c in changes if c.kind == "accepted"}
    return [a for a in acceptances if a.test not in used]


# --- the verdict -----------------------------------------------------------------------------


def verdict(base: dict, new: dict, changes: Sequence[Change]) -> Verdict:
    """The gate's verdict on ``changes`` (compare's, with known regressions, replays and acceptances)."""
    problems = comparability(base, new)
    if problems:
        return Verdict(NOT_COMPARABLE, tuple(problems + [f"rerun as BASE ran: {rerun_command(base)}"]), tuple(changes))
    counts: Dict[str, int] = {}
    for c in changes:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    if any(c.kind in GATED for c in changes):
        words = [f"{counts[k]} {label}" for k, label in (("regression", "regression(s)"),
                                                          ("new-failure", "new failing propert(ies)"),
                                                          ("known-regression", "known regression(s)")) if counts.get(k)]
        return Verdict(REGRESSIONS, tuple(words), tuple(changes))
    words = [f"{counts['accepted']} accepted regression(s)"] if counts.get("accepted") else []
    return Verdict(SAFE, tuple(words), tuple(changes))
