"""The argument forms the sharding API's signatures allow, beyond the canonical one each other suite
passes: a sequence as a list or a tuple, a negative axis or dimension number, axis names as a string
or a one-name tuple, PartitionSpec spellings (empty, trailing None, a one-name tuple) and a nested
tuple (refused), a sharding as a pytree prefix, a parameter spelled by keyword. Each row of
``FORMS`` (entry, parameter, form) computes its call on a drawn array laid out over the run's
devices and compares it with numpy or the model (conformance/model/spmd.py, layout.py): a form is
another spelling of the same call, so it gives the canonical form's answer; a refusal is checked
as the exception type JAX documents. Rows whose forms differ only in spelling share compiled
programs (one jit of the function per row, reused across examples)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

from conformance.checking.case import Case
from conformance.checking.layouts import check_layout
from conformance.checking.repro import describe_mesh, scripted_case
from conformance.jaxside import bridge, compat
from conformance.model import spmd
from conformance.model.layout import Layout, MeshModel
from strategies import assembly

pytestmark = pytest.mark.argument_forms
DEVICES = bridge.live_device_ids()
N = len(DEVICES)
EXAMPLES = max(5, settings().max_examples // 10)  # a row is one spelling: a few examples say it


@dataclass(frozen=True)
class FormExample:
    """A 1-d mesh 'a' over every device in a drawn order, and distinct int32 values of shape
    (N * rows, N * cols): each device's block along dimension 0 has both dimensions divisible by N."""

    mesh: MeshModel
    x: np.ndarray

    @property
    def blocks(self):
        """The per-device values of x placed P('a'), in mesh order."""
        return list(np.split(self.x, N, axis=0))


@st.composite
def form_examples(draw) -> FormExample:
    order = tuple(draw(st.permutations(DEVICES)))
    rows, cols = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    x = assembly.distinct_values((N * rows, N * cols), "int32", draw(st.integers(0, 99)))
    return FormExample(MeshModel(order, (N,), ("a",)), x)


@dataclass(frozen=True)
class Form:
    """One row: the entry and parameter, the form given, the call as code (``mesh``, ``x`` in scope,
    ``P``, ``lax``, ``jnp``), what it is compared with, and how it runs."""

    entry: str
    parameter: str
    form: str
    source: str
    run: Callable[[FormExample], object]
    expected: Callable[[FormExample], object]  # numpy values, or (the Layout the result must have, its values)
    refused: Tuple[type, ...] = ()
    needs: str = ""  # the compat feature the form needs (a release without it skips, naming the version)

    @property
    def id(self) -> str:
        return f"{self.entry.removeprefix('jax.')}-{self.parameter}-{self.form}"


BODIES: dict = {}  # (the body's code and closure, mesh, out_spec) -> its jitted shard_map


def body_over_a(f, ex: FormExample, out_spec=("a",)):
    """shard_map of ``f`` over the example's mesh, x placed P('a'), jitted; one function per body
    (its code and what it closes over), mesh and out_spec, so that a row's examples, which build a new
    lambda each, ask for no program twice."""
    try:
        key = (f.__code__, tuple(c.cell_contents for c in f.__closure__ or ()), ex.mesh, out_spec)
        hash(key)
    except (TypeError, ValueError):  # (a closure over an array, or a cell not filled yet: no reuse)
        key = None
    if key is None or key not in BODIES:
        mapped = jax.jit(compat.shard_map(f, bridge.jax_mesh(ex.mesh), (("a",),), out_spec))
        if key is None:
            return mapped
        BODIES[key] = mapped
    return BODIES[key]


def per_device(results) -> np.ndarray:
    """Per-device results assembled by out_specs P('a'): concatenated along dimension 0."""
    return np.concatenate([np.asarray(r) for r in results], axis=0)


FORMS = []


def form(entry, parameter, name, source, *, expected, refused=(), needs=""):
    """Register the decorated function as the row's run."""
    def register(run):
        FORMS.append(Form(entry, parameter, name, source, run, expected, tuple(refused), needs))
        return run
    return register


SHARD_MAP = "jax.jit(shard_map(lambda b: {}, mesh=mesh, in_specs=P('a'), out_specs=P('a')))(x)"


def in_body(ex: FormExample, f):
    return np.asarray(body_over_a(f, ex)(ex.x))


# --- negative axis and dimension numbers in the collectives (a shard_map body) ------------------
for tiled in (False, True):
    for axis in (-1, -2):
        @form("jax.lax.all_gather", "axis", f"negative int {axis} tiled={tiled}",
              SHARD_MAP.format(f"lax.all_gather(b, 'a', axis={axis}, tiled={tiled})"),
              expected=lambda ex, axis=axis, tiled=tiled: per_device(spmd.all_gather(ex.blocks, axis, tiled)))
        def _(ex, axis=axis, tiled=tiled):
            return in_body(ex, lambda b: lax.all_gather(b, "a", axis=axis, tiled=tiled))

    @form("jax.lax.psum_scatter", "scatter_dimension", f"negative int -1 tiled={tiled}",
          SHARD_MAP.format(f"lax.psum_scatter(b[:, :n], 'a', scatter_dimension=-1, tiled={tiled})"
                           + ("" if tiled else "[:, None]")),
          expected=lambda ex, tiled=tiled: per_device(_scattered(ex, tiled)))
    def _(ex, tiled=tiled):
        return in_body(ex, lambda b: _scatter_shape(lax.psum_scatter(b[:, :N], "a", scatter_dimension=-1,
                                                                     tiled=tiled), tiled))


def _scatter_shape(y, tiled):
    """An untiled psum_scatter drops the scattered dimension: give the body's output its rank back
    (a trailing axis of 1) so out_specs P('a') can assemble it."""
    return y if tiled else y[..., None]


def _scattered(ex: FormExample, tiled: bool):
    """The model of psum_scatter over dimension -1 of the blocks' first N columns (an untiled
    scatter needs that dimension's size to be the axis size)."""
    out = spmd.psum_scatter([b[:, :N] for b in ex.blocks], -1, tiled)
    return [r if tiled else np.asarray(r)[..., None] for r in out]


@form("jax.lax.all_to_all", "split_axis, concat_axis", "negative ints -1, -2 tiled",
      SHARD_MAP.format("lax.all_to_all(b, 'a', -1, -2, tiled=True)"),
      expected=lambda ex: per_device(spmd.all_to_all(ex.blocks, -1, -2, True)))
def _(ex):
    return in_body(ex, lambda b: lax.all_to_all(b, "a", -1, -2, tiled=True))


# --- axis names: a string or a one-name tuple -----------------------------------------------------
@form("jax.lax.psum", "axis_name", "one-name tuple", SHARD_MAP.format("lax.psum(b, ('a',))"),
      expected=lambda ex: per_device(spmd.psum(ex.blocks)))
def _(ex):
    return in_body(ex, lambda b: lax.psum(b, ("a",)))


@form("jax.lax.all_gather", "axis_name", "one-name tuple", SHARD_MAP.format("lax.all_gather(b, ('a',), tiled=True)"),
      expected=lambda ex: per_device(spmd.all_gather(ex.blocks, 0, True)))
def _(ex):
    return in_body(ex, lambda b: lax.all_gather(b, ("a",), tiled=True))


@form("jax.lax.ppermute", "perm", "a list of lists", SHARD_MAP.format(
      "lax.ppermute(b, 'a', perm=[[i, (i + 1) % n] for i in range(n)])"),
      expected=lambda ex: per_device(spmd.ppermute(ex.blocks, tuple((i, (i + 1) % N) for i in range(N)))))
def _(ex):
    return in_body(ex, lambda b: lax.ppermute(b, "a", perm=[[i, (i + 1) % N] for i in range(N)]))


# --- PartitionSpec spellings, and a nested tuple (refused) -----------------------------------------
def placed(ex: FormExample, spec):
    return jax.device_put(ex.x, jax.sharding.NamedSharding(bridge.jax_mesh(ex.mesh), spec))


for name, spec, model in (("trailing None", "P('a', None)", ("a", None)), ("one-name tuple", "P(('a',))", (("a",),)),
                          ("empty", "P()", ()), ("None entries", "P(None, 'a')", (None, "a"))):
    @form("jax.sharding.NamedSharding", "spec", name, f"jax.device_put(x, NamedSharding(mesh, {spec}))",
          expected=lambda ex, model=model: (Layout(ex.mesh, model, ex.x.shape), ex.x))
    def _(ex, model=model):
        return placed(ex, jax.sharding.PartitionSpec(*model))  # (the same entries as the source spells them)


@form("jax.sharding.NamedSharding", "spec", "nested tuple (refused)",
      "jax.device_put(x, NamedSharding(mesh, P((('a',),))))", expected=lambda ex: None,
      refused=(TypeError, ValueError))
def _(ex):
    return placed(ex, jax.sharding.PartitionSpec((("a",),)))


# --- shardings as pytree prefixes, keyword spellings ---------------------------------------------
@form("jax.device_put", "device", "keyword", "jax.device_put(x, device=NamedSharding(mesh, P('a')))",
      expected=lambda ex: (Layout(ex.mesh, ("a",), ex.x.shape), ex.x))
def _(ex):
    return jax.device_put(ex.x, device=bridge.named_sharding(ex.mesh, ("a",)))


@form("jax.device_put", "device", "a prefix of a tuple of two arrays",
      "jax.device_put((x, x), NamedSharding(mesh, P('a')))[1]",
      expected=lambda ex: (Layout(ex.mesh, ("a",), ex.x.shape), ex.x))
def _(ex):
    return jax.device_put((ex.x, ex.x), bridge.named_sharding(ex.mesh, ("a",)))[1]


@form("jax.device_put", "x, device", "a list of arrays and a list of shardings",
      "jax.device_put([x, x], [NamedSharding(mesh, P()), NamedSharding(mesh, P('a'))])[1]",
      expected=lambda ex: (Layout(ex.mesh, ("a",), ex.x.shape), ex.x))
def _(ex):
    return jax.device_put([ex.x, ex.x], [bridge.named_sharding(ex.mesh, ()), bridge.named_sharding(ex.mesh, ("a",))])[1]


@functools.lru_cache(maxsize=None)
def doubling(in_form: str, mesh: MeshModel):
    """``jax.jit(lambda x, y: x + 2 * y, in_shardings=<in_form of the two shardings>,
    out_shardings=P('a'))``, one program per form and mesh."""
    s = bridge.named_sharding(mesh, ("a",))
    shardings = {"tuple": (s, s), "list": [s, s], "prefix": s}[in_form]
    return jax.jit(lambda x, y: x + 2 * y, in_shardings=shardings, out_shardings=s)


def same_program_as(canonical, spelled, *args):
    """``spelled``'s jit lowers ``args`` to the module ``canonical``'s does (forms that differ only
    in spelling are one program: it is lowered, never compiled again); then ``canonical``'s result
    (its program compiled once per mesh, shared by every spelling)."""
    got, expected = spelled.lower(*args).as_text(), canonical.lower(*args).as_text()
    if got != expected:
        raise AssertionError(f"the spelling lowers to another module than the canonical form's:\n{got}\n"
                             f"-- but should be --\n{expected}")
    return canonical(*args)


for in_form in ("tuple", "list", "prefix"):
    spelled = {"tuple": "(s, s)", "list": "[s, s]", "prefix": "s"}[in_form]
    @form("jax.jit", "in_shardings", f"a {in_form}" if in_form != "prefix" else "one sharding for both arguments",
          f"jax.jit(lambda x, y: x + 2 * y, in_shardings={spelled}, out_shardings=s)(x, x)"
          "  # s = NamedSharding(mesh, P('a'))",
          expected=lambda ex: (Layout(ex.mesh, ("a",), ex.x.shape), ex.x * 3))
    def _(ex, in_form=in_form):
        x = bridge.jit_argument(ex.x, bridge.named_sharding(ex.mesh, ("a",)))
        return same_program_as(doubling("tuple", ex.mesh), doubling(in_form, ex.mesh), x, x)


@functools.lru_cache(maxsize=None)
def with_static(argnums_form: str):
    argnums = {"int": 1, "tuple": (1,), "list": [1], "negative int": -1}[argnums_form]
    return jax.jit(lambda x, k: x * k, static_argnums=argnums)


for argnums_form in ("int", "tuple", "list", "negative int"):
    spelled = {"int": "1", "tuple": "(1,)", "list": "[1]", "negative int": "-1"}[argnums_form]
    @form("jax.jit", "static_argnums", argnums_form,
          f"jax.jit(lambda x, k: x * k, static_argnums={spelled})(jax.device_put(x, NamedSharding(mesh, P('a'))), 3)",
          expected=lambda ex: (Layout(ex.mesh, ("a",), ex.x.shape), ex.x * 3))
    def _(ex, argnums_form=argnums_form):
        x = jax.device_put(ex.x, bridge.named_sharding(ex.mesh, ("a",)))
        return same_program_as(with_static("int"), with_static(argnums_form), x, 3)


# --- sequences as lists or tuples ---------------------------------------------------------------
for seq in ("list", "tuple"):
    @form("jax.make_array_from_single_device_arrays", "arrays", f"a {seq}",
          f"jax.make_array_from_single_device_arrays(x.shape, s, {seq}(<the shards, one per device>))",
          expected=lambda ex: (Layout(ex.mesh, ("a",), ex.x.shape), ex.x))
    def _(ex, seq=seq):
        layout = Layout(ex.mesh, ("a",), ex.x.shape)
        devices = bridge.devices_by_id()
        from conformance.model.layout import block_slices
        pieces = [jax.device_put(ex.x[block_slices(layout.blocks[d])], devices[d])
                  for d in bridge.addressable_ids(ex.mesh.device_ids)]  # (one per device this process addresses)
        return jax.make_array_from_single_device_arrays(ex.x.shape, bridge.named_sharding(ex.mesh, ("a",)),
                                                        list(pieces) if seq == "list" else tuple(pieces))

    @form("jax.make_array_from_callback", "shape", f"a {seq}",
          f"jax.make_array_from_callback({seq}(x.shape), NamedSharding(mesh, P('a')), lambda i: x[i])",
          expected=lambda ex: (Layout(ex.mesh, ("a",), ex.x.shape), ex.x))
    def _(ex, seq=seq):
        shape = list(ex.x.shape) if seq == "list" else tuple(ex.x.shape)
        return jax.make_array_from_callback(shape, bridge.named_sharding(ex.mesh, ("a",)), lambda i: ex.x[i])

    @form("jax.numpy.concatenate", "arrays", f"a {seq} of sharded arrays, axis=-1 (eager)",
          f"jnp.concatenate({seq}([y, y + 1]), axis=-1)  # y = jax.device_put(x, NamedSharding(mesh, P('a')))",
          expected=lambda ex: np.concatenate([ex.x, ex.x + 1], axis=-1))
    def _(ex, seq=seq):
        y = jax.device_put(ex.x, bridge.named_sharding(ex.mesh, ("a",)))
        return jnp.concatenate([y, y + 1] if seq == "list" else (y, y + 1), axis=-1)


# --- device= on array creation --------------------------------------------------------------------
@form("jax.numpy.asarray", "device", "NamedSharding", "jnp.asarray(x, device=NamedSharding(mesh, P('a')))",
      needs="asarray_device", expected=lambda ex: (Layout(ex.mesh, ("a",), ex.x.shape), ex.x))
def _(ex):
    return jnp.asarray(ex.x, device=bridge.named_sharding(ex.mesh, ("a",)))


@form("jax.numpy.zeros", "shape, device", "a list, and a NamedSharding",
      "jnp.zeros(list(x.shape), dtype=jnp.int32, device=NamedSharding(mesh, P('a')))",
      expected=lambda ex: (Layout(ex.mesh, ("a",), ex.x.shape), np.zeros_like(ex.x)))
def _(ex):
    return jnp.zeros(list(ex.x.shape), dtype=jnp.int32, device=bridge.named_sharding(ex.mesh, ("a",)))


# --- the property ---------------------------------------------------------------------------------
def form_case(row: Form, ex: FormExample) -> Case:
    return scripted_case(f"{row.source} on {describe_mesh(ex.mesh)}, x int32{list(ex.x.shape)} "
                         f"({row.entry} {row.parameter}: {row.form})",
                         ["from jax import lax", "import jax.numpy as jnp", f"n = {N}",
                          ("shard_map = jax.shard_map" if compat.FEATURES["jax.shard_map"].available else
                           "from jax.experimental.shard_map import shard_map"),
                          "s = NamedSharding(mesh, P('a'))", f"print({row.source.split('  #')[0]})"],
                         meshes={"mesh": ex.mesh}, arrays={"x": ex.x},
                         outcomes={"the call": row.source.split("  #")[0]})


@pytest.mark.parametrize("row", FORMS, ids=[r.id for r in FORMS])
@given(ex=form_examples())
@settings(max_examples=EXAMPLES)
def test_each_argument_form_gives_the_canonical_answer_or_its_documented_refusal(row, ex):
    """Each row's form of its parameter gives what the canonical form gives (numpy's values, the
    model's layout), or the exception type JAX documents for it."""
    if row.needs:
        compat.feature(row.needs)  # (skips, naming the version, where this JAX lacks it)
    case = form_case(row, ex)
    if row.refused:
        case.rejects("the call", lambda: row.run(ex), row.refused)
        return
    got = case.accepts("the call", lambda: row.run(ex))
    expected = row.expected(ex)
    if isinstance(expected, tuple):  # (the Layout the result must have, its values)
        check_layout(case, got, *expected)
    else:
        case.same_bits("the call's result", np.asarray(got), np.asarray(expected))
