"""Layout checks: an array is laid out as a model ``Layout`` says; and the Case of a layout under
test, whose script builds its mesh and sharding."""

from __future__ import annotations

from typing import Optional, Sequence

from conformance.jaxside import bridge
from conformance.model.layout import Layout, block_slices

from . import verdict as verdicts
from .case import Case
from .repro import describe_layout, script, spec_literal


def layout_case(layout: Layout, call: str, lines: Sequence[str] = (), *, x=None,
                extra_layouts: Optional[dict] = None, outcomes: Optional[dict] = None) -> Case:
    """A Case whose script builds ``mesh``/``sharding`` for ``layout`` (and ``mesh_<n>``/``<n>`` for
    each of ``extra_layouts``), recreates ``x`` if given, then runs ``lines`` (``outcomes``: the
    script's expression per check, for its verdict; see ``Case``)."""
    meshes = {"mesh": layout.mesh}
    setup = [f"sharding = NamedSharding(mesh, {spec_literal(layout.spec)})"]
    described = [describe_layout(layout)]
    for name, other in (extra_layouts or {}).items():
        meshes[f"mesh_{name}"] = other.mesh
        setup.append(f"{name} = NamedSharding(mesh_{name}, {spec_literal(other.spec)})")
        described.append(f"{name}: {describe_layout(other)}")
    code = script([*setup, *lines], meshes=meshes, arrays={"x": x} if x is not None else None)
    return Case(f"{call}; {'; '.join(described)}", code, outcomes)


def check_layout(case: Case, array, layout: Layout, x=None, what: str = "shard") -> None:
    """``array`` is laid out as ``layout`` says: its sharding's index map is the model's; each
    addressable shard sits on a mesh device, covers that device's block, lives on that device and
    has the model's shard shape; and, given ``x``, holds ``x[block]`` bit for bit."""
    __tracebackhide__ = True  # pytest leaves our frames out of the traceback
    judged = lambda e: verdicts.layout_lines(e, layout.blocks, layout.shape, layout.shard_shape, x)
    case.index_map(f"{what} sharding devices_indices_map",
                   bridge.index_map(array.sharding, layout.shape), layout.blocks, judged=judged)
    views = bridge.shards(array)
    case.equal(f"{what} devices", sorted(v.device_id for v in views), sorted(layout.device_ids), shows="layout",
               judged=judged)
    case.index_map(f"{what} indices", {v.device_id: v.block for v in views}, layout.blocks, judged=judged)
    for view in views:
        case.equal(f"{what} data of device {view.device_id}: the devices holding it",
                   view.data_devices, frozenset({view.device_id}), shows="layout", judged=judged)
        case.equal(f"{what} data shape on device {view.device_id}", view.data.shape,
                   layout.shard_shape, shows="layout", judged=judged)
        if x is not None:
            case.same_bits(f"{what} data on device {view.device_id}", view.data,
                           x[block_slices(layout.block(view.device_id))], judged=judged)
