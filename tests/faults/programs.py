"""Faults that only show in combination: each breaks an operation only when its operand was
computed by another ``jax.numpy`` function in the same program, a case the single-operation
catalogue (whose operands are arguments, placed or constrained) never builds."""

from .registry import fault, jax_module, jnp_module, lax_module, wrap

# The jax.numpy functions whose results count as computed (the catalogue entries programs call by
# name; operators such as ``x + y`` and ``x[i]`` are not seen).
COMPUTING = ("abs", "maximum", "sum", "max", "min", "argmax", "any", "cumsum", "cumprod", "reshape", "transpose",
             "swapaxes", "squeeze", "expand_dims", "broadcast_to", "concatenate", "stack", "pad", "take",
             "take_along_axis", "roll", "flip", "sort", "argsort", "dot", "where", "tril", "logical_not")


class Seen:
    """Objects (arrays or tracers) by identity, kept alive so that an id is not reused."""

    def __init__(self, limit: int = 20000):
        self.objects, self.limit = {}, limit

    def add(self, x) -> None:
        if len(self.objects) >= self.limit:
            self.objects.clear()
        self.objects[id(x)] = x

    def __contains__(self, x) -> bool:
        return self.objects.get(id(x)) is x


def computed_results() -> Seen:
    """Wrap the ``COMPUTING`` functions of jax.numpy so that their results are remembered."""
    computed = Seen()
    jnp = jnp_module()

    def remembering(original):
        def fn(*args, **kwargs):
            result = original(*args, **kwargs)
            computed.add(result)
            return result
        return fn
    for name in COMPUTING:
        wrap(jnp, name, remembering)
    return computed


@fault("constraint-after-a-constraint-dropped",
       "a sharding constraint is dropped when its operand is another constraint's result on a computed value",
       suites=("programs",))
def constraint_after_a_constraint_dropped():
    computed, constrained = computed_results(), Seen()

    def make(original):
        def constrain(x, *args, **kwargs):
            if x in constrained:
                return x
            result = original(x, *args, **kwargs)
            if x in computed:
                constrained.add(result)
            return result
        return constrain
    wrap(lax_module(), "with_sharding_constraint", make)
    sharding = jax_module().sharding
    if hasattr(sharding, "reshard"):
        wrap(sharding, "reshard", make)


@fault("reduction-of-a-computed-value-off-by-one",
       "jnp.sum/max/min/cumsum/cumprod and lax.cummax/cumsum of a value another jax.numpy function computed add 1",
       suites=("programs",))
def reduction_of_a_computed_value_off_by_one():
    computed = computed_results()

    def make(original):
        def reduce(x, *args, **kwargs):
            result = original(x, *args, **kwargs)
            return result + 1 if x in computed and result.dtype != bool else result
        return reduce
    for name in ("sum", "max", "min", "cumsum", "cumprod"):
        wrap(jnp_module(), name, make)
    for name in ("cummax", "cumsum"):
        wrap(lax_module(), name, make)
