"""pmap's axes, static arguments, tracing and size checks."""

import numpy as np

from .registry import fault, jax_module, replacing


@fault("pmap-ignores-out-axes", "jax.pmap drops out_axes and stacks along axis 0",
       suites=("pmap",))
@replacing(jax_module, "pmap")
def pmap_ignores_out_axes(original):
    return lambda fun, *args, out_axes=0, **kwargs: original(fun, *args, **kwargs)


@fault("pmap-negative-axes-map-axis-zero", "jax.pmap maps (and stacks) a negative in_axes/out_axes along axis 0",
       suites=("pmap",))
@replacing(jax_module, "pmap")
def pmap_negative_axes_map_axis_zero(original):
    def pmap(fun, *args, in_axes=0, out_axes=0, **kwargs):
        in_axes = 0 if isinstance(in_axes, int) and in_axes < 0 else in_axes
        out_axes = 0 if isinstance(out_axes, int) and out_axes < 0 else out_axes
        return original(fun, *args, in_axes=in_axes, out_axes=out_axes, **kwargs)
    return pmap


@fault("pmap-maps-unmapped-arguments", "jax.pmap maps in_axes=None arguments along axis 0",
       suites=("pmap",))
@replacing(jax_module, "pmap")
def pmap_maps_unmapped_arguments(original):
    def pmap(fun, *args, in_axes=0, **kwargs):
        if isinstance(in_axes, tuple):
            in_axes = tuple(0 if a is None else a for a in in_axes)
        return original(fun, *args, in_axes=in_axes, **kwargs)
    return pmap


@fault("pmap-retraces-every-call", "jax.pmap traces again on every call",
       suites=("pmap",))
@replacing(jax_module, "pmap")
def pmap_retraces_every_call(original):
    jax = jax_module()

    def pmap(fun, *args, **kwargs):
        def call(*a, **k):
            jax.clear_caches()
            return original(fun, *args, **kwargs)(*a, **k)
        return call
    return pmap


@fault("pmap-freezes-static-arguments", "jax.pmap keeps the first static argument it saw",
       suites=("pmap",))
@replacing(jax_module, "pmap")
def pmap_freezes_static_arguments(original):
    def pmap(fun, *args, static_broadcasted_argnums=(), **kwargs):
        if not static_broadcasted_argnums:
            return original(fun, *args, **kwargs)
        first = {}

        def frozen(*a):
            first.setdefault("k", a[1])
            return fun(a[0], first["k"], *a[2:])
        return original(frozen, *args, static_broadcasted_argnums=static_broadcasted_argnums, **kwargs)
    return pmap


@fault("pmap-truncates-mapped-axes",
       "jax.pmap cuts every mapped axis to the shortest one or to the device count instead of refusing",
       suites=("pmap",))
@replacing(jax_module, "pmap")
def pmap_truncates_mapped_axes(original):
    jax = jax_module()

    def pmap(fun, *args, devices=None, **kwargs):
        compiled = original(fun, *args, devices=devices, **kwargs)
        limit = len(devices) if devices is not None else jax.local_device_count()

        def call(*a):
            sizes = [np.shape(x)[0] for x in a if np.ndim(x) > 0]
            size = min(sizes + [limit])
            return compiled(*[x[:size] if np.ndim(x) > 0 else x for x in a])
        return call
    return pmap


@fault("pmap-truncates-inconsistent-sizes",
       "jax.pmap maps arguments of different sizes along axis 0 over the smallest size, instead of refusing",
       suites=("pmap",))
@replacing(jax_module, "pmap")
def pmap_truncates_inconsistent_sizes(original):
    def pmap(fun, *args, **kwargs):
        mapped = original(fun, *args, **kwargs)

        def call(*xs):
            sizes = [np.shape(x)[0] for x in xs if np.ndim(x) > 0]
            if kwargs.get("in_axes", 0) != 0 or len(set(sizes)) < 2:
                return mapped(*xs)
            return mapped(*(x[:min(sizes)] if np.ndim(x) > 0 else x for x in xs))
        return call
    return pmap


@fault("pmap-ignores-its-devices", "jax.pmap drops its devices= argument and maps over the default devices",
       suites=("pmap",))
@replacing(jax_module, "pmap")
def pmap_ignores_its_devices(original):
    return lambda fun, *args, devices=None, **kwargs: original(fun, *args, **kwargs)
