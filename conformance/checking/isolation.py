"""Run a few lines of JAX in a fresh Python process, for cases that can crash the interpreter
(an XLA CHECK failure aborts the process: in-process, it would end the whole test run)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import textwrap
from typing import Sequence

from .repro import preamble

# What XLA's SPMD partitioner prints when it aborts the process on a reshard it cannot slice
# (hlo_sharding_util.cc "Check failed: sliced.has_value()"): the known deviations whose
# reproductions are test_concatenate_constrained_across_two_differently_split_operands and
# test_jit_between_two_meshes_of_one_device_order_compiles.
XLA_SLICE_CHECK = r"sliced\.has_value\(\)"


def run_isolated(lines: Sequence[str], *, prelude: str = "", timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the repro preamble (this run's platform and device count), ``prelude`` (code the run
    adds to every isolated process: a planted fault, in the self-tests) and ``lines`` in a new
    interpreter; returns the completed process (a crash shows as a negative return code)."""
    code = "\n".join(preamble() + ([prelude] if prelude else []) + list(lines))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


# The warm interpreter's loop: each request is a JSON-encoded script; it runs with its prints
# caught, and the reply (one JSON line on the real stdout) says whether it raised.
SERVE = """
import contextlib, io, json, sys, traceback
for request in sys.stdin:
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(json.loads(request), "<script>", "exec"), {"__name__": "__script__"})
        reply = {"status": 0, "stdout": printed.getvalue(), "error": ""}
    except BaseException as e:
        reply = {"status": 1, "stdout": printed.getvalue(), "error": "".join(traceback.format_exception_only(e))}
    sys.__stdout__.write(json.dumps(reply) + "\\n")
    sys.__stdout__.flush()
"""


class WarmInterpreter:
    """One interpreter kept for the session that runs scripts one after another (JAX imported once,
    its backend started once), for trying a case that may crash the process before running it in
    the test's own process: a crash ends only this interpreter, and the next script starts another.

    ``run(script)`` returns a CompletedProcess: status 0 (ran), 1 (raised: the exception's last
    line in ``stderr``), or the dead interpreter's own (negative: killed by a signal), then with the
    end of what it wrote to stderr."""

    def __init__(self, *, prelude: str = "", timeout: float = 300):
        self.prelude = prelude
        self.timeout = timeout
        self.process = None
        self.stderr = None

    def start(self) -> None:
        self.stderr = tempfile.TemporaryFile(mode="w+")
        code = "\n".join(preamble() + ([self.prelude] if self.prelude else []) + [SERVE])
        self.process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.stderr, text=True, env=dict(os.environ))

    def run(self, script: str) -> subprocess.CompletedProcess:
        if self.process is None or self.process.poll() is not None:
            self.start()
        self.process.stdin.write(json.dumps(textwrap.dedent(script)) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], self.timeout)
        line = self.process.stdout.readline() if ready else ""
        if line:
            reply = json.loads(line)
            return subprocess.CompletedProcess(["<warm interpreter>"], reply["status"], reply["stdout"], reply["error"])
        if not ready:
            self.process.kill()
        status = self.process.wait()
        self.stderr.seek(0)
        said = self.stderr.read()[-4000:] + ("" if ready else f"\n(killed after {self.timeout} s)")
        self.close()
        return subprocess.CompletedProcess(["<warm interpreter>"], status, "", said)

    def close(self) -> None:
        """End the interpreter (its loop ends with its input) and close its pipes, dead or alive."""
        if self.process is not None:
            self.process.stdin.close()
            if self.process.poll() is None:
                self.process.wait(timeout=30)
            self.process.stdout.close()
        if self.stderr is not None:
            self.stderr.close()
        self.process, self.stderr = None, None
