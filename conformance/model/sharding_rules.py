"""Reference model of sharding in types: whether JAX's rules type an operation of the catalogue on
operands sharded over Explicit mesh axes, and which spec they give its result.

Pure Python: this module never imports JAX. It restates, small, the rules JAX states: the
"Explicit sharding" doc (each result dimension takes the one sharding its input dimensions agree
on, or it is an error; a mesh axis named on two dimensions of a result is an error) and the
``_*_sharding_rule`` functions of ``jax/_src/lax`` (``lax.py``, ``slicing.py``,
``control_flow/loops.py``) that implement it, as of JAX 0.10.2.

Vocabulary:

* An operand's **type** is its shape and its spec over the mesh (``layout.Spec``). Rules compare
  specs in **canonical** form (``canonical_spec``): one entry per dimension, an entry ``None``, one
  axis name, or a tuple of two or more names, so ``('a',)`` is ``'a'`` and a missing trailing entry
  is ``None``. A size-1 mesh axis is a sharding like any other: it cuts nothing, but a spec naming
  it differs from ``None``.
* A dimension's **tiling** is the product of the sizes of the axes its entry names.
* A **primitive rule** (``broadcast``, ``dot_general``, ``reshape``, ``gather``, ...) is one lax
  primitive's sharding rule: operand types in, the result's canonical spec out, or ``IllTyped``.
* A **route** is the sequence of primitives a ``jax.numpy`` call binds for given static arguments
  (``jnp.pad(mode="edge")`` binds slices, a ``jnp.repeat`` and a concatenate); a catalogue family's
  rule runs the primitive rules along its route.
* A **verdict** is ``Accepts(out_spec)`` (well typed; ``out_spec`` is the result's canonical spec,
  or None where the rules leave it open), ``Rejects(reason)`` (JAX's rules reject these operand
  types: a ``ShardingTypeError`` is the documented outcome) or ``Unmodelled(reason)`` (no rule here;
  a rejection is not judged).

``sharding_verdict`` is the entry point. Where JAX's code and its stated rule part, the stated
rule decides (``reshape``). Where JAX changed a rule deliberately and said so, the rule of the
release under test decides: ``ReleaseRules`` says which of those changes it has (the caller tells,
from ``conformance.jaxside.compat``; the default is JAX 0.10.2's rules).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .layout import MeshModel, Spec, SpecEntry

Shape = Tuple[int, ...]


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


class IllTyped(Exception):
    """A primitive rule rejects its operand types (what JAX raises as ``ShardingTypeError``)."""


@dataclass(frozen=True)
class ReleaseRules:
    """The stated rule changes a JAX release has (``conformance.jaxside.compat`` decides them; each
    field names the compat feature and quotes what JAX stated before it):

    * ``indexing_infers_sharding`` (``EXPLICIT_INDEXING_INFERS_SHARDING``, JAX 0.9.1): a strided
      static slice under jit binds lax.slice, typed by the slice rule. Without it jnp takes it
      through gather, and the Explicit-sharding doc's "plenty of ops that are missing sharding
      rules. For example, `scatter` and `gather` (i.e. indexing ops)" holds where the release has
      not yet implemented them (``documented_indexing_refusal``, by the three rules below).
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


# --- specs --------------------------------------------------------------------------------------
def canonical_entry(entry: SpecEntry) -> SpecEntry:
    """``None`` and ``()`` are None, a 1-tuple is its name, a longer tuple stays a tuple."""
    if entry is None or isinstance(entry, str):
        return entry
    entry = tuple(entry)
    if not entry:
        return None
    return entry[0] if len(entry) == 1 else entry


def canonical_spec(spec: Spec, rank: int) -> Spec:
    """``spec`` with one canonical entry per dimension of an array of ``rank`` dimensions."""
    entries = tuple(canonical_entry(e) for e in tuple(spec)[:rank])
    return entries + (None,) * (rank - len(entries))


def entry_axes(entry: SpecEntry) -> Tuple[str, ...]:
    entry = canonical_entry(entry)
    return () if entry is None else (entry,) if isinstance(entry, str) else entry


def tiling(mesh: MeshModel, entry: SpecEntry) -> int:
    """How many blocks ``entry`` cuts a dimension into: the product of its axes' sizes."""
    sizes = mesh.axis_sizes
    return math.prod(sizes[a] for a in entry_axes(entry))


def _entry_of_axes(axes: Sequence[str]) -> SpecEntry:
    return canonical_entry(tuple(axes))


def _show(spec: Spec) -> str:
    return "P(" + ", ".join(repr(e) for e in spec) + ")"


def no_repeated_axis(spec: Spec, what: str) -> Spec:
    """``spec`` itself; IllTyped when it names a mesh axis on two dimensions (the doc's last step:
    "an array sharding that mentions a mesh axis more than once ... is illegal")."""
    seen: Dict[str, int] = {}
    for dim, entry in enumerate(spec):
        for name in entry_axes(entry):
            if name in seen:
                raise IllTyped(f"{what}: mesh axis {name!r} would shard dimensions {seen[name]} and {dim} "
                               f"of the result {_show(spec)}")
            seen[name] = dim
    return spec


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"axis {axis} out of range for rank {rank}")
    return axis % rank if rank else 0


def axes_argument(axis, rank: int) -> Tuple[int, ...]:
    """An ``axis`` argument (None, an int or a tuple: a reduction's, a flip's) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, int):
        return (_axis(axis, rank),)
    return tuple(sorted(_axis(a, rank) for a in axis))


# --- primitive rules ----------------------------------------------------------------------------
def consensus(entries: Sequence[SpecEntry], what: str) -> SpecEntry:
    """The one sharding the non-None ``entries`` of a result dimension agree on (None when all are
    None); IllTyped when two differ (the doc's "consensus" rule)."""
    sharded = []
    for entry in map(canonical_entry, entries):
        if entry is not None and entry not in sharded:
            sharded.append(entry)
    if len(sharded) > 1:
        raise IllTyped(f"{what}: the operands shard one dimension differently: {sharded}")
    return sharded[0] if sharded else None


def broadcast(shapes: Sequence[Shape], specs: Sequence[Spec], what: str = "broadcasting") -> Spec:
    """NumPy broadcasting (``jnp`` promotes ranks with leading unsharded dimensions; rank-0
    operands take no part): each result dimension is the consensus of the operands' entries
    (``broadcasting_sharding_rule``), and no mesh axis may shard two result dimensions."""
    shaped = [(tuple(s), canonical_spec(p, len(s))) for s, p in zip(shapes, specs) if len(s)]
    if not shaped:
        return ()
    rank = max(len(s) for s, _ in shaped)
    padded = [(None,) * (rank - len(p)) + p for _, p in shaped]
    return no_repeated_axis(tuple(consensus(column, what) for column in zip(*padded)), what)


def reduce(spec: Spec, axes: Sequence[int]) -> Spec:
    """A reduction drops the reduced dimensions' entries, sharded or not (``_reduce_*_rule``)."""
    return tuple(e for i, e in enumerate(spec) if i not in set(axes))


def cumulative(spec: Spec, axis: int, what: str = "cumulative reduction", keeps_a_sharded_dimension: bool = False) -> Spec:
    """A scan keeps its operand's spec; the scanned dimension must be unsharded
    (``_cumred_sharding_rule``), unless the release keeps a sharded one too
    (``keeps_a_sharded_dimension``: ``ReleaseRules.scan_keeps_a_sharded_dimension``)."""
    if spec[axis] is not None and not keeps_a_sharded_dimension:
        raise IllTyped(f"{what}: the scanned dimension {axis} is sharded ({spec[axis]!r})")
    return spec


def same_specs(specs: Sequence[Spec], what: str) -> Spec:
    """Operands that must be sharded identically (concatenate, stack, sort keys, select cases,
    dynamic_update_slice): their common spec."""
    first = specs[0]
    for other in specs[1:]:
        if other != first:
            raise IllTyped(f"{what}: operands are sharded differently: {_show(first)} and {_show(other)}")
    return first


def one_sharded_spec(specs: Sequence[Spec]) -> Optional[Spec]:
    """The spec the sharded ones among ``specs`` share, or None when none is sharded or two differ."""
    sharded = {spec for spec in specs if any(e is not None for e in spec)}
    return next(iter(sharded)) if len(sharded) == 1 else None


def stack(specs: Sequence[Spec], axis: int) -> Spec:
    """Stacking needs identical operand specs and adds an unsharded dimension at ``axis``."""
    spec = same_specs(specs, "stack")
    return spec[:axis] + (None,) + spec[axis:]


def transpose(spec: Spec, permutation: Sequence[int]) -> Spec:
    """A transpose permutes its operand's entries."""
    return tuple(spec[i] for i in permutation)


def permutation(op: str, static: dict, rank: int) -> List[int]:
    """The operand dimension each result dimension of a ``transpose`` (``axes``) or ``swapaxes``
    (``a``, ``b``) of a rank-``rank`` operand takes, negative axes resolved."""
    if op == "transpose":
        return [_axis(d, rank) for d in static["axes"]]
    perm = list(range(rank))
    a, b = _axis(static["a"], rank), _axis(static["b"], rank)
    perm[a], perm[b] = perm[b], perm[a]
    return perm


def squeeze(spec: Spec, dims: Sequence[int]) -> Spec:
    """A squeeze drops the squeezed dimensions' entries."""
    return tuple(e for i, e in enumerate(spec) if i not in set(dims))


def expand_dims(spec: Spec, dims: Sequence[int]) -> Spec:
    """New size-1 dimensions (at positions ``dims`` of the result) are unsharded."""
    rank = len(spec) + len(dims)
    rest = iter(spec)
    return tuple(None if i in set(dims) else next(rest) for i in range(rank))


def resized(mesh: MeshModel, shape: Shape, spec: Spec, out_shape: Shape, what: str) -> Spec:
    """Slice, pad, dynamic_slice: the result keeps the operand's spec; a sharded dimension whose
    size changes must keep a size its tiling divides (``_get_sharding_for_varying_out_shape``)."""
    for dim, (n, m, entry) in enumerate(zip(shape, out_shape, spec)):
        if n != m and entry is not None and m % tiling(mesh, entry):
            raise IllTyped(f"{what}: dimension {dim} sharded {entry!r} ({tiling(mesh, entry)} ways) "
                           f"would get size {m}, which that does not divide")
    return spec


def dot_general(lhs: Spec, rhs: Spec, contracting: Tuple[Sequence[int], Sequence[int]],
                batch: Tuple[Sequence[int], Sequence[int]], what: str = "dot_general", *,
                batch_specs_equal: bool = True) -> Spec:
    """``_dot_general_sharding_rule`` without ``out_sharding``: batch dimensions sharded on both
    sides must agree (the result takes the lhs's entry), and with ``batch_specs_equal`` (from JAX
    0.11.1, ``ReleaseRules``) be sharded identically on both sides; a contracting dimension must not be sharded
    on both sides (equal shardings would leave the result's sharding ambiguous); the result is batch
    + lhs free + rhs free dimensions, and no mesh axis may shard two of them."""
    (lc, rc), (lb, rb) = contracting, batch
    for i, j in zip(lb, rb):
        if lhs[i] != rhs[j] and (batch_specs_equal or (lhs[i] is not None and rhs[j] is not None)):
            raise IllTyped(f"{what}: batch dimensions sharded differently: {lhs[i]!r} and {rhs[j]!r}")
    for i, j in zip(lc, rc):
        if lhs[i] is not None and rhs[j] is not None:
            why = "mismatched" if lhs[i] != rhs[j] else "the result's sharding is ambiguous"
            raise IllTyped(f"{what}: contracting dimensions sharded on both sides ({lhs[i]!r} and {rhs[j]!r}): {why}")
    free_l = [e for i, e in enumerate(lhs) if i not in set(lc) | set(lb)]
    free_r = [e for i, e in enumerate(rhs) if i not in set(rc) | set(rb)]
    return no_repeated_axis(tuple(lhs[i] for i in lb) + tuple(free_l) + tuple(free_r), what)


def select(which: Spec, cases: Sequence[Spec], which_rank: int) -> Spec:
    """``lax.select``: the cases must be sharded identically, and a non-scalar predicate alike."""
    spec = same_specs(cases, "select cases")
    if which_rank and which != spec:
        raise IllTyped(f"select: the predicate is sharded {_show(which)}, the cases {_show(spec)}")
    return spec


def sort(spec: Spec, axis: int, what: str = "sort", keeps_a_sharded_dimension: bool = False) -> Spec:
    """Sorting keeps its operand's spec; the sorted dimension must be unsharded
    (``_sort_sharding_rule``), unless the release keeps a sharded one too
    (``keeps_a_sharded_dimension``: ``ReleaseRules.sort_keeps_a_sharded_dimension``)."""
    if spec[axis] is not None and not keeps_a_sharded_dimension:
        raise IllTyped(f"{what}: the sorted dimension {axis} is sharded ({spec[axis]!r})")
    return spec


# --- reshape ------------------------------------------------------------------------------------
def _one_group(op_shape: Sequence[int], new_sizes: Sequence[int]) -> Optional[list]:
    """Whether ``new_sizes`` (no size-1 sides, more of them than ``op_shape``'s) splits exactly
    one side of ``op_shape`` into consecutive sides: the operand's sides in order, the split one
    as the list of its new sizes; None when it does not (lax's ``_split_on_one_axis``)."""
    i = j = count = 0
    out: list = []
    while j < len(new_sizes):
        if i >= len(op_shape):
            return None
        if op_shape[i] == new_sizes[j]:
            out.append(op_shape[i])
        else:
            count += 1
            if count > 1:
                return None
            group = [new_sizes[j]]
            while math.prod(group) != op_shape[i]:
                j += 1
                if math.prod(group) > op_shape[i] or j >= len(new_sizes):
                    return None
                group.append(new_sizes[j])
            out.append(group)
        i += 1
        j += 1
    return out if len(out) == len(op_shape) else None


def one_split_or_merge(shape: Shape, new_shape: Shape) -> bool:
    """Whether a reshape of ``shape`` to ``new_shape`` (the sides as given, size-1 ones included)
    splits exactly one side or merges exactly one group of consecutive sides, or only adds and drops
    size-1 sides: the reshapes lax's sharding rule types (``_split_on_one_axis``,
    ``_merge_on_one_axis``, ``_split_merge_singleton_dim_sharding_rule``)."""
    shape, new_shape = tuple(shape), tuple(new_shape)
    if [n for n in shape if n != 1] == [n for n in new_shape if n != 1]:
        return True
    if len(new_shape) > len(shape):
        return _one_group(shape, new_shape) is not None
    return len(new_shape) < len(shape) and _one_group(new_shape, shape) is not None


def merged_groups(shape: Shape, new_shape: Shape) -> List[List[int]]:
    """The dimensions of ``shape`` that a reshape to ``new_shape`` merges into one, by index
    ([[0, 1]] for (2, 2) -> (4,)); none where the reshape is not one merge (lax's
    ``_merge_on_one_axis``, on the shapes as given)."""
    if len(new_shape) >= len(shape):
        return []
    parts = _one_group(tuple(new_shape), tuple(shape))
    groups: List[List[int]] = []
    first = 0
    for part in parts or ():
        if isinstance(part, list):
            groups.append(list(range(first, first + len(part))))
            first += len(part)
        else:
            first += 1
    return groups


def _split_partitions(mesh: MeshModel, axes: Sequence[str], sizes: Sequence[int], what: str) -> List[SpecEntry]:
    """Deal a dimension's mesh axes, major first, over new dimensions of ``sizes``: each takes axes
    while its remaining size exceeds 1, and each axis size must divide what remains."""
    pending = list(axes)
    out = []
    for size in sizes:
        taken = []
        while size > 1 and pending:
            name = pending.pop(0)
            size, remainder = divmod(size, mesh.axis_sizes[name])
            if remainder:
                raise IllTyped(f"{what}: mesh axis {name!r} does not divide the new dimension")
            taken.append(name)
        out.append(_entry_of_axes(taken))
    if pending:
        raise IllTyped(f"{what}: mesh axes {pending} are left over")
    return out


def reshape(mesh: MeshModel, shape: Shape, spec: Spec, new_shape: Shape, deals_axes: bool = True) -> Spec:
    """``_reshape_sharding_rule`` (row-major, no ``out_sharding``), as the doc states it: an
    unsharded operand stays unsharded; size-1 dimensions are stripped ("these can't be sharded
    anyway") and new ones are unsharded; then the rest must be unchanged, split one dimension
    (its axes dealt over the new dimensions, major first, each dividing) or merge one group of
    dimensions sharded only in major position (their axes in order); anything else rejects.
    (JAX 0.10.2 strips size-1 dimensions only when nothing else changes: jax-ml/jax e441101c95.)

    ``deals_axes=False``: the rule before JAX 0.10.0 (``ReleaseRules.reshape_deals_mesh_axes``): a
    split puts the split dimension's whole entry on the first new dimension, which its tiling must
    divide, and a merge takes the entry of its group's first dimension, the others unsharded (a
    group whose later dimension names a mesh axis, one of size 1 included, rejects)."""
    shape, new_shape = tuple(shape), tuple(new_shape)
    if shape == new_shape:
        return spec
    if all(e is None for e in spec):
        return (None,) * len(new_shape)
    what = f"reshape {shape} -> {new_shape}"
    sides = [n for n in shape if n != 1]
    entries = [e for n, e in zip(shape, spec) if n != 1]
    new_sides = [n for n in new_shape if n != 1]
    out: List[SpecEntry] = []
    if sides == new_sides:
        out = entries
    elif len(new_sides) > len(sides) and _one_group(sides, new_sides) is not None:
        for part, entry in zip(_one_group(sides, new_sides), entries):
            if not isinstance(part, list):
                out.append(entry)
            elif entry is None:
                out.extend([None] * len(part))
            elif not deals_axes:
                if part[0] % tiling(mesh, entry):
                    raise IllTyped(f"{what}: splits a dimension sharded {entry!r} ({tiling(mesh, entry)} ways) "
                                   f"into a first dimension of size {part[0]} (before JAX 0.10.0 lax put the "
                                   f"whole sharding on the first new dimension)")
                out.extend([entry] + [None] * (len(part) - 1))
            else:
                out.extend(_split_partitions(mesh, entry_axes(entry), part, what))
    elif len(new_sides) < len(sides) and _one_group(new_sides, sides) is not None:
        rest = iter(entries)
        for size, part in zip(new_sides, _one_group(new_sides, sides)):
            if not isinstance(part, list):
                out.append(next(rest))
                continue
            group = [next(rest) for _ in part]
            if all(e is None for e in group):
                out.append(None)
                continue
            if not deals_axes:
                if any(e is not None for e in group[1:]):
                    raise IllTyped(f"{what}: merges a group sharded past its first dimension ({_show(tuple(group))}; "
                                   f"before JAX 0.10.0 lax merged only a group sharded in its first dimension)")
                out.append(group[0])
                continue
            flat = [a for e in group for a in (entry_axes(e) or (None,))]
            while flat[-1] is None:
                flat.pop()
            if None in flat:
                raise IllTyped(f"{what}: merges a sharded dimension into a minor position ({_show(tuple(group))})")
            out.extend(_split_partitions(mesh, flat, [size], what))
    else:
        raise IllTyped(f"{what}: neither one split nor one merge")
    kept = iter(out)
    return tuple(None if n == 1 else next(kept) for n in new_shape)


# --- gather and scatter ---------------------------------------------------------------------------
@dataclass(frozen=True)
class GatherDims:
    """Gather dimension numbers (scatter: window dims = ``offset_dims``, inserted =
    ``collapsed``, scatter-to-operand = ``start_index_map``)."""

    offset_dims: Tuple[int, ...]
    collapsed: Tuple[int, ...]
    start_index_map: Tuple[int, ...]
    operand_batching: Tuple[int, ...] = ()
    indices_batching: Tuple[int, ...] = ()


def gather(shape: Shape, spec: Spec, indices_spec: Spec, dims: GatherDims, slice_sizes: Sequence[int]) -> Spec:
    """``_gather_spec_computation``: an operand dimension indexed into must be unsharded unless
    taken whole; batching dimensions of operand and indices must agree where both are sharded; the
    other dimensions of the indices (the index vector last) must be unsharded. The result's offset
    dimensions take the operand's entries, the others the indices' (batching ones resolved)."""
    indices_spec = list(indices_spec)
    if all(e is None for e in spec) and all(e is None for e in indices_spec):
        rank = len(dims.offset_dims) + len(indices_spec) - 1
        return (None,) * rank
    for i in dims.start_index_map:
        if slice_sizes[i] != shape[i] and spec[i] is not None:
            raise IllTyped(f"gather: indexed dimension {i} is sharded ({spec[i]!r}) and not taken whole")
    for od, idd in zip(dims.operand_batching, dims.indices_batching):
        o, x = spec[od], indices_spec[idd]
        if o is not None and x is not None and o != x:
            raise IllTyped(f"gather: batching dimensions sharded differently: {o!r} and {x!r}")
    for i, e in enumerate(indices_spec):
        if i not in dims.indices_batching and e is not None:
            raise IllTyped(f"gather: the indices are sharded on their dimension {i} ({e!r})")
    for od, idd in zip(dims.operand_batching, dims.indices_batching):
        indices_spec[idd] = indices_spec[idd] or spec[od]
    offset_operand = (i for i in range(len(shape)) if i not in dims.collapsed and i not in dims.operand_batching)
    from_indices = iter(indices_spec)
    rank = len(dims.offset_dims) + len(indices_spec) - 1
    out = tuple(spec[next(offset_operand)] if d in dims.offset_dims else next(from_indices) for d in range(rank))
    return no_repeated_axis(out, "gather")


def scatter(shape: Shape, spec: Spec, indices_spec: Spec, updates_shape: Shape, updates_spec: Spec,
            dims: GatherDims) -> Spec:
    """``_scatter_spec_computation`` (no batching dimensions): each update window dimension and
    its operand dimension are alike (same size and sharding) or both unsharded; dimensions the
    updates index into are unsharded in the operand, and the updates' and indices' other dimensions
    (the index vector too) are unsharded. The result is the operand's spec, its unsharded window
    dimensions taking the updates' entries."""
    if all(e is None for e in spec + tuple(indices_spec) + tuple(updates_spec)):
        return spec
    window_operand = [i for i in range(len(shape)) if i not in dims.collapsed]
    for ud, od in zip(dims.offset_dims, window_operand):
        alike = updates_shape[ud] == shape[od] and updates_spec[ud] == spec[od]
        if not alike and not (updates_spec[ud] is None and spec[od] is None):
            raise IllTyped(f"scatter: update dimension {ud} ({updates_spec[ud]!r}, size {updates_shape[ud]}) "
                           f"does not match operand dimension {od} ({spec[od]!r}, size {shape[od]})")
    for i in dims.collapsed:
        if spec[i] is not None:
            raise IllTyped(f"scatter: operand dimension {i}, indexed into, is sharded ({spec[i]!r})")
    for i, e in enumerate(updates_spec):
        if i not in dims.offset_dims and e is not None:
            raise IllTyped(f"scatter: the updates are sharded on their indexed dimension {i} ({e!r})")
    if any(e is not None for e in indices_spec):
        raise IllTyped(f"scatter: the indices are sharded ({_show(tuple(indices_spec))})")
    out = list(spec)
    for ud, od in zip(dims.offset_dims, window_operand):
        out[od] = out[od] if out[od] is not None else updates_spec[ud]
    return tuple(out)


# --- jnp indexing: the indexer jnp builds for static slices and one integer array ------------------
def _slice_triple(s: slice, n: int) -> Tuple[int, int, int]:
    """(start, step, size) of a slice over a side ``n``."""
    start, stop, step = s.indices(n)
    return start, step, len(range(start, stop, step))


def _full_index(index, rank: int) -> tuple:
    index = tuple(index) if isinstance(index, tuple) else (index,)
    return index + (slice(None),) * (rank - len(index))


@dataclass(frozen=True)
class _Indexer:
    """What jnp's ``_index_to_gather`` builds for an index of slices with, optionally, an integer
    array indexing dimension 0: the gather dimension numbers and slice sizes, the indices' spec, and
    the slice's shape and spec (the target of a scatter's updates)."""

    dims: GatherDims
    slice_sizes: Tuple[int, ...]
    indices_spec: Spec
    slice_shape: Shape
    slice_spec: Spec


def _indexer(shape: Shape, spec: Spec, index, array: Optional[Tuple[Shape, Spec]] = None) -> _Indexer:
    """``index``: slices, one per leading dimension (``array``: an integer array of that shape and
    spec indexes dimension 0, the slices the others). Index arrays jnp builds from static slices
    are unsharded."""
    offset, collapsed, start_map, slice_sizes = [], [], [], []
    slice_shape: List[int] = []
    slice_spec: List[SpecEntry] = []
    index_dims = 0       # dimensions of the index arrays built for strided slices
    pieces = 0           # index arrays to concatenate
    y_axis = 0
    first = 0
    array_spec: Spec = ()
    if array is not None:
        a_shape, array_spec = array
        start_map.append(0)
        collapsed.append(0)
        slice_sizes.append(1)
        slice_shape += a_shape
        slice_spec += array_spec
        y_axis += len(a_shape)
        index_dims += len(a_shape)
        pieces += 1
        first = 1
    rest = _full_index(index, len(shape) - first)
    for x_axis, s in enumerate(rest, start=first):
        n = shape[x_axis]
        start, step, size = _slice_triple(s, n)
        slice_shape.append(size)
        slice_spec.append(spec[x_axis])
        if step == 1:
            if size != n:
                start_map.append(x_axis)
                pieces += 1
            slice_sizes.append(size)
            offset.append(y_axis)
        else:
            slice_sizes.append(1)
            start_map.append(x_axis)
            collapsed.append(x_axis)
            index_dims += 1
            pieces += 1
        y_axis += 1
    # no index: an empty (0,) array; else the index arrays (jnp's own unsharded, or ``array``)
    # broadcast together, with the index vector dimension last
    indices_spec: Spec = (None,) if pieces == 0 else tuple(array_spec) + (None,) * (index_dims - len(array_spec) + 1)
    return _Indexer(GatherDims(tuple(offset), tuple(sorted(collapsed)), tuple(start_map)),
                    tuple(slice_sizes), indices_spec, tuple(slice_shape),
                    no_repeated_axis(tuple(slice_spec), "indexing"))


def _partial(shape: Shape, index) -> bool:
    """jnp's ``has_partial_slices``: some slice is strided or does not take its whole side."""
    for n, s in zip(shape, _full_index(index, len(shape))):
        start, stop, step = s.indices(n)
        if abs(step) != 1 or abs(stop - start) != n:
            return True
    return False


def static_slice(mesh: MeshModel, shape: Shape, spec: Spec, index, eager: bool,
                 before_indexing_infers: bool = False) -> Spec:
    """``x[index]`` for a tuple of static slices. Under jit (or on one device) jnp binds ``rev``
    and ``slice``: the resize rule. Eagerly, on an array over several devices, jnp takes a slice
    that is strided or partial through ``gather`` (its comment: partial slices of sharded inputs
    "lead to incorrect sharding semantics when computed via slice"): an indexed dimension must be
    unsharded unless whole, and strided dimensions come out unsharded; an empty result is a
    zero array with the operand's spec. ``before_indexing_infers``: the release has no
    ``ReleaseRules.indexing_infers_sharding`` yet, and jnp chooses as it did then (``through_gather``)."""
    full = _full_index(index, len(shape))
    out_shape = tuple(_slice_triple(s, n)[2] for s, n in zip(full, shape))
    if not through_gather(mesh, shape, index, eager, before_indexing_infers):
        return resized(mesh, shape, spec, out_shape, "slicing")
    if 0 in out_shape:
        for dim, (m, e) in enumerate(zip(out_shape, spec)):
            if e is not None and m % tiling(mesh, e):
                raise IllTyped(f"empty slice: its dimension {dim} of size {m} is sharded {e!r}, which "
                               f"does not divide it")
        return spec
    ix = _indexer(shape, spec, index)
    return gather(shape, spec, ix.indices_spec, ix.dims, ix.slice_sizes)


def updates_for(shape: Shape, spec: Spec, target_shape: Shape, target_spec: Spec) -> Spec:
    """jnp broadcasts a scatter's updates to the slice's shape *and spec*: an updates dimension
    may be unsharded or sharded as the slice is, nothing else."""
    lead = len(target_shape) - len(shape)
    if tuple(shape) == tuple(target_shape) and spec == target_spec:
        return spec
    for dim, entry in enumerate(spec):
        if entry is not None and entry != target_spec[lead + dim]:
            raise IllTyped(f"scatter updates: dimension {dim} is sharded {entry!r} where the indexed slice "
                           f"is {target_spec[lead + dim]!r}")
    return target_spec


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


def whole_slice(index, shape) -> bool:
    """Whether a static index of contiguous slices takes every dimension whole (``x[-3:]`` of a
    dimension of 2, ``x[::1]``): jnp's ``_attempt_rewriting_take_via_slice`` then returns the array
    itself ("if not (int_indices or has_partial_slices): return arr"), no slice or gather at all."""
    full = _full_index(index, len(shape))
    return len(full) == len(shape) and all(
        isinstance(i, slice) and i.step in (None, 1) and i.indices(n) == (0, n, 1) for i, n in zip(full, shape))


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
    named = [_show(spec) for spec in c.specs if any(e is not None for e in spec)]
    if not named:
        return
    if c.op in SHIFTED_UPDATES:
        shape, s = c.x[0], c.static
        missing = {"at_set_shifted": (c.rules.scatter_has_a_rule, "scatter"),
                   "at_add_shifted": (c.rules.scatter_add_has_a_rule, "scatter-add")}[c.op]
        if not missing[0]:
            raise IllTyped(f"{c.op}: a {missing[1]} of an operand sharded {named[0]}, for which this JAX has no "
                           f"sharding rule yet (its Explicit-sharding doc lists scatter among the ops missing them)")
        gathers = slice_through_gather(c, shape, shifted_ranges(shape, s["axis"], s["shift"])[1])
    else:
        gathers = c.family == "gather" or slice_through_gather(c, c.x[0], c.static["index"])
    if gathers and not c.rules.gather_has_a_rule:
        raise IllTyped(f"{c.op}: an indexing operation of an operand sharded {named[0]}, which this JAX binds as a "
                       f"gather, for which it has no sharding rule yet (its Explicit-sharding doc lists gather and "
                       f"scatter, i.e. indexing ops, among the ops missing them)")


def slice_through_gather(c: Call, shape: Shape, index) -> bool:
    """Whether jnp takes the static slice ``index`` of ``shape`` through gather (``static_slice``'s
    ``through_gather``, for the call's mode and release)."""
    return through_gather(c.mesh, shape, index, c.eager, not c.rules.indexing_infers_sharding)


def through_gather(mesh: MeshModel, shape: Shape, index, eager: bool, before_indexing_infers: bool) -> bool:
    """Whether jnp takes the static slice ``index`` of ``shape`` through gather: eagerly, a partial
    one of an array over several devices (``_partial``); before ``indexing_infers_sharding``
    (jnp's ``_attempt_rewriting_take_via_slice`` up to 0.9.0), any index not written as a slice of
    step 1 or a whole reversal ``::-1`` (its start and stop None: x[1::-1] of a dimension of 2 is a
    gather, x[::-1] a rev), under jit too, and eagerly a partial slice of step 1."""
    if mesh.size <= 1:
        return False
    if not before_indexing_infers:
        return eager and _partial(shape, index)
    full = _full_index(index, len(shape))
    written_as_slices = all(s.step in (None, 1) or (s.start is None and s.stop is None and s.step == -1) for s in full)
    partial = any(s.step in (None, 1) and s.indices(n) != (0, n, 1) for n, s in zip(shape, full))
    return not written_as_slices or (eager and partial)


def _elementwise(c: Call) -> Spec:
    """Unary elementwise: the operand's spec (never rejects)."""
    return c.specs[0]


def _broadcasting(c: Call) -> Spec:
    return broadcast(c.shapes, c.specs, c.op)


ARG_REDUCTIONS = ("argmax", "argmin")


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
    return cumulative(spec, _axis(c.static["axis"], len(shape)), c.op, c.rules.scan_keeps_a_sharded_dimension)


def _joining(c: Call) -> Spec:
    if c.op == "concatenate":
        taken = one_sharded_spec(c.specs) if c.rules.takes_the_one_sharded_operands_spec else None
        return taken if taken is not None else same_specs(c.specs, "concatenate")
    if c.op == "stack":
        return stack(c.specs, _axis(c.static["axis"], len(c.shapes[0]) + 1))
    raise _NoRule(f"joining operation {c.op!r}")


def _shape(c: Call) -> Spec:
    (shape, spec), s = c.x, c.static
    rank = len(shape)
    if c.op == "reshape":
        return c.reshape(shape, spec, tuple(s["shape"]))
    if c.op in ("transpose", "swapaxes"):
        return transpose(spec, permutation(c.op, s, rank))
    if c.op == "squeeze":
        return squeeze(spec, [_axis(a, rank) for a in _as_tuple(s["axis"])])
    if c.op == "expand_dims":
        return expand_dims(spec, [_axis(a, rank + 1) for a in _as_tuple(s["axis"])])
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
    """``x.at[index].<method>(u)``: jnp indexes like a gather (``_indexer``), broadcasts ``u`` to
    the slice's shape and spec (``updates_for``), then the scatter rule, whichever the method
    (``at_set``, ``at_min``, ``at_max``: a static ``index``). ``at_*_shifted`` reads ``u = x[src]``
    first (``static_slice``)."""
    shape, spec = c.x
    s = c.static
    if c.op in SHIFTED_UPDATES:
        dst, src = shifted_ranges(shape, s["axis"], s["shift"])
        u_spec = static_slice(c.mesh, shape, spec, src, c.eager, not c.rules.indexing_infers_sharding)
        u_shape = tuple(_slice_triple(sl, d)[2] for sl, d in zip(_full_index(src, len(shape)), shape))
        ix = _indexer(shape, spec, dst)
    elif c.op in ("at_set", "at_min", "at_max"):
        ix = _indexer(shape, spec, s["index"])
        u_shape, u_spec = c.shapes[1], c.specs[1]
    elif c.op == "at_add_indices":
        ix = _indexer(shape, spec, (), array=(c.shapes[1], c.specs[1]))
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
        axis = _axis(c.static["axis"], rank)
        offset = tuple(range(axis)) + tuple(range(axis + len(idx_shape), rank + len(idx_shape) - 1))
        sizes = tuple(1 if i == axis else n for i, n in enumerate(shape))
        return gather(shape, spec, idx_spec + (None,), GatherDims(offset, (axis,), (axis,)), sizes)
    if c.op == "index_array":
        if not idx_shape:  # a 0-d index array: jnp's dynamic_slice route, then a squeeze
            sizes = (1,) + tuple(shape[1:])
            return squeeze(dynamic_slice(c, shape, spec, sizes), (0,))
        ix = _indexer(shape, spec, (), array=(idx_shape, idx_spec))
        return gather(shape, spec, ix.indices_spec, ix.dims, ix.slice_sizes)
    if c.op == "take_along_axis":
        return _take_along_axis(c.mesh, shape, spec, idx_shape, idx_spec, _axis(c.static["axis"], rank))
    raise _NoRule(f"gather operation {c.op!r}")


def _take_along_axis(mesh, shape, spec, idx_shape, idx_spec, axis) -> Spec:
    """jnp reshapes the indices (dropping their size-1 dimensions but ``axis``, adding the index
    vector) and gathers with the other dimensions as batching dimensions."""
    keep = [i for i, n in enumerate(idx_shape) if i == axis or n != 1]
    indices_shape = tuple(idx_shape[i] for i in keep) + (1,)
    indices_spec = list(reshape(mesh, tuple(idx_shape), idx_spec, indices_shape))
    offset, collapsed, start_map, o_batch, i_batch, sizes = [], [], [], [], [], []
    j = 0
    for i in range(len(shape)):
        if i == axis:
            sizes.append(1)
            start_map.append(i)
            collapsed.append(i)
            j += 1
        elif idx_shape[i] == 1:
            offset.append(i)
            sizes.append(shape[i])
        else:
            sizes.append(1)
            o_batch.append(i)
            i_batch.append(j)
            j += 1
    dims = GatherDims(tuple(offset), tuple(collapsed), tuple(start_map), tuple(o_batch), tuple(i_batch))
    return gather(shape, spec, tuple(indices_spec), dims, sizes)


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
    return _roll(c.mesh, shape, spec, _axis(axis, len(shape)), shift, c.rules.roll_keeps_a_sharded_dimension)


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
    return sort(spec, _axis(c.static["axis"], len(shape)), c.op, c.rules.sort_keeps_a_sharded_dimension)


def _contraction(c: Call) -> Spec:
    if c.op == "einsum":
        return _einsum(c.static["subscripts"], c.shapes, c.specs, c.rules.batch_specs_equal)
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
        else:
            if sa != sb and (batch_specs_equal or (sa is not None and sb is not None)):
                raise IllTyped(f"matmul: batch dimensions sharded differently: {sa!r} and {sb!r}")
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


def _einsum(subscripts: str, shapes, specs, batch_specs_equal: bool = True) -> Spec:
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

# Families with no rule here: a rejection there is accepted, and counted apart.
UNMODELLED_FAMILIES: Tuple[str, ...] = ()


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
    if rule is None or family in UNMODELLED_FAMILIES:
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
