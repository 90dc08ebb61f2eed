"""Reference model of pmap and the collectives, in numpy (no JAX).

pmap: ``in_axes`` (an int, None, or a container prefix of the arguments: dicts, lists, tuples)
says which axis of each argument leaf is split over the devices; None sends the whole leaf to every
device. Device ``i`` receives ``take(leaf, i, axis)`` of each mapped leaf. The per-device results
are stacked along ``out_axes`` (None: the result must be the same on every device, and is returned
once).

Collectives act on the list of per-device values along one named axis (``values[i]`` is device
``i``'s value). ``axis_index_groups`` splits the devices into equal groups that act independently;
positions inside a group follow the group's order.

shard_map: each device's body sees its block of every input (the layout model's blocks for the
input's spec), and the per-device results are assembled by ``out_specs`` the same way; collectives
inside a body act over groups of devices that share every coordinate but those of the named axes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from .layout import Layout, block_slices, spec_tiling

# --- pytrees: dicts, lists and tuples are containers; anything else is a leaf ------------------


def is_container(x) -> bool:
    return isinstance(x, (dict, list, tuple))


def tree_leaves(tree) -> list:
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in tree_leaves(tree[key])]
    if isinstance(tree, (list, tuple)):
        return [leaf for child in tree for leaf in tree_leaves(child)]
    return [tree]


def tree_map(fn: Callable, tree, *rest):
    """``fn`` applied leaf by leaf to trees of the same structure."""
    if isinstance(tree, dict):
        return {key: tree_map(fn, tree[key], *(r[key] for r in rest)) for key in tree}
    if isinstance(tree, (list, tuple)):
        return type(tree)(tree_map(fn, *children) for children in zip(tree, *rest))
    return fn(tree, *rest)


def broadcast_prefix(prefix, tree):
    """``prefix`` expanded to ``tree``'s structure: an int or None covers a whole subtree; a
    container must match the tree's container (same type, length or keys). Raises ValueError."""
    if not is_container(prefix):
        return tree_map(lambda _: prefix, tree)
    if type(prefix) is not type(tree):
        raise ValueError(f"in/out axes {prefix!r} do not match the structure of {type(tree).__name__}")
    if isinstance(prefix, dict):
        if set(prefix) != set(tree):
            raise ValueError(f"axes keys {sorted(prefix)} differ from argument keys {sorted(tree)}")
        return {key: broadcast_prefix(prefix[key], tree[key]) for key in tree}
    if len(prefix) != len(tree):
        raise ValueError(f"axes {prefix!r} have {len(prefix)} entries for {len(tree)} children")
    return type(tree)(broadcast_prefix(p, t) for p, t in zip(prefix, tree))


def normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for rank {ndim}")
    return axis % ndim


# --- pmap ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceSelection:
    """The devices a pmap runs on: ``explicit`` ones are passed as ``devices=``, otherwise pmap
    picks the first ``len(ids)`` local devices itself."""

    ids: Tuple[int, ...]
    explicit: bool

    @property
    def size(self) -> int:
        return len(self.ids)

    @property
    def code(self) -> str:
        """The ``devices=`` argument as a reproduction script writes it ('' when implicit)."""
        return f", devices=[devices[i] for i in {list(self.ids)}]" if self.explicit else ""



def arg_axes(args: tuple, in_axes):
    """Per-argument, per-leaf axes for the positional arguments ``args``: an int or None applies to
    all of them; otherwise a tuple with one prefix per argument."""
    if is_container(in_axes) and not isinstance(in_axes, tuple):
        raise ValueError(f"in_axes must be an int, None or a tuple, got {type(in_axes).__name__}")
    return broadcast_prefix(in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args),
                            tuple(args))


def mapped_size(args: tuple, in_axes) -> int:
    """The size of the mapped axis, the same for every mapped leaf (ValueError otherwise)."""
    axes = arg_axes(args, in_axes)
    sizes = {np.shape(leaf)[normalize_axis(axis, np.ndim(leaf))]
             for leaf, axis in zip(tree_leaves(tuple(args)), tree_leaves(axes)) if axis is not None}
    if not sizes:
        raise ValueError("pmap needs at least one mapped argument")
    if len(sizes) > 1:
        raise ValueError(f"inconsistent sizes for the mapped axes: {sorted(sizes)}")
    return sizes.pop()


def device_args(args: tuple, in_axes, device: int) -> tuple:
    """What device ``device`` receives: each mapped leaf's slice ``device`` along its axis, each
    unmapped leaf whole."""
    def take(leaf, axis):
        if axis is None:
            return leaf
        return np.take(np.asarray(leaf), device, axis=normalize_axis(axis, np.ndim(leaf)))
    return tree_map(take, tuple(args), arg_axes(args, in_axes))


def stack_outputs(outputs: Sequence[Any], out_axes):
    """Per-device outputs stacked along ``out_axes`` (a new axis at that position); with None,
    the one value every device returned (ValueError if they differ)."""
    if out_axes is None:
        first = outputs[0]
        for other in outputs[1:]:
            for a, b in zip(tree_leaves(first), tree_leaves(other)):
                if not np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True):
                    raise ValueError("out_axes=None needs the same output on every device")
        return first
    return tree_map(lambda *leaves: np.stack(
        leaves, axis=normalize_axis(out_axes, np.ndim(leaves[0]) + 1)), *outputs)


def pmap_reference(body: Callable, args: tuple, in_axes=0, out_axes=0):
    """What ``pmap(body, in_axes, out_axes)(*args)`` returns, for a body without collectives."""
    n = mapped_size(args, in_axes)
    return stack_outputs([body(*device_args(args, in_axes, i)) for i in range(n)], out_axes)


# --- collectives over one named axis ------------------------------------------------------------


def groups_of(n: int, axis_index_groups: Optional[Sequence[Sequence[int]]]) -> List[List[int]]:
    """The device groups: all devices in order, or the given groups (equal sizes, a partition)."""
    if axis_index_groups is None:
        return [list(range(n))]
    groups = [list(g) for g in axis_index_groups]
    if sorted(i for g in groups for i in g) != list(range(n)) or len({len(g) for g in groups}) != 1:
        raise ValueError(f"axis_index_groups {groups} is not a partition of {n} devices into equal groups")
    return groups


def _per_group(values, groups, combine: Callable[[list, int], Any]) -> list:
    """``combine(group values, position)`` for each device, by its group and position in it."""
    out = [None] * len(values)
    for group in groups:
        members = [np.asarray(values[i]) for i in group]
        for position, device in enumerate(group):
            out[device] = combine(members, position)
    return out


def psum(values, axis_index_groups=None) -> list:
    """Every device gets the sum over its group (bool counts as int32, as JAX sums booleans)."""
    def total(members, _):
        stacked = np.stack(members)
        if stacked.dtype == np.bool_:
            stacked = stacked.astype(np.int32)
        return stacked.sum(axis=0, dtype=stacked.dtype)
    return _per_group(values, groups_of(len(values), axis_index_groups), total)


def pmean(values, axis_index_groups=None) -> list:
    """The group's sum divided by the group size; integer inputs give float32."""
    groups = groups_of(len(values), axis_index_groups)
    sums = psum(values, axis_index_groups)
    size = len(groups[0])
    out = []
    for s in sums:
        if s.dtype.kind in "iub":
            out.append((s.astype(np.float32) / np.float32(size)).astype(np.float32))
        else:
            out.append((s / s.dtype.type(size)).astype(s.dtype))
    return out


def pmax(values, axis_index_groups=None) -> list:
    return _per_group(values, groups_of(len(values), axis_index_groups),
                      lambda members, _: np.max(np.stack(members), axis=0))


def pmin(values, axis_index_groups=None) -> list:
    return _per_group(values, groups_of(len(values), axis_index_groups),
                      lambda members, _: np.min(np.stack(members), axis=0))


def all_gather(values, axis: int = 0, tiled: bool = False, axis_index_groups=None) -> list:
    """Every device gets its group's values stacked along a new ``axis`` (or, ``tiled``,
    concatenated along the existing ``axis``)."""
    join = np.concatenate if tiled else np.stack
    return _per_group(values, groups_of(len(values), axis_index_groups),
                      lambda members, _: join(members, axis=axis))


def psum_scatter(values, scatter_dimension: int = 0, tiled: bool = False,
                 axis_index_groups=None) -> list:
    """The group's sum, cut along ``scatter_dimension`` into one chunk per group member; member p
    gets chunk p (without that dimension unless ``tiled``)."""
    groups = groups_of(len(values), axis_index_groups)
    sums = psum(values, axis_index_groups)
    size = len(groups[0])

    def chunk(members, position):
        total = members[0]  # the group sum (identical for all members)
        if tiled:
            return np.split(total, size, axis=scatter_dimension)[position]
        return np.take(total, position, axis=scatter_dimension)
    return _per_group(sums, groups, chunk)


def ppermute(values, perm: Sequence[Sequence[int]]) -> list:
    """Device ``dst`` gets the value of ``src`` for each (src, dst) pair; the others get zeros."""
    out = [np.zeros_like(np.asarray(v)) for v in values]
    sources = [s for s, _ in perm]
    targets = [d for _, d in perm]
    if len(set(sources)) != len(sources) or len(set(targets)) != len(targets):
        raise ValueError(f"perm {perm} sends from or to a device twice")
    for src, dst in perm:
        out[dst] = np.asarray(values[src]).copy()
    return out


def all_to_all(values, split_axis: int, concat_axis: int, tiled: bool = False,
               axis_index_groups=None) -> list:
    """Member p of each group gets chunk p of every member's value (cut along ``split_axis``),
    joined in member order along ``concat_axis``: concatenated when ``tiled``, else stacked as a
    new axis there, the split axis being consumed."""
    groups = groups_of(len(values), axis_index_groups)
    size = len(groups[0])

    def receive(members, position):
        if tiled:
            return np.concatenate([np.split(m, size, axis=split_axis)[position] for m in members],
                                  axis=concat_axis)
        return np.stack([np.take(m, position, axis=split_axis) for m in members], axis=concat_axis)
    return _per_group(values, groups, receive)


def axis_index(n: int) -> list:
    return [np.int32(i) for i in range(n)]


# --- collectives over named axes of a mesh ------------------------------------------------------


def mesh_groups(mesh_shape: Sequence[int], axis_names: Sequence[str], over: Sequence[str]):
    """Devices of a mesh (by flat row-major position) grouped for a collective over the axes
    ``over``: a group shares the coordinates of every other axis, and its members are ordered by
    the mixed-radix index of their coordinates on ``over`` (the first named axis major)."""
    coords = list(np.ndindex(*mesh_shape))
    others = [a for a in range(len(axis_names)) if axis_names[a] not in over]
    positions = [list(axis_names).index(name) for name in over]
    groups: dict = {}
    for flat, c in enumerate(coords):
        key = tuple(c[a] for a in others)
        rank = 0
        for a in positions:
            rank = rank * mesh_shape[a] + c[a]
        groups.setdefault(key, {})[rank] = flat
    return [[members[r] for r in sorted(members)] for members in groups.values()]


# --- shard_map: blocks in, blocks out -----------------------------------------------------------


def shard_map_blocks(mesh, spec, x: np.ndarray) -> dict:
    """What the body of a ``shard_map`` sees on each device: ``{device id: x[its block]}``, the
    blocks of ``x`` laid out by ``spec`` over ``mesh`` (mesh axes ``spec`` does not name give every
    device along them the same block)."""
    layout = Layout(mesh, spec, np.shape(x))
    return {device: x[block_slices(layout.block(device))] for device in mesh.device_ids}


class ReplicaMismatch(ValueError):
    """Devices that ``out_specs`` declares replicas of one block returned different values."""


def shard_map_assemble(mesh, spec, per_device: dict) -> np.ndarray:
    """The global result of a ``shard_map`` whose body returned ``per_device`` ({device id: value},
    every value of one shape and dtype) under ``out_specs=spec``: dimension ``i`` of the result holds
    ``tiling[i]`` blocks, and each device's value is the block at its coordinates over the axes
    ``spec`` names there (the layout model's blocks). Devices that differ only along axes ``spec``
    does not name must agree (``ReplicaMismatch`` otherwise): that is what declaring an output
    replicated over an axis means."""
    first = np.asarray(next(iter(per_device.values())))
    shape = tuple(b * t for b, t in zip(first.shape, spec_tiling(mesh, spec, first.ndim)))
    layout = Layout(mesh, spec, shape)
    out = np.zeros(shape, first.dtype)
    written: dict = {}
    for device in mesh.device_ids:
        block = layout.block(device)
        value = np.asarray(per_device[device])
        if block in written:
            if not np.array_equal(written[block], value, equal_nan=value.dtype.kind in "fc"):
                raise ReplicaMismatch(f"device {device} and a replica holding block {block} returned "
                                      f"different values")
            continue
        written[block] = value
        out[block_slices(block)] = value
    return out


def body_gradient(collective: Callable[[list], list], values, invariant: bool) -> list:
    """Per device, the gradient ``jax.grad`` gives inside a shard_map body (replication check on) of
    the loss ``sum(r ** 2 * w)`` of ``r = collective(y)``, ``w`` the weights 1, 2, ..., r.size in
    r's shape (so that where a value lands matters), times d + 1 on device d where the result varies
    (so that which device holds it matters), ``collective`` a linear collective's model (a
    list of per-device values to a list of per-device results): the derivative with respect to each
    device's value of the loss summed over the devices where the collective's result varies, taken
    once where it is invariant (the same value on every device: psum, pmean). That is JAX's rule
    that cotangent types follow primal types ("Autodiff and sharding": an invariant value's
    cotangent is invariant, its copies not summed; the shard_map transposition JEP 17111 leaves the
    numbers as they were). By central differences of step 1 in float64, exact here: the loss is
    quadratic in the values."""
    vals = [np.asarray(v, np.float64) for v in values]

    def total(vs) -> float:
        losses = [float(np.sum(np.square(o) * np.arange(1, o.size + 1).reshape(o.shape)))
                  for o in (np.asarray(r, np.float64) for r in collective(vs))]
        return losses[0] if invariant else sum((d + 1) * loss for d, loss in enumerate(losses))

    gradients = []
    for d, v in enumerate(vals):
        g = np.zeros_like(v)
        for i in np.ndindex(v.shape):
            up, down = [x.copy() for x in vals], [x.copy() for x in vals]
            up[d][i] += 1
            down[d][i] -= 1
            g[i] = (total(up) - total(down)) / 2
        gradients.append(g)
    return gradients
