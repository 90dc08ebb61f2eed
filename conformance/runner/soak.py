"""The generated-program soak: rounds of one random property, each in a fresh pytest process with
its own seed, until a time budget is spent; the distinct failures of all rounds, one per shrunk
program.

A round that dies (an XLA CHECK failure aborts the interpreter) loses only itself: the property
writes each program it is about to run to ``$CONFORMANCE_PROGRAM_LOG``, and the crash becomes a
finding with that program's script.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from . import environment
from .pytest_process import run_pytest

ROUND_PROFILE = "soak-round"  # each round: the profile's examples x4 (about a minute of programs on 2 cores)
ROUND_GRACE_S = 180  # a round may end this long after the budget before it is stopped
INPUT_LINE = re.compile(r"^\s*x\d+ = np\.frombuffer\(.*$", re.MULTILINE)


@dataclass(frozen=True)
class Finding:
    """One distinct failure: its one-line message, its stand-alone script, the seeds of the rounds
    that found it, and how it ended (``failed``, or ``crashed`` with the signal)."""

    message: str
    repro: str
    kind: str
    seeds: tuple


@dataclass
class Soak:
    """What the rounds found so far."""

    rounds: int = 0
    examples: int = 0
    known: Dict[str, str] = field(default_factory=dict)  # known deviations seen: test id -> reason
    findings: Dict[str, Finding] = field(default_factory=dict)  # by program (the script without its data)
    stopped: str = ""  # a round the time-out stopped

    def add(self, message: str, repro: str, kind: str, seed: str) -> None:
        key = INPUT_LINE.sub("", repro) if repro else message
        old = self.findings.get(key)
        self.findings[key] = Finding(message, repro, kind, (old.seeds if old else ()) + (seed,))


def round_command(test_id: str, seed: str, report_dir: Path, extra: Sequence[str]) -> List[str]:
    return [test_id, "-q", "--hypothesis-seed", seed, "--hypothesis-profile", ROUND_PROFILE,
            "--report-dir", str(report_dir), *extra]


def read_round(soak: Soak, report_dir: Path, test_id: str, seed: str) -> Optional[str]:
    """Add a finished round's outcome to ``soak``; None, or why the round told nothing."""
    path = report_dir / "report.json"
    if not path.exists():
        return "it wrote no report"
    record = json.loads(path.read_text())
    entry = next((t for t in record.get("tests", []) if t["id"] == test_id), None)
    if entry is None:
        return "its report has no entry for the property"
    soak.examples += entry.get("examples") or 0
    if entry["outcome"] == "failed":
        soak.add(entry.get("message") or "failed", entry.get("repro") or "", "failed", seed)
    elif entry["outcome"] == "xfailed":
        soak.known[entry["id"]] = entry.get("reason") or ""
    return None


def run(test_id: str, minutes: float, first_seed: int, *, extra: Sequence[str] = ()) -> Soak:
    """Rounds of ``test_id`` (a property id) with seeds ``first_seed``, ``first_seed + 1``, ...
    until ``minutes`` are spent (the first round always runs; no other starts with less than a
    minute left; a round still
    running ``ROUND_GRACE_S`` after the budget is stopped, and said so); ``extra``: more pytest
    arguments (devices, backend, deviation list)."""
    soak = Soak()
    deadline = time.monotonic() + minutes * 60
    if minutes <= 0:
        raise ValueError(f"--soak-minutes {minutes}: the soak needs a positive time")
    while soak.rounds == 0 or time.monotonic() < deadline - 60:
        seed = str(first_seed + soak.rounds)
        soak.rounds += 1
        with tempfile.TemporaryDirectory(prefix="soak-round-") as folder:
            folder = Path(folder)
            log = folder / "program.py"
            try:
                result = run_pytest(round_command(test_id, seed, folder / "report", extra),
                                    env={environment.PROGRAM_LOG: str(log)},
                                    timeout=deadline - time.monotonic() + ROUND_GRACE_S)
            except subprocess.TimeoutExpired:
                soak.stopped = f"round {seed} was stopped {ROUND_GRACE_S} s after the time ran out"
                break
            if result.returncode < 0:
                program = log.read_text() if log.exists() else ""
                tail = "\n".join(result.stderr.strip().splitlines()[-5:])
                soak.add(f"the interpreter died (signal {-result.returncode}) running a program: {tail}",
                         program, "crashed", seed)
                continue
            problem = read_round(soak, folder / "report", test_id, seed)
            if problem is not None:
                tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-10:])
                soak.add(f"round {seed} exited {result.returncode} and {problem}: {tail}", "", "broken", seed)
    return soak


def summary(soak: Soak) -> str:
    """Every finding, numbered, with its rounds' seeds and its script."""
    parts = [f"{len(soak.findings)} distinct failure(s) in {soak.rounds} round(s), {soak.examples} programs"
             + (f"; {soak.stopped}" if soak.stopped else "")
             + (f"; known deviations seen: {', '.join(sorted(soak.known))}" if soak.known else "")]
    for n, finding in enumerate(soak.findings.values(), 1):
        parts.append(f"\n[{n}] {finding.kind} (seeds {', '.join(finding.seeds)}): {finding.message}")
    return "\n".join(parts)


def scripts(soak: Soak) -> str:
    return "\n\n".join(f"# [{n}] {finding.kind}, seeds {', '.join(finding.seeds)}\n{finding.repro}"
                       for n, finding in enumerate(soak.findings.values(), 1))


def log_program(text: str, path: Optional[str]) -> None:
    """Write the program about to run to ``path`` (``$CONFORMANCE_PROGRAM_LOG``), when set."""
    if path:
        Path(path).write_text(text)
