"""What the catalogue's operations are called with: a builder ``*_inputs`` per kind of operation,
a strategy of ``(operands, static)``; the static keyword arguments of one operand come from a
``*_statics(shape)`` function.

Shapes take sides from ``SIDES``, so most of them divide over the mesh axes; a bounded space keeps
the number of compiled programs small. Sums, products and contractions draw integer-valued floats
(or integers, which wrap modulo 2**32 in any order), so that the answer does not depend on the
order a partitioned program adds in, and stays exact.
"""

from __future__ import annotations

import itertools
import math
from typing import Callable, Optional, Tuple

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from strategies.arrays import ramps, varied
from strategies.odds import mostly
from strategies.reuse import permuted, reused, sampled_from

# Array sides, in shrinking order: small, and mostly products of 2 so that mesh axes divide them.
SIDES = (2, 4, 1, 8, 6, 3)
# How often ``shapes`` draws each: 1, which no mesh axis cuts, 1 in 61; the others 12 in 61 each.
SIDE_DRAWS = SIDES + tuple(side for side in SIDES if side != 1) * 11
SIDE = sampled_from(SIDE_DRAWS)

Statics = Callable[[tuple], st.SearchStrategy]  # shape -> strategy of the static keyword arguments


# --- building blocks ----------------------------------------------------------------------------
def ranks(min_rank: int = 0, max_rank: int = 3) -> st.SearchStrategy:
    """A rank in ``min_rank``..``max_rank``: a positive one (any, alike) but for about 1 in 128
    draws, which give rank 0 where it is allowed (nothing can cut a rank-0 array, so it is rare);
    one choice either way, so that it shrinks towards the lowest positive rank, not towards 0."""
    positive = tuple(range(max(min_rank, 1), max_rank + 1))
    if not positive:
        return st.just(0)
    if min_rank > 0:
        return sampled_from(positive)
    return sampled_from(positive * (127 // len(positive)) + (0,))


@reused
@st.composite
def shapes(draw, min_rank: int = 0, max_rank: int = 3):
    """Shapes of ``min_rank``..``max_rank`` dimensions (rank 0 rare, see ``ranks``) with sides from
    ``SIDES`` (1, which no mesh axis cuts, 1 in 61: ``SIDE_DRAWS``). A side is drawn for every
    dimension up to ``max_rank`` whatever the rank, so that a lower rank is no shorter a choice
    sequence: shrinks towards ``(2,)`` (``(2, 2)`` for ``min_rank=2``)."""
    rank = draw(ranks(min_rank, max_rank))
    return tuple([draw(SIDE) for _ in range(max_rank)][:rank])


def sides_of(rank: st.SearchStrategy) -> st.SearchStrategy:
    """Shapes of a rank ``rank`` draws, with sides from ``SIDES`` (where rank 0 is as likely as
    ``rank`` makes it: index arrays, added leading dimensions)."""
    return rank.flatmap(lambda n: st.tuples(*[sampled_from(SIDES)] * n))


def values(dtype: str, shape, kind: str = "any") -> st.SearchStrategy:
    """Arrays of ``dtype`` and ``shape``. ``kind``: "any" (every integer; finite floats of
    magnitude <= 10 without subnormals), "small" (integers, or integer-valued floats, in -8..8:
    exact in every summation order), "tiny" (integer-valued -2..2, for products).

    Most vary from element to element (``strategies.arrays.varied``: a ramp wrapped into the range,
    in order or shuffled, with a few drawn elements put in); 1 in 8 repeats one drawn element
    (with a few others put in, or none). Shrinks towards the ramp 0, 1, 2, ... (wrapped into the
    range)."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if dtype == np.bool_:
        return varied(ramps(dtype, shape), st.booleans(), dtype, shape)
    bound = {"small": 8, "tiny": 2}.get(kind)
    if bound is not None:
        return varied(ramps(dtype, shape, bound=bound, integral=True),
                      st.integers(-bound, bound).map(dtype.type), dtype, shape)
    if dtype.kind == "f":
        return varied(ramps(dtype, shape, bound=10, subnormals=False),
                      st.floats(-10, 10, width=dtype.itemsize * 8, allow_subnormal=False), dtype, shape)
    return varied(ramps(dtype, shape), hnp.from_dtype(dtype), dtype, shape)


def axes_of(rank: int) -> st.SearchStrategy:
    """One axis (negative ones included), None, or a tuple of distinct axes, for a reduction."""
    if rank == 0:
        return st.none()
    return st.one_of(st.integers(-rank, rank - 1), st.none(),
                     st.lists(st.integers(0, rank - 1), unique=True).map(tuple))


def one_axis(rank: int) -> st.SearchStrategy:
    return st.integers(-rank, rank - 1)


@st.composite
def drawn(draw, build: Callable):
    """The strategy of ``build(draw)``: what a function that draws gives, without a composite of
    its own (``st.composite`` reads the function's source, milliseconds per strategy made)."""
    return build(draw)


def inputs_from(build: Callable) -> st.SearchStrategy:
    """A strategy from ``build(draw) -> (operands, static)``."""
    return st.composite(build)()


@reused
@st.composite
def broadcasting_to(draw, shape):
    """A shape that broadcasts to ``shape``: its trailing dimensions (mostly all of them), each
    mostly (3 in 4) the same side, else 1. (``hnp.broadcastable_shapes`` would also give a size-1
    side of ``shape`` any other size.) Shrinks towards ``shape``."""
    start = draw(st.integers(0, len(shape)))
    kept = shape[0 if draw(mostly()) else start:]
    return tuple(n if draw(mostly()) else 1 for n in kept)


def index_arrays(shape_side: int, *, low: int = 0, high=None):
    """Strategy for int32 index arrays of rank 0..2 with values in ``low..high`` (default: the
    valid non-negative indices into a side ``shape_side``)."""
    high = shape_side - 1 if high is None else high
    return sides_of(st.integers(0, 2)).flatmap(lambda s: hnp.arrays(np.int32, s, elements=st.integers(low, high)))


def prime_factors(n: int) -> list:
    factors, p = [], 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors


# --- one operand --------------------------------------------------------------------------------
def unary_inputs(dtype: str, kind: str = "any", statics: Optional[Statics] = None, *,
                 min_rank: int = 0, max_rank: int = 3):
    """One operand of ``dtype`` (values of ``kind``, see ``values``), and the static arguments
    ``statics(shape)`` draws (none without it)."""
    def build(draw):
        shape = draw(shapes(min_rank, max_rank))
        operand = draw(values(dtype, shape, kind))
        return (operand,), (draw(statics(shape)) if statics else {})
    return inputs_from(build)


def reduction_inputs(dtype: str, kind: str = "any", *, keepdims: bool = True, single_axis: bool = False):
    """One operand and the axes to reduce over (one axis or None when ``single_axis``), with
    ``keepdims`` either way when asked."""
    def statics(shape):
        axis = st.one_of(st.none(), one_axis(len(shape))) if single_axis and shape else axes_of(len(shape))
        return st.fixed_dictionaries({"axis": axis, **({"keepdims": st.booleans()} if keepdims else {})})
    return unary_inputs(dtype, kind, statics)


def scan_inputs(dtype: str, kind: str = "any", *, negative_axis: bool = True):
    """One operand of rank >= 1 and the axis to scan along (negative ones when asked)."""
    def statics(shape):
        low = -len(shape) if negative_axis else 0
        return st.fixed_dictionaries({"axis": st.integers(low, len(shape) - 1)})
    return unary_inputs(dtype, kind, statics, min_rank=1)


def axis_statics(shape):
    """``axis``: any axis, negative ones included."""
    return st.fixed_dictionaries({"axis": st.integers(-len(shape), len(shape) - 1)})


def axes_statics(shape):
    """``axis``: None, one axis, or a tuple of distinct axes."""
    return st.fixed_dictionaries({"axis": axes_of(len(shape))})


def not_own_inverse(rank: int) -> Tuple[Tuple[int, ...], ...]:
    """The permutations of ``rank`` dimensions that are not their own inverse (none below rank 3)."""
    return tuple(p for p in itertools.permutations(range(rank)) if tuple(np.argsort(p)) != p)


def permutation_statics(shape):
    """``axes``: a permutation of the dimensions; where the rank allows (3 or more), 3 in 4 draws
    one that is not its own inverse, so that reading where each axis goes for where it comes from
    is another valid call with another result."""
    rank = len(shape)
    if rank < 3:
        return st.fixed_dictionaries({"axes": permuted(range(rank)).map(tuple)})
    telling, any_order = sampled_from(not_own_inverse(rank)), permuted(range(rank)).map(tuple)
    return st.fixed_dictionaries({"axes": mostly(4).flatmap(lambda tells: telling if tells else any_order)})


def two_axes_statics(shape):
    """``a``, ``b``: two axes, negative ones included; where the rank allows, distinct dimensions
    in 3 draws of 4 (so that reading one for the other is another call), else possibly equal."""
    rank = len(shape)

    def build(draw):
        a = draw(one_axis(rank))
        if rank > 1 and draw(mostly(4)):
            others = [b for b in range(-rank, rank) if b % rank != a % rank]
            return {"a": a, "b": draw(sampled_from(others))}
        return {"a": a, "b": draw(one_axis(rank))}
    return drawn(build)


def new_axis_statics(shape):
    """``axis``: where a new dimension goes, counted from either end."""
    return st.fixed_dictionaries({"axis": st.integers(-len(shape) - 1, len(shape))})


def leading_shape_statics(shape):
    """``shape``: ``shape`` with 0 or 1 leading dimensions added (a broadcast target)."""
    return sides_of(st.integers(0, 1)).map(lambda lead: {"shape": lead + shape})


def dimension_statics(shape):
    """``dim``: one dimension."""
    return st.fixed_dictionaries({"dim": st.integers(0, len(shape) - 1)})


def diagonal_statics(shape):
    """``k``: a diagonal offset -3..3."""
    return st.fixed_dictionaries({"k": st.integers(-3, 3)})


def reshape_statics(shape):
    """``shape``: as many elements as ``shape``, its prime factors shuffled and regrouped into 1..4
    dimensions (size-1 dimensions included)."""
    def build(draw):
        factors = draw(permuted(prime_factors(math.prod(shape))))
        rank = draw(st.integers(1, 4))
        cuts = sorted(draw(st.lists(st.integers(0, len(factors)), min_size=rank - 1, max_size=rank - 1)))
        bounds = [0, *cuts, len(factors)]
        return {"shape": tuple(math.prod(factors[a:b]) for a, b in zip(bounds, bounds[1:]))}
    return drawn(build)


def roll_statics(shape):
    """``axis`` (one in 3 draws of 4, else None: flattened) and ``shift``: up to twice the rolled
    size either way, or (half of the draws with an axis) one that is also a valid axis, so that
    reading the shift for the axis and the axis for the shift is another valid call."""
    def build(draw):
        rank = len(shape)
        axis = draw(st.integers(0, rank - 1)) if draw(mostly(4)) else None
        n = math.prod(shape) if axis is None else shape[axis]
        if axis is not None and draw(st.booleans()):
            return {"shift": draw(st.integers(-rank, rank - 1)), "axis": axis}
        return {"shift": draw(st.integers(-2 * n, 2 * n)), "axis": axis}
    return drawn(build)


def pad_statics(shape):
    """``widths``: 0..3 before and after each dimension; ``mode``: constant, edge, wrap or
    symmetric."""
    def build(draw):
        widths = tuple((draw(st.integers(0, 3)), draw(st.integers(0, 3))) for _ in shape)
        return {"widths": widths, "mode": draw(sampled_from(("constant", "edge", "wrap", "symmetric")))}
    return drawn(build)


def lax_pad_statics(shape):
    """``config``: ``(low, high, interior)`` per dimension, low and high -3..3, interior 0..2,
    leaving at least one element; a negative ``low`` may start the result on an interior padding
    element (with the dimension cut, XLA's SPMD partitioner aborts the process on it: where that
    is a known deviation, suites/test_sharding_invariance.py runs such an example unsharded only)."""
    def build(draw):
        config = []
        for n in shape:
            interior = draw(st.integers(0, 2))
            dilated = n + (n - 1) * interior
            low = draw(st.integers(-min(dilated - 1, 3), 3))
            high = draw(st.integers(-min(dilated - 1 + min(low, 0), 3), 3))
            config.append((low, high, interior))
        return {"config": tuple(config)}
    return drawn(build)


# --- slices -----------------------------------------------------------------------------------
def slice_length(s: slice, n: int) -> int:
    return len(range(*s.indices(n)))


def slices(n: int, *, steps=(1,), reach: int = 0) -> st.SearchStrategy:
    """``slice(start, stop, step)`` over a side ``n``: bounds in ``-n - reach .. n + reach`` or
    None, a step from ``steps``."""
    bound = st.one_of(st.none(), st.integers(-n - reach, n + reach))
    return st.builds(slice, bound, bound, sampled_from(steps))


def out_of_range(s: slice, n: int) -> bool:
    return any(b is not None and not -n <= b <= n for b in (s.start, s.stop))


def index_statics(kind: str) -> Statics:
    """``index``: a tuple of slices, one per leading dimension: "in-range" non-empty unit-step
    ones, "strided" non-empty ones of step -3..3, "out-of-range" non-empty ones with a bound past
    the ends, "empty" ones where some slice selects nothing."""
    def statics(shape):
        def index(draw):
            picked = []
            for n in shape[:draw(st.integers(1, len(shape)))]:
                if kind == "in-range":
                    s = draw(slices(n).filter(lambda s: slice_length(s, n) > 0))  # noqa: B023 - called in this iteration
                elif kind == "strided":
                    s = draw(slices(n, steps=(2, 3, -1, -2, -3, 1)).filter(lambda s: slice_length(s, n) > 0))  # noqa: B023 - called in this iteration
                elif kind == "out-of-range":
                    s = draw(slices(n, steps=(1, 2, -1), reach=n + 3).filter(lambda s: slice_length(s, n) > 0))  # noqa: B023 - called in this iteration
                else:
                    s = draw(slices(n, reach=2))
                picked.append(s)
            if kind == "out-of-range" and not any(out_of_range(s, n) for s, n in zip(picked, shape)):
                start = draw(st.integers(shape[0] + 1, shape[0] + 4))
                picked[0] = slice(-start, None, 1)
            if kind == "empty" and all(slice_length(s, n) for s, n in zip(picked, shape)):
                start = draw(st.integers(0, shape[0]))
                picked[0] = slice(start, draw(st.integers(0, start)), 1)  # stop <= start: nothing
            return {"index": tuple(picked)}
        return drawn(index)
    return statics


# --- several operands ---------------------------------------------------------------------------
def broadcasting_shapes(draw, result, count: int) -> list:
    """``count`` shapes that broadcast to ``result`` (``broadcasting_to``); where ``result`` has a
    side above 1 and theirs broadcast to ones only (nothing to cut), the first is ``result``."""
    picked = [draw(broadcasting_to(result)) for _ in range(count)]
    if max(result, default=1) > 1 and max(np.broadcast_shapes(*picked), default=1) <= 1:
        picked[0] = tuple(result)
    return picked


def broadcasting_inputs(dtypes: Tuple[str, ...], kind: str = "any"):
    """One operand per dtype, shapes broadcasting together (trailing-aligned, sides equal or 1;
    ``broadcasting_shapes``)."""
    def build(draw):
        result = draw(shapes(0, 3))
        return tuple(draw(values(dtype, shape, kind))
                     for dtype, shape in zip(dtypes, broadcasting_shapes(draw, result, len(dtypes)))), {}
    return inputs_from(build)


def at_shifted_inputs(dtype: str, kind: str = "any"):
    """One operand of rank >= 1, and ``axis`` and ``shift`` for ``x.at[dst].<method>(x[src])``
    with ranges ``shift`` apart along the axis (they overlap when ``|shift|`` is less than half the
    side)."""
    def statics(shape):
        def build(draw):
            axis = draw(st.integers(0, len(shape) - 1))
            n = shape[axis]
            return {"axis": axis, "shift": draw(st.integers(-(n - 1), n - 1))}
        return drawn(build)
    return unary_inputs(dtype, kind, statics, min_rank=1)


def at_range_inputs(dtype: str):
    """``x``, a strided static range ``index`` of it, and ``u`` of that range's shape."""
    def build(draw):
        shape = draw(shapes(1, 3))
        index = draw(index_statics("strided")(shape))["index"]
        x = draw(values(dtype, shape))
        u = draw(values(dtype, x[index].shape))
        return (x, u), {"index": index}
    return inputs_from(build)


def scatter_add_inputs():
    """``x``, indices into its first dimension (repeated ones add up) and the updates."""
    def build(draw):
        shape = draw(shapes(1, 3))
        idx = draw(hnp.arrays(np.int32, (draw(sampled_from(SIDES)),),
                              elements=st.integers(0, shape[0] - 1)))
        u = draw(values("int32", idx.shape + shape[1:]))
        return (draw(values("int32", shape)), idx, u), {}
    return inputs_from(build)


def take_inputs(mode: str):
    """``x``, an index array and ``axis``: valid indices, or (``mode="clip"``) ones past either
    end."""
    def build(draw):
        shape = draw(shapes(1, 3))
        axis = draw(st.integers(0, len(shape) - 1))
        n = shape[axis]
        low, high = (-n - 3, 2 * n + 2) if mode == "clip" else (0, n - 1)
        idx = draw(index_arrays(n, low=low, high=high))
        return (draw(values("int32", shape)), idx), {"axis": axis}
    return inputs_from(build)


def fancy_index_inputs():
    """``x`` and an index array into its first dimension, negative indices included."""
    def build(draw):
        shape = draw(shapes(1, 3))
        idx = draw(index_arrays(shape[0], low=-shape[0], high=shape[0] - 1))
        return (draw(values("float32", shape)), idx), {}
    return inputs_from(build)


def take_along_axis_inputs():
    """``x``, an index array of its rank (another side along ``axis``) and ``axis``."""
    def build(draw):
        shape = draw(shapes(1, 3))
        axis = draw(st.integers(0, len(shape) - 1))
        idx_shape = list(shape)
        idx_shape[axis] = draw(sampled_from(SIDES))
        idx = draw(hnp.arrays(np.int32, tuple(idx_shape), elements=st.integers(0, shape[axis] - 1)))
        return (draw(values("int32", shape)), idx), {"axis": axis}
    return inputs_from(build)


def concatenate_inputs():
    """2 or 3 operands that differ only along ``axis``."""
    def build(draw):
        shape = draw(shapes(1, 3))
        axis = draw(st.integers(0, len(shape) - 1))
        operands = []
        for _ in range(draw(st.integers(2, 3))):
            piece = list(shape)
            piece[axis] = draw(sampled_from(SIDES))
            operands.append(draw(values("int32", tuple(piece))))
        return tuple(operands), {"axis": axis}
    return inputs_from(build)


def stack_inputs():
    """2 or 3 operands of one shape, and where the new ``axis`` goes."""
    def build(draw):
        shape = draw(shapes(0, 2))
        count = draw(st.integers(2, 3))
        return (tuple(draw(values("float32", shape)) for _ in range(count)),
                {"axis": draw(st.integers(0, len(shape)))})
    return inputs_from(build)


def squeeze_inputs():
    """An operand with 1 or 2 size-1 dimensions inserted, and some of its size-1 ``axis`` to
    squeeze."""
    def build(draw):
        shape = list(draw(shapes(0, 3)))
        for _ in range(draw(st.integers(1, 2))):
            shape.insert(draw(st.integers(0, len(shape))), 1)
        ones = [i for i, n in enumerate(shape) if n == 1]
        axis = tuple(draw(st.lists(sampled_from(ones), min_size=1, unique=True)))
        return (draw(values("int32", tuple(shape))),), {"axis": axis}
    return inputs_from(build)


def lax_pad_inputs():
    """``x`` of rank >= 1, a padding value, and a ``config`` (see ``lax_pad_statics``)."""
    def build(draw):
        shape = draw(shapes(1, 3))
        x, static = draw(values("float32", shape)), draw(lax_pad_statics(shape))
        return (x, np.float32(draw(st.integers(-5, 5)))), static
    return inputs_from(build)


def dynamic_slice_inputs():
    """``x``, one start per dimension up to 3 past either end (traced, so clamped at run time),
    and the slice ``sizes``."""
    def build(draw):
        shape = draw(shapes(1, 3))
        starts = tuple(np.int32(draw(st.integers(-n - 3, n + 3))) for n in shape)
        sizes = tuple(draw(st.integers(1, n)) for n in shape)
        return (draw(values("int32", shape)), *starts), {"sizes": sizes}
    return inputs_from(build)


def dynamic_update_slice_inputs():
    """``x``, an update no larger than it, and one start per dimension up to 3 past either end."""
    def build(draw):
        shape = draw(shapes(1, 3))
        update_shape = tuple(draw(st.integers(1, n)) for n in shape)
        starts = tuple(np.int32(draw(st.integers(-n - 3, n + 3))) for n in shape)
        return (draw(values("float32", shape)), draw(values("float32", update_shape)), *starts), {}
    return inputs_from(build)


EINSUM_SUBSCRIPTS = {
    "ij,jk->ik": ("ij", "jk"), "bij,bjk->bik": ("bij", "bjk"), "ijk,jk->i": ("ijk", "jk"),
    "ij,ij->": ("ij", "ij"), "i,j->ij": ("i", "j"), "ij->ji": ("ij",), "bij,jk->bk": ("bij", "jk"),
}


def einsum_inputs():
    """``subscripts`` from ``EINSUM_SUBSCRIPTS`` and operands whose sides agree letter by letter."""
    def build(draw):
        subscripts = draw(sampled_from(sorted(EINSUM_SUBSCRIPTS)))
        letters = sorted(set("".join(EINSUM_SUBSCRIPTS[subscripts])))
        side = {letter: draw(sampled_from(SIDES)) for letter in letters}
        operands = tuple(draw(values("float32", tuple(side[c] for c in term), "small"))
                         for term in EINSUM_SUBSCRIPTS[subscripts])
        return operands, {"subscripts": subscripts}
    return inputs_from(build)


def matmul_inputs(dtype: str, kind: str):
    """(x, y) for matmul: ``x`` of rank 1..3, ``y`` of rank 1..3, batch dimensions broadcasting;
    in 1 draw of 3 both matrices (batched alike or not) with ``n == m``, so that ``y @ x`` is a
    valid call too (one that reads the operands in the other order)."""
    def build(draw):
        m, k, n = (draw(SIDE) for _ in range(3))
        batch = draw(shapes(0, 1))
        if not draw(mostly(3)):
            shape = draw(sampled_from([(), batch]))
            return (draw(values(dtype, shape + (m, k), kind)), draw(values(dtype, shape + (k, m), kind))), {}
        x_shape = draw(sampled_from([(k,), (m, k), batch + (m, k)]))
        y_shape = draw(sampled_from([(k,), (k, n), batch + (k, n)]))
        return (draw(values(dtype, x_shape, kind)), draw(values(dtype, y_shape, kind))), {}
    return inputs_from(build)


def selection_inputs(same_shapes: bool):
    """A bool condition and two int32 operands: of one shape, or (not ``same_shapes``) shapes
    broadcasting together (``broadcasting_shapes``)."""
    def build(draw):
        shape = draw(shapes(0, 3))
        c, x, y = [shape] * 3 if same_shapes else broadcasting_shapes(draw, shape, 3)
        return (draw(values("bool", c)), draw(values("int32", x)), draw(values("int32", y))), {}
    return inputs_from(build)
