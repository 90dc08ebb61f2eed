"""The examples of the vmap properties (suites/test_vmap.py) and of the shard_map bodies' collectives
over several mesh axes, as named tuples: the suites draw and unpack them as before, and the
triggers (conformance/checking/triggers.py) read them by name. Model objects only: no JAX."""

from __future__ import annotations

from typing import Any, NamedTuple, Tuple

import numpy as np

from conformance.model.layout import MeshModel, Spec


class VmapExample(NamedTuple):
    """vmap of catalogue operation ``op`` (its ``static`` arguments) over ``batches`` (each operand
    batched along a new leading dimension), laid out by ``specs`` on ``mesh``, under jit or not."""

    op: Any  # a catalogue entry (strategies.ops): what triggers read is its ``name``
    batches: Tuple[np.ndarray, ...]
    static: dict
    mesh: MeshModel
    specs: Tuple[Spec, ...]
    jitted: bool


class VmappedBody(NamedTuple):
    """vmap of a jitted shard_map whose ``body`` runs a collective over ``axis`` of ``mesh``, over
    the batches ``xs`` and ``ws``."""

    body: Any  # a body of test_autodiff's table: triggers read its ``name``
    mesh: MeshModel
    axis: str
    xs: np.ndarray
    ws: np.ndarray


class MultiAxisExample(NamedTuple):
    """A ``collective`` over the mesh axes ``over`` (two or more, in a drawn order) in a shard_map
    body on ``mesh``, one of ``values`` per device, stacked in row-major mesh order."""

    mesh: MeshModel
    over: Tuple[str, ...]
    collective: Any  # suites' Collective: triggers read its ``name``
    values: np.ndarray
