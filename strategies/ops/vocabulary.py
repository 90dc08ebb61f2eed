"""The vocabulary: the public functions of ``jax.numpy`` and ``jax.lax`` beyond the curated catalogue
(``catalogue.py``), an ``Op`` each (or one per form that differs, such as a tuple's parts), named by
the dotted name it calls (``"jnp.arccos"``, ``"lax.erf"``) and built by the few builders below from
a row of arguments: the dtypes of the operands, the **domain** each operand's values are drawn in,
the static arguments, the tolerance and the dtype rule.

Which public functions exist is read from the installed JAX per release
(``vocabularies/jax-<version>.json``, written by ``python -m conformance.jaxside.vocabulary write``);
which of them no entry covers, and why, is ``left_out.toml`` beside this module
(``left_out.read``). ``tests/test_vocabulary.py`` holds the two together: every public function is
covered or left out with its reason.

References are numpy's function of the same name where JAX follows numpy, and scipy.special's for
the special functions of ``jax.lax`` (an independent implementation, not JAX's); lax operations
numpy has no function for have references in ``references.py``. Floating-point transcendentals are
compared within a tolerance (XLA's CPU kernels and numpy's differ in the last bits); everything
exact is compared exactly.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, Optional, Sequence, Tuple

import ml_dtypes
import numpy as np
import scipy.special as special
from hypothesis import strategies as st

import strategies.ops.inputs as i

from .op import Op

# --- domains: what an operand's values are mapped into, after ``inputs.values`` draws them -------


def _nonzero(x):
    return np.where(x == 0, np.ones((), x.dtype), x).astype(x.dtype)


def _with_specials(x):
    """Floats with NaN, +inf and -inf put in at every 5th element (from flat positions 1, 2, 3)."""
    y = np.array(x, copy=True).reshape(-1)
    for start, value in ((1, np.nan), (2, np.inf), (3, -np.inf)):
        y[start::5] = value
    return y.reshape(np.shape(x))


def _with_nans(x):
    """Floats with NaN where the coordinates add up to an odd number: every line along a dimension
    of side 2 or more keeps a number."""
    if np.ndim(x) == 0:
        return x
    odd = np.indices(np.shape(x)).sum(axis=0) % 2 == 1
    return np.where(odd, np.asarray(np.nan, x.dtype), x).astype(x.dtype)


def _shift(x):
    """Shift counts of an integer dtype: 0 .. bits - 1."""
    bits = np.dtype(x.dtype).itemsize * 8
    return (np.abs(x.astype(np.int64)) % bits).astype(x.dtype)


DOMAINS: Dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "any": lambda x: x,                                                       # as drawn: |x| <= 10, or any integer
    "unit": lambda x: (x / np.asarray(11, x.dtype)).astype(x.dtype),          # inside (-1, 1)
    "positive": lambda x: (np.abs(x) + np.asarray(0.5, x.dtype)).astype(x.dtype),  # 0.5 .. 10.5
    "at_least_one": lambda x: (np.abs(x) + np.asarray(1, x.dtype)).astype(x.dtype),  # 1 .. 11
    "nonzero": _nonzero,
    "shift": _shift,
    "specials": _with_specials,
    "nans": _with_nans,
    "natural": lambda x: np.abs(x).astype(x.dtype),                           # >= 0
}


def operands_in(draw, dtypes: Sequence[str], kinds: Sequence[str], domains: Sequence[str], shapes) -> tuple:
    return tuple(DOMAINS[domain](draw(i.values(dtype, shape, kind)))
                 for dtype, kind, domain, shape in zip(dtypes, kinds, domains, shapes))


def inputs(dtypes: Sequence[str], *, kinds: Optional[Sequence[str]] = None, domains: Optional[Sequence[str]] = None,
           shapes: str = "broadcasting", statics: Optional[i.Statics] = None, min_rank: int = 0, max_rank: int = 3):
    """A strategy of ``(operands, static)``: an operand per dtype of ``dtypes``, its values of
    ``kinds`` (``inputs.values``: "any", "small", "tiny"; "any" unless given) mapped into
    ``domains`` (``DOMAINS``; "any" unless given), their shapes "broadcasting" together (trailing
    aligned, sides equal or 1) or all the "same"; and ``statics(shape)``'s static arguments (of the
    result's shape) where given."""
    count = len(dtypes)
    kinds = tuple(kinds or ("any",) * count)
    domains = tuple(domains or ("any",) * count)
    if not len(kinds) == len(domains) == count:
        raise ValueError(f"inputs: {count} dtypes, {len(kinds)} kinds, {len(domains)} domains")
    unknown = set(domains) - set(DOMAINS)
    if unknown:
        raise ValueError(f"inputs: no domain {sorted(unknown)}; the domains are {sorted(DOMAINS)}")
    if shapes not in ("broadcasting", "same"):
        raise ValueError(f"inputs: shapes must be 'broadcasting' or 'same', got {shapes!r}")

    def build(draw):
        shape = draw(i.shapes(min_rank, max_rank))
        broadcasting = shapes == "broadcasting" and count > 1
        picked = i.broadcasting_shapes(draw, shape, count) if broadcasting else [shape] * count
        operands = operands_in(draw, dtypes, kinds, domains, picked)
        return operands, (draw(statics(shape)) if statics else {})
    return i.inputs_from(build)


# --- builders -----------------------------------------------------------------------------------
TRANSCENDENTAL = dict(rtol=1e-5, atol=1e-6)  # float32: XLA's kernels and numpy's differ in the last bits
DIVISION = dict(rtol=1e-6)  # XLA's CPU backend divides through a reciprocal: a float32 quotient may differ by an ulp


def call(module: str, function: str, operands: str = "x", statics: Sequence[str] = (), call_text: str = "") -> str:
    """``lambda <operands>, *, <statics>: <module>.<function>(<operands>, s=s ...)`` (or
    ``call_text`` as the body)."""
    keywords = ", ".join(f"{s}={s}" for s in statics)
    body = call_text or f"{module}.{function}({operands}{', ' + keywords if keywords else ''})"
    head = operands + (", *, " + ", ".join(statics) if statics else "")
    return f"lambda {head}: {body}"


def entry(name: str, family: str, source: str, reference, inputs, *, result: str = "promote",
          tolerance: Optional[dict] = None, covers: Tuple[str, ...] = (), explicit: bool = True) -> Op:
    """An entry named ``name`` ("jnp.unique:counts"), covering the function it names (its ``covers``
    where given)."""
    return Op(name, family, source, reference, inputs, result=result, covers=covers or (name.split(":")[0],),
              explicit=explicit, **(tolerance or {}))


def numpy_named(function: str):
    return getattr(np, function)


def elementwise(name: str, dtype: str = "float32", *, domain: str = "any", kind: str = "any",
                reference: Optional[Callable] = None, result: str = "same", tolerance: Optional[dict] = None,
                source: str = "") -> Op:
    """A one-operand elementwise function ``name`` ("jnp.arccos"), on ``dtype`` values of ``kind``
    in ``domain``; its reference numpy's function of the same name unless given."""
    module, function = name.split(".")
    return Op(name, "elementwise", source or call(module, function), reference or numpy_named(function),
              inputs((dtype,), kinds=(kind,), domains=(domain,)), result=result, covers=(name,),
              **(tolerance or {}))


def binary(name: str, dtypes: Tuple[str, str] = ("float32", "float32"), *, domains=("any", "any"),
           kinds=("any", "any"), reference: Optional[Callable] = None, result: str = "promote",
           tolerance: Optional[dict] = None, same_shapes: bool = False, source: str = "", family: str = "") -> Op:
    """A two-operand elementwise function (shapes broadcasting together, or the same for lax)."""
    module, function = name.split(".")
    return Op(name, family or "broadcasting",
              source or call(module, function, "x, y"), reference or numpy_named(function),
              inputs(dtypes, kinds=kinds, domains=domains, shapes="same" if same_shapes else "broadcasting"),
              result=result, covers=(name,), **(tolerance or {}))


def reduction_statics(*, keepdims: bool = True, single_axis: bool = False, extra: Optional[dict] = None):
    def statics(shape):
        if single_axis:
            axis = st.one_of(st.none(), i.one_axis(len(shape))) if shape else st.none()
        else:
            axis = i.axes_of(len(shape))
        return st.fixed_dictionaries({"axis": axis, **({"keepdims": st.booleans()} if keepdims else {}),
                                      **(extra or {})})
    return statics


def reduction(name: str, dtype: str = "float32", *, kind: str = "small", domain: str = "any", keepdims: bool = True,
              single_axis: bool = False, reference: Optional[Callable] = None, result: str = "promote",
              tolerance: Optional[dict] = None, extra: Optional[dict] = None, min_rank: int = 0,
              family: str = "reduction", explicit: bool = True) -> Op:
    """``<name>(x, axis=axis[, keepdims=keepdims][, **extra])``: axes None, one (negative ones
    included) or a tuple (one or None with ``single_axis``)."""
    module, function = name.split(".")
    statics = ("axis",) + (("keepdims",) if keepdims else ()) + tuple(extra or {})
    numpy_function = reference or numpy_named(function)
    return Op(name, family, call(module, function, "x", statics),
              lambda x, **static: numpy_function(x, **static),
              inputs((dtype,), kinds=(kind,), domains=(domain,), min_rank=min_rank,
                     statics=reduction_statics(keepdims=keepdims, single_axis=single_axis, extra=extra)),
              result=result, covers=(name,), explicit=explicit, **(tolerance or {}))


def scan(name: str, dtype: str = "float32", *, kind: str = "small", domain: str = "any",
         reference: Optional[Callable] = None, result: str = "same", tolerance: Optional[dict] = None,
         negative_axis: bool = True, source: str = "", family: str = "scan", explicit: bool = True) -> Op:
    """``<name>(x, axis=axis)`` along one axis of an operand of rank >= 1."""
    module, function = name.split(".")
    numpy_function = reference or numpy_named(function)

    def statics(shape):
        return st.fixed_dictionaries({"axis": st.integers(-len(shape) if negative_axis else 0, len(shape) - 1)})
    return Op(name, family, source or call(module, function, "x", ("axis",)),
              lambda x, axis: numpy_function(x, axis=axis),
              inputs((dtype,), kinds=(kind,), domains=(domain,), min_rank=1, statics=statics),
              result=result, covers=(name,), explicit=explicit, **(tolerance or {}))


# --- references numpy names otherwise -----------------------------------------------------------
def round_half_away(x):
    """lax.round's default rounding (``RoundingMethod.AWAY_FROM_ZERO``)."""
    return (np.sign(x) * np.floor(np.abs(x) + np.asarray(0.5, x.dtype))).astype(x.dtype)


def truncating_division(x, y):
    """lax.div on integers: the quotient rounded towards zero (C's ``/``)."""
    if np.dtype(x.dtype).kind in "iu":
        q = np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))
        return (np.sign(x.astype(np.int64)) * np.sign(y.astype(np.int64)) * q).astype(x.dtype)
    return np.divide(x, y)


def count_leading_zeros(x):
    bits = np.dtype(x.dtype).itemsize * 8
    unsigned = x.astype(np.dtype(f"uint{bits}")).astype(np.uint64)
    lengths = np.asarray(np.frompyfunc(lambda v: int(v).bit_length(), 1, 1)(unsigned)).astype(np.int64)
    return np.asarray(bits - lengths).astype(x.dtype)


def logical_shift_right(x, y):
    bits = np.dtype(x.dtype).itemsize * 8
    unsigned = np.dtype(f"uint{bits}")
    return np.right_shift(x.astype(unsigned), y.astype(unsigned)).astype(x.dtype)


def high_half_product(x, y):
    """lax.mulhi: the high half of the double-width product."""
    bits = np.dtype(x.dtype).itemsize * 8
    wide = np.int64 if np.dtype(x.dtype).kind == "i" else np.uint64
    product = x.astype(wide) * y.astype(wide)
    return (product >> wide(bits)).astype(x.dtype)


# --- the entries --------------------------------------------------------------------------------
F = "float32"
UNIT = dict(domain="unit")

JNP_ELEMENTWISE: Tuple[Op, ...] = (
    *(elementwise(f"jnp.{name}", tolerance=TRANSCENDENTAL, **extra) for name, extra in (
        ("cos", {}), ("tan", UNIT), ("arcsin", UNIT), ("arccos", UNIT), ("arctan", {}), ("sinh", {}), ("cosh", {}),
        ("tanh", {}), ("arcsinh", {}), ("arccosh", dict(domain="at_least_one")), ("arctanh", UNIT),
        ("exp2", {}), ("expm1", {}), ("log", dict(domain="positive")), ("log10", dict(domain="positive")),
        ("log1p", dict(domain="positive")), ("log2", dict(domain="positive")), ("sqrt", dict(domain="positive")),
        ("cbrt", {}), ("reciprocal", dict(domain="positive")), ("sinc", {}), ("deg2rad", {}), ("degrees", {}),
        ("rad2deg", {}), ("radians", {}), ("i0", {}))),
    *(elementwise(f"jnp.{name}", tolerance=TRANSCENDENTAL, reference=numpy_named(alias), **extra)
      for name, alias, extra in (("acos", "arccos", UNIT), ("asin", "arcsin", UNIT), ("atan", "arctan", {}),
                                 ("acosh", "arccosh", dict(domain="at_least_one")), ("asinh", "arcsinh", {}),
                                 ("atanh", "arctanh", UNIT))),
    *(elementwise(f"jnp.{name}") for name in ("ceil", "floor", "trunc", "rint", "round", "around", "fabs",
                                               "positive", "absolute", "sign", "square", "conj",
                                               "conjugate", "real", "spacing")),
    elementwise("jnp.imag", reference=np.imag),
    elementwise("jnp.angle", result="inexact"),
    elementwise("jnp.nan_to_num", domain="specials"),
    *(elementwise(f"jnp.{name}", domain="specials", result="bool")
      for name in ("isfinite", "isinf", "isnan", "isneginf", "isposinf", "signbit", "isreal", "iscomplex")),
    *(elementwise(f"jnp.{name}", "int32", result="same") for name in ("invert", "bitwise_not")),
    elementwise("jnp.bitwise_invert", "int32", reference=np.invert),
    elementwise("jnp.bitwise_count", "int32", reference=np.bitwise_count, result="uint8"),
    elementwise("jnp.negative", "int8"),
    elementwise("jnp.frexp", source="lambda x: jnp.frexp(x)[0]", reference=lambda x: np.frexp(x)[0]),
    Op("jnp.frexp:exponent", "elementwise", "lambda x: jnp.frexp(x)[1]", lambda x: np.frexp(x)[1],
       inputs((F,)), result="int32", covers=("jnp.frexp",)),
    elementwise("jnp.modf", source="lambda x: jnp.modf(x)[0]", reference=lambda x: np.modf(x)[0]),
    Op("jnp.modf:integral", "elementwise", "lambda x: jnp.modf(x)[1]", lambda x: np.modf(x)[1], inputs((F,)),
       covers=("jnp.modf",)),
)

II = ("int32", "int32")
BOOLS = ("bool", "bool")
SMALL = ("small", "small")
JNP_BINARY: Tuple[Op, ...] = (
    *(binary(f"jnp.{name}", **extra) for name, extra in (
        ("add", dict(dtypes=II)), ("subtract", dict(dtypes=II)), ("multiply", dict(dtypes=II)),
        ("divide", dict(domains=("any", "nonzero"), result="inexact", tolerance=DIVISION)),
        ("true_divide", dict(domains=("any", "nonzero"), result="inexact", tolerance=DIVISION)),
        ("floor_divide", dict(dtypes=II, domains=("any", "nonzero"))),
        ("mod", dict(dtypes=II, domains=("any", "nonzero"))),
        ("remainder", dict(dtypes=II, domains=("any", "nonzero"))),
        ("fmod", dict(dtypes=II, domains=("any", "nonzero"))),
        ("power", dict(domains=("positive", "any"), kinds=("any", "tiny"), tolerance=TRANSCENDENTAL)),
        ("arctan2", dict(tolerance=TRANSCENDENTAL)), ("hypot", dict(tolerance=TRANSCENDENTAL)),
        ("copysign", {}), ("nextafter", {}), ("logaddexp", dict(tolerance=TRANSCENDENTAL)),
        ("logaddexp2", dict(tolerance=TRANSCENDENTAL)), ("heaviside", dict(kinds=SMALL)), ("fmax", {}),
        ("fmin", {}), ("minimum", {}),
        ("equal", dict(dtypes=II, kinds=SMALL, result="bool")),
        ("not_equal", dict(dtypes=II, kinds=SMALL, result="bool")),
        ("greater", dict(kinds=SMALL, result="bool")), ("greater_equal", dict(kinds=SMALL, result="bool")),
        ("less", dict(kinds=SMALL, result="bool")), ("less_equal", dict(kinds=SMALL, result="bool")),
        ("logical_and", dict(dtypes=BOOLS, result="bool")), ("logical_or", dict(dtypes=BOOLS, result="bool")),
        ("logical_xor", dict(dtypes=BOOLS, result="bool")),
        ("bitwise_and", dict(dtypes=II)), ("bitwise_or", dict(dtypes=II)), ("bitwise_xor", dict(dtypes=II)),
        ("left_shift", dict(dtypes=II, domains=("any", "shift"))),
        ("right_shift", dict(dtypes=II, domains=("any", "shift"))),
        ("gcd", dict(dtypes=II, kinds=SMALL)), ("lcm", dict(dtypes=II, kinds=SMALL)),
        ("isclose", dict(kinds=("small", "small"), result="bool")),
    )),
    binary("jnp.atan2", reference=np.arctan2, tolerance=TRANSCENDENTAL),
    binary("jnp.pow", domains=("positive", "any"), kinds=("any", "tiny"), reference=np.power, tolerance=TRANSCENDENTAL),
    binary("jnp.float_power", domains=("positive", "any"), kinds=("any", "tiny"), result="inexact",
           tolerance=TRANSCENDENTAL),
    binary("jnp.bitwise_left_shift", II, domains=("any", "shift"), reference=np.left_shift),
    binary("jnp.bitwise_right_shift", II, domains=("any", "shift"), reference=np.right_shift),
    binary("jnp.ldexp", ("float32", "int32"), kinds=("any", "tiny"), result="same"),
    binary("jnp.divmod", II, domains=("any", "nonzero"), source="lambda x, y: jnp.divmod(x, y)[0]",
           reference=lambda x, y: np.divmod(x, y)[0]),
    Op("jnp.divmod:remainder", "broadcasting", "lambda x, y: jnp.divmod(x, y)[1]", lambda x, y: np.divmod(x, y)[1],
       inputs(II, domains=("any", "nonzero")), covers=("jnp.divmod",)),
)

# Quantiles sort the reduced dimensions (merged into one first): a route our sharding-rule model has
# no rule for, which JAX refuses on Explicit meshes for some operand shardings (a sorted dimension
# must be unsharded; a merge of cut dimensions needs an out_sharding).
SORTED = dict(family="quantile", explicit=False)

JNP_REDUCTIONS: Tuple[Op, ...] = (
    reduction("jnp.prod", kind="tiny", result="sum"), reduction("jnp.amax", kind="any"),
    reduction("jnp.amin", kind="any"), reduction("jnp.all", "bool", result="bool"),
    reduction("jnp.std", tolerance=TRANSCENDENTAL, result="inexact"),
    reduction("jnp.var", tolerance=TRANSCENDENTAL, result="inexact"),
    reduction("jnp.ptp", "int32", kind="any"),
    reduction("jnp.median", tolerance=TRANSCENDENTAL, result="inexact", **SORTED),
    reduction("jnp.average", keepdims=True, tolerance=TRANSCENDENTAL, result="inexact"),
    reduction("jnp.count_nonzero", "int32", kind="tiny", result="index"),
    reduction("jnp.nansum", domain="nans", result="sum"), reduction("jnp.nanprod", kind="tiny", domain="nans",
                                                                     result="sum"),
    reduction("jnp.nanmax", domain="nans", kind="any"), reduction("jnp.nanmin", domain="nans", kind="any"),
    reduction("jnp.nanmean", domain="nans", tolerance=TRANSCENDENTAL, result="inexact"),
    reduction("jnp.nanstd", domain="nans", tolerance=TRANSCENDENTAL, result="inexact"),
    reduction("jnp.nanvar", domain="nans", tolerance=TRANSCENDENTAL, result="inexact"),
    reduction("jnp.nanmedian", domain="nans", tolerance=TRANSCENDENTAL, result="inexact", **SORTED),
    reduction("jnp.nanargmax", kind="any", keepdims=False, single_axis=True, result="index", min_rank=1),
    reduction("jnp.nanargmin", kind="any", keepdims=False, single_axis=True, result="index", min_rank=1),
    *(reduction(f"jnp.{name}", tolerance=TRANSCENDENTAL, result="inexact", extra={"q": st.sampled_from(q)},
                domain="nans" if name.startswith("nan") else "any", **SORTED)
      for name, q in (("quantile", (0.0, 0.25, 0.5, 1.0)), ("percentile", (0.0, 30.0, 50.0, 100.0)),
                      ("nanquantile", (0.0, 0.25, 0.5, 1.0)), ("nanpercentile", (0.0, 30.0, 50.0, 100.0)))),
)

JNP_SCANS: Tuple[Op, ...] = (
    scan("jnp.cumulative_sum", "int32", kind="any"),
    scan("jnp.cumulative_prod", kind="tiny"),
    scan("jnp.nancumsum", domain="nans", reference=np.nancumsum),
    scan("jnp.nancumprod", kind="tiny", domain="nans"),
    replace(scan("jnp.diff", "int32", kind="any", result="promote", family="differencing"),
            inputs=scan("jnp.diff", "int32", kind="any").inputs.filter(  # (a side of 1 differences to nothing)
                lambda drawn: np.shape(drawn[0][0])[drawn[1]["axis"]] > 1)),
    # (moves the axis last, sums it and takes its two end elements by integer indexing; unmodelled)
    scan("jnp.trapezoid", tolerance=TRANSCENDENTAL, result="inexact", family="trapezoid", explicit=False),
    # (ravels, then slices: unmodelled)
    Op("jnp.ediff1d", "differencing", "lambda x: jnp.ediff1d(x)", np.ediff1d,
       inputs(("int32",), min_rank=1).filter(lambda drawn: np.size(drawn[0][0]) > 1), covers=("jnp.ediff1d",),
       explicit=False),
    *(scan(f"lax.{name}", kind=kind, reference=reference, negative_axis=False, tolerance=tolerance,
           source=f"lambda x, *, axis: lax.{name}(x, axis=axis, reverse=False)")
      for name, kind, reference, tolerance in (
          ("cummin", "any", lambda x, axis: np.minimum.accumulate(x, axis=axis), None),
          ("cumprod", "tiny", lambda x, axis: np.cumprod(x, axis=axis), None),
          ("cumlogsumexp", "any", lambda x, axis: np.logaddexp.accumulate(x, axis=axis), TRANSCENDENTAL))),
)

# lax's one-operand operations: operands of one dtype, which the result keeps.
LAX_ELEMENTWISE: Tuple[Op, ...] = (
    *(elementwise(f"lax.{name}", tolerance=TRANSCENDENTAL, reference=reference, **extra)
      for name, reference, extra in (
          ("acos", np.arccos, UNIT), ("acosh", np.arccosh, dict(domain="at_least_one")), ("asin", np.arcsin, UNIT),
          ("asinh", np.arcsinh, {}), ("atan", np.arctan, {}), ("atanh", np.arctanh, UNIT), ("cbrt", np.cbrt, {}),
          ("cos", np.cos, {}), ("cosh", np.cosh, {}), ("exp", np.exp, {}), ("exp2", np.exp2, {}),
          ("expm1", np.expm1, {}), ("log", np.log, dict(domain="positive")),
          ("log1p", np.log1p, dict(domain="positive")), ("logistic", special.expit, {}),
          ("rsqrt", lambda x: (1 / np.sqrt(x)).astype(x.dtype), dict(domain="positive")), ("sin", np.sin, {}),
          ("sinh", np.sinh, {}), ("sqrt", np.sqrt, dict(domain="positive")), ("tan", np.tan, UNIT),
          ("tanh", np.tanh, {}), ("erf", special.erf, {}), ("erfc", special.erfc, {}),
          ("erf_inv", special.erfinv, UNIT), ("lgamma", special.gammaln, dict(domain="positive")),
          ("digamma", special.digamma, dict(domain="positive")), ("bessel_i0e", special.i0e, {}),
          ("bessel_i1e", special.i1e, {}))),
    *(elementwise(f"lax.{name}", reference=reference, **extra) for name, reference, extra in (
        ("abs", np.abs, {}), ("ceil", np.ceil, {}), ("floor", np.floor, {}), ("neg", np.negative, {}),
        ("sign", np.sign, {}), ("square", np.square, {}), ("round", round_half_away, {}),
        ("is_finite", np.isfinite, dict(domain="specials", result="bool")),
        ("population_count", lambda x: np.bitwise_count(x.view(np.uint32)).astype(x.dtype), dict(dtype="int32")),
        ("clz", count_leading_zeros, dict(dtype="int32")), ("bitwise_not", np.invert, dict(dtype="int32")))),
    Op("lax.integer_pow", "elementwise", "lambda x, *, y: lax.integer_pow(x, y)", lambda x, y: np.power(x, y),
       inputs(("int32",), kinds=("tiny",), statics=lambda shape: st.fixed_dictionaries({"y": st.integers(0, 5)})),
       result="same", covers=("lax.integer_pow",)),
    Op("lax.convert_element_type", "elementwise", "lambda x: lax.convert_element_type(x, jnp.int16)",
       lambda x: x.astype(np.int16), inputs(("int32",), kinds=("small",)), result="int16",
       covers=("lax.convert_element_type",)),
    Op("lax.bitcast_convert_type", "elementwise", "lambda x: lax.bitcast_convert_type(x, jnp.int32)",
       lambda x: x.view(np.int32), inputs((F,)), result="int32", covers=("lax.bitcast_convert_type",)),
    Op("lax.reduce_precision", "elementwise",
       "lambda x: lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7)",
       lambda x: x.astype(ml_dtypes.bfloat16).astype(x.dtype), inputs((F,)), result="same",
       covers=("lax.reduce_precision",)),
)

def complex_inputs():
    """One complex64 operand, its real and imaginary parts drawn as ``inputs.values`` floats."""
    def build(draw):
        shape = draw(i.shapes(0, 3))
        return ((draw(i.values(F, shape)) + 1j * draw(i.values(F, shape))).astype(np.complex64),), {}
    return i.inputs_from(build)


LAX_COMPLEX: Tuple[Op, ...] = tuple(
    Op(f"lax.{name}", "elementwise", f"lambda x: lax.{name}(x)", reference, complex_inputs(), result=result,
       covers=(f"lax.{name}",))
    for name, reference, result in (("real", np.real, "real"), ("imag", np.imag, "real"), ("conj", np.conj, "same")))

LAX_BINARY: Tuple[Op, ...] = tuple(
    binary(f"lax.{name}", dtypes, same_shapes=True, family="broadcasting", reference=reference, result=result, **extra)
    for name, dtypes, reference, result, extra in (
        ("add", II, np.add, "same", {}), ("sub", II, np.subtract, "same", {}), ("mul", II, np.multiply, "same", {}),
        ("div", II, truncating_division, "same", dict(domains=("any", "nonzero"))),
        ("rem", II, np.fmod, "same", dict(domains=("any", "nonzero"))),
        ("max", (F, F), np.maximum, "same", {}), ("min", (F, F), np.minimum, "same", {}),
        ("pow", (F, F), np.power, "same", dict(domains=("positive", "any"), kinds=("any", "tiny"),
                                               tolerance=TRANSCENDENTAL)),
        ("atan2", (F, F), np.arctan2, "same", dict(tolerance=TRANSCENDENTAL)),
        ("nextafter", (F, F), np.nextafter, "same", {}),
        ("eq", II, np.equal, "bool", dict(kinds=SMALL)), ("ne", II, np.not_equal, "bool", dict(kinds=SMALL)),
        ("lt", (F, F), np.less, "bool", dict(kinds=SMALL)), ("le", (F, F), np.less_equal, "bool", dict(kinds=SMALL)),
        ("gt", (F, F), np.greater, "bool", dict(kinds=SMALL)),
        ("ge", (F, F), np.greater_equal, "bool", dict(kinds=SMALL)),
        ("bitwise_and", II, np.bitwise_and, "same", {}), ("bitwise_or", II, np.bitwise_or, "same", {}),
        ("bitwise_xor", II, np.bitwise_xor, "same", {}),
        ("shift_left", II, np.left_shift, "same", dict(domains=("any", "shift"))),
        ("shift_right_arithmetic", II, np.right_shift, "same", dict(domains=("any", "shift"))),
        ("shift_right_logical", II, logical_shift_right, "same", dict(domains=("any", "shift"))),
        ("mulhi", II, high_half_product, "same", {}),
        ("complex", (F, F), lambda x, y: (x + 1j * y).astype(np.complex64), "complex", {}),
        ("igamma", (F, F), special.gammainc, "same", dict(domains=("positive", "positive"),
                                                          tolerance=dict(rtol=1e-4, atol=1e-5))),
        ("igammac", (F, F), special.gammaincc, "same", dict(domains=("positive", "positive"),
                                                            tolerance=dict(rtol=1e-4, atol=1e-5))),
        ("zeta", (F, F), special.zeta, "same", dict(domains=("at_least_one", "positive"),
                                                    tolerance=dict(rtol=1e-4, atol=1e-6))),
    ))

LAX_OTHERS: Tuple[Op, ...] = (
    Op("lax.clamp", "clamp", "lambda low, x, high: lax.clamp(low, x, high)",
       lambda low, x, high: np.clip(x, low, high), inputs(("int32",) * 3, shapes="same", kinds=("small",) * 3),
       result="same", covers=("lax.clamp",)),
    Op("lax.betainc", "broadcasting", "lambda a, b, x: lax.betainc(a, b, x)",
       lambda a, b, x: special.betainc(a, b, x), inputs((F,) * 3, shapes="same",
                                                        domains=("positive", "positive", "unit")),
       result="same", rtol=1e-4, atol=1e-5, covers=("lax.betainc",)),
)

VOCABULARY: Tuple[Op, ...] = JNP_ELEMENTWISE + JNP_BINARY + JNP_REDUCTIONS + JNP_SCANS + LAX_ELEMENTWISE + \
    LAX_COMPLEX + LAX_BINARY + LAX_OTHERS
