"""Planted faults: simulated JAX regressions, each a small monkeypatch of a public API.

A pytest plugin that only the self-tests use:

    python -m pytest -p tests.faults --plant-fault swap-index-map suites/

applies one fault for the whole run (after the harness has started JAX, before the suites are
imported) and names it in the report header. A suite that still passes under a fault has no teeth
for it.
"""

from __future__ import annotations

import functools

import pytest


def wrap(owner, name, make):
    """Replace ``owner.name`` by ``make(original)``; functions keep the original's name and doc."""
    original = getattr(owner, name)
    replacement = make(original)
    if callable(original) and not isinstance(replacement, (property, staticmethod)):
        replacement = functools.wraps(original)(replacement)
    setattr(owner, name, replacement)


def _named_sharding():
    from jax.sharding import NamedSharding
    return NamedSharding


def _jax():
    import jax
    return jax


def cycled_devices(pool, shape):
    """An array of ``shape`` filled with ``pool``'s devices in turn, repeating them as needed."""
    import numpy as np
    size = int(np.prod(shape))
    return np.array([pool[i % len(pool)] for i in range(size)]).reshape(shape)


def replicated(sharding):
    """The same mesh with an empty PartitionSpec."""
    return _named_sharding()(sharding.mesh, type(sharding.spec)())


def swap_index_map():
    def make(original):
        def devices_indices_map(self, global_shape):
            mapping = dict(original(self, global_shape))
            devices = list(mapping)
            if len(devices) >= 2:
                mapping[devices[0]], mapping[devices[-1]] = mapping[devices[-1]], mapping[devices[0]]
            return mapping
        return devices_indices_map
    wrap(_named_sharding(), "devices_indices_map", make)


def shard_shape_never_rejects():
    def make(original):
        def shard_shape(self, global_shape):
            try:
                return original(self, global_shape)
            except ValueError:
                return original(replicated(self), global_shape)
        return shard_shape
    wrap(_named_sharding(), "shard_shape", make)


def shard_shape_reversed():
    wrap(_named_sharding(), "shard_shape",
         lambda original: lambda self, global_shape: tuple(original(self, global_shape))[::-1])


def never_fully_replicated():
    _named_sharding().is_fully_replicated = property(lambda self: False)


def addressable_devices_drop_one():
    def make(original):
        def addressable_devices(self):
            devices = set(original.__get__(self))
            return devices - {min(devices, key=lambda d: d.id)} if len(devices) > 1 else devices
        return property(addressable_devices)
    wrap(_named_sharding(), "addressable_devices", make)


def equivalent_always():
    _named_sharding().is_equivalent_to = lambda self, other, ndim: True


def equivalent_only_to_itself():
    _named_sharding().is_equivalent_to = lambda self, other, ndim: self is other


def replica_id_zero():
    from jax._src import array
    array.Shard.replica_id = property(lambda self: 0)


def device_put_replicates():
    NamedSharding = _named_sharding()

    def make(original):
        def device_put(x, device=None, **kwargs):
            return original(x, replicated(device) if isinstance(device, NamedSharding) else device,
                            **kwargs)
        return device_put
    wrap(_jax(), "device_put", make)


def device_put_accepts_indivisible():
    import numpy as np
    jax = _jax()

    def make(original):
        def device_put(x, device=None, **kwargs):
            try:
                return original(x, device, **kwargs)
            except ValueError:
                if not isinstance(device, jax.sharding.Sharding):
                    raise
                devices = np.array(sorted(device.device_set, key=lambda d: d.id))
                fallback = _named_sharding()(jax.sharding.Mesh(devices, ("r",)),
                                             jax.sharding.PartitionSpec())
                return original(x, fallback, **kwargs)
        return device_put
    wrap(jax, "device_put", make)


def device_put_canonicalizes_floats():
    import numpy as np

    def make(original):
        def device_put(x, device=None, **kwargs):
            if isinstance(x, np.ndarray) and x.dtype.kind in "fc":
                x = x + x.dtype.type(0)  # -0.0 becomes 0.0
            return original(x, device, **kwargs)
        return device_put
    wrap(_jax(), "device_put", make)


def device_get_widens_floats():
    import numpy as np

    def make(original):
        def device_get(x):
            out = original(x)
            narrow = isinstance(out, np.ndarray) and out.dtype.kind == "f" and out.dtype.itemsize < 4
            return out.astype(np.float32) if narrow else out
        return device_get
    wrap(_jax(), "device_get", make)


def callback_gets_first_index():
    def make(original):
        def make_array_from_callback(shape, sharding, data_callback, *args, **kwargs):
            first = []

            def callback(index):
                first.append(index)
                return data_callback(first[0])
            return original(shape, sharding, callback, *args, **kwargs)
        return make_array_from_callback
    wrap(_jax(), "make_array_from_callback", make)


def jit_reshards_output_afterwards():
    jax = _jax()

    def make(original):
        def jit(fun, *args, out_shardings=None, **kwargs):
            compiled = original(fun, *args, **kwargs)
            if out_shardings is None:
                return compiled
            return lambda *a, **k: jax.device_put(compiled(*a, **k), out_shardings)
        return jit
    wrap(jax, "jit", make)


def jit_ignores_out_shardings():
    wrap(_jax(), "jit", lambda original: lambda fun, *args, out_shardings=None, **kwargs:
         original(fun, *args, **kwargs))


def sin_drops_sharding():
    import jax.numpy as jnp
    jax = _jax()

    def make(original):
        def sin(x):
            out = original(x)
            return jax.device_put(out, jax.local_devices()[0]) if hasattr(out, "sharding") else out
        return sin
    wrap(jnp, "sin", make)


def replicate_wrong_axis():
    from conformance.compat import feature

    def make(original):
        def replicate(self, axis=None, keepdims=True):
            if axis is not None and len(self.shape) > 1:
                axis = (axis + 1) % len(self.shape)
            return original(self, axis, keepdims=keepdims)
        return replicate
    wrap(feature("PositionalSharding"), "replicate", make)


def positional_reshape_column_major():
    from conformance.compat import feature

    def make(original):
        def reshape(self, *shape):
            return original(self, *shape[::-1]).transpose() if len(shape) > 1 else original(self, *shape)
        return reshape
    wrap(feature("PositionalSharding"), "reshape", make)


def mesh_reverses_devices():
    import numpy as np
    from jax.sharding import Mesh

    def make(original):
        def __new__(cls, devices, axis_names, *args, **kwargs):
            devices = np.asarray(devices)
            return original(cls, devices.reshape(-1)[::-1].reshape(devices.shape), axis_names,
                            *args, **kwargs)
        return staticmethod(__new__)
    wrap(Mesh, "__new__", make)


def explicit_mesh_reverses_devices():
    import numpy as np
    from jax.sharding import Mesh

    def make(original):
        def __new__(cls, devices, axis_names, *args, **kwargs):
            types = kwargs.get("axis_types", args[0] if args else None)
            if types is not None and any(getattr(t, "name", "") == "Explicit" for t in types):
                devices = np.asarray(devices)
                devices = devices.reshape(-1)[::-1].reshape(devices.shape)
            return original(cls, devices, axis_names, *args, **kwargs)
        return staticmethod(__new__)
    wrap(Mesh, "__new__", make)


def create_device_mesh_accepts_any_count():
    from jax.experimental import mesh_utils
    jax = _jax()

    def make(original):
        def create_device_mesh(mesh_shape, devices=None, *args, **kwargs):
            try:
                return original(mesh_shape, devices, *args, **kwargs)
            except ValueError:
                return cycled_devices(list(devices if devices is not None else jax.devices()),
                                      mesh_shape)
        return create_device_mesh
    wrap(mesh_utils, "create_device_mesh", make)


def make_mesh_flips_default_axis_types():
    from conformance import compat
    jax = _jax()

    def make(original):
        def make_mesh(axis_shapes, axis_names, *args, **kwargs):
            if "axis_types" not in kwargs:
                other = "Auto" if compat.MAKE_MESH_DEFAULT_AXIS_TYPE == "Explicit" else "Explicit"
                kwargs["axis_types"] = (getattr(jax.sharding.AxisType, other),) * len(axis_names)
            return original(axis_shapes, axis_names, *args, **kwargs)
        return make_mesh
    wrap(jax, "make_mesh", make)


def make_mesh_cycles_devices():
    import numpy as np
    jax = _jax()

    def make(original):
        def make_mesh(axis_shapes, axis_names, *args, **kwargs):
            size = int(np.prod(axis_shapes))
            devices = jax.devices()
            if size <= len(devices):
                return original(axis_shapes, axis_names, *args, **kwargs)
            return jax.sharding.Mesh(cycled_devices(devices, axis_shapes), tuple(axis_names))
        return make_mesh
    wrap(jax, "make_mesh", make)


def _wrap_visualize(make):
    from jax._src import debugging
    jax = _jax()
    wrap(debugging, "visualize_array_sharding", make)
    jax.debug.visualize_array_sharding = debugging.visualize_array_sharding


def visualize_shifted_labels():
    import contextlib
    import io
    import re

    def make(original):
        def visualize_array_sharding(arr, **kwargs):
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                original(arr, **kwargs)
            shifted = re.sub(r"(?<=[A-Z] )(\d+)", lambda m: str(int(m[1]) + 1), buffer.getvalue())
            print(shifted, end="")
        return visualize_array_sharding
    _wrap_visualize(make)


def visualize_accepts_any_rank():
    def make(original):
        def visualize_array_sharding(arr, **kwargs):
            if arr.ndim in (1, 2):
                return original(arr, **kwargs)
            print("")
        return visualize_array_sharding
    _wrap_visualize(make)


def _lax():
    from jax import lax
    return lax


def psum_divides_by_axis_size():
    lax = _lax()

    def make(original):
        def psum(x, axis_name, **kwargs):
            total = original(x, axis_name, **kwargs)
            size = original(1, axis_name, **kwargs)
            return total // size if total.dtype.kind in "iub" else total / size
        return psum
    wrap(lax, "psum", make)


def pmax_is_pmin():
    lax = _lax()
    wrap(lax, "pmax", lambda original: lambda x, axis_name, **kwargs: lax.pmin(x, axis_name, **kwargs))


def all_gather_reversed():
    lax = _lax()

    def make(original):
        def all_gather(x, axis_name, *, axis=0, tiled=False, **kwargs):
            gathered = original(x, axis_name, axis=axis, tiled=tiled, **kwargs)
            if tiled:
                return gathered
            return _jnp().flip(gathered, axis=axis)
        return all_gather
    wrap(lax, "all_gather", make)


def ppermute_inverse():
    wrap(_lax(), "ppermute", lambda original: lambda x, axis_name, perm:
         original(x, axis_name, perm=[(dst, src) for src, dst in perm]))


def axis_index_reversed():
    lax = _lax()
    wrap(lax, "axis_index", lambda original: lambda axis_name:
         lax.psum(1, axis_name) - 1 - original(axis_name))


def psum_scatter_shifted():
    lax = _lax()

    def make(original):
        def psum_scatter(x, axis_name, *, scatter_dimension=0, tiled=False, **kwargs):
            out = original(x, axis_name, scatter_dimension=scatter_dimension, tiled=tiled, **kwargs)
            return lax.ppermute(out, axis_name, perm=_cycle(lax.psum(1, axis_name)))
        return psum_scatter
    wrap(lax, "psum_scatter", make)


def all_to_all_keeps_own_chunk():
    lax = _lax()

    def make(original):
        def all_to_all(x, axis_name, split_axis, concat_axis, **kwargs):
            out = original(x, axis_name, split_axis, concat_axis, **kwargs)
            return lax.ppermute(out, axis_name, perm=_cycle(lax.psum(1, axis_name)))
        return all_to_all
    wrap(lax, "all_to_all", make)


def _cycle(size):
    size = int(size)
    return [(i, (i + 1) % size) for i in range(size)]


def _jnp():
    import jax.numpy as jnp
    return jnp


def pmap_ignores_out_axes():
    wrap(_jax(), "pmap", lambda original: lambda fun, *args, out_axes=0, **kwargs:
         original(fun, *args, **kwargs))


def pmap_maps_unmapped_arguments():
    def make(original):
        def pmap(fun, *args, in_axes=0, **kwargs):
            if isinstance(in_axes, tuple):
                in_axes = tuple(0 if a is None else a for a in in_axes)
            return original(fun, *args, in_axes=in_axes, **kwargs)
        return pmap
    wrap(_jax(), "pmap", make)


def pmap_retraces_every_call():
    def make(original):
        def pmap(fun, *args, **kwargs):
            def call(*a, **k):
                import jax
                jax.clear_caches()
                return original(fun, *args, **kwargs)(*a, **k)
            return call
        return pmap
    wrap(_jax(), "pmap", make)


def pmean_divides_twice():
    lax = _lax()

    def make(original):
        def pmean(x, axis_name, **kwargs):
            return original(x, axis_name, **kwargs) / lax.psum(1, axis_name, **kwargs)
        return pmean
    wrap(lax, "pmean", make)


def pmin_is_pmax():
    lax = _lax()
    wrap(lax, "pmin", lambda original: lambda x, axis_name, **kwargs: lax.pmax(x, axis_name, **kwargs))


def pmap_freezes_static_arguments():
    def make(original):
        def pmap(fun, *args, static_broadcasted_argnums=(), **kwargs):
            if not static_broadcasted_argnums:
                return original(fun, *args, **kwargs)
            first = {}

            def frozen(*a):
                first.setdefault("k", a[1])
                return fun(a[0], first["k"], *a[2:])
            return original(frozen, *args, static_broadcasted_argnums=static_broadcasted_argnums,
                            **kwargs)
        return pmap
    wrap(_jax(), "pmap", make)


def pmap_truncates_mapped_axes():
    import numpy as np
    jax = _jax()

    def make(original):
        def pmap(fun, *args, devices=None, **kwargs):
            compiled = original(fun, *args, devices=devices, **kwargs)
            limit = len(devices) if devices is not None else jax.local_device_count()

            def call(*a):
                sizes = [np.shape(x)[0] for x in a if np.ndim(x) > 0]
                size = min(sizes + [limit])
                return compiled(*[x[:size] if np.ndim(x) > 0 else x for x in a])
            return call
        return pmap
    wrap(jax, "pmap", make)


def create_device_mesh_repeats():
    import numpy as np
    from jax.experimental import mesh_utils

    def make(original):
        def create_device_mesh(*args, **kwargs):
            mesh = np.array(original(*args, **kwargs))
            flat = mesh.reshape(-1)
            flat[-1] = flat[0]
            return flat.reshape(mesh.shape)
        return create_device_mesh
    wrap(mesh_utils, "create_device_mesh", make)


def process_allgather_drops_a_process():
    """The last process's share of the rows comes back as zeros."""
    from jax.experimental import multihost_utils

    def make(original):
        def process_allgather(x, tiled=False):
            import jax
            import numpy as np
            out = np.array(original(x, tiled=tiled))
            if out.ndim and jax.process_count() > 1:
                out[out.shape[0] - max(1, out.shape[0] // jax.process_count()):] = 0
            return out
        return process_allgather
    wrap(multihost_utils, "process_allgather", make)


FAULTS = {
    "swap-index-map": ("NamedSharding.devices_indices_map swaps two devices' blocks", swap_index_map),
    "shard-shape-never-rejects": ("NamedSharding.shard_shape answers for indivisible shapes",
                                  shard_shape_never_rejects),
    "shard-shape-reversed": ("NamedSharding.shard_shape returns its dimensions reversed",
                             shard_shape_reversed),
    "never-fully-replicated": ("NamedSharding.is_fully_replicated is always False",
                               never_fully_replicated),
    "addressable-devices-drop-one": ("NamedSharding.addressable_devices omits one device",
                                     addressable_devices_drop_one),
    "equivalent-always": ("Sharding.is_equivalent_to is always True", equivalent_always),
    "equivalent-only-to-itself": ("is_equivalent_to is True only for the very same object",
                                  equivalent_only_to_itself),
    "replica-id-zero": ("every shard reports replica_id 0", replica_id_zero),
    "device-put-replicates": ("device_put ignores the spec and replicates", device_put_replicates),
    "device-put-accepts-indivisible": ("device_put replicates instead of rejecting an indivisible "
                                       "shape", device_put_accepts_indivisible),
    "device-put-canonicalizes-floats": ("device_put turns -0.0 into 0.0 (adds zero to floats)",
                                        device_put_canonicalizes_floats),
    "device-get-widens-floats": ("device_get returns float16/bfloat16 as float32",
                                 device_get_widens_floats),
    "callback-gets-first-index": ("make_array_from_callback passes the first index every time",
                                  callback_gets_first_index),
    "jit-reshards-output-afterwards": ("jit ignores out_shardings while compiling and moves the "
                                       "result afterwards", jit_reshards_output_afterwards),
    "jit-ignores-out-shardings": ("jit drops its out_shardings argument", jit_ignores_out_shardings),
    "sin-drops-sharding": ("jnp.sin returns its result on one device", sin_drops_sharding),
    "create-device-mesh-repeats": ("mesh_utils.create_device_mesh repeats the first device",
                                   create_device_mesh_repeats),
    "create-device-mesh-accepts-any-count": ("create_device_mesh fills any shape, cycling devices",
                                             create_device_mesh_accepts_any_count),
    "replicate-wrong-axis": ("PositionalSharding.replicate unions along the next axis",
                             replicate_wrong_axis),
    "positional-reshape-column-major": ("PositionalSharding.reshape fills column-major",
                                        positional_reshape_column_major),
    "mesh-reverses-devices": ("Mesh stores its devices in reverse order", mesh_reverses_devices),
    "explicit-mesh-reverses-devices": ("a Mesh with Explicit axes stores its devices reversed",
                                       explicit_mesh_reverses_devices),
    "make-mesh-flips-default-axis-types": ("jax.make_mesh defaults to the other axis type",
                                           make_mesh_flips_default_axis_types),
    "make-mesh-cycles-devices": ("jax.make_mesh reuses devices when asked for too many",
                                 make_mesh_cycles_devices),
    "visualize-shifted-labels": ("visualize_array_sharding labels each cell with the next device id",
                                 visualize_shifted_labels),
    "visualize-accepts-any-rank": ("visualize_array_sharding prints nothing for 0-d and 3-d arrays",
                                   visualize_accepts_any_rank),
    "psum-divides-by-axis-size": ("lax.psum returns the mean (divides by the axis size)",
                                  psum_divides_by_axis_size),
    "pmax-is-pmin": ("lax.pmax returns the minimum", pmax_is_pmin),
    "all-gather-reversed": ("lax.all_gather stacks the devices in reverse order", all_gather_reversed),
    "ppermute-inverse": ("lax.ppermute sends along the inverse permutation", ppermute_inverse),
    "axis-index-reversed": ("lax.axis_index counts from the other end", axis_index_reversed),
    "psum-scatter-shifted": ("lax.psum_scatter hands each device its neighbour's chunk",
                             psum_scatter_shifted),
    "all-to-all-shifted": ("lax.all_to_all hands each device its neighbour's result",
                           all_to_all_keeps_own_chunk),
    "pmap-ignores-out-axes": ("jax.pmap drops out_axes and stacks along axis 0", pmap_ignores_out_axes),
    "pmap-maps-unmapped-arguments": ("jax.pmap maps in_axes=None arguments along axis 0",
                                     pmap_maps_unmapped_arguments),
    "pmap-retraces-every-call": ("jax.pmap traces again on every call", pmap_retraces_every_call),
    "pmean-divides-twice": ("lax.pmean divides by the axis size twice", pmean_divides_twice),
    "pmin-is-pmax": ("lax.pmin returns the maximum", pmin_is_pmax),
    "pmap-freezes-static-arguments": ("jax.pmap keeps the first static argument it saw",
                                      pmap_freezes_static_arguments),
    "process-allgather-drops-a-process": ("multihost_utils.process_allgather returns zeros for the "
                                          "last process's rows", process_allgather_drops_a_process),
    "pmap-truncates-mapped-axes": ("jax.pmap cuts every mapped axis to the shortest one or to the "
                                   "device count instead of refusing", pmap_truncates_mapped_axes),
}


def pytest_addoption(parser):
    parser.addoption("--plant-fault", choices=sorted(FAULTS), default=None,
                     help="apply one simulated JAX regression for the whole run (self-tests only)")


def pytest_report_header(config):
    name = config.getoption("--plant-fault")
    return [f"PLANTED FAULT: {name} ({FAULTS[name][0]})"] if name else []


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    name = config.getoption("--plant-fault")
    if name:
        try:
            FAULTS[name][1]()
        except (pytest.skip.Exception, AttributeError) as e:
            raise pytest.UsageError(f"fault {name} cannot be planted on this JAX: {e}") from None
