"""The sharding-rule model's third layer: the catalogue's families (``sharding_rules`` states the
vocabulary). A family's rule takes one catalogue call (``Call``) and runs the primitive rules
(``sharding_primitives``) along the route its ``jax.numpy`` function binds, jnp's indexing through
``sharding_indexing``; ``sharding_verdict`` turns the outcome into a verdict. The stated rule
changes a release has (``ReleaseRules``) are read here and handed down as flags.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .layout import MeshModel, Spec, SpecEntry, spec_axes
from .sharding_indexing import (full_index, indexer, slice_triple, static_slice, take_along_axis, through_gather,
                                updates_for, whole_slice)
from .sharding_primitives import (GatherDims, IllTyped, Shape, axes_argument, axis_argument, broadcast,
                                  canonical_spec, cumulative, dot_general, expand_dims, gather, no_repeated_axis,
                                  one_sharded_spec, permutation, reduce, reshape, resized, same_specs, scatter, select,
                                  show_spec, sort, squeeze, stack, transpose)


# --- verdicts -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Accepts:
    """The operation is well typed; its result has canonical spec ``out_spec`` (None: not stated)."""

    out_spec: Optional[Spec]


@dataclass(frozen=True)
class Rejects:
    """JAX's sharding rules reject these operand types, for ``reason``."""

    reason: str


@dataclass(frozen=True)
class Unmodelled:
    """No rule of this model covers the operation (``reason`` says which part)."""

    reason: str


Verdict = Union[Accepts, Rejects, Unmodelled]


@dataclass(frozen=True)
class ReleaseRules:
    """The stated rule changes a JAX release has (``conformance.jaxside.compat`` decides them; each
    field names the compat feature and quotes what JAX stated before it):

    * ``indexing_infers_sharding`` (``EXPLICIT_INDEXING_INFERS_SHARDING``, JAX 0.9.1): a strided
      static slice under jit binds lax.slice, typed by the slice rule. Without it jnp takes it
      through gather, and the Explicit-sharding doc's list of indexing ops missing sharding rules
      (quoted at ``documented_indexing_refusal``) holds where the release has not yet implemented
      them (by the three rules below).
    * ``gather_has_a_rule`` (``EXPLICIT_GATHER_HAS_A_SHARDING_RULE``, JAX 0.7.0): a gather (jnp.take
      and the other integer-array indexing, an eager partial slice of an array over several
      devices, a strided slice under jit before ``indexing_infers_sharding``) of an operand or
      index array naming a mesh axis is typed by the gather rule. Before it, it is refused
      (ShardingTypeError "Use `.at[...].get(out_sharding=)`"); measured, no change stated.
    * ``scatter_has_a_rule`` (``EXPLICIT_SCATTER_HAS_A_SHARDING_RULE``, JAX 0.6.1): an ``.at[].set``
      of a range of an operand naming a mesh axis is typed by the scatter rule; before it refused
      ("sharding rule for scatter is not implemented"); measured.
    * ``scatter_add_has_a_rule`` (``EXPLICIT_SCATTER_ADD_HAS_A_SHARDING_RULE``, JAX 0.7.0): the same
      for ``.at[].add`` ("sharding rule for scatter-add is not implemented" before); measured.
    * ``batched_scatter_has_a_rule`` (``EXPLICIT_BATCHED_SCATTER_HAS_A_SHARDING_RULE``, JAX 0.7.1):
      the scatter vmap makes of a ``lax.dynamic_update_slice`` over a batch of starts, of an operand
      naming a mesh axis, is typed by the scatter rule ("sharding rule for scatter is not implemented"
      before, on 0.6.0-0.7.0 though ``.at[].set`` has one from 0.6.1); measured.
    * ``reshape_deals_mesh_axes`` (``EXPLICIT_RESHAPE_DEALS_MESH_AXES``, JAX 0.10.0): a split deals
      its dimension's axes over the new dimensions and a merge takes its group's axes in order.
      Without it the doc's reshape rule holds ("If we have a split or merge case in which the
      split/merged axes are sharded as None then we shard the resulting split/merged axes as None
      ... In all other cases we throw an error and require the user to provide an `out_sharding`
      argument"), narrowed as lax implemented it: a split puts the whole entry on the first new
      dimension, which its tiling must divide, and a merge takes a group sharded in its first
      dimension only.
    * ``batch_specs_equal`` (``EXPLICIT_DOT_GENERAL_BATCH_SPECS_EQUAL``, JAX 0.11.1): a contraction's
      batch dimensions must be sharded identically on both operands (jax-ml/jax a8976b5069, "Error
      out if lhs_batch_spec and rhs_batch_spec don't match exactly", with pjit_test's
      test_dot_batch_dims_error asserting the ShardingTypeError). Before it they must agree only
      where both are sharded, and the result takes the sharded side's entry.
    * ``scan_keeps_a_sharded_dimension`` (``EXPLICIT_SCAN_KEEPS_A_SHARDED_DIMENSION``, JAX 0.6.1 to
      0.9.2): a cumulative reduction along a sharded dimension keeps its operand's spec. Before and
      after those releases it is refused (jax-ml/jax f512fd2b52, "Error out if the axis being
      cumsummed over is sharded", in 0.10.0).
    * ``sort_keeps_a_sharded_dimension`` (``EXPLICIT_SORT_KEEPS_A_SHARDED_DIMENSION``, up to JAX
      0.9.1): a sort along a sharded dimension keeps its operand's spec. From 0.9.2 it is refused
      (``_sort_sharding_rule``: "Arguments to sort must be unsharded over the sorting dimension").
    * ``roll_keeps_a_sharded_dimension``: a roll along a sharded dimension keeps its operand's spec.
      No release's Explicit rule says so (the model takes the stated refusal, ``_roll``); it is the
      forward propagation an Auto mesh's values are derived by (``test_programs.auto_propagation``).
    * ``takes_the_one_sharded_operands_spec``: a concatenate, ``lax.select`` or a same-shape
      ``jnp.where`` of operands one of which is sharded (or several alike), the others replicated,
      takes that spec, where its tiling divides the result's dimensions or not (XLA pads them inside
      a program). No Explicit rule says so (they must be sharded alike, ``same_specs``); it is the
      forward propagation of an Auto mesh (measured on 0.4.30, 0.6.2 and 0.10.2: jit of
      concatenate((x P('a'), y P(), z P())) of length 6 on a (2, 4) mesh returns P('a'); on 0.4.30 a
      concatenate of such a join of length 7 with itself is a partially replicated join, whose
      values come back multiplied, while a length-5 join returned as the jit's output comes back
      P(): a layout a jit may return is one that divides; on 0.4.30, seed 3849284905, an eager
      concatenate of lax.select(p P(), v P('a'), v) with itself came back multiplied).
    * ``dynamic_slice_unshards_resized_dimensions``: a ``lax.dynamic_slice`` keeps its operand's
      entry on each dimension it takes whole and leaves each dimension it resizes unsharded,
      whatever the tiling. No Explicit rule says so (the resize rule keeps a resized dimension's
      entry where its tiling divides the new size, and refuses it elsewhere); it is the forward
      propagation of an Auto mesh (measured on 0.4.31, 0.4.35 and 0.10.2, eagerly and under jit:
      x (2, 2, 4) P('b', None, 'a') on a (4, 2) mesh sliced to (1, 1, 4) is laid out
      P(None, None, 'a'), y (2, 8) P(None, 'a') sliced to (2, 4) P(); met on 0.4.35, seed
      1428177788: such a slice then concatenated eagerly with a replicated value, a partially
      replicated join our model had typed replicated).
    * ``dynamic_slice_replicates_a_resized_sharded_dimension``: with the rule above, a dynamic
      slice that resizes a sharded dimension is laid out replicated, every dimension (``compat``'s
      ``AUTO_DYNAMIC_SLICE_KEEPS_WHOLE_DIMENSIONS`` false: measured on 0.4.30, where both slices
      above come back P(), and one resizing only an unsharded dimension keeps its operand's spec)."""

    indexing_infers_sharding: bool = True
    gather_has_a_rule: bool = True
    scatter_has_a_rule: bool = True
    scatter_add_has_a_rule: bool = True
    batched_scatter_has_a_rule: bool = True
    reshape_deals_mesh_axes: bool = True
    batch_specs_equal: bool = True
    scan_keeps_a_sharded_dimension: bool = False
    sort_keeps_a_sharded_dimension: bool = False
    roll_keeps_a_sharded_dimension: bool = False
    takes_the_one_sharded_operands_spec: bool = False
    dynamic_slice_unshards_resized_dimensions: bool = False
    dynamic_slice_replicates_a_resized_sharded_dimension: bool = False


LATEST = ReleaseRules()


class _NoRule(Exception):
    """The model has no rule for this operation."""



# --- the catalogue's families ---------------------------------------------------------------------
@dataclass(frozen=True)
class Call:
    """One catalogue call: the operation's name and family, its operands' shapes and canonical
    specs, its static keyword arguments, the mesh, and whether it runs eagerly."""

    op: str
    family: str
    shapes: Tuple[Shape, ...]
    specs: Tuple[Spec, ...]
    static: Mapping
    mesh: MeshModel
    eager: bool
    rules: ReleaseRules = LATEST

    @property
    def x(self) -> Tuple[Shape, Spec]:
        return self.shapes[0], self.specs[0]

    def reshape(self, shape: Shape, spec: Spec, new_shape: Shape) -> Spec:
        """``reshape`` by the release's rule."""
        return reshape(self.mesh, shape, spec, new_shape, self.rules.reshape_deals_mesh_axes)


# The .at[] updates of the catalogue that slice their operand (a shift: the others are scatters,
# whose rule is ``scatter``'s), and with the families of static slices and gathers, jnp's indexing
INDEXING_FAMILIES = ("slicing", "gather")
SHIFTED_UPDATES = ("at_set_shifted", "at_add_shifted")


def documented_indexing_refusal(c: Call) -> None:
    """Before ``ReleaseRules.indexing_infers_sharding``: JAX's Explicit-sharding doc (0.6.0 to 0.9.2)
    says "there are plenty of ops that are missing sharding rules. For example, `scatter` and `gather`
    (i.e. indexing ops)", and a release refuses the indexing of an operand (or index array) that
    names a mesh axis (one of size 1 included) where it still misses the rule the indexing binds: a
    gather before ``gather_has_a_rule`` (the gather family; a static slice taken through gather,
    ``slice_through_gather``; the eager read of a shifted update's source), the scatter of an
    ``.at[].set`` before ``scatter_has_a_rule``, of an ``.at[].add`` before ``scatter_add_has_a_rule``.
    A contiguous slice under jit binds lax.slice, typed by the slice rule on every release. IllTyped
    there; nothing otherwise."""
    if c.rules.indexing_infers_sharding or (c.family not in INDEXING_FAMILIES and c.op not in SHIFTED_UPDATES):
        return
    if c.family == "slicing" and "index" in c.static and whole_slice(c.static["index"], c.x[0]):
        return  # (jnp returns the array itself: not an indexing operation)
    named = [show_spec(spec) for spec in c.specs if any(e is not None for e in spec)]
    if not named:
        return
    if c.op in SHIFTED_UPDATES:
        shape, s = c.x[0], c.static
        missing = {"at_set_shifted": (c.rules.scatter_has_a_rule, "scatter"),
                   "at_add_shifted": (c.rules.scatter_add_has_a_rule, "scatter-add")}[c.op]
        if not missing[0]:
            raise IllTyped(f"{c.op}: a {missing[1]} of an operand sharded {named[0]}, for which this JAX has no "
                           f"sharding rule yet {_listed_in_the_doc('scatter')}")
        gathers = slice_through_gather(c, shape, shifted_ranges(shape, s["axis"], s["shift"])[1])
    else:
        gathers = c.family == "gather" or slice_through_gather(c, c.x[0], c.static["index"])
    if gathers and not c.rules.gather_has_a_rule:
        raise IllTyped(f"{c.op}: an indexing operation of an operand sharded {named[0]}, which this JAX binds as a "
                       f"gather, for which it has no sharding rule yet "
                       f"{_listed_in_the_doc('gather and scatter, i.e. indexing ops,')}")


def _listed_in_the_doc(ops: str) -> str:
    """A refusal's pointer to the doc ``documented_indexing_refusal`` quotes, which lists ``ops``."""
    return f"(its Explicit-sharding doc lists {ops} among the ops missing them)"


def slice_through_gather(c: Call, shape: Shape, index) -> bool:
    """Whether jnp takes the static slice ``index`` of ``shape`` through gather (``static_slice``'s
    ``through_gather``, for the call's mode and release)."""
    return through_gather(c.mesh, shape, index, c.eager, not c.rules.indexing_infers_sharding)



def _elementwise(c: Call) -> Spec:
    """Unary elementwise: the operand's spec (never rejects)."""
    return c.specs[0]


def _broadcasting(c: Call) -> Spec:
    return broadcast(c.shapes, c.specs, c.op)


ARG_REDUCTIONS = ("argmax", "argmin", "jnp.nanargmax", "jnp.nanargmin")


def _reduction(c: Call) -> Spec:
    """``jnp.<reduction>(x, axis, keepdims)``: reduced dimensions dropped (unsharded, with
    ``keepdims``); ``argmax``/``argmin`` over all axes first ravel ``x`` (a reshape)."""
    (shape, spec), axis = c.x, c.static.get("axis")
    rank = len(shape)
    if c.op in ARG_REDUCTIONS and axis is None:
        spec = c.reshape(shape, spec, (math.prod(shape),))
        return reduce(spec, (0,))
    axes = axes_argument(axis, rank)
    if c.static.get("keepdims"):
        return tuple(None if i in axes else e for i, e in enumerate(spec))
    return reduce(spec, axes)


def _scan(c: Call) -> Spec:
    (shape, spec) = c.x
    return cumulative(spec, axis_argument(c.static["axis"], len(shape)), c.op, c.rules.scan_keeps_a_sharded_dimension)


def _joining(c: Call) -> Spec:
    if c.op == "concatenate":
        taken = one_sharded_spec(c.specs) if c.rules.takes_the_one_sharded_operands_spec else None
        return taken if taken is not None else same_specs(c.specs, "concatenate")
    if c.op == "stack":
        return stack(c.specs, axis_argument(c.static["axis"], len(c.shapes[0]) + 1))
    raise _NoRule(f"joining operation {c.op!r}")


def _shape(c: Call) -> Spec:
    (shape, spec), s = c.x, c.static
    rank = len(shape)
    if c.op == "reshape":
        return c.reshape(shape, spec, tuple(s["shape"]))
    if c.op in ("transpose", "swapaxes"):
        return transpose(spec, permutation(c.op, s, rank))
    if c.op == "squeeze":
        return squeeze(spec, [axis_argument(a, rank) for a in _as_tuple(s["axis"])])
    if c.op == "expand_dims":
        return expand_dims(spec, [axis_argument(a, rank + 1) for a in _as_tuple(s["axis"])])
    if c.op == "broadcast_to":
        return (None,) * (len(s["shape"]) - rank) + spec
    raise _NoRule(f"shape operation {c.op!r}")


def _as_tuple(axis) -> tuple:
    return tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)


def _pad(c: Call) -> Spec:
    """``jnp.pad``: "constant" binds ``lax.pad`` (the resize rule); "wrap" slices off the
    remainders of the widths and concatenates; "symmetric" slices a one-element edge on each side
    of every padded dimension, then the mirrored pieces; "edge" slices a one-element edge on both
    sides of every dimension, padded or not, and repeats them. ``lax.pad`` (low, high, interior)
    is the resize rule."""
    (shape, spec), s, mesh = c.x, c.static, c.mesh
    if c.op == "lax_pad_negative":
        out = tuple(lo + hi + n + max(n - 1, 0) * interior for n, (lo, hi, interior) in zip(shape, s["config"]))
        return resized(mesh, shape, spec, out, "pad")
    if c.op != "pad":
        raise _NoRule(f"padding operation {c.op!r}")
    widths, mode = s["widths"], s["mode"]
    if not shape:
        return spec
    if mode == "constant":
        out = tuple(n + lo + hi for n, (lo, hi) in zip(shape, widths))
        return resized(mesh, shape, spec, out, "pad")
    if mode == "edge" and any(entry is not None for entry in spec):
        # the edges are repeated with jnp.repeat, which asks for an out_sharding when its operand is
        # sharded (JAX's message: "Please pass sharding to `jnp.repeat` via `out_sharding`"; from 0.11
        # the repeated edges come back replicated and the concatenate rejects them)
        raise IllTyped(f"jnp.pad(mode='edge') repeats the edges of an operand sharded {spec!r}: jnp.repeat "
                       "needs an out_sharding")
    current = list(shape)

    def cut(axis: int, size: int) -> None:
        """A slice of ``size`` along ``axis`` of the array as it stands."""
        out = list(current)
        out[axis] = size
        resized(mesh, tuple(current), spec, tuple(out), f"jnp.pad(mode={mode!r})")

    for i, (lo, hi) in enumerate(widths):
        n = shape[i]
        if n == 0:
            continue
        if mode == "wrap":
            for remainder in (lo % n, hi % n):
                if remainder:
                    cut(i, remainder)
            current[i] += lo + hi
        elif mode == "symmetric":
            if lo == 0 and hi == 0:
                continue
            for padding in (lo, hi):
                cut(i, 1)  # the edge, sliced whatever the padding
                while padding > 0:
                    piece = min(padding, n)
                    padding -= piece
                    cut(i, piece)
                    current[i] += piece
        elif mode == "edge":
            cut(i, 1)
            cut(i, 1)
            current[i] += lo + hi
        else:
            raise _NoRule(f"jnp.pad mode {mode!r}")
    return spec


def _slicing(c: Call) -> Spec:
    shape, spec = c.x
    return static_slice(c.mesh, shape, spec, c.static["index"], c.eager, not c.rules.indexing_infers_sharding)


def _dynamic(c: Call) -> Spec:
    """``lax.dynamic_slice`` (the resize rule) and ``lax.dynamic_update_slice`` (operand and
    update sharded identically); the start indices are scalars."""
    shape, spec = c.x
    if c.op == "dynamic_slice":
        return dynamic_slice(c, shape, spec, tuple(c.static["sizes"]))
    if c.op == "dynamic_update_slice":
        return same_specs(c.specs[:2], "dynamic_update_slice")
    raise _NoRule(f"dynamic operation {c.op!r}")


def dynamic_slice(c: Call, shape: Shape, spec: Spec, sizes: Shape) -> Spec:
    """``lax.dynamic_slice`` of ``shape`` laid out ``spec`` to ``sizes``: the resize rule, or, by
    ``c.rules`` (``ReleaseRules``), the forward propagation of an Auto mesh."""
    if not c.rules.dynamic_slice_unshards_resized_dimensions:
        return resized(c.mesh, shape, spec, sizes, "dynamic_slice")
    kept = tuple(e if n == m else None for n, m, e in zip(shape, sizes, spec))
    if c.rules.dynamic_slice_replicates_a_resized_sharded_dimension and kept != tuple(spec):
        return (None,) * len(kept)
    return kept




def shifted_ranges(shape, axis: int, shift: int):
    """``(dst, src)``: the index tuples of the catalogue's ``x.at[dst].<set|add>(x[src])`` along
    ``axis``, the same size and ``shift`` apart."""
    n, lead = shape[axis], (slice(None),) * axis
    return (lead + (slice(max(-shift, 0), n - max(shift, 0)),),
            lead + (slice(max(shift, 0), n - max(-shift, 0)),))


def _at(c: Call) -> Spec:
    """``x.at[index].<method>(u)``: jnp indexes like a gather (``indexer``), broadcasts ``u`` to
    the slice's shape and spec (``updates_for``), then the scatter rule, whichever the method
    (``at_set``, ``at_min``, ``at_max``: a static ``index``). ``at_*_shifted`` reads ``u = x[src]``
    first (``static_slice``)."""
    shape, spec = c.x
    s = c.static
    if c.op in SHIFTED_UPDATES:
        dst, src = shifted_ranges(shape, s["axis"], s["shift"])
        u_spec = static_slice(c.mesh, shape, spec, src, c.eager, not c.rules.indexing_infers_sharding)
        u_shape = tuple(slice_triple(sl, d)[2] for sl, d in zip(full_index(src, len(shape)), shape))
        ix = indexer(shape, spec, dst)
    elif c.op in ("at_set", "at_min", "at_max"):
        ix = indexer(shape, spec, s["index"])
        u_shape, u_spec = c.shapes[1], c.specs[1]
    elif c.op == "at_add_indices":
        ix = indexer(shape, spec, (), array=(c.shapes[1], c.specs[1]))
        u_shape, u_spec = c.shapes[2], c.specs[2]
    else:
        raise _NoRule(f".at operation {c.op!r}")
    updates = updates_for(u_shape, u_spec, ix.slice_shape, ix.slice_spec)
    return scatter(shape, spec, ix.indices_spec, ix.slice_shape, updates, ix.dims)


def _gather(c: Call) -> Spec:
    """jnp's integer-array indexing, each as the gather jnp binds."""
    shape, spec = c.x
    idx_shape, idx_spec = c.shapes[1], c.specs[1]
    rank = len(shape)
    if c.op in ("take", "take_clip"):
        axis = axis_argument(c.static["axis"], rank)
        offset = tuple(range(axis)) + tuple(range(axis + len(idx_shape), rank + len(idx_shape) - 1))
        sizes = tuple(1 if i == axis else n for i, n in enumerate(shape))
        return gather(shape, spec, idx_spec + (None,), GatherDims(offset, (axis,), (axis,)), sizes)
    if c.op == "index_array":
        # A 0-d index array: jnp's dynamic_slice route, then a squeeze, from indexing_infers_sharding;
        # before it a gather, whose rule refuses the indexed dimension named by any axis, one of size 1
        # too (measured: x[i] of x laid out P(('b',), None, 'a') on an (a=8, b=1) Explicit mesh raises
        # ShardingTypeError up to 0.9.0.1 and computes from 0.9.1, found by the release matrix on 0.9.0).
        if not idx_shape and c.rules.indexing_infers_sharding:
            sizes = (1,) + tuple(shape[1:])
            return squeeze(dynamic_slice(c, shape, spec, sizes), (0,))
        ix = indexer(shape, spec, (), array=(idx_shape, idx_spec))
        return gather(shape, spec, ix.indices_spec, ix.dims, ix.slice_sizes)
    if c.op == "take_along_axis":
        return take_along_axis(c.mesh, shape, spec, idx_shape, idx_spec, axis_argument(c.static["axis"], rank))
    raise _NoRule(f"gather operation {c.op!r}")




def _permuting(c: Call) -> Spec:
    """``jnp.flip`` binds ``rev`` (the operand's spec). ``jnp.roll`` concatenates two slices of the
    rolled dimension (the resize rule); over all axes it ravels first and reshapes back."""
    shape, spec = c.x
    if c.op == "flip":
        return spec
    if c.op != "roll":
        raise _NoRule(f"permuting operation {c.op!r}")
    axis, shift = c.static["axis"], c.static["shift"]
    if axis is None:
        flat = (math.prod(shape),)
        flat_spec = c.reshape(shape, spec, flat)
        _roll(c.mesh, flat, flat_spec, 0, shift, c.rules.roll_keeps_a_sharded_dimension)
        return c.reshape(flat, flat_spec, shape)
    return _roll(c.mesh, shape, spec, axis_argument(axis, len(shape)), shift, c.rules.roll_keeps_a_sharded_dimension)


def _roll(mesh, shape, spec, axis, shift, keeps_a_sharded_dimension: bool = False) -> Spec:
    """JAX's jnp.roll states (0.12: "`a` cannot be sharded on the axis being rolled over") that the
    rolled dimension must not be sharded, over any mesh axis; before that rule it concatenated two
    slices of the dimension (the resize rule). The model takes the stated rule: a rejection there
    is documented (an acceptance is still checked for values). With ``keeps_a_sharded_dimension``
    (forward propagation on an Auto mesh) a sharded rolled dimension keeps the operand's spec."""
    if spec[axis] is not None:
        if keeps_a_sharded_dimension:
            return spec
        raise IllTyped(f"jnp.roll: the rolled dimension {axis} is sharded {spec[axis]!r}")
    n = shape[axis]
    if n == 0:
        return spec
    i = (-shift) % n
    for size in (n - i, i):
        out = list(shape)
        out[axis] = size
        resized(mesh, shape, spec, tuple(out), "jnp.roll")
    return spec


def _sorting(c: Call) -> Spec:
    shape, spec = c.x
    return sort(spec, axis_argument(c.static["axis"], len(shape)), c.op, c.rules.sort_keeps_a_sharded_dimension)


def _contraction(c: Call) -> Spec:
    if c.op == "einsum":
        return _einsum(c.static["subscripts"], c.specs, c.rules.batch_specs_equal)
    (ls, rs), (lp, rp) = c.shapes[:2], c.specs[:2]
    if c.op == "dot_int":
        if not ls or not rs:
            return dot_general(lp, rp, ((), ()), ((), ()), "dot", batch_specs_equal=c.rules.batch_specs_equal)
        contract = ((len(ls) - 1,), (0 if len(rs) == 1 else len(rs) - 2,))
        return dot_general(lp, rp, contract, ((), ()), "dot", batch_specs_equal=c.rules.batch_specs_equal)
    if c.op == "matmul":
        return _matmul(ls, rs, lp, rp, c.rules.batch_specs_equal)
    raise _NoRule(f"contraction {c.op!r}")


def _matmul(ls, rs, lp, rp, batch_specs_equal: bool = True) -> Spec:
    """``jnp.matmul``: broadcast batch dimensions (a size-1 unsharded one is squeezed), the others
    batch dimensions of one ``dot_general``, the result transposed back to numpy's order."""
    a_mat, b_mat = len(ls) > 1, len(rs) > 1
    a_batch = ls[:-2] if a_mat else ()
    b_batch = rs[:-2] if b_mat else ()
    nb = max(len(a_batch), len(b_batch))
    a_b = (None,) * (nb - len(a_batch)) + tuple(a_batch)
    b_b = (None,) * (nb - len(b_batch)) + tuple(b_batch)
    a_s = (None,) * (nb - len(a_batch)) + (lp[:-2] if a_mat else ())
    b_s = (None,) * (nb - len(b_batch)) + (rp[:-2] if b_mat else ())
    out: List[SpecEntry] = []
    lhs_keep, rhs_keep = list(range(len(ls))), list(range(len(rs)))
    lb, rb = [], []
    a_off, b_off = nb - len(a_batch), nb - len(b_batch)
    for i, (ba, bb, sa, sb) in enumerate(zip(a_b, b_b, a_s, b_s)):
        if ba is None:
            out.append(sb)
        elif bb is None:
            out.append(sa)
        elif ba == 1 and bb == 1 and sa is None and sb is None:
            lhs_keep.remove(i - a_off)
            rhs_keep.remove(i - b_off)
            out.append(None)
        elif ba == 1 and sa is None:
            lhs_keep.remove(i - a_off)
            out.append(sb)
        elif bb == 1 and sb is None:
            rhs_keep.remove(i - b_off)
            out.append(sa)
        else:  # a batch dimension of the dot_general below, which checks the two sides' entries
            lb.append(i - a_off)
            rb.append(i - b_off)
            out.append(sa)
    if a_mat:
        out.append(lp[-2])
    if b_mat:
        out.append(rp[-1])
    lhs, rhs = [lp[i] for i in lhs_keep], [rp[i] for i in rhs_keep]
    lc, rc = lhs_keep.index(len(ls) - 1), rhs_keep.index(len(rs) - 1 - b_mat)
    dot_general(tuple(lhs), tuple(rhs), ((lc,), (rc,)),
                ((tuple(lhs_keep.index(i) for i in lb)), tuple(rhs_keep.index(i) for i in rb)), "matmul",
                batch_specs_equal=batch_specs_equal)
    return no_repeated_axis(tuple(out), "matmul")


def _einsum(subscripts: str, specs, batch_specs_equal: bool = True) -> Spec:
    """``jnp.einsum`` of one or two operands: a letter in one operand only and not in the result
    is summed out first (a reduction); then one ``dot_general`` (contracting the letters of both
    operands missing from the result, batching those in the result), transposed to the result's
    letter order."""
    inputs, result = subscripts.split("->")
    terms = inputs.split(",")
    if len(terms) == 1:
        names, spec = terms[0], specs[0]
        kept = [(n, e) for n, e in zip(names, spec) if n in result]
        by_name = dict(kept)
        return tuple(by_name[n] for n in result)
    if len(terms) != 2 or any(len(set(t)) != len(t) for t in terms):
        raise _NoRule(f"einsum {subscripts!r}")
    (ln, rn), (lp, rp) = terms, specs[:2]
    other = {0: rn, 1: ln}
    kept_terms, kept_specs = [], []
    for k, (names, spec) in enumerate(((ln, lp), (rn, rp))):
        keep = [(n, e) for n, e in zip(names, spec) if n in result or n in other[k]]
        kept_terms.append("".join(n for n, _ in keep))
        kept_specs.append(tuple(e for _, e in keep))
    (ln, rn), (lp, rp) = kept_terms, kept_specs
    contracted = sorted(set(ln) & set(rn) - set(result))
    batch = [n for n in result if n in ln and n in rn]
    rest_l = [n for n in ln if n not in batch and n not in contracted]
    rest_r = [n for n in rn if n not in batch and n not in contracted]
    # jnp (opt_einsum's path) pops the second operand as its lhs: it calls dot_general(x, y) when
    # the result is batch + x's free + y's free, else dot_general(y, x) and transposes
    if "".join(batch + rest_l + rest_r) != result:
        (ln, lp, rest_l), (rn, rp, rest_r) = (rn, rp, rest_r), (ln, lp, rest_l)
    out = dot_general(lp, rp, ([ln.index(n) for n in contracted], [rn.index(n) for n in contracted]),
                      ([ln.index(n) for n in batch], [rn.index(n) for n in batch]), "einsum",
                      batch_specs_equal=batch_specs_equal)
    by_name = dict(zip(batch + rest_l + rest_r, out))
    return tuple(by_name[n] for n in result)


def _selection(c: Call) -> Spec:
    """``jnp.where``: operands of different shapes are broadcast to the consensus spec
    (``broadcast_shardings``), then ``lax.select``; operands of one shape go to ``lax.select`` as
    they are. ``lax.select``: cases and a non-scalar predicate sharded identically."""
    shapes, specs = c.shapes, c.specs
    if c.rules.takes_the_one_sharded_operands_spec and len({s for s in shapes if len(s)}) == 1:
        taken = one_sharded_spec([p for s, p in zip(shapes, specs) if len(s)])
        if taken is not None:
            return taken
    if c.op == "select":
        return select(specs[0], specs[1:], len(shapes[0]))
    if c.op != "where":
        raise _NoRule(f"selection {c.op!r}")
    scalar_condition = len(shapes[0]) == 0
    group = list(zip(shapes, specs))[1:] if scalar_condition else list(zip(shapes, specs))
    if len({s for s, _ in group}) > 1:
        return broadcast([s for s, _ in group], [p for _, p in group], "where")
    spec = same_specs([p for _, p in group], "select cases" if scalar_condition else "where (select)")
    return spec


def _iota(c: Call) -> Spec:
    """``x`` combined with an unsharded iota (broadcast to ``x``'s spec where jnp asks): ``x``'s spec."""
    return c.specs[0]


FAMILY_RULES: Dict[str, Callable[[Call], Spec]] = {
    "elementwise": _elementwise, "broadcasting": _broadcasting, "reduction": _reduction, "scan": _scan,
    "joining": _joining, "shape": _shape, "padding": _pad, "slicing": _slicing, "dynamic": _dynamic,
    "at": _at, "gather": _gather, "permuting": _permuting, "sorting": _sorting,
    "contraction": _contraction, "selection": _selection, "iota": _iota,
}

def sharding_verdict(op: str, family: str, shapes: Sequence[Sequence[int]], specs: Sequence[Spec],
                     static: Mapping, mesh: MeshModel, *, eager: bool = False,
                     rules: ReleaseRules = LATEST) -> Verdict:
    """Whether JAX's sharding-in-types rules accept the catalogue operation ``op`` (of ``family``)
    on operands of ``shapes`` sharded by ``specs`` over the Explicit axes of ``mesh``, called with
    ``static``. ``eager``: called on committed arrays outside jit, where jnp indexes an array over
    more than one device through gather (``static_slice``); False for jit, with or without
    constraints. ``rules``: the stated rule changes the release under test has (``ReleaseRules``)."""
    shapes = tuple(tuple(int(n) for n in s) for s in shapes)
    specs = tuple(canonical_spec(p, len(s)) for p, s in zip(specs, shapes))
    rule = FAMILY_RULES.get(family)
    if rule is None:
        return Unmodelled(f"no rule for the {family!r} family")
    call = Call(op, family, shapes, specs, dict(static), mesh, eager, rules)
    try:
        documented_indexing_refusal(call)
        out = rule(call)
    except IllTyped as e:
        return Rejects(str(e))
    except _NoRule as e:
        return Unmodelled(f"no rule for {e}")
    return Accepts(tuple(out))


# --- indexing under vmap over a batch of indices ------------------------------------------------
BATCHED_INDEXING = ("index_array", "dynamic_slice", "dynamic_update_slice")


def batched_indexing_refusal(op: str, shape: Sequence[int], spec: Spec, windows: Sequence[int],
                             rules: ReleaseRules = LATEST) -> Optional[str]:
    """Under vmap over a batch of indices, ``x[i]`` of a scalar ``i`` (``op`` "index_array": a window
    of 1 along dimension 0), ``lax.dynamic_slice`` (its sizes as ``windows``) and
    ``lax.dynamic_update_slice`` (the update's shape as ``windows``) bind a gather (a scatter, for the
    update) of the batched operand ``x`` (``shape`` and ``spec`` of one example) whose windows are
    the slices. JAX's Explicit rule refuses one where a dimension sliced partially (a window smaller
    than the dimension) names a mesh axis, one of size 1 included ("Use `.at[...].get(out_sharding=)`",
    the Explicit-sharding doc's ambiguous gather), and, before its gather or scatter rule
    (``gather_has_a_rule``, ``batched_scatter_has_a_rule``), one whose operand names any axis. Returns
    why, or None where JAX accepts it (measured on 0.6.0-0.7.2 and 0.10.2: a start on a whole
    dimension cut is accepted, one slicing it partially is not)."""
    if op not in BATCHED_INDEXING:
        return None
    shape = tuple(int(n) for n in shape)
    axes = spec_axes(canonical_spec(spec, len(shape)))
    kind, has_a_rule = (("scatter", rules.batched_scatter_has_a_rule) if op == "dynamic_update_slice"
                        else ("gather", rules.gather_has_a_rule))
    if not has_a_rule and any(axes):
        return f"vmapped {op}: a {kind} of an operand sharded {show_spec(spec)}, for which this JAX has no rule yet"
    windows = (1,) + shape[1:] if op == "index_array" else tuple(int(n) for n in windows)
    partial = [d for d, (n, w) in enumerate(zip(shape, windows)) if w < n and axes[d]]
    if partial:
        return (f"vmapped {op}: a {kind} slicing dimension {partial[0]} partially, which names "
                f"{axes[partial[0]]}: JAX asks for an out_sharding")
    return None
