"""The launcher of a multi-process run, and how a copy learns its role (no JAX here).

``pytest suites/ --processes N`` on one machine: the invoking pytest becomes a launcher. It picks a
free loopback port and starts N copies of the same command, each told its process id, the process
count and the coordinator address through the environment; it runs no tests itself. (On a pod or
cluster the platform starts the copies instead, and ``jax.distributed.initialize()`` finds them.)

Every wait in the copies has a time-out. If a process dies, JAX's coordination service ends the
others (it aborts them on missed heartbeats), so the launcher, which is outside the JAX job, is the
one that notices: it names the dead process, has the run report mark the property that was running
as failed (``on_broken``), and ends every copy.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, List, Optional

from .. import environment
from ..pytest_process import command

STEP_FILE = "step-in-progress.json"  # the leader's current step, watched by the launcher
STEPS_LOG = "steps.jsonl"  # every step the leader published, in order; made when the leader starts
FINISHED = (0, 1)  # a copy's pytest ran its session to the end (its tests passed, or some failed)
PLATFORM = "platform"  # --processes platform: the pod or cluster started the copies


class CoordinatorError(RuntimeError):
    """The coordination service could not start, or could not be joined."""


# --- the launcher (the invoking process) ----------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(n: int, argv: List[str], run_folder: Path, env: dict,
           on_broken: Callable[[str], None], grace_s: float = 30.0) -> int:
    """Start ``n`` copies of this pytest command (``argv``: its ``sys.argv``) and wait for them;
    returns the exit status.

    Process 0's output goes to this terminal; the followers' to ``run_folder/process-<i>.log``.
    When a process dies before the leader is done, the others get ``grace_s`` to end on their own
    (the coordination service aborts them), then are killed, and ``on_broken(message)`` is told
    which process broke the run.
    """
    run_folder.mkdir(parents=True, exist_ok=True)
    for left_over in (STEP_FILE, STEPS_LOG):  # an earlier run's, into the same folder
        (run_folder / left_over).unlink(missing_ok=True)
    port = int(env[environment.COORDINATOR_PORT]) if env.get(environment.COORDINATOR_PORT) else free_port()
    check_port_free(port)
    procs = []
    for i in range(n):
        child_env = dict(env, **{environment.PROCESS_ID: str(i), environment.PROCESS_COUNT: str(n),
                                 environment.COORDINATOR: f"127.0.0.1:{port}",
                                 environment.LAUNCHER_PID: str(os.getpid())})
        out = None if i == 0 else open(run_folder / f"process-{i}.log", "w")
        procs.append(subprocess.Popen(command(argv[1:]), env=child_env, stdout=out,
                                      stderr=subprocess.STDOUT if out else None,
                                      start_new_session=True))
    dead = None
    previous = {sig: signal.signal(sig, _raise_interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        while any(p.poll() is None for p in procs):
            for i, p in enumerate(procs[1:], start=1):
                code = p.poll()
                if code not in (None, *FINISHED) and dead is None and procs[0].poll() is None:
                    dead = (i, code)  # a follower died while the leader still ran
            stuck = stuck_step(run_folder, environment.step_timeout_s(env))
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
    started = (run_folder / STEPS_LOG).exists()  # the leader joined and took the lead
    if dead is None and procs[0].returncode < 0 and not started:
        dead = (0, procs[0].returncode)  # the leader died before it took the lead
    if dead is None:
        others = {i: p.returncode for i, p in enumerate(procs[1:], start=1) if p.returncode != procs[0].returncode}
        if others:  # (every process judges the same facts: a different exit status is a finding)
            print(f"\nmulti-process run: process 0 ended with exit status {procs[0].returncode}, but "
                  + ", ".join(f"process {i} with {code} (its log: {run_folder / f'process-{i}.log'})"
                              for i, code in others.items()), file=sys.stderr)
            return max(1, procs[0].returncode)
        return procs[0].returncode
    who, code = dead
    if who == "stuck":
        message = code
    elif who == "interrupted":
        message = "the launcher was interrupted; every process was ended"
    else:
        how = f"exit status {code}" if code >= 0 else f"signal {signal.Signals(-code).name}"
        message = f"process {who} died ({how}) before the run ended"
        if not started:
            message = (f"process {who} died ({how}) before the run started, while starting or joining "
                       f"the coordination service at 127.0.0.1:{port}")
    if isinstance(who, int) and who > 0:
        message += f"; its log: {run_folder / f'process-{who}.log'}"
    print(f"\nmulti-process run broken: {message}", file=sys.stderr)
    on_broken(message)
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
                f"port with ${environment.COORDINATOR_PORT}, or unset it to let the launcher pick "
                f"one") from None


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def stuck_step(run_folder: Path, step_timeout_s: float) -> Optional[str]:
    """A message when the leader's current step has run past twice the step time-out (a process
    stuck in a collective cannot time out by itself), else None."""
    try:
        current = json.loads((run_folder / STEP_FILE).read_text())
    except (OSError, ValueError):
        return None
    waited = time.time() - current["started"]
    if waited <= 2 * step_timeout_s:
        return None
    return (f"step {current['n']} ({current['name']}) did not finish within {2 * step_timeout_s:.0f} s "
            f"(a process is stuck, probably in a collective that another one never joined); "
            f"the step: {json.dumps(current.get('payload'))[:600]}")


# --- inside a copy --------------------------------------------------------------------------
def role_from_env(option=None, env=os.environ):
    """How this copy joins a multi-process run: (process id, count, coordinator) when the launcher
    started it; ``PLATFORM`` when ``--processes platform`` says a pod or cluster launcher did (JAX
    finds the rest); None in a one-process run (or in the launcher itself)."""
    if environment.PROCESS_ID in env:
        return (int(env[environment.PROCESS_ID]), int(env[environment.PROCESS_COUNT]),
                env[environment.COORDINATOR])
    return PLATFORM if option == PLATFORM else None


def watch_launcher(env=os.environ) -> None:
    """In a copy started by the launcher: end this process if the launcher goes away (killed with
    SIGKILL, it cannot end its copies itself), so that no process is left behind."""
    launcher = env.get(environment.LAUNCHER_PID)
    if not launcher:
        return

    def watch():
        while True:
            if os.getppid() != int(launcher):
                os._exit(3)
            time.sleep(1)

    threading.Thread(target=watch, daemon=True, name="conformance-launcher-watch").start()
