"""Reference model of how a sharded array is laid out across devices.

Pure Python and numpy: this module never imports JAX, so what it says is independent of the
library under test. The suites ask it what JAX should do and compare.

Vocabulary:

* A **mesh** is an n-dimensional array of device ids with one name per axis.
* A **spec** (the model of a ``PartitionSpec``) has one entry per leading array dimension; an entry
  is ``None`` (not sharded), one axis name, or a tuple of axis names (major axis first). Missing
  trailing entries mean ``None``.
* A **layout** is a mesh, a spec and a global shape. Dimension ``i`` is cut into
  ``tiling[i] = product of the sizes of the axes named by entry i`` equal blocks. A device's block
  along that dimension is its mixed-radix coordinate over those axes. Devices whose coordinates
  differ only along axes the spec does not name hold the same block: they are replicas.

Blocks are tuples of ``(start, stop)`` pairs, one per dimension.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import FrozenSet, Iterator, Optional, Sequence, Tuple, Union

import numpy as np

SpecEntry = Union[None, str, Tuple[str, ...]]
Spec = Tuple[SpecEntry, ...]
Block = Tuple[Tuple[int, int], ...]


class MeshError(ValueError):
    """A mesh that no library should accept: duplicate devices or axis names, wrong sizes."""


class SpecError(ValueError):
    """A spec that is invalid for its mesh or rank.

    ``kind`` is one of ``"unknown-axis"``, ``"repeated-axis"`` or ``"too-long"``.
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class IndivisibleError(ValueError):
    """The layout's shape is not congruent with its spec: some tiled dimension does not divide."""

    def __init__(self, dims: Sequence[int], message: str):
        super().__init__(message)
        self.dims = tuple(dims)


class DeviceIds(tuple):
    """Device ids to draw meshes over, with the groups a mesh must reach (in a multi-controller run,
    each process's devices: a mesh holding a device of every process, as JAX's multi-controller
    device_put and jit assume of a global array's devices)."""

    groups: Tuple[FrozenSet[int], ...] = ()

    def __new__(cls, ids, groups=()):
        made = super().__new__(cls, ids)
        made.groups = tuple(frozenset(g) for g in groups)
        return made

    def reaches_every_group(self, ids) -> bool:
        chosen = set(ids)
        return all(chosen & g for g in self.groups)


def leading(device_ids: Sequence[int], k: int) -> list:
    """The first ``k`` of ``device_ids``; where they are ``DeviceIds`` whose groups those miss (a
    multi-controller run: a process), the first ``k`` taking each group's devices in turn, or all
    of them where ``k`` is fewer than the groups (``in_turn`` takes fewer: a fixed mesh's)."""
    groups = getattr(device_ids, "groups", ())
    first = list(device_ids)[:k]
    if all(set(first) & g for g in groups):
        return first
    return in_turn(device_ids, k) if k >= len(groups) else list(device_ids)


def in_turn(device_ids: Sequence[int], k: int) -> list:
    """The first ``k`` of ``device_ids`` taking each of their groups' devices in turn (with fewer
    than the groups, the first device of ``k`` of them)."""
    groups = getattr(device_ids, "groups", ())
    return [i for column in zip(*[[i for i in device_ids if i in g] for g in groups]) for i in column][:k]


@dataclass(frozen=True)
class MeshModel:
    """Device ids in row-major order, the mesh shape, and one distinct name per axis."""

    device_ids: Tuple[int, ...]
    shape: Tuple[int, ...]
    axis_names: Tuple[str, ...]

    def __post_init__(self):
        object.__setattr__(self, "device_ids", tuple(int(i) for i in self.device_ids))
        object.__setattr__(self, "shape", tuple(int(n) for n in self.shape))
        object.__setattr__(self, "axis_names", tuple(self.axis_names))
        if len(self.shape) != len(self.axis_names):
            raise MeshError(f"mesh shape {self.shape} has {len(self.shape)} axes but "
                            f"{len(self.axis_names)} names {self.axis_names}")
        if len(set(self.axis_names)) != len(self.axis_names):
            raise MeshError(f"duplicate axis names in {self.axis_names}")
        if math.prod(self.shape) != len(self.device_ids):
            raise MeshError(f"mesh shape {self.shape} needs {math.prod(self.shape)} devices, "
                            f"got {len(self.device_ids)}")
        if len(set(self.device_ids)) != len(self.device_ids):
            raise MeshError(f"duplicate devices in {self.device_ids}")

    @classmethod
    def from_array(cls, device_ids, axis_names: Sequence[str]) -> "MeshModel":
        """Build a mesh from an n-d array (or nested list) of device ids."""
        ids = np.asarray(device_ids, dtype=int)
        return cls(tuple(int(i) for i in ids.flat), tuple(ids.shape), tuple(axis_names))

    @property
    def ids_array(self) -> np.ndarray:
        return np.array(self.device_ids, dtype=int).reshape(self.shape)

    @property
    def axis_sizes(self) -> dict:
        return dict(zip(self.axis_names, self.shape))

    @property
    def size(self) -> int:
        return len(self.device_ids)

    def coordinates(self) -> Iterator[Tuple[int, dict]]:
        """Yield ``(device_id, {axis name: index})`` in row-major mesh order."""
        for flat, index in enumerate(itertools.product(*(range(n) for n in self.shape))):
            yield self.device_ids[flat], dict(zip(self.axis_names, index))


def spec_axes(spec: Spec) -> Tuple[Tuple[str, ...], ...]:
    """Each spec entry as a tuple of axis names: ``None`` -> ``()``, ``'a'`` -> ``('a',)``."""
    out = []
    for entry in spec:
        if entry is None:
            out.append(())
        elif isinstance(entry, str):
            out.append((entry,))
        else:
            out.append(tuple(entry))
    return tuple(out)


def check_spec(mesh: MeshModel, spec: Spec, rank: Optional[int] = None) -> None:
    """Raise SpecError when ``spec`` names an unknown axis, repeats an axis, or exceeds ``rank``."""
    used = [name for axes in spec_axes(spec) for name in axes]
    unknown = [name for name in used if name not in mesh.axis_names]
    if unknown:
        raise SpecError("unknown-axis", f"spec {spec} names {unknown[0]!r}, which is not an axis "
                                        f"of the mesh {mesh.axis_names}")
    repeated = sorted({name for name in used if used.count(name) > 1})
    if repeated:
        raise SpecError("repeated-axis", f"spec {spec} uses mesh axis {repeated[0]!r} more than once")
    if rank is not None and len(spec) > rank:
        raise SpecError("too-long", f"spec {spec} has {len(spec)} entries, more than the rank {rank}")


def spec_tiling(mesh: MeshModel, spec: Spec, rank: int) -> Tuple[int, ...]:
    """How many blocks each of ``rank`` dimensions is cut into: the product of its axes' sizes."""
    axes = spec_axes(spec)
    axes = axes + ((),) * (rank - len(axes))
    sizes = mesh.axis_sizes
    return tuple(math.prod(sizes[a] for a in entry) for entry in axes)


def is_congruent(x_shape: Sequence[int], sharding_shape: Sequence[int]) -> bool:
    """The tutorial's rule: same rank, and every sharding dimension divides the array dimension."""
    return len(x_shape) == len(sharding_shape) and all(
        d1 % d2 == 0 for d1, d2 in zip(x_shape, sharding_shape))


@dataclass(frozen=True)
class Layout:
    """Where each block of an array of ``shape`` lives when laid out by ``spec`` over ``mesh``."""

    mesh: MeshModel
    spec: Spec
    shape: Tuple[int, ...]
    _blocks: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "spec", tuple(self.spec))
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        check_spec(self.mesh, self.spec, len(self.shape))
        object.__setattr__(self, "_blocks", None)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def dim_axes(self) -> Tuple[Tuple[str, ...], ...]:
        """Axis names per array dimension, the spec padded with ``()`` to the rank."""
        axes = spec_axes(self.spec)
        return axes + ((),) * (self.rank - len(axes))

    @property
    def tiling(self) -> Tuple[int, ...]:
        """How many blocks each dimension is cut into."""
        return spec_tiling(self.mesh, self.spec, self.rank)

    @property
    def indivisible_dims(self) -> Tuple[int, ...]:
        """The dimensions whose size the tiling does not divide (empty when congruent)."""
        return tuple(i for i, (d, t) in enumerate(zip(self.shape, self.tiling)) if d % t)

    @property
    def is_congruent(self) -> bool:
        return not self.indivisible_dims

    def require_congruent(self) -> None:
        if self.indivisible_dims:
            d = self.indivisible_dims[0]
            raise IndivisibleError(self.indivisible_dims,
                                   f"dimension {d} of size {self.shape[d]} is not divisible by its "
                                   f"tiling {self.tiling[d]} (shape {self.shape}, tiling {self.tiling})")

    @property
    def shard_shape(self) -> Tuple[int, ...]:
        """The shape of every device's block."""
        self.require_congruent()
        return tuple(d // t for d, t in zip(self.shape, self.tiling))

    @property
    def blocks(self) -> dict:
        """``{device_id: block}`` for every device of the mesh, in row-major mesh order."""
        if self._blocks is None:
            shard = self.shard_shape
            sizes = self.mesh.axis_sizes
            blocks = {}
            for device, coords in self.mesh.coordinates():
                block = []
                for axes, size in zip(self.dim_axes, shard):
                    index = 0
                    for name in axes:  # mixed radix, the first axis of the entry is the major one
                        index = index * sizes[name] + coords[name]
                    block.append((index * size, (index + 1) * size))
                blocks[device] = tuple(block)
            object.__setattr__(self, "_blocks", blocks)
        return self._blocks

    def block(self, device_id: int) -> Block:
        return self.blocks[device_id]

    @property
    def device_ids(self) -> frozenset:
        return frozenset(self.mesh.device_ids)

    @property
    def replica_groups(self) -> Tuple[Tuple[int, ...], ...]:
        """Devices holding the same block, grouped; groups and members in row-major mesh order."""
        groups: dict = {}
        for device, block in self.blocks.items():
            groups.setdefault(block, []).append(device)
        return tuple(tuple(g) for g in groups.values())

    def replica_id(self, device_id: int) -> int:
        """The device's position among the devices holding the same block, in mesh order."""
        for group in self.replica_groups:
            if device_id in group:
                return group.index(device_id)
        raise KeyError(device_id)

    @property
    def is_fully_replicated(self) -> bool:
        """True when no dimension is cut into more than one block (size-1 axes do not cut)."""
        return all(t == 1 for t in self.tiling)

    def same_placement(self, other: "Layout") -> bool:
        """True when both layouts put the same block of this shape on the same devices."""
        return self.shape == other.shape and self.blocks == other.blocks

    def equivalent(self, other: "Layout") -> bool:
        """True when the two shardings list the same devices in the same order and place every
        array of this rank identically.

        A sharding is equivalent to another *for a rank* (JAX's ``is_equivalent_to(other, ndim)``),
        whatever the shape. The ordered device list counts: JAX compares the device assignment on
        purpose (jit refuses arguments whose shardings list their devices in different orders),
        so two meshes of one set of devices in different orders are never equivalent, even where
        every block lands on the same device. Comparing placements on the smallest non-empty
        shape both divide (the per-dimension lcm of the tilings) decides the rest: any shape both
        divide is a multiple of it and is cut the same way, and a zero-size shape, where every
        block is empty, cannot tell shardings apart.
        """
        if self.rank != other.rank or tuple(self.mesh.device_ids) != tuple(other.mesh.device_ids):
            return False
        base = tuple(math.lcm(a, b) for a, b in zip(self.tiling, other.tiling))
        return Layout(self.mesh, self.spec, base).blocks == Layout(other.mesh, other.spec, base).blocks


def block_slices(block: Block) -> Tuple[slice, ...]:
    """A block as a tuple of slices, for indexing a numpy array."""
    return tuple(slice(start, stop) for start, stop in block)


def normalize_index(index: Sequence[slice], shape: Sequence[int]) -> Block:
    """A tuple of step-1 slices (as JAX reports a shard's index) as a block of (start, stop) pairs."""
    out = []
    for s, dim in zip(index, shape):
        start, stop, step = s.indices(dim)
        if step != 1:
            raise ValueError(f"index {index} has a step other than 1")
        out.append((start, max(start, stop)))
    return tuple(out)


def block_grid(layout: Layout) -> Tuple[Tuple[frozenset, ...], ...]:
    """The distinct blocks of a 1-d or 2-d layout as rows of device-id sets, in array order.

    This is the picture ``visualize_array_sharding`` draws: one cell per distinct block, labelled
    with every device that holds it. A 1-d array is drawn as a single row.
    """
    if layout.rank not in (1, 2):
        raise ValueError(f"only 1-d and 2-d layouts have a picture, got rank {layout.rank}")
    holders: dict = {}
    for device, block in layout.blocks.items():
        holders.setdefault(block, set()).add(device)
    rows = sorted({block[0] for block in holders}) if layout.rank == 2 else [None]
    cols = sorted({block[-1] for block in holders})
    grid = []
    for row in rows:
        cells = []
        for col in cols:
            key = (row, col) if layout.rank == 2 else (col,)
            cells.append(frozenset(holders[key]))
        grid.append(tuple(cells))
    return tuple(grid)
