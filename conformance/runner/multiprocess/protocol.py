"""The leader/follower step protocol of a multi-process run, over JAX's own runtime.

Each copy calls ``jax.distributed.initialize`` before JAX starts its backend. Process 0 leads: it
runs pytest and Hypothesis, and for each example it publishes a *step* (the name of a step function
and a JSON description) in the coordination service's key-value store. Every process, the leader
included, runs the step in lockstep (collectives need all of them); each follower publishes what
its addressable shards hold, and the leader gathers those answers and checks them against the
model. Followers run no Hypothesis: they loop on steps until the leader publishes "stop". The step
functions (``steps.STEPS``) are handed to both sides by the runner.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

import jax
from jax._src import distributed

from conformance.jaxside import compat

from .. import environment
from ..run_folder import write_atomically
from .launcher import PLATFORM, STEP_FILE, STEPS_LOG, CoordinatorError, watch_launcher

IDLE_TIMEOUT_S = 900.0  # a follower that hears nothing this long gives up
STOP = "stop"

Steps = Dict[str, Callable[[dict], object]]  # step name -> fn(payload) -> JSON-able answer


class StepTimeout(AssertionError):
    """A process did not answer a step in time; the message names it."""


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


def _client():
    """The coordination service's client (JAX's private runtime: its key-value store)."""
    return distributed.global_state.client


class Leader:
    """Process 0's side: publish a step, run it, gather the followers' answers. With a run
    folder, the step in progress and a log of every step are kept there (the launcher watches the
    first; the second replays a broken run)."""

    def __init__(self, count: int, steps: Steps, run_folder: Optional[Path] = None):
        self.count = count
        self.steps = steps
        self.n = 0
        self.step_file = run_folder / STEP_FILE if run_folder else None
        if self.step_file:
            self.step_file.parent.mkdir(parents=True, exist_ok=True)
            self.step_file.with_name(STEPS_LOG).write_text("")  # also tells the launcher we lead

    def run(self, name: str, payload: dict) -> List:
        """Every process's answer to step ``name`` (index = process id)."""
        self.n += 1
        client = _client()
        client.key_value_set(f"conformance/step/{self.n}", json.dumps({"name": name, "payload": payload}))
        if self.step_file:
            write_atomically(self.step_file, json.dumps({"n": self.n, "name": name, "payload": payload,
                                                         "started": time.time()}))
            with open(self.step_file.with_name(STEPS_LOG), "a") as log:
                log.write(json.dumps({"n": self.n, "name": name, "payload": payload}) + "\n")
        try:
            return self._run(name, payload, client)
        finally:
            if self.step_file and self.step_file.exists():
                self.step_file.unlink()

    def _run(self, name: str, payload: dict, client) -> List:
        timeout_s = environment.step_timeout_s()
        answers = [self.steps[name](payload)]
        for p in range(1, self.count):
            try:
                text = client.blocking_key_value_get(f"conformance/answer/{self.n}/{p}", int(timeout_s * 1000))
            except Exception as e:  # noqa: BLE001 - the client raises the runtime's error type
                raise StepTimeout(f"process {p} did not answer step {self.n} ({name}) within "
                                  f"{timeout_s:.0f} s: {str(e).splitlines()[0][:200]}") from None
            answer = json.loads(text)
            if "error" in answer:
                raise AssertionError(f"process {p} failed step {self.n} ({name}): {answer['error']}")
            answers.append(answer["value"])
        return answers

    def stop(self) -> None:
        self.n += 1
        _client().key_value_set(f"conformance/step/{self.n}", json.dumps({"name": STOP}))


def follow(process_id: int, steps: Steps) -> int:
    """A follower's loop: run each published step, publish its answer, until "stop"."""
    client = _client()
    n, idle_since = 0, time.monotonic()
    while True:
        try:
            text = client.blocking_key_value_get(f"conformance/step/{n + 1}", 5000)
        except Exception:  # noqa: BLE001 - a time-out: nothing published yet
            if time.monotonic() - idle_since > IDLE_TIMEOUT_S:
                print(f"process {process_id}: no step from the leader for {IDLE_TIMEOUT_S:.0f} s, giving up")
                return 1
            continue
        n += 1
        idle_since = time.monotonic()
        message = json.loads(text)
        if message["name"] == STOP:
            return 0
        try:
            answer = {"value": steps[message["name"]](message["payload"])}
        except Exception as e:  # noqa: BLE001 - reported to the leader, which fails the property
            answer = {"error": f"{type(e).__name__}: {' '.join(str(e).split())[:500]}"}
        client.key_value_set(f"conformance/answer/{n}/{process_id}", json.dumps(answer))
