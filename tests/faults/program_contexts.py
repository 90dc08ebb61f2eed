"""Faults of the contexts a generated program runs in (``suites/test_program_contexts.py``): each
breaks what one context computes (a jit called inside another trace, jax.checkpoint, lax.scan's
stacked outputs, vmap inside a trace), so that the same program run bare stays right."""

from .registry import fault, jax_module, lax_module, replacing, wrap


def traced() -> bool:
    """Whether the trace in effect is not the eager one (a function called while another is traced)."""
    from conformance.jaxside import compat
    return (compat.current_trace_name() or "EvalTrace") != "EvalTrace"


def plus_one(tree):
    """Every array of ``tree`` plus one (a boolean one negated)."""
    jax = jax_module()
    return jax.tree_util.tree_map(lambda o: ~o if o.dtype == bool else o + o.dtype.type(1), tree)


def calling_back(wrapped, call):
    """``call`` carrying the attributes of the jitted function ``wrapped`` that callers use."""
    for name in ("lower", "trace", "eval_shape", "clear_cache"):
        if hasattr(wrapped, name):
            setattr(call, name, getattr(wrapped, name))
    return call


@fault("jit-inside-a-trace-adds-one",
       "a jax.jit function called while another function is traced adds one to its outputs", suites=("programs",))
@replacing(jax_module, "jit")
def jit_inside_a_trace_adds_one(original):
    def jit(fun, *args, **kwargs):
        jitted = original(fun, *args, **kwargs)

        def call(*a, **k):
            out = jitted(*a, **k)
            return plus_one(out) if traced() else out
        return calling_back(jitted, call)
    return jit


@fault("checkpoint-adds-one", "a function under jax.checkpoint (jax.remat) adds one to its outputs",
       suites=("programs",))
def checkpoint_adds_one():
    jax = jax_module()

    def make(original):
        def checkpoint(fun, *args, **kwargs):
            wrapped = original(fun, *args, **kwargs)
            return lambda *a, **k: plus_one(wrapped(*a, **k))
        return checkpoint
    wrap(jax, "checkpoint", make)
    wrap(jax, "remat", make)


@fault("scan-adds-one-to-its-stacked-outputs", "lax.scan adds one to the outputs it stacks (ys)", suites=("programs",))
@replacing(lax_module, "scan")
def scan_adds_one_to_its_stacked_outputs(original):
    def scan(*args, **kwargs):
        carry, ys = original(*args, **kwargs)
        return carry, plus_one(ys)
    return scan


@fault("vmap-inside-a-trace-adds-one", "a jax.vmap function called while another function is traced adds one to its "
       "outputs", suites=("programs",))
@replacing(jax_module, "vmap")
def vmap_inside_a_trace_adds_one(original):
    def vmap(fun, *args, **kwargs):
        mapped = original(fun, *args, **kwargs)
        return lambda *a, **k: plus_one(mapped(*a, **k)) if traced() else mapped(*a, **k)
    return vmap


@fault("shard-map-body-adds-one", "a shard_map body's outputs come back with one added", suites=("programs",))
def shard_map_body_adds_one():
    from .transformations import shard_map_owner

    def make(original):
        def shard_map(f, *args, **kwargs):
            return original(lambda *a, **k: plus_one(f(*a, **k)), *args, **kwargs)
        return shard_map
    wrap(shard_map_owner(), "shard_map", make)
