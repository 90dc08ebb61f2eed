"""Generated programs keep their promises: steps render as the JAX line a person would write, every
drawn program is well typed with numpy's values right, a failure's script runs on its own, and the
soak keeps every distinct failure, a crashed round included."""

import dataclasses
import functools
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import conformance.checking.programs as programs_
from conformance.checking.case import ConformanceFailure
from conformance.checking.isolation import run_isolated
from conformance.jaxside import compat
from conformance.model.layout import MeshModel
from conformance.runner import soak
from conformance.model.program import Step
from strategies.programs import FEEDS, evaluate, programs, written_program
from tests.test_checks import run_script

MESH = MeshModel((0, 1, 2, 3), (2, 2), ("a", "b"))


def test_steps_render_as_the_line_a_person_would_write():
    x = np.arange(8, dtype=np.uint32).reshape(2, 4)
    program = written_program(MESH, [(x, ("a",))], [
        Step("v0", "cumsum", ("x0",), (("axis", 1),)),
        Step("v1", "constraint", ("v0",), spec=(None, "b")),
        Step("v2", "add", ("v1", "x0")),
        Step("v3", "concatenate", ("v2", "v2"), (("axis", 0),)),
        Step("v4", "slice", ("v3",), (("index", (slice(1, 3, None),)),)),
        Step("v5", "device_put", ("v4",), spec=("a",))], [("a", "b")])
    assert programs_.function_lines(program) == [
        "def program(x0):",
        "    v0 = jnp.cumsum(x0, axis=1)",
        "    v1 = constrain(v0, NamedSharding(mesh, P(None, 'b')))",
        "    v2 = v1 + x0",
        "    v3 = jnp.concatenate((v2, v2), axis=0)",
        "    v4 = v3[slice(1, 3, None),]",
        "    v5 = jax.device_put(v4, NamedSharding(mesh, P('a')))",
        "    return (v5, )"]
    assert programs_.function_lines(program, "unsharded", unsharded=True)[2] == "    v1 = v0"
    cumsum = np.cumsum(x, axis=1)
    np.testing.assert_array_equal(program.value("v5"), np.concatenate([cumsum + x] * 2)[1:3])


def test_numpy_values_take_the_dtype_jax_gives():
    """numpy widens uint32 sums to uint64 and argmax to int64; the program's values are uint32,
    wrapping, and argmax's int32."""
    big = np.full((2,), 2**32 - 1, np.uint32)
    assert evaluate("sum_int", [big], {"axis": None, "keepdims": False}) == np.uint32(2**32 - 2)
    assert evaluate("argmax", [big], {"axis": None}).dtype == np.int32
    assert evaluate("greater", [big, big], {}).dtype == np.bool_
    # with x64 on (pytest suites/ --x64), as the dtype model says JAX gives then: uint64 sums, int64 indices
    assert evaluate("sum_int", [big], {"axis": None, "keepdims": False}, x64=True) == np.uint64(2 * (2**32 - 1))
    assert evaluate("argmax", [big], {"axis": None}, x64=True).dtype == np.int64


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs(tuple(range(8)), axis_types=("Auto", "Explicit")))
def test_drawn_programs_are_well_typed_and_their_values_right(program):
    """Every step's operands exist before it, every value is uint32, bool or (argmax, argsort)
    int32, a layout change keeps
    its operand's value and asks for a spec of its mesh, and each catalogue step's value is numpy's
    on its operands."""
    values = dict(program.values)
    assert set(program.inputs) <= set(values) and program.inputs == tuple(f"x{k}" for k in range(len(program.inputs)))
    seen = set(program.inputs)
    for step in program.steps:
        assert set(step.operands) <= seen and step.result not in seen
        seen.add(step.result)
        operands = [values[o] for o in step.operands]
        if step.changes_layout:
            np.testing.assert_array_equal(values[step.result], operands[0])
            assert {a for e in step.spec if e for a in (e if isinstance(e, tuple) else (e,))} <= \
                set(program.mesh.axis_names)
        else:
            assert step.op in FEEDS
            np.testing.assert_array_equal(values[step.result], evaluate(step.op, operands, step.kwargs))
        assert values[step.result].dtype == (np.int32 if step.op in ("argmax", "argsort") else
                                             values[step.operands[0]].dtype if step.changes_layout else
                                             np.bool_ if step.op in ("greater", "any", "logical_not") else np.uint32)
    assert program.outputs[0] == program.steps[-1].result and set(program.outputs) <= seen
    assert all(0 <= k < len(program.inputs) for k in program.donated)


def test_a_programs_script_runs_on_its_own():
    """The script a failure prints runs in a fresh interpreter: the four ways, each printing the
    outputs' values."""
    x = np.arange(8, dtype=np.uint32)
    program = written_program(MeshModel((0, 1), (2,), ("a",)), [(x, ("a",))], [
        Step("v0", "flip", ("x0",), (("axis", 0),)),
        Step("v1", "constraint", ("v0",), spec=()),
        Step("v2", "cumsum", ("v1",), (("axis", 0),))], [("a",)], donated=(0,))
    result = run_script(programs_.program_script(program))
    assert result.returncode == 0, result.stderr
    expected = str(np.cumsum(x[::-1]).tolist())
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["unsharded", "(a) eager", "(b) jit with in/out_shardings",
                                                      "(c) jit with sharding constraints"]
    assert all(expected in line for line in lines), result.stdout


def fake_rounds(outcomes, clock):
    """A stand-in for pytest_process.run_pytest that plays ``outcomes`` in turn, a minute each on
    ``clock`` (a one-item list): "crash" (writes the program log, then dies of SIGABRT), or a
    report entry's fields."""
    played = iter(outcomes)

    def run_pytest(args, *, env, timeout):
        clock[0] += 60
        outcome = next(played)
        if outcome == "crash":
            Path(env[soak.environment.PROGRAM_LOG]).write_text("    x0 = np.frombuffer(b'')\n    crashing program")
            return subprocess.CompletedProcess(args, -6, "", "F external/xla/...: Check failed: sliced.has_value()")
        report = Path(args[args.index("--report-dir") + 1])
        report.mkdir(parents=True)
        entry = {"id": args[0], "examples": 200, "outcome": "passed", "message": None, "repro": None, **outcome}
        report.joinpath("report.json").write_text(soak.json.dumps({"tests": [entry]}))
        return subprocess.CompletedProcess(args, 1 if entry["outcome"] == "failed" else 0, "", "")
    return run_pytest


def test_soak_keeps_every_distinct_failure_and_a_crash(monkeypatch):
    """Rounds go on after a failure or a crash; failures of one program (the input values aside)
    are one finding, with every seed that found it."""
    failed = {"outcome": "failed", "message": "v0 differs", "repro": "    x0 = np.frombuffer(b'1')\n    program A"}
    same_program = dict(failed, repro="    x0 = np.frombuffer(b'2')\n    program A")
    other = dict(failed, repro="    program B")
    clock = [0]
    monkeypatch.setattr(soak, "run_pytest", fake_rounds([{}, failed, "crash", same_program, other], clock))
    monkeypatch.setattr(soak.time, "monotonic", lambda: clock[0])
    result = soak.run("suites/test_programs.py::p", minutes=6, first_seed=10)
    assert result.rounds == 5 and result.examples == 4 * 200
    kinds = [(f.kind, f.seeds) for f in result.findings.values()]
    assert kinds == [("failed", ("11", "13")), ("crashed", ("12",)), ("failed", ("14",))]
    assert "signal 6" in list(result.findings.values())[1].message
    assert "crashing program" in soak.scripts(result)
    assert soak.summary(result).startswith("3 distinct failure(s) in 5 round(s), 800 programs")


def small_program():
    x = np.arange(8, dtype=np.uint32)
    return written_program(MeshModel((0, 1), (2,), ("a",)), [(x, ("a",))], [
        Step("v0", "concatenate", ("x0", "x0"), (("axis", 0),))], [("a",)])


def test_jit_ways_in_a_subprocess_check_values_and_report_an_abort():
    """In a fresh interpreter the two jit ways print each output's bytes, checked against numpy's;
    an abort is a failure at the exit-status check whose finding quotes XLA's Check failed line (a
    known deviation's symptom names it); other ends and wrong bytes are failures too."""
    from conformance.checking.symptoms import Seen
    program = small_program()
    case = programs_.program_case(program)
    check = lambda fake: programs_.check_jitted_in_subprocess(case, program, fake)
    assert check(lambda lines: run_isolated(lines)) is None
    aborted = subprocess.CompletedProcess([], -6, "", "F0000 hlo_sharding_util.cc] Check failed: sliced.has_value() "
                                          "Could not slice\n*** Begin stack trace ***\nframe 1\nframe 2\nframe 3")
    with pytest.raises(ConformanceFailure) as abort:
        check(lambda lines: aborted)
    seen = Seen.of(abort.value)
    assert seen.check.startswith("exit status of (b)/(c) in a subprocess") and "sliced.has_value()" in seen.message
    rejected = subprocess.CompletedProcess([], 1, "", "Traceback ...\njax._src.core.ShardingTypeError: dot_general")
    explicit = dataclasses.replace(program, axis_type="Explicit")
    assert programs_.check_jitted_in_subprocess(case, explicit, lambda lines: rejected,
                                                classify=lambda name, message, way: f"{name}: {message}") \
        == "ShardingTypeError: dot_general"
    for other in (subprocess.CompletedProcess([], -11, "", "Segmentation fault"), rejected,
                  subprocess.CompletedProcess([], 0, "(b) 0 00\n(c) 0 00\n", "")):
        with pytest.raises(ConformanceFailure):
            check(lambda lines: other)  # noqa: B023 - called in this iteration


def test_ways_in_a_subprocess_check_layouts_shards_and_eager_steps_each_way_apart():
    """In a fresh interpreter each value is checked as in-process: its shards' index map against the
    layout asked (an output's spec in (b) and (c), a layout change's target in (a)), every shard
    against its block of the value, every eager step's result; each way runs under its own context,
    so one way's excused failure leaves the other checked, and an excused eager step ends its way."""
    import contextlib
    program = written_program(MeshModel((0, 1), (2,), ("a",)), [(np.arange(4, dtype=np.uint32), ())], [
        Step("v0", "negative", ("x0",)), Step("v1", "constraint", ("v0",), spec=("a",))], [("a",)])
    case = programs_.program_case(program)
    ways = ("(a)",) + programs_.ISOLATED_WAYS
    real = run_isolated(programs_.isolated_lines(program, ways))
    assert real.returncode == 0, real.stderr
    contexts = []

    @contextlib.contextmanager
    def excusing(label, excused=()):
        contexts.append(label)
        try:
            yield
        except ConformanceFailure:
            if label not in excused:
                raise

    def check(stdout, excused=()):
        contexts.clear()
        done = subprocess.CompletedProcess([], 0, stdout, "")
        return programs_.check_jitted_in_subprocess(case, program, lambda lines: done, ways=ways,
                                                    way_context=lambda label, output="": excusing(label, excused))
    assert check(real.stdout) is None and contexts == ["(a)/(b)/(c)", "(a) v0", "(a) v1", "(b)", "(c)"]
    moved = real.stdout.replace("(b) 0 indices {\"0\":[[0,2]],\"1\":[[2,4]]}",
                                "(b) 0 indices {\"0\":[[2,4]],\"1\":[[0,2]]}")
    assert moved != real.stdout
    with pytest.raises(ConformanceFailure) as wrong_layout:
        check(moved)
    assert wrong_layout.value.check == "(b) output v1 indices (in a subprocess)" and \
        wrong_layout.value.shows == "layout"
    assert check(moved, excused=("(b)",)) is None and contexts[-1] == "(c)"  # (c) still checked
    stale = real.stdout.replace("(c) 0 differing []", "(c) 0 differing [1]")
    with pytest.raises(ConformanceFailure) as stale_shard:
        check(stale)
    assert stale_shard.value.check == "(c) output v1: devices whose shard differs from its block (in a subprocess)"
    unlaid = real.stdout.replace("(a) v1 indices {\"0\":[[0,2]],\"1\":[[2,4]]}",
                                 "(a) v1 indices {\"0\":[[0,4]],\"1\":[[0,4]]}")
    with pytest.raises(ConformanceFailure) as eager:
        check(unlaid)
    assert eager.value.check == "(a) v1 = constrain(v0, NamedSharding(mesh, P('a'))) indices (in a subprocess)"
    wrong_v0 = real.stdout.replace("(a) v0 " + (-np.arange(4, dtype=np.uint32)).tobytes().hex(), "(a) v0 " + "00" * 16)
    assert wrong_v0 != real.stdout
    assert check(wrong_v0, excused=("(a) v0",)) is None and "(a) v1" not in contexts  # an excused step ends (a)
    shown = run_script(eager.value.repro)  # the script judges the index map JAX really gives: right here
    assert shown.returncode == 0 and "expected: {0: ((0, 2),), 1: ((2, 4),)}" in shown.stdout, \
        shown.stdout + shown.stderr


def test_a_step_the_model_rejects_as_typed_before_a_device_put_is_a_candidate_under_jit():
    """The 0.7.1 finding of the second matrix pass: v1 = device_put(v0, P()) of a column-sharded v0,
    then a (1, 1) dynamic_slice of it. Typed as device_put says, the slice is well typed; typed as a
    JAX whose device_put inside jit keeps the operand's type, our model rejects it, so the jit ways'
    candidates carry the pseudo-step its known deviation's trigger asks about (eager ones do not)."""
    from conformance.checking import triggers
    from suites.test_programs import jit_candidates
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    x = np.arange(4, dtype=np.uint32).reshape(2, 2)
    start = np.int32(0)
    program = written_program(mesh, [(x, ("a",)), (start, ()), (start, ())], [
        Step("v0", "constraint", ("x0",), spec=(None, "a")),
        Step("v1", "device_put", ("v0",), spec=()),
        Step("v2", "dynamic_slice", ("v1", "x1", "x2"), (("sizes", (1, 1)),))], [()], axis_type="Explicit")
    holds = lambda way: triggers.holds("explicit_step_rejected_as_typed_before_a_device_put",
                                       jit_candidates(program, way))
    assert holds("(b) jit with in/out_shardings") and holds("(c) jit with sharding constraints")
    assert not holds("(a) eager")
    replicated = written_program(mesh, [(x, ()), (start, ()), (start, ())], [
        Step("v0", "device_put", ("x0",), spec=()),
        Step("v1", "dynamic_slice", ("v0", "x1", "x2"), (("sizes", (1, 1)),))], [()], axis_type="Explicit")
    assert not triggers.holds("explicit_step_rejected_as_typed_before_a_device_put",
                              jit_candidates(replicated, "(b) jit with in/out_shardings"))  # nothing stale to reject


# --- a failure is localized before it is excused ------------------------------------------------
PROGRAMS_PROPERTY = "suites/test_programs.py::test_generated_programs_agree_with_the_unsharded_run"


class _Covering:
    """Known deviations in effect that cover exactly ``tests``."""

    def __init__(self, *tests):
        self.tests = tests

    def covers(self, test):
        return object() if test in self.tests else None


def program_excuses():
    """Every random entry of the programs' property in suites/known_deviations.toml, as if each were
    in effect on this JAX (so that the test reads the same on every release)."""
    from conformance.runner.deviations import DEVIATIONS_FILE, Excuses, load_deviations
    return Excuses([d for d in load_deviations(DEVIATIONS_FILE) if d.test == PROGRAMS_PROPERTY and not d.strict])


@pytest.mark.parametrize("index, later_trigger", [
    (3, "at_update_of_a_value_a_constraint_has_just_cut"), (4, "moved_start_with_a_cut_operand_or_output")],
    ids=["then-a-constraint-and-at-min", "then-dynamic-update-slice-at-minus-1"])
def test_a_wrong_cumsum_is_not_excused_by_the_deviation_of_a_step_after_it(index, later_trigger, monkeypatch):
    """A cumsum that adds 1 under jit only (the fault cumsum-plus-one-under-jit), followed by a step
    whose known deviation's trigger holds for it, fails the jit ways: their prefixes, jitted the same
    way, find the cumsum as the first step that goes wrong, and no entry's trigger holds for it.
    Without the fault the same program passes (or is excused by the later step's entry)."""
    import hypothesis
    import jax.numpy as jnp
    import suites.test_programs as suite
    from conformance.checking import triggers
    from tests.faults.excuses import cumsum_plus_one_under_jit
    monkeypatch.setattr(hypothesis, "event", lambda *a, **k: None)
    program, excuses = suite.written_examples()[index], program_excuses()
    way = "(b) jit with in/out_shardings"
    later = [suite.step_call(program, s, way) for s in program.steps if s.op != "cumsum"]
    assert triggers.holds(later_trigger, later), f"{later_trigger} should hold for a step after the cumsum"
    case = programs_.program_case(program)
    suite.check_jitted(case, program, None, excuses)  # unplanted: right, or excused
    monkeypatch.setattr(jnp, "cumsum", cumsum_plus_one_under_jit.__wrapped__(jnp.cumsum))
    monkeypatch.setattr(suite, "JITTED_PROGRAMS", {})  # (the jitted programs built before the fault was planted)
    suite.check_unsharded(case, program)  # the fault is under jit only: the oracle and eager runs pass
    suite.check_eager(case, program, excuses)
    with pytest.raises(ConformanceFailure) as failed:
        suite.check_jitted(case, program, None, excuses)
    notes = "\n".join(getattr(failed.value, "__notes__", []))
    assert "the first that goes wrong is v0 = jnp.cumsum(x0, axis=0)" in notes, notes
    assert "not a known deviation" in notes, notes


def test_a_step_wrong_only_inside_the_whole_program_is_asked_about_where_every_prefix_is_right(monkeypatch):
    """Where every prefix is right (as when later steps' layouts reach back into a step: met on
    0.4.30, seed 2994294646), the first step whose value the whole jitted program computes wrongly
    is asked about too: a cumsum that adds 1 under jit (the fault cumsum-plus-one-under-jit), with
    the prefixes planted right, is found inside the whole program, with its values and layouts, and
    is among the jit way's candidates; unplanted, nothing is found."""
    import jax.numpy as jnp
    import suites.test_programs as suite
    from tests.faults.excuses import cumsum_plus_one_under_jit
    program, way = suite.written_examples()[3], "(b) jit with in/out_shardings"
    every = {s.result for s in program.steps}
    monkeypatch.setattr(suite, "prefix_goes_wrong", lambda *a, **k: None)
    assert suite.first_wrong_step(program, way) is None and suite.first_wrong_inside(program, way, every) is None
    monkeypatch.setattr(jnp, "cumsum", cumsum_plus_one_under_jit.__wrapped__(jnp.cumsum))
    step, shown, values, layouts = suite.first_wrong_inside(program, way, every)
    assert step.op == "cumsum" and shown == "inside the whole program its value differs from numpy's", (step, shown)
    assert values is not None and (values[1] == values[0] + 1).all(), values
    assert set(layouts) == every, layouts  # (each value's layout inside the jit)
    calls = suite.jit_candidates(program, way)
    assert any(c.op == "cumsum" and c.values is not None for c in calls), [c.op for c in calls]


def test_a_wrong_output_of_the_ways_in_a_subprocess_is_localized_by_prefixes_each_in_a_fresh_interpreter(
        monkeypatch):
    """Where the jit ways run in a fresh interpreter, a wrong output is localized as in-process before
    an entry is asked: each prefix runs in a fresh interpreter of its own (one prefix is never run
    twice), and a cumsum that adds 1 under jit there (the fault cumsum-plus-one-under-jit, planted
    in those interpreters only), followed by steps whose known deviations' triggers hold, fails as
    not a known deviation, its note naming the cumsum; unplanted, the same program passes (or is
    excused by a later step's entry)."""
    import functools
    import hypothesis
    import suites.test_programs as suite
    from tests.faults import ROOT
    monkeypatch.setattr(hypothesis, "event", lambda *a, **k: None)
    program, excuses = suite.written_examples()[4], program_excuses()  # (cumsum, then an update at -1)
    case = programs_.program_case(program)
    ran = []

    def counted(run):
        return lambda lines: ran.append("\n".join(lines)) or run(lines)
    suite.check_isolated(case, program, programs_.ISOLATED_WAYS, None, excuses, counted(run_isolated))
    planted = functools.partial(run_isolated, prelude=f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                                "from tests.faults import FAULTS; FAULTS['cumsum-plus-one-under-jit'].plant()")
    ran.clear()
    with pytest.raises(ConformanceFailure) as failed:
        suite.check_isolated(case, program, programs_.ISOLATED_WAYS, None, excuses, counted(planted))
    notes = "\n".join(getattr(failed.value, "__notes__", []))
    assert "the first that goes wrong is v0 = jnp.cumsum(x0, axis=0)" in notes, notes
    assert "not a known deviation" in notes, notes
    assert len(ran) == len(set(ran)) > 1, len(ran)  # (the program, then its prefixes, each once)


def test_a_layout_change_found_wrong_lends_its_values_to_the_step_it_lays_out():
    """A layout change's value is its operand's: where the change is the first step found wrong
    (met on 0.12.0.1 in CI: a dynamic_update_slice at a start to clamp, of a value constrained
    P(), then constrained P('a'), dropped the update), the step computing its operand, asked as
    computed into the change's layout, carries the change's (expected, got), which a symptom's where
    reads; an elementwise step found wrong lends its values to no step before it."""
    import suites.test_programs as suite
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    x = np.arange(8, dtype=np.uint32).reshape(2, 2, 2)
    start, zero = np.int32(2), np.int32(0)
    program = written_program(mesh, [(x, ()), (np.zeros((1, 1, 1), np.uint32), ()), (start, ()), (zero, ()),
                                     (zero, ())], [
        Step("v0", "constraint", ("x0",), spec=()),
        Step("v1", "dynamic_update_slice", ("v0", "x1", "x2", "x3", "x4")),
        Step("v2", "constraint", ("v1",), spec=("a",)),
        Step("v3", "negative", ("v2",))], [()])
    way = "(b) jit with in/out_shardings"
    values = (program.value("v2"), program.value("v0"))
    (update,) = {c.op: c for c in suite.laid_out_as_asked(program, program.steps[2], way, values)}.values()
    assert update.op == "dynamic_update_slice" and update.out_spec == ("a",) and update.values is values
    negated = suite.laid_out_as_asked(program, program.steps[3], way, values)
    assert negated and all(c.values is None for c in negated), negated


def test_the_constraint_cut_at_update_trigger_needs_a_constraint_that_cuts_its_operand():
    """at_update_of_a_value_a_constraint_has_just_cut holds for a jitted .at[].min/.max or .at[idx].add
    whose operand a constraint has just cut (from a replicated or an unknown layout), not for one with
    no constraint before it, a constraint that keeps the layout, a replicated target, nor an eager
    step."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(8)), (1, 4, 2), ("a", "b", "x"))
    x, u = np.array([1, 0, 1, 1, 1, 1, 1, 1], np.uint32), np.zeros((1,), np.uint32)

    def holds(in_spec, steps, way="(b) jit with in/out_shardings"):
        program = written_program(mesh, [(x, in_spec), (u, ()), (np.array([5], np.int32), ())], steps, [()])
        return triggers.at_update_of_a_value_a_constraint_has_just_cut(suite.step_call(program, program.steps[-1], way))
    at_min = lambda operand: Step("v9", "at_min", (operand, "x1"), (("index", slice(-1, None, 2)),))
    abs_ = Step("v0", "abs", ("x0",))
    assert holds((), [abs_, Step("v1", "constraint", ("v0",), spec=("b",)), at_min("v1")])  # the reproduction
    assert holds((), [Step("v1", "constraint", ("x0",), spec=("b",)), at_min("v1")])  # from a replicated input
    assert not holds((), [Step("v1", "constraint", ("x0",), spec=("b",)), at_min("v1")], "(a) eager")
    assert not holds((), [abs_, at_min("v0")])  # no constraint
    assert not holds(("b",), [Step("v1", "constraint", ("x0",), spec=("b",)), at_min("v1")])  # keeps the layout
    assert not holds((), [abs_, Step("v1", "constraint", ("v0",), spec=()), at_min("v1")])  # nothing cut
    assert not holds((), [abs_, Step("v1", "constraint", ("v0",), spec=("a",)), at_min("v1")])  # a size-1 axis
    at_add = Step("v9", "at_add_indices", ("v1", "x2", "x1"))
    assert holds((), [Step("v1", "constraint", ("x0",), spec=("b",)), at_add])  # the 0.6.2 replay's form
    assert not holds(("b",), [Step("v1", "constraint", ("x0",), spec=("b",)), at_add])  # keeps the layout


def test_the_ci_finding_of_an_at_update_of_an_edge_pad_is_excused_by_the_join_trigger_alone(monkeypatch):
    """CI's 0.10.2 finding on b9fec63 (an edge pad of x uint32[3] P('a') on an (a=3, b=2) mesh, then
    .at[0:1].set(v[5:6]) of it, into P()): the jit ways are right or excused, and only by
    jitted_at_update_of_a_join_along_its_cut_dimension's entry (the failure localized to the update);
    that trigger does not hold with a negation between the pad and the update, eagerly, nor with the
    window on the whole side (shift 0)."""
    import hypothesis
    import suites.test_programs as suite
    from conformance.checking import triggers
    monkeypatch.setattr(hypothesis, "event", lambda *a, **k: None)
    mesh = MeshModel(tuple(range(6)), (3, 2), ("a", "b"))
    pad = Step("v0", "pad", ("x0",), (("widths", ((0, 3),)), ("mode", "edge")))

    def found(update, between=()):
        return written_program(mesh, [(np.arange(3, dtype=np.uint32), ("a",))],
                               [pad, Step("v1", "negative", ("v0",)), *between, update], [()])
    program = found(Step("v2", "at_set_shifted", ("v0",), (("axis", 0), ("shift", 5))))
    excuses = program_excuses()
    suite.check_jitted(programs_.program_case(program), program, None, excuses)  # right, or excused
    in_effect = {e.trigger for e in excuses.entries} & {"jitted_at_update_of_a_join_along_its_cut_dimension"}
    assert {e.trigger for e in excuses.excused} == in_effect  # (wrong on every release before 0.12.0, right after)

    def holds(program, way="(b) jit with in/out_shardings"):
        return triggers.jitted_at_update_of_a_join_along_its_cut_dimension(
            suite.step_call(program, program.steps[-1], way))
    assert holds(program) and holds(program, "(c) jit with sharding constraints")
    assert not holds(program, "(a) eager")
    assert not holds(found(Step("v3", "at_set_shifted", ("v1",), (("axis", 0), ("shift", 5))),
                           [Step("v1", "negative", ("v0",))]))  # a negation between
    assert not holds(found(Step("v2", "at_set_shifted", ("v0",), (("axis", 0), ("shift", 0)))))  # the whole side


def excusing_triggers(program) -> set:
    """The triggers of the entries that excuse ``program``'s jit ways, run in this process under every
    random entry of the programs' property (``program_excuses``); a failure none excuses raises."""
    import suites.test_programs as suite
    excuses = program_excuses()
    suite.check_jitted(programs_.program_case(program), program, None, excuses)  # right, or excused
    return {e.trigger for e in excuses.excused}


def last_step_holds(trigger: str, program, way: str = "(b) jit with in/out_shardings") -> bool:
    """Whether ``trigger`` holds for ``program``'s last step run ``way``."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    return getattr(triggers, trigger)(suite.step_call(program, program.steps[-1], way))


@compat.requires("explicit_sharding")
def test_the_ci_finding_of_an_edge_pad_of_a_device_put_is_excused_by_its_trigger_alone(monkeypatch):
    """CI's 0.12.0.1 finding, reduced (x0 uint32[2] P('a') on an Explicit (a=2, b=4) mesh, v1 = -x0 put
    replicated by a device_put, padded ((1, 0),) in edge mode, into P()): the jit ways are right or
    excused, and only by explicit_jitted_pad_reading_a_prefix_of_a_device_put's entry (the failure
    localized to the pad; on 0.6.0-0.8.1 explicit_device_put_inside_jit's, whose bug raises first);
    that trigger does not hold eagerly, on the high edge, with a constraint in place of the
    device_put, nor for x0 uint32[4] (two elements per shard)."""
    import hypothesis
    monkeypatch.setattr(hypothesis, "event", lambda *a, **k: None)
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))

    def found(n=2, widths=((1, 0),), move="device_put"):
        return written_program(mesh, [(np.arange(n, dtype=np.uint32), ("a",))], [
            Step("v0", "negative", ("x0",)), Step("v1", move, ("v0",), spec=()),
            Step("v2", "pad", ("v1",), (("widths", widths), ("mode", "edge")))], [()], axis_type="Explicit")
    program = found()
    # (0.6.0-0.8.1: the device_put's typing bug raises first, its own entry's)
    assert excusing_triggers(program) <= {"explicit_jitted_pad_reading_a_prefix_of_a_device_put",
                                          "explicit_device_put_inside_jit"}
    holds = functools.partial(last_step_holds, "explicit_jitted_pad_reading_a_prefix_of_a_device_put")
    assert holds(program) and holds(program, "(c) jit with sharding constraints")
    assert not holds(program, "(a) eager")
    assert not holds(found(widths=((0, 1),)))  # the high edge
    assert not holds(found(move="constraint"))  # a reshard, not a device_put
    assert not holds(found(n=4))  # two elements per shard


def test_a_tril_of_a_range_update_moving_its_major_cut_axis_is_excused_by_its_trigger_alone(monkeypatch):
    """The 0.12.0.1 replay of CI's seed 2676004163, reduced (x0 uint32[2, 4] P(None, ('a', 'b')) on a (b=2,
    a=2) mesh, x0.at[:, 1:].set(x0[:, :3]), a tril, into P('a')): the jit ways are right or excused, and
    only by jitted_read_of_a_range_update_moving_its_major_cut_axis's entry; the trigger holds for the
    step computing the output through a device_put after the tril, and does not hold into P(None, 'a'),
    for an operand cut over one axis, nor eagerly."""
    import hypothesis
    monkeypatch.setattr(hypothesis, "event", lambda *a, **k: None)
    mesh = MeshModel((0, 1, 2, 3), (2, 2), ("b", "a"))

    def found(out_spec=("a",), in_spec=(None, ("a", "b")), after=()):
        return written_program(mesh, [(np.arange(8, dtype=np.uint32).reshape(2, 4), in_spec)], [
            Step("v0", "at_set_shifted", ("x0",), (("axis", 1), ("shift", -1))),
            Step("v1", "tril", ("v0",), (("k", -2),)), *after], [out_spec])
    program = found()
    assert excusing_triggers(program) <= {"jitted_read_of_a_range_update_moving_its_major_cut_axis"}
    holds = functools.partial(last_step_holds, "jitted_read_of_a_range_update_moving_its_major_cut_axis")
    assert holds(program) and holds(program, "(c) jit with sharding constraints")
    assert holds(found(after=[Step("v2", "device_put", ("v1",), spec=("b",))]))  # the finding's last step
    assert not holds(program, "(a) eager")
    assert not holds(found(out_spec=(None, "a")))  # the update's own dimension
    assert not holds(found(in_spec=(None, "a")))  # one axis


@pytest.mark.parametrize("reader", [("tril", (("k", -2),)), ("cumsum", (("axis", 1),))], ids=["tril", "cumsum"])
def test_a_read_of_a_range_update_moving_its_major_cut_axis_runs_isolated_and_is_excused_alone(reader, monkeypatch):
    """Where MOVED_UPDATE_ABORT's entry is in effect, the program of the tril finding (and its cumsum
    form, on which XLA aborts the process) runs its jit ways in a subprocess, where they are right or
    excused, and only by jitted_read_of_a_range_update_moving_its_major_cut_axis's entries."""
    import hypothesis
    import suites.test_programs as suite
    monkeypatch.setattr(hypothesis, "event", lambda *a, **k: None)
    mesh = MeshModel((0, 1, 2, 3), (2, 2), ("b", "a"))
    program = written_program(mesh, [(np.arange(8, dtype=np.uint32).reshape(2, 4), (None, ("a", "b")))], [
        Step("v0", "at_set_shifted", ("x0",), (("axis", 1), ("shift", -1))),
        Step("v1", reader[0], ("v0",), reader[1])], [("a",)])
    assert suite.isolated_ways(program, _Covering(suite.MOVED_UPDATE_ABORT)) == programs_.ISOLATED_WAYS
    excuses = program_excuses()
    suite.check_isolated(programs_.program_case(program), program, programs_.ISOLATED_WAYS, None, excuses,
                         lambda lines: run_isolated(lines))  # right, or excused
    assert {e.trigger for e in excuses.excused} <= {"jitted_read_of_a_range_update_moving_its_major_cut_axis"}


def test_a_take_read_through_negations_into_another_axis_is_excused_by_its_trigger_alone(monkeypatch):
    """The seventh matrix pass's 0.9.0 finding (seed 3530976916: jnp.take(x0, x1, axis=1, mode='clip') of
    x0 uint32[2, 4] and x1 int32[4] both P('b') on an (a=4, b=2) mesh, negated three times into P(None,
    'a')): the jit ways are right or excused, and only by
    jitted_take_of_operand_and_indices_cut_alike_into_another_axis's entry, which holds for the last
    negation (the step the failure is localized to) and not into P(None, 'b') or eagerly."""
    import hypothesis
    monkeypatch.setattr(hypothesis, "event", lambda *a, **k: None)
    mesh = MeshModel(tuple(range(8)), (4, 2), ("a", "b"))

    def found(out_spec=(None, "a")):
        return written_program(mesh, [(np.arange(8, dtype=np.uint32).reshape(2, 4), ("b",)),
                                      (np.array([3, 0, 1, 2], np.int32), ("b",))], [
            Step("v0", "take_clip", ("x0", "x1"), (("axis", 1),)),
            Step("v1", "negative", ("v0",)), Step("v2", "negative", ("v1",)), Step("v3", "negative", ("v2",))],
            [out_spec])
    program = found()
    assert excusing_triggers(program) <= {"jitted_take_of_operand_and_indices_cut_alike_into_another_axis"}
    holds = functools.partial(last_step_holds, "jitted_take_of_operand_and_indices_cut_alike_into_another_axis")
    assert holds(program) and holds(program, "(c) jit with sharding constraints")
    assert not holds(program, "(a) eager")
    assert not holds(found((None, "b")))


def test_an_at_update_of_a_transposed_replicated_value_is_excused_by_its_trigger_alone(monkeypatch):
    """The 0.6.2 replay's form, reduced (x0 uint32[2, 6] P('a') on an (a=2, b=4) mesh constrained to P(),
    swapped, .at[[0]].add(u), negated into P('a')): the jit ways are right or excused, and only by
    jitted_at_update_of_a_transposed_replicated_value_into_a_cut_output's entry; the trigger does not
    hold into P(), with the constraint cutting, nor without the transpose."""
    import hypothesis
    import suites.test_programs as suite
    from conformance.checking import triggers
    monkeypatch.setattr(hypothesis, "event", lambda *a, **k: None)
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    name = "jitted_at_update_of_a_transposed_replicated_value_into_a_cut_output"

    def written(out_spec=("a",), spec=(), moved=True):
        steps = [Step("v0", "constraint", ("x0",), spec=spec),
                 Step("v1", "swapaxes", ("v0",), (("a", 0), ("b", -1 if moved else 0))),
                 Step("v2", "at_add_indices", ("v1", "x1", "x2")), Step("v3", "negative", ("v2",))]
        return written_program(mesh, [(np.arange(12, dtype=np.uint32).reshape((2, 6) if moved else (6, 2)), ("a",)),
                                      (np.zeros(1, np.int32), ()), (np.arange(2, dtype=np.uint32).reshape(1, -1), ())],
                               steps, [out_spec])
    program, excuses = written(), program_excuses()
    suite.check_jitted(programs_.program_case(program), program, None, excuses)  # right, or excused
    in_effect = {e.trigger for e in excuses.entries} & {name}
    assert {e.trigger for e in excuses.excused} == in_effect  # (wrong on every release before 0.12.0, right after)

    def holds(program):
        way = "(b) jit with in/out_shardings"
        return triggers.holds(name, [suite.step_call(program, s, way) for s in program.steps])
    assert holds(program)
    assert not holds(written(out_spec=())) and not holds(written(spec=("a",))) and not holds(written(moved=False))


def test_the_second_at_update_trigger_reads_the_chain_from_the_constraint_to_the_cut_output():
    """at_update_after_a_strided_one_on_a_constrained_value holds for the 0.4.35 finding (a constraint,
    a strided .at[].min, a device_put, an .at[].min into a cut output), also when the failure is
    localized to a final device_put into that output; not with a replicated output, with no
    constraint, with an unstrided first update, nor eagerly."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel((0, 1), (2,), ("a",))
    x, u, w = np.arange(8, dtype=np.uint32).reshape(4, 2), np.zeros((2, 2), np.uint32), np.zeros((1, 2), np.uint32)

    def holds(steps, out_spec=("a",), way="(b) jit with in/out_shardings", last=-1):
        program = written_program(mesh, [(x, ("a",)), (u, ()), (w, ())], steps, [out_spec])
        return triggers.at_update_after_a_strided_one_on_a_constrained_value(
            suite.step_call(program, program.steps[last], way))
    first = lambda operand, index=slice(None, None, 2): Step("v4", "at_min", (operand, "x1"), (("index", index),))
    second = Step("v6", "at_min", ("v5", "x2"), (("index", (slice(None, 1, 2), slice(None, None, 1))),))
    chain = [Step("v0", "negative", ("x0",)), Step("v1", "constraint", ("v0",), spec=()), first("v1"),
             Step("v5", "device_put", ("v4",), spec=()), second]
    assert holds(chain)  # the finding, localized to the second update
    assert holds(chain + [Step("v7", "device_put", ("v6",), spec=())])  # localized to the device_put that ends it
    assert not holds(chain, out_spec=())  # a replicated output
    assert not holds(chain, way="(a) eager")
    assert not holds([Step("v0", "negative", ("x0",)), Step("v1", "negative", ("v0",)), first("v1"),
                      Step("v5", "device_put", ("v4",), spec=()), second])  # no constraint
    assert not holds([Step("v0", "negative", ("x0",)), Step("v1", "constraint", ("v0",), spec=()),
                      first("v1", slice(0, 2)), Step("v5", "device_put", ("v4",), spec=()), second])  # unstrided


def test_the_device_put_inside_jit_trigger_reads_the_steps_after_the_device_put():
    """explicit_device_put_inside_jit holds for the 0.6.2 finding (on an Explicit mesh, under jit, a
    tril of a stack of a device_put to P() of a cut vector: the tril raises) and for the device_put
    itself; not eagerly, on an Auto mesh, or where the device_put keeps its operand's spec."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    x = np.arange(2, dtype=np.uint32)

    def holds(put_spec, way="(b) jit with in/out_shardings", axis_type="Explicit", last=-1):
        steps = [Step("v0", "negative", ("x0",)), Step("v1", "device_put", ("v0",), spec=put_spec),
                 Step("v2", "stack", ("v1", "v1"), (("axis", 0),)), Step("v3", "tril", ("v2",), (("k", 0),))]
        program = written_program(mesh, [(x, ("a",))], steps, [()], axis_type=axis_type)
        return triggers.explicit_device_put_inside_jit(suite.step_call(program, program.steps[last], way))
    assert holds(())  # the finding, localized to the tril
    assert holds((), last=1)  # the device_put step itself
    assert not holds((), way="(a) eager")
    assert not holds((), axis_type="Auto")
    assert not holds(("a",))  # the device_put keeps the spec: nothing is typed wrongly


def test_the_clamped_dynamic_slice_trigger_reads_through_layout_changes():
    """jitted_read_of_a_clamped_dynamic_slice holds for the 0.11.0 finding (a strided .at[].max of a
    dynamic_slice whose start -1 is clamped), also with a constraint between them; not with a start
    that needs no clamping, nor eagerly."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(6)), (3, 2), ("a", "b"))
    x0, x2 = np.arange(3, dtype=np.uint32), np.arange(1, dtype=np.uint32)

    def holds(start, between=(), way="(b) jit with in/out_shardings"):
        steps = [Step("v0", "negative", ("x0",)), Step("v1", "dynamic_slice", ("v0", "x1"), (("sizes", (2,)),))]
        last = "v1"
        for k, spec in enumerate(between):
            steps.append(Step(f"c{k}", "constraint", (last,), spec=spec))
            last = f"c{k}"
        steps.append(Step("v3", "at_max", (last, "x2"), (("index", slice(None, None, 2)),)))
        program = written_program(mesh, [(x0, ("a",)), (np.array(start, np.int32), ()), (x2, ())], steps, [()])
        return triggers.jitted_read_of_a_clamped_dynamic_slice(suite.step_call(program, program.steps[-1], way))
    assert holds(-1)  # the finding as the matrix met it
    assert holds(-1, between=[()])  # as its seed rerun met it: a constraint between
    negated = [Step("v0", "negative", ("x0",)), Step("v1", "dynamic_slice", ("v0", "x1"), (("sizes", (2,)),)),
               Step("v2", "negative", ("v1",)), Step("v3", "at_max", ("v2", "x2"), (("index", slice(None, None, 2)),))]
    program = written_program(mesh, [(x0, ("a",)), (np.array(-1, np.int32), ()), (x2, ())], negated, [("b",)])
    assert triggers.jitted_read_of_a_clamped_dynamic_slice(  # and with a negation between
        suite.step_call(program, program.steps[-1], "(b) jit with in/out_shardings"))
    assert holds(5)
    assert not holds(1)
    assert not holds(-1, way="(a) eager")
    shifted = [Step("v0", "negative", ("x0",)), Step("v1", "dynamic_slice", ("v0", "x1"), (("sizes", (2,)),)),
               Step("v2", "at_set_shifted", ("v1",), (("axis", 0), ("shift", 0))), Step("v3", "negative", ("v2",))]
    program = written_program(mesh, [(x0, ("a",)), (np.array(-1, np.int32), ())], shifted, [("b",)])
    assert triggers.jitted_read_of_a_clamped_dynamic_slice(  # as the second rerun met it
        suite.step_call(program, program.steps[2], "(b) jit with in/out_shardings"))


def test_the_forward_shift_trigger_needs_a_jitted_later_destination_on_a_cumulative_value():
    """jitted_forward_shift_of_a_cumulative_value holds for the 0.12.0.1 finding (a cumsum, then
    v.at[1:4].set(v[0:3]) under jit), not eagerly, not for a shift to earlier positions, not for
    a shift of another computed value (-x: measured right) nor of a program input."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    x = np.arange(4, dtype=np.uint32)

    def holds(steps, way="(b) jit with in/out_shardings"):
        program = written_program(MeshModel((0, 1), (2,), ("a",)), [(x, ())], steps, [()])
        return triggers.jitted_forward_shift_of_a_cumulative_value(suite.step_call(program, program.steps[-1], way))
    shift = lambda operand, by: Step("v9", "at_set_shifted", (operand, ), (("axis", 0), ("shift", by)))
    cumsum = [Step("v0", "negative", ("x0",)), Step("v1", "cumsum", ("v0",), (("axis", 0),))]
    assert holds(cumsum + [shift("v1", -1)])  # the finding
    assert holds(cumsum + [shift("v1", -1)], "(c) jit with sharding constraints")
    assert not holds(cumsum + [shift("v1", -1)], "(a) eager")
    assert not holds(cumsum + [shift("v1", 1)])  # the destination before the source: nothing overwritten first
    assert not holds([shift("x0", -1)])  # an input
    assert not holds([Step("v0", "negative", ("x0",)), shift("v0", -1)])  # not a cumulative value


def test_a_layout_change_that_goes_wrong_asks_about_the_step_it_lays_out():
    """The 0.4.30 finding of this stop's localization: concatenate, then a constraint that leaves
    it partially replicated; jitted, the constraint's prefix is the first that goes wrong, and the
    bug is the join's (computed into that layout): the candidates carry the join with the
    constraint's target as its output spec, so partially_replicated_join reads both steps."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    x = np.arange(8, dtype=np.uint32).reshape(2, 2, 2)
    program = written_program(mesh, [(x, ("a",))], [
        Step("v0", "concatenate", ("x0", "x0"), (("axis", 2),)),
        Step("v1", "constraint", ("v0",), spec=(None, None, "a"))], [()])
    way = "(b) jit with in/out_shardings"
    laid_out, returned = suite.laid_out_as_asked(program, program.steps[1], way)  # (and as returned, P())
    assert laid_out.op == "concatenate" and laid_out.out_spec == (None, None, "a") and returned.out_spec == ()
    assert triggers.partially_replicated_join(laid_out)
    assert suite.laid_out_as_asked(program, program.steps[0], way) == []  # not a layout change
    assert not triggers.partially_replicated_join(suite.step_call(program, program.steps[1], way))


def test_an_elementwise_step_that_goes_wrong_asks_about_the_step_it_lays_out():
    """Met on 0.4.30: a clamped dynamic_slice, then a negation returned P('a'); jitted, the
    dynamic_slice's prefix (its layout unasked) is right and the negation's is the first that goes
    wrong: the candidates carry the dynamic_slice computed into the negation's layout, so
    clamped_start_with_a_cut_output reads it; a step that is not elementwise asks nothing more; with
    no layout asked of the elementwise step, its producer is asked about as it is."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    program = written_program(mesh, [(np.arange(3, dtype=np.uint32), ()), (np.int32(-1), ())], [
        Step("v0", "dynamic_slice", ("x0", "x1"), (("sizes", (2,)),)),
        Step("v1", "negative", ("v0",))], [("a",)])
    way = "(b) jit with in/out_shardings"
    (laid_out,) = suite.laid_out_as_asked(program, program.steps[1], way)
    assert laid_out.op == "dynamic_slice" and laid_out.out_spec == ("a",)
    assert triggers.clamped_start_with_a_cut_output(laid_out)
    assert suite.laid_out_as_asked(program, program.steps[0], way) == []
    # met on 0.4.30: a partially replicated concatenate, then negations returned replicated (no
    # layout asked of the first negation): its producer is asked about as it is
    joined = written_program(mesh, [(np.arange(4, dtype=np.uint32), ("a",)), (np.arange(2, dtype=np.uint32), ())], [
        Step("v0", "concatenate", ("x0", "x1"), (("axis", 0),)),
        Step("v1", "negative", ("v0",)),
        Step("v2", "negative", ("v1",))], [()])
    (producer,) = suite.laid_out_as_asked(joined, joined.steps[1], way)
    assert producer.op == "concatenate" and triggers.partially_replicated_join(producer)


def test_a_layout_change_returned_in_another_layout_asks_about_its_producer_in_both():
    """Met on 0.11.0 (seed 879519627): a clamped dynamic_slice of a cut vector, constrained to P(),
    returned P('b'); the constraint's prefix (computed into P('b')) is the first that goes wrong:
    the candidates carry the dynamic_slice computed into P() and into P('b'), so
    clamped_start_with_a_cut_output reads the second; a change returned in its own layout gives one."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(6)), (3, 2), ("a", "b"))
    way = "(b) jit with in/out_shardings"

    def laid_out(out_spec):
        program = written_program(mesh, [(np.arange(3, dtype=np.uint32), ("a",)), (np.int32(-1), ())], [
            Step("v0", "negative", ("x0",)), Step("v1", "dynamic_slice", ("v0", "x1"), (("sizes", (2,)),)),
            Step("v2", "constraint", ("v1",), spec=())], [out_spec])
        return suite.laid_out_as_asked(program, program.steps[2], way)
    replicated, cut = laid_out(("b",))
    assert (replicated.out_spec, cut.out_spec) == ((), ("b",))
    assert triggers.clamped_start_with_a_cut_output(cut) and not triggers.clamped_start_with_a_cut_output(replicated)
    (only,) = laid_out(())
    assert not triggers.clamped_start_with_a_cut_output(only)


def test_values_computed_inside_a_program_have_the_layout_the_model_derives():
    """Every value of a program has a spec (an input's, a layout change's target, or a step's
    result as our sharding-rule model types it, on Auto meshes too), and a jit way computes a
    value ending a prefix into it: a clamped dynamic_slice of a replicated computed value, not an
    output, is not "cut" (before, an unknown spec may have cut, and every cut-trigger held), nor
    one of a cut value (an Auto mesh leaves the dimension a dynamic slice resizes unsharded:
    measured on 0.4.30, 0.4.31 and 0.10.2, x (4,) P('a') sliced to (2,) is laid out P(), eagerly
    and under jit), while one returned cut is."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    way = "(b) jit with in/out_shardings"

    def program(x_spec, axis_type="Auto"):
        return written_program(mesh, [(np.arange(4, dtype=np.uint32), x_spec), (np.int32(-1), ())], [
            Step("v0", "negative", ("x0",)),
            Step("v1", "dynamic_slice", ("v0", "x1"), (("sizes", (2,)),)),
            Step("v2", "sum_int", ("v1",), (("axis", 0), ("keepdims", True))),
            Step("v3", "constraint", ("v2",), spec=("b",))], [("a",)], axis_type=axis_type)
    replicated, cut = program(()), program(("a",))
    assert suite.derived_specs(replicated) == {"x0": (), "x1": (), "v0": (None,), "v1": (None,), "v2": (None,),
                                               "v3": ("b",)}
    assert suite.derived_specs(cut)["v1"] == (None,) and suite.derived_specs(cut)["v2"] == (None,)
    assert suite.computed_into(cut, "v1") == (None,) and suite.computed_into(cut, "v3") == ("a",)  # an output's own
    assert suite.step_call(cut, cut.steps[1], "(a) eager").out_spec is None  # eager: it follows its operands
    assert not triggers.clamped_start_with_a_cut_output(suite.step_call(replicated, replicated.steps[1], way))
    assert not triggers.clamped_start_with_a_cut_output(suite.step_call(cut, cut.steps[1], way))
    returned = written_program(mesh, [(np.arange(4, dtype=np.uint32), ()), (np.int32(-1), ())], [
        Step("v0", "negative", ("x0",)), Step("v1", "dynamic_slice", ("v0", "x1"), (("sizes", (2,)),))], [("a",)])
    assert triggers.clamped_start_with_a_cut_output(suite.step_call(returned, returned.steps[1], way))
    explicit = program(("a",), "Explicit")
    assert suite.derived_specs(explicit)["v1"] == ("a",)


def test_a_refusal_is_accepted_only_where_the_model_rejects_the_localized_step():
    """On an Explicit mesh a ShardingTypeError is accepted where our sharding-rule model rejects a
    candidate step; where it accepts every one, has no rule for one, or is given no spec for an
    operand, the error propagates with a note saying which."""
    import suites.test_programs as suite
    from conformance.checking.triggers import Call
    from conformance.jaxside import compat
    error = compat.SHARDING_TYPE_ERRORS[0]
    mesh = MeshModel((0, 1), (2,), ("a",))
    x = np.arange(4, dtype=np.int32).reshape(2, 2)

    def raising():
        raise error("refused")

    rejected = Call("reshape", (x,), {"shape": (1, 4)}, mesh, "Explicit", ((None, "a"),), None, "(b)")
    accepted = Call("negative", (x,), {}, mesh, "Explicit", (("a",),), None, "(b)")
    unmodelled = Call("pad", (x,), {"widths": ((1, 1), (0, 0)), "mode": "no such mode"}, mesh, "Explicit", (("a",),),
                      None, "(b)")
    unknown = Call("negative", (x,), {}, mesh, "Explicit", (None,), None, "(b)")
    result, outcome = suite.classified([accepted, rejected], "Explicit", raising)
    assert result is None and outcome.startswith("rejected with") and "as our sharding-rule model says" in outcome
    for calls, says in (([accepted], "accepts these operand shardings"), ([unmodelled], "has no rule"),
                        ([unknown], "not known to our model")):
        with pytest.raises(error) as raised:
            suite.classified(calls, "Explicit", raising)
        assert says in "\n".join(raised.value.__notes__), raised.value.__notes__
    with pytest.raises(error):
        suite.classified([rejected], "Auto", raising)  # an Auto mesh rejects nothing


def test_the_steps_a_trigger_passes_over_are_the_catalogues_unary_elementwise_ones_and_layout_changes():
    """triggers.PASSED_OVER names every unary elementwise operation of the catalogue (a new one would
    otherwise stop jitted_read_of_a_clamped_dynamic_slice's walk) and the layout changes."""
    from conformance.checking.triggers import PASSED_OVER
    from conformance.model.program import LAYOUT_CHANGES
    from strategies.ops import CATALOGUE
    elementwise = {op.name for op in CATALOGUE if op.family == "elementwise"}
    assert set(PASSED_OVER) == elementwise | set(LAYOUT_CHANGES) | {"layout change of a layout change"}


def test_the_at_updates_a_trigger_names_are_the_catalogues():
    """triggers.AT_UPDATES names every .at[] update of the catalogue (family "at"), and the clamped
    dynamic_slice trigger holds for the index form met on 0.11.0 (.at[[0, 0]].add([0, 1]))."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    from strategies.ops import BY_NAME
    assert set(triggers.AT_UPDATES) == {name for name, op in BY_NAME.items() if op.family == "at"}
    mesh = MeshModel(tuple(range(6)), (3, 2), ("a", "b"))
    steps = [Step("v0", "negative", ("x0",)), Step("v1", "dynamic_slice", ("v0", "x1"), (("sizes", (2,)),)),
             Step("v2", "at_add_indices", ("v1", "x2", "x3"))]
    inputs = [(np.arange(3, dtype=np.uint32), ("a",)), (np.array(-1, np.int32), ()),
              (np.array([0, 0], np.int32), ()), (np.arange(2, dtype=np.uint32), ())]
    program = written_program(mesh, inputs, steps, [("b",)])
    assert triggers.jitted_read_of_a_clamped_dynamic_slice(
        suite.step_call(program, program.steps[-1], "(b) jit with in/out_shardings"))


def test_an_update_of_another_window_is_told_from_a_value_computed_otherwise():
    """wrongness.updated_from_another_window holds for the forms of finding P met on 0.11.0 (an
    .at[] update of a clamped dynamic_slice, directly, through a constraint or a negation, reading
    the window at another start, the unclamped one included) and not for a value no window gives."""
    import suites.test_programs as suite
    from conformance.checking import wrongness
    mesh = MeshModel(tuple(range(6)), (3, 2), ("a", "b"))
    u32 = np.uint32

    def call(between, op, static, extra):
        steps = [Step("v0", "negative", ("x0",)), Step("v1", "dynamic_slice", ("v0", "x1"), (("sizes", (2,)),))]
        last = "v1"
        for k, kind in enumerate(between):
            steps.append(Step(f"c{k}", kind, (last,)) if kind == "negative" else Step(f"c{k}", kind, (last,), spec=()))
            last = f"c{k}"
        steps.append(Step("v9", op, (last, *(f"x{i + 2}" for i in range(len(extra)))), static))
        inputs = [(np.arange(3, dtype=u32), ("a",)), (np.array(-1, np.int32), ())] + [(e, ()) for e in extra]
        program = written_program(mesh, inputs, steps, [("b",)])
        return suite.step_call(program, program.steps[-1], "(b) jit with in/out_shardings")
    add = ("at_add_indices", (), [np.array([0, 0], np.int32), np.arange(2, dtype=u32)])
    at_max = ("at_max", (("index", slice(None, None, 2)),), [np.arange(1, dtype=u32)])
    negated = call(["negative"], *add)
    assert wrongness.updated_from_another_window(negated, np.array([2, 2], u32), np.array([3, 2], u32))
    assert not wrongness.updated_from_another_window(negated, np.array([2, 2], u32), np.array([9, 2], u32))
    assert wrongness.updated_from_another_window(call([], *add), np.array([0, 2**32 - 2], u32),
                                                 np.array([2**32 - 1, 2**32 - 2], u32))
    for between in ([], ["constraint"]):
        assert wrongness.updated_from_another_window(call(between, *at_max), np.array([2**32 - 1, 2**32 - 2], u32),
                                                     np.array([2**32 - 2, 2**32 - 2], u32))


def test_an_abs_of_an_unsigned_layout_change_is_that_layout_change():
    """jnp.abs of an unsigned (or bool) value returns it, tracing nothing: a layout change of it is a
    layout change of a layout change (0.4.33, seed 3890113860: constrained P('a'), abs, returned P()
    under (c), laid out P('a')); of a signed value it is a negation-like step, and is not."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))

    def program(dtype):
        return written_program(mesh, [(np.arange(4, dtype=dtype).reshape(2, 2), ())], [
            Step("v0", "constraint", ("x0",), spec=("a",)),
            Step("v1", "abs", ("v0",))], [()])
    unsigned, signed = program(np.uint32), program(np.int32)
    assert suite.layout_changed(unsigned) == {"v0", "v1"} and suite.layout_changed(signed) == {"v0"}
    way = "(c) jit with sharding constraints"
    holds = lambda p: triggers.holds("second_layout_change_in_a_row", suite.jit_candidates(p, way, "v1"))
    assert holds(unsigned) and not holds(signed)


def test_a_reshape_to_its_own_shape_of_a_layout_change_is_that_layout_change():
    """jnp.reshape to the operand's own shape returns it, tracing nothing: a layout change of it is a
    layout change of a layout change (0.4.36, seed 81484243: v1 constrained P('a'), v5 =
    jnp.reshape(v1, (2,)) returned P() under (c), laid out P('a')); a reshape to another shape is
    not."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    from strategies.ops import BY_NAME
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))

    def program(shape):
        return written_program(mesh, [(np.arange(4, dtype=np.uint32), ())], [
            Step("v0", "constraint", ("x0",), spec=("a",)),
            Step("v1", "reshape", ("v0",), static=(("shape", shape),), source=BY_NAME["reshape"].source)], [()])
    same, other = program((4,)), program((2, 2))
    assert suite.layout_changed(same) == {"v0", "v1"} and suite.layout_changed(other) == {"v0"}
    way = "(c) jit with sharding constraints"
    holds = lambda p: triggers.holds("second_layout_change_in_a_row", suite.jit_candidates(p, way, "v1"))
    assert holds(same) and not holds(other)


def test_a_flip_along_size_one_axes_of_a_layout_change_is_that_layout_change():
    """jnp.flip along axes all of size 1 is a reverse XLA removes: a layout change of it is a layout
    change of a layout change (0.4.30, seed 986912483, cache off: v2 = constrain(-jnp.expand_dims(x0,
    0), P(None, None, None, 'a')), v3 = jnp.flip(v2, axis=0) returned P() under (c), laid out as v2);
    a flip along an axis of size 2 (or along every axis, one of size 2) is not."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))

    def program(axis):
        return written_program(mesh, [(np.arange(8, dtype=np.uint32).reshape(1, 2, 2, 2), ())], [
            Step("v0", "constraint", ("x0",), spec=(None, None, None, "a")),
            Step("v1", "flip", ("v0",), static=(("axis", axis),))], [()])
    size_one, size_two, every = program(0), program(1), program(None)
    assert suite.layout_changed(size_one) == {"v0", "v1"}
    assert suite.layout_changed(size_two) == {"v0"} and suite.layout_changed(every) == {"v0"}
    way = "(c) jit with sharding constraints"
    holds = lambda p: triggers.holds("second_layout_change_in_a_row", suite.jit_candidates(p, way, "v1"))
    assert holds(size_one) and not holds(size_two)


@pytest.mark.parametrize("op, static, identity", [
    ("slice", (("index", (slice(None, None, 1),)),), True), ("slice", (("index", (slice(0, 1, 1),)),), False),
    ("strided_slice", (("index", (slice(None, None, -1),)),), False),
    ("transpose", (("axes", (0, 1)),), True), ("transpose", (("axes", (1, 0)),), False),
    ("swapaxes", (("a", 1), ("b", -1)), True), ("swapaxes", (("a", 0), ("b", 1)), False),
    ("broadcast_to", (("shape", (2, 2)),), True), ("broadcast_to", (("shape", (1, 2, 2)),), False),
    ("pad", (("widths", ((0, 0), (0, 0))), ("mode", "edge")), True),
    ("pad", (("widths", ((0, 1), (0, 0))), ("mode", "constant")), False),
    ("roll", (("shift", 4), ("axis", 1)), True), ("roll", (("shift", 1), ("axis", 1)), False),
    ("roll", (("shift", 0), ("axis", None)), False),
    ("at_set_shifted", (("axis", 0), ("shift", 0)), True), ("at_set_shifted", (("axis", 0), ("shift", 1)), False)])
def test_a_step_whose_statics_return_its_operand_after_a_layout_change_is_that_layout_change(op, static, identity):
    """A step whose static arguments make it return its operand (``IDENTITIES``: x[::1] met on 0.6.2,
    seed 1852810764, then jnp.transpose(v, (0, 1)) in its replay; the others measured on 0.6.2 between
    two constraints) is a layout change when it follows one, so that the way's output constraint is a
    layout change of a layout change; with statics that move, drop or add an element it is not."""
    import suites.test_programs as suite
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    program = written_program(mesh, [(np.arange(4, dtype=np.uint32).reshape(2, 2), ("a",))], [
        Step("v0", "constraint", ("x0",), spec=("a",)), Step("v1", op, ("v0",), static=static)], [()])
    assert suite.layout_changed(program) == ({"v0", "v1"} if identity else {"v0"})


def test_an_update_on_an_auto_mesh_keeps_its_operands_layout_where_the_explicit_rule_rejects():
    """On an Auto mesh a shifted .at[].set of a value cut P('a') is laid out P('a') (XLA propagates
    the scatter's operand sharding), though our Explicit rule rejects the slice it reads (0.4.36,
    seed 190299437: an eager take(mode='clip') of it then meets take_clip_sharded); on an Explicit
    mesh the rejection stands (replicated, () )."""
    import suites.test_programs as suite
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))

    def program(axis_type):
        return written_program(mesh, [(np.arange(8, dtype=np.uint32).reshape(2, 2, 2), ("a",))], [
            Step("v0", "at_set_shifted", ("x0",), (("axis", 0), ("shift", -1)))], [()], axis_type=axis_type)
    assert suite.derived_specs(program("Auto"))["v0"] == ("a",)
    assert suite.derived_specs(program("Explicit"))["v0"] == ()
    # 0.7.1, seed 1169472492: a dynamic_update_slice of x P('a') by a replicated update
    updated = written_program(mesh, [(np.arange(2, dtype=np.uint32), ("a",)), (np.arange(1, dtype=np.uint32), ()),
                                     (np.int32(2), ())], [Step("v0", "dynamic_update_slice", ("x0", "x1", "x2"))], [()])
    assert suite.derived_specs(updated)["v0"] == ("a",)


def test_a_same_shape_binary_step_that_goes_wrong_asks_about_the_steps_of_both_operands():
    """Met on 0.4.38 (seed 3790318310): a concatenate, negations, then v3 + v3 returned P(None, None,
    'a') (partially replicated); the add's prefix is the first that goes wrong, and the candidates
    carry the concatenate computed into the add's layout, so partially_replicated_join reads it. An
    add that broadcasts (an operand of another shape) asks nothing more; an add of two computed
    values asks about both producers."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    x = np.arange(8, dtype=np.uint32).reshape(2, 2, 2)
    program = written_program(mesh, [(x, ("a",))], [
        Step("v0", "negative", ("x0",)),
        Step("v1", "concatenate", ("v0", "v0"), (("axis", 2),)),
        Step("v2", "negative", ("v1",)),
        Step("v3", "add", ("v2", "v2"))], [(None, None, "a")])
    way = "(b) jit with in/out_shardings"
    (laid_out,) = suite.laid_out_as_asked(program, program.steps[3], way)
    assert laid_out.op == "concatenate" and laid_out.out_spec == (None, None, "a")
    assert triggers.partially_replicated_join(laid_out)
    broadcast = written_program(mesh, [(x, ("a",)), (np.uint32(2), ())], [
        Step("v0", "concatenate", ("x0", "x0"), (("axis", 2),)),
        Step("v1", "add", ("v0", "x1"))], [(None, None, "a")])
    assert suite.laid_out_as_asked(broadcast, broadcast.steps[1], way) == []
    two = written_program(mesh, [(x, ("a",))], [
        Step("v0", "concatenate", ("x0", "x0"), (("axis", 2),)),
        Step("v1", "flip", ("x0",), (("axis", 0),)),
        Step("v2", "concatenate", ("v1", "v1"), (("axis", 2),)),
        Step("v3", "add", ("v0", "v2"))], [(None, None, "a")])
    assert [c.op for c in suite.laid_out_as_asked(two, two.steps[3], way)] == ["concatenate", "concatenate"]


def test_a_step_that_goes_wrong_asks_about_a_step_before_a_scan_only_where_its_prefix_goes_wrong(monkeypatch):
    """0.4.31, seed 2998147126: a clamped dynamic_slice of x P('a'), cumsum, then a negation returned
    P('b'): the negation's prefix is the first that goes wrong, since the jit carries P('b') back
    through the cumsum to the slice. The slice, computed into P('b'), is asked about with its own
    values, only where its prefix computed there goes wrong. 0.5.0, seed 1153646877: a reshape of
    the (2, 1) slice to (2,) carries P('b') back as P('b', None); 0.10.0, seed 3668209805: a take
    along axis 0 carries the other dimensions' layout back. A sort carries nothing back: it is
    asked about itself."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(8)), (4, 2), ("a", "b"))
    x = np.arange(8, dtype=np.uint32).reshape(4, 2)

    def program(between, static=(("axis", 0),)):
        return written_program(mesh, [(x, ("a",)), (np.int32(-1), ()), (np.int32(0), ())], [
            Step("v0", "dynamic_slice", ("x0", "x1", "x2"), (("sizes", (2, 1)),)),
            Step("v1", between, ("v0",), static),
            Step("v2", "negative", ("v1",))], [("b",)])
    way = "(b) jit with in/out_shardings"
    scanned = program("cumsum")
    assert suite.laid_out_as_asked(scanned, scanned.steps[2], way)[0].op == "cumsum"  # (the static walk stops there)
    slice_values = (np.array([[4], [6]], np.uint32), np.array([[6], [6]], np.uint32))
    asked = []

    def prefix(wrong):
        def goes_wrong(program, way, step, spec):
            asked.append((step.result, spec))
            return ("its value differs from numpy's", slice_values) if wrong else None
        return goes_wrong
    monkeypatch.setattr(suite, "prefix_goes_wrong", prefix(True))
    (source,) = suite.carried_back(scanned, scanned.steps[2], way)
    assert asked == [("v0", ("b",))]
    assert source.op == "dynamic_slice" and source.out_spec == ("b",) and source.values == slice_values
    assert triggers.clamped_start_with_a_cut_output(source)
    reshaped = program("reshape", (("shape", (2,)),))
    (source,) = suite.carried_back(reshaped, reshaped.steps[2], way)
    assert source.op == "dynamic_slice" and source.out_spec == ("b", None)
    assert [c.op for c in suite.carried_back(program("sort"), program("sort").steps[2], way)] == ["sort"]
    swapped = program("swapaxes", (("a", 0), ("b", 1)))  # (a later pass, 0.5.0: a transpose carries it back too)
    (source,) = suite.carried_back(swapped, swapped.steps[2], way)
    assert source.op == "dynamic_slice" and source.out_spec == (None, "b")
    taken = written_program(mesh, [(x, ("a",)), (np.int32(-1), ()), (np.int32(0), ()),
                                   (np.array([0, 0], np.int32), ())], [
        Step("v0", "dynamic_slice", ("x0", "x1", "x2"), (("sizes", (2, 2)),)),
        Step("v1", "take", ("v0", "x3"), (("axis", 0),)),
        Step("v2", "negative", ("v1",))], [(None, "b")])  # (0.10.0, seed 3668209805: a take carries it back)
    (source,) = suite.carried_back(taken, taken.steps[2], way)
    assert source.op == "dynamic_slice" and source.out_spec == (None, "b")
    assert triggers.clamped_start_with_a_cut_output(source)
    assert suite.spec_carried_back(taken, taken.steps[1], ("b", None)) == (None, None)  # (the taken dimension: whole)
    broadcast = written_program(mesh, [(x, ("a",)), (np.int32(-1), ()), (np.int32(0), ()),
                                       (np.zeros((1, 1), np.uint32), ())], [
        Step("v0", "dynamic_slice", ("x0", "x1", "x2"), (("sizes", (2, 2)),)),
        Step("v1", "add", ("v0", "x3")),
        Step("v2", "negative", ("v1",))], [(None, "b")])  # (0.10.0: + a broadcast input carries it back)
    (source,) = suite.carried_back(broadcast, broadcast.steps[2], way)
    assert source.op == "dynamic_slice" and source.out_spec == (None, "b")
    monkeypatch.setattr(suite, "prefix_goes_wrong", prefix(False))
    assert suite.carried_back(scanned, scanned.steps[2], way) == []  # (its prefix is right there: not asked)


def test_a_concatenate_with_one_sharded_operand_is_a_partially_replicated_join_after_it(monkeypatch):
    """0.4.30, seed 3849284905: v0 = concatenate((x0 P('a'), x1, x2)) of length 6 on an Auto (2, 4)
    mesh, then v3 = concatenate((v0, v0)) returned P(), came back times 4: XLA lays v0 out P('a')
    (replicated over b), which our model had typed replicated, so the second join's operands
    looked replicated."""
    import suites.test_programs as suite
    from conformance.checking import triggers, wrongness
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    x = np.arange(2, dtype=np.uint32)
    program = written_program(mesh, [(x, ("a",)), (x, ()), (x, ())], [
        Step("v0", "concatenate", ("x0", "x1", "x2"), (("axis", 0),)),
        Step("v1", "concatenate", ("v0", "v0"), (("axis", 0),))], [()])
    way = "(c) jit with sharding constraints"
    assert suite.derived_specs(program)["v0"] == ("a",)
    assert triggers.partially_replicated_join(suite.step_call(program, program.steps[1], way))
    # the same seed's example at the next commit: x2 of length 3, v0 of length 7 (a pads it), which a
    # prefix computes into P(), the only layout a jit returns for it there
    longer = written_program(mesh, [(x, ("a",)), (x, ()), (np.arange(3, dtype=np.uint32), ())], [
        Step("v0", "concatenate", ("x0", "x1", "x2"), (("axis", 0),)),
        Step("v1", "concatenate", ("v0", "v0"), (("axis", 0),))], [()])
    assert suite.derived_specs(longer)["v0"] == ("a",) and suite.computed_into(longer, "v0", way) == (None,)
    assert triggers.partially_replicated_join(suite.step_call(longer, longer.steps[1], way))
    # and at the next: v0 of length 5, then v0 + x2 (x2 of length 1) returned P(): the add's prefix goes
    # wrong, and the join, which no prefix can return in its padded layout, is asked about in it
    added = written_program(mesh, [(x, ("a",)), (x, ()), (np.arange(1, dtype=np.uint32), ())], [
        Step("v0", "concatenate", ("x0", "x1", "x2"), (("axis", 0),)),
        Step("v1", "add", ("v0", "x2"))], [()])
    # (asked only where its prefix, constrained to P('a') inside and returned P(), goes wrong, with
    # those values: a later pass met v0 then cumprod, whose values are a scan of multiplied ones)
    join_values = (np.array([0, 1, 0, 1, 0], np.uint32), np.array([0, 4, 0, 4, 0], np.uint32))
    asked = []

    def prefix(wrong):
        def goes_wrong(program, way, step, spec, inside=None):
            asked.append((step.result, spec, inside))
            return ("its value differs from numpy's", join_values) if wrong else None
        return goes_wrong
    monkeypatch.setattr(suite, "prefix_goes_wrong", prefix(True))
    (padded,) = suite.padded_operands(added, added.steps[1], way)
    assert asked == [("v0", (None,), ("a",))]
    assert padded.op == "concatenate" and padded.out_spec == ("a",) and triggers.partially_replicated_join(padded)
    assert padded.values is join_values and wrongness.multiplied_by_the_replica_count(padded, *padded.values)
    assert suite.padded_operands(program, program.steps[1], way) == []  # (length 6: a prefix returns it P('a'))
    monkeypatch.setattr(suite, "prefix_goes_wrong", prefix(False))
    assert suite.padded_operands(added, added.steps[1], way) == []  # (its prefix is right there: not asked)


def test_an_auto_mesh_types_steps_without_their_size_one_axes():
    """0.10.2, seed 3820354981: x + y of P('b', 'a') and P(None, None, 'b') on an Auto (3, 1) mesh
    (b of size 1) is laid out P(None, 'a'): a size-1 axis shards nothing, so naming it on two
    dimensions is no conflict there (our model had typed the sum replicated); on an Explicit mesh
    the types keep it."""
    import suites.test_programs as suite
    mesh = MeshModel((0, 1, 2), (3, 1), ("a", "b"))
    x = np.arange(12, dtype=np.uint32).reshape(2, 3, 2)

    def program(axis_type):
        return written_program(mesh, [(x, ("b", "a"))], [
            Step("v0", "constraint", ("x0",), spec=(None, None, "b")),
            Step("v1", "add", ("v0", "x0"))], [()], axis_type=axis_type)
    assert suite.derived_specs(program("Auto"))["v1"] == (None, "a", None)
    assert suite.derived_specs(program("Explicit"))["v1"] == ()  # (typed as written: 'b' on two dimensions)
    assert suite.without_size_one_axes(mesh, ("b", ("a", "b"), None)) == (None, "a", None)


def test_under_jit_on_an_auto_mesh_a_device_put_keeps_its_operands_layout():
    """0.4.31, seed 3063195687: -x of x P('a'), device_put to P() inside jit, then a concatenate
    returned P(): jit(lambda v: jax.device_put(v, P())) of v P('a') returns P('a') (measured on
    0.4.31 to 0.10.2), so the concatenate joins partially replicated operands; eagerly the
    device_put lays its result out P()."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    program = written_program(mesh, [(np.arange(4, dtype=np.uint32).reshape(2, 2), ("a",))], [
        Step("v0", "negative", ("x0",)),
        Step("v1", "device_put", ("v0",), spec=()),
        Step("v2", "concatenate", ("v1", "v1"), (("axis", 0),))], [()])
    way = "(b) jit with in/out_shardings"
    assert suite.spec_of(program, "v1", way) == ("a", None) and suite.spec_of(program, "v1", "(a) eager") == ()
    assert triggers.partially_replicated_join(suite.step_call(program, program.steps[2], way))


def test_a_step_call_names_the_steps_reading_its_value_through_steps_that_keep_it():
    """``read_by`` of v2 = x0.at[0:2].set(x0[0:2]) (a value kept as it is) holds the device_put
    reading it and the slice reading that, each with its producers; ``beside`` of an update names
    the other steps reading its operand (0.6.1, seed 435230726's forms of the prefix-slice bug)."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    from conformance.model.program import Program
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    x0 = np.arange(2, dtype=np.uint32)
    steps = (Step("v2", "at_set_shifted", ("x0",), (("axis", 0), ("shift", 0))),
             Step("v3", "device_put", ("v2",), spec=()),
             Step("v4", "negative", ("v3",)),
             Step("v8", "slice", ("v3",), (("index", (slice(None, 1, 1),)),)),
             Step("v9", "slice", ("x0",), (("index", (slice(1, 2, 1),)),)))
    program = Program(mesh, "Auto", ("x0",), ((("a",),),), steps, ("v8", "v2"), ((), ()), (),
                      (("x0", x0), ("v2", x0), ("v3", x0), ("v4", -x0), ("v8", x0[:1]), ("v9", x0[1:])))
    call = suite.step_call(program, steps[0], "(b) jit with in/out_shardings")
    assert [r.op for r in call.read_by] == ["device_put", "negative", "slice"]
    assert [r.op for r in call.beside] == ["slice"]
    assert call.read_by[2].producers[0].op == "device_put", "a reader comes with its producers"
    assert triggers.returned_beside_a_prefix_slice_of_it_with_its_shard_shape(call)
    assert not triggers.returned_beside_a_prefix_slice_of_it_with_its_shard_shape(
        suite.step_call(program, steps[2], "(b) jit with in/out_shardings")), "v4 is read by nothing"


def test_an_identity_update_beside_a_join_names_what_reads_the_join():
    """The rerun of 0.6.1's seed 435230726 (v2 = x0.at[0:2].set(x0[0:2]) of x0 uint32[2] P('a') on an
    (a=2, b=4) mesh, returned P() beside v7 = constrain(concatenate((x0, x1))[0:1], P())): the
    update's ``beside`` join carries its readers, and
    identity_update_returned_beside_a_prefix_slice_of_its_operand holds for v2 jitted, not eagerly;
    neither does it for the negation read by nothing (v3), nor where the slice reads x1's element."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    from conformance.model.program import Program
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    x0, x1 = np.array([5, 7], np.uint32), np.array([9], np.uint32)
    v0 = np.concatenate((x0, x1))

    def program(index):
        steps = (Step("v0", "concatenate", ("x0", "x1"), (("axis", 0),)),
                 Step("v1", "negative", ("v0",)),
                 Step("v2", "at_set_shifted", ("x0",), (("axis", 0), ("shift", 0))),
                 Step("v3", "negative", ("v2",)),
                 Step("v6", "slice", ("v0",), (("index", (index,)),)),
                 Step("v7", "constraint", ("v6",), spec=()))
        return Program(mesh, "Auto", ("x0", "x1"), ((("a",),), ()), steps, ("v7", "v2"), ((), ()), (),
                       (("x0", x0), ("x1", x1), ("v0", v0), ("v1", -v0), ("v2", x0), ("v3", -x0),
                        ("v6", v0[index]), ("v7", v0[index])))
    found = program(slice(None, 1, 1))
    holds = triggers.identity_update_returned_beside_a_prefix_slice_of_its_operand
    call = suite.step_call(found, found.steps[2], "(b) jit with in/out_shardings")
    assert [b.op for b in call.beside] == ["concatenate"] and \
        [r.op for r in call.beside[0].read_by] == ["negative", "slice"]
    assert holds(call)
    assert holds(suite.step_call(found, found.steps[2], "(c) jit with sharding constraints"))
    assert not holds(suite.step_call(found, found.steps[2], "(a) eager"))
    assert not holds(suite.step_call(found, found.steps[3], "(b) jit with in/out_shardings"))
    past = program(slice(2, 3, 1))
    assert not holds(suite.step_call(past, past.steps[2], "(b) jit with in/out_shardings"))


def test_a_shifted_update_beside_a_prefix_slice_of_its_operand_is_asked_as_a_scatter_beside_it():
    """The rerun of 0.6.1's seed 435230726 once the identity-update form was excused (v2 =
    x0.at[0:3].set(x0[1:4]) of x0 uint32[4] P('a') on an (a=4, b=2) mesh, returned P() beside v9 =
    constrain(x0[:-1], P())): scatter_beside_a_prefix_slice_with_its_operands_shard_shape holds for v2
    jitted, and not eagerly, nor where the slice is x0[1:] (not from its start)."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    from conformance.model.program import Program
    mesh = MeshModel(tuple(range(8)), (4, 2), ("a", "b"))
    x0 = np.array([5, 7, 9, 11], np.uint32)
    update = np.concatenate((x0[1:4], x0[3:]))

    def program(index):
        steps = (Step("v2", "at_set_shifted", ("x0",), (("axis", 0), ("shift", 1))),
                 Step("v8", "slice", ("x0",), (("index", (index,)),)),
                 Step("v9", "constraint", ("v8",), spec=()))
        return Program(mesh, "Auto", ("x0",), ((("a",),),), steps, ("v9", "v2"), ((), ()), (),
                       (("x0", x0), ("v2", update), ("v8", x0[index]), ("v9", x0[index])))
    holds = triggers.scatter_beside_a_prefix_slice_with_its_operands_shard_shape
    found, not_from_the_start = program(slice(None, -1, 1)), program(slice(1, None, 1))
    assert holds(suite.step_call(found, found.steps[0], "(b) jit with in/out_shardings"))
    assert not holds(suite.step_call(found, found.steps[0], "(a) eager"))
    assert not holds(suite.step_call(not_from_the_start, not_from_the_start.steps[0], "(b) jit with in/out_shardings"))


def test_the_sum_of_a_negated_update_beside_a_prefix_slice_is_asked_in_way_b_too():
    """The next reruns of 0.6.1's seed 435230726: v7 = sum(-device_put(x0.at[0:3].set(x0[1:4]), P())) of
    x0 uint32[4] P('a') on an (a=4, b=2) mesh, beside x0[:-1], wrong in way (b): the scatter trigger
    holds for v7 there and its wrongness (the update's last element read as 0: -27 for -38) too, and
    for a min in its place (0 for -11)."""
    import suites.test_programs as suite
    from conformance.checking import triggers, wrongness
    from conformance.model.program import Program
    mesh = MeshModel(tuple(range(8)), (4, 2), ("a", "b"))
    x0 = np.array([5, 7, 9, 11], np.uint32)
    update = np.concatenate((x0[1:4], x0[3:]))
    with np.errstate(over="ignore"):
        steps = (Step("v2", "at_set_shifted", ("x0",), (("axis", 0), ("shift", 1))),
                 Step("v3", "device_put", ("v2",), spec=()),
                 Step("v4", "negative", ("v3",)),
                 Step("v7", "sum_int", ("v4",), (("axis", None), ("keepdims", False))),
                 Step("v8", "slice", ("x0",), (("index", (slice(None, -1, 1),)),)),
                 Step("v9", "constraint", ("v8",), spec=()))
        expected = np.asarray(np.sum(-update, dtype=np.uint32))
        program = Program(mesh, "Auto", ("x0",), ((("a",),),), steps, ("v9", "v7"), ((), ()), (),
                          (("x0", x0), ("v2", update), ("v3", update), ("v4", -update), ("v7", expected),
                           ("v8", x0[:-1]), ("v9", x0[:-1])))
        got = np.asarray(np.sum(-np.concatenate((update[:3], np.zeros(1, np.uint32))), dtype=np.uint32))
    call = suite.step_call(program, steps[3], "(b) jit with in/out_shardings")
    assert triggers.scatter_beside_a_prefix_slice_with_its_operands_shard_shape(call)
    assert wrongness.updated_outside_a_prefix_slice_beside_it_as_zeros(call, expected, got)
    assert not wrongness.updated_outside_a_prefix_slice_beside_it_as_zeros(call, expected,
                                                                           np.asarray(got + np.uint32(1)))
    # the rerun after: a min in place of the sum, in way (c): 0 for -11 (the zero read for the update's last element)
    minimum = dataclasses.replace(steps[3], op="min_int")
    with np.errstate(over="ignore"):
        program = dataclasses.replace(program, steps=steps[:3] + (minimum,) + steps[4:],
                                      values=(program.values[:4] + (("v7", np.asarray(np.min(-update))),)
                                              + program.values[5:]))
    call = suite.step_call(program, minimum, "(c) jit with sharding constraints")
    assert wrongness.updated_outside_a_prefix_slice_beside_it_as_zeros(call, np.asarray(np.min(-update)),
                                                                       np.asarray(np.uint32(0)))


def test_a_join_of_a_dynamic_slice_with_itself_laid_out_replicated_runs_its_jit_ways_apart():
    """The seventh matrix pass's 0.11.0 finding (seed 160039396), reduced (v0 = lax.dynamic_slice(x0,
    (x1,), (5,)) of x0 uint32[8] on a (y=1, b=2, x=3) mesh, v1 = v0 constrained to P('y'), i.e.
    replicated, and jnp.concatenate((v1, v0)) into P(('b', 'y'))): where its reproduction is a known
    deviation the jit ways run in a subprocess (the program never returns: its faulthandler ends it),
    not here; its trigger holds for the join in both jit ways, not eagerly, and not with the
    constraint cutting over 'x' nor with two different slices (the ways then run here)."""
    import suites.test_programs as suite
    mesh = MeshModel(tuple(range(6)), (1, 2, 3), ("y", "b", "x"))

    def found(spec=("y",), second="v0"):
        return written_program(mesh, [(np.arange(8, dtype=np.uint32), ()), (np.int32(1), ()), (np.int32(2), ())], [
            Step("v0", "dynamic_slice", ("x0", "x1"), (("sizes", (5,)),)),
            Step("w0", "dynamic_slice", ("x0", "x2"), (("sizes", (5,)),)),
            Step("v1", "constraint", ("v0",), spec=spec),
            Step("v2", "concatenate", ("v1", second), (("axis", 0),))], [(("b", "y"),)])
    hang = _Covering(suite.JOIN_HANG)
    program = found()
    assert suite.isolated_ways(program, hang) == programs_.ISOLATED_WAYS
    assert suite.isolated_ways(program, _Covering()) == ()
    holds = functools.partial(last_step_holds, "jitted_concatenate_of_a_replicated_dynamic_slice_with_itself")
    assert holds(program) and holds(program, "(c) jit with sharding constraints")
    assert not holds(program, "(a) eager")
    assert not holds(found(("x",))) and suite.isolated_ways(found(("x",)), hang) == ()
    assert not holds(found(second="w0"))


def test_a_cumsum_beside_a_prefix_slice_of_its_operand_runs_its_jit_ways_apart():
    """The tenth matrix pass's 0.10.1 finding (seed 2686075859: v0 = jnp.cumsum(x0) of x0 uint32[4]
    P('a') on an (a=4, b=2) mesh, returned beside abs(constrain(x0[:1], P()))): where its reproduction
    is a known deviation the jit ways run in a subprocess (XLA aborts on it), not here; the trigger holds
    for the cumsum in both jit ways, not eagerly, nor with the slice starting at 1 or along the other
    dimension of a matrix; the wrongness of the cumsum stopped at the slice's end holds, and not one
    stopped elsewhere."""
    import suites.test_programs as suite
    from conformance.checking import triggers, wrongness
    mesh = MeshModel(tuple(range(8)), (4, 2), ("a", "b"))

    def found(index=slice(None, 1, 1), x0=None, spec=("a",), axis=0):
        x0 = np.arange(4, dtype=np.uint32) if x0 is None else x0
        return written_program(mesh, [(x0, spec)], [
            Step("v0", "cumsum", ("x0",), (("axis", axis),)),
            Step("v1", "slice", ("x0",), (("index", (index,)),)),
            Step("v2", "constraint", ("v1",), spec=()),
            Step("v3", "abs", ("v2",))], [(), ()], outputs=("v3", "v0"))
    aborts = _Covering(suite.SCAN_BESIDE_A_PREFIX_SLICE)
    program = found()
    assert suite.isolated_ways(program, aborts) == programs_.ISOLATED_WAYS
    assert suite.isolated_ways(program, _Covering()) == ()
    holds = lambda program, way="(b) jit with in/out_shardings": (
        triggers.jitted_scan_beside_a_prefix_slice_with_its_operands_shard_shape(
            suite.step_call(program, program.steps[0], way)))
    assert holds(program) and holds(program, "(c) jit with sharding constraints")
    assert not holds(program, "(a) eager")
    assert not holds(found(slice(1, 2, 1))) and suite.isolated_ways(found(slice(1, 2, 1)), aborts) == ()
    matrix = np.arange(8, dtype=np.uint32).reshape(4, 2)
    assert holds(found(slice(None, 2, 1), matrix))
    assert not holds(found(slice(None, 2, 1), matrix, axis=1))
    # the values form (0.5.1-0.10.0, and x[:2] of x[4] over four devices on 0.10.2): the scan stops at the slice's end
    x = np.array([3, 10, 6, 2], np.uint32)
    two = found(slice(None, 2, 1), x)
    call = suite.step_call(two, two.steps[0], "(b) jit with in/out_shardings")
    expected, got = np.cumsum(x, dtype=np.uint32), np.array([3, 13, 13, 13], np.uint32)
    assert wrongness.scanned_as_if_past_a_prefix_slice_beside_it_were_its_identity(call, expected, got)
    assert not wrongness.scanned_as_if_past_a_prefix_slice_beside_it_were_its_identity(
        call, expected, np.array([3, 13, 19, 19], np.uint32)), "stopped past the slice's end"
    assert not wrongness.scanned_as_if_past_a_prefix_slice_beside_it_were_its_identity(
        call, expected, np.array([3, 3, 13, 13], np.uint32)), "wrong inside the slice"


def test_a_strided_slice_of_a_clamped_dynamic_slice_is_asked_as_a_read_of_it():
    """The eleventh matrix pass's 0.8.3 finding (seed 1545607637: v1 = v0[::2] of v0 =
    lax.dynamic_slice(x0, (x1,), (2,)), x0 uint32[4] P('a') on an (a=4, b=2) mesh, x1 = -1, gave [3] for
    [2] in way (b)): jitted_read_of_a_clamped_dynamic_slice holds for v1 jitted, not eagerly, nor with
    a start needing no clamping, nor for a contiguous slice; its wrongness (a value of x0, read at the
    unclamped start) holds for [3], not for a value x0 does not hold."""
    import suites.test_programs as suite
    from conformance.checking import triggers, wrongness
    mesh = MeshModel(tuple(range(8)), (4, 2), ("a", "b"))

    def found(start=-1, index=slice(None, None, 2)):
        return written_program(mesh, [(np.arange(4, dtype=np.uint32), ("a",)), (np.int32(start), ())], [
            Step("v0", "dynamic_slice", ("x0", "x1"), (("sizes", (2,)),)),
            Step("v1", "strided_slice" if index.step not in (None, 1) else "slice", ("v0",), (("index", (index,)),))],
            [()])
    holds = lambda program, way="(b) jit with in/out_shardings": triggers.jitted_read_of_a_clamped_dynamic_slice(
        suite.step_call(program, program.steps[1], way))
    assert holds(found()) and holds(found(), "(c) jit with sharding constraints")
    assert not holds(found(), "(a) eager")
    assert not holds(found(start=1)) and not holds(found(index=slice(0, 1)))
    call = suite.step_call(found(), found().steps[1], "(b) jit with in/out_shardings")
    expected = np.array([2], np.uint32)
    assert wrongness.values_of_the_dynamic_slices_operand(call, expected, np.array([3], np.uint32))
    assert not wrongness.values_of_the_dynamic_slices_operand(call, expected, np.array([7], np.uint32))


def test_a_cut_layout_of_a_stack_of_a_clamped_dynamic_slice_is_asked_about_the_slice():
    """The replay of the 0.8.3 seed 1545607637 once the gather form was excused: v2 =
    constrain(jnp.stack((v0, v0, v0)), P()) of v0 = lax.dynamic_slice(x0, (-1,), (2,)), x0 uint32[4]
    P('a') on an (a=4, b=2) mesh, into P(None, 'b'): cut_layout_reaching_a_clamped_dynamic_slice holds
    for v2 in way (b), not into P(), nor with a start needing no clamping, nor eagerly."""
    import suites.test_programs as suite
    from conformance.checking import triggers
    mesh = MeshModel(tuple(range(8)), (4, 2), ("a", "b"))

    def found(start=-1, out=(None, "b")):
        return written_program(mesh, [(np.arange(4, dtype=np.uint32), ("a",)), (np.int32(start), ())], [
            Step("v0", "dynamic_slice", ("x0", "x1"), (("sizes", (2,)),)),
            Step("v1", "stack", ("v0", "v0", "v0"), (("axis", 0),)),
            Step("v2", "constraint", ("v1",), spec=())], [out])
    holds = lambda program, way="(b) jit with in/out_shardings": triggers.cut_layout_reaching_a_clamped_dynamic_slice(
        suite.step_call(program, program.steps[-1], way))
    assert holds(found())
    assert not holds(found(out=())) and not holds(found(start=1)) and not holds(found(), "(a) eager")


def wrong_then_raising_prefixes(monkeypatch):
    """The suite, a written program, a jit way and what each prefix shows (planted in the suite's
    ``prefix_goes_wrong``): the first step's prefix returns a wrong value, the second's raises."""
    import suites.test_programs as suite
    program, way = suite.written_examples()[3], "(b) jit with in/out_shardings"
    first, second = program.steps[0], program.steps[1]
    shown = {first.result: ("its value differs from numpy's", (np.zeros(1), np.ones(1))),
             second.result: (suite.RAISES + "ShardingTypeError", None)}
    monkeypatch.setattr(suite, "prefix_goes_wrong",
                        lambda program, way, step, spec, inside=None: shown.get(step.result))
    return suite, program, way, shown


def test_a_raised_failure_is_localized_to_the_first_step_whose_prefix_raises(monkeypatch):
    """A failure that raised is localized to the first step whose prefix raises, past an earlier step
    whose prefix only returns a wrong value (another deviation: met at ten times the examples on
    0.11.1, a clamped dynamic_slice blamed for its cumsum's ShardingTypeError); a wrong-values
    failure, and a raised one where no prefix raises, to the first step that goes wrong either way."""
    suite, program, way, shown = wrong_then_raising_prefixes(monkeypatch)
    first, second = program.steps[0], program.steps[1]
    assert suite.first_wrong_step(program, way, raised=True)[0] is second
    assert suite.first_wrong_step(program, way)[0] is first
    del shown[second.result]
    assert suite.first_wrong_step(program, way, raised=True)[0] is first


def test_a_program_run_in_a_subprocess_asks_about_steps_as_a_later_layout_change_computes_them():
    """The candidates of a program whose jit ways run in a subprocess include each step a layout
    change computes into its target (met on 0.11.2, seed 1305825535: a clamped dynamic_slice of a
    value constrained P(), then constrained onto ('a', 'b')), as the located step's do in process."""
    import suites.test_programs as suite
    mesh = MeshModel(tuple(range(8)), (2, 2, 2), ("a", "b", "x"))
    program = written_program(mesh, [(np.arange(16, dtype=np.uint32).reshape(2, 8), ("a",)), (np.int32(0), ()),
                                     (np.int32(-1), ())], [
        Step("v0", "negative", ("x0",)),
        Step("v1", "constraint", ("v0",), spec=()),
        Step("v2", "dynamic_slice", ("v1", "x1", "x2"), (("sizes", (1, 4)),)),
        Step("v3", "constraint", ("v2",), spec=(None, ("a", "b")))], [()])
    calls = suite.dependent_candidates(program, "(b) jit with in/out_shardings")
    sliced = [c.out_spec for c in calls if c.op == "dynamic_slice"]
    assert (None, ("a", "b")) in sliced, (f"got the dynamic_slice asked about as laid out {sliced}, "
                                          f"but should be also as the constraint after it lays it out")


def test_an_explicit_refusal_is_asked_about_the_step_whose_prefix_raises(monkeypatch):
    """Whether our model expects an Explicit mesh's refusal of a jit way is asked about the first step
    whose prefix raises, not an earlier one whose prefix returns a wrong value: the refusal is
    accepted when the model rejects that step, and fails when it rejects none."""
    suite, program, way, _ = wrong_then_raising_prefixes(monkeypatch)
    second = program.steps[1]
    rejected = {second.op}
    monkeypatch.setattr(suite, "expected_rejection", lambda call: "it says so" if call.op in rejected else None)

    class Refused(Exception):
        pass

    def refused():
        raise Refused("refused")
    monkeypatch.setattr(compat, "SHARDING_TYPE_ERRORS", (Refused,))
    calls = lambda failure: suite.refusal_candidates(program, way, failure)
    assert suite.classified(calls, "Explicit", refused)[1].startswith("rejected with")
    rejected.clear()
    with pytest.raises(Refused):
        suite.classified(calls, "Explicit", refused)


def test_a_subprocess_exception_without_a_message_is_read_with_its_innermost_frame():
    """A bare ``AssertionError`` line (Python prints no colon for an empty message) is the exception
    a subprocess raised, and the traceback's last ``File ..., in f`` line says where, as a known
    deviation's ``raised_in`` reads it (met on 0.12.0.1: jnp.reshape's bare AssertionError in
    split_partitions, run in a subprocess, failed its entry until then)."""
    from conformance.checking.programs import EXCEPTION_LINE, innermost_frame_of
    stderr = ("Traceback (most recent call last):\n"
              '  File "/v/lib/python3.13/site-packages/jax/_src/numpy/lax_numpy.py", line 9, in reshape\n'
              "    return lax.reshape(a, shape)\n"
              '  File "/v/lib/python3.13/site-packages/jax/_src/lax/lax.py", line 7, in split_partitions\n'
              "    assert next(iter_sp, None) is None\n"
              "AssertionError")
    bare = EXCEPTION_LINE.match(stderr.splitlines()[-1])
    assert bare and bare["name"] == "AssertionError" and not bare["message"]
    assert EXCEPTION_LINE.match("ValueError: bad shape")["message"] == "bad shape"
    assert innermost_frame_of(stderr) == "jax._src.lax.lax.split_partitions"
    assert innermost_frame_of("no traceback") == ""


def test_a_refusal_in_a_subprocess_is_judged_as_the_way_it_was_running_runs_it():
    """The isolated script says which way it is running before each (``programs_.RUNNING``); a
    ShardingTypeError there is judged as that way runs the program: eager x0[:1:-1] of x0 cut P('a')
    on an Explicit mesh, which jnp takes through gather, is a documented refusal, while jitted (a
    slice) it is none (met on 0.12.0.1 in CI, seed 18148789, asked as jitted)."""
    import suites.test_programs as suite
    if not compat.SHARDING_TYPE_ERRORS:
        pytest.skip("this JAX has no Explicit axes")
    program = written_program(MeshModel((0, 1, 2, 3), (2, 2), ("a", "b")), [(np.arange(6, dtype=np.uint32), ("a",))],
                              [Step("v0", "slice", ("x0",), (("index", (slice(None, 1, -1),)),))], [()],
                              axis_type="Explicit")
    lines = programs_.isolated_lines(program, ("(a)",) + programs_.ISOLATED_WAYS)
    assert sum(line.strip().startswith(f"print({programs_.RUNNING!r}") for line in lines) == 3, lines
    assert programs_.running_way(f"{programs_.RUNNING} (a)\n(a) v0 00\n{programs_.RUNNING} (b)\n") == "(b)"
    assert programs_.running_way("") == ""
    assert suite.subprocess_outcome(program, "ShardingTypeError", "(a)") is not None
    assert suite.subprocess_outcome(program, "ShardingTypeError", "(b)") is None
