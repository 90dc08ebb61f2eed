"""The supported JAX releases (one list), what is generated from it (tox.ini), and the all-release
tooling's pure parts: choosing releases and turning per-release outcomes into a deviation range."""

import configparser
import json

import pytest
from packaging.specifiers import SpecifierSet

from conformance.runner import release_envs as envs
from conformance.runner import releases as rel
from conformance.checking.symptoms import Symptom
from conformance.runner.deviations import DEVIATIONS_FILE, Deviation, load_deviations
from conformance.runner.devices import UsageError


def test_the_list_holds_every_release_from_0_4_30_to_the_newest_once_oldest_first():
    names = [r.jax for r in rel.RELEASES]
    assert len(names) == 34 and names[0] == "0.4.30" and rel.newest().jax == "0.12.0.1"
    assert "0.4.32" not in names  # yanked
    assert {r.jax: r.jaxlib for r in rel.RELEASES if r.jax != r.jaxlib} == {"0.4.37": "0.4.36", "0.5.2": "0.5.1"}
    assert {r.python for r in rel.RELEASES if r.jax.startswith(("0.11", "0.12"))} == {"3.13"}
    assert {r.python for r in rel.RELEASES if not r.jax.startswith(("0.11", "0.12"))} == {"3.11"}


def test_tox_ini_is_generated_from_the_list():
    """tox.ini is what `python -m conformance.runner.releases tox` writes: regenerate it after
    editing releases.toml."""
    assert rel.TOX_INI.read_text() == rel.tox_ini(), "tox.ini is stale: python -m conformance.runner.releases tox"


def test_tox_environments_name_their_python_pins_and_pass_extra_arguments_to_the_suites_only():
    ini = configparser.ConfigParser(interpolation=None)
    ini.read_string(rel.tox_ini())
    assert ini["tox"]["envlist"].split(", ") == [r.env for r in rel.RELEASES] + ["matrix"]
    for r in rel.RELEASES:
        env = ini[f"testenv:{r.env}"]
        assert env["basepython"] == f"python{r.python}"
        assert env["deps"].split() == [".", f"jax=={r.jax}", f"jaxlib=={r.jaxlib}"]
    commands = ini["testenv"]["commands"].strip().splitlines()
    assert commands[0].strip() == "pytest tests/" and "{posargs}" in commands[1]
    for name in ("compare", "matrix"):  # they read reports: no JAX installed
        assert ini[f"testenv:{name}"]["skip_install"] == "true" and \
            ini[f"testenv:{name}"]["deps"].split() == ["packaging", "pytest"]
        assert "{posargs" in ini[f"testenv:{name}"]["commands"]


def test_a_release_is_named_by_version_or_environment_and_an_unknown_one_is_refused():
    assert rel.release("jax-0.9.0.1") == rel.release("0.9.0.1")
    with pytest.raises(UsageError, match="not a supported release"):
        rel.release("0.4.32")


def test_releases_are_selected_by_version_and_inclusive_range():
    chosen = [r.jax for r in envs.select(["0.5.2..0.6.0", "0.4.30"])]
    assert chosen == ["0.4.30", "0.5.2", "0.5.3", "0.6.0"]
    assert [r.jax for r in envs.select(["0.12.0.."])] == ["0.12.0", "0.12.0.1"]
    assert len(envs.select([])) == len(rel.RELEASES)


def outcomes(verdicts):
    return [envs.ReleaseOutcome(rel.release(v), verdict, "") for v, verdict in verdicts]


@pytest.mark.parametrize("verdicts, ranges", [
    ([("0.4.30", "behaves"), ("0.6.0", "fails"), ("0.6.1", "fails"), ("0.6.2", "behaves")], [">=0.6.0,<0.6.2"]),
    ([("0.4.30", "fails"), ("0.4.31", "behaves"), ("0.10.2", "fails")], ["==0.4.30", ">=0.10.2"]),
    ([("0.4.30", "skipped"), ("0.5.0", "fails"), ("0.6.0", "skipped"), ("0.7.0", "behaves")], [">=0.5.0,<0.7.0"]),
    ([("0.4.30", "behaves"), ("0.10.2", "behaves")], []),
])
def test_failing_releases_become_deviation_ranges(verdicts, ranges):
    """Consecutive failing releases form one range, ending before the next measured release that
    behaves; a skip is no evidence either way."""
    assert envs.failing_ranges(outcomes(verdicts)) == ranges


def test_scripts_run_on_cpu_with_eight_devices_unless_told_otherwise():
    assert envs.script_environment({})["XLA_FLAGS"] == "--xla_force_host_platform_device_count=8"
    chosen = {"XLA_FLAGS": "--xla_force_host_platform_device_count=2", "JAX_PLATFORMS": "cuda"}
    assert envs.script_environment(chosen) == chosen


def releases_in(jax_range: str) -> set:
    return {r.jax for r in rel.RELEASES if SpecifierSet(jax_range).contains(r.jax, prereleases=True)}


def cases_of(d) -> set:
    """The test ids an entry covers: its parametrized cases, or its test."""
    return {f"{d.test}[{p}]" for p in d.params} if d.params else {d.test}


def shows_alike(a, b) -> bool:
    """Whether two entries' symptoms are of one kind: an exception of a class in common, or the
    same kind of wrong outcome."""
    if a.symptom.raises or b.symptom.raises:
        return bool(set(a.symptom.raises) & set(b.symptom.raises))
    return a.symptom.wrong == b.symptom.wrong


def test_a_random_propertys_entry_covers_the_releases_of_its_reproduction():
    """A random property's (non-strict) entries that name one reproduction, cover a case in common
    and show alike (split by symptom, as the zero-size and argsort entries are, or not) hold on the
    releases where that reproduction's strict entries of that kind of symptom hold (all of them,
    for a form the reproduction shows otherwise): the reproduction is what bisects the range. Each
    single entry holds within those releases."""
    deviations = load_deviations(DEVIATIONS_FILE)
    for d in deviations:
        if d.strict:
            continue
        strict = [e for e in deviations if e.strict and e.test == d.reproduced_by]
        assert strict, f"{d.where}: {d.reproduced_by} has no strict entry"
        alike = [e for e in strict if shows_alike(e, d)] or strict  # (a form the reproduction shows otherwise)
        reproduction = set().union(*(releases_in(e.jax) for e in alike))
        assert releases_in(d.jax) <= reproduction, (d.where, d.jax, d.reproduced_by)
        kind = shows_alike if alike is not strict else (lambda e, d: True)
        together = set().union(*(releases_in(e.jax) for e in deviations if not e.strict and kind(e, d)
                                 and cases_of(e) & cases_of(d) and e.reproduced_by == d.reproduced_by))
        assert together == reproduction, (
            f"{d.test} (jax {d.jax!r}) should hold on the releases of {d.reproduced_by}: "
            f"only the entries: {sorted(together - reproduction)}, "
            f"only the reproduction: {sorted(reproduction - together)}")


def measured_parts() -> list:
    """The bisection's parts: (process count, its verdicts) for one process and, where kept, for
    several."""
    measured = json.loads(envs.measured_file(DEVIATIONS_FILE).read_text())
    several = measured.get(envs.SEVERAL)
    return [(1, measured)] + ([(several["processes"], several)] if several else [])


def test_every_strict_entry_covers_exactly_the_releases_measured_failing():
    """The ranges are bisected, not guessed: over the releases measured (known_deviations.measured.json,
    written by `python -m conformance.runner.release_envs deviations --record`), the entries of a
    test that apply to one process cover exactly the releases where it fails (a release where it
    skips says nothing); and over the multi-process bisection (`deviations --processes 2 --record`),
    those applying to several processes, for every test with an entry for multi-controller runs only."""
    deviations = load_deviations(DEVIATIONS_FILE)
    parts = dict(measured_parts())
    assert len(parts) == 2 or not any(d.processes == "several" for d in deviations), \
        "entries for multi-controller runs were never bisected: run release_envs deviations --processes 2 --record"
    for processes, measured in parts.items():
        entries = envs.applying(deviations, processes)
        for test in envs.tests_to_bisect(deviations, processes):
            assert test in measured["tests"], (f"{test} was never bisected with {processes} process(es): run "
                                               f"release_envs deviations --processes {processes} --record")
            by_release = measured["tests"][test]
            failing = {v for v, verdict in by_release.items() if verdict == "fails"}
            covered = {v for d in entries if d.strict and d.test == test for v in releases_in(d.jax)
                       if by_release.get(v, "skipped") != "skipped"}
            assert covered == failing, (f"{test} ({processes} process(es)): the entries cover "
                                        f"{sorted(covered - failing)} where it passes, and miss "
                                        f"{sorted(failing - covered)} where it fails")


def test_every_strict_entry_shows_its_symptom_where_it_was_measured_failing():
    """The symptoms are measured too: on every release an entry claims, its test failed the way the
    entry's symptom says (or the way another entry of that test claiming the release says), in
    each bisection (one process, several)."""
    for processes, measured in measured_parts():
        assert "symptom_differs" in measured, "re-record the measure (release_envs deviations --record)"
        assert measured["symptom_differs"] == {}, processes


def test_a_multi_process_bisection_measures_only_the_entries_for_several_processes_and_keeps_the_rest():
    """deviations --processes 2 measures the tests of the strict entries for multi-controller runs,
    with --processes 2 --devices 4, judges only the entries applying to several processes, and
    replaces only the several_processes part of the data file (a one-process bisection keeps it)."""
    one = fake_entry(">=0.5.0", {"raises": "ValueError", "match": "x"})
    several = Deviation(test="suites/test_x.py::test_z", jax=">=0.6.0", reason="r", strict=True,
                        symptom=Symptom.parse({"raises": "ValueError", "match": "y"}), processes="several")
    assert envs.tests_to_bisect([one, several], 2) == ["suites/test_x.py::test_z"]
    assert envs.tests_to_bisect([one, several], 1) == ["suites/test_x.py::test_y"]
    assert envs.process_arguments(2) == ["--processes", "2", "--devices", "4"] and envs.process_arguments(1) == []
    measured = {"releases": ["0.6.0"], "processes": 2,
                "tests": {"suites/test_x.py::test_z": {"ranges": [">=0.6.0"],
                                                       "by_release": {"0.6.0": ["fails", "", None]}}}}
    previous = {"tests": {"suites/test_x.py::test_y": {"0.6.0": "fails"}}, "symptom_differs": {}}
    record = envs.recorded(previous, measured, [one, several])
    assert record["tests"] == previous["tests"]
    assert record[envs.SEVERAL]["tests"] == {"suites/test_x.py::test_z": {"0.6.0": "fails"}}
    assert "--processes 2" in record[envs.SEVERAL]["how"]
    assert envs.recorded(record, {**measured, "processes": 1, "tests": {}}, [one])[envs.SEVERAL] == record[envs.SEVERAL]
    assert "with 2 processes" in envs.deviation_table(measured, [one, several]).splitlines()[0]
    refused = envs.test_outcome(None, [], "not launching 2 processes: multi-process collectives on CPU need JAX 0.4.38")
    assert refused.verdict == "skipped"  # (a release without several processes on CPU says nothing)
    assert envs.test_outcome(None, [], "exit 1: Fatal Python error").verdict == "fails"


def fake_entry(jax: str, symptom: dict):
    return Deviation(test="suites/test_x.py::test_y", jax=jax, reason="r", strict=True,
                     symptom=Symptom.parse(symptom))


def test_a_failure_of_another_kind_on_a_claimed_release_is_a_symptom_difference():
    """symptom_differs names the releases an entry claims where its test failed another way (or
    where no failure was described), and not a release where a sibling entry's symptom holds."""
    layout = fake_entry(">=0.6.0,<0.8.2", {"wrong": "layout", "at": "^y sharding"})
    raises = fake_entry(">=0.8.2", {"raises": "ShardingTypeError", "match": "^Arguments"})
    seen_layout = {"raised": "", "message": "differs", "check": "y sharding devices_indices_map", "shows": "layout"}
    seen_raise = {"raised": "ShardingTypeError", "message": "Arguments to sort", "check": "y", "shows": "raised"}
    result = {"by_release": {"0.6.0": ["fails", "", seen_layout], "0.8.1": ["fails", "", seen_raise],
                             "0.8.2": ["fails", "", seen_raise], "0.9.0": ["fails", "crashed", None],
                             "0.9.2": ["behaves", "passed", None]}}
    assert list(envs.symptom_differs(layout, [layout, raises], result)) == ["0.8.1"]
    assert list(envs.symptom_differs(raises, [layout, raises], result)) == ["0.9.0"]
    assert "no failure the symptom can read" in envs.symptom_differs(raises, [raises], result)["0.9.0"]


def test_every_entry_says_what_it_is_and_where_upstream_stands():
    for d in load_deviations(DEVIATIONS_FILE):
        assert d.kind in ("bug", "unspecified"), d.test
        assert d.upstream == "none found" or d.upstream.startswith("https://github.com/"), d.test


def test_the_bisection_judges_a_bare_assert_by_the_frame_its_report_records():
    """A failure's report records the innermost frame that raised it (format /9), and the
    bisection's symptom check reads it: a bare AssertionError raised in the frame an entry's
    raised_in names matches; one raised elsewhere, or of a report without the frame, does not."""
    from reports.plugin import seen_fields
    entry = fake_entry(">=0.6.0", {"raises": "AssertionError", "match": "^$",
                                   "raised_in": r"^jax\._src\.lax\.lax\._split_on_one_axis$"})

    def _split_on_one_axis():
        raise AssertionError()
    try:
        _split_on_one_axis()
    except AssertionError as e:
        recorded = seen_fields(e)
    assert recorded["frame"].endswith("._split_on_one_axis"), recorded
    seen = dict(recorded, frame="jax._src.lax.lax._split_on_one_axis")
    result = {"by_release": {"0.6.0": ["fails", "", seen],
                             "0.7.0": ["fails", "", dict(seen, frame="jax._src.core.other")],
                             "0.8.0": ["fails", "", {k: v for k, v in seen.items() if k != "frame"}]}}
    assert sorted(envs.symptom_differs(entry, [entry], result)) == ["0.7.0", "0.8.0"]


def test_a_red_release_keeps_pytest_output_beside_its_report(tmp_path, monkeypatch):
    """The release matrix keeps each release's pytest output (``pytest.log`` beside the report) and
    names it on a red line: a crashed xdist worker's last words are in that output and nowhere
    else (found on 0.4.35: the report said only "worker 'gw0' crashed")."""
    import subprocess
    done = subprocess.CompletedProcess([], 1, stdout="[gw0] node down: Not properly terminated\n",
                                       stderr="F external/xla/xla/service/x.cc:1] Check failed: planted\n")
    monkeypatch.setattr(envs, "ROOT", tmp_path)
    monkeypatch.setattr(envs, "python_of", lambda r: "python")
    monkeypatch.setattr(envs, "run_pytest", lambda args, python=None, env=None: done)
    line = envs.run_suites(rel.Release("0.4.35", "0.4.35", "3.11"), ["-n", "2"])
    log = tmp_path / "reports" / "runs" / "jax-0.4.35" / "pytest.log"
    assert line.startswith("RED (exit 1)") and line.endswith("(output: reports/runs/jax-0.4.35/pytest.log)"), line
    assert "node down" in log.read_text() and "Check failed: planted" in log.read_text()


def test_each_release_of_the_matrix_has_its_own_fresh_example_database(tmp_path, monkeypatch):
    """The release matrix runs each release with a Hypothesis database of its own, emptied first,
    so that a failing example saved on one release (or by an earlier matrix) is not replayed on
    another, and every finding replays from its run's seed."""
    import subprocess
    asked = []
    monkeypatch.setattr(envs, "ROOT", tmp_path)
    monkeypatch.setattr(envs, "python_of", lambda r: "python")
    monkeypatch.setattr(envs, "run_pytest", lambda args, python=None, env=None: asked.append(env) or
                        subprocess.CompletedProcess([], 0, stdout="", stderr=""))
    for version in ("0.4.35", "0.5.0"):
        stale = tmp_path / "reports" / "runs" / f"jax-{version}" / "hypothesis" / "examples" / "old"
        stale.mkdir(parents=True)
        envs.run_suites(rel.Release(version, version, "3.11"), [])
        assert not stale.exists(), "got the last matrix's examples kept, but should be emptied"
    homes = [env[envs.HYPOTHESIS_HOME] for env in asked]
    assert homes == [str(tmp_path / "reports" / "runs" / f"jax-{v}" / "hypothesis") for v in ("0.4.35", "0.5.0")], \
        f"got example databases {homes}, but should be one per release, beside its report"


def test_a_multi_controller_matrix_run_gets_a_folder_of_its_own():
    """``release_envs suites -- --processes N`` writes beside the release's one-process run, not over it."""
    assert envs.processes_part(["-n", "2"]) == ""
    assert envs.processes_part(["--processes", "1"]) == ""
    assert envs.processes_part(["--processes", "2", "--devices", "4"]) == "-2-processes"
    assert envs.processes_part(["--processes=4"]) == "-4-processes"
