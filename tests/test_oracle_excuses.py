"""The oracle is never excused, by construction: a property runs its unsharded run and its
comparison with numpy inside ``case.oracle()``, which tags every failure raised there, outside
every excuse context (``excuses.way``); a tagged failure is never excused, even where an entry's
trigger holds and its symptom matches; an oracle inside an excuse context (or a check named as the
oracle's, "unsharded ..."/"(0) ...") is refused outright. Then, per restructured property, that its
oracle checks (and only they) run tagged, and, end to end, that test_autodiff's property fails with a
planted wrong unsharded gradient (the fault unsharded-gradient-halved) under an entry that would
excuse the same wrongness in a sharded check.
"""

import json
import re

import numpy as np
import pytest

from conformance.checking.case import (ORACLE_NAMES, Case, ConformanceFailure, OracleInsideAnExcuse,
                                       OracleOnDemand, excusable, is_oracle_failure, oracle_is_running)
from conformance.checking.symptoms import Seen, Symptom
from conformance.runner.deviations import ORACLE_NOTE, Deviation, Excuses, KnownDeviationSeen, strict_verdict
from conformance.runner.pytest_process import run_pytest

AUTODIFF_PROPERTY = "suites/test_autodiff.py::test_derivatives_of_a_jitted_function_with_shardings"
AUTODIFF_REPRODUCTION = \
    "suites/test_autodiff.py::test_grad_of_a_jit_whose_out_shardings_split_what_its_in_shardings_replicate"
# What a sharded gradient twice the unsharded one shows: wrong values at a gradient's check, multiplied
SYMPTOM = {"wrong": "values", "at": "^(grad|value_and_grad)", "where": "multiplied_by_the_replica_count"}


def doubling_entry() -> Deviation:
    """A random entry of the autodiff property whose trigger holds for a grad of a jit whose output
    is cut, and whose symptom is a gradient's values twice what they should be."""
    return Deviation(AUTODIFF_PROPERTY, ">=0", "planted: the cotangent counted once per replica",
                     Symptom.parse(SYMPTOM), strict=False, reproduced_by=AUTODIFF_REPRODUCTION,
                     trigger="transposed_jit_with_a_cut_output")


def cut_grad_example():
    """grad of sin(x) * w jitted over a 2-device mesh, every spec cut over it (the entry's trigger
    holds); x is zero, so that the gradients are exactly w (of x) and 0 (of w)."""
    from conformance.jaxside import bridge
    from suites.test_autodiff import FUNCTIONS, JitExample
    w = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    return JitExample(FUNCTIONS[0], "grad", bridge.first_devices_mesh(("a", 2)), np.zeros_like(w), w, np.ones_like(w),
                      ("a",), ("a",), ("a",))


def failure_of(check) -> BaseException:
    """The exception ``check(case)`` raises on a Case."""
    with pytest.raises(Exception) as caught:
        check(Case("f(x)"))
    return caught.value


def in_the_oracle(check):
    """``check(case)`` run inside ``case.oracle()``."""
    def run(case):
        with case.oracle():
            check(case)
    return run


def raise_in(excuses, candidates, failure):
    """Raise ``failure`` inside ``excuses``' way for ``candidates``."""
    with excuses.way(candidates):
        raise failure


@pytest.fixture
def quiet_events(monkeypatch):
    """Hypothesis events (what Excuses counts) outside a Hypothesis test: dropped."""
    import hypothesis
    monkeypatch.setattr(hypothesis, "event", lambda *a, **k: None)


# --- the tag ------------------------------------------------------------------------------------
def test_every_failure_inside_the_oracle_is_tagged_and_none_outside():
    """A check's failure and a call's own exception raised inside case.oracle() are the oracle's;
    the same failure outside it is not; Seen reads the tag."""
    wrong = lambda c: c.same_bits("grad result 0", np.array([2.0]), np.array([1.0]))
    assert not is_oracle_failure(failure_of(wrong)) and not Seen.of(failure_of(wrong)).oracle
    tagged = failure_of(in_the_oracle(wrong))
    assert isinstance(tagged, ConformanceFailure) and is_oracle_failure(tagged) and Seen.of(tagged).oracle
    raw = failure_of(in_the_oracle(lambda c: {}["missing"]))
    assert isinstance(raw, KeyError) and is_oracle_failure(raw) and Seen.of(raw).oracle
    assert not oracle_is_running(), "the oracle ends with its block, failed or not"


def test_a_tagged_failure_is_not_excused_where_the_entry_would_excuse_it(quiet_events):
    """The same wrong gradient (twice the expected values, at a gradient's check, on an example
    the trigger holds for) is excused from a sharded check and not from an oracle check: the note
    says why; nothing more is counted."""
    excuses, example = Excuses([doubling_entry()]), cut_grad_example()
    wrong = lambda c: c.same_bits("grad result 0", np.array([2.0, 4.0]), np.array([1.0, 2.0]))
    raise_in(excuses, [example], failure_of(wrong))  # a sharded check: excused
    assert [r["excused"] for r in excuses.report()] == [1]
    with pytest.raises(ConformanceFailure) as raised:
        raise_in(excuses, [example], failure_of(in_the_oracle(wrong)))
    assert ORACLE_NOTE in raised.value.__notes__
    assert [r["excused"] for r in excuses.report()] == [1]


def test_a_symptom_and_a_strict_entry_never_explain_an_oracle_failure():
    """Symptom.why_not refuses a tagged failure whatever its check's name, and a strict entry's
    test failing in its oracle is not its xfail."""
    seen = Seen("", "w", "grad vs numpy's analytic gradient result 0", "values", oracle=True)
    assert "never excused" in Symptom.parse({"wrong": "values"}).why_not(seen)
    assert Symptom.parse({"wrong": "values"}).why_not(Seen("", "w", "grad result 0", "values")) is None
    strict = Deviation("suites/t.py::test_d", ">=0", "r", Symptom.parse({"raises": "KeyError"}))
    assert isinstance(strict_verdict([strict], failure_of(lambda c: {}["missing"])), KnownDeviationSeen)
    oracle_failure = failure_of(in_the_oracle(lambda c: {}["missing"]))
    assert strict_verdict([strict], oracle_failure) is oracle_failure
    assert any("never excused" in note for note in oracle_failure.__notes__)


# --- the oracle stays outside every excuse context -----------------------------------------------
@pytest.mark.parametrize("entries", [[], "doubling"], ids=["no-entries", "an-entry"])
def test_an_oracle_inside_an_excuse_context_is_refused_and_never_excused(entries, quiet_events):
    """Inside excuses.way (whether or not this JAX has entries for the property): case.oracle()
    raises, and so does a check named as the oracle's even when it passes; excuses.way inside the
    oracle raises too; none of them is excused."""
    excuses, example = Excuses([doubling_entry()] if entries else []), cut_grad_example()
    case = Case("f(x)")

    def oracle_inside():
        with case.oracle():
            case.same_bits("grad result 0", np.array([1.0]), np.array([1.0]))
    for body in (oracle_inside,
                 lambda: case.same_bits("unsharded result vs numpy", np.array([1.0]), np.array([1.0])),
                 lambda: case.accepts("(0) unsharded v0 = -x0", lambda: 1)):
        with pytest.raises(OracleInsideAnExcuse, match="but should"):
            with excuses.way([example]):
                body()
    with pytest.raises(OracleInsideAnExcuse, match="inside Case.oracle"):
        with case.oracle():
            with excuses.way([example]):
                pass
    assert excuses.report() == []
    case.same_bits("unsharded result vs numpy", np.array([1.0]), np.array([1.0]))  # (outside: a plain check)


# --- an exact property's oracle on demand --------------------------------------------------------
def on_demand(oracle_wrong: bool):
    """An OracleOnDemand over ways "(a)" and "(b)" whose oracle compares a doubled gradient (wrong)
    or a right one inside case.oracle(), and the list of its runs."""
    runs = []

    def oracle():
        runs.append(1)
        with Case("f(x)").oracle():
            Case("f(x)").same_bits("unsharded result vs numpy", np.array([2.0]) if oracle_wrong else np.array([1.0]),
                                   np.array([1.0]))
    return OracleOnDemand(oracle, ("(a)", "(b)")), runs


@pytest.mark.parametrize("oracle_wrong", [False, True], ids=["oracle-right", "oracle-wrong"])
def test_an_on_demand_oracle_runs_before_a_failing_way_is_excused(oracle_wrong, quiet_events):
    """A sharded way's failure that an entry would excuse runs the oracle first: where the oracle
    is right, the failure is excused (counted once); where it is wrong, the oracle's failure is
    raised, tagged, and nothing is excused."""
    excuses, example = Excuses([doubling_entry()]), cut_grad_example()
    demand, runs = on_demand(oracle_wrong)
    wrong = failure_of(lambda c: c.same_bits("grad result 0", np.array([2.0, 4.0]), np.array([1.0, 2.0])))
    way = lambda name: excuses.way([example], example=example)
    if oracle_wrong:
        with pytest.raises(ConformanceFailure) as raised:
            with demand.way("(a)", way):
                raise wrong
        assert is_oracle_failure(raised.value) and raised.value.__context__ is wrong
        assert excuses.report() == []
    else:
        with demand.way("(a)", way):
            raise wrong
        assert [r["excused"] for r in excuses.report()] == [1]
    demand.finish()
    assert runs == [1], "the oracle runs once, before the excuse is asked"


def test_an_on_demand_oracle_runs_unless_every_way_passed():
    """Every way passed: no oracle run; a way that did not pass (refused, skipped): finish runs it;
    a wrong oracle then fails the example although no way failed."""
    demand, runs = on_demand(oracle_wrong=False)
    for name in ("(a)", "(b)"):
        with demand.way(name, lambda name: excusable()):
            demand.passed(name)
    demand.finish()
    assert runs == []
    demand, runs = on_demand(oracle_wrong=True)
    with demand.way("(a)", lambda name: excusable()):
        demand.passed("(a)")
    with pytest.raises(ConformanceFailure) as raised:
        demand.finish()
    assert runs == [1] and is_oracle_failure(raised.value)


def test_an_on_demand_oracle_body_is_an_excuse_context():
    """Inside an on-demand way, as inside excuses.way, an oracle check is refused."""
    demand, _ = on_demand(oracle_wrong=False)
    with pytest.raises(OracleInsideAnExcuse):
        with demand.way("(a)", lambda name: excusable()):
            Case("f(x)").same_bits("unsharded result vs numpy", np.array([1.0]), np.array([1.0]))


# --- the suites: their oracle checks, and only they, run tagged ----------------------------------
def judged_checks(monkeypatch) -> list:
    """From now on, every check a Case judges: (its name, whether it ran inside case.oracle())."""
    judged, starting = [], Case._starting_check

    def recording(case, what):
        judged.append((what, oracle_is_running()))
        return starting(case, what)
    monkeypatch.setattr(Case, "_starting_check", recording)
    return judged


def smallest(strategy, condition=lambda example: True):
    """The simplest example of ``strategy`` that meets ``condition`` (deterministic)."""
    from hypothesis import HealthCheck, find, settings
    return find(strategy, condition, settings=settings(database=None, max_examples=200,
                                                       suppress_health_check=list(HealthCheck)))


def properties():
    """(id, the property's inner test, its example, the pattern of its oracle checks' names)."""
    import suites.test_autodiff as autodiff
    import suites.test_control_flow as control_flow
    import suites.test_random as random_suite
    grad = lambda e: e.transform == "grad"
    return [
        ("autodiff-jit", autodiff.test_derivatives_of_a_jitted_function_with_shardings,
         smallest(autodiff.jit_examples(), grad), r"unsharded|vs numpy's"),
        ("autodiff-custom-jit", autodiff.test_custom_rules_of_a_jitted_function_with_shardings,
         smallest(autodiff.custom_rule_jit_examples(), grad), r"unsharded|vs numpy's"),
        ("autodiff-shard-map", autodiff.test_derivatives_through_collectives_in_shard_map,
         smallest(autodiff.body_examples()), r"of the global function"),
        ("autodiff-custom-shard-map", autodiff.test_custom_rules_inside_shard_map,
         smallest(autodiff.custom_rule_body_examples()), r"of the global function"),
        ("control-flow-loops", control_flow.test_control_flow_on_sharded_values,
         smallest(control_flow.loop_examples()), r"^unsharded"),
        ("control-flow-switch", control_flow.test_switch_and_cond_on_a_sharded_index_run_the_branch_it_picks,
         smallest(control_flow.branch_examples()), r"^unsharded"),
        ("control-flow-remat", control_flow.test_checkpoint_policy_keeps_the_value_and_gradient,
         smallest(control_flow.remat_examples()), r"^unsharded"),
        ("random-one-key", random_suite.test_random_draws_into_sharded_outputs_equal_the_unsharded_draws,
         smallest(random_suite.single_key_draws()), r"^the unsharded draw"),
        ("random-batched-keys", random_suite.test_random_draws_into_sharded_outputs_equal_the_unsharded_draws,
         smallest(random_suite.batched_key_draws()), r"^the unsharded draw"),
    ]


def test_the_restructured_properties_run_their_oracle_checks_and_only_them_tagged(monkeypatch):
    """On each property's simplest example, every check named as its oracle's (the unsharded run,
    its comparison with numpy) runs inside case.oracle() and every other check outside it; every
    check named "unsharded ..." or "(0) ..." is among the tagged."""
    import inspect
    judged = judged_checks(monkeypatch)
    for name, test, example, oracle in properties():
        judged.clear()
        inner = test.hypothesis.inner_test
        inner(example=example, **({"excuses": Excuses([])} if "excuses" in inspect.signature(inner).parameters else {}))
        assert any(tagged for _, tagged in judged), f"{name}: no oracle check ran"
        wrong = [(what, tagged) for what, tagged in judged if tagged != bool(re.search(oracle, what))]
        assert not wrong, f"{name}: (check, ran tagged) against the oracle's names {oracle!r}: {wrong}"
        untagged = [what for what, tagged in judged if ORACLE_NAMES.search(what) and not tagged]
        assert not untagged, f"{name}: checks named as the oracle's ran untagged: {untagged}"


# --- test_autodiff's property with a wrong unsharded gradient -----------------------------------
def test_a_wrong_unsharded_gradient_fails_the_property_under_an_entry_that_would_excuse_it(monkeypatch, quiet_events):
    """The fault unsharded-gradient-halved makes the sharded gradient twice the unsharded one: fed
    to the sharded checks (inside the way, where the pattern of check names once let it), the
    entry excuses it; the property itself fails, in its oracle (the unsharded gradient against
    numpy's analytic one), and excuses nothing."""
    import jax
    from suites import test_autodiff as autodiff
    from tests.faults import FAULTS
    excuses, example = Excuses([doubling_entry()]), cut_grad_example()
    monkeypatch.setattr(jax, "grad", jax.grad)  # (restored after the test: the fault replaces them)
    monkeypatch.setattr(jax, "value_and_grad", jax.value_and_grad)
    FAULTS["unsharded-gradient-halved"].plant()
    halved = (example.w / 2, np.zeros_like(example.w))  # the planted unsharded gradient of sin(x) * w at x = 0
    reference = autodiff.numpy_derivatives(example.function, example.transform, example.x, example.w, example.extra)
    with excuses.way([example]):
        autodiff.check_sharded_derivatives(autodiff.jit_case(example), example, halved, reference)
    assert [r["excused"] for r in excuses.report()] == [1], "the entry excuses the same wrongness in a sharded check"
    with pytest.raises(ConformanceFailure) as failed:
        autodiff.test_derivatives_of_a_jitted_function_with_shardings.hypothesis.inner_test(example=example,
                                                                                              excuses=excuses)
    assert is_oracle_failure(failed.value), failed.value
    assert failed.value.check == "grad vs numpy's analytic gradient result 0", failed.value.check
    assert [r["excused"] for r in excuses.report()] == [1]


def test_the_property_run_with_the_planted_fault_fails_in_its_oracle(tmp_path):
    """End to end: pytest -p tests.faults --plant-fault unsharded-gradient-halved on test_autodiff's
    property, under a planted entry whose trigger holds for a grad of a jit with a cut output and
    whose symptom is a gradient twice what it should be, fails in its oracle, having excused no
    example (checked in the run report)."""
    planted = tmp_path / "planted.toml"
    planted.write_text("format = 2\n\n[[deviation]]\n"
                       f'test = "{AUTODIFF_PROPERTY}"\njax = ">=0"\nreason = "planted"\nstrict = false\n'
                       f'reproduced_by = "{AUTODIFF_REPRODUCTION}"\ntrigger = "transposed_jit_with_a_cut_output"\n'
                       f"symptom = {{ wrong = \"values\", at = '{SYMPTOM['at']}', where = \"{SYMPTOM['where']}\" }}\n")
    done = run_pytest(["-p", "tests.faults", "--plant-fault", "unsharded-gradient-halved", AUTODIFF_PROPERTY,
                       "--known-deviations", str(planted), "--hypothesis-seed=12345",
                       "--hypothesis-profile=default-no-shrink", "--report-dir", str(tmp_path / "run"), "-q"],
                      timeout=600)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    entry = next(t for t in json.loads((tmp_path / "run" / "report.json").read_text())["tests"]
                 if t["id"] == AUTODIFF_PROPERTY)
    assert entry["outcome"] == "failed" and not entry["excused"], entry
    oracle_check = r"^(grad|value_and_grad) vs numpy's analytic gradient result \d"
    assert re.match(oracle_check, entry["seen"]["check"]), entry["seen"]
