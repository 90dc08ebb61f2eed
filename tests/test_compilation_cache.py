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


def test_a_jax_that_cannot_cache_here_uses_none_and_makes_no_default_folder(tmp_path):
    """Where compat says this JAX cannot cache on the platform, nothing asked: no cache, the reason
    as its source, and no default folder made; a folder asked for is still checked (a usage error
    if it cannot be made), then not used."""
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    choice = cc.choose(None, False, "0.4.30", "0.4.30", "cpu", env,
                       unavailable="JAX 0.4.30 serves donated inputs wrongly")
    assert choice == cc.CacheChoice(None, "JAX 0.4.30 serves donated inputs wrongly")
    assert not (tmp_path / "jax-conformance").exists()
    asked = cc.choose(str(tmp_path / "mine"), False, "0.4.30", "0.4.30", "cpu", env, unavailable="no")
    assert asked == cc.CacheChoice(None, "no") and (tmp_path / "mine").is_dir()
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(UsageError):
        cc.choose(str(blocker / "cache"), False, "0.4.30", "0.4.30", "cpu", env, unavailable="no")


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
def probe_runs(tmp_path: Path, factors, stale_key: bool = False, only: str = ""):
    """One fresh pytest run of the probe per factor, all on one cache folder: (exit status, the
    probe's log line, the end of pytest's output) of each."""
    cache, results = tmp_path / "cache", []
    for i, factor in enumerate(factors):
        log = tmp_path / f"log-{i}"
        env = {"PROBE_LOG": str(log), "PROBE_FACTOR": str(factor), "PROBE_STALE_KEY": "1" if stale_key else None}
        done = run_pytest(["-q", PROBE + only, "--devices", "2", "--compilation-cache", str(cache)],
                          env=env, timeout=300)
        results.append((done.returncode, log.read_text().strip() if log.exists() else "", done.stdout[-3000:]))
    return results


def cache_in_use() -> bool:
    from conformance.jaxside import compat

    return compat.persistent_cache_available("cpu")


def test_a_run_is_served_what_an_earlier_one_compiled_and_never_a_stale_program(tmp_path):
    """Run 1 compiles x * 2 and a program with a donated input; run 2 is served both from the cache
    and gets the right values; run 3 (x * 3) gets its own program, right. Where compat says this JAX
    cannot cache on CPU, nothing is served and every value is right."""
    runs = probe_runs(tmp_path, [2, 2, 3])
    assert [rc for rc, *_ in runs] == [0, 0, 0], runs
    n = int(cache_in_use())
    assert [log for _, log, _ in runs] == ["factor 2.0 served 0\ndonated served 0",
                                           f"factor 2.0 served {n}\ndonated served {n}",
                                           f"factor 3.0 served 0\ndonated served {n}"], runs


def test_a_stale_executable_for_a_changed_program_is_caught(tmp_path):
    """Meta-test: with a planted fault that gives every program one cache key, run 2 is served
    run 1's x * 2 for x * 3, and the probe fails, saying so (the probe's x * k program alone: with one
    key, a run's second program would be served its first)."""
    if not cache_in_use():
        pytest.skip("this JAX's persistent cache is not used on CPU (compat.PERSISTENT_CACHE_ON_CPU): no stale "
                    "executable can be served")
    runs = probe_runs(tmp_path, [2, 3], stale_key=True, only="::test_the_program_asked_for_runs")
    assert runs[0][0] == 0, runs
    assert runs[1][0] == 1 and runs[1][1].startswith("factor 3.0 served 1"), runs
    assert "but should be x0 * 3.0" in runs[1][2], runs


# --- counting programs -------------------------------------------------------------------------------
def test_a_ledger_counts_requests_compilations_served_and_repeats():
    """Each program asked for counts once; one asked for before counts as repeated, naming the
    property that asked first; XLA's compilations are the compile events the cache did not serve."""
    from conformance.jaxside import compat
    from conformance.runner.compilations import CompileLedger, Compilations

    ledger = CompileLedger()
    ledger.asking = "suites/test_a.py::one"
    ledger.on_request("jit_f", "k1")
    ledger.on_duration(compat.BACKEND_COMPILE_EVENT, 0.5)
    start = ledger.snapshot()
    ledger.asking = "suites/test_a.py::two"
    for name, key in (("jit_g", "k2"), ("jit_f", "k1"), ("jit_g", "k2")):
        ledger.on_request(name, key)
        ledger.on_duration(compat.BACKEND_COMPILE_EVENT, 0.25)
    ledger.on_event(compat.PERSISTENT_CACHE_HIT_EVENT)
    ledger.on_duration("/jax/some/other/event", 9.0)
    assert start == Compilations(1, 1, 0.5, 0, 0, ())
    assert ledger.snapshot().since(start) == Compilations(
        programs=3, compilations=2, compile_seconds=0.75, served=1, duplicates=2,
        repeated=(("jit_f", "suites/test_a.py::one"), ("jit_g", "suites/test_a.py::two")))


def test_what_a_property_leaves_is_frozen_until_a_release_collects_it():
    """After a property, what it left alive is frozen out of the collector's walks; a release
    unfreezes it, so that garbage among it is collected, and clears JAX's caches (a jitted function
    is traced again after it)."""
    import gc

    import jax
    from conformance.runner import compilations

    traced = []
    f = jax.jit(lambda x: traced.append(1) or x + 1)
    f(1)
    compilations.settle()
    try:
        assert gc.get_freeze_count() > 0
        compilations.release_compiled_programs()
        assert gc.get_freeze_count() == 0
        f(1)
        assert len(traced) == 2, traced
    finally:
        gc.unfreeze()


def test_a_program_is_its_module_and_its_devices(monkeypatch):
    """compat.program_key: one function lowered twice gives one key; another function, or the same
    module on other devices, another; and the watch sees every executable JAX asks for."""
    import jax
    import numpy as np

    from conformance.jaxside import compat

    x = np.ones(4, np.float32)
    module = jax.jit(lambda a: a * 2).lower(x).compiler_ir("stablehlo")
    again = jax.jit(lambda a: a * 2).lower(x).compiler_ir("stablehlo")
    other = jax.jit(lambda a: a * 3).lower(x).compiler_ir("stablehlo")
    devices = np.array(jax.devices()[:1])
    assert compat.program_key(module, devices) == compat.program_key(again, devices)
    assert compat.program_key(module, devices) != compat.program_key(other, devices)
    if len(jax.devices()) > 1:
        assert compat.program_key(module, devices) != compat.program_key(module, np.array(jax.devices()[1:2]))

    from jax._src import compiler
    monkeypatch.setattr(compiler, "compile_or_get_cached", compiler.compile_or_get_cached)  # undone after
    seen = []
    assert compat.watch_compile_requests(lambda name, key: seen.append((name, key)))
    f = jax.jit(lambda a: a - 1.5)
    f(x), f(x + 1)  # the second call is served by JAX's in-memory cache: no request
    jax.jit(lambda a: a - 1.5)(x)  # a new function object, the same program: asked for again
    assert len(seen) == 2 and seen[0] == seen[1] \
        and seen[0][0].startswith("jit__lambda"), seen  # (0.4.30: jit__lambda_)
