"""Arrays assembled from pieces in any order, and multihost_utils broadcast/allgather."""

import numpy as np

from .registry import fault, jax_module, replacing


def multihost_utils_module():
    from jax.experimental import multihost_utils
    return multihost_utils


def mesh_order_devices(sharding):
    """A NamedSharding's addressable devices in its mesh's order (the device assignment)."""
    jax = jax_module()
    return [d for d in sharding.mesh.devices.flat if d.process_index == jax.process_index()]


@fault("single-device-arrays-by-position",
       "make_array_from_single_device_arrays gives the i-th piece to the mesh's i-th device, wherever it is",
       suites=("device_put",))
@replacing(jax_module, "make_array_from_single_device_arrays")
def single_device_arrays_by_position(original):
    jax = jax_module()

    def make_array_from_single_device_arrays(shape, sharding, arrays, **kwargs):
        if not isinstance(sharding, jax.sharding.NamedSharding):
            return original(shape, sharding, arrays, **kwargs)
        devices = mesh_order_devices(sharding)
        on = {next(iter(a.devices())).id for a in arrays}
        if len(devices) != len(arrays) or {d.id for d in devices} != on:
            return original(shape, sharding, arrays, **kwargs)  # the refusals stay as they are
        moved = [jax.device_put(a, d) for a, d in zip(arrays, devices)]
        return original(shape, sharding, moved, **kwargs)
    return make_array_from_single_device_arrays


@fault("single-device-arrays-unchecked",
       "make_array_from_single_device_arrays repairs wrong pieces (moves, crops them) instead of refusing",
       suites=("device_put",))
@replacing(jax_module, "make_array_from_single_device_arrays")
def single_device_arrays_unchecked(original):
    jax = jax_module()

    def make_array_from_single_device_arrays(shape, sharding, arrays, **kwargs):
        try:
            return original(shape, sharding, arrays, **kwargs)
        except ValueError:
            if not isinstance(sharding, jax.sharding.NamedSharding):
                raise
            crop = tuple(slice(0, n) for n in sharding.shard_shape(tuple(shape)))
            fixed = [jax.device_put(np.asarray(a)[crop], d) for a, d in zip(arrays, mesh_order_devices(sharding))]
            return original(shape, sharding, fixed, **kwargs)
    return make_array_from_single_device_arrays


@fault("callback-blocks-in-id-order",
       "make_array_from_callback gives the mesh's k-th device the block of the k-th device by id",
       suites=("device_put",))
@replacing(jax_module, "make_array_from_callback")
def callback_blocks_in_id_order(original):
    jax = jax_module()
    assemble = jax.make_array_from_single_device_arrays

    def make_array_from_callback(shape, sharding, data_callback, *args, **kwargs):
        if not isinstance(sharding, jax.sharding.NamedSharding) or not sharding.is_fully_addressable:
            return original(shape, sharding, data_callback, *args, **kwargs)
        index_map = sharding.addressable_devices_indices_map(tuple(shape))
        devices = mesh_order_devices(sharding)
        by_id = sorted(devices, key=lambda d: d.id)
        pieces = [jax.device_put(np.asarray(data_callback(index_map[i])), d) for i, d in zip(by_id, devices)]
        return assemble(tuple(shape), sharding, pieces)
    return make_array_from_callback


# A fault is planted in the leader (process 0) only: the followers run the real JAX. So each
# multiprocess fault still makes the call the followers make (it joins their collectives, or raises
# where they raise), and then changes what process 0 gets.
def is_global(x) -> bool:
    jax = jax_module()
    return isinstance(x, jax.Array) and not x.is_fully_addressable


@fault("allgather-untiled-tiles",
       "multihost_utils.process_allgather(tiled=False) of per-process values concatenates, as tiled=True does",
       suites=("multiprocess",))
@replacing(multihost_utils_module, "process_allgather")
def allgather_untiled_tiles(original):
    jax = jax_module()

    def process_allgather(in_tree, tiled=False):
        def gather(x):
            out = np.asarray(original(x, tiled=tiled))
            if tiled or is_global(x) or np.ndim(x) == 0:
                return out
            return out.reshape((-1, *out.shape[2:]))  # the stacked values, concatenated along axis 0
        return jax.tree.map(gather, in_tree)
    return process_allgather


@fault("allgather-stacks-in-reverse",
       "multihost_utils.process_allgather of per-process values puts the processes in reverse order",
       suites=("multiprocess",))
@replacing(multihost_utils_module, "process_allgather")
def allgather_stacks_in_reverse(original):
    jax = jax_module()

    def process_allgather(in_tree, tiled=False):
        def gather(x):
            out = np.asarray(original(x, tiled=tiled))
            if is_global(x):
                return out
            if not tiled or np.ndim(x) == 0:
                return out[::-1]
            return np.concatenate(np.split(out, jax.process_count())[::-1])
        return jax.tree.map(gather, in_tree)
    return process_allgather


@fault("allgather-global-untiled-returns-a-shard",
       "multihost_utils.process_allgather(global array, tiled=False) returns the first local shard instead of refusing",
       suites=("multiprocess",))
@replacing(multihost_utils_module, "process_allgather")
def allgather_global_untiled_returns_a_shard(original):
    def process_allgather(in_tree, tiled=False):
        try:
            return original(in_tree, tiled=tiled)
        except ValueError:
            if tiled or not is_global(in_tree):
                raise
            return np.asarray(in_tree.addressable_data(0))
    return process_allgather


@fault("broadcast-keeps-the-process-axis",
       "multihost_utils.broadcast_one_to_all returns each leaf with a leading process axis, shape (1, ...)",
       suites=("multiprocess",))
@replacing(multihost_utils_module, "broadcast_one_to_all")
def broadcast_keeps_the_process_axis(original):
    jax = jax_module()

    def broadcast_one_to_all(in_tree, is_source=None):
        return jax.tree.map(lambda v: np.expand_dims(np.asarray(v), 0), original(in_tree, is_source=is_source))
    return broadcast_one_to_all


@fault("broadcast-keeps-own-value", "multihost_utils.broadcast_one_to_all leaves each process its own value",
       suites=("multiprocess",))
@replacing(multihost_utils_module, "broadcast_one_to_all")
def broadcast_keeps_own_value(original):
    jax = jax_module()

    def broadcast_one_to_all(in_tree, is_source=None):
        original(in_tree, is_source=is_source)  # (the followers' collective, joined)
        return jax.tree.map(np.asarray, in_tree)
    return broadcast_one_to_all
