"""The runner's pytest plugin (listed by the root ``conftest.py``, which also declares the options).

Every pytest process (xdist workers and multi-process copies included) configures itself here
before JAX starts its backend: it plans the devices and sets JAX's environment; then ``session``
(which imports JAX, so only now) starts a multi-process run or joins one, starts the backend and
loads the known deviations. This plugin then orders and marks the suites' tests, counts
compilations, and hands the suites the fixtures that need no JAX.

State lives in pytest's stash (keys in ``state``), never in module globals.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys

import pytest

from . import api_calls, areas, devices, environment, hookspecs, last_words, profiles, run_folder, state
from .deviations import (DeviationsInEffect, Excuses, KnownDeviationSeen, is_unexpected_pass, strict_verdict,
                         unknown_cases)
from .state import leader_of
from .tally import Tally


def pytest_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    for name, doc in areas.AREAS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")
    jax_was_imported = "jax" in sys.modules  # by something before us: JAX read its environment
    try:
        profiles.check_profile_asked(config)
        check_the_report_dir(config)
        plan = plan_the_devices(config)
        x64 = x64_asked(config)
    except devices.UsageError as e:
        raise pytest.UsageError(str(e)) from None
    if not os.environ.get(environment.LAST_WORDS):  # (before xdist starts workers: they inherit its name)
        config.stash[state.LAST_WORDS] = last_words.make_folder()
    from . import session  # imports JAX: only now that its environment is set

    session.start(config, plan, x64, jax_was_imported)


def plan_the_devices(config) -> devices.DevicePlan:
    """The platform and device count, set in the environment for JAX and every worker."""
    plan = devices.plan_devices(config.getoption("--devices"), config.getoption("--backend"), os.environ)
    os.environ.update(devices.environment_for(plan, os.environ))
    config.stash[state.PLAN] = plan
    return plan


def check_the_report_dir(config) -> None:
    """A run folder asked for (``--report-dir`` or its environment variable) must be a folder this
    process can write; it is made now, except for a run that writes no report (``--co``)."""
    folder = run_folder.chosen(config.getoption("--report-dir"))
    if folder is not None:
        origin = "--report-dir" if config.getoption("--report-dir") else f"${environment.REPORT_DIR}"
        run_folder.check_usable(folder, origin, create=not config.option.collectonly)


def x64_asked(config) -> bool:
    x64 = config.getoption("--x64") or os.environ.get("JAX_ENABLE_X64", "").lower() in ("1", "true")
    if x64:
        os.environ["JAX_ENABLE_X64"] = "1"
    return x64


def pytest_sessionfinish(session, exitstatus):
    leader = leader_of(session.config)
    if leader is not None:
        leader.stop()


# --- a crash's last words (last_words) ------------------------------------------------------
@pytest.hookimpl(trylast=True)  # after pytest's faulthandler plugin set its own
def pytest_sessionstart(session):
    """This process keeps the example it runs (each Case's script) and, in a worker, its stack
    where it dies, for the report of a test it crashes in."""
    from conformance.checking import case

    witness = last_words.Witness(last_words.make_folder(), last_words.process_name())
    if hasattr(session.config, "workerinput"):  # (the controller's stack goes to the terminal, as pytest's)
        witness.watch_for_a_crash()
    case.watch_cases(witness.saw)
    session.config.stash[state.WITNESS] = witness


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    witness = item.config.stash.get(state.WITNESS, None)
    if witness is not None:
        witness.started(item.nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    """pytest-xdist's report of a test a worker crashed in says what the worker was running and
    where it died (its last words)."""
    said = last_words.read(last_words.make_folder(), report.node.gateway.id)
    if said:
        report.longrepr = f"{report.longrepr}\n\n{said}"


def pytest_unconfigure(config):
    witness = config.stash.get(state.WITNESS, None)
    if witness is not None:
        witness.close()
    folder = config.stash.get(state.LAST_WORDS, None)
    if folder is not None:  # (made here, and the run ended: nothing in it is a crash's any more)
        last_words.remove(folder)


# --- collection -----------------------------------------------------------------------------
def skip_suites_not_yet_multi_controller(items, processes: int) -> None:
    """In a multi-controller run of ``processes`` processes, the properties of a suite that
    ``multi_controller.toml`` says does not run there yet skip, with its reason."""
    from . import multi_controller

    readiness = multi_controller.load()
    for item in items:
        if areas.in_suites(item.nodeid):
            suite = item.nodeid.split("::")[0].rsplit("/", 1)[-1][:-3]
            why = multi_controller.skip_reason(suite, readiness, item.name, processes)
            if why:
                item.add_marker(pytest.mark.skip(reason=why))


def agree_on_every_example(config, items) -> None:
    """In a multi-controller run, each Hypothesis example's outcome is agreed by every process
    before Hypothesis goes on (``multicontroller.agreeing``)."""
    from conformance.jaxside import multicontroller

    exchange = state.exchange_of(config)
    for item in items:
        hypothesis_of = getattr(getattr(item, "obj", None), "hypothesis", None)
        if hypothesis_of is None or getattr(hypothesis_of.inner_test, "agreeing", False):
            continue
        hypothesis_of.inner_test = multicontroller.agreeing(exchange, hypothesis_of.inner_test)
        hypothesis_of.inner_test.agreeing = True


def refuse_unknown_cases(config, nodeids) -> None:
    """A usage error (exit status 4) when a deviation entry names a parametrized case the suites
    do not collect; judged on whole files only (a node id collects only the cases it names), and
    not under xdist, whose controller sees only what is left after -k and -m."""
    if any("::" in arg for arg in config.args):
        return
    problems = unknown_cases(config.stash[state.DEVIATIONS].read, [n for n in nodeids if areas.in_suites(n)])
    if problems:
        raise pytest.UsageError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect: the cases an entry names are judged against all
def pytest_collection_modifyitems(config, items):
    if not hasattr(config, "workerinput"):
        refuse_unknown_cases(config, [i.nodeid for i in items])
    items.sort(key=areas.suite_rank)  # stable: tests keep their order within a suite
    if state.exchange_of(config) is not None:
        agree_on_every_example(config, items)
        skip_suites_not_yet_multi_controller(items, state.exchange_of(config).count)
    if config.stash.get(state.MULTIPROCESS_SKIP, None):
        # a multi-process run asked for where this JAX cannot: only the multiprocess suite (it skips)
        kept = [i for i in items if i.get_closest_marker("multiprocess") or not areas.in_suites(i.nodeid)]
        dropped = [i for i in items if i not in kept]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
    deviations = config.stash[state.DEVIATIONS]
    for item in items:
        if not areas.in_suites(item.nodeid):
            continue
        named = [m.name for m in item.iter_markers() if m.name in areas.AREAS]
        if len(named) != 1:
            raise pytest.UsageError(f"{item.nodeid} must carry exactly one suite-area marker "
                                    f"({', '.join(areas.AREAS)}), has {named or 'none'}")
        entries = deviations.all_for_test(item.nodeid)
        if not entries:
            continue
        item.stash[state.ITEM_DEVIATION] = entries[0]
        strict, random = tuple(e for e in entries if e.strict), tuple(e for e in entries if not e.strict)
        if strict and random:
            raise pytest.UsageError(f"{item.nodeid}: known deviations {strict[0].where} (strict) and "
                                    f"{random[0].where} (random) name one test: a test is deterministic or not")
        if strict:  # only a failure that shows an entry's symptom satisfies the xfail
            item.stash[state.ITEM_STRICT] = strict
            item.add_marker(pytest.mark.xfail(strict=True, raises=KnownDeviationSeen,
                                              reason=" | ".join(e.xfail_reason for e in strict)))
        else:  # the property excuses the examples that meet an entry's trigger and symptom
            item.stash[state.ITEM_RANDOM] = random


# --- running --------------------------------------------------------------------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Count the programs a property's run asked JAX for (for the run report and the benchmark) and
    the sharding API's calls it made (``api_calls``: the run's API coverage);
    a strict known deviation's test is xfailed only by a failure that shows an entry's symptom; a
    random property's excused examples go to the report."""
    ledger = item.config.stash.get(state.COMPILES, None) if areas.in_suites(item.nodeid) else None
    before = ledger.snapshot() if ledger else None
    recorder = item.config.stash.get(state.API_RECORDER, None) if areas.in_suites(item.nodeid) else None
    calls_before = recorder.calls.copy() if recorder else None
    if recorder:
        recorder.active = True
    try:
        result = yield
    except Exception as failure:  # pytest's outcomes (skip, xfail) are BaseExceptions
        strict = item.stash.get(state.ITEM_STRICT, ())
        if not strict:
            raise
        verdict = strict_verdict(strict, failure)
        if verdict is failure:
            raise
        # The xfail shows its reason, never a traceback; pytest would still format the whole chain
        # (into JAX's sources, parsing each file): a tenth of a run's time. The failure stays on
        # the verdict for a reader.
        verdict.failure = failure
        raise verdict.with_traceback(None) from None
    finally:
        if recorder:
            recorder.active = False
            item.user_properties.append((state.API_CALLS, plain(api_calls.as_rows(recorder.since(calls_before)))))
        if ledger is not None:
            item.user_properties.append((state.COMPILATIONS,
                                         plain(dataclasses.asdict(ledger.snapshot().since(before)))))
        excuses = item.stash.get(state.EXCUSES, None)
        if excuses is not None and excuses.excused:
            item.user_properties.append((state.EXCUSED, plain(excuses.report())))
        if excuses is not None and excuses.refused:
            item.user_properties.append((state.REFUSALS, plain(excuses.refusals())))
        counted = item.stash.get(state.TALLY, None)
        if counted:
            item.user_properties.append((state.SHARDED_RUNS, plain(counted.rows())))
    return result


def plain(value):
    """``value`` as JSON's plain types (a str subclass such as a Way becomes a str, a tuple a list):
    pytest-xdist sends a report's user_properties between processes with execnet, which refuses any
    other type (met in the release matrix with -n 2 on 0.9.0 and 0.9.0.1, 2026-12-07: "DumpError:
    can't serialize <enum 'Way'>" from a failure's details, its check a Way, which ended the run and
    hid the failure)."""
    return json.loads(json.dumps(value, default=str))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A strict known deviation that passed says so: fixed in this JAX, narrow the entry's range."""
    report = yield
    deviation = item.stash.get(state.ITEM_DEVIATION, None)
    if is_unexpected_pass(deviation, call, report):
        report.longrepr = deviation.did_not_reproduce(item.config.stash[state.JAX_VERSION])
    return report


# --- fixtures -------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def known_deviations(pytestconfig) -> DeviationsInEffect:
    """The known deviations in effect for the installed JAX."""
    return pytestconfig.stash[state.DEVIATIONS]


@pytest.fixture
def excuses(request) -> Excuses:
    """This random property's known deviations on the installed JAX (maybe none): around each way an
    example runs, they excuse the failures that meet an entry's trigger and symptom."""
    found = Excuses(request.node.stash.get(state.ITEM_RANDOM, ()))
    request.node.stash[state.EXCUSES] = found
    return found


@pytest.fixture
def tally(request) -> Tally:
    """What this property ran, per function and way or context, and how much of it sharded
    (``conformance/runner/tally.py``): in the run report and on its page."""
    found = Tally()
    request.node.stash[state.TALLY] = found
    return found


@pytest.fixture(scope="session")
def multiprocess_leader(pytestconfig):
    """The leader of this multi-process run; the test skips, saying how to run it, elsewhere."""
    leader = leader_of(pytestconfig)
    if leader is None:
        pytest.skip(pytestconfig.stash.get(state.MULTIPROCESS_SKIP, None) or
                    "multi-process properties run with --processes N "
                    "(e.g. pytest suites/ --processes 2 --devices 4)")
    return leader
