"""Turn model objects into JAX objects, and JAX answers into model terms.

This is plumbing, not rules: it builds a ``Mesh``/``NamedSharding`` from a ``MeshModel`` and a spec,
and reads back what JAX says (index maps, shards) as plain tuples the model can be compared with.
Meshes and shardings are cached so that equal draws reuse the same objects (and compiled code).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Dict, Tuple

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding

from . import compat
from .model import Block, Layout, MeshModel, normalize_index


@functools.lru_cache(maxsize=None)
def devices_by_id() -> Dict[int, "jax.Device"]:
    """Every device of the backend, by id (all processes)."""
    return {d.id: d for d in jax.devices()}


def live_device_ids() -> Tuple[int, ...]:
    """The ids of the devices this process can address, in ``jax.local_devices()`` order."""
    return tuple(d.id for d in jax.local_devices())


def line_mesh(axis: str = "a", *, reverse: bool = False) -> MeshModel:
    """Every local device on one mesh axis, in ``jax.local_devices()`` order or reversed."""
    ids = live_device_ids()
    return MeshModel(ids[::-1] if reverse else ids, (len(ids),), (axis,))


def needs_devices(n: int, why: str):
    """A mark that skips a test, saying why, when fewer than ``n`` local devices exist."""
    import pytest
    have = len(live_device_ids())
    return pytest.mark.skipif(have < n, reason=f"needs {n} devices {why}; this backend has {have}")


@functools.lru_cache(maxsize=None)
def jax_mesh(mesh: MeshModel, axis_type: str = "Auto") -> Mesh:
    """The ``jax.sharding.Mesh`` with the model's devices, shape and names; every axis of
    ``axis_type`` ("Auto", as ``Mesh(...)`` makes by default, or "Explicit")."""
    by_id = devices_by_id()
    devices = np.array([by_id[i] for i in mesh.device_ids], dtype=object).reshape(mesh.shape)
    if axis_type == "Auto":
        return Mesh(devices, mesh.axis_names)
    return compat.mesh_with_axis_types(devices, mesh.axis_names, axis_type)


@functools.lru_cache(maxsize=None)
def named_sharding(mesh: MeshModel, spec: tuple, axis_type: str = "Auto") -> NamedSharding:
    return NamedSharding(jax_mesh(mesh, axis_type), compat.partition_spec(spec))


def layout_of(sharding, shape) -> "Layout | None":
    """The model ``Layout`` a NamedSharding describes for ``shape``; None for other shardings."""
    if not isinstance(sharding, NamedSharding):
        return None
    mesh = sharding.mesh
    model = MeshModel(tuple(d.id for d in mesh.devices.flat), tuple(mesh.devices.shape),
                      tuple(mesh.axis_names))
    return Layout(model, compat.spec_entries(sharding.spec), tuple(shape))


def layout_sharding(layout: Layout) -> NamedSharding:
    return named_sharding(layout.mesh, layout.spec)


def index_map(sharding, shape) -> Dict[int, Block]:
    """``sharding.devices_indices_map(shape)`` as ``{device id: block}``."""
    return {d.id: normalize_index(index, shape)
            for d, index in sharding.devices_indices_map(tuple(shape)).items()}


@dataclass(frozen=True)
class ShardView:
    """One addressable shard as plain data."""

    device_id: int
    block: Block
    replica_id: int
    data: np.ndarray
    data_devices: frozenset


def shards(array) -> Tuple[ShardView, ...]:
    """Every addressable shard of ``array``: its device, block, replica id and host copy."""
    out = []
    for shard in array.addressable_shards:
        out.append(ShardView(
            device_id=shard.device.id,
            block=normalize_index(shard.index, array.shape),
            replica_id=shard.replica_id,
            data=np.asarray(shard.data),
            data_devices=frozenset(d.id for d in shard.data.devices()),
        ))
    return tuple(out)


def positional_sharding(case):
    """The JAX PositionalSharding of a PositionalCase: ``PositionalSharding`` of its devices in its
    initial shape, then its operations (skips, naming the version, where PositionalSharding is
    gone)."""
    from .positional import apply_operations
    by_id = devices_by_id()
    devices = np.array([by_id[i] for i in case.devices], dtype=object).reshape(case.initial_shape)
    return apply_operations(compat.feature("PositionalSharding")(devices), case.operations)


@functools.lru_cache(maxsize=None)
def tutorial_mesh_ids(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """Device ids in the order ``mesh_utils.create_device_mesh(shape)`` gives on this backend, over
    its first ``prod(shape)`` devices."""
    from jax.experimental import mesh_utils
    devices = jax.local_devices()[:math.prod(shape)]
    return tuple(d.id for d in mesh_utils.create_device_mesh(shape, devices=devices).flat)


def picture_options(layout: Layout, platform: str) -> dict:
    """visualize_array_sharding arguments under which every label of the layout's picture shows
    whole: a small scale (cells no wider than their labels need), cells at least as wide as the
    longest label, and a console wide enough for all the columns. At the default max_width=80, a
    wide array's cells are padded past the console and lose their labels."""
    from .model import block_grid
    grid = block_grid(layout)
    longest = max(len(platform) + 1 + len(",".join(map(str, sorted(cell)))) for row in grid
                  for cell in row)
    return {"scale": 0.1, "min_width": longest + 2,
            "max_width": max(100, len(grid[0]) * (longest + 3) + 2)}


def render_picture(array, **kwargs) -> str:
    """What ``jax.debug.visualize_array_sharding(array, use_color=False, **kwargs)`` prints."""
    import contextlib
    import io
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        jax.debug.visualize_array_sharding(array, use_color=False, **kwargs)
    return buffer.getvalue()
