"""What a user meets first: every bad input to ``pytest suites/`` and ``python -m reports`` ends in
one clear line and a usage exit status (4 for pytest, as pytest's own usage errors; 2 for
``python -m reports``, as argparse's), each run in a fresh interpreter as a user would run it."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

import pytest

from conformance.runner.pytest_process import fresh_environment, run_pytest
from conformance.runner.run_folder import ROOT

PYTEST_USAGE = 4  # pytest's ExitCode.USAGE_ERROR
REPORTS_USAGE = 2  # python -m reports: a bad argument or a malformed report


@dataclass(frozen=True)
class BadInput:
    """One row of the table: the command (``pytest`` or ``reports`` and its arguments, ``{tmp}``
    standing for a fresh folder), its environment changes, the status and the start of the line."""

    name: str
    program: str
    args: Tuple[str, ...]
    status: int
    line_starts: str
    env: Optional[Mapping[str, str]] = None


def cuda_plugin_installed() -> bool:
    return any((d.metadata["Name"] or "").lower().startswith(("jax-cuda", "jax_cuda"))
               for d in importlib.metadata.distributions())


TABLE = [
    BadInput("unknown Hypothesis profile", "pytest", ("suites/test_mesh.py", "--hypothesis-profile=nope"),
             PYTEST_USAGE, "ERROR: --hypothesis-profile=nope: no such Hypothesis profile (registered: "),
    BadInput("--backend cuda without CUDA", "pytest", ("suites/test_mesh.py", "--backend", "cuda"),
             PYTEST_USAGE, "ERROR: the 'cuda' backend did not start: "),
    BadInput("JAX_PLATFORMS=cuda without CUDA", "pytest", ("suites/test_mesh.py",),
             PYTEST_USAGE, "ERROR: the 'cuda' backend did not start: ", {"JAX_PLATFORMS": "cuda"}),
    BadInput("an unknown backend", "pytest", ("suites/test_mesh.py", "--backend", "nope"),
             PYTEST_USAGE, "ERROR: the 'nope' backend did not start: "),
    BadInput("--report-dir naming a file", "pytest", ("suites/test_mesh.py", "--report-dir", "{tmp}/a-file"),
             PYTEST_USAGE, "ERROR: --report-dir {tmp}/a-file: is a file, not a folder"),
    BadInput("--report-dir that cannot be made", "pytest",
             ("suites/test_mesh.py", "--report-dir", "{tmp}/a-file/run"),
             PYTEST_USAGE, "ERROR: --report-dir {tmp}/a-file/run: cannot be made"),
    BadInput("$CONFORMANCE_REPORT_DIR naming a file", "pytest", ("suites/test_mesh.py",),
             PYTEST_USAGE, "ERROR: $CONFORMANCE_REPORT_DIR {tmp}/a-file: is a file",
             {"CONFORMANCE_REPORT_DIR": "{tmp}/a-file"}),
    BadInput("a device count of 0", "pytest", ("suites/test_mesh.py", "--devices", "0"),
             PYTEST_USAGE, "ERROR: --devices=0 cannot be honoured"),
    BadInput("--deviations naming no file", "pytest", ("suites/test_mesh.py", "--deviations", "{tmp}/none.toml"),
             PYTEST_USAGE, "ERROR: --deviations {tmp}/none.toml: no such file"),
    BadInput("matrix -o into a missing folder", "reports",
             ("matrix", "0.10.2", "-o", "{tmp}/no/such/m.html"),
             REPORTS_USAGE, "error: -o {tmp}/no/such/m.html: no such folder {tmp}/no/such"),
    BadInput("compare of a folder without a report", "reports", ("compare", "{tmp}", "{tmp}"),
             REPORTS_USAGE, "error: {tmp}: no such report"),
]


def run(row: BadInput, tmp) -> subprocess.CompletedProcess:
    args = [a.replace("{tmp}", str(tmp)) for a in row.args]
    env = {k: v.replace("{tmp}", str(tmp)) for k, v in (row.env or {}).items()}
    if row.program == "pytest":
        return run_pytest(args, env={"CONFORMANCE_REPORT_DIR": None, **env}, timeout=300)
    return subprocess.run([sys.executable, "-m", "reports", *args], cwd=ROOT, capture_output=True, text=True,
                          env=fresh_environment(env), timeout=300)


@pytest.mark.parametrize("row", TABLE, ids=[row.name for row in TABLE])
def test_a_bad_input_ends_in_one_line_and_a_usage_status(row, tmp_path):
    """A bad input prints exactly one non-empty line (no traceback) and exits with the usage status."""
    if "cuda" in row.name and cuda_plugin_installed():
        pytest.skip("a CUDA plugin is installed here, so the cuda backend may start")
    (tmp_path / "a-file").write_text("not a folder\n")
    done = run(row, tmp_path)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    expected = row.line_starts.replace("{tmp}", str(tmp_path))
    assert len(lines) == 1 and lines[0].startswith(expected) and done.returncode == row.status, (
        f"got exit status {done.returncode} and {len(lines)} lines:\n" + "\n".join(lines[:40])
        + f"\nbut should be exit status {row.status} and one line starting {expected!r} [{row.name}]")


def test_collect_only_writes_no_report(tmp_path):
    """``pytest suites/ --co`` lists the properties and writes no run report (nor its folder)."""
    folder = tmp_path / "run"
    done = run_pytest(["suites/test_mesh.py", "--co", "-q", "--report-dir", str(folder)], timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not folder.exists(), f"got {sorted(p.name for p in folder.iterdir())} in {folder}, but should be no folder"
