"""Sharding-in-types rules for the vocabulary's shapes families (``strategies/ops/vocabulary_shapes.py``),
each a function of a ``sharding_families.Call`` to the result's canonical spec, raising
``IllTyped`` where JAX's rules reject the operand shardings; ``RULES`` maps a family to its rule
(``sharding_rules`` adds them to ``FAMILY_RULES``).

Each rule follows the primitives its ``jax.numpy`` function binds (``jax/_src/numpy/lax_numpy.py``
of 0.10.2), through the primitive rules of ``sharding_primitives``.
"""

from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from .layout import Spec
from .sharding_families import Call, _NoRule
from .sharding_indexing import static_slice
from .sharding_primitives import (IllTyped, Shape, axis_argument, broadcast, cumulative, one_sharded_spec, reduce,
                                  resized, same_specs, select, show_spec, transpose)


def _joined(c: Call, specs: Sequence[Spec], what: str) -> Spec:
    """``lax.concatenate``: operands sharded identically (``_concatenate_sharding_rule``), or the
    forward propagation of an Auto mesh (``ReleaseRules.takes_the_one_sharded_operands_spec``)."""
    taken = one_sharded_spec(specs) if c.rules.takes_the_one_sharded_operands_spec else None
    return taken if taken is not None else same_specs(specs, what)


def _raveled(c: Call, shape: Shape, spec: Spec) -> Spec:
    """``jnp.ravel``: a reshape to one dimension."""
    return c.reshape(shape, spec, (math.prod(shape),))


def _at_least(spec: Spec, rank: int) -> Spec:
    """``jnp.atleast_1d``/``atleast_2d`` (``array(x, ndmin=rank)``): leading unsharded dimensions."""
    return (None,) * (rank - len(spec)) + tuple(spec)


def _at_least_3d(spec: Spec) -> Spec:
    """``jnp.atleast_3d``: () to (1, 1, 1), (n,) to (1, n, 1), (m, n) to (m, n, 1)."""
    if len(spec) == 0:
        return (None,) * 3
    if len(spec) == 1:
        return (None, spec[0], None)
    if len(spec) == 2:
        return tuple(spec) + (None,)
    return spec


def _joins(c: Call) -> Spec:
    """jnp's joins, each a ``lax.concatenate`` of its operands brought to one rank: ``concat`` and
    ``append`` ravel them first where ``axis`` is None; ``vstack`` takes them to 2 dimensions,
    ``dstack`` to 3 (``atleast_3d``), ``column_stack`` makes a vector a column; ``block`` joins
    each row of blocks along the last dimension, then the rows."""
    name, specs = c.op, list(c.specs)
    if name in ("jnp.concat", "jnp.append"):
        if c.static["axis"] is None:
            specs = [_raveled(c, shape, spec) for shape, spec in zip(c.shapes, specs)]
    elif name == "jnp.hstack":
        specs = [_at_least(spec, 1) for spec in specs]
    elif name == "jnp.vstack":
        specs = [_at_least(spec, 2) for spec in specs]
    elif name == "jnp.dstack":
        specs = [_at_least_3d(spec) for spec in specs]
    elif name == "jnp.column_stack":
        specs = [(spec[0], None) if len(spec) == 1 else spec for spec in specs]
    elif name == "jnp.block":
        a, b, d, e = specs
        return _joined(c, [_joined(c, [a, b], name), _joined(c, [d, e], name)], name)
    else:
        raise _NoRule(f"join {name!r}")
    return _joined(c, specs, name)


def split_sizes(n: int, sections) -> Tuple[int, ...]:
    """The sides jnp's ``_split`` gives ``lax.split``: equal parts for a number of sections (the
    first ``n % sections`` one longer for array_split), else the spans between the indices."""
    if isinstance(sections, int):
        part, rest = divmod(n, sections)
        return (part + 1,) * rest + (part,) * (sections - rest)
    bounds = (0, *sections, n)
    return tuple(b - a for a, b in zip(bounds, bounds[1:]))


SPLIT_AXES = {"jnp.hsplit": lambda rank: 1 if rank > 1 else 0, "jnp.vsplit": lambda rank: 0,
              "jnp.dsplit": lambda rank: 2}


def _splits(c: Call) -> Spec:
    """``lax.split`` (``_split_sharding_rule``): every part, the one taken or not, keeps the
    operand's spec, each of a side its sharding divides where the split dimension is sharded
    (``_get_sharding_for_varying_out_shape``)."""
    shape, spec = c.x
    rank = len(shape)
    axis = SPLIT_AXES[c.op](rank) if c.op in SPLIT_AXES else axis_argument(c.static["axis"], rank)
    for size in split_sizes(shape[axis], c.static["sections"]):
        out = list(shape)
        out[axis] = size
        resized(c.mesh, shape, spec, tuple(out), c.op)
    return spec


def _unstacking(c: Call) -> Spec:
    """``lax.unstack`` (``_unstack_sharding_rule``): the unstacked dimension must be unsharded;
    each part drops it."""
    shape, spec = c.x
    axis = axis_argument(c.static["axis"], len(shape))
    if spec[axis] is not None:
        raise IllTyped(f"unstack: the unstacked dimension {axis} is sharded ({spec[axis]!r})")
    return reduce(spec, (axis,))


def moved_axes(source: Sequence[int], destination: Sequence[int], rank: int) -> List[int]:
    """The operand dimension each result dimension of ``moveaxis`` takes (numpy's order: the
    others in order, each moved one inserted at its destination)."""
    order = [d for d in range(rank) if d not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return order


def _as_axes(axes, rank: int) -> Tuple[int, ...]:
    return tuple(axis_argument(a, rank) for a in (axes if isinstance(axes, (tuple, list)) else (axes,)))


def _axis_moves(c: Call) -> Spec:
    """Transposes (``lax.transpose`` permutes the entries) and flips (``rev`` keeps them):
    ``matrix_transpose``, ``permute_dims``, ``moveaxis``, ``rollaxis``; ``fliplr``, ``flipud``;
    ``rot90``, a flip and (an odd number of quarter turns) a swap of its two axes."""
    (shape, spec), s = c.x, c.static
    rank = len(shape)
    if c.op in ("jnp.fliplr", "jnp.flipud"):
        return spec
    if c.op == "jnp.matrix_transpose":
        return transpose(spec, list(range(rank - 2)) + [rank - 1, rank - 2])
    if c.op == "jnp.permute_dims":
        return transpose(spec, _as_axes(s["axes"], rank))
    if c.op == "jnp.moveaxis":
        return transpose(spec, moved_axes(_as_axes(s["source"], rank), _as_axes(s["destination"], rank), rank))
    if c.op == "jnp.rollaxis":
        axis, start = axis_argument(s["axis"], rank), s["start"] + (rank if s["start"] < 0 else 0)
        return transpose(spec, moved_axes((axis,), (start - 1 if start > axis else start,), rank))
    if c.op == "jnp.rot90":
        a, b = _as_axes(s["axes"], rank)
        if s["k"] % 2 == 0:
            return spec
        perm = list(range(rank))
        perm[a], perm[b] = perm[b], perm[a]
        return transpose(spec, perm)
    raise _NoRule(f"axis move {c.op!r}")


def _new_axes(c: Call) -> Spec:
    """``jnp.atleast_1d``/``2d``/``3d``: new unsharded size-1 dimensions (``lax.expand_dims``)."""
    spec = c.specs[0]
    if c.op == "jnp.atleast_3d":
        return _at_least_3d(spec)
    return _at_least(spec, {"jnp.atleast_1d": 1, "jnp.atleast_2d": 2}[c.op])


def _filling(c: Call) -> Spec:
    """``lax.full_like`` of a traced (or committed) array of the same shape takes its sharding."""
    return c.specs[0]


def _flattening(c: Call) -> Spec:
    shape, spec = c.x
    return _raveled(c, shape, spec)


def tiled(spec: Spec, reps: Sequence[int], what: str) -> Spec:
    """``lax.tile`` (``_tile_abstract_eval``): a dimension repeated more than once must be unsharded."""
    for dim, (r, entry) in enumerate(zip(reps, spec)):
        if r != 1 and entry is not None:
            raise IllTyped(f"{what}: dimension {dim}, tiled {r} times, is sharded ({entry!r})")
    return spec


def _tiling(c: Call) -> Spec:
    """``jnp.tile``: ``reps`` padded with leading 1s to the rank, the operand with leading
    unsharded dimensions to ``reps``' length, then ``lax.tile``."""
    spec, reps = c.specs[0], c.static["reps"]
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    reps = (1,) * (len(spec) - len(reps)) + reps
    return tiled(_at_least(spec, len(reps)), reps, "jnp.tile")


def _resizing(c: Call) -> Spec:
    """``jnp.resize`` (jitted): ravel, ``tile`` by as many repeats as the new size needs, slice the
    new size off the front (the resize rule), reshape."""
    shape, spec = c.x
    new_shape = tuple(c.static["new_shape"])
    size, new_size = math.prod(shape), math.prod(new_shape)
    flat = _raveled(c, shape, spec)
    repeats = -(-new_size // size)
    tiled(flat, (repeats,), "jnp.resize")
    resized(c.mesh, (size * repeats,), flat, (new_size,), "jnp.resize")
    return c.reshape((new_size,), flat, new_shape)


def _deleting(c: Call) -> Spec:
    """``jnp.delete`` of one static position (eager, not jitted): ravel where ``axis`` is None,
    then the slices before and after the position (jnp's static indexing, ``static_slice``),
    concatenated."""
    shape, spec = c.x
    axis = c.static["axis"]
    if axis is None:
        spec, shape, axis = _raveled(c, shape, spec), (math.prod(shape),), 0
    axis = axis_argument(axis, len(shape))
    index = c.static["index"] % shape[axis]
    lead = (slice(None),) * axis
    parts = [static_slice(c.mesh, shape, spec, lead + (piece,), c.eager, not c.rules.indexing_infers_sharding)
             for piece in (slice(0, index), slice(index + 1, None))]
    return _joined(c, parts, "jnp.delete")


def _inserting(c: Call) -> Spec:
    """``jnp.insert`` (eager): ravel where ``axis`` is None; the result is a new array of zeros
    (``zeros_like`` of another shape: unsharded) into which the operand is scattered
    (``out.at[..., arr_ind].set(a)``): an operand dimension sharded where the result's is not
    rejects (``scatter``'s window rule, or its indexed dimension)."""
    shape, spec = c.x
    if c.static["axis"] is None:
        spec = _raveled(c, shape, spec)
    if any(entry is not None for entry in spec):
        raise IllTyped(f"jnp.insert: the operand, sharded {show_spec(spec)}, is scattered into an unsharded result")
    return spec


def _diagonal(spec: Spec, shape: Shape, axis1: int, axis2: int, what: str) -> Spec:
    """``jnp.diagonal``: the two axes moved last, then ``a[..., i, j]``, a gather indexing both
    (``gather``'s rule: neither may be sharded unless of side 1); the diagonal comes last,
    unsharded."""
    rank = len(spec)
    a, b = axis_argument(axis1, rank), axis_argument(axis2, rank)
    for d in (a, b):
        if spec[d] is not None and shape[d] != 1:
            raise IllTyped(f"{what}: the diagonal's dimension {d} is sharded ({spec[d]!r})")
    return tuple(e for d, e in enumerate(spec) if d not in (a, b)) + (None,)


def _diagonals(c: Call) -> Spec:
    """``diagonal``; ``diag`` (of a vector: ``lax.pad`` to the matrix's side, the resize rule,
    then a ``where`` of an unsharded mask, the vector as a column; of a matrix: ``diagonal``);
    ``diagflat`` (a scatter of the raveled operand into unsharded zeros: its updates must be
    unsharded); ``trace`` (the two axes moved last, ``where`` an unsharded ``eye``: of a matrix,
    a ``lax.select`` whose mask must be sharded as the matrix, else broadcast first; summed out);
    ``fill_diagonal`` (``a.at[diag_indices].set``, a scatter indexing every dimension:
    each must be unsharded)."""
    (shape, spec), s = c.x, c.static
    if c.op == "jnp.diagonal":
        return _diagonal(spec, shape, s["axis1"], s["axis2"], c.op)
    if c.op == "jnp.diag":
        if len(shape) == 2:
            return _diagonal(spec, shape, 0, 1, c.op)
        resized(c.mesh, shape, spec, (shape[0] + abs(s["k"]),), c.op)
        return (spec[0], None)
    if c.op == "jnp.diagflat":
        flat = _raveled(c, shape, spec)
        if flat[0] is not None:
            raise IllTyped(f"jnp.diagflat: the raveled operand, sharded {flat[0]!r}, is scattered into unsharded "
                           "zeros")
        return (None, None)
    if c.op == "jnp.trace":
        a, b = axis_argument(s["axis1"], len(shape)), axis_argument(s["axis2"], len(shape))
        rest = [d for d in range(len(shape)) if d not in (a, b)]
        moved = transpose(spec, rest + [a, b])
        if len(shape) == 2:  # mask and operand of one shape: lax.select as they are
            select((None, None), [moved, moved], 2)
        else:  # broadcast to the consensus spec first (the mask is unsharded)
            broadcast([(shape[a], shape[b]), tuple(shape[d] for d in rest + [a, b])], [(None, None), moved], c.op)
        return moved[:-2]
    if c.op == "jnp.fill_diagonal":
        if any(entry is not None for entry in spec):
            raise IllTyped(f"jnp.fill_diagonal: a scatter into every dimension of an operand sharded {show_spec(spec)}")
        return spec
    raise _NoRule(f"diagonal operation {c.op!r}")


def _unwrapping(c: Call) -> Spec:
    """``jnp.unwrap`` (jitted): ``diff`` along ``axis`` (slices of side n - 1), the first element
    and the rest sliced off (the resize rule), a ``cumsum`` along ``axis`` (``cumulative``), and
    the two concatenated (alike)."""
    shape, spec = c.x
    axis = axis_argument(c.static["axis"], len(shape))
    n = shape[axis]
    for size in (n - 1, 1):
        out = list(shape)
        out[axis] = size
        resized(c.mesh, shape, spec, tuple(out), "jnp.unwrap")
    return cumulative(spec, axis, "jnp.unwrap (cumsum)", c.rules.scan_keeps_a_sharded_dimension)


def _differences(c: Call) -> Spec:
    """``jnp.gradient`` along one axis (jitted): slices of side 1 (the edges) and n - 2 (the
    inner differences) along it (the resize rule), concatenated (alike)."""
    shape, spec = c.x
    axis = axis_argument(c.static["axis"], len(shape))
    for size in (1, shape[axis] - 2):
        out = list(shape)
        out[axis] = size
        resized(c.mesh, shape, spec, tuple(out), "jnp.gradient")
    return spec


def _swapped_last(spec: Spec, shape: Shape, axis: int) -> Tuple[List[int], Spec, Shape]:
    perm = list(range(len(shape)))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return perm, transpose(spec, perm), tuple(shape[d] for d in perm)


def _bit_packing(c: Call) -> Spec:
    """``jnp.packbits`` and ``unpackbits`` (jitted): ravel where ``axis`` is None, the axis swapped
    last. packbits pads it to a multiple of 8 (``lax.pad``, the resize rule), splits it into
    (n / 8, 8) (a reshape), sums the 8 out; unpackbits adds a dimension of 8 bits (unsharded),
    merges it into the last (a reshape), then pads or slices to ``count`` (the resize rule).
    Then the axis swapped back."""
    shape, spec = c.x
    axis: Optional[int] = c.static["axis"]
    if axis is None:
        spec, shape, axis = _raveled(c, shape, spec), (math.prod(shape),), 0
    perm, spec, shape = _swapped_last(spec, shape, axis_argument(axis, len(shape)))
    n = shape[-1]
    if c.op == "jnp.packbits":
        if n % 8:
            padded = shape[:-1] + (n + 8 - n % 8,)
            resized(c.mesh, shape, spec, padded, "jnp.packbits (pad)")
            shape = padded
        grouped = c.reshape(shape, spec, shape[:-1] + (shape[-1] // 8, 8))
        return transpose(grouped[:-1], perm)
    if c.op == "jnp.unpackbits":
        bits = shape[:-1] + (8 * n,)
        spec = c.reshape(shape + (8,), spec + (None,), bits)
        count = c.static["count"]
        if count is not None:
            resized(c.mesh, bits, spec, bits[:-1] + (count,), "jnp.unpackbits (count)")
        return transpose(spec, perm)
    raise _NoRule(f"bit packing {c.op!r}")


def _grids(c: Call) -> Spec:
    """``jnp.meshgrid`` and ``ix_`` of two vectors: part ``part`` is a ``broadcast_in_dim`` of
    that vector into its dimension (meshgrid's "xy" indexing swaps the first two), which takes
    its entry; the other dimension is unsharded."""
    part = c.static["part"]
    dim = 1 - part if c.op == "jnp.meshgrid" and c.static["indexing"] == "xy" else part
    out: List = [None, None]
    out[dim] = c.specs[part][0]
    return tuple(out)


def _broadcast_parts(c: Call) -> Spec:
    """``jnp.broadcast_arrays``: operands of one shape come back as they are; otherwise each is
    broadcast to the result's shape and the consensus spec (``lax.broadcast_shardings``: the
    broadcasting rule, ``broadcast``)."""
    if len(set(c.shapes)) == 1:
        return c.specs[c.static["part"]]
    return broadcast(c.shapes, c.specs, "jnp.broadcast_arrays")


RULES: Dict[str, Callable[[Call], Spec]] = {
    "joins": _joins, "splits": _splits, "unstacking": _unstacking, "axis_moves": _axis_moves,
    "new_axes": _new_axes, "filling": _filling, "flattening": _flattening, "tiling": _tiling,
    "resizing": _resizing, "deleting": _deleting, "inserting": _inserting, "diagonals": _diagonals,
    "unwrapping": _unwrapping, "differences": _differences, "bit_packing": _bit_packing, "grids": _grids,
    "broadcast_parts": _broadcast_parts,
}
