"""Model-shaped programs (MLP, transformer block) under parallel layouts."""

from .registry import fault, jax_module, jnp_module, lax_module, wrap

import contextlib
import functools
import math

# Each fault below acts only while a function jitted with in_shardings that split something over
# axes of size > 1 is traced (the one-device twin, jitted without shardings, stays right): the
# simulated regressions are in how the partitioned program computes, not in the op itself.
_SPLIT = [1]


def _split_count(in_shardings) -> int:
    """The product of the sizes of the distinct mesh axes of size > 1 the shardings split over."""
    import jax
    from jax.sharding import NamedSharding
    sizes = {}
    for s in jax.tree_util.tree_leaves(in_shardings, is_leaf=lambda x: isinstance(x, NamedSharding)):
        if not isinstance(s, NamedSharding):
            continue
        for entry in s.spec:
            for name in (() if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)):
                if s.mesh.shape[name] > 1:
                    sizes[name] = s.mesh.shape[name]
    return math.prod(sizes.values())


@contextlib.contextmanager
def _split(k):
    before, _SPLIT[0] = _SPLIT[0], k
    try:
        yield
    finally:
        _SPLIT[0] = before


def _flag_sharded_jits():
    """Make ``jax.jit(f, in_shardings=...)`` trace ``f`` with ``_SPLIT`` set to the split count."""
    jax = jax_module()
    if getattr(jax.jit, "_model_programs_flag", False):
        return

    def make(original):
        def jit(fun, *args, **kwargs):
            k = _split_count(kwargs.get("in_shardings"))
            if k <= 1:
                return original(fun, *args, **kwargs)

            @functools.wraps(fun)
            def flagged(*a, **kw):
                with _split(k):
                    return fun(*a, **kw)
            return original(flagged, *args, **kwargs)
        jit._model_programs_flag = True
        return jit
    wrap(jax, "jit", make)


def _chunked(x, axis, k, f):
    """``f`` applied to each of ``k`` equal chunks of ``x`` along ``axis`` (as one device's shard)."""
    jnp = jnp_module()
    axis = axis % x.ndim
    parts = jnp.split(x, k, axis=axis)
    return jnp.concatenate([f(p) for p in parts], axis=axis)


@fault("softmax-normalised-per-shard",
       "jax.nn.softmax in a partitioned program normalises each shard of the reduced axis on its own",
       suites=("model_programs",))
def softmax_normalised_per_shard():
    import jax
    _flag_sharded_jits()

    def make(original):
        def softmax(x, axis=-1, **kwargs):
            k = _SPLIT[0]
            if k > 1 and isinstance(axis, int) and x.shape[axis] % k == 0:
                return _chunked(x, axis, k, lambda p: original(p, axis=axis, **kwargs))
            return original(x, axis=axis, **kwargs)
        return softmax
    wrap(jax.nn, "softmax", make)


@fault("einsum-drops-contracted-psum",
       "jnp.einsum in a partitioned program returns one shard's partial sum of a contraction (psum dropped)",
       suites=("model_programs",))
def einsum_drops_contracted_psum():
    _flag_sharded_jits()
    jnp = jnp_module()

    def make(original):
        def einsum(subscripts, *operands, **kwargs):
            result = original(subscripts, *operands, **kwargs)
            k = _SPLIT[0]
            if k > 1 and isinstance(subscripts, str) and "->" in subscripts:
                ins, out = subscripts.replace(" ", "").split("->")
                if set(ins.replace(",", "")) - set(out):
                    return result / k
            return result
        return einsum
    wrap(jnp, "einsum", make)


@fault("mean-over-local-shard",
       "jnp.mean over the last axis in a partitioned program (layer norm's) averages one shard of it only",
       suites=("model_programs",))
def mean_over_local_shard():
    _flag_sharded_jits()
    jnp = jnp_module()

    def make(original):
        def mean(x, axis=None, *args, **kwargs):
            k = _SPLIT[0]
            if k > 1 and axis in (-1, x.ndim - 1) and x.shape[-1] % k == 0 and kwargs.get("keepdims"):
                local = x[..., : x.shape[-1] // k]
                return original(local, *args, axis=axis, **kwargs)
            return original(x, *args, axis=axis, **kwargs)
        return mean
    wrap(jnp, "mean", make)


@fault("psum-returns-local-partial",
       "lax.psum over the tensor axes in a partitioned program returns the device's own partial sum",
       suites=("model_programs",))
def psum_returns_local_partial():
    _flag_sharded_jits()
    lax = lax_module()

    def make(original):
        def psum(x, axis_name, **kwargs):
            if _SPLIT[0] > 1:
                return x
            return original(x, axis_name, **kwargs)
        return psum
    wrap(lax, "psum", make)


@fault("einsum-keeps-15-bits",
       "jnp.einsum's contractions in a partitioned program keep 15 significant bits of float32's 24 "
       "(a relative error up to 2**-15, as a reduction carried in too low a precision)",
       suites=("model_programs",))
def einsum_keeps_15_bits():
    _flag_sharded_jits()
    jnp = jnp_module()
    lax = lax_module()

    def make(original):
        def einsum(subscripts, *operands, **kwargs):
            result = original(subscripts, *operands, **kwargs)
            if _SPLIT[0] > 1 and isinstance(subscripts, str) and result.dtype == jnp.float32:
                return lax.reduce_precision(result, exponent_bits=8, mantissa_bits=14)
            return result
        return einsum
    wrap(jnp, "einsum", make)


ONE_PRECISION_UP = {"bfloat16": "float32", "float16": "float32", "float32": "float64"}


class _ReturnsOnePrecisionUp:
    """A jitted function whose float outputs come back one precision up (``ONE_PRECISION_UP``,
    cast on the host side of the call under ``enable_x64``, so float64 is held even with x64 off):
    the same values in another dtype. With x64 off it takes float64 arrays (such outputs, fed to
    the next step) as float32, as jit takes numpy's. Anything else (``lower``, ``trace``, ...) is
    the jitted function's."""

    def __init__(self, jitted, enable_x64):
        self._jitted, self._enable_x64 = jitted, enable_x64

    def __call__(self, *args, **kwargs):
        jax = jax_module()
        if not jax.config.jax_enable_x64:
            args, kwargs = jax.tree_util.tree_map(
                lambda v: v.astype("float32") if isinstance(v, jax.Array) and v.dtype.name == "float64" else v,
                (args, kwargs))
        out = self._jitted(*args, **kwargs)
        with self._enable_x64(True):
            return jax.tree_util.tree_map(
                lambda v: v.astype(ONE_PRECISION_UP[v.dtype.name]) if getattr(v, "dtype", None) is not None
                and v.dtype.name in ONE_PRECISION_UP else v, out)

    def __get__(self, instance, owner=None):  # (a jitted method binds its instance, as jit's own does)
        return self if instance is None else functools.partial(self, instance)

    def __getattr__(self, name):
        return getattr(self._jitted, name)


def _jits_return_one_precision_up(*, split_only: bool):
    """Make ``jax.jit(f, ...)`` return ``f``'s float outputs one precision up: every jit, or
    (``split_only``) only one whose in_shardings split something (``_split_count`` > 1), the
    one-device twins, jitted without shardings, staying right."""
    jax = jax_module()
    enable_x64 = getattr(jax, "enable_x64", None)
    if enable_x64 is None:  # (before jax.enable_x64, the experimental one; AttributeError where neither is)
        import jax.experimental
        enable_x64 = jax.experimental.enable_x64

    def make(original):
        def jit(fun, *args, **kwargs):
            jitted = original(fun, *args, **kwargs)
            if split_only and _split_count(kwargs.get("in_shardings")) <= 1:
                return jitted
            return _ReturnsOnePrecisionUp(jitted, enable_x64)
        return jit
    wrap(jax, "jit", make)


# The same values in another dtype: only a dtype check sees either.
for _name, _description, _split_only in (
        ("sharded-jit-returns-floats-one-precision-up", "jax.jit with in_shardings that split returns float outputs "
         "one precision up, bfloat16 as float32 and float32 as float64 (the same values)", True),
        ("jit-returns-floats-one-precision-up", "jax.jit returns float outputs one precision up (bfloat16 as float32, "
         "float32 as float64), with shardings or without: the one-device twins too, the same values", False)):
    fault(_name, _description, suites=("model_programs", "training"))(
        functools.partial(_jits_return_one_precision_up, split_only=_split_only))


@fault("einsum-sums-in-its-operands-dtype",
       "jnp.einsum ignores preferred_element_type: bfloat16 operands are summed, and returned, in bfloat16",
       suites=("programs", "model_programs"))
def einsum_sums_in_its_operands_dtype():
    jnp = jnp_module()
    original = jnp.einsum

    def einsum(*operands, preferred_element_type=None, **kwargs):
        return original(*operands, **kwargs)
    jnp.einsum = einsum
