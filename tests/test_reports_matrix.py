"""The matrix page (properties x runs) stays readable for many runs: short distinct column labels, a
changed-rows-only view, properties grouped by suite, one-letter cells with a legend."""

import html
import re

from tests.test_reports import entry, record
from reports.html import CHANGED_ONLY_ABOVE_RUNS, LETTERS, MEANINGS, column_labels, esc, matrix_page

ROW = re.compile(r'<tr class="([^"]*)"><th class="prop" title="([^"]*)">([^<]*)</th>(.*?)</tr>')
RUN_HEADING = re.compile(r'<th class="run" title="([^"]*)"><div class="label"><span class="version">([^<]*)</span>'
                         r'<span class="detail">([^<]*)</span>')


def rows(page):
    """The page's property rows: (class, full node id, shown name, cells HTML), in page order."""
    return [(row_class, html.unescape(test_id), html.unescape(name), cells)
            for row_class, test_id, name, cells in ROW.findall(page)]


def changed_only_checked(page):
    """Whether the page opens on the changed rows only."""
    return re.search(r'<input type="checkbox" id="changed-only"( checked)?>', page).group(1) is not None


TESTS = [entry("suites/test_device_put.py::test_round_trip"),
         entry("suites/test_device_put.py::test_flips"),
         entry("suites/test_mesh.py::test_axes[('i', 'j')]")]


def test_two_runs_of_one_version_get_different_labels_naming_their_difference():
    """Runs sharing a JAX version are told apart by what differs among backend, seed and start time
    (only that), by their column number when nothing does, and every run's full name is on hover."""
    seeds = [record(TESTS, seed="123"), record(TESTS, seed="456", started="2026-01-01T11:02:00+00:00")]
    assert column_labels(seeds) == [("0.10.2", "seed 123 · 00:00"), ("0.10.2", "seed 456 · 11:02")]
    backends = [record(TESTS), record(TESTS, backend="gpu", device_count=4), record(TESTS, jax="0.4.30")]
    assert column_labels(backends) == [("0.10.2", "cpu x8"), ("0.10.2", "gpu x4"), ("0.4.30", "")]
    days = [record(TESTS), record(TESTS, started="2026-01-02T09:00:00+00:00")]
    assert column_labels(days) == [("0.10.2", "2026-01-01 00:00"), ("0.10.2", "2026-01-02 09:00")]
    unstarted = [record(TESTS), record(TESTS)]
    for run in unstarted:
        del run["environment"]["started"]
    assert column_labels(unstarted) == [("0.10.2", "#1"), ("0.10.2", "#2")]
    processes = [record(TESTS), record(TESTS, process_count=2), record(TESTS, jax="0.4.38", process_count=2)]
    assert column_labels(processes) == [("0.10.2", "cpu x8"), ("0.10.2", "cpu x8 2proc"),
                                        ("0.4.38", "2 processes")]  # (a multi-controller run: always said)
    headings = RUN_HEADING.findall(matrix_page(seeds))
    assert [(version, detail) for _, version, detail in headings] == column_labels(seeds)
    assert all(title.startswith("jax 0.10.2 · cpu x8") for title, _, _ in headings)


def test_changed_rows_only_is_the_default_above_the_threshold_only():
    """Above CHANGED_ONLY_ABOVE_RUNS runs the page opens on the changed rows; at or below it, on all
    rows; the toggle is there either way."""
    def runs(n):
        return [record(TESTS, jax=f"0.{minor}.0") for minor in range(n)]
    assert changed_only_checked(matrix_page(runs(CHANGED_ONLY_ABOVE_RUNS + 1)))
    assert not changed_only_checked(matrix_page(runs(CHANGED_ONLY_ABOVE_RUNS)))
    assert not changed_only_checked(matrix_page(runs(1)))
    assert '<label for="changed-only">' in matrix_page(runs(1))


def test_every_row_of_an_unchanged_property_is_marked_for_the_changed_only_view_to_hide():
    """A property whose outcome is the same in every run has its row (and a suite heading whose
    properties are all unchanged has its row) marked `same`, which the checked toggle hides; the
    count of changing properties is stated."""
    new = [dict(t, outcome="failed") if t["id"].endswith("test_flips") else t for t in TESTS]
    page = matrix_page([record(TESTS, jax="0.4.30"), record(new)])
    classes = {test_id: row_class for row_class, test_id, _, _ in rows(page)}
    assert classes == {"suites/test_device_put.py::test_round_trip": "same",
                       "suites/test_device_put.py::test_flips": "changed",
                       "suites/test_mesh.py::test_axes[('i', 'j')]": "same"}
    assert '<tr class="suite same"><th class="prop">test_mesh ' in page
    assert '<tr class="suite"><th class="prop">test_device_put ' in page
    assert "#changed-only:checked ~ table.matrix tr.same { display: none; }" in page
    assert "1 of 3 properties change across these runs" in page


def test_a_property_absent_from_one_run_changes():
    """A property missing from one run counts as a change (its cell there reads as absent)."""
    page = matrix_page([record(TESTS, jax="0.4.30"), record(TESTS[:2])])
    (axes,) = [r for r in rows(page) if r[1].startswith("suites/test_mesh.py")]
    assert axes[0] == "changed" and 'title="not in this run">–</td>' in axes[3]


def test_properties_are_grouped_by_suite_with_short_names_and_their_node_id_on_hover():
    """Each suite has a heading row, followed by its properties named without the file prefix, each
    with its full node id as its title."""
    page = matrix_page([record(TESTS)])
    assert page.index(">test_device_put <") < page.index(">test_flips<") < page.index(">test_round_trip<") \
        < page.index(">test_mesh <") < page.index(">test_axes[")
    assert [(test_id, name) for _, test_id, name, _ in rows(page)] == [
        ("suites/test_device_put.py::test_flips", "test_flips"),
        ("suites/test_device_put.py::test_round_trip", "test_round_trip"),
        ("suites/test_mesh.py::test_axes[('i', 'j')]", "test_axes[('i', 'j')]")]


def test_cells_show_one_letter_per_outcome_explained_by_a_legend():
    """Every outcome (and a fixed known deviation) shows as its letter in a coloured cell, with its
    reason on hover, and the legend explains each letter."""
    fixed = {"jax": ">=0.6", "strict": True, "reproduced_by": None, "fixed": True}
    tests = [entry(f"suites/test_o.py::test_{o}", o, reason=f"why {o}")
             for o in LETTERS if o not in ("fixed", "absent")]
    tests.append(entry("suites/test_o.py::test_fixed", "failed", deviation=fixed, reason="why fixed"))
    page = matrix_page([record(tests)])
    cells = {test_id.rsplit("_", 1)[-1]: html for _, test_id, _, html in rows(page)}
    for outcome, letter in LETTERS.items():
        if outcome != "absent":
            assert re.fullmatch(rf'<td class="cell {outcome}" style="background:#\w+" title="why {outcome}">'
                                rf'{letter}</td>', cells[outcome])
    legend = re.search(r'<p class="legend">(.*?)</p>', page).group(1)
    for outcome, letter in LETTERS.items():
        assert f">{letter}</span>{esc(MEANINGS[outcome])}" in legend


def test_a_page_of_34_runs_has_34_columns():
    """One release's run per column: 34 runs give 34 headings, 34 summary cells and 34 cells a row."""
    runs = [record(TESTS, jax=f"0.{minor}.{patch}") for minor in range(17) for patch in range(2)]
    page = matrix_page(runs)
    assert len(RUN_HEADING.findall(page)) == 34
    assert page.count('<td class="counts">') == 34
    assert all(cells.count("<td ") == 34 for _, _, _, cells in rows(page))
    assert [version for _, version, _ in RUN_HEADING.findall(page)][:3] == ["0.0.0", "0.0.1", "0.1.0"]
