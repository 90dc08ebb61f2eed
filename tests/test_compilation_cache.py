"""The persistent compilation cache the runner uses: which folder the options choose, and, end to
end in fresh processes, that a program compiled by one run is served to the next while a changed
program is never served the executable of another (a planted stale-key fault is caught)."""

from pathlib import Path

import pytest

from conformance.runner import compilation_cache as cc
from conformance.runner.devices import UsageError
from conformance.runner.pytest_process import run_pytest

PROBE = "tests/probes/probe_cache.py"


# --- choosing the folder ------------------------------------------------------------------------
def test_the_default_is_a_folder_per_release_under_the_user_cache(tmp_path):
    """No option: a folder per JAX, jaxlib and platform under $XDG_CACHE_HOME/jax-conformance."""
    choice = cc.choose(None, False, "0.10.2", "0.10.2", "cpu", {"XDG_CACHE_HOME": str(tmp_path)})
    assert choice == cc.CacheChoice(tmp_path / "jax-conformance" / "compilation-cache" / "jax-0.10.2-jaxlib-0.10.2-cpu",
                                    "default")
    assert choice.folder.is_dir()


@pytest.mark.parametrize("folder, off, env, source", [
    ("DIR", False, {}, "--compilation-cache"),
    (None, True, {}, "--no-compilation-cache"),
    (None, False, {"CONFORMANCE_COMPILATION_CACHE": "off"}, "$CONFORMANCE_COMPILATION_CACHE=off"),
    (None, False, {"CONFORMANCE_COMPILATION_CACHE": "DIR"}, "$CONFORMANCE_COMPILATION_CACHE"),
    ("DIR", False, {"CONFORMANCE_COMPILATION_CACHE": "off"}, "--compilation-cache"),
    (None, True, {"CONFORMANCE_COMPILATION_CACHE": "DIR"}, "--no-compilation-cache"),
])
def test_options_win_over_the_environment(tmp_path, folder, off, env, source):
    """--compilation-cache DIR and --no-compilation-cache beat $CONFORMANCE_COMPILATION_CACHE (a
    folder, or off), which beats the default."""
    env = {k: str(tmp_path / v) if v == "DIR" else v for k, v in env.items()}
    choice = cc.choose(str(tmp_path / folder) if folder else None, off, "0.4.30", "0.4.30", "cpu", env)
    assert choice.source == source
    assert (choice.folder is None) == (off or source.endswith("=off")), choice


def test_both_options_or_an_unwritable_folder_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="cannot be combined"):
        cc.choose(str(tmp_path), True, "0.4.30", "0.4.30", "cpu", {})
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(UsageError, match="--compilation-cache: cannot make the compilation cache folder"):
        cc.choose(str(blocker / "cache"), False, "0.4.30", "0.4.30", "cpu", {})


def test_the_header_says_which_cache(tmp_path):
    assert cc.CacheChoice(tmp_path, "default").describe() == f"{tmp_path} (default)"
    assert cc.CacheChoice(None, "--no-compilation-cache").describe() == "off (--no-compilation-cache)"


# --- end to end ------------------------------------------------------------------------------------
def probe_runs(tmp_path: Path, factors, stale_key: bool = False):
    """One fresh pytest run of the probe per factor, all on one cache folder: (exit status, the
    probe's log line, the end of pytest's output) of each."""
    cache, results = tmp_path / "cache", []
    for i, factor in enumerate(factors):
        log = tmp_path / f"log-{i}"
        env = {"PROBE_LOG": str(log), "PROBE_FACTOR": str(factor), "PROBE_STALE_KEY": "1" if stale_key else None}
        done = run_pytest(["-q", PROBE, "--devices", "2", "--compilation-cache", str(cache), "-p", "no:randomly"],
                          env=env, timeout=300)
        results.append((done.returncode, log.read_text().strip() if log.exists() else "", done.stdout[-3000:]))
    return results


def test_a_run_is_served_what_an_earlier_one_compiled_and_never_a_stale_program(tmp_path):
    """Run 1 compiles x * 2; run 2 (same program) is served it from the cache; run 3 (x * 3)
    gets its own program, right."""
    runs = probe_runs(tmp_path, [2, 2, 3])
    assert [rc for rc, *_ in runs] == [0, 0, 0], runs
    assert runs[0][1] == "factor 2.0 served 0", runs
    assert runs[1][1] == "factor 2.0 served 1", runs
    assert runs[2][1] == "factor 3.0 served 0", runs


def test_a_stale_executable_for_a_changed_program_is_caught(tmp_path):
    """Meta-test: with a planted fault that gives every program one cache key, run 3 is served
    run 1's x * 2 for x * 3, and the probe fails, saying so."""
    runs = probe_runs(tmp_path, [2, 3], stale_key=True)
    assert runs[0][0] == 0, runs
    assert runs[1][:2] == (1, "factor 3.0 served 1"), runs
    assert "but should be x0 * 3.0" in runs[1][2], runs
