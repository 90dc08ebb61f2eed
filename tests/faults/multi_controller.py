"""Regressions only a multi-controller run can show (``pytest suites/ --processes N``): each acts
only on an array laid out over the devices of more than one process, or only in a job of several
processes, so a one-process run never meets it (``python -m tests.faults.killmap multi-controller``
measures both). One per family of what only several processes show: computation on arrays no
process holds whole (eager, and jitted: the training step's), device_put across processes,
collectives over axes that span processes, donation, and jax.random draws; the multihost_utils
faults of multihost.py are the family of process_allgather / broadcast_one_to_all."""

from .registry import fault, jax_module, jnp_module, lax_module, replacing


def over_several_processes(x) -> bool:
    """Whether ``x`` is a concrete jax.Array on the devices of more than one process (never in a
    one-process run; a tracer is not concrete)."""
    from conformance.jaxside.multicontroller import processes_of
    jax = jax_module()
    return isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer) and len(processes_of(x)) > 1


def off_by_one_beyond_process_0(x):
    """``x`` with the shards of every process but process 0 off by one (a bool negated); any other
    value as it is."""
    jax = jax_module()
    if not over_several_processes(x) or jax.process_index() == 0 or x.dtype == jax.numpy.dtype(object):
        return x
    import numpy as np
    try:
        pieces = []
        for shard in x.addressable_shards:
            data = np.asarray(shard.data)
            wrong = np.logical_not(data) if data.dtype == np.bool_ else (data + 1).astype(data.dtype)
            pieces.append(jax.device_put(wrong, shard.device))
    except (TypeError, ValueError):  # (a typed key array has no host value: left as it is)
        return x
    return jax.make_array_from_single_device_arrays(x.shape, x.sharding, pieces)


def each_leaf(value):
    return jax_module().tree.map(off_by_one_beyond_process_0, value)


def results_off_by_one(original):
    """``original`` whose results pass through ``off_by_one_beyond_process_0`` (a concrete result:
    under a trace its tracers pass as they are)."""
    return lambda *args, **kwargs: each_leaf(original(*args, **kwargs))


fault("eager-sin-across-processes-off-by-one",
      "eager jnp.sin of an array split over processes: process 1's shards of the result off by one",
      suites=("sharding_invariance",))(replacing(jnp_module, "sin")(results_off_by_one))


@fault("jit-results-across-processes-off-by-one",
       "a jitted function's results laid out over several processes: process 1's shards off by one",
       suites=("training",))
@replacing(jax_module, "jit")
def jit_results_off_by_one(original):
    def jit(fun, *args, **kwargs):
        return Corrupting(original(fun, *args, **kwargs))
    return jit


class Corrupting:
    """A jitted function whose results pass through ``off_by_one_beyond_process_0``; everything
    else (lower, trace, eval_shape, ...) is the jitted function's own."""

    def __init__(self, jitted):
        self._jitted = jitted

    def __call__(self, *args, **kwargs):
        return each_leaf(self._jitted(*args, **kwargs))

    def __getattr__(self, name):
        return getattr(self._jitted, name)

    def __get__(self, obj, objtype=None):  # (a jitted method)
        return self if obj is None else (lambda *a, **k: self(obj, *a, **k))


fault("device-put-across-processes-off-by-one",
      "device_put onto a sharding over several processes: process 1's shards off by one",
      suites=("congruence", "device_put"))(replacing(jax_module, "device_put")(results_off_by_one))


@fault("psum-across-processes-adds-one",
       "psum over mesh axes wider than one process's devices adds one to the sum",
       suites=("shard_map_bodies", "multiprocess"))
@replacing(lax_module, "psum")
def psum_across_processes_adds_one(original):
    jax = jax_module()

    def psum(x, axis_name, **kwargs):
        out = original(x, axis_name, **kwargs)
        names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
        size = 1
        for name in names:  # (before jax.lax.axis_size: psum of 1 is the axis size, a constant)
            size *= jax.lax.axis_size(name) if hasattr(jax.lax, "axis_size") else original(1, name)
        if size <= jax.local_device_count():
            return out
        return jax.tree.map(lambda v: v + 1 if jax.numpy.issubdtype(v.dtype, jax.numpy.number) else v, out)
    return psum


@fault("donation-ignored-across-processes",
       "in a job of several processes jax.jit drops donate_argnums: donated inputs stay alive",
       suites=("control_flow",))
@replacing(jax_module, "jit")
def donation_ignored_across_processes(original):
    jax = jax_module()

    def jit(fun, *args, donate_argnums=None, donate_argnames=None, **kwargs):
        if jax.process_count() > 1:
            return original(fun, *args, **kwargs)
        return original(fun, *args, **{**kwargs, **({"donate_argnums": donate_argnums} if donate_argnums is not None
                                                    else {}),
                                       **({"donate_argnames": donate_argnames} if donate_argnames is not None
                                          else {})})
    return jit


def random_module():
    import jax.random
    return jax.random


fault("eager-random-uniform-across-processes-off-by-one",
      "eager jax.random.uniform onto devices of several processes: process 1's shards off by one",
      suites=("random_samplers",))(replacing(random_module, "uniform")(results_off_by_one))


ACROSS_PROCESSES = ("eager-sin-across-processes-off-by-one", "jit-results-across-processes-off-by-one",
                    "device-put-across-processes-off-by-one", "psum-across-processes-adds-one",
                    "donation-ignored-across-processes", "eager-random-uniform-across-processes-off-by-one",
                    "broadcast-keeps-own-value")
"""The faults of a multi-controller kill map, one per family (the last: multihost_utils)."""
