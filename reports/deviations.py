"""``python -m reports deviations``: the known deviations as a table (kind, JAX range, upstream
link), and for each bug that no upstream issue covers yet, a report a person could file as is:
title, versions, the rule, a minimal stand-alone script, expected vs. actual.

The script and the actual behaviour come from running the entry's deterministic test (a random
property's entry: the test named by its reproduced_by) on the installed JAX with no deviations
applied; the rule is that test's docstring.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from conformance.runner.deviations import Deviation
from conformance.runner.release_envs import entries_of, run_test_with
from conformance.runner.run_folder import ROOT, write_atomically

UNFILED = ("", "none found")


def unfiled_bugs(deviations: Sequence[Deviation]) -> List[Deviation]:
    """The bugs no upstream issue covers, one per deterministic test (a random property's entry is
    filed through the reproduction it names)."""
    seen, out = set(), []
    for d in deviations:
        test = d.test if d.strict else d.reproduced_by
        if d.kind == "bug" and d.upstream in UNFILED and test not in seen:
            seen.add(test)
            out.append(d)
    return out


def table(deviations: Sequence[Deviation]) -> str:
    """One line per entry: kind, range, test, upstream."""
    rows = [("kind", "jax", "test", "upstream")]
    rows += [(d.kind or "(no kind)", d.jax, d.test.replace("suites/", "") + ("" if d.strict else " (random)"),
              d.upstream or "(not searched)") for d in deviations]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}" for r in rows]
    counts = {k: sum(d.kind == k for d in deviations) for k in sorted({d.kind for d in deviations})}
    lines.append("")
    lines.append(f"{len(deviations)} entries: " + ", ".join(f"{n} {k or '(no kind)'}" for k, n in counts.items())
                 + f"; {len(unfiled_bugs(deviations))} bugs with no upstream issue")
    return "\n".join(lines)


def rule_of(test: str) -> str:
    """The docstring of the test ``suites/<file>.py::<name>`` (read from the source: no JAX)."""
    path, name = test.split("::")[0], test.split("::")[1].split("[")[0]
    tree = ast.parse((ROOT / path).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return " ".join((ast.get_docstring(node) or "").split())
    return ""


def filing_report(d: Deviation, entry: Optional[dict], jax_version: str) -> str:
    """The text of an upstream report for bug ``d``, from its test's run-report ``entry``."""
    test = d.test if d.strict else d.reproduced_by
    lines = [f"# {d.reason}", "",
             f"**Versions**: JAX {d.jax} (the range this suite measured, bisected over the releases); "
             f"reproduced here on JAX {jax_version}, CPU.", "",
             f"**Expected** (the rule): {rule_of(test)}", ""]
    if entry is None or entry["outcome"] not in ("failed", "error"):
        outcome = "no result" if entry is None else entry["outcome"]
        lines += [f"**Not reproduced on JAX {jax_version}** (the test's outcome: {outcome}); run it on a "
                  f"release in the range above.", ""]
        return "\n".join(lines)
    lines += [f"**Actual**: {(entry.get('message') or '').strip()}", ""]
    if entry.get("repro"):
        lines += ["**Reproduction** (stand-alone, CPU):", "", "```python", entry["repro"].rstrip(), "```", ""]
    lines += [f"(Found by a property-based conformance suite: `{test}`.)", ""]
    return "\n".join(lines)


def write_filing_reports(deviations: Sequence[Deviation], folder: Path, jax_version: str,
                         python: str = sys.executable) -> List[Path]:
    """Run each unfiled bug's test on this JAX and write its report to ``folder/<test>.md``."""
    bugs = unfiled_bugs(deviations)
    tests = [d.test if d.strict else d.reproduced_by for d in bugs]
    ran = (run_test_with(python, tests, [])[0] or []) if tests else []
    written = []
    for d, test in zip(bugs, tests):
        mine = entries_of(test, ran)  # (a parametrized test: the case that failed, if one did)
        entry = next((e for e in mine if e["outcome"] in ("failed", "error")), mine[0] if mine else None)
        path = folder / (re.sub(r"[^A-Za-z0-9_.=-]+", "_", test.split("::")[1]).strip("_") + ".md")
        write_atomically(path, filing_report(d, entry, jax_version))
        written.append(path)
    return written
