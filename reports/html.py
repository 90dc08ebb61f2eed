"""Static HTML pages (no network, no external assets): one page per run, and the matrix of
properties x runs."""

from __future__ import annotations

import html
from collections import defaultdict
from typing import List

from packaging.version import Version

from .record import OUTCOMES, deviation_fixed, run_label

COLOURS = {"passed": "#c8e6c9", "failed": "#ef9a9a", "error": "#f48fb1", "skipped": "#e0e0e0",
           "xfailed": "#fff59d", "xpassed": "#ffcc80", "fixed": "#b3e5fc", "absent": "#ffffff"}
STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #bbb; padding: 3px 6px; text-align: left; vertical-align: top; font-size: 13px; }
th { background: #f3f3f3; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 6px; overflow-x: auto; font-size: 12px; }
.count { display: inline-block; margin-right: 1em; padding: 3px 8px; border-radius: 4px; }
.mono { font-family: monospace; }
td.cell { text-align: center; min-width: 5em; }
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
    return "".join(f'<span class="count" style="background:{COLOURS[o]}">{o}: {summary.get(o, 0)}</span>'
                   for o in OUTCOMES)


def run_page(record: dict) -> str:
    """A run: environment, summary counts, a table per suite, failures with their reproduction,
    skips grouped by reason."""
    env = record["environment"]
    body = [f"<h1>Conformance run: {esc(run_label(record))}</h1>"]
    if record["status"] != "complete":
        body.append("<p><strong>This run did not finish: the report holds the tests that ran before "
                    "it stopped.</strong></p>")
    body.append(f"<p>{counts(record['summary'])} total: {record['summary']['total']}</p>")
    body.append("<h2>Environment</h2><table>" + "".join(
        f"<tr><th>{esc(k)}</th><td class=\"mono\">{esc(v)}</td></tr>" for k, v in env.items()) + "</table>")

    by_suite = defaultdict(list)
    for test in record["tests"]:
        by_suite[test["suite"]].append(test)
    fixed = [t for t in record["tests"] if deviation_fixed(t)]
    if fixed:
        body.append(f"<h2>Fixed in this JAX ({len(fixed)})</h2><p>Strict known deviations that did not "
                    "reproduce: this JAX fixed them. They count as failures (so the run fails) until "
                    "each entry's range in suites/known_deviations.toml is narrowed to end before "
                    "this release; they are not regressions.</p><ul>")
        body += [f"<li class=\"mono\">{esc(t['id'])}: {esc(t.get('message'))}</li>" for t in fixed]
        body.append("</ul>")
    failures = [t for t in record["tests"] if t["outcome"] in ("failed", "error") and not deviation_fixed(t)]
    if failures:
        body.append(f"<h2>Failures ({len(failures)})</h2>")
        for test in failures:
            body.append(f"<h3 class=\"mono\" id=\"{esc(test['id'])}\">{esc(test['id'])} — {esc(test['outcome'])}</h3>")
            if test.get("message"):
                body.append(f"<pre>{esc(test['message'])}</pre>")
            if test.get("falsifying_example"):
                body.append(f"<p>Falsifying example:</p><pre>{esc(test['falsifying_example'])}</pre>")
            if test.get("repro"):
                body.append(f"<p>Reproduce without Hypothesis:</p><pre>{esc(test['repro'])}</pre>")

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

    body.append("<h2>Suites</h2>")
    for suite in sorted(by_suite):
        tests = by_suite[suite]
        body.append(f"<h3>{esc(suite)} ({len(tests)})</h3><table><tr><th>test</th><th>outcome</th>"
                    "<th>seconds</th><th>examples</th><th>reason / finding</th></tr>")
        for t in tests:
            note = t.get("reason") or (t.get("message") or "").split("\n")[0][:300]
            body.append(f"<tr><td class=\"mono\">{esc(t['id'].split('::', 1)[-1])}</td>"
                        f"<td style=\"background:{COLOURS[shown_outcome(t)]}\">{shown_outcome(t)}</td>"
                        f"<td>{t['duration']:.2f}</td><td>{esc(t.get('examples') if t.get('examples') is not None else '')}</td>"
                        f"<td>{esc(note)}</td></tr>")
        body.append("</table>")
    return page(f"Conformance run {run_label(record)}", body)


def matrix_page(records: List[dict]) -> str:
    """Properties x runs (ordered by JAX version, then backend), each cell coloured by outcome,
    its reason or finding on hover."""
    records = sorted(records, key=lambda r: (Version(r["environment"]["jax"]), r["environment"]["backend"],
                                             r["environment"]["device_count"]))
    cells = [{t["id"]: t for t in r["tests"]} for r in records]
    ids = sorted(set().union(*cells)) if cells else []
    differing = {test_id for test_id in ids
                 if len({shown_outcome(by_id[test_id]) if test_id in by_id else "absent" for by_id in cells}) > 1}
    ids = sorted(ids, key=lambda test_id: test_id not in differing)  # (stable: by name within each)
    body = [f"<h1>Conformance matrix: {len(ids)} properties x {len(records)} runs</h1>",
            f"<p>{len(differing)} properties change outcome across these runs (marked ◆, name in bold; "
            "listed first). Runs are ordered by JAX version.</p>",
            "<p>" + " ".join(f'<span class="count" style="background:{COLOURS[o]}">{o}</span>'
                             for o in (*OUTCOMES, "fixed", "absent")) +
            " (fixed: a known deviation that did not reproduce; hover a cell for its reason)</p>",
            "<table><tr><th>property</th>" + "".join(
                f"<th>{esc(run_label(r))}</th>" for r in records) + "</tr>",
            "<tr><td><em>summary</em></td>" + "".join(
                "<td class=\"cell\">" + "<br>".join(f"{o} {r['summary'][o]}" for o in OUTCOMES if r["summary"][o])
                + "</td>" for r in records) + "</tr>"]
    for test_id in ids:
        shown = test_id.removeprefix("suites/")
        name = f"<b>◆ {esc(shown)}</b>" if test_id in differing else esc(shown)
        row = [f"<tr><td class=\"mono\">{name}</td>"]
        for by_id in cells:
            test = by_id.get(test_id)
            outcome = shown_outcome(test) if test else "absent"
            hover = "not in this run" if not test else \
                (test.get("reason") or (test.get("message") or "").split("\n")[0][:500] or outcome)
            row.append(f"<td class=\"cell\" style=\"background:{COLOURS[outcome]}\" title=\"{esc(hover)}\">"
                       f"{outcome}</td>")
        body.append("".join(row) + "</tr>")
    body.append("</table>")
    return page("Conformance matrix", body)
