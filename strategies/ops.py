"""The operation catalogue: array operations to run on sharded inputs, each with a strategy for its
inputs, a numpy reference and a stated comparison.

An entry's ``source`` is the JAX function as Python text (a lambda over the operands, with static
arguments as keywords): it is evaluated once to get the function, and quoted as is in reproduction
scripts. Its ``inputs`` strategy draws the operands (numpy arrays; these get shardings) and the
static keyword arguments (ints, tuples, slices; these are baked into the traced function). Its
``reference`` computes the same thing with numpy, written here when numpy has no such function.

Comparisons are exact (``rtol = atol = 0``) unless the entry states a tolerance. Sums, products
and contractions draw integer-valued floats (or integers, which wrap modulo 2**32 in any order),
so that the answer does not depend on the order a partitioned program adds in, and stays exact.
Shapes take sides from ``SIDES``, so most of them divide over the mesh axes; a bounded space keeps
the number of compiled programs small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Dict, Tuple

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# Array sides, in shrinking order: small, and mostly products of 2 so that mesh axes divide them.
SIDES = (2, 4, 1, 8, 6, 3)
TINY32 = float(np.finfo(np.float32).tiny)  # XLA's CPU backend flushes subnormal results to zero


@dataclass(frozen=True)
class Op:
    """One catalogue entry."""

    name: str
    family: str
    source: str  # "lambda x, y, *, axis: ...": the JAX function, evaluated and quoted in repros
    reference: Callable  # numpy: reference(*operands, **static)
    inputs: st.SearchStrategy  # draws (operands tuple, static dict)
    rtol: float = 0.0
    atol: float = 0.0
    fn: Callable = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        import jax
        import jax.numpy as jnp
        from jax import lax
        object.__setattr__(self, "fn", eval(self.source, {"jax": jax, "jnp": jnp, "lax": lax, "np": np}))


# --- Shapes and values ------------------------------------------------------------------------
def shapes(min_rank: int = 0, max_rank: int = 3) -> st.SearchStrategy:
    """Shapes of ``min_rank``..``max_rank`` dimensions with sides from ``SIDES``."""
    return hnp.array_shapes(min_dims=min_rank, max_dims=max_rank, min_side=1,
                            max_side=len(SIDES)).map(lambda s: tuple(SIDES[i - 1] for i in s))


def values(dtype: str, shape, kind: str = "any") -> st.SearchStrategy:
    """Arrays of ``dtype`` and ``shape``. ``kind``: "any" (every integer; finite floats of
    magnitude <= 10 without subnormals), "small" (integers, or integer-valued floats, in -8..8:
    exact in every summation order), "tiny" (integer-valued -2..2, for products)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return hnp.arrays(dtype, shape)
    bound = {"small": 8, "tiny": 2}.get(kind)
    if bound is not None:
        return hnp.arrays(dtype, shape, elements=st.integers(-bound, bound).map(dtype.type))
    if dtype.kind == "f":
        return hnp.arrays(dtype, shape, elements=st.floats(-10, 10, width=dtype.itemsize * 8,
                                                            allow_subnormal=False))
    return hnp.arrays(dtype, shape)


def axes_of(rank: int) -> st.SearchStrategy:
    """One axis (negative ones included), None, or a tuple of distinct axes, for a reduction."""
    if rank == 0:
        return st.none()
    return st.one_of(st.integers(-rank, rank - 1), st.none(),
                     st.lists(st.integers(0, rank - 1), unique=True).map(tuple))


def one_axis(rank: int) -> st.SearchStrategy:
    return st.integers(-rank, rank - 1)


def inputs(build: Callable) -> st.SearchStrategy:
    """A strategy from ``build(draw) -> (operands, static)``."""
    return st.composite(build)()


def unary(dtype: str, kind: str = "any", *, min_rank: int = 0, max_rank: int = 3):
    """One operand of ``dtype``, no static arguments."""
    return inputs(lambda draw: ((draw(values(dtype, draw(shapes(min_rank, max_rank)), kind)),), {}))


@st.composite
def broadcasting_to(draw, shape):
    """A shape that broadcasts to ``shape``: its trailing dimensions, each the same side or 1.
    (``hnp.broadcastable_shapes`` would also give a size-1 side of ``shape`` any other size.)"""
    kept = shape[draw(st.integers(0, len(shape))):]
    return tuple(1 if draw(st.booleans()) else n for n in kept)


def broadcasting(dtypes: Tuple[str, ...], kind: str = "any"):
    """Operands whose shapes broadcast together (trailing-aligned, sides equal or 1)."""
    def build(draw):
        result = draw(shapes(0, 3))
        return tuple(draw(values(dtype, draw(broadcasting_to(result)), kind)) for dtype in dtypes), {}
    return inputs(build)


def with_static(dtype: str, kind: str, statics: Callable, *, min_rank: int = 0, max_rank: int = 3):
    """One operand and static arguments drawn by ``statics(shape) -> strategy of dict``."""
    def build(draw):
        shape = draw(shapes(min_rank, max_rank))
        return (draw(values(dtype, shape, kind)),), draw(statics(shape))
    return inputs(build)


def reduction(dtype: str, kind: str = "any", *, keepdims: bool = True, single_axis: bool = False):
    def statics(shape):
        axis = st.one_of(st.none(), one_axis(len(shape))) if single_axis and shape else axes_of(len(shape))
        return st.fixed_dictionaries({"axis": axis, **({"keepdims": st.booleans()} if keepdims else {})})
    return with_static(dtype, kind, statics)


def scan(dtype: str, kind: str = "any", *, negative_axis: bool = True):
    def statics(shape):
        low = -len(shape) if negative_axis else 0
        return st.fixed_dictionaries({"axis": st.integers(low, len(shape) - 1)})
    return with_static(dtype, kind, statics, min_rank=1)


# --- Slices -----------------------------------------------------------------------------------
def slice_length(s: slice, n: int) -> int:
    return len(range(*s.indices(n)))


def slices(n: int, *, steps=(1,), reach: int = 0) -> st.SearchStrategy:
    """``slice(start, stop, step)`` over a side ``n``: bounds in ``-n - reach .. n + reach`` or
    None, a step from ``steps``."""
    bound = st.one_of(st.none(), st.integers(-n - reach, n + reach))
    return st.builds(slice, bound, bound, st.sampled_from(steps))


def out_of_range(s: slice, n: int) -> bool:
    return any(b is not None and not -n <= b <= n for b in (s.start, s.stop))


def static_index(kind: str):
    """A tuple of slices, one per leading dimension: "in-range" non-empty unit-step ones,
    "strided" non-empty ones of step -3..3, "out-of-range" non-empty ones with a bound past the
    ends, "empty" ones where some slice selects nothing."""
    def statics(shape):
        @st.composite
        def index(draw):
            picked = []
            for n in shape[:draw(st.integers(1, len(shape)))]:
                if kind == "in-range":
                    s = draw(slices(n).filter(lambda s: slice_length(s, n) > 0))
                elif kind == "strided":
                    s = draw(slices(n, steps=(2, 3, -1, -2, -3, 1)).filter(lambda s: slice_length(s, n) > 0))
                elif kind == "out-of-range":
                    s = draw(slices(n, steps=(1, 2, -1), reach=n + 3).filter(lambda s: slice_length(s, n) > 0))
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
        return index()
    return statics


# --- References written here, where numpy has no such function ---------------------------------
def clamped_starts(shape, starts, sizes):
    """Where lax.dynamic_slice begins: a negative start counts from the end (start + side), then
    each start is clamped into 0..side - size (same in 0.4.30 and 0.10.2)."""
    return tuple(min(max(int(s) + (n if s < 0 else 0), 0), n - k) for s, n, k in zip(starts, shape, sizes))


def dynamic_slice_reference(x, *starts, sizes):
    begin = clamped_starts(x.shape, starts, sizes)
    return x[tuple(slice(b, b + k) for b, k in zip(begin, sizes))]


def dynamic_update_slice_reference(x, update, *starts):
    begin = clamped_starts(x.shape, starts, update.shape)
    y = x.copy()
    y[tuple(slice(b, b + k) for b, k in zip(begin, update.shape))] = update
    return y


def lax_pad_reference(x, value, *, config):
    """lax.pad: ``interior`` copies of ``value`` between elements, then ``low``/``high`` at the
    ends; a negative ``low``/``high`` removes that many elements instead."""
    for axis, (low, high, interior) in enumerate(config):
        n = x.shape[axis]
        size = n + max(n - 1, 0) * interior
        shape = list(x.shape)
        shape[axis] = size
        dilated = np.full(shape, value, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(0, size, interior + 1)
        dilated[tuple(index)] = x
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(low, 0), max(high, 0))
        x = np.pad(dilated, widths, constant_values=value)
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(-low, 0), x.shape[axis] - max(-high, 0))
        x = x[tuple(index)]
    return x


def shifted_ranges(shape, axis, shift):
    """``(dst, src)`` index tuples along ``axis`` with ``x[dst]`` and ``x[src]`` the same size and
    ``shift`` apart: ``x.at[:-1].set(x[1:])`` is ``shift=1`` on axis 0."""
    n = shape[axis]
    lead = (slice(None),) * axis
    if shift >= 0:
        return lead + (slice(0, n - shift),), lead + (slice(shift, n),)
    return lead + (slice(-shift, n),), lead + (slice(0, n + shift),)


def at_shifted_reference(method):
    def reference(x, *, axis, shift):
        dst, src = shifted_ranges(x.shape, axis, shift)
        y = x.copy()
        if method == "set":
            y[dst] = x[src]
        else:
            y[dst] = y[dst] + x[src]
        return y
    return reference


def at_shifted(method: str, dtype: str, kind: str = "any"):
    """``x.at[dst].<method>(x[src])`` with ranges ``shift`` apart along an axis (they overlap when
    ``|shift|`` is less than half the side)."""
    def statics(shape):
        @st.composite
        def build(draw):
            axis = draw(st.integers(0, len(shape) - 1))
            n = shape[axis]
            return {"axis": axis, "shift": draw(st.integers(-(n - 1), n - 1))}
        return build()
    source = ("lambda x, *, axis, shift: x.at[(slice(None),) * axis + (slice(max(-shift, 0), "
              f"x.shape[axis] - max(shift, 0)),)].{method}(x[(slice(None),) * axis + "
              "(slice(max(shift, 0), x.shape[axis] - max(-shift, 0)),)])")
    return source, at_shifted_reference(method), with_static(dtype, kind, statics, min_rank=1)


def at_range(method: str, dtype: str):
    """``x.at[index].<method>(u)``: a static range of ``x`` combined with an operand ``u``."""
    def build(draw):
        shape = draw(shapes(1, 3))
        index = draw(static_index("strided")(shape))["index"]
        x = draw(values(dtype, shape))
        u = draw(values(dtype, x[index].shape))
        return (x, u), {"index": index}

    def reference(x, u, *, index):
        y = x.copy()
        y[index] = getattr(np, {"min": "minimum", "max": "maximum"}[method])(y[index], u)
        return y
    return f"lambda x, u, *, index: x.at[index].{method}(u)", reference, inputs(build)


def scatter_add_reference(x, idx, u):
    y = x.copy()
    np.add.at(y, idx, u)
    return y


def index_arrays(shape_side: int, *, low: int = 0, high=None):
    """Strategy for int32 index arrays of rank 0..2 with values in ``low..high`` (default: the
    valid non-negative indices into a side ``shape_side``)."""
    high = shape_side - 1 if high is None else high
    return shapes(0, 2).flatmap(lambda s: hnp.arrays(np.int32, s, elements=st.integers(low, high)))


def take(mode: str):
    def build(draw):
        shape = draw(shapes(1, 3))
        axis = draw(st.integers(0, len(shape) - 1))
        n = shape[axis]
        low, high = (-n - 3, 2 * n + 2) if mode == "clip" else (0, n - 1)
        idx = draw(index_arrays(n, low=low, high=high))
        return (draw(values("int32", shape)), idx), {"axis": axis}
    return inputs(build)


def fancy_index(draw):
    shape = draw(shapes(1, 3))
    idx = draw(index_arrays(shape[0], low=-shape[0], high=shape[0] - 1))
    return (draw(values("float32", shape)), idx), {}


def take_along_axis(draw):
    shape = draw(shapes(1, 3))
    axis = draw(st.integers(0, len(shape) - 1))
    idx_shape = list(shape)
    idx_shape[axis] = draw(st.sampled_from(SIDES))
    idx = draw(hnp.arrays(np.int32, tuple(idx_shape), elements=st.integers(0, shape[axis] - 1)))
    return (draw(values("int32", shape)), idx), {"axis": axis}


def scatter_add(draw):
    shape = draw(shapes(1, 3))
    idx = draw(hnp.arrays(np.int32, (draw(st.sampled_from(SIDES)),),
                          elements=st.integers(0, shape[0] - 1)))  # repeated indices add up
    u = draw(values("int32", idx.shape + shape[1:]))
    return (draw(values("int32", shape)), idx, u), {}


def concatenation(draw):
    shape = draw(shapes(1, 3))
    axis = draw(st.integers(0, len(shape) - 1))
    operands = []
    for _ in range(draw(st.integers(2, 3))):
        piece = list(shape)
        piece[axis] = draw(st.sampled_from(SIDES))
        operands.append(draw(values("int32", tuple(piece))))
    return tuple(operands), {"axis": axis}


def stacking(draw):
    shape = draw(shapes(0, 2))
    count = draw(st.integers(2, 3))
    return (tuple(draw(values("float32", shape)) for _ in range(count)),
            {"axis": draw(st.integers(0, len(shape)))})


def prime_factors(n: int) -> list:
    factors, p = [], 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors


def reshape_targets(shape):
    """Shapes with as many elements as ``shape``: its prime factors shuffled and regrouped into
    1..4 dimensions (size-1 dimensions included)."""
    @st.composite
    def build(draw):
        factors = draw(st.permutations(prime_factors(math.prod(shape))))
        rank = draw(st.integers(1, 4))
        cuts = sorted(draw(st.lists(st.integers(0, len(factors)), min_size=rank - 1, max_size=rank - 1)))
        bounds = [0, *cuts, len(factors)]
        return {"shape": tuple(math.prod(factors[a:b]) for a, b in zip(bounds, bounds[1:]))}
    return build()


def squeezable(draw):
    shape = list(draw(shapes(0, 3)))
    for _ in range(draw(st.integers(1, 2))):
        shape.insert(draw(st.integers(0, len(shape))), 1)
    ones = [i for i, n in enumerate(shape) if n == 1]
    axis = tuple(draw(st.lists(st.sampled_from(ones), min_size=1, unique=True)))
    return (draw(values("int32", tuple(shape))),), {"axis": axis}


def lax_pad_config(shape):
    """``(low, high, interior)`` per dimension, low and high -3..3, interior 0..2, leaving at least
    one element. A negative ``low`` that would start the result on an interior padding element
    is left out: with the dimension sharded, XLA's SPMD partitioner aborts the process on it (a
    CHECK failure, every version; see test_lax_pad_starting_inside_interior_padding), which would
    end the whole run."""
    @st.composite
    def build(draw):
        config = []
        for n in shape:
            interior = draw(st.integers(0, 2))
            dilated = n + (n - 1) * interior
            low = draw(st.integers(-min(dilated - 1, 3), 3).filter(lambda low: low >= 0 or low % (interior + 1) == 0))
            high = draw(st.integers(-min(dilated - 1 + min(low, 0), 3), 3))
            config.append((low, high, interior))
        return {"config": tuple(config)}
    return build()


def lax_pad(draw):
    shape = draw(shapes(1, 3))
    x, static = draw(values("float32", shape)), draw(lax_pad_config(shape))
    return (x, np.float32(draw(st.integers(-5, 5)))), static


def dynamic_slice(draw):
    shape = draw(shapes(1, 3))
    starts = tuple(np.int32(draw(st.integers(-n - 3, n + 3))) for n in shape)
    sizes = tuple(draw(st.integers(1, n)) for n in shape)
    return (draw(values("int32", shape)), *starts), {"sizes": sizes}


def dynamic_update_slice(draw):
    shape = draw(shapes(1, 3))
    update_shape = tuple(draw(st.integers(1, n)) for n in shape)
    starts = tuple(np.int32(draw(st.integers(-n - 3, n + 3))) for n in shape)
    return (draw(values("float32", shape)), draw(values("float32", update_shape)), *starts), {}


EINSUM_SUBSCRIPTS = {
    "ij,jk->ik": ("ij", "jk"), "bij,bjk->bik": ("bij", "bjk"), "ijk,jk->i": ("ijk", "jk"),
    "ij,ij->": ("ij", "ij"), "i,j->ij": ("i", "j"), "ij->ji": ("ij",), "bij,jk->bk": ("bij", "jk"),
}


def einsum_inputs(draw):
    subscripts = draw(st.sampled_from(sorted(EINSUM_SUBSCRIPTS)))
    letters = sorted(set("".join(EINSUM_SUBSCRIPTS[subscripts])))
    side = {letter: draw(st.sampled_from(SIDES)) for letter in letters}
    operands = tuple(draw(values("float32", tuple(side[c] for c in term), "small"))
                     for term in EINSUM_SUBSCRIPTS[subscripts])
    return operands, {"subscripts": subscripts}


def matmul_inputs(dtype: str, kind: str):
    """(x, y) for matmul: ``x`` of rank 1..3, ``y`` of rank 1..3, batch dimensions broadcasting."""
    def build(draw):
        m, k, n = (draw(st.sampled_from(SIDES)) for _ in range(3))
        batch = draw(shapes(0, 1))
        x_shape = draw(st.sampled_from([(k,), (m, k), batch + (m, k)]))
        y_shape = draw(st.sampled_from([(k,), (k, n), batch + (k, n)]))
        return (draw(values(dtype, x_shape, kind)), draw(values(dtype, y_shape, kind))), {}
    return inputs(build)


def selection(draw, same_shapes: bool):
    shape = draw(shapes(0, 3))
    pick = (lambda: shape) if same_shapes else (lambda: draw(broadcasting_to(shape)))
    return (draw(values("bool", pick())), draw(values("int32", pick())), draw(values("int32", pick()))), {}


def sort_axis(shape):
    return st.fixed_dictionaries({"axis": st.integers(-len(shape), len(shape) - 1)})


def roll_statics(shape):
    @st.composite
    def build(draw):
        axis = draw(st.one_of(st.none(), st.integers(0, len(shape) - 1)))
        n = math.prod(shape) if axis is None else shape[axis]
        return {"shift": draw(st.integers(-2 * n, 2 * n)), "axis": axis}
    return build()


def pad_statics(shape):
    @st.composite
    def build(draw):
        widths = tuple((draw(st.integers(0, 3)), draw(st.integers(0, 3))) for _ in shape)
        return {"widths": widths, "mode": draw(st.sampled_from(("constant", "edge", "wrap", "symmetric")))}
    return build()


def np_pad(x, *, widths, mode):
    return np.pad(x, widths, mode=mode)


# --- The catalogue ----------------------------------------------------------------------------
def _entries():
    shifted = {m: at_shifted(m, dtype, kind) for m, dtype, kind in
               (("set", "float32", "any"), ("add", "int32", "any"))}
    ranged = {m: at_range(m, "float32") for m in ("min", "max")}
    return [
        # elementwise, unary
        Op("negative", "elementwise", "lambda x: -x", np.negative, unary("int32")),
        Op("abs", "elementwise", "lambda x: jnp.abs(x)", np.abs, unary("int8")),
        Op("sin", "elementwise", "lambda x: jnp.sin(x)", np.sin, unary("float32"), rtol=2e-6, atol=2e-6),
        Op("exp", "elementwise", "lambda x: jnp.exp(x)", np.exp, unary("float32"), rtol=2e-6, atol=TINY32),
        Op("logical_not", "elementwise", "lambda x: jnp.logical_not(x)", np.logical_not, unary("bool")),
        # elementwise, binary with broadcasting
        Op("add", "broadcasting", "lambda x, y: x + y", np.add, broadcasting(("int32", "int32"))),
        Op("multiply", "broadcasting", "lambda x, y: x * y", np.multiply,
           broadcasting(("float32", "float32")), atol=TINY32),
        Op("maximum", "broadcasting", "lambda x, y: jnp.maximum(x, y)", np.maximum,
           broadcasting(("float32", "float32"))),
        Op("subtract_uint8", "broadcasting", "lambda x, y: x - y", np.subtract,
           broadcasting(("uint8", "uint8"))),
        Op("greater", "broadcasting", "lambda x, y: x > y", np.greater, broadcasting(("int32", "int32"), "small")),
        Op("bitwise_xor", "broadcasting", "lambda x, y: x ^ y", np.bitwise_xor,
           broadcasting(("uint16", "uint16"))),
        # reductions
        Op("sum_int", "reduction", "lambda x, *, axis, keepdims: jnp.sum(x, axis=axis, keepdims=keepdims)",
           lambda x, axis, keepdims: np.sum(x, axis=axis, keepdims=keepdims), reduction("int32")),
        Op("sum_float", "reduction", "lambda x, *, axis, keepdims: jnp.sum(x, axis=axis, keepdims=keepdims)",
           lambda x, axis, keepdims: np.sum(x, axis=axis, keepdims=keepdims), reduction("float32", "small")),
        Op("max", "reduction", "lambda x, *, axis, keepdims: jnp.max(x, axis=axis, keepdims=keepdims)",
           lambda x, axis, keepdims: np.max(x, axis=axis, keepdims=keepdims), reduction("float32")),
        Op("min_int", "reduction", "lambda x, *, axis, keepdims: jnp.min(x, axis=axis, keepdims=keepdims)",
           lambda x, axis, keepdims: np.min(x, axis=axis, keepdims=keepdims), reduction("int16")),
        Op("mean", "reduction", "lambda x, *, axis, keepdims: jnp.mean(x, axis=axis, keepdims=keepdims)",
           lambda x, axis, keepdims: np.mean(x, axis=axis, keepdims=keepdims),
           reduction("float32", "small"), rtol=1e-6),
        Op("argmax", "reduction", "lambda x, *, axis: jnp.argmax(x, axis=axis)",
           lambda x, axis: np.argmax(x, axis=axis), reduction("int32", "small", keepdims=False, single_axis=True)),
        Op("argmin", "reduction", "lambda x, *, axis: jnp.argmin(x, axis=axis)",
           lambda x, axis: np.argmin(x, axis=axis), reduction("float32", "small", keepdims=False, single_axis=True)),
        Op("any", "reduction", "lambda x, *, axis, keepdims: jnp.any(x, axis=axis, keepdims=keepdims)",
           lambda x, axis, keepdims: np.any(x, axis=axis, keepdims=keepdims), reduction("bool")),
        # scans
        Op("cumsum", "scan", "lambda x, *, axis: jnp.cumsum(x, axis=axis)",
           lambda x, axis: np.cumsum(x, axis=axis), scan("int32")),
        Op("cumprod", "scan", "lambda x, *, axis: jnp.cumprod(x, axis=axis)",
           lambda x, axis: np.cumprod(x, axis=axis), scan("float32", "tiny")),
        Op("cummax", "scan", "lambda x, *, axis: lax.cummax(x, axis=axis)",
           lambda x, axis: np.maximum.accumulate(x, axis=axis), scan("int32", negative_axis=False)),
        Op("cumsum_reverse", "scan", "lambda x, *, axis: lax.cumsum(x, axis=axis, reverse=True)",
           lambda x, axis: np.flip(np.cumsum(np.flip(x, axis), axis), axis),
           scan("float32", "small", negative_axis=False)),
        # joining
        Op("concatenate", "joining", "lambda *xs, axis: jnp.concatenate(xs, axis=axis)",
           lambda *xs, axis: np.concatenate(xs, axis=axis), inputs(concatenation)),
        Op("stack", "joining", "lambda *xs, axis: jnp.stack(xs, axis=axis)",
           lambda *xs, axis: np.stack(xs, axis=axis), inputs(stacking)),
        # shape manipulation
        Op("reshape", "shape", "lambda x, *, shape: jnp.reshape(x, shape)",
           lambda x, shape: np.reshape(x, shape), with_static("int32", "any", reshape_targets)),
        Op("transpose", "shape", "lambda x, *, axes: jnp.transpose(x, axes)",
           lambda x, axes: np.transpose(x, axes),
           with_static("float32", "any", lambda s: st.fixed_dictionaries({"axes": st.permutations(range(len(s))).map(tuple)}))),
        Op("swapaxes", "shape", "lambda x, *, a, b: jnp.swapaxes(x, a, b)",
           lambda x, a, b: np.swapaxes(x, a, b),
           with_static("int32", "any", lambda s: st.fixed_dictionaries({"a": one_axis(len(s)), "b": one_axis(len(s))}),
                       min_rank=1)),
        Op("squeeze", "shape", "lambda x, *, axis: jnp.squeeze(x, axis)",
           lambda x, axis: np.squeeze(x, axis), inputs(squeezable)),
        Op("expand_dims", "shape", "lambda x, *, axis: jnp.expand_dims(x, axis)",
           lambda x, axis: np.expand_dims(x, axis),
           with_static("int32", "any", lambda s: st.fixed_dictionaries({"axis": st.integers(-len(s) - 1, len(s))}))),
        Op("broadcast_to", "shape", "lambda x, *, shape: jnp.broadcast_to(x, shape)",
           lambda x, shape: np.broadcast_to(x, shape),
           with_static("float32", "any", lambda s: shapes(0, 1).map(lambda lead: {"shape": lead + s}), max_rank=2)),
        # padding
        Op("pad", "padding", "lambda x, *, widths, mode: jnp.pad(x, widths, mode=mode)", np_pad,
           with_static("int32", "any", pad_statics, min_rank=1)),
        Op("lax_pad_negative", "padding", "lambda x, value, *, config: lax.pad(x, value, config)",
           lax_pad_reference, inputs(lax_pad)),
        # static slicing
        Op("slice", "slicing", "lambda x, *, index: x[index]", lambda x, index: x[index],
           with_static("int32", "any", static_index("in-range"), min_rank=1)),
        Op("strided_slice", "slicing", "lambda x, *, index: x[index]", lambda x, index: x[index],
           with_static("float32", "any", static_index("strided"), min_rank=1)),
        Op("slice_out_of_range", "slicing", "lambda x, *, index: x[index]", lambda x, index: x[index],
           with_static("int32", "any", static_index("out-of-range"), min_rank=1)),
        Op("slice_empty", "slicing", "lambda x, *, index: x[index]", lambda x, index: x[index],
           with_static("int32", "any", static_index("empty"), min_rank=1)),
        # dynamic slicing, starts clamped into range
        Op("dynamic_slice", "dynamic", "lambda x, *starts, sizes: lax.dynamic_slice(x, starts, sizes)",
           dynamic_slice_reference, inputs(dynamic_slice)),
        Op("dynamic_update_slice", "dynamic",
           "lambda x, update, *starts: lax.dynamic_update_slice(x, update, starts)",
           dynamic_update_slice_reference, inputs(dynamic_update_slice)),
        # .at[] updates
        Op("at_set_shifted", "at", shifted["set"][0], shifted["set"][1], shifted["set"][2]),
        Op("at_add_shifted", "at", shifted["add"][0], shifted["add"][1], shifted["add"][2]),
        Op("at_min", "at", ranged["min"][0], ranged["min"][1], ranged["min"][2]),
        Op("at_max", "at", ranged["max"][0], ranged["max"][1], ranged["max"][2]),
        Op("at_add_indices", "at", "lambda x, idx, u: x.at[idx].add(u)", scatter_add_reference,
           inputs(scatter_add)),
        # gathers
        Op("take", "gather", "lambda x, idx, *, axis: jnp.take(x, idx, axis=axis)",
           lambda x, idx, axis: np.take(x, idx, axis=axis), take("in-range")),
        Op("take_clip", "gather", "lambda x, idx, *, axis: jnp.take(x, idx, axis=axis, mode='clip')",
           lambda x, idx, axis: np.take(x, idx, axis=axis, mode="clip"), take("clip")),
        Op("index_array", "gather", "lambda x, idx: x[idx]", lambda x, idx: x[idx], inputs(fancy_index)),
        Op("take_along_axis", "gather", "lambda x, idx, *, axis: jnp.take_along_axis(x, idx, axis=axis)",
           lambda x, idx, axis: np.take_along_axis(x, idx, axis=axis), inputs(take_along_axis)),
        # roll and flip
        Op("roll", "permuting", "lambda x, *, shift, axis: jnp.roll(x, shift, axis=axis)",
           lambda x, shift, axis: np.roll(x, shift, axis=axis), with_static("int32", "any", roll_statics, min_rank=1)),
        Op("flip", "permuting", "lambda x, *, axis: jnp.flip(x, axis=axis)",
           lambda x, axis: np.flip(x, axis=axis), with_static("float32", "any", lambda s: st.fixed_dictionaries({"axis": axes_of(len(s))}))),
        # sorting
        Op("sort", "sorting", "lambda x, *, axis: jnp.sort(x, axis=axis)",
           lambda x, axis: np.sort(x, axis=axis), with_static("float32", "any", sort_axis, min_rank=1)),
        Op("argsort", "sorting", "lambda x, *, axis: jnp.argsort(x, axis=axis, stable=True)",
           lambda x, axis: np.argsort(x, axis=axis, kind="stable"),
           with_static("int32", "small", sort_axis, min_rank=1)),
        # contractions
        Op("matmul", "contraction", "lambda x, y: x @ y", np.matmul, matmul_inputs("float32", "small")),
        Op("dot_int", "contraction", "lambda x, y: jnp.dot(x, y)", np.dot, matmul_inputs("int32", "any")),
        Op("einsum", "contraction", "lambda *xs, subscripts: jnp.einsum(subscripts, *xs)",
           lambda *xs, subscripts: np.einsum(subscripts, *xs), inputs(einsum_inputs)),
        # selection
        Op("where", "selection", "lambda c, x, y: jnp.where(c, x, y)", np.where,
           inputs(lambda draw: selection(draw, same_shapes=False))),
        Op("select", "selection", "lambda c, x, y: lax.select(c, x, y)", np.where,
           inputs(lambda draw: selection(draw, same_shapes=True))),
        # iota-based
        Op("add_iota", "iota", "lambda x, *, dim: x + lax.broadcasted_iota(x.dtype, x.shape, dim)",
           lambda x, dim: x + np.indices(x.shape, dtype=x.dtype)[dim],
           with_static("int32", "any", lambda s: st.fixed_dictionaries({"dim": st.integers(0, len(s) - 1)}), min_rank=1)),
        Op("arange_times", "iota", "lambda x: x * jnp.arange(x.shape[-1], dtype=x.dtype)",
           lambda x: x * np.arange(x.shape[-1], dtype=x.dtype), unary("int32", min_rank=1)),
        Op("tril", "iota", "lambda x, *, k: jnp.tril(x, k)", lambda x, k: np.tril(x, k),
           with_static("int32", "any", lambda s: st.fixed_dictionaries({"k": st.integers(-3, 3)}), min_rank=2)),
    ]


CATALOGUE: Tuple[Op, ...] = tuple(_entries())
BY_NAME: Dict[str, Op] = {op.name: op for op in CATALOGUE}
assert len(BY_NAME) == len(CATALOGUE), "catalogue names must be unique"
