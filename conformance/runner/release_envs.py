"""One virtual environment per supported JAX release (the suite's requirements, with that release's
jax and jaxlib pinned), and running a script or the suites in them: the all-release tooling that
bisects a known deviation's range and runs the release matrix.

    python -m conformance.runner.release_envs run SCRIPT [--releases A..B | V ...]
        run a stand-alone reproduction on each release: exit 0 means JAX behaves as intended
        there, anything else (an exception, a failed assert, a crash) that it does not; prints one
        line per release and the ranges where it fails, as a known-deviation entry's jax range
    python -m conformance.runner.release_envs test TEST_ID [--releases ...]
        the same for one test of suites/, run with no known deviations applied (so a release where
        it fails shows as failing, not xfailed); a release where it skips is left out of the ranges
    python -m conformance.runner.release_envs deviations [--processes N] [--record] [--releases ...]
        every strict known deviation's test on each release, no deviations applied, against the
        entries' ranges and symptoms (--record: into known_deviations.measured.json); with
        --processes N, the tests of the entries for multi-controller runs (processes = "several"),
        run with N processes x 4 CPU devices, into that file's several_processes part
    python -m conformance.runner.release_envs suites [--releases ...] [-- PYTEST_ARGS]
        the release matrix: `pytest suites/` on each release (with its known deviations), each
        writing its run report to reports/runs/jax-<version>/ (what tox does, without tox; with
        `-- --processes N`, to reports/runs/jax-<version>-N-processes/); prints
        each release's outcome counts and wall time
    python -m conformance.runner.release_envs python VERSION
        the interpreter of a release's environment (made on first use), e.g. for pytest suites/

Environments live in $CONFORMANCE_VENVS (default ~/.cache/jax-conformance/venvs), one folder per
release named as its tox environment (jax-0.4.30), made on first use: `python3.11` for releases up to
0.10.x, Python 3.13 from 0.11 (`$CONFORMANCE_PYTHON313`, else `python3.13` on PATH).
Scripts run on CPU with 8 forced devices unless XLA_FLAGS or JAX_PLATFORMS say otherwise.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from conformance.checking.symptoms import Seen

from . import environment
from .deviations import DEVIATIONS_FILE, load_deviations
from .devices import UsageError
from .pytest_process import run_pytest
from .releases import RELEASES, Release, release
from .run_folder import ROOT, write_atomically

READY = ".conformance-release"  # written in an environment once its install succeeded: its pins


def venvs_folder(env: Mapping[str, str] = os.environ) -> Path:
    return Path(env.get(environment.VENVS) or Path.home() / ".cache" / "jax-conformance" / "venvs")


def interpreter_for(python: str, env: Mapping[str, str] = os.environ) -> str:
    """A Python ``python`` (major.minor) interpreter to make environments with: this one, else, for
    3.13, ``$CONFORMANCE_PYTHON313``, else ``python<major.minor>`` on PATH."""
    if f"{sys.version_info.major}.{sys.version_info.minor}" == python:
        return sys.executable
    chosen = env.get(environment.PYTHON313) if python == "3.13" else None
    if chosen:
        if not works(chosen):
            raise UsageError(f"${environment.PYTHON313}={chosen}: does not run, or cannot make virtual environments")
        return chosen
    found = shutil.which(f"python{python}")
    if found and works(found):  # (a pyenv shim of an inactive version is on PATH but fails)
        return found
    hint = (f"; or set ${environment.PYTHON313} to one (your distribution's python3.13 package, "
            f"`pyenv install 3.13`, or `uv python install 3.13` then "
            f"`uv python find 3.13`)") if python == "3.13" else ""
    raise UsageError(f"no python{python} found on PATH (JAX releases that need it cannot be run){hint}")


def works(interpreter: str) -> bool:
    """Whether ``interpreter`` runs and can make virtual environments."""
    try:
        return subprocess.run([interpreter, "-c", "import venv, ensurepip"], capture_output=True,
                              timeout=60).returncode == 0
    except OSError:
        return False


def python_of(r: Release, env: Mapping[str, str] = os.environ) -> Path:
    """The interpreter of ``r``'s environment, made (and its requirements installed) on first use."""
    folder = venvs_folder(env) / r.env
    python = folder / "bin" / "python"
    pins = " ".join(r.pins)
    if (folder / READY).exists() and (folder / READY).read_text().strip() == pins:
        return python
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{r.env}.lock", "w") as lock:  # one maker at a time; the others wait, then use it
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / READY).exists() and (folder / READY).read_text().strip() == pins:
            return python
        return _make_environment(r, folder, python, pins)


def _make_environment(r: Release, folder: Path, python: Path, pins: str) -> Path:
    if not python.exists():
        subprocess.run([interpreter_for(r.python), "-m", "venv", str(folder)], check=True)
    print(f"[{r.env}] installing the suite's requirements with {pins} ...", file=sys.stderr, flush=True)
    installed = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                str(ROOT), *r.pins], capture_output=True, text=True)
    if installed.returncode != 0:
        raise UsageError(f"[{r.env}] pip install failed: {installed.stderr.strip()[-1500:]}")
    (folder / READY).write_text(pins + "\n")
    return python


def script_environment(env: Mapping[str, str] = os.environ) -> dict:
    """The environment a script runs in: CPU with 8 forced devices unless the caller chose."""
    out = dict(env)
    out.setdefault("JAX_PLATFORMS", "cpu")
    if "xla_force_host_platform_device_count" not in out.get("XLA_FLAGS", ""):
        out["XLA_FLAGS"] = (out.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
    return out


@dataclass(frozen=True)
class ReleaseOutcome:
    """How a script or a test ended on one release: ``verdict`` "behaves", "fails" or "skipped"
    (a test whose API this release lacks: no evidence either way), and its last words."""

    release: Optional[Release]
    verdict: str
    detail: str
    seen: Optional[dict] = None  # a failed test's failure as symptoms read it (its report's "seen")

    @property
    def behaves(self) -> bool:
        return self.verdict == "behaves"


def run_alone(python, script: Path, timeout: float = 600) -> Optional[subprocess.CompletedProcess]:
    """``script`` run by the interpreter ``python`` in a fresh process, from its own folder, in the
    ``script_environment``, its output captured; None when it ran past ``timeout`` seconds."""
    try:
        return subprocess.run([str(python), str(script)], capture_output=True, text=True, timeout=timeout,
                              env=script_environment(), cwd=script.parent)
    except subprocess.TimeoutExpired:
        return None


def run_script(script: Path, r: Release, timeout: float = 600) -> ReleaseOutcome:
    """Run ``script`` on release ``r``: exit status 0 is "behaves", anything else "fails"."""
    done = run_alone(python_of(r), script, timeout)
    if done is None:
        return ReleaseOutcome(r, "fails", f"timed out after {timeout:.0f} s")
    words = (done.stderr.strip() or done.stdout.strip()).splitlines()
    last = words[-1][:300] if words else ""
    return ReleaseOutcome(r, "behaves" if done.returncode == 0 else "fails", f"exit {done.returncode}: {last}")


def run_test(test_id: str, r: Release, timeout: float = 600) -> ReleaseOutcome:
    """Run one test of suites/ on release ``r`` with no known deviations applied: its outcome."""
    return outcomes_of([test_id], str(python_of(r)), [], timeout, r)[test_id]


def entries_of(test: str, entries: Sequence[dict]) -> List[dict]:
    """A test's entries in a run report: its own, or its parametrized cases'."""
    return [e for e in entries if e["id"] == test or e["id"].startswith(test + "[")]


def outcomes_of(tests: Sequence[str], python: str, args: Sequence[str], timeout: float = 600,
                r: Optional[Release] = None) -> Dict[str, ReleaseOutcome]:
    """Tests of suites/ run together (one pytest, one JAX start-up) by ``python``, no known
    deviations applied: test id -> its outcome."""
    entries, words = run_test_with(python, tests, args, timeout)
    return {test: test_outcome(r, entries_of(test, entries or []), words) for test in tests}


def run_test_with(python: str, test_id, args: Sequence[str], timeout: float = 600):
    """Run a test of suites/ (or a list of them) with the interpreter ``python`` (and more pytest
    ``args``), no known deviations applied: (the report's tests, the last words of the run)."""
    test_ids = [test_id] if isinstance(test_id, str) else list(test_id)
    with tempfile.TemporaryDirectory() as work:
        none = Path(work) / "no-deviations.toml"
        none.write_text("format = 2\n")
        try:
            done = run_pytest(["-q", *test_ids, "--known-deviations", str(none), "--report-dir", work, *args],
                              python=python, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, f"timed out after {timeout:.0f} s"
        report = Path(work) / "report.json"
        tests = json.loads(report.read_text())["tests"] if report.exists() else []
    words = (done.stdout.strip() + "\n" + done.stderr.strip()).strip().splitlines()
    refused = [w for w in words if w.startswith(NOT_LAUNCHING)]  # (several processes on a release without them)
    return tests, refused[0] if refused else f"exit {done.returncode}: {words[-1][:300] if words else ''}"


NOT_LAUNCHING = "not launching"  # how a run of several processes begins where the release has none


def test_outcome(r: Optional[Release], tests, last_words: str) -> ReleaseOutcome:
    """A test's outcome from its report's entries: skipped (all skipped, or several processes asked
    of a release that runs none on CPU), fails (any failed), or behaves; no report at all (a crash,
    a time-out, a usage error) fails."""
    if not tests and last_words.startswith(NOT_LAUNCHING):
        return ReleaseOutcome(r, "skipped", last_words)
    if not tests:
        return ReleaseOutcome(r, "fails", f"no report ({last_words})")
    if {t["outcome"] for t in tests} <= {"skipped"}:
        return ReleaseOutcome(r, "skipped", tests[0].get("reason") or "")
    failed = [t for t in tests if t["outcome"] in ("failed", "error")]
    if failed:
        return ReleaseOutcome(r, "fails", (failed[0].get("message") or "").split("\n")[0][:300],
                              failed[0].get("seen"))
    return ReleaseOutcome(r, "behaves", f"{len(tests)} passed" if len(tests) > 1 else "passed")


PROCESSES_DEVICES = 4  # CPU devices per process in a multi-process bisection (8 in all with 2 processes)


def process_arguments(processes: int) -> List[str]:
    """The pytest arguments of a bisection run of ``processes`` processes (none for one)."""
    return [] if processes == 1 else ["--processes", str(processes), "--devices", str(PROCESSES_DEVICES)]


def tests_to_bisect(deviations: Sequence, processes: int = 1) -> List[str]:
    """The tests a bisection of ``processes`` processes measures: in one process, the test of every
    strict entry that applies to one-process runs; with several, the tests of the strict entries for
    multi-controller runs only (``processes = "several"``), whose ranges only such a run can measure."""
    return sorted({d.test for d in deviations if d.strict and (d.applies_to(1) if processes == 1
                                                                 else d.processes == "several")})


def bisect_deviations(chosen: Sequence[Release], deviations_file: Path, timeout: float = 1800,
                      jobs: int = 1, processes: int = 1) -> dict:
    """Every strict known deviation's test (with several ``processes``: those of the entries for
    multi-controller runs, run so), run on each release in ``chosen`` with no deviations applied:
    {test: {release: [verdict, detail]}}, with each test's measured failing ranges. (A random
    property's entry follows the strict test named by its reproduced_by.)"""
    tests = tests_to_bisect(load_deviations(deviations_file), processes)
    measured: dict = {test: {} for test in tests}

    def one(r: Release):
        print(f"[{r.env}] running {len(tests)} tests ...", file=sys.stderr, flush=True)
        return r, outcomes_of(tests, str(python_of(r)), process_arguments(processes), timeout, r)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for r, outcomes in pool.map(one, chosen):
            for test, outcome in outcomes.items():
                measured[test][r.jax] = [outcome.verdict, outcome.detail, outcome.seen]
    return {"releases": [r.jax for r in chosen], "processes": processes,
            "tests": {test: {"ranges": failing_ranges([ReleaseOutcome(release(v), *measured[test][v])
                                                       for v in measured[test]]),
                             "by_release": measured[test]} for test in tests}}


HYPOTHESIS_HOME = "HYPOTHESIS_STORAGE_DIRECTORY"  # where Hypothesis keeps its example database


def processes_part(pytest_args: Sequence[str]) -> str:
    """``-<N>-processes`` for a multi-controller run (``--processes N``, N > 1, or ``platform``), so
    that its report lies beside the release's one-process run, a column of its own in the matrix."""
    args = list(pytest_args)
    for i, arg in enumerate(args):
        value = arg.split("=", 1)[1] if arg.startswith("--processes=") else \
            (args[i + 1] if arg == "--processes" and i + 1 < len(args) else None)
        if value is not None and value != "1":
            return f"-{value}-processes"
    return ""


def run_suites(r: Release, pytest_args: Sequence[str]) -> str:
    """``pytest suites/`` on release ``r`` into its tox run folder: "green"/"RED", the outcome
    counts and the wall time. pytest's output is kept beside the report (``pytest.log``): a
    crashed worker's last words (an XLA check's message) are in it and nowhere else.

    Each release's run has its own Hypothesis example database, emptied first (``hypothesis/``
    beside the report): one shared by the releases replays on each the examples that failed on
    another, so a finding could not be replayed from its run's seed (a wrong value met on 0.11.1 in
    the release matrix, 2026-12-05, did not recur from the seed alone); the failing examples a run
    saves stay there."""
    folder = ROOT / "reports" / "runs" / (r.env + processes_part(pytest_args))
    examples = folder / "hypothesis"
    shutil.rmtree(examples, ignore_errors=True)
    started = time.monotonic()
    done = run_pytest(["suites/", "--report-dir", str(folder), *pytest_args], python=str(python_of(r)),
                      env={HYPOTHESIS_HOME: str(examples)})
    wall = time.monotonic() - started
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.log").write_text(done.stdout + ("\n--- stderr ---\n" + done.stderr if done.stderr else ""))
    report = folder / "report.json"
    counts = json.loads(report.read_text())["summary"] if report.exists() else {}
    summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n and k != "total") or "no report"
    log = "" if done.returncode == 0 else f"  (output: {(folder / 'pytest.log').relative_to(ROOT)})"
    return f"{'green' if done.returncode == 0 else 'RED (exit %d)' % done.returncode}  {summary}  ({wall:.0f} s){log}"


def measured_file(deviations_file: Path) -> Path:
    """Where the bisection's verdicts for a deviation list are kept: beside it."""
    return deviations_file.with_name(deviations_file.stem + ".measured.json")


SEVERAL = "several_processes"  # the measured file's part for the multi-process bisection


def applying(deviations: Sequence, processes: int) -> list:
    """The entries of ``deviations`` that apply to a run of ``processes`` processes."""
    return [d for d in deviations if d.applies_to(processes)]


def verdicts(measured: dict, deviations: Sequence = ()) -> dict:
    """The bisection as kept in the data file: per test and release, only the verdict; and, per
    strict entry of ``deviations`` (those applying to the bisection's process count) whose test
    failed otherwise than its symptom says on a release it claims, those releases and why
    (``symptom_differs``: empty when every symptom held)."""
    processes = measured.get("processes", 1)
    strict = [d for d in applying(deviations, processes) if d.strict and d.test in measured["tests"]]
    differs = {f"{d.test} (jax {d.jax})": symptom_differs(d, [e for e in strict if e.test == d.test],
                                                         measured["tests"][d.test]) for d in strict}
    how = ("python -m conformance.runner.release_envs deviations --record (no deviations applied, CPU, 8 devices)"
           if processes == 1 else
           f"python -m conformance.runner.release_envs deviations --processes {processes} --record (no deviations "
           f"applied, CPU, {processes} processes x {PROCESSES_DEVICES} devices)")
    return {"measured": time.strftime("%Y-%m-%d"),
            "how": how, "processes": processes,
            "releases": measured["releases"],
            "tests": {test: {v: verdict for v, (verdict, *_) in result["by_release"].items()}
                      for test, result in measured["tests"].items()},
            "symptom_differs": {where: why for where, why in differs.items() if why}}


def recorded(previous: dict, measured: dict, deviations: Sequence) -> dict:
    """The data file after a bisection: a one-process bisection replaces it, keeping the
    multi-process part; a multi-process one replaces only that part."""
    kept = verdicts(measured, deviations)
    if measured.get("processes", 1) == 1:
        return {**kept, **({SEVERAL: previous[SEVERAL]} if SEVERAL in previous else {})}
    return {**previous, SEVERAL: kept}


def deviation_table(measured: dict, deviations: Sequence) -> str:
    """Per strict entry: its range, the range measured, and whether they agree on the releases
    measured (a release where the test skipped says nothing; a test with several entries agrees
    when their ranges together cover exactly the failing releases), and whether the failure on each
    release it claims shows its symptom (SYMPTOM: the releases where it failed another way)."""
    processes = measured.get("processes", 1)
    deviations = [d for d in applying(deviations, processes) if d.test in measured["tests"]]
    lines = [f"measured on {len(measured['releases'])} releases"
             f"{'' if processes == 1 else f' with {processes} processes'}: {', '.join(measured['releases'])}"]
    for d in deviations:
        if not d.strict:
            continue
        result = measured["tests"][d.test]
        failing = {v for v, (verdict, *_) in result["by_release"].items() if verdict == "fails"}
        same_test = [e for e in deviations if e.strict and e.test == d.test]
        claimed_all = {v for e in same_test for v in claimed_by(e, result)}
        other_ways = symptom_differs(d, same_test, result)
        agree = "ok" if claimed_all == failing and not other_ways else \
            "DIFFERS" if claimed_all != failing else "SYMPTOM"
        lines.append(f"{agree:<8} {d.test.replace('suites/', '')}\n         entry: {d.jax:<22} measured: "
                     f"{' | '.join(result['ranges']) or 'never fails'}"
                     + ("" if claimed_all == failing else
                        f"  (entry only: {sorted(claimed_all - failing, key=Version)}, "
                        f"measured only: {sorted(failing - claimed_all, key=Version)})")
                     + "".join(f"\n         on {v}: {why}" for v, why in other_ways.items()))
    return "\n".join(lines)


def claimed_by(deviation, result: dict) -> set:
    """The measured releases (not skipped) that ``deviation``'s range covers."""
    return {v for v, (verdict, *_) in result["by_release"].items()
            if verdict != "skipped" and SpecifierSet(deviation.jax).contains(v, prereleases=True)}


def symptom_differs(deviation, same_test: Sequence, result: dict) -> Dict[str, str]:
    """The releases ``deviation`` claims where the test failed otherwise than its symptom says, and
    than the symptom of every other entry of ``same_test`` claiming that release: {release: why
    not}. (A failure the report could not describe, a crash or a time-out, counts as another way.)"""
    differs = {}
    for v in sorted(claimed_by(deviation, result), key=Version):
        verdict, detail, *rest = result["by_release"][v]
        seen = rest[0] if rest else None
        if verdict != "fails":
            continue
        if seen is None:
            differs[v] = f"no failure the symptom can read ({detail[:200]})"
            continue
        failure = Seen(seen["raised"], seen["message"], seen["check"], seen["shows"], seen.get("frame", ""))
        others = [e for e in same_test if e is not deviation and v in claimed_by(e, result)]
        why = deviation.symptom.why_not(failure)
        if why is not None and all(e.symptom.why_not(failure) is not None for e in others):
            differs[v] = why
    return differs


def select(spec: Sequence[str]) -> List[Release]:
    """Releases named on the command line: versions, or ranges ``A..B`` (inclusive; either end
    may be left out); every release when nothing is named."""
    if not spec:
        return list(RELEASES)
    chosen: List[Release] = []
    for item in spec:
        if ".." in item:
            low, high = item.split("..", 1)
            low_v = Version(release(low).jax) if low else None
            high_v = Version(release(high).jax) if high else None
            chosen += [r for r in RELEASES if (low_v is None or Version(r.jax) >= low_v)
                       and (high_v is None or Version(r.jax) <= high_v)]
        else:
            chosen.append(release(item))
    return sorted(set(chosen), key=lambda r: Version(r.jax))


def failing_ranges(outcomes: Sequence[ReleaseOutcome]) -> List[str]:
    """The runs of consecutive releases (in the list measured, skips left out) where the script or
    test misbehaves, each as a known-deviation range: ``>=A,<B`` (B the next measured release,
    where it behaves again), or ``>=A`` when it still misbehaves on the newest measured; ``==A``
    for a single release."""
    ranges, start = [], None
    ordered = sorted(outcomes, key=lambda o: Version(o.release.jax))
    for i, outcome in enumerate(ordered):
        if outcome.verdict == "fails" and start is None:
            start = outcome.release.jax
        if outcome.behaves and start is not None:
            previous = ordered[i - 1].release.jax  # (a skip in between widens "==" to a range)
            ranges.append(f"=={start}" if previous == start else f">={start},<{outcome.release.jax}")
            start = None
    if start is not None:
        ranges.append(f">={start}")
    return ranges


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.runner.release_envs",
                                     description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    r = commands.add_parser("run", help="run a reproduction script on each release")
    r.add_argument("script", type=Path)
    r.add_argument("--releases", nargs="*", default=[], metavar="V|A..B")
    r.add_argument("--timeout", type=float, default=600)
    s = commands.add_parser("test", help="run one test of suites/ on each release, no deviations applied")
    s.add_argument("test_id")
    s.add_argument("--releases", nargs="*", default=[], metavar="V|A..B")
    s.add_argument("--timeout", type=float, default=600)
    d = commands.add_parser("deviations", help="bisect every known deviation's range over the releases")
    d.add_argument("--releases", nargs="*", default=[], metavar="V|A..B")
    d.add_argument("--file", type=Path, default=DEVIATIONS_FILE)
    d.add_argument("-o", "--output", type=Path, help="also write the measurement as JSON")
    d.add_argument("--jobs", type=int, default=1, help="releases measured at once (default 1)")
    d.add_argument("--processes", type=int, default=1,
                   help="measure the entries for multi-controller runs (processes = \"several\") in runs "
                        f"of this many processes x {PROCESSES_DEVICES} CPU devices (default 1: every other entry)")
    d.add_argument("--record", action="store_true",
                   help="write the verdicts to known_deviations.measured.json beside the list (the data "
                        "tests/test_releases.py checks each range against)")
    m = commands.add_parser("suites", help="pytest suites/ on each release (the release matrix)")
    m.add_argument("--releases", nargs="*", default=[], metavar="V|A..B")
    m.add_argument("pytest_args", nargs="*", help="more pytest arguments, after -- (e.g. -- -n 2)")
    p = commands.add_parser("python", help="a release's interpreter (its environment made on first use)")
    p.add_argument("version")
    args = parser.parse_args(argv)
    try:
        if args.command == "python":
            print(python_of(release(args.version)))
            return 0
        if args.command == "suites":
            failed = 0
            for rel in select(args.releases):
                line = run_suites(rel, args.pytest_args)
                failed += not line.startswith("green")
                print(f"{rel.env:<16} {line}", flush=True)
            return 1 if failed else 0
        if args.command == "deviations":
            measured = bisect_deviations(select(args.releases), args.file, jobs=args.jobs,
                                         processes=args.processes)
            deviations = load_deviations(args.file)
            if args.output:
                write_atomically(args.output, json.dumps(measured, indent=1) + "\n")
            if args.record:
                record = measured_file(args.file)
                previous = json.loads(record.read_text()) if record.exists() else {}
                write_atomically(record, json.dumps(recorded(previous, measured, deviations), indent=1) + "\n")
                print(f"wrote {record}")
            print(deviation_table(measured, deviations))
            return 0
        outcomes = []
        for rel in select(args.releases):
            outcome = run_script(args.script.resolve(), rel, args.timeout) if args.command == "run" \
                else run_test(args.test_id, rel, args.timeout)
            outcomes.append(outcome)
            print(f"{rel.env:<16} {outcome.verdict.upper() if outcome.verdict == 'fails' else outcome.verdict:<8} "
                  f"{outcome.detail}", flush=True)
        ranges = failing_ranges(outcomes)
        print(f"fails on: {' | '.join(ranges) if ranges else 'no release measured'}")
        return 0
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    environment.quiet_on_a_closed_pipe()
    sys.exit(main())
