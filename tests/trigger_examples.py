"""One example per trigger (conformance/checking/triggers.py) that it holds for, and a near miss: the
same example with the one condition the trigger's bug needs taken away (another step, another
mesh kind, a start that needs no clamping). The meta-tests (tests/test_trigger_meta.py) plant
unrelated failures into the first and the entry's own symptom into the second; the table of
triggers with their meta-tests (tests/TRIGGERS.md) is written by the meta-tests' module:

    python -m tests.test_trigger_meta > tests/TRIGGERS.md

Vocabulary: a ``Pair`` is ``holds`` (an example the trigger holds for), ``misses`` (its near miss),
``taken_away`` (what the near miss changes, in words) and, where its entries' symptoms say how the
values or the layout go wrong (``where``), ``wrong``: what the failed check compares as the bug
makes it, ``(expected, got)`` (or, where its entries name several forms of the bug, a dict of
them by ``where``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Dict, Optional

import numpy as np

from conformance.checking import triggers
from conformance.checking.triggers import Call
from conformance.checking.ways import Way
from conformance.model.layout import Layout, MeshModel
from strategies.batched import MultiAxisExample, VmapExample, VmappedBody
from strategies.contractions import Contraction, PartlyConstrained, Reshape
from strategies.manual import AllToAllExample

MESH = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))  # two axes that cut: ('a',) leaves 'b' replicated
SIZE_ONE = MeshModel(tuple(range(8)), (8, 1), ("a", "b"))  # 'b' has size 1
BY_Y = MeshModel(tuple(range(6)), (2, 3), ("b", "y"))
JIT, CONSTRAINED, EAGER = Way.JIT_SHARDINGS, Way.JIT_CONSTRAINTS, Way.EAGER

X4 = np.arange(4, dtype=np.int32)
X22 = np.arange(4, dtype=np.int32).reshape(2, 2)
X44 = np.arange(16, dtype=np.int32).reshape(4, 4)
X444 = np.arange(64, dtype=np.int32).reshape(4, 4, 4) % 7


@dataclass(frozen=True)
class Pair:
    holds: object
    misses: object
    taken_away: str
    wrong: Optional[object] = None  # (expected, got), or {where: (expected, got)}


def call(op, operands, static=None, *, mesh=MESH, axis_type="Auto", in_specs=(), out_spec=(), way=JIT,
         shape=None, producers=()) -> Call:
    return Call(op, tuple(operands), dict(static or {}), mesh, axis_type, tuple(in_specs), out_spec, way, shape,
                tuple(producers))


def explicit(op, operands, in_specs, static=None, *, mesh=MESH, way=EAGER, shape=None) -> Call:
    return call(op, operands, static, mesh=mesh, axis_type="Explicit", in_specs=in_specs, out_spec=None, way=way,
                shape=shape)


def scatter_summed(beside_index: slice) -> Call:
    """sum(x.at[0:2].set(x[1:3])) of x[3] P('a') over three devices, under constraints, beside x[beside_index]."""
    x = np.arange(3, dtype=np.uint32)
    update = replace(call("at_set_shifted", (x,), {"axis": 0, "shift": 1}, mesh=THREE, in_specs=(("a",),),
                          out_spec=(), way=CONSTRAINED, shape=(3,)),
                     beside=(call("slice", (x,), {"index": (beside_index,)}, mesh=THREE, in_specs=(("a",),),
                                  out_spec=(), way=CONSTRAINED, shape=(2,)),))
    return call("sum_int", (x,), {"axis": None, "keepdims": False}, mesh=THREE, in_specs=((),), out_spec=(),
                way=CONSTRAINED, shape=(), producers=(update,))


def cumsum_beside(index: slice) -> Call:
    """cumsum(x) of x uint32[4] P('a') over four devices, jitted, beside x[index] (constrained P())."""
    x = np.array([3, 10, 6, 2], dtype=np.uint32)
    return replace(call("cumsum", (x,), {"axis": 0}, mesh=FOUR, in_specs=(("a",),), out_spec=(), shape=(4,)),
                   beside=(call("slice", (x,), {"index": (index,)}, mesh=FOUR, in_specs=(("a",),), out_spec=(),
                                shape=(len(x[index]),)),))


def stack_of_a_dynamic_slice(start: int) -> Call:
    """constrain(stack((v, v)), P()) into P(None, 'b') of v = lax.dynamic_slice(x, (start,), (2,)), x
    uint32[4] P('a') on the (a=2, b=4) mesh, jitted."""
    x = np.arange(4, dtype=np.uint32)
    window = x[min(max(start % 4, 0), 2):][:2]
    sliced = call("dynamic_slice", (x, np.int32(start)), {"sizes": (2,)}, in_specs=(("a",), ()), out_spec=None,
                  shape=(2,))
    stacked = call("stack", (window, window), {"axis": 0}, in_specs=((), ()), out_spec=None, shape=(2, 2),
                   producers=(sliced, sliced))
    return call("constraint", (np.stack([window] * 2),), {"spec": ()}, in_specs=((),), out_spec=(None, "b"),
                shape=(2, 2), producers=(stacked,))


def negation_sliced(index: slice) -> Call:
    """y = -x of x uint32[2] P('a') over two devices, jitted, read by y[index] constrained P()."""
    x = np.arange(2, dtype=np.uint32)
    return replace(call("negative", (x,), mesh=TWO, in_specs=(("a",),), out_spec=()),
                   read_by=(call("slice", (-x,), {"index": (index,)}, mesh=TWO, in_specs=(("a",),), out_spec=(),
                                 shape=(1,)),))


def identity_update_beside_a_join_sliced(index: slice) -> Call:
    """x.at[0:2].set(x[0:2]) of x uint32[2] P('a') over two devices, jitted, beside v = concatenate((x,
    z)) read by v[index] constrained P()."""
    x, z = np.array([5, 7], np.uint32), np.array([9], np.uint32)
    v = np.concatenate((x, z))
    join = call("concatenate", (x, z), {"axis": 0}, mesh=TWO, in_specs=(("a",), ()), out_spec=(), shape=(3,))
    sliced = call("slice", (v,), {"index": (index,)}, mesh=TWO, in_specs=((),), out_spec=(), shape=(1,),
                  producers=(join,))
    return replace(call("at_set_shifted", (x,), {"axis": 0, "shift": 0}, mesh=TWO, in_specs=(("a",),), out_spec=(),
                        shape=(2,)), beside=(replace(join, read_by=(sliced,)),))


def tril_of_a_shifted_update(out_spec) -> Call:
    """jnp.tril(x.at[:, 1:].set(x[:, :3]), -2) of x uint32[2, 4] P(None, ('a', 'b')) on a (2, 2) mesh,
    jitted into ``out_spec``."""
    x = np.arange(8, dtype=np.uint32).reshape(2, 4)
    update = call("at_set_shifted", (x,), {"axis": 1, "shift": -1}, mesh=SQUARE, in_specs=((None, ("a", "b")),),
                  out_spec=(None, ("a", "b")), shape=(2, 4))
    return call("tril", (x,), {"k": -2}, mesh=SQUARE, in_specs=((None, ("a", "b")),), out_spec=out_spec, shape=(2, 4),
                producers=(update,))


def wrap_pad(widths, out_spec) -> Call:
    """jnp.pad(x, widths, mode='wrap') of x int32[2, 4] P(None, ('a', 'b')) on a (2, 2) mesh, jitted into
    ``out_spec``."""
    x = np.arange(8, dtype=np.int32).reshape(2, 4)
    return call("pad", (x,), {"widths": widths, "mode": "wrap"}, mesh=SQUARE, in_specs=((None, ("a", "b")),),
                out_spec=out_spec, shape=np.pad(x, widths, mode="wrap").shape)


def join_of_a_slice_with_itself(constraint_spec) -> Call:
    """jnp.concatenate((wsc(v, constraint_spec), v)) of v = lax.dynamic_slice(x, (1,), (5,)), x uint32[8],
    on a (2, 2) mesh, jitted into P('a')."""
    x = np.arange(8, dtype=np.uint32)
    sliced = call("dynamic_slice", (x, np.int32(1)), {"sizes": (5,)}, mesh=SQUARE, in_specs=((), ()), out_spec=None,
                  shape=(5,))
    constrained = call("constraint", (x[1:6],), {"spec": constraint_spec}, mesh=SQUARE, in_specs=(None,),
                       out_spec=constraint_spec, shape=(5,), producers=(sliced,))
    return call("concatenate", (x[1:6], x[1:6]), {"axis": 0}, mesh=SQUARE, in_specs=(constraint_spec, None),
                out_spec=("a",), shape=(10,), producers=(constrained, sliced))


def explicit_put_padded(widths) -> Call:
    """jnp.pad(jax.device_put(x, P()), widths, mode='edge') of x uint32[2] P('a') over two devices, jitted
    on an Explicit mesh, into P()."""
    x = np.arange(2, dtype=np.uint32)
    put = call("device_put", (x,), {"spec": ()}, mesh=TWO, axis_type="Explicit", in_specs=(("a",),), out_spec=None,
               shape=(2,))
    return call("pad", (x,), {"widths": widths, "mode": "edge"}, mesh=TWO, axis_type="Explicit", in_specs=((),),
                out_spec=(), shape=(2 + sum(widths[0]),), producers=(put,))


def auto(c: Call) -> Call:
    """``c`` on an Auto mesh."""
    return Call(c.op, c.operands, c.static, c.mesh, "Auto", c.in_specs, c.out_spec, c.way, c.result_shape, c.producers)


def pair_explicit(op, operands, in_specs, static=None, wrong=None, **kw) -> Pair:
    c = explicit(op, operands, in_specs, static, **kw)
    return Pair(c, auto(c), "the mesh is Auto", wrong)


def a(*values, dtype=np.int32) -> np.ndarray:
    return np.array(values, dtype)


def blocks(mesh, spec, shape) -> dict:
    from conformance.model.layout import Layout
    return Layout(mesh, spec, shape).blocks


TWO = MeshModel((0, 1), (2,), ("a",))
ROW = np.arange(2, dtype=np.int32).reshape(1, 2)  # one value read twice by a step (x.at[::2].min(x)): one object
THREE = MeshModel((0, 1, 2), (3,), ("a",))
FOUR = MeshModel((0, 1, 2, 3), (4,), ("a",))
SQUARE = MeshModel((0, 1, 2, 3), (2, 2), ("a", "b"))
CUBE = MeshModel(tuple(range(8)), (2, 2, 2), ("a", "b", "x"))
CUBE_BAX = MeshModel(tuple(range(8)), (2, 2, 2), ("b", "a", "x"))
X123 = a(1, 2, 3)
CUT_4 = Layout(MESH, ("a",), (4,)).blocks  # X4 cut over 'a': devices 0-3 hold ((0, 2),), 4-7 ((2, 4),)
WHOLE_4 = {d: ((0, 4),) for d in MESH.device_ids}  # X4 whole on every device
ZERO_SIZE_SHARDS = ((0, 1), (0, 2))  # a (0, 2) result's shard shape asked over 'a' on dimension 1, and the whole


def constraint(before, spec) -> Call:
    return call("constraint", (X4,), {"spec": spec}, in_specs=(before,), out_spec=spec, way=CONSTRAINED)


def _remat(policy):
    return SimpleNamespace(policy=policy, x=np.zeros((2, 4), np.float32), w=np.zeros((4, 2), np.float32),
                           inner_spec=None)


EXAMPLES: Dict[str, Pair] = {
    "clamped_start_with_a_cut_output": Pair(
        call("dynamic_slice", (X4, np.int32(3)), {"sizes": (2,)}, in_specs=((), ()), out_spec=("a",)),
        call("dynamic_slice", (X4, np.int32(1)), {"sizes": (2,)}, in_specs=((), ()), out_spec=("a",)),
        "the start needs no clamping", (a(2, 3), a(3, 3))),
    "cut_layout_reaching_a_clamped_dynamic_slice": Pair(
        stack_of_a_dynamic_slice(-1), stack_of_a_dynamic_slice(1), "the slice's start needs no clamping",
        (np.array([[2, 3], [2, 3]], np.uint32), np.array([[3, 3], [3, 3]], np.uint32))),
    "moved_start_with_a_cut_operand_or_output": Pair(
        call("dynamic_update_slice", (X4, X4[:1], np.int32(5)), in_specs=(("a",), (), ())),
        call("dynamic_update_slice", (X4, X4[:1], np.int32(2)), in_specs=(("a",), (), ())),
        "the start is in range", (a(0, 1, 2, 0), a(0, 1, 2, 3))),
    "partially_replicated_join": Pair(
        call("concatenate", (X4, X4), {"axis": 0}, in_specs=(("a",), ())),
        call("concatenate", (X4, X4), {"axis": 0}, in_specs=((), ())),
        "nothing is cut over part of the mesh",
        {"multiplied_by_the_replica_count": (a(0, 1, 2, 3, 0, 1, 2, 3), a(0, 2, 4, 6, 0, 2, 4, 6)),
         "zeros": (a(0, 1, 2, 3, 0, 1, 2, 3), a(0, 1, 2, 3, 0, 1, 0, 0))}),
    "join_of_differently_split_operands": Pair(
        call("concatenate", (X4, X4), {"axis": 0}, in_specs=(("a",), ()), out_spec=("a",)),
        call("concatenate", (X4, X4), {"axis": 0}, in_specs=(("a",), ("a",)), out_spec=("a",)),
        "the operands and the output are split alike"),
    "clipped_take_on_a_cut_axis": Pair(
        call("take_clip", (X22, np.int32(3)), {"axis": 0}, in_specs=(("a",), ())),
        call("take_clip", (X22, np.int32(1)), {"axis": 0}, in_specs=(("a",), ())),
        "the index is inside the axis", (a(2, 3), a(0, 0))),
    "interior_padding_with_a_cut_output": Pair(
        call("lax_pad_negative", (X123, np.int32(0)), {"config": ((0, 1, 1),)}, in_specs=((), ()), out_spec=("a",)),
        call("lax_pad_negative", (X123, np.int32(0)), {"config": ((0, 1, 0),)}, in_specs=((), ()), out_spec=("a",)),
        "no interior padding", (a(1, 0, 2, 0, 3, 0), a(1, 0, 2, 0, 2, 0))),
    "zero_size_result_with_out_shardings": Pair(
        call("slice_empty", (X22,), in_specs=(("a",),), out_spec=(None, "a"), shape=(0, 2)),
        call("slice_empty", (X22,), in_specs=(("a",),), out_spec=(None, "a"), shape=(0, 2), way=CONSTRAINED),
        "the way is (c), a constraint, not out_shardings", ZERO_SIZE_SHARDS),
    "zero_size_result_with_a_cut_layout": Pair(
        call("slice_empty", (X22,), in_specs=((None, "a"),), out_spec=None, way=EAGER, shape=(0, 2)),
        call("slice_empty", (X22,), in_specs=((),), out_spec=None, way=EAGER, shape=(0, 2)),
        "the operand is not cut"),
    "zero_size_result_constrained": Pair(
        call("slice_empty", (X22,), in_specs=(("a",),), out_spec=(None, "a"), shape=(0, 2), way=CONSTRAINED),
        call("slice_empty", (X22,), in_specs=(("a",),), out_spec=(None, "a"), shape=(0, 2)),
        "the way is (b), out_shardings, not a constraint", ZERO_SIZE_SHARDS),
    "negative_edge_with_a_cut_output": Pair(
        call("lax_pad_negative", (X4, np.int32(0)), {"config": ((-1, 1, 0),)}, in_specs=((), ()), out_spec=("a",)),
        call("lax_pad_negative", (X4, np.int32(0)), {"config": ((-1, 1, 0),)}, in_specs=((), ()), out_spec=()),
        "the output is replicated", (a(1, 2, 3, 0), a(0, 1, 2, 3))),
    "strided_slice_of_a_cut_dimension": Pair(
        call("strided_slice", (X4,), {"index": slice(1, 2, 3)}, in_specs=(("a",),)),
        call("strided_slice", (X4,), {"index": slice(1, 2, 3)}, in_specs=(("a",),), way=EAGER),
        "it runs eagerly", (a(1), a(0))),
    "eager_pad_reshape_or_concatenate_of_a_cut_operand": Pair(
        call("reshape", (X22,), in_specs=(("a",),), out_spec=None, way=EAGER, shape=(4,)),
        call("reshape", (X22,), in_specs=(("a",),), out_spec=None, shape=(4,)),
        "it runs under jit"),
    "jitted_take_along_a_cut_axis": Pair(
        call("take_along_axis", (X22, np.zeros((2, 2), np.int32)), {"axis": 0}, in_specs=(("a",), ())),
        call("take_along_axis", (X22, np.zeros((2, 2), np.int32)), {"axis": 0}, in_specs=((None, "a"), ())),
        "the operand is cut along another axis"),
    "jitted_take_along_over_combined_axes": Pair(
        call("take_along_axis", (np.arange(16, dtype=np.int32).reshape(8, 2), np.zeros((8, 2), np.int32)), {"axis": 0},
             in_specs=((("a", "b"),), ())),
        call("take_along_axis", (np.arange(16, dtype=np.int32).reshape(8, 2), np.zeros((8, 2), np.int32)), {"axis": 0},
             in_specs=(("a",), ())),
        "one mesh axis per dimension", (np.tile(a(0, 1), (8, 1)), np.tile(a(0, 0), (8, 1)))),
    "explicit_batch_dimensions_split_differently": pair_explicit(
        "matmul", (np.zeros((2, 3, 2), np.float32), np.zeros((2, 2, 1), np.float32)), ((), ("a",))),
    "explicit_one_axis_on_two_dimensions_of_a_broadcast": Pair(
        explicit("add", (np.zeros((2, 4)), np.zeros((2, 4))), (("a",), (None, "a"))),
        explicit("add", (np.zeros((2, 4)), np.zeros((2, 4))), (("a",), ("a",))),
        "the axis is on one dimension"),
    "explicit_operand_and_indices_on_one_axis": Pair(
        explicit("index_array", (X4, np.zeros(2, np.int32)), (("a",), ("a",))),
        explicit("index_array", (X4, np.zeros(2, np.int32)), (("a",), ("b",))),
        "the indices are on another axis"),
    "explicit_update_sharded_unlike_its_operand": Pair(
        explicit("at_add_indices", (X4[:2], X4[:2], X4[:2]), ((), (), ("a",))),
        explicit("at_add_indices", (X4[:2], X4[:2], X4[:2]), ((), ("a",), ("a",))),
        "the update is sharded as the scatter expects"),
    "explicit_empty_slice_of_a_cut_dimension": pair_explicit(
        "slice_empty", (X22,), ((None, "a"),), shape=(0, 2), mesh=TWO,
        wrong=(blocks(TWO, (None, "a"), (0, 2)), blocks(TWO, (), (0, 2)))),
    "explicit_static_slice_of_a_cut_operand": Pair(
        explicit("slice", (X4,), (("a",),)), explicit("slice", (X4,), ((),)), "the operand is replicated"),
    "explicit_range_update_of_a_cut_operand": Pair(
        explicit("at_min", (X4, X4[:2]), (("a",), ())), explicit("at_min", (X4, X4[:2]), ((), ())),
        "the operand is replicated"),
    "jitted_read_of_a_clamped_dynamic_slice": Pair(
        call("at_max", (a(1, 2), a(0)), {"index": slice(None, None, 2)}, in_specs=(None, ()), out_spec=(), way=JIT,
             producers=(call("dynamic_slice", (a(0, 1, 2), np.int32(-1)), {"sizes": (2,)}, in_specs=(("a",), ())),
                        None)),
        call("at_max", (a(1, 2), a(0)), {"index": slice(None, None, 2)}, in_specs=(None, ()), out_spec=(), way=JIT,
             producers=(call("dynamic_slice", (a(0, 1, 2), np.int32(1)), {"sizes": (2,)}, in_specs=(("a",), ())),
                        None)),
        "the start needs no clamping", (a(1, 2), a(2, 2))),
    "explicit_roll_with_a_piece_of_size_one_dimensions_only": Pair(
        explicit("roll", (X4.reshape(1, 4),), (("b",),), {"shift": 1, "axis": 1}, mesh=SIZE_ONE),
        explicit("roll", (X4.reshape(1, 4),), (("b",),), {"shift": 2, "axis": 1}, mesh=SIZE_ONE),
        "both pieces have a dimension of size 2"),
    "join_of_a_take_leaving_its_operand_cut_over_part_of_the_mesh": Pair(
        call("concatenate", (X22, X22), {"axis": 0}, mesh=MeshModel(tuple(range(8)), (4, 2), ("a", "b")),
             in_specs=((), ()),
             producers=(call("take", (np.zeros((2, 2, 4), np.uint32), np.int32(1)), {"axis": 2},
                             mesh=MeshModel(tuple(range(8)), (4, 2), ("a", "b")), in_specs=(("b", None, "a"), ())),)),
        call("concatenate", (X22, X22), {"axis": 0}, mesh=MeshModel(tuple(range(8)), (4, 2), ("a", "b")),
             in_specs=((), ()),
             producers=(call("take", (np.zeros((2, 2, 4), np.uint32), np.int32(1)), {"axis": 2},
                             mesh=MeshModel(tuple(range(8)), (4, 2), ("a", "b")), in_specs=(("b", "a", None), ())),)),
        "the take's operand keeps both axes", (np.array([0, 1, 2, 3], np.int32), np.array([0, 4, 8, 12], np.int32))),
    "explicit_pad_with_a_piece_of_size_one_dimensions_only": Pair(
        explicit("pad", (np.arange(6, dtype=np.int32),), (("b",),), {"widths": ((1, 1),), "mode": "symmetric"},
                 mesh=SIZE_ONE),
        explicit("pad", (np.arange(6, dtype=np.int32),), (("b",),), {"widths": ((2, 2),), "mode": "symmetric"},
                 mesh=SIZE_ONE),
        "the mirrored pieces have two elements"),
    "range_update_moving_its_major_cut_axis_to_another_dimension": Pair(
        call("at_set_shifted", (X22.repeat(2, 0),), {"shift": -1, "axis": 0},
             mesh=MeshModel((0, 1, 2, 3), (2, 2), ("a", "b")), in_specs=((("a", "b"),),), out_spec=(None, "a")),
        call("at_set_shifted", (X22.repeat(2, 0),), {"shift": -1, "axis": 0},
             mesh=MeshModel((0, 1, 2, 3), (2, 2), ("a", "b")), in_specs=((("a", "b"),),), out_spec=(None, "b")),
        "the output cuts the other dimension over the minor axis",
        # (x.at[1:].set(x[:-1]) of x = X22 repeated, [[0, 1], [0, 1], [2, 3], [2, 3]]: the operand back, its last row 0)
        (np.array([[0, 1], [0, 1], [0, 1], [2, 3]], np.int32), np.array([[0, 1], [0, 1], [2, 3], [0, 0]], np.int32))),
    "explicit_sort_of_a_sharded_operand": pair_explicit(
        "argsort", (X22,), (("a",),), {"axis": 1}, mesh=TWO,
        wrong=(blocks(TWO, ("a",), (2, 2)), blocks(TWO, (), (2, 2)))),
    "explicit_at_min_or_max": pair_explicit("at_max", (X4, X4[:2]), (("a",), ())),
    "explicit_at_set": pair_explicit("at_set_shifted", (X4,), (("a",),), {"shift": 1}),
    "explicit_at_add": pair_explicit("at_add_shifted", (X4,), (("a",),), {"shift": 1}),
    "explicit_tril_of_a_sharded_operand": Pair(
        explicit("tril", (X22,), (("a",),)), explicit("tril", (X22,), ((),)), "the operand is replicated"),
    "explicit_where_of_operands_split_unlike": Pair(
        explicit("where", (X4 > 1, X4, X4), (("a",), (), ())), explicit("where", (X4 > 1, X4, X4), (("a",),) * 3),
        "all three are split alike"),
    "explicit_device_put_inside_jit": Pair(
        explicit("device_put", (X4,), (("a",),), {"spec": ()}, way=JIT),
        explicit("device_put", (X4,), (("a",),), {"spec": ()}, way=EAGER), "it runs eagerly"),
    "explicit_edge_pad_of_a_sharded_operand": Pair(
        explicit("pad", (X4,), (("b",),), {"mode": "edge", "widths": ((1, 0),)}, mesh=SIZE_ONE),
        explicit("pad", (X4,), ((),), {"mode": "edge", "widths": ((1, 0),)}, mesh=SIZE_ONE),
        "the operand is replicated"),
    "explicit_mirror_pad_of_a_cut_dimension_it_does_not_pad": Pair(
        explicit("pad", (X22,), (("a",),), {"mode": "symmetric", "widths": ((0, 0), (0, 0))}),
        explicit("pad", (X22,), (("a",),), {"mode": "symmetric", "widths": ((1, 0), (0, 0))}),
        "the cut dimension is padded"),
    "explicit_edge_pad_of_a_cut_dimension_it_does_not_pad": Pair(
        explicit("pad", (X22,), (("a",),), {"mode": "edge", "widths": ((0, 0), (0, 0))}),
        explicit("pad", (X22,), ((None, "a"),), {"mode": "edge", "widths": ((0, 0), (0, 1))}),
        "the cut dimension is padded"),
    "explicit_reshape_over_a_size_one_axis": Pair(
        explicit("reshape", (X22,), (("b",),), mesh=SIZE_ONE, shape=(4,)),
        explicit("reshape", (X22,), (("a",),), mesh=SIZE_ONE, shape=(4,)), "the axis has size 8"),
    "explicit_reshape_with_a_size_one_dimension": Pair(
        explicit("reshape", (X4.reshape(4, 1),), (("a",),), shape=(4,)),
        explicit("reshape", (X22,), (("a",),), shape=(4,)), "no dimension of size 1"),
    "jitted_prefix_slice_with_its_operands_shard_shape": Pair(
        call("slice", (np.arange(6, dtype=np.int32),), {"index": (slice(0, 5),)}, mesh=THREE, in_specs=(("a",),),
             out_spec=(), way=CONSTRAINED, shape=(5,)),
        call("slice", (np.arange(6, dtype=np.int32),), {"index": (slice(0, 3),)}, mesh=THREE, in_specs=(("a",),),
             out_spec=(), way=CONSTRAINED, shape=(3,)), "the slice's shards are shorter than its operand's"),
    "jitted_wrap_pad_moving_its_major_cut_axis": Pair(
        wrap_pad(((0, 0), (0, 1)), ("a",)), wrap_pad(((0, 0), (1, 0)), ("a",)), "the pad fills the low edge"),
    "jitted_read_of_a_range_update_moving_its_major_cut_axis": Pair(
        tril_of_a_shifted_update(("a",)), tril_of_a_shifted_update((None, "a")),
        "the output cuts the update's own dimension over the major axis"),
    "jitted_concatenate_of_a_replicated_dynamic_slice_with_itself": Pair(
        join_of_a_slice_with_itself(()), join_of_a_slice_with_itself(("b",)), "the constraint cuts the slice over 'b'",
        (a(1, 2, 3, 4, 5, 1, 2, 3, 4, 5), a(2, 4, 6, 8, 10, 2, 4, 6, 8, 10))),
    "explicit_jitted_pad_reading_a_prefix_of_a_device_put": Pair(
        explicit_put_padded(((1, 0),)), explicit_put_padded(((0, 1),)), "the edge pad fills its high edge only"),
    "scatter_beside_a_prefix_slice_with_its_operands_shard_shape": Pair(
        scatter_summed(slice(0, 2)), scatter_summed(slice(1, 3)), "the slice beside the update does not start at 0",
        (np.array(5, np.uint32), np.array(3, np.uint32))),  # (sum([1, 2, 2]), sum([1, 2, 0]))
    "jitted_scan_beside_a_prefix_slice_with_its_operands_shard_shape": Pair(
        cumsum_beside(slice(0, 2)), cumsum_beside(slice(1, 3)), "the slice beside the scan does not start at 0",
        (np.array([3, 13, 19, 21], np.uint32), np.array([3, 13, 13, 13], np.uint32))),
    "returned_beside_a_prefix_slice_of_it_with_its_shard_shape": Pair(
        negation_sliced(slice(0, 1)), negation_sliced(slice(1, 2)), "the slice of the value does not start at 0"),
    "identity_update_returned_beside_a_prefix_slice_of_its_operand": Pair(
        identity_update_beside_a_join_sliced(slice(0, 1)), identity_update_beside_a_join_sliced(slice(2, 3)),
        "the slice of the join reads past the update's operand"),
    "explicit_reshape_of_an_unsharded_operand_neither_one_split_nor_one_merge": Pair(
        explicit("reshape", (X22,), ((),), shape=(1, 4)),
        explicit("reshape", (X22,), ((),), shape=(4,)), "one merge"),
    "explicit_flattening_onto_axes_ending_with_a_size_one_axis": Pair(
        explicit("reshape", (np.zeros((8, 2), np.int32),), ((("a", "b"),),), mesh=SIZE_ONE, shape=(16,)),
        explicit("reshape", (np.zeros((8, 2), np.int32),), (("a",),), mesh=SIZE_ONE, shape=(16,)),
        "one mesh axis on the dimension"),
    "explicit_flattening_over_a_size_one_axis": pair_explicit("argmax", (X22,), (("b",),), mesh=SIZE_ONE, shape=()),
    "layout_change_onto_combined_axes": Pair(
        call("constraint", (X22,), {"spec": (None, ("a", "b"))}, in_specs=((),), way=CONSTRAINED),
        call("constraint", (X22,), {"spec": (None, "a")}, in_specs=((),), way=CONSTRAINED),
        "one mesh axis per dimension"),
    "explicit_vmapped_device_put_onto_a_cut": Pair(
        call("vmap: device_put", (X22,), {"spec": (None, "a")}, axis_type="Explicit", in_specs=(("b",),),
             out_spec=None),
        call("vmap: device_put", (X22,), {"spec": (None, "a")}, in_specs=(("b",),), out_spec=None),
        "an Auto mesh (a device_put inside jit there keeps its operand's layout)"),
    "vmapped_dynamic_slice_far_out_of_range_over_a_cut_batch_step": Pair(
        call("vmap: dynamic_slice", (X22, np.int32(5), np.int32(0)), {"sizes": (1, 1)},
             in_specs=(("a",), ("a",), ("a",)), out_spec=None),
        call("vmap: dynamic_slice", (X22, np.int32(2), np.int32(0)), {"sizes": (1, 1)},
             in_specs=(("a",), ("a",), ("a",)), out_spec=None),
        "a start within [-n, n], clamped right", (a(2, 2), a(0, 0))),
    "vmapped_dynamic_slice_out_of_range_of_a_cut_operand_step": Pair(
        call("vmap: dynamic_slice", (X22, np.int32(0), np.int32(5)), {"sizes": (1, 1)},
             in_specs=((None, None, "a"), (), ()), out_spec=None),
        call("vmap: dynamic_slice", (X22, np.int32(0), np.int32(1)), {"sizes": (1, 1)},
             in_specs=((None, None, "a"), (), ()), out_spec=None),
        "a start within range, clamped right", (a(1, 1), a(0, 0))),
    "jitted_axis_moved_into_combined_axes": Pair(
        call("greater", (np.zeros((2, 6), np.int32), np.int32(5)), mesh=BY_Y, in_specs=(("b",), ()),
             out_spec=(None, ("b", "y")), shape=(2, 6)),
        call("greater", (np.zeros((2, 6), np.int32), np.int32(5)), mesh=BY_Y, in_specs=(("b",), ()),
             out_spec=(None, ("y", "b")), shape=(2, 6)),
        "the combined axes start with the other axis"),
    "jitted_gather_refining_the_cut_of_a_passed_through_dimension": Pair(
        call("take", (np.zeros((2, 4), np.int32), np.zeros(1, np.int32)), {"axis": 0}, mesh=SQUARE,
             in_specs=((None, "a"), ()), out_spec=(None, ("a", "b")), shape=(1, 4)),
        call("take", (np.zeros((2, 4), np.int32), np.zeros(1, np.int32)), {"axis": 0}, mesh=SQUARE,
             in_specs=((None, "b"), ()), out_spec=(None, ("a", "b")), shape=(1, 4)),
        "the output's axes start with another axis than the operand's"),
    "explicit_jitted_exp_relaid_out": Pair(
        call("exp", (np.zeros((2, 4, 2), np.float32),), mesh=SQUARE, axis_type="Explicit",
             in_specs=(("b", None, "a"),), out_spec=(None, ("a", "b")), shape=(2, 4, 2)),
        call("exp", (np.zeros((2, 4, 2), np.float32),), mesh=SQUARE, axis_type="Explicit",
             in_specs=(("b", None, "a"),), out_spec=("b", None, "a"), shape=(2, 4, 2)),
        "the output keeps the operand's layout",
        (np.array([1.4549913, 5.0784187], np.float32), np.array([1.4549915, 5.078419], np.float32))),
    "explicit_step_rejected_as_typed_before_a_device_put": pair_explicit(
        triggers.REJECTED_AS_TYPED_BEFORE_A_DEVICE_PUT, (X4,), (("a",),), way=JIT),
    "second_layout_change_in_a_row": Pair(
        call("layout change of a layout change", (), {"earlier": ((("a",), (4,)),)}, way=CONSTRAINED),
        call("constraint", (X4,), {"spec": ("a",)}, in_specs=((),), way=CONSTRAINED), "one layout change",
        (blocks(MESH, (), (4,)), blocks(MESH, ("a",), (4,)))),
    "at_update_of_a_value_a_constraint_has_just_cut": Pair(
        call("at_min", (X4, X4[:2]), in_specs=(None, ()), way=CONSTRAINED, producers=(constraint((), ("a",)), None)),
        call("at_min", (X4, X4[:2]), in_specs=(None, ()), way=CONSTRAINED,
             producers=(constraint(("a",), ("a",)), None)),
        "the constraint keeps its operand's layout", (a(0, 1, 2, 0), a(0, 3, 2, 0))),
    "jitted_at_update_of_a_join_along_its_cut_dimension": Pair(
        call("at_set_shifted", (a(0, 1, 2, 2, 2, 2),), {"axis": 0, "shift": 5}, in_specs=(("a",),), out_spec=(),
             producers=(call("pad", (a(0, 1, 2),), {"widths": ((0, 3),), "mode": "edge"}, in_specs=(("a",),)),)),
        call("at_set_shifted", (a(0, 1, 2, 2, 2, 2),), {"axis": 0, "shift": 5}, in_specs=(("a",),), out_spec=(),
             producers=(call("negative", (a(0, 1, 2, 2, 2, 2),), in_specs=(("a",),), producers=(
                 call("pad", (a(0, 1, 2),), {"widths": ((0, 3),), "mode": "edge"}, in_specs=(("a",),)),)),)),
        "a negation between the pad and the update", (a(2, 1, 2, 2, 2, 2), a(2, 1, 0, 2, 0, 2))),
    "jitted_at_update_of_a_transposed_replicated_value_into_a_cut_output": Pair(
        call("negative", (X44,), in_specs=((),), out_spec=("a",), producers=(
            call("at_add_indices", (X44, a(0), X44[:1]), in_specs=((), (), ()), out_spec=None, producers=(
                call("swapaxes", (X44,), {"a": 0, "b": -1}, in_specs=((),), producers=(
                    constraint(("a",), ()),)), None, None)),)),
        call("negative", (X44,), in_specs=((),), out_spec=("a",), producers=(
            call("at_add_indices", (X44, a(0), X44[:1]), in_specs=((), (), ()), out_spec=None, producers=(
                call("swapaxes", (X44,), {"a": 0, "b": -1}, in_specs=((),), producers=(
                    constraint(("a",), ("a",)),)), None, None)),)),
        "the constraint before the transpose cuts", (a(0, -1, -2, -3), a(0, -1, 0, -3))),
    "strided_at_update_of_a_slice_of_a_partially_replicated_operand": Pair(
        call("at_max", (a(0), a(0)), {"index": slice(None, None, 2)}, in_specs=(None, None), way=JIT,
             producers=(call("negative", (a(0),), in_specs=(None,), producers=(
                 call("slice", (a(0, 1),), {"index": (slice(None, 1, 1),)}, in_specs=(("a",),)),)), None)),
        call("at_max", (a(0), a(0)), {"index": slice(None, None, 2)}, in_specs=(None, None), way=JIT,
             producers=(call("negative", (a(0),), in_specs=(None,), producers=(
                 call("slice", (a(0, 1),), {"index": (slice(None, 1, 1),)}, in_specs=((("a", "b"),),)),)), None)),
        "the sliced operand is cut over every axis", (a(0), a(-1))),
    "strided_at_update_of_a_cut_operand_by_itself": Pair(
        call("at_min", (ROW, ROW), {"index": slice(None, None, 2)}, mesh=TWO,
             in_specs=((None, "a"), (None, "a")), way=JIT),
        call("at_min", (ROW, ROW.copy()), {"index": slice(None, None, 2)}, mesh=TWO,
             in_specs=((None, "a"), (None, "a")), way=JIT),
        "the update is another value, equal to the operand",
        (np.array([[0, 1]], np.int32), np.array([[0, 0]], np.int32))),
    "at_update_after_a_strided_one_on_a_constrained_value": Pair(
        call("at_min", (X4, X4[:1]), {"index": slice(0, 1, 2)}, in_specs=(None, ()), out_spec=("a",), way=JIT,
             producers=(call("at_min", (X4, X4[:2]), {"index": slice(None, None, 2)}, in_specs=(None, ()), way=JIT,
                             producers=(constraint((), ()), None)), None)),
        call("at_min", (X4, X4[:1]), {"index": slice(0, 1, 2)}, in_specs=(None, ()), out_spec=(), way=JIT,
             producers=(call("at_min", (X4, X4[:2]), {"index": slice(None, None, 2)}, in_specs=(None, ()), way=JIT,
                             producers=(constraint((), ()), None)), None)),
        "the output is replicated", (a(0, 1, 2, 3), a(0, 1, 0, 3))),
    "jitted_forward_shift_of_a_cumulative_value": Pair(
        call("at_set_shifted", (X4,), {"shift": -1}, in_specs=(None,), way=JIT,
             producers=(call("cumsum", (X4,), {"axis": 0}, in_specs=((),)),)),
        call("at_set_shifted", (X4,), {"shift": -1}, in_specs=(None,), way=JIT,
             producers=(call("negative", (X4,), in_specs=((),)),)),
        "the shifted value is not a scan's", (a(0, 0, 1, 3), a(0, 0, 0, 0))),
    "jitted_stack_cutting_its_new_dimension_after_a_cut_one": Pair(
        call("stack", (a(1, 2), a(1, 2)), {"axis": 1}, mesh=MeshModel((0, 1, 2, 3), (2, 2), ("a", "b")),
             in_specs=((), ()), out_spec=("a", "b"), shape=(2, 2)),
        call("stack", (a(1, 2), a(1, 2)), {"axis": 1}, mesh=MeshModel((0, 1, 2, 3), (2, 2), ("a", "b")),
             in_specs=((), ()), out_spec=(None, "b"), shape=(2, 2)),
        "the dimension before the new one is not cut", (a(1, 1, 2, 2).reshape(2, 2), a(1, 1, 0, 0).reshape(2, 2))),
    "jitted_take_of_operand_and_indices_cut_alike_into_another_axis": Pair(
        call("take", (X22, np.zeros(4, np.int32)), {"axis": 1}, mesh=MeshModel(tuple(range(8)), (4, 2), ("a", "b")),
             in_specs=(("b",), ("b",)), out_spec=(None, "a"), shape=(2, 4)),
        call("take", (X22, np.zeros(4, np.int32)), {"axis": 1}, mesh=MeshModel(tuple(range(8)), (4, 2), ("a", "b")),
             in_specs=(("b",), ("b",)), out_spec=(None, "b"), shape=(2, 4)),
        "the output cuts the indices' dimension over their own axis"),
    "loss_varying_over_the_body_axis": Pair(
        SimpleNamespace(collective=SimpleNamespace(name="all_gather"), invariant=False),
        SimpleNamespace(collective=SimpleNamespace(name="psum"), invariant=True),
        "the collective's result is invariant"),
    "named_vmap_permuting_a_negative_zero_across_devices": Pair(
        SimpleNamespace(collective=SimpleNamespace(name="ppermute"), placed=True, x=np.array([-0.0, 1.0], np.float32)),
        SimpleNamespace(collective=SimpleNamespace(name="ppermute"), placed=True, x=np.array([0.0, 1.0], np.float32)),
        "no value is -0.0", (np.array([-0.0, 1.0], np.float32), np.array([0.0, 1.0], np.float32))),
    "partial_permutation_under_a_named_vmap": Pair(
        SimpleNamespace(collective=SimpleNamespace(name="ppermute", params=(("perm", ((0, 1),)),)), size=4),
        SimpleNamespace(collective=SimpleNamespace(name="ppermute", params=(("perm", ((0, 1), (1, 2), (2, 3),
                                                                                      (3, 0))),)), size=4),
        "the perm names every batch member"),
    "checked_body_with_pmax": Pair(
        MultiAxisExample(MESH, ("a",), SimpleNamespace(name="pmax"), X4),
        MultiAxisExample(MESH, ("a",), SimpleNamespace(name="psum"), X4),
        "the collective is psum"),
    "jitted_body_manual_over_axes_out_of_their_names_order": Pair(
        SimpleNamespace(mode="jit, manual over some axes", mesh=CUBE_BAX, manual_axes=("b", "a")),
        SimpleNamespace(mode="jit, manual over some axes", mesh=CUBE_BAX, manual_axes=("a", "x")),
        "the manual axes come in their names' order"),
    "transposed_jit_with_a_cut_output": Pair(
        SimpleNamespace(transform="grad", mesh=MESH, out_spec=("a",)),
        SimpleNamespace(transform="grad", mesh=SIZE_ONE, out_spec=("b",)), "the output's axis has size 1"),
    "pmap_axis_smaller_than_its_devices": Pair(
        SimpleNamespace(given=2, axis_size=1), SimpleNamespace(given=2, axis_size=2), "the axis matches its devices"),
    "vmapped_body_with_psum_or_pmean": Pair(
        VmappedBody(SimpleNamespace(name="psum"), MESH, "a", X4, X4),
        VmappedBody(SimpleNamespace(name="pmax"), MESH, "a", X4, X4),
        "the body applies pmax"),
    "vmapped_partially_replicated_join": Pair(
        VmapExample(SimpleNamespace(name="stack"), 2, {}, MESH, (("a",),), True),
        VmapExample(SimpleNamespace(name="stack"), 2, {}, MESH, ((),), True), "the batched operand is replicated",
        (a(1, 2, 3, 4), a(2, 4, 6, 8))),
    "vmapped_operands_over_combined_axes": Pair(
        VmapExample(SimpleNamespace(name="add"), 2, {}, MESH, ((("a", "b"),),), True),
        VmapExample(SimpleNamespace(name="add"), 2, {}, MESH, (("a",),), True), "one mesh axis per dimension"),
    "vmapped_dynamic_slice_far_out_of_range_over_a_cut_batch": Pair(
        VmapExample(SimpleNamespace(name="dynamic_slice"), (np.array([[1, 2], [3, 4]], np.int32), a(3, 3)),
         {"sizes": (1,)}, MESH, (("a",), ()), False),
        VmapExample(SimpleNamespace(name="dynamic_slice"), (np.array([[1, 2], [3, 4]], np.int32), a(2, 2)),
         {"sizes": (1,)}, MESH, (("a",), ()), False), "the start is within [-n, n]",
        (np.array([[2], [4]], np.int32), np.zeros((2, 1), np.int32))),
    "vmapped_dynamic_slice_far_out_of_range_on_a_cut_dimension": Pair(
        VmapExample(SimpleNamespace(name="dynamic_slice"), (np.array([[1, 2], [3, 4]], np.int32), a(2, 2)),
         {"sizes": (1,)}, MESH, ((None, "a"), ()), False),
        VmapExample(SimpleNamespace(name="dynamic_slice"), (np.array([[1, 2], [3, 4]], np.int32), a(1, 1)),
         {"sizes": (1,)}, MESH, ((None, "a"), ()), False), "the start is inside the dimension",
        (np.array([[2], [4]], np.int32), np.zeros((2, 1), np.int32))),
    "vmapped_clipped_take_on_a_cut_axis": Pair(
        VmapExample(SimpleNamespace(name="take_clip"), (np.array([[0, 1], [2, 1]], np.int32), a(-1, -1)),
         {"axis": 0}, MESH, ((None, "a"), ()), False),
        VmapExample(SimpleNamespace(name="take_clip"), (np.array([[0, 1], [2, 1]], np.int32), a(0, 1)),
         {"axis": 0}, MESH, ((None, "a"), ()), False), "the indices are inside the axis",
        (np.array([0, 2], np.int32), np.array([0, 0], np.int32))),
    "vmapped_clipped_take_over_a_cut_batch": Pair(
        VmapExample(SimpleNamespace(name="take_clip"), (np.array([[0, 1], [2, 1]], np.int32), a(-1, -1)),
         {"axis": 0}, MESH, (("b",), ()), False),
        VmapExample(SimpleNamespace(name="take_clip"), (np.array([[0, 1], [2, 1]], np.int32), a(0, 1)),
         {"axis": 0}, MESH, (("b",), ()), False), "the indices are inside the axis",
        (np.array([0, 2], np.int32), np.array([0, 0], np.int32))),
    "vmapped_pad_starting_inside_interior_padding": Pair(
        VmapExample(SimpleNamespace(name="lax_pad_negative"), 2, {"config": ((-1, 0, 1),)}, MESH,
         ((None, "a"), ()), False),
        VmapExample(SimpleNamespace(name="lax_pad_negative"), 2, {"config": ((-2, 0, 1),)}, MESH,
         ((None, "a"), ()), False),
        "the result starts on an element"),
    "vmapped_strided_slice_of_a_cut_dimension": Pair(
        VmapExample(SimpleNamespace(name="strided_slice"), (np.zeros((2, 8), np.float32),),
         {"index": (slice(None, -2, -3),)}, MESH, ((None, "b"),), False),
        VmapExample(SimpleNamespace(name="strided_slice"), (np.zeros((2, 8), np.float32),),
         {"index": (slice(None, -2, -3),)}, MESH, (("b",),), False),
        "the batched operand cuts its batch dimension, not the sliced one",
        (np.array([[7.0], [7.0]], np.float32), np.array([[0.0], [0.0]], np.float32))),
    "auto_split_of_a_cut_dimension_into_a_part_the_axes_cannot_cut": Pair(
        Reshape(MESH, "Auto", np.arange(8, dtype=np.int32), (2, 4), "split", (0,), (0, 1), ("b",), ()),
        Reshape(MESH, "Auto", np.arange(8, dtype=np.int32), (4, 2), "split", (0,), (0, 1), ("b",), ()),
        "the first part is a multiple of the axis"),
    "jitted_edge_pad_of_two_dimensions_moving_a_cut_axis": Pair(
        call("pad", (X22,), {"widths": ((0, 2), (1, 0)), "mode": "edge"}, mesh=SQUARE, in_specs=(("a", "b"),),
             out_spec=("b",), shape=(4, 3)),
        call("pad", (X22,), {"widths": ((0, 2), (1, 0)), "mode": "edge"}, mesh=SQUARE, in_specs=((None, "b"),),
             out_spec=("b",), shape=(4, 3)), "the operand cuts one dimension only"),
    "batch_laid_out_over_an_axis_both_operands_contract_over": Pair(
        Contraction(MESH, "Auto", "dot_general", X44, X44, "bk", "kb", "b", ("a", "b"), ("b", "a"), ("b",)),
        Contraction(MESH, "Auto", "dot_general", X44, X44, "bk", "kb", "b", ("a", None), (None, "a"), ("b",)),
        "the contracted dimension is not cut",
        (np.array([16, 49, 69, 76], np.int32), np.array([16, 49, 0, 0], np.int32))),
    "take_along_a_cut_operand_over_two_mesh_axes": Pair(
        call("take_along_axis", (X22, np.array([[0, 1], [1, 1]], np.int32)), {"axis": 0}, mesh=CUBE,
             in_specs=(("a",), ()), out_spec=("x", "b"), shape=(2, 2)),
        call("take_along_axis", (X22, np.array([[0, 1], [1, 1]], np.int32)), {"axis": 0}, mesh=CUBE,
             in_specs=((), ()), out_spec=("x", "b"), shape=(2, 2)),
        "the operand and the indices are replicated",
        (np.array([[0, 3], [2, 3]], np.int32), np.array([[2, 3], [2, 3]], np.int32))),
    "jitted_take_along_into_combined_axes_out_of_mesh_order": Pair(
        call("take_along_axis",
             (np.arange(4, dtype=np.int32).reshape(1, 2, 2),
              np.array([[[1, 1], [1, 1], [0, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1]]], np.int32)),
             {"axis": 1}, mesh=CUBE, in_specs=((), ()),
             out_spec=(None, ("x", "b"), "a"), shape=(1, 8, 2)),
        call("take_along_axis",
             (np.arange(4, dtype=np.int32).reshape(1, 2, 2),
              np.array([[[1, 1], [1, 1], [0, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1]]], np.int32)),
             {"axis": 1}, mesh=CUBE, in_specs=((), ()),
             out_spec=(None, ("b", "x"), "a"), shape=(1, 8, 2)), "the axes are combined in the mesh's order",
        (np.array([[[2, 3], [2, 3], [0, 3], [2, 3], [2, 3], [2, 3], [2, 3], [2, 3]]], np.int32),
         np.array([[[2, 3], [2, 3], [2, 3], [2, 3], [2, 3], [2, 3], [2, 3], [2, 3]]], np.int32))),
    "batch_and_free_dimension_returned_over_swapped_axes": Pair(
        Contraction(MESH, "Auto", "dot_general", X444, X44, "bkm", "kb", "bm", ("a", "b"), ("b", "a"), ("b", "a")),
        Contraction(MESH, "Auto", "dot_general", X444, X44, "bkm", "kb", "bm", ("a", "b"), ("b", "a"), ("b",)),
        "the free dimension is not cut",
        {"zeros": (np.einsum("bkm,kb->bm", X444, X44), np.concatenate([np.einsum("bkm,kb->bm", X444, X44)[:2],
                                                                      np.zeros((2, 4), np.int32)])),
         "values_of_the_expected_result": (np.einsum("bkm,kb->bm", X444, X44),
                                           np.roll(np.einsum("bkm,kb->bm", X444, X44), 1, axis=0))}),
    "batch_returned_over_an_axis_cutting_other_contracted_dimensions": Pair(
        Contraction(MESH, "Auto", "dot_general", X444, X444, "bkl", "bkl", "b", ("a", None, "b"), ("a", "b"), ("b",)),
        Contraction(MESH, "Auto", "dot_general", X444, X444, "bkl", "bkl", "b", ("a", None, "b"), ("a", None, "b"),
                    ("b",)),
        "both operands cut the same contracted dimension",
        {"zeros": (np.einsum("bkl,bkl->b", X444, X444),
                   np.concatenate([np.einsum("bkl,bkl->b", X444, X444)[:2], np.zeros(2, np.int32)]))}),
    "explicit_merge_over_size_one_axes_only": Pair(
        Reshape(SIZE_ONE, "Explicit", np.arange(8, dtype=np.int32).reshape(2, 2, 2), (4, 2), "merge", (0, 1), (0,),
                (None, "b"), ()),
        Reshape(SIZE_ONE, "Explicit", np.arange(8, dtype=np.int32).reshape(2, 2, 2), (4, 2), "merge", (0, 1), (0,),
                (None, "a"), ()), "the axis has size 8"),
    "bfloat16_operands_summed_in_float32": Pair(
        SimpleNamespace(dtype="bfloat16"), SimpleNamespace(dtype="float32"), "the program is float32"),
    "untiled_all_to_all_moving_its_split_dimension": Pair(
        AllToAllExample(MESH, ("a", "b"), 0, 1, False, (8, 2)), AllToAllExample(MESH, ("a", "b"), 0, 1, True, (8, 2)),
        "it is tiled"),
    "non_partitionable_draw_into_a_partially_replicated_layout": Pair(
        SimpleNamespace(partitionable=False, mesh=MESH, out_spec=("a",), key_spec=()),
        SimpleNamespace(partitionable=True, mesh=MESH, out_spec=("a",), key_spec=()),
        "jax_threefry_partitionable is on",
        (a(5, 2**31 + 7, dtype=np.uint32), a(10, 14, dtype=np.uint32))),
    "jitted_einsum_returning_its_batch_and_free_dimensions_over_swapped_axes": Pair(
        call("einsum", (np.zeros((4, 2, 2), np.float32), np.zeros((4, 2, 4), np.float32)),
             {"subscripts": "bij,bjk->bik"}, mesh=MeshModel(tuple(range(8)), (1, 4, 1, 2), ("a", "b", "x", "y")),
             in_specs=((("a", "b"), None, "y"), ("b", ("a", "x", "y"))), out_spec=(("a", "x", "y"), None, "b"),
             shape=(4, 2, 4)),
        call("einsum", (np.zeros((4, 2, 2), np.float32), np.zeros((4, 2, 4), np.float32)),
             {"subscripts": "bij,bjk->bik"}, mesh=MeshModel(tuple(range(8)), (1, 4, 1, 2), ("a", "b", "x", "y")),
             in_specs=((("a", "b"), None, "y"), ("b", ("a", "x", "y"))), out_spec=("b", None, ("a", "x", "y")),
             shape=(4, 2, 4)),
        "the batch is returned over the axis that cut it",
        {"zeros": (np.array([-32.0, 7.0], np.float32), np.array([0.0, 0.0], np.float32)),
         "values_of_the_expected_result": (np.array([-32.0, 7.0], np.float32), np.array([7.0, -32.0], np.float32))}),
    "compiled_call_on_other_devices_with_other_blocks": Pair(
        SimpleNamespace(shape=(8, 2), mesh=MeshModel((0, 1, 2, 3), (4,), ("a",)), spec=("a",),
                        other="the same spec on other devices", other_mesh=MeshModel((4, 5, 6, 7), (4,), ("a",))),
        SimpleNamespace(shape=(8, 2), mesh=MeshModel((0, 1, 2, 3), (4,), ("a",)), spec=(),
                        other="the same spec on other devices", other_mesh=MeshModel((1, 0, 2, 3), (4,), ("a",))),
        "every device holds the block it was compiled for"),
    "eager_vmapped_concatenate_of_a_cut_operand_with_uncut_ones": Pair(
        VmapExample(SimpleNamespace(name="concatenate"), (np.zeros((2, 2, 2), np.int32), np.zeros((2, 8, 2), np.int32)),
                    {"axis": 0}, MeshModel(tuple(range(8)), (8,), ("a",)), ((), (None, ("a",))), False),
        VmapExample(SimpleNamespace(name="concatenate"), (np.zeros((2, 2, 2), np.int32), np.zeros((2, 8, 2), np.int32)),
                    {"axis": 0}, MeshModel(tuple(range(8)), (8,), ("a",)), ((), (None, ("a",))), True),
        "it runs under jit"),
    "untiled_gather_on_one_process": Pair(
        SimpleNamespace(tree={"leaves": [{"shape": [2], "dtype": "int32"}], "seed": 0}, tiled=False, kind="numpy"),
        SimpleNamespace(tree={"leaves": [{"shape": [2], "dtype": "int32"}], "seed": 0}, tiled=True, kind="numpy"),
        "tiled=True"),
    "tiled_gather_of_a_scalar_leaf": Pair(
        SimpleNamespace(tree={"leaves": [{"shape": [], "dtype": "int32"}], "seed": 0}, tiled=True, kind="numpy"),
        SimpleNamespace(tree={"leaves": [{"shape": [1], "dtype": "int32"}], "seed": 0}, tiled=True, kind="numpy"),
        "no leaf is a scalar"),
    "constrained_dimension_dropping_an_axis_its_input_cuts_it_over": Pair(
        PartlyConstrained(MESH, "Auto", np.zeros((4, 4), np.int32), ("a",), (None, None), (1,)),
        PartlyConstrained(MESH, "Auto", np.zeros((4, 4), np.int32), ("a",), ("a", None), (1,)),
        "the constrained dimension keeps its input's axis",
        ({d: ((0, 4),) for d in range(8)}, {d: ((0, 2),) if d < 4 else ((2, 4),) for d in range(8)})),
    "checkpoint_policy_saving_the_named_value": Pair(
        _remat(("save_only_these_names", ("s",))), _remat(("nothing_saveable", ())), "nothing is saved"),
    "auto_branches_constrained_to_different_layouts": Pair(
        SimpleNamespace(axis_type="Auto", branch_specs=(("a",), None)),
        SimpleNamespace(axis_type="Auto", branch_specs=(("a",), ("a",))), "the branches ask for one layout"),
    "checkpoint_policy_saving_an_intermediate": Pair(
        _remat(("dots_saveable", ())), _remat(("nothing_saveable", ())), "only the arguments are saved"),
    "stack_checkpointed_to_save_only_the_named_value": Pair(
        SimpleNamespace(policy="save_only_these_names"), SimpleNamespace(policy="nothing_saveable"),
        "the policy saves nothing"),
    "host_value_holding_a_nan": Pair(
        SimpleNamespace(x=np.array([1.0, np.nan, 2.0, 3.0], np.float32)),
        SimpleNamespace(x=np.array([1.0, np.inf, 2.0, 3.0], np.float32)),
        "an infinity where the NaN was"),
    "host_value_holding_a_flushed_subnormal": Pair(
        SimpleNamespace(x=np.array([1.0, 1.36e-43, 2.0, 3.0], np.float32)),
        SimpleNamespace(x=np.array([1.0, 1.36e-43, 2.0, 3.0], np.float32).astype(np.float16) + np.float16(6e-8)),
        "a float16 value, whose subnormal the check keeps"),
    "eager_device_put_of_a_computed_value": Pair(
        call("device_put", [X4], {"spec": ()}, in_specs=[("a",)], out_spec=(), way=EAGER,
             producers=[call("flip", [X4], {"axis": 0}, in_specs=[("a",)], way=EAGER)]),
        call("device_put", [X4], {"spec": ()}, in_specs=[("a",)], out_spec=(), way=EAGER, producers=[None]),
        "its operand is a program input"),
    "eager_auto_result_ignoring_its_operands_values": Pair(
        call("jnp.imag", (X4.astype(np.float32),), in_specs=(("a",),), way=EAGER),
        call("jnp.imag", ((X4 + 1j).astype(np.complex64),), in_specs=(("a",),), way=EAGER),
        "the operand is complex: the result is its imaginary part",
        {"held_by_fewer_devices": (CUT_4, {0: ((0, 4),)}), "replicated_where_cut_was_asked": (CUT_4, WHOLE_4)}),
    "eager_auto_erf_of_a_cut_operand": Pair(
        call("lax.erf", (X4.astype(np.float32),), in_specs=(("a",),), way=EAGER),
        call("lax.erf", (X4.astype(np.float32),), in_specs=((),), way=EAGER),
        "the operand is replicated", (CUT_4, WHOLE_4)),
    "explicit_elementwise_of_operands_sharded_unlike_each_other": Pair(
        explicit("lax.igamma", (X4.astype(np.float32), X4.astype(np.float32)), (("a",), ())),
        explicit("lax.igamma", (X4.astype(np.float32), X4.astype(np.float32)), (("a",), ("a",))),
        "both operands are cut alike"),
    "convolution_cut_over_part_of_the_mesh": Pair(
        call("jnp.convolve", (X4[:2].astype(np.float32), X4[:3].astype(np.float32)), {"mode": "full"},
             in_specs=(("b",), ()), out_spec=("b",), shape=(4,)),
        call("jnp.convolve", (X4[:2].astype(np.float32), X4[:3].astype(np.float32)), {"mode": "full"},
             in_specs=(("a", "b"), ()), out_spec=(("a", "b"),), shape=(4,)),
        "the cut is over every mesh axis: nothing is replicated over another",
        wrong=(np.array([1.0, 4.0, 7.0, 6.0], np.float32), np.array([4.0, 16.0, 28.0, 24.0], np.float32))),
    "bitwise_reduction_over_a_cut_dimension": Pair(
        call("lax.reduce_xor", (X22,), {"axis": (0,)}, in_specs=(("a",),), way=EAGER),
        call("lax.reduce_xor", (X22,), {"axis": (1,)}, in_specs=(("a",),), way=EAGER),
        "the reduced dimension is not the cut one"),
    "mulhi_over_several_devices": Pair(
        call("lax.mulhi", (X4, X4), in_specs=((), ())),
        call("lax.mulhi", (X4, X4), mesh=MeshModel((0,), (1,), ("a",)), in_specs=((), ())),
        "the mesh has one device"),
}


def table(rows) -> str:
    """The Markdown table of triggers and their meta-tests: ``rows`` of (trigger, entries,
    plants)."""
    lines = ["# Triggers and their meta-tests", "",
             "Written by `python -m tests.test_trigger_meta > tests/TRIGGERS.md` (tests/test_trigger_meta.py checks",
             "that it is current). For each trigger: the known-deviation entries that name it; the example",
             "it holds for and its near miss (tests/trigger_examples.py); the unrelated failures planted into",
             "the example, none of which an entry may excuse. Every row's meta-test is",
             "`tests/test_trigger_meta.py::test_no_entry_of_a_trigger_excuses_an_unrelated_failure[<trigger>]`.",
             "Grouped by the family each serves (``@trigger(family)`` in conformance/checking/triggers.py).",
             "", "| family | trigger | entries | near miss (the entry's own symptom, not excused) "
                 "| unrelated failures planted |",
             "|---|---|---|---|---|"]
    for name, entries, plants in rows:
        lines.append(f"| {triggers.FAMILY[name]} | `{name}` | {entries} | {EXAMPLES[name].taken_away} "
                     f"| {'; '.join(plants)} |")
    return "\n".join(lines) + "\n"

