"""Float tolerances for programs whose sharded run sums in another order than the one-device run.

Pure Python and numpy (no JAX). A bound for a whole program from the sizes of its reductions and a
stated magnitude (the training suite's); ``running_error`` computes a tighter one per element
beside a numpy reference (the model programs'). The bound here, and where it comes from:

* A floating-point sum of ``n`` terms, in any order, differs from the exact sum by at most
  ``gamma_n * S`` with ``gamma_n = n u / (1 - n u) ~ n u`` and ``S = sum |terms|`` (Higham,
  *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section 4.2), ``u`` the unit roundoff:
  ``2**-24`` for float32, ``2**-11`` for float16, ``2**-8`` for bfloat16, ``2**-53`` for float64.
  A dot of contracted size ``n`` is such a sum (each product adds one more rounding, ``u S``).
* Two runs that sum in different orders (sharded against one device) are each within ``n u S`` of
  the exact value, so they differ by at most ``2 n u S``.
* A program chains reductions: an error ``e`` in a value that a later reduction sums reaches its
  result scaled by the weights, i.e. at most ``e`` times the later reduction's sum of |weights|.
  With values kept O(1) by the inputs' scale (the caller states ``magnitude``, the largest sum of
  |terms| of any reduction on the path, and keeps the weights' absolute row sums <= 1), the errors
  add: the bound uses ``sum(reductions)``, the ``n`` of every reduction along the longest path
  (dots' contracted sizes, softmax and layer-norm sums, the loss's mean), plus ``ops``, one
  rounding per elementwise operation on the path.
* Nonlinearities between the reductions scale the errors by their slope: gelu/relu/tanh by <= 1.13,
  exp inside a softmax by the probability (<= 1 after normalising), log in the cross entropy by
  ``1/p``, layer norm by ``1/std``: ``safety`` (default 4) covers them for O(1) values whose
  standard deviation is not tiny and whose probabilities are not tiny (the programs keep logits
  O(1), so ``p >= exp(-2)/vocab``; say so with a larger ``safety`` where not).
* Against a float64 reference (numpy) only the float run errs: ``n u S`` (one run, not two).
* A low-precision run (bfloat16, float16) against the float32 run: the low run's ``n u_low S``,
  plus the rounding of its inputs (each product of two rounded factors is off by ``2 u_low``
  relatively: ``2 u_low S`` per reduction that reads rounded inputs, ``inputs``, by default every
  reduction), plus the float32 run's own ``n u_32 S``. A mixed-precision program that sums in
  float32 (``accumulation="float32"``) and rounds to the low precision only where it stores a value
  pays ``u_low`` once per such rounding (``ops``) instead of ``n u_low`` per reduction.

``float_tolerance`` returns ``{"rtol": 0.0, "atol": bound}`` for ``Case.close``: the bound is
absolute, in the stated magnitude. ``error_ratio`` measures ``max |got - expected| / bound``
(below 1 passes; the nightly profile's largest is reported by the suites, and should stay well
below it); ``record_error`` appends it as one JSON line to ``$CONFORMANCE_ERROR_LOG`` when set.
"""

from __future__ import annotations

import json
import os
from typing import Optional, Sequence

import numpy as np

UNIT_ROUNDOFF = {
    "float64": 2.0 ** -53,
    "float32": 2.0 ** -24,
    "float16": 2.0 ** -11,
    "bfloat16": 2.0 ** -8,
}

DEFAULT_SAFETY = 4.0


def unit_roundoff(dtype: str) -> float:
    """``u`` for a float dtype name (half the distance from 1 to the next float)."""
    name = str(dtype)
    if name not in UNIT_ROUNDOFF:
        raise ValueError(f"no unit roundoff for dtype {name!r}; known: {sorted(UNIT_ROUNDOFF)}")
    return UNIT_ROUNDOFF[name]


def float_tolerance(*, reductions: Sequence[int], magnitude: float, dtype: str = "float32",
                    reference: str = "same", ops: int = 0, safety: float = DEFAULT_SAFETY,
                    inputs: Optional[int] = None, accumulation: Optional[str] = None) -> dict:
    """rtol/atol for ``Case.close`` comparing a ``dtype`` program's result with a ``reference``:

    * ``"same"``: the same program in the same dtype, summed in another order (sharded against
      one device): ``safety * 2 u N S``;
    * ``"float64"``: an exact-enough float64 reference (numpy): ``safety * u N S``;
    * ``"float32"``: the float32 run of the program, ``dtype`` a lower precision:
      ``safety * (u_acc R + u (ops + 2 inputs) + u_32 N) S``, where ``R = sum(reductions)`` and
      ``u_acc`` is the unit roundoff of ``accumulation``, the dtype the reductions sum in (the
      program's ``dtype`` by default; "float32" for a mixed-precision program that accumulates its
      dots, norms and softmaxes in float32 and rounds to ``dtype`` after each of the ``ops``);

    with ``N = sum(reductions) + ops`` (the sizes of the reductions along the longest path and
    the elementwise roundings on it), ``S = magnitude`` (the largest sum of |terms| of any of those
    reductions), ``inputs`` the reductions that read rounded inputs (default: all of them). See the
    module docstring for the derivation.
    """
    ns = [int(n) for n in reductions]
    if any(n < 0 for n in ns) or ops < 0:
        raise ValueError(f"reduction sizes and ops must be >= 0, got {ns}, ops={ops}")
    if not magnitude > 0 or not safety > 0:
        raise ValueError(f"magnitude and safety must be > 0, got {magnitude}, {safety}")
    u = unit_roundoff(dtype)
    total = sum(ns) + int(ops)
    if reference == "same":
        bound = 2 * u * total
    elif reference == "float64":
        bound = u * total + unit_roundoff("float64") * total
    elif reference == "float32":
        if u <= unit_roundoff("float32"):
            raise ValueError(f"reference='float32' is for a lower precision than float32, not {dtype}")
        rounded = len(ns) if inputs is None else int(inputs)
        u_acc = unit_roundoff(accumulation or dtype)
        bound = u_acc * sum(ns) + u * (int(ops) + 2 * rounded) + unit_roundoff("float32") * total
    else:
        raise ValueError(f"reference must be 'same', 'float64' or 'float32', not {reference!r}")
    return {"rtol": 0.0, "atol": float(safety * bound * magnitude)}


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


__all__ = ["DEFAULT_SAFETY", "UNIT_ROUNDOFF", "error_ratio", "float_tolerance", "record_error",
           "summarize_errors", "unit_roundoff"]
