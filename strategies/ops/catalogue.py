"""The operation catalogue: array operations to run on sharded inputs, one ``Op`` per line (its
name, family, JAX source, numpy reference, inputs, and tolerance where it is not exact)."""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, Tuple

import numpy as np

import strategies.ops.inputs as i
import strategies.ops.references as r

from .op import Op

TINY32 = float(np.finfo(np.float32).tiny)  # XLA's CPU backend flushes subnormal results to zero

REDUCE = "lambda x, *, axis, keepdims: jnp.{}(x, axis=axis, keepdims=keepdims)"
AT_SHIFTED = ("lambda x, *, axis, shift: x.at[(slice(None),) * axis + (slice(max(-shift, 0), "
              "x.shape[axis] - max(shift, 0)),)].{}(x[(slice(None),) * axis + "
              "(slice(max(shift, 0), x.shape[axis] - max(-shift, 0)),)])")


def numpy_reduction(name):
    return lambda x, axis, keepdims: getattr(np, name)(x, axis=axis, keepdims=keepdims)


CATALOGUE: Tuple[Op, ...] = (
    # elementwise, unary
    Op("negative", "elementwise", "lambda x: -x", np.negative, i.unary_inputs("int32")),
    Op("abs", "elementwise", "lambda x: jnp.abs(x)", np.abs, i.unary_inputs("int8"), result="real"),
    Op("sin", "elementwise", "lambda x: jnp.sin(x)", np.sin, i.unary_inputs("float32"), rtol=2e-6, atol=2e-6,
       result="inexact"),
    Op("exp", "elementwise", "lambda x: jnp.exp(x)", np.exp, i.unary_inputs("float32"), rtol=2e-6, atol=TINY32,
       result="inexact"),
    Op("logical_not", "elementwise", "lambda x: jnp.logical_not(x)", np.logical_not, i.unary_inputs("bool"),
       result="bool"),
    # elementwise, binary with broadcasting
    Op("add", "broadcasting", "lambda x, y: x + y", np.add, i.broadcasting_inputs(("int32", "int32"))),
    Op("multiply", "broadcasting", "lambda x, y: x * y", np.multiply,
       i.broadcasting_inputs(("float32", "float32")), atol=TINY32),
    Op("maximum", "broadcasting", "lambda x, y: jnp.maximum(x, y)", np.maximum,
       i.broadcasting_inputs(("float32", "float32"))),
    Op("subtract_uint8", "broadcasting", "lambda x, y: x - y", np.subtract, i.broadcasting_inputs(("uint8", "uint8"))),
    Op("greater", "broadcasting", "lambda x, y: x > y", np.greater, i.broadcasting_inputs(("int32", "int32"), "small"),
       result="bool"),
    Op("bitwise_xor", "broadcasting", "lambda x, y: x ^ y", np.bitwise_xor,
       i.broadcasting_inputs(("uint16", "uint16"))),
    # reductions
    Op("sum_int", "reduction", REDUCE.format("sum"), numpy_reduction("sum"), i.reduction_inputs("int32"), result="sum"),
    Op("sum_float", "reduction", REDUCE.format("sum"), numpy_reduction("sum"), i.reduction_inputs("float32", "small"),
       result="sum"),
    Op("max", "reduction", REDUCE.format("max"), numpy_reduction("max"), i.reduction_inputs("float32")),
    Op("min_int", "reduction", REDUCE.format("min"), numpy_reduction("min"), i.reduction_inputs("int16")),
    Op("mean", "reduction", REDUCE.format("mean"), numpy_reduction("mean"), i.reduction_inputs("float32", "small"),
       rtol=1e-6, result="inexact"),
    Op("argmax", "reduction", "lambda x, *, axis: jnp.argmax(x, axis=axis)", lambda x, axis: np.argmax(x, axis=axis),
       i.reduction_inputs("int32", "small", keepdims=False, single_axis=True), result="index"),
    Op("argmin", "reduction", "lambda x, *, axis: jnp.argmin(x, axis=axis)", lambda x, axis: np.argmin(x, axis=axis),
       i.reduction_inputs("float32", "small", keepdims=False, single_axis=True), result="index"),
    Op("any", "reduction", REDUCE.format("any"), numpy_reduction("any"), i.reduction_inputs("bool"), result="bool"),
    # scans
    Op("cumsum", "scan", "lambda x, *, axis: jnp.cumsum(x, axis=axis)", lambda x, axis: np.cumsum(x, axis=axis),
       i.scan_inputs("int32"), result="same"),
    Op("cumprod", "scan", "lambda x, *, axis: jnp.cumprod(x, axis=axis)", lambda x, axis: np.cumprod(x, axis=axis),
       i.scan_inputs("float32", "tiny"), result="same"),
    Op("cummax", "scan", "lambda x, *, axis: lax.cummax(x, axis=axis)",
       lambda x, axis: np.maximum.accumulate(x, axis=axis), i.scan_inputs("int32", negative_axis=False), result="same"),
    Op("cumsum_reverse", "scan", "lambda x, *, axis: lax.cumsum(x, axis=axis, reverse=True)",
       lambda x, axis: np.flip(np.cumsum(np.flip(x, axis), axis), axis),
       i.scan_inputs("float32", "small", negative_axis=False), result="same"),
    # joining
    Op("concatenate", "joining", "lambda *xs, axis: jnp.concatenate(xs, axis=axis)",
       lambda *xs, axis: np.concatenate(xs, axis=axis), i.concatenate_inputs()),
    Op("stack", "joining", "lambda *xs, axis: jnp.stack(xs, axis=axis)",
       lambda *xs, axis: np.stack(xs, axis=axis), i.stack_inputs()),
    # shape manipulation
    Op("reshape", "shape", "lambda x, *, shape: jnp.reshape(x, shape)", lambda x, shape: np.reshape(x, shape),
       i.unary_inputs("int32", "any", i.reshape_statics)),
    Op("transpose", "shape", "lambda x, *, axes: jnp.transpose(x, axes)", lambda x, axes: np.transpose(x, axes),
       i.unary_inputs("float32", "any", i.permutation_statics)),
    Op("swapaxes", "shape", "lambda x, *, a, b: jnp.swapaxes(x, a, b)", lambda x, a, b: np.swapaxes(x, a, b),
       i.unary_inputs("int32", "any", i.two_axes_statics, min_rank=1)),
    Op("squeeze", "shape", "lambda x, *, axis: jnp.squeeze(x, axis)", lambda x, axis: np.squeeze(x, axis),
       i.squeeze_inputs()),
    Op("expand_dims", "shape", "lambda x, *, axis: jnp.expand_dims(x, axis)",
       lambda x, axis: np.expand_dims(x, axis), i.unary_inputs("int32", "any", i.new_axis_statics)),
    Op("broadcast_to", "shape", "lambda x, *, shape: jnp.broadcast_to(x, shape)",
       lambda x, shape: np.broadcast_to(x, shape),
       i.unary_inputs("float32", "any", i.leading_shape_statics, max_rank=2)),
    # padding
    Op("pad", "padding", "lambda x, *, widths, mode: jnp.pad(x, widths, mode=mode)", r.pad_reference,
       i.unary_inputs("int32", "any", i.pad_statics, min_rank=1), result="same"),
    Op("lax_pad_negative", "padding", "lambda x, value, *, config: lax.pad(x, value, config)",
       r.lax_pad_reference, i.lax_pad_inputs(), result="same"),
    # static slicing
    Op("slice", "slicing", "lambda x, *, index: x[index]", lambda x, index: x[index],
       i.unary_inputs("int32", "any", i.index_statics("in-range"), min_rank=1)),
    Op("strided_slice", "slicing", "lambda x, *, index: x[index]", lambda x, index: x[index],
       i.unary_inputs("float32", "any", i.index_statics("strided"), min_rank=1)),
    Op("slice_out_of_range", "slicing", "lambda x, *, index: x[index]", lambda x, index: x[index],
       i.unary_inputs("int32", "any", i.index_statics("out-of-range"), min_rank=1)),
    Op("slice_empty", "slicing", "lambda x, *, index: x[index]", lambda x, index: x[index],
       i.unary_inputs("int32", "any", i.index_statics("empty"), min_rank=1)),
    # dynamic slicing, starts clamped into range
    Op("dynamic_slice", "dynamic", "lambda x, *starts, sizes: lax.dynamic_slice(x, starts, sizes)",
       r.dynamic_slice_reference, i.dynamic_slice_inputs(), result="same"),
    Op("dynamic_update_slice", "dynamic", "lambda x, update, *starts: lax.dynamic_update_slice(x, update, starts)",
       r.dynamic_update_slice_reference, i.dynamic_update_slice_inputs(), result="same"),
    # .at[] updates
    Op("at_set_shifted", "at", AT_SHIFTED.format("set"), r.at_shifted_reference("set"), i.at_shifted_inputs("float32"),
       result="same"),
    Op("at_add_shifted", "at", AT_SHIFTED.format("add"), r.at_shifted_reference("add"), i.at_shifted_inputs("int32"),
       result="same"),
    Op("at_min", "at", "lambda x, u, *, index: x.at[index].min(u)", r.at_range_reference("min"),
       i.at_range_inputs("float32"), result="same"),
    Op("at_max", "at", "lambda x, u, *, index: x.at[index].max(u)", r.at_range_reference("max"),
       i.at_range_inputs("float32"), result="same"),
    Op("at_add_indices", "at", "lambda x, idx, u: x.at[idx].add(u)", r.scatter_add_reference, i.scatter_add_inputs(),
       result="same"),
    # gathers
    Op("take", "gather", "lambda x, idx, *, axis: jnp.take(x, idx, axis=axis)",
       lambda x, idx, axis: np.take(x, idx, axis=axis), i.take_inputs("in-range"), result="same"),
    Op("take_clip", "gather", "lambda x, idx, *, axis: jnp.take(x, idx, axis=axis, mode='clip')",
       lambda x, idx, axis: np.take(x, idx, axis=axis, mode="clip"), i.take_inputs("clip"), result="same"),
    Op("index_array", "gather", "lambda x, idx: x[idx]", lambda x, idx: x[idx], i.fancy_index_inputs(), result="same"),
    Op("take_along_axis", "gather", "lambda x, idx, *, axis: jnp.take_along_axis(x, idx, axis=axis)",
       lambda x, idx, axis: np.take_along_axis(x, idx, axis=axis), i.take_along_axis_inputs(), result="same"),
    # roll and flip
    Op("roll", "permuting", "lambda x, *, shift, axis: jnp.roll(x, shift, axis=axis)",
       lambda x, shift, axis: np.roll(x, shift, axis=axis), i.unary_inputs("int32", "any", i.roll_statics, min_rank=1)),
    Op("flip", "permuting", "lambda x, *, axis: jnp.flip(x, axis=axis)", lambda x, axis: np.flip(x, axis=axis),
       i.unary_inputs("float32", "any", i.axes_statics)),
    # sorting
    Op("sort", "sorting", "lambda x, *, axis: jnp.sort(x, axis=axis)", lambda x, axis: np.sort(x, axis=axis),
       i.unary_inputs("float32", "any", i.axis_statics, min_rank=1)),
    Op("argsort", "sorting", "lambda x, *, axis: jnp.argsort(x, axis=axis, stable=True)",
       lambda x, axis: np.argsort(x, axis=axis, kind="stable"),
       i.unary_inputs("int32", "small", i.axis_statics, min_rank=1), result="index"),
    # contractions
    Op("matmul", "contraction", "lambda x, y: x @ y", np.matmul, i.matmul_inputs("float32", "small")),
    Op("dot_int", "contraction", "lambda x, y: jnp.dot(x, y)", np.dot, i.matmul_inputs("int32", "any")),
    Op("einsum", "contraction", "lambda *xs, subscripts: jnp.einsum(subscripts, *xs)",
       lambda *xs, subscripts: np.einsum(subscripts, *xs), i.einsum_inputs()),
    # selection
    Op("where", "selection", "lambda c, x, y: jnp.where(c, x, y)", np.where, i.selection_inputs(same_shapes=False),
       result="select"),
    Op("select", "selection", "lambda c, x, y: lax.select(c, x, y)", np.where, i.selection_inputs(same_shapes=True),
       result="select"),
    # iota-based
    Op("add_iota", "iota", "lambda x, *, dim: x + lax.broadcasted_iota(x.dtype, x.shape, dim)",
       lambda x, dim: x + np.indices(x.shape, dtype=x.dtype)[dim],
       i.unary_inputs("int32", "any", i.dimension_statics, min_rank=1)),
    Op("arange_times", "iota", "lambda x: x * jnp.arange(x.shape[-1], dtype=x.dtype)",
       lambda x: x * np.arange(x.shape[-1], dtype=x.dtype), i.unary_inputs("int32", min_rank=1)),
    Op("tril", "iota", "lambda x, *, k: jnp.tril(x, k)", lambda x, k: np.tril(x, k),
       i.unary_inputs("int32", "any", i.diagonal_statics, min_rank=2)),
)

# The public functions each entry above calls by name (``Op.covers``); an operator (``x + y``,
# ``x[index]``, ``x.at[...]``) covers none.
COVERS: Dict[str, Tuple[str, ...]] = {
    "abs": ("jnp.abs",), "sin": ("jnp.sin",), "exp": ("jnp.exp",), "logical_not": ("jnp.logical_not",),
    "maximum": ("jnp.maximum",), "sum_int": ("jnp.sum",), "sum_float": ("jnp.sum",), "max": ("jnp.max",),
    "min_int": ("jnp.min",), "mean": ("jnp.mean",), "argmax": ("jnp.argmax",), "argmin": ("jnp.argmin",),
    "any": ("jnp.any",), "cumsum": ("jnp.cumsum",), "cumprod": ("jnp.cumprod",), "cummax": ("lax.cummax",),
    "cumsum_reverse": ("lax.cumsum",), "concatenate": ("jnp.concatenate",), "stack": ("jnp.stack",),
    "reshape": ("jnp.reshape",), "transpose": ("jnp.transpose",), "swapaxes": ("jnp.swapaxes",),
    "squeeze": ("jnp.squeeze",), "expand_dims": ("jnp.expand_dims",), "broadcast_to": ("jnp.broadcast_to",),
    "pad": ("jnp.pad",), "lax_pad_negative": ("lax.pad",), "dynamic_slice": ("lax.dynamic_slice",),
    "dynamic_update_slice": ("lax.dynamic_update_slice",), "take": ("jnp.take",), "take_clip": ("jnp.take",),
    "take_along_axis": ("jnp.take_along_axis",), "roll": ("jnp.roll",), "flip": ("jnp.flip",),
    "sort": ("jnp.sort",), "argsort": ("jnp.argsort",), "dot_int": ("jnp.dot",), "einsum": ("jnp.einsum",),
    "where": ("jnp.where",), "select": ("lax.select",), "add_iota": ("lax.broadcasted_iota",),
    "arange_times": ("jnp.arange",), "tril": ("jnp.tril",),
}
CATALOGUE = tuple(replace(op, covers=COVERS.get(op.name, ())) for op in CATALOGUE)
assert set(COVERS) <= {op.name for op in CATALOGUE}, sorted(set(COVERS) - {op.name for op in CATALOGUE})

BY_NAME: Dict[str, Op] = {op.name: op for op in CATALOGUE}
assert len(BY_NAME) == len(CATALOGUE), "catalogue names must be unique"
