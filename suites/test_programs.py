"""Generated programs: random chains of catalogue operations and layout changes on sharded arrays
(``strategies/programs.py``) equal the same program run unsharded, and numpy's values.

Each program runs four ways: (0) unsharded, step by step on one device, against numpy; (a) eagerly,
step by step, on committed sharded inputs: every step's value, its shards, and the layout of every
layout change; (b) as one ``jit`` with ``in_shardings``/``out_shardings`` and donated inputs; (c) as
one ``jit`` with constraints on the inputs and outputs. Each output of (b) and (c) must hold
numpy's value, laid out as asked. A failure prints the shrunk program as a script.

Under ``--hypothesis-profile=soak`` the property runs in rounds, each in a fresh process, for
``--soak-minutes`` (``test_generated_programs_soak``); every distinct failure is reported.
"""

import contextlib
import os
import warnings

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, event, example, given, settings

import conformance.checking.programs as programs_
import suites.test_programs_reproductions as reproductions
import suites.test_sharding_invariance_reproductions as invariance_reproductions
from conformance.checking.case import Case, ConformanceFailure
from conformance.checking.layouts import check_layout
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel
from conformance.runner import environment, soak
from conformance.model.program import Program, Step
from strategies.programs import programs, written_program
from suites.test_sharding_invariance import ABORT, JOINING, KNOWN_ABORT, classified, explicit_outcome, forwards_an_input

pytestmark = pytest.mark.programs
DEVICES = bridge.live_device_ids()

# Each example compiles every step eagerly twice (unsharded, sharded) and two whole programs: a
# half of the profile's examples (50 by default, 500 nightly and in each soak round).
EXAMPLES = max(8, settings().max_examples // 2)
PROPERTY_ID = "suites/test_programs.py::test_generated_programs_agree_with_the_unsharded_run"
SOAK = "soak"  # the Hypothesis profile under which the property runs in the soak's rounds


def ops_in(program: Program, ops) -> bool:
    return any(step.op in ops for step in program.steps)


def constrains_twice(program: Program) -> bool:
    """A layout change of a layout change's result, or an output that is one (which (b) and (c)
    lay out again)."""
    changed = {s.result for s in program.steps if s.changes_layout}
    return bool(changed & set(program.outputs)) or any(s.changes_layout and s.operands[0] in changed
                                                      for s in program.steps)


# Known deviations a program can run into: (the reproduction, whether a program can show it). On a
# JAX where the reproduction is a known deviation, a failing program that can show one of them
# counts as a Hypothesis event naming it, as the catalogue's operations count their own (its
# non-strict entries); any other failure fails the property.
KNOWN_IN_PROGRAMS = (
    (invariance_reproductions.test_dynamic_slice_clamps_its_start_once_with_a_sharded_output,
     lambda p: ops_in(p, ("dynamic_slice",))),
    (invariance_reproductions.test_dynamic_update_slice_normalizes_a_negative_start_with_a_sharded_output,
     lambda p: ops_in(p, ("dynamic_update_slice",))),
    (invariance_reproductions.test_concatenate_into_a_partially_replicated_output,
     lambda p: ops_in(p, ("concatenate", "stack", "pad", "roll"))),
    (invariance_reproductions.test_take_clip_of_a_sharded_array, lambda p: ops_in(p, ("take_clip",))),
    (invariance_reproductions.test_slice_with_a_stride_beyond_the_dimension_of_a_sharded_array,
     lambda p: ops_in(p, ("strided_slice",))),
    (invariance_reproductions.test_explicit_batched_matmul_with_one_operand_sharded_on_the_batch_dimension,
     lambda p: p.axis_type == "Explicit" and ops_in(p, ("matmul",))),
    (reproductions.test_the_second_of_two_constraints_in_a_row_applies, constrains_twice),
    (reproductions.test_strided_at_min_after_a_constraint_with_a_replicated_output,
     lambda p: ops_in(p, ("at_min", "at_max"))),
)


def known_in(program: Program, known_deviations) -> list:
    """The names of the known deviations of this JAX that ``program`` can show."""
    return [test.__name__ for test, shows in KNOWN_IN_PROGRAMS
            if known_deviations.covers(test) is not None and shows(program)]


def placed(program: Program):
    return [jax.device_put(x, bridge.named_sharding(program.mesh, s, program.axis_type))
            for x, s in zip(program.arrays, program.in_specs)]


def in_context(program: Program):
    return compat.mesh_context(bridge.jax_mesh(program.mesh, program.axis_type), program.axis_type)


def run(case: Case, program: Program, what: str, call):
    """``call()``'s result; None, with an event, when an Explicit mesh rejects the program with a
    ShardingTypeError or a known deviation of the catalogue; any other exception is a failure."""
    result, outcome = case.accepts(what, lambda: classified(program.axis_type, call))
    if outcome is not None:
        event(f"program {what.split(' ')[0]} on an Explicit mesh: {outcome}")
    return result


def check_values(case: Case, array, expected: np.ndarray, what: str, layout=None) -> None:
    """``array`` holds ``expected`` bit for bit, every shard its block of it, laid out as
    ``layout`` (default: as its own sharding says)."""
    got = case.accepts(f"np.asarray of {what}", lambda: np.asarray(array))
    case.same_bits(what, got, expected)
    layout = layout or bridge.layout_of(array.sharding, expected.shape)
    if layout is not None:
        check_layout(case, array, layout, x=expected, what=what)


def check_unsharded(case: Case, program: Program) -> None:
    """(0) Each step on one device equals numpy's value: the oracle the sharded runs meet."""
    env = {n: jax.device_put(x) for n, x in zip(program.inputs, program.arrays)}
    for step in program.steps:
        fn = programs_.step_function(program, step, unsharded=True)
        what = f"(0) unsharded {step.result} = {programs_.expression(step)}"
        env[step.result] = case.accepts(what, lambda: fn(env))
        case.same_bits(f"{what} vs numpy", np.asarray(env[step.result]), program.value(step.result))


def check_eager(case: Case, program: Program) -> None:
    """(a) Step by step on committed sharded inputs: every value, and the layout each layout change
    asks for."""
    env = dict(zip(program.inputs, placed(program)))
    with in_context(program):
        for step in program.steps:
            fn = programs_.step_function(program, step)
            what = f"(a) eager {step.result} = {programs_.expression(step)}"
            value = run(case, program, what, lambda: fn(env))
            if value is None:
                return
            expected = program.value(step.result)
            layout = Layout(program.mesh, step.spec, expected.shape) if step.changes_layout else None
            check_values(case, value, expected, what, layout)
            env[step.result] = value


def jit_ways(program: Program):
    fn = programs_.program_function(program)
    sharding = lambda spec: bridge.named_sharding(program.mesh, spec, program.axis_type)  # noqa: E731
    ins, outs = tuple(map(sharding, program.in_specs)), tuple(map(sharding, program.out_specs))
    constrain = lambda x, s: compat.constrain(x, s, program.axis_type)  # noqa: E731
    jitted = jax.jit(fn, in_shardings=ins, out_shardings=outs, donate_argnums=program.donated)
    constrained = jax.jit(lambda *a: tuple(constrain(o, s) for o, s in
                                           zip(fn(*(constrain(x, s) for x, s in zip(a, ins))), outs)))
    return (("(b) jit with in/out_shardings", jitted), ("(c) jit with constraints", constrained))


def check_jitted(case: Case, program: Program, ignores_returned_constraint: bool) -> None:
    """(b) and (c): every output holds numpy's value, laid out as asked."""
    for mode, jitted in jit_ways(program):
        with in_context(program), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Some donated buffers were not usable"
            outs = run(case, program, mode, lambda: jitted(*placed(program)))
        if outs is None:
            continue
        for name, spec, out in zip(program.outputs, program.out_specs, outs):
            expected = program.value(name)
            if mode.startswith("(c)") and ignores_returned_constraint and forwards_an_input(program.arrays, expected):
                event("program (c): an output is an input, whose constraint this JAX ignores (known deviation, "
                      f"see {invariance_reproductions.test_constraint_applies_to_a_returned_input.__name__})")
                check_values(case, out, expected, f"{mode} output {name}")
                continue
            check_values(case, out, expected, f"{mode} output {name}", Layout(program.mesh, spec, expected.shape))


def written_examples_of(programs_list):
    """``@example(program=...)`` for each program of the list."""
    def decorate(test):
        for program in reversed(programs_list):
            test = example(program=program)(test)
        return test
    return decorate


def written_examples():
    """Programs that every run checks, over all devices on one axis ``a``: a computed value
    constrained twice (the second constraint, at the output, must win), and a reduction, a
    reshard and a scan of the reduced value."""
    n = len(DEVICES)
    mesh = MeshModel(DEVICES, (n,), ("a",))
    arange = np.arange(2 * n * 2, dtype=np.uint32)
    return [
        written_program(mesh, [(arange[:2 * n], ())], [
            Step("v0", "flip", ("x0",), (("axis", 0),)),
            Step("v1", "constraint", ("v0",), spec=())], [("a",)]),
        written_program(mesh, [(arange.reshape(2, 2 * n), ("a",) if n <= 2 else ())], [
            Step("v0", "sum_int", ("x0",), (("axis", 0), ("keepdims", True))),
            Step("v1", "constraint", ("v0",), spec=(None, "a")),
            Step("v2", "cumsum", ("v1",), (("axis", 1),))], [(None, "a")]),
    ]


@contextlib.contextmanager
def known_failures(program: Program, known_deviations):
    """A ConformanceFailure of a program that can show a known deviation of this JAX is an event."""
    try:
        yield
    except ConformanceFailure as failure:
        known = known_in(program, known_deviations)
        if not known:
            raise
        event(f"program failed where known deviations apply ({', '.join(known)}): {failure.finding[:100]}")


@pytest.mark.skipif(f"config.getoption('hypothesis_profile') == {SOAK!r}",
                    reason="under --hypothesis-profile=soak the programs run in test_generated_programs_soak's rounds")
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(program=programs(DEVICES, axis_types=compat.mesh_axis_types()))
@written_examples_of(written_examples())
def test_generated_programs_agree_with_the_unsharded_run(program, known_deviation, known_deviations,
                                                         run_isolated):
    """A chain of catalogue operations with layout changes between them, run eagerly step by step
    or jitted with constraints or with in/out shardings and donation, gives the values of the same
    program run unsharded, laid out as each layout change and output asks."""
    if known_deviation.seen:
        return
    case = programs_.program_case(program)
    soak.log_program(case.repro, os.environ.get(environment.PROGRAM_LOG))
    aborts = known_deviations.covers(ABORT) is not None
    ignores_returned_constraint = known_deviations.covers(
        invariance_reproductions.test_constraint_applies_to_a_returned_input) is not None
    with known_deviation.first_failure_ends_the_property(), known_failures(program, known_deviations):
        check_unsharded(case, program)
        check_eager(case, program)
        if aborts and any(step.op in JOINING for step in program.steps):
            outcome = programs_.check_jitted_in_subprocess(case, program, run_isolated, known_abort=KNOWN_ABORT,
                                                           classify=explicit_outcome)
            if outcome is not None:
                event(f"program (b)/(c) in a subprocess: {outcome}")
        else:
            check_jitted(case, program, ignores_returned_constraint)


@pytest.mark.skipif(f"config.getoption('hypothesis_profile') != {SOAK!r}",
                    reason="runs only under --hypothesis-profile=soak (for --soak-minutes minutes)")
def test_generated_programs_soak(pytestconfig):
    """Under --hypothesis-profile=soak: rounds of the program property with fresh seeds, each in its
    own process, for --soak-minutes; every distinct failure (by its shrunk program, a crash
    included) is reported, and any fails the soak."""
    chosen = pytestconfig.getoption("--known-deviations")
    extra = ["--known-deviations", str(chosen)] if chosen else []
    if bridge.platform() == "cpu":
        extra += ["--devices", str(len(DEVICES))]
    else:
        extra += ["--backend", bridge.platform()]
    seed = int(os.environ.get(environment.SEED) or pytestconfig.getoption("hypothesis_seed") or 0)
    result = soak.run(PROPERTY_ID, pytestconfig.getoption("soak_minutes"), seed, extra=extra)
    print(soak.summary(result))
    if result.findings:
        Case(f"soak of {PROPERTY_ID}", soak.scripts(result)).fail(soak.summary(result))
