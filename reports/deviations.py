"""``python -m reports deviations``: the known deviations as a table (kind, JAX range, upstream
link, root cause). The reports to file, one per root cause, are ``python -m reports bugs``.
"""

from __future__ import annotations

from typing import Sequence

from conformance.runner.deviations import Deviation


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
                 + f"; the bugs come from {len({d.cause for d in deviations if d.cause})} root causes (BUGS.md)")
    return "\n".join(lines)
