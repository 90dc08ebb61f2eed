"""What a run keeps in pytest's stash (``config.stash``, or an item's), by key: no module global
carries state between the runner, the report writer, the faults plugin and the suites."""

from __future__ import annotations

import pytest

from .deviations import Deviation, DeviationsInEffect, Excuses
from .devices import DevicePlan

PLAN = pytest.StashKey[DevicePlan]()  # the platform and device count
JAX_VERSION = pytest.StashKey[str]()  # the installed JAX's version
DEVIATIONS = pytest.StashKey[DeviationsInEffect]()  # the known deviations of the installed JAX
COMPILES = pytest.StashKey[object]()  # this process's compilations.CompileLedger
WITNESS = pytest.StashKey[object]()  # this process's last_words.Witness
LAST_WORDS = pytest.StashKey[object]()  # the run's last_words folder (a Path)
CACHE = pytest.StashKey[object]()  # the run's compilation_cache.CacheChoice
LEADER = pytest.StashKey[object]()  # the multi-process run's protocol.Peers (every process's steps)
EXCHANGE = pytest.StashKey[object]()  # the multi-process run's multicontroller.Exchange
MULTIPROCESS_SKIP = pytest.StashKey[str]()  # why the multiprocess properties skip in this run
ISOLATED_PRELUDE = pytest.StashKey[str]()  # code every isolated subprocess runs first (faults)
ITEM_DEVIATION = pytest.StashKey[Deviation]()  # on an item: its (first) known deviation on this JAX
ITEM_STRICT = pytest.StashKey[tuple]()  # on an item: its strict known deviations on this JAX
ITEM_RANDOM = pytest.StashKey[tuple]()  # on an item: its random property's known deviations on this JAX
EXCUSES = pytest.StashKey[Excuses]()  # on an item: its excuses fixture (what it excused)
TALLY = pytest.StashKey[object]()  # on an item: its tally fixture (tally.Tally: what ran, per function and way)

API_RECORDER = pytest.StashKey[object]()  # the run's api_calls.Recorder (every process that runs suites)
API_CALLS = "api_calls"  # the user property a test's API calls (api_calls.as_rows) go in
COMPILATIONS = "compilations"  # the user property a test's compilations.Compilations (as a dict) goes in
EXCUSED = "excused"  # the user property a random property's excused examples go in, per entry
REFUSALS = "refusals"  # the user property a property's accepted refusals (the model rejects the call) go in
SHARDED_RUNS = "sharded_runs"  # the user property a property's tally rows (per function and way) go in


def leader_of(config):
    """The multi-process run's steps (``protocol.Peers``), in every process; None in a one-process run."""
    return config.stash.get(LEADER, None)


def exchange_of(config):
    """The multi-process run's ``multicontroller.Exchange``; None in a one-process run."""
    return config.stash.get(EXCHANGE, None)
