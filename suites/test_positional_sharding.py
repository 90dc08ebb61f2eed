"""PositionalSharding: reshape/replicate semantics, device_put with it, and its NamedSharding
translation, against the positional model (conformance/positional.py).

PositionalSharding exists up to JAX 0.6.x. Where it is gone its tests skip, naming the version, and
the ``translated`` tests check the same layouts through the NamedSharding that replaced it.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from conformance import compat
from conformance.cases import check_layout
from conformance.checks import Case
from conformance.jaxbridge import (index_map, layout_sharding, live_device_ids, needs_devices,
                                   positional_sharding)
from conformance.model import normalize_index
from conformance.positional import PositionalModel, translate
from conformance.repro import script
from strategies import arrays
from strategies.positional import PositionalCase, describe_operations, positional_cases
from strategies.tutorial import tutorial_positional_cases

pytestmark = pytest.mark.positional_sharding
requires_positional = compat.requires("PositionalSharding")


def with_tutorial_examples(arguments=lambda case: {"case": case}):
    """Decorate a ``@given`` test with one ``@example(**arguments(case))`` per tutorial case."""
    def decorate(test):
        for case in reversed(tutorial_positional_cases()):
            test = example(**arguments(case))(test)
        return test
    return decorate


def positional_case(case: PositionalCase, call: str, lines=(), x=None) -> Case:
    """A Case whose script builds the positional sharding as the tutorial does."""
    chain = f"PositionalSharding(np.array([devices[i] for i in {list(case.devices)}])" \
            f".reshape({case.initial_shape})){describe_operations(case.operations)}"
    code = script(["from jax.sharding import PositionalSharding", f"sharding = {chain}", *lines],
                  arrays={"x": x} if x is not None else None)
    return Case(f"{call}; sharding = {chain}", code)


def sets_seen_by_jax(sharding) -> dict:
    """{tile index: device ids} read through the public devices_indices_map over an array of the
    sharding's own shape (one element per tile)."""
    cells = {}
    for device, index in sharding.devices_indices_map(tuple(sharding.shape)).items():
        block = normalize_index(index, sharding.shape)
        cells.setdefault(tuple(start for start, _ in block), set()).add(device.id)
    return {k: frozenset(v) for k, v in cells.items()}


def sets_in_model(model: PositionalModel) -> dict:
    return {tuple(int(i) for i in np.unravel_index(flat, model.shape)): cell
            for flat, cell in enumerate(model.cells)}


@requires_positional
@given(case=positional_cases())
@with_tutorial_examples()
def test_reshape_and_replicate_give_the_models_sets(case):
    """Any chain of reshape and replicate(axis, keepdims) gives the model's shape, and each tile
    is held by exactly the model's set of devices."""
    model = case.model
    check = positional_case(case, "sharding.shape and devices_indices_map(sharding.shape)",
                            ["print(sharding)"])
    sharding = check.accepts("reshape/replicate", lambda: positional_sharding(case))
    check.equal("sharding.shape", tuple(sharding.shape), model.shape)
    check.equal("device sets by tile", sets_seen_by_jax(sharding), sets_in_model(model))


@st.composite
def positional_puts(draw, congruent=None, other_ranks=True):
    """A positional case and an int32 array: of a congruent shape (tiles of 1-2 elements per dim)
    or not (a remainder in a cut dimension, or, with ``other_ranks``, another rank), the latter
    only where the sharding cuts some dimension."""
    case = draw(positional_cases())
    shape = case.model.shape
    x_shape = tuple(s * draw(st.integers(1, 2)) for s in shape)
    cut = [i for i, s in enumerate(shape) if s > 1]
    if congruent is None:
        congruent = not cut or draw(st.booleans())
    if not congruent:
        if not other_ranks or draw(st.booleans()):
            dim = draw(st.sampled_from(cut))
            x_shape = x_shape[:dim] + (x_shape[dim] + draw(st.integers(1, shape[dim] - 1)),) + \
                x_shape[dim + 1:]
        else:
            x_shape = x_shape + (1,) if draw(st.booleans()) or len(shape) == 1 else x_shape[:-1]
    x = draw(arrays(np.int32, x_shape))
    return case, x


@requires_positional
@given(put=positional_puts())
@with_tutorial_examples(lambda case: {"put": (case, np.arange(64, dtype=np.int32).reshape(8, 8))})
def test_device_put_with_positional_sharding(put):
    """device_put(x, positional) lays tile i of x on every device of set i and round-trips x when
    the shapes are congruent (the tutorial's is_congruent), and raises ValueError otherwise."""
    case, x = put
    model = case.model
    check = positional_case(case, "jax.device_put(x, sharding)", ["y = jax.device_put(x, sharding)"], x=x)
    sharding = positional_sharding(case)
    if model.is_congruent(x.shape):
        y = check.accepts("device_put", lambda: jax.device_put(x, sharding))
        check_layout(check, y, translate(model).layout(x.shape), x)
    else:
        check.rejects("device_put of an incongruent shape", lambda: jax.device_put(x, sharding),
                      (ValueError,))


@requires_positional
@given(case=positional_cases())
@with_tutorial_examples()
def test_positional_is_equivalent_to_its_named_translation(case):
    """A positional sharding and the model's NamedSharding translation have the same index maps
    (the model's); when the translation keeps the device order, each is_equivalent_to the other."""
    model = case.model
    translation = translate(model)
    x_shape = tuple(2 * s for s in model.shape)
    layout = translation.layout(x_shape)
    check = positional_case(case, "sharding vs its NamedSharding translation",
                            ["print(sharding.devices_indices_map(x_shape))"])
    positional, named = positional_sharding(case), layout_sharding(layout)
    check.index_map("positional devices_indices_map", index_map(positional, x_shape),
                    model.blocks(x_shape))
    check.index_map("translation devices_indices_map", index_map(named, x_shape),
                    model.blocks(x_shape))
    if translation.keeps_order:
        rank = len(x_shape)
        check.true("positional.is_equivalent_to(named)", positional.is_equivalent_to(named, rank))
        check.true("named.is_equivalent_to(positional)", named.is_equivalent_to(positional, rank))


@requires_positional
@given(put=positional_puts(congruent=True))
@with_tutorial_examples(lambda case: {"put": (case, np.arange(64, dtype=np.int32).reshape(8, 8))})
def test_sin_follows_positional_sharding(put):
    """jnp.sin of a positional-sharded array (the tutorial's quick example) returns numpy's sin
    with every tile still on the devices of its set."""
    case, x = put
    x = (x % 100).astype(np.float32)
    model = case.model
    check = positional_case(case, "jnp.sin(jax.device_put(x, sharding))",
                            ["z = jnp.sin(jax.device_put(x, sharding))"], x=x)
    z = jnp.sin(jax.device_put(x, positional_sharding(case)))
    check.close("jnp.sin(y)", np.asarray(z), np.sin(x), rtol=2e-6, atol=2e-6)
    check.index_map("jnp.sin(y) devices_indices_map", index_map(z.sharding, x.shape),
                    model.blocks(x.shape))


@given(put=positional_puts(other_ranks=False))
@with_tutorial_examples(lambda case: {"put": (case, np.arange(64, dtype=np.int32).reshape(8, 8))})
def test_translated_layouts_place_tiles_as_the_positional_model(put):
    """On every JAX (PositionalSharding or not): device_put with the NamedSharding translation of a
    positional sharding puts tile i on the devices of set i for congruent shapes, and rejects a
    shape the translation's spec does not divide."""
    case, x = put
    model = case.model
    layout = translate(model).layout(x.shape)
    check = Case(f"jax.device_put(x, NamedSharding translation of PositionalSharding"
                 f"{describe_operations(case.operations)})",
                 script([f"sharding = NamedSharding(mesh, P(*{layout.spec!r}))",
                         "y = jax.device_put(x, sharding)"], meshes={"mesh": layout.mesh},
                        arrays={"x": x}))
    put_it = lambda: jax.device_put(x, layout_sharding(layout))  # noqa: E731
    if model.is_congruent(x.shape):
        check_layout(check, check.accepts("device_put", put_it), layout, x)
        check.equal("translated blocks", layout.blocks, model.blocks(x.shape))
    else:
        check.rejects("device_put of an indivisible shape", put_it, compat.INDIVISIBLE_ERRORS)


@requires_positional
@needs_devices(2, "to replicate")
def test_fully_replicated_positional_requires_the_same_rank():
    """The tutorial's rule holds for a fully replicated positional sharding too: shape (1, 1)
    accepts only 2-d arrays."""
    ids = live_device_ids()
    case = PositionalCase(ids, (len(ids),), (("reshape", (len(ids), 1)), ("replicate", None, True)))
    x = np.zeros((len(ids),), np.int32)
    check = positional_case(case, "jax.device_put(1-d x, (1, 1) fully replicated sharding)",
                            ["jax.device_put(x, sharding)"], x=x)
    check.rejects("device_put of a 1-d array", lambda: jax.device_put(x, positional_sharding(case)),
                  (ValueError,))


@requires_positional
@needs_devices(2, "to replicate")
def test_replicate_to_rank_zero():
    """replicate(0, keepdims=False) of a 1-d positional sharding is a 0-d sharding whose one set
    holds every device, as a numpy reduction would give."""
    ids = live_device_ids()
    case = PositionalCase(ids, (len(ids),), (("replicate", 0, False),))
    check = positional_case(case, "sharding.replicate(0, keepdims=False)", ["print(sharding.shape)"])
    sharding = check.accepts("replicate", lambda: positional_sharding(case))
    check.equal("shape", tuple(sharding.shape), ())
    check.equal("device_set", frozenset(d.id for d in sharding.device_set), frozenset(ids))
