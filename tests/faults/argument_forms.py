"""The argument forms the API's signatures allow (suites/test_argument_forms.py) and the
multi-host utilities on one process (suites/test_multihost_utils.py): a form read as another, a
keyword dropped, a sequence type refused, a one-process shortcut that forgets the multi-process
meaning."""

import numpy as np

from .registry import fault, jax_module, lax_module, replacing


def multihost_utils_module():
    from jax.experimental import multihost_utils
    return multihost_utils


@fault("all-gather-reads-a-negative-axis-as-zero", "lax.all_gather gathers along axis 0 when given a negative axis",
       suites=("argument_forms",))
@replacing(lax_module, "all_gather")
def all_gather_reads_a_negative_axis_as_zero(original):
    def all_gather(x, axis_name, *args, axis=0, **kwargs):
        return original(x, axis_name, *args, axis=0 if axis < 0 else axis, **kwargs)
    return all_gather


@fault("device-put-drops-a-keyword-device", "jax.device_put(x, device=s) ignores the keyword and places x by default",
       suites=("argument_forms",))
@replacing(jax_module, "device_put")
def device_put_drops_a_keyword_device(original):
    def device_put(x, *args, **kwargs):
        kwargs.pop("device", None)
        return original(x, *args, **kwargs)
    return device_put


@fault("single-device-arrays-refuse-a-tuple",
       "jax.make_array_from_single_device_arrays refuses its arrays given as a tuple (jax-ml/jax#27303 again)",
       suites=("argument_forms",))
@replacing(jax_module, "make_array_from_single_device_arrays")
def single_device_arrays_refuse_a_tuple(original):
    def make(shape, sharding, arrays, *args, **kwargs):
        if isinstance(arrays, tuple):
            raise TypeError("incompatible function arguments: arrays must be a list")
        return original(shape, sharding, arrays, *args, **kwargs)
    return make


@fault("process-allgather-forgets-to-stack-on-one-process",
       "multihost_utils.process_allgather(x, tiled=False) on one process returns x unstacked (jax-ml/jax#25783 again)",
       suites=("multihost_utils",))
@replacing(multihost_utils_module, "process_allgather")
def process_allgather_forgets_to_stack_on_one_process(original):
    jax = jax_module()

    def process_allgather(in_tree, tiled=False):
        if jax.process_count() == 1 and not tiled:
            return jax.tree_util.tree_map(np.asarray, in_tree)
        return original(in_tree, tiled=tiled)
    return process_allgather


@fault("host-local-to-global-replicates", "multihost_utils.host_local_array_to_global_array ignores its pspecs "
       "and replicates", suites=("multihost_utils",))
@replacing(multihost_utils_module, "host_local_array_to_global_array")
def host_local_to_global_replicates(original):
    from jax.sharding import PartitionSpec

    def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
        return original(local_inputs, global_mesh, PartitionSpec())
    return host_local_array_to_global_array


@fault("device-put-of-an-empty-spec-lands-on-one-device",
       "jax.device_put onto NamedSharding(mesh, P()) puts the value on the mesh's first device only",
       suites=("argument_forms",))
@replacing(jax_module, "device_put")
def device_put_of_an_empty_spec_lands_on_one_device(original):
    jax = jax_module()

    def device_put(x, device=None, *args, **kwargs):
        if isinstance(device, jax.sharding.NamedSharding) and not tuple(device.spec):
            device = jax.sharding.SingleDeviceSharding(device.mesh.devices.flat[0])
        return original(x, device, *args, **kwargs)
    return device_put


@fault("concatenate-joins-a-sequence-reversed", "jnp.concatenate joins its arrays in reverse order",
       suites=("argument_forms",))
@replacing(lambda: jax_module().numpy, "concatenate")
def concatenate_joins_a_sequence_reversed(original):
    def concatenate(arrays, *args, **kwargs):
        return original(type(arrays)(reversed(list(arrays))) if isinstance(arrays, (list, tuple)) else arrays,
                        *args, **kwargs)
    return concatenate


@fault("partition-spec-flattens-nested-tuples",
       "PartitionSpec accepts a nested tuple in an entry, flattening it", suites=("argument_forms",))
@replacing(lambda: jax_module().sharding, "PartitionSpec")
def partition_spec_flattens_nested_tuples(original):
    def flat(entry):
        if not isinstance(entry, tuple):
            return entry
        return tuple(name for part in entry for name in (flat(part) if isinstance(part, tuple) else (part,)))

    def partition_spec(*entries, **kwargs):
        return original(*(flat(e) for e in entries), **kwargs)
    return partition_spec


@fault("broadcast-one-to-all-casts-to-float32", "multihost_utils.broadcast_one_to_all returns every leaf as float32",
       suites=("multihost_utils",))
@replacing(multihost_utils_module, "broadcast_one_to_all")
def broadcast_one_to_all_casts_to_float32(original):
    jax = jax_module()

    def broadcast_one_to_all(in_tree, is_source=None):
        out = original(in_tree, is_source=is_source) if is_source is not None else original(in_tree)
        return jax.tree_util.tree_map(lambda v: np.asarray(v, np.float32), out)
    return broadcast_one_to_all


@fault("assert-equal-fails-on-one-process", "multihost_utils.assert_equal raises AssertionError on one process",
       suites=("multihost_utils",))
@replacing(multihost_utils_module, "assert_equal")
def assert_equal_fails_on_one_process(original):
    def assert_equal(in_tree, fail_message=""):
        raise AssertionError(f"{fail_message}. Expected: ...; got: {in_tree}.")
    return assert_equal
