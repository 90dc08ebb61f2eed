"""Run only by tests/test_runner.py, in a subprocess: a test that makes a Case (its script names
$PROBE_MARK) and then aborts the process, as an XLA CHECK failure does. Not collected by
`pytest tests/` (its name is not test_*)."""

import os

from conformance.checking.case import Case


def test_a_case_then_an_abort():
    Case("the probe's call", f"    x = 1  # {os.environ['PROBE_MARK']}\n    print(x)")
    os.abort()
