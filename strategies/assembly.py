"""Arrays assembled from per-device pieces: layouts over meshes whose device order is permuted, the
order the pieces are handed over in, global values whose pieces are all distinct, and the ways a
set of pieces can be wrong (a piece on a device outside the sharding, two pieces on one device, a
piece of the wrong shape); and the per-process pytrees and broadcast sources of the multiprocess
suite's multihost_utils properties. Model objects and numpy only (no JAX).

``tests/test_assembly_strategies.py`` holds the floors: how often the mesh's device order is not
the ids' order, how often the pieces are handed over in neither the mesh's order nor the ids'
order, how often the layout cuts the array, and that every two different blocks hold different
values, how often each kind of wrong piece is drawn, and how often the broadcast source is a
process other than 0.
"""

from __future__ import annotations

from typing import Sequence, Tuple

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance.model.layout import Layout, MeshModel, block_slices, spec_axes

from .meshes import axis_names, leading, mesh_shapes
from .odds import mostly
from .reuse import permuted, sampled_from
from .shapes import congruent_shapes
from .specs import partition_specs
from .spmd import device_orders

# The ways a list of pieces can be wrong, as make_array_from_single_device_arrays refuses them.
WRONG_PIECES = ("device-outside-the-sharding", "two-pieces-on-one-device", "wrong-shape")


@st.composite
def permuted_meshes(draw, device_ids: Sequence[int], *, max_axes: int = 3) -> MeshModel:
    """A mesh over all of ``device_ids`` or (1 in 2) a leading subset of 2 or more (``leading``), its devices
    mostly (3 in 4) in a permuted one of ``strategies.spmd.device_orders`` of them (reversed,
    interleaved, rotated by one), else as given. Shrinks towards all devices in the given order,
    on one axis."""
    ids = tuple(device_ids)
    count = len(ids) if len(ids) <= 2 or draw(st.booleans()) else draw(st.integers(2, len(ids) - 1))
    orders = device_orders(tuple(leading(device_ids, count)))
    reordered = orders[1:] and draw(mostly())
    order = draw(sampled_from(orders[1:])) if reordered else orders[0]
    shape = draw(mesh_shapes(len(order), max_axes=max_axes))
    return MeshModel(tuple(order), shape, draw(axis_names(len(shape))))


def cuts(mesh: MeshModel, spec) -> bool:
    """Whether ``spec`` names a mesh axis of size > 1."""
    return any(mesh.axis_sizes[name] > 1 for axes in spec_axes(spec) for name in axes)


def distinct_values(shape, dtype_name: str, offset: int) -> np.ndarray:
    """Distinct values of ``shape`` (so every two different blocks differ): offset, offset + 1, ...
    in ``dtype_name`` (small integers, exact in float32)."""
    return (np.arange(int(np.prod(shape)), dtype=np.int64) + offset).astype(dtype_name).reshape(shape)


@st.composite
def assembly_examples(draw, device_ids: Sequence[int], *, max_rank: int = 2):
    """(layout, x, order): a non-empty layout of rank 1..``max_rank`` over a ``permuted_meshes``
    mesh, its spec mostly (3 in 4) naming a mesh axis of size > 1 (so it cuts); distinct int32 or
    float32 values ``x`` of its shape; and ``order``, a permutation of the mesh's devices: the order
    the pieces are handed over in. Shrinks towards the mesh's order."""
    mesh = draw(permuted_meshes(device_ids))
    rank = draw(st.integers(1, max_rank))
    cut = mesh.size > 1 and draw(mostly())
    spec = draw(partition_specs(mesh, rank).filter(lambda s: cuts(mesh, s) or not cut))
    shape = draw(congruent_shapes(mesh, spec, rank, max_side=2, zero_size=False))
    x = distinct_values(shape, draw(sampled_from(("int32", "float32"))), draw(st.integers(0, 99)))
    order = tuple(draw(permuted(mesh.device_ids)))
    return Layout(mesh, spec, shape), x, order


def pieces_of(layout: Layout, x: np.ndarray, order: Sequence[int]) -> Tuple[Tuple[int, np.ndarray], ...]:
    """(device, x[its block]) for each device of ``order``: the pieces as the model cuts them."""
    return tuple((d, x[block_slices(layout.block(d))]) for d in order)


def wrong_piece_kinds(layout: Layout, device_ids: Sequence[int]) -> Tuple[str, ...]:
    """The kinds of ``WRONG_PIECES`` this layout admits: a device outside the sharding needs a
    device the mesh lacks; two pieces on one device, two devices in the mesh."""
    kinds = []
    if set(device_ids) - set(layout.mesh.device_ids):
        kinds.append("device-outside-the-sharding")
    if layout.mesh.size > 1:
        kinds.append("two-pieces-on-one-device")
    kinds.append("wrong-shape")
    return tuple(kinds)


@st.composite
def wrong_pieces(draw, device_ids: Sequence[int]):
    """(layout, x, pieces, kind, victim): an ``assembly_examples`` example whose pieces
    ((device, values) pairs, in the drawn order) are wrong in one way, ``kind``, at the piece of
    device ``victim``: moved to a device outside the sharding, moved onto another piece's device,
    or given a shard shape one longer in a drawn dimension."""
    layout, x, order = draw(assembly_examples(device_ids))
    pieces = list(pieces_of(layout, x, order))
    kind = draw(sampled_from(wrong_piece_kinds(layout, device_ids)))
    at = draw(st.integers(0, len(pieces) - 1))
    victim, data = pieces[at]
    if kind == "device-outside-the-sharding":
        outside = sorted(set(device_ids) - set(layout.mesh.device_ids))
        pieces[at] = (draw(sampled_from(outside)), data)
    elif kind == "two-pieces-on-one-device":
        other = draw(sampled_from([d for d, _ in pieces if d != victim]))
        pieces[at] = (other, data)
    else:
        dim = draw(st.integers(0, data.ndim - 1))
        pieces[at] = (victim, np.concatenate([data, data.take([0], axis=dim)], axis=dim))
    return layout, x, tuple(pieces), kind, victim


# --- per-process values for multihost_utils (the multiprocess suite) ---------------------------
@st.composite
def per_process_trees(draw):
    """The leaves of a pytree {"first": leaf, "rest": (leaves)} that each process fills with its own
    values (``conformance.runner.multiprocess.steps.local_leaves``: distinct per process): 1 to 3
    leaves of rank 0 to 2 (sides 1 to 3), int32 or float32, and a seed. Shrinks towards one int32
    scalar."""
    leaves = draw(st.lists(st.tuples(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3),
                                     sampled_from(("int32", "float32"))), min_size=1, max_size=3))
    return {"leaves": [{"shape": list(shape), "dtype": dtype} for shape, dtype in leaves],
            "seed": draw(st.integers(0, 99))}


@st.composite
def broadcast_sources(draw, process_count: int):
    """broadcast_one_to_all's source: None (the default, process 0) in 1 of 4 draws, else a process
    index for is_source=: process 0 in 1 of 4, another process in 2 of 4 (so that a process other
    than 0 is often the source). Shrinks towards None."""
    kind = draw(sampled_from(("default", "process 0", "another", "another")))
    if kind == "default":
        return None
    return 0 if kind == "process 0" or process_count == 1 else draw(st.integers(1, process_count - 1))
