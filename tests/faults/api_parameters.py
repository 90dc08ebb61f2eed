"""Planted faults for suites/test_api_parameters.py, one per family of its rows: a parameter of a
transformation, a device query, a placement, a sharding helper, an AOT stage or a collective
silently ignored or read the wrong way round."""

from .registry import fault, jax_module, lax_module, replacing


@fault("jit-drops-keep-unused",
       "jax.jit ignores keep_unused=True and prunes an unused argument from the executable",
       suites=("api_parameters",))
@replacing(jax_module, "jit")
def jit_drops_keep_unused(original):
    def jit(*args, **kwargs):
        kwargs.pop("keep_unused", None)
        return original(*args, **kwargs)
    return jit


@fault("local-devices-ignores-process-index",
       "jax.local_devices(process_index=i) answers with this process's devices whatever i is",
       suites=("api_parameters",))
@replacing(jax_module, "local_devices")
def local_devices_ignores_process_index(original):
    def local_devices(process_index=None, backend=None, host_id=None):
        return original(backend=backend)
    return local_devices


@fault("device-put-aliases-despite-may-alias-false",
       "jax.device_put(x, x's own sharding, may_alias=False) returns x itself instead of a copy",
       suites=("api_parameters",))
@replacing(jax_module, "device_put")
def device_put_aliases_despite_may_alias_false(original):
    def device_put(x, device=None, *args, may_alias=None, **kwargs):
        if may_alias is False and getattr(x, "sharding", None) == device:
            return x
        return original(x, device, *args, **({} if may_alias is None else {"may_alias": may_alias}), **kwargs)
    return device_put


@fault("single-device-sharding-drops-memory-kind",
       "jax.sharding.make_single_device_sharding ignores memory_kind and places in the device's default memory",
       suites=("api_parameters",))
@replacing(lambda: jax_module().sharding, "make_single_device_sharding")
def single_device_sharding_drops_memory_kind(original):
    def make_single_device_sharding(device, *, memory_kind=None):
        return original(device)
    return make_single_device_sharding


@fault("lowered-as-text-drops-debug-info",
       "jax.stages.Lowered.as_text(debug_info=True) leaves out the source locations", suites=("api_parameters",))
@replacing(lambda: jax_module().stages.Lowered, "as_text")
def lowered_as_text_drops_debug_info(original):
    def as_text(self, dialect=None, *, debug_info=False):
        return original(self, dialect)
    return as_text


@fault("pshuffle-reads-perm-as-destinations",
       "lax.pshuffle sends index i to perm[i] instead of taking index i from perm[i]", suites=("api_parameters",))
@replacing(lax_module, "pshuffle")
def pshuffle_reads_perm_as_destinations(original):
    def pshuffle(x, axis_name, perm):
        return lax_module().ppermute(x, axis_name, perm=[(i, int(p)) for i, p in enumerate(perm)])
    return pshuffle
