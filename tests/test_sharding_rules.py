"""The sharding-in-types model (``conformance/model/sharding_rules.py``) pinned to hand-worked
cases, a family at a time. Each case names the catalogue operation, its operands' shapes and specs,
its static arguments, and what the rules say: the result's spec, or a rejection.

Meshes: ``MESH`` is 2x4 with axes a (2) and b (4); ``MESH_Y`` puts a size-1 axis y between them;
``ONE`` is a single device. These tests import no JAX.
"""

import pytest

from conformance.model.layout import MeshModel
from conformance.model.sharding_rules import (LATEST, Accepts, ReleaseRules, Rejects, Unmodelled, canonical_spec,
                                              consensus, IllTyped, merged_groups, one_split_or_merge, reshape,
                                              sharding_verdict)

MESH = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
MESH_Y = MeshModel(tuple(range(8)), (2, 1, 4), ("a", "y", "b"))
ONE = MeshModel((0,), (1,), ("a",))

REJECT = "reject"


def case(op, family, shapes, specs, expected, static=None, mesh=MESH, eager=False):
    """A hand-worked case: ``expected`` is the result's spec, or REJECT."""
    return pytest.param(op, family, shapes, specs, static or {}, mesh, eager, expected,
                        id=f"{op}-{shapes}-{specs}-{static or ''}{'-eager' if eager else ''}")


def check(op, family, shapes, specs, static, mesh, eager, expected):
    verdict = sharding_verdict(op, family, shapes, specs, static, mesh, eager=eager)
    if expected == REJECT:
        assert isinstance(verdict, Rejects), verdict
    else:
        assert verdict == Accepts(tuple(expected)), verdict


# --- specs ----------------------------------------------------------------------------------------
def test_canonical_spec_pads_and_unwraps():
    """A canonical spec has one entry per dimension; ('a',) is 'a' and () is None."""
    assert canonical_spec((("a",), (), ("a", "b")), 4) == ("a", None, ("a", "b"), None)
    assert canonical_spec((), 0) == ()


def test_consensus_takes_the_one_sharding_the_operands_agree_on():
    """A result dimension takes the one non-None entry of its operands; two different ones reject."""
    assert consensus([None, "a", "a"], "x") == "a"
    assert consensus([None, None], "x") is None
    with pytest.raises(IllTyped):
        consensus(["a", "b"], "x")


# --- elementwise and broadcasting -------------------------------------------------------------
ELEMENTWISE = [
    case("sin", "elementwise", [(4, 8)], [("a", "b")], ("a", "b")),
    case("negative", "elementwise", [(4, 8)], [(None, ("b", "a"))], (None, ("b", "a"))),
    case("exp", "elementwise", [()], [()], ()),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", ELEMENTWISE)
def test_elementwise_keeps_the_spec(op, family, shapes, specs, static, mesh, eager, expected):
    """A unary elementwise operation never rejects: its result is sharded as its operand."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


BROADCASTING = [
    case("add", "broadcasting", [(4, 8), (4, 8)], [("a", "b"), ("a", "b")], ("a", "b")),
    case("add", "broadcasting", [(4, 8), (8,)], [("a", None), ("b",)], ("a", "b")),
    case("multiply", "broadcasting", [(4, 8), (4, 8)], [("a", None), (None, "b")], ("a", "b")),
    case("add", "broadcasting", [(4,), ()], [("a",), ()], ("a",)),
    case("add", "broadcasting", [(4, 1), (1, 8)], [("a", None), (None, "b")], ("a", "b")),
    case("add", "broadcasting", [(4,), (4,)], [("a",), ("b",)], REJECT),
    case("maximum", "broadcasting", [(8,), (8,)], [(("a", "b"),), (("b", "a"),)], REJECT),
    case("add", "broadcasting", [(4, 4), (4, 4)], [("a", None), (None, "a")], REJECT),
    # a size-1 dimension sharded over a size-1 axis still names it
    case("add", "broadcasting", [(4, 1), (4, 8)], [(None, "y"), (None, "b")], REJECT, mesh=MESH_Y),
    case("add", "broadcasting", [(4, 1), (4, 8)], [(None, "y"), (None, None)], (None, "y"), mesh=MESH_Y),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", BROADCASTING)
def test_broadcasting_takes_the_consensus_per_dimension(op, family, shapes, specs, static, mesh, eager, expected):
    """A binary operation's result dimension is sharded as its operands agree (None where unsharded);
    two different shardings of one dimension, or one mesh axis on two dimensions, reject."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


SELECTION = [
    case("select", "selection", [(4,), (4,), (4,)], [("a",), ("a",), ("a",)], ("a",)),
    case("select", "selection", [(4,), (4,), (4,)], [(None,), ("a",), ("a",)], REJECT),
    case("select", "selection", [(), (), ()], [(), (), ()], ()),
    # one shape: lax.select, which wants identical specs
    case("where", "selection", [(4,), (4,), (4,)], [(None,), ("a",), (None,)], REJECT),
    case("where", "selection", [(), (4,), (4,)], [(), ("a",), ("a",)], ("a",)),
    # shapes that broadcast: the consensus, as for a binary operation
    case("where", "selection", [(4,), (4,), ()], [(None,), ("a",), ()], ("a",)),
    case("where", "selection", [(4, 1), (4, 8), (8,)], [("a", None), (None, "b"), (None,)], ("a", "b")),
    case("where", "selection", [(4, 1), (4, 8), (8,)], [("a", None), ("b", None), (None,)], REJECT),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", SELECTION)
def test_selection(op, family, shapes, specs, static, mesh, eager, expected):
    """lax.select needs its cases (and a non-scalar predicate) sharded identically; jnp.where of
    operands of different shapes broadcasts them to their consensus first."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


# --- reductions and scans ---------------------------------------------------------------------
REDUCTION = [
    case("sum_int", "reduction", [(4, 8)], [("a", "b")], ("b",), {"axis": 0, "keepdims": False}),
    case("sum_int", "reduction", [(4, 8)], [("a", "b")], (None, "b"), {"axis": 0, "keepdims": True}),
    case("max", "reduction", [(4, 8)], [("a", "b")], (), {"axis": None, "keepdims": False}),
    case("mean", "reduction", [(4, 8)], [("a", "b")], ("a",), {"axis": -1, "keepdims": False}),
    case("any", "reduction", [(4, 8)], [("a", "b")], ("a", "b"), {"axis": (), "keepdims": False}),
    case("argmax", "reduction", [(4, 8)], [(None, "b")], ("b",), {"axis": 0}),
    # over all axes argmax ravels first: a reshape, which merges only major-sharded dimensions
    case("argmax", "reduction", [(4, 8)], [("a", None)], (), {"axis": None}),
    case("argmin", "reduction", [(4, 8)], [(None, "b")], REJECT, {"axis": None}),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", REDUCTION)
def test_reduction_drops_the_reduced_dimensions(op, family, shapes, specs, static, mesh, eager, expected):
    """A reduction over a sharded dimension is well typed: the reduced dimensions leave the result's
    spec (unsharded with keepdims)."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


SCAN = [
    case("cumsum", "scan", [(4, 8)], [("a", None)], ("a", None), {"axis": 1}),
    case("cumsum", "scan", [(4, 8)], [("a", None)], REJECT, {"axis": 0}),
    case("cummax", "scan", [(4, 8)], [("a", "b")], REJECT, {"axis": 1}),
    case("cumprod", "scan", [(4, 8)], [(None, "y")], REJECT, {"axis": 1}, mesh=MESH_Y),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", SCAN)
def test_scan_needs_the_scanned_dimension_unsharded(op, family, shapes, specs, static, mesh, eager, expected):
    """A cumulative reduction keeps its operand's spec; the scanned dimension must be unsharded
    (even over a size-1 axis)."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


SORTING = [
    case("sort", "sorting", [(4, 8)], [("a", None)], ("a", None), {"axis": -1}),
    case("argsort", "sorting", [(4, 8)], [("a", "b")], REJECT, {"axis": 1}),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", SORTING)
def test_sorting_needs_the_sorted_dimension_unsharded(op, family, shapes, specs, static, mesh, eager, expected):
    """Sorting keeps its operand's spec; the sorted dimension must be unsharded."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


# --- joining and shapes -----------------------------------------------------------------------
JOINING = [
    case("concatenate", "joining", [(4, 8), (2, 8)], [(None, "b"), (None, "b")], (None, "b"), {"axis": 0}),
    case("concatenate", "joining", [(4, 8), (4, 8)], [("a", None), (("a",),)], ("a", None), {"axis": 1}),
    case("concatenate", "joining", [(4, 8), (4, 8)], [("a", None), (None, None)], REJECT, {"axis": 1}),
    case("stack", "joining", [(8,), (8,)], [("b",), ("b",)], (None, "b"), {"axis": 0}),
    case("stack", "joining", [(8,), (8,)], [("b",), ("a",)], REJECT, {"axis": 1}),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", JOINING)
def test_joining_needs_identical_specs(op, family, shapes, specs, static, mesh, eager, expected):
    """Concatenate and stack need their operands sharded identically; stack's new dimension is
    unsharded."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


SHAPE = [
    case("transpose", "shape", [(2, 4, 8)], [("a", None, "b")], ("b", "a", None), {"axes": (2, 0, 1)}),
    case("swapaxes", "shape", [(2, 4, 8)], [("a", None, "b")], ("b", None, "a"), {"a": 0, "b": -1}),
    case("squeeze", "shape", [(4, 1, 8)], [("a", None, "b")], ("a", "b"), {"axis": (1,)}),
    case("expand_dims", "shape", [(4, 8)], [("a", "b")], ("a", "b", None), {"axis": -1}),
    case("broadcast_to", "shape", [(4,)], [("a",)], (None, "a"), {"shape": (3, 4)}),
    # reshape: a split deals the axes over the new dimensions, major first
    case("reshape", "shape", [(8,)], [("a",)], ("a", None), {"shape": (2, 4)}),
    case("reshape", "shape", [(8,)], [(("a", "b"),)], ("a", "b"), {"shape": (2, 4)}),
    case("reshape", "shape", [(8,)], [("b",)], REJECT, {"shape": (2, 4)}),
    # ... a merge takes dimensions sharded in major position only
    case("reshape", "shape", [(4, 2)], [("b", None)], ("b",), {"shape": (8,)}),
    case("reshape", "shape", [(4, 2)], [(None, "a")], REJECT, {"shape": (8,)}),
    case("reshape", "shape", [(2, 4)], [(None, None)], (None, None, None), {"shape": (2, 2, 2)}),
    # ... size-1 dimensions come and go unsharded
    case("reshape", "shape", [(4, 1, 8)], [("a", None, "b")], ("a", "b", None), {"shape": (4, 8, 1)}),
    # ... and anything else rejects
    case("reshape", "shape", [(4, 6)], [("a", None)], REJECT, {"shape": (6, 4)}),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", SHAPE)
def test_shape_operations_move_the_entries(op, family, shapes, specs, static, mesh, eager, expected):
    """Transpose permutes the spec; squeeze drops entries; new dimensions are unsharded; reshape
    splits or merges sharded dimensions only where the mesh axes divide in major-first order."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


@pytest.mark.parametrize("shape, spec, new_shape, expected", [
    ((2, 2), ("a", None), (1, 4), (None, "a")),
    ((2, 2, 2), ("a", None, None), (8, 1), ("a", None)),
    ((2, 1, 3), (None, "y", None), (6,), (None,)),
    ((3, 1, 2), ("y", None, "a"), (1, 6, 1), (None, ("y", "a"), None)),
])
def test_reshape_strips_size_1_dimensions_first(shape, spec, new_shape, expected):
    """Reshape decides split or merge with the size-1 dimensions stripped, as the doc states (JAX
    0.10.2 rejects or asserts on each of these; its successor strips them)."""
    assert reshape(MESH_Y, shape, spec, new_shape) == expected


# --- padding, slicing, dynamic slicing ----------------------------------------------------------
PADDING = [
    case("lax_pad_negative", "padding", [(4,), ()], [("a",), ()], ("a",), {"config": ((1, 1, 0),)}),
    case("lax_pad_negative", "padding", [(4,), ()], [("a",), ()], REJECT, {"config": ((1, 0, 0),)}),
    case("lax_pad_negative", "padding", [(4,), ()], [(None,), ()], (None,), {"config": ((-1, 0, 2),)}),
    case("pad", "padding", [(4, 8)], [("a", "b")], REJECT, {"widths": ((0, 0), (1, 0)), "mode": "constant"}),
    case("pad", "padding", [(4, 8)], [("a", None)], ("a", None), {"widths": ((1, 1), (1, 0)), "mode": "constant"}),
    case("pad", "padding", [(4,)], [("a",)], ("a",), {"widths": ((2, 4),), "mode": "wrap"}),
    case("pad", "padding", [(4,)], [("a",)], REJECT, {"widths": ((1, 1),), "mode": "wrap"}),
    # symmetric and edge slice one-element edges, which a 2-way sharding cannot divide
    case("pad", "padding", [(4,)], [("a",)], REJECT, {"widths": ((2, 0),), "mode": "symmetric"}),
    case("pad", "padding", [(4, 8)], [("a", None)], ("a", None), {"widths": ((0, 0), (1, 3)), "mode": "symmetric"}),
    case("pad", "padding", [(4,)], [("a",)], REJECT, {"widths": ((0, 0),), "mode": "edge"}),
    case("pad", "padding", [(4, 8)], [(None, "b")], (None, "b"), {"widths": ((1, 0), (0, 0)), "mode": "wrap"}),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", PADDING)
def test_padding_keeps_sizes_the_tiling_divides(op, family, shapes, specs, static, mesh, eager, expected):
    """Padding keeps its operand's spec; every slice or pad along a sharded dimension must leave a
    size its tiling divides (jnp.pad's edge and symmetric modes slice one-element edges)."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


SLICING = [
    case("slice", "slicing", [(4, 8)], [("a", "b")], ("a", "b"), {"index": (slice(0, 2),)}),
    case("slice", "slicing", [(4, 8)], [("a", "b")], REJECT, {"index": (slice(0, 4), slice(1, 2))}),
    case("strided_slice", "slicing", [(8,)], [("b",)], ("b",), {"index": (slice(None, None, 2),)}),
    case("strided_slice", "slicing", [(8,)], [("b",)], REJECT, {"index": (slice(None, None, 3),)}),
    case("strided_slice", "slicing", [(8,)], [("a",)], ("a",), {"index": (slice(None, None, -2),)}),
    case("slice_empty", "slicing", [(4, 8)], [("a", "b")], ("a", "b"), {"index": (slice(2, 1),)}),
    # eagerly, a partial slice of an array over several devices is a gather
    case("slice", "slicing", [(4, 8)], [("a", "b")], REJECT, {"index": (slice(0, 2),)}, eager=True),
    case("slice", "slicing", [(4, 8)], [(None, "b")], (None, "b"), {"index": (slice(0, 2),)}, eager=True),
    case("slice", "slicing", [(4, 8)], [("a", "b")], ("a", "b"), {"index": (slice(None, None, -1),)}, eager=True),
    case("strided_slice", "slicing", [(4, 8)], [(None, "b")], (None, "b"), {"index": (slice(None, None, 2),)},
         eager=True),
    case("strided_slice", "slicing", [(4, 1)], [(None, "y")], (None, None),
         {"index": (slice(None, None, 2), slice(None, None, -1))}, mesh=MESH_Y, eager=True),
    case("slice", "slicing", [(4,)], [("a",)], ("a",), {"index": (slice(0, 1),)}, mesh=ONE, eager=True),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", SLICING)
def test_static_slicing(op, family, shapes, specs, static, mesh, eager, expected):
    """A static slice keeps its operand's spec where the tiling divides the sliced size; eagerly, on
    several devices, a strided or partial slice is a gather, which wants the sliced dimensions
    unsharded and leaves strided ones unsharded."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


DYNAMIC = [
    case("dynamic_slice", "dynamic", [(4, 8), (), ()], [("a", "b"), (), ()], ("a", "b"), {"sizes": (2, 8)}),
    case("dynamic_slice", "dynamic", [(4, 8), (), ()], [("a", "b"), (), ()], REJECT, {"sizes": (4, 2)}),
    case("dynamic_update_slice", "dynamic", [(4, 8), (2, 4), (), ()], [("a", "b"), ("a", "b"), (), ()], ("a", "b")),
    case("dynamic_update_slice", "dynamic", [(4, 8), (2, 4), (), ()], [("a", "b"), ("a",), (), ()], REJECT),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", DYNAMIC)
def test_dynamic_slicing(op, family, shapes, specs, static, mesh, eager, expected):
    """dynamic_slice keeps its operand's spec where the tiling divides the slice sizes;
    dynamic_update_slice needs the update sharded as the operand."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


# --- indexing: gathers and scatters -------------------------------------------------------------
GATHER = [
    case("take", "gather", [(4, 8), (3,)], [("a", None), (None,)], ("a", None), {"axis": 1}),
    case("take", "gather", [(4, 8), (3, 2)], [(None, "b"), (None, None)], (None, None, "b"), {"axis": 0}),
    case("take_clip", "gather", [(4, 8), (3,)], [("a", None), (None,)], REJECT, {"axis": 0}),
    case("take", "gather", [(4, 8), (2,)], [(None, None), ("a",)], REJECT, {"axis": 1}),
    case("index_array", "gather", [(4, 8), (6,)], [(None, "b"), (None,)], (None, "b")),
    # (JAX 0.10.2 raises DuplicateSpecError here, a known deviation)
    case("index_array", "gather", [(4, 8), (6,)], [(None, "a"), ("a",)], REJECT),
    case("index_array", "gather", [(4, 8), ()], [("y", "b"), ()], ("b",), mesh=MESH_Y),
    case("index_array", "gather", [(4, 8), ()], [("a", "b"), ()], REJECT),
    # take_along_axis: the other dimensions are batching dimensions shared with the indices
    case("take_along_axis", "gather", [(4, 8), (4, 3)], [("a", None), ("a", None)], ("a", None), {"axis": 1}),
    case("take_along_axis", "gather", [(4, 8), (4, 3)], [(None, None), ("a", None)], ("a", None), {"axis": 1}),
    case("take_along_axis", "gather", [(4, 8), (4, 3)], [("b", None), ("a", None)], REJECT, {"axis": 1}),
    case("take_along_axis", "gather", [(4, 8), (4, 8)], [(None, "b"), (None, None)], REJECT, {"axis": 1}),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", GATHER)
def test_gathers(op, family, shapes, specs, static, mesh, eager, expected):
    """A gather needs the indexed dimension unsharded (unless whole) and the indices unsharded but
    on batching dimensions; the other operand dimensions keep their entries."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


AT = [
    case("at_add_indices", "at", [(4, 8), (3,), (3, 8)], [(None, "b"), (None,), (None, None)], (None, "b")),
    case("at_add_indices", "at", [(4, 8), (3,), (3, 8)], [(None, "b"), (None,), (None, "b")], (None, "b")),
    case("at_add_indices", "at", [(4, 8), (3,), (3, 8)], [("a", None), (None,), (None, None)], REJECT),
    # (JAX 0.10.2 raises "Incompatible types for broadcasting", a known deviation)
    case("at_add_indices", "at", [(4, 8), (3,), (3, 8)], [(None, None), (None,), (None, "b")], REJECT),
    case("at_max", "at", [(4, 8), (4, 4)], [("a", None), (None, None)], ("a", None),
         {"index": (slice(None), slice(None, None, 2))}),
    case("at_min", "at", [(4, 8), (4, 4)], [(None, "b"), (None, None)], REJECT,
         {"index": (slice(None), slice(None, None, 2))}),
    # .at[index].set(u): the same scatter rule (the suites' reproductions ask it of x.at[0:2].set(u))
    case("at_set", "at", [(4, 8), (2, 8)], [(None, "b"), (None, "b")], (None, "b"), {"index": slice(0, 2)}),
    case("at_set", "at", [(4, 8), (2, 8)], [(None, None), ("a", None)], REJECT, {"index": slice(0, 2)}),
    case("at_set_shifted", "at", [(4, 8)], [(None, "b")], (None, "b"), {"axis": 0, "shift": 1}),
    case("at_add_shifted", "at", [(4, 8)], [(None, "b")], REJECT, {"axis": 1, "shift": 4}),
    case("at_add_shifted", "at", [(4, 8)], [(None, "b")], (None, "b"), {"axis": 1, "shift": 0}),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", AT)
def test_scatters(op, family, shapes, specs, static, mesh, eager, expected):
    """x.at[index] updates keep x's spec: the indexed dimensions of x must be unsharded unless
    whole, and the updates unsharded or sharded as the slice they land on."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


PERMUTING = [
    case("flip", "permuting", [(4, 8)], [("a", "b")], ("a", "b"), {"axis": None}),
    # jnp.roll's stated rule (JAX 0.12): the rolled dimension must not be sharded at all
    case("roll", "permuting", [(8,)], [("b",)], REJECT, {"shift": -4, "axis": 0}),
    case("roll", "permuting", [(8,)], [("b",)], REJECT, {"shift": 3, "axis": 0}),
    case("roll", "permuting", [(4, 8)], [("a", None)], REJECT, {"shift": 6, "axis": None}),
    case("roll", "permuting", [(4, 8)], [(None, "a")], (None, "a"), {"shift": 1, "axis": 0}),
    case("roll", "permuting", [(4, 8)], [("a", None)], REJECT, {"shift": 5, "axis": None}),
    case("roll", "permuting", [(4, 8)], [(None, "a")], REJECT, {"shift": 2, "axis": None}),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", PERMUTING)
def test_permuting(op, family, shapes, specs, static, mesh, eager, expected):
    """flip keeps the spec; roll slices the rolled dimension at the shift, which its tiling must
    divide (over all axes after a ravel, itself a reshape)."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


# --- contractions -------------------------------------------------------------------------------
CONTRACTION = [
    case("matmul", "contraction", [(4, 8), (8, 2)], [("a", None), (None, None)], ("a", None)),
    case("matmul", "contraction", [(4, 8), (8, 2)], [(None, "b"), (None, None)], (None, None)),
    case("matmul", "contraction", [(4, 8), (8, 2)], [(None, "b"), ("a", None)], REJECT),
    case("matmul", "contraction", [(4, 8), (8, 2)], [(None, "b"), ("b", None)], REJECT),
    case("matmul", "contraction", [(2, 4, 8), (2, 8, 2)], [("a",), ("a",)], ("a", None, None)),
    # (JAX 0.10.2 raises "Incompatible types for matmul arguments", a known deviation)
    case("matmul", "contraction", [(2, 4, 8), (2, 8, 2)], [("a",), ("y",)], REJECT, mesh=MESH_Y),
    case("matmul", "contraction", [(2, 4, 8), (8, 2)], [("a", "b"), (None, None)], ("a", "b", None)),
    case("matmul", "contraction", [(4, 8), (8, 4)], [("a", None), (None, "a")], REJECT),
    case("dot_int", "contraction", [(4, 8), (8,)], [("a", None), ("b",)], ("a",)),
    # jnp.dot of 3-d operands has no batch dimensions: both leading dimensions are free
    case("dot_int", "contraction", [(2, 4, 8), (4, 8, 3)], [("a", None, None), ("b", None, None)],
         ("a", None, "b", None)),
    case("dot_int", "contraction", [(2, 4, 8), (4, 8, 3)], [("a", None, None), ("a", None, None)], REJECT),
    case("einsum", "contraction", [(4,), (8,)], [("a",), ("b",)], ("a", "b"), {"subscripts": "i,j->ij"}),
    case("einsum", "contraction", [(4,), (8,)], [("a",), ("a",)], REJECT, {"subscripts": "i,j->ij"}),
    case("einsum", "contraction", [(4, 8)], [("a", "b")], ("b", "a"), {"subscripts": "ij->ji"}),
    case("einsum", "contraction", [(2, 4, 8), (8, 4)], [(None, "a", None), (None, "b")], (None, "b"),
         {"subscripts": "bij,jk->bk"}),
    case("einsum", "contraction", [(4, 8), (4, 8)], [("a", None), (None, "b")], (), {"subscripts": "ij,ij->"}),
    case("einsum", "contraction", [(4, 8), (4, 8)], [("a", None), ("a", None)], REJECT, {"subscripts": "ij,ij->"}),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", CONTRACTION)
def test_contractions(op, family, shapes, specs, static, mesh, eager, expected):
    """A contraction's batch dimensions sharded on both sides must agree; a contracting dimension
    sharded on both sides rejects (mismatched, or equal and so ambiguous); free dimensions keep their
    entries, and no mesh axis may shard two of them."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


IOTA = [
    case("add_iota", "iota", [(4, 8)], [("a", "b")], ("a", "b"), {"dim": 1}),
    case("arange_times", "iota", [(4, 8)], [(None, "b")], (None, "b")),
    case("tril", "iota", [(4, 8)], [("a", "b")], ("a", "b"), {"k": 1}),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, expected", IOTA)
def test_iota_combinations_keep_the_spec(op, family, shapes, specs, static, mesh, eager, expected):
    """An operand combined with an unsharded iota keeps its spec."""
    check(op, family, shapes, specs, static, mesh, eager, expected)


ALL_CASES = (ELEMENTWISE + BROADCASTING + SELECTION + REDUCTION + SCAN + SORTING + JOINING + SHAPE + PADDING
             + SLICING + DYNAMIC + GATHER + AT + PERMUTING + CONTRACTION + IOTA)


def test_unknown_families_and_operations_are_unmodelled():
    """An operation the model has no rule for is Unmodelled, never a guess."""
    assert isinstance(sharding_verdict("fft", "spectral", [(4,)], [("a",)], {}, MESH), Unmodelled)
    assert isinstance(sharding_verdict("frobnicate", "shape", [(4,)], [("a",)], {}, MESH), Unmodelled)


def test_one_split_or_merge_counts_the_size_one_dimensions():
    """The reshapes 0.6.0's rule typed for a replicated operand (measured there), and those it refused."""
    for shape, new_shape in [((2, 2), (4,)), ((4,), (1, 2, 2)), ((2, 2), (2, 1, 2)), ((2, 1, 2), (4,)),
                             ((6,), (3, 2)), ((2, 2, 2), (4, 2)), ((2, 2, 2), (2, 4)), ((2, 2), (2, 2))]:
        assert one_split_or_merge(shape, new_shape), (shape, new_shape)
    # refused: neither one split nor one merge once the size-1 dimensions count
    for shape, new_shape in [((2, 2), (1, 4)), ((2, 3), (3, 2)), ((1, 4), (2, 2)), ((2, 1, 2), (1, 4)),
                             ((3, 2), (1, 6)), ((2, 2, 2), (1, 8)), ((4, 2), (2, 4))]:
        assert not one_split_or_merge(shape, new_shape), (shape, new_shape)


def test_merged_groups_name_the_dimensions_a_reshape_merges():
    assert merged_groups((2, 2), (4,)) == [[0, 1]]
    assert merged_groups((2, 3, 4), (6, 4)) == [[0, 1]]
    assert merged_groups((2, 3, 4), (2, 12)) == [[1, 2]]
    assert merged_groups((3, 1, 2), (6,)) == [[0, 1, 2]]
    assert merged_groups((4,), (2, 2)) == []  # a split
    assert merged_groups((2, 3), (3, 2)) == []  # neither


# --- the rules of releases before a stated change (ReleaseRules) ----------------------------------
# Each case: the verdict by the latest rules, and by the rules of a release without the change.
BEFORE_RESHAPE_DEALS = ReleaseRules(reshape_deals_mesh_axes=False)   # JAX 0.6.0-0.9.2
BEFORE_INDEXING_INFERS = ReleaseRules(indexing_infers_sharding=False)  # JAX 0.7.0-0.9.0.1
BEFORE_GATHER_RULE = ReleaseRules(indexing_infers_sharding=False, gather_has_a_rule=False,
                                  scatter_add_has_a_rule=False)  # JAX 0.6.1-0.6.2
BEFORE_SCATTER_RULE = ReleaseRules(indexing_infers_sharding=False, gather_has_a_rule=False, scatter_has_a_rule=False,
                                   scatter_add_has_a_rule=False)  # JAX 0.6.0
BEFORE_BATCH_SPECS_EQUAL = ReleaseRules(batch_specs_equal=False)  # JAX 0.6.0-0.11.0


def release_case(op, family, shapes, specs, latest, before, static=None, mesh=MESH, eager=False):
    return pytest.param(op, family, shapes, specs, static or {}, mesh, eager, latest, before,
                        id=f"{op}-{shapes}-{specs}-{static or ''}{'-eager' if eager else ''}")


def check_release(op, family, shapes, specs, static, mesh, eager, expected, rules):
    verdict = sharding_verdict(op, family, shapes, specs, static, mesh, eager=eager, rules=rules)
    if expected == REJECT:
        assert isinstance(verdict, Rejects), verdict
    else:
        assert verdict == Accepts(tuple(expected)), verdict


CONTRACTIONS_BEFORE_0_11_1 = [
    # a batch dimension sharded on one side only: refused from 0.11.1, the sharded side's entry before;
    # jnp pops y as its lhs and calls dot_general(x, y) when the result is batch + x's free + y's free
    # (measured on 0.10.2: P('a'))
    release_case("einsum", "contraction", [(4, 4), (4, 4)], [("a", None), ("a", None)], REJECT, ("a",),
                 {"subscripts": "bk,kb->b"}),
    release_case("matmul", "contraction", [(2, 4, 8), (2, 8, 4)], [("a", None, None), (None, None, None)], REJECT,
                 ("a", None, None)),
    # sharded alike on both sides: accepted by both rules
    release_case("matmul", "contraction", [(2, 4, 8), (2, 8, 4)], [("a", None, None), ("a", None, None)],
                 ("a", None, None), ("a", None, None)),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, latest, before", CONTRACTIONS_BEFORE_0_11_1)
def test_contractions_before_batch_specs_had_to_be_equal(op, family, shapes, specs, static, mesh, eager, latest,
                                                         before):
    """From JAX 0.11.1 a contraction's batch dimensions must be sharded identically on both sides
    (jax-ml/jax a8976b5069); before, a batch dimension sharded on one side only gives that entry."""
    check_release(op, family, shapes, specs, static, mesh, eager, latest, LATEST)
    check_release(op, family, shapes, specs, static, mesh, eager, before, BEFORE_BATCH_SPECS_EQUAL)


RESHAPE_BEFORE_0_10 = [
    # a merge of two dimensions each sharded: axes in order from 0.10.0, refused before ((2@a, 2@b) -> (4,))
    release_case("reshape", "shape", [(2, 4)], [("a", "b")], (("a", "b"),), REJECT, {"shape": (8,)}),
    # ... its second dimension sharded over a size-1 axis alone counts as sharded ((3@y, 2@a) -> (6,) too)
    release_case("reshape", "shape", [(3, 2)], [("y", "a")], (("y", "a"),), REJECT, {"shape": (6,)}, mesh=MESH_Y),
    release_case("reshape", "shape", [(4, 2)], [("a", "y")], (("a", "y"),), REJECT, {"shape": (8,)}, mesh=MESH_Y),
    # ... a group sharded in its first dimension only merges on both
    release_case("reshape", "shape", [(4, 2)], [("b", None)], ("b",), ("b",), {"shape": (8,)}),
    release_case("reshape", "shape", [(2, 3, 4)], [(None, "a", None)], (None, "a"), (None, "a"), {"shape": (2, 12)}),
    # a split: dealt over the new dimensions from 0.10.0; before, the whole entry goes to the first
    # new dimension, whose size its tiling must divide
    release_case("reshape", "shape", [(8,)], [("a",)], ("a", None), ("a", None), {"shape": (2, 4)}),
    release_case("reshape", "shape", [(8,)], [(("a", "b"),)], ("a", "b"), REJECT, {"shape": (2, 4)}),
    release_case("reshape", "shape", [(16,)], [(("a", "b"),)], (("a", "b"), None), (("a", "b"), None),
                 {"shape": (8, 2)}),
    release_case("reshape", "shape", [(4,)], [(("a", "y"),)], ("a", "y"), (("a", "y"), None), {"shape": (2, 2)},
                 mesh=MESH_Y),
    # the ravel of argmax over all axes is such a merge
    release_case("argmax", "reduction", [(4, 8)], [("a", "b")], (), REJECT, {"axis": None}),
    release_case("argmax", "reduction", [(4, 8)], [("a", None)], (), (), {"axis": None}),
    # and the stated refusals of both stay
    release_case("reshape", "shape", [(4, 2)], [(None, "a")], REJECT, REJECT, {"shape": (8,)}),
    release_case("reshape", "shape", [(4, 6)], [("a", None)], REJECT, REJECT, {"shape": (6, 4)}),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, latest, before", RESHAPE_BEFORE_0_10)
def test_before_reshape_dealt_mesh_axes_a_sharded_merge_or_split_is_refused(op, family, shapes, specs, static, mesh,
                                                                           eager, latest, before):
    """Without ``reshape_deals_mesh_axes`` the doc's reshape rule holds as lax implemented it: a merge
    whose later dimension names a mesh axis, and a split whose first new dimension the entry's
    tiling does not divide, are refused; the rest is typed as before."""
    check_release(op, family, shapes, specs, static, mesh, eager, latest, LATEST)
    check_release(op, family, shapes, specs, static, mesh, eager, before, BEFORE_RESHAPE_DEALS)
    check_release(op, family, shapes, specs, static, mesh, eager, latest, BEFORE_INDEXING_INFERS)  # (not indexing)


def indexing_case(op, family, shapes, specs, verdicts, static=None, mesh=MESH, eager=False):
    """``verdicts``: (latest, 0.7.0-0.9.0.1, 0.6.1-0.6.2, 0.6.0)."""
    return pytest.param(op, family, shapes, specs, static or {}, mesh, eager, verdicts,
                        id=f"{op}-{shapes}-{specs}-{static or ''}{'-eager' if eager else ''}")


COLUMNS, ROWS = [(None, "b")], [("a", None)]
# Hand-worked from the measured table (x uint32[4, 8] on an Explicit (a=2, b=4) mesh, 0.6.0-0.9.1,
# release_envs run, 2026-12-06): a contiguous slice under jit is lax.slice's on every release; an eager
# partial slice, a strided one under jit before 0.9.1, and a take are gathers, refused before 0.7.0 for
# any named operand and typed by the gather rule after; a shifted .at[].set's scatter from 0.6.1, .add's
# from 0.7.0.
INDEXING_BEFORE_0_9_1 = [
    indexing_case("slice", "slicing", [(4, 8)], COLUMNS, [(None, "b")] * 4, {"index": (slice(0, 2),)}),
    indexing_case("slice", "slicing", [(4, 8)], COLUMNS, [(None, "b"), (None, "b"), REJECT, REJECT],
                  {"index": (slice(0, 2),)}, eager=True),
    indexing_case("slice", "slicing", [(4, 8)], ROWS, [("a", None)] * 4, {"index": (slice(0, 2),)}),
    indexing_case("slice", "slicing", [(4, 8)], ROWS, [REJECT] * 4, {"index": (slice(0, 2),)}, eager=True),
    indexing_case("slice", "slicing", [(4, 8)], [("y", None)], [("y", None)] * 4, {"index": (slice(0, 2),)},
                  mesh=MESH_Y),  # (a size-1 axis is named as any other)
    indexing_case("strided_slice", "slicing", [(4, 8)], COLUMNS, [(None, "b"), (None, "b"), REJECT, REJECT],
                  {"index": (slice(None, None, 2),)}),
    indexing_case("strided_slice", "slicing", [(4, 8)], ROWS, [("a", None), REJECT, REJECT, REJECT],
                  {"index": (slice(None, None, 2),)}),
    indexing_case("strided_slice", "slicing", [(8,)], [("b",)], [("b",), REJECT, REJECT, REJECT],
                  {"index": (slice(None, None, 2),)}),
    # reversed: whole, a rev on every release; partial, a gather under jit before 0.9.1 (measured,
    # 2026-12-06: the 0.6.0 matrix pass met x[-3:, :0:-1] of int32[2, 2] P('a'), refused there)
    indexing_case("slice", "slicing", [(4, 8)], ROWS, [("a", None)] * 4, {"index": (slice(None, None, -1),)}),
    indexing_case("slice", "slicing", [(4, 8)], COLUMNS, [(None, "b"), (None, "b"), REJECT, REJECT],
                  {"index": (slice(None, 0, -1),)}),
    indexing_case("slice", "slicing", [(4, 8)], ROWS, [REJECT] * 4, {"index": (slice(2, None, -1),)}),
    indexing_case("slice", "slicing", [(4, 8)], ROWS, [("a", None), ("a", None), REJECT, REJECT],
                  {"index": (slice(-9, None), slice(None, 0, -1))}),
    indexing_case("slice", "slicing", [(4, 8)], COLUMNS, [REJECT] * 4,
                  {"index": (slice(-9, None), slice(None, 0, -1))}),
    indexing_case("strided_slice", "slicing", [(4, 8)], COLUMNS, [(None, "b"), (None, "b"), REJECT, REJECT],
                  {"index": (slice(None, None, -2),)}),
    # jnp's choice is by how the index is written: x[1::-1] takes a whole dimension of 2, reversed, through
    # gather (the 0.6.0 matrix pass, seed 747979201: x[-3:, 1::-1] of int32[2, 2] P('a') refused there)
    indexing_case("slice_out_of_range", "slicing", [(2, 2)], ROWS, [("a", None), ("a", None), REJECT, REJECT],
                  {"index": (slice(-3, None, 1), slice(1, None, -1))}),
    indexing_case("slice_out_of_range", "slicing", [(2, 2)], ROWS, [("a", None), ("a", None), REJECT, REJECT],
                  {"index": (slice(-3, None, 1), slice(1, None, -1))}, eager=True),
    indexing_case("slice_out_of_range", "slicing", [(2, 2)], [(None, "a")], [(None, "a"), REJECT, REJECT, REJECT],
                  {"index": (slice(-3, None, 1), slice(1, None, -1))}),
    indexing_case("slice", "slicing", [(4, 8)], [(None, None)], [(None, None)] * 4, {"index": (slice(0, 2),)},
                  eager=True),
    # a gather of a sharded operand or index array
    indexing_case("take", "gather", [(4, 8), (2,)], [(None, "b"), (None,)], [(None, "b"), (None, "b"), REJECT, REJECT],
                  {"axis": 0}),
    indexing_case("take", "gather", [(4, 8), (2,)], [("a", None), (None,)], [REJECT] * 4, {"axis": 0}),
    indexing_case("take", "gather", [(4, 8), (3,)], [("a", None), (None,)], [("a", None), ("a", None), REJECT, REJECT],
                  {"axis": 1}),
    indexing_case("take", "gather", [(4, 8), (2,)], [(None, None), ("a",)], [REJECT] * 4, {"axis": 1}),
    indexing_case("index_array", "gather", [(4, 8), (6,)], [(None, "b"), (None,)],
                  [(None, "b")] * 2 + [REJECT] * 2),
    # a 0-d index array: dynamic_slice from 0.9.1, a gather before, whose rule refuses its indexed
    # dimension named by an axis, one of size 1 too (the release matrix's 0.9.0 finding, measured
    # 2026-12-07: raises up to 0.9.0.1, computes from 0.9.1)
    indexing_case("index_array", "gather", [(4, 8), ()], [("y", "b"), ()], [("b",), REJECT, REJECT, REJECT],
                  mesh=MESH_Y, eager=True),
    indexing_case("index_array", "gather", [(4, 8), ()], [(None, "b"), ()], [("b",), ("b",), REJECT, REJECT],
                  eager=True),
    indexing_case("take_along_axis", "gather", [(4, 8), (4, 3)], [(None, None), ("a", None)],
                  [("a", None), ("a", None), REJECT, REJECT], {"axis": 1}),
    indexing_case("take_along_axis", "gather", [(4, 8), (4, 3)], [(None, None), (None, None)], [(None, None)] * 4,
                  {"axis": 1}),
    # a shifted .at[] update: its scatter, and eagerly the gather of its source
    indexing_case("at_set_shifted", "at", [(4, 8)], COLUMNS, [(None, "b")] * 3 + [REJECT], {"axis": 0, "shift": 1}),
    indexing_case("at_set_shifted", "at", [(4, 8)], COLUMNS, [(None, "b")] * 2 + [REJECT] * 2,
                  {"axis": 0, "shift": 1}, eager=True),
    indexing_case("at_add_shifted", "at", [(4, 8)], COLUMNS, [(None, "b")] * 2 + [REJECT] * 2, {"axis": 0, "shift": 1}),
    indexing_case("at_set_shifted", "at", [(4, 8)], COLUMNS, [(None, "b")] * 3 + [REJECT], {"axis": 0, "shift": 0},
                  eager=True),
    indexing_case("at_add_shifted", "at", [(4, 8)], COLUMNS, [(None, "b")] * 2 + [REJECT] * 2, {"axis": 0, "shift": 0},
                  eager=True),
    indexing_case("at_set_shifted", "at", [(4, 8)], ROWS, [REJECT] * 4, {"axis": 0, "shift": 1}),  # (x[1:4]: 3 rows)
    # not the scatters of index arrays, nor other families
    indexing_case("at_add_indices", "at", [(4, 8), (3,), (3, 8)], [(None, "b"), (None,), (None, None)],
                  [(None, "b")] * 4),
    indexing_case("dynamic_slice", "dynamic", [(4, 8), (), ()], [(None, "b"), (), ()], [(None, "b")] * 4,
                  {"sizes": (2, 8)}),
    indexing_case("reshape", "shape", [(2, 4)], [("a", "b")], [(("a", "b"),)] * 4, {"shape": (8,)}),
]


@pytest.mark.parametrize("op, family, shapes, specs, static, mesh, eager, verdicts", INDEXING_BEFORE_0_9_1)
def test_before_indexing_inferred_its_sharding_a_release_refuses_what_it_has_no_rule_for(op, family, shapes, specs,
                                                                                        static, mesh, eager, verdicts):
    """Without ``indexing_infers_sharding`` a release refuses the indexing of a sharded operand that
    binds a gather or scatter it has no rule for yet (the doc's "`scatter` and `gather` (i.e. indexing
    ops)" missing sharding rules), and types the rest by the rules below, as measured release by
    release."""
    for rules, expected in zip((LATEST, BEFORE_INDEXING_INFERS, BEFORE_GATHER_RULE, BEFORE_SCATTER_RULE), verdicts):
        check_release(op, family, shapes, specs, static, mesh, eager, expected, rules)


def test_a_slice_taking_every_dimension_whole_is_no_indexing_operation_before_indexing_infers():
    """Before the gather rule an eager partial slice of a sharded operand is refused, but one that
    takes every dimension whole (x[-3:] of a dimension of 2, x[::1]) is the array itself (jnp returns
    it unsliced: met on 0.6.0 by the release matrix, seed 1638361389) and keeps its spec, as does a
    reversal (x[::-1], lax.rev; measured eagerly and jitted on 0.6.0 and 0.7.0); a strided slice is
    refused eagerly and jitted, a partial one eagerly."""
    for eager in (False, True):
        for index in ((slice(-3, None, 1),), (slice(None, None, 1),), (slice(None), slice(0, 5)),
                      (slice(None, None, -1),)):
            assert sharding_verdict("slice", "slicing", [(2, 2)], [("a", None)], {"index": index}, MESH, eager=eager,
                                    rules=BEFORE_SCATTER_RULE) == Accepts(("a", None)), index
        assert isinstance(sharding_verdict("slice", "slicing", [(2, 2)], [("a", None)],
                                           {"index": (slice(None, None, 2),)},
                                           MESH, eager=eager, rules=BEFORE_SCATTER_RULE), Rejects)
    assert isinstance(sharding_verdict("slice", "slicing", [(2, 2)], [(None, "a")], {"index": (slice(1, None),)}, MESH,
                                       eager=True, rules=BEFORE_SCATTER_RULE), Rejects)
    assert sharding_verdict("slice", "slicing", [(2, 2)], [(None, "a")], {"index": (slice(1, None),)}, MESH,
                            rules=BEFORE_SCATTER_RULE) == Accepts((None, "a"))


def test_the_default_rules_are_the_latest():
    """Without ``rules`` the model states the newest release's rules: every change in."""
    assert LATEST == ReleaseRules(indexing_infers_sharding=True, gather_has_a_rule=True, scatter_has_a_rule=True,
                                  scatter_add_has_a_rule=True, reshape_deals_mesh_axes=True, batch_specs_equal=True,
                                  scan_keeps_a_sharded_dimension=False, sort_keeps_a_sharded_dimension=False,
                                  roll_keeps_a_sharded_dimension=False)
    assert reshape(MESH, (2, 4), ("a", "b"), (8,)) == (("a", "b"),)
    with pytest.raises(IllTyped):
        reshape(MESH, (2, 4), ("a", "b"), (8,), deals_axes=False)



def test_a_sort_along_a_sharded_dimension_keeps_its_spec_on_the_releases_whose_rule_did():
    """With ``sort_keeps_a_sharded_dimension`` (JAX up to 0.9.1) a sort along a sharded dimension is
    typed with its operand's spec; without it (from 0.9.2: "Arguments to sort must be unsharded over
    the sorting dimension") it is refused; an unsharded sorted dimension is typed alike by both."""
    kept = ReleaseRules(sort_keeps_a_sharded_dimension=True)
    assert sharding_verdict("sort", "sorting", [(4, 8)], [(None, "a")], {"axis": 1}, MESH, rules=kept) == \
        Accepts((None, "a"))
    assert sharding_verdict("sort", "sorting", [(4, 8)], [(None, "a")], {"axis": -1}, MESH, rules=kept) == \
        Accepts((None, "a"))
    assert isinstance(sharding_verdict("sort", "sorting", [(4, 8)], [(None, "a")], {"axis": 1}, MESH), Rejects)
    assert sharding_verdict("sort", "sorting", [(4, 8)], [("a", None)], {"axis": 1}, MESH, rules=kept) == \
        sharding_verdict("sort", "sorting", [(4, 8)], [("a", None)], {"axis": 1}, MESH) == Accepts(("a", None))


def test_forward_propagation_keeps_the_spec_of_a_roll_along_a_sharded_dimension():
    """With ``roll_keeps_a_sharded_dimension`` (how an Auto mesh's values are derived) a roll along
    a sharded dimension, or over all axes of a cut vector, keeps its operand's spec; the stated rule
    refuses it."""
    kept = ReleaseRules(roll_keeps_a_sharded_dimension=True)
    for axis in (0, None):
        static = {"axis": axis, "shift": 1}
        assert sharding_verdict("roll", "permuting", [(8,)], [("a",)], static, MESH, rules=kept) == Accepts(("a",))
        assert isinstance(sharding_verdict("roll", "permuting", [(8,)], [("a",)], static, MESH), Rejects)


def test_forward_propagation_gives_a_join_or_select_its_one_sharded_operands_spec():
    """With ``takes_the_one_sharded_operands_spec`` (an Auto mesh; measured on 0.4.30, 0.6.2 and
    0.10.2) a concatenate of x P('a') with replicated operands takes P('a'), whether a's size 2
    divides the result (2 + 2 + 2 = 6) or not (2 + 3 = 5: XLA pads it inside a program), on either
    dimension; operands sharded two ways are refused as by the stated rule, which refuses any
    operands sharded unlike."""
    kept = ReleaseRules(takes_the_one_sharded_operands_spec=True)
    join = lambda shapes, specs, axis=0, rules=kept: sharding_verdict(
        "concatenate", "joining", shapes, specs, {"axis": axis}, MESH, rules=rules)
    assert join([(2,), (2,), (2,)], [("a",), (), ()]) == Accepts(("a",))
    assert join([(2,), (2,)], [(), ("a",)]) == Accepts(("a",))
    assert join([(2,), (3,)], [("a",), ()]) == Accepts(("a",))
    assert join([(2, 2), (2, 3)], [("a", None), ()], axis=1) == Accepts(("a", None))
    assert isinstance(join([(4,), (4,)], [("a",), ("b",)]), Rejects)
    assert isinstance(join([(2,), (2,)], [("a",), ()], rules=LATEST), Rejects)
    # lax.select and a same-shape jnp.where alike (0.4.30, seed 3849284905: select(p P(), v P('a'), v))
    for op in ("select", "where"):
        assert sharding_verdict(op, "selection", [(2,), (2,), (2,)], [(), ("a",), ("a",)], {}, MESH,
                                rules=kept) == Accepts(("a",))
        assert isinstance(sharding_verdict(op, "selection", [(2,), (2,), (2,)], [(), ("a",), ("a",)], {}, MESH),
                          Rejects)
    assert sharding_verdict("select", "selection", [(), (2,), (2,)], [(), (), ("a",)], {}, MESH, rules=kept) == \
        Accepts(("a",))


def test_forward_propagation_unshards_the_dimensions_a_dynamic_slice_resizes():
    """With ``dynamic_slice_unshards_resized_dimensions`` (an Auto mesh; measured on 0.4.31, 0.4.35
    and 0.10.2) a dynamic slice keeps the entries of the dimensions it takes whole and unshards those
    it resizes, whether the tiling divides the new size or not (the stated rule keeps a dividing one
    and refuses the other); with ``dynamic_slice_replicates_a_resized_sharded_dimension`` as well
    (0.4.30) resizing a sharded dimension replicates the whole result."""
    auto = ReleaseRules(dynamic_slice_unshards_resized_dimensions=True)
    auto_0_4_30 = ReleaseRules(dynamic_slice_unshards_resized_dimensions=True,
                               dynamic_slice_replicates_a_resized_sharded_dimension=True)
    mesh = MeshModel(tuple(range(8)), (4, 2), ("a", "b"))

    def sliced(shape, spec, sizes, rules):
        return sharding_verdict("dynamic_slice", "dynamic", [shape] + [()] * len(shape), [spec] + [()] * len(shape),
                                {"sizes": sizes}, mesh, rules=rules)
    # 0.4.35, seed 1428177788: x (2, 2, 4) P('b', None, 'a') sliced to (1, 1, 4)
    assert sliced((2, 2, 4), ("b", None, "a"), (1, 1, 4), auto) == Accepts((None, None, "a"))
    assert sliced((2, 2, 4), ("b", None, "a"), (1, 1, 4), auto_0_4_30) == Accepts((None, None, None))
    assert isinstance(sliced((2, 2, 4), ("b", None, "a"), (1, 1, 4), LATEST), Rejects)
    # y (2, 8) P(None, 'a') to (2, 4): 'a' (4 ways) divides 4, yet the resized dimension is unsharded
    assert sliced((2, 8), (None, "a"), (2, 4), auto) == sliced((2, 8), (None, "a"), (2, 4), auto_0_4_30) == \
        Accepts((None, None))
    assert sliced((2, 8), (None, "a"), (2, 4), LATEST) == Accepts((None, "a"))
    # resizing only an unsharded dimension keeps the spec on every release
    assert sliced((2, 8), (None, "a"), (1, 8), auto) == sliced((2, 8), (None, "a"), (1, 8), auto_0_4_30) == \
        Accepts((None, "a"))


def test_a_scan_along_a_sharded_dimension_keeps_its_spec_on_the_releases_whose_rule_did():
    """With ``scan_keeps_a_sharded_dimension`` (JAX 0.6.1-0.9.2) a cumulative reduction along a
    sharded dimension is typed with its operand's spec; without it (0.6.0, and from 0.10.0: "Error out
    if the axis being cumsummed over is sharded") it is refused; an unsharded scanned dimension is
    typed alike by both."""
    kept = ReleaseRules(scan_keeps_a_sharded_dimension=True)
    for op in ("cumsum", "cummax", "cumprod"):
        assert sharding_verdict(op, "scan", [(4, 8)], [("a", None)], {"axis": 0}, MESH, rules=kept) == \
            Accepts(("a", None))
        assert isinstance(sharding_verdict(op, "scan", [(4, 8)], [("a", None)], {"axis": 0}, MESH), Rejects)
        assert sharding_verdict(op, "scan", [(4, 8)], [("a", None)], {"axis": 1}, MESH, rules=kept) == \
            sharding_verdict(op, "scan", [(4, 8)], [("a", None)], {"axis": 1}, MESH) == Accepts(("a", None))
