"""The runner's part that needs JAX: imported (and registered as a plugin) by ``plugin`` once JAX's
environment is set. ``start`` launches or joins a multi-process run, starts the backend as planned
(``start_backend``), counts compilations and loads the known deviations; the hooks print the
header, skip tests whose API this JAX lacks, and give the suites an isolated interpreter.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path

import hypothesis
import jax
import numpy as np
import pytest

from conformance.checking import isolation
from conformance.jaxside import compat, multicontroller

from . import api_calls, areas, compilation_cache, devices, environment, profiles, run_folder, state
from .compilations import release_if_holding_too_much, settle, start_counting
from .deviations import DEVIATIONS_FILE, DeviationsInEffect, read_deviation_file
from .multiprocess import launcher, protocol, steps



def start(config, plan: devices.DevicePlan, x64: bool, jax_was_imported: bool) -> None:
    """After planning: launch the copies of a multi-process run (this process then ends) or join
    one, start the backend, then hand this module's hooks to pytest."""
    role = launcher.role_from_env(config.getoption("--processes"))
    try:
        if config.getoption("--processes") and role is None:  # (a number: start the copies here)
            launch_processes(config, plan)  # ends this pytest, unless this JAX cannot
        if role is not None:
            role = join_the_run(role)  # (process id, count) from here on
        start_backend(plan, x64, jax_was_imported)
        config.stash[state.CACHE] = use_compilation_cache(config)
    except devices.UsageError as e:
        raise pytest.UsageError(str(e)) from None
    config.stash[state.JAX_VERSION] = jax.__version__
    config.stash[state.COMPILES] = start_counting()
    config.stash[state.API_RECORDER] = start_recording_api_calls()
    config.stash[state.DEVIATIONS] = deviations_in_effect(config)
    share_the_seed(config)
    if role is not None:
        take_part(config, *role)  # a follower ends here; the leader goes on
    config.pluginmanager.register(sys.modules[__name__], "conformance-runner-session")


def start_recording_api_calls():
    """The recorder of the sharding API's calls (``api_calls``), installed over the entries of the
    installed JAX's stored inventory (taken now where none is stored); it counts only while a
    suite's test runs."""
    from conformance.jaxside import inventory

    stored = inventory.path_for(jax.__version__)
    entries = json.loads(stored.read_text(encoding="utf-8"))["entries"] if stored.exists() else inventory.take()
    recorder = api_calls.Recorder()
    recorder.install(entries)
    compat.hide_from_jax_tracebacks(api_calls.__file__)  # (an error names the caller's line, not the recorder's)
    return recorder


def deviations_file(config) -> Path:
    """The suite's known-deviation list: ``--known-deviations FILE``, else suites/known_deviations.toml."""
    chosen = config.getoption("--known-deviations")
    return DEVIATIONS_FILE if chosen is None else Path(chosen)


def deviations_in_effect(config) -> DeviationsInEffect:
    """The suite's known deviations and those of every ``--deviations FILE``, for this JAX and this
    backend (an entry with ``backend`` applies only there)."""
    try:
        root = Path(config.rootpath)
        files = [read_deviation_file(deviations_file(config), "suite", "--known-deviations", root)]
        files += [read_deviation_file(Path(p), "user", "--deviations", root) for p in config.getoption("--deviations")]
    except devices.UsageError as e:
        raise pytest.UsageError(str(e)) from None
    present = jax.devices()
    version = getattr(getattr(present[0], "client", None), "platform_version", "") or ""
    return DeviationsInEffect.select(files, compat.version_in, present[0].platform,
                                     present[0].device_kind, run_folder.ROOT, version, jax.process_count())


def start_backend(plan: devices.DevicePlan, x64: bool, jax_was_imported: bool) -> None:
    """Start the planned backend and check it has the planned devices. ``jax_was_imported``: JAX
    was imported before the environment was set, so it read another one.

    Raises UsageError when the backend was already started by something else with another device
    count or platform, or does not come up.
    """
    if jax_was_imported and not compat.backend_initialized():
        # JAX read its environment before we set it: tell its config directly.
        jax.config.update("jax_platforms", plan.platforms)
        if plan.forced is not None:
            compat.set_cpu_device_count(plan.forced)
    if jax_was_imported and os.environ.get("JAX_TRACEBACK_FILTERING") == "off":
        # (a symptom naming the function that raised needs JAX's own frames: met with a plugin that
        # imported JAX first, where three strict reproductions were raised "in apply_primitive")
        jax.config.update("jax_traceback_filtering", "off")
    if x64:
        jax.config.update("jax_enable_x64", True)
    try:
        present = jax.devices()
    except Exception as e:  # noqa: BLE001 - whatever JAX raises (an AssertionError for a missing CUDA plugin)
        raise devices.UsageError(f"the {plan.platform!r} backend did not start: {backend_failure(e)}") from None
    platform = present[0].platform
    gpu = ("gpu", "cuda", "rocm")
    if platform != plan.platform and not (plan.platform in gpu and platform in gpu):
        raise devices.UsageError(f"asked for the {plan.platform!r} backend, but JAX started {platform!r} "
                                 f"(the backend was already started before the harness ran)")
    if plan.forced is not None and jax.local_device_count() != plan.forced:
        raise devices.UsageError(
            f"{plan.source} asked for {plan.forced} CPU devices, but the JAX backend has "
            f"{jax.local_device_count()}: it was started before the harness could set the device "
            f"count (something imported JAX and used it first)")


def use_compilation_cache(config) -> compilation_cache.CacheChoice:
    """The persistent compilation cache the options ask for, in use from now on (before the first
    compilation); none where this JAX cannot serve programs on this backend (said in the header)."""
    platform = jax.devices()[0].platform
    unavailable = None if compat.persistent_cache_available(platform) else compat.PERSISTENT_CACHE_ON_CPU_REASON
    choice = compilation_cache.choose(config.getoption("--compilation-cache"),
                                      config.getoption("--no-compilation-cache"), jax.__version__,
                                      str(compat.JAXLIB_VERSION), platform, unavailable=unavailable)
    if choice.folder is None:
        compat.no_persistent_cache()
        return choice
    compat.use_persistent_cache(str(choice.folder))
    return choice


def backend_failure(error: Exception) -> str:
    """Why JAX could not start a backend, on one line: its message, or (an exception without one,
    such as the AssertionError JAX raises when no plugin provides the platform) what that means."""
    message = " ".join(str(error).split())
    if message:
        return message
    return (f"JAX raised {type(error).__name__} without a message: no installed JAX plugin provides "
            f"this platform here (for CUDA: pip install 'jax[cuda12]'; to list what is present: "
            f"JAX_PLATFORMS='' python -c 'import jax; print(jax.devices())')")


def share_the_seed(config) -> None:
    """One seed for the controller and every worker, printed in the header."""
    seed = profiles.choose_seed(config.getoption("hypothesis_seed", None), os.environ)
    os.environ[environment.SEED] = seed
    config.option.hypothesis_seed = seed  # read by Hypothesis' own plugin, which runs after us


def launch_processes(config, plan: devices.DevicePlan) -> None:
    """``--processes N``: start N copies of this command (run report and the followers' logs in one
    run folder) and end with the leader's exit status. Where this JAX cannot run several processes
    on CPU, go on in this one process: the multiprocess suite skips, naming the version."""
    try:
        count = int(config.getoption("--processes"))
    except ValueError:
        raise pytest.UsageError(f"--processes={config.getoption('--processes')!r} is not a number") from None
    if count < 1:
        raise pytest.UsageError(f"--processes={count}: at least one process is needed")
    if getattr(config.option, "numprocesses", None):
        raise pytest.UsageError("--processes and pytest-xdist's -n cannot be combined: the copies "
                                "must run the same tests in the same order")
    if plan.platform == "cpu" and not compat.MULTIPROCESS_CPU:
        config.stash[state.MULTIPROCESS_SKIP] = compat.MULTIPROCESS_CPU_REASON
        print(f"not launching {count} processes: {compat.MULTIPROCESS_CPU_REASON}", flush=True)
        return
    folder = (run_folder.chosen(config.getoption("--report-dir"))
              or run_folder.default(str(compat.JAX_VERSION), plan.platform)).resolve()
    seed = profiles.choose_seed(config.getoption("hypothesis_seed", None), os.environ)
    # (every copy must iterate sets and dicts of strings alike: their collection order and their
    # strategies' draws follow it; one hash seed for all, from the run's seed unless one is set)
    env = dict(os.environ, **{environment.REPORT_DIR: str(folder), environment.SEED: seed,
                              "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED") or str(int(seed) % 4294967296)})
    print(f"launching {count} processes x {plan.forced} devices; run folder {folder}", flush=True)
    try:
        rc = launcher.launch(count, sys.argv, folder, env, on_broken=lambda message:
                             config.hook.pytest_conformance_run_broken(run_folder=folder, message=message))
    except launcher.CoordinatorError as e:
        raise pytest.UsageError(str(e)) from None
    pytest.exit(f"{count} processes ended", returncode=rc)


def join_the_run(role) -> tuple:
    """``jax.distributed.initialize`` in a copy of a multi-process run: (process id, count)."""
    try:
        return protocol.initialize(role)
    except launcher.CoordinatorError as e:
        raise devices.UsageError(str(e)) from None


def take_part(config, process_id: int, count: int) -> None:
    """Every process of a multi-process run runs the whole session (multi-controller): the same
    tests, the same seed, each example's outcome agreed (``multicontroller``); without Hypothesis'
    example database, so the run is a function of its seed on every process."""
    exchange = multicontroller.Exchange(process_id, count, max(multicontroller.MIN_WAIT_S,
                                                               environment.step_timeout_s()))
    multicontroller.activate(exchange)
    agree_on_the_draws(config, exchange)
    config.stash[state.EXCHANGE] = exchange
    config.stash[state.LEADER] = protocol.Peers(exchange, steps.STEPS,
                                                run_folder.chosen(config.getoption("--report-dir"))
                                                if process_id == 0 else None)
    current = hypothesis.settings()
    hypothesis.settings.register_profile("multi-controller", current, database=None)
    hypothesis.settings.load_profile("multi-controller")


def agree_on_the_draws(config, exchange: multicontroller.Exchange) -> None:
    """Every process must draw the same examples in the same order: the run's seed is process 0's
    (the launcher's copies share one already; copies a pod or cluster started, ``--processes
    platform``, each chose their own unless ``--hypothesis-seed`` was given), and every process must
    iterate sets of strings alike, so each needs the same ``PYTHONHASHSEED``, which only the
    environment that starts Python can set: a usage error on every process where it differs or is
    unset."""
    answers = exchange.everyone("the run's seed and hash seed",
                                [str(config.option.hypothesis_seed), os.environ.get("PYTHONHASHSEED", "")])
    seed = answers[0][0]
    os.environ[environment.SEED] = seed
    config.option.hypothesis_seed = seed  # (Hypothesis' plugin reads it after us)
    hash_seeds = [hash_seed for _, hash_seed in answers]
    if len(set(hash_seeds)) > 1 or hash_seeds[0] in ("", "random"):
        shown = ", ".join(f"process {i}: {h or 'unset'}" for i, h in enumerate(hash_seeds))
        raise pytest.UsageError(
            f"every process of a multi-controller run must draw the same examples, so each needs the same "
            f"PYTHONHASHSEED ({shown}): start each with PYTHONHASHSEED=0 (any one value, the same on every "
            f"host; --processes N sets it for its copies)")


# --- hooks and fixtures (registered by ``start``) -------------------------------------------------
def pytest_configure(config):
    config.addinivalue_line("markers", f"{compat.REQUIRES_MARK}(name): skip where this JAX lacks the "
                                       "API (compat.requires)")
    config.addinivalue_line("markers", f"{compilation_cache.UNCACHED_MARK}: the property checks compilation "
                                       "itself and runs without the persistent compilation cache")


def pytest_report_header(config):
    plan = config.stash[state.PLAN]
    devices_present = jax.devices()
    return header_lines(
        jax=str(compat.JAX_VERSION), jaxlib=str(compat.JAXLIB_VERSION), numpy=np.__version__,
        hypothesis=hypothesis.__version__, backend=jax.default_backend(),
        platforms_env=os.environ.get("JAX_PLATFORMS"), device_count=len(devices_present),
        device_kind=devices_present[0].device_kind,
        devices_source=f"forced by {plan.source}" if plan.forced is not None else plan.source,
        processes=jax.process_count(), x64=compat.x64_enabled(), profile=profiles.profile_name(config),
        max_examples=profiles.max_examples(), seed=config.option.hypothesis_seed,
        deviations=config.stash[state.DEVIATIONS].header(), compilation_cache=config.stash[state.CACHE].describe(),
        last_words=os.environ.get(environment.LAST_WORDS, ""))


def header_lines(*, jax, jaxlib, numpy, hypothesis, backend, platforms_env, device_count, device_kind,
                 devices_source, processes, x64, profile, max_examples, seed, deviations,
                 compilation_cache, last_words) -> list:
    """The run's header: what it ran against, and where a crashed process leaves its last example
    and stack (``last_words``; the README shows one, checked by a self-test)."""
    return [
        f"jax {jax}, jaxlib {jaxlib}, numpy {numpy}, hypothesis {hypothesis}",
        f"backend: {backend} (JAX_PLATFORMS={platforms_env}), devices: {device_count} x {device_kind} "
        f"({devices_source}), processes: {processes}, x64: {'on' if x64 else 'off'}",
        f"hypothesis profile: {profile} (max_examples={max_examples}), seed: {seed} (rerun with "
        f"--hypothesis-seed={seed})",
        f"known deviations in effect for this JAX: {deviations}",
        f"compilation cache: {compilation_cache}",
        f"a crashed process's last example and stack: {last_words}/",
    ]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A test marked ``compat.requires(name)`` skips (``compat.feature_missing``) where this JAX
    lacks the API."""
    item.config.stash[state.COMPILES].asking = item.nodeid  # a repeated program names who asked first
    for mark in item.iter_markers(compat.REQUIRES_MARK):
        compat.feature(mark.args[0])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """In a multi-controller run, every process starts each test together and reaches the same
    outcome (else each fails with ``multicontroller.ProcessesDisagree``)."""
    exchange = state.exchange_of(item.config)
    if exchange is None:
        return (yield)
    multicontroller.started(exchange, item.session.items.index(item) + 1, item.nodeid)
    result, error = None, None
    try:
        try:
            result = yield
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # noqa: BLE001 - agreed on, then raised again by agree
            error = e
        multicontroller.agree(exchange, f"outcome of test {item.nodeid}", error)
        return result
    finally:
        exchange.leave()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """After a property (its fixtures torn down), let the compiled programs go if this process holds
    more than ``compilations.RELEASE_ABOVE_MIB`` (a serial run then stays under 2 GiB), and settle
    what is left (``compilations.settle``)."""
    if areas.in_suites(item.nodeid):
        release_if_holding_too_much()
        settle()


@pytest.fixture(autouse=True)
def uncached_when_marked(request):
    """A property marked ``uncached`` (it checks compilation itself) runs with no persistent
    compilation cache: no program it compiles is served from the cache or kept in it."""
    if request.node.get_closest_marker(compilation_cache.UNCACHED_MARK) is None or \
            request.config.stash[state.CACHE].folder is None:
        yield
        return
    with compat.persistent_cache_off():
        yield


ISOLATED_IN_A_MULTI_CONTROLLER_RUN = (
    "checks in an isolated interpreter, a one-process JAX: its script names the devices of every "
    "process of this multi-controller run, which that interpreter does not have")


class OneProcessOnly:
    """In a multi-controller run, what stands for an isolated interpreter: a property that uses it
    skips there, saying why (one that only might, such as an abort guard, runs on until it does)."""

    def __getattr__(self, name):
        if name.startswith("_"):  # (what printers and pytest look up: not a use)
            raise AttributeError(name)
        pytest.skip(ISOLATED_IN_A_MULTI_CONTROLLER_RUN)

    def __call__(self, *args, **kwargs):
        pytest.skip(ISOLATED_IN_A_MULTI_CONTROLLER_RUN)


@pytest.fixture(scope="session")
def warm_interpreter(pytestconfig):
    """An ``isolation.WarmInterpreter`` for the session (with this run's prelude), closed at its end."""
    if state.exchange_of(pytestconfig) is not None:
        yield OneProcessOnly()
        return
    interpreter = isolation.WarmInterpreter(prelude=pytestconfig.stash.get(state.ISOLATED_PRELUDE, ""))
    yield interpreter
    interpreter.close()


@pytest.fixture(scope="session")
def run_isolated(pytestconfig):
    """``isolation.run_isolated``, with the prelude this run adds to every isolated process, each a
    fork of the session's ``isolation.ForkServer`` (ended with the session)."""
    if state.exchange_of(pytestconfig) is not None:
        yield OneProcessOnly()
        return
    server = isolation.ForkServer()
    yield functools.partial(isolation.run_isolated, prelude=pytestconfig.stash.get(state.ISOLATED_PRELUDE, ""),
                            server=server)
    server.close()
