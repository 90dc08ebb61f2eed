"""Unit roundoffs, and how a float comparison's error measures against its bound.

Pure Python and numpy (no JAX). The bounds themselves come from ``running_error`` (per element,
beside a numpy reference). ``error_ratio`` measures ``max |got - expected| / bound`` (below 1
passes; the nightly profile's largest is reported, and should stay well below it); ``record_error``
appends it as one JSON line to ``$CONFORMANCE_ERROR_LOG`` when set; ``summarize_errors`` reads such
a log back per program. ``COMPILATION_TOLERANCE`` is the tolerance JAX's own test harness allows
between two compilations of one function, and ``compare_compilations`` compares two such results
by it (the random suites' sharded and one-device draws).
"""

from __future__ import annotations

import json
import os
import numpy as np

UNIT_ROUNDOFF = {
    "float64": 2.0 ** -53,
    "float32": 2.0 ** -24,
    "float16": 2.0 ** -11,
    "bfloat16": 2.0 ** -8,
    "tfloat32": 2.0 ** -11,  # NVIDIA's TensorFloat-32: float32's range, 10 explicit mantissa bits
}


SMALLEST_NORMAL = {
    "float64": 2.0 ** -1022,
    "float32": 2.0 ** -126,
    "float16": 2.0 ** -14,
    "bfloat16": 2.0 ** -126,
    "tfloat32": 2.0 ** -126,
}


# The tolerance (atol and rtol alike) JAX's own test harness allows between two compilations of one
# function (JaxTestCase._CompileAndCheck: jax.jit of it against its op-by-op run, assertAllClose with
# jax/_src/public_test_util.py's default tolerance, the same on every supported release): by the
# result's dtype; integer, unsigned and boolean results (tolerance 0 there) are compared bit for bit.
COMPILATION_TOLERANCE = {"bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-6, "complex64": 1e-6,
                         "float64": 1e-15, "complex128": 1e-15}


def smallest_normal(dtype: str) -> float:
    """The smallest positive normal number of a float dtype name (below it a backend that flushes
    subnormals, as XLA's CPU does, stores zero)."""
    name = str(dtype)
    if name not in SMALLEST_NORMAL:
        raise ValueError(f"no smallest normal for dtype {name!r}; known: {sorted(SMALLEST_NORMAL)}")
    return SMALLEST_NORMAL[name]


def unit_roundoff(dtype: str) -> float:
    """``u`` for a float dtype name (half the distance from 1 to the next float)."""
    name = str(dtype)
    if name not in UNIT_ROUNDOFF:
        raise ValueError(f"no unit roundoff for dtype {name!r}; known: {sorted(UNIT_ROUNDOFF)}")
    return UNIT_ROUNDOFF[name]


def summation_order_atol(terms, dtype: str = "float32") -> float:
    """How far apart two sums of ``terms`` held in ``dtype`` may be when they add them in different
    orders: each is within ``gamma(n - 1) * sum(|t|)`` of the exact sum of the terms (Higham,
    Accuracy and Stability of Numerical Algorithms, 2nd ed., (4.4), any order), with ``gamma(k) =
    k u / (1 - k u)``; so twice that. 0 for fewer than two terms."""
    t = np.abs(np.asarray(terms, dtype=np.float64))
    if t.size < 2:
        return 0.0
    k = (t.size - 1) * unit_roundoff(dtype)
    return float(2 * k / (1 - k) * t.sum())


def error_ratio(got, expected, tolerance: dict) -> float:
    """``max |got - expected| / (atol + rtol |expected|)`` over the elements (0 for none; inf where
    they differ and the bound is 0; NaN against NaN counts as equal, NaN against a number as inf)."""
    g = np.asarray(got, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if g.size == 0:
        return 0.0
    bound = tolerance["atol"] + tolerance["rtol"] * np.abs(e)
    both_nan = np.isnan(g) & np.isnan(e)
    diff = np.where(both_nan, 0.0, np.abs(g - e))
    diff = np.where(np.isnan(diff), np.inf, diff)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(diff == 0, 0.0, diff / bound)
    return float(np.max(ratio))


def record_error(program: str, got, expected, tolerance: dict, **details) -> float:
    """The ``error_ratio``; when ``$CONFORMANCE_ERROR_LOG`` names a file, also append one JSON line
    ``{"program", "ratio", "atol", "rtol", ...details}`` to it."""
    ratio = error_ratio(got, expected, tolerance)
    path = os.environ.get("CONFORMANCE_ERROR_LOG")
    if path:
        atol = tolerance["atol"]
        line = {"program": program, "ratio": ratio,
                "atol": float(np.max(atol)), "per_element": bool(np.ndim(atol)),
                "rtol": tolerance["rtol"], **{k: (v if isinstance(v, (int, float, str, bool)) or v is None
                                                   else str(v)) for k, v in details.items()}}
        with open(path, "a") as f:
            f.write(json.dumps(line) + "\n")
    return ratio


def summarize_errors(path: str) -> dict:
    """``{program: {"examples": k, "max_ratio": r}}`` from an error log ``record_error`` wrote."""
    out: dict = {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            entry = out.setdefault(row["program"], {"examples": 0, "max_ratio": 0.0})
            entry["examples"] += 1
            entry["max_ratio"] = max(entry["max_ratio"], row["ratio"])
    return out


def compare_compilations(case, what: str, got, expected) -> None:
    """``got`` against ``expected``, two compilations of one program (a draw sharded and on one
    device), as JAX promises them: the same bits where the result is of an integer, unsigned or
    boolean dtype (``case.same_bits``), within ``COMPILATION_TOLERANCE`` of its dtype where it is
    floating-point (``case.close``; XLA may round the two programs differently). ``case``: the
    ``conformance.checking.case.Case`` the check belongs to."""
    __tracebackhide__ = True  # pytest leaves our frames out of the traceback
    tolerance = COMPILATION_TOLERANCE.get(np.dtype(np.asarray(expected).dtype).name)
    if tolerance is None:
        case.same_bits(what, got, expected)
    else:
        case.close(what, got, expected, rtol=tolerance, atol=tolerance)


__all__ = ["COMPILATION_TOLERANCE", "UNIT_ROUNDOFF", "compare_compilations", "error_ratio", "record_error",
           "summarize_errors", "unit_roundoff"]
