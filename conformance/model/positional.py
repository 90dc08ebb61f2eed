"""Reference model of the tutorial's PositionalSharding: an array of device-id sets.

Pure Python and numpy (no JAX). ``PositionalSharding(devices)`` starts as one singleton set per
device, in the given array's shape. ``reshape`` rearranges the sets into any shape of the same
size; ``replicate(axis, keepdims=True)`` unions the sets along an axis (all axes when ``axis`` is
None), like a numpy reduction whose reduced axis is kept by default. An array of shape ``x`` may be
laid out by a positional sharding of shape ``s`` exactly when ``is_congruent(x, s)``: then the
array is cut into ``s`` equal tiles and every device in set ``i`` holds tile ``i``.

``translate`` gives a mesh and PartitionSpec that place every tile on the same devices, keeping the
positional device order when some mesh can (so JAX calls the two shardings equivalent).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import FrozenSet, Optional, Sequence, Tuple

import numpy as np

from .layout import Layout, MeshModel, Spec, is_congruent


@dataclass(frozen=True)
class PositionalModel:
    """``devices``: the construction order; ``shape``; ``cells``: device-id sets, row-major."""

    devices: Tuple[int, ...]
    shape: Tuple[int, ...]
    cells: Tuple[FrozenSet[int], ...]

    @classmethod
    def of(cls, device_ids) -> "PositionalModel":
        """``PositionalSharding(devices)`` for an n-d array (or nested list) of device ids."""
        ids = np.asarray(device_ids, dtype=int)
        flat = tuple(int(i) for i in ids.flat)
        if len(set(flat)) != len(flat):
            raise ValueError(f"duplicate devices in {flat}")
        return cls(flat, tuple(ids.shape), tuple(frozenset({i}) for i in flat))

    @property
    def grid(self) -> np.ndarray:
        """The sets as an object array of ``shape``."""
        grid = np.empty(len(self.cells), dtype=object)
        grid[:] = list(self.cells)
        return grid.reshape(self.shape)

    def reshape(self, *shape) -> "PositionalModel":
        """The same sets, row-major, in another shape of the same size (-1 infers one dimension)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        new_shape = np.empty(len(self.cells), dtype=np.int8).reshape(shape).shape  # numpy's rules
        return PositionalModel(self.devices, tuple(new_shape), self.cells)

    def replicate(self, axis: Optional[int] = None, keepdims: bool = True) -> "PositionalModel":
        """Union of the sets along ``axis`` (every axis when None); the axis stays with size 1
        unless ``keepdims`` is False."""
        axes = range(len(self.shape)) if axis is None else [axis % len(self.shape)]
        grid = self.grid
        for a in sorted(axes, reverse=True):
            merged = np.empty(grid.shape[:a] + grid.shape[a + 1:], dtype=object)
            for index in np.ndindex(merged.shape):
                merged[index] = frozenset().union(
                    *(grid[index[:a] + (k,) + index[a:]] for k in range(grid.shape[a])))
            grid = np.expand_dims(merged, a) if keepdims else merged
        return PositionalModel(self.devices, tuple(grid.shape), tuple(grid.flat))

    def is_congruent(self, x_shape: Sequence[int]) -> bool:
        """The tutorial's rule: same rank, and each sharding dimension divides the array's."""
        return is_congruent(tuple(x_shape), self.shape)

    @property
    def is_fully_replicated(self) -> bool:
        """One set (every dimension of size 1): each of its devices holds the whole array."""
        return all(s == 1 for s in self.shape)

    def accepts(self, x_shape: Sequence[int]) -> bool:
        """Whether an array of ``x_shape`` may be laid out: congruent shapes, and any shape (any
        rank, a scalar too) for a fully replicated sharding, as JAX 0.4.31 made it on purpose
        (jax-ml/jax#22073; the tutorial puts 1-d biases on a (1, 1) ``replicate()``)."""
        return self.is_fully_replicated or self.is_congruent(x_shape)

    def blocks(self, x_shape: Sequence[int]) -> dict:
        """``{device id: block}``: every device of set ``i`` holds tile ``i`` of ``x_shape`` (the
        whole array when the sharding is fully replicated)."""
        if self.is_fully_replicated:
            return {device: tuple((0, d) for d in x_shape) for cell in self.cells for device in cell}
        if not self.is_congruent(x_shape):
            raise ValueError(f"shape {tuple(x_shape)} is not congruent with {self.shape}")
        tile = tuple(d // s for d, s in zip(x_shape, self.shape))
        out = {}
        for flat, cell in enumerate(self.cells):
            index = np.unravel_index(flat, self.shape) if self.shape else ()
            block = tuple((int(i) * t, (int(i) + 1) * t) for i, t in zip(index, tile))
            for device in cell:
                out[device] = block
        return out


# An operation is ("reshape", shape) or ("replicate", axis[, keepdims]); axis None means all axes.
Operation = tuple


def apply_operations(sharding, operations: Sequence[Operation]):
    """Apply ``("reshape", shape)`` and ``("replicate", axis[, keepdims])`` operations, in order,
    to a PositionalModel or a JAX PositionalSharding alike."""
    for op in operations:
        if op[0] == "reshape":
            sharding = sharding.reshape(*op[1])
        else:
            axis, keepdims = op[1], (op[2] if len(op) > 2 else True)
            sharding = sharding.replicate(axis, keepdims=keepdims)
    return sharding


def describe_operations(operations: Sequence[Operation]) -> str:
    """The chain as Python: ``.reshape(4, 2).replicate(0, keepdims=True)``."""
    parts = []
    for op in operations:
        if op[0] == "reshape":
            parts.append(f".reshape{tuple(op[1])}")
        else:
            keepdims = op[2] if len(op) > 2 else True
            parts.append(f".replicate({op[1]}, keepdims={keepdims})")
    return "".join(parts)


@dataclass(frozen=True)
class PositionalChain:
    """How the tutorial builds a positional sharding:
    ``PositionalSharding(np.array(devices).reshape(initial_shape))`` followed by ``operations``."""

    devices: Tuple[int, ...]
    initial_shape: Tuple[int, ...]
    operations: Tuple[Operation, ...]

    @property
    def model(self) -> PositionalModel:
        start = PositionalModel.of([*self.devices]).reshape(*self.initial_shape)
        return apply_operations(start, self.operations)

    @property
    def code(self) -> str:
        """The chain as Python, over a ``devices`` dict of the backend's devices by id."""
        return (f"PositionalSharding(np.array([devices[i] for i in {list(self.devices)}])"
                f".reshape({self.initial_shape})){describe_operations(self.operations)}")


@dataclass(frozen=True)
class Translation:
    """A mesh and spec placing every tile as the positional sharding does; ``keeps_order`` tells
    whether the mesh lists devices in the positional sharding's construction order."""

    mesh: MeshModel
    spec: Spec
    keeps_order: bool

    def layout(self, x_shape: Sequence[int]) -> Layout:
        return Layout(self.mesh, self.spec, tuple(x_shape))


def ordered_factorizations(n: int) -> list:
    """Every ordered tuple of factors > 1 whose product is ``n``, fewest factors first
    (``[(1,)]`` for 1)."""
    if n == 1:
        return [(1,)]

    def expand(m):
        return [(d,) + rest for d in range(2, m + 1) if m % d == 0
                for rest in ([()] if d == m else expand(m // d))]
    return sorted(expand(n), key=len)


def _axis_names(k: int) -> Tuple[str, ...]:
    return tuple(f"p{i}" for i in range(k))


def translate(positional: PositionalModel) -> Translation:
    """A NamedSharding equivalent of ``positional``: first a mesh over the devices in their
    construction order (searching the factorizations of the device count for axes whose
    coordinates number each dimension's tiles), else a mesh listing each set's devices in turn with
    a trailing replica axis."""
    shape, n = positional.shape, len(positional.devices)
    position = {d: i for i, d in enumerate(positional.devices)}
    tile_of = np.zeros((n, len(shape)), dtype=int)  # tile index of each position, per dimension
    for flat, cell in enumerate(positional.cells):
        index = np.unravel_index(flat, shape) if shape else ()
        for device in cell:
            tile_of[position[device]] = index
    for mesh_shape in ordered_factorizations(n):
        spec = _spec_keeping_order(mesh_shape, tile_of, shape)
        if spec is not None:
            mesh = MeshModel(positional.devices, mesh_shape, _axis_names(len(mesh_shape)))
            return Translation(mesh, spec, True)
    replicas = n // max(1, len(positional.cells))
    order = tuple(d for cell in positional.cells for d in sorted(cell, key=position.get))
    names = _axis_names(len(shape)) + ("replica",)
    mesh = MeshModel(order, tuple(shape) + (replicas,), names)
    return Translation(mesh, names[:len(shape)], order == positional.devices)


def _spec_keeping_order(mesh_shape, tile_of, shape) -> Optional[Spec]:
    """The spec under which a mesh of ``mesh_shape`` over positions 0..n-1 (row-major) gives each
    position its tile, or None when no spec does."""
    coords = np.stack(np.unravel_index(np.arange(len(tile_of)), mesh_shape), axis=1)
    grid_shape = tuple(mesh_shape)
    spec, used = [], set()
    for dim in range(len(shape)):
        tiles = tile_of[:, dim].reshape(grid_shape)
        varying = [a for a in range(len(grid_shape)) if np.any(np.diff(tiles, axis=a))]
        if used & set(varying):
            return None
        for order in itertools.permutations(varying):
            number = np.zeros(len(tile_of), dtype=int)
            for a in order:
                number = number * grid_shape[a] + coords[:, a]
            if np.array_equal(number, tile_of[:, dim]) and \
                    math.prod(grid_shape[a] for a in order) == shape[dim]:
                break
        else:
            return None
        used |= set(varying)
        names = tuple(f"p{a}" for a in order)
        spec.append(None if not names else names[0] if len(names) == 1 else names)
    while spec and spec[-1] is None:
        spec.pop()
    return tuple(spec)
