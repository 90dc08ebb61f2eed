"""The sharding-rule model's second layer: jnp's indexing translated to primitive rules
(``sharding_rules`` states the vocabulary). A static slice, an integer-array index, an ``.at[]``
update's target and ``jnp.take_along_axis`` each bind a ``slice``, a ``gather`` or a ``scatter``
whose operands jnp builds (``_index_to_gather``, ``_attempt_rewriting_take_via_slice``): this
layer builds them as jnp does and runs the primitive rules on them.

Which route jnp takes can depend on the release (``before_indexing_infers``: the catalogue
layer's ``ReleaseRules.indexing_infers_sharding``). Imports only the primitive rules
(``sharding_primitives``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from .layout import MeshModel, Spec, SpecEntry
from .sharding_primitives import GatherDims, IllTyped, Shape, gather, no_repeated_axis, reshape, resized, tiling


# --- jnp indexing: the indexer jnp builds for static slices and one integer array ------------------
def slice_triple(s: slice, n: int) -> Tuple[int, int, int]:
    """(start, step, size) of a slice over a side ``n``."""
    start, stop, step = s.indices(n)
    return start, step, len(range(start, stop, step))


def full_index(index, rank: int) -> tuple:
    """``index`` (a slice or a tuple of them) with a whole slice for each dimension it leaves out."""
    index = tuple(index) if isinstance(index, tuple) else (index,)
    return index + (slice(None),) * (rank - len(index))


@dataclass(frozen=True)
class Indexer:
    """What jnp's ``_index_to_gather`` builds for an index of slices with, optionally, an integer
    array indexing dimension 0: the gather dimension numbers and slice sizes, the indices' spec, and
    the slice's shape and spec (the target of a scatter's updates)."""

    dims: GatherDims
    slice_sizes: Tuple[int, ...]
    indices_spec: Spec
    slice_shape: Shape
    slice_spec: Spec


def indexer(shape: Shape, spec: Spec, index, array: Optional[Tuple[Shape, Spec]] = None) -> Indexer:
    """``index``: slices, one per leading dimension (``array``: an integer array of that shape and
    spec indexes dimension 0, the slices the others). Index arrays jnp builds from static slices
    are unsharded."""
    offset, collapsed, start_map, slice_sizes = [], [], [], []
    slice_shape: List[int] = []
    slice_spec: List[SpecEntry] = []
    index_dims = 0       # dimensions of the index arrays built for strided slices
    pieces = 0           # index arrays to concatenate
    y_axis = 0
    first = 0
    array_spec: Spec = ()
    if array is not None:
        a_shape, array_spec = array
        start_map.append(0)
        collapsed.append(0)
        slice_sizes.append(1)
        slice_shape += a_shape
        slice_spec += array_spec
        y_axis += len(a_shape)
        index_dims += len(a_shape)
        pieces += 1
        first = 1
    rest = full_index(index, len(shape) - first)
    for x_axis, s in enumerate(rest, start=first):
        n = shape[x_axis]
        start, step, size = slice_triple(s, n)
        slice_shape.append(size)
        slice_spec.append(spec[x_axis])
        if step == 1:
            if size != n:
                start_map.append(x_axis)
                pieces += 1
            slice_sizes.append(size)
            offset.append(y_axis)
        else:
            slice_sizes.append(1)
            start_map.append(x_axis)
            collapsed.append(x_axis)
            index_dims += 1
            pieces += 1
        y_axis += 1
    # no index: an empty (0,) array; else the index arrays (jnp's own unsharded, or ``array``)
    # broadcast together, with the index vector dimension last
    indices_spec: Spec = (None,) if pieces == 0 else tuple(array_spec) + (None,) * (index_dims - len(array_spec) + 1)
    return Indexer(GatherDims(tuple(offset), tuple(sorted(collapsed)), tuple(start_map)),
                    tuple(slice_sizes), indices_spec, tuple(slice_shape),
                    no_repeated_axis(tuple(slice_spec), "indexing"))


def _partial(shape: Shape, index) -> bool:
    """jnp's ``has_partial_slices``: some slice is strided or does not take its whole side."""
    for n, s in zip(shape, full_index(index, len(shape))):
        start, stop, step = s.indices(n)
        if abs(step) != 1 or abs(stop - start) != n:
            return True
    return False


def static_slice(mesh: MeshModel, shape: Shape, spec: Spec, index, eager: bool,
                 before_indexing_infers: bool = False) -> Spec:
    """``x[index]`` for a tuple of static slices. Under jit (or on one device) jnp binds ``rev``
    and ``slice``: the resize rule. Eagerly, on an array over several devices, jnp takes a slice
    that is strided or partial through ``gather`` (its comment: partial slices of sharded inputs
    "lead to incorrect sharding semantics when computed via slice"): an indexed dimension must be
    unsharded unless whole, and strided dimensions come out unsharded; an empty result is a
    zero array with the operand's spec. ``before_indexing_infers``: the release has no
    ``ReleaseRules.indexing_infers_sharding`` yet, and jnp chooses as it did then (``through_gather``)."""
    full = full_index(index, len(shape))
    out_shape = tuple(slice_triple(s, n)[2] for s, n in zip(full, shape))
    if not through_gather(mesh, shape, index, eager, before_indexing_infers):
        return resized(mesh, shape, spec, out_shape, "slicing")
    if 0 in out_shape:
        for dim, (m, e) in enumerate(zip(out_shape, spec)):
            if e is not None and m % tiling(mesh, e):
                raise IllTyped(f"empty slice: its dimension {dim} of size {m} is sharded {e!r}, which "
                               f"does not divide it")
        return spec
    ix = indexer(shape, spec, index)
    return gather(shape, spec, ix.indices_spec, ix.dims, ix.slice_sizes)


def updates_for(shape: Shape, spec: Spec, target_shape: Shape, target_spec: Spec) -> Spec:
    """jnp broadcasts a scatter's updates to the slice's shape *and spec*: an updates dimension
    may be unsharded or sharded as the slice is, nothing else."""
    lead = len(target_shape) - len(shape)
    if tuple(shape) == tuple(target_shape) and spec == target_spec:
        return spec
    for dim, entry in enumerate(spec):
        if entry is not None and entry != target_spec[lead + dim]:
            raise IllTyped(f"scatter updates: dimension {dim} is sharded {entry!r} where the indexed slice "
                           f"is {target_spec[lead + dim]!r}")
    return target_spec



def whole_slice(index, shape) -> bool:
    """Whether a static index of contiguous slices takes every dimension whole (``x[-3:]`` of a
    dimension of 2, ``x[::1]``): jnp's ``_attempt_rewriting_take_via_slice`` then returns the array
    itself ("if not (int_indices or has_partial_slices): return arr"), no slice or gather at all."""
    full = full_index(index, len(shape))
    return len(full) == len(shape) and all(
        isinstance(i, slice) and i.step in (None, 1) and i.indices(n) == (0, n, 1) for i, n in zip(full, shape))



def through_gather(mesh: MeshModel, shape: Shape, index, eager: bool, before_indexing_infers: bool) -> bool:
    """Whether jnp takes the static slice ``index`` of ``shape`` through gather: eagerly, a partial
    one of an array over several devices (``_partial``); before ``indexing_infers_sharding``
    (jnp's ``_attempt_rewriting_take_via_slice`` up to 0.9.0), any index not written as a slice of
    step 1 or a whole reversal ``::-1`` (its start and stop None: x[1::-1] of a dimension of 2 is a
    gather, x[::-1] a rev), under jit too, and eagerly a partial slice of step 1."""
    if mesh.size <= 1:
        return False
    if not before_indexing_infers:
        return eager and _partial(shape, index)
    full = full_index(index, len(shape))
    written_as_slices = all(s.step in (None, 1) or (s.start is None and s.stop is None and s.step == -1) for s in full)
    partial = any(s.step in (None, 1) and s.indices(n) != (0, n, 1) for n, s in zip(shape, full))
    return not written_as_slices or (eager and partial)



def take_along_axis(mesh, shape, spec, idx_shape, idx_spec, axis) -> Spec:
    """jnp reshapes the indices (dropping their size-1 dimensions but ``axis``, adding the index
    vector) and gathers with the other dimensions as batching dimensions."""
    keep = [i for i, n in enumerate(idx_shape) if i == axis or n != 1]
    indices_shape = tuple(idx_shape[i] for i in keep) + (1,)
    indices_spec = list(reshape(mesh, tuple(idx_shape), idx_spec, indices_shape))
    offset, collapsed, start_map, o_batch, i_batch, sizes = [], [], [], [], [], []
    j = 0
    for i in range(len(shape)):
        if i == axis:
            sizes.append(1)
            start_map.append(i)
            collapsed.append(i)
            j += 1
        elif idx_shape[i] == 1:
            offset.append(i)
            sizes.append(shape[i])
        else:
            sizes.append(1)
            o_batch.append(i)
            i_batch.append(j)
            j += 1
    dims = GatherDims(tuple(offset), tuple(collapsed), tuple(start_map), tuple(o_batch), tuple(i_batch))
    return gather(shape, spec, tuple(indices_spec), dims, sizes)

