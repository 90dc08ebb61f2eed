"""PositionalSharding: reshape/replicate semantics, device_put with it, and its NamedSharding
translation, against the positional model (conformance/model/positional.py).

PositionalSharding exists up to JAX 0.6.x. Where it is gone its tests skip, naming the version, and
the ``translated`` tests check the same layouts through the NamedSharding that replaced it.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.checking.case import Case
from conformance.checking.layouts import check_layout
from conformance.checking.repro import mesh_literal, scripted_case, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model.layout import normalize_index
from conformance.model.positional import PositionalChain, PositionalModel, describe_operations, translate
from strategies import arrays
from strategies.positional import positional_chains
from strategies.tutorial import tutorial_examples, tutorial_positional_chains

pytestmark = pytest.mark.positional_sharding
requires_positional = compat.requires("PositionalSharding")
DEVICES = bridge.live_device_ids()
TUTORIAL_CHAINS = tutorial_positional_chains(bridge.tutorial_mesh_ids((8,)))
TUTORIAL_ARRAY = np.arange(64, dtype=np.int32).reshape(8, 8)


def positional_case(chain: PositionalChain, call: str, lines=(), x=None, outcomes=None) -> Case:
    """A Case whose script builds the positional sharding as the tutorial does (``outcomes``: the
    script's expression per check, for its verdict; see ``Case``)."""
    return scripted_case(f"{call}; sharding = {chain.code}",
                         ["from jax.sharding import PositionalSharding", f"sharding = {chain.code}", *lines],
                         arrays={"x": x} if x is not None else None, outcomes=outcomes)


# A script's lines for ``sets_seen_by_jax(sharding)``, as ``cells``: {tile index: device ids}.
SETS_SEEN_LINES = [
    "cells = {}  # tile index -> the ids of the devices holding it",
    "for d, index in sharding.devices_indices_map(tuple(sharding.shape)).items():",
    "    cells.setdefault(tuple(s.indices(n)[0] for s, n in zip(index, sharding.shape)), set()).add(d.id)",
]


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
@given(chain=positional_chains(DEVICES))
@tutorial_examples(TUTORIAL_CHAINS, lambda chain: {"chain": chain})
def test_reshape_and_replicate_give_the_models_sets(chain):
    """Any chain of reshape and replicate(axis, keepdims) gives the model's shape, and each tile
    is held by exactly the model's set of devices."""
    model = chain.model
    case = positional_case(chain, "sharding.shape and devices_indices_map(sharding.shape)",
                           ["print(sharding)", *SETS_SEEN_LINES],
                           outcomes={"reshape/replicate": chain.code, "sharding.shape": "tuple(sharding.shape)",
                                     "device sets by tile": "{k: frozenset(v) for k, v in cells.items()}"})
    sharding = case.accepts("reshape/replicate", lambda: bridge.positional_sharding(chain))
    case.equal("sharding.shape", tuple(sharding.shape), model.shape)
    case.equal("device sets by tile", sets_seen_by_jax(sharding), sets_in_model(model))


@st.composite
def positional_puts(draw, congruent=None, other_ranks=True):
    """A positional chain and an int32 array: of a congruent shape (tiles of 1-2 elements per dim)
    or not (a remainder in a cut dimension, or, with ``other_ranks``, another rank), the latter
    only where the sharding cuts some dimension (a fully replicated one takes any rank: see
    test_fully_replicated_positional_accepts_any_rank)."""
    chain = draw(positional_chains(DEVICES))
    shape = chain.model.shape
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
    return chain, x


@requires_positional
@given(put=positional_puts())
@tutorial_examples(TUTORIAL_CHAINS, lambda chain: {"put": (chain, TUTORIAL_ARRAY)})
def test_device_put_with_positional_sharding(put):
    """device_put(x, positional) lays tile i of x on every device of set i and round-trips x when
    the sharding accepts the shape (congruent: the tutorial's is_congruent), and raises ValueError
    otherwise."""
    chain, x = put
    model = chain.model
    accepts = model.accepts(x.shape)
    case = positional_case(chain, "jax.device_put(x, sharding)", ["y = jax.device_put(x, sharding)"] if accepts else [],
                           x=x, outcomes={"device_put": "jax.device_put(x, sharding)", "shard": "y"} if accepts else
                           {"device_put of an incongruent shape": "jax.device_put(x, sharding)"})
    sharding = bridge.positional_sharding(chain)
    if accepts:
        y = case.accepts("device_put", lambda: jax.device_put(x, sharding))
        check_layout(case, y, translate(model).layout(x.shape), x)
    else:
        case.rejects("device_put of an incongruent shape", lambda: jax.device_put(x, sharding),
                     (ValueError,))


@requires_positional
@given(chain=positional_chains(DEVICES))
@tutorial_examples(TUTORIAL_CHAINS, lambda chain: {"chain": chain})
def test_positional_is_equivalent_to_its_named_translation(chain):
    """A positional sharding and the model's NamedSharding translation have the same index maps
    (the model's); when the translation keeps the device order, each is_equivalent_to the other."""
    model = chain.model
    translation = translate(model)
    x_shape = tuple(2 * s for s in model.shape)
    layout = translation.layout(x_shape)
    rank = len(x_shape)
    case = positional_case(chain, "sharding vs its NamedSharding translation", [
        f"x_shape = {x_shape!r}",
        f"named = NamedSharding({mesh_literal(layout.mesh)}, {spec_literal(layout.spec)})  # the translation",
        "print(sharding.devices_indices_map(x_shape))"],
        outcomes={"positional devices_indices_map": "sharding", "translation devices_indices_map": "named",
                  "positional.is_equivalent_to(named)": f"sharding.is_equivalent_to(named, {rank})",
                  "named.is_equivalent_to(positional)": f"named.is_equivalent_to(sharding, {rank})"})
    positional, named = bridge.positional_sharding(chain), bridge.layout_sharding(layout)
    case.index_map("positional devices_indices_map", bridge.index_map(positional, x_shape),
                   model.blocks(x_shape))
    case.index_map("translation devices_indices_map", bridge.index_map(named, x_shape),
                   model.blocks(x_shape))
    if translation.keeps_order:
        case.true("positional.is_equivalent_to(named)", positional.is_equivalent_to(named, rank))
        case.true("named.is_equivalent_to(positional)", named.is_equivalent_to(positional, rank))


@requires_positional
@given(put=positional_puts(congruent=True))
@tutorial_examples(TUTORIAL_CHAINS, lambda chain: {"put": (chain, TUTORIAL_ARRAY)})
def test_sin_follows_positional_sharding(put):
    """jnp.sin of a positional-sharded array (the tutorial's quick example) returns numpy's sin
    with every tile still on the devices of its set."""
    chain, x = put
    x = (x % 100).astype(np.float32)
    model = chain.model
    case = positional_case(chain, "jnp.sin(jax.device_put(x, sharding))",
                           ["z = jnp.sin(jax.device_put(x, sharding))"], x=x, outcomes={"jnp.sin(y)": "z"})
    z = jnp.sin(jax.device_put(x, bridge.positional_sharding(chain)))
    case.close("jnp.sin(y)", np.asarray(z), np.sin(x), rtol=2e-6, atol=2e-6)
    case.index_map("jnp.sin(y) devices_indices_map", bridge.index_map(z.sharding, x.shape),
                   model.blocks(x.shape))


@given(put=positional_puts(other_ranks=False))
@tutorial_examples(TUTORIAL_CHAINS, lambda chain: {"put": (chain, TUTORIAL_ARRAY)})
def test_translated_layouts_place_tiles_as_the_positional_model(put):
    """On every JAX (PositionalSharding or not): device_put with the NamedSharding translation of a
    positional sharding puts tile i on the devices of set i for congruent shapes, and rejects a
    shape the translation's spec does not divide."""
    chain, x = put
    model = chain.model
    layout = translate(model).layout(x.shape)
    congruent = model.is_congruent(x.shape)
    # (The translation's blocks, judged by the script as JAX's index map of the translation.)
    blocks = ("{d.id: tuple(s.indices(n)[:2] for s, n in zip(i, x.shape)) "
              "for d, i in sharding.devices_indices_map(x.shape).items()}")
    case = scripted_case(f"jax.device_put(x, NamedSharding translation of PositionalSharding"
                         f"{describe_operations(chain.operations)})",
                         [f"sharding = NamedSharding(mesh, P(*{layout.spec!r}))",
                          *(["y = jax.device_put(x, sharding)"] if congruent else [])],
                         meshes={"mesh": layout.mesh}, arrays={"x": x},
                         outcomes={"device_put": "jax.device_put(x, sharding)", "shard": "y",
                                   "translated blocks": blocks}
                         if congruent else {"device_put of an indivisible shape": "jax.device_put(x, sharding)"})
    put_it = lambda: jax.device_put(x, bridge.layout_sharding(layout))
    if congruent:
        check_layout(case, case.accepts("device_put", put_it), layout, x)
        case.equal("translated blocks", layout.blocks, model.blocks(x.shape))
    else:
        case.rejects("device_put of an indivisible shape", put_it, compat.INDIVISIBLE_ERRORS)


@requires_positional
@bridge.needs_devices(2, "to replicate")
def test_fully_replicated_positional_accepts_any_rank():
    """A fully replicated positional sharding (shape (1, 1): one set of every device) lays an
    array of any rank, a scalar too, whole on every device: JAX made it so on purpose
    (jax-ml/jax#22073), and the tutorial puts 1-d biases on a (1, 1) sharding.replicate()."""
    ids = DEVICES
    chain = PositionalChain(ids, (len(ids),), (("reshape", (len(ids), 1)), ("replicate", None, True)))
    model = chain.model
    for x in (np.arange(len(ids), dtype=np.int32), np.array(7, np.int32)):
        case = positional_case(chain, f"jax.device_put({x.ndim}-d x, (1, 1) fully replicated sharding)",
                               ["y = jax.device_put(x, sharding)", "print(y.sharding.devices_indices_map(x.shape))"],
                               x=x, outcomes={f"device_put of a {x.ndim}-d array": "jax.device_put(x, sharding)",
                                              "values": "np.asarray(y).tolist()", "devices_indices_map": "y"})
        y = case.accepts(f"device_put of a {x.ndim}-d array",
                         lambda: jax.device_put(x, bridge.positional_sharding(chain)))  # noqa: B023 - called in this iteration
        case.equal("values", np.asarray(y).tolist(), x.tolist())
        case.index_map("devices_indices_map", bridge.index_map(y.sharding, x.shape), model.blocks(x.shape))


@requires_positional
@bridge.needs_devices(2, "to replicate")
def test_replicate_to_rank_zero():
    """replicate(0, keepdims=False) of a 1-d positional sharding is a 0-d sharding whose one set
    holds every device, as a numpy reduction would give."""
    ids = DEVICES
    chain = PositionalChain(ids, (len(ids),), (("replicate", 0, False),))
    case = positional_case(chain, "sharding.replicate(0, keepdims=False)", [],
                           outcomes={"replicate": chain.code, "shape": "tuple(sharding.shape)",
                                     "device_set": "frozenset(d.id for d in sharding.device_set)"})
    sharding = case.accepts("replicate", lambda: bridge.positional_sharding(chain))
    case.equal("shape", tuple(sharding.shape), ())
    case.equal("device_set", frozenset(d.id for d in sharding.device_set), frozenset(ids))
