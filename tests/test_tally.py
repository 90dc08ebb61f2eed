"""The tally of what a property ran (conformance/runner/tally.py): once per example, function and
way; sharded if any count of it said so; its rows valid in the run report and tabulated on the page."""

from conformance.runner.tally import Tally
from reports.html import run_page
import json

from reports.record import SCHEMA_PATH
from reports.schema import validate
from tests.test_reports import entry, record


def test_an_example_counts_once_per_function_and_way_and_sharded_if_ever_said():
    tally, one, other = Tally(), object(), object()
    tally.count("cumsum", "(a)", False, one)
    tally.count("cumsum", "(a)", True, one)  # the same example again: once, now sharded
    tally.count("cumsum", "(a)", False, other)
    tally.count("cumsum", "(b)", True, one)
    tally.count("sum", "vmap", False)
    tally.count("sum", "vmap", False)  # no example given: each count is one
    assert tally.rows() == [
        {"function": "cumsum", "way": "(a)", "examples": 2, "sharded": 1},
        {"function": "cumsum", "way": "(b)", "examples": 1, "sharded": 1},
        {"function": "sum", "way": "vmap", "examples": 2, "sharded": 0}]
    assert not Tally() and tally


def test_the_rows_go_in_the_report_and_on_its_page():
    rows = [{"function": "cumsum", "way": "(a)", "examples": 2, "sharded": 1},
            {"function": "cumsum", "way": "scan", "examples": 3, "sharded": 3}]
    rec = record([entry("suites/test_programs.py::test_p", sharded_runs=rows)])
    validate(rec, json.loads(SCHEMA_PATH.read_text()))
    page = run_page(rec)
    assert "What ran sharded, per function and way (1 functions)" in page
    assert "(a): 1/2, scan: 3/3" in page
