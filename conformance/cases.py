"""Build a ``Case`` (call description + reproduction script) for a layout under test."""

from __future__ import annotations

from typing import Optional, Sequence

from .checks import Case
from .model import Layout, block_slices
from .repro import describe_layout, script, spec_literal


def layout_case(layout: Layout, call: str, lines: Sequence[str] = (), *, x=None,
                extra_layouts: Optional[dict] = None) -> Case:
    """A Case whose script builds ``mesh``/``sharding`` for ``layout`` (and ``mesh_<n>``/``<n>`` for
    each of ``extra_layouts``), recreates ``x`` if given, then runs ``lines``."""
    meshes = {"mesh": layout.mesh}
    setup = [f"sharding = NamedSharding(mesh, {spec_literal(layout.spec)})"]
    described = [describe_layout(layout)]
    for name, other in (extra_layouts or {}).items():
        meshes[f"mesh_{name}"] = other.mesh
        setup.append(f"{name} = NamedSharding(mesh_{name}, {spec_literal(other.spec)})")
        described.append(f"{name}: {describe_layout(other)}")
    code = script([*setup, *lines], meshes=meshes, arrays={"x": x} if x is not None else None)
    return Case(f"{call}; {'; '.join(described)}", code)


def lax_case(call: str, lines: Sequence[str], *, meshes: Optional[dict] = None,
             arrays: Optional[dict] = None) -> Case:
    """A Case whose script imports ``jax.lax``, builds ``meshes`` and ``arrays``, then runs ``lines``."""
    return Case(call, script(["from jax import lax", *lines], meshes=meshes, arrays=arrays))


def check_layout(case: Case, array, layout: Layout, x=None, what: str = "shard") -> None:
    """``array`` is laid out as ``layout`` says: its sharding's index map is the model's; each
    addressable shard sits on a mesh device, covers that device's block, lives on that device and
    has the model's shard shape; and, given ``x``, holds ``x[block]`` bit for bit."""
    from .jaxbridge import index_map, shards

    case.index_map(f"{what} sharding devices_indices_map", index_map(array.sharding, layout.shape),
                   layout.blocks)
    views = shards(array)
    case.equal(f"{what} devices", sorted(v.device_id for v in views), sorted(layout.device_ids))
    case.index_map(f"{what} indices", {v.device_id: v.block for v in views}, layout.blocks)
    for view in views:
        case.equal(f"devices holding the {what} data of device {view.device_id}",
                   view.data_devices, frozenset({view.device_id}))
        case.equal(f"{what} data shape on device {view.device_id}", view.data.shape,
                   layout.shard_shape)
        if x is not None:
            case.same_bits(f"{what} data on device {view.device_id}", view.data,
                           x[block_slices(layout.block(view.device_id))])
