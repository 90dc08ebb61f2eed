"""The vocabulary's entries for linalg functions (see ``vocabulary.py`` for the builders and
conventions): products and contractions, convolutions, polynomials, the FFT and the functions that
apply a fixed function along axes. Contractions draw integer-valued operands ("small" or "tiny"), so
that every summation order gives the same exact value."""

from __future__ import annotations

import itertools
import math
import string
from dataclasses import replace
from typing import Sequence, Tuple

import numpy as np
from hypothesis import strategies as st

import strategies.ops.inputs as i
from strategies.reuse import permuted, sampled_from

from .op import Op
from .vocabulary import TRANSCENDENTAL, entry

F = "float32"
I32 = "int32"
FLOAT_SUMS = dict(rtol=1e-5, atol=1e-5)  # float32 means and divisions: numpy's float64 and XLA's float32 differ in ulps
FFT_TOLERANCE = dict(rtol=1e-4, atol=1e-4)  # float32 FFTs of values up to 10 on up to 8 points per dimension


def values(draw, dtype: str, shape, kind: str = "small") -> np.ndarray:
    return draw(i.values(dtype, tuple(shape), kind))


def side(draw) -> int:
    return draw(i.SIDE)


# --- references JAX documents apart from numpy -------------------------------------------------
def polymul_reference(a1, a2):
    """``jnp.polymul`` with its default ``trim_leading_zeros=False``: the full convolution of the
    coefficients as given (numpy's polymul trims leading zeros first)."""
    return np.convolve(a1.astype(np.float64), a2.astype(np.float64))


def polydiv_remainder_reference(u, v):
    """``jnp.polydiv(u, v)[1]`` with its default ``trim_leading_zeros=False``: the remainder
    ``u - q * v`` at ``u``'s length (numpy's polydiv trims its leading zeros), for ``len(u) >= len(v)``."""
    q = np.polydiv(u.astype(np.float64), v.astype(np.float64))[0]
    product = np.convolve(q, v.astype(np.float64))
    return u.astype(np.float64) - product[-len(u):]


def roots_reference(p):
    """The roots of ``p`` (leading coefficient non-zero), sorted as ``np.sort_complex`` sorts."""
    return np.sort_complex(np.roots(p.astype(np.float64)).astype(np.complex128))


def cross_reference(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """numpy 1's cross product, which JAX documents as its own: vectors of 2 or 3 components along
    ``axisa``/``axisb`` (``axis`` sets all three), a 2-vector taken as a 3-vector of z 0; two
    2-vectors give the z component alone, else the 3-vector goes along ``axisc``. (numpy 2 refuses
    2-vectors: each is padded here, and numpy crosses 3-vectors.)"""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
    planar = a.shape[-1] == 2 and b.shape[-1] == 2
    a, b = (np.concatenate([v, np.zeros_like(v[..., :1])], axis=-1) if v.shape[-1] == 2 else v for v in (a, b))
    c = np.cross(a, b)
    return c[..., 2] if planar else np.moveaxis(c, -1, axisc)


def einsum_letters(count: int) -> str:
    return string.ascii_letters[:count]


def dot_general_reference(x, y, dimension_numbers):
    """``lax.dot_general``: sum over the contracting pairs, batch pairs kept; the result's
    dimensions are the batch ones, then ``x``'s free ones, then ``y``'s, each in order."""
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter(einsum_letters(x.ndim + y.ndim))
    xl = [next(letters) for _ in range(x.ndim)]
    yl = [next(letters) for _ in range(y.ndim)]
    for a, b in zip(tuple(lc) + tuple(lb), tuple(rc) + tuple(rb)):
        yl[b] = xl[a]
    batch = [xl[a] for a in lb]
    free_x = [xl[a] for a in range(x.ndim) if a not in lc and a not in lb]
    free_y = [yl[b] for b in range(y.ndim) if b not in rc and b not in rb]
    return np.einsum(f"{''.join(xl)},{''.join(yl)}->{''.join(batch + free_x + free_y)}", x, y)


def same_padding(size: int, window: int, stride: int) -> Tuple[int, int]:
    """``lax.padtype_to_pads`` for "SAME": an output of ``ceil(size / stride)``, the padding split
    with the smaller half before."""
    out = -(-size // stride)
    total = max(0, (out - 1) * stride + window - size)
    return total // 2, total - total // 2


def dilated(x: np.ndarray, dilation: Sequence[int], first: int = 2) -> np.ndarray:
    """``x`` with ``dilation - 1`` zeros between neighbours along each dimension from ``first`` on."""
    shape = list(x.shape)
    for k, d in enumerate(dilation):
        shape[first + k] = (x.shape[first + k] - 1) * d + 1 if x.shape[first + k] else 0
    out = np.zeros(shape, x.dtype)
    out[(slice(None),) * first + tuple(slice(None, None, d) for d in dilation)] = x
    return out


def conv_reference(lhs, rhs, strides, padding, lhs_dilation=None, rhs_dilation=None, feature_group_count=1):
    """A cross-correlation (XLA's convolution) of ``lhs`` (N, C, spatial...) with ``rhs``
    (O, C / groups, window...): ``lhs`` dilated, padded by ``padding`` (pairs, negative ones crop;
    or "SAME"/"VALID" of the dilated shapes), each output position the sum over the window and its
    group's input features; strides step the window."""
    nspatial = lhs.ndim - 2
    lhs = dilated(lhs, lhs_dilation or (1,) * nspatial)
    rhs = dilated(rhs, rhs_dilation or (1,) * nspatial)
    window = rhs.shape[2:]
    if isinstance(padding, str):
        padding = [same_padding(n, w, s) if padding == "SAME" else (0, 0)
                   for n, w, s in zip(lhs.shape[2:], window, strides)]
    for k, (low, high) in enumerate(padding):
        axis = 2 + k
        lhs = np.concatenate([np.zeros(lhs.shape[:axis] + (max(low, 0),) + lhs.shape[axis + 1:], lhs.dtype), lhs,
                              np.zeros(lhs.shape[:axis] + (max(high, 0),) + lhs.shape[axis + 1:], lhs.dtype)], axis)
        lhs = lhs[(slice(None),) * axis + (slice(max(-low, 0), lhs.shape[axis] - max(-high, 0)),)]
    windows = np.lib.stride_tricks.sliding_window_view(lhs, window, axis=tuple(range(2, lhs.ndim)))
    windows = windows[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides)]
    n, c = lhs.shape[:2]
    o = rhs.shape[0]
    groups = feature_group_count
    grouped = windows.reshape((n, groups, c // groups) + windows.shape[2:])
    kernel = rhs.reshape((groups, o // groups) + rhs.shape[1:])
    letters = einsum_letters(2 * nspatial)
    out_sp, win = letters[:nspatial], letters[nspatial:]
    result = np.einsum(f"NGC{out_sp}{win},GOC{win}->NGO{out_sp}", grouped.astype(np.float64),
                       kernel.astype(np.float64))
    return result.reshape((n, o) + result.shape[3:]).astype(np.result_type(lhs, rhs))


LAYOUTS = {  # (lhs, rhs, out) dimension numbers per spatial rank, channels-first and channels-last
    1: (("NCH", "OIH", "NCH"), ("NHC", "HIO", "NHC")),
    2: (("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC")),
}


def to_channels_first(x, spec: str, order: str) -> np.ndarray:
    """``x`` laid out by ``spec`` (letters of ``order`` first, then the spatial ones) transposed to
    ``order`` + spatial order."""
    spatial = [c for c in spec if c not in order]
    return np.transpose(x, [spec.index(c) for c in order] + [spec.index(c) for c in sorted(spatial, key="HWD".index)])


def from_channels_first(x, spec: str, order: str) -> np.ndarray:
    spatial = sorted((c for c in spec if c not in order), key="HWD".index)
    source = list(order) + spatial
    return np.transpose(x, [source.index(c) for c in spec])


def conv_general_dilated_reference(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                                   dimension_numbers, feature_group_count):
    """``lax.conv_general_dilated``: ``conv_reference`` in the layouts ``dimension_numbers`` name
    (None: NC..., OI..., NC...)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers or ("NC", "OI", "NC")
    lhs_spec, rhs_spec, out_spec = (s if len(s) == lhs.ndim else s + "HW"[:lhs.ndim - 2]
                                    for s in (lhs_spec, rhs_spec, out_spec))
    result = conv_reference(to_channels_first(lhs, lhs_spec, "NC"), to_channels_first(rhs, rhs_spec, "OI"),
                            window_strides, padding, lhs_dilation, rhs_dilation, feature_group_count)
    return from_channels_first(result, out_spec, "NC")


def conv_transpose_padding(k: int, s: int, padding) -> Tuple[int, int]:
    """``lax.conv_transpose``'s padding of its forward convolution's padding mode ("SAME", "VALID")
    for a kernel of (dilated) size ``k`` and stride ``s``, following keras' Conv2DTranspose."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else -(-total // 2)
    else:
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    return before, total - before


def conv_transpose_reference(lhs, rhs, *, strides, padding, rhs_dilation, transpose_kernel):
    """``lax.conv_transpose`` in its default layouts (N, spatial..., C; spatial..., I, O): ``lhs``
    dilated by ``strides``, padded by ``conv_transpose_padding`` of a padding mode (explicit pairs as
    given), convolved with the kernel (flipped, its I and O swapped, with ``transpose_kernel``)."""
    nspatial = lhs.ndim - 2
    lhs_first = np.moveaxis(lhs, -1, 1)
    kernel = np.moveaxis(rhs, (-1, -2), (0, 1))  # (O, I, window...)
    if transpose_kernel:
        kernel = np.swapaxes(np.flip(kernel, tuple(range(2, 2 + nspatial))), 0, 1)
    dilation = rhs_dilation or (1,) * nspatial
    if isinstance(padding, str):
        sizes = [(k - 1) * d + 1 for k, d in zip(kernel.shape[2:], dilation)]
        padding = [conv_transpose_padding(k, s, padding) for k, s in zip(sizes, strides)]
    result = conv_reference(lhs_first, kernel, (1,) * nspatial, padding, strides, dilation)
    return np.moveaxis(result, 1, -1)


def patches_reference(lhs, *, filter_shape, window_strides, padding):
    """``lax.conv_general_dilated_patches``: a convolution with one-hot kernels, one per input
    feature and window position, the output features ordered feature-major then window positions
    in C order."""
    c = lhs.shape[1]
    size = math.prod(filter_shape)
    kernel = np.zeros((c * size, c) + tuple(filter_shape), lhs.dtype)
    for feature, position in itertools.product(range(c), range(size)):
        kernel[(feature * size + position, feature) + np.unravel_index(position, filter_shape)] = 1
    return conv_reference(lhs, kernel, window_strides, padding)


def local_conv_reference(lhs, rhs, *, filter_shape, window_strides, padding):
    """``lax.conv_general_dilated_local`` (NC..., OI..., NC...): at each output position, the
    patch there (``patches_reference``) contracted with that position's own kernel ``rhs[:, :, pos]``."""
    patches = patches_reference(lhs, filter_shape=filter_shape, window_strides=window_strides, padding=padding)
    return np.einsum("ni...,oi...->no...", patches.astype(np.float64), rhs.astype(np.float64)).astype(lhs.dtype)


def ragged_dot_reference(lhs, rhs, group_sizes):
    """``lax.ragged_dot``: the rows of ``lhs`` in consecutive groups of ``group_sizes``, group ``g``
    multiplied by ``rhs[g]``."""
    bounds = np.concatenate([[0], np.cumsum(group_sizes)])
    out = np.zeros((lhs.shape[0], rhs.shape[2]), np.result_type(lhs, rhs))
    for g in range(rhs.shape[0]):
        out[bounds[g]:bounds[g + 1]] = lhs[bounds[g]:bounds[g + 1]] @ rhs[g]
    return out


FFT_REFERENCES = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn}


def fft_reference(x, *, fft_type, fft_lengths):
    """``lax.fft``: numpy's n-dimensional FFT (or inverse) over the trailing ``len(fft_lengths)``
    dimensions (``rfftn``/``irfftn`` of those lengths for the real forms)."""
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == "RFFT":
        return np.fft.rfftn(x, s=fft_lengths, axes=axes).astype(np.complex64)
    if fft_type == "IRFFT":
        return np.fft.irfftn(x, s=fft_lengths, axes=axes).astype(np.float32)
    return FFT_REFERENCES[fft_type](x, axes=axes).astype(np.complex64)


# --- inputs -------------------------------------------------------------------------------------
def two_operands(build):
    return i.inputs_from(build)


def matvec_inputs(matrix_first: bool):
    """``(..., M, N)`` and ``(..., N)`` (or ``(..., M)`` and ``(..., M, N)``), the leading
    dimensions broadcasting together."""
    def build(draw):
        m, n = side(draw), side(draw)
        batch = draw(i.shapes(0, 1))
        b1, b2 = i.broadcasting_shapes(draw, batch, 2) if batch else ((), ())
        if matrix_first:
            return (values(draw, F, b1 + (m, n)), values(draw, F, b2 + (n,))), {}
        return (values(draw, F, b1 + (m,)), values(draw, F, b2 + (m, n))), {}
    return two_operands(build)


def inner_inputs():
    """``(..., K)`` and ``(..., K)`` of ranks 1..3 (1 in 16 a scalar for one of them)."""
    def build(draw):
        k = side(draw)
        shapes = [draw(i.shapes(0, 2)) + (k,) for _ in range(2)]
        if not draw(st.integers(0, 15)):
            shapes[draw(st.integers(0, 1))] = ()
        return tuple(values(draw, I32, s, "any") for s in shapes), {}
    return two_operands(build)


def any_two_inputs(dtype: str, kind: str, max_rank: int = 2):
    """Two operands of independent shapes of ranks 0..``max_rank``."""
    def build(draw):
        return tuple(values(draw, dtype, draw(i.shapes(0, max_rank)), kind) for _ in range(2)), {}
    return two_operands(build)


def vdot_inputs():
    """Two operands of as many elements, in shapes of their own (``reshape_statics``)."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        other = draw(i.reshape_statics(shape))["shape"]
        return (values(draw, F, shape), values(draw, F, other)), {}
    return two_operands(build)


def vecdot_inputs():
    """Two operands of one rank (1..3) whose sides broadcast together, but along ``axis`` (any,
    negative ones included), where they are equal."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        axis = draw(i.one_axis(len(shape)))
        other = [n if draw(st.integers(0, 3)) else 1 for n in shape]
        other[axis] = shape[axis]
        shapes = [shape, tuple(other)]
        if draw(st.booleans()):
            shapes.reverse()
        return tuple(values(draw, F, s) for s in shapes), {"axis": axis}
    return two_operands(build)


def tensordot_inputs():
    """``a``, ``b`` and ``axes``: an int ``k`` (the last ``k`` sides of ``a`` are the first ``k`` of
    ``b``), or a pair of lists of distinct axes (negative ones included) whose sides agree."""
    def build(draw):
        a_shape = draw(i.shapes(0, 3))
        rank = len(a_shape)
        if draw(st.booleans()):
            k = draw(st.integers(0, min(rank, 2)))
            b_shape = a_shape[rank - k:] + draw(i.shapes(0, 3 - k))
            axes = k
        else:
            count = draw(st.integers(0, rank))
            a_axes = draw(permuted(range(rank)))[:count]
            b_rank = count + draw(st.integers(0, 3 - count))
            b_axes = draw(permuted(range(b_rank)))[:count]
            b_shape = [side(draw) for _ in range(b_rank)]
            for x, y in zip(a_axes, b_axes):
                b_shape[y] = a_shape[x]
            b_shape = tuple(b_shape)
            axes = ([x - rank if draw(st.booleans()) else x for x in a_axes],
                    [y - b_rank if draw(st.booleans()) else y for y in b_axes])
        return (values(draw, F, a_shape), values(draw, F, b_shape)), {"axes": axes}
    return two_operands(build)


def dot_general_inputs():
    """``x``, ``y`` and ``dimension_numbers``: 0..1 batch and 0..2 contracting pairs, 0..1 free
    dimensions each (one contracting pair where that leaves two scalars), every operand's dimensions
    in a drawn order."""
    def build(draw):
        batch = [side(draw) for _ in range(draw(st.integers(0, 1)))]
        contract = [side(draw) for _ in range(draw(st.integers(0, 2)))]
        free = [[side(draw) for _ in range(draw(st.integers(0, 1)))] for _ in range(2)]
        if not (batch or contract or free[0] or free[1]):  # (two scalars: nothing a mesh could cut)
            contract = [side(draw)]
        operands, numbers = [], []
        for k in range(2):
            dims = [("b", j) for j in range(len(batch))] + [("c", j) for j in range(len(contract))] + \
                   [("f", j) for j in range(len(free[k]))]
            order = draw(permuted(dims))
            sizes = {"b": batch, "c": contract, "f": free[k]}
            operands.append(values(draw, F, tuple(sizes[kind][j] for kind, j in order)))
            numbers.append(([order.index(("c", j)) for j in range(len(contract))],
                            [order.index(("b", j)) for j in range(len(batch))]))
        (lc, lb), (rc, rb) = numbers
        return tuple(operands), {"dimension_numbers": ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))}
    return two_operands(build)


def dot_inputs():
    """``lax.dot``: vector or matrix times vector or matrix, the inner sides equal."""
    def build(draw):
        m, k, n = side(draw), side(draw), side(draw)
        x = draw(sampled_from([(k,), (m, k)]))
        y = draw(sampled_from([(k,), (k, n)]))
        return (values(draw, I32, x, "any"), values(draw, I32, y, "any")), {}
    return two_operands(build)


def batch_matmul_inputs():
    """``(B..., M, K)`` and ``(B..., K, N)``, one batch shape of rank 0..2."""
    def build(draw):
        batch = draw(i.shapes(0, 2))
        m, k, n = side(draw), side(draw), side(draw)
        return (values(draw, F, batch + (m, k)), values(draw, F, batch + (k, n))), {}
    return two_operands(build)


def cross_inputs(form: str):
    """3-vectors (JAX 0.12 refuses 2-vectors) broadcast over leading shapes: ``axisa``, ``axisb``, ``axisc``
    (form "axes": each where its operand keeps its vectors, the result's among its dimensions) or
    one ``axis`` for all three (form "axis")."""
    def build(draw):
        batch = draw(i.shapes(0, 2))
        b1, b2 = i.broadcasting_shapes(draw, batch, 2) if batch else ((), ())
        n1, n2 = 3, 3  # (JAX 0.12 refuses 2-vectors, as numpy 2 does: "Dimension must be 3 for cross product")
        if form == "axis":
            b2 = b1 = batch
            n2 = n1
            axis = draw(st.integers(-len(batch) - 1, len(batch)))
            positions = {"axis": axis}
            where = (axis, axis)
        else:
            where = tuple(draw(st.integers(-len(b) - 1, len(b))) for b in (b1, b2))
            out_rank = len(batch) + 1
            positions = {"axisa": where[0], "axisb": where[1], "axisc": draw(st.integers(-out_rank, out_rank - 1))}
        shapes = []
        for b, n, at in zip((b1, b2), (n1, n2), where):
            s = list(b)
            s.insert(at % (len(b) + 1), n)
            shapes.append(tuple(s))
        return tuple(values(draw, I32, s, "small") for s in shapes), positions
    return two_operands(build)


def one_dimensional_pair(dtype: str, kind: str, mode: bool = False):
    """Two 1-D operands of their own lengths (and ``mode``: full, same or valid)."""
    def build(draw):
        operands = tuple(values(draw, dtype, (side(draw),), kind) for _ in range(2))
        return operands, ({"mode": draw(sampled_from(("full", "same", "valid")))} if mode else {})
    return two_operands(build)


def one_dimensional(dtype: str, kind: str, statics=None):
    def build(draw):
        x = values(draw, dtype, (side(draw),), kind)
        return (x,), (draw(statics(x.shape)) if statics else {})
    return i.inputs_from(build)


def cov_inputs():
    """Observations: a vector or variables x observations (rank 1..2, at least 2 observations),
    ``rowvar`` and ``bias``."""
    def build(draw):
        shape = draw(i.shapes(1, 2))
        rowvar = draw(st.booleans())
        observations = shape[-1] if rowvar or len(shape) == 1 else shape[0]
        if observations < 2:
            shape = tuple(2 if n == observations else n for n in shape)
        return (values(draw, F, shape),), {"rowvar": rowvar, "bias": draw(st.booleans())}
    return i.inputs_from(build)


def polydiv_inputs():
    """A dividend and a divisor no longer than it, whose leading coefficient is +-1 or +-2."""
    def build(draw):
        n = side(draw)
        u = values(draw, F, (n,), "small")
        v = values(draw, F, (draw(st.integers(1, n)),), "tiny")
        v[0] = draw(sampled_from((1.0, -1.0, 2.0, -2.0)))
        return (u, v), {}
    return i.inputs_from(build)


def polyval_inputs():
    """Coefficients (1-D) and points of rank 0..2."""
    def build(draw):
        return (values(draw, I32, (side(draw),), "small"), values(draw, I32, draw(i.shapes(0, 2)), "small")), {}
    return i.inputs_from(build)


def polyfit_inputs():
    """Points evenly spread over -1..1 (2..8 of them), values there (1-D, or 2-D: one column per
    fit), and a degree below the number of points (at most 2)."""
    def build(draw):
        n = draw(sampled_from((2, 4, 8, 6, 3)))
        x = np.linspace(-1, 1, n).astype(np.float32)
        y = values(draw, F, (n,) + draw(i.shapes(0, 1)), "small")
        return (x, y), {"deg": draw(st.integers(0, min(n - 1, 2)))}
    return i.inputs_from(build)


def roots_inputs():
    """The coefficients (float32) of a polynomial with 1..4 distinct integer roots in -4..4,
    leading coefficient 1 (so the roots are well separated and well conditioned)."""
    def build(draw):
        count = draw(st.integers(1, 4))
        zeros = draw(st.lists(st.integers(-4, 4), min_size=count, max_size=count, unique=True))
        return (np.poly(zeros).astype(np.float32),), {}
    return i.inputs_from(build)


def conv_inputs(kind: str, negative_dilated_low: bool = False):
    """``lhs`` (N, C, spatial...) and ``rhs`` (O, C / groups, window...) of 1 or 2 spatial
    dimensions, and the static arguments of ``kind``: "conv" (strides, padding "SAME"/"VALID"),
    "padding" (strides, explicit pairs -1..2, lhs and rhs dilation), "general" (all of those, the
    layout of ``LAYOUTS``, feature groups). A dimension with lhs dilation gets a low padding of 0..2
    unless ``negative_dilated_low`` (XLA's SPMD partitioner aborts on a negative one with that
    dimension cut: the entry in ``FINDINGS``)."""
    def build(draw):
        nspatial = draw(st.integers(1, 2))
        groups = draw(sampled_from((1, 2))) if kind == "general" else 1
        n, c, o = side(draw), groups * draw(sampled_from((1, 2, 3))), groups * draw(sampled_from((1, 2)))
        sizes = [side(draw) for _ in range(nspatial)]
        window = [draw(st.integers(1, min(3, n_))) for n_ in sizes]
        strides = tuple(draw(st.integers(1, 2)) for _ in range(nspatial))
        static = {"window_strides": strides}
        lhs_dilation = rhs_dilation = (1,) * nspatial
        if kind in ("padding", "general"):
            lhs_dilation = tuple(draw(st.integers(1, 2)) for _ in range(nspatial))
            rhs_dilation = tuple(draw(st.integers(1, 2)) for _ in range(nspatial))
            static.update(lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation)
        if kind == "conv" or (kind == "general" and lhs_dilation == (1,) * nspatial and draw(st.booleans())):
            static["padding"] = draw(sampled_from(("SAME", "VALID")))
        else:
            static["padding"] = tuple((draw(st.integers(-1 if negative_dilated_low or d == 1 else 0, 2)),
                                       draw(st.integers(-1, 2))) for d in lhs_dilation)
        dilated_sizes = [(s - 1) * d + 1 for s, d in zip(sizes, lhs_dilation)]
        windows = [(w - 1) * d + 1 for w, d in zip(window, rhs_dilation)]
        pads = static["padding"] if not isinstance(static["padding"], str) else [(0, 0)] * nspatial
        if any(s + lo + hi < w for s, (lo, hi), w in zip(dilated_sizes, pads, windows)):
            static["padding"] = tuple((max(w - s, 0), 0) for s, w in zip(dilated_sizes, windows))
        lhs = values(draw, F, (n, c, *sizes))
        rhs = values(draw, F, (o, c // groups, *window))
        if kind == "general":
            static["feature_group_count"] = groups
            layout = draw(sampled_from(LAYOUTS[nspatial]))
            static["dimension_numbers"] = layout if layout[0].startswith("NH") else None
            if static["dimension_numbers"]:
                lhs = from_channels_first(lhs, layout[0], "NC")
                rhs = from_channels_first(rhs, layout[1], "OI")
        return (lhs, rhs), static
    return i.inputs_from(build)


def conv_transpose_inputs():
    """``lhs`` (N, spatial..., C), ``rhs`` (window..., I, O) of 1 or 2 spatial dimensions;
    ``strides`` 1..2, ``padding`` "SAME"/"VALID", ``rhs_dilation`` 1..2, ``transpose_kernel``."""
    def build(draw):
        nspatial = draw(st.integers(1, 2))
        n, c, o = side(draw), draw(sampled_from((1, 2, 3))), draw(sampled_from((1, 2)))
        sizes = [side(draw) for _ in range(nspatial)]
        window = [draw(st.integers(1, 3)) for _ in range(nspatial)]
        transpose_kernel = draw(st.booleans())
        kernel_io = (o, c) if transpose_kernel else (c, o)
        static = {"strides": tuple(draw(st.integers(1, 2)) for _ in range(nspatial)),
                  "padding": draw(sampled_from(("SAME", "VALID"))),
                  "rhs_dilation": tuple(draw(st.integers(1, 2)) for _ in range(nspatial)),
                  "transpose_kernel": transpose_kernel}
        return (values(draw, F, (n, *sizes, c)), values(draw, F, (*window, *kernel_io))), static
    return i.inputs_from(build)


def patches_inputs(local: bool):
    """``lhs`` (N, C, spatial...), a ``filter_shape`` that fits, strides 1..2, padding "SAME" or
    "VALID"; with ``local``, ``rhs`` (O, C * window size, output spatial...)."""
    def build(draw):
        nspatial = draw(st.integers(1, 2))
        n, c = side(draw), draw(sampled_from((1, 2, 3)))
        sizes = [side(draw) for _ in range(nspatial)]
        filter_shape = tuple(draw(st.integers(1, min(3, s))) for s in sizes)
        strides = tuple(draw(st.integers(1, 2)) for _ in range(nspatial))
        padding = draw(sampled_from(("SAME", "VALID")))
        static = {"filter_shape": filter_shape, "window_strides": strides, "padding": padding}
        lhs = values(draw, F, (n, c, *sizes))
        if not local:
            return (lhs,), static
        out = patches_reference(lhs, **static).shape[2:]
        rhs = values(draw, F, (draw(sampled_from((1, 2))), c * math.prod(filter_shape), *out))
        return (lhs, rhs), static
    return i.inputs_from(build)


def ragged_dot_inputs():
    """``lhs`` (M, K), ``rhs`` (G, K, N) and ``group_sizes`` (G,) adding up to M (groups may be
    empty)."""
    def build(draw):
        m, k, n, groups = side(draw), side(draw), side(draw), draw(st.integers(1, 4))
        cuts = sorted(draw(st.lists(st.integers(0, m), min_size=groups - 1, max_size=groups - 1)))
        sizes = np.diff([0, *cuts, m]).astype(np.int32)
        return (values(draw, F, (m, k)), values(draw, F, (groups, k, n)), sizes), {}
    return i.inputs_from(build)


def fft_inputs(fft_type: str):
    """A complex64 operand (float32 for "RFFT") of rank 1..3 and the ``fft_lengths`` of its
    trailing 1..3 dimensions (for "IRFFT": the last one's real length, 2 * (side - 1))."""
    def build(draw):
        shape = draw(i.shapes(1, 3))
        count = draw(st.integers(1, len(shape)))
        lengths = shape[len(shape) - count:]
        if fft_type == "IRFFT":
            lengths = lengths[:-1] + (max(2 * (lengths[-1] - 1), 1),)
        x = values(draw, F, shape, "any")
        if fft_type != "RFFT":
            x = (x + 1j * values(draw, F, shape, "any")).astype(np.complex64)
        return (x,), {"fft_type": fft_type, "fft_lengths": tuple(lengths)}
    return i.inputs_from(build)


def axis_of_rank(shape):
    return st.fixed_dictionaries({"axis": i.one_axis(len(shape))})


def vander_statics(shape):
    return st.fixed_dictionaries({"N": st.one_of(st.none(), st.integers(1, 5)), "increasing": st.booleans()})


def axes_list_statics(shape):
    """``axes``: a list of distinct axes (negative ones included; jnp takes a sequence only)."""
    rank = len(shape)
    return st.lists(st.integers(0, rank - 1), unique=True, min_size=1).flatmap(
        lambda axes: st.tuples(*[st.sampled_from((a, a - rank)) for a in axes])).map(lambda axes: {"axes": list(axes)})


def polyder_statics(shape):
    """``m``: 0..3 derivatives, fewer than the coefficients (more leave an empty array)."""
    return st.fixed_dictionaries({"m": st.integers(0, min(3, shape[0] - 1))})


def polyint_statics(shape):
    return st.fixed_dictionaries({"m": st.integers(0, 3), "k": st.one_of(st.none(), st.integers(-3, 3))})


def polyint_reference(p, m, k):
    """``jnp.polyint``: ``k`` (None: 0) is every integration constant, as numpy reads a scalar."""
    return np.polyint(p.astype(np.float64), m, 0 if k is None else k)


# --- the entries --------------------------------------------------------------------------------
PRODUCTS: Tuple[Op, ...] = (
    entry("jnp.matmul", "dot_general", "lambda x, y: jnp.matmul(x, y)", np.matmul, i.matmul_inputs(F, "small")),
    entry("jnp.inner", "dot_general", "lambda x, y: jnp.inner(x, y)", np.inner, inner_inputs()),
    entry("jnp.outer", "outer", "lambda x, y: jnp.outer(x, y)", np.outer, any_two_inputs(I32, "any")),
    entry("jnp.kron", "kron", "lambda x, y: jnp.kron(x, y)", np.kron, any_two_inputs(I32, "any")),
    entry("jnp.tensordot", "dot_general", "lambda x, y, *, axes: jnp.tensordot(x, y, axes)",
          lambda x, y, axes: np.tensordot(x, y, axes), tensordot_inputs()),
    entry("jnp.vdot", "vdot", "lambda x, y: jnp.vdot(x, y)", np.vdot, vdot_inputs()),
    entry("jnp.cross", "cross", "lambda x, y, *, axisa, axisb, axisc: jnp.cross(x, y, axisa, axisb, axisc)",
          cross_reference, cross_inputs("axes")),
    entry("jnp.cross:axis", "cross", "lambda x, y, *, axis: jnp.cross(x, y, axis=axis)", cross_reference,
          cross_inputs("axis"), covers=("jnp.cross",)),
    entry("lax.dot", "dot_general", "lambda x, y: lax.dot(x, y)", np.dot, dot_inputs()),
    entry("lax.dot_general", "dot_general",
          "lambda x, y, *, dimension_numbers: lax.dot_general(x, y, dimension_numbers)", dot_general_reference,
          dot_general_inputs()),
    entry("lax.batch_matmul", "dot_general", "lambda x, y: lax.batch_matmul(x, y)", np.matmul, batch_matmul_inputs()),
)

def conv_with_general_padding(inputs, name: str = "lax.conv_with_general_padding") -> Op:
    return entry(name, "convolution",
                 "lambda x, y, *, window_strides, padding, lhs_dilation, rhs_dilation: "
                 "lax.conv_with_general_padding(x, y, window_strides, padding, lhs_dilation, rhs_dilation)",
                 lambda x, y, window_strides, padding, lhs_dilation, rhs_dilation: conv_reference(
                     x, y, window_strides, padding, lhs_dilation, rhs_dilation), inputs,
                 covers=("lax.conv_with_general_padding",))


CONVOLUTIONS: Tuple[Op, ...] = (
    entry("lax.conv", "convolution", "lambda x, y, *, window_strides, padding: lax.conv(x, y, window_strides, padding)",
          lambda x, y, window_strides, padding: conv_reference(x, y, window_strides, padding), conv_inputs("conv")),
    conv_with_general_padding(conv_inputs("padding")),
    entry("lax.conv_general_dilated", "convolution",
          "lambda x, y, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers, "
          "feature_group_count: lax.conv_general_dilated(x, y, window_strides, padding, lhs_dilation, rhs_dilation, "
          "dimension_numbers, feature_group_count)",
          lambda x, y, **static: conv_general_dilated_reference(x, y, **static), conv_inputs("general")),
    entry("lax.conv_transpose", "convolution",
          "lambda x, y, *, strides, padding, rhs_dilation, transpose_kernel: lax.conv_transpose(x, y, strides, "
          "padding, rhs_dilation, transpose_kernel=transpose_kernel)",
          lambda x, y, **static: conv_transpose_reference(x, y, **static), conv_transpose_inputs()),
    entry("lax.conv_general_dilated_patches", "convolution",
          "lambda x, *, filter_shape, window_strides, padding: lax.conv_general_dilated_patches(x, filter_shape, "
          "window_strides, padding)", lambda x, **static: patches_reference(x, **static), patches_inputs(False)),
)

STATISTICS: Tuple[Op, ...] = (
    entry("jnp.cov", "statistics", "lambda x, *, rowvar, bias: jnp.cov(x, rowvar=rowvar, bias=bias)",
          lambda x, rowvar, bias: np.cov(x, rowvar=rowvar, bias=bias), cov_inputs(), result="inexact",
          tolerance=FLOAT_SUMS),
    entry("jnp.corrcoef", "statistics", "lambda x, *, rowvar: jnp.corrcoef(x, rowvar=rowvar)",
          lambda x, rowvar: np.corrcoef(x, rowvar=rowvar),
          cov_inputs().map(lambda drawn: (drawn[0], {"rowvar": drawn[1]["rowvar"]})), result="inexact",
          tolerance=FLOAT_SUMS),
)

POLYNOMIALS: Tuple[Op, ...] = (
    entry("jnp.poly", "polynomial", "lambda x: jnp.poly(x)", np.poly, one_dimensional(F, "tiny"), result="inexact"),
    entry("jnp.polyder", "polynomial", "lambda x, *, m: jnp.polyder(x, m)", lambda x, m: np.polyder(x, m),
          one_dimensional(I32, "small", polyder_statics), result="inexact"),
    entry("jnp.polyint", "polynomial", "lambda x, *, m, k: jnp.polyint(x, m, k)", polyint_reference,
          one_dimensional(F, "small", polyint_statics), result="inexact", tolerance=TRANSCENDENTAL),
    entry("jnp.vander", "vander", "lambda x, *, N, increasing: jnp.vander(x, N, increasing)",
          lambda x, N, increasing: np.vander(x, N, increasing), one_dimensional(I32, "small", vander_statics)),
)

APPLIED: Tuple[Op, ...] = (
    entry("jnp.apply_along_axis", "reduction", "lambda x, *, axis: jnp.apply_along_axis(jnp.sum, axis, x)",
          lambda x, axis: np.apply_along_axis(np.sum, axis, x),
          i.unary_inputs(I32, "small", axis_of_rank, min_rank=1), result="sum",
          covers=("jnp.apply_along_axis", "jnp.sum")),
    entry("jnp.apply_over_axes", "summed_over_axes", "lambda x, *, axes: jnp.apply_over_axes(jnp.sum, x, axes)",
          lambda x, axes: np.apply_over_axes(np.sum, x, axes),
          i.unary_inputs(I32, "small", axes_list_statics, min_rank=1),
          result="sum", covers=("jnp.apply_over_axes", "jnp.sum")),
)

LAX_SPECIAL: Tuple[Op, ...] = (
)

# jnp.vectorize, and the products built on it, of operands cut unlike each other raise vmap's ValueError
# on an Explicit mesh (triaged: explicit_vectorize_of_a_cut_and_a_replicated_operand, its strict
# reproduction in suites/test_sharding_invariance_reproductions.py): they run on Auto meshes only
# until JAX fixes it (the products' route has no Explicit rule of ours either).
# On an Explicit mesh: jnp.polyadd and jnp.polysub of a cut shorter operand raise ValueError from their
# .at[].add (the known deviation of test_explicit_scatter_update_conflict_is_a_sharding_type_error);
# jnp.polyval at cut points raises TypeError from its scan's replicated carry (polyval_scan_carry_loses_
# the_points_sharding, 0.8.2-0.11.2), with cut coefficients lax.scan's documented refusal of a cut scanned
# axis (a ValueError); lax.ragged_dot and ragged_dot_general raise NotImplementedError "Explicit sharding
# inference for ragged_dot_general is not currently implemented. Please specify out_sharding." from
# 0.10.1 (a rule JAX left unwritten). They run on Auto meshes only until JAX fixes them.
POLYNOMIAL_AND_RAGGED: Tuple[Op, ...] = tuple(replace(op, explicit=False) for op in (
    entry("jnp.polyadd", "polynomial", "lambda x, y: jnp.polyadd(x, y)", np.polyadd,
          one_dimensional_pair(I32, "any")),
    entry("jnp.polysub", "polynomial", "lambda x, y: jnp.polysub(x, y)", np.polysub,
          one_dimensional_pair(I32, "any")),
    entry("jnp.polyval", "polynomial", "lambda p, x: jnp.polyval(p, x)", np.polyval, polyval_inputs()),
    entry("lax.ragged_dot", "ragged_dot", "lambda x, y, group_sizes: lax.ragged_dot(x, y, group_sizes)",
          ragged_dot_reference, ragged_dot_inputs(), result="same"),
    entry("lax.ragged_dot_general", "ragged_dot",
          "lambda x, y, group_sizes: lax.ragged_dot_general(x, y, group_sizes, lax.RaggedDotDimensionNumbers("
          "dot_dimension_numbers=(([1], [1]), ([], [])), lhs_ragged_dimensions=[0], rhs_group_dimensions=[0]))",
          ragged_dot_reference, ragged_dot_inputs(), result="same"),
))

# A window split over a cut axis of a partially replicated layout comes back multiplied (the known
# deviation of cause spmd_convolution_window_sum_over_all_devices, trigger convolution_cut_over_part_of_the_mesh).
WINDOWED: Tuple[Op, ...] = (
    entry("jnp.convolve", "convolution", "lambda x, y, *, mode: jnp.convolve(x, y, mode=mode)",
          lambda x, y, mode: np.convolve(x, y, mode=mode), one_dimensional_pair(F, "small", mode=True)),
    entry("jnp.correlate", "convolution", "lambda x, y, *, mode: jnp.correlate(x, y, mode=mode)",
          lambda x, y, mode: np.correlate(x, y, mode=mode), one_dimensional_pair(F, "small", mode=True)),
    # (on Auto meshes only: its route, a convolution of its coefficients, has no Explicit rule of ours)
    entry("jnp.polymul", "polynomial", "lambda x, y: jnp.polymul(x, y)", polymul_reference,
          one_dimensional_pair(I32, "small"), result="inexact", explicit=False),
)

VECTORIZED: Tuple[Op, ...] = (
    entry("jnp.vecdot", "vectorized_product", "lambda x, y, *, axis: jnp.vecdot(x, y, axis=axis)",
          lambda x, y, axis: np.vecdot(x, y, axis=axis), vecdot_inputs(), explicit=False),
    entry("jnp.matvec", "vectorized_product", "lambda x, y: jnp.matvec(x, y)", np.matvec, matvec_inputs(True),
          explicit=False),
    entry("jnp.vecmat", "vectorized_product", "lambda x, y: jnp.vecmat(x, y)", np.vecmat, matvec_inputs(False),
          explicit=False),
    entry("jnp.vectorize", "broadcasting", "lambda x, y: jnp.vectorize(lambda a, b: a * b - a)(x, y)",
          lambda x, y: x * y - x, i.broadcasting_inputs((I32, I32)), explicit=False),
)

FINDINGS: Tuple[Op, ...] = (
    entry("lax.conv_general_dilated_local", "convolution",
          "lambda x, y, *, filter_shape, window_strides, padding: lax.conv_general_dilated_local(x, y, window_strides, "
          "padding, filter_shape)", lambda x, y, **static: local_conv_reference(x, y, **static), patches_inputs(True),
          # (jitted with the kernel cut XLA aborts: suites/bugs/untriaged/lax_conv_general_dilated_local.py;
          # on Explicit meshes its route, patches then a dot_general with batch dimensions, has no rule of ours)
          explicit=False),
    *(entry(f"lax.fft{'' if kind == 'FFT' else ':' + kind.lower()}", "fft",
            "lambda x, *, fft_type, fft_lengths: lax.fft(x, fft_type, fft_lengths)",
            lambda x, **static: fft_reference(x, **static), fft_inputs(kind),
            result={"FFT": "same", "IFFT": "same", "RFFT": "complex", "IRFFT": "real"}[kind],
            tolerance=FFT_TOLERANCE, covers=("lax.fft",))
      for kind in ("FFT", "IFFT", "RFFT", "IRFFT")),
    conv_with_general_padding(conv_inputs("padding", negative_dilated_low=True),
                              "lax.conv_with_general_padding:negative_dilated_low"),
)
"""Entries that fail for JAX's reasons (each reported with a stand-alone script), not run."""

NOT_MODELLED: Tuple[Op, ...] = (
    entry("jnp.polydiv", "polynomial", "lambda u, v: jnp.polydiv(u, v)[0]", lambda u, v: np.polydiv(u, v)[0],
          polydiv_inputs(), result="inexact", tolerance=FLOAT_SUMS),
    entry("jnp.polydiv:remainder", "polynomial", "lambda u, v: jnp.polydiv(u, v)[1]", polydiv_remainder_reference,
          polydiv_inputs(), result="inexact", tolerance=FLOAT_SUMS, covers=("jnp.polydiv",)),
    entry("jnp.polyfit", "polynomial", "lambda x, y, *, deg: jnp.polyfit(x, y, deg)",
          lambda x, y, deg: np.polyfit(x, y, deg), polyfit_inputs(), result="inexact",
          tolerance=dict(rtol=1e-4, atol=1e-4)),
    entry("jnp.roots", "polynomial", "lambda p: jnp.sort_complex(jnp.roots(p, strip_zeros=False))", roots_reference,
          roots_inputs(), result="complex", tolerance=dict(rtol=1e-4, atol=1e-4),
          covers=("jnp.roots", "jnp.sort_complex")),
)
"""Entries whose Explicit-mesh rejections (slices of one element, gathers of a cut operand, an SVD
or eigendecomposition of a cut matrix) no rule of ``sharding_vocabulary_linalg`` models yet: they run
on Auto meshes only until it does."""

ENTRIES: Tuple[Op, ...] = (PRODUCTS + CONVOLUTIONS + STATISTICS + POLYNOMIALS + APPLIED + LAX_SPECIAL + VECTORIZED
                           + WINDOWED + POLYNOMIAL_AND_RAGGED
                           + tuple(replace(op, explicit=False) for op in NOT_MODELLED))
