"""Control flow and memory transforms on sharded values equal the unsharded run: ``lax.scan``,
``fori_loop``, ``while_loop`` and ``cond`` carrying or selecting sharded values (with a sharding
constraint on the carry inside the loop, or none), ``jax.checkpoint`` under ``grad``, all jitted
with drawn in/out shardings, their results laid out as asked; and ``donate_argnums`` with sharded
inputs: a donated input whose buffers the result fits is deleted afterwards (reading it raises, as
JAX documents), one it does not fit is kept with a warning, and nothing else is changed.

Also: ``lax.switch`` (2-4 branches) and ``lax.cond`` choosing on an index or predicate reduced from
a sharded array, over sharded operands, equal the unsharded run and numpy's branch (an index out of
range clamped, as lax.switch documents), laid out as asked on Auto meshes; on Explicit meshes the
result has the branches' common sharding type, and branches whose output sharding types differ are
a TypeError (cond/switch require equal output types, and on Explicit axes the sharding is part of
the type). And ``jax.checkpoint`` with the policies of ``jax.checkpoint_policies``: the residuals
``print_saved_residuals`` reports are those our model of the policy saves
(``conformance.model.remat``), and value and gradient, jitted with shardings, equal the unsharded
run without checkpoint and numpy."""

import contextlib
import functools
import io
import re
import warnings
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.checking.layouts import check_layout
from conformance.checking.repro import describe_mesh, scripted_case, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model import dtypes, remat
from conformance.model.layout import Layout, Spec
from conformance.model.sharding_rules import canonical_spec
from strategies import cutting_meshes, dividing_specs, meshes, sharding_specs
from strategies.spmd import sample_values, small_floats
from strategies.arrays import without_subnormals

pytestmark = pytest.mark.control_flow
DEVICES = bridge.live_device_ids()
EXAMPLES = max(8, settings().max_examples // 10)


def _loop(c, xs, step):
    with np.errstate(over="ignore"):
        for x in xs:
            c = step(c, x)
    return c


@dataclass(frozen=True)
class Carried:
    """A function of a carry ``c`` and a stack of steps ``xs`` (``xs[t]`` has ``c``'s shape) with
    one result of ``c``'s shape, its JAX source (``constrain(v)`` marks where the loop body asks
    for the carry's layout, which the property fills in or leaves out), and numpy's answer."""

    name: str
    source: str
    reference: Callable
    dtype: str = "int32"
    rtol: float = 0.0


CARRIED = (
    Carried("scan", "lambda c, xs, constrain: lax.scan(lambda c, x: (constrain(c * 3 + x), c), c, xs)[0]",
            lambda c, xs: _loop(c, xs, lambda c, x: c * np.int32(3) + x)),
    Carried("scan_outputs", "lambda c, xs, constrain: lax.scan(lambda c, x: (constrain(c ^ x), c + x), c, xs)[1][-1]",
            lambda c, xs: _loop(c, xs[:-1], lambda c, x: c ^ x) + xs[-1]),
    Carried("fori_loop", "lambda c, xs, constrain: lax.fori_loop(0, xs.shape[0], "
            "lambda i, c: constrain(c * 3 + xs[i]), c)",
            lambda c, xs: _loop(c, xs, lambda c, x: c * np.int32(3) + x)),
    Carried("while_loop", "lambda c, xs, constrain: lax.while_loop(lambda s: s[0] < xs.shape[0], "
            "lambda s: (s[0] + 1, constrain(s[1] - xs[s[0]] * 5)), (0, c))[1]",
            lambda c, xs: _loop(c, xs, lambda c, x: c - x * np.int32(5))),
    Carried("cond", "lambda c, xs, constrain: lax.cond(jnp.sum(xs[0]) % 2 == 0, lambda: constrain(c + xs[-1]), "
            "lambda: constrain(c - xs[0]))",
            lambda c, xs: c + xs[-1] if int(np.sum(xs[0], dtype=np.int32)) % 2 == 0 else c - xs[0]),
    Carried("checkpoint_grad", "lambda c, xs, constrain: jax.grad(lambda c: jnp.sum(jax.checkpoint("
            "lambda c: constrain(jnp.sin(c) * xs[0]))(c) * xs[-1]))(c)",
            lambda c, xs: np.cos(c) * xs[0] * xs[-1], dtype="float32", rtol=2e-5),
)


@dataclass(frozen=True)
class LoopExample:
    carried: Carried
    mesh: object
    c: np.ndarray
    xs: np.ndarray
    c_spec: Spec
    xs_spec: Spec
    out_spec: Spec
    inner_spec: object  # the carry's constraint inside the loop, or None


@st.composite
def loop_examples(draw) -> LoopExample:
    """A function from CARRIED; a mesh; a carry of rank 1 or 2 with sides from (2, 4, 1, 8) and 1
    to 4 steps; dividing specs for the carry, the steps (the step dimension sharded or not), the
    result, and optionally the carry inside the loop."""
    carried = draw(st.sampled_from(CARRIED))
    shape = tuple(draw(st.lists(st.sampled_from((2, 4, 1, 8)), min_size=1, max_size=2)))
    steps = draw(st.sampled_from((2, 4, 1)))
    values = lambda shape: sample_values(carried.dtype, shape, subnormals=False)
    c, xs = draw(values(shape)), draw(values((steps, *shape)))
    if carried.dtype == "float32":
        c, xs = without_subnormals(c / np.float32(50)), without_subnormals(xs / np.float32(50))
    mesh = draw(meshes(DEVICES, max_axes=2))
    inner = draw(st.none() | dividing_specs(mesh, shape))
    return LoopExample(carried, mesh, c, xs, draw(dividing_specs(mesh, shape)), draw(dividing_specs(mesh, xs.shape)),
                       draw(dividing_specs(mesh, shape)), inner)


@functools.lru_cache(maxsize=None)
def unsharded_carried(carried: Carried):
    """The carried function without its constraint, jitted once: the one-device runs of every
    example of it share its programs."""
    body = bridge.function_of(carried.source)
    return jax.jit(lambda c, xs: body(c, xs, lambda v: v))


@settings(max_examples=EXAMPLES)
@given(example=loop_examples())
def test_control_flow_on_sharded_values(example):
    """scan, fori_loop, while_loop, cond and checkpoint under grad, jitted with in/out shardings
    (and a constraint on the carry inside, or none), equal the unsharded run and numpy, laid out as
    the out_shardings ask."""
    carried = example.carried
    s = lambda spec: f"NamedSharding(mesh, {spec_literal(spec)})"
    constrain = "lambda v: v" if example.inner_spec is None else \
        f"lambda v: jax.lax.with_sharding_constraint(v, {s(example.inner_spec)})"
    sharded = f"g(jax.device_put(c, {s(example.c_spec)}), jax.device_put(xs, {s(example.xs_spec)}))"
    unsharded = "unconstrained(jnp.asarray(c), jnp.asarray(xs))"
    case = scripted_case(f"jax.jit({carried.source}, in_shardings=({spec_literal(example.c_spec)}, "
                f"{spec_literal(example.xs_spec)}), "
                f"out_shardings={spec_literal(example.out_spec)}) with constrain = {constrain}; "
                f"{describe_mesh(example.mesh)}; "
                f"c {example.c.dtype}{list(example.c.shape)}, xs {list(example.xs.shape)}",
                [f"f = lambda c, xs: ({carried.source})(c, xs, {constrain})",
                        f"unconstrained = lambda c, xs: ({carried.source})(c, xs, lambda v: v)",
                        f"g = jax.jit(f, in_shardings=({s(example.c_spec)}, {s(example.xs_spec)}), "
                        f"out_shardings={s(example.out_spec)})",
                        f"print('unsharded:', {unsharded})",
                        f"print('sharded:  ', {sharded})"],
                       meshes={"mesh": example.mesh}, arrays={"c": example.c, "xs": example.xs},
                       outcomes={"jitted with shardings": sharded, "np.asarray of the result": f"np.asarray({sharded})",
                                 "unsharded": unsharded,
                                 "unsharded result dtype": f"np.asarray({unsharded}).dtype.name",
                                 "sharded result dtype": f"np.asarray({sharded}).dtype.name",
                                 "unsharded result vs numpy": unsharded, "sharded result": sharded, "result": sharded})
    sharding = lambda spec: bridge.named_sharding(example.mesh, spec)
    inner = None if example.inner_spec is None else sharding(example.inner_spec)
    body = bridge.function_of(carried.source)
    f = lambda c, xs: body(c, xs, (lambda v: v) if inner is None else (lambda v: compat.constrain(v, inner)))
    unconstrained = lambda c, xs: body(c, xs, lambda v: v)
    g = jax.jit(f, in_shardings=(sharding(example.c_spec), sharding(example.xs_spec)),
                out_shardings=sharding(example.out_spec))
    with np.errstate(all="ignore"):
        expected = np.asarray(carried.reference(
            example.c.astype(np.float64) if carried.dtype == "float32" else example.c,
            example.xs.astype(np.float64) if carried.dtype == "float32" else example.xs))
    tolerance = dict(rtol=carried.rtol, atol=carried.rtol)
    # each function combines c, xs and Python ints (weak); checkpoint_grad's gradient has c's dtype, the same
    expected_dtype = dtypes.promote(example.c.dtype, example.xs.dtype, int, x64=compat.x64_enabled())
    def judge(fn):
        unsharded = np.asarray(case.accepts("unsharded", lambda: fn(jnp.asarray(example.c), jnp.asarray(example.xs))))
        case.equal("unsharded result dtype", unsharded.dtype.name, expected_dtype.name)
        case.close("unsharded result vs numpy", unsharded, expected.astype(expected_dtype), **tolerance)
        return unsharded
    with case.oracle():
        unsharded = case.jitted_first(judge, unsharded_carried(carried), unconstrained)
    c = bridge.placed(example.c, sharding(example.c_spec))
    xs = bridge.placed(example.xs, sharding(example.xs_spec))
    result = case.accepts("jitted with shardings", lambda: g(c, xs))
    got = case.accepts("np.asarray of the result", lambda: np.asarray(result))
    case.equal("sharded result dtype", got.dtype.name, expected_dtype.name)
    case.close("sharded result", got, unsharded, **tolerance)
    check_layout(case, result, Layout(example.mesh, example.out_spec, got.shape), what="result")


# --- donation -----------------------------------------------------------------------------------


@st.composite
def donation_examples(draw):
    """A mesh; int32 x and y of one shape; dividing specs for x, y and the result (the result's
    spec x's own half of the time, so that x's buffers can hold it)."""
    mesh = draw(meshes(DEVICES, max_axes=2))
    shape = tuple(draw(st.lists(st.sampled_from((2, 4, 1, 8)), min_size=1, max_size=2)))
    x, y = draw(sample_values("int32", shape)), draw(sample_values("int32", shape))
    x_spec, y_spec = draw(dividing_specs(mesh, shape)), draw(dividing_specs(mesh, shape))
    out_spec = x_spec if draw(st.booleans()) else draw(dividing_specs(mesh, shape))
    return mesh, x, y, x_spec, y_spec, out_spec


@settings(max_examples=EXAMPLES)
@pytest.mark.uncached  # the donation warning is compilation's own
@given(example=donation_examples())
def test_donated_sharded_input_is_deleted_and_nothing_else_changes(example):
    """jit(..., donate_argnums=0) with shardings gives the right result and leaves the other input as
    it was; the donated input is deleted (reading it raises RuntimeError) when the result fits its
    buffers (same layout), and otherwise either deleted or kept unchanged with JAX's "not usable"
    warning."""
    mesh, x0, y0, x_spec, y_spec, out_spec = example
    s = lambda spec: f"NamedSharding(mesh, {spec_literal(spec)})"
    case = scripted_case(f"jax.jit(lambda x, y: x * 3 + y, donate_argnums=0, in_shardings=({spec_literal(x_spec)}, "
                f"{spec_literal(y_spec)}), out_shardings={spec_literal(out_spec)}) on {describe_mesh(mesh)}, "
                f"int32{list(x0.shape)}",
                ["import warnings",
                        f"x, y = jax.device_put(x0, {s(x_spec)}), jax.device_put(y0, {s(y_spec)})",
                        f"f = jax.jit(lambda x, y: x * 3 + y, donate_argnums=0, in_shardings=({s(x_spec)}, "
                        f"{s(y_spec)}), "
                        f"out_shardings={s(out_spec)})",
                        "with warnings.catch_warnings(record=True) as warned:",
                        "    warnings.simplefilter('always')",
                        "    result = f(x, y)",
                        "print(result, x.is_deleted(), np.array_equal(np.asarray(y), y0), "
                        "[str(w.message) for w in warned])"],
                       meshes={"mesh": mesh}, arrays={"x0": x0, "y0": y0},
                       # (the donating call once more, on a fresh copy of x0: x itself may be deleted)
                       outcomes={"donating call": f"f(jax.device_put(x0, {s(x_spec)}), y)", "result": "result",
                                 "the input that was not donated": "np.asarray(y)",
                                 "donated input is_deleted()": "x.is_deleted()",
                                 "reading the donated input": "np.asarray(x)",
                                 "a 'donated buffers were not usable' warning":
                                     "any('donated buffers were not usable' in str(w.message) for w in warned)",
                                 "the donated input JAX kept": "np.asarray(x)"})
    sharding = lambda spec: bridge.named_sharding(mesh, spec)
    x, y = bridge.placed(x0, sharding(x_spec)), bridge.placed(y0, sharding(y_spec))
    f = jax.jit(lambda x, y: x * 3 + y, donate_argnums=0, in_shardings=(sharding(x_spec), sharding(y_spec)),
                out_shardings=sharding(out_spec))
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        result = case.accepts("donating call", lambda: f(x, y))
    with np.errstate(over="ignore"):
        case.same_bits("result", np.asarray(result), x0 * np.int32(3) + y0)
    check_layout(case, result, Layout(mesh, out_spec, x0.shape), what="result")
    case.same_bits("the input that was not donated", np.asarray(y), y0)
    if out_spec == x_spec:  # the result fits the donated buffers exactly: they are used
        case.true("donated input is_deleted()", x.is_deleted())
    if x.is_deleted():
        case.rejects("reading the donated input", lambda: np.asarray(x), (RuntimeError,))
    else:  # not usable for this result: JAX warns and keeps it, unchanged
        case.true("a 'donated buffers were not usable' warning", any(
            "donated buffers were not usable" in str(w.message) for w in warned))
        case.same_bits("the donated input JAX kept", np.asarray(x), x0)


# --- lax.switch and lax.cond on a sharded index -------------------------------------------------
# The branches, functions of two float32 arrays x and y of one shape (and numpy's answers); a
# property applies the first 2 to 4 of them, each one's result passed through ``finish(i, value)``
# (where the property asks for branch i's output layout, or leaves it as it is).
BRANCHES = ("x * 2 + y", "jnp.sin(x) * y", "x - y * 3", "jnp.cos(x) + y")
BRANCH_REFERENCES = (lambda x, y: x * 2 + y, lambda x, y: np.sin(x) * y, lambda x, y: x - y * 3,
                     lambda x, y: np.cos(x) + y)
# float32 sin/cos and one product or sum of values <= 2 in magnitude, against float64
BRANCH_TOLERANCE = dict(rtol=1e-5, atol=1e-5)
# few shapes, so that the unsharded runs compile once per function and shape
BRANCH_SHAPES = ((8,), (4, 2))
INDEX_SIZE = 8


def selector_source(selector: str, branches: int) -> str:
    """The JAX source of ``lambda k, x, y, finish: ...``: ``lax.switch`` on the index ``sum(k)``
    over the first ``branches`` BRANCHES, or ``lax.cond`` on ``sum(k) > 0`` (true: BRANCHES[0])."""
    arms = [f"lambda x, y: finish({i}, {BRANCHES[i]})" for i in range(branches)]
    if selector == "cond":
        return f"lambda k, x, y, finish: lax.cond(jnp.sum(k) > 0, {arms[0]}, {arms[1]}, x, y)"
    return f"lambda k, x, y, finish: lax.switch(jnp.sum(k), [{', '.join(arms)}], x, y)"


def chosen_branch(selector: str, branches: int, total: int) -> int:
    """Which branch runs: for switch the index clamped to [0, branches - 1], as lax.switch
    documents; for cond the first when the predicate holds."""
    if selector == "cond":
        return 0 if total > 0 else 1
    return min(max(total, 0), branches - 1)


@functools.lru_cache(maxsize=None)
def unsharded_selector(source: str) -> Callable:
    """The selector of ``source`` with no layouts asked for, jitted with no shardings."""
    body = bridge.function_of(source)
    return jax.jit(lambda k, x, y: body(k, x, y, lambda i, v: v))


@dataclass(frozen=True)
class BranchExample:
    axis_type: str
    selector: str           # "switch" or "cond"
    branches: int           # how many branches (2 for cond)
    mesh: object
    k: np.ndarray           # int32; the index (switch) or the predicate (cond) comes from sum(k)
    x: np.ndarray
    y: np.ndarray
    k_spec: Spec
    x_spec: Spec
    y_spec: Spec
    out_spec: Optional[Spec]                   # jit's out_shardings (Auto meshes), or None
    branch_specs: Tuple[Optional[Spec], ...]   # each branch's output layout asked for, or None


@st.composite
def index_sums(draw, branches: int, selector: str, size: int) -> np.ndarray:
    """An int32 array of ``size`` elements in [-3, 3] but the last, whose sum is drawn from
    [-2, branches + 1] (switch: the in-range indices and two on each side) or [-2, 2] (cond)."""
    top = 2 if selector == "cond" else branches + 1
    total = draw(st.integers(-2, top))
    k = np.array(draw(st.lists(st.integers(-3, 3), min_size=size, max_size=size)), dtype=np.int32)
    k[-1] += total - int(k.sum())
    return k


@st.composite
def branch_examples(draw, devices=DEVICES) -> BranchExample:
    """An axis type (Auto, or Explicit where the release has it); switch over 2-4 branches or cond;
    a mesh of 1-2 axes that can cut; k of INDEX_SIZE elements whose sum picks the branch; float32 x
    and y of a shape from BRANCH_SHAPES, values <= 2 in magnitude; mostly cutting specs for k, x, y
    (on Explicit meshes y's is x's, as elementwise typing needs), a dividing one for jit's out_shardings (Auto
    meshes); each branch's output layout: half of the time one choice for all branches (none, or a
    dividing spec), else a mostly cutting spec per branch (on Explicit meshes only where the
    release compares the branches' sharding types: compat.BRANCHES_COMPARE_OUTPUT_SHARDING_TYPES)."""
    axis_type = draw(st.sampled_from(compat.mesh_axis_types()))
    selector = draw(st.sampled_from(("switch", "cond")))
    branches = 2 if selector == "cond" else draw(st.integers(2, len(BRANCHES)))
    shape = draw(st.sampled_from(BRANCH_SHAPES))
    mesh = draw(cutting_meshes(devices, (*shape, INDEX_SIZE), max_axes=2))
    k = draw(index_sums(branches, selector, INDEX_SIZE))
    x = draw(small_floats(shape))
    y = draw(small_floats(shape))
    x_spec = draw(sharding_specs(mesh, shape))
    y_spec = x_spec if axis_type == "Explicit" else draw(sharding_specs(mesh, shape))
    out_spec = None if axis_type == "Explicit" else draw(dividing_specs(mesh, shape))
    # (where the release does not compare the branches' sharding types, Explicit branches agree)
    typed = axis_type == "Auto" or compat.BRANCHES_COMPARE_OUTPUT_SHARDING_TYPES
    if draw(st.booleans()) or not typed:
        branch_specs = (draw(st.none() | dividing_specs(mesh, shape)),) * branches
    else:
        branch_specs = tuple(draw(sharding_specs(mesh, shape)) for _ in range(branches))
    return BranchExample(axis_type, selector, branches, mesh, k, x, y, draw(sharding_specs(mesh, k.shape)), x_spec,
                         y_spec, out_spec, branch_specs)


def explicit_output_specs(example: BranchExample) -> Tuple[Spec, ...]:
    """Each branch's output sharding type on an Explicit mesh: the spec its output is resharded to,
    else x's (elementwise ops of operands of one type keep it), canonical."""
    rank = example.x.ndim
    return tuple(canonical_spec(example.x_spec if spec is None else spec, rank) for spec in example.branch_specs)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=branch_examples())
def test_switch_and_cond_on_a_sharded_index_run_the_branch_it_picks(example, excuses):
    """lax.switch on an index summed from a sharded array (clamped into range, as lax.switch
    documents) and lax.cond on a predicate from one, over sharded operands under jit, equal the
    unsharded run and numpy's branch, laid out as out_shardings ask (Auto) or as the branches'
    common sharding type (Explicit, where branches whose output types differ are a TypeError, as
    cond/switch require equal output types)."""
    case = branch_case(example)
    unsharded = check_unsharded_branch(case, example)
    with excuses.way([example], mesh_kind=example.axis_type):
        check_switch_and_cond(case, example, unsharded)


def branch_case(example: BranchExample):
    """The Case of a branch example: its script runs the selector unsharded, then jitted on the
    placed k, x and y (or lowers it, where the branches' output sharding types differ)."""
    explicit = example.axis_type == "Explicit"
    source = selector_source(example.selector, example.branches)
    s = lambda spec: f"NamedSharding(mesh, {spec_literal(spec)})"
    finish_literal = "lambda i, v: [" + ", ".join(
        "v" if spec is None else f"{compat.CONSTRAIN_SOURCE[example.axis_type]}(v, {s(spec)})"
        for spec in example.branch_specs) + "][i]"
    out = "" if explicit else f", out_shardings={s(example.out_spec)}"
    sharded = "g(k, x, y)"
    unsharded = "unfinished(jnp.asarray(k0), jnp.asarray(x0), jnp.asarray(y0))"
    types = explicit_output_specs(example) if explicit else None
    agree = not explicit or len(set(types)) == 1
    case = scripted_case(
        f"jax.jit({source}{out}) with finish = {finish_literal}; {example.axis_type} {describe_mesh(example.mesh)}; "
        f"k {example.k.tolist()} {spec_literal(example.k_spec)}, x float32{list(example.x.shape)} "
        f"{spec_literal(example.x_spec)}, y {spec_literal(example.y_spec)}",
        [f"f = lambda k, x, y: ({source})(k, x, y, {finish_literal})",
         f"unfinished = jax.jit(lambda k, x, y: ({source})(k, x, y, lambda i, v: v))",
         f"g = jax.jit(f{out})",
         f"print('unsharded:', {unsharded})"],
        meshes={"mesh": example.mesh}, axis_type=example.axis_type,
        arrays={"k0": example.k, "x0": example.x, "y0": example.y},
        in_context=[f"k, x, y = (jax.device_put(k0, {s(example.k_spec)}), jax.device_put(x0, {s(example.x_spec)}), "
                    f"jax.device_put(y0, {s(example.y_spec)}))",
                    f"print('sharded:  ', {sharded})" if agree else "print(g.lower(k, x, y))"],
        outcomes={"jitted with shardings": sharded, "np.asarray of the result": f"np.asarray({sharded})",
                  "unsharded": unsharded, "unsharded result vs numpy": unsharded, "sharded result": sharded,
                  "result": sharded, "tracing branches whose output sharding types differ": "g.lower(k, x, y)"})
    return case


def check_unsharded_branch(case, example: BranchExample) -> np.ndarray:
    """The oracle: the selector jitted with no layouts asked for, on one device, runs the branch
    numpy's index picks; its result, which no known deviation excuses."""
    source = selector_source(example.selector, example.branches)
    index = chosen_branch(example.selector, example.branches, int(example.k.sum()))
    with np.errstate(all="ignore"):
        expected = BRANCH_REFERENCES[index](example.x.astype(np.float64), example.y.astype(np.float64))
    with case.oracle():
        unsharded = np.asarray(case.accepts("unsharded", lambda: unsharded_selector(source)(
            jnp.asarray(example.k), jnp.asarray(example.x), jnp.asarray(example.y))))
        case.close("unsharded result vs numpy", unsharded, expected.astype(np.float32), **BRANCH_TOLERANCE)
    return unsharded


def check_switch_and_cond(case, example: BranchExample, unsharded: np.ndarray) -> None:
    """Jitted with the example's shardings and branch layouts, the selector equals the
    ``unsharded`` run, laid out as out_shardings ask (Auto) or as the branches' common sharding
    type (Explicit, where branches whose types differ are refused)."""
    explicit = example.axis_type == "Explicit"
    source = selector_source(example.selector, example.branches)
    types = explicit_output_specs(example) if explicit else None
    agree = not explicit or len(set(types)) == 1
    sharding = lambda spec: bridge.named_sharding(example.mesh, spec, example.axis_type)
    body = bridge.function_of(source)

    def finish(i, v):
        spec = example.branch_specs[i]
        return v if spec is None else compat.constrain(v, sharding(spec), example.axis_type)
    f = lambda k, x, y: body(k, x, y, finish)
    g = jax.jit(f) if explicit else jax.jit(f, out_shardings=sharding(example.out_spec))
    with compat.mesh_context(bridge.jax_mesh(example.mesh, example.axis_type), example.axis_type):
        k, x, y = (bridge.placed(example.k, sharding(example.k_spec)),
                   bridge.placed(example.x, sharding(example.x_spec)),
                   bridge.placed(example.y, sharding(example.y_spec)))
        if not agree:
            case.rejects("tracing branches whose output sharding types differ", lambda: g.lower(k, x, y), (TypeError,))
            return
        result = case.accepts("jitted with shardings", lambda: g(k, x, y))
    got = case.accepts("np.asarray of the result", lambda: np.asarray(result))
    case.close("sharded result", got, unsharded, **BRANCH_TOLERANCE)
    check_layout(case, result, Layout(example.mesh, types[0] if explicit else example.out_spec, got.shape),
                 what="result")


# --- jax.checkpoint policies -------------------------------------------------------------------
# A small function with a dot without batch dimensions, a named sin of it (optionally under a
# sharding constraint first), a dot with a batch dimension and a sin; remat.sin_dot_program is its
# graph in the model's terms.
SIN_DOT = """\
def sin_dot(x, w, v, constrain=lambda d: d):
    d = constrain(x @ w)
    s = jax.ad_checkpoint.checkpoint_name(jnp.sin(d), 's')
    g = jnp.einsum('ij,ij->i', s, v)
    return jnp.sum(jnp.sin(g))"""
_REMAT_NAMESPACE = {"jax": jax, "jnp": jnp}
exec("import jax.ad_checkpoint\n" + SIN_DOT, _REMAT_NAMESPACE)
sin_dot = _REMAT_NAMESPACE["sin_dot"]
UNSHARDED_SIN_DOT = jax.jit(jax.value_and_grad(sin_dot, argnums=(0, 1, 2)))  # the twin, without checkpoint
# (policy, the names it is given), every policy of remat.POLICIES in its order (the draws'): the
# name-based policies with the function's name 's' or another
NAME_BASED_POLICIES = ("save_only_these_names", "save_any_names_but_these")
POLICY_CHOICES = tuple((kind, names) for kind in remat.POLICIES
                       for names in ((("s",), ("t",)) if kind in NAME_BASED_POLICIES else ((),)))
# float32 sums of at most 8 products of values <= 2, through sin and cos, against float64
REMAT_TOLERANCE = dict(rtol=1e-4, atol=1e-4)
# (m, k, n): two sizes (the unsharded twin compiles once for each), sides 8 and 4 or 2 to cut, and
# distinct sides so that each residual's shape tells which value it is
REMAT_SIZES = ((4, 8, 2), (8, 2, 4))


def policy_literal(kind: str, names: Tuple[str, ...]) -> str:
    args = f"({', '.join(map(repr, names))})" if names else ""
    return f"jax.checkpoint_policies.{kind}{args}"


def jax_policy(kind: str, names: Tuple[str, ...]):
    """The policy from jax.checkpoint_policies (skips, naming the version, where it is missing)."""
    policy = compat.feature(f"checkpoint_policies.{kind}")
    policy = getattr(policy, kind)
    return policy(*names) if names else policy


def sin_dot_gradient(x, w, v):
    """numpy's value and gradient of sin_dot with respect to x, w and v (float64)."""
    d = x @ w
    s = np.sin(d)
    g = np.einsum("ij,ij->i", s, v)
    dg = np.cos(g)[:, None]
    dd = dg * v * np.cos(d)
    return np.sum(np.sin(g)), (dd @ w.T, x.T @ dd, dg * s)


RESIDUAL_LINE = re.compile(r"^\w+\[([\d,\s]*)\] (?:from the argument '?(\w+)'?|named '([^']+)' from|"
                           r"output of (\w+) from)")


def parsed_residuals(lines) -> Tuple[object, ...]:
    """print_saved_residuals' lines as model Residuals (a line it cannot read is kept whole, as an
    'unread' residual, so that it shows in the comparison)."""
    out = []
    for line in lines:
        m = RESIDUAL_LINE.match(line.strip())
        if m is None:
            out.append(remat.Residual("unread", line.strip(), ()))
            continue
        shape = tuple(int(d) for d in m.group(1).replace(" ", "").split(",") if d)
        if m.group(2):
            out.append(remat.Residual("argument", m.group(2), shape))
        elif m.group(3):
            out.append(remat.Residual("named", m.group(3), shape))
        else:
            out.append(remat.Residual("output", m.group(4), shape))
    return tuple(sorted(out))


def printed_residuals(f, *args) -> list:
    """What ``jax.ad_checkpoint.print_saved_residuals(f, *args)`` prints, one residual a line."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        compat.feature("print_saved_residuals")(f, *args)
    return [line for line in printed.getvalue().splitlines() if line.strip()]


@dataclass(frozen=True)
class RematExample:
    policy: Tuple[str, Tuple[str, ...]]
    mesh: object
    x: np.ndarray
    w: np.ndarray
    v: np.ndarray
    specs: Tuple[Spec, Spec, Spec]         # of x, w, v
    grad_specs: Tuple[Spec, Spec, Spec]    # out_shardings of the gradients
    inner_spec: Optional[Spec]             # a constraint on x @ w inside, or None


@st.composite
def remat_examples(draw, devices=DEVICES) -> RematExample:
    """A policy from POLICY_CHOICES; a mesh of 1-2 axes that can cut; float32 x [m, k], w [k, n],
    v [m, n] with (m, k, n) from REMAT_SIZES, values <= 2 in magnitude; mostly cutting specs for
    them (x's and w's mostly cutting the contracted side k), dividing specs for the gradients'
    out_shardings and, half of the time, a mostly cutting one for a constraint on x @ w."""
    policy = draw(st.sampled_from(POLICY_CHOICES))
    m, k, n = draw(st.sampled_from(REMAT_SIZES))
    mesh = draw(cutting_meshes(devices, (m, k, n), max_axes=2))
    values = lambda shape: small_floats(shape)
    x, w, v = draw(values((m, k))), draw(values((k, n))), draw(values((m, n)))
    specs = (draw(sharding_specs(mesh, x.shape, prefer=(1,))), draw(sharding_specs(mesh, w.shape, prefer=(0,))),
             draw(sharding_specs(mesh, v.shape)))
    grad_specs = tuple(draw(dividing_specs(mesh, a.shape)) for a in (x, w, v))
    inner = draw(st.none() | sharding_specs(mesh, (m, n)))
    return RematExample(policy, mesh, x, w, v, specs, grad_specs, inner)


@functools.lru_cache(maxsize=None)
def checkpointed_sin_dot(kind: str, names: Tuple[str, ...], inner) -> Callable:
    """``jax.checkpoint(sin_dot, policy=...)``, constraining x @ w to ``inner`` (a sharding) or not."""
    constrain = (lambda d: d) if inner is None else (lambda d: compat.constrain(d, inner))
    return jax.checkpoint(lambda x, w, v: sin_dot(x, w, v, constrain), policy=jax_policy(kind, names))


def remat_case(example: RematExample, lines, outcomes: dict, call: str):
    """The Case of a checkpoint example: its script defines sin_dot, ``checkpointed`` (with the
    example's policy and constraint) and places x, w and v, then runs ``lines``."""
    kind, names = example.policy
    s = lambda spec: f"NamedSharding(mesh, {spec_literal(spec)})"
    constrain = "lambda d: d" if example.inner_spec is None else \
        f"lambda d: jax.lax.with_sharding_constraint(d, {s(example.inner_spec)})"
    in_literal = ", ".join(s(spec) for spec in example.specs)
    return scripted_case(
        f"{call} of jax.checkpoint(sin_dot, policy={policy_literal(kind, names)}) with constrain = {constrain}; "
        f"x, w, v {tuple(spec_literal(p) for p in example.specs)} on {describe_mesh(example.mesh)}; "
        f"x {list(example.x.shape)}, w {list(example.w.shape)}",
        ["import io, contextlib, jax.ad_checkpoint", *SIN_DOT.splitlines(),
         f"checkpointed = jax.checkpoint(lambda x, w, v: sin_dot(x, w, v, {constrain}), "
         f"policy={policy_literal(kind, names)})",
         f"x, w, v = (jax.device_put(a, sh) for a, sh in zip((x0, w0, v0), ({in_literal},)))", *lines],
        meshes={"mesh": example.mesh}, arrays={"x0": example.x, "w0": example.w, "v0": example.v}, outcomes=outcomes)


def placed(example: RematExample):
    sharding = lambda spec: bridge.named_sharding(example.mesh, spec)
    inner = None if example.inner_spec is None else sharding(example.inner_spec)
    args = tuple(bridge.placed(a, sharding(spec)) for a, spec in zip((example.x, example.w, example.v), example.specs))
    return checkpointed_sin_dot(*example.policy, inner), args


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=remat_examples())
def test_checkpoint_saves_the_residuals_its_policy_names(example, excuses):
    """The residuals jax.ad_checkpoint.print_saved_residuals reports for jax.checkpoint(f, policy)
    of sharded x, w, v are those the model of the policy saves: the arguments, and the values the
    backward pass needs that the policy lets be saved (the rest recomputed)."""
    with excuses.way([example]):
        check_saved_residuals(example)


def check_saved_residuals(example: RematExample) -> None:
    kind, names = example.policy
    case = remat_case(example, ["printed = io.StringIO()", "with contextlib.redirect_stdout(printed):",
                                "    jax.ad_checkpoint.print_saved_residuals(checkpointed, x, w, v)",
                                "print(printed.getvalue())"],
                      {"print_saved_residuals": "jax.ad_checkpoint.print_saved_residuals(checkpointed, x, w, v)"},
                      "print_saved_residuals")
    checkpointed, args = placed(example)
    lines = case.accepts("print_saved_residuals", lambda: printed_residuals(checkpointed, *args))
    m, k = example.x.shape
    model = remat.sin_dot_program(m, k, example.w.shape[1], name="s", constrained=example.inner_spec is not None)
    expected = remat.saved_residuals(model, remat.Policy(kind, frozenset(names)))
    case.equal(f"the saved residuals (print_saved_residuals said {lines})", [str(r) for r in parsed_residuals(lines)],
               [str(r) for r in expected])


# Each example compiles a sharded value_and_grad, several times the cost of the other properties'
# compilations: fewer examples, as many in proportion to the profile.
GRADIENT_EXAMPLES = max(4, settings().max_examples // 25)


@settings(max_examples=GRADIENT_EXAMPLES)
@given(example=remat_examples())
def test_checkpoint_policy_keeps_the_value_and_gradient(example):
    """value_and_grad of jax.checkpoint(f, policy=...) of a dot/sin/named-value function, jitted with
    in_shardings and out_shardings, equals the unsharded run without checkpoint and numpy, the
    gradients laid out as out_shardings ask."""
    s = lambda spec: f"NamedSharding(mesh, {spec_literal(spec)})"
    in_literal = ", ".join(s(spec) for spec in example.specs)
    grads_literal = ", ".join(s(spec) for spec in example.grad_specs)
    sharded = "g(x, w, v)"
    unsharded = "jax.value_and_grad(sin_dot, argnums=(0, 1, 2))(x0, w0, v0)"
    case = remat_case(example, [
        f"g = jax.jit(jax.value_and_grad(checkpointed, argnums=(0, 1, 2)), in_shardings=({in_literal},), "
        f"out_shardings=(NamedSharding(mesh, P()), ({grads_literal},)))",
        f"print('unsharded, no checkpoint:', {unsharded})",
        f"print('sharded:', {sharded})"],
        {"jitted with shardings": sharded, "unsharded": unsharded, "value": f"{sharded}[0]",
         "gradient with respect to x": f"{sharded}[1][0]", "gradient with respect to w": f"{sharded}[1][1]",
         "gradient with respect to v": f"{sharded}[1][2]", "unsharded value vs numpy": f"{unsharded}[0]",
         "unsharded gradient with respect to x": f"{unsharded}[1][0]",
         "unsharded gradient with respect to w": f"{unsharded}[1][1]",
         "unsharded gradient with respect to v": f"{unsharded}[1][2]"},
        f"jax.jit(jax.value_and_grad(...), out_shardings=(P(), {tuple(spec_literal(p) for p in example.grad_specs)}))")
    sharding = lambda spec: bridge.named_sharding(example.mesh, spec)
    checkpointed, args = placed(example)
    g = jax.jit(jax.value_and_grad(checkpointed, argnums=(0, 1, 2)),
                in_shardings=tuple(sharding(spec) for spec in example.specs),
                out_shardings=(sharding(()), tuple(sharding(spec) for spec in example.grad_specs)))
    expected_value, expected_grads = sin_dot_gradient(*(a.astype(np.float64)
                                                        for a in (example.x, example.w, example.v)))
    with case.oracle():
        unsharded_value, unsharded_grads = case.accepts("unsharded", lambda: UNSHARDED_SIN_DOT(
            jnp.asarray(example.x), jnp.asarray(example.w), jnp.asarray(example.v)))
        case.close("unsharded value vs numpy", np.asarray(unsharded_value), np.float32(expected_value),
                   **REMAT_TOLERANCE)
        for name, unsharded, expected in zip("xwv", unsharded_grads, expected_grads):
            case.close(f"unsharded gradient with respect to {name} vs numpy", np.asarray(unsharded),
                       expected.astype(np.float32), **REMAT_TOLERANCE)
    value, grads = case.accepts("jitted with shardings", lambda: g(*args))
    case.close("value", np.asarray(value), np.asarray(unsharded_value), **REMAT_TOLERANCE)
    for name, got, unsharded, spec in zip("xwv", grads, unsharded_grads, example.grad_specs):
        case.close(f"gradient with respect to {name}", np.asarray(got), np.asarray(unsharded), **REMAT_TOLERANCE)
        check_layout(case, got, Layout(example.mesh, spec, got.shape), what=f"gradient with respect to {name}")


def test_save_only_these_names_reports_the_named_residual_by_its_name():
    """print_saved_residuals of jax.checkpoint(sin_dot, policy=save_only_these_names('s')) reports
    the arguments and the value named 's', by its name, as the model of the policy saves."""
    x, w, v = (np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 50 for shape in ((4, 8), (8, 2), (4, 2)))
    example = RematExample(("save_only_these_names", ("s",)), bridge.first_devices_mesh(("a", 1)), x, w, v,
                           ((), (), ()), ((), (), ()), None)
    case = remat_case(example, ["printed = io.StringIO()", "with contextlib.redirect_stdout(printed):",
                                "    jax.ad_checkpoint.print_saved_residuals(checkpointed, x, w, v)",
                                "print(printed.getvalue())"],
                      {"the saved residuals":
                           "sorted(line.split(' from')[0] for line in printed.getvalue().splitlines())"},
                      "print_saved_residuals")
    checkpointed, args = placed(example)
    lines = printed_residuals(checkpointed, *args)
    expected = remat.saved_residuals(remat.sin_dot_program(4, 8, 2, name="s", constrained=False),
                                     remat.Policy("save_only_these_names", frozenset({"s"})))
    case.equal(f"the saved residuals (print_saved_residuals said {lines})", [str(r) for r in parsed_residuals(lines)],
               [str(r) for r in expected])


@bridge.needs_devices(8, "for a (4, 2) mesh whose branches ask for layouts over different axes")
def test_switch_branches_constrained_to_different_layouts_compile():
    """lax.switch whose two branches constrain their outputs to different layouts (P('a') and
    P('b')) on an Auto mesh, jitted with a replicated out_sharding, runs the branch the index picks."""
    mesh = bridge.first_devices_mesh(("a", 4), ("b", 2))
    k0, x0, y0 = np.zeros(8, np.int32), np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    source = selector_source("switch", 2)
    call = "g(k, x, y)"
    case = scripted_case(
        f"jax.jit({source}, out_shardings=P()) with finish = constraints P('a') and P('b'); {describe_mesh(mesh)}",
        [f"f = lambda k, x, y: ({source})(k, x, y, lambda i, v: jax.lax.with_sharding_constraint(v, "
         f"NamedSharding(mesh, [P('a'), P('b')][i])))",
         "g = jax.jit(f, out_shardings=NamedSharding(mesh, P()))",
         "k, x, y = (jax.device_put(a, NamedSharding(mesh, P('a'))) for a in (k0, x0, y0))",
         f"print({call})"],
        meshes={"mesh": mesh}, arrays={"k0": k0, "x0": x0, "y0": y0},
        outcomes={"jitted with shardings": call, "result": f"np.asarray({call})"})
    sharding = lambda spec: bridge.named_sharding(mesh, spec)
    body = bridge.function_of(source)
    g = jax.jit(lambda k, x, y: body(k, x, y, lambda i, v: compat.constrain(v, sharding((("a", "b")[i],)))),
                out_shardings=sharding(()))
    k, x, y = (bridge.placed(a, sharding(("a",))) for a in (k0, x0, y0))
    result = case.accepts("jitted with shardings", lambda: g(k, x, y))
    case.close("result", np.asarray(result), x0 * 2 + y0, **BRANCH_TOLERANCE)
