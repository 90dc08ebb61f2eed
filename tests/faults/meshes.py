"""Meshes: create_device_mesh, make_mesh and Mesh."""

import numpy as np

from .registry import cycled_devices, fault, jax_module, mesh_class, mesh_utils_module, replacing


@fault("create-device-mesh-repeats", "mesh_utils.create_device_mesh repeats the first device",
       suites=("mesh", "named_sharding"))
@replacing(mesh_utils_module, "create_device_mesh")
def create_device_mesh_repeats(original):
    def create_device_mesh(*args, **kwargs):
        mesh = np.array(original(*args, **kwargs))
        flat = mesh.reshape(-1)
        flat[-1] = flat[0]
        return flat.reshape(mesh.shape)
    return create_device_mesh


@fault("create-device-mesh-accepts-any-count", "create_device_mesh fills any shape, cycling devices",
       suites=("mesh",))
@replacing(mesh_utils_module, "create_device_mesh")
def create_device_mesh_accepts_any_count(original):
    jax = jax_module()

    def create_device_mesh(mesh_shape, devices=None, *args, **kwargs):
        try:
            return original(mesh_shape, devices, *args, **kwargs)
        except ValueError:
            return cycled_devices(list(devices if devices is not None else jax.devices()), mesh_shape)
    return create_device_mesh


@fault("mesh-reverses-devices", "Mesh stores its devices in reverse order",
       suites=("mesh", "named_sharding"))
@replacing(mesh_class, "__new__")
def mesh_reverses_devices(original):
    def __new__(cls, devices, axis_names, *args, **kwargs):
        devices = np.asarray(devices)
        return original(cls, devices.reshape(-1)[::-1].reshape(devices.shape), axis_names, *args, **kwargs)
    return staticmethod(__new__)


@fault("explicit-mesh-reverses-devices", "a Mesh with Explicit axes stores its devices reversed",
       suites=("mesh", "sharding_invariance"))
@replacing(mesh_class, "__new__")
def explicit_mesh_reverses_devices(original):
    def __new__(cls, devices, axis_names, *args, **kwargs):
        types = kwargs.get("axis_types", args[0] if args else None)
        if types is not None and any(getattr(t, "name", "") == "Explicit" for t in types):
            devices = np.asarray(devices)
            devices = devices.reshape(-1)[::-1].reshape(devices.shape)
        return original(cls, devices, axis_names, *args, **kwargs)
    return staticmethod(__new__)


@fault("make-mesh-flips-default-axis-types", "jax.make_mesh defaults to the other axis type",
       suites=("mesh",))
@replacing(jax_module, "make_mesh")
def make_mesh_flips_default_axis_types(original):
    from conformance.jaxside import compat
    jax = jax_module()

    def make_mesh(axis_shapes, axis_names, *args, **kwargs):
        if "axis_types" not in kwargs:
            other = "Auto" if compat.MAKE_MESH_DEFAULT_AXIS_TYPE == "Explicit" else "Explicit"
            kwargs["axis_types"] = (getattr(jax.sharding.AxisType, other),) * len(axis_names)
        return original(axis_shapes, axis_names, *args, **kwargs)
    return make_mesh


@fault("make-mesh-cycles-devices", "jax.make_mesh reuses devices when asked for too many",
       suites=("mesh",))
@replacing(jax_module, "make_mesh")
def make_mesh_cycles_devices(original):
    jax = jax_module()

    def make_mesh(axis_shapes, axis_names, *args, **kwargs):
        size = int(np.prod(axis_shapes))
        devices = jax.devices()
        if size <= len(devices):
            return original(axis_shapes, axis_names, *args, **kwargs)
        return jax.sharding.Mesh(cycled_devices(devices, axis_shapes), tuple(axis_names))
    return make_mesh
