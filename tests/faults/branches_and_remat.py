"""lax.switch/cond on sharded operands, and jax.checkpoint policies."""

from .registry import fault, jax_module, jnp_module, lax_module, replacing, wrap


@fault("switch-wraps-an-out-of-range-index",
       "lax.switch takes an out-of-range index modulo the number of branches instead of clamping it",
       suites=("control_flow",))
@replacing(lax_module, "switch")
def switch_wraps_an_out_of_range_index(original):
    def switch(index, branches, *operands, **kwargs):
        branches = tuple(branches)
        return original(jnp_module().mod(index, len(branches)), branches, *operands, **kwargs)
    return switch


@fault("cond-takes-the-other-branch",
       "lax.cond runs false_fun where its predicate holds and true_fun where it does not",
       suites=("control_flow",))
@replacing(lax_module, "cond")
def cond_takes_the_other_branch(original):
    def cond(pred, true_fun, false_fun, *operands, **kwargs):
        return original(jnp_module().logical_not(pred), true_fun, false_fun, *operands, **kwargs)
    return cond


def _replicated_on_explicit_axes(value):
    """``value`` resharded to replicated where its sharding type names Explicit mesh axes."""
    jax = jax_module()
    sharding = getattr(jax.typeof(value), "sharding", None) if hasattr(jax, "typeof") else None
    if sharding is None or not getattr(sharding.mesh, "explicit_axes", ()):
        return value
    reshard = getattr(jax.sharding, "reshard", None)
    if reshard is None:
        from jax.experimental.shard import reshard
    return reshard(value, jax.sharding.PartitionSpec())


def _dropping_types(branch):
    return lambda *args: jax_module().tree_util.tree_map(_replicated_on_explicit_axes, branch(*args))


@fault("branches-lose-their-sharding-type",
       "lax.cond and lax.switch reshard every branch's output to replicated on Explicit mesh axes",
       suites=("control_flow",))
def branches_lose_their_sharding_type():
    lax = lax_module()

    def switching(original):
        def switch(index, branches, *operands, **kwargs):
            return original(index, [_dropping_types(b) for b in branches], *operands, **kwargs)
        return switch

    def conditional(original):
        def cond(pred, true_fun, false_fun, *operands, **kwargs):
            return original(pred, _dropping_types(true_fun), _dropping_types(false_fun), *operands, **kwargs)
        return cond
    wrap(lax, "switch", switching)
    wrap(lax, "cond", conditional)


@fault("checkpoint-ignores-its-policy",
       "jax.checkpoint treats every policy as everything_saveable (saves every residual)",
       suites=("control_flow",))
def checkpoint_ignores_its_policy():
    jax = jax_module()
    import jax.ad_checkpoint as ad_checkpoint

    def ignoring(original):
        def checkpoint(fun, *args, **kwargs):
            if kwargs.get("policy") is not None:
                kwargs["policy"] = ad_checkpoint.checkpoint_policies.everything_saveable
            return original(fun, *args, **kwargs)
        return checkpoint
    for owner, name in ((jax, "checkpoint"), (jax, "remat"), (ad_checkpoint, "checkpoint")):
        if hasattr(owner, name):
            wrap(owner, name, ignoring)


@fault("checkpoint-name-stops-the-gradient",
       "jax.ad_checkpoint.checkpoint_name cuts the gradient through the value it names (as stop_gradient)",
       suites=("control_flow",))
def checkpoint_name_stops_the_gradient():
    import jax.ad_checkpoint as ad_checkpoint
    lax = lax_module()

    def naming(original):
        def checkpoint_name(x, name):
            return original(jax_module().tree_util.tree_map(lax.stop_gradient, x), name)
        return checkpoint_name
    wrap(ad_checkpoint, "checkpoint_name", naming)
