"""Derivatives of sharded code: ``grad``, ``value_and_grad``, ``jvp`` and ``vjp`` of (a) functions
jitted with drawn ``in_shardings``/``out_shardings`` and (b) ``shard_map`` bodies with collectives
equal the derivatives of the same program unsharded on one device (and, for (a), numpy's analytic
derivative); cotangents come back laid out as the primal inputs were, and tangents as the primal
output, which is what the transpose and linearization of a jitted function with shardings give
(and what Explicit sharding types state). (c) Functions with ``jax.custom_vjp`` and ``jax.custom_jvp``
rules (deliberately not their true derivatives), jitted with drawn shardings and inside shard_map
bodies: the derivatives are the custom rule's, applied once per global value (numpy's value of the
rule) and the unsharded program's, cotangents laid out as the primal inputs."""

from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.checking import running_error as rounding
from conformance.checking.tolerance import summation_order_atol
from conformance.checking.case import Case
from conformance.checking.layouts import check_layout
from conformance.checking.repro import describe_mesh, script, shard_map_lines, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model import dtypes
from conformance.model.layout import Layout, MeshModel, Spec
from strategies import cutting_meshes, cutting_specs, dividing_specs, meshes
from strategies.spmd import small_floats

pytestmark = pytest.mark.autodiff
DEVICES = bridge.live_device_ids()
EXAMPLES = max(8, settings().max_examples // 10)
TRANSFORMS = ("grad", "value_and_grad", "jvp", "vjp")
# (b): the shard_map bodies' sums (a psum or pmean over at most 8 devices of products of values <= 2 in
# magnitude, elementwise otherwise), in any order; (a) and (c) judge by running_error's bounds instead;
# value_and_grad's value, a sum of every element of the body's output, by body_bounds'
TOLERANCE = dict(rtol=2e-5, atol=2e-5)


def body_bounds(transform: str, unsharded, terms) -> list:
    """Per leaf of ``unsharded`` (the global function's transform), the atol of the sharded run's
    comparison with it: TOLERANCE's, and for value_and_grad's value, the sum of every element of
    the body's output (``terms``, the global function's output on one device), at least how far two
    float32 sums of those terms in different orders may be apart (``summation_order_atol``; found
    on 0.11.1, seed 2849814329: 1,024 terms whose magnitudes sum to 827 summed to -0.57416 by the
    all_gather's shards and to -0.57421 by the tiled global function, the exact sum -0.574161)."""
    leaves = [np.asarray(leaf, np.float64) for leaf in jax.tree_util.tree_leaves(unsharded)]
    bounds = [TOLERANCE["atol"] + TOLERANCE["rtol"] * np.abs(leaf) for leaf in leaves]
    if transform == "value_and_grad":
        bounds[0] = np.maximum(bounds[0], summation_order_atol(terms))
    return bounds


@dataclass(frozen=True)
class Differentiable:
    """A function of two float32 arrays ``x`` and ``w`` of one shape, its JAX source, and numpy's
    arithmetic of it (written to run on ``running_error.Bounded`` values, which carry the float32
    run's rounding-error bound): its ``value``, the ``pullback`` of an output cotangent ``g`` to
    ``(gx, gw)`` and the ``pushforward`` of tangents ``(tx, tw)`` (for a custom rule, the rule's;
    ``min_rank``: the rank it needs)."""

    name: str
    source: str
    value: Callable
    pullback: Callable
    pushforward: Optional[Callable]
    min_rank: int = 1
    definitions: str = ""                 # script lines the source needs (a custom rule's definition)
    transforms: Tuple[str, ...] = ("grad", "value_and_grad", "jvp", "vjp")  # those it supports

    @property
    def custom(self) -> bool:
        """Whether its derivatives are a custom rule's (defined in ``definitions``)."""
        return bool(self.definitions)


def _tanh_square_derivative(x, w):
    t = np.tanh(x * w)
    return 2 * t * (1 - t * t)


def _gram_pullback(x, w, g):
    # f = (x @ w.T) @ w: the cotangent of x @ w.T is g @ w.T; x's is that @ w, w's comes by both paths
    ct_xwt = g @ w.T
    return ct_xwt @ w, (x @ w.T).T @ g + ct_xwt.T @ x


FUNCTIONS = (
    Differentiable("sin_times", "lambda x, w: jnp.sin(x) * w", lambda x, w: np.sin(x) * w,
                   lambda x, w, g: (g * np.cos(x) * w, g * np.sin(x)),
                   lambda x, w, tx, tw: np.cos(x) * w * tx + np.sin(x) * tw),
    Differentiable("tanh_square", "lambda x, w: jnp.tanh(x * w) ** 2", lambda x, w: np.tanh(x * w) ** 2,
                   lambda x, w, g: (g * _tanh_square_derivative(x, w) * w, g * _tanh_square_derivative(x, w) * x),
                   lambda x, w, tx, tw: _tanh_square_derivative(x, w) * (w * tx + x * tw)),
    Differentiable("cumsum_times", "lambda x, w: jnp.cumsum(x, axis=0) * w", lambda x, w: np.cumsum(x, axis=0) * w,
                   lambda x, w, g: (np.cumsum((g * w)[::-1], axis=0)[::-1], g * np.cumsum(x, axis=0)),
                   lambda x, w, tx, tw: np.cumsum(tx, axis=0) * w + np.cumsum(x, axis=0) * tw),
    Differentiable("gram", "lambda x, w: x @ w.T @ w", lambda x, w: x @ w.T @ w, _gram_pullback,
                   lambda x, w, tx, tw: tx @ w.T @ w + x @ tw.T @ w + x @ w.T @ tw, min_rank=2),
)


# Functions with custom derivative rules, whose rules are deliberately not the functions' true
# derivatives (so that a rule dropped, or applied per shard and summed, shows): the custom_vjp's bwd
# is g * (3 * w + cos(x)) (cos(x) a residual saved by fwd) and g * x * x; the custom_jvp's tangent
# is 2 * w * tx + x * x * tw.
CUSTOM_RULES = """\
sin_times_with_a_custom_vjp = jax.custom_vjp(lambda x, w: jnp.sin(x) * w)
sin_times_with_a_custom_vjp.defvjp(lambda x, w: (jnp.sin(x) * w, (jnp.cos(x), x, w)),
                                   lambda res, g: (g * (3 * res[2] + res[0]), g * res[1] * res[1]))
tanh_times_with_a_custom_jvp = jax.custom_jvp(lambda x, w: jnp.tanh(x) * w)
tanh_times_with_a_custom_jvp.defjvp(lambda primals, tangents: (
    jnp.tanh(primals[0]) * primals[1], 2 * primals[1] * tangents[0] + primals[0] * primals[0] * tangents[1]))"""
_NAMESPACE = {"jax": jax, "jnp": jnp, "lax": jax.lax, "np": np}
exec(CUSTOM_RULES, _NAMESPACE)  # once, at import: the functions (and their compilations) are shared


def function_of(source: str) -> Callable:
    """``bridge.function_of``, where the custom-rule functions above are also in scope."""
    return eval(source, _NAMESPACE)


CUSTOM_FUNCTIONS = (
    Differentiable("custom_vjp", "sin_times_with_a_custom_vjp", lambda x, w: np.sin(x) * w,
                   lambda x, w, g: (g * (3 * w + np.cos(x)), g * x * x), None,
                   definitions=CUSTOM_RULES, transforms=("grad", "value_and_grad", "vjp")),
    Differentiable("custom_jvp", "tanh_times_with_a_custom_jvp", lambda x, w: np.tanh(x) * w,
                   lambda x, w, g: (g * 2 * w, g * x * x), lambda x, w, tx, tw: 2 * w * tx + x * x * tw,
                   definitions=CUSTOM_RULES),
)


def numpy_derivatives(function: Differentiable, transform: str, x, w, extra):
    """numpy's result of ``transform`` of ``function``, as ``transformed`` arranges it, on Bounded
    values: float64, each leaf carrying the float32 run's rounding-error bound (contractions
    rounding their operands as the backend's DEFAULT precision does)."""
    x, w, extra = rounding.tracked((x, w, extra), u_dot=bridge.default_dot_operand_dtype())
    value = function.value(x, w)
    if transform == "jvp":
        return value, function.pushforward(x, w, extra, extra)
    if transform == "vjp":
        return value, function.pullback(x, w, extra)
    grads = function.pullback(x, w, np.ones(x.shape))
    return grads if transform == "grad" else (np.sum(value), grads)


def oracle_check(function: Differentiable, transform: str) -> str:
    """The name of the check of the unsharded result against numpy's."""
    if function.custom:
        return f"{transform} vs numpy's custom rule"
    return f"{transform} vs numpy's analytic {'gradient' if transform in ('grad', 'value_and_grad') else 'derivative'}"


def transformed(transform: str, f: Callable, tangents=None, cotangent=None):
    """``transform`` of ``f(x, w)`` as one function of ``(x, w)``: grad and value_and_grad of
    ``sum(f)``, jvp along ``tangents``, vjp pulling back ``cotangent``."""
    if transform == "grad":
        return lambda x, w: jax.grad(lambda x, w: jnp.sum(f(x, w)), argnums=(0, 1))(x, w)
    if transform == "value_and_grad":
        return lambda x, w: jax.value_and_grad(lambda x, w: jnp.sum(f(x, w)), argnums=(0, 1))(x, w)
    if transform == "jvp":
        return lambda x, w: jax.jvp(f, (x, w), tangents)
    out = lambda x, w: jax.vjp(f, x, w)
    return lambda x, w: (out(x, w)[0], out(x, w)[1](cotangent))


def transform_source(transform: str, f: str) -> str:
    return {"grad": f"jax.grad(lambda x, w: jnp.sum({f}(x, w)), argnums=(0, 1))(x, w)",
            "value_and_grad": f"jax.value_and_grad(lambda x, w: jnp.sum({f}(x, w)), argnums=(0, 1))(x, w)",
            "jvp": f"jax.jvp({f}, (x, w), (tx, tw))",
            "vjp": f"(lambda out, pullback: (out, pullback(ct)))(*jax.vjp({f}, x, w))"}[transform]


# How many leaves each transform's result has: grad (gx, gw), value_and_grad (value, (gx, gw)), jvp
# (primal out, tangent out), vjp (primal out, (cotangent of x, of w)).
LEAVES = {"grad": 2, "value_and_grad": 3, "jvp": 2, "vjp": 3}


def model_dtype(x: np.ndarray, w: np.ndarray) -> np.dtype:
    """The model's dtype of every result leaf: the functions' values are the inexact join of x's and
    w's dtypes (sums keep it), and each derivative has its primal's dtype, which x and w share."""
    return dtypes.result_dtype("inexact", (x.dtype, w.dtype), x64=compat.x64_enabled())


def compare_trees(case: Case, what: str, got, expected, expected_dtype: np.dtype, *, bounds=None, **tolerance) -> None:
    """Leaf by leaf: JAX's dtype is the model's ``expected_dtype``, and the values are ``expected``'s
    (numpy's or the unsharded run's) held in that dtype, within ``bounds`` (an ``atol`` per leaf: a
    rounding-error bound per element), or within ``tolerance`` for every leaf."""
    got_leaves, expected_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected)
    case.equal(f"{what}: number of results", len(got_leaves), len(expected_leaves))
    for i, (g, e) in enumerate(zip(got_leaves, expected_leaves)):
        g = case.accepts(f"np.asarray of {what} result {i}", lambda: np.asarray(g))  # noqa: B023 - called in this iteration
        case.equal(f"{what} result {i} dtype", g.dtype.name, expected_dtype.name)
        bound = {} if bounds is None else {"rtol": 0.0, "atol": bounds[i]}
        case.close(f"{what} result {i}", g, np.asarray(e).astype(expected_dtype), **bound, **tolerance)


def bounded_leaves(reference) -> list:
    """A tree of Bounded values' leaves, in the order ``compare_trees`` reads a result's."""
    return jax.tree_util.tree_leaves(reference, is_leaf=lambda x: isinstance(x, rounding.Bounded))


def tree_outcomes(what: str, tree: str, leaves: int) -> dict:
    """The script's expression (see ``Case``) for each check ``compare_trees(case, what, ...)``
    runs on ``tree``, a script expression of a tree of ``leaves`` leaves."""
    leaf = lambda i: f"jax.tree_util.tree_leaves({tree})[{i}]"
    outcomes = {f"{what}: number of results": f"len(jax.tree_util.tree_leaves({tree}))"}
    for i in range(leaves):
        outcomes[f"np.asarray of {what} result {i}"] = f"np.asarray({leaf(i)})"
        outcomes[f"{what} result {i} dtype"] = f"np.asarray({leaf(i)}).dtype.name"
        outcomes[f"{what} result {i}"] = leaf(i)
    return outcomes


# --- (a) jitted functions with shardings --------------------------------------------------------


@dataclass(frozen=True)
class JitExample:
    function: Differentiable
    transform: str
    mesh: MeshModel
    x: np.ndarray
    w: np.ndarray
    extra: np.ndarray          # the tangent of x (jvp), or the output cotangent (vjp)
    x_spec: Spec
    w_spec: Spec
    out_spec: Spec


@st.composite
def jit_examples(draw) -> JitExample:
    """A function and transform; a mesh; x and w of one shape with sides from (1, 2, 4, 8); a
    dividing spec for x, for w and for the output."""
    function = draw(st.sampled_from(FUNCTIONS))
    transform = draw(st.sampled_from(TRANSFORMS))
    shape = tuple(draw(st.lists(st.sampled_from((2, 4, 1, 8)), min_size=function.min_rank, max_size=2)))
    if function.name == "gram":
        shape = shape[:2]
    values = lambda: small_floats(shape)
    mesh = draw(meshes(DEVICES, max_axes=2))
    return JitExample(function, transform, mesh, draw(values()), draw(values()), draw(values()),
                      draw(dividing_specs(mesh, shape)), draw(dividing_specs(mesh, shape)),
                      draw(dividing_specs(mesh, shape)))


def jit_case(example: JitExample) -> Case:
    s = lambda spec: f"NamedSharding(mesh, {spec_literal(spec)})"
    code = script([
        *example.function.definitions.splitlines(),
        f"f = {example.function.source}",
        f"g = jax.jit(f, in_shardings=({s(example.x_spec)}, {s(example.w_spec)}), out_shardings={s(example.out_spec)})",
        f"x, w = jax.device_put(x0, {s(example.x_spec)}), jax.device_put(w0, {s(example.w_spec)})",
        "tx, tw, ct = extra, extra, extra",
        f"sharded = {transform_source(example.transform, 'g')}",
        f"unsharded = (lambda x, w: {transform_source(example.transform, 'f')})(jnp.asarray(x0), jnp.asarray(w0))",
        "print(sharded, unsharded, sep='\\n')",
        "print([getattr(leaf, 'sharding', None) for leaf in jax.tree_util.tree_leaves(sharded)])",
    ], meshes={"mesh": example.mesh}, arrays={"x0": example.x, "w0": example.w, "extra": example.extra})
    transform = example.transform
    grads = "sharded" if transform in ("grad", "jvp") else "sharded[1]"  # what the layout checks judge, as the property
    outcomes = {transform: transform_source(transform, "g"),
                f"{transform} unsharded": f"(lambda x, w: {transform_source(transform, 'f')})"
                                          f"(jnp.asarray(x0), jnp.asarray(w0))",
                **tree_outcomes(transform, "sharded", LEAVES[transform]),
                f"{transform} first result": f"{grads}[0]", f"{transform} second result": f"{grads}[1]"}
    outcomes.update(tree_outcomes(oracle_check(example.function, transform), "unsharded",
                                  LEAVES[transform]))  # (the oracle)
    if transform == "vjp":
        outcomes["vjp primal output"] = "sharded[0]"
    return Case(f"{example.transform} of jax.jit({example.function.source}, "
                f"in_shardings=({spec_literal(example.x_spec)}, "
                f"{spec_literal(example.w_spec)}), out_shardings={spec_literal(example.out_spec)}) on "
                f"{describe_mesh(example.mesh)}, x and w float32{list(example.x.shape)}", code, outcomes)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=jit_examples())
def test_derivatives_of_a_jitted_function_with_shardings(example, excuses):
    """grad, value_and_grad, jvp and vjp of a function jitted with in/out shardings equal those of
    the unsharded function (grads also numpy's analytic ones); cotangents are laid out as the primal
    inputs, tangents and outputs as the output sharding."""
    check_derivatives_of_a_jitted_function_with_shardings(example, excuses)


def check_derivatives_of_a_jitted_function_with_shardings(example, excuses):
    """The oracle (the unsharded transform against numpy) outside every excuse context, then the
    sharded transform against it inside the example's way."""
    case = jit_case(example)
    reference = numpy_derivatives(example.function, example.transform, example.x, example.w, example.extra)
    unsharded = check_unsharded_derivatives(case, example, reference)
    with excuses.way([example]):
        check_sharded_derivatives(case, example, unsharded, reference)


def derivative_of(example: JitExample) -> Callable:
    """``fn -> transformed(...)`` by the example's transform, its ``extra`` the tangent of x and w (jvp)
    and the output's cotangent (vjp)."""
    extra = jnp.asarray(example.extra)
    return lambda fn: transformed(example.transform, fn, (extra, extra), extra)


def check_unsharded_derivatives(case: Case, example: JitExample, reference):
    """The oracle: the transform of the unsharded function runs, jitted on one device (one
    compilation: eagerly, each operation of the function and its derivative asks for its own), and
    is within the float32 run's rounding-error bound of numpy's (``reference``, Bounded: the
    analytic derivative, or the custom rule); where the jitted run raises or is not, the eager run
    is judged; its result, which no known deviation excuses."""
    derivative = derivative_of(example)
    f = function_of(example.function.source)
    leaves = bounded_leaves(reference)
    expected, atol = [rounding.value_of(leaf) for leaf in leaves], [rounding.reference_atol(leaf) for leaf in leaves]
    check = oracle_check(example.function, example.transform)
    x, w = jnp.asarray(example.x), jnp.asarray(example.w)

    def judge(run):
        unsharded = case.accepts(f"{example.transform} unsharded", lambda: run(x, w))
        compare_trees(case, check, unsharded, expected, model_dtype(example.x, example.w), bounds=atol)
        return unsharded
    with case.oracle():
        return case.jitted_first(judge, jax.jit(derivative(f)), derivative(f))


def check_sharded_derivatives(case: Case, example: JitExample, unsharded, reference) -> None:
    """The transform of the function jitted with the example's shardings is within twice the float32
    run's rounding-error bound (``reference``'s: both runs are within it of the exact value) of the
    ``unsharded`` one; cotangents are laid out as the primal inputs, tangents and outputs as the
    output sharding."""
    f = function_of(example.function.source)
    sharding = lambda spec: bridge.named_sharding(example.mesh, spec)
    g = jax.jit(f, in_shardings=(sharding(example.x_spec), sharding(example.w_spec)),
                out_shardings=sharding(example.out_spec))
    x, w = bridge.placed(example.x, sharding(example.x_spec)), bridge.placed(example.w, sharding(example.w_spec))
    sharded = case.accepts(example.transform, lambda: derivative_of(example)(g)(x, w))
    atol = [rounding.same_program_atol(leaf) for leaf in bounded_leaves(reference)]
    compare_trees(case, example.transform, sharded, unsharded, model_dtype(example.x, example.w), bounds=atol)
    if example.transform in ("grad", "value_and_grad"):
        grads = sharded if example.transform == "grad" else sharded[1]
        expected_layouts = (example.x_spec, example.w_spec)
    elif example.transform == "jvp":
        grads, expected_layouts = sharded, (example.out_spec, example.out_spec)
    else:
        grads, expected_layouts = sharded[1], (example.x_spec, example.w_spec)
        check_layout(case, sharded[0], Layout(example.mesh, example.out_spec, example.x.shape),
                     what="vjp primal output")
    for name, leaf, spec in zip(("first", "second"), grads, expected_layouts):
        check_layout(case, leaf, Layout(example.mesh, spec, example.x.shape), what=f"{example.transform} {name} result")


# --- (b) shard_map bodies with collectives ------------------------------------------------------


@dataclass(frozen=True)
class CollectiveBody:
    """A shard_map body of two blocks ``b``, ``v`` (split along dimension 0 over the axis ``a``)
    with a collective over ``a``, its out_spec, and the same function written globally (``n``:
    the axis size), which the unsharded program runs."""

    name: str
    body: str          # lambda b, v, *, a, n
    out_spec: Spec     # with 'A' standing for the axis
    global_source: str  # lambda x, w, *, n


BODIES = (
    CollectiveBody("psum", "lambda b, v, *, a, n: lax.psum(jnp.sin(b) * v, a)", (),
                   "lambda x, w, *, n: jnp.sum((jnp.sin(x) * w).reshape(n, -1, *x.shape[1:]), axis=0)"),
    CollectiveBody("pmean", "lambda b, v, *, a, n: lax.pmean(b * jnp.cos(v), a)", (),
                   "lambda x, w, *, n: jnp.mean((x * jnp.cos(w)).reshape(n, -1, *x.shape[1:]), axis=0)"),
    # all_gather's result is equal on every device but typed as varying (lax.all_gather_invariant is
    # the invariant one), so out_specs name the axis: the global result is n copies.
    CollectiveBody("all_gather", "lambda b, v, *, a, n: lax.all_gather(jnp.sin(b) * v, a, tiled=True)", ("A",),
                   "lambda x, w, *, n: jnp.tile(jnp.sin(x) * w, (n, 1))"),
    CollectiveBody("psum_scatter", "lambda b, v, *, a, n: lax.psum_scatter(b * v, a, scatter_dimension=0, tiled=True)",
                   ("A",), "lambda x, w, *, n: jnp.sum((x * w).reshape(n, -1, *x.shape[1:]), axis=0)"),
    CollectiveBody("ppermute",
                   "lambda b, v, *, a, n: lax.ppermute(b * v, a, perm=[(i, (i + 1) % n) for i in range(n)])",
                   ("A",), "lambda x, w, *, n: jnp.roll(x * w, x.shape[0] // n, axis=0)"),
    CollectiveBody("axis_index", "lambda b, v, *, a, n: jnp.sin(b) * v * lax.axis_index(a)", ("A",),
                   "lambda x, w, *, n: jnp.sin(x) * w * jnp.repeat(jnp.arange(n), x.shape[0] // n)"
                   ".reshape(-1, *(1,) * (x.ndim - 1))"),
)


@st.composite
def body_examples(draw):
    """``(body, transform, mesh, axis, x, w, tangent, cotangent)``: a body, a transform, a mesh of
    one or two axes over every device, the axis the body's collective runs over, float32 x and w
    (and a tangent) whose first dimension is that axis's size squared times 1 or 2 (so
    psum_scatter divides it again), and a cotangent of the output's shape."""
    body = draw(st.sampled_from(BODIES))
    transform = draw(st.sampled_from(TRANSFORMS))
    mesh = draw(meshes(DEVICES, max_axes=2, subsets=False))
    axis = draw(st.sampled_from(mesh.axis_names))
    n = mesh.axis_sizes[axis]
    shape = (n * n * draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    values = lambda shape: small_floats(shape)
    out_shape = {"psum": (shape[0] // n, shape[1]), "pmean": (shape[0] // n, shape[1]),
                 "psum_scatter": (shape[0] // n, shape[1]),
                 "all_gather": (shape[0] * n, shape[1])}.get(body.name, shape)
    return (body, transform, mesh, axis, draw(values(shape)), draw(values(shape)), draw(values(shape)),
            draw(values(out_shape)))


@settings(max_examples=EXAMPLES)
@given(example=body_examples())
def test_derivatives_through_collectives_in_shard_map(example):
    """grad, value_and_grad, jvp and vjp through a shard_map body with a collective (replication
    check on) equal those of the same function written without shard_map, unsharded."""
    body, transform, mesh, axis, x, w, tangent, cotangent = example
    n = mesh.axis_sizes[axis]
    in_spec = ((axis,),)
    out_spec = tuple((axis,) if e == "A" else e for e in body.out_spec)
    setup, call = shard_map_lines(f"functools.partial({body.body}, a={axis!r}, n={n})", (in_spec, in_spec), out_spec)
    global_run = f"jax.jit(lambda x, w: {transform_source(transform, 'f')})(jnp.asarray(x), jnp.asarray(w))"
    code = script(["import functools", *setup, f"g = jax.jit({call})",
                   f"f = functools.partial({body.global_source}, n={n})",
                   "tx, tw = t, t",
                   f"sharded = {transform_source(transform, 'g')}",
                   f"unsharded = {global_run}",
                   "print(sharded, unsharded, sep='\\n')"],
                  meshes={"mesh": mesh}, arrays={"x": x, "w": w, "t": tangent, "ct": cotangent})
    case = Case(f"{transform} of shard_map({body.body} with a={axis!r}) on {describe_mesh(mesh)}, in_specs "
                f"{spec_literal(in_spec)} x2, out_specs {spec_literal(out_spec)}, x and w float32{list(x.shape)}", code,
                {transform: transform_source(transform, "g"), f"{transform} of the global function": global_run,
                 **tree_outcomes(transform, "sharded", LEAVES[transform])})
    local = bridge.function_of(body.body)
    g = jax.jit(compat.shard_map(lambda b, v: local(b, v, a=axis, n=n), bridge.jax_mesh(mesh), (in_spec, in_spec),
                                 out_spec, check=True))
    f = lambda x, w: bridge.function_of(body.global_source)(x, w, n=n)
    t = jnp.asarray(tangent)
    derivative = lambda fn: transformed(transform, fn, (t, t), jnp.asarray(cotangent))
    sharded = case.accepts(transform, lambda: derivative(g)(x, w))
    with case.oracle():
        unsharded = case.accepts(f"{transform} of the global function",
                                 lambda: jax.jit(derivative(f))(jnp.asarray(x), jnp.asarray(w)))
        terms = jax.jit(f)(jnp.asarray(x), jnp.asarray(w)) if transform == "value_and_grad" else ()
    compare_trees(case, transform, sharded, unsharded, model_dtype(x, w),
                  bounds=body_bounds(transform, unsharded, terms))


# --- deterministic reproductions of what the properties above found -----------------------------


@bridge.needs_devices(2, "to shard an output")
def test_grad_of_a_jit_whose_out_shardings_split_what_its_in_shardings_replicate():
    """grad of jax.jit(jnp.sin, in_shardings=P(), out_shardings=P('b')) over two devices is
    cos(x), laid out as the input (replicated)."""
    mesh = MeshModel(bridge.first_ids(bridge.live_device_ids(), 2), (2,), ("b",))
    x = np.ones((2, 2), np.float32)
    grad = "jax.grad(lambda x: jnp.sum(g(x)))(jax.device_put(x, NamedSharding(mesh, P())))"
    code = script(["g = jax.jit(jnp.sin, in_shardings=NamedSharding(mesh, P()), "
                   "out_shardings=NamedSharding(mesh, P('b')))",
                   f"print({grad})"],
                  meshes={"mesh": mesh}, arrays={"x": x})
    case = Case(f"jax.grad(lambda x: jnp.sum(jax.jit(jnp.sin, in_shardings=P(), out_shardings=P('b'))(x)))(x) on "
                f"{describe_mesh(mesh)}, x float32[2, 2]", code, {"grad": grad})  # (the call, its values, its layout)
    g = jax.jit(jnp.sin, in_shardings=bridge.named_sharding(mesh, ()),
                out_shardings=bridge.named_sharding(mesh, ("b",)))
    got = case.accepts("grad",
                       lambda: jax.grad(lambda x: jnp.sum(g(x)))(bridge.placed(x, bridge.named_sharding(mesh, ()))))
    case.close("grad", np.asarray(got), np.cos(x), rtol=1e-6, atol=1e-6)
    check_layout(case, got, Layout(mesh, (), x.shape), what="grad")


# --- (c) custom_vjp and custom_jvp rules in sharded code ----------------------------------------
# The rules are elementwise, so they apply once per global value: the sharded program's derivatives
# are the custom rule's (numpy's), as the unsharded program's are, whichever way the values are
# split. Fewer examples than (a) and (b): the rules are two, and their transforms few.
CUSTOM_EXAMPLES = max(5, settings().max_examples // 20)


@st.composite
def custom_rule_jit_examples(draw) -> JitExample:
    """As ``jit_examples``, over the custom-rule functions and the transforms each supports (no jvp
    of a custom_vjp function, which JAX rejects), on a mesh that cuts the shape where the devices
    allow, x's spec cutting it where possible (w's and the output's dividing it)."""
    function = draw(st.sampled_from(CUSTOM_FUNCTIONS))
    transform = draw(st.sampled_from(function.transforms))
    shape = tuple(draw(st.lists(st.sampled_from((2, 4, 1, 8)), min_size=1, max_size=2)))
    values = lambda: small_floats(shape)
    mesh = draw(cutting_meshes(DEVICES, shape, max_axes=2))
    return JitExample(function, transform, mesh, draw(values()), draw(values()), draw(values()),
                      draw(cutting_specs(mesh, shape, where_possible=True)), draw(dividing_specs(mesh, shape)),
                      draw(dividing_specs(mesh, shape)))


@settings(max_examples=CUSTOM_EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=custom_rule_jit_examples())
def test_custom_rules_of_a_jitted_function_with_shardings(example, excuses):
    """grad, value_and_grad, jvp and vjp of a custom_vjp or custom_jvp function jitted with in/out
    shardings are the custom rule's (numpy's value of it) and the unsharded function's; cotangents
    are laid out as the primal inputs, tangents as the output sharding."""
    check_derivatives_of_a_jitted_function_with_shardings(example, excuses)


# shard_map bodies around a custom-rule function: elementwise (out_specs the axis) or summed over the
# axis by psum (out_specs replicated); (source, out_spec, global source).
CUSTOM_BODIES = (
    ("lambda b, v, *, a, n: F(b, v)", ("A",), "lambda x, w, *, n: F(x, w)"),
    ("lambda b, v, *, a, n: lax.psum(F(b, v), a)", (),
     "lambda x, w, *, n: jnp.sum(F(x, w).reshape(n, -1, *x.shape[1:]), axis=0)"),
)


@st.composite
def custom_rule_body_examples(draw):
    """``(function, body, transform, mesh, axis, x, w, tangent, cotangent)``: a custom-rule function,
    a body around it, a transform it supports, a mesh over every device, the body's axis, float32 x
    and w (and a tangent) whose first dimension is that axis's size times 1 or 2, a cotangent of the
    output's shape."""
    function = draw(st.sampled_from(CUSTOM_FUNCTIONS))
    body = draw(st.sampled_from(CUSTOM_BODIES))
    transform = draw(st.sampled_from(function.transforms))
    mesh = draw(meshes(DEVICES, max_axes=2, subsets=False))
    axis = draw(st.sampled_from(mesh.axis_names))
    n = mesh.axis_sizes[axis]
    shape = (n * draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    out_shape = shape if body[1] else (shape[0] // n, shape[1])
    values = lambda shape: small_floats(shape)
    return (function, body, transform, mesh, axis, draw(values(shape)), draw(values(shape)), draw(values(shape)),
            draw(values(out_shape)))


def custom_body_expected(function, summed: bool, transform: str, n: int, x, w, t, ct):
    """numpy's result of ``transform`` of the body's global function by the custom rule (float64)."""
    x, w, t, ct = (np.asarray(a, np.float64) for a in (x, w, t, ct))
    fold = (lambda v: v.reshape(n, -1, *v.shape[1:]).sum(0)) if summed else (lambda v: v)
    value = fold(function.value(x, w))
    if transform == "jvp":
        return value, fold(function.pushforward(x, w, t, t))
    g = np.tile(ct, (n, 1)) if summed else ct
    if transform == "vjp":
        return value, function.pullback(x, w, g)
    grads = function.pullback(x, w, np.ones_like(x))
    return grads if transform == "grad" else (np.sum(value), grads)


@settings(max_examples=CUSTOM_EXAMPLES)
@given(example=custom_rule_body_examples())
def test_custom_rules_inside_shard_map(example):
    """grad, value_and_grad, jvp and vjp through a shard_map body applying a custom_vjp or
    custom_jvp function (elementwise, or summed by psum) are the custom rule's, once per global
    value (numpy's value of it), and the unsharded global function's; cotangents come back laid out
    as the primal inputs were."""
    function, (body_source, out_entries, global_source), transform, mesh, axis, x, w, tangent, cotangent = example
    n = mesh.axis_sizes[axis]
    body_source, global_source = (src.replace("F(", f"{function.source}(") for src in (body_source, global_source))
    in_spec = ((axis,),)
    out_spec = tuple((axis,) if e == "A" else e for e in out_entries)
    setup, call = shard_map_lines(f"functools.partial({body_source}, a={axis!r}, n={n})", (in_spec, in_spec), out_spec)
    put = lambda name: f"jax.device_put({name}, NamedSharding(mesh, {spec_literal(in_spec)}))"
    placed = f"{put('x')}, {put('w')}"
    global_run = f"jax.jit(lambda x, w: {transform_source(transform, 'f')})(jnp.asarray(x), jnp.asarray(w))"
    sharded_run = f"(lambda x, w: {transform_source(transform, 'g')})({placed})"
    code = script(["import functools", *function.definitions.splitlines(), *setup, f"g = jax.jit({call})",
                   f"f = functools.partial({global_source}, n={n})", "tx, tw = t, t",
                   f"sharded = {sharded_run}", f"unsharded = {global_run}", "print(sharded, unsharded, sep='\\n')"],
                  meshes={"mesh": mesh}, arrays={"x": x, "w": w, "t": tangent, "ct": cotangent})
    case = Case(f"{transform} of shard_map({body_source} with a={axis!r}) on {describe_mesh(mesh)}, in_specs "
                f"{spec_literal(in_spec)} x2, out_specs {spec_literal(out_spec)}, x and w float32{list(x.shape)}", code,
                {transform: sharded_run, f"{transform} of the global function": global_run,
                 **tree_outcomes(transform, "sharded", LEAVES[transform]),
                 **tree_outcomes(f"{transform} vs numpy's custom rule", "sharded", LEAVES[transform]),
                 f"{transform} cotangent": "sharded"})
    local = function_of(body_source)
    g = jax.jit(compat.shard_map(lambda b, v: local(b, v, a=axis, n=n), bridge.jax_mesh(mesh), (in_spec, in_spec),
                                 out_spec, check=True))
    f = lambda x, w: function_of(global_source)(x, w, n=n)
    t = jnp.asarray(tangent)
    derivative = lambda fn: transformed(transform, fn, (t, t), jnp.asarray(cotangent))
    in_sharding = bridge.named_sharding(mesh, in_spec)
    sharded = case.accepts(transform,
                           lambda: derivative(g)(bridge.placed(x, in_sharding), bridge.placed(w, in_sharding)))
    with case.oracle():
        unsharded = case.accepts(f"{transform} of the global function",  # one device, one compilation
                                 lambda: jax.jit(derivative(f))(jnp.asarray(x), jnp.asarray(w)))
        terms = jax.jit(f)(jnp.asarray(x), jnp.asarray(w)) if transform == "value_and_grad" else ()
    compare_trees(case, transform, sharded, unsharded, model_dtype(x, w),
                  bounds=body_bounds(transform, unsharded, terms))
    compare_trees(case, f"{transform} vs numpy's custom rule", sharded,
                  custom_body_expected(function, not out_entries, transform, n, x, w, tangent, cotangent),
                  model_dtype(x, w), rtol=1e-4, atol=1e-4)
    if transform != "jvp":
        grads = sharded if transform == "grad" else sharded[1]
        for name, leaf in zip(("first", "second"), grads):
            check_layout(case, leaf, Layout(mesh, in_spec, x.shape), what=f"{transform} cotangent {name} result")
