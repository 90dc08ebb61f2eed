"""Every ``CONFORMANCE_*`` environment variable the suite reads or sets, in one place.

A person sets the first group; the runner sets the second for the processes it starts (pytest-xdist
workers read the seed; a multi-process run's copies read their role).
"""

from __future__ import annotations

import os
from typing import Mapping

# --- set by a person -------------------------------------------------------------------------
DEVICES = "CONFORMANCE_DEVICES"  # CPU devices to force, as --devices
REPORT_DIR = "CONFORMANCE_REPORT_DIR"  # the run folder, as --report-dir
STEP_TIMEOUT = "CONFORMANCE_STEP_TIMEOUT"  # seconds a multi-process step may wait (default 60)
INIT_TIMEOUT = "CONFORMANCE_INIT_TIMEOUT"  # seconds to join the coordination service (default 60)
COORDINATOR_PORT = "CONFORMANCE_COORDINATOR_PORT"  # the launcher's port (default: a free one)
VENVS = "CONFORMANCE_VENVS"  # where the per-release environments live (release_envs)
PYTHON313 = "CONFORMANCE_PYTHON313"  # a Python 3.13 interpreter, for releases from 0.11 (release_envs)
COMPILATION_CACHE = "CONFORMANCE_COMPILATION_CACHE"  # the persistent compilation cache's folder, or off

# --- set by the runner for the processes it starts -------------------------------------------
SEED = "CONFORMANCE_SEED"  # the controller's Hypothesis seed, shared by every xdist worker
PROCESS_ID = "CONFORMANCE_PROCESS_ID"  # a multi-process copy's process id
PROCESS_COUNT = "CONFORMANCE_PROCESS_COUNT"  # ... the number of processes
COORDINATOR = "CONFORMANCE_COORDINATOR"  # ... the coordination service's address
LAUNCHER_PID = "CONFORMANCE_LAUNCHER_PID"  # ... the launcher, whose end ends the copy
PROGRAM_LOG = "CONFORMANCE_PROGRAM_LOG"  # a soak round's file for the program it is running
LAST_WORDS = "CONFORMANCE_LAST_WORDS"  # the folder where each process keeps its last example and stack

ALL = (DEVICES, REPORT_DIR, STEP_TIMEOUT, INIT_TIMEOUT, COORDINATOR_PORT, VENVS, PYTHON313, COMPILATION_CACHE,
       SEED, PROCESS_ID, PROCESS_COUNT, COORDINATOR, LAUNCHER_PID, PROGRAM_LOG,
       LAST_WORDS)


def quiet_on_a_closed_pipe() -> None:
    """A command-line tool's output piped into ``head`` ends quietly when the pipe closes, as a
    Unix tool does (SIGPIPE's default action), instead of a BrokenPipeError traceback."""
    import signal
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def seconds(name: str, default: float, env: Mapping[str, str] = os.environ) -> float:
    """A time-out in seconds from the environment variable ``name``, else ``default``."""
    return float(env.get(name) or default)


def step_timeout_s(env: Mapping[str, str] = os.environ) -> float:
    return seconds(STEP_TIMEOUT, 60.0, env)


def init_timeout_s(env: Mapping[str, str] = os.environ) -> float:
    return seconds(INIT_TIMEOUT, 60.0, env)
