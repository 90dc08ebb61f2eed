"""Sharding-in-types rules for the vocabulary's linalg families (``strategies/ops/vocabulary_linalg.py``),
each a function of a ``sharding_families.Call`` to the result's canonical spec, raising
``IllTyped`` where JAX's rules reject the operand shardings; ``RULES`` maps a family to its rule
(``sharding_rules`` adds them to ``FAMILY_RULES``).

Each rule follows the primitives its functions bind in JAX 0.10.2 (``jax/_src/numpy`` and
``jax/_src/lax``) through the primitive rules of ``sharding_primitives``: the contractions' one
``dot_general`` (``_dot_general_sharding_rule``), the convolutions' ``conv_general_dilated``
(``_conv_general_dilated_sharding_rule``: "Only allow if rhs is fully replicated and lhs's feature
dim is not sharded"; the result keeps ``lhs``'s spec where its sizes allow), the reshapes of a
``ravel``."""

from __future__ import annotations

import math
from typing import Callable, Dict, Sequence, Tuple

from .layout import Spec
from .sharding_families import Call, _matmul, _NoRule
from .sharding_primitives import (IllTyped, axis_argument, broadcast, dot_general, expand_dims, reduce, resized,
                                  show_spec, tiling, transpose)


def _dot(c: Call, contracting, batch=((), ()), lhs: int = 0, rhs: int = 1) -> Spec:
    return dot_general(c.specs[lhs], c.specs[rhs], contracting, batch, c.op,
                       batch_specs_equal=c.rules.batch_specs_equal)


def _tensordot_axes(axes, ranks: Tuple[int, int]):
    """``jnp.tensordot``'s ``axes``: an int ``k`` (the last ``k`` of ``a``, the first ``k`` of ``b``) or a
    pair of axis lists, as the two tuples of contracting dimensions."""
    ra, rb = ranks
    if isinstance(axes, int):
        return tuple(range(ra - axes, ra)), tuple(range(axes))
    return tuple(axis_argument(a, ra) for a in axes[0]), tuple(axis_argument(b, rb) for b in axes[1])


def _dot_general(c: Call) -> Spec:
    """One ``dot_general``: jnp.matmul (``sharding_families._matmul``), lax.batch_matmul (every
    dimension but the last two a batch one), jnp.inner (the last dimensions contracted; a scalar
    operand multiplies, a broadcast), jnp.tensordot (its ``axes``), lax.dot (the last dimension of
    ``x`` with the first of ``y``), lax.dot_general (its ``dimension_numbers``)."""
    (ls, rs), (lp, rp) = c.shapes[:2], c.specs[:2]
    if c.op == "jnp.matmul":
        return _matmul(ls, rs, lp, rp, c.rules.batch_specs_equal)
    if c.op == "lax.batch_matmul":
        batch = tuple(range(len(ls) - 2))
        return _dot(c, ((len(ls) - 1,), (len(rs) - 2,)), (batch, batch))
    if c.op == "jnp.inner":
        if not ls or not rs:
            return broadcast(c.shapes, c.specs, c.op)
        return _dot(c, ((len(ls) - 1,), (len(rs) - 1,)))
    if c.op == "jnp.tensordot":
        return _dot(c, _tensordot_axes(c.static["axes"], (len(ls), len(rs))))
    if c.op == "lax.dot":
        return _dot(c, ((len(ls) - 1,), (0,)))
    if c.op == "lax.dot_general":
        contracting, batch = c.static["dimension_numbers"]
        return _dot(c, contracting, batch)
    raise _NoRule(f"dot_general {c.op!r}")


def _raveled(c: Call, k: int) -> Spec:
    """``ravel``: a reshape to one dimension (none for a vector)."""
    shape, spec = c.shapes[k], c.specs[k]
    if len(shape) == 1:
        return spec
    return c.reshape(shape, spec, (math.prod(shape),))


def _outer(c: Call) -> Spec:
    """``jnp.outer``: ``a.ravel()[:, None] * b.ravel()[None, :]``."""
    (a,), (b,) = _raveled(c, 0), _raveled(c, 1)
    n, m = (math.prod(s) for s in c.shapes[:2])
    return broadcast(((n, 1), (1, m)), ((a, None), (None, b)), c.op)


def _vdot(c: Call) -> Spec:
    """``jnp.vdot``: both raveled, then ``dot`` of two vectors (their one dimension contracted)."""
    return dot_general(_raveled(c, 0), _raveled(c, 1), ((0,), (0,)), ((), ()), c.op,
                       batch_specs_equal=c.rules.batch_specs_equal)


def _kron(c: Call) -> Spec:
    """``jnp.kron``: ranks equalised with leading new dimensions, ``a``'s dimensions interleaved
    with new ones after them and ``b``'s before them, multiplied (a broadcast: each pair a size-1
    dimension against a sized one), then each pair merged by a reshape."""
    (a_shape, b_shape), (a, b) = c.shapes[:2], c.specs[:2]
    rank = max(len(a_shape), len(b_shape))
    a_shape, b_shape = (1,) * (rank - len(a_shape)) + a_shape, (1,) * (rank - len(b_shape)) + b_shape
    a, b = (None,) * (rank - len(a)) + a, (None,) * (rank - len(b)) + b
    a_wide = expand_dims(a, tuple(range(1, 2 * rank, 2)))
    b_wide = expand_dims(b, tuple(range(0, 2 * rank, 2)))
    a_wide_shape = tuple(n for side in a_shape for n in (side, 1))
    b_wide_shape = tuple(n for side in b_shape for n in (1, side))
    product = broadcast((a_wide_shape, b_wide_shape), (a_wide, b_wide), c.op)
    product_shape = tuple(max(p, q) for p, q in zip(a_wide_shape, b_wide_shape))
    return c.reshape(product_shape, product, tuple(p * q for p, q in zip(a_shape, b_shape)))


def _replicated(mesh, spec: Spec) -> bool:
    """``is_fully_replicated``: every entry cuts nothing (None, or axes of size 1)."""
    return all(tiling(mesh, e) == 1 for e in spec)


def conv_general_dilated(c: Call, lhs_shape, lhs: Spec, rhs: Spec, out_shape, feature_dim: int = 1) -> Spec:
    """``_conv_general_dilated_sharding_rule`` without ``out_sharding``: ``rhs`` fully replicated and
    ``lhs``'s feature dimension unsharded, else IllTyped; the result keeps ``lhs``'s spec, dimension
    by dimension, where a resized sharded dimension's tiling divides its new size
    (``_get_sharding_for_varying_out_shape``)."""
    if not _replicated(c.mesh, rhs) or lhs[feature_dim] is not None:
        raise IllTyped(f"{c.op}: conv_general_dilated needs a replicated kernel and an unsharded input feature "
                       f"dimension, got {show_spec(lhs)} and {show_spec(rhs)}")
    return resized(c.mesh, lhs_shape, lhs, out_shape, c.op)


def _conv_sizes(sizes: Sequence[int], windows: Sequence[int], strides, padding, lhs_dilation=None,
                rhs_dilation=None) -> Tuple[int, ...]:
    """The output's spatial sizes: dilated input plus padding, less the dilated window, over the stride."""
    out = []
    for k, (n, w, s) in enumerate(zip(sizes, windows, strides)):
        n = (n - 1) * (lhs_dilation or (1,) * len(sizes))[k] + 1
        w = (w - 1) * (rhs_dilation or (1,) * len(sizes))[k] + 1
        if isinstance(padding, str):
            out.append(-(-n // s) if padding == "SAME" else max(0, -(-(n - w + 1) // s)))
        else:
            low, high = padding[k]
            out.append(max(0, (n + low + high - w) // s + 1))
    return tuple(out)


def _convolution(c: Call) -> Spec:
    """The convolutions: jnp.convolve and jnp.correlate (the longer operand, with two leading new
    dimensions, is ``lhs``; the result is its spatial dimension, reversed for a correlate whose
    operands swapped: a rev keeps the spec); the lax convolutions on their operands in their
    layouts (channels first unless ``dimension_numbers`` say channels last); conv_transpose
    channels last; the patches' kernel is a constant (replicated)."""
    shapes, specs, s = c.shapes, c.specs, c.static
    if c.op in ("jnp.convolve", "jnp.correlate"):
        (xs, ys), (xp, yp) = shapes[:2], specs[:2]
        if xs[0] < ys[0]:
            (xs, ys), (xp, yp) = (ys, xs), (yp, xp)
        n, m = xs[0], ys[0]
        out = {"full": n + m - 1, "same": n, "valid": n - m + 1}[s["mode"]]
        return conv_general_dilated(c, (1, 1, n), (None, None) + xp, (None, None) + yp, (1, 1, out))[2:]
    if c.op == "lax.conv_transpose":
        (xs, ys), (xp, yp) = shapes[:2], specs[:2]
        nspatial = len(xs) - 2
        out_channels = ys[-2] if s["transpose_kernel"] else ys[-1]
        windows = [(w - 1) * d + 1 for w, d in zip(ys[:nspatial], s["rhs_dilation"])]
        sizes = []
        for n, w, stride in zip(xs[1:-1], windows, s["strides"]):
            dilated = (n - 1) * stride + 1
            total = w + stride - 2 + (0 if s["padding"] == "SAME" else max(w - stride, 0))
            sizes.append(dilated + total - w + 1)
        return conv_general_dilated(c, xs, xp, yp, (xs[0], *sizes, out_channels), feature_dim=len(xs) - 1)
    xs, xp = shapes[0], specs[0]
    channels_last = bool(s.get("dimension_numbers"))
    feature_dim = len(xs) - 1 if channels_last else 1
    spatial = xs[1:-1] if channels_last else xs[2:]
    strides = s["window_strides"]
    if c.op in ("lax.conv_general_dilated_patches", "lax.conv_general_dilated_local"):
        sizes = _conv_sizes(spatial, s["filter_shape"], strides, s["padding"])
        out_features = xs[1] * math.prod(s["filter_shape"])
        patches = conv_general_dilated(c, xs, xp, (None,) * len(xs), (xs[0], out_features, *sizes))
        if c.op == "lax.conv_general_dilated_patches":
            return patches
        raise _NoRule(f"convolution {c.op!r} after its patches")
    ys, yp = shapes[1], specs[1]
    windows = ys[:-2] if channels_last else ys[2:]
    out_features = ys[-1] if channels_last else ys[0]
    sizes = _conv_sizes(spatial, windows, strides, s["padding"], s.get("lhs_dilation"), s.get("rhs_dilation"))
    out_shape = (xs[0], *sizes, out_features) if channels_last else (xs[0], out_features, *sizes)
    return conv_general_dilated(c, xs, xp, yp, out_shape, feature_dim)


def _statistics(c: Call) -> Spec:
    """jnp.cov and jnp.corrcoef (which starts with cov): the observations ``X`` (variables x
    observations) are contracted with ``X.T`` (``dot``): a sharded observations dimension is
    contracted on both sides (IllTyped), a sharded variables dimension would shard both result
    dimensions (IllTyped); unsharded, the result (squeezed to a scalar for one variable) is unsharded."""
    shape, spec = c.x
    if any(e is not None for e in spec):
        raise IllTyped(f"{c.op}: dot(X, X.T) of observations sharded {show_spec(spec)} contracts a sharded "
                       "dimension on both sides or shards both result dimensions alike")
    variables = 1 if len(shape) == 1 else shape[0] if c.static.get("rowvar", True) else shape[1]
    return () if variables == 1 else (None, None)


def _summed_over_axes(c: Call) -> Spec:
    """``jnp.apply_over_axes(jnp.sum, x, axes)``: per axis a sum (the dimension dropped) and an
    ``expand_dims`` there (an unsharded dimension)."""
    shape, spec = c.x
    for axis in c.static["axes"]:
        axis = axis_argument(axis, len(shape))
        spec = expand_dims(reduce(spec, (axis,)), (axis,))
    return spec


def _moved_last(shape, spec: Spec, axis: int):
    """``moveaxis(x, axis, -1)``: a transpose."""
    axis = axis_argument(axis, len(shape))
    order = [d for d in range(len(shape)) if d != axis] + [axis]
    return tuple(shape[d] for d in order), transpose(spec, order)


def _cross(c: Call) -> Spec:
    """``jnp.cross``: each operand's vector axis moved last (a transpose); its components taken by
    ``x[..., i]`` (a slice of the last dimension to one element, which a cut of it must divide,
    then squeezed); the products of components broadcast together; for 3-vectors the three
    results (alike) stacked on a new unsharded leading dimension, moved to ``axisc``."""
    s = c.static
    axes = (s["axis"],) * 3 if "axis" in s else (s["axisa"], s["axisb"], s["axisc"])
    parts = []
    for k, axis in enumerate(axes[:2]):
        shape, spec = _moved_last(c.shapes[k], c.specs[k], axis)
        resized(c.mesh, shape, spec, shape[:-1] + (1,), f"{c.op} (x[..., i])")
        parts.append((shape[:-1], spec[:-1]))
    product = broadcast([shape for shape, _ in parts], [spec for _, spec in parts], c.op)
    if c.shapes[0][axes[0]] == 2 and c.shapes[1][axes[1]] == 2:
        return product
    rank = len(product) + 1
    at = axis_argument(axes[2], rank)
    order = list(range(1, rank))
    order.insert(at, 0)
    return transpose((None,) + product, order)


def _polynomial(c: Call) -> Spec:
    """jnp.poly (each root ``x[k]``, a one-element slice, squeezed, convolved with replicated
    coefficients: an unsharded result), jnp.polyder (``p[:-m]``, a slice, times replicated
    coefficients), jnp.polyint (``concatenate((p, k))`` with the replicated constants, which must be
    sharded alike, divided by replicated coefficients); ``m=0`` returns ``p``."""
    shape, spec = c.x
    m = c.static.get("m")
    if c.op == "jnp.poly":
        resized(c.mesh, shape, spec, (1,), f"{c.op} (x[k])")
        return (None,)
    if m == 0:
        return spec
    if c.op == "jnp.polyder":
        return resized(c.mesh, shape, spec, (max(shape[0] - m, 0),), f"{c.op} (p[:-m])")
    if c.op == "jnp.polyint":
        if spec[0] is not None:
            raise IllTyped(f"{c.op}: concatenate of p sharded {show_spec(spec)} with its replicated constants")
        return (None,)
    raise _NoRule(f"polynomial {c.op!r}")


def _fft(c: Call) -> Spec:
    """``lax.fft``: ``fft_p`` has no sharding rule; its abstract evaluation updates its operand's
    shape and dtype (``x.update(shape=shape, dtype=dtype)``), keeping its spec whatever the sizes."""
    return c.specs[0]


RULES: Dict[str, Callable[[Call], Spec]] = {
    "dot_general": _dot_general, "outer": _outer, "vdot": _vdot, "kron": _kron, "convolution": _convolution,
    "statistics": _statistics, "summed_over_axes": _summed_over_axes, "fft": _fft, "cross": _cross,
    "polynomial": _polynomial,
}
