"""Calling contexts (suites/test_calling_contexts.py): an entry point right eagerly and under jit
that goes wrong in one other context only: under vmap, inside a shard_map body, under grad, or on
an Explicit mesh."""

from .registry import fault, jnp_module, lax_module, replacing


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
