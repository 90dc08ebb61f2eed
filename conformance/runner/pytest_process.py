"""pytest in a fresh interpreter, from the checkout's root: the one way the benchmark, the fault
kill maps, the multi-process launcher and the self-tests start a run of the suites."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Mapping, Optional, Sequence

from . import environment
from .devices import FORCE_FLAG
from .run_folder import ROOT

# What a run sets for itself and its workers: a fresh run must decide them again.
RUN_SET = ("JAX_NUM_CPU_DEVICES", "JAX_ENABLE_X64", environment.SEED, environment.PROCESS_ID,
           environment.PROCESS_COUNT, environment.COORDINATOR, environment.LAUNCHER_PID, environment.LAST_WORDS)


def command(args: Sequence[str], python: Optional[str] = None) -> list:
    """``python -m pytest ARGS`` with this interpreter (or ``python``: another environment's)."""
    return [python or sys.executable, "-m", "pytest", *args]


def fresh_environment(overrides: Optional[Mapping[str, Optional[str]]] = None,
                      base: Mapping[str, str] = os.environ) -> dict:
    """``base`` as a new run should see it: without pytest's own variables, what a run sets for
    itself (the device-count flag in ``XLA_FLAGS``, the seed, a copy's role, ...), then with
    ``overrides`` (a value of None removes the variable). ``$CONFORMANCE_REPORT_DIR`` stays:
    self-tests point it at a temporary folder (``--report-dir`` wins over it)."""
    env = {k: v for k, v in base.items() if not k.startswith("PYTEST_") and k not in RUN_SET}
    flags = re.sub(rf"\s*{FORCE_FLAG}=\S+", "", env.get("XLA_FLAGS", "")).strip()
    env.pop("XLA_FLAGS", None)
    if flags:
        env["XLA_FLAGS"] = flags
    for key, value in (overrides or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def run_pytest(args: Sequence[str], *, env: Optional[Mapping[str, Optional[str]]] = None,
               timeout: Optional[float] = None, python: Optional[str] = None) -> subprocess.CompletedProcess:
    """Run ``pytest -p no:cacheprovider ARGS`` to the end in the fresh environment (``env``:
    overrides), from the checkout's root, with this interpreter or ``python``; its output captured
    as text."""
    return subprocess.run(command(["-p", "no:cacheprovider", *args], python), cwd=ROOT,
                          env=fresh_environment(env), capture_output=True, text=True, timeout=timeout)


def start_pytest(args: Sequence[str], *, env: Optional[Mapping[str, Optional[str]]] = None,
                 **popen) -> subprocess.Popen:
    """The same run in the background (``popen``: more ``subprocess.Popen`` arguments)."""
    return subprocess.Popen(command(["-p", "no:cacheprovider", *args]), cwd=ROOT,
                            env=fresh_environment(env), **popen)
