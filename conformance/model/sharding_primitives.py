"""The sharding-rule model's first layer: the primitive rules (``sharding_rules`` states the
vocabulary). Each rule restates one lax primitive's sharding rule, named after the JAX function it
restates: operand types in, the result's canonical spec out, or ``IllTyped``. Here too are
canonical specs and tilings, which every layer compares.

A rule JAX changed in a release takes the change as a flag (``batch_specs_equal``,
``deals_axes``, ``keeps_a_sharded_dimension``); which release has which is the catalogue layer's
``ReleaseRules`` (``sharding_families``). This module imports no other layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from .layout import MeshModel, Spec, SpecEntry

Shape = Tuple[int, ...]


class IllTyped(Exception):
    """A primitive rule rejects its operand types (what JAX raises as ``ShardingTypeError``)."""



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


def show_spec(spec: Spec) -> str:
    return "P(" + ", ".join(repr(e) for e in spec) + ")"


def no_repeated_axis(spec: Spec, what: str) -> Spec:
    """``spec`` itself; IllTyped when it names a mesh axis on two dimensions (the doc's last step:
    "an array sharding that mentions a mesh axis more than once ... is illegal")."""
    seen: Dict[str, int] = {}
    for dim, entry in enumerate(spec):
        for name in entry_axes(entry):
            if name in seen:
                raise IllTyped(f"{what}: mesh axis {name!r} would shard dimensions {seen[name]} and {dim} "
                               f"of the result {show_spec(spec)}")
            seen[name] = dim
    return spec


def axis_argument(axis: int, rank: int) -> int:
    """An ``axis`` argument (an int, negative ones counting from the end) as a non-negative axis."""
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"axis {axis} out of range for rank {rank}")
    return axis % rank if rank else 0


def axes_argument(axis, rank: int) -> Tuple[int, ...]:
    """An ``axis`` argument (None, an int or a tuple: a reduction's, a flip's) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, int):
        return (axis_argument(axis, rank),)
    return tuple(sorted(axis_argument(a, rank) for a in axis))


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


def cumulative(spec: Spec, axis: int, what: str = "cumulative reduction",
               keeps_a_sharded_dimension: bool = False) -> Spec:
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
            raise IllTyped(f"{what}: operands are sharded differently: {show_spec(first)} and {show_spec(other)}")
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
        return [axis_argument(d, rank) for d in static["axes"]]
    perm = list(range(rank))
    a, b = axis_argument(static["a"], rank), axis_argument(static["b"], rank)
    perm[a], perm[b] = perm[b], perm[a]
    return perm


def squeeze(spec: Spec, dims: Sequence[int]) -> Spec:
    """A squeeze drops the squeezed dimensions' entries, as a reduction does (``reduce``)."""
    return reduce(spec, dims)


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
        raise IllTyped(f"select: the predicate is sharded {show_spec(which)}, the cases {show_spec(spec)}")
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
                    raise IllTyped(f"{what}: merges a group sharded past its first dimension "
                                   f"({show_spec(tuple(group))}; before JAX 0.10.0 lax merged only a group sharded "
                                   f"in its first dimension)")
                out.append(group[0])
                continue
            flat = [a for e in group for a in (entry_axes(e) or (None,))]
            while flat[-1] is None:
                flat.pop()
            if None in flat:
                raise IllTyped(f"{what}: merges a sharded dimension into a minor position ({show_spec(tuple(group))})")
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
        raise IllTyped(f"scatter: the indices are sharded ({show_spec(tuple(indices_spec))})")
    out = list(spec)
    for ud, od in zip(dims.offset_dims, window_operand):
        out[od] = out[od] if out[od] is not None else updates_spec[ud]
    return tuple(out)

