"""Which properties each planted fault kills: ``python -m tests.faults.killmap`` (one command, ~1 hour).

For the installed JAX it runs, each in a fresh interpreter, with the default profile:

1. the unfaulted suites (``pytest suites/``): every property must pass (or be a known deviation,
   or skip naming why), else the map is not measured;
2. per fault, ``pytest suites/ -x`` with the fault planted, the way a person meets a broken JAX:
   the first failing property and the wall time until the run stopped;
3. per fault, its target suite areas (``Fault.suites``) without ``-x``: every property it kills (a
   property that passed unfaulted and fails with the fault), with the default profile's examples
   but no shrinking (``default-no-shrink``: a property fails or not all the same).

and writes ``tests/faults/kill_maps/jax-<version>.json``, which ``tests/test_faults.py`` reads to
check that every property of suites/ is killed by some fault, or is explained in
``tests/faults/unkilled.toml``.
Faults whose API this JAX lacks are recorded as not plantable (another version's map covers them).
Each measured fault is saved at once beside the map (``jax-<version>.json.partial``, with the
unfaulted run and the commit measured); ``--resume`` goes on from there on the same commit, so a
run stopped half-way loses only the faults in flight.

    python -m tests.faults.killmap [--jobs 2] [--faults NAME ...] [--devices 8] [--resume]
    python -m tests.faults.killmap show      the measured maps as text (fault -> first failure, kills)
    python -m tests.faults.killmap multi-controller [--processes 2] [--devices 8] [--baseline-report R]
        the faults only several processes can show (tests/faults/multi_controller.py): per fault, its
        target areas run multi-controller with -x (the first property it kills there) and in one
        process (where it must kill nothing), into ``kill_maps/jax-<version>-<N>-processes.json``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from importlib.metadata import version
from pathlib import Path
from typing import List, Optional, Sequence

from conformance.runner.pytest_process import run_pytest

from . import FAULTS

MAPS = Path(__file__).resolve().with_name("kill_maps")
USAGE_ERROR = 4  # pytest's exit status when the fault cannot be planted on this JAX


def suite_selection(areas: Sequence[str]) -> List[str]:
    """The pytest arguments that select the properties of suite ``areas`` (by their markers)."""
    return ["suites/", "-m", " or ".join(areas)]


def run(args: Sequence[str], report_dir: Path, fault: Optional[str] = None, devices: int = 8) -> dict:
    """One pytest run of the suites (with the faults plugin, and ``fault`` planted): exit status,
    wall time, the report's tests by id."""
    started = time.monotonic()
    result = run_pytest(["-q", "-p", "tests.faults", *args, *(["--plant-fault", fault] if fault else []),
                         "--devices", str(devices), "--report-dir", str(report_dir)])
    wall = time.monotonic() - started
    tests = {}
    report = report_dir / "report.json"
    if report.exists():
        tests = {t["id"]: t for t in json.loads(report.read_text())["tests"]}
    return {"status": result.returncode, "wall": round(wall, 1), "tests": tests,
            "tail": result.stdout.strip().splitlines()[-1:] + result.stderr.strip().splitlines()[-2:]}


def multiprocess_args(stems: Sequence[str]) -> List[str]:
    return ["--processes", "2"] if "multiprocess" in stems else []


def measure_fault(name: str, fault, baseline: dict, work: Path, devices: int, first_failure: bool = True) -> dict:
    """Steps 2 and 3 for one fault (step 3 only without ``first_failure``)."""
    mp = multiprocess_args(fault.suites)
    if first_failure:
        first = run(["suites/", "-x", *mp], work / f"{name}-x", name, devices // 2 if mp else devices)
        if first["status"] == USAGE_ERROR:
            return {"plantable": False, "why": " ".join(first["tail"])[-300:]}
        failed = sorted(i for i, t in first["tests"].items() if t["outcome"] in ("failed", "error"))
    full = run([*suite_selection(fault.suites), *mp, "--hypothesis-profile", "default-no-shrink"],
               work / f"{name}-targets", name, devices // 2 if mp else devices)
    killed = sorted(i for i, t in full["tests"].items()
                    if t["outcome"] in ("failed", "error")
                    and (baseline.get(i, {}).get("outcome") in ("passed", None) or mp))
    if not first_failure:
        if full["status"] == USAGE_ERROR:
            return {"plantable": False, "why": " ".join(full["tail"])[-300:]}
        return {"plantable": True, "suites": list(fault.suites), "first_failure_measured": False,
                "targets_status": full["status"], "targets_seconds": full["wall"], "killed": killed}
    return {"plantable": True, "suites": list(fault.suites),
            "first_failure": failed[0] if failed else None,
            "first_failure_message": (first["tests"][failed[0]].get("message") or "")[:300] if failed else None,
            "seconds_to_first_failure": first["wall"], "x_status": first["status"],
            "targets_status": full["status"], "targets_seconds": full["wall"], "killed": killed}


def measured_commit() -> str:
    """The checkout's commit, with ``+changes`` when its tracked files differ from it."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=MAPS.parent, capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "HEAD") or "unknown"
    return commit + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def show(maps: Sequence[dict]) -> str:
    """The measured maps as text: per fault, what stopped ``pytest suites/ -x`` and how many
    properties it kills; per property, the faults that kill it (across the maps)."""
    lines = []
    for record in maps:
        lines.append(f"jax {record['jax']} ({record['measured']}, {record['devices']} devices): unfaulted "
                     f"{record['unfaulted_seconds']} s; median {record['median_seconds_to_first_failure']} s "
                     f"to the first failure with -x")
        for name, result in sorted(record["faults"].items()):
            if not result["plantable"]:
                lines.append(f"  {name:<40} not plantable here")
                continue
            if not result.get("first_failure_measured", True):
                lines.append(f"  {name:<40}      - s  {len(result['killed']):3} killed  (suites/ -x not run)")
                continue
            first = (result["first_failure"] or "NOT CAUGHT").replace("suites/", "")
            lines.append(f"  {name:<40} {result['seconds_to_first_failure']:6.1f} s  "
                         f"{len(result['killed']):3} killed  first: {first}")
    killers: dict = {}
    for record in maps:
        for test_id, faults in record["properties"].items():
            killers.setdefault(test_id, set()).update(faults)
    lines.append("")
    lines.append("property -> faults that kill it:")
    for test_id in sorted(killers):
        lines.append(f"  {test_id.replace('suites/', '')}: {', '.join(sorted(killers[test_id])) or '-'}")
    return "\n".join(lines)


def multi_controller_map(argv: Sequence[str]) -> int:
    """The multi-controller kill map: each fault of ``multi_controller.ACROSS_PROCESSES`` kills a
    property of its target areas run with ``--processes N`` (with ``-x``: the first it kills) and
    none of them run in one process (all of them)."""
    from .multi_controller import ACROSS_PROCESSES
    parser = argparse.ArgumentParser(prog="python -m tests.faults.killmap multi-controller")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--devices", type=int, default=8, help="forced CPU devices in all (default 8)")
    parser.add_argument("--faults", nargs="+", choices=ACROSS_PROCESSES, default=list(ACROSS_PROCESSES))
    parser.add_argument("--baseline-report", metavar="REPORT_JSON", required=True,
                        help="the unfaulted multi-controller run report of pytest suites/ (default profile, same "
                             "commit, processes and devices); it must show no failure")
    args = parser.parse_args(argv)
    report = json.loads(Path(args.baseline_report).read_text())
    baseline = {t["id"]: t for t in report["tests"]}
    failing = sorted(i for i, t in baseline.items() if t["outcome"] in ("failed", "error"))
    if failing or report.get("status") != "complete":
        print(f"the unfaulted multi-controller run does not pass: {failing[:3]}; no map", file=sys.stderr)
        return 1
    processes = report["environment"].get("process_count")
    if processes != args.processes:
        print(f"{args.baseline_report} ran {processes} processes, not {args.processes}; no map", file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="killmap-mc-"))
    mc = ["--processes", str(args.processes)]
    results = {}
    for name in args.faults:
        fault = FAULTS[name]
        selection = [*suite_selection(fault.suites), "--hypothesis-profile", "default-no-shrink"]
        across = run([*selection, *mc, "-x"], work / f"{name}-mc", name, args.devices // args.processes)
        alone = run(selection, work / f"{name}-one", name, args.devices)
        killed = sorted(i for i, t in across["tests"].items()
                        if t["outcome"] in ("failed", "error") and baseline.get(i, {}).get("outcome") == "passed")
        alone_failed = sorted(i for i, t in alone["tests"].items() if t["outcome"] in ("failed", "error"))
        results[name] = {"suites": list(fault.suites), "killed": killed, "status": across["status"],
                         "seconds": across["wall"], "one_process_failed": alone_failed,
                         "one_process_status": alone["status"], "one_process_seconds": alone["wall"]}
        print(f"  {name}: {len(killed)} killed with {args.processes} processes ({across['wall']} s); "
              f"{len(alone_failed)} failed in one process ({alone['wall']} s)", flush=True)
    out = MAPS / f"jax-{version('jax')}-{args.processes}-processes.json"
    if out.exists() and args.faults != list(ACROSS_PROCESSES):  # (some faults re-measured: the others kept)
        results = {**json.loads(out.read_text())["faults"], **results}
    results = {name: results[name] for name in ACROSS_PROCESSES if name in results}
    out.write_text(json.dumps({"jax": version("jax"), "processes": args.processes, "devices": args.devices,
                               "measured": time.strftime("%Y-%m-%d"), "commit": measured_commit(),
                               "baseline": {i: t["outcome"] for i, t in sorted(baseline.items())},
                               "faults": results}, indent=1) + "\n")
    bad = [n for n, r in results.items() if not r["killed"] or r["one_process_failed"]]
    print(f"wrote {out}; faults not caught across processes, or seen by one process: {bad or 'none'}")
    return 1 if bad else 0


def main(argv=None) -> int:
    if argv is None and sys.argv[1:2] == ["multi-controller"]:
        return multi_controller_map(sys.argv[2:])
    if argv is None and sys.argv[1:2] == ["show"]:
        print(show([json.loads(p.read_text()) for p in sorted(MAPS.glob("jax-*.json")) if "processes" not in p.name]))
        return 0
    parser = argparse.ArgumentParser(prog="python -m tests.faults.killmap", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1, help="faults measured at once (default 1)")
    parser.add_argument("--faults", nargs="+", choices=sorted(FAULTS), metavar="FAULT",
                        help="only these faults (names: python -m tests.faults.killmap show, or tests/faults/)")
    parser.add_argument("--devices", type=int, default=8, help="forced CPU devices (default 8)")
    parser.add_argument("--output", help="where to write the map (default tests/faults/kill_maps/jax-<version>.json)")
    parser.add_argument("--resume", action="store_true",
                        help="go on from the faults saved in jax-<version>.json.partial (same commit)")
    parser.add_argument("--targets-only", action="store_true",
                        help="step 3 only: what each fault kills in its target areas, not the time to the first "
                             "failure of suites/ -x (recorded as not measured)")
    parser.add_argument("--baseline-report", metavar="REPORT_JSON",
                        help="take step 1 from this run report of pytest suites/ (default profile, same commit and "
                             "devices) instead of running it again; it must show no failure")
    parser.add_argument("--update", action="store_true",
                        help="keep the other faults' results already in the map (with --faults)")
    args = parser.parse_args(argv)
    jax_version = version("jax")  # (names the map; the runs import JAX, not this process)
    out = Path(args.output) if args.output else MAPS / f"jax-{jax_version}.json"
    partial = out.with_name(out.name + ".partial")
    commit = measured_commit()
    saved = json.loads(partial.read_text()) if args.resume and partial.exists() else None
    if saved is not None and (saved["jax"], saved["devices"], saved["commit"]) != (jax_version, args.devices, commit):
        print(f"{partial} was measured on jax {saved['jax']}, {saved['devices']} devices, commit {saved['commit']}, "
              f"not this run's jax {jax_version}, {args.devices} devices, commit {commit}: not resumed; "
              f"remove it or check that commit out", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="killmap-"))
    if saved is not None:
        base = saved["unfaulted"]
        print(f"jax {jax_version}: resuming {partial} ({len(saved['faults'])} faults measured)", flush=True)
    elif args.baseline_report:
        report = json.loads(Path(args.baseline_report).read_text())
        tests = {t["id"]: t for t in report["tests"]}
        failing = sorted(i for i, t in tests.items() if t["outcome"] in ("failed", "error"))
        env = report["environment"]
        wall = None
        if env.get("started") and env.get("finished"):
            from datetime import datetime
            wall = round((datetime.fromisoformat(env["finished"])
                          - datetime.fromisoformat(env["started"])).total_seconds(), 1)
        base = {"status": 1 if failing or report.get("status") != "complete" else 0, "wall": wall,
                "tests": tests, "tail": failing[:3]}
        print(f"jax {jax_version}: unfaulted run taken from {args.baseline_report} ({len(tests)} tests)", flush=True)
        if base["status"] != 0:
            print(f"the unfaulted suites do not pass in {args.baseline_report}: {failing[:3]}; no map", file=sys.stderr)
            return 1
    else:
        print(f"jax {jax_version}: unfaulted run of suites/ ...", flush=True)
        base = run(["suites/"], work / "baseline", devices=args.devices)
        if base["status"] != 0:
            print(f"the unfaulted suites do not pass (exit {base['status']}): {base['tail']}; no map", file=sys.stderr)
            return 1
    baseline = base["tests"]
    results = dict(saved["faults"]) if saved is not None else {}
    names = [n for n in (args.faults or sorted(FAULTS)) if n not in results]

    def one(name):
        started = time.monotonic()
        result = measure_fault(name, FAULTS[name], baseline, work, args.devices, not args.targets_only)
        where = result.get("first_failure") or result.get("why")
        print(f"  {name}: {len(result.get('killed', []))} killed, first {where} "
              f"({result.get('seconds_to_first_failure', '-')} s with -x; {time.monotonic() - started:.0f} s in all)",
              flush=True)
        return name, result

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for done in as_completed([pool.submit(one, name) for name in names]):
            name, result = done.result()
            results[name] = result
            partial.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps({"jax": jax_version, "devices": args.devices, "commit": commit,
                                           "unfaulted": base, "faults": results}, indent=1) + "\n")
    results = {name: results[name] for name in sorted(results)}
    if args.update and out.exists():  # re-measured faults replace theirs; the others are kept
        results = {**json.loads(out.read_text())["faults"], **results}
    properties = {i: sorted(n for n, r in results.items() if i in r.get("killed", ())) for i in sorted(baseline)}
    plantable = [r for r in results.values() if r["plantable"]]
    times = [r["seconds_to_first_failure"] for r in plantable if r.get("first_failure_measured", True)]
    record = {
        "jax": jax_version, "devices": args.devices, "measured": time.strftime("%Y-%m-%d"), "commit": commit,
        "unfaulted_seconds": base["wall"],
        "median_seconds_to_first_failure": statistics.median(times) if times else None,
        "baseline": {i: t["outcome"] for i, t in sorted(baseline.items())},
        "faults": results, "properties": properties,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n")
    partial.unlink(missing_ok=True)
    missed = [n for n, r in results.items() if r["plantable"]
              and (r["x_status"] != 1 if r.get("first_failure_measured", True) else not r["killed"])]
    unkilled = [i for i, faults in properties.items() if not faults and baseline[i]["outcome"] == "passed"]
    print(f"\nwrote {out}: {len(plantable)} faults planted, median {record['median_seconds_to_first_failure']} s "
          f"to the first failure with -x; faults not caught: {missed or 'none'}; "
          f"passing properties no fault killed here: {len(unkilled)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
