"""The seed tutorial's layouts as explicit Hypothesis examples on this backend.

The tutorial builds ``mesh_utils.create_device_mesh((4, 2))`` and shards an 8192x8192 array by
each of its PartitionSpecs. Here the same specs run on the same kind of mesh, in the device order
this backend's ``create_device_mesh`` gives, over a small array of the same rank.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from hypothesis import example

from conformance import tutorial
from conformance.model import Layout, MeshError, MeshModel


def tutorial_mesh() -> MeshModel:
    """The tutorial's 4x2 ('a', 'b') mesh in this backend's create_device_mesh order."""
    from conformance.jaxbridge import tutorial_mesh_ids
    return MeshModel(tutorial_mesh_ids(tutorial.MESH_SHAPE), tutorial.MESH_SHAPE, tutorial.AXIS_NAMES)


def tutorial_devices_available() -> bool:
    from conformance.jaxbridge import live_device_ids
    return len(live_device_ids()) >= math.prod(tutorial.MESH_SHAPE)


def tutorial_layouts(shape=tutorial.SMALL_SHAPE) -> list:
    """One Layout per NamedSharding spec the tutorial draws. Empty with fewer than 8 devices, or
    when create_device_mesh does not give 8 distinct devices: test_named_sharding.py's
    ``test_tutorial_mesh_holds_each_device_once`` then skips or fails, saying which."""
    if not tutorial_devices_available():
        return []
    try:
        mesh = tutorial_mesh()
    except MeshError:
        return []
    return [Layout(mesh, spec, shape) for spec in tutorial.NAMED_SPECS]


def tutorial_positional_cases() -> list:
    """The tutorial's reshape(8, 1), (4, 2), (1, 8), replicate(0) and replicate(1) of
    PositionalSharding(create_device_mesh((8,))), in this backend's device order, one
    PositionalCase per picture of tutorial.POSITIONAL_PICTURES; empty with fewer than 8 devices."""
    from conformance.jaxbridge import tutorial_mesh_ids
    from strategies.positional import PositionalCase
    if not tutorial_devices_available():
        return []
    devices = tutorial_mesh_ids((8,))
    return [PositionalCase(devices, (8,), ops) for ops, _ in tutorial.POSITIONAL_PICTURES]


def tutorial_array(shape=tutorial.SMALL_SHAPE) -> np.ndarray:
    """Stands in for the tutorial's ``jax.random.normal(key, (8192, 8192))``: standard normal
    float32 values, fixed by a seed."""
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def tutorial_examples(arguments: Callable[[Layout], dict] = lambda layout: {"layout": layout}):
    """Decorate a ``@given`` test with one ``@example(**arguments(layout))`` per tutorial spec."""
    def decorate(test):
        for layout in reversed(tutorial_layouts()):
            test = example(**arguments(layout))(test)
        return test
    return decorate
