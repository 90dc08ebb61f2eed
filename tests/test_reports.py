"""Run reports: the record format and its checker, compare and matrix (including bad input), and the
writer end to end: one merged report under pytest-xdist, and a readable incomplete report from a
run killed half-way."""

import copy
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conformance.jaxside import compat
from conformance.runner.pytest_process import run_pytest, start_pytest
from reports import compare as cmp
from reports.__main__ import main
from reports.html import run_page
from reports.record import FORMAT, FORMAT_VERSION, SCHEMA_PATH, ReportError, load, summary
from reports.schema import SchemaError, validate


def entry(test_id, outcome="passed", **extra):
    suite = test_id.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")
    base = {"id": test_id, "suite": suite, "area": "mesh", "outcome": outcome, "duration": 0.5,
            "examples": 100, "invalid_examples": 0, "random": True, "skip_kind": None, "deviation": None,
            "reason": None, "message": None, "falsifying_example": None, "repro": None}
    return {**base, **extra}


def record(tests, jax="0.10.2", status="complete", **environment):
    """A run record of these tests, its environment's defaults overridden by ``environment``."""
    tests = copy.deepcopy(tests)
    env = {"jax": jax, "jaxlib": jax, "numpy": "2.0", "hypothesis": "6.0", "python": "3.11",
           "backend": "cpu", "device_kind": "cpu", "device_count": 8, "process_count": 1,
           "profile": "default", "seed": "1", "x64": False, "started": "2026-01-01T00:00:00+00:00",
           "finished": "2026-01-01T00:01:00+00:00", "command": "pytest suites/", **environment}
    return {"format": FORMAT, "status": status, "environment": env, "summary": summary(tests),
            "tests": tests}


def save(tmp_path, name, rec):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "report.json").write_text(json.dumps(rec))
    return folder


BASE_TESTS = [entry("suites/test_a.py::test_kept"), entry("suites/test_a.py::test_breaks"),
              entry("suites/test_a.py::test_api", outcome="passed"),
              entry("suites/test_a.py::test_gone"),
              entry("suites/test_a.py::test_fixed", outcome="failed", message="got 1, but should be 2")]


def new_tests():
    tests = copy.deepcopy(BASE_TESTS)
    tests[1].update(outcome="failed", message="got 3, but should be 4 [call]", repro="import jax")
    tests[2].update(outcome="skipped", skip_kind="api-removed",
                    reason="PositionalSharding removed in JAX 0.7.0 (installed: 0.10.2)")
    tests[4].update(outcome="passed", message=None)
    del tests[3]
    return tests + [entry("suites/test_b.py::test_new")]


# --- the format -----------------------------------------------------------------------------
def test_schema_checker_accepts_a_record_and_names_what_is_wrong():
    """A well-formed record passes; a wrong type, a missing key, an unknown key and a value
    outside an enum each fail with their JSON path."""
    schema = json.loads(SCHEMA_PATH.read_text())
    good = record(BASE_TESTS)
    validate(good, schema)
    for mutate, message in [
        (lambda r: r["tests"][0].update(duration="slow"), r"\$\.tests\[0\]\.duration: expected number"),
        (lambda r: r["environment"].pop("seed"), r"missing required key 'seed'"),
        (lambda r: r["tests"][0].update(colour="red"), r"unexpected key 'colour'"),
        (lambda r: r["tests"][0].update(outcome="flaky"), r"'flaky' is not one of"),
        (lambda r: r["summary"].update(passed=-1), r"below the minimum"),
        (lambda r: r["environment"].update(device_count=True), r"expected integer"),
    ]:
        bad = copy.deepcopy(good)
        mutate(bad)
        with pytest.raises(SchemaError, match=message):
            validate(bad, schema)


def test_load_gives_clear_errors(tmp_path):
    """A missing file, a non-JSON file, another format, and a schema violation are ReportErrors
    naming the file."""
    with pytest.raises(ReportError, match="no such report"):
        load(tmp_path / "absent")
    (tmp_path / "garbage.json").write_text("{not json")
    with pytest.raises(ReportError, match="garbage.json: not JSON"):
        load(tmp_path / "garbage.json")
    (tmp_path / "other.json").write_text(json.dumps({"format": "junit"}))
    with pytest.raises(ReportError, match="not a conformance report"):
        load(tmp_path / "other.json")
    broken = record(BASE_TESTS)
    broken["tests"][0]["outcome"] = "sometimes"
    with pytest.raises(ReportError, match=r"report.json: \$\.tests\[0\]\.outcome"):
        load(save(tmp_path, "broken", broken))


def test_a_newer_report_is_read_with_a_note_not_refused(tmp_path):
    """A record of a newer format, with keys this reader does not know (top level, environment,
    tests), is read, and the note says it was written by a newer suite and which keys were skipped;
    a known key broken in it is still an error."""
    newer = record(BASE_TESTS)
    newer.update(format=f"jax-conformance-report/{FORMAT_VERSION + 1}", extra_section={"x": 1})
    newer["environment"]["accelerator_firmware"] = "1.2"
    for test in newer["tests"]:
        test["energy_joules"] = 3.5
    notes = []
    loaded = load(save(tmp_path, "newer", newer), note=notes.append)
    assert loaded["tests"][0]["id"] == BASE_TESTS[0]["id"]
    assert len(notes) == 2 and \
        f"written by a newer suite (format jax-conformance-report/{FORMAT_VERSION + 1}" in notes[0], notes
    assert notes[1].endswith("keys this reader does not know were skipped: $.environment.accelerator_firmware, "
                             "$.extra_section, $.tests[].energy_joules"), notes
    newer["tests"][0]["outcome"] = "sometimes"
    with pytest.raises(ReportError, match=r"\$\.tests\[0\]\.outcome"):
        load(save(tmp_path, "newer-broken", newer), note=notes.append)


def test_reports_of_every_earlier_format_are_read_without_a_note(tmp_path):
    """Formats /1 to /3 (before the suite's identity, the deviation files and memory) load as they
    are, with no note."""
    for version in (1, 2, 3):
        old = record(BASE_TESTS)
        old["format"] = f"jax-conformance-report/{version}"
        notes = []
        load(save(tmp_path, f"v{version}", old), note=notes.append)
        assert notes == [], f"got notes {notes} for format /{version}, but should be none"


def test_report_files_are_readable_by_others(tmp_path):
    """A report file is written with the usual file mode (0644 under umask 022), not a temporary
    file's owner-only 0600, so an artifact uploader or a colleague can read it."""
    from conformance.runner.run_folder import write_atomically

    previous = os.umask(0o022)
    try:
        write_atomically(tmp_path / "report.json", "{}")
    finally:
        os.umask(previous)
    mode = (tmp_path / "report.json").stat().st_mode & 0o777
    assert mode == 0o644, f"got mode {mode:o}, but should be 644 [write_atomically]"


# --- compare ------------------------------------------------------------------------------------
def test_compare_lists_every_kind_of_change():
    """pass -> fail is a regression; fail -> pass fixed; a skip of kind api-removed is 'API went
    away'; new and removed properties are listed."""
    changes = {c.test.split("::")[1]: c.kind for c in cmp.compare(record(BASE_TESTS), record(new_tests()))}
    assert changes == {"test_breaks": "regression", "test_fixed": "fixed", "test_api": "api-gone",
                       "test_gone": "removed", "test_new": "added"}
    assert cmp.has_regressions(cmp.compare(record(BASE_TESTS), record(new_tests())))


def test_compare_reads_the_structured_fields_not_the_reasons():
    """What a skip or an xfail means comes from the report's fields: a skip whose reason reads
    like a removed API but whose kind is "other" is only newly skipped; an xfail <-> xpass flip is a
    random known deviation's draw only when the entry says its deviation is not strict."""
    base = [entry("suites/t.py::test_s"), entry("suites/t.py::test_r", outcome="xfailed"),
            entry("suites/t.py::test_d", outcome="xfailed")]
    new = copy.deepcopy(base)
    new[0].update(outcome="skipped", skip_kind="other", reason="needs 8 devices: removed in JAX 9 (not an API)")
    new[1].update(outcome="xpassed", reason="random property",
                  deviation={"jax": ">=0.4.30", "strict": False, "reproduced_by": "suites/t.py::test_x"})
    new[2].update(outcome="xpassed", reason="random property (the words alone do not make it one)",
                  deviation={"jax": ">=0.4.30", "strict": True, "reproduced_by": None})
    changes = {c.test.split("::")[1]: c.kind for c in cmp.compare(record(base), record(new))}
    assert changes == {"test_s": "newly-skipped", "test_r": "deviation-draw", "test_d": "xpassed"}


def test_a_known_deviation_fixed_in_the_new_jax_is_not_a_regression(tmp_path, capsys):
    """A strict known deviation that passes in the new run (pytest fails it: XPASS(strict)) is listed
    as fixed in this JAX, apart from regressions: compare exits 0 for it, and the run page shows it
    in its own section, not among the failures."""
    deviation = {"jax": ">=0.6", "strict": True, "reproduced_by": None}
    base = [entry("suites/t.py::test_clamp", outcome="xfailed", deviation=deviation, random=False)]
    new = [entry("suites/t.py::test_clamp", outcome="failed", random=False, deviation={**deviation, "fixed": True},
                 message="[XPASS(strict)] FIXED IN THIS JAX (0.12.0): ...")]
    changes = cmp.compare(record(base), record(new, jax="0.12.0"))
    assert [c.kind for c in changes] == ["fixed-in-jax"] and not cmp.has_regressions(changes)
    assert main(["compare", str(save(tmp_path, "a", record(base))), str(save(tmp_path, "b", record(new)))]) == 0
    assert "FIXED IN THIS JAX" in capsys.readouterr().out
    page = run_page(record(new))
    assert "Fixed in this JAX (1)" in page and "Failures (" not in page


def test_compare_and_matrix_take_versions_of_the_tox_runs(tmp_path, monkeypatch, capsys):
    """A JAX version names its tox run folder (reports/runs/jax-<version>); matrix --all takes every
    tox run present, oldest release first."""
    import reports.__main__ as cli
    monkeypatch.setattr(cli, "RUNS", tmp_path)
    save(tmp_path, "jax-0.10.2", record(BASE_TESTS, jax="0.10.2"))
    save(tmp_path, "jax-0.9.0.1", record(BASE_TESTS, jax="0.9.0.1"))
    assert main(["compare", "0.9.0.1", "jax-0.10.2"]) == 0
    assert "no change" in capsys.readouterr().out
    assert [p.rsplit("/", 1)[-1] for p in cli.tox_runs()] == ["jax-0.9.0.1", "jax-0.10.2"]
    assert main(["matrix", "--all", "-o", str(tmp_path / "m.html")]) == 0
    assert main(["compare", "0.4.30", "0.10.2"]) == 2
    assert "no tox run folder" in capsys.readouterr().err


def test_a_regression_the_base_jax_also_fails_when_replayed_is_pre_existing():
    """After replaying on the base JAX: a regression it fails too is pre-existing (not counted as a
    regression); one it passes stays a regression, saying so."""
    from conformance.runner.release_envs import ReleaseOutcome
    changes = cmp.compare(record(BASE_TESTS), record(new_tests()))
    replayed = cmp.with_replays(changes, {"suites/test_a.py::test_breaks": ReleaseOutcome(None, "fails", "got 3")})
    assert [c.kind for c in replayed if c.test.endswith("test_breaks")] == ["pre-existing"]
    assert not cmp.has_regressions(replayed)
    kept = cmp.with_replays(changes, {"suites/test_a.py::test_breaks": ReleaseOutcome(None, "behaves", "passed")})
    (change,) = [c for c in kept if c.test.endswith("test_breaks")]
    assert change.kind == "regression" and "replayed on the base: behaves" in change.detail


def test_compare_replays_a_regression_on_the_base_interpreter(tmp_path, capsys):
    """End to end, with this interpreter as the base: a "regression" on a property this JAX gets
    wrong is pre-existing; one on a property it gets right stays a regression (exit 1)."""
    import sys
    wrong = "suites/test_named_sharding.py::test_shard_shape_rejects_spec_longer_than_rank"  # a known deviation
    right = "suites/test_named_sharding.py::test_tutorial_mesh_holds_each_device_once"
    base = record([entry(wrong, random=False), entry(right, random=False)])
    new = record([entry(wrong, "failed", random=False), entry(right, "failed", random=False)])
    args = ["compare", str(save(tmp_path, "a", base)), str(save(tmp_path, "b", new)), "--replay-with", sys.executable]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "a pre-existing bug drawn late) (1)" in out and "pass -> fail (regression) (1)" in out
    assert "replayed on the base: behaves" in out


def test_a_report_of_the_first_format_is_still_read(tmp_path, capsys):
    """A report written before the structured fields (format /1) loads and compares; its tests'
    fields are unknown."""
    old = record([{k: v for k, v in t.items() if k not in ("random", "skip_kind", "deviation")}
                  for t in BASE_TESTS])
    old["format"] = "jax-conformance-report/1"
    assert main(["compare", str(save(tmp_path, "old", old)), str(save(tmp_path, "new", record(BASE_TESTS)))]) == 0
    assert "no change" in capsys.readouterr().out


def test_compare_of_a_run_with_itself_reports_no_change(tmp_path, capsys):
    run = save(tmp_path, "run", record(BASE_TESTS))
    assert main(["compare", str(run), str(run)]) == 0
    assert "no change" in capsys.readouterr().out


def test_a_random_known_deviation_drawing_differently_is_not_a_change(tmp_path, capsys):
    """A non-strict catalogue entry that xfails in one run and xpasses in the next (it drew its
    failing case only once) is listed, but the runs still have no change."""
    reason = "known deviation (JAX >=0.4.30): wrong values (random property; reproduced by suites/t.py::test_r)"
    deviation = {"jax": ">=0.4.30", "strict": False, "reproduced_by": "suites/t.py::test_r"}
    first = [entry("suites/t.py::test_p[op]", outcome="xfailed", deviation=deviation,
                   reason="known deviation, random property (reproduced by test_r): got 1, but should be 2")]
    second = [entry("suites/t.py::test_p[op]", outcome="xpassed", reason=reason, deviation=deviation)]
    assert main(["compare", str(save(tmp_path, "a", record(first))), str(save(tmp_path, "b", record(second)))]) == 0
    out = capsys.readouterr().out
    assert "no change" in out and "drew its failing case in one run only" in out


def test_planted_regression_makes_compare_exit_non_zero(tmp_path, capsys):
    """A copy of a report with one passing property turned into a failure: exit status 1, the
    property listed under regressions, and Markdown written on request."""
    base = save(tmp_path, "base", record(BASE_TESTS))
    planted = record(copy.deepcopy(BASE_TESTS))
    planted["tests"][0].update(outcome="failed", message="got X, but should be Y [planted]")
    planted["summary"] = summary(planted["tests"])
    new = save(tmp_path, "new", planted)
    markdown = tmp_path / "diff.md"
    assert main(["compare", str(base), str(new), "--markdown", str(markdown)]) == 1
    out = capsys.readouterr().out
    assert "pass -> fail (regression) (1)" in out and "suites/test_a.py::test_kept" in out
    assert "| pass -> fail (regression) | `suites/test_a.py::test_kept` | passed | failed |" in markdown.read_text()


def test_compare_and_matrix_refuse_bad_input(tmp_path, capsys):
    """Malformed or foreign files: exit status 2 and a message naming the file."""
    good = save(tmp_path, "good", record(BASE_TESTS))
    (tmp_path / "bad.json").write_text("[1, 2")
    assert main(["compare", str(good), str(tmp_path / "bad.json")]) == 2
    assert "bad.json: not JSON" in capsys.readouterr().err
    assert main(["matrix", str(good), str(tmp_path / "nothing"), "-o", str(tmp_path / "m.html")]) == 2
    assert "no such report" in capsys.readouterr().err
    assert not (tmp_path / "m.html").exists()


# --- pages ----------------------------------------------------------------------------------------
def test_matrix_keeps_the_runs_in_order_links_them_and_colours_cells(tmp_path):
    """Columns go in the order given (0.10.2 before 0.4.30 when named so), each heading linked to
    its run page; a cell carries its outcome, colour and reason; a property absent from a run says
    so."""
    runs = [save(tmp_path, "new", record(new_tests(), jax="0.10.2")),
            save(tmp_path, "old", record(BASE_TESTS, jax="0.4.30"))]
    out = tmp_path / "matrix.html"
    assert main(["matrix", *map(str, runs), "-o", str(out)]) == 0
    page = out.read_text()
    assert page.index("jax 0.10.2") < page.index("jax 0.4.30")
    assert '<a href="new/report.html">' in page and '<a href="old/report.html">' in page
    assert 'title="PositionalSharding removed in JAX 0.7.0 (installed: 0.10.2)"' in page
    assert 'title="not in this run"' in page
    assert "http" not in page.replace("https://json-schema", "")  # no external assets


def test_run_page_shows_failures_with_their_reproduction_and_groups_skips():
    tests = new_tests()
    page = run_page(record(tests))
    assert "Failures (1)" in page and "import jax" in page
    assert "PositionalSharding removed in JAX 0.7.0" in page
    assert "did not finish" in run_page(record(tests, status="incomplete"))


# --- the writer, end to end ---------------------------------------------------------------------
def test_writer_merges_xdist_workers_into_one_report(tmp_path):
    """With -n 2, the controller writes one complete report holding every test of the run, with
    its area, outcome, duration and Hypothesis example count, valid against the schema."""
    run_dir = tmp_path / "run"
    result = run_pytest(["-n", "2", "suites/test_mesh.py", "--report-dir", str(run_dir)], timeout=600)
    assert result.returncode == 0, result.stdout[-3000:]
    report = load(run_dir)
    assert report["status"] == "complete" and report["environment"]["workers"] == 2
    ids = [t["id"] for t in report["tests"]]
    assert len(ids) == len(set(ids)) and all(i.startswith("suites/test_mesh.py::") for i in ids)
    collected = run_pytest(["--collect-only", "-q", "suites/test_mesh.py", "--report-dir", str(tmp_path / "c")])
    assert len(ids) == sum(1 for line in collected.stdout.splitlines() if "::" in line)
    assert all(t["area"] == "mesh" for t in report["tests"])
    assert any(t["examples"] for t in report["tests"])
    assert (run_dir / "report.html").exists()
    assert not [p for p in run_dir.iterdir() if p.name.startswith(".")]  # no temporary files left


def test_a_killed_run_leaves_a_readable_incomplete_report(tmp_path):
    """SIGKILL half-way through: report.json still loads, says incomplete, and holds the tests
    that finished."""
    run_dir = tmp_path / "run"
    process = start_pytest(["suites/test_collectives.py", "--report-dir", str(run_dir)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if (run_dir / "report.json").exists() and load(run_dir)["summary"]["total"] >= 2:
                break
            time.sleep(0.2)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    report = load(run_dir)
    assert report["status"] == "incomplete" and report["environment"]["finished"] is None
    assert report["summary"]["total"] >= 2


def test_a_failure_keeps_its_finding_falsifying_example_and_reproduction(tmp_path):
    """Under a planted fault, the failing property's entry holds the one-line finding, Hypothesis'
    falsifying example and the stand-alone reproduction script."""
    run_dir = tmp_path / "run"
    result = run_pytest(["-p", "tests.faults", "--plant-fault", "pmin-is-pmax", "suites/test_collectives.py",
                         "-k", "test_collective_under_pmap and pmin", "--report-dir", str(run_dir)], timeout=600)
    assert result.returncode == 1, result.stdout[-3000:]
    (failed,) = [t for t in load(run_dir)["tests"] if t["outcome"] == "failed"]
    assert "but should be" in failed["message"]
    assert "Falsifying example" in failed["falsifying_example"] or "Failing test case" in failed["falsifying_example"]
    assert failed["repro"].startswith("import os") and "lax.pmin" in failed["repro"]


def test_a_failure_leads_with_its_finding_and_ends_with_its_rerun_and_verdict(tmp_path):
    """Under a planted fault in a catalogue operation: the -ra line reads the finding (not our
    exception's module path), the failure ends with the command that reruns that one property with
    its seed (also in the report), no Hypothesis explanation lines, and the script ends with a
    verdict: run without the fault it exits 0, as JAX behaves there."""
    run_dir = tmp_path / "run"
    test = "suites/test_sharding_invariance.py::test_sharding_never_changes_values[dynamic_slice]"
    result = run_pytest(["-p", "tests.faults", "--plant-fault", "dynamic-slice-plus-one", test, "-ra",
                         "--report-dir", str(run_dir)], env={"COLUMNS": "400"}, timeout=600)
    assert result.returncode == 1, result.stdout[-3000:]
    summary = [line for line in result.stdout.splitlines() if line.startswith(f"FAILED {test}")]
    assert summary and " - unsharded result vs numpy differs" in summary[0], result.stdout[-3000:]
    assert "Explanation:" not in result.stdout and "ConformanceFailure: " not in summary[0]
    (failed,) = [t for t in load(run_dir)["tests"] if t["outcome"] == "failed"]
    assert failed["rerun"].startswith(f"pytest '{test}' --hypothesis-seed=") and "--devices 8" in failed["rerun"]
    assert failed["rerun"] in result.stdout.split("rerun this property")[1]
    script = subprocess.run([sys.executable, "-c", failed["repro"]], capture_output=True, text=True, timeout=300,
                            env={k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_PLATFORMS")})
    assert script.returncode == 0 and "expected:" in script.stdout, (script.stdout, script.stderr[-2000:])


def test_bench_table_sums_suites_and_rates_examples():
    """`python -m reports table`: per suite the properties, seconds, examples, examples per second,
    programs asked for, compiled, their seconds, served by the cache and asked for twice, with totals
    and the slowest properties."""
    from reports.bench import suite_rows, table
    tests = [entry("suites/test_a.py::test_one", duration=2.0, examples=100, programs=12, compilations=10,
                   compile_seconds=1.0, cache_served=2, duplicate_programs=2),
             entry("suites/test_a.py::test_two", duration=1.0, examples=50, programs=20, compilations=20,
                   compile_seconds=0.5),
             entry("suites/test_b.py::test_skipped", outcome="skipped", duration=0.0, examples=None)]
    rows = suite_rows(record(tests))
    assert rows["test_a"] == {"properties": 2, "ran": 2, "seconds": 3.0, "examples": 150, "programs": 32,
                              "compilations": 30, "compile_seconds": 1.5, "served": 2, "duplicates": 2}
    assert rows["test_b"]["ran"] == 0
    text = table(record(tests))
    line = next(line for line in text.splitlines() if line.startswith("test_a "))
    assert line.split() == ["test_a", "2", "2", "3.0", "150", "50", "32", "30", "1.5", "2", "2"]
    assert "slowest 3 properties:" in text and text.index("test_one") < text.index("test_two")


def test_bench_growth_table_compares_device_counts():
    """The scale table: seconds per suite at each device count, and the growth from the first."""
    from reports.bench import growth_table
    runs = {}
    for n, seconds in ((8, 2.0), (64, 5.0)):
        runs[n] = record([entry("suites/test_a.py::test_one", duration=seconds)])
        runs[n]["wall_seconds"] = seconds + 1
    text = growth_table(runs)
    assert next(line for line in text.splitlines() if line.startswith("test_a")).split() == \
        ["test_a", "2.0", "5.0", "x2.5"]
    assert "(device count grows x8 from 8 to 64)" in text


def test_runs_record_compilations_per_property(tmp_path):
    """A suite run's report counts each property's JAX compilations (jax.monitoring events)."""
    run_dir = tmp_path / "run"
    result = run_pytest(["suites/test_device_put.py", "-k", "test_jit_in_and_out_shardings",
                         "--report-dir", str(run_dir)])
    assert result.returncode == 0, result.stdout[-2000:]
    test = next(t for t in load(run_dir)["tests"] if "test_jit_in_and_out_shardings" in t["id"])
    assert test["compilations"] >= 1 and test["compile_seconds"] > 0


def test_a_run_records_its_suite_deviation_files_and_memory_and_junit_reads_plainly(tmp_path):
    """A run's report names the suite's version and commit, each deviation file read with its
    SHA-256, and the processes' peak resident memory (per test and overall); pytest's --junitxml
    output carries each property's area and known deviation as plain text, not Python reprs."""
    import hashlib
    import xml.etree.ElementTree as ET

    from conformance.runner.deviations import DEVIATIONS_FILE
    from conformance.runner.run_folder import ROOT

    run_dir, junit = tmp_path / "run", tmp_path / "junit.xml"
    result = run_pytest(["suites/test_mesh.py", "--report-dir", str(run_dir), "--junitxml", str(junit)])
    assert result.returncode == 0, result.stdout[-2000:]
    report = load(run_dir)
    env = report["environment"]
    assert report["format"] == FORMAT
    assert env["suite"]["version"] and (env["suite"]["commit"] is None) == (not (ROOT / ".git").exists()), env["suite"]
    (suite_file,) = env["deviation_files"]
    assert suite_file["path"] == "suites/known_deviations.toml" and suite_file["origin"] == "suite"
    assert suite_file["sha256"] == hashlib.sha256(DEVIATIONS_FILE.read_bytes()).hexdigest()
    assert suite_file["in_effect"] == env["known_deviations"]
    ran = [t for t in report["tests"] if t["outcome"] != "skipped"]
    assert env["peak_rss_mib"] > 0 and all(0 < t["peak_rss_mib"] <= env["peak_rss_mib"] for t in ran), env

    cases = list(ET.parse(junit).iter("testcase"))
    assert cases
    for case in cases:
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert properties.get("area") == "mesh", \
            f"got properties {properties}, but should name the area mesh [{case.get('name')}]"
        assert not [v for v in properties.values() if v.startswith(("{", "(", "["))], properties
    deviated = [t["id"].split("::")[1] for t in report["tests"] if t["deviation"]]
    for case in cases:
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        if case.get("name") in deviated:
            assert properties["known_deviation"].startswith("known deviation (JAX "), properties


def test_a_run_records_why_a_property_skipped_and_its_known_deviation(tmp_path):
    """Each test's entry says whether it is random (Hypothesis-driven), why it skipped (here
    "api-removed" where PositionalSharding is gone) and the known deviation in effect for it."""
    run_dir = tmp_path / "run"
    result = run_pytest(["suites/test_positional_sharding.py", "-k", "rank_zero or reshape_and_replicate",
                         "--report-dir", str(run_dir)], timeout=600)
    assert result.returncode == 0, result.stdout[-3000:]
    tests = {t["id"].split("::")[1]: t for t in load(run_dir)["tests"]}
    random_test = tests["test_reshape_and_replicate_give_the_models_sets"]
    deterministic = tests["test_replicate_to_rank_zero"]
    assert random_test["random"] is True and deterministic["random"] is False
    if compat.FEATURES["PositionalSharding"].available:
        assert random_test["outcome"] == "passed" and random_test["skip_kind"] is None
        assert deterministic["outcome"] == "xfailed" and deterministic["deviation"]["strict"] is True
    else:
        assert {t["outcome"] for t in tests.values()} == {"skipped"}
        assert {t["skip_kind"] for t in tests.values()} == {"api-removed"}


def test_a_strict_known_deviation_that_passes_is_reported_fixed(tmp_path):
    """A run with a strict entry for a property that passes: pytest fails it (the list must be
    updated), its message says it is fixed in this JAX and to narrow the range, and the report
    records the deviation as fixed."""
    test = "suites/test_named_sharding.py::test_tutorial_mesh_holds_each_device_once"
    deviations = tmp_path / "deviations.toml"
    deviations.write_text(f'format = 2\n[[deviation]]\ntest = "{test}"\njax = ">=0.1"\n'
                          'reason = "planted: passes everywhere"\n'
                          'symptom = { raises = "AssertionError" }\n')
    run_dir = tmp_path / "run"
    result = run_pytest([test, "--known-deviations", str(deviations), "--report-dir", str(run_dir)])
    assert result.returncode == 1, result.stdout[-3000:]
    assert "FIXED IN THIS JAX" in result.stdout and "Narrow the range" in result.stdout
    (entry_,) = load(run_dir)["tests"]
    assert entry_["outcome"] == "failed" and entry_["deviation"]["fixed"] is True
    assert main(["compare", str(run_dir), str(run_dir)]) == 0


def test_a_known_deviation_file_that_does_not_exist_is_a_usage_error(tmp_path):
    result = run_pytest(["suites/test_named_sharding.py", "--co", "--known-deviations", str(tmp_path / "no.toml")])
    assert result.returncode == 4 and "no such file" in result.stdout + result.stderr


def test_deviations_table():
    """`python -m reports deviations` lists every entry with kind, range and upstream, and counts the
    root causes the bugs come from (their reports are `python -m reports bugs`, tests/test_bugs.py)."""
    from conformance.runner.deviations import Deviation
    from reports import deviations as dev
    reproduction = "suites/test_sharding_invariance_reproductions.py::test_take_clip_of_a_sharded_array"
    entries = [Deviation(reproduction, "<0.4.38", "clip ignored", kind="bug", upstream="none found", cause="take_clip"),
               Deviation("suites/t.py::test_p[take_clip]", "<0.4.38", "clip ignored", strict=False,
                         reproduced_by=reproduction, kind="bug", upstream="none found", cause="take_clip"),
               Deviation("suites/t.py::test_q", ">=0.7", "known", kind="bug", upstream="https://github.com/x/y/issues/1",
                         cause="other"),
               Deviation("suites/t.py::test_r", ">=0.7", "our reading", kind="unspecified", upstream="none found")]
    table = dev.table(entries)
    assert "4 entries: 3 bug, 1 unspecified; the bugs come from 2 root causes (BUGS.md)" in table
    assert "test_p[take_clip] (random)" in table and "https://github.com/x/y/issues/1" in table


def test_a_multi_controller_run_says_how_many_properties_ran_on_every_process():
    """The terminal's line for a run of several processes counts the properties that ran, by
    outcome, and the skipped ones: those the readiness table holds back, and the others."""
    from reports.plugin import multi_process_summary
    tests = [{"outcome": "passed"}, {"outcome": "passed"}, {"outcome": "xfailed"},
             {"outcome": "skipped", "reason": "not yet run multi-controller: pmap maps each process's rows"},
             {"outcome": "skipped", "reason": "PositionalSharding removed in JAX 0.7.0"}]
    line = multi_process_summary(tests, 2)
    assert line.startswith("multi-controller, 2 processes: 3 properties ran on every process (2 passed, 1 xfailed); "
                           "2 skipped: 1 not yet run multi-controller"), line
    assert "1 for other reasons" in line
