"""jit's shardings, and operations the catalogue runs."""

from .registry import fault, jax_module, jnp_module, lax_module, replacing


@fault("jit-reshards-output-afterwards", "jit ignores out_shardings while compiling and moves the result afterwards",
       suites=("device_put", "sharding_invariance"))
@replacing(jax_module, "jit")
def jit_reshards_output_afterwards(original):
    jax = jax_module()

    def jit(fun, *args, out_shardings=None, **kwargs):
        compiled = original(fun, *args, **kwargs)
        if out_shardings is None:
            return compiled
        return lambda *a, **k: jax.device_put(compiled(*a, **k), out_shardings)
    return jit


@fault("jit-ignores-out-shardings", "jit drops its out_shardings argument",
       suites=("device_put", "sharding_invariance", "argument_forms"))
@replacing(jax_module, "jit")
def jit_ignores_out_shardings(original):
    return lambda fun, *args, out_shardings=None, **kwargs: original(fun, *args, **kwargs)


@fault("jit-drops-conflicting-out-shardings",
       "jit runs on the inputs' devices when out_shardings names other devices, instead of refusing",
       suites=("device_put",))
@replacing(jax_module, "jit")
def jit_drops_conflicting_out_shardings(original):
    def device_ids(sharding):
        mesh = getattr(sharding, "mesh", None)
        return None if mesh is None else [d.id for d in mesh.devices.flat]

    def jit(fun, *args, in_shardings=None, out_shardings=None, **kwargs):
        ins, outs = device_ids(in_shardings), device_ids(out_shardings)
        if ins is not None and outs is not None and ins != outs:
            out_shardings = None  # the regression: run on the inputs' devices instead of refusing
        return original(fun, *args, in_shardings=in_shardings, out_shardings=out_shardings, **kwargs)
    return jit


@fault("constraint-ignored", "lax.with_sharding_constraint returns its operand unconstrained",
       suites=("sharding_invariance",))
@replacing(lax_module, "with_sharding_constraint")
def constraint_ignored(original):
    return lambda x, shardings: x


@fault("argmax-is-argmin", "jnp.argmax returns the index of the minimum",
       suites=("sharding_invariance",))
@replacing(jnp_module, "argmax")
def argmax_is_argmin(original):
    jnp = jnp_module()
    return lambda a, *args, **kwargs: jnp.argmin(a, *args, **kwargs)
