"""Turn model objects into JAX objects, and JAX answers into model terms.

This is plumbing, not rules: it builds a ``Mesh``/``NamedSharding`` from a ``MeshModel`` and a spec,
a pmap over a ``DeviceSelection``, a PositionalSharding from a ``PositionalChain``, draws pictures,
and reads back what JAX says (index maps, shards) as plain tuples the model can be compared with.
Meshes and shardings are cached so that equal draws reuse the same objects (and compiled code).
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
from dataclasses import dataclass
from typing import Callable, Dict, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.experimental import mesh_utils
from jax.sharding import Mesh, NamedSharding

from conformance.model import multihost
from conformance.model.layout import Block, Layout, MeshModel, block_grid, in_turn, leading, normalize_index
from conformance.model.positional import PositionalChain, apply_operations
from conformance.model.spmd import DeviceSelection

from . import compat, multicontroller


# --- devices ------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def devices_by_id() -> Dict[int, "jax.Device"]:
    """Every device of the backend, by id (all processes)."""
    return {d.id: d for d in jax.devices()}


def live_device_ids() -> Tuple[int, ...]:
    """The ids of the devices the run's meshes draw from: those this process can address, in
    ``jax.local_devices()`` order; in a multi-controller run every process's, in the run's device
    order (``multicontroller.device_ids``)."""
    if multicontroller.ACTIVE is not None:
        return multicontroller.device_ids()
    return tuple(d.id for d in jax.local_devices())


def run_devices() -> list:
    """The devices of ``live_device_ids``, in that order."""
    return [devices_by_id()[i] for i in live_device_ids()]


def owners() -> Dict[int, int]:
    """Every device's process index, by device id."""
    return {d.id: d.process_index for d in jax.devices()}


def addressable_of(device_ids) -> frozenset:
    """The model's devices this process addresses among ``device_ids`` (every one, in one process)."""
    return multihost.addressable(device_ids, owners(), jax.process_index())


def addressable_ids(device_ids) -> Tuple[int, ...]:
    """``device_ids``, in their order, less those of other processes: what a process passes where
    JAX takes one piece per addressable device (make_array_from_single_device_arrays)."""
    mine = addressable_of(device_ids)
    return tuple(d for d in device_ids if d in mine)


def platform() -> str:
    """The platform the devices run on ("cpu", "gpu", "tpu")."""
    return jax.local_devices()[0].platform


def default_dot_operand_dtype() -> Optional[str]:
    """The dtype a float32 contraction at JAX's DEFAULT precision rounds its operands to on the
    devices present (``dot_operand_dtype_for`` the first device and the configured default)."""
    device = jax.devices()[0]
    return dot_operand_dtype_for(device.platform, getattr(device, "compute_capability", None),
                                 getattr(jax.config, "jax_default_matmul_precision", None))


def dot_operand_dtype_for(platform_name: str, compute_capability, asked) -> Optional[str]:
    """What JAX states of DEFAULT precision ("By default, JAX leans toward speed: float32 dot
    products may be computed with reduced-precision arithmetic internally (bfloat16 on TPU, TF32 on
    recent GPUs)", docs.jax.dev's "Matmul precision"): "tfloat32" on GPUs of compute capability 8.0
    (NVIDIA Ampere) or later, "bfloat16" on TPU, None (float32 products) elsewhere and wherever
    ``jax_default_matmul_precision`` (``asked``) asks for float32 ("highest", "float32",
    "F32_F32_F32")."""
    if str(asked or "").lower() in ("highest", "float32", "f32_f32_f32"):
        return None
    if platform_name == "tpu":
        return "bfloat16"
    if platform_name == "gpu" and compute_capability and float(compute_capability) >= 8.0:
        return "tfloat32"
    return None


def line_mesh(axis: str = "a", *, reverse: bool = False) -> MeshModel:
    """Every local device on one mesh axis, in ``jax.local_devices()`` order or reversed."""
    ids = live_device_ids()
    return MeshModel(ids[::-1] if reverse else ids, (len(ids),), (axis,))


def first_devices_mesh(*names_and_sizes) -> MeshModel:
    """The first devices on axes named and sized as given (e.g. ("a", 2), ("y", 1)); in a
    multi-controller run, the first that reach every process (``model.layout.leading``)."""
    names = tuple(n for n, _ in names_and_sizes)
    shape = tuple(s for _, s in names_and_sizes)
    return MeshModel(first_ids(live_device_ids(), math.prod(shape)), shape, names)


def first_ids(device_ids, k: int) -> Tuple[int, ...]:
    """The first ``k`` of ``device_ids`` (a fixed mesh's devices); in a multi-controller run, the
    first that reach every process (``model.layout.leading``), or with fewer devices than processes
    the first device of ``k`` processes (the others hold none of its arrays, and read them from
    those that do), and a skip (saying why) for one device, whose arrays no other process can read."""
    groups = getattr(device_ids, "groups", ())
    if k < 2 <= len(groups):
        pytest.skip(f"a mesh of {k} device lies on one process of this run's {len(groups)}: the others cannot "
                    f"read its arrays")
    return tuple(leading(device_ids, k) if k >= len(groups) else in_turn(device_ids, k))


def needs_devices(n: int, why: str):
    """A mark that skips a test, saying why, when fewer than ``n`` local devices exist."""
    have = len(live_device_ids())
    return pytest.mark.skipif(have < n, reason=f"needs {n} devices {why}; this backend has {have}")


@functools.lru_cache(maxsize=None)
def tutorial_mesh_ids(shape: Tuple[int, ...]) -> Optional[Tuple[int, ...]]:
    """Device ids in the order ``mesh_utils.create_device_mesh(shape)`` gives on this backend, over
    its first ``prod(shape)`` devices; None when there are fewer devices than that."""
    devices = run_devices()[:math.prod(shape)]
    if len(devices) < math.prod(shape):
        return None
    return tuple(d.id for d in mesh_utils.create_device_mesh(shape, devices=devices).flat)


# --- meshes and shardings ----------------------------------------------------------------------
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


def layout_sharding(layout: Layout) -> NamedSharding:
    return named_sharding(layout.mesh, layout.spec)


def layout_of(sharding, shape) -> "Layout | None":
    """The model ``Layout`` a NamedSharding describes for ``shape``; None for other shardings."""
    if not isinstance(sharding, NamedSharding):
        return None
    mesh = sharding.mesh
    model = MeshModel(tuple(d.id for d in mesh.devices.flat), tuple(mesh.devices.shape),
                      tuple(mesh.axis_names))
    return Layout(model, compat.spec_entries(sharding.spec), tuple(shape))


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
    """Every addressable shard of ``array``: its device, block, replica id and host copy; in a
    multi-controller run, every process's (each read by the process that addresses it)."""
    out = []
    for shard in array.addressable_shards:
        out.append(ShardView(
            device_id=shard.device.id,
            block=normalize_index(shard.index, array.shape),
            replica_id=shard.replica_id,
            data=np.asarray(shard.data),
            data_devices=frozenset(d.id for d in shard.data.devices()),
        ))
    if multicontroller.ACTIVE is not None:
        return multicontroller.shards_of(multicontroller.ACTIVE, tuple(out), ShardView)
    return tuple(out)


def shard_blocks(array, shape) -> Tuple[Dict[int, Block], list]:
    """Each addressable shard's device and block, and the shards' shapes, read without their data
    (a host copy would keep a donated buffer alive); in a multi-controller run, every process's."""
    mine = [[s.device.id, [list(b) for b in normalize_index(s.index, shape)], list(s.data.shape)]
            for s in array.addressable_shards]
    every = (multicontroller.ACTIVE.everyone("the shard blocks of a jax.Array", mine)
             if multicontroller.ACTIVE is not None else [mine])
    found = [row for answer in every for row in answer]
    return ({d: tuple(tuple(b) for b in block) for d, block, _ in found},
            sorted({tuple(shard_shape) for _, _, shard_shape in found}))


def placed(value, sharding):
    """A property's input ``value`` (a pytree of host values or typed key arrays, the same on every
    process) laid out as ``sharding``: ``jax.device_put`` (the call the reproductions print); in a
    multi-controller run, over a sharding that reaches other processes, each array leaf is built on
    every process with ``jax.make_array_from_callback`` from the same global value, as JAX documents
    for multi-controller inputs and its own multi-process tests do. device_put is what the
    properties of device_put itself (test_device_put, test_congruence, the device_put rows of
    test_api_parameters and test_argument_forms) check across processes; an input is not built
    through its check that every process passes the same host value, whose bugs (a NaN, a
    subnormal, a typed key array, an Explicit mesh's context: suites/bugs/device_put_*_across_processes.py)
    would otherwise stop properties about something else."""
    if not isinstance(sharding, jax.sharding.Sharding):  # a pytree of shardings, as device_put takes
        return jax.tree.map(lambda s, v: placed(v, s), sharding, value)
    if multicontroller.ACTIVE is None or sharding.is_fully_addressable:
        return jax.device_put(value, sharding)
    return jax.tree.map(lambda leaf: from_every_process(leaf, sharding), value)


def jit_argument(value, sharding):
    """``value`` as a property passes it to a jit whose ``in_shardings`` gives it ``sharding``: the
    host value itself (jit places it, which the property checks); in a multi-controller run, over a
    sharding that reaches other processes, the global array built as ``placed`` builds it
    (multi-controller JAX refuses host values with non-trivial in_shardings, as documented)."""
    if multicontroller.ACTIVE is None or sharding.is_fully_addressable:
        return value
    return placed(value, sharding)


def from_every_process(leaf, sharding):
    """One array leaf (numpy, a jax.Array or a typed key array) as a global array laid out as
    ``sharding``, each process filling its own devices from the same value; other leaves (Python
    scalars, and arrays already global, which device_put reshards without reading a host value)
    through ``jax.device_put``."""
    if not hasattr(leaf, "shape") or not getattr(leaf, "is_fully_addressable", True):
        return jax.device_put(leaf, sharding)
    return compat.make_array_from_callback(tuple(leaf.shape), sharding, lambda index: leaf[index], leaf.dtype)


def positional_sharding(chain: PositionalChain):
    """The JAX PositionalSharding of a chain: ``PositionalSharding`` of its devices in its initial
    shape, then its operations (skips, naming the version, where PositionalSharding is gone)."""
    by_id = devices_by_id()
    devices = np.array([by_id[i] for i in chain.devices], dtype=object).reshape(chain.initial_shape)
    return apply_operations(compat.feature("PositionalSharding")(devices), chain.operations)


# --- functions ----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def function_of(source: str) -> Callable:
    """The JAX function that ``source`` (a lambda over ``jax``, ``jnp``, ``lax`` and ``np``, as the
    operation catalogue writes it) evaluates to; once per source, so its compilations are reused."""
    return eval(source, {"jax": jax, "jnp": jnp, "lax": lax, "np": np})


def pmapped(fun: Callable, selection: DeviceSelection, **kwargs):
    """``jax.pmap(fun, **kwargs)`` over the selection's devices (``devices=`` only when explicit)."""
    if selection.explicit:
        by_id = devices_by_id()
        kwargs["devices"] = [by_id[i] for i in selection.ids]
    return jax.pmap(fun, **kwargs)


# --- pictures -----------------------------------------------------------------------------------
def picture_options(layout: Layout, platform_label: str) -> dict:
    """visualize_array_sharding arguments under which every label of the layout's picture shows
    whole: a small scale (cells no wider than their labels need), cells at least as wide as the
    longest label, and a console wide enough for all the columns. At the default max_width=80, a
    wide array's cells are padded past the console and lose their labels."""
    grid = block_grid(layout)
    longest = max(len(platform_label) + 1 + len(",".join(map(str, sorted(cell)))) for row in grid
                  for cell in row)
    return {"scale": 0.1, "min_width": longest + 2,
            "max_width": max(100, len(grid[0]) * (longest + 3) + 2)}


def render_picture(array, **kwargs) -> str:
    """What ``jax.debug.visualize_array_sharding(array, use_color=False, **kwargs)`` prints."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        jax.debug.visualize_array_sharding(array, use_color=False, **kwargs)
    return buffer.getvalue()
