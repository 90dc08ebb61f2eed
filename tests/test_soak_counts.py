"""The soak keeps its counts: the examples each known deviation excused and the refusals accepted,
read from every round's run report, are summed over the rounds (per entry, per kind of refusal),
listed in the soak's summary, and put in the soak's own run-report entry (``soak.record_counts``)
in the form a random property's are, which the run report's schema reads."""

import json
import subprocess
import sys
from pathlib import Path

from conformance.runner import soak, state
from conformance.runner.pytest_process import fresh_environment
from reports.record import SCHEMA_PATH, load
from reports.schema import validate

ROOT = Path(__file__).resolve().parents[1]
ENTRY_A = {"entry": "test_p (JAX >=0.4.30; wrong values)", "where": "suites/known_deviations.toml:10",
           "jax": ">=0.4.30", "kind": "bug", "upstream": None, "trigger": "partially_replicated_join",
           "symptom": "wrong values"}
ENTRY_B = dict(ENTRY_A, entry="test_p (JAX >=0.4.30; raises ValueError)", where="suites/known_deviations.toml:20",
               trigger="clamped_start_with_a_cut_output", symptom="raises ValueError")
REFUSAL_1, REFUSAL_2 = "program (a): as our sharding-rule model says", "program (b): no rule in our model"


def played_rounds(reports, clock):
    """A stand-in for pytest_process.run_pytest that plays ``reports`` in turn, a minute each on
    ``clock`` (a one-item list): "crash" (dies of SIGABRT, no report), or a property entry's fields."""
    played = iter(reports)

    def run_pytest(args, *, env, timeout):
        clock[0] += 60
        fields = next(played)
        if fields == "crash":
            return subprocess.CompletedProcess(args, -6, "", "F external/xla/...: Check failed: sliced.has_value()")
        report = Path(args[args.index("--report-dir") + 1])
        report.mkdir(parents=True)
        entry = {"id": args[0], "examples": 100, "outcome": "passed", "message": None, "repro": None, **fields}
        report.joinpath("report.json").write_text(json.dumps({"tests": [entry]}))
        return subprocess.CompletedProcess(args, 1 if entry["outcome"] == "failed" else 0, "", "")
    return run_pytest


def counted(entry: dict, n: int) -> dict:
    return dict(entry, excused=n)


def test_the_soak_sums_its_rounds_excused_examples_and_accepted_refusals(monkeypatch):
    """Per entry (by file:line and label) and per kind of refusal, the soak holds the sum over the
    rounds that reported them (a failed round's too; a crashed round has no report); the summary
    lists both, and record_counts hands them to the soak test's run-report entry in the schema's form."""
    clock = [0]
    rounds = [{"excused": [counted(ENTRY_A, 2)], "refusals": [{"refusal": REFUSAL_1, "examples": 3}]},
              {"outcome": "failed", "message": "v0 differs", "repro": "    program A",
               "excused": [counted(ENTRY_B, 4), counted(ENTRY_A, 1)],
               "refusals": [{"refusal": REFUSAL_1, "examples": 1}, {"refusal": REFUSAL_2, "examples": 5}]},
              "crash",
              {"excused": None, "refusals": None}]
    monkeypatch.setattr(soak, "run_pytest", played_rounds(rounds, clock))
    monkeypatch.setattr(soak.time, "monotonic", lambda: clock[0])
    result = soak.run("suites/test_programs.py::p", minutes=5, first_seed=10)
    assert result.rounds == 4
    assert result.excused_report() == [counted(ENTRY_A, 3), counted(ENTRY_B, 4)]
    assert result.refusals_report() == [{"refusal": REFUSAL_1, "examples": 4}, {"refusal": REFUSAL_2, "examples": 5}]
    lines = soak.summary(result).splitlines()
    assert lines[0].startswith("2 distinct failure(s) in 4 round(s), 300 programs")
    assert "examples excused by known deviations, over the rounds (7):" in lines
    assert f"      3  {ENTRY_A['entry']} [{ENTRY_A['where']}]" in lines
    assert f"      5  {REFUSAL_2}" in lines
    recorded = []
    soak.record_counts(result, lambda name, value: recorded.append((name, value)))
    assert recorded == [(state.EXCUSED, result.excused_report()), (state.REFUSALS, result.refusals_report())]
    fields = json.loads(SCHEMA_PATH.read_text())["properties"]["tests"]["items"]["properties"]
    validate(result.excused_report(), fields["excused"])
    validate(result.refusals_report(), fields["refusals"])


def test_a_soak_without_counts_records_none():
    recorded = []
    soak.record_counts(soak.Soak(rounds=3), lambda name, value: recorded.append((name, value)))
    assert recorded == [] and "excused" not in soak.summary(soak.Soak(rounds=3))


PLANTED_SOAK = '''
import pytest
from conformance.runner import soak

pytestmark = pytest.mark.programs

def test_soak(record_property):
    result = soak.Soak(rounds=2)
    result.add_counts({{"excused": {excused}, "refusals": {refusals}}})
    result.add_counts({{"excused": {excused}, "refusals": {refusals}}})
    soak.record_counts(result, record_property)
'''


def test_the_soak_tests_run_report_carries_the_sums(tmp_path):
    """End to end: a soak test that records its counts (as test_generated_programs_soak does) has
    them, summed, in its run-report entry, which the report's reader accepts."""
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "test_planted_soak.py").write_text(PLANTED_SOAK.format(
        excused=[counted(ENTRY_A, 2)], refusals=[{"refusal": REFUSAL_1, "examples": 3}]))
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    (tmp_path / "none.toml").write_text("format = 2\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "suites/test_planted_soak.py", "--known-deviations", "none.toml", "--report-dir", "run"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=fresh_environment({"PYTHONPATH": str(ROOT)}))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    entry = next(t for t in load(tmp_path / "run", note=lambda _: None)["tests"] if t["id"].endswith("test_soak"))
    assert entry["excused"] == [counted(ENTRY_A, 4)], entry
    assert entry["refusals"] == [{"refusal": REFUSAL_1, "examples": 6}], entry
