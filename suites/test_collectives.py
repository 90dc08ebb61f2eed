"""The collectives (psum, pmean, pmax, pmin, all_gather, psum_scatter, ppermute, all_to_all,
axis_index), under pmap, under shard_map and under vmap with an axis name, against
conformance/model/spmd.py; axis_size, pbroadcast, pshuffle and pswapaxes under a named vmap against
numpy; the gradients of the linear ones (pbroadcast, pshuffle, pswapaxes, pcast and
ragged_all_to_all too) taken inside a shard_map body, against spmd.body_gradient. Integer and
bool results are exact; float sums and means are compared within a stated tolerance; data movement
is exact."""

import functools
import re
from dataclasses import dataclass, replace
from typing import Callable, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax import lax

from conformance.checking.case import Case
from conformance.checking.repro import describe_mesh, in_a_child_lines, scripted_case, shard_map_lines, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model import spmd
from conformance.model.layout import MeshModel
from conformance.model.spmd import DeviceSelection
from strategies import mesh_shapes
from strategies.manual import AllToAllExample, all_to_all_over_two_axes
from strategies.reuse import reused
from strategies.spmd import collective_parameters, device_counts, device_selections, sample_values

pytestmark = pytest.mark.collectives
DEVICES = bridge.live_device_ids()

# Float sums of at most 64 values of magnitude <= 100 in float32: each addition rounds by at most
# half an ulp of the partial sum (< 6400), so 1e-3 absolute covers any summation order.
FLOAT_TOLERANCE = dict(rtol=1e-6, atol=1e-3)


@dataclass(frozen=True)
class Collective:
    """A drawn collective: its parameters, how to call it in JAX on a named axis, and the
    model."""

    name: str
    params: tuple          # hashable (key, value) pairs
    groups: Optional[tuple]

    def call(self, x, axis_name):
        p = dict(self.params)
        groups = None if self.groups is None else [list(g) for g in self.groups]
        fn = {
            "psum": lambda: lax.psum(x, axis_name, axis_index_groups=groups),
            "pmean": lambda: lax.pmean(x, axis_name, axis_index_groups=groups),
            "pmax": lambda: lax.pmax(x, axis_name, axis_index_groups=groups),
            "pmin": lambda: lax.pmin(x, axis_name, axis_index_groups=groups),
            "all_gather": lambda: lax.all_gather(x, axis_name, axis=p["axis"], tiled=p["tiled"],
                                                 axis_index_groups=groups),
            "psum_scatter": lambda: lax.psum_scatter(x, axis_name, scatter_dimension=p["dim"],
                                                     tiled=p["tiled"], axis_index_groups=groups),
            "ppermute": lambda: lax.ppermute(x, axis_name, perm=list(p["perm"])),
            "all_to_all": lambda: lax.all_to_all(x, axis_name, p["split"], p["concat"],
                                                 tiled=p["tiled"], axis_index_groups=groups),
            "axis_index": lambda: lax.axis_index(axis_name),
        }[self.name]
        return fn()

    def model(self, values):
        p = dict(self.params)
        with np.errstate(over="ignore"):
            return {
                "psum": lambda: spmd.psum(values, self.groups),
                "pmean": lambda: spmd.pmean(values, self.groups),
                "pmax": lambda: spmd.pmax(values, self.groups),
                "pmin": lambda: spmd.pmin(values, self.groups),
                "all_gather": lambda: spmd.all_gather(values, p["axis"], p["tiled"], self.groups),
                "psum_scatter": lambda: spmd.psum_scatter(values, p["dim"], p["tiled"], self.groups),
                "ppermute": lambda: spmd.ppermute(values, p["perm"]),
                "all_to_all": lambda: spmd.all_to_all(values, p["split"], p["concat"], p["tiled"],
                                                      self.groups),
                "axis_index": lambda: [v.astype(np.int32) for v in spmd.axis_index(len(values))],
            }[self.name]()

    @property
    def sums_floats(self) -> bool:
        return self.name in ("psum", "pmean", "psum_scatter")

    @property
    def does_arithmetic(self) -> bool:
        """Sums, means and max/min: XLA's CPU backend flushes subnormal floats to zero there, so
        their inputs leave subnormals out; pure data movement keeps them and must keep their bits."""
        return self.name in ("psum", "pmean", "psum_scatter", "pmax", "pmin")

    def describe(self, axis_name="'i'") -> str:
        groups = "" if self.groups is None else f", axis_index_groups={[list(g) for g in self.groups]}"
        extra = "".join(f", {k}={v!r}" for k, v in self.params)
        return f"lax.{self.name}(x, {axis_name}{extra}{groups})"

    def source(self, x: str, axis_name) -> str:
        """The source of ``call(<x>, axis_name)`` for a reproduction script (``describe`` names the
        parameters as drawn, which is not how psum_scatter, all_to_all and axis_index take them)."""
        p, axis = dict(self.params), repr(axis_name)
        groups = "" if self.groups is None else f", axis_index_groups={[list(g) for g in self.groups]}"
        return {
            "all_gather": f"lax.all_gather({x}, {axis}, axis={p.get('axis')!r}, tiled={p.get('tiled')!r}{groups})",
            "psum_scatter": f"lax.psum_scatter({x}, {axis}, scatter_dimension={p.get('dim')!r}, "
                            f"tiled={p.get('tiled')!r}{groups})",
            "ppermute": f"lax.ppermute({x}, {axis}, perm={list(p.get('perm', ()))!r})",
            "all_to_all": f"lax.all_to_all({x}, {axis}, {p.get('split')!r}, {p.get('concat')!r}, "
                          f"tiled={p.get('tiled')!r}{groups})",
            "axis_index": f"lax.axis_index({axis})",
        }.get(self.name, f"lax.{self.name}({x}, {axis}{groups})")


DTYPES = {name: ("bool", "int32", "float32") for name in
          ("psum", "pmax", "pmin", "all_gather", "ppermute", "all_to_all")}
DTYPES.update(pmean=("int32", "float32"), psum_scatter=("int32", "float32"))
DTYPES.update(axis_index=("int32",))  # (it reads no value: one operand type, one program per mesh and axis)


@reused
@st.composite
def collective_examples(draw, name: str, size: int, max_rank: int = 2, grouped: bool = True):
    """``(collective, dtype, value shape)``: a collective of ``name`` over ``size`` devices with
    drawn parameters (``strategies.spmd.collective_parameters``), a dtype, and a per-device value
    shape the parameters fit (built, not filtered)."""
    groups, params, shape = draw(collective_parameters(name, size, max_rank, grouped))
    dtype = draw(st.sampled_from(DTYPES[name]))
    return Collective(name, tuple(sorted(params.items())), groups), dtype, shape


@functools.lru_cache(maxsize=None)
def pmapped_collective(collective: Collective, selection: DeviceSelection):
    """One pmapped function per collective and device selection, so equal draws reuse it."""
    return bridge.pmapped(lambda x: collective.call(x, "i"), selection, axis_name="i")


def compare(case: Case, what, got, expected, collective: Collective):
    got, expected = np.asarray(got), np.asarray(expected)
    if collective.sums_floats and expected.dtype.kind == "f":
        case.close(what, got, expected, **FLOAT_TOLERANCE)
    elif collective.name in ("pmax", "pmin") and expected.dtype.kind == "f":
        # Exact values, but the sign of a zero is open: the max or min of a group holding both 0.0
        # and -0.0 is either (found on 0.9.2: pmax and pmin of [0.0, -0.0] both give 0.0, while the
        # model's numpy reduction, being order-dependent there, said -0.0).
        case.close(what, got, expected, rtol=0.0, atol=0.0)
    else:
        case.same_bits(what, got, expected)


COLLECTIVES = ("psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
               "all_to_all", "axis_index")


@pytest.mark.parametrize("name", COLLECTIVES)
@given(selection=device_selections(DEVICES), data=st.data())
def test_collective_under_pmap(name, selection, data):
    """Each collective under pmap, on any devices, dtypes, shapes, parameters and
    axis_index_groups, gives every device the model's value."""
    collective, dtype, shape = data.draw(collective_examples(name, selection.size), label="example")
    x = data.draw(sample_values(dtype, (selection.size, *shape),
                                subnormals=not collective.does_arithmetic), label="x")
    call = f"jax.pmap(lambda x: {collective.source('x', 'i')}, axis_name='i'{selection.code})(x)"
    case = scripted_case(call, [f"print({call})"], arrays={"x": x},
                         outcomes={"pmap": call, f"pmap({collective.name}) result": f"np.asarray({call})"})
    f = pmapped_collective(collective, selection)
    got = case.accepts("pmap", lambda: f(x))
    expected = spmd.stack_outputs(collective.model(list(x)), 0)
    compare(case, f"pmap({collective.name}) result", got, expected, collective)


@given(selection=device_selections(DEVICES), data=st.data())
def test_psum_total_is_on_every_device(selection, data):
    """After psum every device holds the same global total: each shard of the result is the sum."""
    x = data.draw(sample_values("int32", (selection.size, 3)))
    with np.errstate(over="ignore"):
        total = x.sum(axis=0, dtype=np.int32)
    shard_on = "np.asarray(next(s.data for s in y.addressable_shards if s.device.id == {})).reshape({})"
    case = scripted_case(f"jax.pmap(lambda x: lax.psum(x, 'i'), axis_name='i'{selection.code})(x).addressable_shards",
                         [f"y = jax.pmap(lambda x: lax.psum(x, 'i'), axis_name='i'{selection.code})(x)",
                          "print([(s.device, np.asarray(s.data)) for s in y.addressable_shards])"],
                         arrays={"x": x},
                         outcomes={"devices holding a shard": "sorted(s.device.id for s in y.addressable_shards)",
                                   **{f"shard on device {d}": shard_on.format(d, total.shape) for d in selection.ids}})
    y = pmapped_collective(Collective("psum", (), None), selection)(x)
    case.equal("devices holding a shard", sorted(s.device.id for s in y.addressable_shards),
               sorted(selection.ids))
    for shard in y.addressable_shards:
        case.same_bits(f"shard on device {shard.device.id}", np.asarray(shard.data).reshape(total.shape),
                       total)


# --- the same collectives under vmap with an axis name ------------------------------------------
@functools.lru_cache(maxsize=None)
def vmapped_collective(collective: Collective):
    """jit of vmap of the collective over the batch axis named 'i', once per collective."""
    return jax.jit(jax.vmap(lambda x: collective.call(x, "i"), axis_name="i"))


@dataclass(frozen=True)
class NamedVmapExample:
    """A collective drawn for a named vmap over a batch of ``size`` members, the batch ``x`` and
    whether it is placed along the mesh's devices (what triggers read)."""

    collective: Collective
    size: int
    x: np.ndarray
    placed: bool


@pytest.mark.parametrize("name", COLLECTIVES)
@given(data=st.data())
# (excuses holds no state to reset between examples: its counts of excused examples outlive them)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_collective_under_a_named_vmap(name, data, excuses):
    """Each collective under vmap with an axis name (the batch of every device's count or fewer,
    placed along a mesh axis where it divides it), on any dtypes, shapes and parameters, gives each
    batch member the model's value, as pmap gives each device."""
    size = data.draw(st.sampled_from(sorted({2, 3, len(DEVICES)})), label="batch size")
    collective, dtype, shape = data.draw(collective_examples(name, size, grouped=False), label="example")
    x = data.draw(sample_values(dtype, (size, *shape), subnormals=not collective.does_arithmetic), label="x")
    placed = size == len(DEVICES) and size > 1
    with excuses.way([NamedVmapExample(collective, size, x, placed)], example=(collective, size)):
        check_under_a_named_vmap(collective, x, placed)


def check_under_a_named_vmap(collective: Collective, x: np.ndarray, placed: bool) -> None:
    mesh = MeshModel(tuple(DEVICES), (len(DEVICES),), ("a",))
    put = "jax.device_put(x, NamedSharding(mesh, P('a')))" if placed else "x"
    call = f"jax.jit(jax.vmap(lambda x: {collective.source('x', 'i')}, axis_name='i'))({put})"
    case = scripted_case(call + (f" on {describe_mesh(mesh)}" if placed else ""), [f"print({call})"],
                         arrays={"x": x}, meshes={"mesh": mesh} if placed else {},
                         outcomes={"vmap": call, f"vmap({collective.name}) result": f"np.asarray({call})"})
    f = vmapped_collective(collective)
    value = bridge.placed(x, bridge.named_sharding(mesh, ("a",))) if placed else x
    got = case.accepts("vmap", lambda: f(value))
    expected = spmd.stack_outputs(collective.model(list(x)), 0)
    compare(case, f"vmap({collective.name}) result", got, expected, collective)


def test_a_partial_ppermute_under_a_named_vmap_fills_zeros():
    """vmap(lambda v: lax.ppermute(v, 'i', perm=[(0, 1)]), axis_name='i') of 4 values gives value 0
    at member 1 and zeros elsewhere (ppermute's docstring: a position no pair names as its
    destination is filled with zeros)."""
    x = np.arange(16, dtype=np.int32).reshape(4, 4)
    call = "jax.vmap(lambda v: lax.ppermute(v, 'i', perm=[(0, 1)]), axis_name='i')(x)"
    case = scripted_case(call, [f"print({call})"], arrays={"x": x}, outcomes={"the call": f"np.asarray({call})"})
    got = case.accepts("the call", lambda: jax.vmap(lambda v: lax.ppermute(v, "i", perm=[(0, 1)]), axis_name="i")(x))
    case.same_bits("the call", np.asarray(got), spmd.stack_outputs(spmd.ppermute(list(x), ((0, 1),)), 0))


# The collectives that move data by a rule of their own, each under a named vmap with its numpy
# reference over the batch (n values, stacked along axis 0): (entry, the body's source of v, the
# reference of the batch xs, the batch size).
MORE_UNDER_VMAP = (
    ("jax.lax.axis_size", "v * lax.axis_size('i')", lambda xs: xs * len(xs)),
    ("jax.lax.pbroadcast", "lax.pbroadcast(v, 'i', 2)", lambda xs: np.broadcast_to(xs[2], xs.shape)),
    ("jax.lax.pshuffle", "lax.pshuffle(v, 'i', [1, 2, 3, 0])", lambda xs: xs[[1, 2, 3, 0]]),
    ("jax.lax.pswapaxes", "lax.pswapaxes(v, 'i', 0)", lambda xs: np.swapaxes(xs, 0, 1)),
)


@functools.lru_cache(maxsize=None)
def vmapped_source(source: str):
    return jax.jit(jax.vmap(eval(f"lambda v: {source}", {"lax": lax, "jnp": jnp}), axis_name="i"))


@pytest.mark.parametrize("entry, source, reference", MORE_UNDER_VMAP, ids=[m[0].removeprefix("jax.lax.")
                                                                            for m in MORE_UNDER_VMAP])
@settings(max_examples=max(1, settings().max_examples // 25))
@given(x=sample_values("int32", (4, 4)))
def test_a_data_moving_collective_under_a_named_vmap_is_numpys(entry, source, reference, x):
    """axis_size, pbroadcast, pshuffle and pswapaxes under vmap with an axis name (a batch of 4
    values of shape (4,)) give numpy's rearrangement of the batch."""
    compat.parameters(entry)  # (skips, naming the version, where this JAX lacks it)
    call = f"jax.jit(jax.vmap(lambda v: {source}, axis_name='i'))(x)"
    case = scripted_case(call, [f"print({call})"], arrays={"x": x}, outcomes={"the call": f"np.asarray({call})"})
    got = case.accepts("the call", lambda: vmapped_source(source)(x))
    case.same_bits("the call", np.asarray(got), np.asarray(reference(x)))


# --- their gradients inside a shard_map body ----------------------------------------------------
# The linear collectives differentiated in a body (pmax and pmin have no differentiation rule in JAX;
# axis_index's result is an integer), each with whether its result is the same on every device of the
# axis (invariant) or not.
RESULT_IS_INVARIANT = {"psum": True, "pmean": True, "all_gather": False, "psum_scatter": False, "ppermute": False,
                  "all_to_all": False}


def weighted_loss(result_of: Callable, invariant: bool) -> Callable:
    """The loss of a body's value y differentiated there: sum(r ** 2 * w), r = result_of(y), w = 1,
    2, ..., r.size in r's shape (where a value lands matters), times the device's index + 1 along
    'a' where r varies (which device holds it matters)."""
    def loss(y):
        r = result_of(y)
        weighted = jnp.sum(r ** 2 * jnp.arange(1, r.size + 1, dtype=r.dtype).reshape(r.shape))
        return weighted if invariant else weighted * (lax.axis_index("a") + 1)
    return loss


def gradient_in_a_body(loss: Callable, mesh: MeshModel, check: bool = True):
    """jit of shard_map of jax.grad of ``loss`` in the body, over the mesh's one axis 'a', each
    device's value its block without its leading size-1 axis."""
    def body(block):
        return jax.grad(loss)(block[0])[None]
    return jax.jit(compat.shard_map(body, bridge.jax_mesh(mesh), (("a",),), ("a",), check=check))


@functools.lru_cache(maxsize=None)
def differentiated_in_a_body(collective: Collective, mesh: MeshModel):
    """``gradient_in_a_body`` (replication check on) of the weighted loss of the collective's result."""
    invariant = RESULT_IS_INVARIANT[collective.name]
    return gradient_in_a_body(weighted_loss(lambda y: collective.call(y, "a"), invariant), mesh)


@pytest.mark.parametrize("name", sorted(RESULT_IS_INVARIANT))
@given(data=st.data())
# (excuses holds no state to reset between examples: its counts of excused examples outlive them)
@settings(max_examples=max(1, settings().max_examples // 10),
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_gradient_of_a_collective_in_a_body_is_the_models(name, data, excuses):
    """jax.grad of a weighted sum of the squares of a collective's result, taken inside a shard_map
    body over every device, gives each device the model's gradient: of the loss summed over the
    devices where the result varies, taken once where it is invariant (``spmd.body_gradient``)."""
    n = len(DEVICES)
    collective, _, shape = data.draw(collective_examples(name, n, grouped=False), label="example")
    collective = Collective(collective.name, collective.params, None)
    x = data.draw(sample_values("float32", (n, *shape), subnormals=False), label="x")
    mesh = MeshModel(tuple(DEVICES), (n,), ("a",))
    case = body_gradient_case(collective, mesh, x)
    p = dict(collective.params)
    # (what the triggers read: the collective and whether its result is invariant; all_to_all's entries read
    # strategies.manual.AllToAllExample's fields)
    candidates = [BodyGradientExample(collective, RESULT_IS_INVARIANT[name])] + (
        [AllToAllExample(mesh, ("a",), p["split"], p["concat"], p["tiled"], tuple(shape))]
        if name == "all_to_all" else [])
    with excuses.way(candidates, example=(collective, x.shape)):
        check_the_gradient_in_a_body(case, collective, mesh, x)


def body_gradient_case(collective: Collective, mesh: MeshModel, x: np.ndarray) -> Case:
    """The Case of ``differentiated_in_a_body``'s call on ``x``."""
    return gradient_in_a_body_case(collective.source("y", "a"), RESULT_IS_INVARIANT[collective.name], mesh, x)


def gradient_in_a_body_case(result: str, invariant: bool, mesh: MeshModel, x: np.ndarray, check: bool = True,
                            setup: Sequence[str] = ()) -> Case:
    """The Case of ``gradient_in_a_body`` of ``weighted_loss`` on ``x``, its script the same loss in
    JAX source, ``result`` the source of r in terms of y (after ``setup``'s lines)."""
    call = gradient_in_a_body_source(result, invariant, check)
    return scripted_case(f"{call}(x) on {describe_mesh(mesh)}", [SHARD_MAP_IMPORT, *setup, f"print({call}(x))"],
                         meshes={"mesh": mesh}, arrays={"x": x}, outcomes={"the gradient": f"np.asarray({call}(x))"})


SHARD_MAP_IMPORT = ("shard_map = jax.shard_map" if compat.FEATURES["jax.shard_map"].available else
                    "from jax.experimental.shard_map import shard_map")


def gradient_in_a_body_source(result: str, invariant: bool, check: bool = True) -> str:
    """The JAX source of ``gradient_in_a_body`` of ``weighted_loss``, r's source ``result`` (of y)."""
    device = "" if invariant else " * (lax.axis_index('a') + 1)"
    loss = (f"lambda y: (lambda r: jnp.sum(r ** 2 * jnp.arange(1, r.size + 1, dtype=r.dtype).reshape(r.shape))"
            f"{device})({result})")
    checked = "" if check else f", {compat.SHARD_MAP_CHECK}=False"
    return (f"jax.jit(shard_map(lambda b: jax.grad({loss})(b[0])[None], mesh=mesh, in_specs=P('a'), "
            f"out_specs=P('a'){checked}))")


def check_the_gradient_in_a_body(case: Case, collective: Collective, mesh: MeshModel, x: np.ndarray) -> None:
    got = case.accepts("the call", lambda: differentiated_in_a_body(collective, mesh)(x))
    compare_with_the_body_gradient(case, got, collective.model, x, RESULT_IS_INVARIANT[collective.name])


def compare_with_the_body_gradient(case: Case, got, model: Callable[[list], list], x: np.ndarray,
                                   invariant: bool) -> None:
    expected = np.stack(spmd.body_gradient(model, list(x), invariant)).astype(np.float32)
    case.close("the gradient", np.asarray(got), expected, rtol=1e-5,
               atol=1e-5 * float(np.max(np.abs(expected), initial=1.0)))


@dataclass(frozen=True)
class BodyGradientExample:
    """A collective differentiated in a body, and whether its result is invariant over the axis."""

    collective: Collective
    invariant: bool


def test_a_shifted_ppermute_differentiated_in_a_body_is_the_models():
    """jax.grad in a shard_map body over every device of a weighted loss of ppermute shifting each
    device's value to the next one (a varying loss: device d's weighs d + 1) gives the model's
    gradient (``spmd.body_gradient``): 2 (d + 2) w x_d at device d, d + 1 the receiver's index."""
    n = len(DEVICES)
    collective = Collective("ppermute", (("perm", tuple((i, (i + 1) % n) for i in range(n))),), None)
    x = (np.arange(n * 2, dtype=np.float32).reshape(n, 2) + 1)
    mesh = MeshModel(tuple(DEVICES), (n,), ("a",))
    check_the_gradient_in_a_body(body_gradient_case(collective, mesh, x), collective, mesh, x)


# --- the collectives that move data by a rule of their own, differentiated in a body ------------
@dataclass(frozen=True)
class MovingCollective:
    """A collective outside the drawn table, differentiated in a body over every device: r's source
    in terms of y (this device's value; n the axis size, perm a shift by one), y's shape for n
    devices, r's model over the devices' values, whether the body runs with the replication check,
    and the platforms where XLA has no lowering for it (there its documented refusal: the exception
    types and a pattern of the message; checked in a fresh interpreter where ``isolated``, as XLA
    may abort the process on it); the parameters its call passes (skipped, naming the version,
    where this JAX lacks one)."""

    entry: str
    result: str
    shape: Callable[[int], tuple]
    model: Callable[[list], list]
    check: bool = True
    not_lowered_on: tuple = ()
    refusal: tuple = ()
    message: str = ""
    isolated: bool = False
    needs: tuple = ()
    differentiable: str = ""  # the compat constant of the releases with its differentiation rules, if not all

    def here(self, name: str) -> "MovingCollective":
        """The row as this release has it: before its differentiation rules, jax.grad's refusal (any
        platform)."""
        if not self.differentiable or getattr(compat, self.differentiable):
            return self
        return replace(self, not_lowered_on=(jax.default_backend(),), refusal=(NotImplementedError,),
                       message=f"Differentiation rule for '{name}' not implemented")

    def result_of(self, n: int) -> Callable:
        return eval(f"lambda y: {self.result}", {"lax": lax, "jnp": jnp, "n": n, "perm": shift_by_one(n)})


def shift_by_one(n: int) -> list:
    """pshuffle's perm that gives device i the value of device i + 1 (mod n)."""
    return [(i + 1) % n for i in range(n)]


NOT_LOWERED = (NotImplementedError, *compat.RUNTIME_ERRORS)
RAGGED_ONE_EACH = ("lax.ragged_all_to_all(y, jnp.zeros(n, y.dtype), jnp.arange(n, dtype=jnp.int32), "
                   "jnp.ones(n, jnp.int32), jnp.full(n, lax.axis_index('a'), jnp.int32), jnp.ones(n, jnp.int32), "
                   "axis_name='a')")
MOVING = {
    # (the source the last device; a scalar and a vector: its transpose rule has a form for each)
    "pbroadcast of a scalar": MovingCollective(
        "jax.lax.pbroadcast", "lax.pbroadcast(y, 'a', n - 1)", lambda n: (), lambda vs: [vs[-1]] * len(vs),
        check=False, not_lowered_on=("cpu",), refusal=NOT_LOWERED, message="pbroadcast|collective-broadcast"),
    "pbroadcast of a vector": MovingCollective(
        "jax.lax.pbroadcast", "lax.pbroadcast(y, 'a', n - 1)", lambda n: (2,), lambda vs: [vs[-1]] * len(vs),
        check=False, not_lowered_on=("cpu",), refusal=NOT_LOWERED, message="pbroadcast|collective-broadcast"),
    "pshuffle": MovingCollective(
        "jax.lax.pshuffle", "lax.pshuffle(y, 'a', perm)", lambda n: (2,),
        lambda vs: spmd.ppermute(vs, [(s, i) for i, s in enumerate(shift_by_one(len(vs)))])),
    "pswapaxes": MovingCollective(
        "jax.lax.pswapaxes", "lax.pswapaxes(y, 'a', 0)", lambda n: (n, 2), lambda vs: spmd.all_to_all(vs, 0, 0)),
    # (a psum is invariant; pcast makes it varying, so the loss weighs each device's copy)
    "pcast": MovingCollective(
        "jax.lax.pcast", "lax.pcast(lax.psum(y, 'a'), 'a', to='varying')", lambda n: (2,), spmd.psum),
    # (each member sends one value to each: the all_to_all of one-element chunks; XLA:CPU aborts the
    # process compiling its gradient on 0.7.1 and 0.7.2, measured in the release matrix of 2026-12-07)
    "ragged_all_to_all": MovingCollective(
        "jax.lax.ragged_all_to_all", RAGGED_ONE_EACH, lambda n: (n,), lambda vs: spmd.all_to_all(vs, 0, 0, True),
        check=False, not_lowered_on=("cpu",), refusal=compat.RUNTIME_ERRORS, message="ragged-all-to-all",
        isolated=True, needs=("axis_name",), differentiable="RAGGED_ALL_TO_ALL_DIFFERENTIABLE"),
}


@functools.lru_cache(maxsize=None)
def moving_differentiated_in_a_body(name: str, mesh: MeshModel):
    row = MOVING[name]
    return gradient_in_a_body(weighted_loss(row.result_of(mesh.size), invariant=False), mesh, check=row.check)


@pytest.mark.parametrize("name", sorted(MOVING))
@settings(max_examples=max(1, settings().max_examples // 25),
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_data_moving_collective_differentiated_in_a_body_is_the_models(name, data, excuses, run_isolated):
    """jax.grad inside a shard_map body over every device of a varying weighted loss of pbroadcast,
    pshuffle, pswapaxes, pcast or ragged_all_to_all gives each device the model's gradient
    (``spmd.body_gradient``), or, where XLA has no lowering for the collective, its refusal."""
    row = MOVING[name].here(name)
    compat.parameters(row.entry, *row.needs)  # (skips, naming the version, where this JAX lacks it)
    n = len(DEVICES)
    x = data.draw(sample_values("float32", (n, *row.shape(n)), subnormals=False), label="x")
    mesh = MeshModel(tuple(DEVICES), (n,), ("a",))
    setup = [f"n = {n}", f"perm = {shift_by_one(n)}"]
    refused_here = jax.default_backend() in row.not_lowered_on
    if refused_here and row.isolated:
        check_the_refusal_in_subprocesses(row, mesh, setup, run_isolated)
        return
    case = gradient_in_a_body_case(row.result, False, mesh, x, check=row.check, setup=setup)
    f = moving_differentiated_in_a_body(name, mesh)
    # (what the triggers read: a loss that varies over the body's axis)
    with excuses.way([BodyGradientExample(Collective(name, (), None), invariant=False)], example=(name, x.shape)):
        if refused_here:
            error = case.rejects("the call", lambda: f(x), row.refusal)
            case.true(f"the refusal's message matches {row.message!r} (got: {' '.join(str(error).split())[:200]})",
                      re.search(row.message, str(error)) is not None)
            return
        compare_with_the_body_gradient(case, case.accepts("the call", lambda: f(x)), row.model, x, invariant=False)


REFUSALS_IN_SUBPROCESSES: dict = {}  # (row name, mesh) -> the five subprocesses' results


def check_the_refusal_in_subprocesses(row: MovingCollective, mesh: MeshModel, setup: list, run_isolated) -> None:
    """The row's call on a fixed x (a refusal does not read the values), run in five fresh
    interpreters (XLA may corrupt its heap, which kills a process in some tries only), raises its
    refusal in each: every interpreter ends with status 0 having printed 'refused', the exception's
    type and its message (matching the row's). The five run once per row and mesh in a run; each
    example checks their results."""
    n = mesh.size
    x = np.arange(n * int(np.prod(row.shape(n))), dtype=np.float32).reshape(n, *row.shape(n))
    call = gradient_in_a_body_source(row.result, False, row.check)
    lines = [SHARD_MAP_IMPORT, *setup,
             f"mesh = Mesh(np.array([devices[i] for i in {list(mesh.device_ids)}]), ('a',))",
             f"x = np.array({x.tolist()!r}, np.float32)",
             "try:", f"    np.asarray({call}(x))", "    print('computed')",
             "except Exception as e:", "    print('refused', type(e).__name__, ' '.join(str(e).split())[:300])"]
    key = (row.entry, row.result, mesh)
    if key not in REFUSALS_IN_SUBPROCESSES:
        REFUSALS_IN_SUBPROCESSES[key] = [run_isolated(lines) for _ in range(5)]
    child = in_a_child_lines(lines)
    case = scripted_case(f"{call}(x) on {describe_mesh(mesh)}, in five subprocesses",
                         ["statuses, lasts = [], []", "for attempt in range(5):",
                          *("    " + line for line in child),
                          "    statuses.append(done.returncode)",
                          "    lasts.append((done.stdout.strip().splitlines() or [''])[-1])",
                          "print(statuses, lasts)"],
                         outcomes={"exit statuses of the subprocesses (negative: killed by a signal)": "statuses",
                                   "what each printed last": "lasts"})
    results = REFUSALS_IN_SUBPROCESSES[key]
    case.equal("exit statuses of the subprocesses (negative: killed by a signal)", [r.returncode for r in results],
               [0] * len(results))
    names = [e.__name__ for e in row.refusal]
    for result in results:
        last = (result.stdout.strip().splitlines() or [""])[-1]
        words = last.split(" ")
        case.true(f"it printed a refusal by {' or '.join(names)} matching {row.message!r} (got: {last[:200]!r})",
                  words[0] == "refused" and len(words) > 1 and words[1] in names
                  and re.search(row.message, last) is not None)


# --- the same collectives through shard_map --------------------------------------------------


@functools.lru_cache(maxsize=None)
def shard_mapped(collective: Collective, mesh: MeshModel, axis: str, spec: tuple):
    """shard_map of the collective over ``axis`` of ``mesh``, with ``spec`` for input and output;
    each device's block carries a leading size-1 axis that the body drops and restores, so the
    body sees what pmap's body sees."""
    def body(block):
        return collective.call(block[0], axis)[None]
    return jax.jit(compat.shard_map(body, bridge.jax_mesh(mesh), (spec,), spec, check=False))


@reused
@st.composite
def shard_map_examples(draw, name: str):
    """A mesh of one or two axes over all devices (or a leading subset), the axis the collective
    runs over, and a collective example for that axis's size."""
    ids = DEVICES
    k = len(ids) if draw(st.booleans()) else draw(device_counts(len(ids)))
    shape = draw(mesh_shapes(k, min_axes=1, max_axes=2))
    mesh = MeshModel(bridge.first_ids(ids, k), shape, ("i", "j")[:len(shape)])
    axis = draw(st.sampled_from(mesh.axis_names))
    return (mesh, axis) + draw(collective_examples(name, mesh.axis_sizes[axis]))


@pytest.mark.parametrize("name", COLLECTIVES)
@given(data=st.data())
def test_collective_under_shard_map(name, data):
    """Each collective under shard_map, over either axis of a 1-d or 2-d mesh, gives each device
    the model's value for its group. (The global input holds one value per device, stacked along the
    mesh axes; the output holds each device's result in its place. It is the model that
    test_collective_under_pmap holds pmap to, so pmap and shard_map agree wherever both pass: running
    pmap here too asked for ~90 programs more per run, and checked nothing the model does not.)"""
    mesh, axis, collective, dtype, shape = data.draw(shard_map_examples(name), label="example")
    other = [a for a in mesh.axis_names if a != axis]
    # One value per device: indexed by the other axis (if any), then by the collective's axis.
    extra = mesh.axis_sizes[other[0]] if other else 1
    values = data.draw(sample_values(dtype, (extra, mesh.axis_sizes[axis]) + shape,
                                     subnormals=not collective.does_arithmetic), label="values")
    # Device (i, j) of a mesh ('i', 'j') gets block [flat:flat+1] along dim 0, flat = row-major.
    per_device = {}
    for flat, coords in enumerate(np.ndindex(*mesh.shape)):
        c = dict(zip(mesh.axis_names, coords))
        per_device[flat] = values[c[other[0]] if other else 0][c[axis]]
    flat_values = np.stack([per_device[f] for f in range(mesh.size)])
    spec = (tuple(mesh.axis_names),)
    setup, mapped = shard_map_lines(f"lambda b: {collective.source('b[0]', axis)}[None]", (spec,), spec, check=False)
    case = scripted_case(f"shard_map(lambda b: {collective.describe(repr(axis))}, mesh {mesh.shape} "
                         f"{mesh.axis_names}, in/out spec P({spec[0]!r}))",
                         [*setup, f"f = jax.jit({mapped})", "print(f(x))"],
                         meshes={"mesh": mesh}, arrays={"x": flat_values},
                         outcomes={"shard_map": "f(x)", f"shard_map({collective.name}) result": "np.asarray(f(x))"})
    f = shard_mapped(collective, mesh, axis, spec)
    got = np.asarray(case.accepts("shard_map", lambda: f(flat_values)))
    expected = [None] * mesh.size
    for group in spmd.mesh_groups(mesh.shape, mesh.axis_names, (axis,)):
        for d, r in zip(group, collective.model([per_device[d] for d in group])):
            expected[d] = r
    compare(case, f"shard_map({collective.name}) result", got, np.stack(expected), collective)


NESTED_AXES = [("i", "j"), ("j",), ("i",)]


def psum_over_grid_model(x: np.ndarray, names: tuple) -> np.ndarray:
    """Each device of a grid ('i', 'j') holding x[i, j]: the sum over its group along ``names``."""
    expected = np.zeros_like(x)
    for group in spmd.mesh_groups(x.shape, ("i", "j"), names):
        total = sum(int(x.flat[d]) for d in group)
        for d in group:
            expected.flat[d] = total
    return expected


@bridge.needs_devices(4, "for a 2 x n/2 mesh")
@pytest.mark.parametrize("names", NESTED_AXES, ids=str)
def test_shard_map_collectives_over_several_mesh_axes(names):
    """psum inside shard_map over a mesh ('i', 'j') of 2 x n/2 devices, over 'i', 'j' or both,
    sums over exactly those axes (what nested pmaps did, and what replaced them)."""
    n = len(DEVICES)
    mesh = MeshModel(tuple(DEVICES), (2, n // 2), ("i", "j"))
    x = np.arange(n, dtype=np.int32).reshape(2, n // 2)
    spec = ("i", "j")
    setup, mapped = shard_map_lines(f"lambda b: lax.psum(b, {names})", (spec,), spec, check=False)
    case = scripted_case(f"shard_map(lambda b: lax.psum(b, {names}), mesh (2, {n // 2}) ('i', 'j'), P('i', 'j'))(x)",
                         [*setup, f"f = jax.jit({mapped})", "print(f(x))"],
                         meshes={"mesh": mesh}, arrays={"x": x},
                         outcomes={"shard_map": "f(x)", "shard_map psum": "np.asarray(f(x))"})
    f = jax.jit(compat.shard_map(lambda b: lax.psum(b, names), bridge.jax_mesh(mesh), (spec,), spec, check=False))
    got = case.accepts("shard_map", lambda: f(x))
    case.same_bits("shard_map psum", np.asarray(got), psum_over_grid_model(x, names))


@compat.requires("nested_pmap")
@bridge.needs_devices(4, "for a 2x2 nested pmap")
@pytest.mark.parametrize("names", NESTED_AXES, ids=str)
def test_nested_pmap_collectives_over_named_axes(names):
    """psum inside a nested pmap over the outer axis 'i', the inner axis 'j', or both, sums over
    exactly those axes."""
    n = len(DEVICES)
    outer, inner = (2, n // 2)
    x = np.arange(outer * inner, dtype=np.int32).reshape(outer, inner)
    call = f"jax.pmap(jax.pmap(lambda a: lax.psum(a, {names}), axis_name='j'), axis_name='i')(x)"
    case = scripted_case(call, [f"print({call})"], arrays={"x": x},
                         outcomes={"nested pmap": call, "nested pmap psum": f"np.asarray({call})"})
    f = jax.pmap(jax.pmap(lambda a: lax.psum(a, names), axis_name="j"), axis_name="i")
    got = case.accepts("nested pmap", lambda: f(x))
    case.same_bits("nested pmap psum", np.asarray(got), psum_over_grid_model(x, names))


@bridge.needs_devices(2, "to permute")
def test_ppermute_with_an_empty_perm_gives_zeros(run_isolated):
    """ppermute with perm=[] sends nothing: every device gets zeros (run in a subprocess, since
    this crashed the whole process on some versions)."""
    lines = ["x = np.ones((2, 3), np.int32)",
             "print(np.asarray(jax.pmap(lambda a: lax.ppermute(a, 'i', perm=[]), axis_name='i')(x)).tolist())"]
    case = scripted_case("jax.pmap(lambda a: lax.ppermute(a, 'i', perm=[]), axis_name='i')(ones((2, 3)))",
                         in_a_child_lines(lines), outcomes={"exit status of the subprocess": "done.returncode",
                                   "result": "done.stdout.strip().splitlines()[-1]"})
    result = run_isolated(lines)
    case.equal("exit status of the subprocess", result.returncode, 0)
    case.equal("result", result.stdout.strip().splitlines()[-1], str([[0, 0, 0], [0, 0, 0]]))


# --- all_to_all over two mesh axes at once, plain, under jax.grad and under jax.vmap ----------
# Each example compiles a program of its own (the gradient's is twice the size), 0.1-0.3 s each on 8
# CPU devices: a sixteenth of the profile's examples (6 by default, 62 nightly) keeps the three
# properties within their budget; the deterministic gradient case below runs every time.

A2A_EXAMPLES = max(6, settings().max_examples // 16)


def all_to_all_source(example: AllToAllExample, v: str, *, split=None, concat=None) -> str:
    split = example.split if split is None else split
    concat = example.concat if concat is None else concat
    return f"lax.all_to_all({v}, {example.over!r}, {split}, {concat}, tiled={example.tiled})"


def all_to_all_on_the_mesh(example: AllToAllExample, per_device, *, transposed: bool = False) -> list:
    """The model: ``per_device[p]`` is the value of the device at flat (row-major) mesh position
    ``p``; each group of devices sharing the coordinates off ``over`` exchanges chunks as
    ``spmd.all_to_all`` says (``transposed``: with split and concat swapped, all_to_all's
    transpose)."""
    split, concat = (example.concat, example.split) if transposed else (example.split, example.concat)
    out = [None] * example.mesh.size
    for group in spmd.mesh_groups(example.mesh.shape, example.mesh.axis_names, example.over):
        for p, r in zip(group, spmd.all_to_all([np.asarray(per_device[q]) for q in group], split, concat,
                                               example.tiled)):
            out[p] = r
    return out


@functools.lru_cache(maxsize=None)
def all_to_all_program(example: AllToAllExample, way: str):
    """shard_map over every axis of the mesh (the input's leading dimension holds one value per
    device, in row-major mesh order), its body all_to_all over ``example.over``: applied to the
    device's value (``way`` "plain"), or to each of its examples under jax.vmap ("vmap")."""
    spec = (example.mesh.axis_names,)
    a2a = functools.partial(lax.all_to_all, axis_name=example.over, split_axis=example.split,
                            concat_axis=example.concat, tiled=example.tiled)
    body = (lambda b: a2a(b[0])[None]) if way == "plain" else (lambda b: jax.vmap(a2a)(b[0])[None])
    return jax.jit(compat.shard_map(body, bridge.jax_mesh(example.mesh), (spec,), spec, check=True))


@functools.lru_cache(maxsize=None)
def all_to_all_gradient(example: AllToAllExample):
    """jax.grad of sum(w * all_to_all_program(x)) with respect to x."""
    mapped = all_to_all_program(example, "plain")
    return jax.jit(jax.grad(lambda x, w: jnp.sum(w * mapped(x))))


def all_to_all_case(example: AllToAllExample, title: str, body: str, run: str, outcomes: dict, arrays: dict):
    spec = (example.mesh.axis_names,)
    setup, mapped = shard_map_lines(body, (spec,), spec)
    return scripted_case(f"{title} over {describe_mesh(example.mesh)}, in/out_specs {spec_literal(spec)}",
                         [*setup, f"f = jax.jit({mapped})", f"print({run})"], meshes={"mesh": example.mesh},
                         arrays=arrays, outcomes=outcomes)


@settings(max_examples=A2A_EXAMPLES)
@given(example=all_to_all_over_two_axes(DEVICES), data=st.data())
def test_all_to_all_over_two_mesh_axes(example, data):
    """all_to_all over a pair of mesh axes in a shard_map body exchanges chunks within each group of
    devices sharing the other coordinates, members ordered by their index over the pair (first axis
    major), as the model's all_to_all says for that group."""
    dtype = data.draw(st.sampled_from(("bool", "int32", "float32")), label="dtype")
    x = data.draw(sample_values(dtype, (example.mesh.size, *example.shape)), label="x")
    call = all_to_all_source(example, "b[0]")
    case = all_to_all_case(example, f"shard_map(lambda b: {call}[None])", f"lambda b: {call}[None]", "f(x)",
                           {"shard_map": "f(x)", "all_to_all result": "np.asarray(f(x))"}, {"x": x})
    got = case.accepts("shard_map", lambda: all_to_all_program(example, "plain")(x))
    case.same_bits("all_to_all result", np.asarray(got), np.stack(all_to_all_on_the_mesh(example, list(x))))


@settings(max_examples=A2A_EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=all_to_all_over_two_axes(DEVICES), data=st.data())
def test_gradient_of_all_to_all_over_two_mesh_axes(example, data, excuses):
    """The gradient of sum(w * all_to_all over a pair of mesh axes) with respect to the input is
    all_to_all's transpose applied to w (the model's all_to_all with split and concat swapped), and
    is the numpy gradient of the unsharded permutation the model's all_to_all makes of the
    input's elements."""
    x = data.draw(sample_values("float32", (example.mesh.size, *example.shape)), label="x")
    zeros = [np.zeros(example.shape, np.float32)] * example.mesh.size
    out_shape = np.shape(all_to_all_on_the_mesh(example, zeros)[0])
    w = data.draw(sample_values("float32", (example.mesh.size, *out_shape), subnormals=False), label="w")
    call = all_to_all_source(example, "b[0]")
    run = "jax.grad(lambda x, w: jnp.sum(w * f(x)))(x, w)"
    case = all_to_all_case(example, f"jax.grad of sum(w * shard_map(lambda b: {call}[None]))",
                           f"lambda b: {call}[None]", run,
                           {"jax.grad": run, "gradient vs all_to_all's transpose of w": f"np.asarray({run})",
                            "gradient vs the numpy gradient": f"np.asarray({run})"}, {"x": x, "w": w})
    with excuses.way([example]):
        got = np.asarray(case.accepts("jax.grad", lambda: all_to_all_gradient(example)(x, w)))
        transposed = np.stack(all_to_all_on_the_mesh(example, list(w), transposed=True))
        case.same_bits("gradient vs all_to_all's transpose of w", got, transposed)
        # The numpy gradient: where the model sends each input element (by tracking element indices),
        # w's element there is that element's derivative. The sum starts at -0.0, addition's identity,
        # so that a w element -0.0 stays -0.0 bit for bit (1.0 * -0.0 is -0.0; 0.0 + -0.0 is 0.0).
        index = np.arange(x.size).reshape(x.shape)
        sent_to = np.stack(all_to_all_on_the_mesh(example, list(index)))
        gradient = np.full(x.size, -0.0, np.float32)
        np.add.at(gradient, sent_to.ravel(), w.ravel())
        case.same_bits("gradient vs the numpy gradient", got, gradient.reshape(x.shape))


@settings(max_examples=A2A_EXAMPLES)
@given(example=all_to_all_over_two_axes(DEVICES), batch=st.integers(1, 3), data=st.data())
def test_all_to_all_over_two_mesh_axes_under_vmap(example, batch, data):
    """all_to_all over a pair of mesh axes under jax.vmap over a leading batch dimension of a
    shard_map body's input gives, for each batch example, the model's all_to_all of that example."""
    dtype = data.draw(st.sampled_from(("int32", "float32")), label="dtype")
    x = data.draw(sample_values(dtype, (example.mesh.size, batch, *example.shape)), label="x")
    call = all_to_all_source(example, "v")
    body = f"lambda b: jax.vmap(lambda v: {call})(b[0])[None]"
    case = all_to_all_case(example, f"shard_map({body})", body, "f(x)",
                           {"shard_map": "f(x)", "vmapped all_to_all result": "np.asarray(f(x))"}, {"x": x})
    got = case.accepts("shard_map", lambda: all_to_all_program(example, "vmap")(x))
    per_example = [all_to_all_on_the_mesh(example, list(x[:, e])) for e in range(batch)]
    expected = np.stack([np.stack([per_example[e][p] for e in range(batch)]) for p in range(example.mesh.size)])
    case.same_bits("vmapped all_to_all result", np.asarray(got), expected)


@bridge.needs_devices(4, "for a 2 x n/2 mesh")
def test_gradient_of_an_untiled_all_to_all_that_moves_the_split_dimension():
    """The gradient of sum(w * all_to_all(x, ('a', 'b'), 0, 1, tiled=False)) in a shard_map body is
    all_to_all's transpose of w (split and concat swapped): the deterministic case of the gradient
    property where the untiled all_to_all's new dimension lands elsewhere than the split one."""
    n = len(DEVICES)
    example = AllToAllExample(MeshModel(tuple(DEVICES), (2, n // 2), ("a", "b")), ("a", "b"), 0, 1, False, (n, 2))
    x = np.arange(n * n * 2, dtype=np.float32).reshape(n, n, 2)
    w = np.arange(n * 2 * n, dtype=np.float32).reshape(n, 2, n)
    call = all_to_all_source(example, "b[0]")
    run = "jax.grad(lambda x, w: jnp.sum(w * f(x)))(x, w)"
    case = all_to_all_case(example, f"jax.grad of sum(w * shard_map(lambda b: {call}[None]))",
                           f"lambda b: {call}[None]", run,
                           {"jax.grad": run, "gradient vs all_to_all's transpose of w": f"np.asarray({run})"},
                           {"x": x, "w": w})
    got = np.asarray(case.accepts("jax.grad", lambda: all_to_all_gradient(example)(x, w)))
    case.same_bits("gradient vs all_to_all's transpose of w", got,
                   np.stack(all_to_all_on_the_mesh(example, list(w), transposed=True)))
