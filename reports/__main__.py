"""``python -m reports``: turn run reports into answers.

    python -m reports compare BASE NEW [--accept FILE] [--markdown FILE] [--html FILE] [--replay | --replay-with PYTHON]
                                                           the upgrade gate: safe (exit 0), regressions
                                                           (1) or not comparable (3), then what changed
    python -m reports matrix RUN... [-o FILE]              properties x runs, as one HTML page
    python -m reports html RUN                             (re)write a run's report.html
    python -m reports bench [--devices N...] [--no-warm] [-- ARGS]
                                                           the reference workload, then pytest suites/
                                                           cold and warm: time per suite, ratios
    python -m reports table RUN                            a run's time, examples and compilations
    python -m reports deviations                           the known deviations: kind, range, upstream
    python -m reports bugs DIR                             one report to file per root cause in effect on
                                                           the installed JAX (its script run here); exit 1
                                                           if a script does not show its bug
    python -m reports bugs --page [FILE]                   write BUGS.md (every cause, its releases, status)
    python -m reports api-coverage [RUN] [--check] [--markdown FILE]
                                                           every (entry, parameter) of the installed JAX's
                                                           inventory: checked by the run, or the row that
                                                           says why not; --check: exit 1 for one with no row

BASE, NEW and RUN are run folders (holding report.json), report.json files, or JAX versions
(``0.10.2`` or ``jax-0.10.2``: the tox run folder reports/runs/jax-0.10.2). ``matrix --all`` takes
every tox run folder present, oldest release first. Exit status: 0 fine (compare: safe), 1
regressions found, 2 a bad argument or a malformed report, 3 (compare) runs that are not comparable.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import re
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

from conformance.runner.deviations import DEVIATIONS_FILE, load_deviations
from conformance.runner.devices import UsageError
from conformance.runner.environment import quiet_on_a_closed_pipe
from conformance.runner.release_envs import python_of
from conformance.runner.releases import release
from conformance.runner.run_folder import ROOT, write_atomically

from . import bench as bench_
from . import api_coverage, bugs
from . import compare as cmp
from . import deviations as dev
from . import gate
from .html import comparison_page, matrix_page, run_page
from .record import REPORT_NAME, ReportError, load, resolve
from .replay import replay_regressions


RUNS = ROOT / "reports" / "runs"


def locate(run: str) -> str:
    """A run named on the command line: a path as is, else a JAX version's tox run folder."""
    if Path(run).exists() or not re.fullmatch(r"(jax-)?\d+(\.\d+)+", run):
        return run
    folder = RUNS / f"jax-{run.removeprefix('jax-')}"
    if folder.is_dir():
        return str(folder)
    raise ReportError(f"{run}: no tox run folder {folder} (run tox -e jax-{run.removeprefix('jax-')} first)")


def tox_runs() -> list:
    """Every tox run folder (reports/runs/jax-<version>) holding a report, oldest release first."""
    def order(folder: Path):
        try:
            return (0, Version(folder.name.removeprefix("jax-")))
        except InvalidVersion:
            return (1, folder.name)
    return [str(f) for f in sorted((f for f in RUNS.glob("jax-*") if (f / REPORT_NAME).exists()), key=order)]


def base_interpreter(base: dict) -> str:
    """The interpreter of the base run's release environment (made on first use)."""
    try:
        return str(python_of(release(base["environment"]["jax"])))
    except UsageError as e:
        raise ReportError(f"cannot replay on the base: {e}") from None


def installed_jax() -> str:
    """The installed JAX's version (its distribution's metadata: JAX itself is not imported)."""
    try:
        return importlib.metadata.version("jax")
    except importlib.metadata.PackageNotFoundError:
        raise ReportError("no JAX installed here to reproduce the deviations with") from None


def run_page_links(page: Path, *runs: str) -> list:
    """Each run's report.html relative to ``page``'s folder (None where the run has none)."""
    pages = [resolve(locate(run)).with_name("report.html") for run in runs]
    return [os.path.relpath(p, page.absolute().parent) if p.is_file() else None for p in pages]


def output_file(path: str, option: str) -> Path:
    """A file to write, named by ``option``: its folder must exist (nothing is made on the way)."""
    file = Path(path)
    if not file.parent.is_dir():
        raise ReportError(f"{option} {path}: no such folder {file.parent} (make it first)")
    if file.is_dir():
        raise ReportError(f"{option} {path}: is a folder, not a file")
    return file


def write_bugs(folder, page) -> int:
    """``bugs DIR`` or ``bugs --page FILE``: 0 when written (and every script showed its bug), 1 when a
    script in effect here did not."""
    if (folder is None) == (page is None):
        raise ReportError("bugs: name a folder for the reports, or --page [FILE] for the page (one of them)")
    causes, entries = bugs.load_causes(), load_deviations(DEVIATIONS_FILE)
    broken = bugs.problems(causes, entries)
    if broken:
        more = f" (and {len(broken) - 1} more: pytest tests/test_bugs.py lists them)" if len(broken) > 1 else ""
        raise ReportError(f"the deviation entries and their causes do not agree: {broken[0]}{more}")
    if page is not None:
        target = output_file(page, "--page")
        write_atomically(target, bugs.page(causes, entries))
        print(f"wrote {target}")
        return 0
    if not folder.parent.is_dir():
        raise ReportError(f"bugs {folder}: no such folder {folder.parent} (make it first)")
    version = installed_jax()
    written = bugs.write_reports(folder, causes, entries, version)
    failed = 0
    for path, f, run in written:
        said = ("no script (reproduced by its tests)" if run is None else
                "reproduced" if run.shows_the_bug(f.cause) else f"NOT REPRODUCED ({run.status})")
        failed += run is not None and not run.shows_the_bug(f.cause)
        print(f"wrote {path}: {said}")
    print(f"{len(written)} causes in effect on JAX {version}"
          + (f"; {failed} scripts did not show their bug" if failed else ""))
    return 1 if failed else 0


def newest_run_of_the_installed_jax() -> str:
    """The run folder under reports/runs whose report is the newest for the installed JAX."""
    version = installed_jax()
    found = sorted((f for f in RUNS.glob(f"*jax-{version}*") if (f / REPORT_NAME).exists()),
                   key=lambda f: (f / REPORT_NAME).stat().st_mtime)
    if not found:
        raise ReportError(f"no run of JAX {version} under {RUNS} (run pytest suites/ first)")
    return str(found[-1])


def api_coverage_command(run, check: bool, markdown) -> int:
    """``api-coverage``: the summary (and the pairs with no row), the table as Markdown if asked; 1
    with --check when a pair has no row."""
    record = load(locate(run) if run else newest_run_of_the_installed_jax())
    version, pairs = api_coverage.of_run(record)
    cells = api_coverage.contexts_of_run(record)
    counted = api_coverage.summary(pairs)
    print(api_coverage.markdown(pairs, version).split("\n\n")[1])
    print(api_coverage.context_markdown(cells).split("\n\n")[1])
    missing = [p for p in pairs if p.status == "no row"]
    for p in missing:
        print(f"no row: {p.entry} {p.parameter}")
    missing_contexts = [c for c in cells if c.status == "no row"]
    for c in missing_contexts:
        print(f"no row: {c.entry} in context {c.context!r}")
    if markdown:
        target = output_file(markdown, "--markdown")
        write_atomically(target, api_coverage.markdown(pairs, version) + "\n" + api_coverage.context_markdown(cells))
        print(f"wrote {target}")
    return 1 if check and (counted.get("no row") or missing_contexts) else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reports", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    c = commands.add_parser("compare", help="the upgrade gate: safe (0), regressions (1), not comparable (3)",
                            description=gate.__doc__.split("\n\n")[0])
    c.add_argument("base")
    c.add_argument("new")
    c.add_argument("--accept", metavar="FILE", type=Path,
                   help="regressions your team has decided to take on ([[accept]] tables: test, reason, "
                        "optional jax range of NEW): the gate is safe for them only")
    c.add_argument("--markdown", metavar="FILE", help="also write the comparison as Markdown")
    c.add_argument("--html", metavar="FILE", help="also write the comparison as an HTML page (verdict banner first)")
    c.add_argument("--replay-with", metavar="PYTHON",
                   help="the base environment's interpreter: replay each regression there with the new "
                        "run's seed, and call it pre-existing if the base fails it too")
    c.add_argument("--replay", action="store_true",
                   help="as --replay-with, with the base release's environment (release_envs)")
    m = commands.add_parser("matrix", help="one HTML table of properties x runs")
    m.add_argument("runs", nargs="*")
    m.add_argument("--all", action="store_true", help="every tox run folder in reports/runs, oldest first")
    m.add_argument("-o", "--output", default="matrix.html",
                   help="where to write (default matrix.html); its folder must exist")
    h = commands.add_parser("html", help="write a run's report.html from its report.json")
    h.add_argument("run")
    b = commands.add_parser("bench", help="run pytest suites/ and print where the time goes",
                            description="Time pytest suites/ (a line per suite as it finishes), then "
                                        "print where the time went. The platform is the harness's: "
                                        "--backend after --, else $JAX_PLATFORMS, else cpu.")
    b.add_argument("--devices", type=int, nargs="+", metavar="N",
                   help="forced CPU device counts, one run each (default 8); not on GPU/TPU, where "
                        "one run uses the devices present")
    b.add_argument("--keep", metavar="DIR", help="keep the runs' reports here (default a temp folder)")
    b.add_argument("--no-warm", dest="warm", action="store_false",
                   help="only the cold run (an empty compilation cache), not the warm one after it")
    b.add_argument("pytest_args", nargs="*", metavar="-- ARGS",
                   help="more pytest arguments, after -- (e.g. -- -n 2, -- -k mesh, -- --backend cuda); "
                        "a test file named there replaces suites/")
    d = commands.add_parser("deviations", help="the known deviations: kind, range, upstream")
    d.add_argument("--file", type=Path, default=DEVIATIONS_FILE)
    g = commands.add_parser("bugs", help="a report to file per root cause in effect here, or the BUGS.md page",
                            description=bugs.__doc__.split("\n\n")[0])
    g.add_argument("folder", nargs="?", type=Path,
                   help="where to write the reports (made if missing; its parent must exist)")
    g.add_argument("--page", nargs="?", const=str(bugs.PAGE), metavar="FILE",
                   help=f"write the page of every cause instead (default {bugs.PAGE.name} at the checkout's top)")
    t = commands.add_parser("table", help="a run's seconds, examples/s and compilations per suite")
    t.add_argument("run")
    a = commands.add_parser("api-coverage", help="the run's API coverage: every (entry, parameter) of the inventory",
                            description=api_coverage.__doc__.split("\n\n")[0])
    a.add_argument("run", nargs="?", help="a run (default: the newest run folder of the installed JAX in reports/runs)")
    a.add_argument("--check", action="store_true", help="exit 1 when a pair is neither checked nor has a row")
    a.add_argument("--markdown", metavar="FILE", help="write the whole table as Markdown")
    args = parser.parse_args(argv)
    try:
        if args.command == "api-coverage":
            return api_coverage_command(args.run, args.check, args.markdown)
        if args.command == "bench":
            return bench_.bench(args.devices, args.keep, args.pytest_args, args.warm)
        if args.command == "deviations":
            if not args.file.is_file():
                raise ReportError(f"--file {args.file}: no such file")
            print(dev.table(load_deviations(args.file)))
            return 0
        if args.command == "bugs":
            return write_bugs(args.folder, args.page)
        if args.command == "table":
            print(bench_.table(load(args.run)))
            return 0
        if args.command == "compare":
            base, new = load(locate(args.base)), load(locate(args.new))
            acceptances = gate.load_acceptances(args.accept) if args.accept else []
            markdown_file = output_file(args.markdown, "--markdown") if args.markdown else None
            html_file = output_file(args.html, "--html") if args.html else None
            changes = cmp.compare(base, new)
            base_python = args.replay_with or (base_interpreter(base) if args.replay else None)
            if base_python and not gate.comparability(base, new):
                changes = cmp.with_replays(changes, replay_regressions(changes, new, base_python))
            changes = gate.with_acceptances(changes, acceptances, new["environment"]["jax"])
            verdict = gate.verdict(base, new, changes)
            unused = gate.unused_acceptances(changes, acceptances)
            if markdown_file:  # (written before printing: a reader that closes the pipe early loses nothing)
                write_atomically(markdown_file, cmp.markdown(base, new, changes, verdict, unused))
            if html_file:
                write_atomically(html_file, comparison_page(base, new, changes, verdict, unused, cmp.KINDS,
                                                            *run_page_links(html_file, args.base, args.new)))
            print(cmp.text_table(base, new, changes, verdict, unused))
            if base["environment"]["jax"] != new["environment"]["jax"]:
                print("\n" + api_coverage.api_changes_text(base["environment"]["jax"], new["environment"]["jax"]))
            return verdict.exit_status
        if args.command == "matrix":
            output = output_file(args.output, "-o")
            runs = [locate(run) for run in args.runs] + (tox_runs() if args.all else [])
            if not runs:
                raise ReportError("no runs to show: name run folders, or --all for the tox runs present")
            records = [load(run) for run in runs]
            links = [os.path.relpath(resolve(run).with_name("report.html"), output.absolute().parent) for run in runs]
            write_atomically(output, matrix_page(records, links))
            print(f"wrote {args.output}: {len(records)} runs")
            return 0
        record = load(args.run)
        out = resolve(args.run).with_name("report.html")
        write_atomically(out, run_page(record))
        print(f"wrote {out}")
        return 0
    except (ReportError, UsageError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    quiet_on_a_closed_pipe()
    sys.exit(main())
