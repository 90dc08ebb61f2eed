"""Every computing entry point of the inventory (the jax.numpy functions that take ``device=`` or
``out_sharding=``, the jax.lax operations with a sharding argument) in every calling context a user
calls it in: eagerly on a sharded array, under jit, under jit with in/out shardings, under jit on an
Explicit mesh, inside a shard_map body, under vmap, and under grad where it is differentiable. Each
row of ``COMPUTING`` is one entry as a function of one array ``x`` (its source, the reproduction's
code) with its numpy reference; each context runs it and compares with numpy (under vmap: numpy's
value of each example, stacked; under grad: central differences of numpy's reference). A
context a row cannot run in says why (``not_in``)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax import lax

from conformance.checking import triggers
from conformance.checking.case import Case
from conformance.checking.layouts import check_layout
from conformance.checking.repro import describe_mesh, scripted_case
from conformance.checking.ways import Way
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel
from strategies import assembly

pytestmark = pytest.mark.calling_contexts
DEVICES = bridge.live_device_ids()
N = len(DEVICES)
EXAMPLES = max(1, settings().max_examples // 100)  # a context of a row is one program: an example says it

CONTEXTS = ("eager", "jit", "jit with in/out shardings", "jit on an Explicit mesh", "shard_map body", "vmap",
            "grad")


@dataclass(frozen=True)
class Computing:
    """One row: the inventory entry, the call as a function of ``x`` (float32 or int32 of shape
    (N, 4), N the device count; ``jnp``, ``lax``, ``np`` in scope), numpy's value of it, and the
    contexts it cannot run in, each with the reason."""

    entry: str
    source: str
    reference: Callable[[np.ndarray], np.ndarray]
    dtype: str = "float32"
    not_in: Tuple[Tuple[str, str], ...] = ()  # (context, why it cannot run there)
    # (context, the exceptions JAX raises there, its message's pattern, and the compat rule whose
    # release no longer refuses, or "")
    refused_in: Tuple[Tuple[str, tuple, str, str], ...] = ()
    result: str = ""  # the result's dtype, where it is not ``dtype``
    op: str = ""  # the catalogue's name of the operation, for the triggers of known deviations

    @property
    def fn(self):
        return _compiled_source(self.source)

    @property
    def id(self) -> str:
        return self.entry.removeprefix("jax.")


@functools.lru_cache(maxsize=None)
def _compiled_source(source: str):
    """A row's function, one object per source (so that its jits are built once)."""
    return eval(source, {"jnp": jnp, "lax": lax, "np": np, "jax": jax})


NOT_DIFFERENTIABLE = (("grad", "its result is an integer array (not differentiable)"),)


@functools.lru_cache(maxsize=None)
def drawn_unsharded(draw: str) -> np.ndarray:
    """The random draw ``draw`` (a JAX expression of constant keys and shapes) jitted on one device:
    the oracle of a random row, whose value numpy cannot give (JAX promises the bits of a draw
    identical across shardings and contexts; the rows draw integers, so bit for bit)."""
    return np.asarray(jax.jit(eval(f"lambda: {draw}", {"jax": jax, "jnp": jnp, "np": np}))())


def random_row(entry: str, draw: str) -> "Computing":
    """A jax.random row: ``x`` plus an int32 draw of x's last dimension (4) from constant keys, in
    every context the draw is the unsharded one's (NOT_DIFFERENTIABLE: integers)."""
    return Computing(entry, f"lambda x: x + ({draw}).astype(x.dtype)",
                     lambda x, d=draw: x + drawn_unsharded(d).astype(x.dtype), "int32", NOT_DIFFERENTIABLE)


# ragged_dot of x with the groups [eye(4), 2 eye(4)] over x's two halves, and where JAX refuses it: JAX's
# Explicit-sharding doc says that where it cannot infer a sharding "we throw an error and require the user to
# provide an out_sharding argument"; its batching rule says it is not implemented (0.6.x: "sharding rule for
# ragged_dot_general is not implemented"; 0.4.30 names no dimension)
RAGGED_DOT_REFERENCE = lambda x: x * np.where(np.arange(len(x)) < len(x) // 2, 1, 2)[:, None].astype(x.dtype)
RAGGED_DOT_REFUSALS = (("jit on an Explicit mesh", (NotImplementedError, *compat.SHARDING_TYPE_ERRORS),
                        "Please specify out_sharding|sharding rule for ragged_dot_general is not implemented", ""),
                       ("vmap", (NotImplementedError,), "ragged_dot vmap over any dim but 0 - NYI|"
                        "Batching rule for 'ragged_dot' not implemented", ""),
                       ("grad", (NotImplementedError,), "Differentiation rule for 'ragged_dot' not implemented",
                        "RAGGED_DOT_DIFFERENTIABLE"))
KEY = "jax.random.key(7)"
W43 = np.arange(12, dtype=np.float32).reshape(4, 3)
W42 = np.arange(8, dtype=np.float32).reshape(4, 2)

COMPUTING = (
    Computing("jax.numpy.arange", "lambda x: x + jnp.arange(x.shape[-1], dtype=x.dtype)", lambda x: x + np.arange(4)),
    Computing("jax.numpy.array", "lambda x: x * jnp.array([1, 2, 3, 4], dtype=x.dtype)", lambda x: x * [1, 2, 3, 4]),
    Computing("jax.numpy.asarray", "lambda x: x - jnp.asarray([4, 3, 2, 1], dtype=x.dtype)",
              lambda x: x - [4, 3, 2, 1]),
    Computing("jax.numpy.astype", "lambda x: jnp.astype(x, jnp.float16) * 2",
              lambda x: x.astype(np.float16) * np.float16(2), result="float16"),
    Computing("jax.numpy.bincount", "lambda x: jnp.bincount(x.reshape(-1) % 8, length=8)",
              lambda x: np.bincount(x.reshape(-1) % 8, minlength=8).astype(np.int32), "int32", NOT_DIFFERENTIABLE,
              refused_in=(("jit on an Explicit mesh", compat.SHARDING_TYPE_ERRORS,  # (a scatter-add)
                           "sharding rule for scatter-add is not implemented",
                           "EXPLICIT_SCATTER_ADD_HAS_A_SHARDING_RULE"),)),
    Computing("jax.numpy.broadcast_to", "lambda x: jnp.broadcast_to(x, (2,) + x.shape)",
              lambda x: np.broadcast_to(x, (2,) + x.shape)),
    Computing("jax.numpy.dot", "lambda x: jnp.dot(x, jnp.arange(12, dtype=x.dtype).reshape(4, 3))", lambda x: x @ W43),
    Computing("jax.numpy.einsum", "lambda x: jnp.einsum('ij,jk->ik', x, jnp.arange(8, dtype=x.dtype).reshape(4, 2))",
              lambda x: x @ W42),
    Computing("jax.numpy.empty", "lambda x: x + jnp.empty(x.shape[-1], x.dtype)", lambda x: x + 0,
              # (jnp.empty's docstring: "currently equivalent to jax.numpy.zeros")
              ),
    Computing("jax.numpy.empty_like", "lambda x: x + jnp.empty_like(x)", lambda x: x + 0),
    Computing("jax.numpy.eye", "lambda x: x @ jnp.eye(x.shape[-1], dtype=x.dtype)",
              lambda x: x @ np.eye(4, dtype=x.dtype)),
    Computing("jax.numpy.full", "lambda x: x + jnp.full(x.shape[-1], 3, x.dtype)", lambda x: x + 3),
    Computing("jax.numpy.full_like", "lambda x: x * jnp.full_like(x, 3)", lambda x: x * 3),
    Computing("jax.numpy.linspace", "lambda x: x + jnp.linspace(0, 6, x.shape[-1], dtype=x.dtype)",
              lambda x: x + np.array([0, 2, 4, 6], x.dtype)),
    Computing("jax.numpy.matmul", "lambda x: jnp.matmul(x, jnp.arange(8, dtype=x.dtype).reshape(4, 2))",
              lambda x: x @ W42),
    Computing("jax.numpy.ones", "lambda x: x + jnp.ones(x.shape[-1], x.dtype)", lambda x: x + 1),
    Computing("jax.numpy.ones_like", "lambda x: x - jnp.ones_like(x)", lambda x: x - 1),
    Computing("jax.numpy.percentile", "lambda x: jnp.percentile(x, 50, axis=-1)",
              lambda x: np.percentile(x, 50, axis=-1).astype(x.dtype)),
    Computing("jax.numpy.ravel", "lambda x: jnp.ravel(x) * 2", lambda x: np.ravel(x) * 2),
    Computing("jax.numpy.repeat", "lambda x: jnp.repeat(x, 2, axis=-1)", lambda x: np.repeat(x, 2, axis=-1)),
    Computing("jax.numpy.reshape", "lambda x: jnp.reshape(x, (-1, 2))", lambda x: np.reshape(x, (-1, 2)), op="reshape"),
    Computing("jax.numpy.tensordot", "lambda x: jnp.tensordot(x, jnp.arange(4, dtype=x.dtype), axes=1)",
              lambda x: np.tensordot(x, np.arange(4, dtype=x.dtype), axes=1)),
    Computing("jax.numpy.zeros", "lambda x: x + jnp.zeros(x.shape[-1], x.dtype)", lambda x: x + 0),
    Computing("jax.numpy.zeros_like", "lambda x: x + jnp.zeros_like(x)", lambda x: x + 0),
    Computing("jax.lax.broadcast", "lambda x: lax.broadcast(x, (2,))", lambda x: np.broadcast_to(x, (2,) + x.shape)),
    Computing("jax.lax.broadcast_in_dim", "lambda x: lax.broadcast_in_dim(x, x.shape[:1] + (2,) + x.shape[1:], (0, 2))",
              lambda x: np.broadcast_to(x[:, None, :], (x.shape[0], 2, x.shape[1]))),
    Computing("jax.lax.broadcasted_iota", "lambda x: x + lax.broadcasted_iota(x.dtype, x.shape, 1)",
              lambda x: x + np.arange(4, dtype=x.dtype)),
    Computing("jax.lax.conv_general_dilated",
              "lambda x: lax.conv_general_dilated(x[:, None, :], jnp.ones((1, 1, 2), x.dtype), (1,), 'VALID')[:, 0, :]",
              lambda x: x[:, :-1] + x[:, 1:],
              refused_in=(("jit on an Explicit mesh", compat.SHARDING_TYPE_ERRORS,
                           "sharding rule for conv_general_dilated is not implemented",
                           "EXPLICIT_CONV_HAS_A_SHARDING_RULE"),)),
    Computing("jax.lax.dot", "lambda x: lax.dot(x, jnp.arange(8, dtype=x.dtype).reshape(4, 2))", lambda x: x @ W42),
    Computing("jax.lax.dot_general",
              "lambda x: lax.dot_general(x, jnp.arange(8, dtype=x.dtype).reshape(4, 2), (((1,), (0,)), ((), ())))",
              lambda x: x @ W42),
    Computing("jax.lax.full", "lambda x: x + lax.full(x.shape, 3, x.dtype)", lambda x: x + 3),
    Computing("jax.lax.full_like", "lambda x: x + lax.full_like(x, 3)", lambda x: x + 3),
    Computing("jax.lax.ragged_dot",
              "lambda x: lax.ragged_dot(x, jnp.stack([jnp.eye(4, dtype=x.dtype), 2 * jnp.eye(4, dtype=x.dtype)]), "
              "jnp.array([x.shape[0] // 2, x.shape[0] - x.shape[0] // 2], jnp.int32))",
              RAGGED_DOT_REFERENCE, refused_in=RAGGED_DOT_REFUSALS),
    Computing("jax.lax.ragged_dot_general",  # (ragged_dot's primitive, refused where ragged_dot is)
              "lambda x: lax.ragged_dot_general(x, jnp.stack([jnp.eye(4, dtype=x.dtype), "
              "2 * jnp.eye(4, dtype=x.dtype)]), "
              "jnp.array([x.shape[0] // 2, x.shape[0] - x.shape[0] // 2], jnp.int32), lax.RaggedDotDimensionNumbers("
              "(([1], [1]), ([], [])), [0], [0]))",
              RAGGED_DOT_REFERENCE, refused_in=RAGGED_DOT_REFUSALS),
    Computing("jax.lax.empty", "lambda x: x + lax.full_like(lax.empty(x.shape, x.dtype), 0)", lambda x: x + 0,
              # (its values are "possibly uninitialized": what is checked is its shape and dtype, through full_like)
              ),
    Computing("jax.lax.reduce", "lambda x: lax.reduce(x, np.float32(0), lax.add, (1,))", lambda x: x.sum(1)),
    Computing("jax.lax.reduce_sum", "lambda x: lax.reduce_sum(x, (1,))", lambda x: x.sum(1)),
    Computing("jax.lax.reshape", "lambda x: lax.reshape(x, (x.shape[0] * 2, 2))", lambda x: x.reshape(-1, 2),
              op="reshape"),
    random_row("jax.random.randint", f"jax.random.randint({KEY}, (4,), -50, 50)"),
    random_row("jax.random.bits", f"jax.random.bits({KEY}, (4,), jnp.uint8)"),
    random_row("jax.random.bernoulli", f"jax.random.bernoulli({KEY}, 0.5, (4,))"),
    random_row("jax.random.categorical", f"jax.random.categorical({KEY}, jnp.log(jnp.array([0.1, 0.2, 0.7])), "
                                         "shape=(4,))"),
    random_row("jax.random.permutation", f"jax.random.permutation({KEY}, 4)"),
    random_row("jax.random.choice", f"jax.random.choice({KEY}, 10, (4,), replace=False)"),
    random_row("jax.random.split", f"jax.random.randint(jax.random.split({KEY})[1], (4,), 0, 9)"),
    random_row("jax.random.fold_in", f"jax.random.randint(jax.random.fold_in({KEY}, 3), (4,), 0, 9)"),
)


@dataclass(frozen=True)
class ContextExample:
    """A 1-d mesh 'a' over every device in a drawn order, and ``x`` (N, 4) and a second example ``y``
    of distinct small integers (exact in float32)."""

    mesh: MeshModel
    x: np.ndarray
    y: np.ndarray


@st.composite
def context_examples(draw, dtype: str) -> ContextExample:
    order = tuple(draw(st.permutations(DEVICES)))
    offset = draw(st.integers(0, 20))
    x = assembly.distinct_values((N, 4), dtype, offset)
    return ContextExample(MeshModel(order, (N,), ("a",)), x, x[::-1] + 1)


def sharded(ex: ContextExample, value, spec, axis_type="Auto"):
    return bridge.placed(value, bridge.named_sharding(ex.mesh, spec, axis_type))


def squares(fn):
    """The scalar the grad context differentiates: the sum of the squares of ``fn``'s result."""
    return lambda x: jnp.sum(jnp.square(fn(x).astype(jnp.float32)))


@functools.lru_cache(maxsize=None)
def program(row: Computing, context: str, mesh: MeshModel):
    """The row's function as ``context`` runs it, built (and jitted) once per row, context and mesh."""
    fn = row.fn
    if context == "eager":
        return fn
    if context in ("jit", "jit on an Explicit mesh"):
        return jax.jit(fn)
    if context == "jit with in/out shardings":
        return jax.jit(fn, in_shardings=bridge.named_sharding(mesh, ("a",)),
                       out_shardings=bridge.named_sharding(mesh, ()))
    if context == "shard_map body":
        return jax.jit(compat.shard_map(fn, bridge.jax_mesh(mesh), ((),), ()))
    if context == "vmap":
        return jax.jit(jax.vmap(fn))
    return jax.jit(jax.grad(squares(fn)))


SOURCES = {
    "eager": "f(jax.device_put(x, NamedSharding(mesh, P('a'))))",
    "jit": "jax.jit(f)(jax.device_put(x, NamedSharding(mesh, P('a'))))",
    "jit with in/out shardings": "jax.jit(f, in_shardings=NamedSharding(mesh, P('a')), "
                                 "out_shardings=NamedSharding(mesh, P()))(x)",
    "jit on an Explicit mesh": "jax.jit(f)(jax.device_put(x, NamedSharding(mesh, P())))  # mesh's axes Explicit, "
                               "in its mesh context",
    "shard_map body": "jax.jit(shard_map(f, mesh=mesh, in_specs=P(), out_specs=P()))(x)",
    "vmap": "jax.jit(jax.vmap(f))(jax.device_put(np.stack([x, y]), NamedSharding(mesh, P(None, 'a'))))",
    "grad": "jax.jit(jax.grad(lambda x: jnp.sum(jnp.square(f(x).astype(jnp.float32)))))("
            "jax.device_put(x, NamedSharding(mesh, P('a'))))",
}


def context_case(row: Computing, context: str, ex: ContextExample) -> Case:
    axis_type = "Explicit" if context == "jit on an Explicit mesh" else "Auto"
    call = SOURCES[context].split("  #")[0]
    return scripted_case(f"{row.entry} {context}: f = {row.source}; {SOURCES[context]} on {describe_mesh(ex.mesh)}, "
                         f"x {row.dtype}{list(ex.x.shape)}",
                         ["from jax import lax", "import jax.numpy as jnp",
                          ("shard_map = jax.shard_map" if compat.FEATURES["jax.shard_map"].available else
                           "from jax.experimental.shard_map import shard_map"),
                          f"f = {row.source}", f"print({call})"],
                         meshes={"mesh": ex.mesh}, arrays={"x": ex.x, "y": ex.y}, axis_type=axis_type,
                         outcomes={"the call": call})


def numeric_gradient(reference, x: np.ndarray) -> np.ndarray:
    """The gradient of the sum of the squares of numpy's ``reference`` at ``x``, by central
    differences of step 1/4 in float64: exact here, as every row's reference is affine in x (or
    piecewise affine with its kinks farther than a step away: x's values are distinct integers), so
    the sum of squares is quadratic, and its values are dyadic."""
    x64, step = x.astype(np.float64), 0.25
    loss = lambda v: np.sum(np.square(np.asarray(reference(v)).astype(np.float64)))
    gradient = np.empty_like(x64)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x64)
        e[i] = step
        gradient[i] = (loss(x64 + e) - loss(x64 - e)) / (2 * step)
    return gradient.astype(np.float32)


def run_in(row: Computing, context: str, ex: ContextExample):
    """The row's call in ``context`` on the example, and numpy's value of it."""
    f = program(row, context, ex.mesh)
    if context == "jit on an Explicit mesh":
        jmesh = bridge.jax_mesh(ex.mesh, "Explicit")
        with compat.mesh_context(jmesh, "Explicit"):
            return f(sharded(ex, ex.x, (), "Explicit")), row.reference(ex.x)
    if context == "vmap":
        return f(sharded(ex, np.stack([ex.x, ex.y]), (None, "a"))), np.stack([row.reference(ex.x), row.reference(ex.y)])
    if context == "grad":
        return f(sharded(ex, ex.x, ("a",))), numeric_gradient(row.reference, ex.x)
    if context == "jit with in/out shardings":
        return f(bridge.jit_argument(ex.x, bridge.named_sharding(ex.mesh, ("a",)))), row.reference(ex.x)
    if context == "shard_map body":
        return f(ex.x), row.reference(ex.x)
    return f(sharded(ex, ex.x, ("a",))), row.reference(ex.x)


@pytest.mark.parametrize("row", COMPUTING, ids=[row.id for row in COMPUTING])
@given(data=st.data())
# (excuses holds no state to reset between examples: its counts of excused examples outlive them)
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_each_computing_entry_gives_numpys_value_in_every_context(row, data, excuses):
    """Each computing entry point gives numpy's value (under grad: numpy's gradient) in each context
    it is called in, or the refusal JAX states there."""
    compat.parameters(row.entry)  # (skips, naming the version, where this JAX lacks the entry)
    ex = data.draw(context_examples(row.dtype), label="example")
    refusals = {context: (errors, pattern) for context, errors, pattern, until in row.refused_in
                if not (until and getattr(compat, until))}
    for context in CONTEXTS:
        if context in dict(row.not_in) or context == "jit on an Explicit mesh" \
                and not compat.FEATURES["explicit_sharding"].available:
            continue
        explicit = context == "jit on an Explicit mesh"
        with excuses.way([as_call(row, context, ex)], mesh_kind="Explicit" if explicit else "Auto", example=ex):
            check_context(row, context, ex, refusals.get(context))


def as_call(row: Computing, context: str, ex: ContextExample) -> triggers.Call:
    """The row's call in ``context`` as the triggers of known deviations read it."""
    explicit = context == "jit on an Explicit mesh"
    return triggers.Call(row.op or row.id.rsplit(".", 1)[-1], (ex.x,), {}, ex.mesh, "Explicit" if explicit else "Auto",
                         ((),) if explicit or context in ("shard_map body", "jit with in/out shardings") else (("a",),),
                         None, Way.EAGER if context == "eager" else Way.JIT_SHARDINGS,
                         np.shape(row.reference(ex.x)))


def check_context(row: Computing, context: str, ex: ContextExample, refusal) -> None:
    """The row's call in ``context``: numpy's value (the refusal JAX states there, where ``refusal``
    = (its exceptions, its message's pattern) is given)."""
    case = context_case(row, context, ex)
    call = functools.partial(run_in, row, context, ex)
    if refusal is not None:
        errors, pattern = refusal
        raised = case.rejects("the call", call, errors)
        case.true(f"{context}: the refusal's message matches {pattern!r}", re.search(pattern, str(raised)) is not None)
        return
    got, expected = case.accepts("the call", call)
    if context != "grad":  # (numpy's value in the row's result dtype: numpy's own promotion may differ)
        expected = np.asarray(expected).astype(row.result or row.dtype)
    case.same_bits(f"{context}: the call's result", np.asarray(got), np.asarray(expected))
    if context == "jit with in/out shardings":
        check_layout(case, got, Layout(ex.mesh, (), np.shape(expected)), np.asarray(expected),
                     what=f"{context}: result")
