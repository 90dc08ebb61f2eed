"""Reference model of the dtype a JAX operation returns, from JAX's documentation, not from JAX.

Pure Python and numpy (and ml_dtypes, for bfloat16): this module never imports JAX, so a type
promotion regression in JAX shows as a difference from what it says.

Sources, quoted in ``tests/test_dtype_model.py``: "Type promotion semantics" (docs/type_promotion.rst:
the lattice and its binary table), "Default dtypes and the X64 flag" (docs/default_dtypes.md) and
the docstrings of ``jnp.sum``, ``jnp.mean``, ``jnp.cumsum``, ``jnp.argsort`` and ``jnp.argmax``.

Vocabulary:

* A **type** is a node of JAX's type promotion lattice: a strong dtype, named as numpy names it
  (``"bool"``, ``"uint8"``, ..., ``"bfloat16"``, ``"float16"``, ..., ``"complex128"``), or a **weak
  type**: ``"int*"``, ``"float*"``, ``"complex*"``, what a Python ``int``, ``float`` or ``complex``
  (or a weakly-typed array) is. Anything ``np.dtype`` accepts, Python's scalar types and the weak
  names are taken as types.
* The **join** of types is their least upper bound on the lattice: the type a binary operation on
  them computes in. It is defined on every set of types (the lattice has one top, ``complex128``).
* A type is **canonical** for an x64 setting when JAX can hold an array of it: with
  ``jax_enable_x64`` off no 64-bit type can (int64 -> int32, uint64 -> uint32, float64 -> float32,
  complex128 -> complex64).
* The **default** int, uint, float and complex are the 32-bit ones with x64 off (int32, uint32,
  float32, complex64), the 64-bit ones with it on. A weak type, once an array holds it, has the
  default dtype of its kind (``int*`` -> int32 with x64 off): that dtype, flagged weak.
* A **rule** (one of ``RULES``) says how an operation's result dtype follows from its operands'.

Every function here returns a ``numpy.dtype`` (bfloat16 is ``ml_dtypes.bfloat16``'s), never a weak
type: the dtype an array of the result has.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Dict, FrozenSet, Iterable, Sequence, Tuple, Union

import ml_dtypes
import numpy as np

WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX = "int*", "float*", "complex*"
WEAK_TYPES = (WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX)

# The documented lattice, each type and the types just above it (docs/type_promotion.rst, the
# code that draws the lattice: 'b1': ['i*'], 'u1': ['u2', 'i2'], ... in the doc's short names).
LATTICE: Dict[str, Tuple[str, ...]] = {
    "bool": (WEAK_INT,),
    WEAK_INT: ("uint8", "int8"),
    "uint8": ("uint16", "int16"), "uint16": ("uint32", "int32"), "uint32": ("uint64", "int64"),
    "uint64": (WEAK_FLOAT,),
    "int8": ("int16",), "int16": ("int32",), "int32": ("int64",), "int64": (WEAK_FLOAT,),
    WEAK_FLOAT: (WEAK_COMPLEX, "float16", "bfloat16"),
    "bfloat16": ("float32",), "float16": ("float32",), "float32": ("complex64", "float64"),
    "float64": ("complex128",),
    WEAK_COMPLEX: ("complex64",), "complex64": ("complex128",), "complex128": (),
}

# The doc's short names (its table's row and column headings), for tests and messages.
SHORT_NAMES: Dict[str, str] = {
    "b1": "bool", "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
    "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
    "bf": "bfloat16", "f2": "float16", "f4": "float32", "f8": "float64",
    "c8": "complex64", "c16": "complex128", "i*": WEAK_INT, "f*": WEAK_FLOAT, "c*": WEAK_COMPLEX,
}

NARROWED = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}
REAL_OF = {"complex64": "float32", "complex128": "float64"}

TypeLike = Union[str, type, np.dtype]


class UnknownRule(KeyError):
    """A rule name that ``RULES`` does not have."""


def type_name(t: TypeLike) -> str:
    """The lattice node of a dtype-like: Python ``int``/``float``/``complex`` and the weak names are
    weak types, Python ``bool`` is ``bool``, anything else is the dtype numpy makes of it."""
    if isinstance(t, str) and t in WEAK_TYPES:
        return t
    if isinstance(t, str) and t in SHORT_NAMES:
        return SHORT_NAMES[t]
    if isinstance(t, type) and t in (bool, int, float, complex):  # (a dtype == int is True)
        return {bool: "bool", int: WEAK_INT, float: WEAK_FLOAT, complex: WEAK_COMPLEX}[t]
    name = np.dtype(t).name
    if name not in LATTICE:
        raise TypeError(f"{name} is not a type of JAX's promotion lattice")
    return name


@lru_cache(maxsize=None)
def upper_set(t: str) -> FrozenSet[str]:
    """``t`` and every type above it on the lattice."""
    found = {t}
    for above in LATTICE[t]:
        found |= upper_set(above)
    return frozenset(found)


def join(*types: TypeLike) -> str:
    """The least upper bound of ``types`` on the lattice (a weak type when it is one): the one
    common upper type that is below every other common upper type."""
    if not types:
        raise ValueError("join() needs at least one type")
    names = [type_name(t) for t in types]
    common = frozenset.intersection(*(upper_set(n) for n in names))
    least = [t for t in common if all(other in upper_set(t) for other in common)]
    assert len(least) == 1, f"the lattice has no unique join of {names}: {least}"
    return least[0]


def default_int(x64: bool = False) -> np.dtype:
    """int32, or int64 with x64."""
    return np.dtype("int64" if x64 else "int32")


def default_uint(x64: bool = False) -> np.dtype:
    """uint32, or uint64 with x64."""
    return np.dtype("uint64" if x64 else "uint32")


def default_float(x64: bool = False) -> np.dtype:
    """float32, or float64 with x64."""
    return np.dtype("float64" if x64 else "float32")


def default_complex(x64: bool = False) -> np.dtype:
    """complex64, or complex128 with x64."""
    return np.dtype("complex128" if x64 else "complex64")


def as_dtype(name: str) -> np.dtype:
    """The numpy dtype of a strong type's name (bfloat16: ml_dtypes')."""
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def canonical(t: TypeLike, x64: bool = False) -> np.dtype:
    """The dtype JAX holds a value of type ``t`` in: a weak type as the default of its kind, and
    with x64 off a 64-bit type as its 32-bit namesake."""
    name = type_name(t)
    if name in WEAK_TYPES:
        return {WEAK_INT: default_int, WEAK_FLOAT: default_float, WEAK_COMPLEX: default_complex}[name](x64)
    return as_dtype(name if x64 else NARROWED.get(name, name))


def promote(*types: TypeLike, x64: bool = False) -> np.dtype:
    """The dtype of an elementwise operation on operands of ``types``: the join of their canonical
    types (a weak type stays weak until the join), held canonically."""
    held = [t if type_name(t) in WEAK_TYPES else canonical(t, x64) for t in types]
    return canonical(join(*held), x64)


# --- result rules ------------------------------------------------------------------------------
def _promote(types, x64):
    return promote(*types, x64=x64)


def _same(types, x64):
    return canonical(types[0], x64)


def _select(types, x64):
    return promote(*types[1:], x64=x64)


def _bool(types, x64):
    return np.dtype(bool)


def _index(types, x64):
    return default_int(x64)


def _inexact(types, x64):
    joined = promote(*types, x64=x64)
    return np.dtype("float64" if joined.itemsize == 8 else "float32") if joined.kind in "biu" else joined


def _real(types, x64):
    joined = promote(*types, x64=x64)
    return np.dtype(REAL_OF.get(joined.name, joined.name)) if joined.kind == "c" else joined


def _sum(types, x64):
    t = promote(*types, x64=x64)
    if t.kind in "bi":
        return default_int(x64)
    if t.kind == "u":
        return default_uint(x64)
    return t


@dataclass(frozen=True)
class Rule:
    """A named way an operation's result dtype follows from its operands' types (operands in the
    operation's order), what it is for, and the documentation it follows."""

    name: str
    says: str
    compute: Callable[[Sequence[TypeLike], bool], np.dtype]


def _complex(types, x64):
    joined = promote(*types, x64=x64)
    return joined if joined.kind == "c" else canonical("complex128" if joined.itemsize == 8 else "complex64", x64)


def _always(name: str) -> Callable[[Sequence[TypeLike], bool], np.dtype]:
    return lambda types, x64: canonical(name, x64)


RULES: Dict[str, Rule] = {rule.name: rule for rule in (
    Rule("promote", "the join of the operands: elementwise arithmetic, bitwise ops, max/min, "
                    "joining, contractions, and one-operand ops that keep their operand's dtype "
                    "(shape manipulation, slicing, sorting)", _promote),
    Rule("same", "the first operand's dtype, whatever the others are: lax operations (which take "
                 "operands of one dtype), gathers (the others are indices), .at[] updates and "
                 "dynamic_update_slice (updates are cast to it); jnp.cumsum/cumprod too, whose "
                 "docstring says 'the output dtype will match the input dtype'", _same),
    Rule("select", "the join of every operand but the first, the condition: jnp.where, "
                   "lax.select", _select),
    Rule("bool", "bool: comparisons, logical operations, any, all", _bool),
    Rule("index", "the default int: argmax, argmin, argsort ('If not specified, the default "
                  "integer dtype will be used')", _index),
    Rule("inexact", "the join of the operands, a bool or integer one replaced by the float as wide "
                    "as it, at least float32: sin, exp, true division, jnp.mean ('promotes to "
                    "inexact dtype'; 'set to float32 or float64 for non-floating-point inputs')",
         _inexact),
    Rule("real", "the join of the operands, a complex one replaced by the float of its precision: "
                 "abs, real, imag", _real),
    Rule("sum", "jnp.sum and jnp.prod: bool and signed integers give the default int, unsigned "
                "integers the default uint ('promoted to the widest available integer dtype, "
                "following numpy's behavior'), anything else its own dtype", _sum),
    Rule("complex", "the complex type as precise as the join of the operands: lax.complex", _complex),
    Rule("uint8", "uint8 whatever the operands: jnp.bitwise_count ('uint8', as numpy)", _always("uint8")),
    Rule("int16", "int16 whatever the operands: a conversion to int16 the call names", _always("int16")),
    Rule("int32", "int32 whatever the operands: a conversion to int32 the call names", _always("int32")),
)}


def result_dtype(rule: str, operand_types: Iterable[TypeLike], x64: bool = False) -> np.dtype:
    """The dtype of the result of an operation of ``rule`` on operands of ``operand_types``."""
    if rule not in RULES:
        raise UnknownRule(f"no dtype rule {rule!r}; the rules are {sorted(RULES)}")
    types = tuple(operand_types)
    if not types:
        raise ValueError(f"rule {rule!r} needs the operands' types, got none")
    return RULES[rule].compute(types, x64)


def of_operands(rule: str, operands: Iterable, x64: bool = False) -> np.dtype:
    """``result_dtype`` of numpy operands (arrays or numpy scalars; a Python scalar is weak)."""
    return result_dtype(rule, (type(x) if isinstance(x, (bool, int, float, complex)) and
                               not isinstance(x, np.generic) else np.asarray(x).dtype
                               for x in operands), x64)
