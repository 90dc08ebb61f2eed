"""The reference model pinned to hand-worked cases, the seed tutorial's pictures first.

These tests import no JAX: the model must stand on its own.
"""

import pytest

from conformance.model import tutorial
from conformance.model.layout import (IndivisibleError, Layout, MeshError, MeshModel, SpecError, block_grid,
                                      check_spec, is_congruent, normalize_index)

TPU_MESH = MeshModel.from_array([[0, 1], [2, 3], [6, 7], [4, 5]], ("a", "b"))
MESH_2X2 = MeshModel.from_array([[0, 1], [2, 3]], ("a", "b"))


@pytest.mark.parametrize("spec, picture", tutorial.NAMED_PICTURES, ids=str)
def test_tutorial_named_pictures(spec, picture):
    """Each NamedSharding picture in the tutorial is the model's block grid on its 4x2 TPU mesh."""
    layout = Layout(TPU_MESH, spec, tutorial.TUTORIAL_SHAPE)
    assert block_grid(layout) == tuple(tuple(frozenset(c) for c in row) for row in picture)


def test_tutorial_mesh_order():
    """The tutorial's 4x2 mesh is its 8-device torus order reshaped row-major."""
    mesh = MeshModel(tutorial.TPU_DEVICE_ORDER, tutorial.MESH_SHAPE, tutorial.AXIS_NAMES)
    assert mesh == TPU_MESH


def test_tutorial_1x8_and_8x1_pictures():
    """sharding.reshape(1, 8) draws one row and reshape(8, 1) one column, in torus order."""
    line = MeshModel(tutorial.TPU_DEVICE_ORDER, (8,), ("x",))
    wide = Layout(line, (None, "x"), tutorial.TUTORIAL_SHAPE)
    tall = Layout(line, ("x", None), tutorial.TUTORIAL_SHAPE)
    order = [frozenset({d}) for d in tutorial.TPU_DEVICE_ORDER]
    assert block_grid(wide) == (tuple(order),)
    assert block_grid(tall) == tuple((cell,) for cell in order)


def test_tutorial_quick_example_shards():
    """P('a','b') on the 4x2 mesh gives each device one 2048x4096 tile of the 8192x8192 array."""
    layout = Layout(TPU_MESH, ("a", "b"), tutorial.TUTORIAL_SHAPE)
    assert layout.tiling == (4, 2)
    assert layout.shard_shape == (2048, 4096)
    assert layout.block(6) == ((4096, 6144), (0, 4096))
    assert layout.block(5) == ((6144, 8192), (4096, 8192))
    assert not layout.is_fully_replicated


def test_replicated_along_unnamed_axis():
    """P('a', None) on a 2x2 mesh: rows split over 'a', replicated over 'b'; replica ids 0, 1."""
    layout = Layout(MESH_2X2, ("a", None), (4, 2))
    assert layout.blocks == {0: ((0, 2), (0, 2)), 1: ((0, 2), (0, 2)),
                             2: ((2, 4), (0, 2)), 3: ((2, 4), (0, 2))}
    assert layout.replica_groups == ((0, 1), (2, 3))
    assert [layout.replica_id(d) for d in (0, 1, 2, 3)] == [0, 1, 0, 1]
    assert layout.shard_shape == (2, 2)


def test_tuple_entry_is_major_first():
    """P(('b', 'a')) numbers blocks with 'b' as the major axis; P(('a', 'b')) with 'a'."""
    ba = Layout(MESH_2X2, (("b", "a"),), (4,))
    ab = Layout(MESH_2X2, (("a", "b"),), (4,))
    assert ba.blocks == {0: ((0, 1),), 1: ((2, 3),), 2: ((1, 2),), 3: ((3, 4),)}
    assert ab.blocks == {0: ((0, 1),), 1: ((1, 2),), 2: ((2, 3),), 3: ((3, 4),)}
    assert not ab.same_placement(ba)


def test_equivalence_is_decided_for_the_rank_not_the_shape():
    """On a zero-size shape every placement looks alike, yet P() and P('a') are not equivalent;
    P('a') and P('a', None) are; so are P(('a','b')) on 4x2 and P('x') on the flat mesh."""
    mesh = MeshModel(tuple(range(8)), (8,), ("a",))
    replicated, cut = Layout(mesh, (), (0,)), Layout(mesh, ("a",), (0,))
    assert replicated.same_placement(cut)
    assert not replicated.equivalent(cut)
    assert Layout(TPU_MESH, ("a",), (0, 3)).equivalent(Layout(TPU_MESH, ("a", None), (0, 3)))
    flat = MeshModel(tutorial.TPU_DEVICE_ORDER, (8,), ("x",))
    assert Layout(TPU_MESH, (("a", "b"),), (16,)).equivalent(Layout(flat, ("x",), (16,)))
    assert not Layout(TPU_MESH, (("a", "b"),), (16,)).equivalent(Layout(TPU_MESH, (("b", "a"),), (16,)))
    assert not Layout(TPU_MESH, ("a",), (8,)).equivalent(Layout(TPU_MESH, ("a", None), (8, 1)))


def test_equivalence_needs_the_same_device_order():
    """Columns swapped on a 2x2 mesh: P('a') puts rows 0 and 1 on devices {0, 1} and {2, 3} under
    both orders (the same placement), but the device lists (0, 1, 2, 3) and (1, 0, 3, 2) differ,
    so the shardings are not equivalent; fully replicated over the two orders, neither."""
    order, swapped = MeshModel((0, 1, 2, 3), (2, 2), ("a", "b")), MeshModel((1, 0, 3, 2), (2, 2), ("a", "b"))
    a, b = Layout(order, ("a",), (2,)), Layout(swapped, ("a",), (2,))
    assert a.blocks == {0: ((0, 1),), 1: ((0, 1),), 2: ((1, 2),), 3: ((1, 2),)}
    assert a.same_placement(b) and not a.equivalent(b)
    assert not Layout(order, (), (2,)).equivalent(Layout(swapped, (), (2,)))
    assert Layout(order, ("a",), (2,)).equivalent(Layout(MeshModel((0, 1, 2, 3), (2, 2), ("a", "b")), ("a",), (2,)))


def test_size_one_axis_is_replication():
    """A dimension sharded over a size-1 mesh axis is not cut: the array is fully replicated."""
    mesh = MeshModel.from_array([[d] for d in range(8)], ("a", "b"))
    layout = Layout(mesh, ("b",), (4,))
    assert layout.tiling == (1,)
    assert layout.is_fully_replicated
    assert layout.replica_groups == (tuple(range(8)),)
    assert layout.same_placement(Layout(mesh, (), (4,)))
    assert layout.equivalent(Layout(mesh, (), (4,)))


def test_trailing_none_changes_nothing():
    """P('a') and P('a', None) place every block identically."""
    assert Layout(TPU_MESH, ("a",), (8, 4)).same_placement(Layout(TPU_MESH, ("a", None), (8, 4)))


def test_one_axis_over_all_devices_matches_flat_mesh():
    """P(('a','b'), None) on the 4x2 mesh is the 8x1 layout of the flat mesh in the same order."""
    flat = MeshModel(tutorial.TPU_DEVICE_ORDER, (8,), ("x",))
    assert Layout(TPU_MESH, (("a", "b"), None), (8, 2)).blocks == Layout(flat, ("x",), (8, 2)).blocks


def test_congruence_names_failing_dimensions():
    """(3, 5) under P('a','b') on 4x2 fails dims 0 and 1; (4, 5) fails dim 1 only."""
    assert Layout(TPU_MESH, ("a", "b"), (3, 5)).indivisible_dims == (0, 1)
    layout = Layout(TPU_MESH, ("a", "b"), (4, 5))
    assert layout.indivisible_dims == (1,)
    assert not layout.is_congruent
    with pytest.raises(IndivisibleError) as info:
        _ = layout.shard_shape
    assert info.value.dims == (1,)
    assert Layout(TPU_MESH, (None, "b"), (3, 4)).is_congruent


def test_zero_size_dimension_is_congruent():
    """A size-0 dimension divides into any number of empty blocks, which are then equal."""
    layout = Layout(TPU_MESH, ("a", "b"), (0, 2))
    assert layout.is_congruent
    assert layout.shard_shape == (0, 1)
    assert layout.block(6) == ((0, 0), (0, 1))
    assert layout.replica_groups == ((0, 2, 6, 4), (1, 3, 7, 5))
    assert not layout.is_fully_replicated


def test_scalar_layout():
    """A 0-d array has one empty block, held by every device."""
    layout = Layout(MESH_2X2, (), ())
    assert layout.shard_shape == ()
    assert layout.replica_groups == ((0, 1, 2, 3),)
    assert layout.is_fully_replicated


@pytest.mark.parametrize("spec, rank, kind", [
    (("z",), 1, "unknown-axis"),
    (("a", "a"), 2, "repeated-axis"),
    ((("a", "b"), "a"), 2, "repeated-axis"),
    ((("b", "b"),), 1, "repeated-axis"),
    (("a", None, None), 2, "too-long"),
])
def test_invalid_specs(spec, rank, kind):
    """Unknown axes, an axis used twice, and more entries than the rank are rejected."""
    with pytest.raises(SpecError) as info:
        check_spec(MESH_2X2, spec, rank)
    assert info.value.kind == kind
    with pytest.raises(SpecError):
        Layout(MESH_2X2, spec, (4,) * rank)


@pytest.mark.parametrize("args", [
    dict(device_ids=(0, 0), shape=(2,), axis_names=("a",)),
    dict(device_ids=(0, 1), shape=(2,), axis_names=("a", "b")),
    dict(device_ids=(0, 1, 2, 3), shape=(2, 2), axis_names=("a", "a")),
    dict(device_ids=(0, 1, 2), shape=(2, 2), axis_names=("a", "b")),
])
def test_invalid_meshes(args):
    """A mesh with a repeated device or axis name, or the wrong number of devices, is rejected."""
    with pytest.raises(MeshError):
        MeshModel(**args)


def test_is_congruent_as_in_tutorial():
    """The tutorial's is_congruent: equal rank and every sharding dimension divides."""
    assert is_congruent((8192, 8192), (4, 2))
    assert not is_congruent((8192,), (4, 2))
    assert not is_congruent((6, 8), (4, 2))
    assert is_congruent((0, 3), (4, 1))


def test_normalize_index():
    """JAX's slice(None) becomes the whole dimension; empty slices stay empty."""
    assert normalize_index((slice(None), slice(2, 4)), (4, 8)) == ((0, 4), (2, 4))
    assert normalize_index((slice(0, 0),), (0,)) == ((0, 0),)
    assert normalize_index((), ()) == ()
