"""The harness: platform and device count, Hypothesis profiles and seed, markers, the report
header, and known deviations. Every pytest process (xdist workers included) runs this before JAX
starts its backend.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import Phase, settings

from conformance import harness

ROOT = Path(__file__).parent
DEVIATIONS_FILE = ROOT / "suites" / "known_deviations.toml"

# One marker per suite area; every test under suites/ carries exactly one.
AREAS = {
    "congruence": "a sharding is accepted exactly when every tiled dimension divides",
    "named_sharding": "NamedSharding / Mesh / PartitionSpec layouts against the model",
    "device_put": "device_put round trips, shard placement, resharding, computation follows sharding",
    "positional_sharding": "PositionalSharding reshape/replicate, and its NamedSharding translation",
    "mesh": "create_device_mesh, make_mesh and Mesh against the model",
    "visualize": "visualize_array_sharding's pictures against the model's block grid",
    "pmap": "pmap in_axes/out_axes, static arguments, tracing and size errors against the model",
    "collectives": "psum and the other collectives under pmap and shard_map against the model",
    "sharding_invariance": "an operation catalogue on sharded inputs equals unsharded execution",
    "multiprocess": "arrays and collectives across processes (--processes N), against the model",
}

REPORT_DIR_ENV = "CONFORMANCE_REPORT_DIR"
PLAN = pytest.StashKey()
DEVIATIONS = pytest.StashKey()  # the known deviations in effect for the installed JAX

# Profiles: a quick default for every change, and nightly with 10x the examples. Compilation
# dominates, so timing deadlines would only measure the compiler: they are off.
settings.register_profile("default", max_examples=100, deadline=None, print_blob=True)
settings.register_profile("nightly", max_examples=1000, deadline=None, print_blob=True)
# The default profile without shrinking: what tests.killmap uses to find every property a fault
# kills (a property fails or not the same way; shrinking only costs time, minutes per fault).
settings.register_profile("default-no-shrink", settings.get_profile("default"),
                          phases=[Phase.explicit, Phase.reuse, Phase.generate])
settings.load_profile("default")


def pytest_addoption(parser):
    group = parser.getgroup("jax conformance")
    group.addoption("--devices", default=None, metavar="N",
                    help=f"CPU devices to force (default ${harness.DEVICES_ENV} or "
                         f"{harness.DEFAULT_CPU_DEVICES}); not allowed on GPU/TPU, which use the "
                         f"devices present")
    group.addoption("--backend", default=None, metavar="PLATFORM",
                    help="JAX platform to test: cpu (default), cuda, rocm, tpu; sets JAX_PLATFORMS")
    group.addoption("--x64", action="store_true", default=False,
                    help="enable 64-bit types (jax_enable_x64); adds int64/float64/... to the dtypes")
    group.addoption("--processes", default=None, metavar="N",
                    help="run the multi-process suite over N local processes (each with --devices "
                         "CPU devices), coordinated by jax.distributed on 127.0.0.1; 'platform' "
                         "when a pod or cluster launcher started this command on every host")
    group.addoption("--report-dir", default=None, metavar="DIR",
                    help="where a run of suites/ writes report.json and report.html (default "
                         f"${REPORT_DIR_ENV} or reports/runs/<time>-jax-<version>-<backend>)")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    for name, doc in AREAS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")
    from conformance import multiprocess

    role = multiprocess.role_from_env(config.getoption("--processes"))
    try:
        plan = harness.plan_devices(config.getoption("--devices"), config.getoption("--backend"),
                                    os.environ)
        os.environ.update(harness.environment_for(plan, os.environ))
        if config.getoption("--processes") and role is None:  # (a number: start the copies here)
            launch_processes(config, plan)  # ends this pytest: the copies run the tests
        x64 = config.getoption("--x64") or os.environ.get("JAX_ENABLE_X64", "").lower() in ("1", "true")
        if x64:
            os.environ["JAX_ENABLE_X64"] = "1"
        if role is not None:
            try:
                role = multiprocess.initialize(role)  # (process id, count) from here on
            except multiprocess.CoordinatorError as e:
                raise harness.UsageError(str(e)) from None
        harness.start_backend(plan, x64)
        from conformance import compat  # imports JAX: only once the backend is set up

        compat.compile_counter()  # counts compilations per property for the run report

        deviations = [d for d in harness.load_deviations(DEVIATIONS_FILE) if compat.version_in(d.jax)]
    except harness.UsageError as e:
        raise pytest.UsageError(str(e)) from None
    seed = harness.choose_seed(config.getoption("hypothesis_seed", None), os.environ)
    os.environ[harness.SEED_ENV] = seed
    config.option.hypothesis_seed = seed  # read by Hypothesis' own plugin, which runs after us
    config.stash[PLAN] = plan
    config.stash[DEVIATIONS] = deviations
    harness.ACTIVE_DEVIATIONS[:] = deviations
    if role is not None and role[0] > 0:
        pytest.exit(f"process {role[0]}: followed the leader's steps",
                    returncode=multiprocess.follow(role[0]))
    if role is not None:
        multiprocess.become_leader(role[1], chosen_report_dir(config))
    if not hasattr(config, "workerinput"):  # the controller (or the only process) writes the report
        config.pluginmanager.register(report_writer(config), "conformance-report-writer")


def launch_processes(config, plan) -> None:
    """``--processes N``: start N copies of this command (run reports and the followers' logs in
    one run folder) and end with the leader's exit status. Where this JAX cannot run several
    processes on CPU, go on in this one process: the multiprocess suite skips, naming the version."""
    import jax

    from conformance import compat, multiprocess

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
        # one process runs the multiprocess suite, which skips saying which JAX it needs
        multiprocess.REQUESTED_BUT_UNSUPPORTED = compat.MULTIPROCESS_CPU_REASON
        print(f"not launching {count} processes: {compat.MULTIPROCESS_CPU_REASON}", flush=True)
        return
    from reports.plugin import default_run_dir
    run_dir = chosen_report_dir(config) or default_run_dir(ROOT, jax.__version__, plan.platform)
    seed = harness.choose_seed(config.getoption("hypothesis_seed", None), os.environ)
    env = dict(os.environ, **{REPORT_DIR_ENV: str(run_dir.resolve()), harness.SEED_ENV: seed})
    print(f"launching {count} processes x {plan.forced} devices; run folder {run_dir}", flush=True)
    try:
        rc = multiprocess.launch(count, sys.argv, run_dir.resolve(), env=env)
    except multiprocess.CoordinatorError as e:
        raise pytest.UsageError(str(e)) from None
    pytest.exit(f"{count} processes ended", returncode=rc)


def chosen_report_dir(config):
    """The run folder asked for (--report-dir, else $CONFORMANCE_REPORT_DIR), or None."""
    chosen = config.getoption("--report-dir") or os.environ.get(REPORT_DIR_ENV)
    return Path(chosen) if chosen else None


def profile_name(config) -> str:
    return settings.get_current_profile_name() if hasattr(settings, "get_current_profile_name") \
        else config.getoption("hypothesis_profile") or "default"


def report_writer(config):
    """The run report's writer (its environment is read when the session starts)."""
    import jax

    from reports.plugin import ReportWriter, default_run_dir, environment

    run_dir = chosen_report_dir(config) or default_run_dir(ROOT, jax.__version__, jax.default_backend())

    writer = ReportWriter(run_dir, lambda: environment(
        config, config.option.hypothesis_seed, profile_name(config), settings().max_examples,
        len(config.stash[DEVIATIONS])))
    from conformance import multiprocess
    writer.write_on_setup = multiprocess.leader() is not None
    return writer


def pytest_sessionfinish(session, exitstatus):
    from conformance import multiprocess

    if multiprocess.leader() is not None:
        multiprocess.leader().stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Count the JAX compilations a property's run caused (for the run report and the benchmark)."""
    if not item.nodeid.startswith("suites/"):
        yield
        return
    from conformance import compat
    before = compat.compile_counter().snapshot()
    yield
    after = compat.compile_counter().snapshot()
    item.user_properties.append(("compilations", (after[0] - before[0], after[1] - before[1])))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Hand the run report what only the process that ran the test knows (examples, finding,
    reproduction); xdist carries it to the controller."""
    outcome = yield
    if item.nodeid.startswith("suites/"):
        from reports.plugin import attach_details
        attach_details(item, call, outcome.get_result(), AREAS)


def pytest_report_header(config):
    import hypothesis
    import jax
    import numpy as np

    from conformance import compat

    plan = config.stash[PLAN]
    devices = jax.devices()
    profile = profile_name(config)
    forced = f"forced by {plan.source}" if plan.forced is not None else plan.source
    return [
        f"jax {compat.JAX_VERSION}, jaxlib {compat.JAXLIB_VERSION}, numpy {np.__version__}, "
        f"hypothesis {hypothesis.__version__}",
        f"backend: {jax.default_backend()} (JAX_PLATFORMS={os.environ.get('JAX_PLATFORMS')}), "
        f"devices: {len(devices)} x {devices[0].device_kind} ({forced}), "
        f"processes: {jax.process_count()}, x64: {'on' if compat.x64_enabled() else 'off'}",
        f"hypothesis profile: {profile} (max_examples={settings().max_examples}), "
        f"seed: {config.option.hypothesis_seed} (rerun with --hypothesis-seed="
        f"{config.option.hypothesis_seed})",
        f"known deviations in effect for this JAX: {len(config.stash[DEVIATIONS])} "
        f"(from {DEVIATIONS_FILE.name})",
    ]


# The order suites run in: cheap checks that a broken JAX fails first (layouts and their
# congruence, meshes, device_put), then the costlier ones (collectives and pmap compile per
# example, the operation catalogue most of all). Measured by python -m tests.killmap: the median
# time to the first failure with -x across the fault catalogue.
SUITE_ORDER = ("congruence", "named_sharding", "mesh", "device_put", "visualize", "positional_sharding",
               "collectives", "pmap", "sharding_invariance", "multiprocess")


def suite_rank(item) -> int:
    """Where an item's suite comes in SUITE_ORDER (tests outside suites/ keep their place first)."""
    stem = Path(str(item.path)).stem.removeprefix("test_")
    if "suites/" not in item.nodeid:
        return -1
    return SUITE_ORDER.index(stem) if stem in SUITE_ORDER else len(SUITE_ORDER)


def pytest_collection_modifyitems(config, items):
    from conformance import multiprocess

    items.sort(key=suite_rank)  # stable: tests keep their order within a suite

    if multiprocess.leader() is not None or multiprocess.REQUESTED_BUT_UNSUPPORTED:
        # a multi-process run (or one asked for): only the multiprocess suite
        kept = [i for i in items if i.get_closest_marker("multiprocess") or "suites/" not in i.nodeid]
        dropped = [i for i in items if i not in kept]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
    for item in items:
        path = Path(str(item.path)).resolve()
        if (ROOT / "suites") in path.parents:
            areas = [m.name for m in item.iter_markers() if m.name in AREAS]
            if len(areas) != 1:
                raise pytest.UsageError(f"{item.nodeid} must carry exactly one suite-area marker "
                                        f"({', '.join(AREAS)}), has {areas or 'none'}")
        for deviation in config.stash[DEVIATIONS]:
            if deviation.matches(item.nodeid):
                seen = "" if deviation.strict else f" (random property; reproduced by {deviation.reproduced_by})"
                item.add_marker(pytest.mark.xfail(
                    strict=deviation.strict,
                    reason=f"known deviation (JAX {deviation.jax}): {deviation.reason}{seen}"))
