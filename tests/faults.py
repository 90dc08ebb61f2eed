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


def _named_sharding():
    from jax.sharding import NamedSharding
    return NamedSharding


def swap_index_map():
    NamedSharding = _named_sharding()
    original = NamedSharding.devices_indices_map

    def devices_indices_map(self, global_shape):
        mapping = dict(original(self, global_shape))
        devices = list(mapping)
        if len(devices) >= 2:
            mapping[devices[0]], mapping[devices[-1]] = mapping[devices[-1]], mapping[devices[0]]
        return mapping
    NamedSharding.devices_indices_map = devices_indices_map


def shard_shape_never_rejects():
    NamedSharding = _named_sharding()
    original = NamedSharding.shard_shape

    def shard_shape(self, global_shape):
        try:
            return original(self, global_shape)
        except ValueError:
            replicated = NamedSharding(self.mesh, type(self.spec)())
            return original(replicated, global_shape)
    NamedSharding.shard_shape = shard_shape


def never_fully_replicated():
    _named_sharding().is_fully_replicated = property(lambda self: False)


def equivalent_always():
    _named_sharding().is_equivalent_to = lambda self, other, ndim: True


def device_put_replicates():
    import jax
    NamedSharding = _named_sharding()
    original = jax.device_put

    @functools.wraps(original)
    def device_put(x, device=None, **kwargs):
        if isinstance(device, NamedSharding):
            device = NamedSharding(device.mesh, type(device.spec)())
        return original(x, device, **kwargs)
    jax.device_put = device_put


def device_put_accepts_indivisible():
    import jax
    NamedSharding = _named_sharding()
    original = jax.device_put

    @functools.wraps(original)
    def device_put(x, device=None, **kwargs):
        try:
            return original(x, device, **kwargs)
        except ValueError:
            if not isinstance(device, NamedSharding):
                raise
            return original(x, NamedSharding(device.mesh, type(device.spec)()), **kwargs)
    jax.device_put = device_put


def replica_id_zero():
    from jax._src import array
    array.Shard.replica_id = property(lambda self: 0)


def callback_gets_first_index():
    import jax
    original = jax.make_array_from_callback

    @functools.wraps(original)
    def make_array_from_callback(shape, sharding, data_callback, *args, **kwargs):
        first = []

        def callback(index):
            first.append(index)
            return data_callback(first[0])
        return original(shape, sharding, callback, *args, **kwargs)
    jax.make_array_from_callback = make_array_from_callback


def sin_drops_sharding():
    import jax
    import jax.numpy as jnp
    original = jnp.sin

    @functools.wraps(original)
    def sin(x):
        out = original(x)
        return jax.device_put(out, jax.local_devices()[0]) if hasattr(out, "sharding") else out
    jnp.sin = sin


def shard_shape_reversed():
    NamedSharding = _named_sharding()
    original = NamedSharding.shard_shape
    NamedSharding.shard_shape = lambda self, global_shape: tuple(original(self, global_shape))[::-1]


def addressable_devices_drop_one():
    NamedSharding = _named_sharding()
    original = NamedSharding.addressable_devices

    def addressable_devices(self):
        devices = set(original.__get__(self))
        return devices - {min(devices, key=lambda d: d.id)} if len(devices) > 1 else devices
    NamedSharding.addressable_devices = property(addressable_devices)


def equivalent_only_to_itself():
    _named_sharding().is_equivalent_to = lambda self, other, ndim: self is other


def device_put_canonicalizes_floats():
    import jax
    import numpy as np
    original = jax.device_put

    @functools.wraps(original)
    def device_put(x, device=None, **kwargs):
        if isinstance(x, np.ndarray) and x.dtype.kind in "fc":
            x = x + x.dtype.type(0)  # -0.0 becomes 0.0
        return original(x, device, **kwargs)
    jax.device_put = device_put


def device_get_widens_floats():
    import jax
    import numpy as np
    original = jax.device_get

    @functools.wraps(original)
    def device_get(x):
        out = original(x)
        return out.astype(np.float32) if getattr(out, "dtype", None) is not None and \
            out.dtype.kind == "f" and out.dtype.itemsize < 4 else out
    jax.device_get = device_get


def jit_reshards_output_afterwards():
    import jax
    original = jax.jit

    @functools.wraps(original)
    def jit(fun, *args, out_shardings=None, **kwargs):
        compiled = original(fun, *args, **kwargs)
        if out_shardings is None:
            return compiled
        return lambda *a, **k: jax.device_put(compiled(*a, **k), out_shardings)
    jax.jit = jit


def jit_ignores_out_shardings():
    import jax
    original = jax.jit

    @functools.wraps(original)
    def jit(fun, *args, out_shardings=None, **kwargs):
        return original(fun, *args, **kwargs)
    jax.jit = jit


def create_device_mesh_repeats():
    import numpy as np
    from jax.experimental import mesh_utils
    original = mesh_utils.create_device_mesh

    @functools.wraps(original)
    def create_device_mesh(*args, **kwargs):
        mesh = np.array(original(*args, **kwargs))
        flat = mesh.reshape(-1)
        flat[-1] = flat[0]
        return flat.reshape(mesh.shape)
    mesh_utils.create_device_mesh = create_device_mesh


FAULTS = {
    "swap-index-map": ("NamedSharding.devices_indices_map swaps two devices' blocks", swap_index_map),
    "shard-shape-never-rejects": ("NamedSharding.shard_shape answers for indivisible shapes",
                                  shard_shape_never_rejects),
    "never-fully-replicated": ("NamedSharding.is_fully_replicated is always False",
                               never_fully_replicated),
    "equivalent-always": ("Sharding.is_equivalent_to is always True", equivalent_always),
    "device-put-replicates": ("device_put ignores the spec and replicates", device_put_replicates),
    "device-put-accepts-indivisible": ("device_put replicates instead of rejecting an indivisible "
                                       "shape", device_put_accepts_indivisible),
    "replica-id-zero": ("every shard reports replica_id 0", replica_id_zero),
    "callback-gets-first-index": ("make_array_from_callback passes the first index every time",
                                  callback_gets_first_index),
    "sin-drops-sharding": ("jnp.sin returns its result on one device", sin_drops_sharding),
    "shard-shape-reversed": ("NamedSharding.shard_shape returns its dimensions reversed",
                             shard_shape_reversed),
    "addressable-devices-drop-one": ("NamedSharding.addressable_devices omits one device",
                                     addressable_devices_drop_one),
    "equivalent-only-to-itself": ("is_equivalent_to is True only for the very same object",
                                  equivalent_only_to_itself),
    "device-put-canonicalizes-floats": ("device_put turns -0.0 into 0.0 (adds zero to floats)",
                                        device_put_canonicalizes_floats),
    "device-get-widens-floats": ("device_get returns float16/bfloat16 as float32",
                                 device_get_widens_floats),
    "jit-reshards-output-afterwards": ("jit ignores out_shardings while compiling and moves the "
                                       "result afterwards", jit_reshards_output_afterwards),
    "jit-ignores-out-shardings": ("jit drops its out_shardings argument", jit_ignores_out_shardings),
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
