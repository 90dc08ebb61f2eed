"""Calling contexts (suites/test_calling_contexts.py): an entry point right eagerly and under jit
that goes wrong in one other context only: under vmap, inside a shard_map body, under grad, or on
an Explicit mesh (jax.random's draws among them)."""

from .random_samplers import random_module
from .registry import fault, jnp_module, lax_module, replacing, under_a_vmap, wrap


def _traced_by(value, kind: str) -> bool:
    """Whether ``value`` is a tracer of the trace ``kind`` names (its class name holds it)."""
    import jax
    return isinstance(value, jax.core.Tracer) and kind in type(value).__name__


@fault("ravel-under-vmap-reverses", "jnp.ravel of a batched value (under vmap) returns its elements in reverse",
       suites=("calling_contexts",))
@replacing(jnp_module, "ravel")
def ravel_under_vmap_reverses(original):
    def ravel(a, *args, **kwargs):
        out = original(a, *args, **kwargs)
        return out[::-1] if _traced_by(a, "Batch") else out
    return ravel


@fault("dot-in-a-shard-map-body-adds-one", "jnp.dot inside a shard_map body (manual mesh axes) adds one to its result",
       suites=("calling_contexts",))
@replacing(jnp_module, "dot")
def dot_in_a_shard_map_body_adds_one(original):
    def dot(a, b, *args, **kwargs):
        from conformance.jaxside import compat
        out = original(a, b, *args, **kwargs)
        return out + 1 if compat.manual_axes_in_context() else out
    return dot


@fault("reduce-sum-gradient-doubled", "lax.reduce_sum computes its value but passes back twice the gradient",
       suites=("calling_contexts",))
@replacing(lax_module, "reduce_sum")
def reduce_sum_gradient_doubled(original):
    def reduce_sum(operand, axes, *args, **kwargs):
        from jax import lax
        out = original(operand, axes, *args, **kwargs)
        return out + (out - lax.stop_gradient(out))
    return reduce_sum


@fault("full-like-on-an-explicit-mesh-ignores-its-fill", "jnp.full_like on an Explicit mesh fills with zeros",
       suites=("calling_contexts",))
@replacing(jnp_module, "full_like")
def full_like_on_an_explicit_mesh_ignores_its_fill(original):
    def full_like(a, fill_value, *args, **kwargs):
        import jax
        mesh = jax.sharding.get_abstract_mesh() if hasattr(jax.sharding, "get_abstract_mesh") else None
        explicit = mesh is not None and any("Explicit" in str(t) for t in getattr(mesh, "axis_types", ()))
        return original(a, 0 if explicit else fill_value, *args, **kwargs)
    return full_like


# The samplers the calling-contexts table draws from (its random rows).
CONTEXT_SAMPLERS = ("randint", "bits", "bernoulli", "categorical", "permutation", "choice")


def folding_the_device(original):
    """The sampler drawing, inside a shard_map body, from its key folded with the device's index."""
    def draw(key, *args, **kwargs):
        import jax
        from conformance.jaxside import compat
        if compat.manual_axes_in_context():
            key = jax.random.fold_in(key, jax.lax.axis_index("a") + 1)
        return original(key, *args, **kwargs)
    return draw


@fault("random-draws-in-a-shard-map-body-differ-per-device",
       "the jax.random samplers inside a shard_map body (manual mesh axes) draw from the key folded with the "
       "device's index, as if the key were per device", suites=("calling_contexts",))
def random_draws_in_a_shard_map_body_differ_per_device():
    random = random_module()
    for name in CONTEXT_SAMPLERS:
        wrap(random, name, folding_the_device)


@fault("random-bits-under-vmap-ignore-the-key", "jax.random.bits under vmap (a batched value around) draws from key(0)",
       suites=("calling_contexts",))
@replacing(random_module, "bits")
def bits_under_vmap_ignore_the_key(original):
    def bits(key, *args, **kwargs):
        import jax
        return original(jax.random.key(0) if under_a_vmap() else key, *args, **kwargs)
    return bits


@fault("constraint-in-a-shard-map-body-rolls-its-value",
       "lax.with_sharding_constraint inside a shard_map body (manual mesh axes) neither checks its sharding nor "
       "constrains: it returns its value rolled by one along its first dimension; at the top level it is right",
       suites=("shard_map_bodies",))
@replacing(lax_module, "with_sharding_constraint")
def constraint_in_a_shard_map_body_rolls_its_value(original):
    def with_sharding_constraint(x, shardings):
        from conformance.jaxside import compat
        if compat.manual_axes_in_context() and getattr(x, "ndim", 0):
            return jnp_module().roll(x, 1, 0)
        return original(x, shardings)
    return with_sharding_constraint
