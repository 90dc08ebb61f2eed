"""Where a run's time goes: per suite, seconds, Hypothesis examples per second and JAX compilations
per property, from a run report; and ``bench`` to time fresh runs (at several device counts).

    python -m reports bench                      run pytest suites/ once (8 devices), print the table
    python -m reports bench --devices 8 16 32 64 one run per device count, then how time grows
    python -m reports bench -- ARGS              more pytest arguments (a test file named there
                                                 replaces suites/)
    JAX_PLATFORMS=tpu python -m reports bench    on GPU/TPU: one run on the devices present
    python -m reports table RUN                  the table of an existing run

The platform is decided as the harness decides it (``--backend`` among the pytest arguments, else
``$JAX_PLATFORMS``, else cpu), without importing JAX. While a run goes, bench reads the report the
run rewrites as it goes and prints a line per suite once the run has moved past it; pytest's own
output is kept in the run folder (``pytest-output.txt``), and its last lines explain a run that
wrote no report.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
import time
from collections import OrderedDict
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

from conformance.runner.devices import DEFAULT_CPU_DEVICES, UsageError, plan_devices
from conformance.runner.pytest_process import fresh_environment, start_pytest

from .record import OUTCOMES, REPORT_NAME, ReportError, load

OUTPUT_NAME = "pytest-output.txt"  # the run's own output, beside its report
POLL_INTERVAL_S = 1.0  # how often a running run's report is read for progress
LAST_LINES = 15  # of a run's output, shown when it wrote no report


def suite_rows(record: dict) -> "OrderedDict[str, dict]":
    """Per suite (in the order the run met them): properties, seconds, examples, compilations."""
    rows: "OrderedDict[str, dict]" = OrderedDict()
    for test in record["tests"]:
        row = rows.setdefault(test["suite"], {"properties": 0, "ran": 0, "seconds": 0.0, "examples": 0,
                                              "compilations": 0, "compile_seconds": 0.0})
        row["properties"] += 1
        row["seconds"] += test["duration"]
        if test["outcome"] != "skipped":
            row["ran"] += 1
        row["examples"] += test.get("examples") or 0
        row["compilations"] += test.get("compilations") or 0
        row["compile_seconds"] += test.get("compile_seconds") or 0.0
    return rows


def _rate(n: float, seconds: float) -> str:
    return f"{n / seconds:.0f}" if seconds > 0 and n else "-"


def table(record: dict, slowest: int = 10) -> str:
    """The per-suite table, totals, and the slowest properties with their compilations."""
    env = record["environment"]
    lines = [f"jax {env.get('jax')} on {env.get('device_count')} x {env.get('device_kind') or env.get('backend')}, "
             f"profile {env.get('profile')} (max_examples={env.get('max_examples')}), "
             f"xdist workers: {env.get('workers') or 0}"
             + (f", peak resident memory {env['peak_rss_mib']:.0f} MiB per process" if env.get("peak_rss_mib") else ""),
             ""]
    header = (f"{'suite':<28}{'props':>6}{'ran':>5}{'seconds':>9}{'examples':>10}{'ex/s':>7}"
              f"{'compiles':>10}{'per prop':>9}{'compile s':>10}")
    lines += [header, "-" * len(header)]
    total = {"properties": 0, "ran": 0, "seconds": 0.0, "examples": 0, "compilations": 0, "compile_seconds": 0.0}
    for suite, row in suite_rows(record).items():
        for k in total:
            total[k] += row[k]
        lines.append(_row(suite, row))
    lines += ["-" * len(header), _row("total", total), ""]
    tests = sorted(record["tests"], key=lambda t: -t["duration"])[:slowest]
    lines.append(f"slowest {len(tests)} properties:")
    for t in tests:
        lines.append(f"  {t['duration']:7.2f} s  {t.get('examples') or 0:5} examples  "
                     f"{t.get('compilations') or 0:5} compiles  {t['id']}")
    return "\n".join(lines)


def _row(name: str, row: dict) -> str:
    per = f"{row['compilations'] / row['ran']:.1f}" if row["ran"] else "-"
    return (f"{name:<28}{row['properties']:>6}{row['ran']:>5}{row['seconds']:>9.1f}{row['examples']:>10}"
            f"{_rate(row['examples'], row['seconds']):>7}{row['compilations']:>10}{per:>9}"
            f"{row['compile_seconds']:>10.1f}")


# --- which runs, with which arguments ------------------------------------------------------------
def backend_asked(pytest_args: Sequence[str]) -> Optional[str]:
    """The ``--backend`` among pytest arguments (the last one, as pytest reads them), or None."""
    backend = None
    for i, arg in enumerate(pytest_args):
        if arg == "--backend" and i + 1 < len(pytest_args):
            backend = pytest_args[i + 1]
        elif arg.startswith("--backend="):
            backend = arg.split("=", 1)[1]
    return backend


def planned_runs(devices: Optional[Sequence[int]], pytest_args: Sequence[str],
                 env: Optional[Mapping[str, str]] = None) -> List[Optional[int]]:
    """The runs to make, planned as the harness will plan each: the CPU device counts asked for
    (default 8), or on GPU/TPU one run on the devices present (None); a count asked for there is a
    UsageError."""
    env = fresh_environment() if env is None else env
    backend = backend_asked(pytest_args)
    platform = plan_devices(None, backend, env).platform
    if platform != "cpu":
        if devices is not None:
            raise UsageError(f"--devices {' '.join(map(str, devices))} cannot be honoured on the {platform!r} "
                             f"backend: a device count can only be forced on CPU; leave --devices out "
                             f"for one run on the {platform} devices present")
        return [None]
    counts = list(devices or [DEFAULT_CPU_DEVICES])
    for n in counts:
        plan_devices(str(n), backend, env)  # the harness's own checks of a count
    return counts


def devices_label(devices: Optional[int]) -> str:
    """``8 devices``, or ``devices present`` for a GPU/TPU run."""
    return "devices present" if devices is None else f"{devices} devices"


def run_folder_name(devices: Optional[int]) -> str:
    """``devices-8``, or ``devices-present`` for a GPU/TPU run."""
    return f"devices-{'present' if devices is None else devices}"


def names_test_files(pytest_args: Sequence[str]) -> bool:
    """Whether the pytest arguments name test files (``suites/test_mesh.py``, ``...py::test_x``)."""
    return any(arg.split("::")[0].endswith(".py") for arg in pytest_args if not arg.startswith("-"))


def pytest_arguments(devices: Optional[int], run_dir: Path, extra: Sequence[str]) -> list:
    """``-q suites/ EXTRA --devices N --report-dir RUN_DIR``: no ``suites/`` when EXTRA names test
    files, no ``--devices`` on GPU/TPU (None: the run uses the devices present)."""
    tests = [] if names_test_files(extra) else ["suites/"]
    forced = [] if devices is None else ["--devices", str(devices)]
    return ["-q", *tests, *extra, *forced, "--report-dir", str(run_dir)]


# --- progress while a run goes -------------------------------------------------------------------
def suite_line(suite: str, tests: Sequence[dict]) -> str:
    """``  test_mesh: 12 tests, 8.1 s (11 passed, 1 skipped)``."""
    outcomes = [f"{n} {o}" for o in OUTCOMES if (n := sum(t["outcome"] == o for t in tests))]
    seconds = sum(t["duration"] for t in tests)
    return f"  {suite}: {len(tests)} test{'s' * (len(tests) != 1)}, {seconds:.1f} s ({', '.join(outcomes)})"


class SuiteProgress:
    """Fed the run's tests as its report stands at each look, says when a suite is finished: once
    another suite has gained tests since it last did, or at the end of the run."""

    def __init__(self):
        self.looks = 0
        self.tests: Dict[str, List[dict]] = {}  # per suite, as last seen
        self.first_seen: Dict[str, int] = {}
        self.last_grew: Dict[str, int] = {}
        self.announced: set = set()

    def see(self, tests: Iterable[dict]) -> List[str]:
        """One look at the report: the lines of the suites it shows finished."""
        self.looks += 1
        by_suite: Dict[str, List[dict]] = OrderedDict()
        for test in tests:
            by_suite.setdefault(test["suite"], []).append(test)
        for suite, entries in by_suite.items():
            if len(entries) > len(self.tests.get(suite, ())):
                self.first_seen.setdefault(suite, self.looks)
                self.last_grew[suite] = self.looks
            self.tests[suite] = entries
        latest = max(self.last_grew.values(), default=0)
        return self._announce([s for s in self.last_grew if self.last_grew[s] < latest])

    def end(self, tests: Iterable[dict]) -> List[str]:
        """The final report: the lines of every suite not announced yet."""
        return self.see(tests) + self._announce(list(self.last_grew))

    def _announce(self, finished: List[str]) -> List[str]:
        due = sorted((s for s in finished if s not in self.announced), key=lambda s: (self.first_seen[s], s))
        self.announced.update(due)
        return [suite_line(s, self.tests[s]) for s in due]


def tests_so_far(run_dir: Path) -> list:
    """The tests in the run's report as it stands (none before the run wrote one)."""
    try:
        return json.loads((run_dir / REPORT_NAME).read_text(encoding="utf-8"))["tests"]
    except (FileNotFoundError, json.JSONDecodeError):
        return []


def show(lines: Sequence[str]) -> None:
    """Print the lines now (a run's progress, between minutes of silence)."""
    for line in lines:
        print(line, flush=True)


def run_watched(args: Sequence[str], run_dir: Path) -> subprocess.CompletedProcess:
    """Run ``pytest ARGS`` to the end in a fresh interpreter, printing a line per finished suite;
    its output captured (and kept in the run folder's ``pytest-output.txt``)."""
    progress = SuiteProgress()
    output = run_dir / OUTPUT_NAME
    with output.open("w", encoding="utf-8") as sink:
        process = start_pytest(args, stdout=sink, stderr=subprocess.STDOUT)
        try:
            while True:
                try:
                    process.wait(timeout=POLL_INTERVAL_S)
                    break
                except subprocess.TimeoutExpired:
                    show(progress.see(tests_so_far(run_dir)))
        finally:
            if process.poll() is None:  # bench itself was stopped (Ctrl-C): so is the run
                process.kill()
                process.wait()
    show(progress.end(tests_so_far(run_dir)))
    return subprocess.CompletedProcess(process.args, process.returncode,
                                       output.read_text(encoding="utf-8", errors="replace"))


# --- the runs --------------------------------------------------------------------------------------
def run_report(run_dir: Path, result: subprocess.CompletedProcess) -> dict:
    """The run's report; a ReportError naming the run folder, pytest's exit status and its last
    lines of output if the run left none it could read."""
    try:
        return load(run_dir)
    except ReportError as e:
        found = (f"left an unreadable report ({e})" if (run_dir / REPORT_NAME).exists()
                 else "wrote no report")
        last = result.stdout.rstrip().splitlines()[-LAST_LINES:]
        raise ReportError(f"{run_dir}: pytest exited with status {result.returncode} and {found}; its "
                          f"output ends (all of it in {OUTPUT_NAME} there):\n"
                          + "\n".join(f"    {line}" for line in last)) from None


def run_suites(devices: Optional[int], run_dir: Path, extra: Sequence[str] = ()) -> dict:
    """One timed run of the suites (``devices`` forced CPU devices, None: the devices present):
    its report, with the wall time, pytest's exit status and its last lines."""
    run_dir.mkdir(parents=True, exist_ok=True)
    for stale in (REPORT_NAME, "report.html"):  # from an earlier bench into the same --keep folder
        (run_dir / stale).unlink(missing_ok=True)
    args = pytest_arguments(devices, run_dir, extra)
    print(f"== {devices_label(devices)}: pytest {shlex.join(args)}", flush=True)
    started = time.monotonic()
    result = run_watched(args, run_dir)
    wall = time.monotonic() - started
    record = run_report(run_dir, result)
    record["wall_seconds"] = wall
    record["exit_status"] = result.returncode
    record["last_lines"] = result.stdout.strip().splitlines()[-3:]
    return record


def growth_table(records: Dict[int, dict]) -> str:
    """Seconds per suite at each device count, and the ratio to the smallest count."""
    counts = sorted(records)
    base = counts[0]
    suites: List[str] = []
    for n in counts:
        suites += [s for s in suite_rows(records[n]) if s not in suites]
    header = f"{'suite':<28}" + "".join(f"{f'{n} dev':>10}" for n in counts) + f"{'growth':>10}"
    lines = [header, "-" * len(header)]
    per = {n: suite_rows(records[n]) for n in counts}
    for suite in suites + ["wall (whole run)"]:
        if suite == "wall (whole run)":
            secs = [records[n]["wall_seconds"] for n in counts]
        else:
            secs = [per[n].get(suite, {}).get("seconds", 0.0) for n in counts]
        ratio = f"x{secs[-1] / secs[0]:.1f}" if secs[0] > 0 else "-"
        lines.append(f"{suite:<28}" + "".join(f"{s:>10.1f}" for s in secs) + f"{ratio:>10}")
    lines.append(f"(device count grows x{counts[-1] / base:.0f} from {base} to {counts[-1]})")
    return "\n".join(lines)


def bench(devices: Optional[Sequence[int]], keep: Optional[Path], extra: Sequence[str]) -> int:
    """Run the suites at each device count (None: 8 on CPU, the devices present on GPU/TPU), print
    each run's table and (several counts) the growth table; exit status 1 if any run failed, a
    ReportError (after the other runs) if a run left no report."""
    runs = planned_runs(devices, extra)
    out = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="conformance-bench-"))
    records, status, missing = {}, 0, []
    for n in runs:
        try:
            record = run_suites(n, out / run_folder_name(n), extra)
        except ReportError as e:
            missing.append(str(e))
            continue
        records[n] = record
        print(f"== {devices_label(n)}: wall {record['wall_seconds']:.1f} s, exit status {record['exit_status']} "
              f"({' '.join(record['last_lines'][-1:])})")
        print(table(record))
        print()
        status = status or (1 if record["exit_status"] != 0 else 0)
    if len(records) > 1:
        print(growth_table(records))
    print(f"\nrun reports: {out}", flush=True)
    if missing:
        raise ReportError("\n".join(missing))
    return status
