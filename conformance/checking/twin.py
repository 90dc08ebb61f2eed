"""A sharded run of a model-shaped program judged against its unsharded twin (the same program on
one device, in float32) and numpy's float64 reference, as ``suites/test_model_programs.py`` and
``suites/test_training.py`` judge theirs; and the dtypes the dtype model (``conformance.model.dtypes``)
says such runs return.

The tolerances are per element, from the reference itself (``running_error.Bounded`` values, which
carry the bound on a float32 run of the same arithmetic): a run is within its bound of numpy's
(``reference_atol``), two runs of the program within twice it of each other, or, for a
lower-precision run, within its own bound plus the float32 one (``same_program_atol``). Every
comparison's ``max |got - expected| / bound`` is recorded to ``$CONFORMANCE_ERROR_LOG``
(``tolerance.record_error``) before it is judged; the failures are ``Case``'s.
"""

from __future__ import annotations

from typing import Mapping, Optional, Tuple

import numpy as np

from conformance.jaxside import compat
from conformance.model import dtypes as dtype_model
from conformance.model.layout import Layout

from . import running_error as rounding
from .case import Case
from .layouts import check_layout
from .tolerance import record_error

# The comparisons of values a judgement may make (the keys of ``against_twin_and_numpy``'s records)
COMPARISONS = ("unsharded vs numpy", "sharded vs unsharded", "sharded vs numpy")


def type_of(v):
    """An array's dtype (numpy's or JAX's); anything else (a dtype, a scalar type) as it is."""
    return v.dtype if isinstance(getattr(v, "dtype", None), np.dtype) else v


def held(dtype) -> np.dtype:
    """A value cast to ``dtype`` (an array's or a dtype): that dtype, as this run's x64 setting
    holds it."""
    return dtype_model.canonical(type_of(dtype), compat.x64_enabled())


def model_dtype(rule: str, *operands) -> np.dtype:
    """The dtype model's dtype of an operation of ``rule`` on operands of these dtypes (or arrays'
    dtypes), under this run's x64 setting."""
    return dtype_model.result_dtype(rule, [type_of(v) for v in operands], x64=compat.x64_enabled())


def _within(case: Case, what: str, got, expected, atol, record: Tuple[str, dict]) -> None:
    """``case.close`` of two float64 values within ``atol`` (per element), its error recorded first
    under ``record`` (program, details)."""
    tolerance = {"rtol": 0.0, "atol": atol}
    program, details = record
    record_error(program, got, expected, tolerance, **details)
    case.close(what, got, expected, **tolerance)


def against_twin_and_numpy(case: Case, what: str, got, twin, reference, low=None, *, dtypes: tuple,
                           records: Mapping[str, Tuple[str, dict]], sharded: Optional[str] = None,
                           numpy_judges: str = "unsharded", laid_out: Optional[Layout] = None) -> None:
    """``got`` (a sharded run; None where it failed as a known deviation excuses, or was not made)
    and ``twin`` (the unsharded float32 run) of the output ``what``, judged in this order, the first
    disagreement raising:

    1. ``unsharded {what} dtype``: twin's dtype is ``dtypes[1]`` (the dtype model's, checked before
       any cast; in the oracle);
    2. where ``numpy_judges`` is "unsharded": ``unsharded {what} vs numpy``: twin is within its
       bound of the float64 ``reference`` (a Bounded value; in the oracle);
    3. (``got`` None: nothing more) ``{sharded} dtype``: got's dtype is ``dtypes[0]``;
    4. ``{sharded}``: got is within twice the float32 bound of twin (a lower-precision run, whose
       reference is ``low``: within its bound plus the float32 one);
    5. where ``numpy_judges`` is "sharded": ``{sharded} vs numpy``: got is within its own bound
       (``low``'s, or the float32 one) of the reference;
    6. ``laid_out`` given: got is laid out as it says (``check_layout``, its checks named ``what``).

    ``sharded`` names the sharded run's checks (default ``sharded {what}``); ``records`` gives, for
    each comparison of values made (``COMPARISONS``), the program name and details its error is
    recorded under."""
    if numpy_judges not in ("unsharded", "sharded"):
        raise ValueError(f"numpy_judges is {numpy_judges!r}, but should be 'unsharded' or 'sharded'")
    sharded = f"sharded {what}" if sharded is None else sharded
    twin_np = np.asarray(twin).astype(np.float64)
    reference_np = np.asarray(rounding.value_of(reference)).astype(np.float64)
    own = reference if low is None else low
    with case.oracle():
        case.equal(f"unsharded {what} dtype", np.asarray(twin).dtype.name, dtypes[1].name, shows="dtype")
        if numpy_judges == "unsharded":
            _within(case, f"unsharded {what} vs numpy", twin_np, reference_np, rounding.reference_atol(reference),
                    records["unsharded vs numpy"])
    if got is None:
        return
    got_np = np.asarray(got).astype(np.float64)
    case.equal(f"{sharded} dtype", np.asarray(got).dtype.name, dtypes[0].name, shows="dtype")
    _within(case, sharded, got_np, twin_np, rounding.same_program_atol(own, reference), records["sharded vs unsharded"])
    if numpy_judges == "sharded":
        _within(case, f"{sharded} vs numpy", got_np, reference_np, rounding.reference_atol(own),
                records["sharded vs numpy"])
    if laid_out is not None:
        check_layout(case, got, laid_out, what=what)


__all__ = ["COMPARISONS", "against_twin_and_numpy", "held", "model_dtype", "type_of"]
