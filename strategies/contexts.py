"""Contexts a generated program runs in (``suites/test_program_contexts.py``): as a nested jit, under
``jax.checkpoint`` with a policy, as a ``lax.scan`` body over stacked inputs, under ``vmap`` (with
``spmd_axis_name`` or without) and as a ``shard_map`` body over the mesh's axes.

Vocabulary:

* a *context* is one of ``CONTEXTS`` with what it draws (``Context``);
* a *batch* is ``vmap``'s or ``scan``'s stacked inputs: example ``k`` of a uint32 input is
  ``varied(x, k)`` (example 0 is ``x``; the others differ), an index, start or condition input is
  the same in every example (so that it stays in range);
* a *body spec* is a ``shard_map`` input's spec over the mesh: the program's inputs are each
  device's blocks, so that the global input's shape is the block's times the spec's tiling
  (divisible by construction), its blocks ``varied`` by their position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np
from hypothesis import strategies as st

from conformance.model.layout import MeshModel, Spec, spec_axes
from conformance.model.program import Program
from strategies.reuse import sampled_from

CONTEXTS = ("nested_jit", "checkpoint", "scan", "vmap", "shard_map")
POLICIES = ("nothing_saveable", "everything_saveable", "dots_saveable", "dots_with_no_batch_dims_saveable")
BATCHES = (2, 3, 1)  # a batch or scan length: two first (a batch of one cannot show examples mixed up)
VARIED = np.dtype(np.uint32)  # the program's data dtype (strategies.programs.VALUES): batches vary it only


@dataclass(frozen=True)
class Context:
    """Where a program runs, and what that context drew:

    * ``kind``: one of ``CONTEXTS``;
    * ``policy``: checkpoint's ``jax.checkpoint_policies`` name (None: jax.checkpoint's default);
    * ``batch``: vmap's batch size, scan's length (else 0);
    * ``spmd_axis_name``: vmap's (None: not given): a mesh axis of size > 1 no spec of the program
      names, the batch as long as the axis;
    * ``body_specs``: shard_map's spec of each input (over the global input), ``check_vma`` its check.
    """

    kind: str
    policy: Optional[str] = None
    batch: int = 0
    spmd_axis_name: Optional[str] = None
    body_specs: Tuple[Spec, ...] = ()
    check_vma: bool = True

    def __post_init__(self):
        if self.kind not in CONTEXTS:
            raise ValueError(f"context kind {self.kind!r}, but should be one of {CONTEXTS}")

    @property
    def label(self) -> str:
        """The context as a check's name shows it, e.g. ``vmap(spmd_axis_name='a', batch=2)``."""
        if self.kind == "checkpoint":
            return f"checkpoint(policy={self.policy})"
        if self.kind == "scan":
            return f"scan(length={self.batch})"
        if self.kind == "vmap":
            return f"vmap(batch={self.batch}, spmd_axis_name={self.spmd_axis_name!r})"
        if self.kind == "shard_map":
            return f"shard_map(in_specs={list(self.body_specs)}, check_vma={self.check_vma})"
        return "jit(jit(program))"


def varied(x: np.ndarray, k: int) -> np.ndarray:
    """Example (or block) ``k`` of a batch made from ``x``: a uint32 ``x`` maps to ``x * (2k+1) + k``
    modulo 2**32 (``x`` itself at k = 0, distinct from it elsewhere); any other dtype is ``x``."""
    x = np.asarray(x)
    if x.dtype != VARIED or k == 0:
        return x
    return ((x.astype(np.uint64) * (2 * k + 1) + k) % 2 ** 32).astype(VARIED)


def named_axes(program: Program) -> set:
    """Every mesh axis a spec of the program names (inputs, layout changes, outputs)."""
    specs = list(program.in_specs) + list(program.out_specs) + [s.spec for s in program.steps if s.spec is not None]
    return {a for spec in specs for axes in spec_axes(spec) for a in axes}


@st.composite
def body_specs(draw, mesh: MeshModel, rank: int) -> Spec:
    """A spec of rank ``rank`` over ``mesh``: each axis (in a drawn order) on a drawn dimension or on none."""
    order = draw(st.permutations(mesh.axis_names))
    dims = [[] for _ in range(rank)]
    for axis in order:
        d = draw(st.integers(-1, rank - 1)) if rank else -1
        if d >= 0:
            dims[d].append(axis)
    spec = [tuple(axes) if len(axes) > 1 else (axes[0] if axes else None) for axes in dims]
    while spec and spec[-1] is None:
        spec.pop()
    return tuple(spec)


@st.composite
def contexts(draw, program: Program, kind: Optional[str] = None) -> Context:
    """A context of ``kind`` (default: drawn from ``CONTEXTS``) for ``program``, with what it draws
    (see ``Context``): a batch of two first, spmd_axis_name given where an axis is free."""
    kind = kind or draw(sampled_from(CONTEXTS))
    if kind == "checkpoint":
        return Context(kind, policy=draw(sampled_from((None,) + POLICIES)))
    if kind == "scan":
        return Context(kind, batch=draw(sampled_from(BATCHES)))
    if kind == "vmap":
        free = [a for a, n in zip(program.mesh.axis_names, program.mesh.shape)
                if n > 1 and a not in named_axes(program)]
        axis = draw(sampled_from(free + [None]))
        batch = program.mesh.axis_sizes[axis] if axis else draw(sampled_from(BATCHES))
        return Context(kind, batch=batch, spmd_axis_name=axis)
    if kind == "shard_map":
        specs = tuple(draw(body_specs(program.mesh, np.ndim(x))) for x in program.arrays)
        return Context(kind, body_specs=specs, check_vma=draw(st.booleans()))
    return Context(kind)


@st.composite
def every_context(draw, program: Program) -> Tuple[Context, ...]:
    """One context of each kind (``CONTEXTS``, in order) for ``program``, each with what it draws."""
    return tuple(draw(contexts(program, kind)) for kind in CONTEXTS)
