"""The run report's pytest plugin (listed by the root ``conftest.py`` after the runner's).

Two parts. ``attach_details`` runs wherever a test runs (an xdist worker, or the only process): it
adds to the test's report what only that process knows (Hypothesis' example counts, the
falsifying example, the failure's one-line finding and stand-alone reproduction, and the
structured fields the readers use: whether the property is random, why it skipped, its known
deviation) as a user property, which xdist carries to the controller. ``ReportWriter`` runs in the
controller only: it gathers every test's reports, and rewrites ``report.json`` whole after each
test (marked incomplete), then once more at the end (complete) together with ``report.html``.

This module imports no JAX at module level (pytest loads it before the runner has set JAX's
environment); the hooks that need JAX run after the backend started.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import re
import resource
import shlex
import subprocess
import sys
import textwrap
import time
import tomllib
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, Optional

import hypothesis
import numpy
import pytest

from conformance.checking.case import ConformanceFailure
from conformance.checking.symptoms import Seen
from conformance.runner import areas, deviations, profiles, run_folder, state
from conformance.runner.plugin import plain

from . import record as rec
from .html import run_page

DETAILS = "conformance_details"
WRITE_INTERVAL_S = 2.0  # rewrite the interim report at most this often (a rewrite of a whole run's report takes
# ~15 ms by its end: at 0.5 s they cost 2 s of a warm serial run, measured 2026-12-05)


# --- wherever a test runs ---------------------------------------------------------------------
def hypothesis_counts(statistics: Optional[str]):
    """(examples run, invalid examples) summed over the phases of Hypothesis' statistics text."""
    if not statistics:
        return None, None
    found = re.findall(r"(\d+) passing, (\d+) failing, and (\d+) invalid", statistics)
    return (sum(int(p) + int(f) for p, f, _ in found), sum(int(i) for _, _, i in found)) if found else (0, 0)


def conformance_failure(error: BaseException):
    """The ConformanceFailure inside ``error`` (itself, or one of an exception group's), or None."""
    if isinstance(error, ConformanceFailure):
        return error
    for inner in getattr(error, "exceptions", ()):
        found = conformance_failure(inner)
        if found is not None:
            return found
    return None


def skip_kind(call) -> str:
    """Why a test skipped: "api-removed" or "api-arrived" (this JAX lacks the API: the skip carries
    the feature, see ``compat.feature_missing``), or "other"."""
    from conformance.jaxside.compat import Feature

    missing = getattr(call.excinfo.value, "feature", None) if call.excinfo is not None else None
    return missing.missing_kind if isinstance(missing, Feature) else "other"


def deviation_fields(item, call, report) -> Optional[dict]:
    """The test's known deviation on this JAX, as the report records it (None without one);
    ``fixed``: a strict one that did not reproduce (its call passed), so JAX fixed it here."""
    deviation = item.stash.get(state.ITEM_DEVIATION, None)
    if deviation is None:
        return None
    return {"jax": deviation.jax, "strict": deviation.strict, "reproduced_by": deviation.reproduced_by or None,
            "fixed": deviations.is_unexpected_pass(deviation, call, report),
            "source": deviations.shown_path(deviation.source, run_folder.ROOT) if deviation.source else None,
            "backend": deviation.backend or None, "symptom": deviation.symptom.describe(),
            "kind": deviation.kind or None, "upstream": deviation.upstream or None,
            "where": deviation.where if deviation.source else None}


REPEATED_SHOWN = 20  # of a property's repeated programs, the report names this many


def compilation_fields(counted: dict) -> dict:
    """A property's ``compilations.Compilations`` as the report records it: programs asked for,
    compilations and their seconds, programs the persistent cache served, and the repeated
    programs (module name and the property that asked first, the first REPEATED_SHOWN of them)."""
    return {"programs": counted["programs"], "compilations": counted["compilations"],
            "compile_seconds": round(counted["compile_seconds"], 4), "cache_served": counted["served"],
            "duplicate_programs": counted["duplicates"],
            "repeated": [{"module": m, "first_asked_by": first} for m, first in counted["repeated"][:REPEATED_SHOWN]]
            or None}


def peak_rss_mib() -> float:
    """This process's peak resident memory so far, in MiB (Linux counts KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 2**10), 1)


def attach_details(item, call, report) -> None:
    """Add the suite area, whether the property is random, its known deviation and why it skipped
    (every phase) and, to a call-phase report, the examples run, the falsifying example, the
    finding and the reproduction."""
    details = {"area": next((m.name for m in item.iter_markers() if m.name in areas.AREAS), None),
               "random": bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False))}
    if report.when != "teardown":  # (a teardown would hide what the call said of the deviation)
        details["deviation"] = deviation_fields(item, call, report)
    if report.skipped and not hasattr(report, "wasxfail"):
        details["skip_kind"] = skip_kind(call)
    if report.when == "teardown":  # (pytest's JUnit XML writer reads the teardown's properties)
        report.user_properties += readable_properties(item, details["area"])
    if report.when != "call":
        report.user_properties.append((DETAILS, plain(details)))
        return
    examples, invalid = hypothesis_counts(getattr(item, "hypothesis_statistics", None))
    details.update(examples=examples, invalid_examples=invalid, peak_rss_mib=peak_rss_mib())
    excused = [v for k, v in item.user_properties if k == state.EXCUSED]
    if excused:
        details["excused"] = excused[-1]
    refusals = [v for k, v in item.user_properties if k == state.REFUSALS]
    if refusals:
        details["refusals"] = refusals[-1]
    sharded_runs = [v for k, v in item.user_properties if k == state.SHARDED_RUNS]
    if sharded_runs:
        details["sharded_runs"] = sharded_runs[-1]
    compiled = [v for k, v in item.user_properties if k == state.COMPILATIONS]
    if compiled:
        details.update(compilation_fields(compiled[-1]))
    if report.failed and call.excinfo is not None:
        information = getattr(item, "hypothesis_report_information", "") or ""
        notes = getattr(call.excinfo.value, "__notes__", None) or []  # newer Hypothesis puts it here
        falsifying = [line for text in [information, *notes] for line in str(text).splitlines()
                      if line.strip() and "reproduce_failure" not in line]
        details["falsifying_example"] = "\n".join(falsifying) or None
        details["seen"] = seen_fields(call.excinfo.value)
        failure = conformance_failure(call.excinfo.value)
        if failure is not None:
            details["message"] = failure.finding
            details["repro"] = textwrap.dedent(failure.repro) or None
            crash = getattr(report.longrepr, "reprcrash", None)
            if crash is not None:  # the short summary (-ra) leads with the finding, not our class's path
                crash.message = failure.finding.splitlines()[0]
        else:
            details["message"] = f"{call.excinfo.typename}: {call.excinfo.value}"[:2000]
        details["rerun"] = rerun_command(item)
        report.sections.append(("rerun this property", details["rerun"]))
    report.user_properties.append((DETAILS, plain(details)))


def rerun_command(item) -> str:
    """The one-line command that reruns exactly this property as this run ran it: its node id,
    the seed, the devices (or backend), the profile, x64 and the users' deviation files."""
    import jax

    config = item.config
    env = {"backend": jax.default_backend(), "device_count": jax.device_count(),
           "profile": profiles.profile_name(config), "x64": bool(jax.config.jax_enable_x64)}
    return " ".join(["pytest", shlex.quote(item.nodeid), f"--hypothesis-seed={config.option.hypothesis_seed}",
                     *rec.run_options(env),
                     *(f"--deviations {shlex.quote(str(p))}" for p in config.getoption("--deviations"))])


def seen_fields(failure: BaseException) -> Optional[dict]:
    """A failure as a deviation's symptom reads it (raised, message, check, shows, and the
    innermost frame that raised it, which a symptom's raised_in reads; a long message keeps its
    first and last 2000 characters, where an XLA error quotes the Python one), for the
    tools that judge an entry from a run's report (the bisection over releases); None for a failure of
    several examples at once (Hypothesis' ExceptionGroup), which no one symptom describes."""
    if isinstance(failure, BaseExceptionGroup):
        return None
    seen = Seen.of(failure)
    message = seen.message if len(seen.message) <= 4000 else f"{seen.message[:2000]} ... {seen.message[-2000:]}"
    return {"raised": seen.raised, "message": message, "check": seen.check, "shows": seen.shows, "frame": seen.frame}


def readable_properties(item, area: Optional[str]) -> list:
    """What a JUnit XML reader (``--junitxml``) sees of a property: its suite area and, where one is
    in effect, its known deviation, as plain text (the report's own details are taken out before
    pytest writes the XML: they are Python objects)."""
    properties = [("area", area or "")]
    deviation = item.stash.get(state.ITEM_DEVIATION, None)
    if deviation is not None:
        properties.append(("known_deviation", deviation.xfail_reason))
    return properties


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if areas.in_suites(item.nodeid):
        attach_details(item, call, report)
    return report


# --- the controller -----------------------------------------------------------------------------
def pytest_configure(config):
    """The controller (or the only process) writes the report; xdist workers hand it their
    details."""
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(report_writer(config), "conformance-report-writer")


def report_writer(config) -> "ReportWriter":
    """The run report's writer (its environment is read when the session starts)."""
    import jax

    folder = run_folder.chosen(config.getoption("--report-dir")) or \
        run_folder.default(jax.__version__, jax.default_backend())
    process = jax.process_index() if jax.process_count() > 1 else 0  # (the launcher's copies, or a pod's)
    if process:  # (a multi-process run: process 0 writes the run's report)
        folder = folder / f"process-{process}"
    writer = ReportWriter(folder, lambda: environment(config))
    writer.write_on_setup = state.leader_of(config) is not None  # the launcher reads "running"
    return writer


def pytest_conformance_run_broken(run_folder, message):
    mark_report_broken(run_folder, message)


def iso_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def new_entry(nodeid: str) -> dict:
    """A property's record before any of its phases is known (passed, no details)."""
    module = nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")
    return {"id": nodeid, "suite": module, "area": None, "outcome": "passed",
            "duration": 0.0, "examples": None, "invalid_examples": None, "programs": None,
            "compilations": None, "compile_seconds": None, "cache_served": None, "duplicate_programs": None,
            "repeated": None, "peak_rss_mib": None, "random": None, "skip_kind": None, "deviation": None,
            "excused": None, "refusals": None, "sharded_runs": None, "seen": None, "reason": None, "message": None,
            "falsifying_example": None, "repro": None, "rerun": None}


NOT_YET_MULTI_CONTROLLER = "not yet run multi-controller"  # (the readiness table's skip reasons begin so)


def multi_process_summary(tests, processes: int) -> str:
    """One line for a multi-controller run: how many properties ran on every process, and how many
    skipped, by the readiness table (conformance/runner/multi_controller.toml) or otherwise."""
    tests = list(tests)
    ran = [t for t in tests if t["outcome"] not in ("skipped",)]
    skipped = [t for t in tests if t["outcome"] == "skipped"]
    not_yet = sum((t.get("reason") or "").startswith(NOT_YET_MULTI_CONTROLLER) for t in skipped)
    outcomes = Counter(t["outcome"] for t in ran)
    said = ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))
    return (f"multi-controller, {processes} processes: {len(ran)} properties ran on every process ({said}); "
            f"{len(skipped)} skipped: {not_yet} not yet run multi-controller (conformance/runner/"
            f"multi_controller.toml, each with its reason), {len(skipped) - not_yet} for other reasons (each in the "
            f"run report)")


class ReportWriter:
    """Collects the controller's test reports into one record and keeps it on disk."""

    def __init__(self, run_dir: Path, read_environment: Callable[[], dict]):
        self.run_dir = Path(run_dir)
        self.read_environment = read_environment  # called when the session starts
        self.environment = {"started": iso_now(), "finished": None}
        self.tests: Dict[str, dict] = {}
        self.active = False  # only runs of suites/ tests write a report
        self.last_write = 0.0
        self.running: Optional[str] = None  # the test in progress (named if the run breaks)
        self.write_on_setup = False  # multi-process leader: the launcher reads "running"
        self.api_calls: Dict[tuple, list] = {}  # (entry, parameter, form, spelling, context) -> [calls, tests]

    # --- pytest hooks (controller) ---
    def pytest_sessionstart(self, session):
        # Read here, not at configure time: by now every plugin (Hypothesis' profile loading
        # included) has configured.
        self.environment.update(self.read_environment())

    def pytest_collection_finish(self, session):
        if session.config.option.collectonly:  # --co runs nothing, so it reports nothing
            return
        if any(areas.in_suites(item.nodeid) for item in session.items):
            self.active = True
            self.write("incomplete")

    @pytest.hookimpl(tryfirst=True)  # before pytest's --junitxml writer, which would print the details' repr
    def pytest_runtest_logreport(self, report):
        if not areas.in_suites(report.nodeid):
            return
        self.active = True
        entry = self.tests.setdefault(report.nodeid, new_entry(report.nodeid))
        entry["duration"] = round(entry["duration"] + getattr(report, "duration", 0.0), 4)
        for name, value in getattr(report, "user_properties", ()):
            if name == DETAILS:
                entry.update({k: v for k, v in value.items() if v is not None or k not in entry})
            if name == state.API_CALLS and report.when == "call":
                for *call, count in value:
                    counted = self.api_calls.setdefault(tuple(call), [0, 0])
                    counted[0] += count
                    counted[1] += 1
        report.user_properties = [(name, value) for name, value in report.user_properties
                                  if name not in (DETAILS, state.COMPILATIONS, state.EXCUSED, state.REFUSALS,
                                                  state.API_CALLS)]
        self.apply_outcome(entry, report)
        if report.when == "setup":
            self.running = report.nodeid
            if self.write_on_setup:
                self.write("incomplete")
        if report.when == "teardown":
            self.running = None
            if time.monotonic() - self.last_write > WRITE_INTERVAL_S:
                self.write("incomplete")

    def pytest_sessionfinish(self, session, exitstatus):
        if not self.active or not self.tests:  # -m/-k selected nothing, or a usage error stopped it
            self.discard()
            return
        interrupted = exitstatus in (2,)  # pytest's INTERRUPTED: a Ctrl-C leaves an incomplete run
        self.environment["finished"] = iso_now()
        self.environment["peak_rss_mib"] = max([peak_rss_mib()] + [t["peak_rss_mib"] for t in self.tests.values()
                                                                   if t.get("peak_rss_mib") is not None])
        self.write("incomplete" if interrupted else "complete")
        run_folder.write_atomically(self.run_dir / "report.html", run_page(self.record("complete")))

    def discard(self) -> None:
        """Take back the report written when collection ended (and the run folder, if it is left
        empty): the run ran no test."""
        if self.active:
            for name in (rec.REPORT_NAME, "report.html"):
                (self.run_dir / name).unlink(missing_ok=True)
        self.active = False
        if self.run_dir.absolute() in run_folder.MADE:
            try:
                self.run_dir.rmdir()  # (only when empty)
            except OSError:
                pass

    def pytest_terminal_summary(self, terminalreporter):
        if self.active:
            processes = self.environment.get("process_count") or 1
            if processes > 1:
                terminalreporter.write_line(multi_process_summary(self.tests.values(), processes))
            terminalreporter.write_line(f"run report: {self.run_dir / rec.REPORT_NAME} "
                                        f"(and report.html)")

    # --- building the record ---
    @staticmethod
    def apply_outcome(entry: dict, report) -> None:
        """pytest's three phases folded into one outcome, as pytest's own summary counts them."""
        wasxfail = getattr(report, "wasxfail", None)
        if report.when == "call":
            if report.skipped and wasxfail is not None:
                entry["outcome"], entry["reason"] = "xfailed", wasxfail or None
            elif report.passed and wasxfail is not None:
                entry["outcome"], entry["reason"] = "xpassed", wasxfail or None
            elif report.failed:
                entry["outcome"] = "failed"
            elif report.skipped:
                entry["outcome"], entry["reason"] = "skipped", skip_reason(report)
        elif report.failed:  # setup or teardown
            entry["outcome"] = "error"
            entry["message"] = entry["message"] or f"{report.when}: {str(report.longrepr)[-2000:]}"
        elif report.skipped and report.when == "setup":
            entry["outcome"], entry["reason"] = "skipped", skip_reason(report)
        if entry["message"] is None and report.failed:
            entry["message"] = str(report.longrepr)[-2000:]

    def record(self, status: str) -> dict:
        tests = sorted(self.tests.values(), key=lambda t: t["id"])
        return {"format": rec.FORMAT, "status": status, "environment": self.environment,
                "summary": rec.summary(tests), "tests": tests,
                "running": None if status == "complete" else self.running,
                "api_calls": [[*call, *counted] for call, counted in sorted(self.api_calls.items())]}

    def write(self, status: str) -> None:
        run_folder.write_atomically(self.run_dir / rec.REPORT_NAME, rec.dump(self.record(status)))
        self.last_write = time.monotonic()


def skip_reason(report) -> Optional[str]:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr) if longrepr else None


def xdist_workers(config) -> int:
    """How many pytest-xdist workers ran the tests (0 without -n; "-n auto" is a number by now)."""
    workers = getattr(config.option, "numprocesses", None)
    return workers if isinstance(workers, int) else 0


def environment(config) -> dict:
    """What a reader needs to know about the run: versions, backend and devices, profile, seed."""
    import jax

    from conformance.jaxside import compat

    devices = jax.devices()
    return {
        "jax": jax.__version__, "jaxlib": str(compat.JAXLIB_VERSION), "numpy": numpy.__version__,
        "hypothesis": hypothesis.__version__, "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "backend": jax.default_backend(), "device_kind": devices[0].device_kind if devices else "none",
        "device_count": len(devices), "process_count": jax.process_count(),
        "workers": xdist_workers(config),
        "profile": profiles.profile_name(config), "max_examples": profiles.max_examples(),
        "seed": str(config.option.hypothesis_seed),
        "x64": bool(jax.config.jax_enable_x64), "known_deviations": len(config.stash[state.DEVIATIONS]),
        "deviation_files": list(config.stash[state.DEVIATIONS].files),
        "command": " ".join(["pytest", *sys.argv[1:]]) if sys.argv else "pytest",
        "selection": selection(config),
        "suite": suite_identity(run_folder.ROOT),
        "peak_rss_mib": None,  # (the largest of every process's, when the run ends)
        "compilation_cache": cache_fields(config),
    }


def cache_fields(config) -> dict:
    """The run's persistent compilation cache: its folder (None: none used) and what chose it, or
    why there is none; whether programs could be counted on this JAX."""
    choice = config.stash[state.CACHE]
    return {"folder": None if choice.folder is None else str(choice.folder), "source": choice.source,
            "programs_counted": bool(getattr(config.stash.get(state.COMPILES, None), "counts_programs", False))}


def selection(config) -> dict:
    """Which tests the run selected, as compare checks two runs against each other: the paths
    (relative to the checkout, "suites/" for the folder), ``-m``, ``-k`` and ``--deselect``."""
    here = Path(config.invocation_params.dir)
    def shown(arg: str) -> str:
        path, sep, rest = arg.partition("::")
        try:
            relative = (here / path).resolve().relative_to(run_folder.ROOT).as_posix()
        except ValueError:
            relative = path
        folder = (run_folder.ROOT / relative).is_dir()
        return (relative.rstrip("/") + ("/" if folder else "")) + sep + rest
    return {"paths": sorted(shown(a) for a in config.args),
            "markers": config.option.markexpr or "", "keywords": config.option.keyword or "",
            "deselect": sorted(shown(a) for a in (config.option.deselect or ()))}


def suite_identity(root: Path) -> dict:
    """This suite's version (pyproject.toml) and, in a git checkout, its commit and whether the
    tracked files differ from it (None where git or the checkout is absent)."""
    version = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]

    def git(*args) -> "str | None":
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD") if (root / ".git").exists() else None
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"version": version, "commit": commit, "modified": None if status is None else bool(status)}


def mark_report_broken(folder: Path, message: str) -> None:
    """The leader's run report, with the property it was running failed for ``message``."""
    path = folder / rec.REPORT_NAME
    if not path.exists():
        return
    record = json.loads(path.read_text())
    running = record.get("running")
    if running:
        entry = next((t for t in record["tests"] if t["id"] == running), None)
        if entry is None:
            entry = new_entry(running)
            record["tests"].append(entry)
        entry.update(outcome="failed", message=f"{message} while this property ran")
    record["status"] = "incomplete"
    record["summary"] = rec.summary(record["tests"])
    run_folder.write_atomically(path, rec.dump(record))
