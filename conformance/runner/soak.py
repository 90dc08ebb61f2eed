"""The generated-program soak: rounds of one random property, each in a fresh pytest process with
its own seed, until a time budget is spent; the distinct failures of all rounds, one per shrunk
program.

A round that dies (an XLA CHECK failure aborts the interpreter) loses only itself: the property
writes each program it is about to run to ``$CONFORMANCE_PROGRAM_LOG``, and the crash becomes a
finding with that program's script.

The examples the known deviations excused and the refusals accepted (each round's run report, per
entry and per kind of refusal) are summed over the rounds: the summary lists them, and
``record_counts`` puts them in the soak's own run report as a random property's are.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from . import environment, state
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
    # per entry (its file:line and label): the rounds' report entry, its "excused" their sum
    excused: Dict[Tuple[str, str], dict] = field(default_factory=dict)
    refusals: Dict[str, int] = field(default_factory=dict)  # per kind of refusal accepted: examples, summed

    def add(self, message: str, repro: str, kind: str, seed: str) -> None:
        key = INPUT_LINE.sub("", repro) if repro else message
        old = self.findings.get(key)
        self.findings[key] = Finding(message, repro, kind, (old.seeds if old else ()) + (seed,))

    def add_counts(self, entry: dict) -> None:
        """Add a round's property entry's excused examples (per known deviation) and accepted
        refusals (per kind) to the sums over the rounds."""
        for excused in entry.get("excused") or ():
            key = (excused.get("where") or "", excused["entry"])
            old = self.excused.get(key)
            self.excused[key] = dict(excused, excused=excused["excused"] + (old["excused"] if old else 0))
        for refusal in entry.get("refusals") or ():
            self.refusals[refusal["refusal"]] = self.refusals.get(refusal["refusal"], 0) + refusal["examples"]

    def excused_report(self) -> List[dict]:
        """Per known deviation that excused examples in some round: the run report's entry, its
        count summed over the rounds (``Excuses.report``'s form)."""
        return [self.excused[key] for key in sorted(self.excused)]

    def refusals_report(self) -> List[dict]:
        """Per kind of refusal accepted in some round: examples summed over the rounds
        (``Excuses.refusals``' form)."""
        return [{"refusal": what, "examples": n} for what, n in sorted(self.refusals.items())]


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
    soak.add_counts(entry)
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
    """Every finding, numbered, with its rounds' seeds and its script, after the examples each known
    deviation excused and the refusals accepted, summed over the rounds."""
    parts = [f"{len(soak.findings)} distinct failure(s) in {soak.rounds} round(s), {soak.examples} programs"
             + (f"; {soak.stopped}" if soak.stopped else "")
             + (f"; known deviations seen: {', '.join(sorted(soak.known))}" if soak.known else "")]
    excused = soak.excused_report()
    if excused:
        parts.append(f"examples excused by known deviations, over the rounds ({sum(e['excused'] for e in excused)}):")
        parts += [f"  {e['excused']:>5}  {e['entry']}" + (f" [{e['where']}]" if e.get("where") else "")
                  for e in excused]
    refusals = soak.refusals_report()
    if refusals:
        parts.append(f"refusals accepted as our sharding-rule model says, over the rounds "
                     f"({sum(r['examples'] for r in refusals)}):")
        parts += [f"  {r['examples']:>5}  {r['refusal']}" for r in refusals]
    for n, finding in enumerate(soak.findings.values(), 1):
        parts.append(f"\n[{n}] {finding.kind} (seeds {', '.join(finding.seeds)}): {finding.message}")
    return "\n".join(parts)


def record_counts(soak: Soak, record_property: Callable[[str, object], None]) -> None:
    """Put the soak's excused examples and accepted refusals, summed over its rounds, in its own
    test's run-report entry (``record_property``: pytest's fixture of the soak test), where a
    random property's ``excuses`` fixture puts its own."""
    if soak.excused:
        record_property(state.EXCUSED, soak.excused_report())
    if soak.refusals:
        record_property(state.REFUSALS, soak.refusals_report())


def scripts(soak: Soak) -> str:
    return "\n\n".join(f"# [{n}] {finding.kind}, seeds {', '.join(finding.seeds)}\n{finding.repro}"
                       for n, finding in enumerate(soak.findings.values(), 1))


def log_program(text: str, path: Optional[str]) -> None:
    """Write the program about to run to ``path`` (``$CONFORMANCE_PROGRAM_LOG``), when set."""
    if path:
        Path(path).write_text(text)
