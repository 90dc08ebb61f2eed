"""Training steps and scanned, rematerialized layer stacks."""

from .registry import fault, jax_module, lax_module, replacing


@fault("value-and-grad-halves-gradients",
       "jax.value_and_grad returns every gradient halved, as a per-shard gradient over two shards "
       "missing its cross-shard sum would be",
       suites=("training",))
@replacing(jax_module, "value_and_grad")
def value_and_grad_halves_gradients(original):
    jax = jax_module()

    def value_and_grad(fun, *args, **kwargs):
        transformed = original(fun, *args, **kwargs)

        def call(*a, **k):
            value, grads = transformed(*a, **k)
            return value, jax.tree_util.tree_map(lambda g: g / 2, grads)
        return call
    return value_and_grad


@fault("checkpoint-drops-its-policy",
       "jax.checkpoint ignores policy=: every intermediate is recomputed, nothing saved (values unchanged)",
       suites=("training",))
@replacing(jax_module, "checkpoint")
def checkpoint_drops_its_policy(original):
    return lambda fun, *args, policy=None, **kwargs: original(fun, *args, **kwargs)


@fault("scan-applies-stacked-layers-in-reverse",
       "lax.scan over stacked xs runs its steps last to first (as reverse=True does), the carry in the wrong order",
       suites=("training",))
@replacing(lax_module, "scan")
def scan_applies_stacked_layers_in_reverse(original):
    def scan(f, init, xs=None, length=None, reverse=False, **kwargs):
        return original(f, init, xs, length, reverse=not reverse, **kwargs)
    return scan
