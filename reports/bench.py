"""Where a run's time goes: per suite, seconds, Hypothesis examples per second and JAX compilations
per property, from a run report; and ``run_suites`` to time fresh runs (at several device counts).

    python -m reports bench                      run pytest suites/ once (8 devices), print the table
    python -m reports bench --devices 8 16 32 64 one run per device count, then how time grows
    python -m reports table RUN                  the table of an existing run
"""

from __future__ import annotations

import tempfile
import time
from collections import OrderedDict
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from conformance.runner.pytest_process import run_pytest

from .record import load


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
             f"xdist workers: {env.get('workers') or 0}", ""]
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


def timed_run(args: Sequence[str], run_dir: Path, devices: int) -> tuple:
    """``pytest -q ARGS --devices N --report-dir RUN_DIR`` in a fresh interpreter: (completed
    process, wall seconds)."""
    started = time.monotonic()
    result = run_pytest(["-q", *args, "--devices", str(devices), "--report-dir", str(run_dir)])
    return result, time.monotonic() - started


def run_suites(devices: int, run_dir: Path, extra: Sequence[str] = ()) -> dict:
    """``pytest suites/ --devices N``; its report, with the wall time."""
    result, wall = timed_run(["suites/", *extra], run_dir, devices)
    record = load(run_dir)
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


def bench(devices: Sequence[int], keep: Optional[Path], extra: Sequence[str]) -> int:
    """Run the suites at each device count, print each run's table and (several counts) the
    growth table; exit status 1 if any run failed."""
    out = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="conformance-bench-"))
    records, status = {}, 0
    for n in devices:
        record = run_suites(n, out / f"devices-{n}", extra)
        records[n] = record
        print(f"== {n} devices: wall {record['wall_seconds']:.1f} s, exit status {record['exit_status']} "
              f"({' '.join(record['last_lines'][-1:])})")
        print(table(record))
        print()
        status = status or (1 if record["exit_status"] not in (0,) else 0)
    if len(records) > 1:
        print(growth_table(records))
    print(f"\nrun reports: {out}")
    return status
