"""Faults that a known deviation must not excuse: plain regressions in operations that carry known
deviations (lax.dynamic_slice, lax.dynamic_update_slice, nothing sharded), rejections on
Explicit meshes where the operation is well typed (a bare AssertionError from jnp.abs, a
ShardingTypeError from jnp.sin), and a wrong oracle (the unsharded gradient halved). Each is caught
only if the excuses are as narrow as their bugs, and the oracle outside them."""

from .registry import fault, jax_module, jnp_module, lax_module, replacing, wrap


def compat_module():
    from conformance.jaxside import compat  # (imports JAX: only once the fault is planted)
    return compat


def on_an_explicit_mesh(*args) -> bool:
    """Whether an operand (an array or a tracer) is typed over a mesh with Explicit axes."""
    jax, compat = jax_module(), compat_module()
    for x in args:
        for mesh_of in (lambda: jax.typeof(x).sharding.mesh, lambda: x.sharding.mesh):  # noqa: B023 - called in this iteration
            try:
                if "Explicit" in compat.axis_type_names(mesh_of()):
                    return True
            except Exception:  # noqa: BLE001 - not an array, or no mesh: not Explicit
                continue
    return False


def explicit_sharding_available() -> None:
    if not compat_module().SHARDING_TYPE_ERRORS:
        raise AttributeError("this JAX has no Explicit axes (sharding in types arrived in 0.6.0)")


@fault("dynamic-slice-plus-one", "lax.dynamic_slice adds 1 to every element of its result, sharded or not",
       suites=("sharding_invariance", "programs"))
@replacing(lax_module, "dynamic_slice")
def dynamic_slice_plus_one(original):
    return lambda operand, *args, **kwargs: original(operand, *args, **kwargs) + 1


@fault("dynamic-update-slice-update-plus-one", "lax.dynamic_update_slice writes its update + 1, sharded or not",
       suites=("sharding_invariance", "programs"))
@replacing(lax_module, "dynamic_update_slice")
def dynamic_update_slice_update_plus_one(original):
    return lambda operand, update, *args, **kwargs: original(operand, update + 1, *args, **kwargs)


@fault("abs-asserts-on-explicit", "jnp.abs raises a bare AssertionError on every operand typed over an Explicit mesh",
       suites=("sharding_invariance",))
def abs_asserts_on_explicit():
    explicit_sharding_available()
    original = jnp_module().abs

    def abs_(x, *args, **kwargs):
        if on_an_explicit_mesh(x):
            raise AssertionError()
        return original(x, *args, **kwargs)
    jnp_module().abs = abs_


@fault("sin-rejects-explicit", "jnp.sin raises ShardingTypeError on every operand typed over an Explicit mesh",
       suites=("sharding_invariance",))
def sin_rejects_explicit():
    explicit_sharding_available()
    original, error = jnp_module().sin, compat_module().SHARDING_TYPE_ERRORS[0]

    def sin(x, *args, **kwargs):
        if on_an_explicit_mesh(x):
            raise error("sin: (planted) rejected")
        return original(x, *args, **kwargs)
    jnp_module().sin = sin


def traced(x) -> bool:
    """Whether ``x`` is a tracer: the operation runs under jit (a jit way), not eagerly."""
    return isinstance(x, jax_module().core.Tracer)


@fault("cumsum-plus-one-under-jit", "jnp.cumsum adds 1 to every element of its result under jit, never eagerly",
       suites=("sharding_invariance", "programs"))
@replacing(jnp_module, "cumsum")
def cumsum_plus_one_under_jit(original):
    """Only the jit ways see it, and in a program only the step that runs it goes wrong first: the
    triggers of the steps after it (an .at[].min after a constraint, a dynamic_update_slice with a
    negative start) must not excuse it."""
    def cumsum(x, *args, **kwargs):
        result = original(x, *args, **kwargs)
        return result + 1 if traced(x) else result
    return cumsum


def on_one_device(x) -> bool:
    """Whether ``x`` is a value on one device (a numpy value, or an array whose sharding spans one
    device): an unsharded argument, neither sharded nor traced."""
    if traced(x):
        return False
    sharding = getattr(x, "sharding", None)
    return sharding is None or len(sharding.device_set) == 1


@fault("unsharded-gradient-halved",
       "jax.grad and jax.value_and_grad halve the gradient where every argument is on one device (unsharded), "
       "eagerly or traced by a jax.jit (without shardings) called on one device; never where one is sharded",
       suites=("autodiff",))
def unsharded_gradient_halved():
    """A wrong oracle: the sharded gradient is then twice the unsharded one, as an autodiff entry
    whose symptom is values multiplied by the replica count reads it; the unsharded gradient against
    numpy's analytic one must fail the property all the same (the oracle runs jitted on one device,
    eagerly where that disagrees with numpy)."""
    jax = jax_module()
    halved = lambda tree: jax.tree_util.tree_map(lambda g: g / 2, tree)
    calls_on_one_device = [0]  # how many jax.jit calls on one device are running (tracing) now

    def unsharded(args) -> bool:
        leaves = jax.tree_util.tree_leaves(args)
        return all(on_one_device(x) for x in leaves) or calls_on_one_device[0] > 0 and all(map(traced, leaves))

    def on_unsharded_arguments(wrong):
        def reverse_mode(original):
            def transform(fun, *args, **kwargs):
                inner = original(fun, *args, **kwargs)

                def run(*a, **k):
                    result = inner(*a, **k)
                    return wrong(result) if unsharded(a) else result
                return run
            return transform
        return reverse_mode

    def marking_calls_on_one_device(original):
        def jit(fun, *args, **kwargs):
            jitted = original(fun, *args, **kwargs)
            if args or kwargs:  # (shardings or other options: not the oracle's plain jit)
                return jitted

            def call(*a, **k):
                on_one = int(all(on_one_device(x) for x in jax.tree_util.tree_leaves(a)))
                calls_on_one_device[0] += on_one
                try:
                    return jitted(*a, **k)
                finally:
                    calls_on_one_device[0] -= on_one
            return call
        return jit

    wrap(jax, "jit", marking_calls_on_one_device)
    wrap(jax, "grad", on_unsharded_arguments(halved))
    wrap(jax, "value_and_grad", on_unsharded_arguments(lambda out: (out[0], halved(out[1]))))
