"""Regressions of the vocabulary's functions (``strategies/ops/vocabulary*.py``: the public jax.numpy
and jax.lax functions beyond the curated catalogue), each acting only on arrays laid out by a
NamedSharding, so that the unsharded oracle (on one device, or a numpy input) never meets it."""

from .registry import fault, jax_module, jnp_module, lax_module, wrap


def laid_out_by_a_named_sharding(x) -> bool:
    """Whether ``x`` is a concrete jax.Array laid out by a NamedSharding (a tracer is not concrete)."""
    jax = jax_module()
    return isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer) and \
        isinstance(x.sharding, jax.sharding.NamedSharding)


def off_by_one(y):
    """``y`` off by one (a bool negated), computed by operators, not by the functions the fault replaces."""
    jax = jax_module()
    if not isinstance(y, jax.Array) or isinstance(y, jax.core.Tracer):
        return y
    return ~y if y.dtype == bool else y + y.dtype.type(1)


def results_off_by_one_when_sharded(original):
    """``original`` with its results off by one where an argument is laid out by a NamedSharding;
    a function it returns (jnp.vectorize's) replaced the same way."""
    def replacement(*args, **kwargs):
        result = original(*args, **kwargs)
        if callable(result) and not isinstance(result, jax_module().Array):
            return results_off_by_one_when_sharded(result)
        if any(laid_out_by_a_named_sharding(x) for x in jax_module().tree.leaves((args, kwargs))):
            return jax_module().tree.map(off_by_one, result)
        return result
    return replacement


@fault("vocabulary-eager-sharded-off-by-one",
       "each jax.numpy/jax.lax function the vocabulary covers, called eagerly on a NamedSharding array, is off by one",
       suites=("sharding_invariance",))
def plant_vocabulary_off_by_one() -> None:
    from strategies.ops import VOCABULARY
    modules = {"jnp": jnp_module(), "lax": lax_module()}
    for name in sorted({c for op in VOCABULARY for c in op.covers}):
        short, function = name.split(".", 1)
        if hasattr(modules[short], function):
            wrap(modules[short], function, results_off_by_one_when_sharded)
