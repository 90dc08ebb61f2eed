"""Array creation and the operations that take an output sharding, parameter by parameter: the
jax.numpy creators given ``device=`` (a NamedSharding, or one Device) or ``out_sharding=``, and the
jnp and lax operations that take ``out_sharding=``/``sharding=``, ``precision=`` and
``preferred_element_type=``, each with its other parameters. Each row of ``ROWS`` passes its
parameters with non-default values and checks their effect: the values against numpy (bit for
bit; a tolerance only where float32 rounding legitimately differs from numpy's float64, named on
the row), the dtype asked for, and the layout against the model (conformance/model/layout.py) on
Auto meshes (``device=``) and Explicit meshes (``out_sharding=``, inside the mesh context). lax's
operations are checked against small numpy references of their documented semantics (a
convolution with strides, padding, dilations, dimension numbers and feature and batch groups; a
ragged dot per group); ``precision=HIGHEST`` by operands a bfloat16 product would round;
``preferred_element_type`` by sums that overflow the operands' type. A documented refusal (jnp's
``out=``, an unsupported ``order``, ``out_sharding`` naming an Auto axis) is a row that checks the
exception type and that its message names the reason. Every computing entry has an eager row, a
jit row and, where it takes out_sharding, an Explicit-mesh row; each row jits its function once
per mesh."""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec

from conformance.checking.case import Case
from conformance.checking.layouts import check_layout
from conformance.checking.repro import array_literal, describe_mesh, scripted_case, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel

pytestmark = pytest.mark.out_sharding
DEVICES = bridge.live_device_ids()
N = len(DEVICES)
EXAMPLES = max(2, settings().max_examples // 50)  # a row is one call's parameters: each example compiles anew
# numpy's default dtypes as JAX gives them: 32-bit unless jax_enable_x64
DEFAULT_INT = np.int64 if compat.x64_enabled() else np.int32
DEFAULT_FLOAT = np.float64 if compat.x64_enabled() else np.float32


@dataclass(frozen=True)
class Example:
    """A mesh over every live device in a drawn order: one axis 'a', or ('a', 'b') of shape
    (2, N/2); and a seed for the row's values."""

    mesh: MeshModel
    seed: int

    @property
    def cut(self):
        """The spec entry that cuts a dimension over every device of the mesh."""
        names = self.mesh.axis_names
        return names[0] if len(names) == 1 else tuple(names)

    @property
    def device_id(self) -> int:
        """The device a ``device=<Device>`` row asks for: a drawn one other than the backend's first
        (where an uncommitted result lands, so that a device= ignored shows), where there are two."""
        return self.other_id

    @property
    def other_id(self) -> int:
        """A device other than the backend's first (where DLPack places host memory on CPU): the
        mesh's last such device (the first device where there is only one)."""
        others = [d for d in self.mesh.device_ids if d != jax.devices()[0].id]
        return others[-1] if others else self.mesh.device_ids[0]

    def ints(self, k: int, shape, lo: int, hi: int, dtype: str = "int32") -> np.ndarray:
        """Integers in [lo, hi) of ``shape`` as ``dtype``, the ``k``-th array of the example."""
        return np.random.default_rng([self.seed, k]).integers(lo, hi, shape).astype(dtype)

    def group_sizes(self, k: int, total: int, groups: int) -> np.ndarray:
        """``groups`` non-negative int32 sizes that add up to ``total`` (some may be 0)."""
        cuts = np.sort(np.random.default_rng([self.seed, k]).integers(0, total + 1, groups - 1))
        return np.diff(np.concatenate([[0], cuts, [total]])).astype(np.int32)


@st.composite
def examples(draw) -> Example:
    order = tuple(draw(st.permutations(DEVICES)))
    two_axes = N >= 4 and N % 2 == 0 and draw(st.booleans())
    mesh = MeshModel(order, (2, N // 2), ("a", "b")) if two_axes else MeshModel(order, (N,), ("a",))
    return Example(mesh, draw(st.integers(0, 2 ** 16)))


@dataclass(frozen=True)
class Placed:
    """An input put on the row's mesh (its axis type) with ``spec``, before the call."""

    value: np.ndarray
    spec: tuple


@dataclass(frozen=True)
class Uninitialized:
    """A result whose values JAX leaves unspecified (lax.empty): only its shape and dtype are checked."""

    shape: tuple
    dtype: str


@dataclass(frozen=True)
class ZeroSignOpen:
    """A float result whose values are exact but whose zeros' signs JAX leaves open: a sum of products
    that are all -0.0 is -0.0 or +0.0 by where the sum starts (BLAS, numpy's matmul and XLA:CPU on one
    device start from +0.0; jnp.dot(a, b, out_sharding=P('a', None)) on an Explicit mesh of 8 CPU
    devices gives -0.0 on every release with jax.set_mesh, 0.7.1 on, measured 2026-12-07; met in the
    release matrix on 0.10.1). Compared exactly, -0.0 and +0.0 alike."""

    values: np.ndarray


CONTEXTS = ("eager", "jit", "Explicit", "Explicit jit")
DEVICE = "device"  # a row's layout: on the one device ``device`` (SingleDeviceSharding)


@dataclass(frozen=True)
class Row:
    """One call: the entry, the parameters it passes with non-default values (each one's effect
    checked), what the form is, the context it runs in (``CONTEXTS``), and the call as code over
    its inputs and ``n`` (the device count), ``spec`` (a PartitionSpec), ``s`` (NamedSharding(mesh,
    spec) on the context's mesh), ``device`` and ``first`` (the mesh's last and first devices),
    ``other`` (``Example.other_id``), ``mesh``, ``jax``, ``jnp``, ``lax``, ``np`` and ``P``.
    ``expected`` gives numpy's values (a tuple for several results; ``Uninitialized`` where JAX
    leaves them unspecified) and ``layout`` what the results ``laid_out`` must be laid out as:
    ``spec`` (the default), DEVICE, or None."""

    entry: str
    parameters: Tuple[str, ...]
    form: str
    context: str
    source: str
    inputs: Callable[[Example], dict]
    expected: Optional[Callable[[Example, dict], object]]
    spec: Optional[Callable[[Example], tuple]]
    layout: Optional[str]
    laid_out: Tuple[int, ...]
    refused: Tuple[type, ...]
    says: str  # the refusal's message matches this (case-insensitive)
    then: str  # a statement run after the call, before its result is read (deleting or changing an input)
    tolerance: Optional[Tuple[float, float]]  # (rtol, atol), only where float32 rounding legitimately differs
    warns: Optional[type]
    min_devices: int
    aligned: bool  # numpy inputs in 64-byte aligned buffers (which JAX may use without copying)
    # (a behaviour change of compat's table, the exceptions and the message's pattern of its refusal
    # on the releases before it): where the change is not in effect, the row checks that refusal
    refused_before: Tuple = ()

    @property
    def id(self) -> str:
        return f"{self.entry.removeprefix('jax.')}-{self.form}-{self.context}"

    @property
    def explicit(self) -> bool:
        return self.context.startswith("Explicit")

    @property
    def refusal(self) -> Tuple[tuple, str]:
        """(the exceptions, the message's pattern) the row expects on this JAX: its own, or the
        refusal of the releases before its ``refused_before`` change ((), "" where it computes)."""
        if self.refused_before and not getattr(compat, self.refused_before[0]):
            return self.refused_before[1], self.refused_before[2]
        return self.refused, self.says

    @property
    def jitted(self) -> bool:
        return self.context.endswith("jit")


ROWS = []


def row(entry, parameters, form, context, source, *, inputs=lambda ex: {}, expected=None, spec=None, layout="spec",
        laid_out=(0,), refused=(), says="", then="", tolerance=None, warns=None, min_devices=1, aligned=False,
        refused_before=()):
    """Register one row (``parameters`` a space-separated string)."""
    assert context in CONTEXTS, context
    ROWS.append(Row(entry, tuple(parameters.split()), form, context, source, inputs, expected, spec,
                    layout if spec is not None or layout == DEVICE else None, tuple(laid_out), tuple(refused), says,
                    then, tolerance, warns, min_devices, aligned, tuple(refused_before)))


# --- numpy references of the documented semantics ------------------------------------------------
def repeat_reference(x, repeats, axis, total):
    """jnp.repeat with total_repeat_length: numpy's repeat, its extra values discarded or "the final
    value" repeated up to ``total`` (jnp.repeat's documented rule; the final value is x's last along
    ``axis``, as every release from 0.4.30 to 0.12.0.1 reads it, also where its repeat is 0)."""
    out = np.repeat(x, repeats, axis=axis)
    length = out.shape[axis]
    if total <= length:
        return np.take(out, range(total), axis=axis)
    last = np.take(x, [x.shape[axis] - 1], axis=axis)
    return np.concatenate([out] + [last] * (total - length), axis=axis)


def conv_reference(lhs, rhs, strides, padding, lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                   feature_group_count=1, batch_group_count=1, out_dtype=None):
    """XLA's ConvGeneralDilated as lax.conv_general_dilated documents it, in int64 or float64: lhs
    dilated (``d - 1`` zeros between elements), padded (low, high; 'SAME' and 'SAME_LOWER' pad for
    ceil(in / stride) outputs, the odd unit at the end or the start), windows of the dilated rhs
    every ``stride``; lhs features in ``feature_group_count`` groups, each feeding its share of the
    output features; the lhs batch in ``batch_group_count`` groups, each feeding its share of the
    output features. String dimension numbers name N/C, O/I and the spatial dimensions by letter,
    the spatial order (for strides, padding and dilations) being rhs_spec's."""
    nsp = lhs.ndim - 2
    if dimension_numbers is None:
        lp = rp = op = list(range(lhs.ndim))
    else:
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        spatial = [c for c in rhs_spec if c not in "OI"]
        lp = [lhs_spec.index("N"), lhs_spec.index("C")] + [lhs_spec.index(c) for c in spatial]
        rp = [rhs_spec.index("O"), rhs_spec.index("I")] + [rhs_spec.index(c) for c in spatial]
        op = [out_spec.index("N"), out_spec.index("C")] + [out_spec.index(c) for c in spatial]
    wide = np.float64 if lhs.dtype.kind == "f" else np.int64
    lhs_t, rhs_t = np.transpose(lhs, lp).astype(wide), np.transpose(rhs, rp).astype(wide)
    lhs_dilation = tuple(lhs_dilation or (1,) * nsp)
    rhs_dilation = tuple(rhs_dilation or (1,) * nsp)
    dilated = np.zeros(list(lhs_t.shape[:2]) + [(s - 1) * d + 1 for s, d in zip(lhs_t.shape[2:], lhs_dilation)], wide)
    dilated[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in lhs_dilation)] = lhs_t
    windows = [(k - 1) * d + 1 for k, d in zip(rhs_t.shape[2:], rhs_dilation)]
    if isinstance(padding, str):
        pads = []
        for size, window, stride in zip(dilated.shape[2:], windows, strides):
            total = 0 if padding == "VALID" else max((-(-size // stride) - 1) * stride + window - size, 0)
            small, big = total // 2, total - total // 2
            pads.append((small, big) if padding != "SAME_LOWER" else (big, small))
    else:
        pads = list(padding)
    padded = np.pad(dilated, [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in pads])
    padded = padded[(slice(None), slice(None)) + tuple(slice(max(-lo, 0), padded.shape[2 + i] - max(-hi, 0))
                                                       for i, (lo, hi) in enumerate(pads))]
    batch, _ = padded.shape[:2]
    out_features, in_features = rhs_t.shape[:2]
    groups, batch_groups = feature_group_count, batch_group_count
    out_spatial = [(size - window) // stride + 1 for size, window, stride in zip(padded.shape[2:], windows, strides)]
    out = np.zeros([batch // batch_groups, out_features] + out_spatial, wide)
    for o in range(out_features):
        group = o // (out_features // groups)
        batch_group = o // (out_features // batch_groups)
        features = slice(group * in_features, (group + 1) * in_features)
        for b in range(batch // batch_groups):
            for pos in np.ndindex(*out_spatial):
                window = tuple(slice(p * s, p * s + w, d) for p, s, w, d in zip(pos, strides, windows, rhs_dilation))
                out[(b, o) + pos] = np.sum(padded[(batch_group * (batch // batch_groups) + b, features) + window]
                                           * rhs_t[o])
    return np.transpose(out, np.argsort(op)).astype(out_dtype or lhs.dtype)


def ragged_reference(lhs, rhs, sizes, out_dtype):
    """lax.ragged_dot: the rows of each group of ``sizes`` times that group's matrix of ``rhs``."""
    starts = np.concatenate([[0], np.cumsum(sizes)])
    out = np.zeros((lhs.shape[0], rhs.shape[2]), np.int64 if lhs.dtype.kind in "iu" else np.float64)
    for g in range(len(sizes)):
        rows = slice(starts[g], starts[g + 1])
        out[rows] = lhs[rows].astype(out.dtype) @ rhs[g].astype(out.dtype)
    return out.astype(out_dtype)


def ragged_contracting_reference(lhs, rhs, sizes, out_dtype):
    """lax.ragged_dot_general with the contracting dimension ragged: one product per group, over
    that group's slice of the contracting dimension ([g, m, n])."""
    starts = np.concatenate([[0], np.cumsum(sizes)])
    wide = np.int64 if lhs.dtype.kind in "iu" else np.float64
    return np.stack([lhs[:, starts[g]:starts[g + 1]].astype(wide) @ rhs[starts[g]:starts[g + 1]].astype(wide)
                     for g in range(len(sizes))]).astype(out_dtype)


def wide_dot(a, b, out_dtype):
    """``a @ b`` exactly (int64 or float64), then as ``out_dtype``; a float one's zeros of either sign
    (``ZeroSignOpen``)."""
    wide = np.int64 if np.dtype(a.dtype).kind in "iu" else np.float64
    exact = np.matmul(a.astype(wide), b.astype(wide)).astype(out_dtype)
    return ZeroSignOpen(exact) if exact.dtype.kind == "f" else exact


# Operands whose float32 products are exact but whose bfloat16 rounding is not (integers above 256
# need more than bfloat16's 8 significant bits): a product at HIGHEST precision equals numpy's.
def wide_ints(ex, k, shape):
    return ex.ints(k, shape, 257, 1024, "float32")


def small(ex, k, shape, dtype="float32"):
    return ex.ints(k, shape, -4, 5, dtype)


def int8s(ex, k, shape):
    """int8 operands whose products' sums overflow int8."""
    return ex.ints(k, shape, 64, 128, "int8")


def float16s(ex, k, shape):
    """float16 integers whose products' sums overflow float16 (max 65504) but are exact in float32."""
    return ex.ints(k, shape, 200, 257, "float16")


ROW_CUT = lambda ex: (ex.cut, None)
COL_CUT = lambda ex: (None, ex.cut)
VEC_CUT = lambda ex: (ex.cut,)
REPLICATED = lambda ex: ()
AUTO_AXIS = r"\bAuto\b"  # an out_sharding naming an Auto axis is refused, saying the axis is Auto
ORDER = r"order"
HIGHEST = "lax.Precision.HIGHEST"


# --- creators: device= (a NamedSharding, a Device), out_sharding= on Explicit meshes ---------------
row("jax.numpy.zeros", "shape dtype device", "NamedSharding", "eager", "jnp.zeros((n, 3), jnp.int16, device=s)",
    spec=ROW_CUT, expected=lambda ex, v: np.zeros((N, 3), np.int16))
row("jax.numpy.zeros", "shape dtype device", "Device", "eager", "jnp.zeros((5,), jnp.uint8, device=device)",
    layout=DEVICE, expected=lambda ex, v: np.zeros(5, np.uint8))
row("jax.numpy.zeros", "shape dtype out_sharding", "P", "Explicit", "jnp.zeros((n, 3), jnp.int16, out_sharding=spec)",
    spec=ROW_CUT, expected=lambda ex, v: np.zeros((N, 3), np.int16))
row("jax.numpy.zeros", "shape out_sharding", "NamedSharding", "Explicit", "jnp.zeros((3, n), out_sharding=s)",
    spec=COL_CUT, expected=lambda ex, v: np.zeros((3, N), DEFAULT_FLOAT))
row("jax.numpy.ones", "shape dtype device", "NamedSharding", "eager", "jnp.ones((n, 2), jnp.int8, device=s)",
    spec=ROW_CUT, expected=lambda ex, v: np.ones((N, 2), np.int8))
row("jax.numpy.ones", "shape dtype out_sharding", "P", "Explicit", "jnp.ones((2, n), jnp.float16, out_sharding=spec)",
    spec=COL_CUT, expected=lambda ex, v: np.ones((2, N), np.float16))
# jnp.empty documents zeros ("XLA cannot create uninitialized arrays ... returns a buffer initialized with zeros")
row("jax.numpy.empty", "shape dtype device", "NamedSharding", "eager", "jnp.empty((n, 2), jnp.int32, device=s)",
    spec=ROW_CUT, expected=lambda ex, v: np.zeros((N, 2), np.int32))
row("jax.numpy.empty", "shape dtype out_sharding", "P", "Explicit", "jnp.empty((n,), jnp.float16, out_sharding=spec)",
    spec=VEC_CUT, expected=lambda ex, v: np.zeros(N, np.float16))
row("jax.numpy.full", "shape fill_value dtype device", "scalar fill, NamedSharding", "eager",
    "jnp.full((n, 2), 7, jnp.int16, device=s)", spec=ROW_CUT, expected=lambda ex, v: np.full((N, 2), 7, np.int16))
row("jax.numpy.full", "shape fill_value device", "array fill, NamedSharding", "eager", "jnp.full((n, 2), f, device=s)",
    inputs=lambda ex: {"f": ex.ints(0, (2,), -9, 10, "int16")}, spec=ROW_CUT,
    expected=lambda ex, v: np.broadcast_to(v["f"], (N, 2)))
row("jax.numpy.full", "shape fill_value device", "array fill, Device", "eager", "jnp.full((3, 2), f, device=device)",
    inputs=lambda ex: {"f": ex.ints(0, (2,), -9, 10, "int16")}, layout=DEVICE,
    expected=lambda ex, v: np.broadcast_to(v["f"], (3, 2)))
row("jax.numpy.full", "shape fill_value dtype out_sharding", "P", "Explicit",
    "jnp.full((n, 2), -3, jnp.int8, out_sharding=spec)", spec=ROW_CUT,
    expected=lambda ex, v: np.full((N, 2), -3, np.int8))
row("jax.numpy.full_like", "a fill_value dtype shape device", "NamedSharding", "eager",
    "jnp.full_like(y, 9, jnp.int8, (n, 3), device=s)", inputs=lambda ex: {"y": Placed(small(ex, 0, (2, 2)), ())},
    spec=ROW_CUT, expected=lambda ex, v: np.full((N, 3), 9, np.int8))
row("jax.numpy.full_like", "a fill_value out_sharding", "P", "Explicit", "jnp.full_like(y, 5, out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), ())}, spec=ROW_CUT,
    expected=lambda ex, v: np.full((N, 2), 5, np.int32))
row("jax.numpy.zeros_like", "a dtype shape device", "NamedSharding", "eager",
    "jnp.zeros_like(y, jnp.float16, (n, 2), device=s)", inputs=lambda ex: {"y": Placed(small(ex, 0, (3,)), ())},
    spec=ROW_CUT, expected=lambda ex, v: np.zeros((N, 2), np.float16))
row("jax.numpy.zeros_like", "a device", "Device", "eager", "jnp.zeros_like(x, device=device)",
    inputs=lambda ex: {"x": small(ex, 0, (3, 2), "int16")}, layout=DEVICE,
    expected=lambda ex, v: np.zeros((3, 2), np.int16))
row("jax.numpy.zeros_like", "a out_sharding", "P", "Explicit", "jnp.zeros_like(y, out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), ())}, spec=ROW_CUT,
    expected=lambda ex, v: np.zeros((N, 2), np.int32))
row("jax.numpy.ones_like", "a dtype shape device", "NamedSharding", "eager",
    "jnp.ones_like(y, jnp.int16, (2, n), device=s)", inputs=lambda ex: {"y": Placed(small(ex, 0, (3,)), ())},
    spec=COL_CUT, expected=lambda ex, v: np.ones((2, N), np.int16))
row("jax.numpy.ones_like", "a dtype out_sharding", "P", "Explicit", "jnp.ones_like(x, jnp.int8, out_sharding=spec)",
    inputs=lambda ex: {"x": small(ex, 0, (N, 2))}, spec=ROW_CUT, expected=lambda ex, v: np.ones((N, 2), np.int8))
row("jax.numpy.empty_like", "prototype dtype shape device", "NamedSharding", "eager",
    "jnp.empty_like(y, jnp.int16, (n, 3), device=s)", inputs=lambda ex: {"y": Placed(small(ex, 0, (2,)), ())},
    spec=ROW_CUT, expected=lambda ex, v: Uninitialized((N, 3), "int16"))
row("jax.numpy.empty_like", "prototype device", "Device", "eager", "jnp.empty_like(x, device=device)",
    inputs=lambda ex: {"x": small(ex, 0, (3, 2), "int8")}, layout=DEVICE,
    expected=lambda ex, v: Uninitialized((3, 2), "int8"))
row("jax.numpy.arange", "start stop step dtype device", "NamedSharding", "eager",
    "jnp.arange(3, 3 + 4 * n, 2, jnp.int16, device=s)", spec=VEC_CUT,
    expected=lambda ex, v: np.arange(3, 3 + 4 * N, 2, dtype=np.int16))
row("jax.numpy.arange", "start device", "Device", "eager", "jnp.arange(5, device=device)", layout=DEVICE,
    expected=lambda ex, v: np.arange(5, dtype=DEFAULT_INT))
row("jax.numpy.arange", "start stop step out_sharding", "P", "Explicit", "jnp.arange(-n, n, 1, out_sharding=spec)",
    spec=VEC_CUT, expected=lambda ex, v: np.arange(-N, N, dtype=DEFAULT_INT))
# jnp.linspace interpolates start * (1 - t) + stop * t in float32 (a few roundings) where numpy
# computes in float64 and rounds once: values within a few float32 ulps of the exact ones
LINSPACE_TOLERANCE = (2.0 ** -21, 2.0 ** -20)
row("jax.numpy.linspace", "start stop num endpoint retstep dtype axis device", "arrays along axis 1, NamedSharding",
    "eager", "jnp.linspace(lo, hi, 2 * n, endpoint=False, retstep=True, dtype=jnp.float32, axis=1, device=s)",
    inputs=lambda ex: {"lo": ex.ints(0, (2,), -20, 20, "float32"), "hi": ex.ints(1, (2,), 21, 60, "float32")},
    spec=COL_CUT, tolerance=LINSPACE_TOLERANCE,
    expected=lambda ex, v: tuple(np.asarray(r, np.float32) for r in np.linspace(
        v["lo"], v["hi"], 2 * N, endpoint=False, retstep=True, dtype=np.float32, axis=1)))
row("jax.numpy.linspace", "start stop num device", "Device", "eager", "jnp.linspace(0, 1, 5, device=device)",
    layout=DEVICE, expected=lambda ex, v: np.linspace(0, 1, 5).astype(DEFAULT_FLOAT))
row("jax.numpy.eye", "N M k dtype device", "NamedSharding", "eager", "jnp.eye(n, 3, 1, jnp.int8, device=s)",
    spec=ROW_CUT, expected=lambda ex, v: np.eye(N, 3, 1, dtype=np.int8))
row("jax.numpy.eye", "N k device", "negative k, NamedSharding", "eager", "jnp.eye(2 * n, k=-2, device=s)",
    spec=ROW_CUT, expected=lambda ex, v: np.eye(2 * N, k=-2, dtype=DEFAULT_FLOAT))
row("jax.numpy.eye", "N dtype device", "Device", "eager", "jnp.eye(3, dtype=bool, device=device)", layout=DEVICE,
    expected=lambda ex, v: np.eye(3, dtype=bool))
row("jax.numpy.array", "object dtype device", "NamedSharding", "eager", "jnp.array(x, jnp.float16, device=s)",
    inputs=lambda ex: {"x": small(ex, 0, (N, 2), "int32")}, spec=ROW_CUT,
    expected=lambda ex, v: v["x"].astype(np.float16))
row("jax.numpy.array", "object ndmin", "ndmin=3", "eager", "jnp.array(x, ndmin=3)",
    inputs=lambda ex: {"x": small(ex, 0, (N, 2), "int32")}, expected=lambda ex, v: np.array(v["x"], ndmin=3))
# the sharding is the created array's ("to which the created array will be committed"), of rank ndmin
row("jax.numpy.array", "object ndmin device", "ndmin=3, a rank-3 NamedSharding", "eager",
    "jnp.array(x, ndmin=3, device=s)", inputs=lambda ex: {"x": small(ex, 0, (N, 2), "int32")},
    spec=lambda ex: (None, ex.cut, None), expected=lambda ex, v: np.array(v["x"], ndmin=3))
row("jax.numpy.array", "object copy", "copy=True, then the source deleted", "eager", "jnp.array(y, copy=True)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,))}, then="y.delete()",
    expected=lambda ex, v: v["y"])
row("jax.numpy.array", "object order", "order='F' (refused)", "eager", "jnp.array(x, order='F')",
    inputs=lambda ex: {"x": small(ex, 0, (2, 3))}, refused=(NotImplementedError,), says=ORDER)
row("jax.numpy.array", "object dtype args", "copy, order, ndmin positionally (deprecated)", "eager",
    "jnp.array(x, None, True, 'K', 3)", inputs=lambda ex: {"x": small(ex, 0, (N, 2), "int32")},
    warns=DeprecationWarning, expected=lambda ex, v: np.array(v["x"], ndmin=3))
row("jax.numpy.array", "object dtype out_sharding", "P", "Explicit", "jnp.array(x, jnp.int16, out_sharding=spec)",
    inputs=lambda ex: {"x": small(ex, 0, (N, 2), "int32")}, spec=ROW_CUT,
    expected=lambda ex, v: v["x"].astype(np.int16))
row("jax.numpy.array", "object device out_sharding", "both (refused)", "eager",
    "jnp.array(x, device=first, out_sharding=s)", inputs=lambda ex: {"x": small(ex, 0, (N, 2))}, spec=ROW_CUT,
    refused=(ValueError,), says=r"device.*out_sharding")
row("jax.numpy.asarray", "a dtype device", "NamedSharding", "eager", "jnp.asarray(x, jnp.int8, device=s)",
    inputs=lambda ex: {"x": small(ex, 0, (N, 2), "int32")}, spec=ROW_CUT, expected=lambda ex, v: v["x"].astype(np.int8))
row("jax.numpy.asarray", "a device", "Device", "eager", "jnp.asarray(x, device=device)",
    inputs=lambda ex: {"x": small(ex, 0, (3, 2), "int16")}, layout=DEVICE, expected=lambda ex, v: v["x"])
row("jax.numpy.asarray", "a copy", "copy=True, then the source deleted", "eager", "jnp.asarray(y, copy=True)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,))}, then="y.delete()",
    expected=lambda ex, v: v["y"])
row("jax.numpy.asarray", "a order", "order='F' (refused)", "eager", "jnp.asarray(x, order='F')",
    inputs=lambda ex: {"x": small(ex, 0, (2, 3))}, refused=(NotImplementedError,), says=ORDER)
row("jax.numpy.asarray", "a out_sharding", "numpy input, P", "Explicit", "jnp.asarray(x, out_sharding=spec)",
    inputs=lambda ex: {"x": small(ex, 0, (N, 2), "int32")}, spec=ROW_CUT, expected=lambda ex, v: v["x"])
row("jax.numpy.asarray", "a dtype out_sharding", "jax.Array input, P", "Explicit",
    "jnp.asarray(y, jnp.float32, out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), ())}, spec=ROW_CUT,
    expected=lambda ex, v: v["y"].astype(np.float32))
row("jax.numpy.astype", "x dtype device", "NamedSharding", "eager", "jnp.astype(y, jnp.float16, device=s)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), ())}, spec=ROW_CUT,
    expected=lambda ex, v: v["y"].astype(np.float16))
row("jax.numpy.astype", "x dtype device", "Device", "eager", "jnp.astype(x, jnp.int8, device=device)",
    inputs=lambda ex: {"x": small(ex, 0, (3, 2), "int32")}, layout=DEVICE,
    expected=lambda ex, v: v["x"].astype(np.int8))
row("jax.numpy.astype", "x dtype copy", "copy=True, then the source deleted", "eager",
    "jnp.astype(y, jnp.int32, copy=True)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,))}, then="y.delete()",
    expected=lambda ex, v: v["y"])
row("jax.numpy.from_dlpack", "x device", "another device's array, Device", "eager",
    "jnp.from_dlpack(jax.device_put(x, first), device=device)", inputs=lambda ex: {"x": small(ex, 0, (3, 2), "int32")},
    layout=DEVICE, expected=lambda ex, v: v["x"])
row("jax.numpy.from_dlpack", "x copy", "copy=True, then the numpy source changed", "eager",
    "jnp.from_dlpack(x, copy=True)", inputs=lambda ex: {"x": small(ex, 0, (4, 4), "int32")}, then="x[...] = -7",
    aligned=True, expected=lambda ex, v: v["x"])
# (the source on the backend's first device: on CPU, DLPack reports every CPU buffer there)
row("jax.numpy.from_dlpack", "x device copy", "copy=False to another device (refused)", "eager",
    "jnp.from_dlpack(jax.device_put(x, jax.devices()[0]), device=other, copy=False)",
    inputs=lambda ex: {"x": small(ex, 0, (3, 2), "int32")}, refused=(ValueError,), says=r"copy", min_devices=2)
row("jax.lax.full", "shape fill_value dtype sharding", "NamedSharding", "eager",
    "lax.full((n, 2), 7, jnp.int16, sharding=s)", spec=ROW_CUT, expected=lambda ex, v: np.full((N, 2), 7, np.int16))
row("jax.lax.full", "shape fill_value dtype sharding", "SingleDeviceSharding", "eager",
    "lax.full((3,), 2.5, jnp.float32, sharding=jax.sharding.SingleDeviceSharding(device))", layout=DEVICE,
    expected=lambda ex, v: np.full(3, 2.5, np.float32))
row("jax.lax.full", "shape fill_value dtype sharding", "NamedSharding", "Explicit",
    "lax.full((2, n), -1, jnp.int8, sharding=s)", spec=COL_CUT, expected=lambda ex, v: np.full((2, N), -1, np.int8))
row("jax.lax.full_like", "x fill_value dtype shape sharding", "NamedSharding", "eager",
    "lax.full_like(y, 4, jnp.int8, (n, 3), s)", inputs=lambda ex: {"y": Placed(small(ex, 0, (2, 2)), ())},
    spec=ROW_CUT, expected=lambda ex, v: np.full((N, 3), 4, np.int8))
row("jax.lax.full_like", "x fill_value sharding", "NamedSharding", "Explicit", "lax.full_like(y, 6, sharding=s)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), ())}, spec=ROW_CUT,
    expected=lambda ex, v: np.full((N, 2), 6, np.int32))
# lax.empty documents "Uninitialized array of the specified shape, dtype, and sharding"
row("jax.lax.empty", "shape dtype", "shape and dtype", "eager", "lax.empty((3, 2), jnp.int16)",
    expected=lambda ex, v: Uninitialized((3, 2), "int16"))
row("jax.lax.empty", "shape dtype out_sharding", "P", "Explicit", "lax.empty((n, 2), jnp.int16, out_sharding=spec)",
    spec=ROW_CUT, expected=lambda ex, v: Uninitialized((N, 2), "int16"))


# --- broadcasts and reshapes ---------------------------------------------------------------------
row("jax.lax.broadcast", "operand sizes", "sharded operand", "eager", "lax.broadcast(y, (3,))",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,))},
    expected=lambda ex, v: np.broadcast_to(v["y"], (3, N, 2)))
row("jax.lax.broadcast", "operand sizes", "two new dimensions", "jit", "lax.broadcast(y, (2, 1))",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,))},
    expected=lambda ex, v: np.broadcast_to(v["y"], (2, 1, N, 2)))
row("jax.lax.broadcast", "operand sizes out_sharding", "P", "Explicit", "lax.broadcast(x, (n,), out_sharding=spec)",
    inputs=lambda ex: {"x": small(ex, 0, (3,), "int32")}, spec=ROW_CUT,
    expected=lambda ex, v: np.broadcast_to(v["x"], (N, 3)))
row("jax.lax.broadcast", "operand sizes out_sharding", "P", "Explicit jit", "lax.broadcast(y, (n,), out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (3,), "int32"), ())}, spec=ROW_CUT,
    expected=lambda ex, v: np.broadcast_to(v["y"], (N, 3)))
row("jax.lax.broadcasted_iota", "dtype shape dimension", "dimension 0", "jit",
    "lax.broadcasted_iota(jnp.int16, (n, 3), 0)",
    expected=lambda ex, v: np.broadcast_to(np.arange(N, dtype=np.int16)[:, None], (N, 3)))
row("jax.lax.broadcasted_iota", "dtype shape dimension out_sharding", "P", "Explicit",
    "lax.broadcasted_iota(jnp.int16, (n, 3), 1, out_sharding=spec)", spec=ROW_CUT,
    expected=lambda ex, v: np.broadcast_to(np.arange(3, dtype=np.int16), (N, 3)))
row("jax.lax.broadcasted_iota", "dtype shape dimension out_sharding", "P along the iota", "Explicit jit",
    "lax.broadcasted_iota(jnp.int32, (2, n), 1, out_sharding=spec)", spec=COL_CUT,
    expected=lambda ex, v: np.broadcast_to(np.arange(N, dtype=np.int32), (2, N)))
row("jax.numpy.broadcast_to", "array shape", "a sharded operand", "eager", "jnp.broadcast_to(y, (3, n, 2))",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,))},
    expected=lambda ex, v: np.broadcast_to(v["y"], (3, N, 2)))
row("jax.numpy.broadcast_to", "array shape out_sharding", "P", "Explicit",
    "jnp.broadcast_to(x, (n, 3), out_sharding=spec)", inputs=lambda ex: {"x": small(ex, 0, (3,), "int32")},
    spec=ROW_CUT, expected=lambda ex, v: np.broadcast_to(v["x"], (N, 3)))
row("jax.numpy.broadcast_to", "array shape out_sharding", "P", "Explicit jit",
    "jnp.broadcast_to(y, (2, n, 3), out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (3,), "int32"), ())},
    spec=lambda ex: (None, ex.cut, None), expected=lambda ex, v: np.broadcast_to(v["y"], (2, N, 3)))
row("jax.numpy.reshape", "a shape order", "order='F'", "eager", "jnp.reshape(y, (2, n), order='F')",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,))},
    expected=lambda ex, v: np.reshape(v["y"], (2, N), order="F"))
row("jax.numpy.reshape", "a shape order", "order='F'", "jit", "jnp.reshape(y, (n, 2, 2), order='F')",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (4, N), "int32"), (None, ex.cut))},
    expected=lambda ex, v: np.reshape(v["y"], (N, 2, 2), order="F"))
row("jax.numpy.reshape", "a shape copy", "copy=True, then the source deleted", "eager",
    "jnp.reshape(y, (2 * n,), copy=True)", inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,))},
    then="y.delete()", expected=lambda ex, v: v["y"].reshape(-1))
row("jax.numpy.reshape", "a shape order", "order='A' (refused)", "eager", "jnp.reshape(y, (2, n), order='A')",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), ())}, refused=(NotImplementedError,), says=ORDER)
row("jax.numpy.reshape", "a shape out_sharding", "merging a cut dimension, P", "Explicit",
    "jnp.reshape(y, (2 * n,), out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), ROW_CUT(ex))}, spec=VEC_CUT,
    expected=lambda ex, v: v["y"].reshape(-1))
row("jax.numpy.reshape", "a shape out_sharding", "a replicated operand, P", "Explicit jit",
    "jnp.reshape(y, (n, 2), out_sharding=spec)", inputs=lambda ex: {"y": Placed(small(ex, 0, (2, N), "int32"), ())},
    spec=ROW_CUT, expected=lambda ex, v: v["y"].reshape(N, 2))
row("jax.numpy.ravel", "a order", "order='F'", "eager", "jnp.ravel(y, order='F')",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,))},
    expected=lambda ex, v: np.ravel(v["y"], order="F"))
row("jax.numpy.ravel", "a order", "order='F'", "jit", "jnp.ravel(y, order='F')",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (2, N), "int32"), (None, ex.cut))},
    expected=lambda ex, v: np.ravel(v["y"], order="F"))
row("jax.numpy.ravel", "a order", "order='K' (refused)", "eager", "jnp.ravel(y, order='K')",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), ())}, refused=(NotImplementedError,), says=ORDER)
row("jax.numpy.ravel", "a out_sharding", "P", "Explicit", "jnp.ravel(y, out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), ROW_CUT(ex))}, spec=VEC_CUT,
    expected=lambda ex, v: v["y"].reshape(-1))
row("jax.lax.reshape", "operand new_sizes dimensions", "transposing dimensions", "eager",
    "lax.reshape(y, (n, 2), dimensions=(1, 0))",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,))},
    expected=lambda ex, v: np.reshape(v["y"].T, (N, 2)))
row("jax.lax.reshape", "operand new_sizes dimensions", "transposing dimensions, positional", "jit",
    "lax.reshape(y, (2 * n,), (1, 0))", inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,))},
    expected=lambda ex, v: v["y"].T.reshape(-1))
row("jax.lax.reshape", "operand new_sizes out_sharding", "P", "Explicit", "lax.reshape(y, (2 * n,), out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), ROW_CUT(ex))}, spec=VEC_CUT,
    expected=lambda ex, v: v["y"].reshape(-1))
row("jax.numpy.repeat", "a repeats axis total_repeat_length", "fewer than the repeats", "eager",
    "jnp.repeat(y, r, axis=1, total_repeat_length=5)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,)), "r": ex.ints(1, (2,), 1, 5)},
    expected=lambda ex, v: repeat_reference(v["y"], v["r"], 1, 5))
row("jax.numpy.repeat", "a repeats axis total_repeat_length", "an array of repeats", "jit",
    "jnp.repeat(y, r, axis=0, total_repeat_length=2 * n + 3)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), (ex.cut,)), "r": ex.ints(1, (N,), 0, 5)},
    expected=lambda ex, v: repeat_reference(v["y"], v["r"], 0, 2 * N + 3))
row("jax.numpy.repeat", "a repeats axis out_sharding", "P", "Explicit", "jnp.repeat(x, 2, axis=0, out_sharding=spec)",
    inputs=lambda ex: {"x": small(ex, 0, (N, 2), "int32")}, spec=ROW_CUT,
    expected=lambda ex, v: np.repeat(v["x"], 2, axis=0))
row("jax.numpy.repeat", "a repeats axis total_repeat_length out_sharding", "P", "Explicit jit",
    "jnp.repeat(y, r, axis=0, total_repeat_length=2 * n, out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 2), "int32"), ()), "r": Placed(ex.ints(1, (N,), 0, 4), ())},
    spec=ROW_CUT, expected=lambda ex, v: repeat_reference(v["y"], v["r"], 0, 2 * N))


# --- reductions, counts, percentiles -------------------------------------------------------------
row("jax.lax.reduce", "operands init_values computation dimensions", "two operands, sum and max", "eager",
    "lax.reduce((y, z), (np.int32(0), np.int32(-2 ** 31)), lambda p, q: (p[0] + q[0], jnp.maximum(p[1], q[1])), (1,))",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 4), "int32"), (ex.cut,)),
                       "z": Placed(small(ex, 1, (N, 4), "int32"), (ex.cut,))},
    expected=lambda ex, v: (v["y"].sum(1, dtype=np.int32), v["z"].max(1)))
row("jax.lax.reduce", "operands init_values computation dimensions", "a lambda computation", "jit",
    "lax.reduce(y, np.float32(1), lambda p, q: p * q, (0,))",
    inputs=lambda ex: {"y": Placed(ex.ints(0, (N, 3), -2, 3, "float32"), (ex.cut,))},
    expected=lambda ex, v: np.prod(v["y"], axis=0).astype(np.float32))
row("jax.lax.reduce", "operands init_values computation dimensions out_sharding", "lax.max, P", "Explicit",
    "lax.reduce(y, np.int32(-2 ** 31), lax.max, (1,), out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 4), "int32"), ())}, spec=VEC_CUT,
    expected=lambda ex, v: v["y"].max(1))
row("jax.lax.reduce", "operands init_values computation dimensions out_sharding", "a lambda computation, P",
    "Explicit jit", "lax.reduce(y, np.int32(0), lambda p, q: p + q, (1,), out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 4), "int32"), ())}, spec=VEC_CUT,
    expected=lambda ex, v: v["y"].sum(1, dtype=np.int32))
row("jax.lax.reduce_sum", "operand axes", "two axes", "eager", "lax.reduce_sum(y, (0, 2))",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (2, N, 3), "int32"), (None, ex.cut))},
    expected=lambda ex, v: v["y"].sum((0, 2), dtype=np.int32))
row("jax.lax.reduce_sum", "operand axes", "axes as a list", "jit", "lax.reduce_sum(y, [1])",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 3)), (ex.cut,))}, expected=lambda ex, v: v["y"].sum(1))
row("jax.lax.reduce_sum", "operand axes out_sharding", "P", "Explicit", "lax.reduce_sum(y, (1,), out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 3), "int32"), ())}, spec=VEC_CUT,
    expected=lambda ex, v: v["y"].sum(1, dtype=np.int32))
row("jax.numpy.bincount", "x weights minlength", "weights and minlength", "eager", "jnp.bincount(v, w, 9)",
    inputs=lambda ex: {"v": Placed(ex.ints(0, (2 * N,), 0, 8), (ex.cut,)), "w": small(ex, 1, (2 * N,))},
    expected=lambda ex, v: np.bincount(v["v"], v["w"], 9).astype(np.float32))
row("jax.numpy.bincount", "x length", "length below the largest value", "jit", "jnp.bincount(v, length=5)",
    inputs=lambda ex: {"v": Placed(ex.ints(0, (2 * N,), 0, 8), (ex.cut,))},
    expected=lambda ex, v: np.bincount(v["v"], minlength=8)[:5].astype(DEFAULT_INT))
row("jax.numpy.bincount", "x length out_sharding", "replicated P()", "Explicit",
    "jnp.bincount(v, length=6, out_sharding=spec)",
    inputs=lambda ex: {"v": Placed(ex.ints(0, (2 * N,), 0, 8), (ex.cut,))}, spec=REPLICATED,
    expected=lambda ex, v: np.bincount(v["v"], minlength=8)[:6].astype(DEFAULT_INT))
row("jax.numpy.bincount", "x length out_sharding", "a cut out_sharding (refused)", "Explicit",
    "jnp.bincount(v, length=2 * n, out_sharding=spec)", inputs=lambda ex: {"v": Placed(ex.ints(0, (2 * N,), 0, 8), ())},
    spec=VEC_CUT, refused=compat.SHARDING_TYPE_ERRORS, says=r"replicated")
PERCENTS = np.array([0.0, 30.0, 75.0, 100.0])
row("jax.numpy.percentile", "a q axis method keepdims", "method='lower', keepdims", "eager",
    "jnp.percentile(y, q, axis=1, method='lower', keepdims=True)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 4)), (ex.cut,)), "q": PERCENTS},
    expected=lambda ex, v: np.percentile(v["y"], v["q"], axis=1, method="lower", keepdims=True).astype(np.float32))
row("jax.numpy.percentile", "a q axis method weights", "weights with method='inverted_cdf'", "eager",
    "jnp.percentile(y, q, axis=1, method='inverted_cdf', weights=w)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 4)), (ex.cut,)), "q": np.array([10.0, 50.0, 90.0]),
                       "w": ex.ints(1, (4,), 1, 4, "float32")},
    expected=lambda ex, v: np.percentile(v["y"], v["q"], axis=1, method="inverted_cdf",
                                         weights=np.broadcast_to(v["w"], v["y"].shape)).astype(np.float32))
row("jax.numpy.percentile", "a q axis method", "method='midpoint'", "jit",
    "jnp.percentile(y, 50.0, axis=0, method='midpoint')",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 4)), (ex.cut,))},
    expected=lambda ex, v: np.percentile(v["y"], 50.0, axis=0, method="midpoint").astype(np.float32))
row("jax.numpy.percentile", "a q out", "out= (refused)", "eager", "jnp.percentile(x, 50.0, out=o)",
    inputs=lambda ex: {"x": small(ex, 0, (4,)), "o": np.zeros((), np.float32)},
    refused=(ValueError, NotImplementedError), says=r"\bout\b")
row("jax.numpy.percentile", "a q overwrite_input", "overwrite_input=True (refused)", "eager",
    "jnp.percentile(x, 50.0, overwrite_input=True)", inputs=lambda ex: {"x": small(ex, 0, (4,))},
    refused=(ValueError, NotImplementedError), says=r"overwrite_input")
row("jax.numpy.percentile", "a q weights", "weights with method='linear' (refused)", "eager",
    "jnp.percentile(x, 50.0, weights=w)", inputs=lambda ex: {"x": small(ex, 0, (4,)), "w": np.ones(4, np.float32)},
    refused=(NotImplementedError, ValueError), says=r"inverted_cdf")
row("jax.numpy.percentile", "a q axis out_sharding", "P", "Explicit", "jnp.percentile(y, q, axis=1, out_sharding=spec)",
    inputs=lambda ex: {"y": Placed(small(ex, 0, (N, 4)), ()), "q": np.array([0.0, 25.0, 50.0, 100.0])}, spec=COL_CUT,
    expected=lambda ex, v: np.percentile(v["y"], v["q"], axis=1).astype(np.float32))


# --- contractions: precision, preferred_element_type, out_sharding --------------------------------
def int8_pair(ex, a_shape, b_shape, a_spec=None):
    a = int8s(ex, 0, a_shape)
    return {"a": Placed(a, a_spec) if a_spec is not None else a, "b": int8s(ex, 1, b_shape)}


row("jax.numpy.dot", "a b preferred_element_type", "int8 to int32", "eager",
    "jnp.dot(a, b, preferred_element_type=jnp.int32)", inputs=lambda ex: int8_pair(ex, (N, 8), (8, 3), (ex.cut,)),
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.int32))
row("jax.numpy.dot", "a b precision", "HIGHEST", "jit", f"jnp.dot(a, b, precision={HIGHEST})",
    inputs=lambda ex: {"a": Placed(wide_ints(ex, 0, (N, 4)), (ex.cut,)), "b": wide_ints(ex, 1, (4, 3))},
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32))
row("jax.numpy.dot", "a b out_sharding", "P", "Explicit", "jnp.dot(a, b, out_sharding=spec)",
    inputs=lambda ex: {"a": small(ex, 0, (N, 4)), "b": small(ex, 1, (4, 3))}, spec=ROW_CUT,
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32))
row("jax.numpy.dot", "a b out_sharding", "P on a dimension no operand cuts", "Explicit jit",
    "jnp.dot(a, b, out_sharding=spec)",
    inputs=lambda ex: {"a": Placed(small(ex, 0, (N, 4)), ()), "b": Placed(small(ex, 1, (4, N)), ())}, spec=COL_CUT,
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32))
row("jax.numpy.matmul", "a b preferred_element_type", "batched float16 to float32", "eager",
    "jnp.matmul(a, b, preferred_element_type=jnp.float32)",
    inputs=lambda ex: {"a": Placed(float16s(ex, 0, (2, N, 4)), (None, ex.cut)), "b": float16s(ex, 1, (4, 3))},
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32))
row("jax.numpy.matmul", "a b precision", "'highest' as a string", "jit", "jnp.matmul(a, b, precision='highest')",
    inputs=lambda ex: {"a": Placed(wide_ints(ex, 0, (N, 4)), (ex.cut,)), "b": wide_ints(ex, 1, (4, 3))},
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32))
row("jax.numpy.matmul", "a b out_sharding", "batched, P", "Explicit", "jnp.matmul(a, b, out_sharding=spec)",
    inputs=lambda ex: {"a": small(ex, 0, (2, N, 4)), "b": small(ex, 1, (4, 3))}, spec=lambda ex: (None, ex.cut),
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32))
row("jax.numpy.tensordot", "a b axes preferred_element_type", "two axes as lists, int8 to int32", "eager",
    "jnp.tensordot(a, b, axes=([1, 2], [0, 1]), preferred_element_type=jnp.int32)",
    inputs=lambda ex: int8_pair(ex, (N, 2, 4), (2, 4, 3), (ex.cut,)),
    expected=lambda ex, v: np.tensordot(v["a"].astype(np.int64), v["b"].astype(np.int64), ([1, 2], [0, 1]))
    .astype(np.int32))
row("jax.numpy.tensordot", "a b axes precision", "axes=1, HIGHEST", "jit",
    f"jnp.tensordot(a, b, 1, precision={HIGHEST})",
    inputs=lambda ex: {"a": Placed(wide_ints(ex, 0, (N, 4)), (ex.cut,)), "b": wide_ints(ex, 1, (4, 3))},
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32))
row("jax.numpy.tensordot", "a b axes out_sharding", "P", "Explicit", "jnp.tensordot(a, b, axes=1, out_sharding=spec)",
    inputs=lambda ex: {"a": small(ex, 0, (N, 4)), "b": small(ex, 1, (4, 3))}, spec=ROW_CUT,
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32))
row("jax.numpy.einsum", "subscripts operands optimize", "a contraction path as a list", "eager",
    "jnp.einsum('ij,jk,kl->il', a, b, c, optimize=[(1, 2), (0, 1)])",
    inputs=lambda ex: {"a": Placed(small(ex, 0, (N, 3), "int32"), (ex.cut,)), "b": small(ex, 1, (3, 4), "int32"),
                       "c": small(ex, 2, (4, 2), "int32")},
    expected=lambda ex, v: np.einsum("ij,jk,kl->il", v["a"], v["b"], v["c"]).astype(np.int32))
row("jax.numpy.einsum", "subscripts operands optimize precision", "optimize=False, HIGHEST", "eager",
    f"jnp.einsum('ij,jk->ik', a, b, optimize=False, precision={HIGHEST})",
    inputs=lambda ex: {"a": Placed(wide_ints(ex, 0, (N, 4)), (ex.cut,)), "b": wide_ints(ex, 1, (4, 3))},
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32))
row("jax.numpy.einsum", "subscripts operands optimize precision preferred_element_type",
    "optimize='greedy', a precision pair, int8 to int32", "jit",
    f"jnp.einsum('bij,jk->bik', a, b, optimize='greedy', precision=({HIGHEST}, {HIGHEST}), "
    "preferred_element_type=jnp.int32)",
    inputs=lambda ex: int8_pair(ex, (2, N, 8), (8, 3), (None, ex.cut)),
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.int32))
row("jax.numpy.einsum", "subscripts operands out", "out= (refused)", "eager", "jnp.einsum('ij,jk->ik', a, b, out=o)",
    inputs=lambda ex: {"a": small(ex, 0, (2, 3)), "b": small(ex, 1, (3, 2)), "o": np.zeros((2, 2), np.float32)},
    refused=(NotImplementedError,), says=r"\bout\b")
row("jax.numpy.einsum", "subscripts operands out_sharding", "P", "Explicit",
    "jnp.einsum('ij,jk->ik', a, b, out_sharding=spec)",
    inputs=lambda ex: {"a": small(ex, 0, (N, 4)), "b": small(ex, 1, (4, 3))}, spec=ROW_CUT,
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32))
row("jax.lax.dot", "lhs rhs preferred_element_type", "int8 to int32", "eager",
    "lax.dot(a, b, preferred_element_type=jnp.int32)", inputs=lambda ex: int8_pair(ex, (N, 8), (8, 2), (ex.cut,)),
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.int32))
row("jax.lax.dot", "lhs rhs precision", "a precision pair", "eager", f"lax.dot(a, b, precision=({HIGHEST}, {HIGHEST}))",
    inputs=lambda ex: {"a": Placed(wide_ints(ex, 0, (N, 4)), (ex.cut,)), "b": wide_ints(ex, 1, (4, 3))},
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32))
row("jax.lax.dot", "lhs rhs dimension_numbers precision", "contracting dimension 0, HIGHEST", "jit",
    f"lax.dot(a, b, dimension_numbers=(((0,), (0,)), ((), ())), precision={HIGHEST})",
    inputs=lambda ex: {"a": Placed(wide_ints(ex, 0, (4, N)), (None, ex.cut)), "b": wide_ints(ex, 1, (4, 3))},
    expected=lambda ex, v: wide_dot(v["a"].T, v["b"], np.float32))
row("jax.lax.dot", "lhs rhs out_sharding", "P", "Explicit", "lax.dot(a, b, out_sharding=spec)",
    inputs=lambda ex: {"a": small(ex, 0, (N, 4)), "b": small(ex, 1, (4, 3))}, spec=ROW_CUT,
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32))
row("jax.lax.dot_general", "lhs rhs dimension_numbers preferred_element_type", "a batch dimension, int8 to int32",
    "eager", "lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))), preferred_element_type=jnp.int32)",
    inputs=lambda ex: int8_pair(ex, (2, N, 4), (2, 4, 3), (None, ex.cut)),
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.int32))
row("jax.lax.dot_general", "lhs rhs dimension_numbers precision", "HIGHEST positionally", "jit",
    f"lax.dot_general(a, b, (((1,), (1,)), ((), ())), {HIGHEST})",
    inputs=lambda ex: {"a": Placed(wide_ints(ex, 0, (N, 4)), (ex.cut,)), "b": wide_ints(ex, 1, (3, 4))},
    expected=lambda ex, v: wide_dot(v["a"], v["b"].T, np.float32))
DOT_GENERAL_SPEC_REFUSED = ("DOT_GENERAL_OUT_SHARDING_TAKES_A_SPEC", (NotImplementedError,),
                            r"out_sharding. argument of .dot_general. only supports NamedSharding")
row("jax.lax.dot_general", "lhs rhs dimension_numbers out_sharding", "P", "Explicit",
    "lax.dot_general(a, b, (((1,), (0,)), ((), ())), out_sharding=spec)",
    inputs=lambda ex: {"a": small(ex, 0, (N, 4)), "b": small(ex, 1, (4, 3))}, spec=ROW_CUT,
    expected=lambda ex, v: wide_dot(v["a"], v["b"], np.float32), refused_before=DOT_GENERAL_SPEC_REFUSED)
row("jax.lax.dot_general", "lhs rhs dimension_numbers out_sharding", "P on a dimension no operand cuts",
    "Explicit jit", "lax.dot_general(a, b, (((1,), (0,)), ((), ())), out_sharding=spec)",
    inputs=lambda ex: {"a": Placed(small(ex, 0, (N, 4), "int32"), ()), "b": Placed(small(ex, 1, (4, N), "int32"), ())},
    spec=COL_CUT, expected=lambda ex, v: wide_dot(v["a"], v["b"], np.int32), refused_before=DOT_GENERAL_SPEC_REFUSED)


# --- convolutions ---------------------------------------------------------------------------------
row("jax.lax.conv_general_dilated",
    "lhs rhs window_strides padding lhs_dilation rhs_dilation dimension_numbers feature_group_count",
    "strides, padding pairs, dilations, NHC/HIO/NCH, 2 feature groups", "eager",
    "lax.conv_general_dilated(l, r, (2,), [(2, 1)], (2,), (2,), ('NHC', 'HIO', 'NCH'), 2)",
    inputs=lambda ex: {"l": Placed(small(ex, 0, (N, 4, 2)), (ex.cut,)), "r": small(ex, 1, (2, 1, 4))},
    expected=lambda ex, v: conv_reference(v["l"], v["r"], (2,), [(2, 1)], (2,), (2,), ("NHC", "HIO", "NCH"), 2))
row("jax.lax.conv_general_dilated", "lhs rhs window_strides padding batch_group_count preferred_element_type",
    "'SAME', 2 batch groups, int8 to int32", "eager",
    "lax.conv_general_dilated(l, r, (1,), 'SAME', batch_group_count=2, preferred_element_type=jnp.int32)",
    inputs=lambda ex: {"l": Placed(int8s(ex, 0, (2 * N, 2, 4)), (ex.cut,)), "r": int8s(ex, 1, (2, 2, 3))},
    expected=lambda ex, v: conv_reference(v["l"], v["r"], (1,), "SAME", batch_group_count=2, out_dtype=np.int32))
row("jax.lax.conv_general_dilated", "lhs rhs window_strides padding rhs_dilation dimension_numbers precision",
    "2-d, 'SAME_LOWER', NHWC/HWIO/NHWC, HIGHEST", "jit",
    f"lax.conv_general_dilated(l, r, (1, 2), 'SAME_LOWER', rhs_dilation=(1, 2), "
    f"dimension_numbers=('NHWC', 'HWIO', 'NHWC'), precision={HIGHEST})",
    inputs=lambda ex: {"l": Placed(wide_ints(ex, 0, (N, 2, 3, 1)), (ex.cut,)), "r": wide_ints(ex, 1, (2, 2, 1, 1))},
    expected=lambda ex, v: conv_reference(v["l"], v["r"], (1, 2), "SAME_LOWER", rhs_dilation=(1, 2),
                                          dimension_numbers=("NHWC", "HWIO", "NHWC")))
row("jax.lax.conv_general_dilated", "lhs rhs window_strides padding out_sharding", "P", "Explicit",
    "lax.conv_general_dilated(l, r, (1,), 'VALID', out_sharding=spec)",
    inputs=lambda ex: {"l": small(ex, 0, (N, 2, 4)), "r": small(ex, 1, (2, 2, 2))},
    spec=lambda ex: (ex.cut, None, None), expected=lambda ex, v: conv_reference(v["l"], v["r"], (1,), "VALID"))


# --- ragged dots ------------------------------------------------------------------------------------
def ragged_inputs(ex, make, m, k, n, groups=3, placed=True):
    lhs = make(ex, 0, (m, k))
    return {"l": Placed(lhs, (ex.cut,)) if placed else lhs, "r": make(ex, 1, (groups, k, n)),
            "g": ex.group_sizes(2, m, groups)}


NON_CONTRACTING = "lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), [0], [0])"
CONTRACTING = "lax.RaggedDotDimensionNumbers((((1,), (0,)), ((), ())), [1], [])"
row("jax.lax.ragged_dot", "lhs rhs group_sizes preferred_element_type", "int8 to int32", "eager",
    "lax.ragged_dot(l, r, g, preferred_element_type=jnp.int32)",
    inputs=lambda ex: ragged_inputs(ex, int8s, 2 * N, 8, 2),
    expected=lambda ex, v: ragged_reference(v["l"], v["r"], v["g"], np.int32))
row("jax.lax.ragged_dot", "lhs rhs group_sizes precision", "HIGHEST positionally", "jit",
    f"lax.ragged_dot(l, r, g, {HIGHEST})", inputs=lambda ex: ragged_inputs(ex, wide_ints, 2 * N, 4, 3),
    expected=lambda ex, v: ragged_reference(v["l"], v["r"], v["g"], np.float32))
# group_offset: "(1,) shaped array that indicates the group in group_sizes to start computing from.
# If not specified, defaults to [0]": given [0], the result is the default's
row("jax.lax.ragged_dot", "lhs rhs group_sizes group_offset", "[0], the documented default", "eager",
    "lax.ragged_dot(l, r, g, group_offset=jnp.array([0], jnp.int32))",
    inputs=lambda ex: ragged_inputs(ex, small, 2 * N, 4, 3, placed=False),
    expected=lambda ex, v: ragged_reference(v["l"], v["r"], v["g"], np.float32))
row("jax.lax.ragged_dot", "lhs rhs group_sizes out_sharding", "P", "Explicit",
    "lax.ragged_dot(l, r, g, out_sharding=spec)", inputs=lambda ex: ragged_inputs(ex, small, 2 * N, 4, 3, placed=False),
    spec=ROW_CUT, expected=lambda ex, v: ragged_reference(v["l"], v["r"], v["g"], np.float32))
row("jax.lax.ragged_dot_general", "lhs rhs group_sizes ragged_dot_dimension_numbers preferred_element_type",
    "a ragged contracting dimension, int8 to int32", "eager",
    f"lax.ragged_dot_general(l, r, g, {CONTRACTING}, preferred_element_type=jnp.int32)",
    inputs=lambda ex: {"l": Placed(int8s(ex, 0, (N, 6)), (ex.cut,)), "r": int8s(ex, 1, (6, 2)),
                       "g": ex.group_sizes(2, 6, 3)},
    expected=lambda ex, v: ragged_contracting_reference(v["l"], v["r"], v["g"], np.int32))
row("jax.lax.ragged_dot_general", "lhs rhs group_sizes ragged_dot_dimension_numbers precision",
    "a ragged non-contracting dimension, HIGHEST", "jit",
    f"lax.ragged_dot_general(l, r, g, {NON_CONTRACTING}, {HIGHEST})",
    inputs=lambda ex: ragged_inputs(ex, wide_ints, 2 * N, 4, 3),
    expected=lambda ex, v: ragged_reference(v["l"], v["r"], v["g"], np.float32))
row("jax.lax.ragged_dot_general", "lhs rhs group_sizes ragged_dot_dimension_numbers group_offset",
    "[0], the documented default", "eager",
    f"lax.ragged_dot_general(l, r, g, {NON_CONTRACTING}, group_offset=jnp.array([0], jnp.int32))",
    inputs=lambda ex: ragged_inputs(ex, small, 2 * N, 4, 3, placed=False),
    expected=lambda ex, v: ragged_reference(v["l"], v["r"], v["g"], np.float32))
row("jax.lax.ragged_dot_general", "lhs rhs group_sizes ragged_dot_dimension_numbers out_sharding", "P", "Explicit",
    f"lax.ragged_dot_general(l, r, g, {NON_CONTRACTING}, out_sharding=spec)",
    inputs=lambda ex: ragged_inputs(ex, small, 2 * N, 4, 3, placed=False), spec=ROW_CUT,
    expected=lambda ex, v: ragged_reference(v["l"], v["r"], v["g"], np.float32))


# --- out_sharding naming an Auto axis: refused, the message saying the axis is Auto ----------------
# ("PartitionSpec passed to <op> cannot contain axis names that are of type Auto or Manual"; out_sharding
# is "meant for sharding-in-types mode", i.e. Explicit axes)
AUTO_REFUSALS = (
    ("jax.numpy.zeros", "shape", "jnp.zeros((n,), out_sharding=s)", {}),
    ("jax.numpy.ones", "shape", "jnp.ones((n,), out_sharding=s)", {}),
    ("jax.numpy.empty", "shape", "jnp.empty((n,), out_sharding=s)", {}),
    ("jax.numpy.full", "shape fill_value", "jnp.full((n,), 3, out_sharding=s)", {}),
    ("jax.numpy.full_like", "a fill_value", "jnp.full_like(x, 3, out_sharding=s)", {"x": (N,)}),
    ("jax.numpy.zeros_like", "a", "jnp.zeros_like(x, out_sharding=s)", {"x": (N,)}),
    ("jax.numpy.ones_like", "a", "jnp.ones_like(x, out_sharding=s)", {"x": (N,)}),
    ("jax.numpy.arange", "start", "jnp.arange(n, out_sharding=s)", {}),
    ("jax.numpy.array", "object", "jnp.array(x, out_sharding=s)", {"x": (N,)}),
    ("jax.numpy.asarray", "a", "jnp.asarray(y, out_sharding=s)", {"y": (N,)}),
    ("jax.lax.empty", "shape dtype", "lax.empty((n,), jnp.int32, out_sharding=s)", {}),
    ("jax.lax.broadcast", "operand sizes", "lax.broadcast(x, (n,), out_sharding=s)", {"x": (2,)}),
    ("jax.lax.broadcasted_iota", "dtype shape dimension",
     "lax.broadcasted_iota(jnp.int32, (n,), 0, out_sharding=s)", {}),
    ("jax.numpy.broadcast_to", "array shape", "jnp.broadcast_to(x, (n, 2), out_sharding=s)", {"x": (2,)}),
    ("jax.numpy.reshape", "a shape", "jnp.reshape(y, (n,), out_sharding=s)", {"y": (N, 1)}),
    ("jax.numpy.ravel", "a", "jnp.ravel(y, out_sharding=s)", {"y": (N, 1)}),
    ("jax.lax.reshape", "operand new_sizes", "lax.reshape(y, (n,), out_sharding=s)", {"y": (N, 1)}),
    ("jax.numpy.repeat", "a repeats", "jnp.repeat(y, 1, out_sharding=s)", {"y": (N,)}),
    ("jax.numpy.bincount", "x length", "jnp.bincount(y, length=n, out_sharding=s)", {"y": (N,)}),
    ("jax.numpy.percentile", "a q axis", "jnp.percentile(y, q, axis=1, out_sharding=s)", {"y": (N, 4), "q": (N,)}),
    ("jax.lax.reduce", "operands init_values computation dimensions",
     "lax.reduce(y, np.float32(0), lax.add, (1,), out_sharding=s)", {"y": (N, 2)}),
    ("jax.lax.reduce_sum", "operand axes", "lax.reduce_sum(y, (1,), out_sharding=s)", {"y": (N, 2)}),
    ("jax.numpy.dot", "a b", "jnp.dot(y, z, out_sharding=s)", {"y": (N, 2), "z": (2,)}),
    ("jax.numpy.matmul", "a b", "jnp.matmul(y, z, out_sharding=s)", {"y": (N, 2), "z": (2,)}),
    ("jax.numpy.tensordot", "a b axes", "jnp.tensordot(y, z, 1, out_sharding=s)", {"y": (N, 2), "z": (2,)}),
    ("jax.numpy.einsum", "subscripts operands", "jnp.einsum('ij,j->i', y, z, out_sharding=s)",
     {"y": (N, 2), "z": (2,)}),
    ("jax.lax.dot", "lhs rhs", "lax.dot(y, z, out_sharding=s)", {"y": (N, 2), "z": (2,)}),
    ("jax.lax.dot_general", "lhs rhs dimension_numbers",
     "lax.dot_general(y, z, (((1,), (0,)), ((), ())), out_sharding=s)", {"y": (N, 2), "z": (2,)}),
    ("jax.lax.conv_general_dilated", "lhs rhs window_strides padding",
     "lax.conv_general_dilated(y, z, (1,), 'VALID', out_sharding=s)", {"y": (N, 1, 2), "z": (1, 1, 1)}),
    ("jax.lax.ragged_dot", "lhs rhs group_sizes", "lax.ragged_dot(y, z, g, out_sharding=s)",
     {"y": (N, 2), "z": (1, 2, 2), "g": "sizes"}),
    ("jax.lax.ragged_dot_general", "lhs rhs group_sizes ragged_dot_dimension_numbers",
     f"lax.ragged_dot_general(y, z, g, {NON_CONTRACTING}, out_sharding=s)",
     {"y": (N, 2), "z": (1, 2, 2), "g": "sizes"}),
)


def auto_refusal_inputs(shapes):
    """Non-negative integer-valued inputs of ``shapes`` (counts and percents among them); ``y`` put
    on the mesh replicated; "sizes": one group of all N rows."""
    def inputs(ex):
        out = {}
        for k, (name, shape) in enumerate(shapes.items()):
            value = np.array([N], np.int32) if shape == "sizes" else ex.ints(k, shape, 0, 5)
            out[name] = Placed(value, ()) if name == "y" else value
        return out
    return inputs


for entry, others, source, shapes in AUTO_REFUSALS:
    row(entry, f"{others} out_sharding", "out_sharding naming an Auto axis (refused)", "eager", source,
        inputs=auto_refusal_inputs(shapes), spec=VEC_CUT, refused=(ValueError,), says=AUTO_AXIS)


# --- the property ---------------------------------------------------------------------------------
def axis_type_of(row: Row) -> str:
    return "Explicit" if row.explicit else "Auto"


def static_namespace(row: Row, ex: Example) -> dict:
    """What a row's source reads besides its inputs: the modules, ``n``, the mesh of the row's axis
    type, ``spec``/``s``, and the devices ``device``, ``first`` and ``other``."""
    axis_type = axis_type_of(row)
    devices = bridge.devices_by_id()
    ns = {"jax": jax, "jnp": jnp, "lax": lax, "np": np, "P": PartitionSpec, "NamedSharding": NamedSharding,
          "n": N, "mesh": bridge.jax_mesh(ex.mesh, axis_type), "device": devices[ex.device_id],
          "first": devices[ex.mesh.device_ids[0]], "other": devices[ex.other_id]}
    if row.spec is not None:
        spec = row.spec(ex)
        ns["spec"] = compat.partition_spec(spec)
        ns["s"] = bridge.named_sharding(ex.mesh, spec, axis_type)
    return ns


@functools.lru_cache(maxsize=None)
def jitted(row: Row, mesh: MeshModel, names: Tuple[str, ...]):
    """The row's source as a jitted function of its inputs, once per row and mesh (what it reads
    besides its inputs depends on the mesh only)."""
    return jax.jit(eval(f"lambda {', '.join(names)}: {row.source}", static_namespace(row, Example(mesh, 0))))


def values_of(row: Row, ex: Example) -> dict:
    """The row's inputs as numpy values (fresh copies: a row may change its numpy source)."""
    return {name: np.array(v.value if isinstance(v, Placed) else v) for name, v in row.inputs(ex).items()}


def aligned(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` in a 64-byte aligned buffer (one JAX can use without copying)."""
    buffer = np.empty(a.nbytes + 64, np.uint8)
    start = (-buffer.ctypes.data) % 64
    out = buffer[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


ALIGNED_LINES = ["def aligned(a):  # a copy of a in a 64-byte aligned buffer (one JAX can use without copying)",
                 "    buffer = np.empty(a.nbytes + 64, np.uint8)",
                 "    start = (-buffer.ctypes.data) % 64",
                 "    out = buffer[start:start + a.nbytes].view(a.dtype).reshape(a.shape)",
                 "    out[...] = a",
                 "    return out"]


def prepared(row: Row, ex: Example) -> dict:
    """The row's inputs as its call gets them: numpy copies (aligned where the row asks), or put on
    the mesh of the row's axis type."""
    out = {}
    for name, v in row.inputs(ex).items():
        if isinstance(v, Placed):
            out[name] = bridge.placed(np.array(v.value), bridge.named_sharding(ex.mesh, tuple(v.spec),
                                                                                axis_type_of(row)))
        else:
            out[name] = aligned(np.asarray(v)) if row.aligned else np.array(v)
    return out


def out_case(row: Row, ex: Example) -> Case:
    """The row's Case, whose script builds the mesh (of the row's axis type), the inputs and the call."""
    inputs = row.inputs(ex)
    names = list(inputs)
    lines = [f"n = {N}", f"device = devices[{ex.device_id}]", f"first = devices[{ex.mesh.device_ids[0]}]",
             f"other = devices[{ex.other_id}]"]
    if row.aligned:
        lines += ALIGNED_LINES + [f"{name} = aligned({name})" for name, v in inputs.items()
                                  if not isinstance(v, Placed)]
    if row.spec is not None:
        lines += [f"spec = {spec_literal(row.spec(ex))}", "s = NamedSharding(mesh, spec)"]
    call = f"f({', '.join(names)})" if row.jitted else row.source
    context = [f"f = jax.jit(lambda {', '.join(names)}: {row.source})"] if row.jitted else []
    if row.refusal[0]:
        context.append(f"call = lambda: {call}")
        outcomes = {"the call": "call()"}
    else:
        context += [f"result = {call}"] + ([row.then] if row.then else []) + ["print(result)"]
        outcomes = {"the call": "result", "result": "result"}
    return scripted_case(
        f"{row.source} ({row.context}) on {describe_mesh(ex.mesh)}"
        + (f", spec {spec_literal(row.spec(ex))}" if row.spec is not None else "")
        + f" ({row.entry} {', '.join(row.parameters)}: {row.form})",
        lines, meshes={"mesh": ex.mesh}, axis_type=axis_type_of(row),
        arrays={k: v for k, v in inputs.items() if not isinstance(v, Placed)},
        placed={k: (v.value, tuple(v.spec)) for k, v in inputs.items() if isinstance(v, Placed)},
        in_context=context, outcomes=outcomes)


def run(row: Row, ex: Example, ns: dict):
    """The row's call: eager, or its jitted function of its inputs."""
    if row.jitted:
        names = tuple(row.inputs(ex))
        return jitted(row, ex.mesh, names)(*(ns[name] for name in names))
    return eval(row.source, ns)


def check_result(row: Row, ex: Example, case: Case, got, expected) -> None:
    """Each result has numpy's values (bit for bit, or within the row's tolerance; only the shape
    and dtype where JAX leaves them unspecified) and, for those ``laid_out``, the row's layout."""
    several = isinstance(expected, tuple)
    if several:
        case.equal("the call's number of results", len(got) if isinstance(got, (tuple, list)) else "one array",
                   len(expected))
    for i, (value, want) in enumerate(zip(got if several else (got,), expected if several else (expected,))):
        what = f"result[{i}]" if several else "result"
        if isinstance(want, Uninitialized):
            case.equal(f"{what}.shape", tuple(value.shape), want.shape)
            case.equal(f"{what}.dtype", np.dtype(value.dtype).name, want.dtype)
        elif isinstance(want, ZeroSignOpen):
            case.close(what, np.asarray(value), want.values, rtol=0.0, atol=0.0)
        elif row.tolerance is not None:
            case.close(what, np.asarray(value), want, rtol=row.tolerance[0], atol=row.tolerance[1])
        else:
            case.same_bits(what, np.asarray(value), want)
        if row.layout is None or i not in row.laid_out:
            continue
        exact = None if isinstance(want, (Uninitialized, ZeroSignOpen)) or row.tolerance is not None else want
        if row.layout == DEVICE:
            layout = Layout(MeshModel((ex.device_id,), (1,), ("d",)), (), tuple(value.shape))
        else:
            layout = Layout(ex.mesh, row.spec(ex), tuple(value.shape))
        check_layout(case, value, layout, exact, what=what)


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
@given(ex=examples())
@settings(max_examples=EXAMPLES)
def test_each_parameter_gives_numpys_values_laid_out_as_asked(row, ex):
    """Each creator and operation, given each of its parameters, returns numpy's values laid out as
    its device=/out_sharding=/sharding= asks, on Auto and Explicit meshes (or raises the refusal JAX
    documents, saying why)."""
    for parameter in row.parameters:
        compat.parameters(row.entry, parameter)  # (skips, naming the version, where this JAX lacks it)
    if row.explicit:
        compat.feature("explicit_sharding")
    if "out_sharding" in row.parameters:
        compat.feature("out_sharding_without_a_config")
    if N < row.min_devices:
        pytest.skip(f"needs {row.min_devices} devices; this backend has {N}")
    case = out_case(row, ex)
    ns = static_namespace(row, ex)
    with compat.mesh_context(ns["mesh"], axis_type_of(row)):
        ns.update(prepared(row, ex))
        refused, says = row.refusal
        if refused:
            error = case.rejects("the call", lambda: run(row, ex, ns), refused)
            if not re.search(says, str(error), re.IGNORECASE):
                case.fail(f"the call raised {type(error).__name__}: {' '.join(str(error).split())[:300]}, but the "
                          f"documented refusal says {says!r} [{case.call}]", check="the call", shows="raised",
                          raised=type(error).__name__, raised_message=str(error))
            return
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = case.accepts("the call", lambda: run(row, ex, ns))
        if row.then:
            exec(row.then, ns)  # (the result must not depend on the input any more)
        if row.warns is not None:
            case.true(f"the call warned {row.warns.__name__}", any(issubclass(w.category, row.warns) for w in caught))
        check_result(row, ex, case, got, row.expected(ex, values_of(row, ex)))


def test_weighted_inverted_cdf_percentile_of_float16_is_numpys():
    """jnp.percentile(a, q, axis=1, method='inverted_cdf', weights=w) with float16 a and w and a
    float32 q returns numpy's weighted percentiles in a's dtype, as it does for float32 a and q: q's
    dtype need not be a's (the form every float32 weighted percentile takes under --x64, where q is
    float64, and which the weighted row above meets there). It holds in both x64 modes."""
    compat.parameters("jax.numpy.percentile", "weights")  # (skips, naming the version, where this JAX lacks it)
    a = np.array([[3, -1, 2, 0], [1, 1, -4, 2]], np.float16)
    q = np.array([10.0, 50.0, 90.0], np.float32)
    w = np.array([1, 3, 2, 1], np.float16)
    call = "jnp.percentile(a, q, axis=1, method='inverted_cdf', weights=w)"
    case = scripted_case(f"{call} of float16 a and w and float32 q",
                         [f"a = {array_literal(a)}", f"q = {array_literal(q)}", f"w = {array_literal(w)}"],
                         outcomes={"the call": call})
    got = case.accepts("the call", lambda: jnp.percentile(a, q, axis=1, method="inverted_cdf", weights=w))
    expected = np.percentile(a, q, axis=1, method="inverted_cdf", weights=np.broadcast_to(w, a.shape))
    case.same_bits("the weighted percentiles", np.asarray(got), expected.astype(np.float16))
