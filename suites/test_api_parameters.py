"""The parameters of the transformations, device queries, ``jax.stages`` methods, sharding helpers
and collectives that the other suites leave at their defaults, each passed a meaningful value
whose effect a row checks: the transformations (``jit``'s static and donated argument names,
``keep_unused``, ``device``/``backend``, ``inline``, ``compiler_options``; ``vmap``'s axes, name
and size; ``grad``'s ``has_aux``, ``holomorphic`` and ``allow_int``; ``vjp``/``jvp``/``linearize``
``has_aux``; ``eval_shape``; ``checkpoint``/``remat``; ``named_call``/``named_scope``; ``pmap``'s
``backend``, ``axis_size`` and ``donate_argnums``), the device queries, ``device_put``'s ``src``,
``donate`` and ``may_alias``, ``make_mesh``, ``reshard`` and the array builders' ``dtype``, the
abstract meshes and axis helpers, the AOT stages, and the collectives of shard_map bodies.

Each row of ``ROWS`` (family, entry, parameters, form) computes its call on a drawn example (the
run's devices in a drawn order as a mesh 'a', and as a grid ('a', 'b'); distinct float32 values
laid out over it) and compares what the parameter means with an independent reference: numpy's
values (an analytic derivative, a moved axis, a per-device block of the collectives' model
``conformance/model/spmd.py`` or of a model written here where it has none), the layout model,
the run's own device list, or the same function without the parameter (the control, where the
effect is on the program: a jaxpr's nested calls, a compiled program's parameters, an
optimization barrier, a recomputed primitive). A deprecated or platform-bound parameter is checked
as its documented refusal (the exception type, and the message's words). The jitted functions
are built once per row (``functools.lru_cache``) while a property runs, so that the run's API
coverage records their parameters; an example compiles a row's program for its mesh's order."""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec

from conformance.checking.case import Case
from conformance.checking.layouts import check_layout
from conformance.checking.repro import array_literal, describe_mesh, scripted_case
from conformance.jaxside import bridge, compat, multicontroller
from conformance.model import spmd
from conformance.model.layout import Layout, MeshModel
from strategies import assembly

pytestmark = pytest.mark.api_parameters
DEVICES = bridge.live_device_ids()
N = len(DEVICES)
PLATFORM = jax.default_backend()  # the platform name the backend= parameters are given
EXAMPLES = max(2, settings().max_examples // 50)  # a row is one parameter's meaning: a couple of examples say it

RUNTIME_ERRORS = compat.RUNTIME_ERRORS

# APIs of this file that compat.FEATURES does not list (looked for, never decided by version;
# the arrivals read from the stored inventories).
LOCAL_FEATURES = {
    "get_mesh": compat.Feature("jax.sharding.get_mesh", "jax.sharding.get_mesh", arrived="0.8.1"),
    "use_abstract_mesh": compat.Feature("jax.sharding.use_abstract_mesh", "jax.sharding.use_abstract_mesh",
                                        arrived="0.7.2"),
    "abstract_mesh_of_a_mesh": compat.Feature("jax.sharding.Mesh.abstract_mesh", "jax.sharding.Mesh",
                                              arrived="0.4.36", present=lambda: hasattr(
                                                  jax.sharding.Mesh, "abstract_mesh")),
}


def require(entry: str, *names: str) -> None:
    """Skip (naming the version) unless the installed ``entry`` takes every parameter of ``names``
    (``compat.parameter_feature``, which finds a method's class: a missing entry lacks them all)."""
    for name in names:
        feature = compat.parameter_feature(entry, name)
        try:
            available = feature.available
        except ValueError:  # (compat's lookup of a top-level entry, jax.<name>, this JAX lacks)
            available = False
        if not available:
            raise compat.feature_missing(feature)


def local_feature(name: str):
    found = LOCAL_FEATURES[name]
    if not found.available:
        raise compat.feature_missing(found)
    return found.obj


# --- examples -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Example:
    """The run's devices in a drawn order as a mesh 'a'; distinct float32 values ``x`` of shape
    (N * rows, 2) (small integers: every sum and product below is exact); a small int ``k``."""

    mesh: MeshModel
    x: np.ndarray
    k: int

    @property
    def grid(self) -> MeshModel:
        """The same devices as a grid ('a', 'b'): (N / 2, 2), or (N, 1) for an odd count."""
        shape = (N // 2, 2) if N % 2 == 0 else (N, 1)
        return MeshModel(self.mesh.device_ids, shape, ("a", "b"))

    @property
    def blocks(self):
        """x's per-device blocks placed P('a'), in mesh order."""
        return list(np.split(self.x, N, axis=0))


@st.composite
def examples(draw) -> Example:
    order = tuple(draw(st.permutations(DEVICES)))
    rows = draw(st.sampled_from((1, 2)))
    x = assembly.distinct_values((N * rows, 2), "float32", draw(st.integers(0, 40)))
    return Example(MeshModel(order, (N,), ("a",)), x, draw(st.sampled_from((2, 3))))


def placed(ex: Example, spec=("a",), values=None, axis_type: str = "Auto", mesh=None):
    """``values`` (x by default) put on the example's mesh (or ``mesh``) as ``spec``."""
    return jax.device_put(ex.x if values is None else values,
                          bridge.named_sharding(mesh or ex.mesh, tuple(spec), axis_type))


# --- what a row expects ------------------------------------------------------------------------
@dataclass(frozen=True)
class Laid:
    """An array laid out as ``layout`` holding ``values``."""

    layout: Layout
    values: np.ndarray


@dataclass(frozen=True)
class Row:
    """One row: the family (its property), the entry and the parameters it passes and checks, the
    form, the call as code (``mesh``, ``grid``, ``x``, ``xs``, ``k``, ``platform`` in scope), how it
    runs (a dict of named outcomes) and what each outcome must be; or the exception types (and the
    words of the message) of its documented refusal, on every platform or on ``refused_on``."""

    family: str
    entry: str
    parameters: Tuple[str, ...]
    form: str
    source: Any  # str, or a function of the example giving it (literal arrays)
    run: Callable[[Example], Dict[str, Any]]
    expected: Callable[[Example], Dict[str, Any]]
    refused: Tuple[type, ...] = ()
    message: str = ""  # a regular expression the refusal's message matches
    refused_on: Tuple[str, ...] = ()  # the platforms of the refusal (empty: all of them)
    takes: Tuple[str, ...] = ()  # parameters the installed entry must take (else the row skips)
    needs: Tuple[str, ...] = ()  # compat features (or this file's LOCAL_FEATURES) the row needs
    uncached: bool = False  # the row checks compilation itself (no persistent cache)

    @property
    def id(self) -> str:
        return f"{self.entry.removeprefix('jax.')}-{','.join(self.parameters) or 'call'}-{self.form}"

    def refused_here(self) -> bool:
        return bool(self.refused) and (not self.refused_on or PLATFORM in self.refused_on)


ROWS = []


def row(family, entry, parameters, form, source, *, expected=lambda ex: {}, refused=(), message="", refused_on=(),
        takes=None, needs=(), uncached=False):
    """Register the decorated function as the row's run; ``takes`` defaults to ``parameters``."""
    parameters = (parameters,) if isinstance(parameters, str) else tuple(parameters)

    def register(run):
        ROWS.append(Row(family, entry, parameters, form, source, run, expected, tuple(refused), message,
                        tuple(refused_on), parameters if takes is None else tuple(takes), tuple(needs), uncached))
        return run
    return register


def with_warnings(fn):
    """``fn()`` and the warnings it raised, as (category name, message) pairs."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, tuple((w.category.__name__, str(w.message)) for w in caught)


def warned(caught, category: str, words: str) -> bool:
    """Whether ``caught`` (``with_warnings``) holds a ``category`` warning whose message matches ``words``."""
    return any(name == category and re.search(words, message) for name, message in caught)


def empty_the_cache_of(fn) -> None:
    """Empty the functools.lru_cache of ``fn`` (or of what it wraps), where it has one."""
    while fn is not None and not hasattr(fn, "cache_clear"):
        fn = getattr(fn, "__wrapped__", None)
    if fn is not None:
        fn.cache_clear()


def chosen_device(ex: Example) -> int:
    """The first device of the mesh's drawn order that is not JAX's default device (where the run
    has another): a device= the call could not reach by ignoring it."""
    default = jax.devices()[0].id
    return next((d for d in ex.mesh.device_ids if d != default), ex.mesh.device_ids[0])


def device_ids(devices) -> list:
    return [d.id for d in devices]


def primitive_count(jaxpr, name: str) -> int:
    """How many equations of ``jaxpr`` and its sub-jaxprs (a remat's, a jit's body) apply ``name``."""
    count = 0
    for eqn in jaxpr.eqns:
        count += eqn.primitive.name == name
        for param in eqn.params.values():
            for sub in param if isinstance(param, (tuple, list)) else (param,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    count += primitive_count(inner, name)
    return count


def nested_calls(jaxpr) -> int:
    """The equations of ``jaxpr`` (not recursing) that call a sub-jaxpr (a jit not inlined)."""
    return sum(any(hasattr(getattr(p, "jaxpr", p), "eqns") for p in eqn.params.values()) for eqn in jaxpr.eqns)


def entry_parameters(hlo_text: str) -> int:
    """The number of parameters of the ENTRY computation of a compiled program's HLO text."""
    entry = hlo_text[hlo_text.index("ENTRY"):]
    entry = entry[:entry.index("\n}")]
    return len(set(re.findall(r"parameter\((\d+)\)", entry)))


# ================================================================================================
# transformations
# ================================================================================================
T = "transformations"
TRACED: list = []  # (static k, its type) each time a static_argnames function is traced


def _scaled(x, k):
    TRACED.append((k, type(k).__name__))
    return x * k


@row(T, "jax.jit", "static_argnames", "a str; called with k, k again, then k + 1",
     "f = jax.jit(lambda x, k: x * k, static_argnames='k')\nf(xs, k=k), f(xs, k=k), f(xs, k=k + 1)",
     expected=lambda ex: {"the call": ex.x * ex.k, "the (k, type) traced": [(ex.k, "int"), (ex.k + 1, "int")]},
     uncached=True)
def _(ex):
    f = jax.jit(functools.partial(_scaled), static_argnames="k")  # (a function of its own: traced afresh)
    before = len(TRACED)
    xs = placed(ex)
    out = f(xs, k=ex.k)
    f(xs, k=ex.k)
    f(xs, k=ex.k + 1)
    return {"the call": out, "the (k, type) traced": TRACED[before:]}


@functools.lru_cache(maxsize=None)
def donating():
    return jax.jit(lambda x, y: x + y, donate_argnames="x")


@row(T, "jax.jit", "donate_argnames", "a str, x passed by keyword",
     "ys = xs + 1\nout = jax.jit(lambda x, y: x + y, donate_argnames='x')(x=xs, y=ys)\nout, xs.is_deleted()",
     expected=lambda ex: {"the call": Laid(Layout(ex.mesh, ("a",), ex.x.shape), ex.x * 2 + 1), "x deleted": True},
     uncached=True)
def _(ex):
    xs, ys = placed(ex), placed(ex, values=ex.x + 1)
    out = donating()(x=xs, y=ys)
    return {"the call": out, "x deleted": xs.is_deleted()}


@functools.lru_cache(maxsize=None)
def keeping_unused():
    return jax.jit(lambda x, y: x * 2, keep_unused=True)


@row(T, "jax.jit", "keep_unused", "True, y unused",
     "c = jax.jit(lambda x, y: x * 2, keep_unused=True).lower(xs, xs).compile()\nc(xs, xs), c.as_text()",
     expected=lambda ex: {"the call": ex.x * 2, "the compiled program's parameters": 2}, uncached=True)
def _(ex):
    xs = placed(ex)
    compiled = keeping_unused().lower(xs, xs).compile()
    return {"the call": compiled(xs, xs), "the compiled program's parameters": entry_parameters(compiled.as_text())}


@row(T, "jax.jit", "device", "a device (deprecated: a DeprecationWarning)",
     "jax.jit(lambda v: v * 2, device=devices[chosen])(x)  # chosen: the mesh order's first non-default device",
     expected=lambda ex: {"the call": ex.x * 2, "the result's devices": [chosen_device(ex)],
                          "a DeprecationWarning": True})
def _(ex):
    device = bridge.devices_by_id()[chosen_device(ex)]
    out, caught = with_warnings(lambda: jax.jit(lambda v: v * 2, device=device)(ex.x))
    return {"the call": out, "the result's devices": device_ids(out.devices()),
            "a DeprecationWarning": warned(caught, "DeprecationWarning", "device argument on jit is deprecated")}


@row(T, "jax.jit", "backend", "the platform's name (deprecated: a DeprecationWarning)",
     "jax.jit(lambda v: v * 3, backend=platform)(x)",
     expected=lambda ex: {"the call": ex.x * 3, "the result's platforms": [PLATFORM], "a DeprecationWarning": True})
def _(ex):
    out, caught = with_warnings(lambda: jax.jit(lambda v: v * 3, backend=PLATFORM)(ex.x))
    return {"the call": out, "the result's platforms": sorted({d.platform for d in out.devices()}),
            "a DeprecationWarning": warned(caught, "DeprecationWarning", "backend and device argument on jit")}


@functools.lru_cache(maxsize=None)
def enclosing(inline: bool):
    """jit of a function that calls a jitted v * 2 + 1 (inline or not) and subtracts 1."""
    inner = jax.jit(lambda v: v * 2 + 1, inline=True) if inline else jax.jit(lambda v: v * 2 + 1)
    return jax.jit(lambda v: inner(v) - 1)


def calls_in_lowering(f, xs) -> int:
    """The function calls (``call @``) of ``f``'s lowered StableHLO: one per jitted function kept
    as a function of its own."""
    return f.lower(xs).as_text().count("call @")


@row(T, "jax.jit", "inline", "True, called inside another jitted function",
     "inner = jax.jit(lambda v: v * 2 + 1, inline=True)\nf = jax.jit(lambda v: inner(v) - 1)\n"
     "f(xs), f.lower(xs).as_text().count('call @')",
     expected=lambda ex: {"the call": ex.x * 2, "calls in the enclosing program's lowering": 0,
                          "calls without inline (the control)": 1})
def _(ex):
    # (what inlining shows on every release: up to 0.11.1 inline=True inlines into the enclosing
    # jaxpr; from 0.11.2 it means jax.Inline.JAX_LATE and the jaxpr keeps the call; either way the
    # lowered program calls no function of its own. Measured on 0.4.30, 0.10.2, 0.11.0, 0.11.1,
    # 0.11.2 and 0.12.0.1)
    xs = placed(ex)
    return {"the call": enclosing(True)(xs), "calls in the enclosing program's lowering":
            calls_in_lowering(enclosing(True), xs),
            "calls without inline (the control)": min(1, calls_in_lowering(enclosing(False), xs))}


@functools.lru_cache(maxsize=None)
def with_compiler_options(option: str):
    return jax.jit(lambda v: v * 5, compiler_options={option: True})


@row(T, "jax.jit", "compiler_options", "a known XLA option",
     "jax.jit(lambda v: v * 5, compiler_options={'xla_embed_ir_in_executable': True})(xs)",
     expected=lambda ex: {"the call": Laid(Layout(ex.mesh, ("a",), ex.x.shape), ex.x * 5)})
def _(ex):
    return {"the call": with_compiler_options("xla_embed_ir_in_executable")(placed(ex))}


@row(T, "jax.jit", "compiler_options", "an unknown option (refused: it reaches XLA)",
     "jax.jit(lambda v: v * 5, compiler_options={'xla_no_such_option': True})(xs)",
     refused=RUNTIME_ERRORS, message="xla_no_such_option")
def _(ex):
    return {"the call": with_compiler_options("xla_no_such_option")(placed(ex))}


@functools.lru_cache(maxsize=None)
def vmapped(kind: str):
    if kind == "axes":
        return jax.jit(jax.vmap(lambda col, c: col * c + col.sum(), in_axes=(1, None), out_axes=-1))
    if kind == "axis_name":
        return jax.jit(jax.vmap(lambda r: r - lax.psum(r, "i"), axis_name="i"))
    if kind == "sum_match":
        return jax.jit(jax.vmap(lambda r: r * 2, out_axes=None, sum_match=True))
    return jax.jit(lambda v, n: jax.vmap(lambda w: w * 2, in_axes=None, axis_size=n)(v), static_argnums=1)


@row(T, "jax.vmap", ("in_axes", "out_axes"), "(1, None) and -1",
     "jax.vmap(lambda col, c: col * c + col.sum(), in_axes=(1, None), out_axes=-1)(xs, k)",
     expected=lambda ex: {"the call": ex.x * ex.k + ex.x.sum(axis=0, keepdims=True)})
def _(ex):
    return {"the call": vmapped("axes")(placed(ex), np.float32(ex.k))}


@row(T, "jax.vmap", "axis_name", "'i', a psum over it",
     "jax.vmap(lambda r: r - lax.psum(r, 'i'), axis_name='i')(xs)",
     expected=lambda ex: {"the call": ex.x - ex.x.sum(axis=0, keepdims=True)})
def _(ex):
    return {"the call": vmapped("axis_name")(placed(ex))}


@row(T, "jax.vmap", "axis_size", "k, no mapped input (in_axes=None)",
     "jax.vmap(lambda w: w * 2, in_axes=None, axis_size=k)(xs)",
     expected=lambda ex: {"the call": np.broadcast_to(ex.x * 2, (ex.k, *ex.x.shape))})
def _(ex):
    return {"the call": vmapped("axis_size")(placed(ex), ex.k)}


@row(T, "jax.vmap", "sum_match", "True with out_axes=None (its source: a mapped output is summed over the axis)",
     "jax.vmap(lambda r: r * 2, out_axes=None, sum_match=True)(xs)",
     expected=lambda ex: {"the call": (ex.x * 2).sum(axis=0)})
def _(ex):
    return {"the call": vmapped("sum_match")(placed(ex))}


def _squares_and_max(v):
    return (v * v).sum(), v.max()


@functools.lru_cache(maxsize=None)
def differentiated(kind: str):
    """The jitted derivative ``kind`` (one program per kind)."""
    complex_square = lambda z: (z * z).sum()
    int_scaled = lambda v, i: (v * i).sum()
    return jax.jit({
        "grad has_aux": lambda: jax.grad(_squares_and_max, has_aux=True),
        "grad holomorphic": lambda: jax.grad(complex_square, holomorphic=True),
        "grad allow_int": lambda: jax.grad(int_scaled, argnums=(0, 1), allow_int=True),
        "value_and_grad holomorphic": lambda: jax.value_and_grad(complex_square, holomorphic=True),
        "value_and_grad allow_int": lambda: jax.value_and_grad(int_scaled, argnums=(0, 1), allow_int=True),
    }[kind]())


def complex_input(ex: Example) -> np.ndarray:
    return (ex.x + 1j * (ex.x[::-1] + 1)).astype(np.complex64)


FLOAT0 = "float0"  # the trivial dtype of an integer input's gradient (allow_int's documentation)


def float0_of(value) -> Tuple[str, tuple]:
    return (FLOAT0 if np.asarray(value).dtype == jax.dtypes.float0 else str(np.asarray(value).dtype),
            np.shape(value))


@row(T, "jax.grad", "has_aux", "True: (sum of squares, max)",
     "jax.grad(lambda v: ((v * v).sum(), v.max()), has_aux=True)(xs)",
     expected=lambda ex: {"gradient": ex.x * 2, "aux": ex.x.max()})
def _(ex):
    gradient, aux = differentiated("grad has_aux")(placed(ex))
    return {"gradient": gradient, "aux": aux}


@row(T, "jax.grad", "holomorphic", "True on a complex input",
     "zs = jax.device_put((x + 1j * (x[::-1] + 1)).astype(np.complex64), NamedSharding(mesh, P('a')))\n"
     "jax.grad(lambda z: (z * z).sum(), holomorphic=True)(zs)",
     expected=lambda ex: {"the call": complex_input(ex) * 2})
def _(ex):
    return {"the call": differentiated("grad holomorphic")(placed(ex, values=complex_input(ex)))}


@row(T, "jax.grad", "holomorphic", "True on a real input (refused: its inputs must be complex)",
     "jax.grad(lambda z: (z * z).sum(), holomorphic=True)(xs)", refused=(TypeError,),
     message="holomorphic=True requires inputs with complex dtype")
def _(ex):
    return {"the call": differentiated("grad holomorphic")(placed(ex))}


@row(T, "jax.grad", "allow_int", "True, an int32 argument",
     "jax.grad(lambda v, i: (v * i).sum(), argnums=(0, 1), allow_int=True)(xs, xs.astype(np.int32))",
     expected=lambda ex: {"the float argument's gradient": ex.x, "the int argument's gradient (dtype, shape)":
                          (FLOAT0, ex.x.shape)})
def _(ex):
    d_float, d_int = differentiated("grad allow_int")(placed(ex), placed(ex, values=ex.x.astype(np.int32)))
    return {"the float argument's gradient": d_float, "the int argument's gradient (dtype, shape)": float0_of(d_int)}


@row(T, "jax.value_and_grad", "holomorphic", "True on a complex input",
     "zs = jax.device_put((x + 1j * (x[::-1] + 1)).astype(np.complex64), NamedSharding(mesh, P('a')))\n"
     "jax.value_and_grad(lambda z: (z * z).sum(), holomorphic=True)(zs)",
     expected=lambda ex: {"value": (complex_input(ex) ** 2).sum(dtype=np.complex64),
                          "gradient": complex_input(ex) * 2})
def _(ex):
    value, gradient = differentiated("value_and_grad holomorphic")(placed(ex, values=complex_input(ex)))
    return {"value": value, "gradient": gradient}


@row(T, "jax.value_and_grad", "allow_int", "True, an int32 argument",
     "jax.value_and_grad(lambda v, i: (v * i).sum(), argnums=(0, 1), allow_int=True)(xs, xs.astype(np.int32))",
     expected=lambda ex: {"value": (ex.x * ex.x).sum(dtype=np.float32), "the float argument's gradient": ex.x,
                          "the int argument's gradient (dtype, shape)": (FLOAT0, ex.x.shape)})
def _(ex):
    value, (d_float, d_int) = differentiated("value_and_grad allow_int")(
        placed(ex), placed(ex, values=ex.x.astype(np.int32)))
    return {"value": value, "the float argument's gradient": d_float,
            "the int argument's gradient (dtype, shape)": float0_of(d_int)}


for entry, call, name in (
        ("jax.grad", lambda ex: jax.grad(lambda v: (v * v).sum(), reduce_axes=("a",))(placed(ex)), "grad"),
        ("jax.value_and_grad", lambda ex: jax.value_and_grad(lambda v: (v * v).sum(), reduce_axes=("a",))(placed(ex)),
         "grad"),
        ("jax.vjp", lambda ex: jax.vjp(lambda v: v * v, placed(ex), reduce_axes=("a",)), "vjp")):
    @row(T, entry, "reduce_axes", "('a',) (deprecated: refused)",
         f"{entry}(lambda v: (v * v).sum(), {'xs, ' if name == 'vjp' else ''}reduce_axes=('a',))"
         f"{'' if name == 'vjp' else '(xs)'}",
         refused=(NotImplementedError,), message=f"reduce_axes argument to {name} is deprecated")
    def _(ex, call=call):
        return {"the call": call(ex)}


@row(T, "jax.vjp", "has_aux", "True: (squares, sum)",
     "out, f_vjp, aux = jax.vjp(lambda v: (v * v, v.sum()), xs, has_aux=True)\n"
     "out, f_vjp(jnp.ones_like(xs)), aux",
     expected=lambda ex: {"the output": ex.x * ex.x, "the cotangent": ex.x * 2, "aux": ex.x.sum(dtype=np.float32)})
def _(ex):
    out, f_vjp, aux = jax.vjp(lambda v: (v * v, v.sum()), placed(ex), has_aux=True)
    (cotangent,) = f_vjp(jnp.ones_like(out))
    return {"the output": out, "the cotangent": cotangent, "aux": aux}


@row(T, "jax.jvp", "has_aux", "True: (squares, sum)",
     "jax.jvp(lambda v: (v * v, v.sum()), (xs,), (jnp.ones_like(xs),), has_aux=True)",
     expected=lambda ex: {"the output": ex.x * ex.x, "the tangent": ex.x * 2, "aux": ex.x.sum(dtype=np.float32)})
def _(ex):
    xs = placed(ex)
    out, tangent, aux = jax.jvp(lambda v: (v * v, v.sum()), (xs,), (jnp.ones_like(xs),), has_aux=True)
    return {"the output": out, "the tangent": tangent, "aux": aux}


@row(T, "jax.linearize", ("fun", "primals", "has_aux"), "True: (squares, max)",
     "out, f_jvp, aux = jax.linearize(lambda v: (v * v, v.max()), xs, has_aux=True)\n"
     "out, f_jvp(jnp.ones_like(xs)), aux",
     expected=lambda ex: {"the output": ex.x * ex.x, "the tangent": ex.x * 2, "aux": ex.x.max()})
def _(ex):
    xs = placed(ex)
    out, f_jvp, aux = jax.linearize(lambda v: (v * v, v.max()), xs, has_aux=True)
    return {"the output": out, "the tangent": f_jvp(jnp.ones_like(xs)), "aux": aux}


@row(T, "jax.eval_shape", ("fun", "args", "kwargs"), "a sharded array and a keyword argument",
     "jax.eval_shape(lambda v, *, scale: jnp.concatenate([v, v * scale], axis=1), xs, scale=2.0)",
     expected=lambda ex: {"(shape, dtype)": ((ex.x.shape[0], 2 * ex.x.shape[1]), "float32"),
                          "the function ran on values": False})
def _(ex):
    ran = []

    def f(v, *, scale):
        ran.append(isinstance(v, jax.Array) and not isinstance(v, jax.core.Tracer))
        return jnp.concatenate([v, v * scale], axis=1)
    out = jax.eval_shape(f, placed(ex), scale=2.0)
    return {"(shape, dtype)": (tuple(out.shape), np.dtype(out.dtype).name), "the function ran on values": any(ran)}


def _sin_sin(v):
    return jnp.sin(jnp.sin(v))


@functools.lru_cache(maxsize=None)
def rematted(kind: str):
    """The gradient of sum(sin(sin(v))) through ``kind`` (jax.checkpoint or jax.remat with one
    parameter), as a function (not jitted: its jaxpr and lowering are read)."""
    wrap = {
        "none": lambda f: f,
        "checkpoint prevent_cse": lambda f: jax.checkpoint(f, prevent_cse=False),
        "remat prevent_cse": lambda f: jax.remat(f, prevent_cse=False),
        "checkpoint default": lambda f: jax.checkpoint(f),
        "remat nothing_saveable": lambda f: jax.remat(f, policy=compat.checkpoint_policy("nothing_saveable")),
        "remat everything_saveable": lambda f: jax.remat(f, policy=compat.checkpoint_policy("everything_saveable")),
    }[kind](_sin_sin)
    return jax.grad(lambda v: wrap(v).sum())


@functools.lru_cache(maxsize=None)
def jitted_remat(kind: str):
    return jax.jit(rematted(kind))


def unchecked_gradient(ex: Example) -> np.ndarray:
    """The gradient of sum(sin(sin(x))) without checkpointing, jitted: what each checkpointed
    derivative computes again, bit for bit."""
    return np.asarray(jitted_remat("none")(placed(ex)))


def barriers(kind: str, xs) -> int:
    return jax.jit(rematted(kind)).lower(xs).as_text().count("optimization_barrier")


for entry in ("jax.checkpoint", "jax.remat"):
    kind = f"{entry.removeprefix('jax.')} prevent_cse"

    @row(T, entry, ("fun", "prevent_cse") if entry == "jax.remat" else "prevent_cse",
         "False: no optimization barrier in the derivative (jax.checkpoint's default has one)",
         f"g = jax.grad(lambda v: {entry}(lambda u: jnp.sin(jnp.sin(u)), prevent_cse=False)(v).sum())\n"
         "jax.jit(g)(xs), jax.jit(g).lower(xs).as_text().count('optimization_barrier')",
         expected=lambda ex: {"the gradient, against the one without checkpointing": unchecked_gradient(ex),
                              "optimization barriers": 0,
                              "optimization barriers with prevent_cse=True (the control)": 1}, uncached=True)
    def _(ex, kind=kind):
        xs = placed(ex)
        return {"the gradient, against the one without checkpointing": jitted_remat(kind)(xs),
                "optimization barriers": barriers(kind, xs),
                "optimization barriers with prevent_cse=True (the control)": min(1, barriers("checkpoint default", xs))}


for policy, extra in (("nothing_saveable", 1), ("everything_saveable", 0)):
    @row(T, "jax.remat", ("fun", "policy"), f"{policy}: sin(v) recomputed {extra} time(s) in the backward pass",
         "g = jax.grad(lambda v: jax.remat(lambda u: jnp.sin(jnp.sin(u)), "
         f"policy=jax.checkpoint_policies.{policy})(v).sum())\njax.jit(g)(xs), jax.make_jaxpr(g)(xs)",
         expected=lambda ex, extra=extra: {
             "the gradient, against the one without checkpointing": unchecked_gradient(ex),
             "sin equations beyond the un-checkpointed derivative's": extra})
    def _(ex, policy=policy):
        xs = placed(ex)
        sins = primitive_count(jax.make_jaxpr(rematted(f"remat {policy}"))(xs).jaxpr, "sin")
        return {"the gradient, against the one without checkpointing": jitted_remat(f"remat {policy}")(xs),
                "sin equations beyond the un-checkpointed derivative's":
                    sins - primitive_count(jax.make_jaxpr(rematted("none"))(xs).jaxpr, "sin")}


def _static_scaled(v, k):
    return v * k if k > 1 else v  # (Python control flow on k: k must be static)


@functools.lru_cache(maxsize=None)
def static_checkpointed(entry: str, by: str):
    wrap = getattr(jax, entry.removeprefix("jax."))
    if by == "static_argnames":
        inner = wrap(_static_scaled, static_argnames=("k",))
        return jax.jit(jax.grad(lambda v, k: inner(v, k=k).sum()), static_argnums=1)
    inner = wrap(_static_scaled, static_argnums=(1,))
    return jax.jit(jax.grad(lambda v, k: inner(v, k).sum()), static_argnums=1)


for entry, by in (("jax.checkpoint", "static_argnums"), ("jax.checkpoint", "static_argnames"),
                  ("jax.remat", "static_argnums")):
    spelled = "static_argnums=(1,))(v, k)" if by == "static_argnums" else "static_argnames=('k',))(v, k=k)"

    @row(T, entry, by, "k used in Python control flow, under grad",
         "inner = lambda v, k: v * k if k > 1 else v\n"
         f"jax.grad(lambda v: {entry}(inner, {spelled}.sum())(xs)",
         expected=lambda ex: {"the gradient": np.full(ex.x.shape, ex.k, np.float32)})
    def _(ex, entry=entry, by=by):
        return {"the gradient": static_checkpointed(entry, by)(placed(ex), ex.k)}


for entry in ("jax.checkpoint", "jax.remat"):
    @row(T, entry, "concrete", "True (deprecated: refused)",
         f"{entry}(lambda v: v * 2, concrete=True)(xs)", refused=(NotImplementedError,), message="concrete")
    def _(ex, entry=entry):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # (0.8.x warns, then refuses)
            return {"the call": getattr(jax, entry.removeprefix("jax."))(lambda v: v * 2, concrete=True)(placed(ex))}


NAMED = "api_parameters_named_block"


@functools.lru_cache(maxsize=None)
def named(kind: str):
    if kind == "named_call":
        return jax.jit(jax.named_call(lambda v: v * 2 + 1, name=NAMED))

    def scoped(v):
        with jax.named_scope(NAMED):
            return v * 2 + 1
    return jax.jit(scoped)


for entry, kind, parameters in (("jax.named_call", "named_call", ("fun", "name")),
                                ("jax.named_scope", "named_scope", ("name",))):
    spelled = (f"f = jax.named_call(lambda v: v * 2 + 1, name={NAMED!r})" if kind == "named_call" else
               f"def f(v):\n    with jax.named_scope({NAMED!r}):\n        return v * 2 + 1")

    @row(T, entry, parameters, "a name kept in the compiled program",
         f"{spelled}\nc = jax.jit(f).lower(xs).compile()\nc(xs), {NAMED!r} in c.as_text()",
         expected=lambda ex: {"the call": ex.x * 2 + 1, "the name in the compiled program's text": True})
    def _(ex, kind=kind):
        compiled = named(kind).lower(placed(ex)).compile()
        return {"the call": compiled(placed(ex)),
                "the name in the compiled program's text": NAMED in compiled.as_text()}


def stacked(ex: Example) -> np.ndarray:
    """x's first N rows, one per device, for pmap (its mapped axis is the device count)."""
    return ex.x[:N]


@functools.lru_cache(maxsize=None)
def pmapped(kind: str, size: int = 0):
    if kind == "backend":
        return jax.pmap(lambda v: v * 2, backend=PLATFORM)
    if kind == "axis_size":
        return jax.pmap(lambda v: v * lax.psum(1, "i"), axis_name="i", axis_size=size)
    if kind == "donate":
        return jax.pmap(lambda v: v * 2, donate_argnums=0)
    return jax.pmap(lambda v: v + 1)


@row(T, "jax.pmap", "backend", "the platform's name", "jax.pmap(lambda v: v * 2, backend=platform)(x[:n])",
     expected=lambda ex: {"the call": stacked(ex) * 2, "the result's platforms": [PLATFORM]})
def _(ex):
    out = pmapped("backend")(stacked(ex))
    return {"the call": out, "the result's platforms": sorted({d.platform for d in out.devices()})}


@row(T, "jax.pmap", "axis_size", "the mapped size, read back by psum(1)",
     "jax.pmap(lambda v: v * lax.psum(1, 'i'), axis_name='i', axis_size=n)(x[:n])",
     expected=lambda ex: {"the call": stacked(ex) * N})
def _(ex):
    return {"the call": pmapped("axis_size", N)(stacked(ex))}


@row(T, "jax.pmap", "axis_size", "one more than the mapped size (refused)",
     "jax.pmap(lambda v: v * lax.psum(1, 'i'), axis_name='i', axis_size=n + 1)(x[:n])",
     refused=(ValueError,), message=f"axis_size {N + 1}")
def _(ex):
    return {"the call": pmapped("axis_size", N + 1)(stacked(ex))}


@row(T, "jax.pmap", "donate_argnums", "0, a pmapped input",
     "w = jax.pmap(lambda v: v + 1)(x[:n])\nout = jax.pmap(lambda v: v * 2, donate_argnums=0)(w)\nout, w.is_deleted()",
     expected=lambda ex: {"the call": (stacked(ex) + 1) * 2, "the input deleted": True}, uncached=True)
def _(ex):
    w = pmapped("plus one")(stacked(ex))
    out = pmapped("donate")(w)
    return {"the call": out, "the input deleted": w.is_deleted()}


# ================================================================================================
# device queries
# ================================================================================================
Q = "device_queries"


def run_processes() -> tuple:
    """(this process's index, the process count), as the run launched its processes: (0, 1) in one
    process."""
    active = multicontroller.ACTIVE
    return (active.process_id, active.count) if active is not None else (0, 1)


def devices_of_process(process: int) -> list:
    """The ids of the devices process ``process`` holds, in the order of the run's devices (in one
    process, every device: DEVICES)."""
    if multicontroller.ACTIVE is None:
        return list(DEVICES)
    return [i for i, owner in bridge.owners().items() if owner == process]


THIS_PROCESS, PROCESSES = run_processes()


@row(Q, "jax.devices", "backend", "the platform's name", "[d.id for d in jax.devices(backend=platform)]",
     expected=lambda ex: {"the call": list(DEVICES)})
def _(ex):
    return {"the call": device_ids(jax.devices(backend=PLATFORM))}


@row(Q, "jax.devices", "backend", "an unknown backend (refused)", "jax.devices(backend='no_such_backend')",
     refused=(RuntimeError,), message="no_such_backend")
def _(ex):
    return {"the call": jax.devices(backend="no_such_backend")}


@row(Q, "jax.device_count", "backend", "the platform's name", "jax.device_count(backend=platform)",
     expected=lambda ex: {"the call": N})
def _(ex):
    return {"the call": jax.device_count(backend=PLATFORM)}


@row(Q, "jax.local_device_count", "backend", "the platform's name", "jax.local_device_count(backend=platform)",
     expected=lambda ex: {"the call": len(devices_of_process(THIS_PROCESS))})
def _(ex):
    return {"the call": jax.local_device_count(backend=PLATFORM)}


@row(Q, "jax.local_devices", ("process_index", "backend"), "this process, the platform's name",
     "[d.id for d in jax.local_devices(process_index=0, backend=platform)]",
     expected=lambda ex: {"the call": devices_of_process(0)})
def _(ex):
    return {"the call": device_ids(jax.local_devices(process_index=0, backend=PLATFORM))}


@row(Q, "jax.local_devices", "process_index", "a process that does not exist (refused)",
     f"jax.local_devices(process_index={PROCESSES})", refused=(ValueError,), message=f"process_index {PROCESSES}")
def _(ex):
    return {"the call": jax.local_devices(process_index=PROCESSES)}


@row(Q, "jax.local_devices", "host_id", "this process (renamed process_index: a UserWarning)",
     "[d.id for d in jax.local_devices(host_id=0)]",
     expected=lambda ex: {"the call": devices_of_process(0), "a UserWarning naming process_index": True})
def _(ex):
    empty_the_cache_of(jax.local_devices)  # (it caches its answers: a call it answers from the cache warns no more)
    devices, caught = with_warnings(lambda: jax.local_devices(host_id=0))
    return {"the call": device_ids(devices),
            "a UserWarning naming process_index": warned(caught, "UserWarning", "host_id.*process_index")}


@row(Q, "jax.process_index", "backend", "the platform's name", "jax.process_index(backend=platform)",
     expected=lambda ex: {"the call": THIS_PROCESS})
def _(ex):
    return {"the call": jax.process_index(backend=PLATFORM)}


@row(Q, "jax.process_count", "backend", "the platform's name", "jax.process_count(backend=platform)",
     expected=lambda ex: {"the call": PROCESSES})
def _(ex):
    return {"the call": jax.process_count(backend=PLATFORM)}


@row(Q, "jax.experimental.multihost_utils.live_devices", "devices",
     "every device, with no distributed runtime (refused, as documented)",
     "with multihost_utils.live_devices(jax.devices()) as live:\n    live",
     refused=(RuntimeError,), message="[Dd]istributed")
def _(ex):
    from jax.experimental import multihost_utils
    with multihost_utils.live_devices(jax.devices()) as live:
        return {"the call": live}


@row(Q, "jax.experimental.multihost_utils.reached_preemption_sync_point", "step_id",
     "a step, no preemption notice: False", "multihost_utils.reached_preemption_sync_point(k)",
     expected=lambda ex: {"the call": False})
def _(ex):
    from jax.experimental import multihost_utils
    return {"the call": multihost_utils.reached_preemption_sync_point(ex.k)}


# ================================================================================================
# placement: device_put, make_mesh, reshard, the array builders' dtype
# ================================================================================================
PL = "placement"


@row(PL, "jax.device_put", "src", "the sharding x is laid out as, onto P()",
     "jax.device_put(xs, NamedSharding(mesh, P()), src=NamedSharding(mesh, P('a')))",
     expected=lambda ex: {"the call": Laid(Layout(ex.mesh, (), ex.x.shape), ex.x)})
def _(ex):
    return {"the call": jax.device_put(placed(ex), bridge.named_sharding(ex.mesh, ()),
                                       src=bridge.named_sharding(ex.mesh, ("a",)))}


@row(PL, "jax.device_put", "donate", "True, onto P() (best effort: x deleted, or left whole)",
     "out = jax.device_put(xs, NamedSharding(mesh, P()), donate=True)\nout, xs.is_deleted()",
     expected=lambda ex: {"the call": Laid(Layout(ex.mesh, (), ex.x.shape), ex.x), "x deleted or unchanged": True})
def _(ex):
    xs = placed(ex)
    out = jax.device_put(xs, bridge.named_sharding(ex.mesh, ()), donate=True)
    return {"the call": out, "x deleted or unchanged": xs.is_deleted() or np.array_equal(np.asarray(xs), ex.x)}


def buffers(array) -> set:
    return {s.data.unsafe_buffer_pointer() for s in array.addressable_shards}


@row(PL, "jax.device_put", "may_alias", "False, onto x's own sharding: a copy",
     "out = jax.device_put(xs, NamedSharding(mesh, P('a')), may_alias=False)\nout is xs",
     expected=lambda ex: {"the call": Laid(Layout(ex.mesh, ("a",), ex.x.shape), ex.x), "the result is x": False,
                          "buffers shared with x": 0})
def _(ex):
    xs = placed(ex)
    out = jax.device_put(xs, bridge.named_sharding(ex.mesh, ("a",)), may_alias=False)
    return {"the call": out, "the result is x": out is xs, "buffers shared with x": len(buffers(out) & buffers(xs))}


def other_axis_type() -> str:
    """The axis type make_mesh does not default to (a default would check nothing)."""
    return "Auto" if compat.MAKE_MESH_DEFAULT_AXIS_TYPE == "Explicit" else "Explicit"


def half(ex: Example) -> Tuple[int, ...]:
    return ex.mesh.device_ids[:max(1, N // 2)]


@row(PL, "jax.make_mesh", ("axis_types", "devices"), "the non-default type, half the devices in drawn order",
     "half = mesh_order[:max(1, n // 2)]\n"
     f"m = jax.make_mesh((len(half),), ('a',), axis_types=(jax.sharding.AxisType.{other_axis_type()},), "
     "devices=[devices[i] for i in half])\nsorted(d.id for d in m.devices.flat), m.devices.shape, m.axis_types",
     expected=lambda ex: {"the mesh's devices": sorted(half(ex)), "the mesh's shape": (len(half(ex)),),
                          "the mesh's axis types": (other_axis_type(),)}, needs=("make_mesh", "AxisType"))
def _(ex):
    by_id = bridge.devices_by_id()
    mesh = compat.make_mesh((len(half(ex)),), ("a",), devices=[by_id[i] for i in half(ex)],
                            axis_types=other_axis_type())
    return {"the mesh's devices": sorted(device_ids(mesh.devices.flat)), "the mesh's shape": mesh.devices.shape,
            "the mesh's axis types": compat.axis_type_names(mesh)}


@row(PL, "jax.reshard", ("xs", "out_shardings"), "a tuple of two arrays and their shardings (Explicit mesh)",
     "with jax.set_mesh(emesh):  # emesh: mesh with Explicit axes\n"
     "    xs = jax.device_put(x, NamedSharding(emesh, P('a'))); ys = jax.device_put(x, NamedSharding(emesh, P()))\n"
     "    jax.reshard((xs, ys), (NamedSharding(emesh, P()), NamedSharding(emesh, P('a'))))",
     expected=lambda ex: {"the first": Laid(Layout(ex.mesh, (), ex.x.shape), ex.x),
                          "the second": Laid(Layout(ex.mesh, ("a",), ex.x.shape), ex.x)},
     needs=("explicit_sharding",))
def _(ex):
    jmesh = bridge.jax_mesh(ex.mesh, "Explicit")
    with compat.mesh_context(jmesh, "Explicit"):
        xs, ys = placed(ex, axis_type="Explicit"), placed(ex, (), axis_type="Explicit")
        first, second = jax.reshard((xs, ys), (bridge.named_sharding(ex.mesh, (), "Explicit"),
                                               bridge.named_sharding(ex.mesh, ("a",), "Explicit")))
    return {"the first": first, "the second": second}


def pieces(ex: Example, values) -> list:
    by_id = bridge.devices_by_id()
    return [jax.device_put(block, by_id[d]) for block, d in zip(np.split(values, N), ex.mesh.device_ids)]


for entry in ("jax.make_array_from_callback", "jax.make_array_from_single_device_arrays"):
    build = ("jax.make_array_from_callback(x.shape, NamedSharding(mesh, P('a')), lambda i: x.astype(np.int32)[i], "
             "dtype={})" if entry == "jax.make_array_from_callback" else
             "pieces = [jax.device_put(b, devices[d]) for b, d in zip(np.split(x.astype(np.int32), n), mesh_order)]\n"
             "jax.make_array_from_single_device_arrays(x.shape, NamedSharding(mesh, P('a')), pieces, dtype={})")

    def make(ex, dtype, entry=entry):
        s = bridge.named_sharding(ex.mesh, ("a",))
        values = ex.x.astype(np.int32)
        if entry == "jax.make_array_from_callback":
            return jax.make_array_from_callback(values.shape, s, lambda i: values[i], dtype=dtype)
        return jax.make_array_from_single_device_arrays(values.shape, s, pieces(ex, values), dtype=dtype)

    @row(PL, entry, "dtype", "the shards' dtype (int32)", build.format("jnp.int32"),
         expected=lambda ex: {"the call": Laid(Layout(ex.mesh, ("a",), ex.x.shape), ex.x.astype(np.int32))})
    def _(ex, make=make):
        return {"the call": make(ex, jnp.int32)}

    @row(PL, entry, "dtype", "another dtype than the shards' (refused: it must match)", build.format("jnp.float32"),
         refused=(ValueError,), message="must match")
    def _(ex, make=make):
        return {"the call": make(ex, jnp.float32)}


# ================================================================================================
# sharding helpers: abstract meshes and devices, the mesh in context, auto/explicit axes
# ================================================================================================
H = "sharding_helpers"


@row(H, "jax.sharding.AbstractMesh", ("axis_sizes", "axis_names", "axis_types"), "the grid's, Explicit axes",
     "jax.sharding.AbstractMesh(grid.devices.shape, ('a', 'b'), axis_types=(jax.sharding.AxisType.Explicit,) * 2)",
     expected=lambda ex: {"(sizes, names, types)": (ex.grid.shape, ("a", "b"), ("Explicit", "Explicit")),
                          "the same as the concrete Explicit grid's abstract mesh (sizes, names, types)":
                              (ex.grid.shape, ("a", "b"), ("Explicit", "Explicit"))},
     needs=("AxisType", "abstract_mesh_of_a_mesh"))
def _(ex):
    explicit = compat.axis_type("Explicit")
    abstract = jax.sharding.AbstractMesh(ex.grid.shape, ("a", "b"), axis_types=(explicit, explicit))
    concrete = bridge.jax_mesh(ex.grid, "Explicit").abstract_mesh
    described = lambda m: (tuple(m.axis_sizes), tuple(m.axis_names), compat.axis_type_names(m))
    return {"(sizes, names, types)": described(abstract),
            "the same as the concrete Explicit grid's abstract mesh (sizes, names, types)": described(concrete)}


@row(H, "jax.sharding.AbstractMesh", ("abstract_device",), "an AbstractDevice of the run's devices",
     "d = jax.devices()[0]\nam = jax.sharding.AbstractMesh(grid.devices.shape, ('a', 'b'), axis_types=(jax.sharding."
     "AxisType.Auto,) * 2, abstract_device="
     "jax.sharding.AbstractDevice(device_kind=d.device_kind, num_cores=None, platform=d.platform))\n"
     "am == grid.abstract_mesh",
     expected=lambda ex: {"equal to the concrete grid's abstract mesh": True,
                          "without abstract_device (the control)": False},
     takes=("abstract_device",), needs=("abstract_mesh_of_a_mesh",))
def _(ex):
    require("jax.sharding.AbstractDevice", "device_kind", "num_cores", "platform")
    device = bridge.devices_by_id()[ex.mesh.device_ids[0]]
    abstract_device = jax.sharding.AbstractDevice(device_kind=device.device_kind,
                                                  num_cores=getattr(device, "num_cores", None),
                                                  platform=device.platform)
    concrete = bridge.jax_mesh(ex.grid).abstract_mesh
    auto = (compat.axis_type("Auto"),) * 2  # (the concrete grid's; AbstractMesh's own default is Explicit from 0.11.2)
    with_device = jax.sharding.AbstractMesh(ex.grid.shape, ("a", "b"), axis_types=auto, abstract_device=abstract_device)
    return {"equal to the concrete grid's abstract mesh": with_device == concrete,
            "without abstract_device (the control)":
                jax.sharding.AbstractMesh(ex.grid.shape, ("a", "b"), axis_types=auto) == concrete}


@row(H, "jax.sharding.AbstractDevice", ("device_kind", "num_cores", "platform"), "the run's first device's",
     "d = jax.devices()[0]\n"
     "jax.sharding.AbstractDevice(device_kind=d.device_kind, num_cores=None, platform=d.platform)",
     expected=lambda ex: {"equal to the abstract device of a mesh of the run's devices": True},
     needs=("abstract_mesh_of_a_mesh",))
def _(ex):
    device = bridge.devices_by_id()[ex.mesh.device_ids[0]]
    made = jax.sharding.AbstractDevice(device_kind=device.device_kind, num_cores=getattr(device, "num_cores", None),
                                       platform=device.platform)
    return {"equal to the abstract device of a mesh of the run's devices":
            made == bridge.jax_mesh(ex.mesh).abstract_mesh.abstract_device}


@row(H, "jax.sharding.get_abstract_mesh", (), "inside and outside the grid's context (Explicit axes)",
     "with jax.set_mesh(egrid):\n    inside = jax.sharding.get_abstract_mesh()\n"
     "inside.axis_sizes, inside.axis_names, jax.sharding.get_abstract_mesh().axis_names",
     expected=lambda ex: {"inside (sizes, names)": (ex.grid.shape, ("a", "b")), "outside (names)": ()},
     needs=("get_abstract_mesh", "explicit_sharding"))
def _(ex):
    with compat.mesh_context(bridge.jax_mesh(ex.grid, "Explicit"), "Explicit"):
        inside = jax.sharding.get_abstract_mesh()
    outside = jax.sharding.get_abstract_mesh()
    return {"inside (sizes, names)": (tuple(inside.axis_sizes), tuple(inside.axis_names)),
            "outside (names)": tuple(outside.axis_names)}


@row(H, "jax.sharding.get_mesh", (), "inside jax.set_mesh(grid)",
     "with jax.set_mesh(grid):\n    m = jax.sharding.get_mesh()\n[d.id for d in m.devices.flat], m.axis_names",
     expected=lambda ex: {"(device ids, names)": (list(ex.grid.device_ids), ("a", "b"))},
     needs=("get_mesh", "set_mesh"))
def _(ex):
    with compat.mesh_context(bridge.jax_mesh(ex.grid), "Explicit"):  # (enters the grid whatever its axis types)
        mesh = jax.sharding.get_mesh()
    return {"(device ids, names)": (device_ids(mesh.devices.flat), tuple(mesh.axis_names))}


@row(H, "jax.sharding.use_abstract_mesh", "mesh", "an AbstractMesh of the grid's shape",
     "am = jax.sharding.AbstractMesh(grid.devices.shape, ('a', 'b'))\n"
     "with jax.sharding.use_abstract_mesh(am):\n    jax.sharding.get_abstract_mesh() == am",
     expected=lambda ex: {"the mesh in context is it": True, "after the context (names)": ()},
     needs=("use_abstract_mesh", "get_abstract_mesh"))
def _(ex):
    abstract = jax.sharding.AbstractMesh(ex.grid.shape, ("a", "b"))
    with jax.sharding.use_abstract_mesh(abstract):
        inside = jax.sharding.get_abstract_mesh()
    return {"the mesh in context is it": inside == abstract,
            "after the context (names)": tuple(jax.sharding.get_abstract_mesh().axis_names)}


def summed_twice(ex: Example) -> np.ndarray:
    return ex.x * 2 + ex.x.sum(axis=1, keepdims=True)


TYPES_SEEN: dict = {}  # what a function traced inside auto_axes / explicit_axes saw of its argument


def spec_axes_seen(v) -> tuple:
    """The mesh axes the traced value's type is sharded over (its sharding's spec)."""
    spec = jax.typeof(v).sharding.spec
    return tuple(sorted({a for entry in spec if entry is not None for a in (entry if isinstance(entry, tuple)
                                                                             else (entry,))}))


@functools.lru_cache(maxsize=None)
def axes_changed(kind: str):
    def body(v):
        TYPES_SEEN[kind] = spec_axes_seen(v)
        return v * 2 + v.sum(axis=1, keepdims=True)
    if kind == "auto_axes":
        return jax.jit(lambda v: jax.sharding.auto_axes(body, axes="a", out_sharding=PartitionSpec())(v))
    return jax.jit(lambda v: jax.sharding.explicit_axes(body, axes="a", in_sharding=PartitionSpec("a"))(v))


@row(H, "jax.sharding.auto_axes", ("f", "axes", "out_sharding"), "axes 'a' of an Explicit mesh, out P()",
     "with jax.set_mesh(emesh):  # emesh: mesh with Explicit axes\n"
     "    f = lambda u: u * 2 + u.sum(axis=1, keepdims=True)\n"
     "    jax.jit(lambda v: jax.sharding.auto_axes(f, axes='a', out_sharding=P())(v))("
     "jax.device_put(x, NamedSharding(emesh, P('a'))))",
     expected=lambda ex: {"the call": Laid(Layout(ex.mesh, (), ex.x.shape), summed_twice(ex)),
                          "the axes the function's argument is typed as sharded over": ()},
     needs=("explicit_sharding",))
def _(ex):
    jmesh = bridge.jax_mesh(ex.mesh, "Explicit")
    TYPES_SEEN.pop("auto_axes", None)
    axes_changed.cache_clear()  # (the body records its type when traced: trace it for this example)
    with compat.mesh_context(jmesh, "Explicit"):
        out = axes_changed("auto_axes")(placed(ex, axis_type="Explicit"))
    return {"the call": out, "the axes the function's argument is typed as sharded over": TYPES_SEEN.get("auto_axes")}


@row(H, "jax.sharding.explicit_axes", ("f", "axes", "in_sharding"), "axes 'a' of an Auto mesh, in P('a')",
     "with jax.set_mesh(mesh):\n    f = lambda u: u * 2 + u.sum(axis=1, keepdims=True)\n"
     "    jax.jit(lambda v: jax.sharding.explicit_axes(f, axes='a', in_sharding=P('a'))(v))(xs)",
     expected=lambda ex: {"the call": summed_twice(ex),
                          "the axes the function's argument is typed as sharded over": ("a",)},
     needs=("explicit_sharding",))
def _(ex):
    TYPES_SEEN.pop("explicit_axes", None)
    axes_changed.cache_clear()
    with compat.mesh_context(bridge.jax_mesh(ex.mesh), "Explicit"):  # (enters the Auto mesh)
        out = axes_changed("explicit_axes")(placed(ex))
    return {"the call": out,
            "the axes the function's argument is typed as sharded over": TYPES_SEEN.get("explicit_axes")}


@row(H, "jax.sharding.make_single_device_sharding", "device", "the mesh order's first non-default device",
     "jax.device_put(x, jax.sharding.make_single_device_sharding(devices[chosen]))",
     expected=lambda ex: {"the call": Laid(Layout(MeshModel((chosen_device(ex),), (1,), ("a",)), (), ex.x.shape),
                                           ex.x)})
def _(ex):
    device = bridge.devices_by_id()[chosen_device(ex)]
    return {"the call": jax.device_put(ex.x, jax.sharding.make_single_device_sharding(device))}


@row(H, "jax.sharding.make_single_device_sharding", ("device", "memory_kind"),
     "each memory kind the device addresses",
     "d = devices[mesh_order[0]]\n[jax.device_put(x, jax.sharding.make_single_device_sharding(d, memory_kind="
     "m.kind)).sharding.memory_kind for m in d.addressable_memories()]",
     expected=lambda ex: {"the results' memory kinds": memory_kinds(ex),
                          "their values": [ex.x] * len(memory_kinds(ex))})
def _(ex):
    device = bridge.devices_by_id()[ex.mesh.device_ids[0]]
    outs = [jax.device_put(ex.x, jax.sharding.make_single_device_sharding(device, memory_kind=kind))
            for kind in memory_kinds(ex)]
    return {"the results' memory kinds": [o.sharding.memory_kind for o in outs],
            "their values": [np.asarray(o) for o in outs]}


def memory_kinds(ex: Example) -> list:
    """The memory kinds the mesh's first device addresses (the device's own list)."""
    return sorted(m.kind for m in bridge.devices_by_id()[ex.mesh.device_ids[0]].addressable_memories())


@row(H, "jax.sharding.make_single_device_sharding", "memory_kind", "a kind no device has (refused)",
     "jax.sharding.make_single_device_sharding(devices[mesh_order[0]], memory_kind='no_such_memory')",
     refused=(ValueError,), message="no_such_memory")
def _(ex):
    device = bridge.devices_by_id()[ex.mesh.device_ids[0]]
    return {"the call": jax.device_put(ex.x, jax.sharding.make_single_device_sharding(device,
                                                                                      memory_kind="no_such_memory"))}


# ================================================================================================
# jax.stages: trace, lower, compile and what they report
# ================================================================================================
S = "stages"
W_SHAPE = (2, 3)
MATMUL = "lowered = jax.jit(lambda a, b: a @ b).trace(xs, w).lower()\n"


def weights() -> np.ndarray:
    return np.arange(6, dtype=np.float32).reshape(W_SHAPE)


@functools.lru_cache(maxsize=None)
def matmul():
    return jax.jit(lambda a, b: a @ b)


@functools.lru_cache(maxsize=8)
def staged(mesh: MeshModel, shape: tuple):
    """(the Lowered, the Compiled) of x @ w, x placed P('a') over ``mesh``; once per mesh and shape."""
    xs = jax.device_put(np.zeros(shape, np.float32), bridge.named_sharding(mesh, ("a",)))
    lowered = matmul().trace(xs, weights()).lower()
    return lowered, lowered.compile()


def per_device_rows(ex: Example) -> int:
    return ex.x.shape[0] // N


@row(S, "jax.stages.Traced.lower", "lowering_platforms", "the platform's name",
     "jax.jit(lambda a, b: a @ b).trace(xs, w).lower(lowering_platforms=(platform,)).compile()(xs, w)",
     expected=lambda ex: {"the call": Laid(Layout(ex.mesh, ("a",), (ex.x.shape[0], 3)), ex.x @ weights())},
     uncached=True)
def _(ex):
    lowered = matmul().trace(placed(ex), weights()).lower(lowering_platforms=(PLATFORM,))
    return {"the call": lowered.compile()(placed(ex), weights())}


@functools.lru_cache(maxsize=None)
def abstractly_sharded(mesh: MeshModel):
    abstract = bridge.jax_mesh(mesh).abstract_mesh
    s = NamedSharding(abstract, PartitionSpec("a"))
    return jax.jit(lambda v: v * 2, in_shardings=s, out_shardings=s)


@row(S, "jax.stages.Lowered.compile", "device_assignment", "the mesh's devices, for a program lowered on its "
     "AbstractMesh (lowering_platforms given, as the abstract mesh requires)",
     "am = mesh.abstract_mesh\nf = jax.jit(lambda v: v * 2, in_shardings=NamedSharding(am, P('a')), "
     "out_shardings=NamedSharding(am, P('a')))\nc = f.trace(jax.ShapeDtypeStruct(x.shape, x.dtype)).lower("
     "lowering_platforms=(platform,)).compile(device_assignment=tuple(mesh.devices.flat))\nc(xs)",
     expected=lambda ex: {"the call": Laid(Layout(ex.mesh, ("a",), ex.x.shape), ex.x * 2)},
     takes=("device_assignment",), uncached=True)
def _(ex):
    require("jax.stages.Traced.lower", "lowering_platforms")
    lowered = abstractly_sharded(ex.mesh).trace(jax.ShapeDtypeStruct(ex.x.shape, ex.x.dtype)).lower(
        lowering_platforms=(PLATFORM,))
    by_id = bridge.devices_by_id()
    compiled = lowered.compile(device_assignment=tuple(by_id[i] for i in ex.mesh.device_ids))
    return {"the call": compiled(placed(ex))}


for dialect, op in (("hlo", " dot("), ("stablehlo", "stablehlo.dot_general")):
    @row(S, "jax.stages.Lowered.as_text", "dialect", f"{dialect!r}", f"{MATMUL}lowered.as_text({dialect!r})",
         expected=lambda ex, dialect=dialect: {"holds the matmul": True, "reads as the dialect": True},
         uncached=True)
    def _(ex, dialect=dialect, op=op):
        lowered, _ = staged(ex.mesh, ex.x.shape)
        text = lowered.as_text(dialect)
        return {"holds the matmul": op in text,
                "reads as the dialect": text.lstrip().startswith("HloModule" if dialect == "hlo" else "module")}

    @row(S, "jax.stages.Lowered.as_text", ("dialect", "debug_info"), f"{dialect!r}, debug_info=True",
         f"{MATMUL}lowered.as_text({dialect!r}, debug_info=True)",
         expected=lambda ex: {"names this file (debug information)": True,
                              "names this file without debug_info (the control)": False}, uncached=True)
    def _(ex, dialect=dialect):
        lowered, _ = staged(ex.mesh, ex.x.shape)
        return {"names this file (debug information)": FILE_NAME in lowered.as_text(dialect, debug_info=True),
                "names this file without debug_info (the control)": FILE_NAME in lowered.as_text(dialect)}

    @row(S, "jax.stages.Lowered.compiler_ir", ("self", "dialect"), f"'{dialect}'",
         f"{MATMUL}lowered.compiler_ir({dialect!r})",
         expected=lambda ex, dialect=dialect: {"its text holds the matmul": True, "its type":
                                               "XlaComputation" if dialect == "hlo" else "Module"}, uncached=True)
    def _(ex, dialect=dialect, op=op):
        lowered, _ = staged(ex.mesh, ex.x.shape)
        ir = lowered.compiler_ir(dialect)
        text = ir.as_hlo_text() if dialect == "hlo" else str(ir)
        return {"its text holds the matmul": op in text, "its type": type(ir).__name__}


FILE_NAME = "test_api_parameters.py"


@functools.lru_cache(maxsize=None)
def compiled_with_options(mesh: MeshModel, shape: tuple, option: str):
    lowered, _ = staged(mesh, shape)
    return lowered.compile(compiler_options={option: True})


@row(S, "jax.stages.Lowered.compile", "compiler_options", "a known XLA option",
     f"{MATMUL}lowered.compile(compiler_options={{'xla_embed_ir_in_executable': True}})(xs, w)",
     expected=lambda ex: {"the call": ex.x @ weights()}, uncached=True)
def _(ex):
    return {"the call": compiled_with_options(ex.mesh, ex.x.shape, "xla_embed_ir_in_executable")(placed(ex), weights())}


@row(S, "jax.stages.Lowered.compile", "compiler_options", "an unknown option (refused: it reaches XLA)",
     f"{MATMUL}lowered.compile(compiler_options={{'xla_no_such_option': True}})",
     refused=RUNTIME_ERRORS, message="xla_no_such_option", uncached=True)
def _(ex):
    lowered, _ = staged(ex.mesh, ex.x.shape)
    return {"the call": lowered.compile(compiler_options={"xla_no_such_option": True})}


def flops(analysis):
    """The 'flops' an analysis reports, or None (a dict; a one-element list of one on 0.4.x's Compiled)."""
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0] if len(analysis) == 1 else {}
    return analysis.get("flops") if isinstance(analysis, dict) else None


def numeric_leaves(analysis) -> bool:
    """Whether an analysis is what JAX documents: a simple structure (dicts, lists) of numbers."""
    if isinstance(analysis, dict):
        return all(isinstance(k, str) and numeric_leaves(v) for k, v in analysis.items())
    if isinstance(analysis, (list, tuple)):
        return all(numeric_leaves(v) for v in analysis)
    return isinstance(analysis, (int, float))


@row(S, "jax.stages.Lowered.cost_analysis", "self", "x @ w: flops at least the multiplications",
     f"{MATMUL}lowered.cost_analysis()",
     expected=lambda ex: {"a structure of numbers": True, "flops (where reported) >= m * k * n": True}, uncached=True)
def _(ex):
    lowered, _ = staged(ex.mesh, ex.x.shape)
    analysis = lowered.cost_analysis()
    reported = flops(analysis)
    return {"a structure of numbers": numeric_leaves(analysis),
            "flops (where reported) >= m * k * n": reported is None or reported >= ex.x.size * W_SHAPE[1]}


@row(S, "jax.stages.Compiled.cost_analysis", "self", "x @ w: flops at least one device's multiplications",
     f"{MATMUL}lowered.compile().cost_analysis()",
     expected=lambda ex: {"a structure of numbers": True,
                          "flops (where reported) >= the device's m * k * n": True}, uncached=True)
def _(ex):
    _, compiled = staged(ex.mesh, ex.x.shape)
    analysis = compiled.cost_analysis()
    reported = flops(analysis)
    return {"a structure of numbers": numeric_leaves(analysis),
            "flops (where reported) >= the device's m * k * n":
                reported is None or reported >= per_device_rows(ex) * W_SHAPE[0] * W_SHAPE[1]}


@row(S, "jax.stages.Compiled.memory_analysis", "self", "x @ w: a device's argument and output bytes",
     f"{MATMUL}m = lowered.compile().memory_analysis()\nm.argument_size_in_bytes, m.output_size_in_bytes",
     expected=lambda ex: {"argument bytes": argument_bytes(ex), "output bytes": per_device_rows(ex) * W_SHAPE[1] * 4},
     uncached=True)
def _(ex):
    _, compiled = staged(ex.mesh, ex.x.shape)
    stats = compiled.memory_analysis()
    return {"argument bytes": device_bytes(stats.argument_size_in_bytes, argument_bytes(ex)),
            "output bytes": device_bytes(stats.output_size_in_bytes, per_device_rows(ex) * W_SHAPE[1] * 4)}


def argument_bytes(ex: Example) -> int:
    """A device's bytes of x's block and of the whole w (float32)."""
    return per_device_rows(ex) * W_SHAPE[0] * 4 + W_SHAPE[0] * W_SHAPE[1] * 4


def device_bytes(reported: int, needed: int) -> int:
    """What a memory analysis's byte count is checked as: on CPU exactly a device's bytes (measured
    from 0.4.30 to 0.12.0.1); a platform that pads its buffers (TPU tiles) may report more, never
    less (a count at least ``needed`` reads as ``needed``)."""
    return needed if PLATFORM != "cpu" and reported >= needed else reported


@row(S, "jax.stages.Compiled.as_text", "self", "x @ w", f"{MATMUL}lowered.compile().as_text()",
     expected=lambda ex: {"an HLO module with an ENTRY computation": True, "holds the matmul": True}, uncached=True)
def _(ex):
    _, compiled = staged(ex.mesh, ex.x.shape)
    text = compiled.as_text()
    return {"an HLO module with an ENTRY computation": "ENTRY" in text, "holds the matmul": " dot(" in text}


@row(S, "jax.stages.Compiled.runtime_executable", "self", "x @ w",
     f"{MATMUL}lowered.compile().runtime_executable() is not None",
     expected=lambda ex: {"an executable": True}, uncached=True)
def _(ex):
    _, compiled = staged(ex.mesh, ex.x.shape)
    return {"an executable": compiled.runtime_executable() is not None}


@row(S, "jax.stages.Compiled.call", ("args",), "x and w, as jit would be called",
     f"{MATMUL}lowered.compile()(xs, w)",
     expected=lambda ex: {"the call": Laid(Layout(ex.mesh, ("a",), (ex.x.shape[0], 3)), ex.x @ weights())},
     uncached=True)
def _(ex):
    _, compiled = staged(ex.mesh, ex.x.shape)
    return {"the call": compiled(placed(ex), weights())}


# ================================================================================================
# collectives in shard_map bodies
# ================================================================================================
C = "collectives"
BODY = "jax.jit(shard_map(lambda b: {}, mesh=mesh, in_specs=P('a'), out_specs={}{}))(xs)"


def over_a(ex: Example, body, out_spec=("a",), check: bool = True, mesh: MeshModel = None, in_specs=(("a",),)):
    """shard_map of ``body`` over the example's mesh 'a' (or ``mesh``), jitted."""
    return jax.jit(compat.shard_map(body, bridge.jax_mesh(mesh or ex.mesh), in_specs, out_spec, check=check))


def per_device(results) -> np.ndarray:
    return np.concatenate([np.asarray(r) for r in results], axis=0)


def manual_state(aval) -> Tuple[frozenset, frozenset, frozenset]:
    """(varying, unreduced, reduced): the manual axes a shard_map body's value varies over, is
    unreduced over and is reduced over. From 0.10.0 ``jax.typeof(x).manual_axis_type``; on 0.8.x and
    0.9.x the varying axes are ``vma`` and the others its sharding spec's ``unreduced`` and
    ``reduced`` (measured on 0.8.2, 0.9.2, 0.10.2, 0.12.0.1)."""
    mat = getattr(aval, "manual_axis_type", None)
    if mat is not None:
        return frozenset(mat.varying), frozenset(mat.unreduced), frozenset(mat.reduced)
    spec = aval.sharding.spec
    return (compat.varying_axes(aval), frozenset(getattr(spec, "unreduced", ())),
            frozenset(getattr(spec, "reduced", ())))


STATES: dict = {}  # the manual state of a body's values, recorded when the body is traced
NO_AXES = frozenset()
A = frozenset({"a"})


@row(C, "jax.lax.axis_size", "axis_name", "'a', and ('a', 'b') of the grid",
     BODY.format("jnp.full(b.shape, lax.axis_size('a'))", "P('a')", "").replace("(xs)", "(jnp.zeros(n))") + "\n"
     "jax.jit(shard_map(lambda b: jnp.full(b.shape, lax.axis_size(('a', 'b'))), mesh=grid, in_specs=P('a', 'b'), "
     "out_specs=P('a', 'b')))(jnp.zeros(grid.devices.shape)).reshape(-1)",
     expected=lambda ex: {"over 'a'": np.full(N, N, np.int32), "over ('a', 'b') of the grid": np.full(N, N, np.int32)})
def _(ex):
    size = lambda names: lambda b: jnp.full(b.shape, lax.axis_size(names), np.int32)
    grid_body = compat.shard_map(size(("a", "b")), bridge.jax_mesh(ex.grid), (("a", "b"),), ("a", "b"))
    return {"over 'a'": np.asarray(over_a(ex, size("a"))(placed(ex, values=np.zeros(N, np.float32)))),
            "over ('a', 'b') of the grid": np.asarray(jax.jit(grid_body)(
                placed(ex, ("a", "b"), values=np.zeros((ex.grid.shape[0], ex.grid.shape[1]), np.float32),
                       mesh=ex.grid))).reshape(-1)}


def source_of(ex: Example) -> int:
    return ex.k % N


@row(C, "jax.lax.pbroadcast", ("x", "axis_name", "source"), "k mod n (not lowered on CPU: refused)",
     BODY.format("lax.pbroadcast(b, 'a', source=k % n)", "P('a')", f", {compat.SHARD_MAP_CHECK}=False"),
     expected=lambda ex: {"the call": per_device([ex.blocks[source_of(ex)]] * N)},
     refused=(NotImplementedError, *RUNTIME_ERRORS), message="pbroadcast|collective-broadcast", refused_on=("cpu",))
def _(ex):
    return {"the call": over_a(ex, lambda b: lax.pbroadcast(b, "a", source=source_of(ex)), check=False)(placed(ex))}


def drawn_perm(ex: Example) -> list:
    """A permutation of the axis positions drawn with the example: the mesh order's ranks, shifted
    by one (so that it is never the identity, nor, from 3 devices on, its own inverse)."""
    ranks = list(np.argsort(ex.mesh.device_ids))
    return [int(ranks[(i + 1) % N]) for i in range(N)]


@row(C, "jax.lax.pshuffle", ("x", "axis_name", "perm"), "the drawn order's ranks, shifted by one",
     "ranks = list(np.argsort(mesh_order))\nperm = [int(ranks[(i + 1) % n]) for i in range(n)]\n"
     + BODY.format("lax.pshuffle(b, 'a', perm=perm)", "P('a')", ""),
     expected=lambda ex: {"the call": per_device(spmd.ppermute(ex.blocks, [(s, i) for i, s in enumerate(
         drawn_perm(ex))]))})
def _(ex):
    perm = [int(p) for p in drawn_perm(ex)]
    return {"the call": over_a(ex, lambda b: lax.pshuffle(b, "a", perm=perm))(placed(ex))}


SWAPPED = ("ys = jax.device_put(np.arange(n * n * 2, dtype=np.float32).reshape(n * n, 2) + x[0, 0], "
           "NamedSharding(mesh, P('a')))\n")


def swapped_input(ex: Example) -> np.ndarray:
    """Distinct values (N * N, 2): each device's block has N rows, the axis size pswapaxes needs."""
    return assembly.distinct_values((N * N, 2), "float32", int(ex.x[0, 0]))


@row(C, "jax.lax.pswapaxes", ("x", "axis_name", "axis"), "axis 0 (its size the axis size)",
     SWAPPED + BODY.format("lax.pswapaxes(b, 'a', axis=0)", "P('a')", "").replace("(xs)", "(ys)"),
     expected=lambda ex: {"the call": per_device(spmd.all_to_all(np.split(swapped_input(ex), N), 0, 0))})
def _(ex):
    y = swapped_input(ex)
    return {"the call": over_a(ex, lambda b: lax.pswapaxes(b, "a", axis=0))(placed(ex, values=y))}


def halves() -> list:
    return [list(range(N // 2)), list(range(N // 2, N))]


@row(C, "jax.lax.pswapaxes", ("axis_index_groups",), "two halves of the axis (axis 0 of size n / 2)",
     SWAPPED + "groups = [list(range(n // 2)), list(range(n // 2, n))]\n"
     + BODY.format("lax.pswapaxes(b[:n // 2], 'a', axis=0, axis_index_groups=groups)", "P('a')", "").replace(
         "(xs)", "(ys)"),
     expected=lambda ex: {"the call": per_device(spmd.all_to_all([b[:N // 2] for b in np.split(swapped_input(ex), N)],
                                                                 0, 0, axis_index_groups=halves()))})
def _(ex):
    if N % 2:
        pytest.skip(f"two equal groups need an even device count (this run has {N})")
    y = swapped_input(ex)
    return {"the call": over_a(ex, lambda b: lax.pswapaxes(b[:N // 2], "a", axis=0, axis_index_groups=halves()))(
        placed(ex, values=y))}


@row(C, "jax.lax.all_gather", "to", "'reduced': a reduced value, then cast to varying",
     BODY.format("lax.pcast(lax.all_gather(b, 'a', tiled=True, to='reduced'), 'a', to='varying')", "P('a')", ""),
     expected=lambda ex: {"the call": per_device(spmd.all_gather(ex.blocks, 0, True)),
                          "the gathered value's (varying, unreduced, reduced) axes": (NO_AXES, NO_AXES, A)},
     takes=("to",))
def _(ex):
    require("jax.lax.pcast", "to")

    def body(b):
        gathered = lax.all_gather(b, "a", tiled=True, to="reduced")
        STATES["all_gather"] = manual_state(jax.typeof(gathered))
        return lax.pcast(gathered, "a", to="varying")
    STATES.pop("all_gather", None)
    out = over_a(ex, body)(placed(ex))
    return {"the call": out, "the gathered value's (varying, unreduced, reduced) axes": STATES.get("all_gather")}


PCAST_BODIES = {  # the bodies of pcast_body, as the scripts spell them
    "varying": "lax.pcast(lax.psum(b, 'a'), 'a', to='varying')",
    "unreduced": "lax.psum(lax.pcast(b, 'a', to='unreduced'), 'a')",
    "reduced": "lax.pcast(lax.pcast(lax.psum(b, 'a'), 'a', to='reduced'), 'a', to='varying')",
}


def pcast_body(to: str):
    """A body whose value is cast ``to`` and brought back to a result out_specs P('a') (or, from
    unreduced, P() after a psum) takes; it records the cast value's manual state."""
    def body(b):
        if to == "varying":
            cast = lax.pcast(lax.psum(b, "a"), "a", to="varying")
            out = cast
        elif to == "unreduced":
            cast = lax.pcast(b, "a", to="unreduced")
            out = lax.psum(cast, "a")
        else:
            cast = lax.pcast(lax.psum(b, "a"), "a", to="reduced")
            out = lax.pcast(cast, "a", to="varying")
        STATES[f"pcast {to}"] = manual_state(jax.typeof(cast))
        return out
    return body


for to, state, start in (("varying", (A, NO_AXES, NO_AXES), "psum(b)"),
                         ("unreduced", (NO_AXES, A, NO_AXES), "b"),
                         ("reduced", (NO_AXES, NO_AXES, A), "psum(b)")):
    @row(C, "jax.lax.pcast", ("x", "axis_name", "to"), f"{to!r} from {start}",
         BODY.format(PCAST_BODIES[to], "P()" if to == "unreduced" else "P('a')", ""),
         expected=lambda ex, to=to, state=state: {
             "the call": (spmd.psum(ex.blocks)[0] if to == "unreduced" else per_device(spmd.psum(ex.blocks))),
             "the cast value's (varying, unreduced, reduced) axes": state})
    def _(ex, to=to):
        STATES.pop(f"pcast {to}", None)
        out = over_a(ex, pcast_body(to), out_spec=() if to == "unreduced" else ("a",))(placed(ex))
        return {"the call": out, "the cast value's (varying, unreduced, reduced) axes": STATES.get(f"pcast {to}")}


@row(C, "jax.sharding.ManualAxisType", ("varying", "unreduced", "reduced"),
     "each state, against a body's typed values (varying b, b cast to unreduced, psum(b) cast to reduced)",
     "typed = {}\ndef body(b):\n    typed['varying'] = jax.typeof(b).manual_axis_type\n"
     "    typed['unreduced'] = jax.typeof(lax.pcast(b, 'a', to='unreduced')).manual_axis_type\n"
     "    typed['reduced'] = jax.typeof(lax.pcast(lax.psum(b, 'a'), 'a', to='reduced')).manual_axis_type\n"
     "    return b\njax.jit(shard_map(body, mesh=mesh, in_specs=P('a'), out_specs=P('a'))).trace(xs)\n"
     "typed, [jax.sharding.ManualAxisType(**{s: frozenset({'a'})}) for s in ('varying', 'unreduced', 'reduced')]",
     expected=lambda ex: {"varying": (A, NO_AXES, NO_AXES), "unreduced": (NO_AXES, A, NO_AXES),
                          "reduced": (NO_AXES, NO_AXES, A)})
def _(ex):
    made = {"varying": jax.sharding.ManualAxisType(varying=A), "unreduced": jax.sharding.ManualAxisType(unreduced=A),
            "reduced": jax.sharding.ManualAxisType(reduced=A)}
    typed = {}

    def body(b):
        typed["varying"] = jax.typeof(b).manual_axis_type
        typed["unreduced"] = jax.typeof(lax.pcast(b, "a", to="unreduced")).manual_axis_type
        typed["reduced"] = jax.typeof(lax.pcast(lax.psum(b, "a"), "a", to="reduced")).manual_axis_type
        return b
    over_a(ex, body).trace(placed(ex))
    fields = lambda m: (frozenset(m.varying), frozenset(m.unreduced), frozenset(m.reduced))
    return {name: fields(made[name]) if fields(made[name]) == fields(typed[name]) else
            ("made", fields(made[name]), "typed", fields(typed[name])) for name in made}


RING = "ring = [(i, (i + 1) % n) for i in range(n)]\n"
SEND_RECEIVE = "lax.precv(lax.psend(b, 'a', ring), jax.ShapeDtypeStruct(b.shape, b.dtype), 'a', ring)"


def ring(ex: Example) -> list:
    return [(i, (i + 1) % N) for i in range(N)]


@row(C, "jax.lax.psend", ("x", "axis_name", "perm"), "a ring, with precv (GPU only: refused elsewhere)",
     RING + BODY.format(SEND_RECEIVE, "P('a')", ""),
     expected=lambda ex: {"the call": per_device(spmd.ppermute(ex.blocks, ring(ex)))},
     refused=(NotImplementedError,), message="only implemented on GPU", refused_on=("cpu", "tpu"))
def _(ex):
    return {"the call": over_a(ex, lambda b: sent_and_received(b, ring(ex)))(placed(ex))}


def sent_and_received(b, perm):
    if N < 2 and PLATFORM not in ("cpu", "tpu"):
        pytest.skip("a send between devices needs two of them (this run has one)")
    token = lax.psend(b, "a", perm)
    return lax.precv(token, jax.ShapeDtypeStruct(b.shape, b.dtype), "a", perm)


@row(C, "jax.lax.precv", ("token", "out_shape", "axis_name", "perm"), "psend's token, a ring (GPU only)",
     RING + BODY.format(SEND_RECEIVE, "P('a')", ""),
     expected=lambda ex: {"the call": per_device(spmd.ppermute(ex.blocks, ring(ex)))},
     refused=(NotImplementedError,), message="only implemented on GPU", refused_on=("cpu", "tpu"))
def _(ex):
    return {"the call": over_a(ex, lambda b: sent_and_received(b, ring(ex)))(placed(ex))}


# --- ragged_all_to_all: a model of its documentation (the collectives' model has none) ------------
def ragged_plan(ex: Example, groups):
    """Per device (mesh position) of each group: its operand (2 * g values), the output it starts
    from (-1s), and the four offset/size vectors (g entries, one per group member): member i sends
    s[i][j] = (2i + j + k) % 3 values to member j (what i sends j is not what j sends i), packed on
    the receiver in sender order."""
    operand = np.split(assembly.distinct_values((N * 2 * max(len(g) for g in groups),), "float32", ex.k), N)
    plan = {}
    for group in groups:
        g = len(group)
        s = [[(2 * i + j + ex.k) % 3 for j in range(g)] for i in range(g)]
        for i, device in enumerate(group):
            in_off = np.concatenate([[0], np.cumsum(s[i])[:-1]]).astype(np.int32)
            out_off = np.array([sum(s[p][j] for p in range(i)) for j in range(g)], np.int32)
            recv = np.array([s[p][i] for p in range(g)], np.int32)
            plan[device] = (operand[device], np.full(3 * g, -1, np.float32), in_off, np.array(s[i], np.int32),
                            out_off, recv)
    return plan


def ragged_expected(ex: Example, groups) -> np.ndarray:
    """Each receiver's output: its -1s with every member's slice to it written at the offset the
    sender gave (the documentation's SEND/RECEIVE pseudo-code)."""
    plan = ragged_plan(ex, groups)
    results = {}
    for group in groups:
        for j, receiver in enumerate(group):
            out = plan[receiver][1].copy()
            for sender in group:
                operand, _, in_off, send, out_off, _ = plan[sender]
                out[out_off[j]:out_off[j] + send[j]] = operand[in_off[j]:in_off[j] + send[j]]
            results[receiver] = out
    return per_device([results[d] for d in range(N)])


def ragged_call(ex: Example, groups, axis_index_groups):
    plan = ragged_plan(ex, groups)
    stacked_parts = [np.concatenate([plan[d][p] for d in range(N)]) for p in range(6)]
    body = lambda *parts: lax.ragged_all_to_all(*parts, axis_name="a", axis_index_groups=axis_index_groups)
    f = over_a(ex, body, in_specs=(("a",),) * 6, check=False)  # (0.5.x has no replication rule for it)
    return f(*(placed(ex, values=part) for part in stacked_parts))


def ragged_source(groups_given: bool):
    """The script of a ragged row: its six per-device arrays as literals, then the call."""
    def source(ex: Example) -> str:
        groups = halves() if groups_given else [list(range(N))]
        plan = ragged_plan(ex, groups)
        names = ("operand", "output", "input_offsets", "send_sizes", "output_offsets", "recv_sizes")
        parts = [f"{name} = jax.device_put({array_literal(np.concatenate([plan[d][p] for d in range(N)]))}, "
                 f"NamedSharding(mesh, P('a')))" for p, name in enumerate(names)]
        groups_arg = f", axis_index_groups={halves()}" if groups_given else ""
        return "\n".join(parts) + (
            f"\njax.jit(shard_map(lambda *parts: lax.ragged_all_to_all(*parts, axis_name='a'{groups_arg}), mesh=mesh, "
            f"in_specs=(P('a'),) * 6, out_specs=P('a'), {compat.SHARD_MAP_CHECK}=False))({', '.join(names)})")
    return source


@row(C, "jax.lax.ragged_all_to_all", ("operand", "output", "input_offsets", "send_sizes", "output_offsets",
                                      "recv_sizes", "axis_name"), "every member sends 0-2 values to each (not "
     "lowered on CPU: refused)", ragged_source(False),
     expected=lambda ex: {"the call": ragged_expected(ex, [list(range(N))])},
     refused=RUNTIME_ERRORS, message="ragged-all-to-all", refused_on=("cpu",))
def _(ex):
    return {"the call": ragged_call(ex, [list(range(N))], None)}


@row(C, "jax.lax.ragged_all_to_all", ("axis_index_groups",), "two halves of the axis (not lowered on CPU: refused)",
     ragged_source(True),
     expected=lambda ex: {"the call": ragged_expected(ex, halves())},
     refused=RUNTIME_ERRORS, message="ragged-all-to-all", refused_on=("cpu",))
def _(ex):
    if N % 2:
        pytest.skip(f"two equal groups need an even device count (this run has {N})")
    return {"the call": ragged_call(ex, halves(), halves())}


# ================================================================================================
# the properties
# ================================================================================================
def prelude(ex: Example, source: str) -> list:
    """The script's names every source may use: lax, multihost_utils, shard_map, n, k, platform,
    mesh_order, xs (x placed P('a') on mesh), w; emesh and egrid (mesh and grid with Explicit
    axes) where the source uses them."""
    lines = ["from jax import lax", "from jax.experimental import multihost_utils",
             f"n, k, platform = {N}, {ex.k}, {PLATFORM!r}", f"mesh_order = {list(ex.mesh.device_ids)}",
             f"chosen = {chosen_device(ex)}",
             (f"shard_map = {compat.SHARD_MAP_SOURCE}" if compat.FEATURES["jax.shard_map"].available else
              "from jax.experimental.shard_map import shard_map"),
             "xs = jax.device_put(x, NamedSharding(mesh, P('a')))", "w = np.arange(6, dtype=np.float32).reshape(2, 3)"]
    for name, over in (("emesh", "mesh"), ("egrid", "grid")):
        if name in source:
            lines.append(f"{name} = Mesh({over}.devices, {over}.axis_names, "
                         f"axis_types=(jax.sharding.AxisType.Explicit,) * len({over}.axis_names))")
    return lines


def row_case(r: Row, ex: Example) -> Case:
    source = r.source(ex) if callable(r.source) else r.source
    *lines, last = source.split("\n")
    indent = last[:len(last) - len(last.lstrip())]
    expression = last.split("  #")[0].strip()
    return scripted_case(f"{expression} on {describe_mesh(ex.mesh)}, x float32{list(ex.x.shape)}, "
                         f"k={ex.k} ({r.entry} {', '.join(r.parameters)}: {r.form})",
                         [*prelude(ex, source), *lines, f"{indent}print({expression})"],
                         meshes={"mesh": ex.mesh, "grid": ex.grid}, arrays={"x": ex.x},
                         outcomes={} if indent else {"the row's calls": expression})


def check_outcome(case: Case, name: str, got, expected) -> None:
    __tracebackhide__ = True  # pytest leaves our frames out of the traceback
    if isinstance(expected, Laid):
        check_layout(case, got, expected.layout, expected.values, what=name)
        case.same_bits(f"{name} values", np.asarray(got), expected.values)
    elif isinstance(expected, np.ndarray) or isinstance(expected, np.generic):
        case.same_bits(name, np.asarray(got), np.asarray(expected))
    elif isinstance(expected, list) and expected and isinstance(expected[0], np.ndarray):
        case.equal(f"{name} count", len(got), len(expected))
        for i, (g, e) in enumerate(zip(got, expected)):
            case.same_bits(f"{name} [{i}]", np.asarray(g), e)
    else:
        case.equal(name, got, expected)


def check_row(r: Row, ex: Example) -> None:
    """Row ``r``'s call on ``ex`` gives each outcome it expects, or its documented refusal."""
    for name in r.needs:
        (local_feature if name in LOCAL_FEATURES else compat.feature)(name)  # (skips, naming the version)
    require(r.entry, *r.takes)
    case = row_case(r, ex)
    if r.refused_here():
        error = case.rejects("the row's calls", lambda: r.run(ex), r.refused)
        if r.message:
            case.true(f"the refusal's message matches {r.message!r} (got: {' '.join(str(error).split())[:200]})",
                      re.search(r.message, str(error)) is not None)
        return
    got = case.accepts("the row's calls", lambda: r.run(ex))
    for name, expected in r.expected(ex).items():
        if name not in got:
            case.fail(f"the row's run gave no outcome {name!r} [{case.call}]", check=name)
        check_outcome(case, name, got[name], expected)


def family(name: str):
    rows = [r for r in ROWS if r.family == name]
    return [pytest.param(r, id=r.id, marks=[pytest.mark.uncached] if r.uncached else []) for r in rows]


@pytest.mark.parametrize("r", family(T))
@given(ex=examples())
@settings(max_examples=EXAMPLES)
def test_each_transformation_parameter_means_what_its_documentation_says(r, ex):
    """Each parameter of jit, vmap, grad, value_and_grad, vjp, jvp, linearize, eval_shape,
    checkpoint, remat, named_call, named_scope and pmap has the effect its documentation states
    (against numpy, or the same function without it), or its documented refusal."""
    check_row(r, ex)


@pytest.mark.parametrize("r", family(Q))
@given(ex=examples())
@settings(max_examples=EXAMPLES)
def test_each_device_query_parameter_answers_for_the_runs_devices(r, ex):
    """Each device query given a backend, a process index or a host id answers with the run's own
    devices and its one process, or refuses what does not exist as documented."""
    check_row(r, ex)


@pytest.mark.parametrize("r", family(PL))
@given(ex=examples())
@settings(max_examples=EXAMPLES)
def test_each_placement_parameter_places_as_documented(r, ex):
    """device_put's src, donate and may_alias, make_mesh's axis types and devices, reshard, and the
    array builders' dtype place values as their documentation says (the layout model, numpy)."""
    check_row(r, ex)


@pytest.mark.parametrize("r", family(H))
@given(ex=examples())
@settings(max_examples=EXAMPLES)
def test_each_sharding_helper_parameter_means_what_its_documentation_says(r, ex):
    """Abstract meshes and devices equal the concrete mesh's, the mesh in context is the one entered,
    auto_axes and explicit_axes type and lay out as asked, a single-device sharding places on its
    device and memory."""
    check_row(r, ex)


@pytest.mark.parametrize("r", family(S))
@given(ex=examples())
@settings(max_examples=EXAMPLES)
def test_each_stage_parameter_means_what_its_documentation_says(r, ex):
    """Traced.lower, Lowered.compile, as_text, compiler_ir and the analyses of a lowered and a
    compiled x @ w report the program and the device's sizes, and run to numpy's values."""
    check_row(r, ex)


@pytest.mark.parametrize("r", family(C))
@given(ex=examples())
@settings(max_examples=EXAMPLES)
def test_each_collective_parameter_gives_the_models_blocks(r, ex):
    """Each collective of a shard_map body given its parameters gives every device the model's block
    (conformance/model/spmd.py, or this file's model of ragged_all_to_all) and types its result as
    documented, or is refused where the platform does not lower it."""
    check_row(r, ex)
