"""The run record: one JSON file per run of the suites, what it holds, and how it is read back.

A record has a format tag, a status ("complete", or "incomplete" while the run is going or when it
was killed), the environment the run saw, a summary of outcomes, and one entry per test. It is
always replaced whole (written to a temporary file, then renamed), so a reader never sees half a
file. ``schema.json`` beside this module states the format; ``load`` checks a file against it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Callable, Dict, List

from .schema import SchemaError, validate

# /2 added each test's "random", "skip_kind" and "deviation" (structured fields that compare reads);
# a /1 record, written before them, is still read: those fields are then unknown (null).
# /3 added "fixed" to a deviation: a strict known deviation that did not reproduce (JAX fixed it).
# /4 added the suite's version and commit, the deviation files read (with their digests) and the
# peak resident memory of the run's processes (environment), and each test's peak_rss_mib and its
# deviation's source. From /4 on, a reader takes a newer format, and keys it does not know, with a
# note instead of refusing (a key a newer suite adds is skipped; one it removes is still an error).
# /5 added each test's "excused": the examples of a random property that its known deviations
# excused, per entry (label, file:line, range, trigger, symptom, count), and a deviation's symptom.
FORMAT_NAME = "jax-conformance-report"
# /6 added each failed test's "seen": its failure as a deviation's symptom reads it (the exception
# raised and its message, or the check that failed and what it shows).
# /7 added the run's selection (paths, -m, -k, --deselect: compare's gate checks both runs made the
# same one), each deviation's and excusing entry's kind and upstream link, a deviation's file:line,
# and each failed test's rerun command.
# /8 added each test's "refusals": the examples whose call JAX refused where our sharding-rule model
# says it rejects it (or has no rule for it), so the refusal was accepted, per kind of refusal.
# /9 added a failed test's "seen" frame: the innermost frame (module.function) that raised it, which a
# symptom's raised_in reads, so the bisection over releases judges those symptoms too.
# /10 added each test's programs asked for, programs the persistent compilation cache served, and
# programs asked for twice (their count, and the first ones with the property that asked first), and
# the run's compilation cache (its folder or why none, and whether programs were counted).
# /11 added each test's "sharded_runs": per function and way (or context) it ran, the examples that ran
# it and how many of them sharded an operand or the result (conformance/runner/tally.py).
FORMAT_VERSION = 11
FORMAT = f"{FORMAT_NAME}/{FORMAT_VERSION}"
SCHEMA_PATH = Path(__file__).with_name("schema.json")
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
REPORT_NAME = "report.json"


class ReportError(ValueError):
    """A file that is not a readable run record; the message names the file and what is wrong."""


def summary(tests: List[dict]) -> Dict[str, int]:
    counts = {outcome: 0 for outcome in OUTCOMES}
    for test in tests:
        counts[test["outcome"]] += 1
    counts["total"] = len(tests)
    return counts


def dump(record: dict) -> str:
    return json.dumps(record, indent=1, sort_keys=False) + "\n"


def resolve(path) -> Path:
    """A run folder or a report file, as the report file's path."""
    path = Path(path)
    return path / REPORT_NAME if path.is_dir() else path


def to_stderr(message: str) -> None:
    print(f"note: {message}", file=sys.stderr)


def format_version(record) -> int:
    """The format number of a record's tag (``jax-conformance-report/3`` -> 3), or 0 when the tag is
    not one of this suite's."""
    tag = record.get("format") if isinstance(record, dict) else None
    found = re.fullmatch(rf"{FORMAT_NAME}/(\d+)", tag) if isinstance(tag, str) else None
    return int(found[1]) if found else 0


def load(path, note: Callable[[str], None] = to_stderr) -> dict:
    """Read and check a run record (a ``report.json``, or a run folder holding one). A record of a
    newer format, or with keys this reader does not know, is read with a ``note`` saying so."""
    file = resolve(path)
    if not file.exists():
        raise ReportError(f"{path}: no such report (expected a run folder or a {REPORT_NAME})")
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ReportError(f"{file}: not JSON ({e})") from None
    version = format_version(record)
    if not version:
        found = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise ReportError(f"{file}: not a conformance report (format {found!r}, expected "
                          f"'{FORMAT_NAME}/N')")
    unknown: List[str] = []
    try:
        validate(record, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")), unknown=unknown)
    except SchemaError as e:
        raise ReportError(f"{file}: {e}") from None
    if version > FORMAT_VERSION:
        note(f"{file}: written by a newer suite (format {record['format']}; this one reads up to "
             f"{FORMAT}): read as {FORMAT}, anything newer is left out")
    if unknown:
        shown = ", ".join(sorted({re.sub(r"\[\d+\]", "[]", key) for key in unknown}))
        note(f"{file}: keys this reader does not know were skipped: {shown}")
    return record


def deviation_fixed(test: dict) -> bool:
    """A strict known deviation that did not reproduce in this run: JAX fixed it (its run failed,
    so that the entry's range gets narrowed, but it is not a regression)."""
    return bool((test.get("deviation") or {}).get("fixed"))


def run_options(env: dict) -> List[str]:
    """The pytest options that run the suites on what a run with environment ``env`` ran on: its
    devices (or backend), its Hypothesis profile and x64."""
    words = [f"--devices {env['device_count']}" if env.get("backend") == "cpu" else f"--backend {env['backend']}"]
    if env.get("profile") and env["profile"] != "default":
        words.append(f"--hypothesis-profile={env['profile']}")
    if env.get("x64"):
        words.append("--x64")
    return words


def run_label(record: dict) -> str:
    """``jax 0.10.2 · cpu x8`` (plus ``· incomplete``): how a run is named in tables."""
    env = record["environment"]
    label = f"jax {env['jax']} · {env['backend']} x{env['device_count']}"
    if env.get("process_count", 1) > 1:
        label += f" · {env['process_count']} processes"
    return label + (" · incomplete" if record["status"] != "complete" else "")
