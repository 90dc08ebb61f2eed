"""The README tells the truth: its example header is what the current code prints (for the example's
versions, with the known deviations of its JAX), its marker list is the suite areas, and every
package the code imports is declared in pyproject.toml."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

from packaging.specifiers import SpecifierSet

from conformance.runner import areas
from conformance.runner.deviations import DEVIATIONS_FILE, DeviationsInEffect, read_deviation_file

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()

# The example run the README shows: JAX 0.10.2 on 8 forced CPU devices, the default profile.
EXAMPLE = dict(jax="0.10.2", jaxlib="0.10.2", numpy="2.4.6", hypothesis="6.170.17", backend="cpu",
               platforms_env="cpu", device_count=8, device_kind="cpu", devices_source="forced by default",
               processes=1, x64=False, profile="default", max_examples=100, seed="217191438",
               compilation_cache="/home/you/.cache/jax-conformance/compilation-cache/jax-0.10.2-jaxlib-0.10.2-cpu "
                                 "(default)", last_words="/tmp/conformance-last-words-k2a9x7qe")

# Import names that are not the distribution's name.
DISTRIBUTION_OF = {"xdist": "pytest-xdist"}


def example_header() -> list:
    from conformance.runner.session import header_lines  # (imports JAX)

    deviations = DeviationsInEffect.select(
        [read_deviation_file(DEVIATIONS_FILE, "suite", "--known-deviations")],
        lambda spec: EXAMPLE["jax"] in SpecifierSet(spec), "cpu", "cpu", ROOT)
    return header_lines(**EXAMPLE, deviations=deviations.header())


def test_the_readme_header_example_is_what_the_code_prints():
    """The README's example header equals the header the current code prints for the example's
    environment, its known-deviation count included."""
    expected = "\n".join(example_header())
    assert f"```\n{expected}\n```" in README, (
        f"the README's example header should read, as the code prints it now:\n{expected}")


def test_the_readme_lists_every_area_marker():
    """The README's "one area" row names every suite-area marker, and only those."""
    row = next(line for line in README.splitlines() if line.startswith("| one area |"))
    named = re.findall(r"`([a-z_]+)`", row.split("markers:", 1)[1])
    assert named == list(areas.AREAS), f"got {named}, but should be {list(areas.AREAS)} [README one-area row]"


def imported_distributions() -> set:
    """The third-party top-level modules imported by the suite's code (not its self-tests)."""
    ours = {"conformance", "reports", "strategies", "suites", "tests", "conftest"}
    found = set()
    for package in ("conformance", "reports", "strategies", "suites"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                found |= {n.split(".")[0] for n in names}
    return {n for n in found if n not in sys.stdlib_module_names and n not in ours and not n.startswith("_")}


def test_every_imported_package_is_declared():
    """Every package the suite's code imports is a dependency in pyproject.toml (installing the
    project brings all it needs)."""
    declared = {re.split(r"[<>=!~ ;\[]", d)[0].lower()
                for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    missing = sorted(DISTRIBUTION_OF.get(n, n) for n in imported_distributions()
                     if DISTRIBUTION_OF.get(n, n).lower() not in declared)
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_ci_runs_the_readmes_set_up_command_as_written():
    """The README opens with the set-up command and `pytest suites/`; .ci/run runs that set-up
    command as written (with --quiet), so a fresh machine that passes CI can follow the README."""
    block = README.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    set_up, run = (line.split("#", 1)[0].strip() for line in block[:2])
    assert run == "pytest suites/", f"got {run!r}, but should be 'pytest suites/' [README's second command]"
    assert "python3 -m venv" in set_up and "pip install ." in set_up, f"got {set_up!r} [README's set-up command]"
    ci = (ROOT / ".ci" / "run").read_text()
    assert set_up.replace("pip install .", "pip install --quiet .") in ci, (
        f"got no {set_up!r} in .ci/run, but CI should run the README's set-up command [.ci/run]")
