"""Before ``compare`` calls a property a regression, replay the new run's failure on the base JAX.

A random property can draw a failing case in one run and not in another, so a failure seen only in
the new run may be an old bug drawn late. The base environment (its interpreter) runs the property
with the new run's seed and device count, and no known deviations applied: Hypothesis first replays
the failing example that the new run saved in the checkout's example database (.hypothesis/), then
draws the same examples. If the base fails too, the bug was already there.
"""

from __future__ import annotations

from typing import Dict, List

from conformance.runner.release_envs import ReleaseOutcome, outcomes_of

from .compare import Change


def replay_arguments(new: dict) -> List[str]:
    """The pytest arguments that make the base run draw as the new run did: its seed, and on CPU
    its device count."""
    env = new["environment"]
    args = ["--hypothesis-seed", str(env["seed"])]
    if env.get("backend") == "cpu":
        args += ["--devices", str(env["device_count"])]
    return args


def replay_regressions(changes: List[Change], new: dict, base_python: str,
                       timeout: float = 900) -> Dict[str, ReleaseOutcome]:
    """The regressions' properties, run together by ``base_python`` as the new run drew them: test
    id -> outcome ("fails" on the base too, "behaves", or "skipped")."""
    regressions = [change.test for change in changes if change.kind == "regression"]
    return outcomes_of(regressions, base_python, replay_arguments(new), timeout) if regressions else {}
