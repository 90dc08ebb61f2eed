"""Self-test fixtures: runs of the suites that a self-test starts in a subprocess write their run
reports into a temporary folder, not into reports/runs/ of the checkout."""

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def suite_runs_report_elsewhere(tmp_path_factory):
    os.environ["CONFORMANCE_REPORT_DIR"] = str(tmp_path_factory.mktemp("suite-run-reports"))
    yield
