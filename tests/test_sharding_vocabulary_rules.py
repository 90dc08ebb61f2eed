"""The vocabulary's sharding rules (``conformance/model/sharding_vocabulary*.py``) pinned to hand-worked
cases, a family at a time, in the style of ``test_sharding_rules.py``. Each case names the vocabulary
entry (``strategies/ops/vocabulary*.py``), its operands' shapes and specs, its static arguments, and
what the rules say: the result's spec, or a rejection; a comment gives the working where it is not
plain from the family's docstring.

Mesh: ``MESH`` is 2x4 with axes a (2) and b (4). These tests import no JAX.
"""

import pytest

from conformance.model.layout import MeshModel
from conformance.model.sharding_rules import Accepts, Rejects, sharding_verdict

MESH = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))

REJECT = "reject"
PARAMS = "op, family, shapes, specs, static, eager, expected, reason"


def case(op, family, shapes, specs, expected, static=None, eager=False, reason="", marks=()):
    """A hand-worked case: ``expected`` is the result's spec, or REJECT (``reason``: a word its
    rejection's message must contain)."""
    return pytest.param(op, family, shapes, specs, static or {}, eager, expected, reason, marks=marks,
                        id=f"{op}-{shapes}-{specs}-{static or ''}{'-eager' if eager else ''}")


def check(op, family, shapes, specs, static, eager, expected, reason):
    verdict = sharding_verdict(op, family, shapes, specs, static, MESH, eager=eager)
    if expected == REJECT:
        assert isinstance(verdict, Rejects), verdict
        assert reason.lower() in verdict.reason.lower(), verdict
    else:
        assert verdict == Accepts(tuple(expected)), verdict


# --- sharding_vocabulary: differencing ----------------------------------------------------------------
DIFFERENCING = [
    # x[:, 1:] and x[:, :-1] cut the unsharded columns to 7: the rows keep 'a'
    case("jnp.diff", "differencing", [(4, 8)], [("a", None)], ("a", None), {"axis": 1}),
    # x[1:] has 3 rows, which a's 2 ways do not divide
    case("jnp.diff", "differencing", [(4, 8)], [("a", None)], REJECT, {"axis": 0}, reason="divide"),
]


@pytest.mark.parametrize(PARAMS, DIFFERENCING)
def test_differencing(op, family, shapes, specs, static, eager, expected, reason):
    """jnp.diff slices its axis to n - 1 on both sides, which a sharding of that axis must divide."""
    check(op, family, shapes, specs, static, eager, expected, reason)


CLAMP = [
    # the bounds' shardings do not count: min cut over 'a', x and max replicated give x's P()
    case("lax.clamp", "clamp", [(4,), (4,), (4,)], [("a",), (None,), (None,)], (None,)),
    # x cut over 'b' gives P('b') whatever the bounds
    case("lax.clamp", "clamp", [(4,), (4,), (4,)], [(None,), ("b",), ("a",)], ("b",)),
]


@pytest.mark.parametrize(PARAMS, CLAMP)
def test_clamp(op, family, shapes, specs, static, eager, expected, reason):
    """lax.clamp(min, x, max) is typed as x, whatever its bounds (``_clamp_sharding_rule``)."""
    check(op, family, shapes, specs, static, eager, expected, reason)


# --- sharding_vocabulary_shapes ---------------------------------------------------------------------
JOINS = [
    case("jnp.concat", "joins", [(4, 8), (2, 8)], [(None, "b"), (None, "b")], (None, "b"), {"axis": 0}),
    # axis=None ravels: (2@a, 4) merges to 8@a, as the vector (8@a) is
    case("jnp.concat", "joins", [(2, 4), (8,)], [("a", None), ("a",)], ("a",), {"axis": None}),
    case("jnp.concat", "joins", [(4, 8), (4, 8)], [("a", None), (None, None)], REJECT, {"axis": 1},
         reason="sharded differently"),
    case("jnp.append", "joins", [(4, 8), (4, 2)], [("a", None), ("a", None)], ("a", None), {"axis": 1}),
    # vstack of vectors: atleast_2d puts each 8@b in a row, (None, b)
    case("jnp.vstack", "joins", [(8,), (8,)], [("b",), ("b",)], (None, "b")),
    case("jnp.hstack", "joins", [(4,), (4,)], [("a",), (None,)], REJECT, reason="sharded differently"),
    # dstack: atleast_3d of (m, n) is (m, n, 1), the new dimension unsharded
    case("jnp.dstack", "joins", [(4, 8), (4, 8)], [("a", "b"), ("a", "b")], ("a", "b", None)),
    # column_stack: a vector 4@a becomes a column (4@a, 1)
    case("jnp.column_stack", "joins", [(4,), (4, 2)], [("a",), ("a", None)], ("a", None)),
    case("jnp.block", "joins", [(2, 2), (2, 4), (4, 2), (4, 4)], [("a", None)] * 4, ("a", None)),
    case("jnp.block", "joins", [(2, 2), (2, 4), (4, 2), (4, 4)], [("a", None), (None, None), ("a", None),
                                                                   ("a", None)], REJECT, reason="sharded differently"),
]


@pytest.mark.parametrize(PARAMS, JOINS)
def test_joins(op, family, shapes, specs, static, eager, expected, reason):
    """jnp's joins bring their operands to one rank (ravel, atleast_nd, a column) and concatenate
    them, which needs them sharded identically."""
    check(op, family, shapes, specs, static, eager, expected, reason)


SPLITS = [
    # 8@b in two parts of 4: b's 4 ways divide each
    case("jnp.split", "splits", [(8, 4)], [("b", None)], ("b", None), {"sections": 2, "axis": 0, "part": 0}),
    case("jnp.split", "splits", [(8,)], [("a",)], ("a",), {"sections": (2,), "axis": 0, "part": 1}),
    # array_split of 8 into 3: parts 3, 3, 2, which b's 4 ways do not divide
    case("jnp.array_split", "splits", [(8,)], [("b",)], REJECT, {"sections": 3, "axis": 0, "part": 0},
         reason="divide"),
    case("jnp.hsplit", "splits", [(4, 8)], [(None, "b")], (None, "b"), {"sections": 2, "part": 1}),
    # vsplit splits rows: 4 rows in 4 parts of 1, which a's 2 ways do not divide
    case("jnp.vsplit", "splits", [(4, 8)], [("a", None)], REJECT, {"sections": 4, "part": 0}, reason="divide"),
    case("jnp.dsplit", "splits", [(2, 2, 8)], [(None, None, "b")], (None, None, "b"), {"sections": 2, "part": 0}),
    # dsplit at index 2: parts 2 and 6, which b's 4 ways do not divide
    case("jnp.dsplit", "splits", [(2, 2, 8)], [(None, None, "b")], REJECT, {"sections": (2,), "part": 0},
         reason="divide"),
]


@pytest.mark.parametrize(PARAMS, SPLITS)
def test_splits(op, family, shapes, specs, static, eager, expected, reason):
    """A split keeps its operand's spec; every part's side along a sharded split dimension must be
    one its tiling divides."""
    check(op, family, shapes, specs, static, eager, expected, reason)


UNSTACKING = [
    case("jnp.unstack", "unstacking", [(4, 8)], [(None, "b")], ("b",), {"axis": 0, "part": 1}),
    case("jnp.unstack", "unstacking", [(4, 8)], [(None, "b")], REJECT, {"axis": -1, "part": 0}, reason="sharded"),
]


@pytest.mark.parametrize(PARAMS, UNSTACKING)
def test_unstacking(op, family, shapes, specs, static, eager, expected, reason):
    """unstack drops the unstacked dimension, which must be unsharded."""
    check(op, family, shapes, specs, static, eager, expected, reason)


AXIS_MOVES = [
    case("jnp.matrix_transpose", "axis_moves", [(2, 4, 8)], [("a", None, "b")], ("a", "b", None)),
    case("jnp.permute_dims", "axis_moves", [(2, 4, 8)], [("a", None, "b")], (None, "b", "a"), {"axes": (1, 2, 0)}),
    # moveaxis(x, 0, -1): (4, 8, 2)
    case("jnp.moveaxis", "axis_moves", [(2, 4, 8)], [("a", None, "b")], (None, "b", "a"),
         {"source": 0, "destination": -1}),
    case("jnp.moveaxis", "axis_moves", [(2, 4, 8)], [("a", None, "b")], ("b", "a", None),
         {"source": (2, 0), "destination": (0, 1)}),
    # rollaxis(x, 2, 0): (8, 2, 4); rollaxis(x, 0, 3): axis 0 rolled to before 3, (4, 8, 2)
    case("jnp.rollaxis", "axis_moves", [(2, 4, 8)], [("a", None, "b")], ("b", "a", None), {"axis": 2, "start": 0}),
    case("jnp.rollaxis", "axis_moves", [(2, 4, 8)], [("a", None, "b")], (None, "b", "a"), {"axis": 0, "start": 3}),
    # one quarter turn swaps the two axes; two flip both
    case("jnp.rot90", "axis_moves", [(4, 8)], [("a", "b")], ("b", "a"), {"k": 1, "axes": (0, 1)}),
    case("jnp.rot90", "axis_moves", [(4, 8)], [("a", "b")], ("a", "b"), {"k": -2, "axes": (0, 1)}),
    case("jnp.fliplr", "axis_moves", [(4, 8)], [("a", "b")], ("a", "b")),
    case("jnp.flipud", "axis_moves", [(8,)], [("b",)], ("b",)),
]


@pytest.mark.parametrize(PARAMS, AXIS_MOVES)
def test_axis_moves(op, family, shapes, specs, static, eager, expected, reason):
    """Transposes permute the operand's entries as numpy permutes its axes; flips keep them."""
    check(op, family, shapes, specs, static, eager, expected, reason)


NEW_AXES = [
    case("jnp.atleast_1d", "new_axes", [()], [()], (None,)),
    case("jnp.atleast_2d", "new_axes", [(8,)], [("b",)], (None, "b")),
    # atleast_3d: (n,) to (1, n, 1), (m, n) to (m, n, 1)
    case("jnp.atleast_3d", "new_axes", [(8,)], [("b",)], (None, "b", None)),
    case("jnp.atleast_3d", "new_axes", [(4, 8)], [("a", "b")], ("a", "b", None)),
]


@pytest.mark.parametrize(PARAMS, NEW_AXES)
def test_new_axes(op, family, shapes, specs, static, eager, expected, reason):
    """atleast_nd adds unsharded size-1 dimensions where numpy puts them."""
    check(op, family, shapes, specs, static, eager, expected, reason)


FILLING = [
    case("jnp.full_like", "filling", [(4, 8)], [("a", "b")], ("a", "b")),
    case("jnp.zeros_like", "filling", [(8,)], [(("a", "b"),)], (("a", "b"),)),
]


@pytest.mark.parametrize(PARAMS, FILLING)
def test_filling(op, family, shapes, specs, static, eager, expected, reason):
    """A *_like fill takes its prototype's sharding."""
    check(op, family, shapes, specs, static, eager, expected, reason)


FLATTENING = [
    # (2@a, 4@b) merges to 8@(a, b), the axes in order
    case("jnp.ravel", "flattening", [(2, 4)], [("a", "b")], (("a", "b"),)),
    case("jnp.ravel", "flattening", [(4, 8)], [("b", None)], ("b",)),
    # a sharded minor dimension cannot merge
    case("jnp.ravel", "flattening", [(4, 2)], [(None, "a")], REJECT, reason="minor"),
]


@pytest.mark.parametrize(PARAMS, FLATTENING)
def test_flattening(op, family, shapes, specs, static, eager, expected, reason):
    """ravel is a reshape to one dimension: it merges only dimensions sharded in major position."""
    check(op, family, shapes, specs, static, eager, expected, reason)


TILING = [
    case("jnp.tile", "tiling", [(4, 8)], [("a", None)], ("a", None), {"reps": (1, 2)}),
    # reps longer than the rank: the operand gets a leading unsharded dimension, the one tiled twice
    case("jnp.tile", "tiling", [(8,)], [("b",)], (None, "b"), {"reps": (2, 1)}),
    case("jnp.tile", "tiling", [(8,)], [("b",)], REJECT, {"reps": 2}, reason="tiled"),
]


@pytest.mark.parametrize(PARAMS, TILING)
def test_tiling(op, family, shapes, specs, static, eager, expected, reason):
    """jnp.tile keeps its operand's spec; a dimension repeated more than once must be unsharded."""
    check(op, family, shapes, specs, static, eager, expected, reason)


RESIZING = [
    # ravel 8@b, tile once, slice to 4 (b divides it), reshape (4,) to (4,)
    case("jnp.resize", "resizing", [(8,)], [("b",)], ("b",), {"new_shape": (4,)}),
    # ravel (2@a, 4) to 8@a, slice to 4@a, split to (2, 2): a's 2 ways go to the first dimension
    case("jnp.resize", "resizing", [(2, 4)], [("a", None)], ("a", None), {"new_shape": (2, 2)}),
    # growing 8@b to 16 tiles the sharded vector twice
    case("jnp.resize", "resizing", [(8,)], [("b",)], REJECT, {"new_shape": (16,)}, reason="tiled"),
    # 8@b sliced to 2: b's 4 ways do not divide it
    case("jnp.resize", "resizing", [(8,)], [("b",)], REJECT, {"new_shape": (2,)}, reason="divide"),
]


@pytest.mark.parametrize(PARAMS, RESIZING)
def test_resizing(op, family, shapes, specs, static, eager, expected, reason):
    """jnp.resize ravels, tiles, slices and reshapes, each by its own rule."""
    check(op, family, shapes, specs, static, eager, expected, reason)


DELETING = [
    # deleting row 1 slices the unsharded rows: the columns keep b (an eager gather leaves them too)
    case("jnp.delete", "deleting", [(4, 8)], [(None, "b")], (None, "b"), {"index": 1, "axis": 0}, eager=True),
    case("jnp.delete", "deleting", [(4, 8)], [(None, "b")], (None, "b"), {"index": 1, "axis": 0}),
    # eagerly, x[1:] of 8@b is a gather of a sharded dimension
    case("jnp.delete", "deleting", [(8,)], [("b",)], REJECT, {"index": 0, "axis": 0}, eager=True),
    # under jit, x[1:] of 8@b is a slice of 7, which b's 4 ways do not divide
    case("jnp.delete", "deleting", [(8,)], [("b",)], REJECT, {"index": 0, "axis": None}, reason="divide"),
]


@pytest.mark.parametrize(PARAMS, DELETING)
def test_deleting(op, family, shapes, specs, static, eager, expected, reason):
    """jnp.delete concatenates the slices before and after the position (raveled over no axis)."""
    check(op, family, shapes, specs, static, eager, expected, reason)


INSERTING = [
    case("jnp.insert", "inserting", [(4, 8)], [(None, None)], (None, None), {"index": 1, "value": 0, "axis": 0}),
    case("jnp.insert", "inserting", [(4, 8)], [("a", None)], REJECT, {"index": 1, "value": 0, "axis": 1},
         reason="scattered"),
]


@pytest.mark.parametrize(PARAMS, INSERTING)
def test_inserting(op, family, shapes, specs, static, eager, expected, reason):
    """jnp.insert scatters its operand into unsharded zeros: a sharded operand rejects."""
    check(op, family, shapes, specs, static, eager, expected, reason)


DIAGONALS = [
    # the diagonal of the last two (unsharded) dimensions comes last: (2@a, 4)
    case("jnp.diagonal", "diagonals", [(2, 4, 4)], [("a", None, None)], ("a", None),
         {"offset": 0, "axis1": 1, "axis2": 2}),
    case("jnp.diagonal", "diagonals", [(4, 8)], [("a", None)], REJECT, {"offset": 1, "axis1": 0, "axis2": 1},
         reason="sharded"),
    # diag of a vector: pad to n + |k|, then where(eye, v[:, None], 0): the vector's entry on the rows
    case("jnp.diag", "diagonals", [(4,)], [("a",)], ("a", None), {"k": 0}),
    case("jnp.diag", "diagonals", [(4,)], [("a",)], REJECT, {"k": 1}, reason="divide"),
    case("jnp.diag", "diagonals", [(4, 4)], [(None, "b")], REJECT, {"k": 0}, reason="sharded"),
    case("jnp.diagflat", "diagonals", [(2, 4)], [(None, None)], (None, None), {"k": 0}),
    case("jnp.diagflat", "diagonals", [(2, 4)], [("a", None)], REJECT, {"k": 0}, reason="scattered"),
    # trace of (2@a, 4, 4) over the last two: the unsharded eye broadcasts against it, summed out to 2@a
    case("jnp.trace", "diagonals", [(2, 4, 4)], [("a", None, None)], ("a",), {"offset": 0, "axis1": 1, "axis2": 2}),
    # of a matrix: select(eye unsharded, x, 0) of one shape needs x unsharded like the mask
    case("jnp.trace", "diagonals", [(4, 4)], [("a", None)], REJECT, {"offset": 0, "axis1": 0, "axis2": 1},
         reason="predicate"),
    case("jnp.fill_diagonal", "diagonals", [(4, 4)], [(None, None)], (None, None), {"val": 3}),
    case("jnp.fill_diagonal", "diagonals", [(4, 4)], [(None, "b")], REJECT, {"val": 3}, reason="scatter"),
]


@pytest.mark.parametrize(PARAMS, DIAGONALS)
def test_diagonals(op, family, shapes, specs, static, eager, expected, reason):
    """A diagonal gathers from both its dimensions, which must be unsharded; diag of a vector pads
    it (the resize rule) into its rows; diagflat and fill_diagonal scatter into unsharded zeros or
    every dimension."""
    check(op, family, shapes, specs, static, eager, expected, reason)


UNWRAPPING = [
    case("jnp.unwrap", "unwrapping", [(4, 8)], [("a", None)], ("a", None), {"axis": 1}),
    # along 4@a: diff's slices of 3 (and the first element, 1) are sides a does not divide
    case("jnp.unwrap", "unwrapping", [(4, 8)], [("a", None)], REJECT, {"axis": 0}, reason="divide"),
]


@pytest.mark.parametrize(PARAMS, UNWRAPPING)
def test_unwrapping(op, family, shapes, specs, static, eager, expected, reason):
    """jnp.unwrap slices and cumsums along its axis: a sharded axis rejects."""
    check(op, family, shapes, specs, static, eager, expected, reason)


DIFFERENCES = [
    case("jnp.gradient", "differences", [(4, 8)], [("a", None)], ("a", None), {"axis": 1}),
    # the edges are one-element slices, which a's 2 ways do not divide
    case("jnp.gradient", "differences", [(8,)], [("a",)], REJECT, {"axis": 0}, reason="divide"),
]


@pytest.mark.parametrize(PARAMS, DIFFERENCES)
def test_differences(op, family, shapes, specs, static, eager, expected, reason):
    """jnp.gradient slices edges of one element and inner differences of n - 2 along its axis."""
    check(op, family, shapes, specs, static, eager, expected, reason)


BIT_PACKING = [
    # along the unsharded last axis: (4@a, 8) grouped (4@a, 1, 8), the bits summed out: (4@a, 1)
    case("jnp.packbits", "bit_packing", [(4, 8)], [("a", None)], ("a", None), {"axis": 1, "bitorder": "big"}),
    # 4@b padded to 8 (b divides it), grouped (1, 8@b), bits summed: (1,) unsharded, kept rows 4@a
    case("jnp.packbits", "bit_packing", [(4, 4)], [("a", "b")], ("a", None), {"axis": -1, "bitorder": "little"}),
    # 16@b split into (2, 8): b's 4 ways do not divide the 2 bytes
    case("jnp.packbits", "bit_packing", [(16,)], [("b",)], REJECT, {"axis": 0, "bitorder": "big"}, reason="divide"),
    # unpackbits: (4@a, 2, 8 bits) merged to (4@a, 16)
    case("jnp.unpackbits", "bit_packing", [(4, 2)], [("a", None)], ("a", None),
         {"axis": 1, "count": None, "bitorder": "big"}),
    # (2, 4@b, 8 bits) merges to 32@b; count 8 slices it to 8 (b divides it)
    case("jnp.unpackbits", "bit_packing", [(2, 4)], [(None, "b")], (None, "b"),
         {"axis": 1, "count": 8, "bitorder": "big"}),
    case("jnp.unpackbits", "bit_packing", [(2, 4)], [(None, "b")], REJECT,
         {"axis": 1, "count": 6, "bitorder": "big"}, reason="divide"),
]


@pytest.mark.parametrize(PARAMS, BIT_PACKING)
def test_bit_packing(op, family, shapes, specs, static, eager, expected, reason):
    """packbits pads and splits the packed axis into bytes of 8 bits; unpackbits merges the bits
    into it and slices to count: each by the resize and reshape rules."""
    check(op, family, shapes, specs, static, eager, expected, reason)


GRIDS = [
    # "xy": X is (len(y), len(x)), x along the columns
    case("jnp.meshgrid", "grids", [(4,), (8,)], [("a",), ("b",)], (None, "a"),
         {"indexing": "xy", "sparse": False, "part": 0}),
    case("jnp.meshgrid", "grids", [(4,), (8,)], [("a",), ("b",)], ("b", None),
         {"indexing": "xy", "sparse": False, "part": 1}),
    case("jnp.meshgrid", "grids", [(4,), (8,)], [("a",), ("b",)], ("a", None),
         {"indexing": "ij", "sparse": True, "part": 0}),
    case("jnp.ix_", "grids", [(4,), (8,)], [("a",), ("b",)], (None, "b"), {"part": 1}),
]


@pytest.mark.parametrize(PARAMS, GRIDS)
def test_grids(op, family, shapes, specs, static, eager, expected, reason):
    """Each part of a grid puts its vector's entry on the dimension it runs along."""
    check(op, family, shapes, specs, static, eager, expected, reason)


BROADCAST_PARTS = [
    case("jnp.broadcast_arrays", "broadcast_parts", [(4, 8), (8,)], [("a", None), ("b",)], ("a", "b"), {"part": 1}),
    # one shape: each comes back as it is
    case("jnp.broadcast_arrays", "broadcast_parts", [(4, 8), (4, 8)], [("a", None), (None, "b")], (None, "b"),
         {"part": 1}),
    case("jnp.broadcast_arrays", "broadcast_parts", [(4, 8), (8,)], [("a", None), ("a",)], REJECT, {"part": 0},
         reason="mesh axis"),
]


@pytest.mark.parametrize(PARAMS, BROADCAST_PARTS)
def test_broadcast_parts(op, family, shapes, specs, static, eager, expected, reason):
    """broadcast_arrays of different shapes gives every part the consensus spec."""
    check(op, family, shapes, specs, static, eager, expected, reason)


# --- sharding_vocabulary_lax_structure --------------------------------------------------------------
ASSOCIATIVE_SCAN = [
    case("lax.associative_scan", "associative_scan", [(4, 8)], [("a", None)], ("a", None),
         {"axis": 1, "reverse": False}),
    case("lax.associative_scan:maximum", "associative_scan", [(8, 4)], [(None, "b")], (None, "b"),
         {"axis": 0, "reverse": True}),
    # halving 8@a: 4, 2, then a pair sliced to 1, which a's 2 ways do not divide
    case("lax.associative_scan", "associative_scan", [(8,)], [("a",)], REJECT, {"axis": 0, "reverse": False},
         reason="divide"),
]


@pytest.mark.parametrize(PARAMS, ASSOCIATIVE_SCAN)
def test_associative_scan(op, family, shapes, specs, static, eager, expected, reason):
    """associative_scan keeps its operand's spec; its halving slices reach one element, so a sharded
    scanned dimension rejects."""
    check(op, family, shapes, specs, static, eager, expected, reason)


REDUCE_WINDOW = [
    # (4@a, 8) in 2x2 windows, stride 2: (2@a, 4)
    case("lax.reduce_window", "reduce_window", [(4, 8)], [("a", None)], ("a", None),
         {"window": (2, 2), "strides": (2, 2), "padding": "VALID"}),
    case("lax.reduce_window:max", "reduce_window", [(4, 8)], [("a", "b")], ("a", "b"),
         {"window": (3, 3), "strides": (1, 1), "padding": "SAME"}),
    # 8@b in windows of 3: 6, which b's 4 ways do not divide
    case("lax.reduce_window", "reduce_window", [(4, 8)], [(None, "b")], REJECT,
         {"window": (1, 3), "strides": (1, 1), "padding": "VALID"}, reason="divide"),
]


@pytest.mark.parametrize(PARAMS, REDUCE_WINDOW)
def test_reduce_window(op, family, shapes, specs, static, eager, expected, reason):
    """reduce_window keeps its operand's spec where the tiling divides the windows' count."""
    check(op, family, shapes, specs, static, eager, expected, reason)


LAX_SHAPE = [
    case("lax.broadcast", "lax_shape", [(4,)], [("a",)], (None, "a"), {"sizes": (2,)}),
    case("lax.broadcast_in_dim", "lax_shape", [(4,)], [("a",)], ("a", None), {"shape": (4, 8), "dims": (0,)}),
    case("lax.broadcast_to_rank", "lax_shape", [(8,)], [("b",)], (None, None, "b"), {"rank": 3}),
    # (2@a, 4@b, 8) collapsed over 0:2: 8@(a, b), 8
    case("lax.collapse", "lax_shape", [(2, 4, 8)], [("a", "b", None)], (("a", "b"), None), {"start": 0, "stop": 2}),
    case("lax.collapse", "lax_shape", [(2, 4, 8)], [(None, "b", None)], REJECT, {"start": 0, "stop": 2},
         reason="minor"),
    case("lax.expand_dims", "lax_shape", [(4, 8)], [("a", "b")], (None, "a", "b"), {"dims": (0,)}),
    case("lax.reshape", "lax_shape", [(8,)], [("a",)], ("a", None), {"shape": (2, 4)}),
    # with dimensions: merging (2, 4) after a transpose is typed only when neither is sharded
    case("lax.reshape:dimensions", "lax_shape", [(2, 4, 8)], [(None, None, "b")], (None, "b"),
         {"shape": (8, 8), "dimensions": (1, 0, 2)}),
    case("lax.reshape:dimensions", "lax_shape", [(2, 4)], [("a", None)], REJECT,
         {"shape": (8,), "dimensions": (1, 0)}, reason="merges"),
    case("lax.rev", "lax_shape", [(4, 8)], [("a", "b")], ("a", "b"), {"dims": (0,)}),
    case("lax.squeeze", "lax_shape", [(4, 1, 8)], [("a", None, "b")], ("a", "b"), {"axis": (1,)}),
    case("lax.transpose", "lax_shape", [(2, 4, 8)], [("a", None, "b")], ("b", "a", None), {"axes": (2, 0, 1)}),
    case("lax.tile", "lax_shape", [(4, 8)], [("a", None)], ("a", None), {"reps": (1, 2)}),
    case("lax.tile", "lax_shape", [(4, 8)], [("a", None)], REJECT, {"reps": (2, 1)}, reason="tiled"),
    case("lax.full_like", "lax_shape", [(4, 8)], [("a", "b")], ("a", "b")),
]


@pytest.mark.parametrize(PARAMS, LAX_SHAPE)
def test_lax_shape(op, family, shapes, specs, static, eager, expected, reason):
    """lax's shape functions: new dimensions unsharded, reshapes by the reshape rule (with
    dimensions, no sharded dimension split or merged), tile's repeated dimensions unsharded."""
    check(op, family, shapes, specs, static, eager, expected, reason)


LAX_JOINING = [
    case("lax.concatenate", "lax_joining", [(4, 8), (4, 8)], [("a", None), ("a", None)], ("a", None), {"axis": 1}),
    case("lax.concatenate", "lax_joining", [(4, 8), (4, 8)], [("a", None), ("b", None)], REJECT, {"axis": 1},
         reason="sharded differently"),
    case("lax.stack", "lax_joining", [(8,), (8,)], [("b",), ("b",)], ("b", None), {"axis": 1}),
    case("lax.split", "lax_joining", [(8,)], [("b",)], ("b",), {"sizes": (4, 4), "axis": 0}),
    case("lax.split:last", "lax_joining", [(8,)], [("b",)], REJECT, {"sizes": (2, 6), "axis": 0}, reason="divide"),
]


@pytest.mark.parametrize(PARAMS, LAX_JOINING)
def test_lax_joining(op, family, shapes, specs, static, eager, expected, reason):
    """concatenate and stack need operands sharded identically; split's parts keep the spec where
    the tiling divides every part."""
    check(op, family, shapes, specs, static, eager, expected, reason)


LAX_SLICING = [
    case("lax.slice", "lax_slicing", [(4, 8)], [("a", "b")], ("a", "b"),
         {"start": (0, 0), "limit": (2, 8), "strides": (1, 1)}),
    # 8@b, every second: 4 (b divides it)
    case("lax.slice", "lax_slicing", [(8,)], [("b",)], ("b",), {"start": (0,), "limit": (8,), "strides": (2,)}),
    case("lax.slice", "lax_slicing", [(4, 8)], [("a", "b")], REJECT,
         {"start": (0, 0), "limit": (4, 6), "strides": (1, 1)}, reason="divide"),
    case("lax.slice_in_dim", "lax_slicing", [(8,)], [("a",)], ("a",),
         {"start": 0, "limit": 4, "stride": 1, "axis": 0}),
    case("lax.slice_in_dim", "lax_slicing", [(8,)], [("a",)], REJECT,
         {"start": 1, "limit": None, "stride": 1, "axis": 0}, reason="divide"),
    case("lax.index_in_dim", "lax_slicing", [(4, 8)], [(None, "b")], ("b",),
         {"index": 1, "axis": 0, "keepdims": False}),
    case("lax.index_in_dim", "lax_slicing", [(4, 8)], [(None, "b")], (None, "b"),
         {"index": 1, "axis": 0, "keepdims": True}),
    case("lax.index_in_dim", "lax_slicing", [(4, 8)], [("a", "b")], REJECT, {"index": 0, "axis": 0, "keepdims": True},
         reason="divide"),
    # unstack along dimension 1 of 4@a x 8: each piece 4@a
    case("lax.unstack", "lax_slicing", [(4, 8)], [("a", None)], ("a",), {"axis": 1, "index": 0}),
    case("lax.unstack", "lax_slicing", [(4, 8, 2)], [(None, "b")], ("b", None), {"axis": -3, "index": -1}),
    case("lax.unstack", "lax_slicing", [(4, 8)], [(None, "b")], REJECT, {"axis": 1, "index": 0},
         reason="unstacked dimension"),
]


@pytest.mark.parametrize(PARAMS, LAX_SLICING)
def test_lax_slicing(op, family, shapes, specs, static, eager, expected, reason):
    """A static slice keeps the spec where the tiling divides each sliced side; index_in_dim
    without keepdims squeezes the indexed dimension; unstack drops the unstacked dimension, which
    must not be sharded."""
    check(op, family, shapes, specs, static, eager, expected, reason)


LAX_DYNAMIC = [
    case("lax.dynamic_slice_in_dim", "lax_dynamic", [(8, 4), ()], [("a", None), ()], ("a", None),
         {"size": 4, "axis": 0}),
    case("lax.dynamic_slice_in_dim", "lax_dynamic", [(8, 4), ()], [("a", None), ()], REJECT,
         {"size": 3, "axis": 0}, reason="divide"),
    case("lax.dynamic_index_in_dim", "lax_dynamic", [(4, 8), ()], [(None, "b"), ()], ("b",),
         {"axis": 0, "keepdims": False}),
    case("lax.dynamic_update_slice_in_dim", "lax_dynamic", [(4, 8), (2, 8), ()], [("a", None), ("a", None), ()],
         ("a", None), {"axis": 0}),
    case("lax.dynamic_update_slice_in_dim", "lax_dynamic", [(4, 8), (2, 8), ()], [("a", None), (None, None), ()],
         REJECT, {"axis": 0}, reason="sharded differently"),
    # the update 8@b given a leading size-1 dimension: (1, 8@b), as the operand's (4, 8@b)
    case("lax.dynamic_update_index_in_dim", "lax_dynamic", [(4, 8), (8,), ()], [(None, "b"), ("b",), ()],
         (None, "b"), {"axis": 0}),
    case("lax.dynamic_update_index_in_dim", "lax_dynamic", [(4, 8), (8,), ()], [(None, "b"), (None,), ()],
         REJECT, {"axis": 0}, reason="sharded differently"),
]


@pytest.mark.parametrize(PARAMS, LAX_DYNAMIC)
def test_lax_dynamic(op, family, shapes, specs, static, eager, expected, reason):
    """dynamic_slice keeps the spec where the tiling divides the slice size; dynamic_update_slice
    needs the update sharded as the operand."""
    check(op, family, shapes, specs, static, eager, expected, reason)


LAX_GATHER = [
    # rows gathered from (4, 8@b) by 3 indices: (3, 8@b)
    case("lax.gather", "lax_gather", [(4, 8), (3, 1)], [(None, "b"), (None, None)], (None, "b"),
         {"axis": 0, "mode": "clip"}),
    case("lax.gather", "lax_gather", [(4, 8), (3, 1)], [("a", None), (None, None)], REJECT,
         {"axis": 0, "mode": "clip"}, reason="indexed dimension"),
    # windows of 2 columns of (8@a, 4): (3, 8@a, 2)
    case("lax.gather:window", "lax_gather", [(8, 4), (3, 1)], [("a", None), (None, None)], (None, "a", None),
         {"axis": 1, "size": 2, "mode": "clip"}),
    # index_take of the columns: (3, 4@a), the index batch first
    case("lax.index_take", "lax_gather", [(4, 8), (3,)], [("a", None), (None,)], (None, "a"), {"axes": (1,)}),
    case("lax.index_take", "lax_gather", [(4, 8), (4,)], [(None, None), ("a",)], REJECT, {"axes": (1,)},
         reason="indices"),
]


@pytest.mark.parametrize(PARAMS, LAX_GATHER)
def test_lax_gather(op, family, shapes, specs, static, eager, expected, reason):
    """A gather needs its indexed dimension unsharded and its indices unsharded; the offset
    dimensions keep the operand's entries."""
    check(op, family, shapes, specs, static, eager, expected, reason)


LAX_SCATTER = [
    case("lax.scatter_add", "lax_scatter", [(4, 8), (3, 1), (3, 8)], [(None, "b"), (None, None), (None, "b")],
         (None, "b"), {"axis": 0, "mode": "clip", "unique": False}),
    # an unsharded update window against the operand's 8@b: neither alike nor both unsharded
    case("lax.scatter", "lax_scatter", [(4, 8), (3, 1), (3, 8)], [(None, "b"), (None, None), (None, None)], REJECT,
         {"axis": 0, "mode": "clip", "unique": True}, reason="does not match"),
    case("lax.scatter_max", "lax_scatter", [(4, 8), (3, 1), (3, 8)], [("a", None), (None, None), (None, None)],
         REJECT, {"axis": 0, "mode": "clip", "unique": False}, reason="indexed into"),
    case("lax.scatter_apply", "lax_scatter", [(4, 8), (3, 1)], [(None, None), (None, None)], (None, None),
         {"axis": 0, "mode": "clip", "unique": False}),
    # scatter_apply's own updates are unsharded: an operand window 8@b does not match them
    case("lax.scatter_apply", "lax_scatter", [(4, 8), (3, 1)], [(None, "b"), (None, None)], REJECT,
         {"axis": 0, "mode": "clip", "unique": False}, reason="does not match"),
]


@pytest.mark.parametrize(PARAMS, LAX_SCATTER)
def test_lax_scatter(op, family, shapes, specs, static, eager, expected, reason):
    """A scatter keeps the operand's spec: its indexed dimension unsharded, each update window
    dimension sharded as the operand's or both unsharded."""
    check(op, family, shapes, specs, static, eager, expected, reason)


LAX_SORTING = [
    case("lax.sort", "lax_sorting", [(4, 8)], [("a", None)], ("a", None), {"dimension": 1, "is_stable": True}),
    case("lax.sort", "lax_sorting", [(4, 8)], [("a", None)], REJECT, {"dimension": 0, "is_stable": False},
         reason="sorted dimension"),
    # jnp.stack of the sorted operands: a new leading unsharded dimension
    case("lax.sort:operands", "lax_sorting", [(4, 8), (4, 8)], [("a", None), ("a", None)], (None, "a", None),
         {"dimension": 1, "num_keys": 1}),
    case("lax.sort:operands", "lax_sorting", [(4, 8), (4, 8)], [("a", None), (None, None)], REJECT,
         {"dimension": 1, "num_keys": 1}, reason="sharded differently"),
    case("lax.sort_key_val:values", "lax_sorting", [(4, 8), (4, 8)], [("a", None), ("a", None)], ("a", None),
         {"dimension": -1}),
    case("lax.top_k", "lax_sorting", [(4, 8)], [("a", None)], ("a", None), {"k": 2, "axis": -1}),
    case("lax.approx_max_k:indices", "lax_sorting", [(4, 8)], [(None, "b")], REJECT, {"k": 2, "axis": 1},
         reason="sharded"),
]


@pytest.mark.parametrize(PARAMS, LAX_SORTING)
def test_lax_sorting(op, family, shapes, specs, static, eager, expected, reason):
    """Sorts need their operands sharded identically and unsharded along the sorted dimension;
    top_k likewise along the dimension it reduces."""
    check(op, family, shapes, specs, static, eager, expected, reason)


LAX_SELECT_N = [
    case("lax.select_n", "lax_select_n", [(4,), (4,), (4,)], [("a",), ("a",), ("a",)], ("a",)),
    case("lax.select_n:three", "lax_select_n", [(), (4,), (4,), (4,)], [(), ("a",), ("a",), ("a",)], ("a",)),
    case("lax.select_n", "lax_select_n", [(4,), (4,), (4,)], [(None,), ("a",), ("a",)], REJECT, reason="predicate"),
]


@pytest.mark.parametrize(PARAMS, LAX_SELECT_N)
def test_lax_select_n(op, family, shapes, specs, static, eager, expected, reason):
    """select_n needs its cases, and a non-scalar predicate, sharded identically."""
    check(op, family, shapes, specs, static, eager, expected, reason)


# --- sharding_vocabulary_linalg ---------------------------------------------------------------------
DOT_GENERAL = [
    case("jnp.matmul", "dot_general", [(4, 8), (8, 2)], [("a", None), (None, None)], ("a", None)),
    case("lax.batch_matmul", "dot_general", [(2, 4, 8), (2, 8, 4)], [("a", None, None), ("a", None, None)],
         ("a", None, None)),
    # batch dimensions sharded on one side only: not identical
    case("lax.batch_matmul", "dot_general", [(2, 4, 8), (2, 8, 4)], [("a", None, None), (None, None, None)],
         REJECT, reason="batch"),
    # inner contracts the last dimensions: (4@a) x (2@b) free
    case("jnp.inner", "dot_general", [(4, 8), (2, 8)], [("a", None), ("b", None)], ("a", "b")),
    case("jnp.inner", "dot_general", [(4, 8), (2, 8)], [(None, "b"), (None, "b")], REJECT, reason="ambiguous"),
    case("jnp.inner", "dot_general", [(), (4,)], [(), ("a",)], ("a",)),
    case("jnp.tensordot", "dot_general", [(4, 8), (8, 4)], [("a", None), (None, "b")], ("a", "b"), {"axes": 1}),
    case("jnp.tensordot", "dot_general", [(4, 8), (4, 2)], [(None, "b"), (None, None)], ("b", None),
         {"axes": ((0,), (0,))}),
    case("lax.dot", "dot_general", [(4, 8), (8,)], [("a", None), (None,)], ("a",)),
    case("lax.dot", "dot_general", [(4, 8), (8,)], [(None, "b"), ("a",)], REJECT, reason="mismatched"),
    case("lax.dot_general", "dot_general", [(4, 8), (8, 4)], [("a", None), (None, "b")], ("a", "b"),
         {"dimension_numbers": (((1,), (0,)), ((), ()))}),
    # a on both free dimensions
    case("lax.dot_general", "dot_general", [(4, 8), (8, 4)], [("a", None), (None, "a")], REJECT,
         {"dimension_numbers": (((1,), (0,)), ((), ()))}, reason="mesh axis"),
]


@pytest.mark.parametrize(PARAMS, DOT_GENERAL)
def test_dot_general(op, family, shapes, specs, static, eager, expected, reason):
    """One dot_general: batch dimensions sharded identically, no contracting dimension sharded on
    both sides, free dimensions keeping their entries with no mesh axis on two."""
    check(op, family, shapes, specs, static, eager, expected, reason)


OUTER = [
    case("jnp.outer", "outer", [(4,), (8,)], [("a",), ("b",)], ("a", "b")),
    # (2@a, 4) ravels to 8@a
    case("jnp.outer", "outer", [(2, 4), (8,)], [("a", None), (None,)], ("a", None)),
    case("jnp.outer", "outer", [(4,), (8,)], [("a",), ("a",)], REJECT, reason="mesh axis"),
]


@pytest.mark.parametrize(PARAMS, OUTER)
def test_outer(op, family, shapes, specs, static, eager, expected, reason):
    """outer broadcasts the raveled operands as a column and a row."""
    check(op, family, shapes, specs, static, eager, expected, reason)


VDOT = [
    # raveled 8@a and 8 unsharded: contracted sharded on one side only, a scalar
    case("jnp.vdot", "vdot", [(4, 8), (4, 8)], [("a", None), (None, None)], ()),
    case("jnp.vdot", "vdot", [(4, 8), (4, 8)], [("a", None), ("a", None)], REJECT, reason="contracting"),
]


@pytest.mark.parametrize(PARAMS, VDOT)
def test_vdot(op, family, shapes, specs, static, eager, expected, reason):
    """vdot contracts the raveled operands: sharded on both sides it rejects."""
    check(op, family, shapes, specs, static, eager, expected, reason)


KRON = [
    # vectors: (2@a, 1) * (1, 4) is (2@a, 4), merged to 8@a (index i * 4 + k: a's major)
    case("jnp.kron", "kron", [(2,), (4,)], [("a",), (None,)], ("a",)),
    # (2, 1) * (1, 4@b) is (2, 4@b): b in the minor position of the merge
    case("jnp.kron", "kron", [(2,), (4,)], [(None,), ("b",)], REJECT, reason="minor"),
    # matrices: (2@a, 4, 2, 4) to (8, 8) merges two groups in one reshape, which the rule does not type
    case("jnp.kron", "kron", [(2, 2), (4, 4)], [("a", None), (None, None)], REJECT, reason="merge"),
    case("jnp.kron", "kron", [(2, 2), (4, 4)], [(None, None), (None, None)], (None, None)),
]


@pytest.mark.parametrize(PARAMS, KRON)
def test_kron(op, family, shapes, specs, static, eager, expected, reason):
    """kron multiplies interleaved operands and merges each pair in one reshape: only the first
    operand's entries survive a merge (in major position), and two merges at once reject."""
    check(op, family, shapes, specs, static, eager, expected, reason)


CONVOLUTION = [
    case("jnp.convolve", "convolution", [(8,), (2,)], [("a",), (None,)], ("a",), {"mode": "same"}),
    # "valid": 8 - 2 + 1 = 7, which a's 2 ways do not divide
    case("jnp.convolve", "convolution", [(8,), (2,)], [("a",), (None,)], REJECT, {"mode": "valid"}, reason="divide"),
    case("jnp.convolve", "convolution", [(8,), (2,)], [(None,), ("a",)], REJECT, {"mode": "same"},
         reason="replicated kernel"),
    # the shorter operand first: swapped, the longer is the input
    case("jnp.correlate", "convolution", [(4,), (8,)], [(None,), ("b",)], ("b",), {"mode": "same"}),
    # NCHW (2@a, 4, 8, 8) with an OIHW (2, 4, 3, 3) kernel, SAME: (2@a, 2, 8, 8)
    case("lax.conv", "convolution", [(2, 4, 8, 8), (2, 4, 3, 3)], [("a", None, None, None), ()],
         ("a", None, None, None), {"window_strides": (1, 1), "padding": "SAME"}),
    case("lax.conv", "convolution", [(2, 4, 8, 8), (2, 4, 3, 3)], [(None, "a", None, None), ()], REJECT,
         {"window_strides": (1, 1), "padding": "SAME"}, reason="feature"),
    # VALID windows of 3 over 8@b: 6, which b's 4 ways do not divide
    case("lax.conv", "convolution", [(2, 4, 8, 8), (2, 4, 3, 3)], [(None, None, "b", None), ()], REJECT,
         {"window_strides": (1, 1), "padding": "VALID"}, reason="divide"),
    # patches of 2x2 of (2@a, 2, 4, 4), VALID: (2@a, 8, 3, 3)
    case("lax.conv_general_dilated_patches", "convolution", [(2, 2, 4, 4)], [("a", None, None, None)],
         ("a", None, None, None), {"filter_shape": (2, 2), "window_strides": (1, 1), "padding": "VALID"}),
]


@pytest.mark.parametrize(PARAMS, CONVOLUTION)
def test_convolution(op, family, shapes, specs, static, eager, expected, reason):
    """conv_general_dilated needs a replicated kernel and an unsharded input feature dimension; the
    result keeps the input's spec where the tiling divides the new sizes."""
    check(op, family, shapes, specs, static, eager, expected, reason)


STATISTICS = [
    case("jnp.cov", "statistics", [(4, 8)], [(None, None)], (None, None), {"rowvar": True, "bias": False}),
    # one variable: a scalar
    case("jnp.cov", "statistics", [(8,)], [(None,)], (), {"rowvar": True, "bias": True}),
    case("jnp.corrcoef", "statistics", [(4, 8)], [(None, "b")], REJECT, {"rowvar": True}, reason="sharded"),
]


@pytest.mark.parametrize(PARAMS, STATISTICS)
def test_statistics(op, family, shapes, specs, static, eager, expected, reason):
    """cov contracts X with X.T: any sharded dimension rejects; the result is unsharded."""
    check(op, family, shapes, specs, static, eager, expected, reason)


SUMMED_OVER_AXES = [
    case("jnp.apply_over_axes", "summed_over_axes", [(4, 8)], [("a", "b")], (None, "b"), {"axes": [0]}),
    case("jnp.apply_over_axes", "summed_over_axes", [(2, 4, 8)], [("a", None, "b")], ("a", None, None),
         {"axes": [-1, 1]}),
]


@pytest.mark.parametrize(PARAMS, SUMMED_OVER_AXES)
def test_summed_over_axes(op, family, shapes, specs, static, eager, expected, reason):
    """apply_over_axes(sum) leaves each summed dimension in place, of size 1 and unsharded."""
    check(op, family, shapes, specs, static, eager, expected, reason)


FFT = [
    case("lax.fft", "fft", [(4, 8)], [("a", None)], ("a", None), {"fft_type": "FFT", "fft_lengths": (8,)}),
    # fft_p has no sharding rule: the spec is kept whatever the sizes (RFFT of 8: 5)
    case("lax.fft:rfft", "fft", [(4, 8)], [(None, "b")], (None, "b"), {"fft_type": "RFFT", "fft_lengths": (8,)}),
]


@pytest.mark.parametrize(PARAMS, FFT)
def test_fft(op, family, shapes, specs, static, eager, expected, reason):
    """lax.fft keeps its operand's spec."""
    check(op, family, shapes, specs, static, eager, expected, reason)


CROSS = [
    # 2-vectors along the unsharded last axis: a scalar per row, 4@a
    case("jnp.cross:axis", "cross", [(4, 2), (4, 2)], [("a", None), ("a", None)], ("a",), {"axis": -1}),
    # 3-vectors: the components stacked back as the last dimension, unsharded
    case("jnp.cross", "cross", [(4, 3), (4, 3)], [("a", None), ("a", None)], ("a", None),
         {"axisa": -1, "axisb": -1, "axisc": -1}),
    case("jnp.cross", "cross", [(3, 4), (4, 3)], [(None, "b"), ("b", None)], (None, "b"),
         {"axisa": 0, "axisb": -1, "axisc": 0}),
    # x[..., i] of a vector axis 2@a: one element, which a's 2 ways do not divide
    case("jnp.cross:axis", "cross", [(4, 2), (4, 2)], [(None, "a"), (None, None)], REJECT, {"axis": -1},
         reason="divide"),
]


@pytest.mark.parametrize(PARAMS, CROSS)
def test_cross(op, family, shapes, specs, static, eager, expected, reason):
    """cross takes components of the vector axes (one-element slices), broadcasts the other
    dimensions together and stacks 3-vectors on a new unsharded axis."""
    check(op, family, shapes, specs, static, eager, expected, reason)


POLYNOMIAL = [
    case("jnp.poly", "polynomial", [(4,)], [(None,)], (None,)),
    case("jnp.poly", "polynomial", [(4,)], [("a",)], REJECT, reason="divide"),
    # p[:-2] of 8@a: 6 (a divides it)
    case("jnp.polyder", "polynomial", [(8,)], [("a",)], ("a",), {"m": 2}),
    case("jnp.polyder", "polynomial", [(8,)], [("a",)], REJECT, {"m": 1}, reason="divide"),
    case("jnp.polyint", "polynomial", [(8,)], [("a",)], ("a",), {"m": 0, "k": None}),
    case("jnp.polyint", "polynomial", [(8,)], [(None,)], (None,), {"m": 1, "k": None}),
    case("jnp.polyint", "polynomial", [(8,)], [("a",)], REJECT, {"m": 1, "k": None}, reason="concatenate"),
]


@pytest.mark.parametrize(PARAMS, POLYNOMIAL)
def test_polynomial(op, family, shapes, specs, static, eager, expected, reason):
    """poly slices each root, polyder slices p[:-m], polyint concatenates p with replicated
    constants: each by its rule."""
    check(op, family, shapes, specs, static, eager, expected, reason)


# --- sharding_vocabulary_indexing -------------------------------------------------------------------
WHOLE_COMPARISON = [
    case("jnp.allclose", "whole_comparison", [(4, 8), (4, 8)], [("a", None), ("a", None)], (),
         {"rtol": 1e-5, "atol": 1e-8, "equal_nan": False}),
    case("jnp.array_equiv", "whole_comparison", [(4, 8), (8,)], [("a", None), ("b",)], ()),
    case("jnp.array_equal", "whole_comparison", [(4, 8), (4, 8)], [("a", None), ("b", None)], REJECT,
         {"equal_nan": True}, reason="differently"),
]


@pytest.mark.parametrize(PARAMS, WHOLE_COMPARISON)
def test_whole_comparison(op, family, shapes, specs, static, eager, expected, reason):
    """A whole comparison broadcasts its operands together (the consensus) and reduces to a scalar."""
    check(op, family, shapes, specs, static, eager, expected, reason)


PARTITION = [
    case("jnp.partition", "partition", [(4, 8)], [("a", None)], ("a", None), {"kth": 2, "axis": -1}),
    case("jnp.argpartition", "partition", [(8,)], [("b",)], REJECT, {"kth": 1, "axis": 0}, reason="top_k"),
]


@pytest.mark.parametrize(PARAMS, PARTITION)
def test_partition(op, family, shapes, specs, static, eager, expected, reason):
    """partition binds top_k along its axis, which must be unsharded."""
    check(op, family, shapes, specs, static, eager, expected, reason)


COMPACTION = [
    case("jnp.nonzero", "compaction", [(4, 8)], [(None, None)], (None, None), {"size": 4, "fill_value": 0}),
    case("jnp.flatnonzero", "compaction", [(4, 8)], [(None, None)], (None,), {"size": 4, "fill_value": 0}),
    case("jnp.argwhere", "compaction", [(4, 8)], [("a", None)], REJECT, {"size": 4, "fill_value": 0},
         reason="cumsum"),
    # compress the rows of (4, 8@b): the columns keep b
    case("jnp.compress", "compaction", [(4,), (4, 8)], [(None,), (None, "b")], (None, "b"),
         {"axis": 0, "size": 2, "fill_value": 0}),
    case("jnp.compress", "compaction", [(4,), (4, 8)], [(None,), ("a", None)], REJECT,
         {"axis": 0, "size": 2, "fill_value": 0}, reason="gathered"),
    case("jnp.compress", "compaction", [(4,), (4, 8)], [("a",), (None, None)], REJECT,
         {"axis": 0, "size": 2, "fill_value": 0}, reason="condition"),
    case("jnp.extract", "compaction", [(4, 8), (4, 8)], [(None, None), (None, None)], (None,),
         {"size": 4, "fill_value": 0}),
]


@pytest.mark.parametrize(PARAMS, COMPACTION)
def test_compaction(op, family, shapes, specs, static, eager, expected, reason):
    """nonzero and its kin count with a cumsum over no axis (a replicated operand); compress sorts
    its condition and gathers along its axis (both unsharded)."""
    check(op, family, shapes, specs, static, eager, expected, reason)


SORT_LAST = [
    case("jnp.sort_complex", "sort_last", [(4, 8)], [("a", None)], ("a", None)),
    case("jnp.sort_complex", "sort_last", [(4, 8)], [(None, "b")], REJECT, reason="sorted dimension"),
]


@pytest.mark.parametrize(PARAMS, SORT_LAST)
def test_sort_last(op, family, shapes, specs, static, eager, expected, reason):
    """sort_complex sorts along the last dimension, which must be unsharded."""
    check(op, family, shapes, specs, static, eager, expected, reason)


LEXSORT = [
    case("jnp.lexsort", "lexsort", [(8,), (8,)], [(None,), (None,)], (None,), {"axis": -1}),
    # sorted with an unsharded iota: even keys sharded off the sorted axis must be unsharded
    case("jnp.lexsort", "lexsort", [(4, 8), (4, 8)], [("a", None), ("a", None)], REJECT, {"axis": -1},
         reason="sharded differently"),
]


@pytest.mark.parametrize(PARAMS, LEXSORT)
def test_lexsort(op, family, shapes, specs, static, eager, expected, reason):
    """lexsort sorts its keys with an unsharded iota: every key must be unsharded."""
    check(op, family, shapes, specs, static, eager, expected, reason)


SET = [
    case("jnp.unique", "set", [(8,)], [(None,)], (None,), {"size": 4, "fill_value": 0}),
    case("jnp.unique", "set", [(8,)], [("b",)], REJECT, {"size": 4, "fill_value": 0}, reason="sorted"),
    case("jnp.unique_inverse", "set", [(4, 8)], [(None, None)], (None, None), {"size": 4, "fill_value": 0}),
    # setdiff1d sorts only its first operand; the second, raveled (8@b), is only compared with it
    case("jnp.setdiff1d", "set", [(8,), (8,)], [(None,), ("b",)], (None,), {"size": 4, "fill_value": 0}),
    case("jnp.union1d", "set", [(8,), (8,)], [(None,), ("b",)], REJECT, {"size": 4, "fill_value": 0},
         reason="sorted"),
]


@pytest.mark.parametrize(PARAMS, SET)
def test_set(op, family, shapes, specs, static, eager, expected, reason):
    """The set operations ravel and sort their operands (setdiff1d its first only): any sharded
    operand they sort rejects; the results are replicated."""
    check(op, family, shapes, specs, static, eager, expected, reason)
