"""Which suites run every property on every process of a multi-controller run (``--processes N``,
``multicontroller``), read from ``multi_controller.toml``; every other suite's properties skip
there, each with its suite's reason. A suite that the file does not name is a usage error, so no
suite is left out of a multi-process run without a reason."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Tuple

from conformance import toml_schema

from .devices import UsageError

READINESS_FILE = Path(__file__).with_name("multi_controller.toml")
SCHEMA = toml_schema.Schema(
    table="suite", holds="[[suite]] tables", named_by="name",
    keys=(toml_schema.Key("name", str, required=True), toml_schema.Key("runs", bool, required=True),
          toml_schema.Key("why", str), toml_schema.Key("except", list)))


@dataclass(frozen=True)
class Readiness:
    """One suite in a multi-controller run: whether its properties run there, and if not, why."""

    name: str
    runs: bool
    why: str
    # properties of a suite that runs, which do not yet: (glob pattern over the test's name with its
    # parameters, "test_x" or "test_y[*-Device-*]", why, the fewest processes of a run it holds for)
    excepted: Tuple[Tuple[str, str, int], ...] = ()


def load(path: Path = READINESS_FILE) -> Dict[str, Readiness]:
    """Every suite named in ``path``, by name; a suite that does not run must say why."""
    found = {}
    for entry in toml_schema.read(path, SCHEMA, UsageError)[1]:
        if not entry["runs"] and not entry.get("why"):
            entry.refuse("a suite that does not run multi-controller must say why", "why")
        excepted = []
        for rule in entry.get("except"):
            if not isinstance(rule, dict) or not {"test", "why"} <= set(rule) <= {"test", "why", "from_processes"} \
                    or not all(isinstance(rule[k], str) and rule[k].strip() for k in ("test", "why")) \
                    or not isinstance(rule.get("from_processes", 2), int) or rule.get("from_processes", 2) < 2:
                entry.refuse("except: each rule is { test = \"<test name or glob>\", why = \"<why>\" }, with "
                             "from_processes = N (N >= 2) where it holds only for runs of N processes or more",
                             "except")
            excepted.append((rule["test"], rule["why"], rule.get("from_processes", 2)))
        found[entry["name"]] = Readiness(entry["name"], entry["runs"], entry.get("why"), tuple(excepted))
    return found


def matches(pattern: str, name: str) -> bool:
    """Whether test ``name`` (with its parameters) is ``pattern``, where ``*`` stands for any text."""
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")), name) is not None


def skip_reason(suite: str, readiness: Dict[str, Readiness], prop: str = "", processes: int = 2) -> str:
    """Why property ``prop`` of ``suite`` skips in a multi-controller run of ``processes`` processes
    ("" where it runs)."""
    if suite not in readiness:
        raise UsageError(f"{READINESS_FILE.name} does not name suite {suite!r}: say whether it runs "
                         f"multi-controller, and if not, why")
    known = readiness[suite]
    if not known.runs:
        return f"not yet run multi-controller: {known.why}"
    for pattern, why, from_processes in known.excepted:
        if matches(pattern, prop) and processes >= from_processes:
            return f"not yet run multi-controller: {why}"
    return ""
