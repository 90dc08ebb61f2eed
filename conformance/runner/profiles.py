"""Hypothesis profiles and the run's seed.

Profiles: a quick ``default`` for every change, ``nightly`` with 10x the examples, ``soak`` (the
nightly's examples; the generated-program soak runs only under it, for ``--soak-minutes``, in
rounds of ``soak-round``: 4x the default's examples), and
``default-no-shrink`` (the default's examples without shrinking: what the fault kill maps use, since
a property fails under a fault or not all the same, and shrinking only costs time; and without
Hypothesis' example database, so that a planted fault's failing examples are neither replayed by
later runs, the release matrix's among them, nor taken from earlier ones: a fault run is a function
of its seed). Compilation
dominates, so timing deadlines would only measure the compiler: they are off.

Every profile draws from the run's seed (``derandomize=False``), also where Hypothesis detects a CI
machine and would otherwise derive each test's examples from its name alone: the seed a run prints
then reproduces it anywhere. The example database stays Hypothesis' own choice (none on CI).
"""

from __future__ import annotations

import random
from typing import Mapping

from hypothesis import Phase, settings
from hypothesis.errors import InvalidArgument

from . import environment
from .devices import UsageError

# Every phase but "explain", whose "these lines were always and only run by failing test cases"
# points into the suite's strategies and JAX's internals, not at the finding.
PHASES = tuple(p for p in Phase if p.name != "explain")
# Hypothesis' own settings before ours ("ci" on a CI machine): the database is theirs to choose.
HYPOTHESIS_OWN = settings.default
settings.register_profile("default", max_examples=100, deadline=None, print_blob=True, phases=PHASES,
                          derandomize=False)
settings.register_profile("nightly", max_examples=1000, deadline=None, print_blob=True, phases=PHASES,
                          derandomize=False)
settings.register_profile("soak", settings.get_profile("nightly"))
settings.register_profile("soak-round", settings.get_profile("default"), max_examples=400)
settings.register_profile("default-no-shrink", settings.get_profile("default"), database=None,
                          phases=[Phase.explicit, Phase.generate])
settings.load_profile("default")


def profile_name(config) -> str:
    """The Hypothesis profile in effect (Hypothesis' own plugin has loaded it by the session's
    start)."""
    if hasattr(settings, "get_current_profile_name"):
        return settings.get_current_profile_name()
    return config.getoption("hypothesis_profile") or "default"


def check_profile_asked(config) -> None:
    """Raise UsageError, listing the registered profiles, when ``--hypothesis-profile`` names one
    that does not exist (Hypothesis' own plugin would stop pytest with an internal error)."""
    asked = config.getoption("hypothesis_profile", None)
    if not asked:
        return
    try:
        settings.get_profile(asked)
    except InvalidArgument:
        known = getattr(settings, "_profiles", {"default": None, "nightly": None})
        raise UsageError(f"--hypothesis-profile={asked}: no such Hypothesis profile (registered: "
                         f"{', '.join(sorted(known))})") from None


def max_examples() -> int:
    return settings().max_examples


def choose_seed(option_seed, env: Mapping[str, str]) -> str:
    """The Hypothesis seed for this run: ``--hypothesis-seed``, else ``$CONFORMANCE_SEED`` (so every
    xdist worker shares the controller's), else a fresh random one."""
    if option_seed is not None:
        return str(option_seed)
    return env.get(environment.SEED) or str(random.randrange(2**32))
