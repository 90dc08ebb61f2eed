"""Static HTML pages (no network, no external assets): one page per run, and the matrix of
properties x runs."""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from datetime import datetime
from typing import Dict, List, Optional, Tuple


from .record import OUTCOMES, deviation_fixed, run_label

# A matrix of more runs than this opens on the properties whose outcome changes across the runs.
CHANGED_ONLY_ABOVE_RUNS = 4
COLOURS = {"passed": "#c8e6c9", "failed": "#ef9a9a", "error": "#f48fb1", "skipped": "#e0e0e0",
           "xfailed": "#fff59d", "xpassed": "#ffcc80", "fixed": "#b3e5fc", "absent": "#ffffff"}
LETTERS = {"passed": "P", "failed": "F", "error": "E", "skipped": "S", "xfailed": "X", "xpassed": "U",
           "fixed": "R", "absent": "–"}
MEANINGS = {"passed": "passed", "failed": "failed", "error": "error", "skipped": "skipped",
            "xfailed": "xfailed (known deviation reproduced)",
            "xpassed": "xpassed (unexpected pass: known deviation did not reproduce)",
            "fixed": "fixed (strict known deviation did not reproduce: JAX fixed it)",
            "absent": "not in this run"}
STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #bbb; padding: 3px 6px; text-align: left; vertical-align: top; font-size: 13px; }
th { background: #f3f3f3; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 6px; overflow-x: auto; font-size: 12px; }
.count { display: inline-block; margin-right: 1em; padding: 3px 8px; border-radius: 4px; }
.mono { font-family: monospace; }
pre.wrap { white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: 0.4em 0; } summary { cursor: pointer; }
.banner { padding: 10px 14px; border-radius: 6px; margin: 0.8em 0; font-size: 15px; }
.banner.green { background: #c8e6c9; } .banner.red { background: #ffcdd2; } .banner.amber { background: #ffe0b2; }
.banner ul { margin: 0.3em 0; } th.run a { color: inherit; text-decoration: none; }
.legend .key { display: inline-block; width: 1.6em; text-align: center; font-family: monospace;
               border: 1px solid #ccc; margin: 0 0.2em 0 0.8em; }
table.matrix { border-collapse: separate; border-spacing: 0; font-size: 12px; }
table.matrix th, table.matrix td { border: 0; border-right: 1px solid #ddd; border-bottom: 1px solid #ddd;
                                   padding: 1px 2px; font-size: 12px; }
table.matrix thead th { position: sticky; top: 0; z-index: 2; vertical-align: bottom; }
table.matrix .prop { position: sticky; left: 0; z-index: 1; background: #fff; font-weight: normal;
                     width: 36em; min-width: 36em; max-width: 36em; overflow-wrap: anywhere; }
table.matrix thead th.prop { z-index: 3; background: #f3f3f3; font-weight: bold; }
table.matrix tr.changed .prop { font-weight: bold; }
table.matrix tr.suite th { background: #e3e7f1; font-weight: bold; padding-top: 4px; }
table.matrix tr.suite td { background: #e3e7f1; }
table.matrix .suite-count { font-weight: normal; color: #555; }
table.matrix th.run { width: 2.4em; min-width: 2.4em; max-width: 2.4em; padding: 4px 0; }
th.run .label { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; margin: 0 auto; }
th.run .version { display: block; font-size: 12px; }
th.run .detail { display: block; font-size: 10px; font-weight: normal; color: #555; }
table.matrix td.cell { width: 2.4em; min-width: 2.4em; max-width: 2.4em; text-align: center;
                       font-family: monospace; padding: 1px 0; }
table.matrix td.absent { color: #999; }
table.matrix td.counts { font-size: 9px; line-height: 1.15; text-align: center; \
font-family: monospace; padding: 2px 0; }
#changed-only:checked ~ table.matrix tr.same { display: none; }
"""


def esc(value) -> str:
    return html.escape("" if value is None else str(value))


def page(title: str, body: List[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def shown_outcome(test: dict) -> str:
    """A test's outcome as the pages show it: "fixed" for a strict known deviation that did not
    reproduce (pytest counts it failed, so the run fails and the entry gets narrowed)."""
    return "fixed" if deviation_fixed(test) else test["outcome"]


def counts(summary: dict) -> str:
    """The outcome counts as chips; a count of 0 is grey, not coloured as if it said something."""
    return "".join(f'<span class="count" style="background:{COLOURS[o] if summary.get(o, 0) else "#f5f5f5"}'
                   f'{"" if summary.get(o, 0) else "; color:#999"}">{o}: {summary.get(o, 0)}</span>'
                   for o in OUTCOMES)


def verdict_banner(record: dict) -> str:
    """The first thing on a run page: green (nothing to do), red (what failed and what to do next),
    or amber (the run did not finish)."""
    summary = record["summary"]
    failing = [t for t in record["tests"] if t["outcome"] in ("failed", "error")]
    fixed = [t for t in failing if deviation_fixed(t)]
    broken = [t for t in failing if not deviation_fixed(t)]
    if record["status"] != "complete":
        stopped = (f" It stopped in <span class=\"mono\">{esc(record.get('running'))}</span>."
                   if record.get("running") else "")
        return (f"<div class=\"banner amber\"><strong>Incomplete: this run did not finish.</strong>{stopped} The "
                f"report holds the {summary['total']} tests that ran before it stopped; rerun it (a crash of JAX "
                "itself ends a serial run: <span class=\"mono\">-n 2</span> goes on past it).</div>")
    if not failing:
        known = f", {summary['xfailed']} known deviations reproduced" if summary.get("xfailed") else ""
        return (f"<div class=\"banner green\"><strong>Green: nothing to do.</strong> {summary['passed']} "
                f"properties passed{known}, {summary['skipped']} skipped (reasons below).</div>")
    items = "".join(f"<li><a class=\"mono\" href=\"#{esc(t['id'])}\">{esc(t['id'])}</a></li>" for t in broken[:12])
    more = f"<li>and {len(broken) - 12} more</li>" if len(broken) > 12 else ""
    parts = [f"<div class=\"banner red\"><strong>Red: {len(broken)} propert{'y' if len(broken) == 1 else 'ies'} "
             "failed.</strong>" if broken else "<div class=\"banner red\"><strong>Red only for fixed known deviations."
             "</strong>", f"<ul>{items}{more}</ul>" if broken else ""]
    if broken:
        parts.append("<p>Next: read each failure below (what JAX returned, what it should have), run its script "
                     "(it exits 1 while the bug is there) or its rerun command; a first-time draw on an unchanged "
                     "JAX is a finding too: search JAX's and XLA's trackers, then add a known deviation with "
                     "its symptom and trigger.</p>")
    if fixed:
        parts.append(f"<p>{len(fixed)} strict known deviation(s) did not reproduce: JAX fixed them here; narrow "
                     "their entries' ranges (below).</p>")
    return "".join(parts) + "</div>"


def environment_rows(env: dict) -> List[Tuple[str, str]]:
    """The environment as a reader wants it: one row per fact, lists and tables in words."""
    rows = [("JAX", f"{env['jax']} (jaxlib {env['jaxlib']})"),
            ("backend", f"{env['backend']}: {env['device_count']} x {env.get('device_kind', '?')}, "
                        f"{env.get('process_count', 1)} process(es), {env.get('workers') or 0} xdist workers"),
            ("profile", f"{env['profile']} ({env.get('max_examples', '?')} examples), seed {env['seed']}, "
                        f"x64 {'on' if env.get('x64') else 'off'}")]
    selection = env.get("selection")
    if selection:
        words = " ".join([*selection.get("paths", []),
                          *(["-m", repr(selection["markers"])] if selection.get("markers") else []),
                          *(["-k", repr(selection["keywords"])] if selection.get("keywords") else [])])
        rows.append(("selection", words))
    rows.append(("command", env.get("command", "")))
    rows.append(("time", f"{env.get('started', '?')} to {env.get('finished') or 'not finished'}"))
    files = env.get("deviation_files") or []
    if files:
        rows.append(("known deviations", "; ".join(f"{f['path']} ({f['origin']}: {f['in_effect']} in effect"
                                                    + (f", {f['other_backends']} for other backends"
                                                       if f.get("other_backends") else "")
                                                    + f"; sha256 {f['sha256'][:12]})" for f in files)))
    suite = env.get("suite") or {}
    if suite:
        commit = suite.get("commit")
        rows.append(("suite", f"{suite.get('version')}" + (f", commit {commit[:12]}" if commit else "")
                     + (" (modified)" if suite.get("modified") else "")))
    rows.append(("versions", f"numpy {env['numpy']}, hypothesis {env['hypothesis']}, Python {env['python']}"
                             + (f", {env['platform']}" if env.get("platform") else "")))
    if env.get("peak_rss_mib") is not None:
        rows.append(("peak memory", f"{env['peak_rss_mib']} MiB"))
    return rows


def counted_table(title: str, intro: str, headers, rows) -> list:
    """A section of the run page: a heading, a paragraph and a table of ``rows`` (each its cells'
    HTML); nothing when there are no rows."""
    if not rows:
        return []
    return ([f"<h2>{title}</h2><p>{intro}</p><table><tr>" + "".join(f"<th>{h}</th>" for h in headers) + "</tr>"]
            + [f"<tr>{row}</tr>" for row in rows] + ["</table>"])


def sharded_runs_part(record: dict) -> list:
    """Per property and function, each way or context it ran in: the examples that ran sharded of
    those that ran (the properties' tallies, ``sharded_runs``)."""
    by_function = defaultdict(list)
    for test in record["tests"]:
        for row in test.get("sharded_runs") or ():
            by_function[(test["id"], row["function"])].append(row)
    return counted_table(
        f"What ran sharded, per function and way ({len(by_function)} functions)",
        "Per property and function, each way or context it ran in: examples that ran it sharded (an operand or "
        "its result cut over a mesh axis of size &gt; 1) / examples that ran it.",
        ("property", "function", "sharded / run, per way or context"),
        [f"<td class=\"mono\">{esc(test_id)}</td><td class=\"mono\">{esc(function)}</td><td>"
         + ", ".join(f"{esc(r['way'])}: {r['sharded']}/{r['examples']}" for r in rows) + "</td>"
         for (test_id, function), rows in sorted(by_function.items())])


def run_page(record: dict) -> str:
    """A run: the verdict first, the failures (with their reproduction and rerun command), excused
    examples, skips grouped by reason, the environment, and a table per suite."""
    env = record["environment"]
    body = [f"<h1>Conformance run: {esc(run_label(record))}</h1>", verdict_banner(record),
            f"<p>{counts(record['summary'])} total: {record['summary']['total']}</p>"]
    environment = ("<h2>Environment</h2><table>" + "".join(
        f"<tr><th>{esc(k)}</th><td class=\"mono\">{esc(v)}</td></tr>" for k, v in environment_rows(env)) + "</table>")

    by_suite = defaultdict(list)
    for test in record["tests"]:
        by_suite[test["suite"]].append(test)
    fixed = [t for t in record["tests"] if deviation_fixed(t)]
    if fixed:
        body.append(f"<h2>Fixed in this JAX ({len(fixed)})</h2><p>Strict known deviations that did not "
                    "reproduce: this JAX fixed them. They count as failures (so the run fails) until "
                    "each entry's range, in the file named beside it, is narrowed to end before "
                    "this release; they are not regressions.</p><ul>")
        body += [f"<li class=\"mono\">{esc(t['id'])} (entry at "
                 f"{esc(t['deviation'].get('where') or t['deviation'].get('source') or '?')}): "
                 f"{esc(t.get('message'))}</li>" for t in fixed]
        body.append("</ul>")
    failures = [t for t in record["tests"] if t["outcome"] in ("failed", "error") and not deviation_fixed(t)]
    if failures:
        body.append(f"<h2>Failures ({len(failures)})</h2>")
        for test in failures:
            body.append(f"<h3 class=\"mono\" id=\"{esc(test['id'])}\">{esc(test['id'])} — {esc(test['outcome'])}</h3>")
            if test.get("message"):
                body.append(f"<pre class=\"wrap\">{esc(test['message'])}</pre>")
            if test.get("falsifying_example"):
                body.append(f"<details><summary>Falsifying example (Hypothesis)</summary>"
                            f"<pre>{esc(test['falsifying_example'])}</pre></details>")
            if test.get("repro"):
                body.append(f"<p>Reproduce without Hypothesis (exits 1 while the bug is there, where the "
                            f"script ends with a verdict):</p><pre>{esc(test['repro'])}</pre>")
            if test.get("rerun"):
                body.append(f"<p>Rerun this property:</p><pre>{esc(test['rerun'])}</pre>")

    excused = [(t, e) for t in record["tests"] for e in (t.get("excused") or ())]
    body += counted_table(
        f"Examples excused by known deviations ({sum(e['excused'] for _, e in excused)})",
        "Examples of random properties that met a known deviation's trigger and failed with its symptom: excused, "
        "and counted here per entry (every other example ran and passed).",
        ("property", "examples", "entry", "trigger"),
        [(f"<td class=\"mono\">{esc(t['id'])}</td><td>{e['excused']}</td><td>{esc(e['entry'])} "
          f"<span class=\"mono\">{esc(e.get('where'))}</span></td><td class=\"mono\">{esc(e.get('trigger'))}</td>")
         for t, e in excused])
    refused = [(t, r) for t in record["tests"] for r in (t.get("refusals") or ())]
    body += counted_table(
        f"Refusals accepted by the model ({sum(r['examples'] for _, r in refused)})",
        "Examples whose call JAX refused with a sharding type error where our sharding-rule model says JAX rejects "
        "it (or has no rule for it): accepted, not failed, and counted here per property and kind.",
        ("property", "examples", "refusal"),
        [f"<td class=\"mono\">{esc(t['id'])}</td><td>{r['examples']}</td><td>{esc(r['refusal'])}</td>"
         for t, r in refused])
    body += sharded_runs_part(record)
    xpassed = [t for t in record["tests"] if t["outcome"] == "xpassed"]
    if xpassed:
        body.append(f"<h2>Known deviations that passed this time ({len(xpassed)})</h2><p>A non-strict "
                    "entry (a random property that did not draw its failing case) or a fixed JAX.</p><ul>")
        body += [f"<li class=\"mono\">{esc(t['id'])}: {esc(t.get('reason'))}</li>" for t in xpassed]
        body.append("</ul>")

    skips = defaultdict(list)
    for test in record["tests"]:
        if test["outcome"] in ("skipped", "xfailed"):
            skips[(test["outcome"], test.get("reason") or "(no reason given)")].append(test["id"])
    if skips:
        body.append("<h2>Skips and known deviations, by reason</h2><table><tr><th>outcome</th>"
                    "<th>reason</th><th>tests</th></tr>")
        for (outcome, reason), ids in sorted(skips.items()):
            body.append(f"<tr><td style=\"background:{COLOURS[outcome]}\">{outcome}</td><td>{esc(reason)}</td>"
                        f"<td class=\"mono\">{'<br>'.join(esc(i) for i in ids)}</td></tr>")
        body.append("</table>")

    body.append(environment)
    body += api_coverage_part(record)
    body.append("<h2>Suites</h2>")
    for suite in sorted(by_suite):
        tests = by_suite[suite]
        body.append(f"<h3>{esc(suite)} ({len(tests)})</h3><table><tr><th>test</th><th>outcome</th>"
                    "<th>seconds</th><th>examples</th><th>reason / finding</th></tr>")
        for t in tests:
            note = t.get("reason") or (t.get("message") or "").split("\n")[0][:300]
            body.append(f"<tr><td class=\"mono\">{esc(t['id'].split('::', 1)[-1])}</td>"
                        f"<td style=\"background:{COLOURS[shown_outcome(t)]}\">{shown_outcome(t)}</td>"
                        f"<td>{t['duration']:.2f}</td>"
                        f"<td>{esc(t.get('examples') if t.get('examples') is not None else '')}</td>"
                        f"<td>{esc(note)}</td></tr>")
        body.append("</table>")
    return page(f"Conformance run {run_label(record)}", body)


def api_coverage_part(record: dict) -> List[str]:
    """The run's API coverage (reports/api_coverage.py): its summary, then every pair in a folded
    table; what stops it (no inventory for this JAX, a report without recorded calls) said instead."""
    from . import api_coverage
    from .record import ReportError

    try:
        version, pairs = api_coverage.of_run(record)
    except ReportError as e:
        return [f"<h2>API coverage</h2><p>{esc(e)}</p>"]
    text = api_coverage.markdown(pairs, version).split("\n\n")
    rows = "".join(f"<tr><td class=\"mono\">{esc(p.entry)}</td><td class=\"mono\">{esc(p.parameter)}</td>"
                   f"<td>{esc(p.status)}</td><td>{esc(', '.join(p.forms))}</td><td>{esc(', '.join(p.contexts))}</td>"
                   f"<td>{esc(p.detail)}</td></tr>" for p in pairs)
    return [f"<h2>API coverage</h2><p>{esc(text[1])} (python -m reports api-coverage)</p><details><summary>"
            f"every (entry, parameter) pair</summary><table><tr><th>entry</th><th>parameter</th><th>status</th>"
            f"<th>forms (spelling)</th><th>contexts</th><th>why</th></tr>{rows}</table></details>"]


def backend_part(env: dict) -> str:
    """``cpu x8`` (plus the process count when there are several): where a run ran."""
    part = f"{env['backend']} x{env['device_count']}"
    return part + (f" {env['process_count']}proc" if env.get("process_count", 1) > 1 else "")


def start_part(env: dict, with_date: bool) -> Optional[str]:
    """When a run started (``09:19``, or ``2026-11-30 09:19`` with the date), None if not recorded."""
    started = env.get("started")
    if not started:
        return None
    try:
        return datetime.fromisoformat(started).strftime("%Y-%m-%d %H:%M" if with_date else "%H:%M")
    except ValueError:  # not an ISO time: shown as recorded
        return started


def column_labels(records: List[dict]) -> List[Tuple[str, str]]:
    """Per run, its JAX version and a short line of what tells it apart from the other runs of that
    version (backend, seed, start time, whichever differ; its column number if nothing does)."""
    by_version = defaultdict(list)
    for column, record in enumerate(records):
        by_version[record["environment"]["jax"]].append(column)
    details = [""] * len(records)
    for columns in by_version.values():
        if len(columns) == 1:
            continue
        envs = [records[c]["environment"] for c in columns]
        with_date = len({env["started"][:10] for env in envs if env.get("started")}) > 1
        part_makers = [backend_part, lambda env: f"seed {env['seed']}", lambda env: start_part(env, with_date)]  # noqa: B023 - called in this iteration
        for make in part_makers:
            parts = [make(env) for env in envs]
            if len(set(parts)) > 1:
                for c, part in zip(columns, parts):
                    details[c] = " · ".join(p for p in (details[c], part) if p)
    for column, record in enumerate(records):  # a multi-controller run is always told apart by its processes
        processes = record["environment"].get("process_count", 1)
        if processes > 1 and "proc" not in details[column]:
            details[column] = " · ".join(p for p in (f"{processes} processes", details[column]) if p)
    labels = [(r["environment"]["jax"], detail) for r, detail in zip(records, details)]
    repeated = {label for label, n in Counter(labels).items() if n > 1}
    return [(version, " · ".join(p for p in (detail, f"#{column + 1}") if p)) if (version, detail) in repeated
            else (version, detail) for column, (version, detail) in enumerate(labels)]


def run_heading(record: dict, version: str, detail: str, link: Optional[str] = None) -> str:
    """A run's column heading: its version over its distinguishing line, read bottom to top, linked
    to its run page; its full name, seed and start time on hover."""
    env = record["environment"]
    hover = f"{run_label(record)} · seed {env['seed']} · started {env.get('started') or 'unknown'}"
    label = (f"<span class=\"version\">{esc(version)}</span><span class=\"detail\">{esc(detail)}</span>")
    if link:
        label = f"<a href=\"{esc(link)}\">{label}</a>"
    return f"<th class=\"run\" title=\"{esc(hover)}\"><div class=\"label\">{label}</div></th>"


def summary_cell(record: dict) -> str:
    """A run's outcome counts, one letter and count a line."""
    tally = Counter(shown_outcome(t) for t in record["tests"])
    return "<td class=\"counts\">" + "<br>".join(f"{LETTERS[o]}{tally[o]}" for o in LETTERS if tally[o]) + "</td>"


def cell(test: Optional[dict]) -> str:
    """A matrix cell: the outcome's colour and letter, its reason or finding on hover."""
    outcome = shown_outcome(test) if test else "absent"
    hover = "not in this run" if not test else \
        (test.get("reason") or (test.get("message") or "").split("\n")[0][:500] or outcome)
    return (f"<td class=\"cell {outcome}\" style=\"background:{COLOURS[outcome]}\" title=\"{esc(hover)}\">"
            f"{LETTERS[outcome]}</td>")


def matrix_page(records: List[dict], links: Optional[List[Optional[str]]] = None) -> str:
    """Properties (grouped by suite) x runs (in the order given; ``links``: each run's page), each
    cell a coloured outcome letter with its reason or finding on hover; above
    CHANGED_ONLY_ABOVE_RUNS runs the page opens on the properties whose outcome changes."""
    links = list(links or [None] * len(records))
    cells = [{t["id"]: t for t in r["tests"]} for r in records]
    suite_of: Dict[str, str] = {t["id"]: t["suite"] for r in records for t in r["tests"]}
    by_suite = defaultdict(list)
    for test_id in sorted(suite_of):
        by_suite[suite_of[test_id]].append(test_id)
    changed = {test_id for test_id in suite_of
               if len({shown_outcome(by_id[test_id]) if test_id in by_id else "absent" for by_id in cells}) > 1}
    changed_only = " checked" if len(records) > CHANGED_ONLY_ABOVE_RUNS else ""
    body = [f"<h1>Conformance matrix: {len(suite_of)} properties x {len(records)} runs</h1>",
            "<p>Runs are in the order given (<span class=\"mono\">--all</span>: oldest release first); a run's "
            "heading links to its run page. Hover a run for its full name, a property for its node id, a cell "
            "for its reason or finding.</p>",
            f"<input type=\"checkbox\" id=\"changed-only\"{changed_only}>"
            "<label for=\"changed-only\"> show changed rows only</label>",
            f"<p><strong>{len(changed)} of {len(suite_of)} properties change across these runs</strong> "
            "(their names in bold).</p>",
            "<p class=\"legend\">" + "".join(
                f"<span class=\"key\" style=\"background:{COLOURS[o]}\">{LETTERS[o]}</span>{esc(MEANINGS[o])}"
                for o in (*OUTCOMES, "fixed", "absent")) + "</p>",
            "<table class=\"matrix\"><thead><tr><th class=\"prop\">property</th>" + "".join(
                run_heading(r, version, detail, link)
                for r, (version, detail), link in zip(records, column_labels(records), links))
            + "</tr></thead><tbody>",
            "<tr><th class=\"prop\"><em>summary</em></th>" + "".join(summary_cell(r) for r in records) + "</tr>"]
    for suite in sorted(by_suite):
        ids = by_suite[suite]
        changing = sum(test_id in changed for test_id in ids)
        body.append(f"<tr class=\"suite{'' if changing else ' same'}\"><th class=\"prop\">{esc(suite)} "
                    f"<span class=\"suite-count\">({len(ids)} properties, {changing} change)</span></th>"
                    f"<td colspan=\"{len(records)}\"></td></tr>")
        for test_id in ids:
            body.append(f"<tr class=\"{'changed' if test_id in changed else 'same'}\">"
                        f"<th class=\"prop\" title=\"{esc(test_id)}\">{esc(test_id.split('::', 1)[-1])}</th>"
                        + "".join(cell(by_id.get(test_id)) for by_id in cells) + "</tr>")
    body.append("</tbody></table>")
    return page("Conformance matrix", body)


LONG_GROUP = 25  # a comparison's group of changes longer than this is folded
GATE_BANNER = {"safe": "green", "regressions": "red", "not comparable": "amber"}
GATE_NEXT = {
    "safe": "Nothing to do before moving: no property that passed on BASE fails or is a known deviation on NEW.",
    "regressions": "Before moving: read each regression below (its run page has the finding, script and rerun "
                   "command); fix it, wait for a JAX that does, or record it with --accept FILE if your team "
                   "takes it on.",
    "not comparable": "No change below is a verdict: rerun NEW (or BASE) as the reasons say, then compare again.",
}


def comparison_page(base: dict, new: dict, changes, verdict, unused=(), kinds=(), base_link=None, new_link=None) -> str:
    """The upgrade gate as a page: the verdict banner (green safe, red regressions, amber not
    comparable) with what to do next, the two runs (linked to their pages), then the changes by
    kind (``kinds``: (kind, title) in listing order) and any stale acceptances."""
    colour = GATE_BANNER[verdict.name]
    items = "".join(f"<li>{esc(r)}</li>" for r in verdict.reasons)
    body = [f"<h1>Upgrade gate: {esc(run_label(base))} → {esc(run_label(new))}</h1>",
            f"<div class=\"banner {colour}\"><strong>Verdict: {esc(verdict.name.upper())}</strong> "
            f"(exit status {verdict.exit_status})" + (f"<ul>{items}</ul>" if items else " ")
            + f"<p>{esc(GATE_NEXT[verdict.name])}</p></div>", "<table>"]
    for name, record, link in (("BASE", base, base_link), ("NEW", new, new_link)):
        label = esc(run_label(record))
        label = f"<a href=\"{esc(link)}\">{label}</a>" if link else label
        body.append(f"<tr><th>{name}</th><td>{label}</td><td>seed {esc(record['environment'].get('seed'))}</td>"
                    f"<td>{counts(record['summary'])} total: {record['summary']['total']}</td></tr>")
    body.append("</table>")
    if not changes:
        body.append("<p>No change: every property has the same outcome in both runs.</p>")
    listed = []
    for kind, title in kinds:
        group = [c for c in changes if c.kind == kind]
        if not group:
            continue
        table = ("<table><tr><th>property</th><th>base</th><th>new</th><th>detail</th></tr>"
                 + "".join(f"<tr><td class=\"mono\">{esc(c.test)}</td><td>{esc(c.base or '-')}</td>"
                           f"<td>{esc(c.new or '-')}</td><td>{esc(c.detail)}</td></tr>" for c in group) + "</table>")
        if len(group) > LONG_GROUP:  # (a long list, e.g. every property of another selection, opens on demand)
            listed.append(f"<h2>{esc(title)} ({len(group)})</h2><details><summary>show the {len(group)} "
                          f"properties</summary>{table}</details>")
        else:
            listed.append(f"<h2>{esc(title)} ({len(group)})</h2>{table}")
    if verdict.name == "not comparable" and listed:
        body.append("<details><summary>What changed between the runs (not a verdict: they measure "
                    "different things)</summary>" + "".join(listed) + "</details>")
    else:
        body += listed
    if unused:
        body.append(f"<h2>Accepted, but no such regression here ({len(unused)})</h2><p>The acceptance may be "
                    "stale.</p><ul>" + "".join(f"<li class=\"mono\">{esc(a.test)} ({esc(a.where)})</li>"
                                               for a in unused)
                    + "</ul>")
    return page(f"Upgrade gate {run_label(base)} -> {run_label(new)}", body)
