"""Per-element rounding-error bounds, computed beside a numpy float64 reference.

Pure numpy (no JAX). ``Bounded`` is an array that carries, with each float64 value, a bound on how
far a float run of the same arithmetic (float32 by default) may be from it. The references the
suites already write in numpy run on it unchanged: numpy hands every ufunc and the functions below
to ``Bounded``, which computes the value in float64 and the bound beside it (a *running error
analysis*: Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section 3.3).

Vocabulary:

* ``u``: the unit roundoff of where the run stores a value (``2**-24`` for float32);
  ``u_sum`` that of where it accumulates a reduction (the same, unless a lower precision sums in
  float32); ``u_dot`` that of what a contraction rounds its operands to before multiplying (none:
  it multiplies them as stored; at JAX's DEFAULT precision "float32 dot products may be computed
  with reduced-precision arithmetic internally (bfloat16 on TPU, TF32 on recent GPUs)", the
  docs' "Matmul precision" page: ``bridge.default_dot_operand_dtype`` says which).
* ``tiny``: the smallest normal number of where the run stores a value (``2**-126`` for float32):
  a result below it may be stored as zero (XLA's CPU flushes subnormals), so every rounding also
  adds ``tiny``, Higham's underflow term (``fl(a op b) = (a op b)(1 + d) + n``, ``|n| <= tiny``
  where subnormals flush; section 2.1). Against any normal value it is nothing; it is what lets
  a product of two small normals, subnormal in float64 and zero in the run, be within its bound.
* A value's *bound* ``e``: ``|run - exact| <= e`` for that element, to first order in ``u``.

The rules, one per operation (``|.|`` elementwise, incoming bounds propagated by the operation's
derivative, as a first-order analysis does):

* ``+ - * /`` (correctly rounded, IEEE 754): ``e_out = |d out/d a| e_a + |d out/d b| e_b + u |out|``.
* ``exp log tanh sqrt sin cos`` (library functions, not correctly rounded; XLA's are approximations, and
  its ``rsqrt`` stands where numpy divides by ``sqrt``): the same propagation plus
  ``FUNCTION_ULPS u |out|``. Measured on XLA's CPU float32 functions over a dense grid (JAX 0.10.2;
  ``tests/test_running_error.py`` measures the installed JAX): tanh 4.4, rsqrt 2.5, log 1.8,
  exp 1.4, sin and cos 1.1 times ``u |out|``; ``FUNCTION_ULPS`` is twice the largest. ``x ** p`` (a plain ``p``) is
  charged as ``pow``, a library function (an integer power by products costs less).
* a program's constants (Adam's ``b1``, ``lr``, ...) are inputs it holds rounded: give them as
  ``Bounded.rounded``; a plain number is taken as exact.
* a reduction of ``n`` terms (``sum``, ``mean``, ``einsum``, ``matmul``; a ``cumsum``'s element
  of the ``n`` terms up to it), in any order:
  ``e_out = sum |weight| e_in + lambda sqrt(n) u_sum sum |terms| + u |out|``; a contraction whose
  operands are rounded to ``u_dot`` first adds ``2 u_dot sum |terms|`` (each product's two
  roundings, at their worst; the product of two such operands is exact where it is summed). The middle term is the
  probabilistic bound of Higham and Mary ("A new approach to probabilistic rounding error
  analysis", SIAM J. Sci. Comput. 41(5), 2019, Theorem 2.4 and section 3): with the rounding errors
  independent, of mean zero and at most ``u`` each, a sum or inner product of ``n`` terms is within
  ``lambda sqrt(n) u sum |terms|`` of the exact one with probability at least
  ``1 - 2 exp(-lambda**2 / 2)``, where the worst case needs ``n u sum |terms|``. ``LAMBDA`` takes that
  failure probability from ``FAILURE_PROBABILITY`` per reduced element: a nightly run compares about
  ``10**7`` of them, so about one nightly run in ``10**5`` could fail from rounding alone. ``mean``
  adds the division by ``n`` (``2 u |out|``: a reciprocal and a product).
* ``max``, ``where``, indexing, ``take_along_axis``, ``stack``, ``.T``: exact; the chosen
  element's bound.

The elementwise roundings are charged at their worst (``u |out|`` each), the reductions at
``lambda``: where a bound is mostly the former (Adam's new parameters, values near 1 stored three
times, their updates 100 times smaller), a run's error can come close to the bound but not pass it;
where it is mostly the latter, the error stays far below it unless ``lambda`` is beaten.

Two runs of the same program that sum in different orders (sharded against one device) are each
within ``e`` of the exact value, so within ``2 e`` of each other (``same_program_atol``); a run
against the float64 reference is within ``e`` (``reference_atol``). Second-order terms (``u**2``)
are left out; the references keep values O(1), where they are ``10**-7`` of the first-order ones.
"""

from __future__ import annotations

import math
from typing import Callable, Dict

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from conformance.checking.tolerance import smallest_normal, unit_roundoff

FAILURE_PROBABILITY = 1e-12
LAMBDA = math.sqrt(2 * math.log(2 / FAILURE_PROBABILITY))  # 7.52: 2 exp(-LAMBDA**2 / 2) = FAILURE_PROBABILITY
FUNCTION_ULPS = 8


def reduction_factor(n: int) -> float:
    """``lambda sqrt(n)`` for a reduction of ``n`` terms (none for one term: nothing is added)."""
    return LAMBDA * math.sqrt(n) if n > 1 else 0.0


class Bounded(NDArrayOperatorsMixin):
    """A float64 value and, per element, the bound ``e`` on a float run of the same arithmetic.

    * ``value``: the float64 value (any shape).
    * ``bound``: the bound per element (default 0: an input the run holds exactly).
    * ``u``, ``u_sum``: the unit roundoffs where the run stores and where it sums (dtype names).
    * ``u_dot``: the dtype a contraction rounds its operands to (None: none, it multiplies them as
      stored).
    """

    __array_priority__ = 100

    def __init__(self, value, bound=None, *, u: str = "float32", u_sum: str = None, u_dot: str = None):
        self.value = np.asarray(value, np.float64)
        self.bound = (np.zeros_like(self.value) if bound is None
                      else np.broadcast_to(np.asarray(bound, np.float64), self.value.shape).copy())
        if np.any(self.bound < 0):
            raise ValueError("a bound is never negative")
        self.dtypes = (u, u_sum or u, u_dot)

    @classmethod
    def rounded(cls, value, *, u: str = "float32", u_sum: str = None, u_dot: str = None) -> "Bounded":
        """An input the run holds rounded to ``u``'s dtype (bound ``u |value|``)."""
        value = np.asarray(value, np.float64)
        return cls(value, unit_roundoff(u) * np.abs(value), u=u, u_sum=u_sum, u_dot=u_dot)

    @property
    def u(self) -> float:
        return unit_roundoff(self.dtypes[0])

    @property
    def tiny(self) -> float:
        return smallest_normal(self.dtypes[0])

    @property
    def u_sum(self) -> float:
        return unit_roundoff(self.dtypes[1])

    @property
    def u_dot(self) -> float:
        """The unit roundoff of a contraction's operand rounding (0 where it has none, or where the
        stored values are already no finer: bfloat16 operands are exact in TF32)."""
        if self.dtypes[2] is None or unit_roundoff(self.dtypes[2]) <= self.u:
            return 0.0
        return unit_roundoff(self.dtypes[2])

    def _new(self, value, bound) -> "Bounded":
        return Bounded(value, bound, u=self.dtypes[0], u_sum=self.dtypes[1], u_dot=self.dtypes[2])

    shape = property(lambda self: self.value.shape)
    ndim = property(lambda self: self.value.ndim)
    size = property(lambda self: self.value.size)

    def __repr__(self):
        return f"Bounded({self.value!r}, bound={self.bound!r})"

    def __getitem__(self, index):
        index = value_of(index) if isinstance(index, Bounded) else index
        return self._new(self.value[index], self.bound[index])

    @property
    def T(self):  # numpy's name
        return self._new(self.value.T, self.bound.T)

    def reshape(self, *shape):
        return self._new(self.value.reshape(*shape), self.bound.reshape(*shape))

    def astype(self, dtype):
        if np.dtype(dtype).kind != "f":
            raise TypeError(f"a Bounded value stays float, not {dtype}")
        return self

    def max(self, axis=None, keepdims=False):
        return _max(self, axis=axis, keepdims=keepdims)

    def sum(self, axis=None, keepdims=False):
        return _sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        return _mean(self, axis=axis, keepdims=keepdims)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            return NotImplemented
        if ufunc is np.matmul:
            a, b = inputs
            lead = "zyx"[:value_of(a).ndim - 1]
            return _einsum(f"{lead}j,jk->{lead}k" if value_of(b).ndim == 2 else f"{lead}j,j->{lead}", a, b)
        if ufunc in COMPARISONS:
            return ufunc(*(value_of(i) for i in inputs))
        rule = UFUNC_RULES.get(ufunc)
        if rule is None:
            raise NotImplementedError(f"Bounded has no rule for np.{ufunc.__name__}")
        values = [value_of(i) for i in inputs]
        bounds = [bound_of(i) for i in inputs]
        out = ufunc(*values)
        rounds = 0.0 if ufunc in EXACT_UFUNCS else self.tiny
        return self._new(out, rule(out, values, bounds, self.u) + rounds)

    def __array_function__(self, func, types, args, kwargs):
        if func not in FUNCTIONS:
            raise NotImplementedError(f"Bounded has no rule for np.{func.__name__}")
        return FUNCTIONS[func](*args, **kwargs)


def value_of(x) -> np.ndarray:
    """The float64 value of ``x`` (a Bounded or anything numpy takes)."""
    return x.value if isinstance(x, Bounded) else np.asarray(x)


def bound_of(x) -> np.ndarray:
    """The bound of ``x`` (0 for a plain value: the run holds it exactly)."""
    return x.bound if isinstance(x, Bounded) else np.zeros(np.shape(x))


def _like(*xs) -> Bounded:
    return next(x for x in xs if isinstance(x, Bounded))


# --- the rules --------------------------------------------------------------------------------

def _function(derivative: Callable) -> Callable:
    """A library function's rule: ``|f'(x)| e_x + FUNCTION_ULPS u |out|`` (an exact input adds
    nothing, where the derivative is infinite too)."""
    def rule(out, v, e, u):
        with np.errstate(divide="ignore", invalid="ignore"):
            propagated = np.where(e[0] == 0, 0.0, np.abs(derivative(out, v[0])) * e[0])
        return propagated + FUNCTION_ULPS * u * np.abs(out)
    return rule


def _sqrt(out, v, e, u):
    """sqrt's rule, where the first-order term ``e / (2 sqrt x)`` is capped by ``sqrt(e)``
    (``|sqrt(a) - sqrt(b)| <= sqrt(|a - b|)``: near 0 the derivative overstates it)."""
    first_order = _function(lambda out, x: 0.5 / out)(out, v, [np.zeros_like(e[0])], u)
    with np.errstate(divide="ignore", invalid="ignore"):
        propagated = np.where(e[0] == 0, 0.0, np.minimum(e[0] / (2 * out), np.sqrt(e[0])))
    return propagated + first_order


EXACT_UFUNCS = {np.negative, np.absolute, np.maximum}  # (no rounding, so no underflow either)
COMPARISONS = {np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal}
UFUNC_RULES: Dict[np.ufunc, Callable] = {
    np.add: lambda out, v, e, u: e[0] + e[1] + u * np.abs(out),
    np.subtract: lambda out, v, e, u: e[0] + e[1] + u * np.abs(out),
    np.multiply: lambda out, v, e, u: np.abs(v[1]) * e[0] + np.abs(v[0]) * e[1] + u * np.abs(out),
    np.true_divide: lambda out, v, e, u: (e[0] + np.abs(out) * e[1]) / np.abs(v[1]) + u * np.abs(out),
    np.negative: lambda out, v, e, u: e[0],
    np.absolute: lambda out, v, e, u: e[0],
    np.square: lambda out, v, e, u: 2 * np.abs(v[0]) * e[0] + u * np.abs(out),
    np.maximum: lambda out, v, e, u: np.maximum(e[0], e[1]),
    np.sqrt: _sqrt,
    np.exp: _function(lambda out, x: out),
    np.log: _function(lambda out, x: 1 / x),
    np.tanh: _function(lambda out, x: 1 - out ** 2),
    np.sin: _function(lambda out, x: np.cos(x)),
    np.cos: _function(lambda out, x: -np.sin(x)),
}


def _power(out, v, e, u):
    """``x ** p`` for a plain number ``p >= 1``: a library function (``pow``), or ``p - 1`` products
    where ``p`` is an integer, each costing less."""
    if np.ndim(v[1]) or np.any(e[1]) or float(v[1]) < 1:
        raise NotImplementedError(f"Bounded takes x ** p for a plain number p >= 1, not {v[1]}")
    p = float(v[1])
    return _function(lambda out, x: p * x ** (p - 1))(out, v, e, u)


UFUNC_RULES[np.power] = _power


def _reduced(value, terms_abs_sum, incoming, n, like: Bounded) -> Bounded:
    # (each of the n terms' products, each partial sum, and the stored result may underflow)
    underflow = 2 * n * like.tiny if n > 1 else 0
    bound = (incoming + reduction_factor(n) * like.u_sum * terms_abs_sum + (like.u * np.abs(value) if n > 1 else 0)
             + underflow)
    return like._new(value, bound)


def _einsum(subscripts: str, a, b) -> Bounded:
    """``np.einsum`` of two operands: each output sums the products over the contracted letters."""
    inputs, out = subscripts.replace(" ", "").split("->")
    sa, sb = inputs.split(",")
    sizes = {**dict(zip(sa, value_of(a).shape)), **dict(zip(sb, value_of(b).shape))}
    n = math.prod(sizes[c] for c in dict.fromkeys(sa + sb) if c not in out)
    va, vb = value_of(a), value_of(b)
    value = np.einsum(subscripts, va, vb)
    incoming = np.einsum(subscripts, np.abs(va), bound_of(b)) + np.einsum(subscripts, bound_of(a), np.abs(vb))
    like = _like(a, b)
    terms = np.einsum(subscripts, np.abs(va), np.abs(vb))
    single = like.u * terms + like.tiny if n == 1 else 0.0  # (one product, rounded once: no sum to charge it)
    return _reduced(value, terms, incoming + 2 * like.u_dot * terms + single, n, like)


def _sum(x, axis=None, keepdims=False) -> Bounded:
    v = value_of(x)
    value = np.sum(v, axis=axis, keepdims=keepdims)
    n = v.size // max(np.size(value), 1)
    return _reduced(value, np.sum(np.abs(v), axis=axis, keepdims=keepdims),
                    np.sum(bound_of(x), axis=axis, keepdims=keepdims), n, x)


def _cumsum(x, axis) -> Bounded:
    """A prefix sum along ``axis``: each element a reduction of the terms up to it."""
    v = value_of(x)
    value = np.cumsum(v, axis=axis)
    n = np.cumsum(np.ones_like(v), axis=axis)
    bound = (np.cumsum(bound_of(x), axis=axis) + np.where(n > 1, LAMBDA * np.sqrt(n), 0.0) * x.u_sum
             * np.cumsum(np.abs(v), axis=axis) + np.where(n > 1, x.u * np.abs(value) + n * x.tiny, 0.0))
    return x._new(value, bound)


def _mean(x, axis=None, keepdims=False) -> Bounded:
    total = _sum(x, axis=axis, keepdims=keepdims)
    n = value_of(x).size // max(np.size(total.value), 1)
    value = total.value / n
    return x._new(value, total.bound / n + 2 * x.u * np.abs(value) + 2 * x.tiny)


def _max(x, axis=None, keepdims=False) -> Bounded:
    return x._new(np.max(value_of(x), axis=axis, keepdims=keepdims),
                  np.max(bound_of(x), axis=axis, keepdims=keepdims))


def _where(condition, a, b) -> Bounded:
    c = value_of(condition)
    return _like(a, b)._new(np.where(c, value_of(a), value_of(b)), np.where(c, bound_of(a), bound_of(b)))


def _take_along_axis(x, indices, axis) -> Bounded:
    return x._new(np.take_along_axis(value_of(x), indices, axis), np.take_along_axis(bound_of(x), indices, axis))


def _stack(arrays, axis=0) -> Bounded:
    arrays = list(arrays)
    return _like(*arrays)._new(np.stack([value_of(a) for a in arrays], axis),
                               np.stack([bound_of(a) for a in arrays], axis))


FUNCTIONS = {np.stack: _stack, np.einsum: _einsum, np.sum: _sum, np.cumsum: _cumsum, np.mean: _mean, np.max: _max,
             np.amax: _max, np.where: _where, np.take_along_axis: _take_along_axis}


# --- tolerances -------------------------------------------------------------------------------

def reference_atol(reference) -> np.ndarray:
    """The per-element ``atol`` of a run against the float64 reference: its bound."""
    return np.array(bound_of(reference))


def same_program_atol(reference, other=None) -> np.ndarray:
    """The per-element ``atol`` between two runs of the program (each within its bound of the
    exact value): twice the reference's bound, or the two references' bounds added (a
    lower-precision run's and the float32 run's)."""
    return np.array(bound_of(reference) + bound_of(reference if other is None else other))


def tracked(tree, *, u: str = "float32", u_sum: str = None, u_dot: str = None, rounded: bool = False):
    """Every float leaf of a dict/list/tuple tree as a Bounded input (bound 0, or ``u |x|`` where
    ``rounded``: an input the run holds cast to ``u``'s dtype); other leaves as they are."""
    if isinstance(tree, dict):
        return {k: tracked(v, u=u, u_sum=u_sum, u_dot=u_dot, rounded=rounded) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(tracked(v, u=u, u_sum=u_sum, u_dot=u_dot, rounded=rounded) for v in tree)
    if np.asarray(tree).dtype.kind != "f":
        return tree
    if rounded:
        return Bounded.rounded(tree, u=u, u_sum=u_sum, u_dot=u_dot)
    return Bounded(tree, u=u, u_sum=u_sum, u_dot=u_dot)


__all__ = ["Bounded", "FAILURE_PROBABILITY", "FUNCTION_ULPS", "LAMBDA", "bound_of", "reduction_factor",
           "reference_atol", "same_program_atol", "tracked", "value_of"]
