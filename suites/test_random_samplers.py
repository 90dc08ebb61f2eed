"""Every ``jax.random`` sampler and key function, and ``jax.lax.rng_bit_generator``, called with each
of its parameters given a meaningful value (a shape of rank 2, a narrow or integer dtype, parameter
arrays that differ per column, ``mode='high'``, ``replace=False``, ``independent=True``, a method, an
unroll, a PRNG implementation): the draw sharded has the bits of the same draw unsharded, has the
shape and dtype asked and lies in its distribution's support. Each row of ``ROWS`` is one such call
(its JAX source, evaluated as written, is both what runs and what the reproduction prints).

The sharded run, per row and release: where the sampler takes ``out_sharding`` (and Explicit axes
exist), the call given ``out_sharding=P(...)`` jitted on an Explicit mesh, whose result must carry
that sharding in its type; else the call jitted with ``out_shardings`` on an Auto mesh; for the rows
marked so, the call under ``vmap`` of a batch of keys placed on the mesh. Its layout (mesh, device
order, spec) is fixed per row and varies across rows (``fixed_layout``), so that each row compiles
two programs whatever the examples draw (keys, seeds and parameter values are arguments).

It is judged first against numpy and the model alone: the layout model
(``conformance/model/layout.py``), the shape and dtype asked, and a small numpy model of each
distribution's support in this file (bounds, a bfloat16 grid, counts that sum to n, orthonormal rows,
a permutation per row, categories drawn each once, ...), which catches a sampler that ignores a
parameter; a parameter that only changes which bits are drawn (``mode``, ``method``, ``algorithm``)
must change them (a contrast with its default), and ``unroll`` must not. Key functions are checked
by what they mean: ``wrap_key_data`` of data round-trips through ``key_data``, ``key_impl``
identifies the implementation asked (``key`` and ``wrap_key_data`` accept it back; it is the
implementation's name where JAX represents it so), ``PRNGKey(seed, impl=...)`` is the data of
``key(seed, impl=...)``,
``clone(key)`` draws what ``key`` draws. Then against the oracle, the same call jitted on one device
(the key uncommitted, its support checked by numpy too), as far as JAX promises it. The ``jax.random``
module docstring marks the PRNG implementations (Threefry with ``jax_threefry_partitionable`` on, the
default from 0.5.0 and set here on every release; rbg; unsafe_rbg) "identical across shardings": the
raw random bits they generate, "though numerical floating point differences could lead to downstream
differences in values coming out of float-producing random samplers" (a JAX maintainer on that
table, jax-ml/jax#15484; JAX's own test of it, tests/array_test.py::test_random_bits_is_pure_map,
compares the bits sharded and on one device, exactly). A sampler is a jnp/lax program over those bits,
and the sharded and the one-device programs are two compilations of it, which XLA may round
differently (excess precision, on by default; constant reassociation): "JIT compilation does not
guarantee bitwise exact outputs, but the output should generally be within the expected precision of
the floating point representation being used" (a JAX maintainer, jax-ml/jax#26147). So a draw of an
integer, unsigned or boolean dtype (bits, key data, indices, counts, booleans) must match bit for bit,
and a floating-point draw within the tolerance JAX's own test harness allows two compilations of one
function (``COMPILATION_TOLERANCE`` of conformance/checking/tolerance.py, shared with
suites/test_random.py); each device's block must hold the sharded draw's bits there (replicas agree
exactly: they run one program).

A second property calls every row in the other calling contexts (eagerly on arguments placed on its
mesh, in a shard_map body, under vmap of a batch of keys, under grad with respect to its
floating-point parameters; the rows drawn under vmap above, also under jit with one key), each
against the same unsharded run by the same rule; under vmap of rbg keys the oracle is the rule the
jax.random docstring states for them (the whole batch drawn from the first key), and a float32
draw's gradient is also held to central differences of the draw (no autodiff)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance.checking.case import Case
from conformance.checking.layouts import check_layout
from conformance.checking.repro import describe_mesh, scripted_case, spec_literal
from conformance.checking.tolerance import compare_compilations
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel, Spec, spec_axes

pytestmark = pytest.mark.random_samplers
DEVICES = bridge.live_device_ids()
EXAMPLES = max(2, settings().max_examples // 50)  # a row is one call: compilation dominates
BATCH = 8  # the keys a vmapped row draws from
F16, BF = np.float16, jnp.bfloat16


# --- the examples ---------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class Row:
    """One call: the ``entry`` and the ``parameters`` it passes and checks, a short ``form``, its
    ``source`` (a lambda of the first argument, the drawn ``args`` and ``**out``, which receives
    ``out_sharding=``), the first argument's kind (``KEY_KINDS``), the result's shape and dtype, the
    support the values must lie in (numpy checks of the values and args), and how it is sharded."""

    entry: str
    parameters: Tuple[str, ...]
    form: str
    source: str
    first: str
    shape: Tuple[int, ...]
    dtype: str
    args: Callable[[Callable], tuple] = lambda draw: ()
    support: Callable[[np.ndarray, tuple], list] = lambda x, args: []
    reference: str = ""  # the reference's source where it is not ``source`` (clone: the key's own draw)
    # the same call with the parameter under test at another value (its default), and what it is: the
    # sharded draw must differ from it (a parameter that only changes which bits are drawn)
    contrast: Tuple[str, ...] = ()
    vmapped: bool = False  # drawn under vmap from a batch of keys placed on the mesh
    # the row's call vmapped over a batch of first arguments, where JAX documents it otherwise than the
    # call per key, stacked (a lambda of the batch and the args): rbg keys (see SAMPLER_CONTEXTS' comments)
    vmap_reference: str = ""
    sampler: str = ""  # the entry of the source that takes out_sharding= (default: ``entry``, if it is a parameter)
    needs: Tuple[Tuple[str, str], ...] = ()  # more (entry, parameter) the source calls
    # more checks of what the parameters mean: (case, the first argument's data, args, the sharded draw)
    checks: Optional[Callable[[Case, np.ndarray, tuple, np.ndarray], None]] = None

    @property
    def id(self) -> str:
        return f"{self.entry.split('.')[-1]}-{self.form}"

    def __repr__(self) -> str:
        return f"Row({self.id!r})"

    def _repr_pretty_(self, printer, cycle) -> None:  # (Hypothesis's printer of the failing example)
        printer.text(repr(self))

    @property
    def takes_out_sharding(self) -> bool:
        """Whether the installed JAX takes the sampler's ``out_sharding=`` on Explicit axes."""
        sampler = self.sampler or (self.entry if "out_sharding" in self.parameters else "")
        return (bool(sampler) and not self.vmapped and compat.FEATURES["explicit_sharding"].available
                and compat.parameter_feature(sampler, "out_sharding").available)

    @property
    def out_shape(self) -> Tuple[int, ...]:
        return ((BATCH,) if self.vmapped else ()) + self.shape


@dataclass(frozen=True)
class Draw:
    """One example of a row: the first argument's data (key words, a batch of them, or a seed),
    the drawn args, the mesh, its axis type ("Explicit" where the row passes out_sharding), the
    output's spec and (vmapped rows) the keys' spec."""

    row: Row
    data: np.ndarray
    args: tuple
    mesh: MeshModel
    axis_type: str
    out_spec: Spec
    key_spec: Spec = field(default=())

    @property
    def way(self) -> str:
        return "vmap" if self.row.vmapped else "out_sharding" if self.axis_type == "Explicit" else "out_shardings"


# The first argument of a row's source, by kind: the shape of its data (uint32 words; a seed is an
# int32 scalar), how a script spells it from ``data``, how it is made (uncommitted).
KEY_KINDS = {
    "typed": ((2,), "jax.random.wrap_key_data({})", lambda d: jax.random.wrap_key_data(d)),
    "raw": ((2,), "jnp.asarray({})", lambda d: jnp.asarray(d)),
    "words4": ((4,), "jnp.asarray({})", lambda d: jnp.asarray(d)),
    "seed": ((), "jnp.asarray({})", lambda d: jnp.asarray(d)),
}


def first_data(kind: str, batch: tuple = ()) -> st.SearchStrategy:
    """The first argument's data: uint32 key words (distinct across a batch), or an int32 seed."""
    if kind == "seed":
        return hnp.arrays(np.int32, batch, elements=st.integers(0, 2**31 - 1))
    words = KEY_KINDS[kind][0]
    return hnp.arrays(np.uint32, (*batch, *words), elements=st.integers(0, 2**32 - 1), unique=bool(batch))


@functools.lru_cache(maxsize=None)
def fixed_layout(index: int, shape: Tuple[int, ...]) -> Tuple[MeshModel, Spec]:
    """The mesh and spec the row numbered ``index`` is sharded with, fixed per row so that its
    sharded program compiles once (compilation dominates: a gamma-based sampler takes seconds):
    across the rows they vary over the mesh shapes of the devices with one or two axes (all of
    them, e.g. (8,), (2, 4), (4, 2)), three device orders (as listed, reversed, odd then even
    positions) and the dimension cut first (each axis, in mesh order, on the first dimension from
    there whose remaining side it divides)."""
    ids, n = DEVICES, len(DEVICES)
    shapes = [(n,)] + [(a, n // a) for a in range(2, n) if n % a == 0]
    orders = [ids, ids[::-1], ids[1::2] + ids[::2]]
    mesh_shape = shapes[index % len(shapes)]
    mesh = MeshModel(tuple(orders[index // len(shapes) % len(orders)]), mesh_shape, ("a", "b")[:len(mesh_shape)])
    entries, left = [[] for _ in shape], list(shape)
    for name, size in zip(mesh.axis_names, mesh_shape):
        for d in [(index + k) % len(shape) for k in range(len(shape))]:
            if size > 1 and left[d] % size == 0:
                entries[d].append(name)
                left[d] //= size
                break
    return mesh, tuple(None if not e else e[0] if len(e) == 1 else tuple(e) for e in entries)


@st.composite
def draws(draw, row: Row) -> Draw:
    """A row's example: its data and args drawn, its layout fixed (``fixed_layout``); a vmapped
    row's keys cut along their batch, its output laid out as its keys (even rows) or replicated."""
    index = ROWS.index(row)
    data = draw(first_data(row.first, (BATCH,) if row.vmapped else ()))
    args = tuple(row.args(draw))
    if row.vmapped:
        mesh, key_spec = fixed_layout(index, (BATCH,))
        out_spec = key_spec if index % 2 == 0 else ()
        return Draw(row, data, args, mesh, "Auto", out_spec, key_spec)
    mesh, out_spec = fixed_layout(index, row.out_shape)
    return Draw(row, data, args, mesh, "Explicit" if row.takes_out_sharding else "Auto", out_spec)


# --- drawn parameter values -----------------------------------------------------------------------
def floats(draw, values, size: int, dtype) -> np.ndarray:
    """``size`` values sampled from ``values``, as ``dtype``."""
    return np.asarray([draw(st.sampled_from(values)) for _ in range(size)], dtype=dtype)


def interval_pair(draw, dtype, lows=(-2, -1, 0, 1), widths=(0.5, 1.0, 2.0)):
    """Per column (2): lo = j * w and hi = lo + w, every value exact in ``dtype``; the two columns'
    j and w differ (a sampler that reads one column's bounds for both leaves some value outside)."""
    j = np.asarray(draw(st.permutations(lows))[:2], np.float32)
    w = np.asarray(draw(st.permutations(widths))[:2], np.float32)
    return (j * w).astype(dtype), ((j + 1) * w).astype(dtype)


def two_of(draw, values, dtype) -> np.ndarray:
    """Two distinct values of ``values``, as ``dtype``."""
    return np.asarray(draw(st.permutations(values))[:2], dtype)


def distinct_ints(draw, shape) -> np.ndarray:
    offset = draw(st.integers(0, 1000))
    return (np.arange(int(np.prod(shape)), dtype=np.int32) * 7 + offset).reshape(shape)


# --- numpy's model of each distribution's support -------------------------------------------------
def f64(x) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def per_column(x, lo, hi, *, closed=False) -> bool:
    x, lo, hi = f64(x), f64(lo), f64(hi)
    return bool(np.all((x >= lo) & ((x <= hi) if closed else (x < hi))))


def finite(x) -> list:
    return [("every value finite", bool(np.isfinite(f64(x)).all()))]


def uniform_support(x, args) -> list:
    """lo = j w, hi = lo + w: the bfloat16 draw is lo + w k / 128 for an integer k in [0, 128)."""
    lo, hi = f64(args[0]), f64(args[1])
    k = (f64(x) - lo) / (hi - lo) * 128
    return [("every value in its column's [minval, maxval)", per_column(x, lo, hi)),
            ("every value on its column's bfloat16 grid lo + (hi - lo) k / 128", bool(np.all(k == np.round(k))))]


def permuted_rows(x, args) -> list:
    """independent=True along axis 1: each row a permutation of its own row, not all alike."""
    (a,) = args
    x = np.asarray(x)
    each = all(np.array_equal(np.sort(x[i]), np.sort(a[i])) for i in range(a.shape[0]))
    orders = {tuple(int(np.flatnonzero(a[i] == v)[0]) for v in x[i]) for i in range(a.shape[0])} if each else set()
    return [("each row a permutation of the same row of x", each),
            ("the rows permuted independently (not all by the same permutation)", len(orders) > 1)]


def bernoulli_support(x, args) -> list:
    (p,) = args
    x = np.asarray(x)
    return [("p = 0 columns all False", bool(not x[:, p == 0].any())),
            ("p = 1 columns all True", bool(x[:, p == 1].all()))]


def categorical_logits(draw) -> np.ndarray:
    """Logits (5, 8): each column one category at -inf, the others drawn."""
    logits = floats(draw, (-1.0, 0.0, 2.0), 40, np.float32).reshape(5, 8)
    logits[[draw(st.integers(0, 4)) for _ in range(8)], np.arange(8)] = -np.inf
    return logits


def categorical_support(x, args) -> list:
    """logits (5, 8) along axis 0, one category -inf per column, 4 draws without replacement: each
    column the other 4 categories, each once."""
    (logits,) = args
    x = np.asarray(x)
    allowed = [sorted(int(c) for c in np.flatnonzero(np.isfinite(logits[:, j]))) for j in range(logits.shape[1])]
    return [("each column: the categories of finite logits, each once",
             all(sorted(x[:, j].tolist()) == allowed[j] for j in range(logits.shape[1])))]


def choice_with_p_support(x, args) -> list:
    """a (4, 16) along axis 1, p zero at two columns, 8 without replacement: 8 distinct columns of p >
    0, the same columns for every row."""
    a, p = args
    x = np.asarray(x)
    cols = [int(np.flatnonzero(a[0] == v)[0]) if v in a[0] else -1 for v in x[0]]
    return [("8 distinct columns, each of p > 0", len(set(cols)) == 8 and all(c >= 0 and p[c] > 0 for c in cols)),
            ("every row takes the same columns of a", bool(np.array_equal(x, a[:, cols])))]


def distinct_in_range(n):
    def support(x, args):
        x = np.asarray(x)
        return [(f"every value in [0, {n})", bool(np.all((x >= 0) & (x < n)))),
                ("the values distinct (replace=False)", len(set(x.tolist())) == x.size)]
    return support


def column_bounds(*bounds, closed=True):
    """Per column j, values within bounds[j] = (lo, hi)."""
    def support(x, args):
        x = f64(x)
        return [(f"column {j} within [{lo}, {hi}]", per_column(x[:, j], lo, hi, closed=closed))
                for j, (lo, hi) in enumerate(bounds)] + finite(x)
    return support


def at_least(low):
    def support(x, args):
        return [(f"every value >= {low}", bool(np.all(f64(x) >= low)))] + finite(x)
    return support


def integer_counts(x, args) -> list:
    """binomial: integer counts in [0, n] per column."""
    n, _ = args
    x = f64(x)
    return [("every count an integer", bool(np.all(x == np.round(x)))),
            ("every count in [0, n] of its column", per_column(x, 0, n, closed=True))]


def multinomial_support(x, args) -> list:
    n, p = args
    x = f64(x)
    return [("every count a non-negative integer", bool(np.all((x >= 0) & (x == np.round(x))))),
            ("each row's counts sum to its n", bool(np.array_equal(x.sum(-1), f64(n)))),
            ("no count where p = 0", bool(not x[:, f64(p) == 0].any()))]


def dirichlet_support(x, args) -> list:
    x = f64(x)
    return [("every value >= 0", bool(np.all(x >= 0))),
            ("each row sums to 1 within 4 float16 eps", bool(np.all(np.abs(x.sum(-1) - 1) <= 4 * 2.0**-10))),
            ("the component of alpha 500 above 0.9", bool(np.all(x[:, 2] > 0.9)))]


def orthonormal_rows(x, args) -> list:
    """(8, 2, 3) complex64 with n=2 <= m=3: A A^H = I_2 (numpy, in complex128)."""
    a = np.asarray(x).astype(np.complex128)
    gram = a @ np.conj(np.swapaxes(a, -1, -2))
    return [("A A^H = I_2 within 1e-5", bool(np.allclose(gram, np.eye(2), rtol=0, atol=1e-5)))]


def in_unit_l1_ball(x, args) -> list:
    norm = np.abs(f64(x)).sum(-1)
    return [("every point's L1 norm <= 1 within 4 float16 eps", bool(np.all(norm <= 1 + 4 * 2.0**-10)))]


def rademacher_support(x, args) -> list:
    return [("every value -1 or 1", bool(np.all(np.isin(np.asarray(x), (-1, 1)))))]


def mvn_support(x, args) -> list:
    """mean (50, -50, 0), cov diag(0.01, 4, 1): each coordinate within 8 standard deviations."""
    mean, cov = args
    dev = np.abs(f64(x) - f64(mean)) / np.sqrt(np.diag(f64(cov)))
    return [("each coordinate within 8 standard deviations of its mean", bool(np.all(dev <= 8)))] + finite(x)


def poisson_support(x, args) -> list:
    (lam,) = args
    x = np.asarray(x)
    return [("lam = 0: every count 0", bool(not x[:, 0].any())),
            ("lam = 400: every count within [240, 560]", per_column(x[:, 1], 240, 560, closed=True))]


# --- checks of what key functions and options mean (a row's ``checks``, in the sharded way) -------
def check_key_impl(case, k, impl: str, of: str) -> None:
    """``jax.random.key_impl`` of key ``k`` identifies ``impl`` as JAX states it: it is the
    identifier of ``key(0, impl=impl)``'s implementation, and ``key(impl=)`` and
    ``wrap_key_data(impl=)`` take it back, giving keys of that implementation (key_impl "returns a
    hashable identifier of its PRNG implementation", which they accept: jax-ml/jax#17983, the change
    that introduced it); where JAX represents a built-in implementation by its name
    (``compat.KEY_IMPL_OF_A_BUILTIN_IS_ITS_NAME``, from 0.4.36: jax-ml/jax#24593), it is the name
    ``impl`` itself. Before, it is an opaque ``PRNGSpec`` whose ``str`` is the implementation's short
    tag ('urbg' for unsafe_rbg, 'fry' for threefry2x32), which JAX never gave as a name."""
    spec = jax.random.key_impl(k)
    named = jax.random.key(0, impl=impl)
    case.equal(f"jax.random.key_impl of {of} vs of key(0, impl={impl!r})", spec, jax.random.key_impl(named))
    again = case.accepts(f"jax.random.key(0, impl=jax.random.key_impl({of}))", lambda: jax.random.key(0, impl=spec))
    case.equal(f"the dtype of key(0, impl=key_impl({of})) vs of key(0, impl={impl!r})", again.dtype, named.dtype)
    case.same_bits(f"key_data of key(0, impl=key_impl({of})) vs of key(0, impl={impl!r})",
                   np.asarray(jax.random.key_data(again)), np.asarray(jax.random.key_data(named)))
    rewrapped = case.accepts(f"jax.random.wrap_key_data(key_data({of}), impl=jax.random.key_impl({of}))",
                             lambda: jax.random.wrap_key_data(jax.random.key_data(k), impl=spec))
    case.equal(f"the dtype of {of} rewrapped with its key_impl vs {of}'s", rewrapped.dtype, k.dtype)
    case.same_bits(f"key_data of {of} rewrapped with its key_impl vs {of}'s",
                   np.asarray(jax.random.key_data(rewrapped)), np.asarray(jax.random.key_data(k)))
    if compat.KEY_IMPL_OF_A_BUILTIN_IS_ITS_NAME:
        case.equal(f"jax.random.key_impl of {of}", spec, impl)


def impl_of_key(impl: str, make: Callable[[np.ndarray], object], words: int):
    """The key that ``make`` builds from the first argument is of ``impl`` (``check_key_impl``) and
    holds ``words`` words."""
    def check(case, data, args, got):
        k = case.accepts(f"the {impl} key", lambda: make(data))
        check_key_impl(case, k, impl, "the key")
        case.equal("the key's data shape", tuple(np.shape(jax.random.key_data(k))), (words,))
    return check


def round_trip(impl: str, make):
    """key_data of the key wrapped from the data is the data; the key is of ``impl`` (``check_key_impl``)."""
    def check(case, data, args, got):
        k = case.accepts("the wrapped key", lambda: make(data))
        case.same_bits("jax.random.key_data of the wrapped key", np.asarray(jax.random.key_data(k)), data)
        check_key_impl(case, k, impl, "the wrapped key")
    return check


def check_prng_key_is_key_data(case, seed, args, got):
    """PRNGKey(seed, impl='rbg') is the uint32 data of key(seed, impl='rbg'), four words."""
    raw = np.asarray(case.accepts("jax.random.PRNGKey(seed, impl='rbg')",
                                  lambda: jax.random.PRNGKey(seed, impl="rbg")))
    case.equal("the PRNGKey's dtype and shape", (raw.dtype.name, raw.shape), ("uint32", (4,)))
    typed = jax.random.key(seed, impl="rbg")
    case.same_bits("the PRNGKey vs key_data(key(seed, impl='rbg'))", raw, np.asarray(jax.random.key_data(typed)))


def check_key_dtype(impl: str):
    def check(case, seed, args, got):
        k = jax.random.key(seed, dtype=jax.random.key_dtype(impl))
        check_key_impl(case, k, impl, "key(seed, dtype=key_dtype(impl))")
        case.equal("the key's dtype vs key_dtype(impl)", k.dtype, jax.random.key_dtype(impl_spec=impl))
    return check


def check_algorithms_differ(case, data, args, got):
    """RNG_THREE_FRY draws other bits than RNG_PHILOX from the same state (2^-256 to agree by chance),
    and the new state is four uint32 words."""
    philox = lax_rbg(data, jax.lax.RandomAlgorithm.RNG_PHILOX)
    threefry = lax_rbg(data, jax.lax.RandomAlgorithm.RNG_THREE_FRY)
    case.true("RNG_THREE_FRY's bits differ from RNG_PHILOX's", np.asarray(philox[1]).tobytes()
              != np.asarray(threefry[1]).tobytes())
    case.equal("the new state's dtype and shape", (np.asarray(philox[0]).dtype.name, np.shape(philox[0])),
               ("uint32", (4,)))


@functools.lru_cache(maxsize=None)
def _rbg_jit(algorithm):
    return jax.jit(lambda key: jax.lax.rng_bit_generator(key, (8, 4), jnp.uint8, algorithm))


def lax_rbg(data, algorithm):
    return _rbg_jit(algorithm)(jnp.asarray(data))


def check_unroll_changes_nothing(case, data, args, got):
    """unroll (of the lax.scan inside) changes how the loop runs, not what it draws: the draw with
    unroll=2 is the draw with the default unroll=1 (on one device), bit for bit."""
    once = case.accepts("the draw with unroll=1", lambda: _multinomial_unrolled_once()(jax.random.wrap_key_data(data),
                                                                                        *args))
    case.same_bits("the sharded draw with unroll=2 vs the draw with unroll=1", got, np.asarray(once))


@functools.lru_cache(maxsize=None)
def _multinomial_unrolled_once():
    return jax.jit(lambda key, n, p: jax.random.multinomial(key, n, p, shape=(8,), dtype=jnp.float16))


# --- the table ------------------------------------------------------------------------------------
ROWS = []


def row(entry, parameters, form, source, first="typed", *, shape=(8, 2), dtype="float32", **kwargs):
    r = Row(f"jax.random.{entry}" if "." not in entry else entry, tuple(parameters.split()), form, source, first,
            tuple(shape), dtype, **kwargs)
    assert r.id not in {x.id for x in ROWS}, f"row {r.id} twice"
    ROWS.append(r)
    return r


def row_by_id(name: str) -> Row:
    return next(r for r in ROWS if r.id == name)


row("uniform", "key shape dtype minval maxval out_sharding", "bfloat16 per-column bounds",
    "lambda key, lo, hi, **out: jax.random.uniform(key, (8, 2), jnp.bfloat16, lo, hi, **out)",
    dtype="bfloat16", args=lambda d: interval_pair(d, BF), support=uniform_support)
row("normal", "dtype out_sharding", "float16",
    "lambda key, **out: jax.random.normal(key, (8, 2), jnp.float16, **out)", dtype="float16",
    support=lambda x, a: finite(x))
row("bits", "dtype out_sharding", "uint8",
    "lambda key, **out: jax.random.bits(key, (8, 4), jnp.uint8, **out)", shape=(8, 4), dtype="uint8")
row("randint", "key shape minval maxval dtype out_sharding", "int8 per-column bounds",
    "lambda key, lo, hi, **out: jax.random.randint(key, (8, 2), lo, hi, jnp.int8, **out)", "raw", dtype="int8",
    args=lambda d: (lambda lo: (lo, (lo.astype(np.int32) + two_of(d, (1, 2, 50), np.int32)).astype(np.int8)))(
        two_of(d, (-100, -3, 0, 60), np.int8)),
    support=lambda x, a: [("every value in its column's [minval, maxval)", per_column(x, a[0], a[1]))])
row("permutation", "independent out_sharding", "axis 1 independent",
    "lambda key, x, **out: jax.random.permutation(key, x, 1, True, **out)", shape=(8, 4), dtype="int32",
    args=lambda d: (distinct_ints(d, (8, 4)),), support=permuted_rows)
row("truncated_normal", "key lower upper shape dtype out_sharding", "bfloat16 per-column bounds",
    "lambda key, lower, upper, **out: jax.random.truncated_normal(key, lower, upper, (8, 2), jnp.bfloat16, **out)",
    # (a lower bound of 0 is left out: its bfloat16 draws then return 0 itself once in 128 values, too seldom
    # for a strict entry on drawn keys; test_a_bfloat16_truncated_normal_draw_lies_in_its_open_interval holds
    # it, cause truncated_normal_returns_its_zero_bound)
    dtype="bfloat16", args=lambda d: interval_pair(d, BF, lows=(-3, -1, 1, 2)),
    support=lambda x, a: [("every value in its column's (lower, upper)", per_column(x, a[0], a[1]) and
                           bool(np.all(f64(x) > f64(a[0]))))])
row("bernoulli", "key p shape mode out_sharding", "per-column p mode high",
    "lambda key, p, **out: jax.random.bernoulli(key, p, (8, 4), 'high', **out)", shape=(8, 4), dtype="bool",
    args=lambda d: (np.asarray(d(st.permutations([0.0, 1.0, 0.5, 0.25])), np.float32),), support=bernoulli_support)
row("gumbel", "key shape dtype mode out_sharding", "bfloat16 mode high",
    "lambda key, **out: jax.random.gumbel(key, (8, 2), jnp.bfloat16, 'high', **out)", dtype="bfloat16",
    support=lambda x, a: finite(x),
    contrast=("lambda key, **out: jax.random.gumbel(key, (8, 2), jnp.bfloat16, 'low', **out)",
              "the draw with mode='low'"))
row("categorical", "key logits axis shape replace mode out_sharding", "axis 0 without replacement mode high",
    "lambda key, logits, **out: jax.random.categorical(key, logits, 0, (4, 8), False, 'high', **out)",
    shape=(4, 8), dtype="int32", args=lambda d: (categorical_logits(d),), support=categorical_support,
    contrast=("lambda key, logits, **out: jax.random.categorical(key, logits, 0, (4, 8), False, 'low', **out)",
              "the draw with mode='low' (8 orders of 4 categories: 24^-8 to agree by chance)"))
row("choice", "key a shape replace p axis mode", "axis 1 without replacement by p mode high",
    "lambda key, a, p: jax.random.choice(key, a, (8,), False, p, 1, 'high')", shape=(4, 8), dtype="int32",
    args=lambda d: (distinct_ints(d, (4, 16)),
                    (lambda z: np.where(np.isin(np.arange(16), z), 0.0, 1.0).astype(np.float32))(
                        d(st.lists(st.integers(0, 15), min_size=2, max_size=2, unique=True)))),
    support=choice_with_p_support,
    contrast=("lambda key, a, p: jax.random.choice(key, a, (8,), False, p, 1, 'low')",
              "the draw with mode='low' (8 of 14 columns in order: about 1e-8 to agree by chance)"))
row("choice", "key a shape replace", "of an int without replacement",
    "lambda key: jax.random.choice(key, 16, (8,), False)", shape=(8,), dtype="int32", support=distinct_in_range(16))
row("beta", "key a b shape dtype out_sharding", "float16 a=200,1 b=1,200",
    "lambda key, a, b, **out: jax.random.beta(key, a, b, (8, 2), jnp.float16, **out)", dtype="float16",
    args=lambda d: (np.array([200, 1], F16), np.array([1, 200], F16)),
    support=column_bounds((0.8, 1.0), (0.0, 0.2)))
row("binomial", "key n p shape dtype", "float16 per-column n and p under vmap",
    "lambda key, n, p: jax.random.binomial(key, n, p, (2,), jnp.float16)", shape=(2,), dtype="float16",
    vmapped=True, args=lambda d: (np.array([d(st.sampled_from((10, 12))), d(st.sampled_from((2, 3)))], F16),
                                  floats(d, (0.5, 0.75), 2, F16)),
    support=lambda x, a: integer_counts(np.asarray(x).reshape(-1, 2), a))
row("cauchy", "key shape dtype out_sharding", "bfloat16",
    "lambda key, **out: jax.random.cauchy(key, (8, 2), jnp.bfloat16, **out)", dtype="bfloat16",
    support=lambda x, a: [("no value NaN", bool(not np.isnan(f64(x)).any()))])
row("chisquare", "key df shape dtype out_sharding", "float16 df=1,400",
    "lambda key, df, **out: jax.random.chisquare(key, df, (8, 2), jnp.float16, **out)", dtype="float16",
    args=lambda d: (np.array([1, 400], F16),), support=column_bounds((0.0, 60.0), (176.0, 624.0)))
row("dirichlet", "key alpha shape dtype out_sharding", "float16 alpha 0.5,0.5,500",
    "lambda key, alpha, **out: jax.random.dirichlet(key, alpha, (8,), jnp.float16, **out)", shape=(8, 3),
    dtype="float16", args=lambda d: (np.array([0.5, 0.5, 500], F16),), support=dirichlet_support)
row("double_sided_maxwell", "key loc scale shape dtype", "bfloat16 shape (8,) added to loc=64,-64",
    "lambda key, loc, scale: jax.random.double_sided_maxwell(key, loc, scale, (8,), jnp.bfloat16)",
    dtype="bfloat16", args=lambda d: (np.array([64, -64], BF), floats(d, (0.5, 1.0), 2, BF)),
    support=lambda x, a: [("every value within 12 scales (+ 1 bfloat16 ulp) of its column's loc", bool(np.all(
        np.abs(f64(x) - f64(a[0])) <= 12 * f64(a[1]) + 0.5)))])
row("exponential", "key shape dtype out_sharding", "bfloat16",
    "lambda key, **out: jax.random.exponential(key, (8, 2), jnp.bfloat16, **out)", dtype="bfloat16",
    support=at_least(0))
row("f", "key dfnum dfden shape dtype out_sharding", "float16 df=1000,1",
    "lambda key, dfnum, dfden, **out: jax.random.f(key, dfnum, dfden, (8, 2), jnp.float16, **out)", dtype="float16",
    args=lambda d: (np.array([1000, 1], F16), np.array([1000, 1], F16)),
    support=lambda x, a: at_least(0)(x, a) + column_bounds((0.5, 1.5))(x[:, :1], a))
row("gamma", "key a shape dtype out_sharding", "bfloat16 a=0.5,300",
    "lambda key, a, **out: jax.random.gamma(key, a, (8, 2), jnp.bfloat16, **out)", dtype="bfloat16",
    args=lambda d: (np.array([0.5, 300], BF),), support=lambda x, a: at_least(0)(x, a) + column_bounds(
        (0.0, 40.0), (160.0, 440.0))(x, a))
row("generalized_normal", "key p shape dtype out_sharding", "float16 p=50",
    "lambda key, p, **out: jax.random.generalized_normal(key, p, (8, 2), jnp.float16, **out)", dtype="float16",
    args=lambda d: (np.array(50, F16),), support=column_bounds((-1.2, 1.2), (-1.2, 1.2)))
row("geometric", "key p shape dtype out_sharding", "int16",
    "lambda key, p, **out: jax.random.geometric(key, p, (8, 2), jnp.int16, **out)", dtype="int16",
    args=lambda d: (floats(d, (0.2, 0.5, 0.9), 2, np.float32),), support=at_least(1))
row("laplace", "key shape dtype out_sharding", "float16",
    "lambda key, **out: jax.random.laplace(key, (8, 2), jnp.float16, **out)", dtype="float16",
    support=lambda x, a: finite(x))
row("logistic", "key shape dtype out_sharding", "bfloat16",
    "lambda key, **out: jax.random.logistic(key, (8, 2), jnp.bfloat16, **out)", dtype="bfloat16",
    support=lambda x, a: finite(x))
row("loggamma", "key a shape dtype out_sharding", "bfloat16 a=0.001,2",
    "lambda key, a, **out: jax.random.loggamma(key, a, (8, 2), jnp.bfloat16, **out)", dtype="bfloat16",
    args=lambda d: (np.array([0.001, 2], BF),), support=lambda x, a: finite(x))
row("lognormal", "key sigma shape dtype out_sharding", "float16 sigma=1,0.01",
    "lambda key, sigma, **out: jax.random.lognormal(key, sigma, (8, 2), jnp.float16, **out)", dtype="float16",
    args=lambda d: (np.array([1, 0.01], F16),), support=lambda x, a: at_least(0)(x, a) + column_bounds(
        (0.9, 1.1))(x[:, 1:], a))
# (bfloat16: with out_sharding on an Explicit mesh the draw is a bfloat16 ulp off the unsharded one at
# some elements, within COMPILATION_TOLERANCE: on one device XLA keeps the bfloat16 squares in float32,
# excess precision, which the sharded program's Sharding custom calls, copies once partitioned, stop)
row("maxwell", "key shape dtype out_sharding", "bfloat16",
    "lambda key, **out: jax.random.maxwell(key, (8, 2), jnp.bfloat16, **out)", dtype="bfloat16",
    support=at_least(0))
row("multinomial", "key n p shape dtype unroll", "n p shape dtype float16 unroll 2",
    "lambda key, n, p: jax.random.multinomial(key, n, p, shape=(8,), dtype=jnp.float16, unroll=2)",
    shape=(8, 3), dtype="float16",
    args=lambda d: (floats(d, (0, 3, 10), 8, F16), np.array([0.5, 0.0, 0.5], F16)),
    support=multinomial_support, checks=check_unroll_changes_nothing)
for method in ("eigh", "svd"):
    row("multivariate_normal", "key mean cov shape dtype method out_sharding", f"bfloat16 method {method}",
        f"lambda key, mean, cov, **out: jax.random.multivariate_normal(key, mean, cov, (8,), jnp.bfloat16, "
        f"{method!r}, **out)", shape=(8, 3), dtype="bfloat16",
        args=lambda d: (np.array([50, -50, 0], np.float32), np.diag([0.01, 4, 1]).astype(np.float32)),
        support=mvn_support,
        contrast=("lambda key, mean, cov, **out: jax.random.multivariate_normal(key, mean, cov, (8,), jnp.bfloat16, "
                  "'cholesky', **out)", "the draw with method='cholesky' (the variances are distinct: the "
                  "eigenvectors come in another order)"))
row("orthogonal", "key n shape dtype m out_sharding", "complex64 2x3",
    "lambda key, **out: jax.random.orthogonal(key, 2, (8,), jnp.complex64, 3, **out)", shape=(8, 2, 3),
    dtype="complex64", support=orthonormal_rows)
row("pareto", "key b shape dtype out_sharding", "bfloat16 b=1,200",
    "lambda key, b, **out: jax.random.pareto(key, b, (8, 2), jnp.bfloat16, **out)", dtype="bfloat16",
    args=lambda d: (np.array([1, 200], BF),), support=lambda x, a: at_least(1)(x, a) + column_bounds(
        (1.0, 1.1))(x[:, 1:], a))
row("poisson", "key lam shape dtype out_sharding", "int16 lam=0,400",
    "lambda key, lam, **out: jax.random.poisson(key, lam, (8, 2), jnp.int16, **out)", dtype="int16",
    args=lambda d: (np.array([0, 400], np.float32),), support=poisson_support)
row("rademacher", "key shape dtype out_sharding", "int8",
    "lambda key, **out: jax.random.rademacher(key, (8, 2), jnp.int8, **out)", dtype="int8",
    support=rademacher_support)
# (float32: a float16 or bfloat16 draw is inf whenever its uniform draw is 0, one value in 1024 in float16
# (met on 0.6.1, 2026-12-06), too seldom for a strict entry on drawn keys;
# test_a_float16_rayleigh_draw_lies_in_its_support holds it, cause rayleigh_returns_inf. In float32 it is
# one value in 2^23: the largest finite value, at u = 2^-23, is sqrt(46 ln 2) scale = 5.65 scale)
row("rayleigh", "key scale shape dtype out_sharding", "float32 scale=1,0.01",
    "lambda key, scale, **out: jax.random.rayleigh(key, scale, (8, 2), jnp.float32, **out)",
    args=lambda d: (np.array([1, 0.01], np.float32),), support=lambda x, a: at_least(0)(x, a) + column_bounds(
        (0.0, 0.07))(x[:, 1:], a))
row("t", "key df shape dtype out_sharding", "bfloat16",
    "lambda key, df, **out: jax.random.t(key, df, (8, 2), jnp.bfloat16, **out)", dtype="bfloat16",
    args=lambda d: (floats(d, (1.0, 3.0, 30.0), 2, BF),), support=lambda x, a: finite(x))
row("triangular", "key left mode right shape dtype out_sharding", "float16 per-column bounds",
    "lambda key, left, mode, right, **out: jax.random.triangular(key, left, mode, right, (8, 2), jnp.float16, "
    "**out)", dtype="float16",
    args=lambda d: (np.array([0, 10], F16), np.array([0.5, 15], F16), np.array([1, 20], F16)),
    support=lambda x, a: [("every value in its column's [left, right]", per_column(x, a[0], a[2], closed=True))])
row("wald", "key mean shape dtype out_sharding", "float16",
    "lambda key, mean, **out: jax.random.wald(key, mean, (8, 2), jnp.float16, **out)", dtype="float16",
    args=lambda d: (floats(d, (0.5, 2.0), 2, F16),), support=at_least(0))
# (float32: a bfloat16 or float16 draw returns 0 whenever its uniform draw is 0, one value in 128 in
# bfloat16, too seldom for a strict entry on drawn keys; test_a_bfloat16_weibull_min_draw_lies_in_its_open_support
# holds it, cause weibull_min_returns_zero)
row("weibull_min", "key scale concentration shape dtype", "float32 scale=1,100 concentration 200",
    "lambda key, scale, concentration: jax.random.weibull_min(key, scale, concentration, (8, 2), jnp.float32)",
    dtype="float32", args=lambda d: (np.array([1, 100], np.float32), np.array([200, 200], np.float32)),
    support=column_bounds((0.8, 1.2), (80.0, 120.0)))
row("ball", "key d p shape dtype out_sharding", "float16 d=3 L1",
    "lambda key, p, **out: jax.random.ball(key, 3, p, (8,), jnp.float16, **out)", shape=(8, 3), dtype="float16",
    args=lambda d: (np.array(1, F16),), support=in_unit_l1_ball)
row("jax.lax.rng_bit_generator", "key shape dtype algorithm out_sharding", "uint8 RNG_PHILOX",
    "lambda key, **out: lax.rng_bit_generator(key, (8, 4), jnp.uint8, lax.RandomAlgorithm.RNG_PHILOX, **out)[1]",
    "words4", shape=(8, 4), dtype="uint8", checks=check_algorithms_differ,
    vmap_reference="lambda keys: lax.rng_bit_generator(keys[0], (8, 8, 4), jnp.uint8, "
                   "lax.RandomAlgorithm.RNG_PHILOX)[1]")
# --- key functions, each drawn through a sampler (sharded as that sampler is) ---------------------
row("key", "seed impl", "unsafe_rbg through uniform",
    "lambda seed, **out: jax.random.uniform(jax.random.key(seed, impl='unsafe_rbg'), (8, 2), **out)", "seed",
    sampler="jax.random.uniform", support=lambda x, a: [("every value in [0, 1)", per_column(x, 0, 1))],
    checks=impl_of_key("unsafe_rbg", lambda s: jax.random.key(s, impl="unsafe_rbg"), 4),
    vmap_reference="lambda seeds: jax.random.uniform(jax.random.key(seeds[0], impl='unsafe_rbg'), (8, 8, 2))")
row("key", "seed dtype", "key_dtype rbg through normal",
    "lambda seed, **out: jax.random.normal(jax.random.key(seed, dtype=jax.random.key_dtype('rbg')), (8, 2), **out)",
    "seed", sampler="jax.random.normal", needs=(("jax.random.key_dtype", "impl_spec"),),
    support=lambda x, a: finite(x), checks=check_key_dtype("rbg"),
    vmap_reference="lambda seeds: jax.random.normal(jax.random.key(seeds[0], dtype=jax.random.key_dtype('rbg')), "
                   "(8, 8, 2))")
row("PRNGKey", "seed impl", "rbg through bits",
    "lambda seed, **out: jax.random.bits(jax.random.wrap_key_data(jax.random.PRNGKey(seed, impl='rbg'), "
    "impl='rbg'), (8, 2), **out)", "seed", dtype="uint32", sampler="jax.random.bits",
    checks=check_prng_key_is_key_data,
    vmap_reference="lambda seeds: jax.random.bits(jax.random.wrap_key_data(jax.random.PRNGKey(seeds[0], impl='rbg'), "
                   "impl='rbg'), (8, 8, 2))")
row("wrap_key_data", "impl", "unsafe_rbg through normal",
    "lambda data, **out: jax.random.normal(jax.random.wrap_key_data(data, impl='unsafe_rbg'), (8, 2), **out)",
    "words4", sampler="jax.random.normal", support=lambda x, a: finite(x),
    checks=round_trip("unsafe_rbg", lambda d: jax.random.wrap_key_data(d, impl="unsafe_rbg")),
    vmap_reference="lambda datas: jax.random.normal(jax.random.wrap_key_data(datas[0], impl='unsafe_rbg'), (8, 8, 2))")
row("wrap_key_data", "dtype", "key_dtype rbg through bits",
    "lambda data, **out: jax.random.bits(jax.random.wrap_key_data(data, dtype=jax.random.key_dtype('rbg')), "
    "(8, 2), **out)", "words4", dtype="uint32", sampler="jax.random.bits",
    needs=(("jax.random.key_dtype", "impl_spec"),),
    checks=round_trip("rbg", lambda d: jax.random.wrap_key_data(d, dtype=jax.random.key_dtype("rbg"))),
    vmap_reference="lambda datas: jax.random.bits(jax.random.wrap_key_data(datas[0], "
                   "dtype=jax.random.key_dtype('rbg')), (8, 8, 2))")
row("split", "key num", "four keys of each key under vmap",
    "lambda key: jax.random.key_data(jax.random.split(key, 4))", shape=(4, 2), dtype="uint32", vmapped=True)
row("clone", "key", "draws what the key draws under vmap",
    "lambda key: jax.random.bits(jax.random.clone(key), (2,))", reference="lambda key: jax.random.bits(key, (2,))",
    shape=(2,), dtype="uint32", vmapped=True)
row("key_impl", "keys", "round trip of a traced key through bits",
    "lambda key, **out: jax.random.bits(jax.random.wrap_key_data(jax.random.key_data(key), "
    "impl=jax.random.key_impl(key)), (8, 2), **out)", dtype="uint32", sampler="jax.random.bits",
    needs=(("jax.random.key_data", "keys"), ("jax.random.wrap_key_data", "impl")),
    reference="lambda key: jax.random.bits(key, (8, 2))")


# --- the property ---------------------------------------------------------------------------------
def names_of(source: str) -> list:
    """The parameters of a row's lambda, without ``**out``."""
    head = source.split(":", 1)[0].removeprefix("lambda ")
    return [n.strip() for n in head.split(",") if n.strip() and not n.strip().startswith("**")]


def over_keys(f):
    """``f`` of a batch of keys (its first argument), the other arguments shared."""
    return lambda first, *args: jax.vmap(lambda k: f(k, *args))(first)


@functools.lru_cache(maxsize=None)
def reference_function(r: Row):
    """The reference: the row's call (or its ``reference``) jitted, run on one device (one jit per
    row, shared with the contexts property's ``one_device_function``)."""
    if r.vmapped:
        return jax.jit(over_keys(bridge.function_of(r.reference or r.source)))
    return one_device_function(r)


@functools.lru_cache(maxsize=None)
def one_device_function(r: Row):
    """The row's call (or its ``reference``) for one key, jitted: run on one device."""
    return jax.jit(bridge.function_of(r.reference or r.source))


@functools.lru_cache(maxsize=None)
def contrast_function(r: Row):
    """The row's contrast (the same call with the parameter under test at another value), jitted."""
    f = bridge.function_of(r.contrast[0])
    return jax.jit(over_keys(f) if r.vmapped else f)


@functools.lru_cache(maxsize=None)
def sharded_function(r: Row, mesh: MeshModel, axis_type: str, out_spec: Spec):
    """The row's call jitted sharded: given out_sharding=P(...) (run in the Explicit mesh's context),
    else with out_shardings on the Auto mesh."""
    f = bridge.function_of(r.source)
    if axis_type == "Explicit":
        spec = compat.partition_spec(out_spec)
        return jax.jit(lambda *a: f(*a, out_sharding=spec))
    return jax.jit(over_keys(f) if r.vmapped else f, out_shardings=bridge.named_sharding(mesh, out_spec))


def padded(spec, rank: int) -> tuple:
    axes = spec_axes(tuple(spec))
    return axes + ((),) * (rank - len(axes))


def draw_case(ex: Draw) -> Case:
    r = ex.row
    names = names_of(r.source)
    first, spelled = names[0], KEY_KINDS[r.first][1].format("data")
    args = ", ".join(names)
    s = f"NamedSharding(mesh, {spec_literal(ex.out_spec)})"
    lines = [compat.THREEFRY_PARTITIONABLE_SOURCE.format(True), f"{first} = {spelled}", f"f = {r.source}"]
    vf = "f"
    if r.vmapped:
        lines.append(f"vf = lambda {args}: jax.vmap(lambda k: f(k, {', '.join(names[1:])}))({first})")
        vf = "vf"
    if r.reference:
        lines.append(f"g = {r.reference}")
        if r.vmapped:
            lines.append(f"vg = lambda {args}: jax.vmap(lambda k: g(k, {', '.join(names[1:])}))({first})")
    reference = ("vg" if r.vmapped else "g") if r.reference else vf
    lines.append(f"unsharded = jax.jit({reference})({args})")
    in_context = []
    if ex.axis_type == "Explicit":
        in_context = [f"sharded = jax.jit(lambda *a: f(*a, out_sharding={spec_literal(ex.out_spec)}))({args})",
                      "print(sharded, unsharded, sep='\\n')"]
        call = f"jax.jit(lambda *a: f(*a, out_sharding={spec_literal(ex.out_spec)})) on an Explicit mesh"
    else:
        if r.vmapped:
            key_spec = tuple(ex.key_spec) + ((None,) if r.first != "typed" and ex.key_spec else ())
            lines.append(f"{first} = jax.device_put({first}, NamedSharding(mesh, {spec_literal(key_spec)}))")
        lines += [f"sharded = jax.jit({vf}, out_shardings={s})({args})", "print(sharded, unsharded, sep='\\n')"]
        call = f"jax.jit({'vmap of ' if r.vmapped else ''}f, out_shardings={s})" + (
            f" of keys placed {spec_literal(ex.key_spec)}" if r.vmapped else "")
    arrays = {"data": ex.data, **dict(zip(names[1:], ex.args))}
    return scripted_case(
        f"f = {r.source}: {call} on {describe_mesh(ex.mesh)} ({r.entry}: {', '.join(r.parameters)}), "
        f"jax_threefry_partitionable=True",
        lines, meshes={"mesh": ex.mesh}, axis_type=ex.axis_type, arrays=arrays, in_context=in_context,
        outcomes={"the unsharded draw": "unsharded", "the sharded draw": "sharded",
                  "the sharded draw vs the unsharded draw": "sharded", "the sharded draw's layout": "sharded",
                  "the sharded draw's blocks": "sharded", "the sharded draw's dtype": "sharded.dtype.name",
                  "the sharded draw's shape": "sharded.shape"})


def check_draw(ex: Draw, excuses) -> None:
    """Two ways and the oracle between them. The sharded draw against numpy's model and the row's
    checks of what its parameters mean (accepted, the shape and dtype asked, the support, a contrast,
    the key functions' meaning; the layout and, Explicit, the sharding in its type): judged by numpy
    and the model alone, it is excusable without the one-device run, and where it is excused
    nothing is left to compare. Then the oracle: the reference draw on one device, its shape and
    support. Then the sharded draw against it (``compare_compilations``: what JAX promises between
    the two, the module docstring), and each device's block against the sharded draw, bit for bit."""
    r = ex.row
    case = draw_case(ex)
    first = KEY_KINDS[r.first][2](ex.data)  # (uncommitted: the reference runs on the default device)
    layout = Layout(ex.mesh, ex.out_spec, r.out_shape)
    judged = []
    with excuses.way([ex], example=ex):
        placed = first
        if r.vmapped:
            key_spec = tuple(ex.key_spec) + ((None,) if r.first != "typed" and ex.key_spec else ())
            placed = case.accepts("placing the keys",
                                  lambda: bridge.placed(first, bridge.named_sharding(ex.mesh, key_spec)))
        g = sharded_function(r, ex.mesh, ex.axis_type, ex.out_spec)
        with compat.mesh_context(bridge.jax_mesh(ex.mesh, ex.axis_type), ex.axis_type):
            result = case.accepts("the sharded draw", lambda: g(placed, *ex.args))
        got = np.asarray(result)
        case.equal("the sharded draw's shape", got.shape, r.out_shape)
        case.equal("the sharded draw's dtype", got.dtype.name, r.dtype)
        for what, ok in r.support(got, ex.args):
            case.true(f"the sharded draw: {what}", ok)
        if r.contrast:
            other = np.asarray(case.accepts("the contrasting draw", lambda: contrast_function(r)(first, *ex.args)))
            case.true(f"the sharded draw differs from {r.contrast[1]}", other.tobytes() != got.tobytes())
        if r.checks is not None:
            r.checks(case, ex.data, ex.args, got)
        check_layout(case, result, layout, what="the sharded draw's layout")
        if ex.axis_type == "Explicit":  # out_sharding sets the result's sharding in its type
            typed = jax.typeof(result).sharding.spec
            case.equal("the sharded draw's type's spec", padded(typed, len(r.out_shape)),
                       padded(ex.out_spec, len(r.out_shape)))
        judged.append(got)
    if not judged:
        return  # (excused by a known deviation)
    with case.oracle():
        expected = np.asarray(case.accepts("the unsharded draw", lambda: reference_function(r)(first, *ex.args)))
        case.equal("the unsharded draw's shape", expected.shape, r.out_shape)
        for what, ok in r.support(expected, ex.args):
            case.true(f"the unsharded draw: {what}", ok)
    with excuses.way([ex], example=ex):
        compare_compilations(case, "the sharded draw vs the unsharded draw", got, expected)
        check_layout(case, result, layout, got, what="the sharded draw's blocks")


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_each_sampler_draws_the_same_bits_sharded_as_unsharded_in_its_support(row, data, excuses):
    """Each sampler, given each of its parameters, draws sharded what it draws unsharded (the same
    bits where the draw is of an integer, unsigned or boolean dtype; floating-point draws within the
    tolerance JAX allows two compilations of one function), with the shape and dtype asked, inside its
    distribution's support."""
    for entry, name in [(row.entry, p) for p in row.parameters if p != "out_sharding"] + list(row.needs):
        compat.parameters(entry, name)  # (skips, naming the version, where this JAX lacks one)
    ex = data.draw(draws(row), label="example")
    with compat.threefry_partitionable(True):
        check_draw(ex, excuses)


# --- every calling context -------------------------------------------------------------------------
# The property above draws each row under jit (vmap for the rows marked so). This one calls each row
# (one key, or seed, per call) in the other contexts a user calls a sampler in, those
# test_calling_contexts names: eagerly on arguments placed on the row's mesh, in a shard_map body over
# it, under vmap of a batch of keys, and under grad with respect to its floating-point parameters.
# Each is compared with the unsharded run: the row's call jitted on one device (under vmap: that draw
# per key, stacked; under grad: grad of the same loss jitted on one device), as the property above
# compares (``compare_compilations``).
SAMPLER_CONTEXTS = ("eager", "shard_map body", "vmap", "grad")
ONE_KEY_UNDER_JIT = ("jit",)  # (the rows the property above draws under vmap only: one key under jit too)
# The jax.random module docstring: "both "rbg" and "unsafe_rbg" behave unusually under jax.vmap. When
# vmapping a random function over a batch of keys, its output values can differ from its true map over
# the same keys. Instead, under vmap, the entire batch of output random numbers is generated from only
# the first key in the input key batch" (jax.vmap(jax.random.normal)(keys) equals
# jax.random.normal(keys[0], shape=(8,))): lax.rng_bit_generator, which they are built on, batches so.
# The rows of those keys say it in their ``vmap_reference``.
# (rows whose draw is of a float dtype and has a floating-point parameter, but no gradient to check)
NO_GRADIENT = {
    "jax.random.multinomial": "its draws are counts (a float dtype holding integers): piecewise constant in p",
}


@dataclass(frozen=True)
class ContextDraw:
    """One example of a row in the contexts: its first argument's data, a batch of BATCH of them
    (vmap), the drawn args, the row's mesh (``fixed_layout``) and the spec the vmapped keys are
    placed with (along the mesh's first axis)."""

    row: Row
    data: np.ndarray
    batch: np.ndarray
    args: tuple
    mesh: MeshModel
    key_spec: Spec


@st.composite
def context_draws(draw, row: Row) -> ContextDraw:
    index = ROWS.index(row)
    data = draw(first_data(row.first), label="data")
    batch = draw(first_data(row.first, (BATCH,)), label="batch")
    args = tuple(row.args(draw))
    mesh, _ = fixed_layout(index, row.out_shape)
    cut = BATCH % mesh.shape[0] == 0 and mesh.shape[0] > 1  # (the keys along the mesh's first axis)
    return ContextDraw(row, data, batch, args, mesh, (mesh.axis_names[0],) if cut else ())


def gradient_positions(r: Row, args: tuple) -> Tuple[int, ...]:
    """The positions (in the call's arguments, the key first) of the floating-point parameters grad
    differentiates with respect to; none where the draw is not of a real float dtype."""
    if not jnp.issubdtype(r.dtype, jnp.floating) or r.entry in NO_GRADIENT:
        return ()
    return tuple(1 + i for i, a in enumerate(args) if jnp.issubdtype(np.asarray(a).dtype, jnp.floating))


def summed(f):
    """The scalar grad differentiates: the sum of the draw, in float32."""
    return lambda *a: jnp.sum(f(*a).astype(jnp.float32))


@functools.lru_cache(maxsize=None)
def context_function(r: Row, context: str, mesh: MeshModel, positions: Tuple[int, ...]):
    """The row's call as ``context`` runs it, built once per row, context and mesh."""
    f = bridge.function_of(r.source)
    if context == "eager":
        return f
    if context == "jit":
        return jax.jit(f)
    if context == "shard_map body":
        return jax.jit(compat.shard_map(f, bridge.jax_mesh(mesh), ((),) * len(names_of(r.source)), ()))
    if context == "vmap":
        return jax.jit(over_keys(f))
    return jax.jit(jax.grad(summed(f), argnums=positions))


@functools.lru_cache(maxsize=None)
def reference_vmap(r: Row):
    return jax.jit(bridge.function_of(r.vmap_reference))


CONTEXT_CALLS = {
    "eager": "f(*jax.device_put(({args}), NamedSharding(mesh, P())))",
    "jit": "jax.jit(f)(*jax.device_put(({args}), NamedSharding(mesh, P())))",
    "shard_map body": "jax.jit(shard_map(f, mesh=mesh, in_specs={specs}, out_specs=P()))({args})",
    "vmap": "jax.jit(jax.vmap(f, in_axes=(0,{nones})))(jax.device_put({first}s, NamedSharding(mesh, {key_spec}))"
            "{rest})",
    "grad": "jax.jit(jax.grad(lambda *a: jnp.sum(f(*a).astype(jnp.float32)), argnums={positions}))("
            "*jax.device_put(({args}), NamedSharding(mesh, P())))",
}
UNSHARDED_CALLS = {
    "eager": "jax.jit(f)({args})", "jit": "jax.jit(f)({args})", "shard_map body": "jax.jit(f)({args})",
    "vmap": "np.stack([jax.jit(f)(k{rest}) for k in {first}s])",
    "grad": "jax.jit(jax.grad(lambda *a: jnp.sum(f(*a).astype(jnp.float32)), argnums={positions}))({args})",
}


def vmapped_key_spec(ex: ContextDraw) -> tuple:
    """The spec of the batch of first arguments: along the batch, the key words (if any) whole."""
    words = () if ex.row.first == "typed" else KEY_KINDS[ex.row.first][0]
    return tuple(ex.key_spec) + ((None,) * len(words) if ex.key_spec else ())


def context_draw_case(ex: ContextDraw, context: str, positions: Tuple[int, ...]) -> Case:
    r = ex.row
    names = names_of(r.source)
    first, spelled = names[0], KEY_KINDS[r.first][1]
    fill = dict(args=", ".join(names), first=first, rest="".join(f", {n}" for n in names[1:]),
                nones=" None," * len(names[1:]), specs="(" + "P(), " * len(names) + ")",
                key_spec=spec_literal(vmapped_key_spec(ex)), positions=positions)
    call, unsharded = CONTEXT_CALLS[context].format(**fill), UNSHARDED_CALLS[context].format(**fill)
    if context == "vmap" and r.vmap_reference:  # (rbg keys: the batch drawn from the first key)
        unsharded = f"jax.jit({r.vmap_reference})({first}s{fill['rest']})"
    lines = [compat.THREEFRY_PARTITIONABLE_SOURCE.format(True),
             ("shard_map = jax.shard_map" if compat.FEATURES["jax.shard_map"].available else
              "from jax.experimental.shard_map import shard_map"),
             f"{first} = {spelled.format('data')}", f"{first}s = {spelled.format('batch')}", f"f = {r.source}",
             f"unsharded = {unsharded}", f"got = {call}", "print(got, unsharded, sep='\\n')"]
    arrays = {"data": ex.data, "batch": ex.batch, **dict(zip(names[1:], ex.args))}
    return scripted_case(
        f"f = {r.source}: {context}, {call} on {describe_mesh(ex.mesh)} ({r.entry}), jax_threefry_partitionable=True",
        lines, meshes={"mesh": ex.mesh}, arrays=arrays,
        outcomes={"the call": "got", "the unsharded run": "unsharded", "the call vs the unsharded run": "got",
                  "the call's shape and dtype": "(got.shape, got.dtype.name)"})


def run_context(ex: ContextDraw, context: str, positions: Tuple[int, ...]):
    """The row's call in ``context`` on the example's arguments (placed on its mesh)."""
    r = ex.row
    make = KEY_KINDS[r.first][2]
    f = context_function(r, context, ex.mesh, positions)
    if context == "vmap":
        keys = bridge.placed(make(ex.batch), bridge.named_sharding(ex.mesh, vmapped_key_spec(ex)))
        return f(keys, *ex.args)
    if context == "shard_map body":
        return f(make(ex.data), *ex.args)
    placed = bridge.placed((make(ex.data), *ex.args), bridge.named_sharding(ex.mesh, ()))
    return f(*placed)


def central_differences(ex: ContextDraw, positions: Tuple[int, ...]) -> Tuple[np.ndarray, ...]:
    """The gradient of the draw's sum with respect to the parameters at ``positions``, by central
    differences of the row's call jitted on one device (the key fixed), in float64: each element p
    moved by |p| / 64 (1/64 at 0) either way, divided by the distance the two float32 values lie
    apart. Free of JAX's autodiff: the oracle of the float32 rows' gradients."""
    r, key = ex.row, KEY_KINDS[ex.row.first][2](ex.data)
    total = lambda args: float(np.sum(np.asarray(one_device_function(r)(key, *args)).astype(np.float64)))
    gradients = []
    for position in positions:
        value = np.asarray(ex.args[position - 1])
        gradient = np.zeros(value.shape, np.float64)
        for i in np.ndindex(value.shape):
            step = abs(float(value[i])) / 64 or 1 / 64
            moved = []
            for sign in (1, -1):
                v = value.copy()
                v[i] = value.dtype.type(float(value[i]) + sign * step)
                args = list(ex.args)
                args[position - 1] = v
                moved.append((total(args), float(v[i])))
            (up, at_up), (down, at_down) = moved
            gradient[i] = (up - down) / (at_up - at_down)
        gradients.append(gradient)
    return tuple(gradients)


def unsharded_run(ex: ContextDraw, context: str, positions: Tuple[int, ...]):
    r = ex.row
    make = KEY_KINDS[r.first][2]
    if context == "vmap" and r.vmap_reference:
        return np.asarray(reference_vmap(r)(make(ex.batch), *ex.args))
    if context == "vmap":
        return np.stack([np.asarray(one_device_function(r)(make(d), *ex.args)) for d in ex.batch])
    if context == "grad":
        gradient = context_function(r, "grad", ex.mesh, positions)  # (the same jit, on uncommitted arguments)
        return tuple(np.asarray(g) for g in gradient(make(ex.data), *ex.args))
    return np.asarray(one_device_function(r)(make(ex.data), *ex.args))


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
@settings(max_examples=1, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_each_sampler_draws_in_every_context_what_it_draws_jitted_unsharded(row, data, excuses):
    """Each sampler and key function draws eagerly, in a shard_map body and under vmap what its call
    jitted on one device draws (under vmap: per key, or as documented for rbg keys), and its gradient
    with respect to its floating-point parameters is that of the one-device call (float32 draws:
    and their central differences)."""
    for entry, name in [(row.entry, p) for p in row.parameters if p != "out_sharding"] + list(row.needs):
        compat.parameters(entry, name)  # (skips, naming the version, where this JAX lacks one)
    ex = data.draw(context_draws(row), label="example")
    positions = gradient_positions(row, ex.args)
    failures = []
    with compat.threefry_partitionable(True):
        for context in (ONE_KEY_UNDER_JIT if row.vmapped else ()) + SAMPLER_CONTEXTS:
            if context == "grad" and not positions:
                continue
            try:  # (every context runs, and is recorded, whichever fails first)
                check_sampler_context(ex, context, positions, excuses)
            except Exception as failure:  # noqa: BLE001 - the first is raised below, the others named on it
                failures.append((context, failure))
    if failures:
        (_, first), others = failures[0], failures[1:]
        for context, failure in others:
            first.add_note(f"{context} failed too: {str(failure).splitlines()[0]}")
        raise first


def check_sampler_context(ex: ContextDraw, context: str, positions: Tuple[int, ...], excuses) -> None:
    """The row's call in ``context`` against the unsharded run (and, float32 gradients, against
    central differences)."""
    row = ex.row
    case, called = context_draw_case(ex, context, positions), []
    with excuses.way([ex], example=ex):
        called.append(case.accepts("the call", lambda: run_context(ex, context, positions)))
    if not called:
        return  # (excused by a known deviation)
    with case.oracle():
        expected = case.accepts("the unsharded run", lambda: unsharded_run(ex, context, positions))
    with excuses.way([ex], example=ex):
        got = called[0]
        for k, (g, e) in enumerate(zip(got, expected) if context == "grad" else [(got, expected)]):
            g = np.asarray(g)
            case.equal("the call's shape and dtype", (g.shape, g.dtype.name), (e.shape, e.dtype.name))
            if context == "grad":  # (in the draw's dtype, the precision the gradient is computed in)
                g, e = g.astype(jnp.dtype(row.dtype)), e.astype(jnp.dtype(row.dtype))
            of = f" (d/d argument {positions[k]})" if context == "grad" else ""
            compare_compilations(case, f"the call vs the unsharded run{of}", g, e)
    if context == "grad" and row.dtype == "float32":  # (the model: central differences, no autodiff)
        with case.oracle():
            numeric = central_differences(ex, positions)
        with excuses.way([ex], example=ex):
            for k, (g, n) in enumerate(zip(called[0], numeric)):
                case.close(f"the gradient (d/d argument {positions[k]}) vs central differences",
                           np.asarray(g).astype(np.float64), n, rtol=1e-3,
                           atol=1e-3 * float(np.max(np.abs(n), initial=1.0)))


def test_a_jitted_float16_quotient_of_quotients_is_numpys():
    """jax.jit(lambda a, b, c, d: (a / b) / (c / d)) of the float16 scalars 969.5, 1000, 1016, 1000
    returns numpy's float16 quotient (the form of jax.random.f's draw: its f16 rows' NaN)."""
    a, b, c, d = (np.float16(v) for v in (969.5, 1000, 1016, 1000))
    call = "jax.jit(lambda a, b, c, d: (a / b) / (c / d))(a, b, c, d)"
    case = scripted_case(f"{call} of float16 969.5, 1000, 1016, 1000",
                         ["a, b, c, d = (np.float16(v) for v in (969.5, 1000, 1016, 1000))", f"print({call})"],
                         outcomes={"the call": call})
    got = case.accepts("the call", lambda: jax.jit(lambda a, b, c, d: (a / b) / (c / d))(a, b, c, d))
    case.same_bits("the quotient of quotients", np.asarray(got), np.asarray((a / b) / (c / d)))


# --- each sampler's documented support in bfloat16 or float16, on a fixed key ----------------------
# A bfloat16 uniform draw has 7 random mantissa bits: u = 0 comes once in 128 values (float16: 10 bits,
# once in 1024), so a sampler that maps u = 0 onto a bound of its open support, or past it, leaves it
# too seldom for the rows' drawn keys to show every time. These draw (4096, 2) values from one fixed
# key: at 1/128 per value a key shows such a bug in all but about e^-64 (weibull_min, both columns) or
# e^-32 (truncated_normal, its lower = 0 column) of the cases; at 1/1024 (rayleigh in float16, both
# columns) in all but about e^-8 (key(0) shows 5 values).
def check_a_draw_lies_in_its_support(source: str, outside: str, dtype: str) -> None:
    """Draw ``x = source`` (a call of key = jax.random.key(0), jax_threefry_partitionable on) and check
    it is of ``dtype`` and shape (4096, 2) and holds no value ``outside`` its support (a numpy
    expression over the float32 ``x``); the Case's script prints that count."""
    count = f"int(np.count_nonzero({outside}))"
    case = scripted_case(f"x = {source} with jax_threefry_partitionable=True",
                         [compat.THREEFRY_PARTITIONABLE_SOURCE.format(True), "key = jax.random.key(0)",
                          f"x = np.asarray({source}).astype(np.float32)"],
                         outcomes={"the draw's values outside its support": count})
    draw = eval(f"lambda key: {source}", {"jax": jax, "jnp": jnp, "np": np})
    with compat.threefry_partitionable(True):
        x = np.asarray(case.accepts("the draw", lambda: draw(jax.random.key(0))))
    case.equal("the draw's dtype and shape", (x.dtype.name, x.shape), (dtype, (4096, 2)))
    x = x.astype(np.float32)
    case.equal("the draw's values outside its support", int(np.count_nonzero(eval(outside, {"x": x, "np": np}))), 0)


def test_a_bfloat16_weibull_min_draw_lies_in_its_open_support():
    """jax.random.weibull_min's docstring: values "on the domain 0 < x < inf". A bfloat16 draw of
    (4096, 2) values with scale 1, 100 and concentration 200 (a value below 0.8 * scale has a chance
    of about 1e-20) holds no value outside (0, inf)."""
    source = ("jax.random.weibull_min(key, np.array([1, 100], jnp.bfloat16), np.array([200, 200], jnp.bfloat16), "
              "(4096, 2), jnp.bfloat16)")
    outside = "~((x > 0) & (x < np.inf))"
    check_a_draw_lies_in_its_support(source, outside, "bfloat16")


def test_a_bfloat16_truncated_normal_draw_lies_in_its_open_interval():
    """jax.random.truncated_normal's docstring: values "on the domain lower < x < upper", "in the
    open interval (lower, upper)". A bfloat16 draw of (4096, 2) values with lower 0, -1 and upper
    0.5, 0 (bounds of 0 on either side, exact in bfloat16) holds no value outside its column's
    (lower, upper)."""
    source = ("jax.random.truncated_normal(key, np.array([0, -1], jnp.bfloat16), np.array([0.5, 0], jnp.bfloat16), "
              "(4096, 2), jnp.bfloat16)")
    outside = "~((x > np.array([0, -1])) & (x < np.array([0.5, 0])))"
    check_a_draw_lies_in_its_support(source, outside, "bfloat16")


def test_a_float16_rayleigh_draw_lies_in_its_support():
    """jax.random.rayleigh's docstring: values "on the domain -inf < x < inf", of the density
    x e^(-x^2 / (2 sigma^2)) with sigma > 0, which is a density on x >= 0. A float16 draw of (4096, 2)
    values with scale 1, 0.01 (the rayleigh row's, before it went to float32) holds no value outside
    [0, inf): no inf, where JAX's scale * sqrt(-2 log(u)) takes u = 0."""
    source = "jax.random.rayleigh(key, np.array([1, 0.01], jnp.float16), (4096, 2), jnp.float16)"
    outside = "~((x >= 0) & (x < np.inf))"
    check_a_draw_lies_in_its_support(source, outside, "float16")
