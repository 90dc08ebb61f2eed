"""Sharding never changes values: every operation of the catalogue (``strategies/ops/``), run on
randomly sharded inputs and asked for a random output sharding, gives the answer of the same
operation on unsharded inputs (and numpy's), laid out as asked.

Each example runs the operation three ways over one mesh (Auto axes, or Explicit ones where the
version has sharding in types): (a) eagerly on committed sharded inputs, (b) under ``jit`` with
``in_shardings``/``out_shardings``, (c) under ``jit`` with the input and output layouts asked for
inside (``with_sharding_constraint``; ``reshard`` on Explicit axes). On an Explicit mesh a
``ShardingTypeError`` is a documented outcome (a Hypothesis event) only where our model of the
operation's sharding rule (``conformance/model/sharding_rules.py``) rejects those operand
shardings; any other rejection, and any other error, is a failure.

The unsharded run is the oracle and is never excused. Where the comparison is exact (all but a
few floating-point operations) the sharded ways are compared with numpy's value and the oracle
runs on demand (``OracleOnDemand``): where a way fails, before its failure is judged, and where a
way is not checked whole. Each way runs under this property's known deviations (``excuses``): a
failure is excused only where an entry's trigger holds for the example and the failure shows the
entry's symptom; later ways still run.

The smallest reproductions of what the catalogue found are in
``test_sharding_invariance_reproductions.py``; ``known_deviations.toml`` lists the versions each one
fails on.
"""

import functools
from dataclasses import dataclass
from typing import Tuple

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import suites.test_sharding_invariance_reproductions as reproductions
import conformance.checking.programs as programs_
from conformance.checking import triggers
from conformance.checking.case import Case, OracleOnDemand, excusable
from conformance.checking.layouts import check_layout
from conformance.checking.repro import context_indent, describe_mesh, script, spec_literal
from conformance.checking.triggers import Call
from conformance.checking.ways import Way
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel, Spec, block_slices, spec_axes
from conformance.model.program import Program, Step
from strategies.ops.examples import catalogue_examples
from strategies.ops import CATALOGUE, VOCABULARY, Op

pytestmark = pytest.mark.sharding_invariance
DEVICES = bridge.live_device_ids()

# Compilation dominates: each example compiles four programs or more (unsharded, eager, two jits),
# so each of the 60 entries runs 4% of the profile's examples (4 by default, 40 nightly), which
# keeps the default `pytest suites/` within its 3-minute budget on a 2-core machine.
EXAMPLES_PER_OP = max(3, settings().max_examples // 25)
# The vocabulary's entries (the rest of jax.numpy and jax.lax, 387 of them) run 1% of the profile's
# examples each (1 by default, 10 nightly), drawn the same way: CI's two default runs stay within its
# 15 minutes (at 2 each, CI took 13 min 38 s on 2026-12-07).
EXAMPLES_PER_FUNCTION = max(1, settings().max_examples // 100)


@dataclass(frozen=True)
class Example:
    """One drawn example: operands and static arguments, a mesh and axis type, one spec per
    operand, the requested output spec, and numpy's answer."""

    op: Op
    operands: Tuple[np.ndarray, ...]
    static: dict
    mesh: MeshModel
    axis_type: str
    in_specs: Tuple[Spec, ...]
    out_spec: Spec
    expected: np.ndarray

    def out_layout(self, shape) -> Layout:
        return Layout(self.mesh, self.out_spec, tuple(shape))

    def sharding(self, spec):
        return bridge.named_sharding(self.mesh, spec, self.axis_type)

    def call(self, way: Way) -> Call:
        """The example as the known deviations' triggers read it, run ``way``."""
        return Call(self.op.name, self.operands, self.static, self.mesh, self.axis_type, self.in_specs,
                    self.out_spec, way, tuple(np.shape(self.expected)))


@st.composite
def examples(draw, op: Op) -> Example:
    """An example drawn by ``strategies.ops.examples.catalogue_examples``: the op's inputs; a mesh
    (any sub-mesh or order, mostly one that can cut them) with Auto or Explicit axes; a spec per
    operand and for the output that divides its shape, one of them cut over an axis of size > 1
    wherever one can be (mostly along a reduced or contracted dimension), the others replicated
    or sharded on any dimensions."""
    axis_types = compat.mesh_axis_types() if op.explicit else ("Auto",)  # (Op.explicit: a gap the coverage lists)
    parts = draw(catalogue_examples(op, DEVICES, axis_types))
    return Example(op, parts.operands, parts.static, parts.mesh, parts.axis_type, parts.in_specs,
                   parts.out_spec, parts.expected)


MODES = tuple(Way)  # the sharded ways
# what is counted, for the entry that excuses it, where (c) returns an input and its layout goes unchecked
UNCHECKED_RETURNED_INPUT = f"{Way.JIT_CONSTRAINTS.letter} layout of a returned input not checked"


def invariance_case(example: Example) -> Case:
    """The call description and a script that runs all three ways on its own."""
    op = example.op
    names = [f"x{i}" for i in range(len(example.operands))]
    shardings = ", ".join(f"NamedSharding(mesh, {spec_literal(s)})" for s in example.in_specs)
    constrain = compat.CONSTRAIN_SOURCE[example.axis_type]
    ways = {"unsharded": "f(" + ", ".join(f"jnp.asarray({n})" for n in names) + ")",
            Way.EAGER: "f(*args)",
            Way.JIT_SHARDINGS: "jax.jit(f, in_shardings=in_shardings, out_shardings=out_sharding)(*args)",
            Way.JIT_CONSTRAINTS: "constrained(*args)"}
    in_context = [  # each way prints its result, or what it raised (so the verdict that ends the script still runs)
        f"constrained = jax.jit(lambda *a: {constrain}(f(*({constrain}(x, s) for x, s in "
        "zip(a, in_shardings))), out_sharding))",
        "def run(way, call):",
        "    try:",
        "        print(way, call())",
        "    except Exception as e:",
        "        print(way, 'raised', type(e).__name__, str(e)[:1000])",
        f"run('{Way.EAGER}:', lambda: {ways[Way.EAGER]})",
        f"run('{Way.JIT_SHARDINGS}:', lambda: {ways[Way.JIT_SHARDINGS]})",
        f"run('{Way.JIT_CONSTRAINTS}:', lambda: {ways[Way.JIT_CONSTRAINTS]})",
    ]
    code = script([
        "import functools",
        f"f = functools.partial({op.source}, **{example.static!r})",
        f"in_shardings = ({shardings},)",
        f"out_sharding = NamedSharding(mesh, {spec_literal(example.out_spec)})",
        f"args = [jax.device_put(x, s) for x, s in zip(({', '.join(names)},), in_shardings)]",
        f"print('unsharded:', {ways['unsharded']})",
    ], meshes={"mesh": example.mesh}, axis_type=example.axis_type,
        arrays=dict(zip(names, example.operands)), in_context=in_context)
    inputs = "; ".join(f"{name}: {x.dtype}{list(np.shape(x))} {spec_literal(s)}"
                       for name, x, s in zip(names, example.operands, example.in_specs))
    call = (f"{op.name}: {op.source} with {example.static!r}; {example.axis_type} "
            f"{describe_mesh(example.mesh)}; inputs {inputs}; output {spec_literal(example.out_spec)}")
    outcomes = {**ways, **{f"np.asarray of the {way}": f"np.asarray({expression})" for way, expression in ways.items()},
                "unsharded call": ways["unsharded"],
                "unsharded result dtype": f"np.asarray({ways['unsharded']}).dtype.name"}
    return Case(call, code, outcomes, indent=context_indent(example.axis_type, in_context))


def as_numpy(case: Case, mode: str, result) -> np.ndarray:
    """``np.asarray(result)``; an exception (shards that do not assemble) is a failure."""
    return case.accepts(f"np.asarray of the {mode} result", lambda: np.asarray(result))


def compare(case: Case, op: Op, what: str, got, expected) -> None:
    case.close(what, got, expected, rtol=op.rtol, atol=op.atol)


def check_shards_hold(case: Case, op: Op, array, expected, what: str) -> None:
    """Every addressable shard holds ``expected[its block]``, replicas included."""
    for view in bridge.shards(array):
        compare(case, op, f"{what} shard on device {view.device_id}", view.data,
                expected[block_slices(view.block)])


def sharding_verdict(call: Call):
    """Our sharding-rule model's verdict (``conformance/model/sharding_rules.py``) on ``call``'s
    operand specs over its mesh's Explicit axes, by the rules of the installed release (the stated
    rule changes it has: ``compat.sharding_rule_set``)."""
    from conformance.model import sharding_rules as rules
    from strategies.ops import BY_NAME
    return rules.sharding_verdict(call.op, BY_NAME[call.op].family, [np.shape(x) for x in call.operands],
                                  call.in_specs, call.static, call.mesh, eager=call.eager,
                                  rules=compat.sharding_rule_set())


def expected_rejection(call: Call):
    """Why our model of the operation's sharding rule (``conformance/model/sharding_rules.py``)
    rejects ``call``'s operand shardings on an Explicit mesh, or None where it does not: where it
    accepts them, and where it has no rule for the operation or is given no spec for an operand
    (a ShardingTypeError there is a failure, whose note says which)."""
    from conformance.model import sharding_rules as rules
    from strategies.ops import BY_NAME
    if call.op not in BY_NAME or any(spec is None for spec in call.in_specs):
        return None  # a layout change (never rejected), or no spec to type an operand with
    verdict = sharding_verdict(call)
    return verdict.reason if isinstance(verdict, rules.Rejects) else None


def why_not_rejected(call: Call) -> str:
    """Why our model does not accept a ShardingTypeError for ``call`` (a failure's note)."""
    from conformance.model import sharding_rules as rules
    from strategies.ops import BY_NAME
    if call.op not in BY_NAME:
        return f"{call.op} is a layout change, which an Explicit mesh never rejects"
    if any(spec is None for spec in call.in_specs):
        return "an operand's spec is not known to our model, so no rejection can be expected"
    verdict = sharding_verdict(call)
    if isinstance(verdict, rules.Unmodelled):
        return (f"our sharding-rule model has no rule for this call ({verdict.reason}): a refusal is accepted "
                "only where a rule says JAX rejects it")
    return (f"our sharding-rule model accepts these operand shardings on an {call.axis_type} mesh, "
            f"so the operation should run")


# XLA's SPMD partitioner aborts the process on some joins of differently split operands, and on an
# operand's reshard that moves an axis into combined axes of another dimension: where this
# reproduction is a known deviation, the jit ways of a joining operation, and of an example that
# trigger (jitted_axis_moved_into_combined_axes) holds for, run in a subprocess (an abort there is
# a failure, which the entries for them excuse where their trigger holds).
ABORT = reproductions.test_concatenate_constrained_across_two_differently_split_operands
JOINING = ("concatenate", "stack")


def aborts_under_jit(call: Call) -> bool:
    """Whether XLA may abort the process on ``call`` jitted, where ABORT is a known deviation: a join,
    or an operand's axis moved into combined axes of another dimension."""
    return call.op in JOINING or triggers.jitted_axis_moved_into_combined_axes(call)


# It aborts on a gather into an output refining the cut of a dimension its operand passes through
# (0.11.2 alone): where this reproduction is a known deviation, such an example's jit ways run in a
# subprocess.
GATHER_ABORT = reproductions.test_take_into_an_output_refining_its_operands_cut_of_a_passed_through_dimension


# XLA's SPMD partitioner aborts the process on lax.pad with interior padding whose negative low
# edge starts on a padding element, with the operand or the output cut (every release so far;
# eager too): where this reproduction is a known deviation, such an example runs unsharded only
# (against numpy), counted under it in the run report; elsewhere it runs every way.
PAD_ABORT = reproductions.test_lax_pad_starting_inside_interior_padding


def starts_inside_interior_padding_of_a_cut_layout(call: Call) -> bool:
    """lax.pad whose negative low edge on a dimension with interior padding starts the result on a
    padding element, with an operand or (jitted) the output cut over an axis of size > 1."""
    if call.op != "lax_pad_negative":
        return False
    return triggers.pad_starts_inside_interior_padding(call.static["config"]) and (
        triggers.cuts(call.mesh, call.in_specs[0]) or triggers.cuts(call.mesh, call.out_spec))


def classified(call: Call, fn):
    """``(fn(), None)``; on an Explicit mesh, ``(None, outcome)`` when ``fn`` raises a
    ShardingTypeError that our sharding-rule model expects for ``call``; any other exception
    propagates (a ShardingTypeError the model does not expect says why)."""
    try:
        return fn(), None
    except compat.SHARDING_TYPE_ERRORS as e:
        why = expected_rejection(call) if call.axis_type == "Explicit" else None
        if why is None:
            e.add_note(why_not_rejected(call))
            raise
        return None, f"rejected with {type(e).__name__} as our sharding-rule model says ({why})"


def explicit_outcome(call: Call, name: str):
    """What an exception of class ``name`` raised by ``call`` on an Explicit mesh is: a documented
    rejection where our sharding-rule model rejects it, else None (a failure)."""
    if name in {e.__name__ for e in compat.SHARDING_TYPE_ERRORS}:
        why = expected_rejection(call)
        return None if why is None else f"rejected with {name} ({why})"
    return None


def accepted_refusal(excuses, what: str, example) -> None:
    """Count a refusal accepted because our sharding-rule model says JAX rejects the call (``what``:
    the operation, the way and which): in the run report through the property's ``excuses``, else
    as a Hypothesis event."""
    if excuses is not None:
        excuses.accept_refusal(what, example)
    else:
        event(f"refusal accepted: {what}")


def run(case: Case, example: Example, mode: str, fn, excuses=None):
    """``fn()``'s result; None, counted as an accepted refusal, when an Explicit mesh rejects the
    operation with a ShardingTypeError where our model of its sharding rule does; any other
    exception is a failure that quotes it."""
    result, outcome = case.accepts(mode, lambda: classified(example.call(mode), fn))
    if outcome is not None:
        accepted_refusal(excuses, f"{example.op.name} {mode.split(' ')[0]}: {outcome.split(' (')[0]}", example)
    return result


def eager_layout(example: Example, shape):
    """The layout the model derives for an eager result from its inputs' shardings: on an Explicit
    mesh the spec the sharding-in-types rule gives (``sharding_rules``); on an Auto mesh, for a
    unary elementwise operation, its operand's layout; None where the model states none (JAX's
    propagation on Auto meshes is its own choice)."""
    from conformance.model import sharding_rules as rules
    if example.axis_type == "Explicit":
        verdict = sharding_verdict(example.call(Way.EAGER))
        if isinstance(verdict, rules.Accepts) and verdict.out_spec is not None:
            return Layout(example.mesh, verdict.out_spec, tuple(shape))
        return None
    if example.op.family == "elementwise" and len(example.operands) == 1:
        return Layout(example.mesh, example.in_specs[0], tuple(shape))
    return None


def forwards_an_input(inputs, result: np.ndarray) -> bool:
    """True when the result is one of the ``inputs`` unchanged (an identity for these static
    arguments: a sum over no axes, a roll by 0, a full slice), which jit may return as is."""
    return any(np.shape(x) == result.shape and np.asarray(x).dtype == result.dtype and
               np.array_equal(np.asarray(x), result, equal_nan=result.dtype.kind in "fc")
               for x in inputs)


@pytest.mark.parametrize("op", CATALOGUE, ids=lambda op: op.name)
@settings(max_examples=EXAMPLES_PER_OP,
          # excuses holds no state to reset between examples: what it holds (the count of excused
          # examples per known deviation) is meant to outlive the example
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_sharding_never_changes_values(op, data, excuses, known_deviations, run_isolated, tally):
    """An operation on sharded inputs, eager or jitted with requested shardings or constraints,
    equals the same operation on unsharded inputs, and its output is laid out as requested (eager:
    as its own sharding's index map says)."""
    check_drawn(data.draw(examples(op), label="example"), excuses, known_deviations, run_isolated, tally)


def cut_over_the_mesh(mesh, specs) -> bool:
    """Whether one of ``specs`` cuts a dimension over a mesh axis of size > 1."""
    return any(mesh.axis_sizes[a] > 1 for spec in specs if spec is not None for axes in spec_axes(spec) for a in axes)


def check_drawn(example: Example, excuses, known_deviations, run_isolated, tally=None) -> None:
    """``check_example`` of a drawn example under this JAX's known deviations: a constraint on a
    returned input this JAX ignores, and the process aborts XLA is known for, run in a subprocess or
    (lax.pad's) not at all, counted under their entries; each way it ran counted in ``tally``
    (sharded where an operand, or under jit the output, is cut)."""
    ignores_returned_constraint = known_deviations.covers(reproductions.test_constraint_applies_to_a_returned_input)
    aborts = known_deviations.covers(ABORT) is not None and aborts_under_jit(example.call(Way.JIT_SHARDINGS)) or \
        known_deviations.covers(GATHER_ABORT) is not None and \
        triggers.jitted_gather_refining_the_cut_of_a_passed_through_dimension(example.call(Way.JIT_SHARDINGS))
    isolate = run_isolated if aborts else None
    pad_abort = known_deviations.covers(PAD_ABORT) if starts_inside_interior_padding_of_a_cut_layout(
        example.call(Way.JIT_SHARDINGS)) else None
    check_example(example, ignores_returned_constraint, isolate, excuses, sharded=pad_abort is None)
    if pad_abort is not None:
        excuses.count(pad_abort, example, "sharded ways not run (XLA aborts the process on them)")
    if tally is not None:
        for way in Way:
            specs = example.in_specs + (() if way is Way.EAGER else (example.out_spec,))
            tally.count(example.op.name, way.letter, pad_abort is None and cut_over_the_mesh(example.mesh, specs),
                        example)


@pytest.mark.parametrize("op", VOCABULARY, ids=lambda op: op.name)
@settings(max_examples=EXAMPLES_PER_FUNCTION, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_vocabulary_never_changes_values(op, data, excuses, known_deviations, run_isolated, tally):
    """A public function of jax.numpy or jax.lax on sharded inputs, eager or jitted with requested
    shardings or constraints, equals the same function on unsharded inputs (and numpy's answer),
    and its output is laid out as requested."""
    for name in op.covers:  # a function this release lacks skips, naming when it arrived or left
        if not compat.vocabulary_feature(name).available:
            raise compat.feature_missing(compat.vocabulary_feature(name))
    check_drawn(data.draw(examples(op), label="example"), excuses, known_deviations, run_isolated, tally)


def one_step_program(example: Example, expected: np.ndarray) -> Program:
    """The example as a program of one step, for the jit ways in a subprocess."""
    names = tuple(f"x{k}" for k in range(len(example.operands)))
    step = Step("v0", example.op.name, names, tuple(sorted(example.static.items())), source=example.op.source)
    return Program(example.mesh, example.axis_type, names, example.in_specs, (step,), ("v0",), (example.out_spec,), (),
                   tuple(zip(names, map(np.asarray, example.operands))) + (("v0", expected),))


UNSHARDED_FUNCTIONS: dict = {}  # (op name, static arguments) -> the op jitted, for one-device runs


def unsharded_function(op: Op, static: dict):
    """The operation with its static arguments, jitted, built once per (op, static arguments): the
    examples of an entry that meet a shape again ask for no program twice."""
    key = (op.name, repr(sorted(static.items())))
    if key not in UNSHARDED_FUNCTIONS:
        UNSHARDED_FUNCTIONS[key] = jax.jit(functools.partial(bridge.function_of(op.source), **static))
    return UNSHARDED_FUNCTIONS[key]


JITTED_WAYS: dict = {}  # (op name, static arguments, shardings, axis type) -> ways (b) and (c), jitted


def jitted_ways(op: Op, static: dict, in_shardings: tuple, out_sharding, axis_type: str) -> tuple:
    """Ways (b) and (c) of the operation with its static arguments, built once per (op, static
    arguments, shardings): an example that meets a layout again asks for no program twice."""
    key = (op.name, repr(sorted(static.items())), in_shardings, out_sharding, axis_type)
    if key not in JITTED_WAYS:
        f = functools.partial(bridge.function_of(op.source), **static)
        JITTED_WAYS[key] = (jax.jit(f, in_shardings=in_shardings, out_shardings=out_sharding),
                            jax.jit(lambda *a: compat.constrain(
                                f(*(compat.constrain(x, s, axis_type) for x, s in zip(a, in_shardings))),
                                out_sharding, axis_type)))
    return JITTED_WAYS[key]


def check_example(example: Example, ignores_returned_constraint=None, run_isolated=None, excuses=None,
                  sharded: bool = True) -> None:
    """(``ignores_returned_constraint``: the strict entry saying this JAX ignores a constraint on a
    returned input, if one applies: way (c)'s layout is then not checked where the result is an
    input, counted as excused by it; ``run_isolated``: run the two jit ways in a subprocess, each
    checked as here: XLA may abort on them; ``excuses``: this JAX's known deviations of the
    property, applied to each way but the unsharded one; ``sharded=False``: the unsharded run
    only.)"""
    op = example.op
    case = invariance_case(example)
    f = functools.partial(bridge.function_of(op.source), **example.static)
    way = (lambda mode: excuses.way([example.call(mode)], mesh_kind=example.axis_type, example=example)) \
        if excuses else (lambda mode: excusable())

    with case.oracle():  # (tagged: no known deviation excuses its failure)
        expected_dtype = op.result_dtype(example.operands, x64=compat.x64_enabled())  # the model's, not JAX's

    def oracle():
        with case.oracle():
            def judge(fn):
                expected = np.asarray(case.accepts("unsharded call",
                                                   lambda: fn(*map(jax.device_put, example.operands))))
                case.equal("unsharded result dtype", expected.dtype.name, expected_dtype.name, shows="dtype")
                compare(case, op, "unsharded result vs numpy", expected, example.expected.astype(expected_dtype))
                return expected
            return case.jitted_first(judge, unsharded_function(op, example.static), f)

    # An exact operation's sharded ways run against numpy's value, the oracle only where one fails or
    # is not checked (OracleOnDemand); elsewhere the oracle runs first and gives the value.
    on_demand = (OracleOnDemand(oracle, MODES) if sharded and run_isolated is None and op.rtol == 0 and op.atol == 0
                 else None)
    expected = example.expected.astype(expected_dtype) if on_demand else oracle()
    if on_demand:
        way = functools.partial(on_demand.way, excuse=way)
    out_layout = example.out_layout(expected.shape)
    if not sharded:
        return

    in_shardings = tuple(example.sharding(spec) for spec in example.in_specs)
    out_sharding = example.sharding(example.out_spec)
    args = [bridge.placed(x, s) for x, s in zip(example.operands, in_shardings)]

    context = lambda: compat.mesh_context(bridge.jax_mesh(example.mesh, example.axis_type),
                                          example.axis_type)
    with way(Way.EAGER):
        with context():
            eager = run(case, example, Way.EAGER, lambda: f(*args), excuses)
        if eager is not None:
            compare(case, op, f"{Way.EAGER} result", as_numpy(case, Way.EAGER, eager), expected)
            check_shards_hold(case, op, eager, expected, f"{Way.EAGER} result")
            derived = eager_layout(example, expected.shape)
            if derived is not None:
                check_layout(case, eager, derived,
                             what=f"{Way.EAGER} result (laid out as the model derives from the inputs)")
            else:  # the model states no layout here: the result's shards must be where its own sharding says
                own_layout = bridge.layout_of(eager.sharding, expected.shape)
                if own_layout is not None:
                    check_layout(case, eager, own_layout, what=f"{Way.EAGER} result (against its own sharding)")
            if on_demand:
                on_demand.passed(Way.EAGER)

    if run_isolated is not None:  # both jit ways in one subprocess, each checked under its own excuses
        program = one_step_program(example, expected)

        def layout(mode, key, step):
            if Way.of(mode) is Way.JIT_CONSTRAINTS and forwards_an_input(example.operands, expected) and \
                    ignores_returned_constraint:
                if excuses is not None:
                    excuses.count(ignores_returned_constraint, example, UNCHECKED_RETURNED_INPUT)
                return None
            return out_layout
        outcome = programs_.check_jitted_in_subprocess(
            case, program, run_isolated, layouts=layout,
            classify=lambda name, message, way: explicit_outcome(example.call(Way.JIT_SHARDINGS), name),
            way_context=lambda label, output="": excuses.way([example.call(m) for m in label.split("/")],
                                                  mesh_kind=example.axis_type, example=example)
                                      if excuses else excusable())
        if outcome is not None:
            accepted_refusal(excuses, f"{op.name} (b)/(c) in a subprocess: {outcome.split(' (')[0]}", example)
        return
    jitted, constrained = jitted_ways(op, example.static, in_shardings, out_sharding, example.axis_type)
    for mode, call in zip(MODES[1:], (lambda: jitted(*args), lambda: constrained(*args))):
        with way(mode):
            with context():
                result = run(case, example, mode, call, excuses)
            if result is None:
                continue
            compare(case, op, f"{mode} result", as_numpy(case, mode, result), expected)
            check_shards_hold(case, op, result, expected, f"{mode} result")
            if mode is Way.JIT_CONSTRAINTS and forwards_an_input(example.operands, expected) and \
                    ignores_returned_constraint:
                if excuses is not None:  # (the layout check of a returned input, skipped)
                    excuses.count(ignores_returned_constraint, example, UNCHECKED_RETURNED_INPUT)
                continue
            check_layout(case, result, out_layout, what=f"{mode} result")
            if on_demand:
                on_demand.passed(mode)
    if on_demand:
        on_demand.finish()
