"""Planted faults for suites/test_random_samplers.py: a jax.random parameter silently ignored (the
dtype, out_sharding, independent, replace, the PRNG implementation), parameter arrays read as
their first element, and two of the calling contexts: eager calls on keys placed on several
devices, gradients with respect to the parameters."""

import inspect

from .registry import fault, wrap

# The samplers of jax.random that take a dtype (their parameter of that name).
DTYPE_SAMPLERS = ("uniform", "normal", "bits", "randint", "truncated_normal", "gumbel", "beta", "binomial", "cauchy",
                  "chisquare", "dirichlet", "double_sided_maxwell", "exponential", "f", "gamma", "generalized_normal",
                  "geometric", "laplace", "logistic", "loggamma", "lognormal", "maxwell", "multinomial",
                  "multivariate_normal", "orthogonal", "pareto", "poisson", "rademacher", "rayleigh", "t",
                  "triangular", "wald", "weibull_min", "ball")


def random_module():
    import jax.random
    return jax.random


def rebinding(change):
    """A wrapper factory for ``wrap``: the call bound to the original's signature, its arguments
    (a dict, by name) changed by ``change`` in place, then made."""
    def make(original):
        signature = inspect.signature(original)

        def replacement(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            change(bound.arguments)
            return original(*bound.args, **bound.kwargs)
        return replacement
    return make


def dropping(*names):
    """The call without the parameters ``names`` (each then takes its default)."""
    return rebinding(lambda arguments: [arguments.pop(n, None) for n in names])


@fault("random-samplers-ignore-dtype",
       "every jax.random sampler that takes a dtype draws in its default dtype, whatever dtype is asked",
       suites=("random_samplers",))
def random_samplers_ignore_dtype():
    random = random_module()
    for name in DTYPE_SAMPLERS:
        if hasattr(random, name):
            wrap(random, name, dropping("dtype"))


@fault("random-samplers-ignore-out-sharding",
       "the jax.random samplers and lax.rng_bit_generator ignore out_sharding= (the draw comes back as if none "
       "were given)", suites=("random_samplers",))
def random_samplers_ignore_out_sharding():
    from jax import lax
    random = random_module()
    for name in (*DTYPE_SAMPLERS, "permutation", "bernoulli", "categorical"):
        if hasattr(random, name) and "out_sharding" in inspect.signature(getattr(random, name)).parameters:
            wrap(random, name, dropping("out_sharding"))
    if "out_sharding" in inspect.signature(lax.rng_bit_generator).parameters:
        wrap(lax, "rng_bit_generator", dropping("out_sharding"))


@fault("permutation-ignores-independent",
       "jax.random.permutation(..., independent=True) permutes every vector along the axis by the same permutation",
       suites=("random_samplers",))
def permutation_ignores_independent():
    wrap(random_module(), "permutation", dropping("independent"))


@fault("sampling-without-replacement-replaces",
       "jax.random.choice and jax.random.categorical given replace=False sample with replacement",
       suites=("random_samplers",))
def sampling_without_replacement_replaces():
    random = random_module()
    for name in ("choice", "categorical"):
        if "replace" in inspect.signature(getattr(random, name)).parameters:
            wrap(random, name, rebinding(lambda arguments: arguments.update(replace=True)))


@fault("keys-ignore-the-implementation-asked",
       "jax.random.key, PRNGKey and wrap_key_data ignore impl= and dtype= and make keys of the default "
       "implementation (threefry2x32)", suites=("random_samplers",))
def keys_ignore_the_implementation_asked():
    random = random_module()
    for name in ("key", "PRNGKey", "wrap_key_data"):
        wrap(random, name, dropping("impl", "dtype"))


@fault("parameter-arrays-read-as-their-first-element",
       "jax.random samplers read each array of distribution parameters (minval, maxval, p, a, b, lam, loc, scale, "
       "...) as its first element broadcast", suites=("random_samplers",))
def parameter_arrays_read_as_their_first_element():
    parameters = {"uniform": ("minval", "maxval"), "randint": ("minval", "maxval"),
                  "truncated_normal": ("lower", "upper"), "bernoulli": ("p",), "gamma": ("a",), "beta": ("a", "b"),
                  "poisson": ("lam",), "triangular": ("left", "mode", "right"), "lognormal": ("sigma",),
                  "double_sided_maxwell": ("loc", "scale"), "weibull_min": ("scale", "concentration"),
                  "binomial": ("n", "p"), "chisquare": ("df",), "rayleigh": ("scale",), "pareto": ("b",)}

    def first(value):
        return value.reshape(-1)[0] if getattr(value, "ndim", 0) else value

    def make_change(names):
        return lambda arguments: arguments.update({n: first(arguments[n]) for n in names if n in arguments})

    random = random_module()
    for name, names in parameters.items():
        wrap(random, name, rebinding(make_change(names)))


# The samplers' floating-point parameters, which grad differentiates with respect to.
FLOAT_PARAMETERS = {"uniform": ("minval", "maxval"), "truncated_normal": ("lower", "upper"), "gamma": ("a",),
                    "beta": ("a", "b"), "triangular": ("left", "mode", "right"), "lognormal": ("sigma",),
                    "double_sided_maxwell": ("loc", "scale"), "weibull_min": ("scale", "concentration"),
                    "chisquare": ("df",), "rayleigh": ("scale",), "pareto": ("b",), "wald": ("mean",), "t": ("df",),
                    "loggamma": ("a",), "f": ("dfnum", "dfden"), "dirichlet": ("alpha",)}


@fault("random-parameter-gradients-doubled",
       "the gradient of a jax.random draw with respect to its floating-point parameters (minval, scale, a, ...) is "
       "twice what it is; the draws themselves unchanged", suites=("random_samplers",))
def random_parameter_gradients_doubled():
    from jax import lax

    def doubled(value):  # (2p - p is p, exactly; its derivative is 2)
        return 2 * value - lax.stop_gradient(value)

    def make_change(names):
        return lambda arguments: arguments.update({n: doubled(arguments[n]) for n in names if n in arguments})

    random = random_module()
    for name, names in FLOAT_PARAMETERS.items():
        wrap(random, name, rebinding(make_change(names)))


@fault("random-eager-draws-on-placed-keys-differ",
       "a jax.random function (or lax.rng_bit_generator) called eagerly with a key placed on several devices draws "
       "from another key (a typed key folded with 1, raw key words with their lowest bit flipped)",
       suites=("random_samplers",))
def random_eager_draws_on_placed_keys_differ():
    import jax
    from jax import lax

    def another_key(arguments):
        key = arguments.get("key")
        if key is None or isinstance(key, jax.core.Tracer) or len(getattr(
                getattr(key, "sharding", None), "device_set", ())) < 2:
            return
        typed = jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)
        arguments["key"] = jax.random.fold_in(key, 1) if typed else key ^ 1

    random = random_module()
    for name in (*DTYPE_SAMPLERS, "permutation", "choice", "categorical", "bernoulli", "split"):
        if hasattr(random, name):
            wrap(random, name, rebinding(another_key))
    wrap(lax, "rng_bit_generator", rebinding(another_key))
