"""The seed tutorial's layouts as explicit Hypothesis examples.

The tutorial builds ``mesh_utils.create_device_mesh((4, 2))`` and shards an 8192x8192 array by
each of its PartitionSpecs. Here the same specs run on the same kind of mesh, in the device order
the backend's ``create_device_mesh`` gives (a suite reads it from the bridge and passes it in), over
a small array of the same rank.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np
from hypothesis import example

from conformance.model import tutorial
from conformance.model.layout import Layout, MeshError, MeshModel
from conformance.model.positional import PositionalChain


def tutorial_layouts(mesh_ids: Optional[Sequence[int]], shape=tutorial.SMALL_SHAPE) -> list:
    """One Layout per NamedSharding spec the tutorial draws, on the 4x2 ('a', 'b') mesh of
    ``mesh_ids`` (``create_device_mesh((4, 2))``'s order). Empty without those ids (fewer than 8
    devices), or when they are not 8 distinct devices: test_named_sharding.py's
    ``test_tutorial_mesh_holds_each_device_once`` then skips or fails, saying which."""
    if mesh_ids is None:
        return []
    try:
        mesh = MeshModel(tuple(mesh_ids), tutorial.MESH_SHAPE, tutorial.AXIS_NAMES)
    except MeshError:
        return []
    return [Layout(mesh, spec, shape) for spec in tutorial.NAMED_SPECS]


def tutorial_positional_chains(line_ids: Optional[Sequence[int]]) -> list:
    """The tutorial's reshape(8, 1), (4, 2), (1, 8), replicate(0) and replicate(1) of
    PositionalSharding(create_device_mesh((8,))), over ``line_ids`` (``create_device_mesh((8,))``'s
    order), one chain per picture of tutorial.POSITIONAL_PICTURES; empty without those ids."""
    if line_ids is None:
        return []
    return [PositionalChain(tuple(line_ids), (8,), ops) for ops, _ in tutorial.POSITIONAL_PICTURES]


def tutorial_array(shape=tutorial.SMALL_SHAPE) -> np.ndarray:
    """Stands in for the tutorial's ``jax.random.normal(key, (8192, 8192))``: standard normal
    float32 values, fixed by a seed."""
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def tutorial_examples(items: Sequence, arguments: Callable[[object], dict] = lambda layout: {"layout": layout}):
    """Decorate a ``@given`` test with one ``@example(**arguments(item))`` per tutorial layout or
    chain in ``items``."""
    def decorate(test):
        for item in reversed(list(items)):
            test = example(**arguments(item))(test)
        return test
    return decorate
