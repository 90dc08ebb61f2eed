"""Model-shaped programs (MLP, transformer block) under parallelism layouts."""

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
                return original(local, axis=axis, *args, **kwargs)
            return original(x, axis=axis, *args, **kwargs)
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
