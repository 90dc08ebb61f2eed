"""PositionalSharding (JAX up to 0.6.x)."""

from .registry import fault, replacing


def positional_sharding_class():
    """PositionalSharding, or a skip naming the version where it is gone."""
    from conformance.jaxside.compat import feature
    return feature("PositionalSharding")


@fault("replicate-wrong-axis", "PositionalSharding.replicate unions along the next axis",
       suites=("positional_sharding",))
@replacing(positional_sharding_class, "replicate")
def replicate_wrong_axis(original):
    def replicate(self, axis=None, keepdims=True):
        if axis is not None and len(self.shape) > 1:
            axis = (axis + 1) % len(self.shape)
        return original(self, axis, keepdims=keepdims)
    return replicate


@fault("positional-reshape-column-major", "PositionalSharding.reshape fills column-major",
       suites=("positional_sharding",))
@replacing(positional_sharding_class, "reshape")
def positional_reshape_column_major(original):
    def reshape(self, *shape):
        return original(self, *shape[::-1]).transpose() if len(shape) > 1 else original(self, *shape)
    return reshape
