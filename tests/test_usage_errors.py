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
    files: Optional[Mapping[str, str]] = None  # written into {tmp} first: name -> text


def cuda_plugin_installed() -> bool:
    return any((d.metadata["Name"] or "").lower().startswith(("jax-cuda", "jax_cuda"))
               for d in importlib.metadata.distributions())


# A user's deviation file, one entry, with one line changed (the rows below say which).
GOOD_ENTRY = {"test": '"suites/test_mesh.py::test_mesh_rejects_duplicate_devices"', "jax": '">=0.4.30"',
              "reason": '"r"', "kind": '"bug"', "symptom": '{ raises = "ValueError" }'}


def deviation_file(header: str = "[[deviation]]", top: str = "format = 2", **changed: Optional[str]) -> str:
    """The text of a deviation file with one entry: GOOD_ENTRY with ``changed`` keys (None drops one)."""
    keys = {**GOOD_ENTRY, **changed}
    return "\n".join([top, "", header, *(f"{k} = {v}" for k, v in keys.items() if v is not None)]) + "\n"


def bad_deviations(name: str, line_starts: str, text: str, program: str = "pytest") -> BadInput:
    """A row: ``pytest suites/test_mesh.py --deviations {tmp}/d.toml`` (or ``reports deviations
    --file``) with ``text`` as the file, failing with ``{tmp}/d.toml:LINE: ...``."""
    args = ("suites/test_mesh.py", "--deviations", "{tmp}/d.toml") if program == "pytest" else \
        ("deviations", "--file", "{tmp}/d.toml")
    prefix = "ERROR: " if program == "pytest" else "error: "
    return BadInput(name, program, args, PYTEST_USAGE if program == "pytest" else REPORTS_USAGE,
                    prefix + "{tmp}/d.toml" + line_starts, files={"d.toml": text})


RANDOM = {"strict": "false", "trigger": '"clamped_start_with_a_cut_output"'}
DEVIATION_FILES = [
    bad_deviations("jax range unquoted", ':5: deviation has jax = 0.4, a number, but jax must be a string: quote it',
                   deviation_file(jax="0.4")),
    bad_deviations("[deviation] with one bracket", ":3: [deviation] is one table: write each entry as a [[deviation]]",
                   deviation_file(header="[deviation]")),
    bad_deviations("test as a list",
                   ":4: deviation has test = ['suites/test_mesh.py::test_mesh_rejects_duplicate_devices'], a list",
                   deviation_file(test='["suites/test_mesh.py::test_mesh_rejects_duplicate_devices"]')),
    bad_deviations("a misspelled key", ":9: deviation has unknown key(s) backnd (did you mean backend?)",
                   deviation_file(backnd='"tpu"')),
    bad_deviations("a misspelled table name",
                   ":3: unknown table or key 'deviations': the file holds format = 2 and [[deviation]] tables",
                   deviation_file(header="[[deviations]]")),
    bad_deviations("a test that does not exist",
                   ":4: deviation has test = 'suites/test_mesh.py::test_mesh_rejects_duplicat_devices', "
                   "which names no test: suites/test_mesh.py has no test_mesh_rejects_duplicat_devices (did you mean "
                   "test_mesh_rejects_duplicate_devices?)",
                   deviation_file(test='"suites/test_mesh.py::test_mesh_rejects_duplicat_devices"')),
    bad_deviations("a file that does not exist", ":4: deviation has test = 'suites/test_mesh_.py::test_x', which names "
                   "no test: no file suites/test_mesh_.py (did you mean suites/test_mesh.py?)",
                   deviation_file(test='"suites/test_mesh_.py::test_x"')),
    bad_deviations("not TOML", ":3: not TOML: ", deviation_file(header="[[deviation]")),
    bad_deviations("no format line", ": deviation file format 1 is not read by this suite", deviation_file(top="")),
    bad_deviations("strict as a string",
                   ':9: deviation has strict = \'yes\', a string, but strict must be true or false',
                   deviation_file(strict='"yes"')),
    bad_deviations("an unknown kind", ":7: deviation has kind = 'bugg', not one of bug, unspecified",
                   deviation_file(kind='"bugg"')),
    bad_deviations("a documented change as an entry",
                   ":7: deviation has kind = 'documented change': a change JAX made on "
                   "purpose is not a deviation", deviation_file(kind='"documented change"')),
    bad_deviations("a cause on an entry that is not a bug",
                   ":9: deviation has cause = 'x' but kind = 'unspecified': only a bug",
                   deviation_file(kind='"unspecified"', cause='"x"')),
    bad_deviations("a misspelled backend", ":9: deviation has backend = 'tpuu': not a platform",
                   deviation_file(backend='"tpuu"')),
    bad_deviations("an unknown trigger",
                   ":10: deviation names an unknown trigger 'clamped_start' "
                   "(similar: clamped_start_with_a_cut_output)",
                   deviation_file(**{**RANDOM, "trigger": '"clamped_start"'},
                                  reproduced_by='"suites/test_mesh.py::test_mesh_rejects_duplicate_devices"')),
    bad_deviations("a random entry with no reproduction", ":9: deviation is not strict, so it must name the strict",
                   deviation_file(**RANDOM)),
    bad_deviations("no symptom", ":3: deviation lacks symptom", deviation_file(symptom=None)),
    bad_deviations("an invalid range", ":5: deviation has an invalid jax range '=>0.4'", deviation_file(jax='"=>0.4"')),
    bad_deviations("a reproduction that does not exist",
                   ":11: deviation has reproduced_by = 'suites/test_mesh.py::test_nope', "
                   "which names no test", deviation_file(**RANDOM, reproduced_by='"suites/test_mesh.py::test_nope"')),
    bad_deviations("a symptom key misspelled", ":8: deviation symptom has unknown key(s) rasies",
                   deviation_file(symptom='{ rasies = "ValueError" }')),
    bad_deviations("params as a string", ":9: deviation has params = 'abs', a string, but params must be a list",
                   deviation_file(params='"abs"')),
    bad_deviations("reports deviations --file of a bad file", ":5: deviation has jax = 0.4, a number",
                   deviation_file(jax="0.4"), program="reports"),
    BadInput("reports deviations --file naming no file", "reports", ("deviations", "--file", "{tmp}/none.toml"),
             REPORTS_USAGE, "error: --file {tmp}/none.toml: no such file"),
]

TABLE = [
    BadInput("unknown Hypothesis profile", "pytest", ("suites/test_mesh.py", "--hypothesis-profile=nope"),
             PYTEST_USAGE, "ERROR: --hypothesis-profile=nope: no such Hypothesis profile (registered: "),
    BadInput("--backend cuda without CUDA", "pytest", ("suites/test_mesh.py", "--backend", "cuda"),
             PYTEST_USAGE, "ERROR: the 'cuda' backend did not start: "),
    BadInput("JAX_PLATFORMS=cuda without CUDA", "pytest", ("suites/test_mesh.py",),
             PYTEST_USAGE, "ERROR: the 'cuda' backend did not start: ", {"JAX_PLATFORMS": "cuda"}),
    BadInput("an unknown backend", "pytest", ("suites/test_mesh.py", "--backend", "nope"),
             PYTEST_USAGE, "ERROR: the 'nope' backend did not start: "),
    BadInput("both compilation cache options", "pytest",
             ("suites/test_mesh.py", "--compilation-cache", "{tmp}/cache", "--no-compilation-cache"),
             PYTEST_USAGE, "ERROR: --compilation-cache DIR and --no-compilation-cache cannot be combined"),
    BadInput("a compilation cache folder that cannot be made", "pytest",
             ("suites/test_mesh.py", "--compilation-cache", "{tmp}/a-file/cache"),
             PYTEST_USAGE, "ERROR: --compilation-cache: cannot make the compilation cache folder {tmp}/a-file/cache"),
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
    *DEVIATION_FILES,
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
    for name, text in (row.files or {}).items():
        (tmp_path / name).write_text(text)
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


def test_an_entry_naming_a_case_that_is_not_collected_is_refused_after_collection(tmp_path):
    """A case id is known only once the suites are collected, so this one error comes after the
    header: the last line names the entry by file:line with the close match, the status is 4, and
    no report is written (a documented exception to the one-line rule; serial runs only: under
    xdist the controller sees only what -k and -m leave)."""
    (tmp_path / "d.toml").write_text(deviation_file(
        test='"suites/test_sharding_invariance.py::test_sharding_never_changes_values"', params='["dynamic_slise"]'))
    done = run_pytest(["suites/", "-m", "mesh", "--deviations", str(tmp_path / "d.toml"),
                       "--report-dir", str(tmp_path / "run")], timeout=300)
    last = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()][-1]
    assert done.returncode == PYTEST_USAGE and last.startswith(
        f"ERROR: {tmp_path}/d.toml:3: deviation names a case "
        "suites/test_sharding_invariance.py::test_sharding_never_changes_values"
        "[dynamic_slise] that is not collected (did you mean 'dynamic_slice'?)"), last
    assert not (tmp_path / "run").exists()


def test_a_selection_of_nothing_writes_no_report(tmp_path):
    """-k (or -m) selecting no property runs nothing and leaves no run report behind."""
    done = run_pytest(["suites/", "-k", "no_property_is_called_this", "--report-dir", str(tmp_path / "run")],
                      timeout=300)
    assert done.returncode == 5, done.stdout[-2000:]  # pytest's NO_TESTS_COLLECTED
    assert not (tmp_path / "run").exists()


def test_output_into_a_closed_pipe_ends_quietly():
    """`python -m reports deviations | true`: the reader is gone before the first line, and the tool
    ends without a BrokenPipeError traceback."""
    done = subprocess.run(f"{sys.executable} -m reports deviations | true", shell=True, cwd=ROOT,
                          capture_output=True, text=True, env=fresh_environment({}), timeout=120)
    assert done.stderr == "", f"got stderr {done.stderr[-800:]!r}, but should be empty"
