"""The step protocol of a multi-process run, over JAX's own runtime.

Each copy calls ``jax.distributed.initialize`` (``initialize``) before JAX starts its backend.
Every process runs the same session (``conformance.jaxside.multicontroller``); a property of the
multiprocess suite asks for a *step* (the name of a step function of ``steps.STEPS`` and a JSON
description): every process runs it (collectives need all of them) and every process gets every
process's answer (``Peers``), so each checks the same answers against the model.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

import jax

from conformance.jaxside import compat

from .. import environment
from ..run_folder import write_atomically
from .launcher import PLATFORM, STEP_FILE, STEPS_LOG, CoordinatorError, watch_launcher

Steps = Dict[str, Callable[[dict], object]]  # step name -> fn(payload) -> JSON-able answer


def initialize(role) -> tuple:
    """``jax.distributed.initialize`` (with CPU collectives over gloo, see compat); returns
    (process id, process count) as JAX sees them."""
    compat.use_gloo_collectives()
    try:
        if role == PLATFORM:
            jax.distributed.initialize()  # the platform's environment says where and who
        else:
            watch_launcher()
            process_id, count, coordinator = role
            jax.distributed.initialize(coordinator, count, process_id,
                                       initialization_timeout=int(environment.init_timeout_s()))
    except Exception as e:  # noqa: BLE001 - JAX raises its runtime's error types here
        raise CoordinatorError(coordinator_failure(role, e)) from None
    return jax.process_index(), jax.process_count()


def coordinator_failure(role, error: Exception) -> str:
    """What a person reads when ``jax.distributed.initialize`` fails in a copy."""
    first = " ".join(str(error).split())[:400]
    if role == PLATFORM:
        return (f"jax.distributed.initialize() could not join the pod or cluster's JAX job "
                f"(--processes platform: the platform's environment must name the coordinator, "
                f"process count and id): {type(error).__name__}: {first}")
    process_id, count, coordinator = role
    what = ("could not start the coordination service" if process_id == 0
            else f"could not join the coordination service within {environment.init_timeout_s():.0f} s")
    return (f"process {process_id} of {count} {what} at {coordinator} ({type(error).__name__}: "
            f"{first}). Is the port free (${environment.COORDINATOR_PORT} chooses it; "
            f"${environment.INIT_TIMEOUT} the wait), and can this host reach it?")


class Peers:
    """Every process's side of a step in a multi-controller run: every process runs the same test,
    so each runs step ``name`` itself and every process gets every process's answer (through the
    run's ``multicontroller.Exchange``). Process 0 keeps the step in progress and a log of every
    step in the run folder, as the leader did, and the exchange in progress (``progress``, which the launcher
    watches)."""

    def __init__(self, exchange, steps: Steps, run_folder: Optional[Path] = None):
        self.exchange, self.steps = exchange, steps
        exchange.progress = self.progress
        self.count = exchange.count
        self.n = 0
        self.step_file = run_folder / STEP_FILE if run_folder else None
        if self.step_file:
            self.step_file.parent.mkdir(parents=True, exist_ok=True)
            self.step_file.with_name(STEPS_LOG).write_text("")  # also tells the launcher we started

    def run(self, name: str, payload: dict) -> List:
        """Every process's answer to step ``name`` (index = process id)."""
        self.n += 1
        if self.step_file:
            with open(self.step_file.with_name(STEPS_LOG), "a") as log:
                log.write(json.dumps({"n": self.n, "name": name, "payload": payload}) + "\n")
        try:
            answer = {"value": self.steps[name](payload)}
        except Exception as e:  # noqa: BLE001 - reported on every process, which fail the property
            answer = {"error": f"{type(e).__name__}: {' '.join(str(e).split())[:500]}"}
        answers = self.exchange.everyone(f"step {name}", answer)
        for p, a in enumerate(answers):
            if "error" in a:
                raise AssertionError(f"process {p} failed step {self.n} ({name}): {a['error']}")
        return [a["value"] for a in answers]

    def progress(self, n: int, what: str, test: str) -> None:
        """Process 0's exchange in progress, in the run folder: the launcher ends a run whose
        processes stopped exchanging (one stuck in a collective another never joined)."""
        if self.step_file:
            write_atomically(self.step_file, json.dumps({"n": n, "name": what, "payload": {"test": test},
                                                         "started": time.time()}))

    def stop(self) -> None:
        """(Nothing to tell: every process runs its own session to its end.)"""
