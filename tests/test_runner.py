"""The runner: device planning (pure functions), the seed, known deviations, and, end to end in
subprocesses, usage errors, forced device counts in every xdist worker, the shared seed, and the
report header."""

from pathlib import Path

import pytest

from conformance.runner import areas, environment, last_words, profiles
from conformance.runner.deviations import DEVIATIONS_FILE, load_deviations
from conformance.runner.devices import DevicePlan, UsageError, environment_for, plan_devices
from conformance.runner.pytest_process import fresh_environment
from conformance.runner.pytest_process import run_pytest as run_a_pytest

ROOT = Path(__file__).resolve().parents[1]
PROBE = "tests/probes/probe_devices.py"


# --- plan_devices -----------------------------------------------------------------------------
@pytest.mark.parametrize("option, backend, env, expected", [
    (None, None, {}, DevicePlan("cpu", 8, "default")),
    ("4", None, {}, DevicePlan("cpu", 4, "--devices")),
    (None, None, {"CONFORMANCE_DEVICES": "3"}, DevicePlan("cpu", 3, "$CONFORMANCE_DEVICES")),
    ("2", None, {"CONFORMANCE_DEVICES": "3"}, DevicePlan("cpu", 2, "--devices")),
    (None, None, {"XLA_FLAGS": "--foo --xla_force_host_platform_device_count=5"},
     DevicePlan("cpu", 5, "$XLA_FLAGS")),
    (None, "cuda", {}, DevicePlan("cuda", None, "all cuda devices present")),
    (None, None, {"JAX_PLATFORMS": "tpu"}, DevicePlan("tpu", None, "all tpu devices present")),
    ("6", "cpu", {"JAX_PLATFORMS": "cuda"}, DevicePlan("cpu", 6, "--devices")),
    (None, None, {"JAX_NUM_CPU_DEVICES": "4", "XLA_FLAGS": "--xla_force_host_platform_device_count=5"},
     DevicePlan("cpu", 4, "$JAX_NUM_CPU_DEVICES")),
    (None, None, {"JAX_NUM_CPU_DEVICES": "4", "CONFORMANCE_DEVICES": "2"},
     DevicePlan("cpu", 2, "$CONFORMANCE_DEVICES")),
    (None, "tpu", {"JAX_NUM_CPU_DEVICES": "4"}, DevicePlan("tpu", None, "all tpu devices present")),
])
def test_plan_devices(option, backend, env, expected):
    """--devices beats $CONFORMANCE_DEVICES beats JAX's $JAX_NUM_CPU_DEVICES beats a count in
    $XLA_FLAGS beats 8, on CPU only."""
    assert plan_devices(option, backend, env) == expected


@pytest.mark.parametrize("option, backend, env, message", [
    ("0", None, {}, "at least one device"),
    ("-2", None, {}, "at least one device"),
    ("abc", None, {}, "not a whole number"),
    (None, None, {"CONFORMANCE_DEVICES": "0"}, "at least one device"),
    ("4", "cuda", {}, "only be forced on CPU"),
    (None, None, {"JAX_PLATFORMS": "tpu", "CONFORMANCE_DEVICES": "4"}, "only be forced on CPU"),
])
def test_plan_devices_usage_errors(option, backend, env, message):
    """A count that cannot be honoured is a UsageError that says why."""
    with pytest.raises(UsageError, match=message):
        plan_devices(option, backend, env)


def test_environment_replaces_only_the_device_count_flag():
    """Other XLA flags survive; an earlier device-count flag is replaced, not duplicated."""
    env = {"XLA_FLAGS": "--xla_cpu_foo=1 --xla_force_host_platform_device_count=2"}
    changes = environment_for(DevicePlan("cpu", 4, "--devices"), env)
    assert changes["XLA_FLAGS"] == "--xla_cpu_foo=1 --xla_force_host_platform_device_count=4"
    assert changes["JAX_NUM_CPU_DEVICES"] == "4"
    assert changes["JAX_PLATFORMS"] == "cpu"
    assert "XLA_FLAGS" not in environment_for(DevicePlan("tpu", None, "x"), env)


def test_fault_runs_neither_read_nor_write_the_example_database():
    """The profile the fault runs use has no example database and no reuse phase: a planted fault's
    failing examples are not replayed by later runs of the real suites in the same checkout (the
    kill maps run hundreds of faulted runs there), and a fault run depends on its seed alone."""
    from hypothesis import Phase, settings
    no_shrink = settings.get_profile("default-no-shrink")
    assert no_shrink.database is None and Phase.reuse not in no_shrink.phases and Phase.shrink not in no_shrink.phases
    from conformance.runner.profiles import HYPOTHESIS_OWN
    assert settings.get_profile("default").database == HYPOTHESIS_OWN.database  # (the default keeps Hypothesis' own)


def test_every_profile_draws_from_the_run_seed_also_on_ci():
    """No profile derandomizes, not even on a machine Hypothesis takes for CI (whose own "ci" profile
    does): the seed a run prints reproduces its examples anywhere."""
    from hypothesis import settings
    from conformance.runner import profiles  # noqa: F401 - importing it registers them
    for name in ("default", "nightly", "soak", "soak-round", "default-no-shrink"):
        assert settings.get_profile(name).derandomize is False, name


def test_choose_seed():
    """--hypothesis-seed wins, then the controller's $CONFORMANCE_SEED, then a fresh one."""
    assert profiles.choose_seed(5, {"CONFORMANCE_SEED": "7"}) == "5"
    assert profiles.choose_seed(None, {"CONFORMANCE_SEED": "7"}) == "7"
    assert profiles.choose_seed(None, {}).isdigit()


def test_load_deviations(tmp_path):
    """Entries need test, jax and reason; a bad range or missing field is a UsageError (these name
    made-up tests: whether a test exists is checked in tests/test_usage_errors.py)."""
    good = tmp_path / "good.toml"
    good.write_text('format = 2\n[[deviation]]\ntest = "suites/t.py::test_a"\njax = ">=0.5"\nreason = "r"\n'
                    'symptom = { raises = "AssertionError" }\n')
    (entry,) = load_deviations(good, tests_exist=False)
    assert entry.matches("suites/t.py::test_a") and not entry.matches("suites/t.py::test_a[x]")
    assert not entry.matches("suites/t.py::test_ab")
    symptom = 'symptom = { raises = "AssertionError" }\n'
    for text, message in [('[[deviation]]\ntest = "t"\njax = ">=0.5"\n', "lacks reason"),
                          ('[[deviation]]\ntest = "t"\njax = "new"\nreason = "r"\n' + symptom, "invalid jax range"),
                          ("[[deviation]\n", "bad.toml"),
                          ('[[deviation]]\ntest = "t"\njax = ">=0.5"\nreason = "r"\nstrict = false\n' + symptom,
                           "reproduced_by"),
                          ('[[deviation]]\ntest = "t"\njax = ">=0.5"\nreason = "r"\nstrict = "no"\n' + symptom,
                           "must be true or false")]:
        bad = tmp_path / "bad.toml"
        bad.write_text(text if text.startswith("[[deviation]\n") else "format = 2\n" + text)
        with pytest.raises(UsageError, match=message):
            load_deviations(bad, tests_exist=False)
    assert load_deviations(tmp_path / "absent.toml") == []
    loose = tmp_path / "loose.toml"
    loose.write_text('format = 2\n[[deviation]]\ntest = "t"\njax = ">=0.5"\nreason = "r"\nstrict = false\n'
                     'reproduced_by = "suites/t.py::test_b"\n'
                     'trigger = "at_update_of_a_value_a_constraint_has_just_cut"\n' + symptom)
    (entry,) = load_deviations(loose, tests_exist=False)
    assert not entry.strict and entry.reproduced_by == "suites/t.py::test_b"


def declared_ids(path: str, name: str) -> list:
    """The ids a suite's test declares in its parametrize marks (``ids=[...]``, or ``pytest.param(...,
    id=...)`` among its values), read by importing the suite's module."""
    import importlib
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    marks = [m for m in getattr(getattr(module, name), "pytestmark", []) if m.name == "parametrize"]
    listed = [i for m in marks for i in (m.kwargs.get("ids") or [])]
    return listed + [v.id for m in marks for v in (m.args[1] if len(m.args) > 1 else m.kwargs.get("argvalues", ()))
                     if getattr(v, "id", None)]


def test_shipped_deviations_name_existing_tests():
    """Every entry in suites/known_deviations.toml names a test that exists in suites/ (a
    parametrized case by an existing parameter id); a non-strict entry's reproduction is a strict
    entry for the same versions or wider."""
    from packaging.specifiers import SpecifierSet

    entries = load_deviations(DEVIATIONS_FILE)
    for entry in entries:
        path, _, name = entry.test.partition("::")
        assert f"def {name.split('[')[0]}(" in (ROOT / path).read_text(), entry.test
        if "[" in name:  # a parameter id: an op of the catalogue, a literal id in the file, or an id it declares
            from strategies.ops import BY_NAME  # (imports no JAX)
            param = name.split("[", 1)[1][:-1]
            assert (param in BY_NAME or param in (ROOT / path).read_text()
                    or param in declared_ids(path, name.split("[")[0])), entry.test
        if not entry.strict:
            strict = [e for e in entries if e.strict and e.test == entry.reproduced_by]
            assert strict, f"{entry.test}: {entry.reproduced_by} is not a strict entry"
            for version in ("0.4.30", "0.4.38", "0.5.3", "0.6.2", "0.7.0", "0.7.2", "0.8.3", "0.9.2", "0.10.2"):
                if version in SpecifierSet(entry.jax):
                    assert any(version in SpecifierSet(e.jax) for e in strict), (entry.test, version)


# --- end to end -----------------------------------------------------------------------------
def run_pytest(*args, **env):
    """pytest in a fresh shell: no platform or device count of this run (``env`` sets more)."""
    return run_a_pytest(args, env={"JAX_PLATFORMS": None, environment.DEVICES: None, **env}, timeout=300)


def test_a_fresh_environment_drops_what_a_run_sets():
    """A run started from another keeps the person's variables, but not pytest's own, the seed,
    a copy's role or the device-count flag (other XLA flags stay)."""
    env = fresh_environment({"EXTRA": "1", "GONE": None}, base={
        "PATH": "/bin", "GONE": "x", "PYTEST_XDIST_WORKER": "gw0", environment.SEED: "3",
        environment.PROCESS_ID: "1", "JAX_NUM_CPU_DEVICES": "8", environment.REPORT_DIR: "/tmp/r",
        "XLA_FLAGS": "--xla_cpu_foo=1 --xla_force_host_platform_device_count=8"})
    assert env == {"PATH": "/bin", environment.REPORT_DIR: "/tmp/r", "XLA_FLAGS": "--xla_cpu_foo=1",
                   "EXTRA": "1"}


@pytest.mark.parametrize("args, env, message", [
    (["--devices", "0"], {}, "--devices=0 cannot be honoured"),
    (["--devices", "-3"], {}, "--devices=-3 cannot be honoured"),
    (["--devices", "many"], {}, "not a whole number"),
    ([], {"CONFORMANCE_DEVICES": "0"}, "$CONFORMANCE_DEVICES=0 cannot be honoured"),
    (["--devices", "4", "--backend", "tpu"], {}, "only be forced on CPU"),
])
def test_usage_errors_are_clear(args, env, message):
    """An impossible device request ends the run with a usage error (exit 4), not a traceback."""
    result = run_pytest(*args, PROBE, **env)
    assert result.returncode == 4, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_backend_started_too_early_is_a_usage_error(tmp_path):
    """When something starts JAX before the harness, a different --devices is refused clearly."""
    (tmp_path / "early_jax.py").write_text("import jax\njax.devices()\n")
    result = run_pytest("-p", "early_jax", "--devices", "3", PROBE, PYTHONPATH=str(tmp_path),
                        XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "asked for 3 CPU devices, but the JAX backend has 2" in result.stderr


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_every_process_gets_the_devices_and_seed(workers, tmp_path):
    """--devices 3 and --hypothesis-seed reach the main process or every xdist worker."""
    log = tmp_path / "log"
    result = run_pytest(*workers, "--devices", "3", "--hypothesis-seed", "1234", PROBE,
                        PROBE_EXPECT_DEVICES="3", PROBE_EXPECT_SEED="1234", PROBE_LOG=str(log))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = log.read_text().split()
    assert len(lines) == 12
    if workers:
        assert {"gw0", "gw1"} <= set(lines[0::3])


def test_a_crashed_workers_report_holds_its_last_example_and_stack():
    """A worker that aborts (as on an XLA CHECK failure) leaves, in the report of the test it crashed
    in, the script of the last Case it made and Python's stack where it died; the run's folder of
    last words is gone when the run ends."""
    result = run_pytest("-n", "1", "tests/probes/probe_abort.py", PROBE_MARK="the-mark-of-this-example")
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "crashed while running 'tests/probes/probe_abort.py::test_a_case_then_an_abort'" in out, out
    assert "the example it was running (its last Case's script):" in out, out
    assert "x = 1  # the-mark-of-this-example" in out, out
    assert "Python's stack where it died (faulthandler)" in out and "test_a_case_then_an_abort" in out, out
    folder = next(line.split(": ", 1)[1].rstrip("/") for line in out.splitlines()
                  if line.startswith("a crashed process's last example and stack:"))
    assert not Path(folder).exists(), folder


def test_last_words_keep_only_the_latest_case(tmp_path):
    """A process's case file holds its test and its last Case's script, dedented, and nothing of the
    examples before; a test with no Case yet says so."""
    witness = last_words.Witness(tmp_path, "gw3")
    witness.started("suites/test_x.py::test_y")
    assert "no Case made yet" in last_words.read(tmp_path, "gw3")
    witness.saw("    a = 1\n    print(a)")
    witness.saw("    b = 2")
    said = last_words.read(tmp_path, "gw3")
    witness.close()
    assert "# suites/test_x.py::test_y\nb = 2" in said and "a = 1" not in said, said
    assert last_words.read(tmp_path, "gw9") is None
    assert [last_words.process_name(env) for env in (
        {}, {"PYTEST_XDIST_WORKER": "gw1"}, {environment.PROCESS_ID: "1"},
        {environment.PROCESS_ID: "1", "PYTEST_XDIST_WORKER": "gw0"})] == ["main", "gw1", "process1", "process1-gw0"]


def test_xdist_workers_share_the_controllers_random_seed(tmp_path):
    """Without --hypothesis-seed, every worker uses the seed the controller chose and printed."""
    log = tmp_path / "log"
    result = run_pytest("-n", "2", PROBE, PROBE_EXPECT_DEVICES="8", PROBE_LOG=str(log))
    assert result.returncode == 0, result.stdout + result.stderr
    entries = log.read_text().split()
    assert {"gw0", "gw1"} <= set(entries[0::3])
    seeds = set(entries[2::3])
    assert len(seeds) == 1, entries
    assert f"seed: {seeds.pop()}" in result.stdout


def test_report_header_names_the_environment():
    """The header gives jax/jaxlib versions, backend, device count and kind, process count,
    profile and seed."""
    result = run_pytest("--devices", "2", "--hypothesis-seed", "99", "--collect-only", PROBE)
    assert result.returncode == 0, result.stderr
    import jax
    for text in [f"jax {jax.__version__}", "jaxlib", "backend: cpu", "devices: 2 x cpu",
                 "forced by --devices", "processes: 1", "hypothesis profile: default", "seed: 99"]:
        assert text in result.stdout, text


def test_every_suite_has_a_place_in_the_run_order():
    """areas.SUITE_ORDER names every suite file once, so a new suite's place (cheap checks first,
    for a fast first failure) is a decision, not an accident of its name."""
    stems = sorted(p.stem.removeprefix("test_") for p in (ROOT / "suites").glob("test_*.py"))
    assert sorted(areas.SUITE_ORDER) == stems


# --- a user's own deviations (--deviations) ---------------------------------------------------
@pytest.mark.parametrize("backend, platform, device_kind, applies", [
    ("", "cpu", "cpu", True),
    ("cpu", "cpu", "cpu", True),
    ("gpu", "cpu", "cpu", False),
    ("gpu", "cuda", "NVIDIA H200", True),
    ("gpu", "rocm", "MI300X", True),
    ("tpu", "cuda", "NVIDIA H200", False),
    ("NVIDIA H200", "gpu", "NVIDIA H200", True),
    ("nvidia h200", "gpu", "NVIDIA H200", True),
    ("NVIDIA H100", "gpu", "NVIDIA H200", False),
])
def test_a_deviation_applies_on_its_backend_only(backend, platform, device_kind, applies):
    """An entry without ``backend`` applies everywhere; cpu/gpu/tpu name a platform (gpu: cuda or
    rocm too); any other string is a device kind, compared ignoring case."""
    from conformance.runner.deviations import Deviation

    entry = Deviation("suites/t.py::test_a", ">=0.4.30", "r", backend=backend)
    assert entry.applies_on(platform, device_kind) is applies, (
        f"got applies_on({platform!r}, {device_kind!r}) = {not applies} for backend {backend!r}, "
        f"but should be {applies}")


@pytest.mark.parametrize("processes, count, applies", [
    ("", 1, True), ("", 4, True), ("one", 1, True), ("one", 2, False), ("several", 1, False), ("several", 2, True)])
def test_a_deviation_applies_to_the_runs_its_processes_name(processes, count, applies):
    """An entry without ``processes`` applies to every run; "one" to one-process runs only,
    "several" to multi-controller runs only; any other value is refused naming the key."""
    from conformance.runner.deviations import Deviation, parse_entry, planted_entry
    from conformance.runner.devices import UsageError

    entry = Deviation("suites/t.py::test_a", ">=0.4.30", "r", processes=processes)
    assert entry.applies_to(count) is applies, f"got {not applies} for processes={processes!r} in a run of {count}"
    values = {"test": "suites/t.py::test_a", "jax": ">=0.4.30", "reason": "r", "symptom": {"raises": "ValueError"}}
    assert parse_entry(planted_entry(dict(values, processes="several"))).processes == "several"
    with pytest.raises(UsageError, match="processes = 'two'"):
        parse_entry(planted_entry(dict(values, processes="two")))


def test_users_deviations_merge_with_the_suites_and_come_first(tmp_path):
    """select keeps the entries of this JAX and backend from every file, the users' first (so a
    user's entry for a test wins), and counts them by file for the header and the report."""
    from packaging.specifiers import SpecifierSet

    from conformance.runner.deviations import DeviationsInEffect, read_deviation_file

    suite = tmp_path / "suite.toml"
    symptom = 'symptom = { raises = "AssertionError" }\n'
    suite.write_text('format = 2\n[[deviation]]\ntest = "suites/test_mesh.py::test_mesh_attributes_match_the_model"\n'
                     'jax = ">=0.4.30"\nreason = "suite\'s"\n'
                     + symptom + '[[deviation]]\ntest = "suites/test_mesh.py::test_mesh_rejects_duplicate_axis_names"\n'
                     'jax = "<0.4.30"\nreason = "old"\n' + symptom)
    user = tmp_path / "team.toml"
    user.write_text('format = 2\n[[deviation]]\ntest = "suites/test_mesh.py::test_mesh_attributes_match_the_model"\n'
                    'jax = ">=0.4.30"\nreason = "ours"\n'
                    + symptom + '[[deviation]]\ntest = "suites/test_mesh.py::test_make_mesh_holds_distinct_devices"\n'
                    'jax = ">=0.4.30"\nreason = "gpu"\n'
                    'backend = "gpu"\n' + symptom)
    files = [read_deviation_file(suite, "suite", "--known-deviations"),
             read_deviation_file(user, "user", "--deviations")]
    chosen = DeviationsInEffect.select(files, lambda spec: "0.10.2" in SpecifierSet(spec), "cpu", "cpu", tmp_path)
    assert [d.reason for d in chosen.deviations] == ["ours", "suite's"]
    assert chosen.for_test("suites/test_mesh.py::test_mesh_attributes_match_the_model").reason == "ours"
    assert chosen.for_test("suites/test_mesh.py::test_make_mesh_holds_distinct_devices") is None
    assert chosen.header() == "2 (1 from team.toml, 1 from suite.toml; 1 more for another backend, not applied)"
    assert [(f["origin"], f["in_effect"], f["other_backends"], len(f["sha256"])) for f in chosen.files] == [
        ("user", 1, 1, 64), ("suite", 1, 0, 64)]
    bad = tmp_path / "bad.toml"
    bad.write_text('format = 2\n[[deviation]]\ntest = "t"\njax = ">=0.5"\nreason = "r"\nbackend = 3\n' + symptom)
    with pytest.raises(UsageError, match="backend = 3"):
        load_deviations(bad)


def test_a_users_deviation_file_applies_its_entries_on_their_backend(tmp_path):
    """End to end: with ``--deviations FILE``, a user's entry for this backend applies (a strict
    entry on a passing test: reported fixed, so failed) and a GPU-only one does not on CPU (the test
    passes); the header counts the entries by file."""
    import json

    user = tmp_path / "team.toml"
    user.write_text(
        'format = 2\n[[deviation]]\ntest = "suites/test_mesh.py::test_make_mesh_holds_distinct_devices"\n'
        'jax = ">=0.4.30"\nreason = "(self-test) applied on cpu"\nbackend = "cpu"\n'
        'symptom = { raises = "AssertionError" }\n'
        '[[deviation]]\ntest = "suites/test_mesh.py::test_mesh_attributes_match_the_model"\n'
        'jax = ">=0.4.30"\nreason = "(self-test) a GPU-only entry"\nbackend = "gpu"\n'
        'symptom = { raises = "AssertionError" }\n')
    result = run_pytest("suites/test_mesh.py", "-k", "holds_distinct or attributes_match", "--deviations", str(user),
                        "--report-dir", str(tmp_path / "run"), "--devices", "2")
    header = next(line for line in result.stdout.splitlines() if line.startswith("known deviations in effect"))
    assert f"1 from {user}" in header and "1 more for another backend, not applied" in header, header
    record = json.loads((tmp_path / "run" / "report.json").read_text())
    tests = {t["id"].split("::")[1]: t for t in record["tests"]}
    applied = tests["test_make_mesh_holds_distinct_devices"]
    assert applied["outcome"] == "failed" and applied["deviation"]["fixed"], applied
    assert applied["deviation"]["source"] == str(user) and applied["deviation"]["backend"] == "cpu", applied
    other = tests["test_mesh_attributes_match_the_model"]
    assert other["outcome"] == "passed" and other["deviation"] is None, other
    user_file = next(f for f in record["environment"]["deviation_files"] if f["origin"] == "user")
    assert user_file["in_effect"] == 1 and user_file["other_backends"] == 1, user_file
