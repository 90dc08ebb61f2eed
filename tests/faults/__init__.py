"""Planted faults: simulated JAX regressions, each a small monkeypatch of a public API, registered
with ``@fault`` beside its body (one module per area), with its description and the suites that
must catch it.

A pytest plugin that only the self-tests use:

    python -m pytest -p tests.faults --plant-fault swap-index-map suites/

applies one fault for the whole run (after the runner has started JAX, before the suites are
imported), in isolated subprocesses too, and names it in the report header. A suite that still
passes under a fault has no teeth for it. Which properties each fault kills is measured by
``python -m tests.faults.killmap`` into ``kill_maps/``; the passing properties no fault kills are
explained in ``unkilled.toml``.
"""

from pathlib import Path

import pytest

from conformance.runner import state

from . import (  # noqa: F401 - each module registers its faults
    api_parameters, argument_forms, assembly, branches_and_remat, calling_contexts, collectives, device_put, excuses,
    jit, layouts, meshes, model_programs, multi_axis_collectives, multi_controller, operand_layouts, out_sharding,
    pmap, positional, program_contexts, programs, random_and_custom_rules, random_samplers, training, transformations,
    visualize, vocabulary)
from .registry import FAULTS, Fault, fault, unkilled

__all__ = ["FAULTS", "Fault", "fault", "unkilled"]
ROOT = Path(__file__).resolve().parents[2]


def pytest_addoption(parser):
    parser.addoption("--plant-fault", choices=sorted(FAULTS), default=None,
                     help="apply one simulated JAX regression for the whole run (self-tests only)")


def pytest_report_header(config):
    name = config.getoption("--plant-fault")
    return [f"PLANTED FAULT: {name} ({FAULTS[name].description})"] if name else []


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    name = config.getoption("--plant-fault")
    if name:
        config.stash[state.ISOLATED_PRELUDE] = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                                                f"from tests.faults import FAULTS; FAULTS[{name!r}].plant()")
        try:
            FAULTS[name].plant()
        except (pytest.skip.Exception, AttributeError) as e:
            raise pytest.UsageError(f"fault {name} cannot be planted on this JAX: {e}") from None
