"""Device meshes: mesh_utils.create_device_mesh, jax.make_mesh and Mesh, against the model."""

import math

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from jax.experimental import mesh_utils

from conformance.checking.layouts import check_layout, layout_case
from conformance.checking.repro import scripted_case
from conformance.jaxside import bridge, compat
from strategies import layouts, mesh_shapes, meshes

pytestmark = pytest.mark.mesh
DEVICES = bridge.live_device_ids()


def mesh_ids(devices) -> tuple:
    return tuple(d.id for d in np.asarray(devices).flat)


def axis_types_expression(mesh_expression: str, mesh) -> str:
    """The script's expression for ``compat.axis_type_names`` of the mesh ``mesh_expression`` builds,
    spelled for this version (``mesh``: that mesh, built here): a tuple of axis types, or 0.4.38 to
    0.5.2's dict {type: axis names}, renamed as 0.5.1 renamed them; every axis Auto before axis
    types existed."""
    types = getattr(mesh, "axis_types", None)
    renames = {k: v for k, v in compat.AXIS_TYPE_RENAMES.items()
               if any(getattr(t, "name", str(t)) == k for t in (types or ()))}
    name = f"{renames!r}.get(t.name, t.name)" if renames else "t.name"
    if types is None:
        return f"('Auto',) * len({mesh_expression}.axis_names)"
    if isinstance(types, dict):
        return (f"(lambda m: tuple({{a: {name} for t, axes in m.axis_types.items() for a in "
                f"(axes if isinstance(axes, tuple) else (axes,))}}[n] for n in m.axis_names))({mesh_expression})")
    return f"tuple({name} for t in {mesh_expression}.axis_types)"


@st.composite
def device_counts_and_shapes(draw):
    """A device count k (all devices, or fewer) and a mesh shape of k devices (1 to 4 axes)."""
    n = len(DEVICES)
    k = n if draw(st.booleans()) else draw(st.integers(1, n))
    return k, draw(mesh_shapes(k))


@given(shape=mesh_shapes(len(DEVICES)))
def test_create_device_mesh_holds_each_device_once(shape):
    """create_device_mesh(shape) for any factorization of the device count is an array of that
    shape holding every device exactly once."""
    call = f"mesh_utils.create_device_mesh({shape})"
    case = scripted_case(call, ["from jax.experimental import mesh_utils"],
                         outcomes={"create_device_mesh": call, "shape": f"tuple(np.shape({call}))",
                                   "device ids, sorted": f"sorted(d.id for d in {call}.flat)"})
    devices = case.accepts("create_device_mesh", lambda: mesh_utils.create_device_mesh(shape))
    case.equal("shape", tuple(np.shape(devices)), tuple(shape))
    case.equal("device ids, sorted", sorted(mesh_ids(devices)), sorted(DEVICES))


@given(example=device_counts_and_shapes())
def test_create_device_mesh_over_given_devices(example):
    """create_device_mesh(shape, devices=first k devices) holds exactly those k devices once each."""
    k, shape = example
    devices = bridge.run_devices()[:k]
    call = f"mesh_utils.create_device_mesh({shape}, devices=jax.local_devices()[:{k}])"
    case = scripted_case(call, ["from jax.experimental import mesh_utils"],
                         outcomes={"create_device_mesh": call, "shape": f"tuple(np.shape({call}))",
                                   "device ids, sorted": f"sorted(d.id for d in {call}.flat)"})
    mesh = case.accepts("create_device_mesh", lambda: mesh_utils.create_device_mesh(shape, devices=devices))
    case.equal("shape", tuple(np.shape(mesh)), tuple(shape))
    case.equal("device ids, sorted", sorted(mesh_ids(mesh)), sorted(d.id for d in devices))


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=9).filter(
    lambda s: math.prod(s) != len(jax.devices())))  # (create_device_mesh's default: jax.devices())
def test_create_device_mesh_rejects_other_device_counts(shape):
    """create_device_mesh(shape) raises ValueError when the shape's product is not the device
    count."""
    case = scripted_case(f"mesh_utils.create_device_mesh({shape})", ["from jax.experimental import mesh_utils"],
                         outcomes={"create_device_mesh": f"mesh_utils.create_device_mesh({shape})"})
    case.rejects("create_device_mesh", lambda: mesh_utils.create_device_mesh(shape), (ValueError,))


@compat.requires("make_mesh")
@given(example=device_counts_and_shapes(), names=st.permutations(("a", "b", "x", "y")))
def test_make_mesh_holds_distinct_devices(example, names):
    """jax.make_mesh(shape, names) over any k <= n devices has that shape and those names, holds k
    distinct devices, and has the version's default axis types (Auto before 0.9, Explicit after)."""
    k, shape = example
    names = tuple(names[:len(shape)])
    call = f"jax.make_mesh({shape}, {names})"
    ids_of = f"[d.id for d in {call}.devices.flat]"
    case = scripted_case(call, outcomes={
        "make_mesh": call, "mesh.devices.shape": f"tuple({call}.devices.shape)",
        "mesh.axis_names": f"tuple({call}.axis_names)", "number of distinct devices": f"len(set({ids_of}))",
        "devices are live devices": f"set({ids_of}) <= set(devices)",
    })
    mesh = case.accepts("make_mesh", lambda: compat.make_mesh(shape, names))
    case.outcomes["axis types"] = axis_types_expression(call, mesh)
    case.equal("mesh.devices.shape", tuple(mesh.devices.shape), tuple(shape))
    case.equal("mesh.axis_names", tuple(mesh.axis_names), names)
    ids = mesh_ids(mesh.devices)
    case.equal("number of distinct devices", len(set(ids)), k)
    case.true("devices are live devices", set(ids) <= set(DEVICES))
    case.equal("axis types", compat.axis_type_names(mesh),
               (compat.MAKE_MESH_DEFAULT_AXIS_TYPE,) * len(shape))


@compat.requires("make_mesh")
@given(extra=st.integers(1, 8))
def test_make_mesh_rejects_more_devices_than_exist(extra):
    """jax.make_mesh with more devices than the backend has raises ValueError."""
    shape = (len(DEVICES) + extra,)
    case = scripted_case(f"jax.make_mesh({shape}, ('a',))", outcomes={"make_mesh": f"jax.make_mesh({shape}, ('a',))"})
    case.rejects("make_mesh", lambda: compat.make_mesh(shape, ("a",)), (ValueError,))


@given(mesh=meshes(DEVICES))
def test_mesh_attributes_match_the_model(mesh):
    """Mesh(devices, names) reports the model's shape (name -> size, in order), axis names, size
    and device array."""
    jm = bridge.jax_mesh(mesh)
    case = scripted_case(f"Mesh(devices, {mesh.axis_names})", ["print(mesh.shape, mesh.axis_names, mesh.size)"],
                         meshes={"mesh": mesh},
                         outcomes={"mesh.shape": "list(dict(mesh.shape).items())",
                                   "mesh.axis_names": "tuple(mesh.axis_names)", "mesh.size": "mesh.size",
                                   "mesh.devices ids": "tuple(d.id for d in mesh.devices.flat)",
                                   "mesh.devices.shape": "tuple(mesh.devices.shape)"})
    case.equal("mesh.shape", list(dict(jm.shape).items()), list(mesh.axis_sizes.items()))
    case.equal("mesh.axis_names", tuple(jm.axis_names), mesh.axis_names)
    case.equal("mesh.size", jm.size, mesh.size)
    case.equal("mesh.devices ids", mesh_ids(jm.devices), mesh.device_ids)
    case.equal("mesh.devices.shape", tuple(jm.devices.shape), mesh.shape)


@bridge.needs_devices(2, "to repeat a device")
def test_mesh_rejects_duplicate_devices():
    """Mesh refuses a device array that holds a device twice."""
    device = jax.local_devices()[0]
    case = scripted_case("Mesh(np.array([d0, d0]), ('a',))", ["d0 = jax.local_devices()[0]"],
                         outcomes={"Mesh with a repeated device": "Mesh(np.array([d0, d0]), ('a',))"})
    case.rejects("Mesh with a repeated device",
                 lambda: jax.sharding.Mesh(np.array([device, device]), ("a",)), (ValueError,))


@bridge.needs_devices(4, "for a 2x2 mesh")
def test_mesh_rejects_duplicate_axis_names():
    """Mesh refuses two axes with the same name."""
    devices = np.array(bridge.run_devices()[:4]).reshape(2, 2)
    case = scripted_case("Mesh(devices (2, 2), ('a', 'a'))", outcomes={
        "Mesh with a repeated axis name": "Mesh(np.array(jax.local_devices()[:4]).reshape(2, 2), ('a', 'a'))"})
    case.rejects("Mesh with a repeated axis name",
                 lambda: jax.sharding.Mesh(devices, ("a", "a")), (ValueError,))


@compat.requires("AxisType")
@given(layout=layouts(DEVICES, max_rank=2))
def test_auto_and_explicit_meshes_give_equivalent_layouts(layout):
    """The same devices, names and spec on an Explicit mesh and on an Auto mesh give the model's
    index map, equivalent shardings, and device_put places the model's blocks."""
    by_id = bridge.devices_by_id()
    devices = np.array([by_id[i] for i in layout.mesh.device_ids], dtype=object).reshape(layout.mesh.shape)
    spec = compat.partition_spec(layout.spec)
    auto = jax.sharding.NamedSharding(compat.mesh_with_axis_types(devices, layout.mesh.axis_names, "Auto"), spec)
    explicit = jax.sharding.NamedSharding(
        compat.mesh_with_axis_types(devices, layout.mesh.axis_names, "Explicit"), spec)
    x = np.arange(math.prod(layout.shape), dtype=np.int32).reshape(layout.shape)
    case = layout_case(layout, "Explicit vs Auto mesh", [
        "from jax.sharding import AxisType",
        f"explicit = NamedSharding(Mesh(mesh.devices, mesh.axis_names, "
        f"axis_types=(AxisType.Explicit,) * {len(layout.mesh.shape)}), sharding.spec)",
        f"print(explicit.is_equivalent_to(sharding, {layout.rank}))"], x=x,
        outcomes={"explicit devices_indices_map": "explicit", "auto devices_indices_map": "sharding",
                  "explicit.is_equivalent_to(auto)": f"explicit.is_equivalent_to(sharding, {layout.rank})",
                  "auto.is_equivalent_to(explicit)": f"sharding.is_equivalent_to(explicit, {layout.rank})",
                  "device_put onto the explicit mesh": "jax.device_put(x, explicit)",
                  "shard": "jax.device_put(x, explicit)"})
    case.index_map("explicit devices_indices_map", bridge.index_map(explicit, layout.shape), layout.blocks)
    case.index_map("auto devices_indices_map", bridge.index_map(auto, layout.shape), layout.blocks)
    case.true("explicit.is_equivalent_to(auto)", explicit.is_equivalent_to(auto, layout.rank))
    case.true("auto.is_equivalent_to(explicit)", auto.is_equivalent_to(explicit, layout.rank))
    check_layout(case, case.accepts("device_put onto the explicit mesh",
                                    lambda: jax.device_put(x, explicit)), layout, x)
