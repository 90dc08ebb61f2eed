"""The collectives, within a process and across processes."""

import numpy as np

from .registry import cycle, fault, jax_module, jnp_module, lax_module, replacing, under_a_vmap, wrap


def multihost_utils_module():
    from jax.experimental import multihost_utils
    return multihost_utils


@fault("psum-divides-by-axis-size", "lax.psum returns the mean (divides by the axis size)",
       suites=("collectives", "pmap", "shard_map_bodies", "autodiff", "vmap", "argument_forms"))
@replacing(lax_module, "psum")
def psum_divides_by_axis_size(original):
    def psum(x, axis_name, **kwargs):
        total = original(x, axis_name, **kwargs)
        size = original(1, axis_name, **kwargs)
        return total // size if total.dtype.kind in "iub" else total / size
    return psum


@fault("pmean-divides-twice", "lax.pmean divides by the axis size twice",
       suites=("collectives",))
@replacing(lax_module, "pmean")
def pmean_divides_twice(original):
    lax = lax_module()
    return lambda x, axis_name, **kwargs: original(x, axis_name, **kwargs) / lax.psum(1, axis_name, **kwargs)


@fault("pmax-is-pmin", "lax.pmax returns the minimum",
       suites=("collectives", "shard_map_bodies"))
@replacing(lax_module, "pmax")
def pmax_is_pmin(original):
    lax = lax_module()
    return lambda x, axis_name, **kwargs: lax.pmin(x, axis_name, **kwargs)


@fault("pmin-is-pmax", "lax.pmin returns the maximum",
       suites=("collectives",))
@replacing(lax_module, "pmin")
def pmin_is_pmax(original):
    lax = lax_module()
    return lambda x, axis_name, **kwargs: lax.pmax(x, axis_name, **kwargs)


@fault("all-gather-reversed", "lax.all_gather stacks (or tiles) the devices in reverse order",
       suites=("collectives", "argument_forms"))
@replacing(lax_module, "all_gather")
def all_gather_reversed(original):
    def all_gather(x, axis_name, *, axis=0, tiled=False, **kwargs):
        gathered = original(x, axis_name, axis=axis, tiled=tiled, **kwargs)
        if not tiled:
            return jnp_module().flip(gathered, axis=axis)
        jnp = jnp_module()
        size = lax_module().psum(1, axis_name)  # (the axis size: a Python int)
        return jnp.concatenate(jnp.split(gathered, size, axis=axis)[::-1], axis=axis)
    return all_gather


@fault("ppermute-inverse", "lax.ppermute sends along the inverse permutation",
       suites=("collectives", "argument_forms"))
@replacing(lax_module, "ppermute")
def ppermute_inverse(original):
    return lambda x, axis_name, perm: original(x, axis_name, perm=[(dst, src) for src, dst in perm])


@fault("ppermute-empty-perm-is-identity", "lax.ppermute with an empty perm returns its operand instead of zeros",
       suites=("collectives",))
@replacing(lax_module, "ppermute")
def ppermute_empty_perm_is_identity(original):
    return lambda x, axis_name, perm: x if len(perm) == 0 else original(x, axis_name, perm=perm)


@fault("axis-index-reversed", "lax.axis_index counts from the other end",
       suites=("collectives",))
@replacing(lax_module, "axis_index")
def axis_index_reversed(original):
    lax = lax_module()
    return lambda axis_name: lax.psum(1, axis_name) - 1 - original(axis_name)


@fault("psum-scatter-shifted", "lax.psum_scatter hands each device its neighbour's chunk",
       suites=("collectives", "argument_forms"))
@replacing(lax_module, "psum_scatter")
def psum_scatter_shifted(original):
    lax = lax_module()

    def psum_scatter(x, axis_name, *, scatter_dimension=0, tiled=False, **kwargs):
        out = original(x, axis_name, scatter_dimension=scatter_dimension, tiled=tiled, **kwargs)
        return lax.ppermute(out, axis_name, perm=cycle(lax.psum(1, axis_name)))
    return psum_scatter


@fault("all-to-all-shifted", "lax.all_to_all hands each device its neighbour's result",
       suites=("collectives", "argument_forms"))
@replacing(lax_module, "all_to_all")
def all_to_all_shifted(original):
    lax = lax_module()

    def all_to_all(x, axis_name, split_axis, concat_axis, **kwargs):
        out = original(x, axis_name, split_axis, concat_axis, **kwargs)
        return lax.ppermute(out, axis_name, perm=cycle(lax.psum(1, axis_name)))
    return all_to_all


@fault("process-allgather-drops-a-process",
       "multihost_utils.process_allgather returns zeros for the last process's rows",
       suites=("multiprocess",))
@replacing(multihost_utils_module, "process_allgather")
def process_allgather_drops_a_process(original):
    jax = jax_module()

    def process_allgather(x, tiled=False):
        out = np.array(original(x, tiled=tiled))
        if out.ndim and jax.process_count() > 1:
            out[out.shape[0] - max(1, out.shape[0] // jax.process_count()):] = 0
        return out
    return process_allgather


@fault("collectives-under-a-named-vmap-misread-the-batch",
       "under vmap with an axis name (pmap and shard_map right): all_gather gives the gathered batch in reverse "
       "order, pshuffle applies its permutation's inverse, pswapaxes reverses the swapped axis, axis_size counts one "
       "member more", suites=("collectives",))
def collectives_under_a_named_vmap_misread_the_batch():
    lax, jnp = lax_module(), jnp_module()

    def all_gather(original):
        def gather(x, axis_name, **kwargs):
            gathered = original(x, axis_name, **kwargs)
            return jnp.flip(gathered, kwargs.get("axis", 0)) if under_a_vmap() else gathered
        return gather

    def pshuffle(original):
        def shuffle(x, axis_name, perm):
            inverse = [perm.index(i) for i in range(len(perm))] if under_a_vmap() else perm
            return original(x, axis_name, inverse)
        return shuffle

    def pswapaxes(original):
        def swap(x, axis_name, axis, **kwargs):
            swapped = original(x, axis_name, axis, **kwargs)
            return jnp.flip(swapped, axis) if under_a_vmap() else swapped
        return swap

    def axis_size(original):
        return lambda axis_name: original(axis_name) + (1 if under_a_vmap() else 0)

    for name, make in (("all_gather", all_gather), ("pshuffle", pshuffle), ("pswapaxes", pswapaxes),
                       ("axis_size", axis_size)):
        if hasattr(lax, name):
            wrap(lax, name, make)


@fault("data-moving-collectives-gradients-doubled",
       "the gradient through pbroadcast, pshuffle, pswapaxes, pcast and ragged_all_to_all is twice what it is; "
       "their values unchanged", suites=("collectives",))
def data_moving_collectives_gradients_doubled():
    lax, jnp = lax_module(), jnp_module()

    def doubled(original):
        def call(*args, **kwargs):
            result = original(*args, **kwargs)
            if not jnp.issubdtype(result.dtype, jnp.floating):
                return result
            return 2 * result - lax.stop_gradient(result)  # (2r - r is r, exactly; its derivative is 2)
        return call

    for name in ("pbroadcast", "pshuffle", "pswapaxes", "pcast", "ragged_all_to_all"):
        if hasattr(lax, name):
            wrap(lax, name, doubled)
