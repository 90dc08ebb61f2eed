"""UNCONSTRAINED constraints, reshapes across sharded dimensions, sharded contractions."""

from .registry import fault, jax_module, jnp_module, lax_module, replacing, wrap


def _has_unconstrained(spec) -> bool:
    marker = type(spec).UNCONSTRAINED
    return any(entry is marker for entry in spec)


@fault("unconstrained-constraint-constrains-nothing",
       "with_sharding_constraint of a spec holding UNCONSTRAINED leaves every dimension unconstrained "
       "(the asked axes dropped)",
       suites=("operand_layouts",))
@replacing(lax_module, "with_sharding_constraint")
def unconstrained_constraint_constrains_nothing(original):
    NamedSharding = jax_module().sharding.NamedSharding

    def with_sharding_constraint(x, shardings):
        if isinstance(shardings, NamedSharding) and _has_unconstrained(shardings.spec):
            marker = type(shardings.spec).UNCONSTRAINED
            shardings = NamedSharding(shardings.mesh, type(shardings.spec)(*(marker for _ in range(x.ndim))))
        return original(x, shardings)
    return with_sharding_constraint


@fault("unconstrained-accepted-on-explicit-meshes",
       "NamedSharding takes UNCONSTRAINED on a mesh with no Auto axis as None (replicated) instead of refusing it",
       suites=("operand_layouts",))
def unconstrained_accepted_on_explicit_meshes():
    sharding = jax_module().sharding
    original = sharding.NamedSharding

    def named_sharding(mesh, spec, *args, **kwargs):
        types = getattr(mesh, "axis_types", None) or ()
        names = [getattr(t, "name", str(t)) for t in (types.keys() if isinstance(types, dict) else types)]
        if names and "Auto" not in names and _has_unconstrained(spec):
            marker = type(spec).UNCONSTRAINED
            spec = type(spec)(*(None if entry is marker else entry for entry in spec))
        return original(mesh, spec, *args, **kwargs)
    sharding.NamedSharding = named_sharding


@fault("reshape-merges-and-splits-column-major",
       "jnp.reshape that merges or splits dimensions does it in column-major order "
       "(a sharded dimension's blocks out of order)",
       suites=("operand_layouts",))
@replacing(jnp_module, "reshape")
def reshape_merges_and_splits_column_major(original):
    def reshape(a, *args, **kwargs):
        shape = args[0] if args else kwargs.get("shape", kwargs.get("newshape"))
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if len(shape) != len(a.shape) and "order" not in kwargs:
            return original(a, shape, order="F")
        return original(a, *args, **kwargs)
    return reshape


def _first_halves(x, dims):
    """``x`` cut to the first half of each of ``dims`` (those of an even side > 1)."""
    lax = lax_module()
    for d in dims:
        if x.shape[d] > 1 and x.shape[d] % 2 == 0:
            x = lax.slice_in_dim(x, 0, x.shape[d] // 2, axis=d)
    return x


@fault("contraction-skips-the-cross-shard-sum",
       "lax.dot_general and jnp.einsum sum a contracting dimension over its first half only "
       "(one shard's partial sum, not summed across shards)",
       suites=("operand_layouts",))
def contraction_skips_the_cross_shard_sum():
    lax, jnp = lax_module(), jnp_module()

    def dot_general(original):
        def dot_general(x, y, dimension_numbers, *args, **kwargs):
            (lc, rc), _ = dimension_numbers
            return original(_first_halves(x, lc), _first_halves(y, rc), dimension_numbers, *args, **kwargs)
        return dot_general

    def einsum(original):
        def einsum(subscripts, *operands, **kwargs):
            if isinstance(subscripts, str) and "->" in subscripts and len(operands) == 2 and "." not in subscripts:
                inputs, out = subscripts.replace(" ", "").split("->")
                terms = inputs.split(",")
                shared = set(terms[0]) & set(terms[1]) - set(out)
                operands = tuple(_first_halves(x, [d for d, c in enumerate(t) if c in shared])
                                 for x, t in zip(operands, terms))
            return original(subscripts, *operands, **kwargs)
        return einsum

    wrap(lax, "dot_general", dot_general)
    wrap(jnp, "einsum", einsum)


@fault("explicit-reshape-accepts-what-it-should-refuse",
       "on an Explicit mesh, a jnp.reshape JAX refuses with ShardingTypeError is made instead, "
       "its operand replicated first",
       suites=("sharding_invariance", "operand_layouts"))
def explicit_reshape_accepts_what_it_should_refuse():
    from .excuses import compat_module, explicit_sharding_available
    explicit_sharding_available()
    jax, jnp, compat = jax_module(), jnp_module(), compat_module()
    original = jnp.reshape

    def reshape(a, *args, **kwargs):
        try:
            return original(a, *args, **kwargs)
        except compat.SHARDING_TYPE_ERRORS:
            mesh = jax.typeof(a).sharding.mesh
            whole = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
            return original(compat.constrain(a, whole, "Explicit"), *args, **kwargs)
    jnp.reshape = reshape
