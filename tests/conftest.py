"""Self-test fixtures: runs of the suites that a self-test starts in a subprocess write their run
reports into a temporary folder, not into reports/runs/ of the checkout."""

import os

import pytest

from conformance.runner import environment


@pytest.fixture(autouse=True, scope="session")
def suite_runs_report_elsewhere(tmp_path_factory):
    os.environ[environment.REPORT_DIR] = str(tmp_path_factory.mktemp("suite-run-reports"))
    yield


def pytest_addoption(parser):
    parser.addoption("--faults", choices=("quick", "all", "none"), default="quick",
                     help="planted-fault self-tests to run: a quick subset (default), the whole "
                          "catalogue (2-4 minutes), or none")


def pytest_configure(config):
    config.addinivalue_line("markers", "fault_catalogue: runs the suites with a planted fault")
    config.addinivalue_line("markers", "quick_fault: in the quick subset of the fault self-tests")


def pytest_collection_modifyitems(config, items):
    which = config.getoption("--faults")
    if which == "all":
        return
    dropped = [i for i in items if i.get_closest_marker("fault_catalogue")
               and (which == "none" or not i.get_closest_marker("quick_fault"))]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [i for i in items if i not in dropped]

