"""The suites have teeth: with a planted fault (tests/faults.py) the suite that should notice fails.

A quick subset for every `pytest tests/`; the whole catalogue against every suite is run by hand:
`python -m pytest -p tests.faults --plant-fault NAME suites/`.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults import FAULTS

ROOT = Path(__file__).resolve().parents[1]


def run_suite(suite, fault=None):
    args = [sys.executable, "-m", "pytest", "-p", "tests.faults", "-p", "no:cacheprovider", "-x",
            suite] + (["--plant-fault", fault] if fault else [])
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("fault, suite, message", [
    ("swap-index-map", "suites/test_named_sharding.py", "devices_indices_map differs from the model"),
    ("device-put-replicates", "suites/test_device_put.py", "but should hold"),
    ("device-put-accepts-indivisible", "suites/test_congruence.py", "but should raise ValueError"),
    ("visualize-shifted-labels", "suites/test_visualize.py", "picture (rows of device-id sets)="),
    ("ppermute-inverse", "suites/test_collectives.py", "pmap(ppermute) result"),
])
def test_planted_fault_is_caught(fault, suite, message):
    """Under the fault the suite fails, with a readable message and a reproduction script."""
    result = run_suite(suite, fault)
    assert result.returncode == 1, result.stdout[-3000:]
    assert f"PLANTED FAULT: {fault}" in result.stdout
    assert message in result.stdout and "Reproduce without Hypothesis:" in result.stdout


def test_catalogue_entries_are_described():
    """Every fault has a one-line description and a function that plants it."""
    for name, (description, plant) in FAULTS.items():
        assert description and "\n" not in description and callable(plant), name
