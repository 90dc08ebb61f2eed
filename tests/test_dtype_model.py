"""The dtype model against JAX's documentation, cell by cell and example by example.

From "Type promotion semantics" (docs/type_promotion.rst, the same at jax-v0.10.2 and on main):
"Promotion between any two types is given by their join on this lattice, which generates the
following binary promotion table" (a few of its rows)::

        b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
    u4  u4  u4  u4  u4  u8  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 u4  f*  c*
    u8  u8  u8  u8  u8  u8  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 u8  f*  c*
    bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  f4  f4  f8  c8  c16 bf  bf  c8
    i*  i*  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*

and "``jnp.int16(1) + 1`` will return ``int16``", "``jnp.int16(1) + np.array(1)`` will return
``int64``", ``2 * jnp.arange(5, dtype='int8')`` is int8, ``jnp.asarray(2)`` is
``int32, weak_type=True``. From "Default dtypes and the X64 flag": with x64 off ``jnp.arange(5)``
is int32, ``jnp.zeros(5)`` float32, a requested float64 "will be truncated to dtype float32"; with
it on they are int64, float64.
"""

import itertools

import ml_dtypes
import numpy as np
import pytest

from conformance.model import dtypes as d

# The whole binary table, transcribed from docs/type_promotion.rst (jax-v0.10.2): row type, then
# the join with each column type.
DOC_TABLE = """
    b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
b1  b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
u1  u1  u1  u2  u4  u8  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 u1  f*  c*
u2  u2  u2  u2  u4  u8  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 u2  f*  c*
u4  u4  u4  u4  u4  u8  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 u4  f*  c*
u8  u8  u8  u8  u8  u8  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 u8  f*  c*
i1  i1  i2  i4  i8  f*  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i1  f*  c*
i2  i2  i2  i4  i8  f*  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 i2  f*  c*
i4  i4  i4  i4  i8  f*  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 i4  f*  c*
i8  i8  i8  i8  i8  f*  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 i8  f*  c*
bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  f4  f4  f8  c8  c16 bf  bf  c8
f2  f2  f2  f2  f2  f2  f2  f2  f2  f2  f4  f2  f4  f8  c8  c16 f2  f2  c8
f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f8  c8  c16 f4  f4  c8
f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  c16 c16 f8  f8  c16
c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c16 c8  c16 c8  c8  c8
c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16
i*  i*  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
f*  f*  f*  f*  f*  f*  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 f*  f*  c*
c*  c*  c*  c*  c*  c*  c*  c*  c*  c*  c8  c8  c8  c16 c8  c16 c*  c*  c*
"""


def doc_cells():
    header, *rows = (line.split() for line in DOC_TABLE.strip("\n").splitlines())
    return [(row[0], column, cell) for row in rows for column, cell in zip(header, row[1:])]


def test_the_transcribed_table_is_square_over_the_documented_types():
    cells = doc_cells()
    assert len(cells) == 18 * 18 and {r for r, _, _ in cells} == set(d.SHORT_NAMES)


@pytest.mark.parametrize("row, column, cell", doc_cells(), ids=lambda v: v)
def test_join_is_the_documented_table(row, column, cell):
    """Every cell of the documented binary table is the join of its row and column types."""
    assert d.join(row, column) == d.SHORT_NAMES[cell]


def test_join_is_a_lattice_join():
    """Commutative, associative and idempotent over every documented type: the order in which a
    program combines its operands does not change the result's type."""
    names = list(d.LATTICE)
    for a, b in itertools.product(names, names):
        assert d.join(a, b) == d.join(b, a)
        assert d.join(a, a) == a
    for a, b, c in itertools.product(names, names, names):
        assert d.join(d.join(a, b), c) == d.join(a, d.join(b, c)) == d.join(a, b, c)


def test_type_names():
    """Python int, float and complex are weak; Python bool is bool; a dtype is never weak (numpy
    says ``np.dtype('int64') == int``); the doc's short names are its types."""
    assert [d.type_name(t) for t in (int, float, complex, bool)] == ["int*", "float*", "complex*", "bool"]
    assert d.type_name(np.dtype("int64")) == "int64" and d.type_name(np.float64) == "float64"
    assert d.type_name(ml_dtypes.bfloat16) == "bfloat16" and d.type_name("bf") == "bfloat16"
    assert d.type_name("i*") == "int*" and d.type_name("u4") == "uint32"
    with pytest.raises(TypeError, match="not a type"):
        d.type_name(np.dtype("datetime64[s]"))
    with pytest.raises(ValueError):
        d.join()


def test_the_type_promotion_page_examples():
    """jnp.int16(1) + 1 -> int16; jnp.int16(1) + np.array(1) -> int64 (x64; int32 without);
    2 * int8 -> int8; jnp.int32(2) * int8 -> int32; jnp.asarray(2) -> int32 (weak)."""
    assert d.promote("int16", int) == np.dtype("int16")
    assert d.promote("int16", np.array(1).dtype, x64=True) == np.dtype("int64")
    assert d.promote("int16", np.array(1).dtype) == np.dtype("int32")
    assert d.promote(int, "int8") == np.dtype("int8")
    assert d.promote("int32", "int8") == np.dtype("int32")
    assert d.promote(int) == np.dtype("int32") and d.join(int) == "int*"


def test_default_dtypes_and_the_x64_flag():
    """x64 off: int -> int32, float -> float32, a 64-bit dtype -> its 32-bit namesake; x64 on:
    int64, float64, and 64-bit dtypes kept."""
    assert (d.canonical(int), d.canonical(float), d.canonical(complex)) == \
        (np.dtype("int32"), np.dtype("float32"), np.dtype("complex64"))
    assert (d.canonical(int, x64=True), d.canonical(float, x64=True), d.canonical(complex, x64=True)) == \
        (np.dtype("int64"), np.dtype("float64"), np.dtype("complex128"))
    assert [d.canonical(t).name for t in ("int64", "uint64", "float64", "complex128", "int8", "bfloat16")] == \
        ["int32", "uint32", "float32", "complex64", "int8", "bfloat16"]
    assert [d.canonical(t, x64=True).name for t in ("int64", "uint64", "float64", "complex128")] == \
        ["int64", "uint64", "float64", "complex128"]
    assert d.canonical("bfloat16") == np.dtype(ml_dtypes.bfloat16)


def test_promote_narrows_64_bit_joins_without_x64():
    """u4 + i4 is i8 in the table: int64 with x64, int32 without; u8 + i1 is f*: float64, and
    without x64 u8 is held as u4 first, so uint32 + int8 -> int32 (the operands are JAX arrays)."""
    assert d.promote("uint32", "int32", x64=True) == np.dtype("int64")
    assert d.promote("uint32", "int32") == np.dtype("int32")
    assert d.promote("uint64", "int8", x64=True) == np.dtype("float64")
    assert d.promote("uint64", "int8") == np.dtype("int32")
    assert d.promote("float64", "float32") == np.dtype("float32")
    assert d.promote("bfloat16", "float16") == np.dtype("float32")
    assert d.promote("bfloat16", float) == np.dtype(ml_dtypes.bfloat16)
    assert d.promote("int8", complex) == np.dtype("complex64")
    assert d.promote("int8", complex, x64=True) == np.dtype("complex128")


@pytest.mark.parametrize("rule, operands, x64, expected", [
    # jnp.sum / prod: "integer inputs will be promoted to the widest available integer dtype,
    # following numpy's behavior" (numpy: bool and signed -> int_, unsigned -> uint)
    ("sum", ("int32",), False, "int32"),   # the docstring's example: Array(21, dtype=int32)
    ("sum", ("int8",), False, "int32"),
    ("sum", ("int8",), True, "int64"),
    ("sum", ("bool",), False, "int32"),
    ("sum", ("uint8",), False, "uint32"),
    ("sum", ("uint8",), True, "uint64"),
    ("sum", ("int64",), False, "int32"),
    ("sum", ("float16",), True, "float16"),
    ("sum", ("complex64",), False, "complex64"),
    # jnp.mean: "set to float32 or float64 for non-floating-point inputs"; the docstring's example
    # of int32 is Array(3.8333335, dtype=float32)
    ("inexact", ("int32",), False, "float32"),
    ("inexact", ("int32",), True, "float32"),
    ("inexact", ("int64",), True, "float64"),
    ("inexact", ("bool",), True, "float32"),
    ("inexact", ("uint8", "int8"), False, "float32"),
    ("inexact", ("int32", float), True, "float64"),   # int32 + f* is f*: already a float
    ("inexact", ("float16",), True, "float16"),
    ("inexact", ("complex64",), True, "complex64"),
    # argsort: "If not specified, the default integer dtype will be used"
    ("index", ("float32",), False, "int32"),
    ("index", ("int8",), True, "int64"),
    ("bool", ("int32", "float32"), False, "bool"),
    ("same", ("int8", "float32", "int32"), False, "int8"),
    ("same", ("float64",), False, "float32"),
    ("select", ("bool", "int8", "uint8"), False, "int16"),
    ("select", ("int32", "float16", "float16"), False, "float16"),
    ("real", ("complex64",), False, "float32"),
    ("real", ("complex128",), True, "float64"),
    ("real", ("int8",), False, "int8"),
    ("promote", ("int8", "uint8"), False, "int16"),
    ("promote", ("int32", float), True, "float64"),
])
def test_rules_hand_worked(rule, operands, x64, expected):
    assert d.result_dtype(rule, operands, x64=x64) == np.dtype(expected)


def test_every_rule_says_what_it_is_for_and_unknown_rules_are_refused():
    assert all(rule.says and rule.name == name for name, rule in d.RULES.items())
    with pytest.raises(d.UnknownRule, match="no dtype rule 'widest'"):
        d.result_dtype("widest", ("int32",))
    with pytest.raises(ValueError, match="needs the operands"):
        d.result_dtype("promote", ())


def test_of_operands_takes_numpy_values_as_strong_and_python_scalars_as_weak():
    """A numpy array or numpy scalar is strong (np.float64(1) is a float subclass, still
    strong); a Python scalar is weak."""
    x = np.zeros(3, np.int8)
    assert d.of_operands("promote", (x, 2)) == np.dtype("int8")
    assert d.of_operands("promote", (x, np.int32(2))) == np.dtype("int32")
    assert d.of_operands("promote", (np.zeros(2, np.float16), 2.0)) == np.dtype("float16")
    assert d.of_operands("promote", (np.zeros(2, np.float16), np.float64(2.0)), x64=True) == np.dtype("float64")
    assert d.of_operands("promote", (np.zeros(2, np.float16), True)) == np.dtype("float16")
    assert d.of_operands("sum", (np.zeros(2, bool),), x64=True) == np.dtype("int64")
