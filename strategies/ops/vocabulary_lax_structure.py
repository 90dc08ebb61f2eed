"""The vocabulary's entries for lax structure functions (see ``vocabulary.py`` for the builders and
conventions): lax's reductions, windowed reductions, scans, shape changes, slices, dynamic slices,
gathers, scatters, sorts and selections. lax takes operands of one dtype (no promotion) and, unlike
jnp, mostly non-negative dimensions only; the static arguments are drawn over what each accepts."""

from __future__ import annotations

import math
from typing import Tuple

import numpy as np
import scipy.special as special
from hypothesis import strategies as st

import strategies.ops.inputs as i
from strategies.reuse import permuted, sampled_from

from .op import Op
from .references import clamped_starts
from .vocabulary import DIVISION, inputs

F, I32 = "float32", "int32"
INT32_MIN = np.iinfo(np.int32).min  # lax.gather(mode="fill")'s default fill of a signed integer operand


def draw_inputs(build):
    return i.inputs_from(build)


# --- static arguments -----------------------------------------------------------------------------
def distinct_dimensions(rank: int, min_size: int = 0) -> st.SearchStrategy:
    """A tuple of distinct non-negative dimensions, in any order."""
    return st.lists(st.integers(0, max(rank - 1, 0)), unique=True, min_size=min_size,
                    max_size=rank).map(tuple) if rank else st.just(())


def reduction_axes(shape):
    """``axis``: lax's ``axes``, distinct non-negative dimensions (none included)."""
    return st.fixed_dictionaries({"axis": distinct_dimensions(len(shape))})


def one_dimension(shape):
    """``axis``: one non-negative dimension (lax's argmax, argmin)."""
    return st.fixed_dictionaries({"axis": st.integers(0, len(shape) - 1)})


def scan_statics(shape):
    """``axis`` and ``reverse``; a negative axis only forwards (with ``reverse`` lax.associative_scan
    hands the axis to lax.rev before resolving it, which refuses a negative one: TypeError)."""
    rank = len(shape)
    return st.booleans().flatmap(lambda reverse: st.fixed_dictionaries(
        {"axis": st.integers(0 if reverse else -rank, rank - 1), "reverse": st.just(reverse)}))


# --- references -----------------------------------------------------------------------------------
def ufunc_reduction(ufunc):
    """``ufunc.reduce`` over ``axis`` (a tuple of dimensions; none: the operand itself), in the
    operand's dtype (integer sums and products wrap as lax's do)."""
    def reference(x, axis):
        if not axis:
            return x
        return ufunc.reduce(x, axis=axis, dtype=x.dtype)
    return reference


def reverse_along(scan):
    def reference(x, *, axis, reverse):
        flipped = np.flip(x, axis) if reverse else x
        out = scan(flipped, axis=axis).astype(x.dtype)
        return np.flip(out, axis) if reverse else out
    return reference


def same_padding(n: int, window: int, stride: int) -> Tuple[int, int]:
    """lax's "SAME" padding of a side ``n`` (``lax.padtype_to_pads``): the output has ceil(n /
    stride) elements; the padding they need, the smaller half before."""
    total = max((-(-n // stride) - 1) * stride + window - n, 0)
    return total // 2, total - total // 2


def window_pads(shape, window, strides, padding):
    if padding == "VALID":
        return [(0, 0)] * len(shape)
    return [same_padding(n, w, s) for n, w, s in zip(shape, window, strides)]


def window_output_shape(shape, window, strides, padding) -> Tuple[int, ...]:
    pads = window_pads(shape, window, strides, padding)
    return tuple((n + lo + hi - w) // s + 1 for n, (lo, hi), w, s in zip(shape, pads, window, strides))


def reduce_window_reference(ufunc, init):
    """The ``ufunc`` reduction of each window (padded with ``init`` by the padding's rule),
    windows ``strides`` apart."""
    def reference(x, *, window, strides, padding):
        pads = window_pads(x.shape, window, strides, padding)
        padded = np.pad(x, pads, constant_values=np.asarray(init, x.dtype))
        views = np.lib.stride_tricks.sliding_window_view(padded, window)
        views = views[tuple(slice(None, None, s) for s in strides)]
        axes = tuple(range(x.ndim, 2 * x.ndim))
        return ufunc.reduce(views, axis=axes, dtype=x.dtype) if axes else views
    return reference


def lexicographic_sort(*operands, dimension, num_keys):
    """``lax.sort`` of several operands: each line along ``dimension`` of every operand in the
    stable lexicographic order of the first ``num_keys`` operands."""
    moved = [np.moveaxis(x, dimension, -1) for x in operands]
    n = moved[0].shape[-1]
    rows = [x.reshape(-1, n) for x in moved]
    out = [np.empty_like(r) for r in rows]
    for k in range(rows[0].shape[0]):
        order = np.lexsort([r[k] for r in rows[:num_keys]][::-1])
        for r, o in zip(rows, out):
            o[k] = r[k][order]
    return np.stack([np.moveaxis(o.reshape(m.shape), -1, dimension) for o, m in zip(out, moved)])


def top_k_reference(part: int, largest: bool = True):
    """The ``k`` largest (smallest) elements along ``axis`` and their indices, ties the earlier
    first (stable)."""
    def reference(x, *, k, axis):
        order = np.argsort(-x if largest else x, axis=axis, kind="stable")
        index = np.take(order, np.arange(k), axis=axis)
        return np.take_along_axis(x, index, axis=axis) if part == 0 else index.astype(np.int32)
    return reference


def split_reference(part: int):
    def reference(x, *, sizes, axis):
        return np.split(x, np.cumsum(sizes)[:-1], axis=axis)[part]
    return reference


def in_dim_starts(x, start, axis):
    starts = [0] * x.ndim
    starts[axis] = start
    return starts


def dynamic_slice_in_dim_reference(x, start, *, size, axis, keepdims=True):
    axis = axis % x.ndim
    sizes = list(x.shape)
    sizes[axis] = size
    begin = clamped_starts(x.shape, in_dim_starts(x, int(start), axis), sizes)
    out = x[tuple(slice(b, b + k) for b, k in zip(begin, sizes))]
    return out if keepdims else np.squeeze(out, axis)


def dynamic_update_in_dim_reference(x, update, start, *, axis):
    axis = axis % x.ndim
    if update.ndim < x.ndim:
        update = np.expand_dims(update, axis)
    begin = clamped_starts(x.shape, in_dim_starts(x, int(start), axis), update.shape)
    y = x.copy()
    y[tuple(slice(b, b + k) for b, k in zip(begin, update.shape))] = update
    return y


def take_gather_reference(x, idx, *, axis, mode):
    """lax.gather of one element along ``axis`` per index (the others whole), the indices' batch
    dimensions first: "clip" clamps an index into range, "fill" gives INT32_MIN (the documented
    fill of a signed integer type) for one out of range."""
    n = x.shape[axis]
    flat = idx[..., 0]
    taken = np.take(x, np.clip(flat, 0, n - 1), axis=axis)
    if mode == "fill":
        bad = (flat < 0) | (flat >= n)
        bad = np.expand_dims(bad, tuple(range(axis)) + tuple(range(axis + flat.ndim, x.ndim - 1 + flat.ndim)))
        taken = np.where(bad, np.asarray(INT32_MIN, x.dtype), taken)
    return np.moveaxis(taken, tuple(range(axis, axis + flat.ndim)), tuple(range(flat.ndim)))


def slice_gather_reference(x, idx, *, axis, size, mode):
    """lax.gather of a window of ``size`` along ``axis`` per index (the other dimensions whole),
    stacked in the indices' batch dimensions: "clip" clamps the start into 0..n - size, "fill"
    gives the whole window INT32_MIN where it does not fit."""
    n = x.shape[axis]
    windows = []
    for start in idx[..., 0].reshape(-1):
        begin = min(max(int(start), 0), n - size)
        window = np.take(x, np.arange(begin, begin + size), axis=axis)
        if mode == "fill" and not 0 <= start <= n - size:
            window = np.full_like(window, INT32_MIN)
        windows.append(window)
    return np.stack(windows).reshape(idx.shape[:-1] + windows[0].shape)


def index_take_reference(x, *idxs, axes):
    """lax.index_take: the indices taken modulo their dimension's side (it wraps them), the indexed
    dimensions' results first, then the others in order."""
    moved = np.moveaxis(x, axes, tuple(range(len(axes))))
    return moved[tuple(ix % x.shape[a] for ix, a in zip(idxs, axes))]


def effective_indices(idx, n, mode):
    """The scatter's indices into a side ``n`` as lax applies them: "clip" clamps them into range,
    "drop" leaves out those out of range (a mask of the kept ones)."""
    flat = idx[:, 0].astype(np.int64)
    if mode == "clip":
        return np.clip(flat, 0, n - 1), np.ones(flat.shape, bool)
    keep = (flat >= 0) & (flat < n)
    return flat[keep], keep


def scatter_reference(combine):
    """A scatter along ``axis`` of rows of ``u`` at ``idx`` (shape (B, 1)), each combined into the
    operand by ``combine`` (a numpy ufunc's ``at``, so repeated indices all apply; None: set)."""
    def reference(x, idx, u, *, axis, mode, unique):
        y = x.copy()
        moved = np.moveaxis(y, axis, 0)
        index, keep = effective_indices(idx, x.shape[axis], mode)
        if combine is None:
            moved[index] = u[keep]
        else:
            combine.at(moved, index, u[keep])
        return y
    return reference


def scatter_apply_reference(x, idx, *, axis, mode, unique):
    """``lax.scatter_apply`` of ``v * 2``: applied once per index, a repeated one repeatedly."""
    y = x.copy()
    index, _ = effective_indices(idx, x.shape[axis], mode)
    np.multiply.at(np.moveaxis(y, axis, 0), index, np.asarray(2, x.dtype))
    return y


def select_n_reference(which, *cases):
    return np.choose(which.astype(np.int64), cases)


# --- inputs ---------------------------------------------------------------------------------------
def window_inputs(dtype: str, kind: str):
    """An operand of rank >= 1, windows of 1..side per dimension, strides 1..3, "VALID" or "SAME"."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        window = tuple(draw(st.integers(1, n)) for n in shape)
        strides = tuple(draw(st.integers(1, 3)) for _ in shape)
        padding = draw(sampled_from(("VALID", "SAME")))
        return (draw(i.values(dtype, shape, kind)),), {"window": window, "strides": strides, "padding": padding}
    return draw_inputs(build)


def broadcast_in_dim_inputs():
    """An operand, a result shape of 0..2 more dimensions (an operand side of 1 broadcast to any
    side, 1 in 2), and where the operand's dimensions go in it (in order)."""
    def build(draw):
        shape = draw(i.shapes(0, 3))
        rank = len(shape) + draw(st.integers(0, 2))
        dims = tuple(sorted(draw(st.lists(st.integers(0, rank - 1), unique=True, min_size=len(shape),
                                          max_size=len(shape))))) if shape else ()
        out = [draw(sampled_from(i.SIDES)) for _ in range(rank)]
        for d, n in zip(dims, shape):
            out[d] = n if n != 1 or draw(st.booleans()) else out[d]
        return (draw(i.values(F, shape)),), {"shape": tuple(out), "dims": dims}
    return draw_inputs(build)


def collapse_statics(shape):
    """``start`` (counted from either end) and ``stop`` (past it, or None: the end)."""
    rank = len(shape)

    def build(draw):
        low = draw(st.integers(0, rank - 1))
        start = low - rank if draw(st.booleans()) else low
        stop = draw(st.one_of(st.none(), st.integers(low + 1, rank)))
        return {"start": start, "stop": stop}
    return i.drawn(build)


def expand_dims_statics(shape):
    """``dims``: 1 or 2 new dimensions, distinct positions of the result, counted from either end."""
    def build(draw):
        rank = len(shape) + draw(st.integers(1, 2))
        dims = draw(st.lists(st.integers(0, rank - 1), unique=True, min_size=rank - len(shape),
                             max_size=rank - len(shape)))
        return {"dims": tuple(d - rank if draw(st.booleans()) else d for d in dims)}
    return i.drawn(build)


def reshape_statics(shape):
    """``shape``: as many elements as ``shape``, its prime factors shuffled and regrouped into 1..4
    dimensions, none of size 1 (see ``no_size_one_sides``)."""
    def build(draw):
        factors = draw(permuted(i.prime_factors(math.prod(shape))))
        if not factors:
            return {"shape": ()}
        rank = draw(st.integers(1, min(4, len(factors))))
        cuts = sorted(draw(st.lists(st.integers(1, len(factors) - 1), unique=True, min_size=rank - 1,
                                    max_size=rank - 1))) if len(factors) > 1 else []
        bounds = [0, *cuts, len(factors)]
        return {"shape": tuple(math.prod(factors[a:b]) for a, b in zip(bounds, bounds[1:]))}
    return i.drawn(build)


def reshape_dimensions_statics(shape):
    """``dimensions``: a permutation the operand is transposed by first; ``shape``: a new shape of
    as many elements (``reshape_statics``)."""
    return st.tuples(permuted(range(len(shape))).map(tuple), reshape_statics(shape)).map(
        lambda drawn: {"dimensions": drawn[0], **drawn[1]})


def collapsed_shape(x, static):
    low, high, _ = slice(static["start"], static["stop"]).indices(x.ndim)
    return x.shape[:low] + (math.prod(x.shape[low:high]),) + x.shape[high:]


def tile_statics(shape):
    return st.fixed_dictionaries({"reps": st.tuples(*[st.integers(1, 3)] * len(shape))})


def slice_statics(max_stride: int):
    """Per dimension a non-empty ``start:limit:stride``, stride 1..``max_stride``."""
    def statics(shape):
        def build(draw):
            starts, limits, strides = [], [], []
            for n in shape:
                start = draw(st.integers(0, n - 1))
                starts.append(start)
                limits.append(draw(st.integers(start + 1, n)))
                strides.append(draw(st.integers(1, max_stride)))
            return {"start": tuple(starts), "limit": tuple(limits), "strides": tuple(strides)}
        return i.drawn(build)
    return statics


def slice_in_dim_statics(shape):
    """``axis`` (counted from either end), and a non-empty ``start:limit:stride`` along it, bounds
    from either end or None, stride 1..3."""
    def build(draw):
        axis = draw(i.one_axis(len(shape)))
        n = shape[axis]
        s = draw(i.slices(n, steps=(1, 2, 3)).filter(lambda s: i.slice_length(s, n) > 0))
        return {"axis": axis, "start": s.start, "limit": s.stop, "stride": s.step}
    return i.drawn(build)


def index_in_dim_statics(shape):
    def build(draw):
        axis = draw(i.one_axis(len(shape)))
        n = shape[axis]
        return {"axis": axis, "index": draw(st.integers(-n, n - 1)), "keepdims": draw(st.booleans())}
    return i.drawn(build)


def unstack_statics(shape):
    """``axis`` (from either end) and which of the pieces ``index`` picks (from either end)."""
    def build(draw):
        axis = draw(i.one_axis(len(shape)))
        n = shape[axis]
        return {"axis": axis, "index": draw(st.integers(-n, n - 1))}
    return i.drawn(build)


def dynamic_in_dim_inputs(*, update: str = "", keepdims: bool = False):
    """``x`` of rank >= 1, (an ``update``: "slice", of x's shape but a side 1..n along ``axis``;
    "index", x's shape without ``axis``), a traced start, ``axis`` (from either end), and the static
    ``size`` of a slice (``keepdims`` where asked). A start goes 3 past either end at most (clamped;
    an update's that needs clamping, or counts from the end, meets the known deviation
    ``dynamic_update_slice_start`` where the operand or output is cut: its trigger holds for these
    entries too)."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        axis = draw(i.one_axis(len(shape)))
        n = shape[axis]
        start = np.int32(draw(st.integers(-n - 3, n + 3)))
        static = {"axis": axis}
        operands = [draw(i.values(F, shape))]
        if update == "slice":
            piece = list(shape)
            piece[axis] = draw(st.integers(1, n))
            operands.append(draw(i.values(F, tuple(piece))))
        elif update == "index":
            operands.append(draw(i.values(F, tuple(m for d, m in enumerate(shape) if d != axis % len(shape)))))
        else:
            static["size"] = draw(st.integers(1, n))
        if keepdims:
            static = {"axis": axis, "keepdims": draw(st.booleans())}
        return (*operands, start), static
    return draw_inputs(build)


def gather_inputs(window: bool):
    """``x`` (int32, rank >= 1), start indices of shape ``batch + (1,)`` (batch of rank 0..2) up to
    3 past either end, ``axis``, "clip" or "fill", and (``window``) a window ``size`` along it."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        axis = draw(st.integers(0, len(shape) - 1))
        n = shape[axis]
        batch = draw(i.sides_of(st.integers(0 if not window else 1, 2)))
        idx = draw(i.values(I32, batch + (1,), "small")).astype(np.int32)
        idx = (np.abs(idx.astype(np.int64)) % (n + 6) - 3).astype(np.int32)
        static = {"axis": axis, "mode": draw(sampled_from(("clip", "fill")))}
        if window:
            static["size"] = draw(st.integers(1, n))
        return (draw(i.values(I32, shape)), idx), static
    return draw_inputs(build)


def index_take_inputs():
    """``x`` (rank >= 1), 1 or 2 distinct ``axes`` in order and one index array each (all of one length,
    values wrapping past either end)."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        axes = tuple(sorted(draw(st.lists(st.integers(0, len(shape) - 1), unique=True, min_size=1,
                                          max_size=min(2, len(shape))))))  # (gather wants them sorted)
        length = draw(sampled_from(i.SIDES))
        idxs = tuple(draw(i.values(I32, (length,), "small")).astype(np.int32) for _ in axes)
        return (draw(i.values(F, shape)), *idxs), {"axes": axes}
    return draw_inputs(build)


def scatter_inputs(dtype: str, kind: str, *, repeats: bool, updates: bool = True):
    """``x`` (rank >= 1), indices of shape (B, 1) along ``axis``, rows of updates (x's shape
    without ``axis``, B of them); mode "clip" (indices clamped) or "drop" (those out of range left
    out); ``unique`` where no two indices land on one row (always, unless ``repeats``): then the
    indices are distinct, and "clip" keeps them in range."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        axis = draw(st.integers(0, len(shape) - 1))
        n = shape[axis]
        mode = draw(sampled_from(("clip", "drop")))
        low, high = (-2, n + 1) if mode == "drop" or repeats else (0, n - 1)
        count = draw(st.integers(1, high - low + 1 if not repeats else 8))
        values = draw(st.lists(st.integers(low, high), min_size=count, max_size=count, unique=not repeats))
        idx = np.asarray(values, np.int32).reshape(-1, 1)
        landed, keep = effective_indices(idx, n, mode)
        unique = len(set(landed.tolist())) == len(landed)
        operands = [draw(i.values(dtype, shape, kind)), idx]
        if updates:
            rows = (len(values),) + tuple(m for d, m in enumerate(shape) if d != axis)
            operands.append(draw(i.values(dtype, rows, kind)))
        return tuple(operands), {"axis": axis, "mode": mode, "unique": unique}
    return draw_inputs(build)


def sort_inputs(count: int, kind: str = "small"):
    """``count`` int32 operands of one shape (rank >= 1, values of ``kind``: ties), ``dimension``
    (from either end) and (several operands) ``num_keys``; ``is_stable`` for one operand."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        static = {"dimension": draw(i.one_axis(len(shape)))}
        if count > 1:
            static["num_keys"] = draw(st.integers(1, count))
        else:
            static["is_stable"] = draw(st.booleans())
        return tuple(draw(i.values(I32, shape, kind)) for _ in range(count)), static
    return draw_inputs(build)


def key_val_inputs():
    def build(draw):
        shape = draw(i.shapes(1, 3))
        return ((draw(i.values(I32, shape, "small")), draw(i.values(I32, shape))),
                {"dimension": draw(i.one_axis(len(shape)))})
    return draw_inputs(build)


def top_k_inputs(negative_axis: bool = True):
    """A float32 operand of rank >= 1, ``axis`` (from either end where allowed) and ``k`` 1..side
    (``top_k`` takes 0 too)."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        axis = draw(i.one_axis(len(shape)) if negative_axis else st.integers(0, len(shape) - 1))
        return (draw(i.values(F, shape)),), {"axis": axis, "k": draw(st.integers(1, shape[axis]))}
    return draw_inputs(build)


def concatenate_inputs():
    """2 or 3 operands of one dtype that differ only along ``dimension`` (non-negative)."""
    return i.concatenate_inputs()


def stack_inputs():
    """2 or 3 operands of one shape, and where the new ``axis`` goes, counted from either end."""
    def build(draw):
        shape = draw(i.shapes(0, 2))
        count = draw(st.integers(2, 3))
        rank = len(shape) + 1
        return tuple(draw(i.values(I32, shape)) for _ in range(count)), {"axis": draw(st.integers(-rank, rank - 1))}
    return draw_inputs(build)


def split_inputs():
    """``x`` of rank >= 1, ``axis`` (from either end), and 1..3 positive ``sizes`` adding up to its
    side."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        axis = draw(i.one_axis(len(shape)))
        n = shape[axis]
        cuts = sorted(draw(st.lists(st.integers(1, n - 1), unique=True, max_size=2))) if n > 1 else []
        bounds = [0, *cuts, n]
        return (draw(i.values(I32, shape)),), {"axis": axis, "sizes": tuple(b - a for a, b in zip(bounds, bounds[1:]))}
    return draw_inputs(build)


def select_n_inputs(cases: int):
    """A predicate (bool for 2 cases, int32 0..cases-1 otherwise: of the cases' shape or a scalar,
    1 in 4) and ``cases`` int32 operands of one shape."""
    def build(draw):
        shape = draw(i.shapes(0, 3))
        which_shape = () if not draw(st.integers(0, 3)) else shape
        if cases == 2:
            which = draw(i.values("bool", which_shape))
        else:
            which = (np.abs(draw(i.values(I32, which_shape)).astype(np.int64)) % cases).astype(np.int32)
        return (which, *(draw(i.values(I32, shape)) for _ in range(cases))), {}
    return draw_inputs(build)


# --- the entries ----------------------------------------------------------------------------------
SCATTER_DNUMS = ("lax.ScatterDimensionNumbers(update_window_dims=tuple(range(1, x.ndim)), "
                 "inserted_window_dims=(axis,), scatter_dims_to_operand_dims=(axis,))")
UPDATE_ROWS = "idx.shape[:1] + tuple(n for d, n in enumerate(x.shape) if d != axis)"


def scatter_entry(function: str, combine, dtype: str, kind: str, *, repeats: bool) -> Op:
    name = f"lax.{function}"
    return Op(name, "lax_scatter",
              f"lambda x, idx, u, *, axis, mode, unique: {name}(x, idx, u, {SCATTER_DNUMS}, "
              "unique_indices=unique, mode=mode)",
              scatter_reference(combine), scatter_inputs(dtype, kind, repeats=repeats), result="same",
              covers=(name,))


def reduction_entry(function: str, dtype: str, kind: str, reference, source: str = "") -> Op:
    name = f"lax.{function}"
    return Op(name, "reduction", source or f"lambda x, *, axis: {name.split(':')[0]}(x, axis)", reference,
              inputs((dtype,), kinds=(kind,), statics=reduction_axes), result="same",
              covers=(name.split(":")[0],))


REDUCTIONS: Tuple[Op, ...] = (
    reduction_entry("reduce_sum", I32, "any", ufunc_reduction(np.add)),
    reduction_entry("reduce_prod", I32, "tiny", ufunc_reduction(np.multiply)),
    reduction_entry("reduce_max", F, "any", ufunc_reduction(np.maximum)),
    reduction_entry("reduce_min", "int16", "any", ufunc_reduction(np.minimum)),
    reduction_entry("reduce_and", "bool", "any", ufunc_reduction(np.logical_and)),
    reduction_entry("reduce_or", "bool", "any", ufunc_reduction(np.logical_or)),
    # (of a dimension split over CPU devices XLA:CPU cannot compile their all-reduce: the known deviation
    # of cause xla_cpu_all_reduce_of_bitwise_and_or_xor)
    reduction_entry("reduce_and:int32", I32, "any", ufunc_reduction(np.bitwise_and)),
    reduction_entry("reduce_or:int32", I32, "any", ufunc_reduction(np.bitwise_or)),
    reduction_entry("reduce_xor", I32, "any", ufunc_reduction(np.bitwise_xor)),
    reduction_entry("reduce_xor:bool", "bool", "any", ufunc_reduction(np.logical_xor)),
    reduction_entry("reduce", I32, "any", ufunc_reduction(np.add),
                    "lambda x, *, axis: lax.reduce(x, 0, lax.add, axis)"),
    reduction_entry("reduce:max", F, "any", ufunc_reduction(np.maximum),
                    "lambda x, *, axis: lax.reduce(x, -np.inf, lax.max, axis)"),
    Op("lax.argmax", "reduction", "lambda x, *, axis: lax.argmax(x, axis, jnp.int32)",
       lambda x, axis: np.argmax(x, axis=axis).astype(np.int32),
       inputs((F,), kinds=("small",), statics=one_dimension, min_rank=1), result="int32", covers=("lax.argmax",)),
    Op("lax.argmin", "reduction", "lambda x, *, axis: lax.argmin(x, axis, jnp.int16)",
       lambda x, axis: np.argmin(x, axis=axis).astype(np.int16),
       inputs((I32,), kinds=("small",), statics=one_dimension, min_rank=1), result="int16", covers=("lax.argmin",)),
)

WINDOWS: Tuple[Op, ...] = (
    Op("lax.reduce_window", "reduce_window",
       "lambda x, *, window, strides, padding: lax.reduce_window(x, 0, lax.add, window, strides, padding)",
       reduce_window_reference(np.add, 0), window_inputs(I32, "any"), result="same", covers=("lax.reduce_window",)),
    Op("lax.reduce_window:max", "reduce_window",
       "lambda x, *, window, strides, padding: lax.reduce_window(x, -np.inf, lax.max, window, strides, padding)",
       reduce_window_reference(np.maximum, -np.inf), window_inputs(F, "any"), result="same",
       covers=("lax.reduce_window",)),
)

SCANS: Tuple[Op, ...] = (
    Op("lax.associative_scan", "associative_scan",
       "lambda x, *, axis, reverse: lax.associative_scan(lax.add, x, reverse=reverse, axis=axis)",
       reverse_along(np.cumsum), inputs((I32,), statics=scan_statics, min_rank=1), result="same",
       covers=("lax.associative_scan",)),
    Op("lax.associative_scan:maximum", "associative_scan",
       "lambda x, *, axis, reverse: lax.associative_scan(jnp.maximum, x, reverse=reverse, axis=axis)",
       reverse_along(np.maximum.accumulate), inputs((F,), statics=scan_statics, min_rank=1), result="same",
       covers=("lax.associative_scan",)),
)

SHAPES: Tuple[Op, ...] = (
    Op("lax.broadcast", "lax_shape", "lambda x, *, sizes: lax.broadcast(x, sizes)",
       lambda x, sizes: np.broadcast_to(x, tuple(sizes) + x.shape),
       inputs((F,), statics=lambda shape: i.sides_of(st.integers(0, 2)).map(lambda s: {"sizes": s})),
       result="same", covers=("lax.broadcast",)),
    Op("lax.broadcast_in_dim", "lax_shape", "lambda x, *, shape, dims: lax.broadcast_in_dim(x, shape, dims)",
       lambda x, shape, dims: np.broadcast_to(
           x.reshape(tuple(x.shape[dims.index(d)] if d in dims else 1 for d in range(len(shape)))), shape),
       broadcast_in_dim_inputs(), result="same", covers=("lax.broadcast_in_dim",)),
    Op("lax.broadcast_to_rank", "lax_shape", "lambda x, *, rank: lax.broadcast_to_rank(x, rank)",
       lambda x, rank: x.reshape((1,) * (rank - x.ndim) + x.shape),
       inputs((I32,), statics=lambda shape: st.fixed_dictionaries({"rank": st.integers(len(shape), len(shape) + 2)})),
       result="same", covers=("lax.broadcast_to_rank",)),
    Op("lax.collapse", "lax_shape", "lambda x, *, start, stop: lax.collapse(x, start, stop)",
       lambda x, start, stop: x.reshape(collapsed_shape(x, {"start": start, "stop": stop})),
       inputs((I32,), statics=collapse_statics, min_rank=1),  # (a scalar has no dimension to collapse)
       result="same", covers=("lax.collapse",)),
    Op("lax.expand_dims", "lax_shape", "lambda x, *, dims: lax.expand_dims(x, dims)",
       lambda x, dims: np.expand_dims(x, dims), inputs((I32,), statics=expand_dims_statics), result="same",
       covers=("lax.expand_dims",)),
    Op("lax.reshape", "lax_shape", "lambda x, *, shape: lax.reshape(x, shape)",
       lambda x, shape: np.reshape(x, shape),
       inputs((I32,), statics=reshape_statics), result="same",
       covers=("lax.reshape",)),
    Op("lax.reshape:dimensions", "lax_shape",
       "lambda x, *, shape, dimensions: lax.reshape(x, shape, dimensions)",
       lambda x, shape, dimensions: np.reshape(np.transpose(x, dimensions), shape),
       inputs((I32,), statics=reshape_dimensions_statics),
       result="same", covers=("lax.reshape",)),
    Op("lax.rev", "lax_shape", "lambda x, *, dims: lax.rev(x, dims)", lambda x, dims: np.flip(x, dims),
       inputs((F,), statics=lambda shape: st.fixed_dictionaries({"dims": distinct_dimensions(len(shape))})),
       result="same", covers=("lax.rev",)),
    Op("lax.squeeze", "lax_shape", "lambda x, *, axis: lax.squeeze(x, axis)", lambda x, axis: np.squeeze(x, axis),
       i.squeeze_inputs(), result="same", covers=("lax.squeeze",)),
    Op("lax.transpose", "lax_shape", "lambda x, *, axes: lax.transpose(x, axes)",
       lambda x, axes: np.transpose(x, axes), inputs((F,), statics=i.permutation_statics), result="same",
       covers=("lax.transpose",)),
    Op("lax.tile", "lax_shape", "lambda x, *, reps: lax.tile(x, reps)", lambda x, reps: np.tile(x, reps),
       inputs((I32,), statics=tile_statics, max_rank=2), result="same", covers=("lax.tile",)),
    Op("lax.full_like", "lax_shape", "lambda x: lax.full_like(x, 3)", lambda x: np.full_like(x, 3),
       inputs((F,)), result="same", covers=("lax.full_like",)),
)

ELEMENTWISE: Tuple[Op, ...] = (
    Op("lax.reciprocal", "elementwise", "lambda x: lax.reciprocal(x)", lambda x: np.reciprocal(x),
       inputs((F,), domains=("nonzero",)), result="same", covers=("lax.reciprocal",), **DIVISION),
    Op("lax.stop_gradient", "elementwise", "lambda x: lax.stop_gradient(x)", lambda x: x, inputs((F,)),
       result="same", covers=("lax.stop_gradient",)),
    Op("lax.optimization_barrier", "elementwise", "lambda x: lax.optimization_barrier(x)", lambda x: x,
       inputs((I32,)), result="same", covers=("lax.optimization_barrier",)),
    Op("lax.polygamma", "broadcasting", "lambda m, x: lax.polygamma(m, x)", special.polygamma,
       inputs((F, F), kinds=("tiny", "any"), domains=("natural", "positive"), shapes="same"),
       result="same", rtol=1e-4, atol=1e-5, covers=("lax.polygamma",)),
)

JOINS: Tuple[Op, ...] = (
    Op("lax.concatenate", "lax_joining", "lambda *xs, axis: lax.concatenate(xs, axis)",
       lambda *xs, axis: np.concatenate(xs, axis=axis), concatenate_inputs(), result="same",
       covers=("lax.concatenate",)),
    Op("lax.stack", "lax_joining", "lambda *xs, axis: lax.stack(xs, axis)",
       lambda *xs, axis: np.stack(xs, axis=axis), stack_inputs(), result="same", covers=("lax.stack",)),
    Op("lax.split", "lax_joining", "lambda x, *, sizes, axis: lax.split(x, sizes, axis)[0]", split_reference(0),
       split_inputs(), result="same", covers=("lax.split",)),
    Op("lax.split:last", "lax_joining", "lambda x, *, sizes, axis: lax.split(x, sizes, axis)[-1]",
       split_reference(-1), split_inputs(), result="same", covers=("lax.split",)),
)

def slice_entry(name: str, max_stride: int) -> Op:
    return Op(name, "lax_slicing", "lambda x, *, start, limit, strides: lax.slice(x, start, limit, strides)",
              lambda x, start, limit, strides: x[tuple(slice(a, b, s) for a, b, s in zip(start, limit, strides))],
              inputs((I32,), statics=slice_statics(max_stride)), result="same", covers=("lax.slice",))


SLICES: Tuple[Op, ...] = (
    slice_entry("lax.slice", 1),
    Op("lax.slice_in_dim", "lax_slicing",
       "lambda x, *, start, limit, stride, axis: lax.slice_in_dim(x, start, limit, stride, axis)",
       lambda x, start, limit, stride, axis: x[(slice(None),) * (axis % x.ndim) + (slice(start, limit, stride),)],
       inputs((F,), statics=slice_in_dim_statics, min_rank=1), result="same", covers=("lax.slice_in_dim",)),
    Op("lax.index_in_dim", "lax_slicing",
       "lambda x, *, index, axis, keepdims: lax.index_in_dim(x, index, axis, keepdims)",
       lambda x, index, axis, keepdims: np.take(x, [index] if keepdims else index, axis=axis),
       inputs((I32,), statics=index_in_dim_statics, min_rank=1), result="same", covers=("lax.index_in_dim",)),
    Op("lax.unstack", "lax_slicing", "lambda x, *, axis, index: lax.unstack(x, axis)[index]",
       lambda x, axis, index: np.take(x, index, axis=axis),
       inputs((I32,), statics=unstack_statics, min_rank=1), result="same", covers=("lax.unstack",)),
    Op("lax.dynamic_slice_in_dim", "lax_dynamic",
       "lambda x, start, *, size, axis: lax.dynamic_slice_in_dim(x, start, size, axis)",
       dynamic_slice_in_dim_reference, dynamic_in_dim_inputs(), result="same", covers=("lax.dynamic_slice_in_dim",)),
    Op("lax.dynamic_index_in_dim", "lax_dynamic",
       "lambda x, index, *, axis, keepdims: lax.dynamic_index_in_dim(x, index, axis, keepdims)",
       lambda x, index, axis, keepdims: dynamic_slice_in_dim_reference(x, index, size=1, axis=axis,
                                                                       keepdims=keepdims),
       dynamic_in_dim_inputs(keepdims=True), result="same", covers=("lax.dynamic_index_in_dim",)),
    Op("lax.dynamic_update_slice_in_dim", "lax_dynamic",
       "lambda x, update, start, *, axis: lax.dynamic_update_slice_in_dim(x, update, start, axis)",
       dynamic_update_in_dim_reference, dynamic_in_dim_inputs(update="slice"), result="same",
       covers=("lax.dynamic_update_slice_in_dim",)),
    Op("lax.dynamic_update_index_in_dim", "lax_dynamic",
       "lambda x, update, index, *, axis: lax.dynamic_update_index_in_dim(x, update, index, axis)",
       dynamic_update_in_dim_reference, dynamic_in_dim_inputs(update="index"), result="same",
       covers=("lax.dynamic_update_index_in_dim",)),
)

GATHERS: Tuple[Op, ...] = (
    Op("lax.gather", "lax_gather",
       "lambda x, idx, *, axis, mode: lax.gather(x, idx, lax.GatherDimensionNumbers("
       "offset_dims=tuple(range(idx.ndim - 1, idx.ndim + x.ndim - 2)), collapsed_slice_dims=(axis,), "
       "start_index_map=(axis,)), tuple(1 if d == axis else n for d, n in enumerate(x.shape)), mode=mode)",
       take_gather_reference, gather_inputs(window=False), result="same", covers=("lax.gather",)),
    Op("lax.gather:window", "lax_gather",
       "lambda x, idx, *, axis, size, mode: lax.gather(x, idx, lax.GatherDimensionNumbers("
       "offset_dims=tuple(range(idx.ndim - 1, idx.ndim - 1 + x.ndim)), collapsed_slice_dims=(), "
       "start_index_map=(axis,)), tuple(size if d == axis else n for d, n in enumerate(x.shape)), mode=mode)",
       slice_gather_reference, gather_inputs(window=True), result="same", covers=("lax.gather",)),
    Op("lax.index_take", "lax_gather", "lambda x, *idxs, axes: lax.index_take(x, idxs, axes)",
       index_take_reference, index_take_inputs(), result="same", covers=("lax.index_take",)),
)

SCATTERS: Tuple[Op, ...] = (
    scatter_entry("scatter", None, F, "any", repeats=False),
    scatter_entry("scatter_add", np.add, I32, "any", repeats=True),
    scatter_entry("scatter_sub", np.subtract, I32, "any", repeats=True),
    scatter_entry("scatter_mul", np.multiply, I32, "tiny", repeats=True),
    scatter_entry("scatter_min", np.minimum, F, "any", repeats=True),
    scatter_entry("scatter_max", np.maximum, F, "any", repeats=True),
    Op("lax.scatter_apply", "lax_scatter",
       f"lambda x, idx, *, axis, mode, unique: lax.scatter_apply(x, idx, lambda v: v * 2, {SCATTER_DNUMS}, "
       f"update_shape={UPDATE_ROWS}, unique_indices=unique, mode=mode)",
       scatter_apply_reference, scatter_inputs(I32, "any", repeats=True, updates=False), result="same",
       covers=("lax.scatter_apply",)),
)

SORTS: Tuple[Op, ...] = (
    Op("lax.sort", "lax_sorting", "lambda x, *, dimension, is_stable: lax.sort(x, dimension, is_stable)",
       lambda x, dimension, is_stable: np.sort(x, axis=dimension), sort_inputs(1, "any"), result="same",
       covers=("lax.sort",)),
    Op("lax.sort:operands", "lax_sorting",
       "lambda *xs, dimension, num_keys: jnp.stack(lax.sort(xs, dimension, True, num_keys))",
       lambda *xs, dimension, num_keys: lexicographic_sort(*xs, dimension=dimension, num_keys=num_keys),
       st.one_of(sort_inputs(2), sort_inputs(3)), result="same", covers=("lax.sort",)),
    Op("lax.sort_key_val", "lax_sorting", "lambda k, v, *, dimension: lax.sort_key_val(k, v, dimension)[0]",
       lambda k, v, dimension: lexicographic_sort(k, v, dimension=dimension, num_keys=1)[0], key_val_inputs(),
       result="same", covers=("lax.sort_key_val",)),
    Op("lax.sort_key_val:values", "lax_sorting",
       "lambda k, v, *, dimension: lax.sort_key_val(k, v, dimension)[1]",
       lambda k, v, dimension: lexicographic_sort(k, v, dimension=dimension, num_keys=1)[1], key_val_inputs(),
       result="same", covers=("lax.sort_key_val",)),
    Op("lax.top_k", "lax_sorting", "lambda x, *, k, axis: lax.top_k(x, k, axis=axis)[0]", top_k_reference(0),
       top_k_inputs(), result="same", covers=("lax.top_k",)),
    Op("lax.top_k:indices", "lax_sorting", "lambda x, *, k, axis: lax.top_k(x, k, axis=axis)[1]",
       top_k_reference(1), top_k_inputs(), result="int32", covers=("lax.top_k",)),
    Op("lax.approx_max_k", "lax_sorting",
       "lambda x, *, k, axis: lax.approx_max_k(x, k, reduction_dimension=axis)[0]", top_k_reference(0),
       top_k_inputs(), result="same", covers=("lax.approx_max_k",)),
    Op("lax.approx_max_k:indices", "lax_sorting",
       "lambda x, *, k, axis: lax.approx_max_k(x, k, reduction_dimension=axis)[1]", top_k_reference(1),
       top_k_inputs(), result="int32", covers=("lax.approx_max_k",)),
    Op("lax.approx_min_k", "lax_sorting",
       "lambda x, *, k, axis: lax.approx_min_k(x, k, reduction_dimension=axis)[0]",
       top_k_reference(0, largest=False), top_k_inputs(), result="same", covers=("lax.approx_min_k",)),
    Op("lax.approx_min_k:indices", "lax_sorting",
       "lambda x, *, k, axis: lax.approx_min_k(x, k, reduction_dimension=axis)[1]",
       top_k_reference(1, largest=False), top_k_inputs(), result="int32", covers=("lax.approx_min_k",)),
)

SELECTIONS: Tuple[Op, ...] = (
    Op("lax.select_n", "lax_select_n", "lambda which, *cases: lax.select_n(which, *cases)", select_n_reference,
       select_n_inputs(2), result="select", covers=("lax.select_n",)),
    Op("lax.select_n:three", "lax_select_n", "lambda which, *cases: lax.select_n(which, *cases)",
       select_n_reference, select_n_inputs(3), result="select", covers=("lax.select_n",)),
)

# Entries JAX fails (a reproduction each in the suite's findings), not run.
FINDINGS: Tuple[Op, ...] = (
    slice_entry("lax.slice:strided", 3),
)

ENTRIES: Tuple[Op, ...] = REDUCTIONS + WINDOWS + SCANS + SHAPES + ELEMENTWISE + JOINS + SLICES + GATHERS + \
    SCATTERS + SORTS + SELECTIONS
