"""What changed between two runs, property by property."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion

from .record import ReportError, deviation_fixed, run_label

# Change kinds, in the order they are listed; REGRESSIONS make `compare` exit non-zero.
KINDS = (
    ("regression", "pass -> fail (regression)"),
    ("known-regression", "pass -> known deviation (a known regression: the new JAX has a bug the base did not)"),
    ("accepted", "regression accepted (--accept)"),
    ("pre-existing", "pass -> fail, but the base JAX fails it too when replayed (a pre-existing bug drawn late)"),
    ("new-failure", "new property that fails"),
    ("fixed-in-jax", "FIXED IN THIS JAX: a strict known deviation did not reproduce (narrow its entry's range)"),
    ("fixed", "fail -> pass"),
    ("api-gone", "newly skipped: API went away"),
    ("newly-skipped", "newly skipped"),
    ("unskipped", "skip -> runs"),
    ("newly-xfail", "newly a known deviation (xfail)"),
    ("xfail-gone", "known deviation no longer expected"),
    ("xpassed", "newly xpass (a known deviation passed)"),
    ("outcome", "other outcome change"),
    ("deviation-draw", "random property with a known deviation: drew its failing case in one run only (not a change)"),
    ("added", "new property"),
    ("removed", "property removed"),
)
REGRESSIONS = ("regression", "new-failure", "known-regression")
NOT_CHANGES = ("deviation-draw",)  # listed for the reader, but not counted as changes
FAILING = ("failed", "error")
API_SKIPS = ("api-removed", "api-arrived")  # a test's skip_kind when its JAX lacks the API


@dataclass(frozen=True)
class Change:
    kind: str
    test: str
    base: Optional[str]
    new: Optional[str]
    detail: str = ""


def random_deviation(test: dict) -> bool:
    """A random property with a known deviation: its entry is not strict, since it does not draw
    its failing case in every run. (Unknown in reports of format /1, which lack the field.)"""
    deviation = test.get("deviation")
    return bool(deviation) and not deviation["strict"]


def classify(base: Optional[dict], new: Optional[dict]) -> Optional[str]:
    if new is not None and deviation_fixed(new) and not (base is not None and deviation_fixed(base)):
        return "fixed-in-jax"
    if base is None:
        return "new-failure" if new["outcome"] in FAILING else "added"
    if new is None:
        return "removed"
    b, n = base["outcome"], new["outcome"]
    if b == n:
        return None
    if {b, n} == {"xfailed", "xpassed"} and any(random_deviation(t) for t in (base, new)):
        return "deviation-draw"
    if n in FAILING and b not in FAILING:
        return "regression"
    if b == "passed" and n == "xfailed":
        return "known-regression"
    if b in FAILING and n == "passed":
        return "fixed"
    if n == "skipped":
        return "api-gone" if new.get("skip_kind") in API_SKIPS else "newly-skipped"
    if b == "skipped":
        return "unskipped"
    if n == "xfailed":
        return "newly-xfail"
    if n == "xpassed":
        return "xpassed"
    if b == "xfailed":
        return "xfail-gone"
    return "outcome"


def compare(base: dict, new: dict) -> List[Change]:
    """Every property whose outcome differs, appeared or disappeared between ``base`` and ``new``."""
    for name, record in (("BASE", base), ("NEW", new)):
        if not isinstance(record.get("tests"), list):
            raise ReportError(f"{name}: has no list of tests")
    before = {t["id"]: t for t in base["tests"]}
    after = {t["id"]: t for t in new["tests"]}
    changes = []
    for test_id in sorted(set(before) | set(after)):
        b, n = before.get(test_id), after.get(test_id)
        kind = classify(b, n)
        if kind is None:
            continue
        detail = ""
        if n is not None and (n.get("reason") or n.get("message")):
            detail = (n.get("reason") or n.get("message")).split("\n")[0][:200]
        elif b is not None and b.get("reason"):
            detail = b["reason"][:200]
        if kind == "known-regression":
            detail = f"{detail} [{entry_words(n.get('deviation') or {})}]"
        changes.append(Change(kind, test_id, b and b["outcome"], n and n["outcome"], detail))
    changes += newly_excused(base, new)
    return ordered(changes)


def in_range(jax_range: Optional[str], version: str) -> bool:
    """Whether ``version`` is in ``jax_range`` (an unreadable range counts as in it)."""
    try:
        return SpecifierSet(jax_range or "").contains(version, prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return True


def entry_words(deviation: dict) -> str:
    """A known deviation as a known regression shows it: range, kind, upstream and file:line."""
    parts = [f"JAX {deviation['jax']}"] if deviation.get("jax") else []
    parts += [f"{key} {deviation[key]}" for key in ("kind", "upstream") if deviation.get(key)]
    where = deviation.get("where") or deviation.get("source")
    return "; ".join(parts + ([where] if where else []))


def newly_excused(base: dict, new: dict) -> List[Change]:
    """Random properties that pass in both runs but whose examples NEW had excused by an entry not
    in effect on BASE's JAX: known regressions too (an entry BASE's JAX is in could have excused
    there as well, so its count is only a draw)."""
    before = {t["id"]: t for t in base["tests"]}
    out = []
    for test in new["tests"]:
        b = before.get(test["id"])
        if b is None or b["outcome"] != "passed" or test["outcome"] != "passed":
            continue
        fresh = [e for e in test.get("excused") or () if e.get("excused")
                 and not in_range(e.get("jax"), base["environment"]["jax"])]
        if fresh:
            detail = "; ".join(f"{e['excused']} example(s) excused by {e['entry']} [{entry_words(e)}]" for e in fresh)
            out.append(Change("known-regression", test["id"], "passed", "passed", detail))
    return out


def ordered(changes: List[Change]) -> List[Change]:
    """Changes in the order of KINDS, then by test."""
    order = {kind: i for i, (kind, _) in enumerate(KINDS)}
    return sorted(changes, key=lambda c: (order[c.kind], c.test))


def header(base: dict, new: dict) -> List[str]:
    return [f"BASE: {run_label(base)} (seed {base['environment']['seed']}, {base['summary']['total']} tests)",
            f"NEW:  {run_label(new)} (seed {new['environment']['seed']}, {new['summary']['total']} tests)"]


def excused_counts(record: dict) -> dict:
    """(test id, entry label) -> examples its known deviation excused, over a run's random
    properties (format /5 on; older records have none)."""
    return {(t["id"], e["entry"]): e["excused"] for t in record["tests"] for e in (t.get("excused") or ())}


def excused_lines(base: dict, new: dict) -> List[str]:
    """One line per random property's known deviation whose excused examples differ between the
    runs (an excuse that suddenly fires far more often is worth a look), base -> new."""
    before, after = excused_counts(base), excused_counts(new)
    keys = sorted(set(before) | set(after))
    changed = [k for k in keys if before.get(k, 0) != after.get(k, 0)]
    if not changed:
        return []
    width = max(len(test) for test, _ in changed)
    lines = [f"\nexamples excused by known deviations, base -> new ({len(changed)})"]
    for test, entry in changed:
        lines.append(f"  {test:<{width}}  {before.get((test, entry), 0):>4} -> "
                     f"{after.get((test, entry), 0):<4}  {entry}")
    return lines


def verdict_lines(verdict) -> List[str]:
    """The gate's verdict first (its reasons beneath when the runs are not comparable)."""
    if verdict is None:
        return []
    if verdict.name == "not comparable":
        return [f"VERDICT: NOT COMPARABLE ({len(verdict.reasons) - 1} reason(s); no change below is a verdict)",
                *(f"  - {r}" for r in verdict.reasons)]
    return [verdict.line() if verdict.reasons else f"VERDICT: {verdict.name.upper()} (no regression)"]


def text_table(base: dict, new: dict, changes: List[Change], verdict=None, unused=()) -> str:
    lines = verdict_lines(verdict) + header(base, new)
    stale = [f"\naccepted, but no such regression here ({len(unused)}): the acceptance may be stale"] + \
        [f"  {a.test}  ({a.where})" for a in unused] if unused else []
    if not real_changes(changes):
        lines.append("no change: every property has the same outcome in both runs"
                     + (f" (apart from {len(changes)} random known-deviation draw(s), listed below)"
                        if changes else ""))
        if not changes:
            return "\n".join(lines + excused_lines(base, new) + stale)
    titles = dict(KINDS)
    width = max(len(c.test) for c in changes)
    for kind, title in KINDS:
        group = [c for c in changes if c.kind == kind]
        if not group:
            continue
        lines.append(f"\n{title} ({len(group)})")
        for c in group:
            lines.append(f"  {c.test:<{width}}  {c.base or '-':>8} -> {c.new or '-':<8}  {c.detail}")
    counts = ", ".join(f"{sum(c.kind == k for c in changes)} {titles[k]}" for k, _ in KINDS
                       if any(c.kind == k for c in changes))
    return "\n".join(lines + excused_lines(base, new) + stale
                     + ["", f"{len(real_changes(changes))} change(s); listed: {counts}"])


def real_changes(changes: List[Change]) -> List[Change]:
    return [c for c in changes if c.kind not in NOT_CHANGES]


def markdown(base: dict, new: dict, changes: List[Change], verdict=None, unused=()) -> str:
    lines = ["# Conformance comparison", ""]
    if verdict is not None:
        first, *rest = verdict_lines(verdict)
        lines += [f"**{first}**", "", *(f"- {r.strip().removeprefix('- ')}" for r in rest), *([""] if rest else [])]
    lines += [*(f"- {h}" for h in header(base, new)), ""]
    if not real_changes(changes):
        lines += ["No change: every property has the same outcome in both runs.", ""]
    stale = [f"Accepted, but no such regression here ({len(unused)}): the acceptance may be stale.", "",
             *(f"- `{a.test}` ({a.where})" for a in unused), ""] if unused else []
    if not changes:
        return "\n".join(lines + stale)
    lines += ["| change | property | base | new | detail |", "|---|---|---|---|---|"]
    titles = dict(KINDS)
    for c in changes:
        detail = c.detail.replace("|", "\\|")
        lines.append(f"| {titles[c.kind]} | `{c.test}` | {c.base or '-'} | {c.new or '-'} | {detail} |")
    return "\n".join(lines + [""] + stale)


def with_replays(changes: List[Change], verdicts: dict) -> List[Change]:
    """``changes`` after replaying regressions on the base JAX (``verdicts``: test id -> an outcome
    with ``verdict`` and ``detail``): one the base fails too is pre-existing, not a regression."""
    out = []
    for c in changes:
        verdict = verdicts.get(c.test)
        if c.kind == "regression" and verdict is not None:
            if verdict.verdict == "fails":
                c = Change("pre-existing", c.test, c.base, c.new, f"{c.detail} | on the base: {verdict.detail}")
            else:
                c = Change(c.kind, c.test, c.base, c.new, f"{c.detail} | replayed on the base: {verdict.verdict}")
        out.append(c)
    return ordered(out)


def has_regressions(changes: List[Change]) -> bool:
    return any(c.kind in REGRESSIONS for c in changes)
