"""Does every check end its reproduction script with a verdict? ``python -m tests.verdict_audit [pytest args]``.

Runs ``pytest suites/`` (or the given selection) with ``CONFORMANCE_VERDICT_AUDIT`` set, so every
check that passes records whether its property named the script's expression for it
(``conformance.checking.case``); then runs, each in a fresh interpreter, one script per test and
outcome with its verdict lines. JAX behaved in-process, so each should exit 0: a script that exits
1 judges what the property did not (a wrong expression or expected value), one that raises is
broken. A check that failed in-process (a known deviation) records its script too, which should
exit 1. Prints the checks without a verdict and the scripts that did not exit 0, writes the
records to ``--out`` (JSON), and exits 1 when there is either.

    python -m tests.verdict_audit [--jobs 2] [--out FILE] [--per-test N] [-- PYTEST ARGS ...]
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import List, Sequence

from conformance.checking.case import AUDIT_ENV
from conformance.runner.pytest_process import run_pytest


def collect(pytest_args: Sequence[str], directory: Path) -> List[dict]:
    """Run the suites under the audit; the records every test process wrote."""
    done = run_pytest(["-q", *pytest_args], env={AUDIT_ENV: str(directory)})
    print((done.stdout.strip().splitlines() or ["(pytest printed nothing)"])[-1])
    records = []
    for path in sorted(directory.glob("*.jsonl")):
        records += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return records


def run_script(record: dict, timeout: float = 300) -> dict:
    code = textwrap.dedent(record["script"])
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
        status, tail = done.returncode, (done.stdout + done.stderr).strip().splitlines()[-6:]
    except subprocess.TimeoutExpired:
        status, tail = "timeout", []
    return {**record, "status": status, "tail": tail}


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.verdict_audit", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--per-test", type=int, metavar="N",
                        help="run at most N scripts of passing checks per test (every failed check's script "
                             "still runs); the count of checks without a verdict stays complete")
    parser.add_argument("pytest_args", nargs="*", default=["suites/"])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        records = collect(args.pytest_args, Path(directory))
    failed = {(r["test"], r.get("outcome")) for r in records if r["kind"] == "failed"}
    # (a check that passed shares its outcome's script with one that failed in the same test, e.g.
    # the index map of a layout whose shard shapes are the known deviation: only the failure is judged)
    scripted = [r for r in records if r["kind"] == "failed"
                or (r["kind"] == "scripted" and (r["test"], r["outcome"]) not in failed)]
    if args.per_test is not None:
        taken = collections.Counter()
        kept = []
        for r in scripted:
            if r["kind"] == "failed" or taken[r["test"]] < args.per_test:
                taken[r["test"]] += r["kind"] != "failed"
                kept.append(r)
        print(f"--per-test {args.per_test}: running {len(kept)} of the {len(scripted)} scripts")
        scripted = kept
    print(f"running {len(scripted)} scripts ...", flush=True)
    with ThreadPoolExecutor(args.jobs) as pool:
        ran = list(pool.map(run_script, scripted))
    missing = sorted({(r["test"], r["check"]) for r in records if r["kind"] == "no verdict"})
    unscripted = sorted({r["test"] for r in records if r["kind"] == "no script"})
    bad = [r for r in ran if r["status"] != (1 if r["kind"] == "failed" else 0)]
    tests = collections.Counter(r["test"] for r in records)
    with_verdict = sum(r["kind"] in ("scripted", "failed") for r in records)
    print(f"{len(tests)} tests, {len(records)} distinct checks: {with_verdict} with a verdict, {len(missing)} "
          f"without, checks of {len(unscripted)} tests with no script; {len(ran)} scripts run: "
          f"{len(ran) - len(bad)} exited as they should ({sum(r['kind'] == 'failed' for r in ran)} of them "
          f"failed checks, exit 1), {len(bad)} did not")
    for test, check in missing:
        print(f"NO VERDICT  {test}: {check}")
    for test in unscripted:
        print(f"NO SCRIPT   {test}")
    for r in bad:
        should = "1, as JAX misbehaved in-process" if r["kind"] == "failed" else "0, as JAX behaved in-process"
        print(f"EXIT {r['status']} (should be {should})  {r['test']}: {r['check']}\n    " + "\n    ".join(r["tail"]))
    if args.out:
        args.out.write_text(json.dumps({"records": [r for r in records if r["kind"] != "scripted"] + ran}, indent=1))
    return 1 if missing or bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
