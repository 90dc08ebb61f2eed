"""Where a run's time goes: per suite, seconds, Hypothesis examples per second, programs asked for,
compiled and served by the persistent compilation cache, and programs asked for twice, from a run
report; and ``bench`` to time fresh runs (at several device counts) as ratios to a reference.

    python -m reports bench                      the reference workload, pytest suites/ twice, the
                                                 reference again (8 devices, one seed): cold (an
                                                 empty compilation cache) and warm (the cache the
                                                 cold run left)
    python -m reports bench --no-warm            the cold run only
    python -m reports bench --devices 8 16 32 64 runs per device count, then how time grows
    python -m reports bench -- ARGS              more pytest arguments (a test file named there
                                                 replaces suites/; --no-compilation-cache: one
                                                 run, uncached)
    JAX_PLATFORMS=tpu python -m reports bench    on GPU/TPU: one run on the devices present
    python -m reports table RUN                  the table of an existing run

The reference workload (``reports.reference``: 240 small distinct sharded programs compiled and run
once each, in this interpreter, uncached) runs first in the same sitting, and again after each run;
each run's wall time is printed as a ratio to the mean of the reference just before it and the one
just after it, which is what budgets state (the machine's speed drifts within a sitting: a run is
measured against its own neighbours). A
run's seed is the one given after --, else one bench draws and passes to every run, so that the warm
run asks for the programs the cold one compiled.

The platform is decided as the harness decides it (``--backend`` among the pytest arguments, else
``$JAX_PLATFORMS``, else cpu), without importing JAX. While a run goes, bench reads the report the
run rewrites as it goes and prints a line per suite once the run has moved past it; pytest's own
output is kept in the run folder (``pytest-output.txt``), and its last lines explain a run that
wrote no report.
"""

from __future__ import annotations

import json
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

from conformance.runner.devices import DEFAULT_CPU_DEVICES, UsageError, environment_for, plan_devices
from conformance.runner.pytest_process import fresh_environment, start_pytest
from conformance.runner.run_folder import ROOT

from .record import OUTCOMES, REPORT_NAME, ReportError, load

OUTPUT_NAME = "pytest-output.txt"  # the run's own output, beside its report
POLL_INTERVAL_S = 1.0  # how often a running run's report is read for progress
LAST_LINES = 15  # of a run's output, shown when it wrote no report


def suite_rows(record: dict) -> "OrderedDict[str, dict]":
    """Per suite (in the order the run met them): properties, seconds, examples, compilations."""
    rows: "OrderedDict[str, dict]" = OrderedDict()
    for test in record["tests"]:
        row = rows.setdefault(test["suite"], {"properties": 0, "ran": 0, "seconds": 0.0, "examples": 0,
                                              "programs": 0, "compilations": 0, "compile_seconds": 0.0,
                                              "served": 0, "duplicates": 0})
        row["properties"] += 1
        row["seconds"] += test["duration"]
        if test["outcome"] != "skipped":
            row["ran"] += 1
        row["examples"] += test.get("examples") or 0
        row["programs"] += test.get("programs") or 0
        row["compilations"] += test.get("compilations") or 0
        row["compile_seconds"] += test.get("compile_seconds") or 0.0
        row["served"] += test.get("cache_served") or 0
        row["duplicates"] += test.get("duplicate_programs") or 0
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
             f"compilation cache: {cache_words(env.get('compilation_cache'))}", ""]
    header = (f"{'suite':<28}{'props':>6}{'ran':>5}{'seconds':>9}{'examples':>10}{'ex/s':>7}"
              f"{'programs':>9}{'compiles':>9}{'compile s':>10}{'served':>8}{'twice':>7}")
    lines += [header, "-" * len(header)]
    total = {"properties": 0, "ran": 0, "seconds": 0.0, "examples": 0, "programs": 0, "compilations": 0,
             "compile_seconds": 0.0, "served": 0, "duplicates": 0}
    for suite, row in suite_rows(record).items():
        for k in total:
            total[k] += row[k]
        lines.append(_row(suite, row))
    lines += ["-" * len(header), _row("total", total), ""]
    tests = sorted(record["tests"], key=lambda t: -t["duration"])[:slowest]
    lines.append(f"slowest {len(tests)} properties:")
    for t in tests:
        lines.append(f"  {t['duration']:7.2f} s  {t.get('examples') or 0:5} examples  "
                     f"{t.get('programs') or 0:5} programs  {t.get('compilations') or 0:5} compiles  {t['id']}")
    twice = duplicates(record)
    if twice:
        lines += ["", f"programs asked for twice ({sum(n for *_, n in twice)}; the first {DUPLICATES_SHOWN} kinds):"]
        lines += [f"  {n:5} x {module} in {asked_again} (first asked by {first})"
                  for module, first, asked_again, n in twice[:DUPLICATES_SHOWN]]
    return "\n".join(lines)


DUPLICATES_SHOWN = 15


def cache_words(cache: Optional[dict]) -> str:
    """The run's compilation cache in words (a report before format 10 says nothing of it)."""
    if not cache:
        return "not recorded"
    return cache["folder"] + f" ({cache['source']})" if cache.get("folder") else f"off ({cache['source']})"


def duplicates(record: dict) -> List[tuple]:
    """The run's repeated programs, grouped: (module, property that asked first, property that asked
    again, how many times), most first (as far as the report names them: REPEATED_SHOWN per property;
    a property's further repeats count under "(more)")."""
    counts: Dict[tuple, int] = {}
    for test in record["tests"]:
        named = test.get("repeated") or []
        for r in named:
            key = (r["module"], r["first_asked_by"], test["id"])
            counts[key] = counts.get(key, 0) + 1
        more = (test.get("duplicate_programs") or 0) - len(named)
        if more > 0:
            counts[("(more)", "-", test["id"])] = more
    return sorted(((*k, n) for k, n in counts.items()), key=lambda t: (-t[3], t[2], t[0]))


def _row(name: str, row: dict) -> str:
    return (f"{name:<28}{row['properties']:>6}{row['ran']:>5}{row['seconds']:>9.1f}{row['examples']:>10}"
            f"{_rate(row['examples'], row['seconds']):>7}{row['programs']:>9}{row['compilations']:>9}"
            f"{row['compile_seconds']:>10.1f}{row['served']:>8}{row['duplicates']:>7}")


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


# --- the reference, and cold and warm runs -----------------------------------------------------
def run_reference(pytest_args: Sequence[str]) -> dict:
    """The reference workload (``reports.reference``) in a fresh interpreter, on 8 devices forced as
    the harness forces them (on GPU/TPU: the devices present): its seconds and program count."""
    env, backend = fresh_environment(), backend_asked(pytest_args)
    on_cpu = plan_devices(None, backend, env).platform == "cpu"
    env.update(environment_for(plan_devices("8" if on_cpu else None, backend, env), env))
    done = subprocess.run([sys.executable, "-m", "reports.reference"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise ReportError(f"the reference workload failed (exit status {done.returncode}):\n"
                          + "\n".join(f"    {line}" for line in done.stderr.strip().splitlines()[-LAST_LINES:]))
    return json.loads(done.stdout.strip().splitlines()[-1])


def sandwiched(before: dict, after: dict) -> dict:
    """The reference a run's ratio divides by: the mean of the reference's run just before it and
    its run just after it (one run alone moved by 10 to 25% from one bench to the next in one
    sitting, measured 2026-12-06: 16.0 s, then 12.1 s; three runs in a row 15.1, 13.6 and 13.2 s;
    later that day 16.3 s before a cold and a warm run and 13.8 s after them)."""
    return {"seconds": round((before["seconds"] + after["seconds"]) / 2, 3), "programs": before["programs"],
            "before": before["seconds"], "after": after["seconds"]}


def has_option(pytest_args: Sequence[str], *names: str) -> bool:
    """Whether one of the options ``names`` is among the pytest arguments (``--name`` or ``--name=...``)."""
    return any(a == n or a.startswith(n + "=") for a in pytest_args for n in names)


def with_seed(pytest_args: Sequence[str]) -> tuple:
    """(the pytest arguments with a seed, the seed): the one given, else a fresh one added, so that
    every run of the bench draws the same examples."""
    for i, a in enumerate(pytest_args):
        if a.startswith("--hypothesis-seed="):
            return list(pytest_args), a.split("=", 1)[1]
        if a == "--hypothesis-seed" and i + 1 < len(pytest_args):
            return list(pytest_args), pytest_args[i + 1]
    seed = str(random.randrange(2**32))
    return [*pytest_args, f"--hypothesis-seed={seed}"], seed


def cache_runs(out: Path, pytest_args: Sequence[str], devices: Optional[int], warm: bool) -> List[tuple]:
    """The runs to make at one device count: (label, folder, pytest arguments): ``cold`` on an empty
    compilation cache in the bench's folder and ``warm`` on the cache it left; one ``uncached``
    or ``as given`` run where the arguments choose the cache themselves."""
    base = run_folder_name(devices)
    if has_option(pytest_args, "--no-compilation-cache"):
        return [("uncached", out / base, list(pytest_args))]
    if has_option(pytest_args, "--compilation-cache"):
        return [("as given", out / base, list(pytest_args))]
    cache = out / f"compilation-cache-{base}"
    shutil.rmtree(cache, ignore_errors=True)
    cached = [*pytest_args, "--compilation-cache", str(cache)]
    return [("cold", out / f"{base}-cold", cached)] + ([("warm", out / f"{base}-warm", cached)] if warm else [])


def ratio_line(label: str, record: dict, reference: dict) -> str:
    """``cold: wall 150.2 s = 9.0x the reference; 3,388 programs, 3,300 compiled, 0 served, 0 twice``."""
    total = {k: sum(r[k] for r in suite_rows(record).values()) for k in ("programs", "compilations", "served",
                                                                      "duplicates", "examples")}
    return (f"{label}: wall {record['wall_seconds']:.1f} s = {record['wall_seconds'] / reference['seconds']:.2f}x "
            f"the reference; {total['examples']:,} examples, {total['programs']:,} programs, "
            f"{total['compilations']:,} compiled, {total['served']:,} served by the cache, "
            f"{total['duplicates']:,} asked for twice")


def bench(devices: Optional[Sequence[int]], keep: Optional[Path], extra: Sequence[str], warm: bool = True) -> int:
    """The reference workload, then the suites at each device count (None: 8 on CPU, the devices
    present on GPU/TPU), cold and warm (``cache_runs``): each run's table, its ratio to the
    reference, and (several counts) the growth table of the cold runs; exit status 1 if any run
    failed, a ReportError (after the other runs) if a run left no report."""
    runs = planned_runs(devices, extra)
    extra, seed = with_seed(extra)
    out = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="conformance-bench-"))
    print(f"== the reference workload (reports.reference), then the suites with --hypothesis-seed={seed}, "
          "the reference again after each run", flush=True)
    references = [run_reference(extra)]
    print(f"== reference: {references[0]['programs']} programs in {references[0]['seconds']:.1f} s", flush=True)
    records, status, missing, made = {}, 0, [], []
    for n in runs:
        for label, folder, args in cache_runs(out, extra, n, warm):
            try:
                record = run_suites(n, folder, args)
            except ReportError as e:
                missing.append(str(e))
                continue
            records.setdefault(n, record)
            print(f"== {devices_label(n)}, {label}: wall {record['wall_seconds']:.1f} s, exit status "
                  f"{record['exit_status']} ({' '.join(record['last_lines'][-1:])})")
            print(table(record))
            references.append(run_reference(extra))
            print(f"== reference: {references[-1]['programs']} programs in {references[-1]['seconds']:.1f} s\n",
                  flush=True)
            made.append((f"{devices_label(n)}, {label}", record,
                         sandwiched(references[-2], references[-1])))
            status = status or (1 if record["exit_status"] != 0 else 0)
    if len(records) > 1:
        print(growth_table(records))
    print()
    for label, record, reference in made:
        print(f"{label}: the reference {reference['seconds']:.1f} s (the mean of {reference['before']:.1f} s "
              f"just before the run and {reference['after']:.1f} s just after)")
        print(ratio_line(label, record, reference))
    print(f"\nrun reports: {out}", flush=True)
    if missing:
        raise ReportError("\n".join(missing))
    return status
