"""Run a few lines of JAX in a fresh Python process, for cases that can crash the interpreter
(an XLA CHECK failure aborts the process: in-process, it would end the whole test run)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Sequence

from .repro import preamble


PRELUDE_ENV = "CONFORMANCE_SUBPROCESS_PRELUDE"  # code run after the preamble (tests/faults.py sets it)


def run_isolated(lines: Sequence[str], timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the repro preamble (this run's platform and device count) plus ``lines`` in a new
    interpreter; returns the completed process (a crash shows as a negative return code)."""
    prelude = os.environ.get(PRELUDE_ENV, "")  # a planted fault (self-tests only) reaches here too
    code = "\n".join(preamble() + ([prelude] if prelude else []) + list(lines))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))
