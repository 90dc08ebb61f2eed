"""What a run keeps in pytest's stash (``config.stash``, or an item's), by key: no module global
carries state between the runner, the report writer, the faults plugin and the suites."""

from __future__ import annotations

import pytest

from .deviations import Deviation, DeviationsInEffect, FirstFailureEnds
from .devices import DevicePlan

PLAN = pytest.StashKey[DevicePlan]()  # the platform and device count
JAX_VERSION = pytest.StashKey[str]()  # the installed JAX's version
DEVIATIONS = pytest.StashKey[DeviationsInEffect]()  # the known deviations of the installed JAX
COMPILES = pytest.StashKey[object]()  # this process's compilations.CompileCounter
LEADER = pytest.StashKey[object]()  # the multi-process run's protocol.Leader, in its process 0
MULTIPROCESS_SKIP = pytest.StashKey[str]()  # why the multiprocess properties skip in this run
ISOLATED_PRELUDE = pytest.StashKey[str]()  # code every isolated subprocess runs first (faults)
ITEM_DEVIATION = pytest.StashKey[Deviation]()  # on an item: its known deviation on this JAX
FIRST_FAILURE = pytest.StashKey[FirstFailureEnds]()  # on an item: its known_deviation fixture

COMPILATIONS = "compilations"  # the user property a test's (count, seconds) of compilations goes in


def leader_of(config):
    """The multi-process run's leader, in its process 0; None elsewhere."""
    return config.stash.get(LEADER, None)
