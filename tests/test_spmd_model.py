"""The pmap / collectives model pinned to hand-worked cases, the seed's examples first."""

import numpy as np
import pytest

from conformance.model import spmd
from conformance.model.layout import MeshModel


def rows(values):
    return [np.asarray(v).tolist() for v in values]


@pytest.mark.parametrize("n, expected", [
    (2, [[0, 2, 4, 6], [8, 10, 12, 14]]),
    (8, [[8 * r + 2 * c for c in range(4)] for r in range(8)]),
])
def test_seed_scale_by_two(n, expected):
    """pmap(scale_by_two) on arange(n * 4).reshape(n, 4): row i is device i's slice times 2."""
    out = spmd.pmap_reference(lambda x: x * 2, (np.arange(n * 4).reshape(n, 4),))
    assert out.tolist() == expected


def test_seed_scale_and_add_broadcasts_y():
    """in_axes=(0, None): x is split, the scalar y = 100.0 reaches every device whole."""
    x = np.arange(8).reshape(2, 4)
    out = spmd.pmap_reference(lambda a, b: a * 2 + b, (x, np.float32(100.0)), in_axes=(0, None))
    assert out.tolist() == [[100.0, 102.0, 104.0, 106.0], [108.0, 110.0, 112.0, 114.0]]


@pytest.mark.parametrize("n, total", [(2, 56), (8, 992)])
def test_seed_scale_and_sum(n, total):
    """Each device sums its scaled slice; psum leaves the global total on every device."""
    x = np.arange(n * 4).reshape(n, 4)
    local = [(x[i] * 2).sum() for i in range(n)]
    assert [int(v) for v in spmd.psum(local)] == [total] * n


def test_in_axes_prefixes():
    """A dict prefix, a nested list prefix and in_axes=1 pick the right leaves and axes."""
    x = np.arange(12).reshape(4, 3)
    out = spmd.pmap_reference(lambda d: d["a"] + d["b"], ({"a": x, "b": x[0]},),
                              in_axes=({"a": 0, "b": None},))
    assert out.tolist() == [[0, 2, 4], [3, 5, 7], [6, 8, 10], [9, 11, 13]]
    out = spmd.pmap_reference(lambda pair: pair[0] + pair[1], ([x, x[0]],), in_axes=([0, None],))
    assert out.tolist() == [[0, 2, 4], [3, 5, 7], [6, 8, 10], [9, 11, 13]]
    assert spmd.pmap_reference(lambda a: a, (x.T,), in_axes=1).tolist() == x.tolist()
    assert spmd.pmap_reference(lambda a: a, (x.T,), in_axes=-1).tolist() == x.tolist()


def test_out_axes():
    x = np.arange(12).reshape(4, 3)
    assert spmd.pmap_reference(lambda a: a * 2, (x,), out_axes=1).tolist() == (x * 2).T.tolist()
    assert spmd.pmap_reference(lambda a: a * 2, (x,), out_axes=-1).tolist() == (x * 2).T.tolist()
    assert spmd.pmap_reference(lambda a: a * 0 + 7, (x,), out_axes=None).tolist() == [7, 7, 7]
    with pytest.raises(ValueError, match="same output on every device"):
        spmd.pmap_reference(lambda a: a, (x,), out_axes=None)


def test_mapped_size_errors():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        spmd.mapped_size((np.zeros((4, 2)), np.zeros((3, 2))), 0)
    with pytest.raises(ValueError, match="at least one mapped"):
        spmd.mapped_size((np.zeros(2),), None)
    with pytest.raises(ValueError):
        spmd.arg_axes((np.zeros(2), np.zeros(2)), [0, None])


X = [np.arange(3) + 3 * i for i in range(4)]  # arange(12).reshape(4, 3) as device rows


def test_reductions():
    assert rows(spmd.psum(X)) == [[18, 22, 26]] * 4
    assert rows(spmd.psum(X, [[0, 1], [2, 3]])) == [[3, 5, 7], [3, 5, 7], [15, 17, 19], [15, 17, 19]]
    assert rows(spmd.pmax(X)) == [[9, 10, 11]] * 4
    assert rows(spmd.pmax(X, [[0, 2], [1, 3]])) == [[6, 7, 8], [9, 10, 11], [6, 7, 8], [9, 10, 11]]
    assert rows(spmd.pmin(X, [[0, 2], [1, 3]])) == [[0, 1, 2], [3, 4, 5], [0, 1, 2], [3, 4, 5]]
    mean = spmd.pmean(X)
    assert mean[0].dtype == np.float32 and rows(mean) == [[4.5, 5.5, 6.5]] * 4
    booleans = spmd.psum([np.bool_(b) for b in (True, False, True, True)])
    assert [int(v) for v in booleans] == [3] * 4 and booleans[0].dtype == np.int32


def test_all_gather():
    assert spmd.all_gather(X)[0].shape == (4, 3)
    assert spmd.all_gather([x[None] for x in X], axis=1)[0].shape == (1, 4, 3)
    assert spmd.all_gather(X, tiled=True)[0].tolist() == list(range(12))
    grouped = spmd.all_gather(X, axis_index_groups=[[0, 2], [1, 3]])
    assert rows(grouped)[1] == [[3, 4, 5], [9, 10, 11]]


def test_psum_scatter():
    square = [np.arange(4) + 4 * i for i in range(4)]
    assert [int(v) for v in spmd.psum_scatter(square)] == [24, 28, 32, 36]
    wide = [np.arange(8) + 8 * i for i in range(4)]
    assert rows(spmd.psum_scatter(wide, tiled=True)) == [[48, 52], [56, 60], [64, 68], [72, 76]]
    pairs = [np.arange(2) + 2 * i for i in range(4)]
    assert [int(v) for v in spmd.psum_scatter(pairs, axis_index_groups=[[0, 2], [1, 3]])] == [4, 8, 6, 10]


def test_ppermute_fills_zeros():
    assert rows(spmd.ppermute(X, [(0, 1), (1, 2)])) == [[0, 0, 0], [0, 1, 2], [3, 4, 5], [0, 0, 0]]
    assert rows(spmd.ppermute(X, [(i, (i + 1) % 4) for i in range(4)])) == rows(X[-1:] + X[:-1])
    with pytest.raises(ValueError):
        spmd.ppermute(X, [(0, 1), (2, 1)])


def test_all_to_all():
    square = [np.arange(4) + 4 * i for i in range(4)]
    assert rows(spmd.all_to_all(square, 0, 0)) == [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]
    wide = [np.arange(8) + 8 * i for i in range(4)]
    assert rows(spmd.all_to_all(wide, 0, 0, tiled=True))[0] == [0, 1, 8, 9, 16, 17, 24, 25]
    pairs = [np.arange(2) + 2 * i for i in range(4)]
    assert rows(spmd.all_to_all(pairs, 0, 0, axis_index_groups=[[0, 2], [1, 3]])) == [[0, 4], [2, 6], [1, 5], [3, 7]]


def test_groups_must_partition_equally():
    with pytest.raises(ValueError):
        spmd.groups_of(4, [[0, 1], [2]])
    with pytest.raises(ValueError):
        spmd.groups_of(4, [[0, 1, 2], [3]])


def test_mesh_groups():
    """Over 'j' of a (2, 4) mesh: the rows; over 'i': the columns; over ('j', 'i'): j major."""
    assert spmd.mesh_groups((2, 4), ("i", "j"), ("j",)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert spmd.mesh_groups((2, 4), ("i", "j"), ("i",)) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert spmd.mesh_groups((2, 4), ("i", "j"), ("j", "i")) == [[0, 4, 1, 5, 2, 6, 3, 7]]
    assert spmd.mesh_groups((2, 4), ("i", "j"), ("i", "j")) == [list(range(8))]


def test_shard_map_blocks_and_assembly_worked_by_hand():
    mesh = MeshModel((0, 1, 2, 3), (2, 2), ("a", "b"))
    x = np.arange(8).reshape(2, 4)
    blocks = spmd.shard_map_blocks(mesh, (None, "b"), x)
    assert blocks[0].tolist() == [[0, 1], [4, 5]] and blocks[2].tolist() == [[0, 1], [4, 5]]
    assert blocks[1].tolist() == [[2, 3], [6, 7]]
    # each device sums its block's rows (keepdims): the result has one row per block, tiled by 'b'
    sums = {d: b.sum(axis=0, keepdims=True) for d, b in blocks.items()}
    assert spmd.shard_map_assemble(mesh, (None, "b"), sums).tolist() == [[4, 6, 8, 10]]
    # out_specs naming 'a' too: devices (0, *) and (1, *) give the two row blocks
    assert spmd.shard_map_assemble(mesh, ("a", "b"), sums).tolist() == [[4, 6, 8, 10], [4, 6, 8, 10]]
    # a block the spec says is replicated over 'a' but whose replicas differ
    with pytest.raises(spmd.ReplicaMismatch):
        spmd.shard_map_assemble(mesh, (None, "b"), {d: np.array([[d]]) for d in range(4)})


def test_body_gradient_counts_an_invariant_loss_once_and_a_varying_one_per_device():
    """Hand-worked, values [1, 2] on two devices (one element each, weight 1; all_gather's two
    elements weigh 1 and 2; a varying loss weighs 1 on device 0, 2 on device 1): psum's loss
    (1 + 2)^2 is invariant, its gradient 2 * 3 on each device; all_gather's loss 1^2 + 2 * 2^2 on each
    device (varying), summed 1 + 2 times: 3 * 2 * 1 = 6 for device 0 and 3 * 2 * 2 * 2 = 24 for device
    1; a full ppermute's losses y1^2 and 2 y0^2: 4 y0 at device 0, 2 y1 at device 1; a partial one
    (0 -> 1) leaves device 0's loss 0 and device 1's 2 y0^2: 4 y0 at device 0, 0 at device 1."""
    values = [np.array([1.0]), np.array([2.0])]
    assert [g.tolist() for g in spmd.body_gradient(spmd.psum, values, invariant=True)] == [[6.0], [6.0]]
    gather = lambda vs: [np.reshape(r, -1) for r in spmd.all_gather(vs)]
    assert [g.tolist() for g in spmd.body_gradient(gather, values, invariant=False)] == [[6.0], [24.0]]
    swap = lambda vs: spmd.ppermute(vs, ((0, 1), (1, 0)))
    assert [g.tolist() for g in spmd.body_gradient(swap, values, invariant=False)] == [[4.0], [4.0]]
    partial = lambda vs: spmd.ppermute(vs, ((0, 1),))
    assert [g.tolist() for g in spmd.body_gradient(partial, values, invariant=False)] == [[4.0], [0.0]]
