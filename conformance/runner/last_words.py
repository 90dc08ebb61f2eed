"""What a crashed pytest process was doing, kept where the process that outlives it can read it.

An XLA CHECK failure aborts the interpreter: a crashed xdist worker leaves pytest-xdist only
"worker 'gw0' crashed while running <test>", and the example that killed it is lost with it (the
0.12.0.1 CI run of 2026-12-06 lost a resharding chain's example so). So every pytest process of a
run keeps, in one folder that the controller makes and names to its workers
(``$CONFORMANCE_LAST_WORDS``):

    * ``<process>.case.py``: the test it is running and the script of the last ``Case`` it made
      (the example under test, reproducible without Hypothesis), rewritten for each;
    * ``<process>.stack``: Python's stack of every thread where it died (``faulthandler``).

The controller reads a crashed worker's two files into the report of the test it crashed in (the
run report keeps them); a run without workers that dies is told where its files are in the header.
This module imports no JAX.
"""

from __future__ import annotations

import faulthandler
import os
import shutil
import tempfile
import textwrap
from pathlib import Path
from typing import Mapping, Optional

from . import environment

NO_CASE_YET = "(no Case made yet in this test)"


def process_name(env: Mapping[str, str] = os.environ) -> str:
    """This process's name in the folder: its xdist worker id (``gw0``), a multi-process copy's
    id (``process1``, ``process1-gw0``), else ``main``."""
    worker, copy = env.get("PYTEST_XDIST_WORKER"), env.get(environment.PROCESS_ID)
    return "-".join(part for part in (copy and f"process{copy}", worker) if part) or "main"


def make_folder(env=os.environ) -> Path:
    """The run's folder (made now by the controller, named in ``env`` for the workers it starts);
    a worker reads the one its controller named."""
    named = env.get(environment.LAST_WORDS)
    if named:
        return Path(named)
    folder = Path(tempfile.mkdtemp(prefix="conformance-last-words-"))
    env[environment.LAST_WORDS] = str(folder)
    return folder


class Witness:
    """One process's two files: ``started(test)`` at each test, ``saw(script)`` at each Case."""

    def __init__(self, folder: Path, name: str):
        self.folder = folder
        self.name = name
        self.test = ""
        self.case = open(self.case_path(folder, name), "w", encoding="utf-8")
        self.stack = open(self.stack_path(folder, name), "w", encoding="utf-8")

    @staticmethod
    def case_path(folder: Path, name: str) -> Path:
        return folder / f"{name}.case.py"

    @staticmethod
    def stack_path(folder: Path, name: str) -> Path:
        return folder / f"{name}.stack"

    def watch_for_a_crash(self) -> None:
        """Python's stack goes to the stack file where the process dies (this process's last
        ``faulthandler.enable`` wins: call it after pytest's own faulthandler plugin has)."""
        faulthandler.enable(file=self.stack, all_threads=True)

    def _write(self, text: str) -> None:
        """The case file holds ``text`` alone (written through to the OS: an abort loses nothing)."""
        self.case.seek(0)
        self.case.write(text)
        self.case.truncate()
        self.case.flush()

    def started(self, test: str) -> None:
        self.test = test
        self._write(f"# {test}\n# {NO_CASE_YET}\n")

    def saw(self, script: str) -> None:
        if script:
            self._write(f"# {self.test}\n{script}\n")

    def close(self) -> None:
        if faulthandler.is_enabled():
            faulthandler.disable()
        self.case.close()
        self.stack.close()


def read(folder: Path, name: str, limit: int = 6000) -> Optional[str]:
    """What process ``name`` left in ``folder``: its last Case's script and its stack where it died,
    as a block for a crash's report (None where it left neither); the script cut to its last ``limit``
    characters, the stack to its first (the current thread's innermost frames come first)."""
    parts = []
    for title, path, head in (
            ("the example it was running (its last Case's script)", Witness.case_path(folder, name), False),
            # (the stack's head: the current thread's frames, most recent first, where it died)
            ("Python's stack where it died (faulthandler)", Witness.stack_path(folder, name), True)):
        text = path.read_text(encoding="utf-8", errors="replace").strip() if path.exists() else ""
        if head and "Current thread" in text:  # (the thread that died; the others' stacks come before it)
            first = text.splitlines()[0]
            text = f"{first}\n{text[text.index('Current thread'):]}"
        if text and not head:  # (a Case's script, below its test's line, is indented as its failure message shows it)
            test, _, script = text.partition("\n")
            text = f"{test}\n{textwrap.dedent(script).strip()}"
        if text:
            cut = text if len(text) <= limit else text[:limit] + "\n[...]" if head else "[...]\n" + text[-limit:]
            parts.append(f"{title}:\n{cut}")
    return "\n\n".join(parts) if parts else None


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
