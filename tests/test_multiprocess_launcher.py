"""The multi-process launcher's pieces (no JAX job needed): how a copy learns its role, the
watchdog for a stuck step, marking a broken run in its report; and, end to end, a 2 x 4 run of the
multiprocess suite (JAX 0.4.38 or later)."""

import json
import subprocess
import time

import pytest

from conformance.jaxside import compat
from conformance.runner import environment
from conformance.runner.multiprocess import launcher
from conformance.runner.pytest_process import run_pytest, start_pytest
from reports.plugin import mark_report_broken
from reports.record import load


def test_role_comes_from_the_launcher_or_the_option():
    env = {environment.PROCESS_ID: "1", environment.PROCESS_COUNT: "4", environment.COORDINATOR: "127.0.0.1:9"}
    assert launcher.role_from_env(None, env) == (1, 4, "127.0.0.1:9")
    assert launcher.role_from_env("platform", {}) == launcher.PLATFORM
    assert launcher.role_from_env("2", {}) is None  # the launcher itself
    assert launcher.role_from_env(None, {}) is None


def test_stuck_step_reports_only_after_twice_the_time_out(tmp_path):
    assert launcher.stuck_step(tmp_path, 10.0) is None  # no step in progress
    step = {"n": 7, "name": "psum", "payload": {"seed": 3}, "started": time.time() - 5}
    (tmp_path / launcher.STEP_FILE).write_text(json.dumps(step))
    assert launcher.stuck_step(tmp_path, 10.0) is None
    step["started"] = time.time() - 25
    (tmp_path / launcher.STEP_FILE).write_text(json.dumps(step))
    message = launcher.stuck_step(tmp_path, 10.0)
    assert "step 7 (psum) did not finish within 20 s" in message and '"seed": 3' in message


def test_a_broken_run_fails_the_property_that_was_running(tmp_path):
    record = {"format": "jax-conformance-report/1", "status": "incomplete", "running": "suites/t.py::test_b",
              "environment": {}, "summary": {}, "tests": [
                  {"id": "suites/t.py::test_a", "suite": "t", "area": None, "outcome": "passed", "duration": 1.0,
                   "examples": 5, "invalid_examples": 0, "reason": None, "message": None,
                   "falsifying_example": None, "repro": None}]}
    (tmp_path / "report.json").write_text(json.dumps(record))
    mark_report_broken(tmp_path, "process 2 died (signal SIGKILL) before the run ended")
    after = json.loads((tmp_path / "report.json").read_text())
    broken = [t for t in after["tests"] if t["id"] == "suites/t.py::test_b"]
    assert broken and broken[0]["outcome"] == "failed" and "process 2 died" in broken[0]["message"]
    assert after["status"] == "incomplete" and after["summary"]["failed"] == 1


def test_two_processes_run_the_multiprocess_suite(tmp_path):
    """pytest suites/test_multiprocess.py suites/test_congruence.py suites/test_random.py --processes 2
    --devices 4: every process runs the suites (the multiprocess properties and, multi-controller,
    ordinary ones, typed PRNG keys built on every process among them), they pass, the report says 2
    processes and 8 devices, process 1 writes its own report, and no copy is left running."""
    if not compat.MULTIPROCESS_CPU:
        pytest.skip(compat.MULTIPROCESS_CPU_REASON)
    run_dir = tmp_path / "run"
    result = run_pytest(["suites/test_multiprocess.py", "suites/test_congruence.py", "suites/test_random.py",
                         "--processes", "2", "--devices", "4", "--report-dir", str(run_dir)], timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    report = load(run_dir)
    assert report["environment"]["process_count"] == 2 and report["environment"]["device_count"] == 8
    assert report["summary"]["passed"] >= 6 + 6 and report["summary"]["failed"] == 0
    assert {t["suite"] for t in report["tests"] if t["outcome"] == "passed"} == {"test_multiprocess",
                                                                                   "test_congruence", "test_random"}
    follower = load(run_dir / "process-1")
    assert follower["summary"]["passed"] == report["summary"]["passed"]
    left = subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True, text=True).stdout.split()
    assert not left, left


def platform_copies(run_dir, hash_seed):
    """Two copies of pytest suites/test_congruence.py --processes platform, started as a SLURM job
    step would start them (JAX reads the SLURM variables), as the README's dry run of the pod
    recipe does."""
    copies = []
    for i in range(2):
        env = {"SLURM_JOB_ID": str(4000 + int(time.time()) % 90), "SLURM_STEP_NODELIST": "localhost",
               "SLURM_NTASKS": "2", "SLURM_PROCID": str(i), "SLURM_LOCALID": str(i), "JAX_PLATFORMS": "cpu",
               "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "PYTHONHASHSEED": hash_seed or None}
        copies.append(start_pytest(["suites/test_congruence.py", "--processes", "platform", "--report-dir",
                                    str(run_dir)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True))
    return [(p.wait(timeout=300), *p.communicate()) for p in copies]


def test_the_pod_recipe_runs_when_the_platform_starts_the_copies(tmp_path):
    """--processes platform (the copies started by the platform, JAX finding its peers from the
    environment): both copies agree on process 0's seed, pass, and write their own reports; without
    one PYTHONHASHSEED every copy stops with a usage error saying so."""
    if not compat.MULTIPROCESS_CPU:
        pytest.skip(compat.MULTIPROCESS_CPU_REASON)
    run_dir = tmp_path / "run"
    done = platform_copies(run_dir, "0")
    assert [rc for rc, _, _ in done] == [0, 0], [out[-2000:] + err[-1000:] for _, out, err in done]
    seeds = {line for _, out, _ in done for line in out.splitlines() if line.startswith("hypothesis profile")}
    assert len(seeds) == 1, seeds
    report, follower = load(run_dir), load(run_dir / "process-1")
    assert report["environment"]["process_count"] == 2 and report["summary"]["failed"] == 0
    assert follower["summary"]["passed"] == report["summary"]["passed"] > 0
    unset = platform_copies(tmp_path / "unset", "")
    assert [rc for rc, _, _ in unset] == [4, 4], [out[-2000:] + err[-1000:] for _, out, err in unset]
    assert all("the same PYTHONHASHSEED (process 0: unset, process 1: unset)" in err for _, _, err in unset)


def test_a_coordinator_that_cannot_start_is_a_clear_error(tmp_path):
    """With the coordinator's port taken, the run ends at once with exit status 4 (a usage error)
    and a message naming the port and what to do; no copy is left. (The launcher checks the port:
    JAX 0.10.2 may segfault on a taken port instead of raising.)"""
    if not compat.MULTIPROCESS_CPU:
        pytest.skip(compat.MULTIPROCESS_CPU_REASON)
    import socket
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run_dir = tmp_path / "run"
        started = time.monotonic()
        result = run_pytest(["suites/", "--processes", "2", "--devices", "2", "--report-dir", str(run_dir)],
                            env={environment.COORDINATOR_PORT: str(port), environment.INIT_TIMEOUT: "10"},
                            timeout=300)
        took = time.monotonic() - started
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr[-2000:]
    assert f"the coordination service cannot start on port {port}: Address already in use" in result.stderr
    assert took < 30, took
    left = subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True, text=True).stdout.split()
    assert not left, left


def test_processes_on_a_jax_without_multi_process_cpu_skip_naming_the_version(tmp_path):
    """Where this JAX cannot run processes over gloo on CPU (0.4.30), --processes runs the
    multiprocess suite in one process and every property skips with a reason naming the version."""
    if compat.MULTIPROCESS_CPU:
        pytest.skip(f"JAX {compat.JAX_VERSION} runs several processes on CPU (the end-to-end test covers it)")
    result = run_pytest(["suites/", "-rs", "--processes", "2", "--devices", "2",
                         "--report-dir", str(tmp_path / "run")], timeout=300)
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"need JAX 0.4.38 or later with gloo (installed: {compat.JAX_VERSION})" in result.stdout
    assert " passed" not in result.stdout.splitlines()[-1], result.stdout.splitlines()[-1]
