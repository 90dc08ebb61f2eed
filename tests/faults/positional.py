"""PositionalSharding (JAX up to 0.6.x)."""

import numpy as np

from .registry import fault, jax_module, replacing


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


@fault("replicated-positional-needs-the-same-rank",
       "device_put refuses an array whose rank differs from a fully replicated PositionalSharding's (the "
       "0.4.29 regression of jax-ml/jax#22073)",
       suites=("positional_sharding",))
@replacing(jax_module, "device_put")
def replicated_positional_needs_the_same_rank(original):
    positional = positional_sharding_class()

    def device_put(x, device=None, *args, **kwargs):
        if isinstance(device, positional) and device.is_fully_replicated and np.ndim(x) != len(device.shape):
            raise ValueError(f"One of device_put args was given the sharding of {device}, which implies that the "
                             f"rank of the value should be {len(device.shape)}, but it is {np.ndim(x)}")
        return original(x, device, *args, **kwargs)
    return device_put
