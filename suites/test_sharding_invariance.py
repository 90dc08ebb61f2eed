"""Sharding never changes values: every operation of the catalogue (``strategies/ops/``), run on
randomly sharded inputs and asked for a random output sharding, gives the answer of the same
operation on unsharded inputs (and numpy's), laid out as asked.

Each example runs the operation three ways over one mesh (Auto axes, or Explicit ones where the
version has sharding in types): (a) eagerly on committed sharded inputs, (b) under ``jit`` with
``in_shardings``/``out_shardings``, (c) under ``jit`` with the input and output layouts asked for
inside (``with_sharding_constraint``; ``reshard`` on Explicit axes). On an Explicit mesh an
operation the sharding types reject (``ShardingTypeError``) is a documented outcome, counted as a
Hypothesis event, not a failure; any other error is one, unless it is a known deviation that a
deterministic reproduction shows (``KNOWN_EXPLICIT_FAILURES``).

The smallest reproductions of what the catalogue found are in
``test_sharding_invariance_reproductions.py``; ``known_deviations.toml`` lists the versions each one
fails on.
"""

import functools
import re
from dataclasses import dataclass
from typing import Tuple

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import suites.test_sharding_invariance_reproductions as reproductions
import conformance.checking.programs as programs_
from conformance.checking import isolation
from conformance.checking.case import Case
from conformance.checking.layouts import check_layout
from conformance.checking.repro import describe_mesh, script, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel, Spec, block_slices
from conformance.model.program import Program, Step
from strategies import dividing_specs, meshes
from strategies.ops import CATALOGUE, Op

pytestmark = pytest.mark.sharding_invariance
DEVICES = bridge.live_device_ids()

# Compilation dominates: each example compiles four programs or more (unsharded, eager, two jits),
# so each of the 60 entries runs 4% of the profile's examples (4 by default, 40 nightly), which
# keeps the default `pytest suites/` within its 3-minute budget on a 2-core machine.
EXAMPLES_PER_OP = max(3, settings().max_examples // 25)


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


@st.composite
def examples(draw, op: Op) -> Example:
    """Inputs from the op's strategy; a mesh (any sub-mesh or order) with Auto or Explicit axes; a
    spec per operand and for the output that divides its shape (replicated, or sharded on any
    dimensions, the reduced/scanned/sliced/joined ones included)."""
    operands, static = draw(op.inputs)
    with np.errstate(all="ignore"):  # integers wrap around, as in JAX
        expected = np.asarray(op.reference(*operands, **static))
    mesh = draw(meshes(DEVICES))
    axis_type = draw(st.sampled_from(compat.mesh_axis_types()))
    in_specs = tuple(draw(dividing_specs(mesh, np.shape(x))) for x in operands)
    out_spec = draw(dividing_specs(mesh, expected.shape))
    return Example(op, tuple(operands), static, mesh, axis_type, in_specs, out_spec, expected)


def invariance_case(example: Example) -> Case:
    """The call description and a script that runs all three ways on its own."""
    op = example.op
    names = [f"x{i}" for i in range(len(example.operands))]
    shardings = ", ".join(f"NamedSharding(mesh, {spec_literal(s)})" for s in example.in_specs)
    constrain = compat.CONSTRAIN_SOURCE[example.axis_type]
    code = script([
        "import functools",
        f"f = functools.partial({op.source}, **{example.static!r})",
        f"in_shardings = ({shardings},)",
        f"out_sharding = NamedSharding(mesh, {spec_literal(example.out_spec)})",
        f"args = [jax.device_put(x, s) for x, s in zip(({', '.join(names)},), in_shardings)]",
        "print('unsharded:', f(" + ", ".join(f"jnp.asarray({n})" for n in names) + "))",
    ], meshes={"mesh": example.mesh}, axis_type=example.axis_type,
        arrays=dict(zip(names, example.operands)), in_context=[
        "print('(a) eager:', f(*args))",
        "print('(b) jit:  ', jax.jit(f, in_shardings=in_shardings, out_shardings=out_sharding)(*args))",
        f"constrained = jax.jit(lambda *a: {constrain}(f(*({constrain}(x, s) for x, s in "
        "zip(a, in_shardings))), out_sharding))",
        "print('(c) constrained:', constrained(*args))",
    ])
    inputs = "; ".join(f"{name}: {x.dtype}{list(np.shape(x))} {spec_literal(s)}"
                       for name, x, s in zip(names, example.operands, example.in_specs))
    call = (f"{op.name}: {op.source} with {example.static!r}; {example.axis_type} "
            f"{describe_mesh(example.mesh)}; inputs {inputs}; output {spec_literal(example.out_spec)}")
    return Case(call, code)


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


# Explicit-mesh rejections that JAX raises through another exception class than ShardingTypeError,
# or where the operation is well typed and should run. Each is pinned down by a deterministic
# reproduction (a strict xfail in known_deviations.toml where the version gets it wrong); the
# random property counts a match as an event, so that a random draw does not fail the run for a
# deviation already reported. (exception class name, message pattern, the reproduction)
KNOWN_EXPLICIT_FAILURES = (
    ("DuplicateSpecError", r"duplicate entries",
     reproductions.test_explicit_broadcast_conflict_is_a_sharding_type_error),
    ("DuplicateSpecError", r"duplicate entries",
     reproductions.test_explicit_gather_conflict_is_a_sharding_type_error),
    ("ValueError", r"^Incompatible types for broadcasting",
     reproductions.test_explicit_scatter_update_conflict_is_a_sharding_type_error),
    ("ValueError", r"does not evenly divide the dimension size",
     reproductions.test_explicit_empty_slice_of_sharded_array),
    ("ValueError", r"jnp\.repeat. via .out_sharding", reproductions.test_explicit_edge_pad_over_size_one_axis),
    ("AssertionError", r"^\(1, PartitionSpec\(", reproductions.test_explicit_argmax_over_size_one_axis),
    ("AssertionError", r"^$", reproductions.test_explicit_reshape_over_size_one_axis),
)


# XLA's SPMD partitioner aborts the process on some joins of differently split operands: where this
# reproduction is a known deviation, the jit ways of a joining operation run in a subprocess.
ABORT = reproductions.test_concatenate_constrained_across_two_differently_split_operands
KNOWN_ABORT = isolation.XLA_SLICE_CHECK
JOINING = ("concatenate", "stack")


def explicit_outcome(name: str, message: str):
    """What an exception (its class name and message) raised on an Explicit mesh is: "rejected
    with ShardingTypeError", a known deviation naming its reproduction, or None (a failure)."""
    if name in {e.__name__ for e in compat.SHARDING_TYPE_ERRORS}:
        return f"rejected with {name}"
    for known_name, pattern, reproduction in KNOWN_EXPLICIT_FAILURES:
        if name == known_name and re.search(pattern, message):
            return f"known deviation {name} (see {reproduction.__name__})"
    return None


def classified(axis_type: str, call):
    """``(call(), None)``; on an Explicit mesh, ``(None, outcome)`` when ``call`` raises a
    ShardingTypeError or a known deviation; any other exception propagates."""
    try:
        return call(), None
    except Exception as e:  # noqa: BLE001 - classified below; unknown ones are re-raised
        outcome = explicit_outcome(type(e).__name__, str(e)) if axis_type == "Explicit" else None
        if outcome is None:
            raise
        return None, outcome


def run(case: Case, example: Example, mode: str, call):
    """``call()``'s result; None, with an event, when an Explicit mesh rejects the operation with a
    ShardingTypeError or a known deviation; any other exception is a failure that quotes it."""
    result, outcome = case.accepts(mode, lambda: classified(example.axis_type, call))
    if outcome is not None:
        event(f"{example.op.name} {mode} on an Explicit mesh: {outcome}")
    return result


def forwards_an_input(inputs, result: np.ndarray) -> bool:
    """True when the result is one of the ``inputs`` unchanged (an identity for these static
    arguments: a sum over no axes, a roll by 0, a full slice), which jit may return as is."""
    return any(np.shape(x) == result.shape and np.asarray(x).dtype == result.dtype and
               np.array_equal(np.asarray(x), result, equal_nan=result.dtype.kind in "fc")
               for x in inputs)


@pytest.mark.parametrize("op", CATALOGUE, ids=lambda op: op.name)
@settings(max_examples=EXAMPLES_PER_OP,
          # known_deviation holds no state to reset between examples: what it holds (the first
          # failing example of a known deviation) is meant to outlive the example
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_sharding_never_changes_values(op, data, known_deviation, known_deviations, run_isolated):
    """An operation on sharded inputs, eager or jitted with requested shardings or constraints,
    equals the same operation on unsharded inputs, and its output is laid out as requested (eager:
    as its own sharding's index map says)."""
    example = data.draw(examples(op), label="example")
    if known_deviation.seen:  # this JAX's known deviation ended the property at its first failure
        return
    ignores_returned_constraint = known_deviations.covers(
        reproductions.test_constraint_applies_to_a_returned_input) is not None
    isolate = run_isolated if op.name in JOINING and known_deviations.covers(ABORT) is not None else None
    with known_deviation.first_failure_ends_the_property():
        check_example(example, ignores_returned_constraint, isolate)


def one_step_program(example: Example, expected: np.ndarray) -> Program:
    """The example as a program of one step, for the jit ways in a subprocess."""
    names = tuple(f"x{k}" for k in range(len(example.operands)))
    step = Step("v0", example.op.name, names, tuple(sorted(example.static.items())), source=example.op.source)
    return Program(example.mesh, example.axis_type, names, example.in_specs, (step,), ("v0",), (example.out_spec,), (),
                   tuple(zip(names, map(np.asarray, example.operands))) + (("v0", expected),))


def check_example(example: Example, ignores_returned_constraint: bool, run_isolated=None) -> None:
    """(``run_isolated``: run the two jit ways in a subprocess, values only: XLA may abort on them.)"""
    op = example.op
    case = invariance_case(example)
    f = functools.partial(bridge.function_of(op.source), **example.static)

    unsharded = case.accepts("unsharded call", lambda: f(*(jax.device_put(x) for x in example.operands)))
    expected = np.asarray(unsharded)
    compare(case, op, "unsharded result vs numpy", expected, example.expected.astype(expected.dtype))
    out_layout = example.out_layout(expected.shape)

    in_shardings = tuple(example.sharding(spec) for spec in example.in_specs)
    out_sharding = example.sharding(example.out_spec)
    args = [jax.device_put(x, s) for x, s in zip(example.operands, in_shardings)]

    context = lambda: compat.mesh_context(bridge.jax_mesh(example.mesh, example.axis_type),  # noqa: E731
                                          example.axis_type)
    with context():
        eager = run(case, example, "(a) eager", lambda: f(*args))
    if eager is not None:
        compare(case, op, "(a) eager result", as_numpy(case, "(a) eager", eager), expected)
        check_shards_hold(case, op, eager, expected, "(a) eager result")
        own_layout = bridge.layout_of(eager.sharding, expected.shape)
        if own_layout is not None:
            check_layout(case, eager, own_layout, what="(a) eager result")

    if run_isolated is not None:
        outcome = programs_.check_jitted_in_subprocess(case, one_step_program(example, expected), run_isolated,
                                                       known_abort=KNOWN_ABORT, classify=explicit_outcome)
        if outcome is not None:
            event(f"{op.name} (b)/(c) in a subprocess: {outcome}")
        return
    jitted = jax.jit(f, in_shardings=in_shardings, out_shardings=out_sharding)
    constrained = jax.jit(lambda *a: compat.constrain(
        f(*(compat.constrain(x, s, example.axis_type) for x, s in zip(a, in_shardings))),
        out_sharding, example.axis_type))
    for mode, call in (("(b) jit with in/out_shardings", lambda: jitted(*args)),
                       ("(c) jit with sharding constraints", lambda: constrained(*args))):
        with context():
            result = run(case, example, mode, call)
        if result is None:
            continue
        compare(case, op, f"{mode} result", as_numpy(case, mode, result), expected)
        check_shards_hold(case, op, result, expected, f"{mode} result")
        if mode.startswith("(c)") and forwards_an_input(example.operands, expected) and ignores_returned_constraint:
            event(f"{op.name} (c): result is an input, whose constraint this JAX ignores (known "
                  f"deviation, see {reproductions.test_constraint_applies_to_a_returned_input.__name__})")
            continue
        check_layout(case, result, out_layout, what=f"{mode} result")
