"""Count the backend compilations a property causes (jax.monitoring's compile events), for the run
report and the benchmark."""

from __future__ import annotations

import jax

from conformance.jaxside import compat


class CompileCounter:
    """Backend compilations seen in this process since it started listening: a count and their
    seconds."""

    def __init__(self):
        self.count, self.seconds = 0, 0.0

    def __call__(self, event: str, duration: float, **_metadata) -> None:
        if event == compat.BACKEND_COMPILE_EVENT:
            self.count += 1
            self.seconds += duration

    def snapshot(self) -> tuple:
        return self.count, self.seconds


def start_counting() -> CompileCounter:
    """A counter listening to jax.monitoring from now on (one per process: the runner keeps it in
    the config's stash)."""
    counter = CompileCounter()
    jax.monitoring.register_event_duration_secs_listener(counter)
    return counter
