"""Run a few lines of JAX in a fresh Python process, for cases that can crash the interpreter
(an XLA CHECK failure aborts the process: in-process, it would end the whole test run)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Sequence

from .repro import preamble


def run_isolated(lines: Sequence[str], *, prelude: str = "", timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the repro preamble (this run's platform and device count), ``prelude`` (code the run
    adds to every isolated process: a planted fault, in the self-tests) and ``lines`` in a new
    interpreter; returns the completed process (a crash shows as a negative return code)."""
    code = "\n".join(preamble() + ([prelude] if prelude else []) + list(lines))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))
