"""Putting arrays on devices and reading them back, and computation that should keep its input's
layout."""

import numpy as np

from .registry import fault, jax_module, jnp_module, named_sharding_class, replacing, replicated


@fault("device-put-replicates", "device_put ignores the spec and replicates",
       suites=("device_put", "congruence"))
@replacing(jax_module, "device_put")
def device_put_replicates(original):
    NamedSharding = named_sharding_class()

    def device_put(x, device=None, **kwargs):
        return original(x, replicated(device) if isinstance(device, NamedSharding) else device, **kwargs)
    return device_put


@fault("device-put-shifts-blocks", "device_put onto a sharding hands each device its neighbour's block",
       suites=("device_put", "sharding_invariance"))
@replacing(jax_module, "device_put")
def device_put_shifts_blocks(original):
    jax = jax_module()
    NamedSharding = named_sharding_class()

    def device_put(x, device=None, **kwargs):
        out = original(x, device, **kwargs)
        if not isinstance(device, NamedSharding) or not isinstance(out, jax.Array) \
                or device.is_fully_replicated or out.size == 0:
            return out
        host = np.asarray(out)
        index_map = device.addressable_devices_indices_map(out.shape)
        devices = list(index_map)  # each device gets the next one's block
        pieces = [original(host[index_map[devices[(i + 1) % len(devices)]]], d)
                  for i, d in enumerate(devices)]
        return jax.make_array_from_single_device_arrays(out.shape, device, pieces)
    return device_put


@fault("device-put-leaves-a-cut-array-cut", "device_put of a cut jax.Array onto a replicated sharding returns it "
       "as it was laid out", suites=("device_put",))
@replacing(jax_module, "device_put")
def device_put_leaves_a_cut_array_cut(original):
    jax = jax_module()
    NamedSharding = named_sharding_class()

    def device_put(x, device=None, **kwargs):
        if isinstance(x, jax.Array) and isinstance(device, NamedSharding) and device.is_fully_replicated \
                and not x.sharding.is_fully_replicated:
            return x
        return original(x, device, **kwargs)
    return device_put


@fault("device-put-accepts-indivisible", "device_put replicates instead of rejecting an indivisible shape",
       suites=("congruence",))
@replacing(jax_module, "device_put")
def device_put_accepts_indivisible(original):
    jax = jax_module()

    def device_put(x, device=None, **kwargs):
        try:
            return original(x, device, **kwargs)
        except ValueError:
            if not isinstance(device, jax.sharding.Sharding):
                raise
            devices = np.array(sorted(device.device_set, key=lambda d: d.id))
            fallback = named_sharding_class()(jax.sharding.Mesh(devices, ("r",)), jax.sharding.PartitionSpec())
            return original(x, fallback, **kwargs)
    return device_put


@fault("device-put-canonicalizes-floats", "device_put turns -0.0 into 0.0 (adds zero to floats)",
       suites=("device_put",))
@replacing(jax_module, "device_put")
def device_put_canonicalizes_floats(original):
    def device_put(x, device=None, **kwargs):
        if isinstance(x, np.ndarray) and x.dtype.kind in "fc":
            x = x + x.dtype.type(0)  # -0.0 becomes 0.0
        return original(x, device, **kwargs)
    return device_put


@fault("device-get-widens-floats", "device_get returns float16/bfloat16 as float32",
       suites=("device_put",))
@replacing(jax_module, "device_get")
def device_get_widens_floats(original):
    def device_get(x):
        out = original(x)
        narrow = isinstance(out, np.ndarray) and out.dtype.kind == "f" and out.dtype.itemsize < 4
        return out.astype(np.float32) if narrow else out
    return device_get


@fault("callback-gets-first-index", "make_array_from_callback passes the first index every time",
       suites=("device_put",))
@replacing(jax_module, "make_array_from_callback")
def callback_gets_first_index(original):
    def make_array_from_callback(shape, sharding, data_callback, *args, **kwargs):
        first = []

        def callback(index):
            first.append(index)
            return data_callback(first[0])
        return original(shape, sharding, callback, *args, **kwargs)
    return make_array_from_callback


@fault("sin-drops-sharding", "jnp.sin returns its result on one device",
       suites=("device_put",))
@replacing(jnp_module, "sin")
def sin_drops_sharding(original):
    jax = jax_module()

    def sin(x):
        out = original(x)
        return jax.device_put(out, jax.local_devices()[0]) if hasattr(out, "sharding") else out
    return sin
