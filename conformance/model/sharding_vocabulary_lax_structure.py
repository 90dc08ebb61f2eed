"""Sharding-in-types rules for the vocabulary's lax structure families (``strategies/ops/vocabulary_lax_structure.py``),
each a function of a ``sharding_families.Call`` to the result's canonical spec, raising
``IllTyped`` where JAX's rules reject the operand shardings; ``RULES`` maps a family to its rule
(``sharding_rules`` adds them to ``FAMILY_RULES``). Each restates the primitives the lax function
binds (``jax/_src/lax/lax.py``, ``slicing.py``, ``windowed_reductions.py``, ``ann.py``,
``control_flow/loops.py``, JAX 0.10.2)."""

from __future__ import annotations

import math
from typing import Callable, Dict, Sequence

from .layout import MeshModel, Spec
from .sharding_families import Call, dynamic_slice
from .sharding_primitives import (GatherDims, IllTyped, Shape, _one_group, axis_argument, broadcast, expand_dims,
                                  gather, one_sharded_spec, resized, same_specs, scatter, select,
                                  show_spec, sort, squeeze, stack, transpose)


class NoRule(Exception):
    """An operation of one of these families that no rule here covers."""


# --- lax.associative_scan and lax.reduce_window ------------------------------------------------------
def _associative_scan(c: Call) -> Spec:
    """``lax.associative_scan``'s route along the scanned dimension (its ``_scan``): strided slices
    of the pairs, the recursion on the half, slices of the odd results and the even elements, a
    one-element slice concatenated in front, and two interior pads interleaving the halves back to
    the side; each slice and pad is the resize rule (``_get_sharding_for_varying_out_shape``), the
    combining function and the concatenate see operands laid out alike. The result keeps the
    operand's spec (``lax.rev`` too, with ``reverse``)."""
    shape, spec = c.x
    axis = axis_argument(c.static["axis"], len(shape))

    def resize(n: int, m: int) -> int:
        before, after = list(shape), list(shape)
        before[axis], after[axis] = n, m
        resized(c.mesh, tuple(before), spec, tuple(after), "associative_scan")
        return m

    def sliced(n: int, start: int, stop: int, stride: int = 1) -> int:
        return resize(n, len(range(start, stop, stride)))

    def scan(n: int) -> None:
        if n < 2:
            return
        half = sliced(n, 0, n - 1, 2)
        sliced(n, 1, n, 2)
        scan(half)
        if n % 2 == 0:
            sliced(half, 0, half - 1)
        even = sliced(n, 2, n, 2) + sliced(n, 0, 1)
        resize(even, n)
        resize(half, n)

    scan(shape[axis])
    return spec


def window_output_shape(shape: Shape, window: Sequence[int], strides: Sequence[int], padding: str) -> Shape:
    """``reduce_window``'s result shape: "VALID" windows that fit, or "SAME" ceil(n / stride)."""
    if padding == "SAME":
        return tuple(-(-n // s) for n, s in zip(shape, strides))
    return tuple((n - w) // s + 1 for n, w, s in zip(shape, window, strides))


def _reduce_window(c: Call) -> Spec:
    """``reduce_window_sharding_rule``: the resize rule to the windows' shape."""
    shape, spec = c.x
    s = c.static
    return resized(c.mesh, shape, spec, window_output_shape(shape, s["window"], s["strides"], s["padding"]),
                   "reduce_window")


# --- shapes ---------------------------------------------------------------------------------------
def _as_tuple(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def reshape_with_dimensions(mesh: MeshModel, shape: Shape, spec: Spec, new_shape: Shape, call: Call) -> Spec:
    """``_reshape_sharding_rule`` with ``dimensions`` (a transpose first): the rule reads the
    operand's shape and spec in their own order, the transpose left out; a reshape that only adds or
    drops size-1 sides keeps the spec; a split or a merge must not touch a sharded dimension
    (``_split_an_axis_sharding_rule``, ``_merge_an_axis_sharding_rule`` raise where ``dimensions``
    is given)."""
    if all(e is None for e in spec):
        return (None,) * len(new_shape)
    sides = [n for n in shape if n != 1]
    entries = [e for n, e in zip(shape, spec) if n != 1]
    new_sides = [n for n in new_shape if n != 1]
    what = f"reshape {shape} -> {new_shape} with dimensions"
    if sides != new_sides:
        grows = len(new_sides) > len(sides)
        parts = _one_group(sides, new_sides) if grows else _one_group(new_sides, sides) if \
            len(new_sides) < len(sides) else None
        if parts is None:
            raise IllTyped(f"{what}: neither one split nor one merge")
        rest = iter(entries)
        for part in parts:
            touched = [next(rest) for _ in part] if isinstance(part, list) and not grows else [next(rest)]
            if isinstance(part, list) and any(e is not None for e in touched):
                raise IllTyped(f"{what}: splits or merges dimensions sharded {show_spec(tuple(touched))}")
    return call.reshape(shape, spec, new_shape)


def _lax_shape(c: Call) -> Spec:
    """lax's shape functions: ``broadcast``, ``broadcast_to_rank`` and ``expand_dims`` bind
    ``broadcast_in_dim`` (new dimensions unsharded, the operand's where it goes:
    ``_broadcast_in_dim_sharding_rule``); ``collapse`` and ``reshape`` the reshape rule; ``rev`` and
    ``full_like`` keep the operand's spec; ``squeeze`` drops and ``transpose`` permutes entries;
    ``tile`` keeps the spec, a dimension tiled more than once unsharded (``_tile_abstract_eval``)."""
    (shape, spec), s, op = c.x, c.static, c.op
    rank = len(shape)
    if op == "lax.broadcast":
        return (None,) * len(s["sizes"]) + spec
    if op == "lax.broadcast_in_dim":
        placed = dict(zip(s["dims"], spec))
        return tuple(placed.get(d) for d in range(len(s["shape"])))
    if op == "lax.broadcast_to_rank":
        return (None,) * (s["rank"] - rank) + spec
    if op == "lax.collapse":
        low, high, _ = slice(s["start"], s["stop"]).indices(rank)
        return c.reshape(shape, spec, shape[:low] + (math.prod(shape[low:high]),) + shape[high:])
    if op == "lax.expand_dims":
        dims = _as_tuple(s["dims"])
        return expand_dims(spec, [axis_argument(d, rank + len(dims)) for d in dims])
    if op == "lax.reshape":
        return c.reshape(shape, spec, tuple(s["shape"]))
    if op == "lax.reshape:dimensions":
        if tuple(s["dimensions"]) == tuple(range(rank)):
            return c.reshape(shape, spec, tuple(s["shape"]))
        return reshape_with_dimensions(c.mesh, shape, spec, tuple(s["shape"]), c)
    if op in ("lax.rev", "lax.full_like"):
        return spec
    if op == "lax.squeeze":
        return squeeze(spec, [axis_argument(a, rank) for a in _as_tuple(s["axis"])])
    if op == "lax.transpose":
        return transpose(spec, [axis_argument(a, rank) for a in s["axes"]])
    if op == "lax.tile":
        for dim, (reps, entry) in enumerate(zip(s["reps"], spec)):
            if reps != 1 and entry is not None:
                raise IllTyped(f"tile: dimension {dim}, tiled {reps} times, is sharded {entry!r}")
        return spec
    raise NoRule(op)


# --- joins, slices, dynamic slices ------------------------------------------------------------------
def _lax_joining(c: Call) -> Spec:
    """``concatenate`` and ``stack``: operands sharded identically (``_concatenate_sharding_rule``,
    ``_stack_sharding_rule``; stack's new dimension unsharded); ``split``: the resize rule for every
    part, each keeping the operand's spec (``_split_sharding_rule``)."""
    if c.op == "lax.concatenate":
        taken = one_sharded_spec(c.specs) if c.rules.takes_the_one_sharded_operands_spec else None
        return taken if taken is not None else same_specs(c.specs, "concatenate")
    if c.op == "lax.stack":
        return stack(c.specs, axis_argument(c.static["axis"], len(c.shapes[0]) + 1))
    if c.op in ("lax.split", "lax.split:last"):
        shape, spec = c.x
        axis = axis_argument(c.static["axis"], len(shape))
        for size in c.static["sizes"]:
            part = list(shape)
            part[axis] = size
            resized(c.mesh, shape, spec, tuple(part), "split")
        return spec
    raise NoRule(c.op)


def slice_in_dim_size(n: int, start, limit, stride: int) -> int:
    """The side ``lax.slice_in_dim`` gives: None bounds are the ends, a negative one counts from the
    end (once)."""
    start = 0 if start is None else start + n if start < 0 else start
    limit = n if limit is None else limit + n if limit < 0 else limit
    return len(range(start, limit, stride))


def _lax_slicing(c: Call) -> Spec:
    """``slice``, ``slice_in_dim`` and ``index_in_dim`` bind ``slice`` (the resize rule,
    ``_slice_sharding_rule``); ``index_in_dim`` without ``keepdims`` squeezes the dimension after;
    ``unstack`` binds ``unstack``, each piece its operand's spec without the unstacked dimension,
    which must name no mesh axis, even of size 1 (``_unstack_sharding_rule``)."""
    (shape, spec), s = c.x, c.static
    if c.op == "lax.unstack":
        axis = axis_argument(s["axis"], len(shape))
        entries = tuple(spec) + (None,) * (len(shape) - len(spec))
        if entries[axis] not in (None, ()):
            raise IllTyped(f"unstack: the unstacked dimension {axis} is sharded {entries[axis]!r}")
        return entries[:axis] + entries[axis + 1:]
    out = list(shape)
    if c.op == "lax.slice":
        out = [len(range(a, b, k)) for a, b, k in zip(s["start"], s["limit"], s["strides"])]
    elif c.op in ("lax.slice_in_dim", "lax.index_in_dim"):
        axis = axis_argument(s["axis"], len(shape))
        out[axis] = 1 if c.op == "lax.index_in_dim" else \
            slice_in_dim_size(shape[axis], s["start"], s["limit"], s["stride"])
    else:
        raise NoRule(c.op)
    spec = resized(c.mesh, shape, spec, tuple(out), "slice")
    if c.op == "lax.index_in_dim" and not s["keepdims"]:
        return squeeze(spec, [axis_argument(s["axis"], len(shape))])
    return spec


def _lax_dynamic(c: Call) -> Spec:
    """``dynamic_slice_in_dim`` and ``dynamic_index_in_dim`` bind ``dynamic_slice`` (the resize
    rule; ``sharding_families.dynamic_slice``), the latter without ``keepdims`` a squeeze after;
    ``dynamic_update_slice_in_dim`` and ``dynamic_update_index_in_dim`` (its update given a size-1
    dimension by ``expand_dims`` first) bind ``dynamic_update_slice``: operand and update sharded
    identically (``_dynamic_update_slice_sharding_rule``)."""
    (shape, spec), s = c.x, c.static
    axis = axis_argument(s["axis"], len(shape))
    if c.op in ("lax.dynamic_slice_in_dim", "lax.dynamic_index_in_dim"):
        sizes = list(shape)
        sizes[axis] = s.get("size", 1)
        out = dynamic_slice(c, shape, spec, tuple(sizes))
        return squeeze(out, [axis]) if c.op == "lax.dynamic_index_in_dim" and not s["keepdims"] else out
    if c.op == "lax.dynamic_update_slice_in_dim":
        return same_specs(c.specs[:2], "dynamic_update_slice")
    if c.op == "lax.dynamic_update_index_in_dim":
        update = c.specs[1] if len(c.shapes[1]) == len(shape) else expand_dims(c.specs[1], [axis])
        return same_specs((spec, update), "dynamic_update_slice")
    raise NoRule(c.op)


# --- gathers and scatters ---------------------------------------------------------------------------
def _lax_gather(c: Call) -> Spec:
    """``lax.gather`` with the entries' dimension numbers (``_gather_sharding_rule``: the model's
    ``gather``): one element along ``axis`` per index, or a window of ``size``. ``index_take``
    joins its index arrays as columns (``expand_dims`` and a ``concatenate``: sharded identically),
    wraps them (elementwise, with an unsharded constant) and gathers an element of each of ``axes``."""
    (shape, spec), s = c.x, c.static
    rank = len(shape)
    if c.op == "lax.index_take":
        axes = tuple(s["axes"])
        columns = [expand_dims(p, [1]) for p in c.specs[1:]]
        taken = one_sharded_spec(columns) if c.rules.takes_the_one_sharded_operands_spec else None
        indices = taken if taken is not None else same_specs(columns, "concatenate")
        indices = broadcast([(c.shapes[1][0], len(axes)), (1, len(axes))], [indices, (None, None)], "remainder")
        dims = GatherDims(tuple(range(1, rank - len(axes) + 1)), axes, axes)
        return gather(shape, spec, indices, dims, tuple(1 if d in axes else n for d, n in enumerate(shape)))
    idx_shape, idx_spec = c.shapes[1], c.specs[1]
    batch = len(idx_shape) - 1
    axis = s["axis"]
    if c.op == "lax.gather":
        dims = GatherDims(tuple(range(batch, batch + rank - 1)), (axis,), (axis,))
        return gather(shape, spec, idx_spec, dims, tuple(1 if d == axis else n for d, n in enumerate(shape)))
    if c.op == "lax.gather:window":
        dims = GatherDims(tuple(range(batch, batch + rank)), (), (axis,))
        return gather(shape, spec, idx_spec, dims, tuple(s["size"] if d == axis else n for d, n in enumerate(shape)))
    raise NoRule(c.op)


def _lax_scatter(c: Call) -> Spec:
    """The scatters of rows along ``axis`` (``_scatter_sharding_rule``: the model's ``scatter``);
    ``scatter_apply`` scatters unsharded updates it makes (``lax.full``)."""
    (shape, spec), axis = c.x, c.static["axis"]
    rows = (c.shapes[1][0],) + tuple(n for d, n in enumerate(shape) if d != axis)
    updates = (c.shapes[2], c.specs[2]) if len(c.shapes) > 2 else (rows, (None,) * len(rows))
    dims = GatherDims(tuple(range(1, len(shape))), (axis,), (axis,))
    return scatter(shape, spec, c.specs[1], updates[0], updates[1], dims)


# --- sorts and selections -------------------------------------------------------------------------
def _lax_sorting(c: Call) -> Spec:
    """``sort`` (one or several operands, ``sort_key_val`` two): operands sharded identically, the
    sorted dimension unsharded (``_sort_abstract_eval``); ``jnp.stack`` of the sorted operands adds
    an unsharded dimension in front. ``top_k`` and ``approx_max_k``/``approx_min_k``: the dimension
    reduced along unsharded, the results keeping the operand's spec (``_top_k_abstract_eval``,
    ``_approx_top_k_abstract_eval``)."""
    shape, spec = c.x
    rank = len(shape)
    if c.op.startswith(("lax.top_k", "lax.approx_")):
        axis = axis_argument(c.static["axis"], rank)
        if spec[axis] is not None:
            raise IllTyped(f"{c.op}: the dimension {axis} it reduces along is sharded {spec[axis]!r}")
        return spec
    if not c.op.startswith("lax.sort"):
        raise NoRule(c.op)
    dimension = axis_argument(c.static["dimension"], rank)
    for operand_spec in c.specs:
        sort(operand_spec, dimension, c.op, c.rules.sort_keeps_a_sharded_dimension)
    sorted_spec = same_specs(c.specs, "sort")
    return stack([sorted_spec] * len(c.specs), 0) if c.op == "lax.sort:operands" else sorted_spec


def _lax_select_n(c: Call) -> Spec:
    """``select_n``: the cases sharded identically, a non-scalar predicate like them
    (``_select_sharding_rule``)."""
    if c.rules.takes_the_one_sharded_operands_spec and len({s for s in c.shapes if len(s)}) == 1:
        taken = one_sharded_spec([p for s, p in zip(c.shapes, c.specs) if len(s)])
        if taken is not None:
            return taken
    return select(c.specs[0], c.specs[1:], len(c.shapes[0]))


def _ruled(rule: Callable[[Call], Spec]) -> Callable[[Call], Spec]:
    """``rule``, an operation it does not know reported as the model's missing rule."""
    from .sharding_families import _NoRule

    def ruled(c: Call) -> Spec:
        try:
            return rule(c)
        except NoRule as e:
            raise _NoRule(f"lax structure operation {e}") from e
    ruled.__doc__ = rule.__doc__
    return ruled


RULES: Dict[str, Callable[[Call], Spec]] = {
    "associative_scan": _associative_scan, "reduce_window": _reduce_window, "lax_shape": _ruled(_lax_shape),
    "lax_joining": _ruled(_lax_joining), "lax_slicing": _ruled(_lax_slicing), "lax_dynamic": _ruled(_lax_dynamic),
    "lax_gather": _ruled(_lax_gather), "lax_scatter": _lax_scatter, "lax_sorting": _ruled(_lax_sorting),
    "lax_select_n": _lax_select_n,
}
