"""Sharding never changes values: every operation of the catalogue (``strategies/ops.py``), run on
randomly sharded inputs and asked for a random output sharding, gives the answer of the same
operation on unsharded inputs (and numpy's), laid out as asked.

Each example runs the operation three ways over one mesh (Auto axes, or Explicit ones where the
version has sharding in types): (a) eagerly on committed sharded inputs, (b) under ``jit`` with
``in_shardings``/``out_shardings``, (c) under ``jit`` with the input and output layouts asked for
inside (``with_sharding_constraint``; ``reshard`` on Explicit axes). On an Explicit mesh an
operation the sharding types reject (``ShardingTypeError``) is a documented outcome, counted as a
Hypothesis event, not a failure; any other error is one, unless it is a known deviation that a
deterministic test below reproduces (``KNOWN_EXPLICIT_FAILURES``).

The deterministic tests at the end are the smallest reproductions of what the catalogue found;
``known_deviations.toml`` lists the versions each one fails on.
"""

import functools
import re
from dataclasses import dataclass
from typing import Tuple

import jax
import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from conformance import compat, harness
from conformance.cases import check_layout
from conformance.checks import Case
from conformance.isolation import run_isolated
from conformance.jaxbridge import (jax_mesh, layout_of, live_device_ids, named_sharding, needs_devices,
                                  shards)
from conformance.model import Layout, MeshModel, Spec, block_slices
from conformance.repro import array_literal, describe_mesh, mesh_literal, preamble, spec_literal
from strategies import dividing_specs, meshes
from strategies.ops import CATALOGUE, Op

pytestmark = pytest.mark.sharding_invariance

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
        return named_sharding(self.mesh, spec, self.axis_type)


@st.composite
def examples(draw, op: Op) -> Example:
    """Inputs from the op's strategy; a mesh (any sub-mesh or order) with Auto or Explicit axes; a
    spec per operand and for the output that divides its shape (replicated, or sharded on any
    dimensions, the reduced/scanned/sliced/joined ones included)."""
    operands, static = draw(op.inputs)
    with np.errstate(all="ignore"):  # integers wrap around, as in JAX
        expected = np.asarray(op.reference(*operands, **static))
    mesh = draw(meshes())
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
    lines = preamble() + [
        "import functools",
        "from jax import lax",
        f"mesh = {mesh_literal(example.mesh, example.axis_type)}",
        *(f"{name} = {array_literal(np.asarray(x))}" for name, x in zip(names, example.operands)),
        f"f = functools.partial({op.source}, **{example.static!r})",
        f"in_shardings = ({shardings},)",
        f"out_sharding = NamedSharding(mesh, {spec_literal(example.out_spec)})",
        f"args = [jax.device_put(x, s) for x, s in zip(({', '.join(names)},), in_shardings)]",
        "print('unsharded:', f(" + ", ".join(f"jnp.asarray({n})" for n in names) + "))",
    ]
    sharded = [
        "print('(a) eager:', f(*args))",
        "print('(b) jit:  ', jax.jit(f, in_shardings=in_shardings, out_shardings=out_sharding)(*args))",
        f"constrained = jax.jit(lambda *a: {constrain}(f(*({constrain}(x, s) for x, s in "
        "zip(a, in_shardings))), out_sharding))",
        "print('(c) constrained:', constrained(*args))",
    ]
    if example.axis_type == "Auto":
        lines += sharded
    else:
        lines += [f"with {compat.MESH_CONTEXT_SOURCE}(mesh):"] + ["    " + line for line in sharded]
    inputs = "; ".join(f"{name}: {x.dtype}{list(np.shape(x))} {spec_literal(s)}"
                       for name, x, s in zip(names, example.operands, example.in_specs))
    call = (f"{op.name}: {op.source} with {example.static!r}; {example.axis_type} "
            f"{describe_mesh(example.mesh)}; inputs {inputs}; output {spec_literal(example.out_spec)}")
    return Case(call, "\n".join("    " + line for line in lines))


def as_numpy(check: Case, mode: str, result) -> np.ndarray:
    """``np.asarray(result)``; an exception (shards that do not assemble) is a failure."""
    return check.accepts(f"np.asarray of the {mode} result", lambda: np.asarray(result))


def compare(check: Case, op: Op, what: str, got, expected) -> None:
    check.close(what, got, expected, rtol=op.rtol, atol=op.atol)


def check_shards_hold(check: Case, op: Op, array, expected, what: str) -> None:
    """Every addressable shard holds ``expected[its block]``, replicas included."""
    for view in shards(array):
        compare(check, op, f"{what} shard on device {view.device_id}", view.data,
                expected[block_slices(view.block)])


# Explicit-mesh rejections that JAX raises through another exception class than ShardingTypeError,
# or where the operation is well typed and should run. Each is pinned down by a deterministic test
# below (a strict xfail in known_deviations.toml where the version gets it wrong); the random
# property counts a match as an event, so that a random draw does not fail the run for a
# deviation already reported. (exception class name, message pattern, the deterministic test)
KNOWN_EXPLICIT_FAILURES = (
    ("DuplicateSpecError", r"duplicate entries", "test_explicit_broadcast_conflict_is_a_sharding_type_error"),
    ("DuplicateSpecError", r"duplicate entries", "test_explicit_gather_conflict_is_a_sharding_type_error"),
    ("ValueError", r"^Incompatible types for broadcasting", "test_explicit_scatter_update_conflict_is_a_sharding_type_error"),
    ("ValueError", r"does not evenly divide the dimension size", "test_explicit_empty_slice_of_sharded_array"),
    ("ValueError", r"jnp\.repeat. via .out_sharding", "test_explicit_edge_pad_over_size_one_axis"),
    ("AssertionError", r"^\(1, PartitionSpec\(", "test_explicit_argmax_over_size_one_axis"),
    ("AssertionError", r"^$", "test_explicit_reshape_over_size_one_axis"),
)


def known_explicit_failure(error: BaseException):
    """The deterministic test that covers ``error``, when it is a known Explicit-mesh deviation."""
    for name, pattern, test in KNOWN_EXPLICIT_FAILURES:
        if type(error).__name__ == name and re.search(pattern, str(error)):
            return test
    return None


def run(check: Case, example: Example, mode: str, call):
    """``call()``'s result; None, with an event, when an Explicit mesh rejects the operation with a
    ShardingTypeError or a known deviation; any other exception is a failure that quotes it."""
    def attempt():
        try:
            return call(), None
        except Exception as e:  # noqa: BLE001 - classified below; unknown ones are re-raised
            if example.axis_type != "Explicit":
                raise
            if isinstance(e, compat.SHARDING_TYPE_ERRORS):
                return None, f"rejected with {type(e).__name__}"
            known = known_explicit_failure(e)
            if known is None:
                raise
            return None, f"known deviation {type(e).__name__} (see {known})"

    result, outcome = check.accepts(mode, attempt)
    if outcome is not None:
        event(f"{example.op.name} {mode} on an Explicit mesh: {outcome}")
    return result


THIS_FILE = "suites/test_sharding_invariance.py"
FORWARDING_DEVIATION = f"{THIS_FILE}::test_constraint_applies_to_a_returned_input"


def forwards_an_input(example: Example, result: np.ndarray) -> bool:
    """True when the result is one of the inputs unchanged (an identity for these static
    arguments: a sum over no axes, a roll by 0, a full slice), which jit may return as is."""
    return any(np.shape(x) == result.shape and np.asarray(x).dtype == result.dtype and
               np.array_equal(np.asarray(x), result, equal_nan=result.dtype.kind in "fc")
               for x in example.operands)


class KnownDeviationSeen(BaseException):
    """Raised out of the Hypothesis run (which re-raises a BaseException at once, without
    shrinking) when an op fails in a way a known deviation of this JAX explains."""


@pytest.mark.parametrize("op", CATALOGUE, ids=lambda op: op.name)
def test_sharding_never_changes_values(op, request):
    """An operation on sharded inputs, eager or jitted with requested shardings or constraints,
    equals the same operation on unsharded inputs, and its output is laid out as requested (eager:
    as its own sharding's index map says)."""
    deviation = harness.deviation_in_effect(f"{THIS_FILE}::test_sharding_never_changes_values[{op.name}]")

    # One Hypothesis run per op. (The examples database is off: this inner function's key would be
    # shared by every op; the printed seed reproduces a run.)
    ran = []

    @settings(max_examples=EXAMPLES_PER_OP, database=None)
    @given(data=st.data())
    def holds_for(data):
        example = data.draw(examples(op), label="example")
        ran.append(1)
        try:
            check_example(example)
        except Exception as failure:  # noqa: BLE001 - re-raised unless a known deviation applies
            if deviation is None:
                raise
            raise KnownDeviationSeen(getattr(failure, "finding", f"{type(failure).__name__}: {failure}"))

    try:
        holds_for()
    except KnownDeviationSeen as seen:
        # A known deviation of this op on this JAX, reproduced every time by a deterministic test:
        # an xfail at the first failing example, without shrinking it (which costs compiles).
        pytest.xfail(f"known deviation, random property (reproduced by "
                     f"{deviation.reproduced_by.split('::')[-1]}): {seen}")
    finally:  # the run report's example count (a nested Hypothesis run reports no statistics)
        request.node.user_properties.append(("hypothesis_examples", len(ran)))


def check_example(example: Example) -> None:
    op = example.op
    check = invariance_case(example)
    f = functools.partial(op.fn, **example.static)

    unsharded = check.accepts("unsharded call",
                              lambda: f(*(jax.device_put(x) for x in example.operands)))
    expected = np.asarray(unsharded)
    compare(check, op, "unsharded result vs numpy", expected, example.expected.astype(expected.dtype))
    out_layout = example.out_layout(expected.shape)

    in_shardings = tuple(example.sharding(spec) for spec in example.in_specs)
    out_sharding = example.sharding(example.out_spec)
    args = [jax.device_put(x, s) for x, s in zip(example.operands, in_shardings)]

    context = lambda: compat.mesh_context(jax_mesh(example.mesh, example.axis_type),  # noqa: E731
                                          example.axis_type)
    with context():
        eager = run(check, example, "(a) eager", lambda: f(*args))
    if eager is not None:
        compare(check, op, "(a) eager result", as_numpy(check, "(a) eager", eager), expected)
        check_shards_hold(check, op, eager, expected, "(a) eager result")
        own_layout = layout_of(eager.sharding, expected.shape)
        if own_layout is not None:
            check_layout(check, eager, own_layout, what="(a) eager result")

    jitted = jax.jit(f, in_shardings=in_shardings, out_shardings=out_sharding)
    constrained = jax.jit(lambda *a: compat.constrain(
        f(*(compat.constrain(x, s, example.axis_type) for x, s in zip(a, in_shardings))),
        out_sharding, example.axis_type))
    for mode, call in (("(b) jit with in/out_shardings", lambda: jitted(*args)),
                       ("(c) jit with sharding constraints", lambda: constrained(*args))):
        with context():
            result = run(check, example, mode, call)
        if result is None:
            continue
        compare(check, op, f"{mode} result", as_numpy(check, mode, result), expected)
        check_shards_hold(check, op, result, expected, f"{mode} result")
        if mode.startswith("(c)") and forwards_an_input(example, expected) and \
                harness.deviation_in_effect(FORWARDING_DEVIATION):
            event(f"{op.name} (c): result is an input, whose constraint this JAX ignores "
                  f"(known deviation, see {FORWARDING_DEVIATION})")
            continue
        check_layout(check, result, out_layout, what=f"{mode} result")


# --- Deterministic cases: what the random property found, one reproduction each ---------------
def explicit_outcome(title: str, mesh: MeshModel, arrays: dict, expression: str, expected) -> None:
    """On an Explicit mesh over ``mesh`` (inside its mesh context), with ``arrays`` = {name: (value,
    spec)} committed, ``expression`` is either accepted with numpy's ``expected`` values or rejected
    with a ShardingTypeError: a well-typed operation runs, an ill-typed one says so in the
    documented way."""
    lines = preamble() + [f"mesh = {mesh_literal(mesh, 'Explicit')}"] + [
        f"{name} = jax.device_put({array_literal(value)}, NamedSharding(mesh, {spec_literal(spec)}))"
        for name, (value, spec) in arrays.items()] + [
        f"with {compat.MESH_CONTEXT_SOURCE}(mesh):", f"    print({expression})"]
    check = Case(f"{title}: {expression}", "\n".join("    " + line for line in lines))
    jmesh = jax_mesh(mesh, "Explicit")
    namespace = {"jnp": jax.numpy, "lax": jax.lax, "np": np}
    namespace.update({name: jax.device_put(value, named_sharding(mesh, spec, "Explicit"))
                      for name, (value, spec) in arrays.items()})
    with compat.mesh_context(jmesh, "Explicit"):
        try:
            result = eval(expression, namespace)
        except compat.SHARDING_TYPE_ERRORS:
            return
        except Exception as e:  # noqa: BLE001 - the finding
            check.fail(f"{expression} raised {type(e).__name__}: {' '.join(str(e).split())[:300]}, "
                       f"but should return {expected.tolist()} or raise ShardingTypeError [{check.call}]")
    check.close(expression, np.asarray(result), expected, rtol=0, atol=0)


def first_devices_mesh(*names_and_sizes) -> MeshModel:
    """The first local devices on axes named and sized as given (e.g. ("a", 2), ("y", 1))."""
    names = tuple(n for n, _ in names_and_sizes)
    shape = tuple(s for _, s in names_and_sizes)
    return MeshModel(live_device_ids()[:int(np.prod(shape))], shape, names)


explicit_only = compat.requires("explicit_sharding")


@needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_broadcast_conflict_is_a_sharding_type_error():
    """jnp.where broadcasting x (2,1,1) and y (2,1), both sharded on 'a' along their first
    dimension, would put 'a' on two output dimensions: an ill-typed program, so ShardingTypeError
    (or a correct answer), not an internal error."""
    x, y = np.arange(2, dtype=np.int32).reshape(2, 1, 1), np.arange(2, dtype=np.int32).reshape(2, 1) + 5
    explicit_outcome("broadcast conflict", first_devices_mesh(("a", 2)),
                     {"x": (x, ("a",)), "y": (y, ("a",))}, "jnp.where(True, x, y)",
                     np.where(True, x, y))


@needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_gather_conflict_is_a_sharding_type_error():
    """x[idx] with x (2,4) sharded on 'a' along dimension 1 and idx (2,) sharded on 'a' would put
    'a' on two output dimensions: ShardingTypeError (or a correct answer), not an internal error."""
    x, idx = np.arange(8, dtype=np.float32).reshape(2, 4), np.array([1, 0], np.int32)
    explicit_outcome("gather conflict", first_devices_mesh(("a", 2)),
                     {"x": (x, (None, "a")), "idx": (idx, ("a",))}, "x[idx]", x[idx])


@needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_scatter_update_conflict_is_a_sharding_type_error():
    """x.at[0:2].set(u) with x (4,) replicated and u (2,) sharded on 'a': the update's sharding
    differs from the target's, so ShardingTypeError (or a correct answer), not a ValueError."""
    x, u = np.arange(4, dtype=np.float32), np.array([7, 8], np.float32)
    expected = x.copy()
    expected[0:2] = u
    explicit_outcome("scatter update conflict", first_devices_mesh(("a", 2)),
                     {"x": (x, ()), "u": (u, ("a",))}, "x.at[0:2].set(u)", expected)


@needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_batched_matmul_with_one_operand_sharded_on_the_batch_dimension():
    """x @ y with x (2,3,2) replicated and y (2,2,1) sharded on 'a' along the batch dimension: the
    batch shardings differ, so ShardingTypeError (or a correct answer), not a ValueError. (Found by
    the catalogue's matmul entry in a 64-device run, over a size-1 axis; any axis size shows it.)"""
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    y = np.arange(4, dtype=np.float32).reshape(2, 2, 1)
    explicit_outcome("batched matmul, batch dimension sharded on one side", first_devices_mesh(("a", 2)),
                     {"x": (x, ()), "y": (y, ("a",))}, "x @ y", x @ y)


@needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_empty_slice_of_sharded_array():
    """x[0:0, :1] of x (2,4) sharded on 'a' along dimension 1 is an empty (0,1) array, or a
    ShardingTypeError as for the non-empty x[:, :1]; not a divisibility ValueError."""
    x = np.arange(8, dtype=np.int32).reshape(2, 4)
    explicit_outcome("empty slice", first_devices_mesh(("a", 2)), {"x": (x, (None, "a"))},
                     "x[0:0, :1]", x[0:0, :1])


@needs_devices(2, "for a two-axis mesh")
@explicit_only
def test_explicit_edge_pad_over_size_one_axis():
    """jnp.pad(x, ((0, 0),), mode='edge') of x (1,) sharded over a size-1 axis (which cuts
    nothing) returns x, as for a replicated x."""
    x = np.array([3.0], np.float32)
    explicit_outcome("edge pad", first_devices_mesh(("a", 2), ("y", 1)), {"x": (x, ("y",))},
                     "jnp.pad(x, ((0, 0),), mode='edge')", np.pad(x, ((0, 0),), mode="edge"))


@needs_devices(2, "for a two-axis mesh")
@explicit_only
def test_explicit_argmax_over_size_one_axis():
    """jnp.argmax(x) over all axes of x (6, 3) sharded over a size-1 axis (which cuts nothing)
    returns the flat index of the maximum, as for a replicated x."""
    x = (np.arange(18, dtype=np.int32) * 7 % 18).reshape(6, 3)
    explicit_outcome("argmax", first_devices_mesh(("a", 2), ("b", 1)), {"x": (x, (None, "b"))},
                     "jnp.argmax(x)", np.argmax(x))


@needs_devices(2, "for a two-axis mesh")
@explicit_only
def test_explicit_reshape_over_size_one_axis():
    """jnp.reshape(x, (4, 1)) of x (2, 1, 2) sharded over a size-1 axis (which cuts nothing)
    returns numpy's reshape, as for a replicated x, or a ShardingTypeError."""
    x = np.arange(4, dtype=np.int32).reshape(2, 1, 2)
    explicit_outcome("reshape", first_devices_mesh(("a", 2), ("b", 1)), {"x": (x, ("b",))},
                     "jnp.reshape(x, (4, 1))", x.reshape(4, 1))


@needs_devices(2, "to shard over two devices")
def test_lax_pad_starting_inside_interior_padding():
    """lax.pad(x, 0, [(-1, 0, 1)]) of x = [0, 1, 2, 3] sharded over two devices drops the first
    element of [0, 0, 1, 0, 2, 0, 3] and returns [0, 1, 0, 2, 0, 3], as unsharded; run in a
    subprocess because XLA's SPMD partitioner aborts the process on it."""
    lines = ["from jax import lax",
             "mesh = Mesh(np.array([devices[i] for i in sorted(devices)[:2]]), ('a',))",
             "x = jax.device_put(np.arange(4, dtype=np.float32), NamedSharding(mesh, P('a')))",
             "f = jax.jit(lambda a: lax.pad(a, np.float32(0), [(-1, 0, 1)]), out_shardings=NamedSharding(mesh, P()))",
             "print(np.asarray(f(x)).tolist())"]
    check = Case("jit(lambda a: lax.pad(a, 0, [(-1, 0, 1)]))(x sharded on 'a')",
                 "\n".join("    " + line for line in preamble() + lines))
    result = run_isolated(lines)
    check.equal("exit status of the subprocess (negative: killed by a signal)", result.returncode, 0)
    check.equal("result", result.stdout.strip().splitlines()[-1], str([0.0, 1.0, 0.0, 2.0, 0.0, 3.0]))


def auto_case(title: str, mesh: MeshModel, arrays: dict, expression: str, out_spec, expected, *,
              eager: bool = False) -> None:
    """On an Auto mesh over ``mesh``, with ``arrays`` = {name: (value, spec)} committed,
    ``expression`` (eager, or under jit with ``out_shardings`` = ``out_spec``) returns numpy's
    ``expected``, and under jit is laid out as ``out_spec`` says."""
    names = list(arrays)
    call = expression if eager else \
        f"jax.jit(lambda {', '.join(names)}: {expression}, out_shardings=out)({', '.join(names)})"
    lines = preamble() + ["from jax import lax", f"mesh = {mesh_literal(mesh)}"] + [
        f"{name} = jax.device_put({array_literal(value)}, NamedSharding(mesh, {spec_literal(spec)}))"
        for name, (value, spec) in arrays.items()]
    if not eager:
        lines.append(f"out = NamedSharding(mesh, {spec_literal(out_spec)})")
    lines.append(f"print(np.asarray({call}).tolist(), '# should be {np.asarray(expected).tolist()}')")
    check = Case(f"{title}: {call}", "\n".join("    " + line for line in lines))
    namespace = {"jnp": jax.numpy, "lax": jax.lax, "np": np}
    committed = {name: jax.device_put(value, named_sharding(mesh, spec)) for name, (value, spec) in arrays.items()}
    fn = eval(f"lambda {', '.join(names)}: {expression}", namespace)
    if eager:
        result = check.accepts(expression, lambda: fn(**committed))
    else:
        result = check.accepts("jit", lambda: jax.jit(fn, out_shardings=named_sharding(mesh, out_spec))(**committed))
    check.close(call, np.asarray(result), np.asarray(expected), rtol=0, atol=0)
    if not eager:
        check_layout(check, result, Layout(mesh, out_spec, np.shape(expected)), np.asarray(expected),
                     what="result")


@needs_devices(2, "to shard over two devices")
def test_dynamic_slice_clamps_its_start_once_with_a_sharded_output():
    """lax.dynamic_slice(x, (start,), (2,)) of x = [0, 1, 2, 3] with a traced start of 3 clamps
    it to 2 and returns [2, 3], with the output sharded over two devices as unsharded."""
    x = np.arange(4, dtype=np.int32)
    auto_case("dynamic_slice", first_devices_mesh(("a", 2)), {"x": (x, ()), "start": (np.int32(3), ())},
              "lax.dynamic_slice(x, (start,), (2,))", ("a",), x[2:4])


@needs_devices(2, "to shard over two devices")
def test_dynamic_update_slice_normalizes_a_negative_start_with_a_sharded_output():
    """lax.dynamic_update_slice(x, [[9]], (start, start)) of a 2x2 x with a traced start of -3
    counts it from the end (-3 + 2 = -1) and clamps it to 0, updating x[0, 0], with the output
    sharded as unsharded."""
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    expected = x.copy()
    expected[0, 0] = 9
    auto_case("dynamic_update_slice", first_devices_mesh(("a", 2)), {"x": (x, ()), "start": (np.int32(-3), ())},
              "lax.dynamic_update_slice(x, np.full((1, 1), 9, np.float32), (start, start))",
              (None, "a"), expected)


@needs_devices(8, "for a 4x2 mesh")
def test_concatenate_into_a_partially_replicated_output():
    """jnp.concatenate of two replicated [1, 2], [3, 4] with out_shardings P('a') on a 4x2 mesh
    (each block held by two devices) is [1, 2, 3, 4]."""
    mesh = first_devices_mesh(("a", 4), ("b", 2))
    v = np.array([1, 2], np.int32)
    auto_case("concatenate", mesh, {"x": (v, ()), "y": (v + 2, ())}, "jnp.concatenate([x, y])", ("a",),
              np.array([1, 2, 3, 4], np.int32))


@needs_devices(2, "to shard over two devices")
def test_take_clip_of_a_sharded_array():
    """jnp.take(x, 3, axis=0, mode='clip') of a 2x2 x sharded on its rows clamps the index to 1 and
    returns x[1]."""
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    auto_case("take clip", first_devices_mesh(("a", 2)), {"x": (x, ("a",))},
              "jnp.take(x, np.int32(3), axis=0, mode='clip')", None, x[1], eager=True)


@needs_devices(8, "for a 4x2 mesh")
def test_constraint_applies_to_a_returned_input():
    """jit(lambda a: with_sharding_constraint(a, P())) of an array sharded P('b') returns it
    replicated, as the constraint asks, even though the function returns its input."""
    mesh = first_devices_mesh(("a", 4), ("b", 2))
    x = np.array([1, 2], np.int32)
    check = Case("jax.jit(lambda a: with_sharding_constraint(a, NamedSharding(mesh, P())))(x on P('b'))",
                 "\n".join("    " + line for line in preamble() + [
                     f"mesh = {mesh_literal(mesh)}",
                     "x = jax.device_put(np.array([1, 2], np.int32), NamedSharding(mesh, P('b')))",
                     "y = jax.jit(lambda a: jax.lax.with_sharding_constraint(a, NamedSharding(mesh, P())))(x)",
                     "print(y.sharding)"]))
    y = jax.jit(lambda a: jax.lax.with_sharding_constraint(a, named_sharding(mesh, ())))(
        jax.device_put(x, named_sharding(mesh, ("b",))))
    check_layout(check, y, Layout(mesh, (), x.shape), x, what="result")


@needs_devices(2, "to shard over two devices")
def test_lax_pad_interior_with_a_sharded_output():
    """lax.pad([1, 2, 3], 0, [(0, 1, 1)]) is [1, 0, 2, 0, 3, 0], with the output sharded over two
    devices as unsharded."""
    auto_case("lax.pad", first_devices_mesh(("a", 2)), {"x": (np.array([1, 2, 3], np.float32), ())},
              "lax.pad(x, np.float32(0), [(0, 1, 1)])", ("a",), np.array([1, 0, 2, 0, 3, 0], np.float32))


@needs_devices(2, "to shard over two devices")
def test_lax_pad_interior_of_a_single_element_with_a_sharded_output():
    """lax.pad([5], 0, [(0, 1, 1)]) is [5, 0] (interior padding of one element adds none), with
    the output sharded over two devices as unsharded."""
    auto_case("lax.pad", first_devices_mesh(("a", 2)), {"x": (np.array([5.0], np.float32), ())},
              "lax.pad(x, np.float32(0), [(0, 1, 1)])", ("a",), np.array([5.0, 0.0], np.float32))
