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
    if callable(original) and not isinstance(replacement, property):
        replacement = functools.wraps(original)(replacement)
    setattr(owner, name, replacement)


def _named_sharding():
    from jax.sharding import NamedSharding
    return NamedSharding


def _jax():
    import jax
    return jax


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
    NamedSharding = _named_sharding()

    def make(original):
        def device_put(x, device=None, **kwargs):
            try:
                return original(x, device, **kwargs)
            except ValueError:
                if not isinstance(device, NamedSharding):
                    raise
                return original(x, replicated(device), **kwargs)
        return device_put
    wrap(_jax(), "device_put", make)


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
        FAULTS[name][1]()
