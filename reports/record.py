"""The run record: one JSON file per run of the suites, what it holds, and how it is read back.

A record has a format tag, a status ("complete", or "incomplete" while the run is going or when it
was killed), the environment the run saw, a summary of outcomes, and one entry per test. It is
always replaced whole (written to a temporary file, then renamed), so a reader never sees half a
file. ``schema.json`` beside this module states the format; ``load`` checks a file against it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List

from .schema import SchemaError, validate

# /2 added each test's "random", "skip_kind" and "deviation" (structured fields that compare reads);
# a /1 record, written before them, is still read: those fields are then unknown (null).
# /3 added "fixed" to a deviation: a strict known deviation that did not reproduce (JAX fixed it).
FORMAT = "jax-conformance-report/3"
READABLE_FORMATS = (FORMAT, "jax-conformance-report/2", "jax-conformance-report/1")
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


def load(path) -> dict:
    """Read and check a run record (a ``report.json``, or a run folder holding one)."""
    file = resolve(path)
    if not file.exists():
        raise ReportError(f"{path}: no such report (expected a run folder or a {REPORT_NAME})")
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ReportError(f"{file}: not JSON ({e})") from None
    if not isinstance(record, dict) or record.get("format") not in READABLE_FORMATS:
        found = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise ReportError(f"{file}: not a conformance report (format {found!r}, expected one of "
                          f"{', '.join(map(repr, READABLE_FORMATS))})")
    try:
        validate(record, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    except SchemaError as e:
        raise ReportError(f"{file}: {e}") from None
    return record


def deviation_fixed(test: dict) -> bool:
    """A strict known deviation that did not reproduce in this run: JAX fixed it (its run failed,
    so that the entry's range gets narrowed, but it is not a regression)."""
    return bool((test.get("deviation") or {}).get("fixed"))


def run_label(record: dict) -> str:
    """``jax 0.10.2 · cpu x8`` (plus ``· incomplete``): how a run is named in tables."""
    env = record["environment"]
    label = f"jax {env['jax']} · {env['backend']} x{env['device_count']}"
    if env.get("process_count", 1) > 1:
        label += f" · {env['process_count']} processes"
    return label + (" · incomplete" if record["status"] != "complete" else "")
