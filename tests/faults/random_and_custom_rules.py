"""jax.random on sharded keys, and custom_vjp/custom_jvp rules in sharded code."""

import functools
import math
import threading

from .registry import fault, jax_module, jnp_module, wrap

_SHARDED_TRACE = threading.local()


def _devices_of(shardings) -> int:
    """The most devices any NamedSharding in ``shardings`` (a sharding or a tree of them) spans."""
    jax = jax_module()
    leaves = jax.tree_util.tree_leaves(shardings, is_leaf=lambda s: isinstance(s, jax.sharding.Sharding))
    return max([leaf.mesh.size for leaf in leaves if isinstance(leaf, jax.sharding.NamedSharding)] or [1])


def _mark_sharded_traces(jax):
    """Wrap jax.jit so that tracing a function jitted with out_shardings records how many devices
    they span (the samplers below read it)."""
    def make(original):
        def jit(fun, *args, **kwargs):
            devices = _devices_of(kwargs.get("out_shardings"))
            if devices > 1:
                inner = fun

                @functools.wraps(inner)
                def fun(*a, **k):
                    _SHARDED_TRACE.devices = devices
                    try:
                        return inner(*a, **k)
                    finally:
                        _SHARDED_TRACE.devices = 1
            return original(fun, *args, **kwargs)
        return jit
    wrap(jax, "jit", make)


def _repeated(original, *, array_argument: bool = False):
    """``original`` (a sampler of ``key, shape, ...``; or, ``array_argument``, permutation of ``key,
    x``) drawing, inside a sharded trace over n devices, one block per device from the same key:
    k = gcd(n, size) equal blocks of the flattened result (permutation: of x's leading dimension)."""
    jnp = jnp_module()

    def sampler(key, shape=(), *args, **kwargs):
        devices = getattr(_SHARDED_TRACE, "devices", 1)
        if array_argument:
            x = shape
            k = math.gcd(devices, x.shape[0]) if getattr(x, "ndim", 0) else 1
            if k <= 1:
                return original(key, x, *args, **kwargs)
            blocks = jnp.split(x, k, axis=0)
            return jnp.concatenate([original(key, b, *args, **kwargs) for b in blocks], axis=0)
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
        size = math.prod(dims)
        k = math.gcd(devices, size)
        if k <= 1:
            return original(key, shape, *args, **kwargs)
        block = original(key, (size // k,), *args, **kwargs)
        return jnp.concatenate([block] * k, axis=0).reshape(dims)
    return sampler


@fault("random-draws-repeat-per-shard",
       "a jax.random draw jitted with out_shardings over n devices draws one block per device from the same key "
       "(repeated blocks)",
       suites=("random",))
def random_draws_repeat_per_shard():
    jax = jax_module()
    _mark_sharded_traces(jax)
    for name in ("uniform", "normal", "bits", "randint", "split"):
        wrap(jax.random, name, _repeated)
    wrap(jax.random, "permutation", lambda original: _repeated(original, array_argument=True))


@fault("threefry-partitionable-default-flipped",
       "jax_threefry_partitionable starts at the other value than the changelog states (as before or after 0.5.0)",
       suites=("random",))
def threefry_partitionable_default_flipped():
    jax = jax_module()
    jax.config.update("jax_threefry_partitionable", not jax.config.jax_threefry_partitionable)


@fault("custom-vjp-bwd-summed-over-devices",
       "a custom_vjp function's bwd cotangents come back multiplied by the device count "
       "(as if each device's partial cotangent were summed)",
       suites=("autodiff",))
def custom_vjp_bwd_summed_over_devices():
    jax = jax_module()

    def make(original):
        def __call__(self, *args, **kwargs):
            bwd = self.bwd
            if bwd is not None and not getattr(bwd, "faulted", False):
                def summed(res, g):
                    return jax.tree_util.tree_map(lambda c: c * jax.device_count(), bwd(res, g))
                summed.faulted = True
                self.bwd = summed
            return original(self, *args, **kwargs)
        return __call__
    wrap(jax.custom_vjp, "__call__", make)


@fault("custom-jvp-rule-dropped",
       "a custom_jvp function is differentiated as its primal function, its custom jvp rule ignored",
       suites=("autodiff",))
def custom_jvp_rule_dropped():
    jax = jax_module()

    def make(original):
        def __call__(self, *args, **kwargs):
            return self.fun(*args, **kwargs)
        return __call__
    wrap(jax.custom_jvp, "__call__", make)
