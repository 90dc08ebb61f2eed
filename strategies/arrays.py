"""Strategies for dtypes JAX supports on the backend and for arrays of them, built on
``hypothesis.extra.numpy``.

Most drawn arrays vary from element to element (``varied``: a wrapped arithmetic ramp, in order or
shuffled, with a few drawn elements put in): a layout bug that moves or repeats a block is
invisible on an array that holds one value everywhere, and ``hnp.arrays`` draws one (its fill
value, or all zeros, the minimal example) for about half the arrays of a few elements or more
(and takes 10 times as long to draw).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import ml_dtypes
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .odds import mostly
from .reuse import reused

BASE_DTYPES = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32",
               "float16", "bfloat16", "float32", "complex64")
X64_DTYPES = ("int64", "uint64", "float64", "complex128")
# A few dtypes for properties where the dtype is not the point: fewer distinct compiled programs.
SMALL_DTYPES = ("int32", "float32", "bool")


def dtype_of(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def supported_dtype_names(x64: bool) -> tuple:
    """Every dtype JAX keeps as-is on device: the 64-bit ones only when x64 is enabled."""
    return BASE_DTYPES + (X64_DTYPES if x64 else ())


@reused
def dtypes(names: Sequence[str]) -> st.SearchStrategy:
    """A numpy dtype from ``names`` (e.g. ``supported_dtype_names(x64)``); shrinks towards the
    first."""
    if not names:
        raise ValueError("dtypes() needs at least one dtype name")
    return st.sampled_from(tuple(dtype_of(n) for n in names))


def tiny_of(dtype: np.dtype) -> float:
    """The smallest normal magnitude of a float dtype (bfloat16 included)."""
    return float(ml_dtypes.finfo(dtype).tiny)


def without_subnormals(x: np.ndarray) -> np.ndarray:
    """``x`` (real floats) with its subnormal elements set to 0: what XLA on CPU makes of them as
    operands (it flushes them to zero, where numpy computes with them)."""
    x = np.asarray(x)
    return np.where(np.abs(x) < tiny_of(x.dtype), np.zeros((), x.dtype), x).astype(x.dtype)


def thue_morse(n: np.ndarray) -> np.ndarray:
    """The parity of the number of 1 bits of each (non-negative) ``n``: the Thue-Morse sequence,
    which has no three equal neighbours, nor any block three times in a row."""
    n = np.asarray(n, dtype=np.uint64)
    parity = np.zeros(n.shape, dtype=np.uint64)
    while n.any():
        parity ^= n & np.uint64(1)
        n = n >> np.uint64(1)
    return parity.astype(bool)


@st.composite
def ramps(draw, dtype, shape, *, bound: Optional[float] = None, integral: bool = False,
          subnormals: bool = True) -> np.ndarray:
    """Arrays whose elements, in row-major order or (half the time) a drawn shuffled one, run
    through ``start + k * step`` for k = 0, 1, 2, ..., wrapped into the range, so that neighbours
    differ:

    * integers: the dtype's range (modulo its size), or ``-bound..bound`` when ``bound`` is given
      (within the dtype's range);
    * floats: ``-bound..bound`` (default 100), in steps of up to a 5th of that range, any fraction
      or (``integral``) integer values only; subnormal results flushed to 0 unless ``subnormals``;
      complex ones get a ramp of their own for the imaginary part;
    * bools: the Thue-Morse sequence from an even ``start`` (never three equal neighbours, and the
      first two differ).

    Shrinks towards 0, 1, 2, ... in row-major order (floats: steps of an 80th of the range;
    bools: False, True, True, False, ...).
    """
    dtype = np.dtype(dtype)
    size = math.prod(shape)
    k = np.arange(size, dtype=np.int64)
    if draw(st.booleans()) and size > 1:
        k = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).permutation(size)
    if dtype == np.bool_:  # from an even start, each pair 2j, 2j + 1 differs too
        return thue_morse(2 * draw(st.integers(0, 2**15)) + k).reshape(shape)
    if dtype.kind in "iu" or integral:
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            low, high = int(info.min), int(info.max)
        else:
            low, high = -2**24, 2**24  # integers a float32 holds exactly
        if bound is not None:
            low, high = max(low, -int(bound)), min(high, int(bound))
        span = high - low + 1

        def ramp():
            start = draw(st.integers(low, high))
            step = draw(st.integers(1, max(1, min(span - 1, 2**16))))
            if span > 2**40:  # 64-bit integers: Python's, which do not overflow
                return np.array([low + (start - low + int(j) * step) % span for j in k], dtype=object)
            return low + (start - low + k * step) % span
    else:
        width = 32 if dtype.itemsize <= 4 * (2 if dtype.kind == "c" else 1) else 64
        limit = 100.0 if bound is None else float(bound)

        def ramp():
            start = draw(st.floats(-limit, limit, width=width, allow_subnormal=False))
            step = draw(st.integers(1, 16)) * limit / 80  # a 5th of the range at most: neighbours differ
            return (start + limit + k * step) % (2 * limit) - limit
    real = ramp()
    if dtype.kind == "c":
        out = (real + 1j * ramp()).astype(dtype)
    else:
        out = np.asarray(real).astype(dtype)
    if dtype.kind in "fc" and not subnormals:
        tiny = tiny_of(out.real.dtype)
        if dtype.kind == "c":
            out = (np.where(np.abs(out.real) < tiny, 0, out.real)
                   + 1j * np.where(np.abs(out.imag) < tiny, 0, out.imag))
        else:
            out = np.where(np.abs(out) < tiny, 0, out)
        out = out.astype(dtype)
    return out.reshape(shape)


@st.composite
def varied(draw, ramp: st.SearchStrategy, elements: st.SearchStrategy, dtype, shape, *,
           repeated: int = 8) -> np.ndarray:
    """Arrays that mostly vary from element to element: an array of ``ramp`` (see ``ramps``) but
    for 1 in ``repeated`` draws, one element of ``elements`` everywhere (as ``hnp.arrays`` fills
    most of an array: repeated values, and arrays of one value); either way with up to 4 of its
    elements (often none) replaced by ``elements`` (the special values those may draw: NaN, inf,
    -0.0, the ends of the range). Shrinks towards the plain ramp (drawn either way, so that the
    array of one value is no shorter a choice sequence)."""
    dtype = np.dtype(dtype)
    size = math.prod(shape)
    ramped = draw(mostly(repeated))
    x = np.array(draw(ramp), dtype=dtype)  # drawn either way, so that shrinking goes towards it
    if not ramped:
        x = np.full(shape, draw(elements), dtype=dtype)
    if size:
        flat = x.reshape(-1)
        for position, value in draw(_overlays(size, elements)):
            flat[position] = value
    return x


@reused
def _overlays(size: int, elements: st.SearchStrategy) -> st.SearchStrategy:
    """Up to 4 (position, element) pairs to put into a flat array of ``size`` elements."""
    return st.lists(st.tuples(st.integers(0, size - 1), elements), max_size=min(size, 4))


def arrays(dtype, shape, *, finite: bool = False, max_magnitude: Optional[float] = None,
           subnormals: bool = True, repeated: int = 8):
    """Arrays of ``dtype`` and ``shape`` with any values (NaN, inf, -0.0 and subnormals included)
    unless ``finite``; ``max_magnitude`` bounds floats; ``subnormals=False`` leaves out subnormal
    floats. Most vary from element to element (``varied``: a ramp over the dtype's integers, or
    floats within the magnitude, 100 by default, with some drawn elements put in); 1 in
    ``repeated`` repeats one drawn element.
    bfloat16 arrays are float32 arrays rounded to bfloat16, since numpy cannot draw bfloat16
    elements itself. One strategy object per distinct arguments (``reuse``)."""
    return _arrays(np.dtype(dtype), tuple(int(n) for n in shape), finite=bool(finite),
                   max_magnitude=None if max_magnitude is None else float(max_magnitude),
                   subnormals=bool(subnormals), repeated=int(repeated))


@reused
def _arrays(dtype: np.dtype, shape: tuple, *, finite: bool, max_magnitude: Optional[float], subnormals: bool,
            repeated: int) -> st.SearchStrategy:
    """``arrays`` of arguments already normalized (hashable, of one type each)."""
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return _arrays(np.dtype(np.float32), shape, finite=finite, max_magnitude=max_magnitude, subnormals=subnormals,
                       repeated=repeated).map(lambda a: a.astype(ml_dtypes.bfloat16))
    elements = hnp.from_dtype(dtype)
    if dtype.kind in "fc" and (finite or max_magnitude is not None or not subnormals):
        width = dtype.itemsize * 8 // (2 if dtype.kind == "c" else 1)
        bound = max_magnitude
        floats = st.floats(min_value=-bound if bound else None, max_value=bound,
                           allow_nan=not finite, allow_infinity=not finite and bound is None,
                           allow_subnormal=subnormals, width=width)
        elements = floats if dtype.kind == "f" else st.builds(complex, floats, floats)
    ramp = ramps(dtype, shape, bound=max_magnitude if dtype.kind in "fc" else None, subnormals=subnormals)
    return varied(ramp, elements, dtype, shape, repeated=repeated)
