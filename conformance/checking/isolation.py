"""Run a few lines of JAX in a fresh Python process, for cases that can crash the interpreter
(an XLA CHECK failure aborts the process: in-process, it would end the whole test run)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import textwrap
from typing import Optional, Sequence

from .repro import preamble, preamble_imports

# What XLA's SPMD partitioner prints when it aborts the process on a reshard it cannot slice
# (hlo_sharding_util.cc "Check failed: sliced.has_value()"): the known deviations whose
# reproductions are test_concatenate_constrained_across_two_differently_split_operands and
# test_jit_between_two_meshes_of_one_device_order_compiles.
XLA_SLICE_CHECK = r"sliced\.has_value\(\)"


def aborted_in_a_warm_interpreter(case, warm_interpreter, excuses, entry, example, what: str) -> bool:
    """Run ``case``'s reproduction in ``warm_interpreter`` first, for an example this JAX's XLA may
    abort the process on (``entry``: the known deviation that says so): True, the abort counted as
    excused by ``entry`` (``what`` names it), where XLA's slice check killed it; a failure of
    ``case`` where it died otherwise; False where it lived (the example then runs in this process)."""
    import re
    tried = warm_interpreter.run(case.repro)
    if tried.returncode < 0 and re.search(XLA_SLICE_CHECK, tried.stderr):
        excuses.count(entry, example, what)
        return True
    case.true(f"the case ran in a warm interpreter without killing it (exit status {tried.returncode}: "
              f"{' | '.join(tried.stderr.strip().splitlines()[-3:])})", tried.returncode >= 0)
    return False


def run_isolated(lines: Sequence[str], *, prelude: str = "", timeout: float = 300,
                 server: Optional["ForkServer"] = None) -> subprocess.CompletedProcess:
    """Run the repro preamble (this run's platform and device count), ``prelude`` (code the run
    adds to every isolated process: a planted fault, in the self-tests) and ``lines`` in a new
    interpreter (with ``server``: a fork of one that has only imported the preamble's modules);
    returns the completed process (a crash shows as a negative return code)."""
    code = "\n".join(preamble() + ([prelude] if prelude else []) + list(lines))
    return server.run(code, timeout=timeout) if server is not None else in_a_new_interpreter(code, timeout)


def in_a_new_interpreter(code: str, timeout: float) -> subprocess.CompletedProcess:
    """``python -c code`` in this environment, its output captured as text."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ))


# The fork server's loop: it has run the preamble's environment and imports (JAX imported, its backend
# not started); each request (a JSON line: the script, and files for its stdout and stderr) runs in a
# forked child, as ``python -c`` would run it (its status: 0, 1 after an uncaught exception, a
# SystemExit's code, or minus the signal that killed it). The server replies with the child's pid,
# then its status.
FORK_SERVE = """
import atexit as _atexit, json as _json, os as _os, sys as _sys, traceback as _traceback

def _child(job):
    status = 1
    try:
        _os.dup2(_os.open(_os.devnull, _os.O_RDONLY), 0)
        for fd, path in ((1, job["stdout"]), (2, job["stderr"])):
            _os.dup2(_os.open(path, _os.O_WRONLY | _os.O_CREAT | _os.O_TRUNC), fd)
        _os.environ.clear()
        _os.environ.update(job["env"])
        _sys.argv = ["-c"]
        try:
            script = compile(job["code"], "<string>", "exec")
            import linecache as _linecache  # (where python -c keeps its lines for tracebacks, the script's are kept)
            if hasattr(_linecache, "_register_code"):
                _linecache._register_code(script, job["code"], "<string>")
            exec(script, {"__name__": "__main__", "__builtins__": __builtins__})
            status = 0
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int):
                status = e.code or 0
            else:
                print(e.code, file=_sys.stderr)
        except BaseException as e:
            _traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        _atexit._run_exitfuncs()
    finally:
        _sys.stdout.flush()
        _sys.stderr.flush()
        _os._exit(status)

for _request in _sys.stdin:
    _job = _json.loads(_request)
    _pid = _os.fork()
    if _pid == 0:
        _child(_job)
    _sys.stdout.write(_json.dumps({"pid": _pid}) + "\\n")
    _sys.stdout.flush()
    _, _status = _os.waitpid(_pid, 0)
    _code = -_os.WTERMSIG(_status) if _os.WIFSIGNALED(_status) else _os.WEXITSTATUS(_status)
    _sys.stdout.write(_json.dumps({"returncode": _code}) + "\\n")
    _sys.stdout.flush()
"""


class ForkServer:
    """Fresh interpreters without JAX's import time: one process per session imports what the
    preamble imports (about a second) and forks a child per script, which starts the backend
    itself, so a crash ends only that child. ``run(code)`` is ``subprocess.run([python, "-c",
    code])`` with its output captured as text; where fork is not available, or the environment
    changed since the server started (what JAX reads at import), a server is started again, and
    where none starts, the script runs in a new interpreter of its own."""

    def __init__(self):
        self.process = None
        self.env = None
        self.log = None

    @staticmethod
    def _environment() -> dict:
        """The environment a server is started with, and must still be (the child gets the
        current one: pytest's PYTEST_CURRENT_TEST changes from test to test, and JAX never reads it)."""
        return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}

    def _start(self) -> bool:
        self.close()
        if not hasattr(os, "fork"):
            return False
        self.env = self._environment()
        self.log = tempfile.TemporaryFile(mode="w+")
        code = "\n".join(preamble_imports() + [FORK_SERVE])
        self.process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.log, text=True, env=self.env)
        return True

    def _reply(self, timeout: Optional[float]):
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        return json.loads(line) if line else None

    def run(self, code: str, *, timeout: float = 300) -> subprocess.CompletedProcess:
        args = [sys.executable, "-c", code]
        fresh = self.process is None or self.process.poll() is not None or self.env != self._environment()
        if fresh and not self._start():
            return in_a_new_interpreter(code, timeout)
        with tempfile.TemporaryDirectory() as folder:
            out, err = os.path.join(folder, "stdout"), os.path.join(folder, "stderr")
            try:
                self.process.stdin.write(json.dumps({"code": code, "stdout": out, "stderr": err,
                                                     "env": dict(os.environ)}) + "\n")
                self.process.stdin.flush()
                started = self._reply(timeout)
            except (BrokenPipeError, OSError, ValueError):
                started = None
            if started is None:  # (the server died, or never imported: a script of its own)
                self.close()
                return in_a_new_interpreter(code, timeout)
            ended = self._reply(timeout)
            if ended is None:
                os.kill(started["pid"], signal.SIGKILL)
                self._reply(None)
            said = [open(path, errors="replace").read() if os.path.exists(path) else "" for path in (out, err)]
        if ended is None:
            raise subprocess.TimeoutExpired(args, timeout, said[0], said[1])
        return subprocess.CompletedProcess(args, ended["returncode"], said[0], said[1])

    def close(self) -> None:
        """End the server (its loop ends with its input)."""
        if self.process is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process.stdout.close()
        if self.log is not None:
            self.log.close()
        self.process, self.log = None, None


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
