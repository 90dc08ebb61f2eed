"""Strategies for dtypes JAX supports on the backend and for arrays of them, built on
``hypothesis.extra.numpy``."""

from __future__ import annotations

from typing import Optional, Sequence

import ml_dtypes
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

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


def dtypes(names: Sequence[str]) -> st.SearchStrategy:
    """A numpy dtype from ``names`` (e.g. ``supported_dtype_names(x64)``); shrinks towards the
    first."""
    if not names:
        raise ValueError("dtypes() needs at least one dtype name")
    return st.sampled_from([dtype_of(n) for n in names])


def arrays(dtype, shape, *, finite: bool = False, max_magnitude: Optional[float] = None,
           subnormals: bool = True):
    """Arrays of ``dtype`` and ``shape`` with any values (NaN, inf, -0.0 and subnormals included)
    unless ``finite``; ``max_magnitude`` bounds floats; ``subnormals=False`` leaves out subnormal
    floats. bfloat16 arrays are float32 arrays rounded to bfloat16, since numpy cannot draw
    bfloat16 elements itself."""
    dtype = np.dtype(dtype)
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return arrays(np.float32, shape, finite=finite, max_magnitude=max_magnitude,
                      subnormals=subnormals).map(lambda a: a.astype(ml_dtypes.bfloat16))
    elements = None
    if dtype.kind in "fc" and (finite or max_magnitude is not None or not subnormals):
        width = dtype.itemsize * 8 // (2 if dtype.kind == "c" else 1)
        bound = max_magnitude
        floats = st.floats(min_value=-bound if bound else None, max_value=bound,
                           allow_nan=not finite, allow_infinity=not finite and bound is None,
                           allow_subnormal=subnormals, width=width)
        elements = floats if dtype.kind == "f" else st.builds(complex, floats, floats)
    return hnp.arrays(dtype, shape, elements=elements)
