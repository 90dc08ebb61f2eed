"""The vocabulary's entries for indexing functions (see ``vocabulary.py`` for the builders and
conventions): comparisons of whole arrays, partial sorts, the functions whose result's size depends
on the data (called with their static ``size=``), searching and counting, set operations, histograms,
the index arithmetic of ``ravel_multi_index`` and the functional forms of numpy's in-place updates.

Where JAX pads a data-dependent result to ``size`` the reference pads numpy's answer as JAX documents
(``padded``); where JAX leaves the padding undocumented (the indices and counts of ``unique``, the
indices of ``intersect1d``) the example draws a ``size`` no larger than the answer, so nothing is
padded. Functions whose answer depends on how ties are broken (``partition``, ``argpartition``) are
checked for their documented guarantee only, put in a form with one answer.

Not covered: ``jnp.trim_zeros``, whose result's shape depends on the data and which takes no
``size=`` (it cannot be traced under jit: ``concrete_or_error`` on the operand)."""

from __future__ import annotations

from dataclasses import replace
from typing import Tuple

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import strategies.ops.inputs as i
from strategies.reuse import permuted, sampled_from

from .op import Op
from .vocabulary import DIVISION, TRANSCENDENTAL, entry, inputs

F, INT = "float32", "int32"


# --- references numpy names otherwise -----------------------------------------------------------
def padded(values, size: int, fill, axis: int = 0):
    """``values``' first ``size`` entries along ``axis``, then ``fill`` up to ``size``: what JAX's
    ``size=``/``fill_value=`` make of a data-dependent result ("if there are fewer elements than
    ``size`` indicates, the return value will be padded with ``fill_value``")."""
    values = np.moveaxis(np.asarray(values), axis, 0)[:size]
    pad = np.full((size - values.shape[0],) + values.shape[1:], fill, dtype=values.dtype)
    return np.moveaxis(np.concatenate([values, pad]), 0, axis)


def sides_sorted(partitioned, kth: int, axis: int):
    """A partition along ``axis`` with the entries before ``kth`` sorted and those after it sorted:
    the one answer every valid partition has (numpy's and JAX's ``partition`` guarantee only that
    the ``kth`` entry is the sorted one's and the entries before it are <= it, after it >= it; the
    order within each side is the implementation's). Equal to ``np.sort`` along ``axis``."""
    p = np.moveaxis(np.asarray(partitioned), axis, -1)
    k = kth % p.shape[-1]
    joined = np.concatenate([np.sort(p[..., :k], axis=-1), p[..., k:k + 1], np.sort(p[..., k + 1:], axis=-1)], -1)
    return np.moveaxis(joined, -1, axis)


SIDES_SORTED = ("(lambda p, k: jnp.moveaxis(jnp.concatenate([jnp.sort(p[..., :k], axis=-1), p[..., k:k + 1], "
                "jnp.sort(p[..., k + 1:], axis=-1)], axis=-1), -1, axis))(jnp.moveaxis({}, axis, -1), "
                "kth % x.shape[axis])")


def partition_reference(x, *, kth, axis):
    """numpy's partition with each side sorted (``sides_sorted``)."""
    return sides_sorted(np.partition(x, kth, axis=axis), kth, axis)


def argpartition_reference(x, *, kth, axis):
    """The values numpy's argpartition picks, each side sorted (``sides_sorted``)."""
    return sides_sorted(np.take_along_axis(x, np.argpartition(x, kth, axis=axis), axis=axis), kth, axis)


def nonzero_reference(x, *, size, fill_value):
    """``np.nonzero``'s index arrays, stacked, each padded to ``size`` with ``fill_value`` (0 when
    None: jnp.nonzero's documented default)."""
    return padded(np.stack(np.nonzero(x)), size, 0 if fill_value is None else fill_value, axis=1)


def bincount_reference(x, weights=None, *, length):
    """jnp.bincount with a static ``length``: "negative values are clipped to zero", "numbers beyond
    the specified length are dropped"."""
    counts = np.bincount(np.clip(x, 0, None), weights=weights, minlength=length)[:length]
    return counts if weights is None else counts.astype(weights.dtype)


def compress_reference(condition, a, *, axis, size, fill_value):
    """numpy's compress (``a`` flattened where ``axis`` is None), padded along ``axis`` to ``size``."""
    return padded(np.compress(condition, a, axis=axis), size, fill_value, axis=0 if axis is None else axis)


def unravel_reference(indices, *, shape):
    """jnp.unravel_index, stacked: "unlike NumPy, negative indices are supported, and out-of-bound
    indices are clipped to the nearest valid value" (a negative index counts from the end)."""
    size = int(np.prod(shape))
    flat = np.clip(np.where(indices < 0, indices + size, indices), 0, size - 1)
    return np.stack(np.unravel_index(flat, shape)).astype(indices.dtype)


def put_reference(a, ind, v, *, mode):
    """numpy's put on a copy (``mode=None``, JAX's default, on indices in bounds: numpy's 'raise')."""
    out = a.copy()
    np.put(out, ind, v, mode=mode or "raise")
    return out


def put_along_axis_reference(arr, indices, values, *, axis):
    out = arr.copy()
    np.put_along_axis(out, indices, values, axis=axis)
    return out


def place_reference(arr, mask, vals):
    out = arr.copy()
    np.place(out, mask, vals)
    return out


def unique_reference(x, *, size, fill_value, axis=None):
    """numpy's sorted unique values (slices along ``axis``), padded to ``size`` with ``fill_value``,
    or where it is None with the smallest unique value ("Defaults to the minimum unique value")."""
    found = np.unique(x, axis=axis)
    along = 0 if axis is None else axis
    fill = np.take(found, 0, axis=along) if fill_value is None else fill_value
    if axis is None:
        return padded(found, size, fill)
    pad_shape = list(found.shape)
    pad_shape[along] = max(size - found.shape[along], 0)
    pad = np.broadcast_to(np.expand_dims(np.asarray(fill, found.dtype), along), pad_shape) if fill_value is None \
        else np.full(pad_shape, fill, found.dtype)
    return np.concatenate([np.take(found, range(min(size, found.shape[along])), axis=along), pad], axis=along)


def set_reference(function):
    """numpy's set operation ``function`` (sorted unique values), padded to ``size`` with
    ``fill_value``, or where it is None with the smallest value of the result (as each of jnp's
    set operations documents; an example draws one where the result is empty)."""
    def reference(x, y, *, size, fill_value):
        found = getattr(np, function)(x, y)
        return padded(found, size, found.min() if fill_value is None else fill_value)
    return reference


def unique_all_part(part: str):
    """numpy's unique_all's ``part``, its first ``size`` entries (``size`` no more than it has)."""
    return lambda x, size, fill_value: getattr(np.unique_all(x), part)[:size]


def piecewise_reference(x, c0, c1):
    return np.piecewise(x, [c0, c1], [lambda v: v * 2, -1.0, lambda v: v - 3])


# --- inputs -------------------------------------------------------------------------------------
def built(build):
    return i.inputs_from(build)


def small_ints(draw, shape, dtype: str = INT, kind: str = "small"):
    return draw(i.values(dtype, shape, kind))


def axis_and_kth(shape):
    def build(draw):
        axis = draw(i.one_axis(len(shape)))
        n = shape[axis]
        return {"kth": draw(st.integers(-n, n - 1)), "axis": axis}
    return i.drawn(build)


def size_fill(count: int, fills=(None, -1), past: int = 2):
    """``size`` 1 .. ``count`` + ``past`` (an empty result would be no test) and a ``fill_value``
    from ``fills``."""
    return st.fixed_dictionaries({"size": st.integers(1, count + past), "fill_value": sampled_from(fills)})


def nonzero_inputs(dtype: str = INT):
    """An operand of rank >= 1 with many zeros (values -2..2), ``size`` up to 2 past its element
    count and a ``fill_value`` (None: 0, or -1)."""
    return inputs((dtype,), kinds=("tiny",), min_rank=1,
                  statics=lambda shape: size_fill(int(np.prod(shape))))


def bincount_inputs(weighted: bool):
    """Values -2 .. ``length`` + 2 in a 1-D operand (of two rows, the values and their weights,
    where ``weighted``: sliced apart, they share a sharding, which jnp.bincount requires of them),
    and the static ``length`` 1..10."""
    def build(draw):
        length = draw(st.integers(1, 10))
        n = draw(i.SIDE)
        x = draw(hnp.arrays(np.int32, (n,), elements=st.integers(-2, length + 2)))
        if weighted:
            return (np.stack([x, small_ints(draw, (n,))]),), {"length": length}
        return (x,), {"length": length}
    return built(build)


def choose_inputs():
    """Indices -2 .. 4 (taken wrapped or clipped) and 2 or 3 choices, shapes broadcasting together."""
    def build(draw):
        count = draw(st.integers(2, 3))
        shape = draw(i.shapes(0, 3))
        shapes = i.broadcasting_shapes(draw, shape, count + 1)
        a = draw(hnp.arrays(np.int32, shapes[0], elements=st.integers(-2, count + 1)))
        return (a, *(small_ints(draw, s) for s in shapes[1:])), {"mode": draw(sampled_from(("wrap", "clip")))}
    return built(build)


def compress_inputs():
    """A condition no longer than ``a`` along ``axis`` (None: flattened), ``size`` 1 .. the
    condition's length and a ``fill_value``."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        axis = draw(st.one_of(st.none(), i.one_axis(len(shape))))
        n = int(np.prod(shape)) if axis is None else shape[axis]
        m = draw(st.integers(1, n))
        condition = draw(i.values("bool", (m,)))
        static = {"axis": axis, "size": draw(st.integers(1, m)), "fill_value": draw(sampled_from((0, -1)))}
        return (condition, small_ints(draw, shape)), static
    return built(build)


def extract_inputs():
    def build(draw):
        shape = draw(i.shapes(1, 3))
        return ((draw(i.values("bool", shape)), small_ints(draw, shape)),
                dict(draw(size_fill(int(np.prod(shape)), fills=(0, -1), past=0))))
    return built(build)


def sorted_vector(draw, *, distinct: bool = False, descending: bool = False, bound: int = 8, least: int = 1):
    """A sorted float32 vector of integer values -bound..bound (of distinct ones where asked), of
    ``least`` entries or more."""
    n = draw(sampled_from(tuple(side for side in i.SIDES if side >= least)))
    if distinct:
        values = draw(st.lists(st.integers(-bound, bound), min_size=min(n, 2 * bound + 1),
                               max_size=min(n, 2 * bound + 1), unique=True))
    else:
        values = draw(st.lists(st.integers(-bound, bound), min_size=n, max_size=n))
    out = np.sort(np.asarray(values, np.float32))
    return out[::-1].copy() if descending else out


SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def digitize_inputs():
    """Values, bins sorted either way (ties included) and ``right``, ``method``."""
    def build(draw):
        x = small_ints(draw, draw(i.shapes(0, 3)), F)
        bins = sorted_vector(draw, descending=draw(st.booleans()))
        return (x, bins), {"right": draw(st.booleans()), "method": draw(sampled_from((None,) + SEARCH_METHODS))}
    return built(build)


def searchsorted_inputs(methods=SEARCH_METHODS):
    def build(draw):
        a = sorted_vector(draw)
        v = small_ints(draw, draw(i.shapes(0, 3)), F)
        return (a, v), {"side": draw(sampled_from(("left", "right"))), "method": draw(sampled_from(methods))}
    return built(build)


def interp_inputs(periodic: bool):
    """Points, distinct increasing sample points ``xp`` and their values ``fp``; ``left``/``right``
    None or a value (or, ``periodic``, a ``period`` 4 and sample points in any order)."""
    def build(draw):
        x = draw(i.values(F, draw(i.shapes(0, 3))))
        xp = sorted_vector(draw, distinct=True, bound=7)
        fp = small_ints(draw, xp.shape, F)
        if periodic:  # distinct points of one period, 0 .. 3.5
            return (x, np.asarray(draw(permuted(list((xp + 7) / 4))), np.float32), fp), {"period": 4.0}
        edge = st.one_of(st.none(), st.integers(-20, 20).map(float))
        return (x, xp, fp), {"left": draw(edge), "right": draw(edge)}
    return built(build)


def isin_inputs():
    def build(draw):
        element = small_ints(draw, draw(i.shapes(0, 3)))
        tests = small_ints(draw, draw(i.shapes(0, 2)))
        return (element, tests), {"invert": draw(st.booleans()),
                                  "method": draw(sampled_from(("auto", "compare_all", "binary_search", "sort")))}
    return built(build)


def lexsort_inputs():
    """2 or 3 keys of one shape (rank >= 1, values -2..2: many ties) and the ``axis``."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        keys = tuple(small_ints(draw, shape, kind="tiny") for _ in range(draw(st.integers(2, 3))))
        return keys, {"axis": draw(i.one_axis(len(shape)))}
    return built(build)


def complex_ties():
    """complex64 operand with real and imaginary parts -2..2 (ties in the real part)."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        real, imaginary = (small_ints(draw, shape, F, "tiny") for _ in "ri")
        return ((real + 1j * imaginary).astype(np.complex64),), {}
    return built(build)


def select_inputs():
    """Two choices and two conditions, shapes broadcasting together, and a ``default``."""
    def build(draw):
        shapes = i.broadcasting_shapes(draw, draw(i.shapes(0, 3)), 4)
        x0, x1 = (small_ints(draw, s) for s in shapes[:2])
        c0, c1 = (draw(i.values("bool", s)) for s in shapes[2:])
        return (x0, x1, c0, c1), {"default": draw(sampled_from((0, -1)))}
    return built(build)


def place_inputs():
    def build(draw):
        shape = draw(i.shapes(1, 3))
        vals = small_ints(draw, (draw(st.integers(1, 6)),))
        return (small_ints(draw, shape), draw(i.values("bool", shape)), vals), {}
    return built(build)


def distinct_targets(draw, n: int, count: int):
    """``count`` distinct positions 0..n-1, in any order."""
    return np.asarray(draw(permuted(list(range(n))))[:count], np.int64)


def put_inputs():
    """``a``, distinct flat positions (past either end for 'clip' and 'wrap', still distinct once
    clipped or wrapped: no two updates race), values to put (repeated or cut to the positions'
    count) and ``mode``."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        size = int(np.prod(shape))
        mode = draw(sampled_from((None, "clip", "wrap")))
        ind = distinct_targets(draw, size, draw(st.integers(1, size)))
        if mode == "wrap":
            ind = ind + size * np.asarray(draw(st.lists(st.integers(-2, 2), min_size=len(ind), max_size=len(ind))))
        elif mode == "clip":
            ind = np.where(ind == size - 1, size - 1 + draw(st.integers(0, 5)), np.where(ind == 0, -draw(
                st.integers(0, 5)), ind))
        v = small_ints(draw, (draw(st.integers(1, len(ind) + 2)),))
        return (small_ints(draw, shape), ind.astype(np.int32), v), {"mode": mode}
    return built(build)


def put_along_axis_inputs():
    """``arr``, indices distinct along ``axis`` in each line (negative ones included), values of
    the indices' shape (or a trailing part broadcasting to it) and ``axis`` (None: flattened,
    indices 1-D)."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        axis = draw(st.one_of(st.none(), i.one_axis(len(shape))))
        target = (int(np.prod(shape)),) if axis is None else shape
        along = 0 if axis is None else axis % len(shape)
        n = target[along]
        count = draw(st.integers(1, n))
        lines = int(np.prod(target)) // n
        picks = np.stack([distinct_targets(draw, n, count) for _ in range(lines)])  # (lines, count)
        moved = np.moveaxis(np.empty(target), along, -1).shape[:-1] + (count,)
        idx = np.moveaxis(picks.reshape(moved), -1, along)
        idx = np.where(draw(i.values("bool", idx.shape)), idx - n, idx).astype(np.int32)
        values = small_ints(draw, draw(i.broadcasting_to(idx.shape)))
        return (small_ints(draw, shape), idx, values), {"axis": axis}
    return built(build)


def ravel_multi_index_inputs():
    """1..3 index arrays broadcasting together, values 2 past either end of ``dims``, and ``mode``
    ('wrap' or 'clip'), ``order``."""
    def build(draw):
        count = draw(st.integers(1, 3))
        dims = tuple(draw(sampled_from(i.SIDES)) for _ in range(count))
        shapes = i.broadcasting_shapes(draw, draw(i.shapes(0, 2)), count)
        index = tuple(draw(hnp.arrays(np.int32, s, elements=st.integers(-2, d + 1))) for s, d in zip(shapes, dims))
        return index, {"dims": dims, "mode": draw(sampled_from(("wrap", "clip"))), "order": draw(
            sampled_from(("C", "F")))}
    return built(build)


def unravel_inputs():
    """Flat indices 3 past either end of a static ``shape`` (1..3 sides), negative ones included."""
    def build(draw):
        shape = tuple(draw(st.lists(sampled_from(i.SIDES), min_size=1, max_size=3)))
        size = int(np.prod(shape))
        indices = draw(hnp.arrays(np.int32, draw(i.shapes(0, 2)), elements=st.integers(-size - 3, size + 2)))
        return (indices,), {"shape": shape}
    return built(build)


def unique_inputs(*, with_axis: bool = False, padding: bool = True, size_at_least_found: bool = False,
                  fills=(None, -100)):
    """Values -8..8 (ties), ``size`` (1 .. 2 past the number of unique values where ``padding``,
    else up to that number; from it up where ``size_at_least_found``) and ``fill_value``; with
    ``with_axis`` an ``axis`` to find unique slices along."""
    def build(draw):
        x = small_ints(draw, draw(i.shapes(1 if with_axis else 0, 3)), kind=draw(sampled_from(("small", "tiny"))))
        axis = draw(i.one_axis(x.ndim)) if with_axis else None
        found = np.unique(x, axis=axis).shape[0 if axis is None else axis]
        low, high = (found, found + 2) if size_at_least_found else (1, found + 2 if padding else found)
        static = {"size": draw(st.integers(low, high)), "fill_value": draw(sampled_from(fills))}
        return (x,), ({"axis": axis, **static} if with_axis else static)
    return built(build)


def set_inputs(function: str, *, fill_given: bool = False):
    """Two operands (any rank, values -8..8: they meet), ``size`` 1 .. 2 past the size of the
    result and ``fill_value`` (given wherever the result is empty, or ``fill_given``). (``size=0``
    raises in JAX 0.10.2 for intersect1d and setxor1d without a fill value, and for setdiff1d.)"""
    def build(draw):
        x, y = (small_ints(draw, draw(i.shapes(0, 2)), kind=draw(sampled_from(("small", "tiny")))) for _ in "xy")
        found = getattr(np, function)(x, y).size
        fills = (-100,) if fill_given or not found else (None, -100)
        return (x, y), {"size": draw(st.integers(1, found + 2)), "fill_value": draw(sampled_from(fills))}
    return built(build)


def intersect_indices_inputs():
    """Two operands that meet (``y`` holds ``x``'s first element) and ``size`` 1 .. the
    intersection's size (JAX pads the indices with an out-of-bound index it does not name)."""
    def build(draw):
        x, y = (small_ints(draw, draw(i.shapes(1, 2)), kind="tiny") for _ in "xy")
        y.flat[0] = x.flat[0]
        return (x, y), {"size": draw(st.integers(1, np.intersect1d(x, y).size))}
    return built(build)


# Bin edges that float32 holds exactly: ranges of width 16 (or the data's integer extent) cut into a
# power of two of bins, so that numpy and JAX put a value on an edge in the same bin.
BINS = (1, 2, 4, 8, 16)
RANGES = (None, (-8.0, 8.0), (-4.0, 12.0), (-16.0, 0.0))


def histogram_inputs(*, weighted: bool = False, density: bool = False):
    def build(draw):
        a = small_ints(draw, draw(i.shapes(0, 3)), F)
        static = {"bins": draw(sampled_from(BINS)), "range": draw(sampled_from(RANGES))}
        if density:
            static["density"] = True
        return ((a, small_ints(draw, a.shape, F, "tiny")) if weighted else (a,)), static
    return built(build)


def histogram_edges_inputs():
    """Values and increasing bin edges (integer-valued, distinct, two or more), an operand."""
    def build(draw):
        return (small_ints(draw, draw(i.shapes(0, 3)), F), sorted_vector(draw, distinct=True, least=2)), {}
    return built(build)


def histogram2d_inputs():
    def build(draw):
        n = draw(i.SIDE)
        bins = draw(st.one_of(sampled_from(BINS), st.tuples(sampled_from(BINS), sampled_from(BINS))))
        span = draw(sampled_from((None, ((-8.0, 8.0), (-4.0, 12.0)))))
        return (small_ints(draw, (n,), F), small_ints(draw, (n,), F)), {"bins": bins, "range": span}
    return built(build)


def histogramdd_inputs():
    """``sample`` of shape (N, D), D 1..3, bins per dimension (or one for all) and ranges."""
    def build(draw):
        d = draw(st.integers(1, 3))
        bins = draw(st.one_of(sampled_from(BINS), st.tuples(*[sampled_from(BINS)] * d)))
        span = draw(st.one_of(st.none(), st.tuples(*[sampled_from(RANGES[1:])] * d)))
        return (small_ints(draw, (draw(i.SIDE), d), F),), {"bins": bins, "range": span}
    return built(build)


# --- the entries --------------------------------------------------------------------------------
def same_shaped_pair(kind: str = "small", domain: str = "any", statics=None):
    """Two float32 operands of one shape, the second the first with a few entries moved by -1..1
    (so that whole-array comparisons come out either way)."""
    def build(draw):
        (x,), static = draw(inputs((F,), kinds=(kind,), domains=(domain,), statics=statics))
        moved = draw(hnp.arrays(np.float32, x.shape, elements=st.sampled_from((0.0,) * 6 + (-1.0, 1.0))))
        return (x, (x + moved).astype(np.float32)), static
    return built(build)


CLOSE = st.fixed_dictionaries({"rtol": sampled_from((0.0, 0.125, 0.5)), "atol": sampled_from((0.0, 0.5, 1.0)),
                               "equal_nan": st.booleans()})

COMPARISONS: Tuple[Op, ...] = (
    entry("jnp.allclose", "whole_comparison",
          "lambda x, y, *, rtol, atol, equal_nan: jnp.allclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)",
          lambda x, y, **static: np.allclose(x, y, **static),
          same_shaped_pair(domain="nans", statics=lambda shape: CLOSE), result="bool"),
    entry("jnp.array_equal", "whole_comparison",
          "lambda x, y, *, equal_nan: jnp.array_equal(x, y, equal_nan=equal_nan)",
          lambda x, y, equal_nan: np.array_equal(x, y, equal_nan=equal_nan),
          same_shaped_pair(domain="nans", statics=lambda shape: st.fixed_dictionaries({"equal_nan": st.booleans()})),
          result="bool"),
    entry("jnp.array_equiv", "whole_comparison", "lambda x, y: jnp.array_equiv(x, y)", np.array_equiv,
          inputs((INT, INT), kinds=("tiny", "tiny")), result="bool"),
)

ARGPARTITION = "lambda x, *, kth, axis: " + SIDES_SORTED.format(
    "jnp.take_along_axis(x, jnp.argpartition(x, kth, axis=axis), axis=axis)")
PARTIAL_SORTS: Tuple[Op, ...] = (
    entry("jnp.partition", "partition",
          "lambda x, *, kth, axis: " + SIDES_SORTED.format("jnp.partition(x, kth, axis=axis)"),
          partition_reference, inputs((INT,), kinds=("small",), min_rank=1, statics=axis_and_kth)),
    entry("jnp.argpartition", "partition", ARGPARTITION, argpartition_reference,
          inputs((F,), kinds=("small",), min_rank=1, max_rank=1, statics=axis_and_kth)),
)

COMPACTIONS: Tuple[Op, ...] = (
    entry("jnp.argwhere", "compaction", "lambda x, *, size, fill_value: jnp.argwhere(x, size=size, "
          "fill_value=fill_value)", lambda x, **static: nonzero_reference(x, **static).T, nonzero_inputs(),
          result="index"),
    entry("jnp.nonzero", "compaction", "lambda x, *, size, fill_value: jnp.stack(jnp.nonzero(x, size=size, "
          "fill_value=fill_value))", nonzero_reference, nonzero_inputs(F), result="index"),
    entry("jnp.flatnonzero", "compaction", "lambda x, *, size, fill_value: jnp.flatnonzero(x, size=size, "
          "fill_value=fill_value)", lambda x, **static: nonzero_reference(x.reshape(-1), **static)[0],
          nonzero_inputs(), result="index"),
    entry("jnp.compress", "compaction", "lambda condition, a, *, axis, size, fill_value: jnp.compress(condition, "
          "a, axis=axis, size=size, fill_value=fill_value)", compress_reference, compress_inputs(), result="select"),
    entry("jnp.extract", "compaction", "lambda condition, a, *, size, fill_value: jnp.extract(condition, a, "
          "size=size, fill_value=fill_value)",
          lambda condition, a, *, size, fill_value: padded(np.extract(condition, a), size, fill_value),
          extract_inputs(), result="select"),
)
# (JAX 0.12 refuses a cut axis of jnp.nonzero's operand on an Explicit mesh with a ValueError, "Cannot apply
# nonzero over sharded axes", not a ShardingTypeError: until that refusal is decided as a rule or an entry,
# these three run on Auto meshes only, a gap the note of 2026-12-07 lists)
COMPACTIONS = tuple(replace(op, explicit=False) if op.name in ("jnp.argwhere", "jnp.nonzero", "jnp.flatnonzero")
                    else op for op in COMPACTIONS)

SEARCHES: Tuple[Op, ...] = (
    entry("jnp.digitize", "searching", "lambda x, bins, *, right, method: jnp.digitize(x, bins, right=right, "
          "method=method)", lambda x, bins, right, method: np.digitize(x, bins, right=right), digitize_inputs(),
          result="index"),
    entry("jnp.searchsorted", "searching", "lambda a, v, *, side, method: jnp.searchsorted(a, v, side=side, "
          "method=method)", lambda a, v, side, method: np.searchsorted(a, v, side=side), searchsorted_inputs(),
          result="index"),
    entry("jnp.interp", "searching", "lambda x, xp, fp, *, left, right: jnp.interp(x, xp, fp, left=left, "
          "right=right)", lambda x, xp, fp, **static: np.interp(x, xp, fp, **static), interp_inputs(False),
          result="inexact", tolerance=TRANSCENDENTAL),
    entry("jnp.interp:period", "searching", "lambda x, xp, fp, *, period: jnp.interp(x, xp, fp, period=period)",
          lambda x, xp, fp, period: np.interp(x, xp, fp, period=period), interp_inputs(True), result="inexact",
          tolerance=TRANSCENDENTAL),
    entry("jnp.isin", "searching", "lambda element, tests, *, invert, method: jnp.isin(element, tests, "
          "invert=invert, method=method)", lambda element, tests, invert, method: np.isin(element, tests,
                                                                                          invert=invert),
          isin_inputs(), result="bool"),
)

SORTS: Tuple[Op, ...] = (
    entry("jnp.lexsort", "lexsort", "lambda *keys, axis: jnp.lexsort(keys, axis=axis)",
          lambda *keys, axis: np.lexsort(keys, axis=axis), lexsort_inputs(), result="index"),
    entry("jnp.sort_complex", "sort_last", "lambda x: jnp.sort_complex(x)", np.sort_complex, complex_ties(),
          result="complex"),
)

SELECTIONS: Tuple[Op, ...] = (
    entry("jnp.choose", "choosing", "lambda a, *choices, mode: jnp.choose(a, choices, mode=mode)",
          lambda a, *choices, mode: np.choose(a, choices, mode=mode), choose_inputs(), result="select"),
    entry("jnp.select", "broadcasting", "lambda x0, x1, c0, c1, *, default: jnp.select([c0, c1], [x0, x1], "
          "default=default)", lambda x0, x1, c0, c1, default: np.select([c0, c1], [x0, x1], default=default),
          select_inputs()),
    entry("jnp.piecewise", "choosing",
          "lambda x, c0, c1: jnp.piecewise(x, [c0, c1], [lambda v: v * 2, -1.0, lambda v: v - 3])",
          piecewise_reference, inputs((F, "bool", "bool"), shapes="same"), result="same"),
)

UPDATES: Tuple[Op, ...] = (
    entry("jnp.place", "functional_update", "lambda arr, mask, vals: jnp.place(arr, mask, vals, inplace=False)",
          place_reference, place_inputs(), result="same"),
    entry("jnp.put", "functional_update", "lambda a, ind, v, *, mode: jnp.put(a, ind, v, mode=mode, inplace=False)",
          put_reference, put_inputs(), result="same"),
    entry("jnp.put_along_axis", "functional_update", "lambda arr, indices, values, *, axis: jnp.put_along_axis("
          "arr, indices, values, axis, inplace=False)", put_along_axis_reference, put_along_axis_inputs(),
          result="same"),
)

COUNTS: Tuple[Op, ...] = (
    entry("jnp.bincount", "counting", "lambda x, *, length: jnp.bincount(x, length=length)",
          bincount_reference, bincount_inputs(False), result="index"),
    entry("jnp.bincount:weighted", "counting",
          "lambda xw, *, length: jnp.bincount(xw[0], weights=xw[1], length=length)",
          lambda xw, length: bincount_reference(xw[0], xw[1], length=length), bincount_inputs(True),
          result="same"),
    entry("jnp.histogram", "counting", "lambda a, *, bins, range: jnp.histogram(a, bins=bins, range=range)[0]",
          lambda a, **static: np.histogram(a, **static)[0], histogram_inputs(), result="inexact"),
    entry("jnp.histogram:edges", "counting", "lambda a, *, bins, range: jnp.histogram(a, bins=bins, "
          "range=range)[1]", lambda a, **static: np.histogram(a, **static)[1], histogram_inputs(),
          result="inexact"),
    entry("jnp.histogram:weighted", "counting", "lambda a, w, *, bins, range: jnp.histogram(a, bins=bins, "
          "range=range, weights=w)[0]", lambda a, w, **static: np.histogram(a, weights=w, **static)[0],
          histogram_inputs(weighted=True), result="inexact"),
    entry("jnp.histogram:density", "counting", "lambda a, *, bins, range, density: jnp.histogram(a, bins=bins, "
          "range=range, density=density)[0]", lambda a, **static: np.histogram(a, **static)[0],
          histogram_inputs(density=True), result="inexact", tolerance=DIVISION),
    entry("jnp.histogram:bin_array", "counting", "lambda a, edges: jnp.histogram(a, bins=edges)[0]",
          lambda a, edges: np.histogram(a, bins=edges)[0], histogram_edges_inputs(), result="inexact"),
    entry("jnp.histogram_bin_edges", "counting", "lambda a, *, bins, range: jnp.histogram_bin_edges(a, bins=bins, "
          "range=range)", lambda a, **static: np.histogram_bin_edges(a, **static), histogram_inputs(),
          result="inexact"),
    entry("jnp.histogram2d", "counting", "lambda x, y, *, bins, range: jnp.histogram2d(x, y, bins=bins, "
          "range=range)[0]", lambda x, y, **static: np.histogram2d(x, y, **static)[0], histogram2d_inputs(),
          result="index"),
    # (the edges' references cast to the samples' dtype: jnp.histogram2d's and histogramdd's docstring
    # examples give float32 edges for float32 samples; numpy's are float64, or the bins' dtype)
    entry("jnp.histogram2d:y_edges", "counting", "lambda x, y, *, bins, range: jnp.histogram2d(x, y, bins=bins, "
          "range=range)[2]", lambda x, y, **static: np.histogram2d(x, y, **static)[2].astype(y.dtype),
          histogram2d_inputs(),
          result="inexact"),
    entry("jnp.histogramdd", "counting", "lambda sample, *, bins, range: jnp.histogramdd(sample, bins=bins, "
          "range=range)[0]", lambda sample, **static: np.histogramdd(sample, **static)[0], histogramdd_inputs(),
          result="index"),
    entry("jnp.histogramdd:edges", "counting", "lambda sample, *, bins, range: jnp.histogramdd(sample, bins=bins, "
          "range=range)[1][-1]",
          lambda sample, **static: np.histogramdd(sample, **static)[1][-1].astype(sample.dtype),
          histogramdd_inputs(), result="inexact"),
)

INDEX_ARITHMETIC: Tuple[Op, ...] = (
    entry("jnp.ravel_multi_index", "broadcasting", "lambda *index, dims, mode, order: jnp.ravel_multi_index("
          "index, dims, mode=mode, order=order)",
          lambda *index, dims, mode, order: np.ravel_multi_index(index, dims, mode=mode, order=order),
          ravel_multi_index_inputs()),
    entry("jnp.unravel_index", "unravel", "lambda indices, *, shape: jnp.stack(jnp.unravel_index(indices, shape))",
          unravel_reference, unravel_inputs(), result="same"),
)

UNIQUE_VALUES = "lambda x, *, size, fill_value: jnp.{}(x, size=size, fill_value=fill_value)"
SETS: Tuple[Op, ...] = (
    entry("jnp.unique", "set", UNIQUE_VALUES.format("unique"), unique_reference, unique_inputs()),
    entry("jnp.unique:axis", "set", "lambda x, *, axis, size, fill_value: jnp.unique(x, axis=axis, size=size, "
          "fill_value=fill_value)", unique_reference, unique_inputs(with_axis=True)),
    entry("jnp.unique:index", "set", "lambda x, *, size, fill_value: jnp.unique(x, return_index=True, size=size, "
          "fill_value=fill_value)[1]",
          lambda x, size, fill_value: np.unique(x, return_index=True)[1][:size],
          unique_inputs(padding=False), result="index"),
    entry("jnp.unique:inverse", "set", "lambda x, *, size, fill_value: jnp.unique(x, return_inverse=True, "
          "size=size, fill_value=fill_value)[1]",
          lambda x, size, fill_value: np.unique(x, return_inverse=True)[1].reshape(x.shape),
          unique_inputs(size_at_least_found=True), result="index"),
    entry("jnp.unique:counts", "set", "lambda x, *, size, fill_value: jnp.unique(x, return_counts=True, "
          "size=size, fill_value=fill_value)[1]",
          lambda x, size, fill_value: np.unique(x, return_counts=True)[1][:size],
          unique_inputs(padding=False), result="index"),
    entry("jnp.unique_values", "set", UNIQUE_VALUES.format("unique_values"), unique_reference, unique_inputs()),
    entry("jnp.unique_counts", "set", "lambda x, *, size, fill_value: jnp.unique_counts(x, size=size, "
          "fill_value=fill_value).counts", lambda x, size, fill_value: np.unique_counts(x).counts[:size],
          unique_inputs(padding=False), result="index"),
    entry("jnp.unique_inverse", "set", "lambda x, *, size, fill_value: jnp.unique_inverse(x, size=size, "
          "fill_value=fill_value).inverse_indices",
          lambda x, size, fill_value: np.unique_inverse(x).inverse_indices.reshape(x.shape),
          unique_inputs(size_at_least_found=True), result="index"),
    entry("jnp.unique_all", "set", UNIQUE_VALUES.format("unique_all") + ".values", unique_reference,
          unique_inputs()),
    *(entry(f"jnp.unique_all:{part}", "set", UNIQUE_VALUES.format("unique_all") + f".{part}",
            unique_all_part(part), unique_inputs(padding=False), result="index") for part in ("indices", "counts")),
    entry("jnp.unique_all:inverse", "set", "lambda x, *, size, fill_value: jnp.unique_all(x, size=size, "
          "fill_value=fill_value).inverse_indices",
          lambda x, size, fill_value: np.unique_all(x).inverse_indices.reshape(x.shape),
          unique_inputs(size_at_least_found=True), result="index"),
    *(entry(f"jnp.{name}", "set", f"lambda x, y, *, size, fill_value: jnp.{name}(x, y, size=size, "
            "fill_value=fill_value)", set_reference(name), set_inputs(name, fill_given=name == "setdiff1d"))
      for name in ("intersect1d", "union1d", "setdiff1d", "setxor1d")),
    entry("jnp.intersect1d:indices", "set", "lambda x, y, *, size: jnp.stack(jnp.intersect1d(x, y, "
          "return_indices=True, size=size)[1:])",
          lambda x, y, size: np.stack(np.intersect1d(x, y, return_indices=True)[1:])[:, :size],
          intersect_indices_inputs(), result="index"),
)

def named(ops, *names):
    return tuple(op for op in ops if op.name in names)


def not_named(ops, *names):
    return tuple(op for op in ops if op.name not in names)


# JAX's failures on an Explicit mesh, triaged (suites/bugs/causes.toml; each cause's strict
# reproduction in suites/test_sharding_invariance_reproductions.py): argpartition of an operand cut
# off the partitioned dimension (explicit_argpartition_builds_a_replicated_proxy); piecewise of a cut
# operand (its vectorize: explicit_vectorize_of_a_cut_and_a_replicated_operand, from 0.8.0; before,
# its switch: explicit_vmapped_loop_or_cond_over_a_constant); the scan methods of searchsorted, which
# digitize, interp, histogram and histogramdd go through, on a cut query (the scan's constant carry:
# explicit_vmapped_loop_or_cond_over_a_constant). They run on Auto meshes only (EXPLICIT_FAILURES)
# until JAX fixes them, their Explicit form held by the strict reproductions.
EXPLICIT_FAILURES: Tuple[Op, ...] = (
    entry("jnp.argpartition:several_dimensions", "partition", ARGPARTITION, argpartition_reference,
          inputs((F,), kinds=("small",), min_rank=2, statics=axis_and_kth), covers=("jnp.argpartition",)),
    *named(SELECTIONS, "jnp.piecewise"),
    entry("jnp.searchsorted:scan", "searching", "lambda a, v, *, side, method: jnp.searchsorted(a, v, side=side, "
          "method=method)", lambda a, v, side, method: np.searchsorted(a, v, side=side),
          searchsorted_inputs(("scan", "scan_unrolled")), result="index", covers=("jnp.searchsorted",)),
    *named(SEARCHES, "jnp.digitize", "jnp.interp", "jnp.interp:period"),
    *named(COUNTS, "jnp.histogram", "jnp.histogram:edges", "jnp.histogram:weighted", "jnp.histogram:density",
           "jnp.histogram:bin_array", "jnp.histogramdd", "jnp.histogramdd:edges"),
)

# JAX's failure on both kinds of mesh, not triaged yet (its script in suites/bugs/untriaged/): setdiff1d,
# eager, of a one-element operand over a size-1 mesh axis (AssertionError on an Explicit mesh,
# IndexError on an Auto one).
FINDINGS: Tuple[Op, ...] = named(SETS, "jnp.setdiff1d")

# Entries whose Explicit-mesh refusals (ShardingTypeError) no rule here states yet: they run on Auto
# meshes only (AUTO_ONLY, as the quantiles do) until their family has one (choose: the stacked
# choices and the gather; put, place, put_along_axis and bincount: the scatter; histogram2d: the
# stacked sample; isin and searchsorted's other methods: the sort or the broadcast comparison;
# unique along an axis: the lexsort of its slices).
NEEDS_A_RULE: Tuple[Op, ...] = (
    named(SELECTIONS, "jnp.choose") + UPDATES + named(COUNTS, "jnp.bincount", "jnp.bincount:weighted",
                                                      "jnp.histogram2d", "jnp.histogram2d:y_edges")
    + named(SEARCHES, "jnp.searchsorted", "jnp.isin") + named(SETS, "jnp.unique:axis"))
AUTO_ONLY: Tuple[Op, ...] = tuple(replace(op, explicit=False) for op in NEEDS_A_RULE + EXPLICIT_FAILURES)

ENTRIES: Tuple[Op, ...] = (
    COMPARISONS + PARTIAL_SORTS + COMPACTIONS + SORTS + named(SELECTIONS, "jnp.select") + INDEX_ARITHMETIC
    + named(COUNTS, "jnp.histogram_bin_edges") + not_named(SETS, "jnp.unique:axis", "jnp.setdiff1d")
    + AUTO_ONLY)
