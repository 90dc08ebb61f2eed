"""The conventions a machine checks: ruff (configured in pyproject.toml, run by CI) finds nothing,
and every ``noqa`` marker names its codes and says why (``# noqa: CODE - why``): a marker without
a reason hides a finding without saying it was weighed."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"#\s*noqa\b(?P<rest>.*)$")
REASONED = re.compile(r":\s*[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*\s+-\s+\S")


def tracked_python_files():
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / name for name in listed.stdout.split()]


def unreasoned_markers(text: str):
    """The line numbers of ``noqa`` markers in ``text``'s comments that do not read
    ``# noqa: CODE - why``."""
    comments = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    return [t.start[0] for t in comments if (m := MARKER.search(t.string)) and not REASONED.match(m["rest"])]


def test_the_marker_form_against_hand_written_lines():
    assert unreasoned_markers("x = 1  # noqa: F841 - kept for the script\n") == []
    assert unreasoned_markers("x = 1  # noqa: F841, E501 - both\n") == []
    assert unreasoned_markers("x = 1  # noqa: F841\ny = 2  # noqa\nz = 3  # noqa: F841 -\n") == [1, 2, 3]


def test_every_noqa_marker_says_why():
    found = {str(p.relative_to(ROOT)): lines for p in tracked_python_files()
             if (lines := unreasoned_markers(p.read_text(encoding="utf-8")))}
    assert found == {}, f"got noqa markers without a reason at {found}, but each should read '# noqa: CODE - why'"


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed (python -m pip install '.[lint]')")
def test_ruff_finds_nothing():
    done = subprocess.run(["ruff", "check", "--quiet", "."], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, f"got ruff findings:\n{done.stdout}{done.stderr}\nbut should be none"


def test_the_deviation_file_leaves_its_ranges_to_the_measurement():
    """No comment of suites/known_deviations.toml restates a failing range ("fails on >=0.6.0"): the
    range is the entry's ``jax``, bisected into known_deviations.measured.json (tests/test_releases.py
    holds the two together); a restated one drifts from both."""
    text = (ROOT / "suites" / "known_deviations.toml").read_text(encoding="utf-8")
    comments = " ".join(line[1:].strip() for line in text.splitlines() if line.startswith("#"))
    restated = re.findall(r"\bfails? on\s+(?:[<>=!]=?|~=)\d+(?:\.\w+)*", comments)
    assert restated == [], f"got ranges restated in comments: {restated}, but should be none"
