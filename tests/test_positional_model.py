"""The positional-sharding model pinned to the tutorial, and its translation to a mesh and spec."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.model import tutorial
from conformance.model.layout import block_grid
from conformance.model.positional import (PositionalModel, apply_operations, ordered_factorizations,
                                          translate)
from strategies.positional import positional_chains

TORUS = PositionalModel.of(tutorial.TPU_DEVICE_ORDER)


def sets(*cells):
    return tuple(frozenset(c) for c in cells)


def test_reshape_keeps_the_sets_in_row_major_order():
    """sharding.reshape(4, 2) in the tutorial: rows {0 1}, {2 3}, {6 7}, {4 5}."""
    s = TORUS.reshape(4, 2)
    assert s.shape == (4, 2)
    assert s.cells == sets({0}, {1}, {2}, {3}, {6}, {7}, {4}, {5})
    assert TORUS.reshape(-1, 2).shape == (4, 2)
    with pytest.raises(ValueError):
        TORUS.reshape(3, 3)


def test_replicate_unions_along_an_axis():
    """replicate(0) of the 4x2 sharding is {0,2,4,6} {1,3,5,7} with shape (1, 2); replicate(1)
    has shape (4, 1); keepdims=False drops the axis; no axis unions everything."""
    s = TORUS.reshape(4, 2)
    assert s.replicate(0).shape == (1, 2)
    assert s.replicate(0).cells == sets({0, 2, 4, 6}, {1, 3, 5, 7})
    assert s.replicate(1).shape == (4, 1)
    assert s.replicate(1).cells == sets({0, 1}, {2, 3}, {6, 7}, {4, 5})
    assert s.replicate(0, keepdims=False).shape == (2,)
    assert s.replicate().shape == (1, 1) and s.replicate().cells == sets(range(8))
    assert s.replicate(-1).shape == (4, 1)


@pytest.mark.parametrize("operations, picture", tutorial.POSITIONAL_PICTURES, ids=str)
def test_tutorial_positional_pictures(operations, picture):
    """Each PositionalSharding picture in the tutorial is the translated layout's block grid."""
    positional = apply_operations(TORUS, operations)
    layout = translate(positional).layout(tutorial.TUTORIAL_SHAPE)
    assert block_grid(layout) == tuple(tuple(frozenset(c) for c in row) for row in picture)
    assert layout.blocks == positional.blocks(tutorial.TUTORIAL_SHAPE)


def test_congruence_is_the_tutorials_rule():
    s = TORUS.reshape(4, 2)
    assert s.is_congruent((8192, 8192)) and not s.is_congruent((8192,))
    assert not s.is_congruent((6, 4)) and s.is_congruent((0, 2))
    with pytest.raises(ValueError):
        s.blocks((6, 4))


def test_translation_keeps_the_device_order_when_a_mesh_can():
    """replicate(0) of the 4x2 sharding is P(None, axis) on a 4x2 mesh in the same device order."""
    t = translate(TORUS.reshape(4, 2).replicate(0))
    assert t.keeps_order and t.mesh.device_ids == tutorial.TPU_DEVICE_ORDER
    assert t.mesh.shape == (4, 2) and t.spec == (None, "p1")


def test_translation_without_an_order_keeping_mesh():
    """Sets whose tiles interleave across mesh axes, (a + b) % 2, need a mesh in set order."""
    positional = PositionalModel.of(range(12)).reshape(2, 2, 3).replicate(1).reshape(3, 2)
    t = translate(positional)
    assert not t.keeps_order
    assert t.layout((6, 4)).blocks == positional.blocks((6, 4))


def test_ordered_factorizations():
    assert ordered_factorizations(1) == [(1,)]
    assert ordered_factorizations(8) == [(8,), (2, 4), (4, 2), (2, 2, 2)]


@given(chain=positional_chains(tuple(range(12))), data=st.data())
def test_translation_places_every_tile_as_the_positional_sharding(chain, data):
    """For any chain of reshape/replicate, the translation's layout puts every tile on the
    positional sharding's devices, and keeps_order says whether the device order survived."""
    positional = chain.model
    tile = data.draw(st.tuples(*[st.integers(1, 2) for _ in positional.shape]))
    x_shape = tuple(s * t for s, t in zip(positional.shape, tile))
    t = translate(positional)
    assert t.layout(x_shape).blocks == positional.blocks(x_shape)
    assert t.keeps_order == (t.mesh.device_ids == positional.devices)


def test_model_cells_are_a_partition():
    """Every device is in exactly one set after any reshape/replicate."""
    s = PositionalModel.of(np.arange(6).reshape(2, 3)).replicate(1).reshape(1, 2)
    assert sorted(d for cell in s.cells for d in cell) == list(range(6))


def test_a_fully_replicated_sharding_accepts_any_rank_and_every_device_holds_all():
    """The tutorial's (1, 1) replicate() takes its 1-d biases, and a scalar (jax-ml/jax#22073):
    every device holds the whole array; a sharding that cuts keeps the tutorial's rule."""
    replicated = TORUS.reshape(4, 2).replicate()
    assert replicated.shape == (1, 1) and replicated.is_fully_replicated
    assert replicated.accepts((8,)) and replicated.accepts(()) and replicated.accepts((4, 2, 3))
    assert replicated.blocks((8,)) == {d: ((0, 8),) for d in range(8)}
    assert replicated.blocks(()) == {d: () for d in range(8)}
    cut = TORUS.reshape(4, 2).replicate(0)
    assert not cut.is_fully_replicated and cut.accepts((2, 4)) and not cut.accepts((4,))
