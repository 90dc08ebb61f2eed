"""Multi-process runs: the launcher, and the leader/follower step protocol over JAX's own runtime.

``pytest suites/ --processes N`` on one machine: the invoking pytest becomes a launcher. It picks a
free loopback port and starts N copies of the same command, each told its process id, the process
count and the coordinator address through the environment; it runs no tests itself. (On a pod or
cluster the platform starts the copies instead, and ``jax.distributed.initialize()`` finds them.)

Each copy calls ``jax.distributed.initialize`` before JAX starts its backend. Process 0 leads: it
runs pytest and Hypothesis, and for each example it publishes a *step* (a registered function name
and a JSON description) in the coordination service's key-value store. Every process, the leader
included, runs the step in lockstep (collectives need all of them); each follower publishes what
its addressable shards hold, and the leader gathers those answers and checks them against the
model. Followers run no Hypothesis: they loop on steps until the leader publishes "stop".

Every wait has a time-out. If a process dies, JAX's coordination service ends the others (it
aborts them on missed heartbeats), so the launcher, which is outside the JAX job, is the one that
notices: it names the dead process, marks the property that was running as failed in the run
report, and ends every copy.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

PROCESS_ID_ENV = "CONFORMANCE_PROCESS_ID"
PROCESS_COUNT_ENV = "CONFORMANCE_PROCESS_COUNT"
COORDINATOR_ENV = "CONFORMANCE_COORDINATOR"
LAUNCHER_ENV = "CONFORMANCE_LAUNCHER_PID"
STEP_FILE = "step-in-progress.json"  # the leader's current step, watched by the launcher
STEPS_LOG = "steps.jsonl"  # every step the leader published, in order (to replay a broken run)
STEP_TIMEOUT_S = float(os.environ.get("CONFORMANCE_STEP_TIMEOUT", "60"))
INIT_TIMEOUT_S = float(os.environ.get("CONFORMANCE_INIT_TIMEOUT", "60"))  # joining the coordinator
COORDINATOR_PORT_ENV = "CONFORMANCE_COORDINATOR_PORT"  # the launcher's port (default: a free one)
IDLE_TIMEOUT_S = 900.0  # a follower that hears nothing this long gives up
STOP = "stop"


class CoordinatorError(RuntimeError):
    """jax.distributed.initialize failed: the coordinator could not start, or could not be joined."""


class StepTimeout(AssertionError):
    """A process did not answer a step in time; the message names it."""


# --- the launcher (the invoking process; no JAX) ---------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_command(argv: List[str]) -> List[str]:
    """The same pytest command for a copy (sys.argv[0] may be a pytest script or -m pytest)."""
    return [sys.executable, "-m", "pytest", *argv[1:]]


def launch(n: int, argv: List[str], log_dir: Path, env: Optional[dict] = None,
           grace_s: float = 30.0) -> int:
    """Start ``n`` copies of this pytest command and wait for them; returns the exit status.

    Process 0's output goes to this terminal; the followers' to ``log_dir/process-<i>.log``. When a
    process dies before the leader is done, the others get ``grace_s`` to end on their own (the
    coordination service aborts them), then are killed; the run report is marked as broken by
    that process, naming the property that was running.
    """
    from reports.record import REPORT_NAME
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / STEP_FILE).unlink(missing_ok=True)  # left by an earlier run into the same folder
    base = dict(env if env is not None else os.environ)
    port = int(base[COORDINATOR_PORT_ENV]) if base.get(COORDINATOR_PORT_ENV) else free_port()
    check_port_free(port)
    procs = []
    for i in range(n):
        child_env = dict(base, **{PROCESS_ID_ENV: str(i), PROCESS_COUNT_ENV: str(n),
                                  COORDINATOR_ENV: f"127.0.0.1:{port}", LAUNCHER_ENV: str(os.getpid())})
        out = None if i == 0 else open(log_dir / f"process-{i}.log", "w")
        procs.append(subprocess.Popen(child_command(argv), env=child_env, stdout=out,
                                      stderr=subprocess.STDOUT if out else None,
                                      start_new_session=True))
    dead = None
    previous = {sig: signal.signal(sig, _raise_interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        while any(p.poll() is None for p in procs):
            for i, p in enumerate(procs[1:], start=1):
                code = p.poll()
                if code not in (None, 0) and dead is None and procs[0].poll() is None:
                    dead = (i, code)  # a follower died while the leader still ran
            stuck = stuck_step(log_dir)
            if stuck and dead is None:
                dead = ("stuck", stuck)
                break
            if dead is not None or procs[0].poll() is not None:
                # the leader ended (its followers get "stop"), or a follower died (the
                # coordination service ends the others): give the rest time to end on their own
                failed_leader = dead is None and procs[0].returncode not in (0, 1)
                deadline = time.monotonic() + (min(grace_s, 5.0) if failed_leader else grace_s)
                while time.monotonic() < deadline and any(p.poll() is None for p in procs):
                    time.sleep(0.2)
                break
            time.sleep(0.2)
    except KeyboardInterrupt:
        dead = dead or ("interrupted", None)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    if dead is None and procs[0].returncode < 0 and not (log_dir / REPORT_NAME).exists():
        dead = (0, procs[0].returncode)  # the leader died before its first property
    if dead is None:
        return procs[0].returncode
    who, code = dead
    if who == "stuck":
        message = code
    elif who == "interrupted":
        message = "the launcher was interrupted; every process was ended"
    else:
        how = f"exit status {code}" if code >= 0 else f"signal {signal.Signals(-code).name}"
        message = f"process {who} died ({how}) before the run ended"
        if not (log_dir / REPORT_NAME).exists():
            message = (f"process {who} died ({how}) before the run started, while starting or joining "
                       f"the coordination service at 127.0.0.1:{port}")
    if isinstance(who, int) and who > 0:
        message += f"; its log: {log_dir / f'process-{who}.log'}"
    print(f"\nmulti-process run broken: {message}", file=sys.stderr)
    mark_report_broken(log_dir, message)
    return 1


def check_port_free(port: int) -> None:
    """Raise CoordinatorError unless the coordinator can listen on ``port`` (on every interface, as
    JAX's coordination service does): JAX itself may crash on a taken port (0.10.2: a segfault in
    get_distributed_runtime_service, 3 times in 4) instead of raising."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("", port))
        except OSError as e:
            raise CoordinatorError(
                f"the coordination service cannot start on port {port}: {e.strerror}. Choose a free "
                f"port with ${COORDINATOR_PORT_ENV}, or unset it to let the launcher pick one") from None


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def stuck_step(run_dir: Path) -> Optional[str]:
    """A message when the leader's current step has run past twice the step time-out (a process
    stuck in a collective cannot time out by itself), else None."""
    try:
        current = json.loads((run_dir / STEP_FILE).read_text())
    except (OSError, ValueError):
        return None
    waited = time.time() - current["started"]
    if waited <= 2 * STEP_TIMEOUT_S:
        return None
    return (f"step {current['n']} ({current['name']}) did not finish within {2 * STEP_TIMEOUT_S:.0f} s "
            f"(a process is stuck, probably in a collective that another one never joined); "
            f"the step: {json.dumps(current.get('payload'))[:600]}")


def mark_report_broken(run_dir: Path, message: str) -> None:
    """The leader's run report, with the property it was running failed for ``message``."""
    from reports.plugin import new_entry
    from reports.record import REPORT_NAME, dump, summary, write_atomically
    path = run_dir / REPORT_NAME
    if not path.exists():
        return
    record = json.loads(path.read_text())
    running = record.get("running")
    if running:
        entry = next((t for t in record["tests"] if t["id"] == running), None)
        if entry is None:
            entry = new_entry(running)
            record["tests"].append(entry)
        entry.update(outcome="failed", message=f"{message} while this property ran")
    record["status"] = "incomplete"
    record["summary"] = summary(record["tests"])
    write_atomically(path, dump(record))


# --- inside a copy --------------------------------------------------------------------------
PLATFORM = "platform"  # --processes platform: the pod or cluster started the copies


def role_from_env(option=None, env=os.environ):
    """How this copy joins a multi-process run: (process id, count, coordinator) when the launcher
    started it; ``PLATFORM`` when ``--processes platform`` says a pod or cluster launcher did (JAX
    finds the rest); None in a one-process run (or in the launcher itself)."""
    if PROCESS_ID_ENV in env:
        return int(env[PROCESS_ID_ENV]), int(env[PROCESS_COUNT_ENV]), env[COORDINATOR_ENV]
    return PLATFORM if option == PLATFORM else None


def initialize(role) -> tuple:
    """``jax.distributed.initialize`` (with CPU collectives over gloo, see compat); returns
    (process id, process count) as JAX sees them."""
    import jax
    from . import compat
    compat.use_gloo_collectives()
    try:
        if role == PLATFORM:
            jax.distributed.initialize()  # the platform's environment says where and who
        else:
            watch_launcher()
            process_id, count, coordinator = role
            jax.distributed.initialize(coordinator, count, process_id,
                                       initialization_timeout=int(INIT_TIMEOUT_S))
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
            else f"could not join the coordination service within {INIT_TIMEOUT_S:.0f} s")
    return (f"process {process_id} of {count} {what} at {coordinator} ({type(error).__name__}: "
            f"{first}). Is the port free (${COORDINATOR_PORT_ENV} chooses it; "
            f"$CONFORMANCE_INIT_TIMEOUT the wait), and can this host reach it?")


def _client():
    from jax._src import distributed
    return distributed.global_state.client


STEPS: Dict[str, Callable] = {}


def step(fn: Callable) -> Callable:
    """Register a step function: ``fn(payload) -> JSON-able answer``, run by every process."""
    STEPS[fn.__name__] = fn
    return fn


class Leader:
    """Process 0's side: publish a step, run it, gather the followers' answers."""

    def __init__(self, count: int, run_dir: Optional[Path] = None):
        self.count = count
        self.n = 0
        self.step_file = run_dir / STEP_FILE if run_dir else None
        if self.step_file:
            self.step_file.with_name(STEPS_LOG).unlink(missing_ok=True)  # an earlier run's steps

    def run(self, name: str, payload: dict) -> List:
        """Every process's answer to step ``name`` (index = process id)."""
        self.n += 1
        client = _client()
        from . import mpsteps  # noqa: F401 - registers the steps
        client.key_value_set(f"conformance/step/{self.n}", json.dumps({"name": name, "payload": payload}))
        if self.step_file:
            from reports.record import write_atomically
            write_atomically(self.step_file, json.dumps({"n": self.n, "name": name, "payload": payload,
                                                         "started": time.time()}))
            with open(self.step_file.with_name(STEPS_LOG), "a") as log:  # the run, replayable
                log.write(json.dumps({"n": self.n, "name": name, "payload": payload}) + "\n")
        try:
            return self._run(name, payload, client)
        finally:
            if self.step_file and self.step_file.exists():
                self.step_file.unlink()

    def _run(self, name: str, payload: dict, client) -> List:
        answers = [STEPS[name](payload)]
        for p in range(1, self.count):
            try:
                text = client.blocking_key_value_get(f"conformance/answer/{self.n}/{p}",
                                                     int(STEP_TIMEOUT_S * 1000))
            except Exception as e:  # noqa: BLE001 - the client raises the runtime's error type
                raise StepTimeout(f"process {p} did not answer step {self.n} ({name}) within "
                                  f"{STEP_TIMEOUT_S:.0f} s: {str(e).splitlines()[0][:200]}") from None
            answer = json.loads(text)
            if "error" in answer:
                raise AssertionError(f"process {p} failed step {self.n} ({name}): {answer['error']}")
            answers.append(answer["value"])
        return answers

    def stop(self) -> None:
        self.n += 1
        _client().key_value_set(f"conformance/step/{self.n}", json.dumps({"name": STOP}))


def follow(process_id: int) -> int:
    """A follower's loop: run each published step, publish its answer, until "stop"."""
    from . import mpsteps  # noqa: F401 - registers the steps
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
            answer = {"value": STEPS[message["name"]](message["payload"])}
        except Exception as e:  # noqa: BLE001 - reported to the leader, which fails the property
            answer = {"error": f"{type(e).__name__}: {' '.join(str(e).split())[:500]}"}
        client.key_value_set(f"conformance/answer/{n}/{process_id}", json.dumps(answer))


_LEADER: Optional[Leader] = None
REQUESTED_BUT_UNSUPPORTED: Optional[str] = None  # why --processes N could not launch here


def skip_reason() -> Optional[str]:
    """Why the multiprocess properties skip in this run, or None when they run."""
    if _LEADER is not None:
        return None
    return REQUESTED_BUT_UNSUPPORTED or ("multi-process properties run with --processes N "
                                         "(e.g. pytest suites/ --processes 2 --devices 4)")


def leader() -> Optional[Leader]:
    """The leader of this multi-process run, or None in a one-process run."""
    return _LEADER


def become_leader(count: int, run_dir: Optional[Path]) -> Leader:
    global _LEADER
    _LEADER = Leader(count, run_dir)
    return _LEADER


def watch_launcher(env=os.environ) -> None:
    """In a copy started by the launcher: end this process if the launcher goes away (killed with
    SIGKILL, it cannot end its copies itself), so that no process is left behind."""
    import threading
    launcher = env.get(LAUNCHER_ENV)
    if not launcher:
        return

    def watch():
        while True:
            if os.getppid() != int(launcher):
                os._exit(3)
            time.sleep(1)

    threading.Thread(target=watch, daemon=True, name="conformance-launcher-watch").start()
