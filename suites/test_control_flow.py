"""Control flow and memory transforms on sharded values equal the unsharded run: ``lax.scan``,
``fori_loop``, ``while_loop`` and ``cond`` carrying or selecting sharded values (with a sharding
constraint on the carry inside the loop, or none), ``jax.checkpoint`` under ``grad``, all jitted
with drawn in/out shardings, their results laid out as asked; and ``donate_argnums`` with sharded
inputs: a donated input whose buffers the result fits is deleted afterwards (reading it raises, as
JAX documents), one it does not fit is kept with a warning, and nothing else is changed."""

import warnings
from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.checking.layouts import check_layout
from conformance.checking.repro import describe_mesh, scripted_case, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model import dtypes
from conformance.model.layout import Layout, Spec
from strategies import dividing_specs, meshes
from strategies.spmd import sample_values

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
    Carried("fori_loop", "lambda c, xs, constrain: lax.fori_loop(0, xs.shape[0], lambda i, c: constrain(c * 3 + xs[i]), c)",
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
    values = lambda shape: sample_values(carried.dtype, shape, subnormals=False)  # noqa: E731
    c, xs = draw(values(shape)), draw(values((steps, *shape)))
    if carried.dtype == "float32":
        c, xs = c / 50, xs / 50
    mesh = draw(meshes(DEVICES, max_axes=2))
    inner = draw(st.none() | dividing_specs(mesh, shape))
    return LoopExample(carried, mesh, c, xs, draw(dividing_specs(mesh, shape)), draw(dividing_specs(mesh, xs.shape)),
                       draw(dividing_specs(mesh, shape)), inner)


@settings(max_examples=EXAMPLES)
@given(example=loop_examples())
def test_control_flow_on_sharded_values(example):
    """scan, fori_loop, while_loop, cond and checkpoint under grad, jitted with in/out shardings
    (and a constraint on the carry inside, or none), equal the unsharded run and numpy, laid out as
    the out_shardings ask."""
    carried = example.carried
    s = lambda spec: f"NamedSharding(mesh, {spec_literal(spec)})"  # noqa: E731
    constrain = "lambda v: v" if example.inner_spec is None else \
        f"lambda v: jax.lax.with_sharding_constraint(v, {s(example.inner_spec)})"
    sharded = f"g(jax.device_put(c, {s(example.c_spec)}), jax.device_put(xs, {s(example.xs_spec)}))"
    unsharded = "unconstrained(jnp.asarray(c), jnp.asarray(xs))"
    case = scripted_case(f"jax.jit({carried.source}, in_shardings=({spec_literal(example.c_spec)}, {spec_literal(example.xs_spec)}), "
                f"out_shardings={spec_literal(example.out_spec)}) with constrain = {constrain}; {describe_mesh(example.mesh)}; "
                f"c {example.c.dtype}{list(example.c.shape)}, xs {list(example.xs.shape)}",
                [f"f = lambda c, xs: ({carried.source})(c, xs, {constrain})",
                        f"unconstrained = lambda c, xs: ({carried.source})(c, xs, lambda v: v)",
                        f"g = jax.jit(f, in_shardings=({s(example.c_spec)}, {s(example.xs_spec)}), "
                        f"out_shardings={s(example.out_spec)})",
                        f"print('unsharded:', {unsharded})",
                        f"print('sharded:  ', {sharded})"],
                       meshes={"mesh": example.mesh}, arrays={"c": example.c, "xs": example.xs},
                       outcomes={"jitted with shardings": sharded, "np.asarray of the result": f"np.asarray({sharded})",
                                 "unsharded": unsharded, "unsharded result dtype": f"np.asarray({unsharded}).dtype.name",
                                 "sharded result dtype": f"np.asarray({sharded}).dtype.name",
                                 "unsharded result vs numpy": unsharded, "sharded result": sharded, "result": sharded})
    sharding = lambda spec: bridge.named_sharding(example.mesh, spec)  # noqa: E731
    inner = None if example.inner_spec is None else sharding(example.inner_spec)
    body = bridge.function_of(carried.source)
    f = lambda c, xs: body(c, xs, (lambda v: v) if inner is None else (lambda v: compat.constrain(v, inner)))  # noqa: E731
    unconstrained = lambda c, xs: body(c, xs, lambda v: v)  # noqa: E731
    g = jax.jit(f, in_shardings=(sharding(example.c_spec), sharding(example.xs_spec)),
                out_shardings=sharding(example.out_spec))
    c = jax.device_put(example.c, sharding(example.c_spec))
    xs = jax.device_put(example.xs, sharding(example.xs_spec))
    result = case.accepts("jitted with shardings", lambda: g(c, xs))
    got = case.accepts("np.asarray of the result", lambda: np.asarray(result))
    unsharded = np.asarray(case.accepts("unsharded", lambda: unconstrained(jnp.asarray(example.c), jnp.asarray(example.xs))))
    with np.errstate(all="ignore"):
        expected = np.asarray(carried.reference(example.c.astype(np.float64) if carried.dtype == "float32" else example.c,
                                                example.xs.astype(np.float64) if carried.dtype == "float32" else example.xs))
    tolerance = dict(rtol=carried.rtol, atol=carried.rtol)
    # each function combines c, xs and Python ints (weak); checkpoint_grad's gradient has c's dtype, the same
    expected_dtype = dtypes.promote(example.c.dtype, example.xs.dtype, int, x64=compat.x64_enabled())
    case.equal("unsharded result dtype", unsharded.dtype.name, expected_dtype.name)
    case.equal("sharded result dtype", got.dtype.name, expected_dtype.name)
    case.close("unsharded result vs numpy", unsharded, expected.astype(expected_dtype), **tolerance)
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
@given(example=donation_examples())
def test_donated_sharded_input_is_deleted_and_nothing_else_changes(example):
    """jit(..., donate_argnums=0) with shardings gives the right result and leaves the other input as
    it was; the donated input is deleted (reading it raises RuntimeError) when the result fits its
    buffers (same layout), and otherwise either deleted or kept unchanged with JAX's "not usable"
    warning."""
    mesh, x0, y0, x_spec, y_spec, out_spec = example
    s = lambda spec: f"NamedSharding(mesh, {spec_literal(spec)})"  # noqa: E731
    case = scripted_case(f"jax.jit(lambda x, y: x * 3 + y, donate_argnums=0, in_shardings=({spec_literal(x_spec)}, "
                f"{spec_literal(y_spec)}), out_shardings={spec_literal(out_spec)}) on {describe_mesh(mesh)}, "
                f"int32{list(x0.shape)}",
                ["import warnings",
                        f"x, y = jax.device_put(x0, {s(x_spec)}), jax.device_put(y0, {s(y_spec)})",
                        f"f = jax.jit(lambda x, y: x * 3 + y, donate_argnums=0, in_shardings=({s(x_spec)}, {s(y_spec)}), "
                        f"out_shardings={s(out_spec)})",
                        "with warnings.catch_warnings(record=True) as warned:",
                        "    warnings.simplefilter('always')",
                        "    result = f(x, y)",
                        "print(result, x.is_deleted(), np.array_equal(np.asarray(y), y0), [str(w.message) for w in warned])"],
                       meshes={"mesh": mesh}, arrays={"x0": x0, "y0": y0},
                       # (the donating call once more, on a fresh copy of x0: x itself may be deleted)
                       outcomes={"donating call": f"f(jax.device_put(x0, {s(x_spec)}), y)", "result": "result",
                                 "the input that was not donated": "np.asarray(y)",
                                 "donated input is_deleted()": "x.is_deleted()",
                                 "reading the donated input": "np.asarray(x)",
                                 "a 'donated buffers were not usable' warning":
                                     "any('donated buffers were not usable' in str(w.message) for w in warned)",
                                 "the donated input JAX kept": "np.asarray(x)"})
    sharding = lambda spec: bridge.named_sharding(mesh, spec)  # noqa: E731
    x, y = jax.device_put(x0, sharding(x_spec)), jax.device_put(y0, sharding(y_spec))
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
