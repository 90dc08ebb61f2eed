"""``python -m reports bench`` without running the suites (a stand-in child at most): the runs and
pytest arguments it plans on CPU and on GPU/TPU, its errors (a device count on TPU, a run that wrote
no report), and the progress lines it derives from a running run's report."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reports import bench
from reports.__main__ import main
from reports.record import ReportError


def entry(suite, name, outcome="passed", duration=1.0, **counts):
    """A run report's test entry, as far as bench reads it."""
    return {"id": f"suites/{suite}.py::{name}", "suite": suite, "outcome": outcome, "duration": duration, **counts}


@pytest.fixture(autouse=True)
def no_reference_workload(monkeypatch):
    """bench's reference workload (13 s of compiling) stands in as 2 seconds here."""
    monkeypatch.setattr(bench, "run_reference", lambda pytest_args: {"seconds": 2.0, "programs": 240})


def test_on_cpu_bench_forces_8_devices_unless_told_other_counts():
    """On CPU (no JAX_PLATFORMS, or --backend cpu) bench makes one run with --devices 8, or one per
    count asked for."""
    assert bench.planned_runs(None, [], {}) == [8]
    assert bench.planned_runs([2, 4], ["--backend", "cpu"], {"JAX_PLATFORMS": "tpu"}) == [2, 4]
    args = bench.pytest_arguments(8, Path("/r/devices-8"), ["-k", "mesh"])
    assert args == ["-q", "suites/", "-k", "mesh", "--devices", "8", "--report-dir", "/r/devices-8"]
    assert bench.run_folder_name(8) == "devices-8"


@pytest.mark.parametrize("env, extra", [({"JAX_PLATFORMS": "tpu"}, []), ({"JAX_PLATFORMS": "cuda,cpu"}, []),
                                        ({}, ["--backend", "cuda"]), ({"JAX_PLATFORMS": "cpu"}, ["--backend=tpu"])])
def test_on_gpu_or_tpu_bench_makes_one_run_on_the_devices_present(env, extra):
    """On GPU/TPU (decided as the harness does: --backend, else JAX_PLATFORMS) bench makes one run,
    passes no --devices, and names its folder devices-present."""
    (devices,) = bench.planned_runs(None, extra, env)
    assert devices is None
    args = bench.pytest_arguments(devices, Path("/r/devices-present"), extra)
    assert "--devices" not in args and args[-2:] == ["--report-dir", "/r/devices-present"]
    assert bench.run_folder_name(devices) == "devices-present"


def test_a_test_file_among_the_pytest_arguments_replaces_suites():
    """A test file named after -- is what runs (pytest would otherwise fold it into suites/)."""
    args = bench.pytest_arguments(8, Path("/r"), ["suites/test_mesh.py::test_make_mesh", "-x"])
    assert "suites/" not in args and args[1:3] == ["suites/test_mesh.py::test_make_mesh", "-x"]


def test_devices_on_tpu_is_refused_in_one_line_with_exit_status_2(monkeypatch, capsys):
    """An explicit --devices with JAX_PLATFORMS=tpu is refused before any run: one "error:" line,
    exit status 2."""
    monkeypatch.setenv("JAX_PLATFORMS", "tpu")
    monkeypatch.setattr(bench, "run_watched", lambda *a: pytest.fail("no run should start"))
    assert main(["bench", "--devices", "8"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --devices 8 cannot be honoured on the 'tpu' backend") and err.count("\n") == 1


def test_a_run_without_a_report_is_an_error_naming_folder_exit_status_and_last_lines(monkeypatch, capsys,
                                                                                    tmp_path):
    """A run that wrote no report ends bench with exit status 2 and an error naming the run folder,
    pytest's exit status and the last 15 lines of its output."""
    output = "\n".join(f"line {i}" for i in range(1, 31)) + "\nERROR: the 'tpu' backend did not start\n"
    monkeypatch.setenv("JAX_PLATFORMS", "tpu")
    monkeypatch.setattr(bench, "run_watched", lambda args, run_dir: subprocess.CompletedProcess(args, 4, output))
    assert main(["bench", "--no-warm", "--keep", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"error: {tmp_path / 'devices-present-cold'}: pytest exited with status 4 and wrote "
                             f"no report")
    assert [line.strip() for line in err[1:]] == [f"line {i}" for i in range(17, 31)] + [
        "ERROR: the 'tpu' backend did not start"]


def test_the_runs_that_wrote_a_report_are_still_printed(monkeypatch, capsys, tmp_path):
    """Of several device counts, the runs with a report are printed even when another wrote none."""
    def load(run_dir):
        if not run_dir.name.startswith("devices-4-"):
            raise ReportError(f"{run_dir}: no such report")
        return {"environment": {}, "tests": [entry("test_mesh", "a")]}
    monkeypatch.setattr(bench, "load", load)
    monkeypatch.setattr(bench, "run_watched", lambda args, run_dir: subprocess.CompletedProcess(
        args, 0 if run_dir.name.startswith("devices-4-") else 3, "last words\n"))
    assert main(["bench", "--devices", "4", "16", "--keep", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert "== 4 devices, cold: wall" in out and "== 4 devices, warm: wall" in out
    assert f"run reports: {tmp_path}" in out
    assert f"{tmp_path / 'devices-16-cold'}: pytest exited with status 3" in err


def test_progress_prints_a_suite_once_the_run_has_moved_past_it():
    """Fed the report as it grows, the progress prints one line per suite, once another suite has
    gained tests since it last did (or at the end), with its tests, seconds and outcomes."""
    progress = bench.SuiteProgress()
    mesh = [entry("test_mesh", "a", duration=2.0), entry("test_mesh", "b", "skipped", duration=0.5)]
    named = [entry("test_named_sharding", "a"), entry("test_named_sharding", "b", "failed")]
    aot = [entry("test_aot", "a")]
    assert progress.see([]) == []
    assert progress.see(mesh[:1]) == []
    assert progress.see(mesh[:1]) == []                  # nothing new: the same look again
    assert progress.see(mesh + named[:1]) == []          # mesh ended and named began within one look
    assert progress.see(mesh + named) == ["  test_mesh: 2 tests, 2.5 s (1 passed, 1 skipped)"]
    assert progress.see(mesh + named) == []
    assert progress.end(mesh + named + aot) == ["  test_named_sharding: 2 tests, 2.0 s (1 passed, 1 failed)",
                                                "  test_aot: 1 test, 1.0 s (1 passed)"]


def test_a_running_run_shows_a_suite_line_before_it_ends(monkeypatch, capsys, tmp_path):
    """While the child runs, bench reads its report as it grows and prints a finished suite's line
    then, not at the end; the child's output is captured and kept in the run folder."""
    child = textwrap.dedent(f"""
        import json, os, sys, time
        def write(tests):
            with open("{tmp_path}/next.json", "w") as f:
                json.dump({{"tests": tests}}, f)
            os.replace("{tmp_path}/next.json", "{tmp_path}/report.json")
        mesh = {{"id": "m", "suite": "test_mesh", "outcome": "passed", "duration": 1.0}}
        aot = {{"id": "a", "suite": "test_aot", "outcome": "passed", "duration": 2.0}}
        write([mesh]); time.sleep(0.5)
        write([mesh, aot]); time.sleep(0.5)
        write([mesh, aot, dict(aot, id="b")]); time.sleep(0.5)
        open("{tmp_path}/ended", "w").close()
        print("child output")
    """)
    monkeypatch.setattr(bench, "start_pytest",
                        lambda args, **popen: subprocess.Popen([sys.executable, "-c", child], **popen))
    monkeypatch.setattr(bench, "POLL_INTERVAL_S", 0.05)
    shown = []
    monkeypatch.setattr(bench, "show",
                        lambda lines: shown.extend((line, (tmp_path / "ended").exists()) for line in lines))
    result = bench.run_watched(["-q"], tmp_path)
    assert shown == [("  test_mesh: 1 test, 1.0 s (1 passed)", False),  # before the child ended
                     ("  test_aot: 2 tests, 4.0 s (2 passed)", True)]
    assert result.returncode == 0 and result.stdout == "child output\n"
    assert (tmp_path / bench.OUTPUT_NAME).read_text() == "child output\n"


# --- the reference, cold and warm ---------------------------------------------------------------
def test_cold_and_warm_share_a_cache_folder_and_a_seed(tmp_path):
    """Without a cache option bench runs cold on an empty cache of its own, then warm on the cache
    the cold run left, both with one seed (the one given, else one it adds); a cache option among
    the arguments makes one run as asked."""
    args, seed = bench.with_seed(["-k", "mesh"])
    assert args[:2] == ["-k", "mesh"] and args[2] == f"--hypothesis-seed={seed}"
    assert bench.with_seed(["--hypothesis-seed", "7"]) == (["--hypothesis-seed", "7"], "7")
    (tmp_path / "compilation-cache-devices-8").mkdir()
    (tmp_path / "compilation-cache-devices-8" / "stale").write_text("")
    runs = bench.cache_runs(tmp_path, args, 8, warm=True)
    cache = str(tmp_path / "compilation-cache-devices-8")
    assert runs == [("cold", tmp_path / "devices-8-cold", [*args, "--compilation-cache", cache]),
                    ("warm", tmp_path / "devices-8-warm", [*args, "--compilation-cache", cache])]
    assert not (tmp_path / "compilation-cache-devices-8").exists()  # emptied for the cold run
    assert [r[0] for r in bench.cache_runs(tmp_path, args, 8, warm=False)] == ["cold"]
    assert bench.cache_runs(tmp_path, ["--no-compilation-cache"], None, True) == [
        ("uncached", tmp_path / "devices-present", ["--no-compilation-cache"])]
    assert bench.cache_runs(tmp_path, ["--compilation-cache=/c"], 8, True)[0][0] == "as given"


def test_a_run_is_stated_as_a_ratio_to_the_reference_with_its_programs():
    record = {"wall_seconds": 30.0, "tests": [
        entry("test_mesh", "a", examples=10, programs=5, compilations=3, cache_served=2, duplicate_programs=1),
        entry("test_aot", "b", examples=4, programs=2, compilations=2)]}
    assert bench.ratio_line("8 devices, cold", record, {"seconds": 12.0, "programs": 240}) == (
        "8 devices, cold: wall 30.0 s = 2.50x the reference; 14 examples, 7 programs, 5 compiled, "
        "2 served by the cache, 1 asked for twice")


def test_each_ratio_divides_by_the_mean_of_the_references_just_before_and_after_its_run(monkeypatch, tmp_path, capsys):
    """bench runs the reference before the suites and again after each run, and states each run's
    wall time as a ratio to the mean of its two neighbours (cold 30 s between references of 10 s
    and 14 s: 2.50x; warm 30 s between 14 s and 16 s: 2.00x)."""
    times = iter([10.0, 14.0, 16.0])
    monkeypatch.setattr(bench, "run_reference", lambda pytest_args: {"seconds": next(times), "programs": 240})
    monkeypatch.setattr(bench, "run_suites", lambda n, folder, args: {
        "wall_seconds": 30.0, "exit_status": 0, "last_lines": ["1 passed"], "environment": {},
        "tests": [entry("test_mesh", "a", examples=1, programs=1, compilations=1)]})
    assert bench.bench(None, tmp_path, ["--hypothesis-seed=1"], warm=True) == 0
    out = capsys.readouterr().out
    assert ("8 devices, cold: the reference 12.0 s (the mean of 10.0 s just before the run and 14.0 s "
            "just after)") in out, out
    assert "8 devices, cold: wall 30.0 s = 2.50x the reference" in out, out
    assert ("8 devices, warm: the reference 15.0 s (the mean of 14.0 s just before the run and 16.0 s "
            "just after)") in out, out
    assert "8 devices, warm: wall 30.0 s = 2.00x the reference" in out, out


def test_programs_asked_for_twice_are_grouped_by_who_asked_first_and_again():
    """Repeated programs are counted per (module, property that asked first, property that asked
    again), most first; repeats a report did not name count as "(more)"."""
    first = "suites/test_mesh.py::a"
    record = {"tests": [
        entry("test_mesh", "a", duplicate_programs=3, repeated=[{"module": "jit_f", "first_asked_by": first}] * 2),
        entry("test_aot", "b", duplicate_programs=1, repeated=[{"module": "jit_g", "first_asked_by": first}])]}
    assert bench.duplicates(record) == [("jit_f", first, first, 2), ("jit_g", first, "suites/test_aot.py::b", 1),
                                        ("(more)", "-", first, 1)]
    assert "programs asked for twice (4;" in bench.table(dict(record, environment={}))


def test_the_reference_workload_is_240_distinct_programs():
    from reports import reference

    assert reference.PROGRAMS == 240 == len(set(reference.OPERATIONS)) * len(reference.LAYOUTS) * len(reference.SHAPES)
