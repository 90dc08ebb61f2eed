"""Parallel layouts for model-shaped programs: which mesh axes carry data parallelism, FSDP,
tensor parallelism and sequence parallelism, and the spec of each named array role under such a
layout. Model objects only (``MeshModel``, spec tuples, sizes): no JAX here; the suites turn them
into meshes and shardings through ``conformance.jaxside.bridge``.

Array roles and their specs (``Spec`` tuples, one entry per dimension, see
``conformance.model.layout``):

* activations ``(batch, seq, hidden)``: batch over ``data + fsdp``, seq over ``sequence``;
* tensor-parallel activations ``(batch, seq, ffn)`` (between a column- and a row-parallel dense
  layer): as activations, the last dimension over ``tensor``;
* column-parallel weights ``(in, out)``: out over ``tensor``; row-parallel weights ``(in, out)``:
  in over ``tensor``; FSDP splits the other dimension (or, with ``fsdp_dim``, the drawn one);
* attention projections ``(hidden, heads, head_dim)`` (q/k/v) and ``(heads, head_dim, hidden)``
  (the output one): heads over ``tensor``, FSDP on ``hidden``;
* embeddings ``(vocab, hidden)``: FSDP on the drawn dimension, otherwise replicated;
* token ids and labels ``(batch, seq)``: as the first two activation dimensions.

Sizes are built by multiplying a small per-shard size by ``layout.size(role)`` (``dims``), so every
drawn layout divides every array (JAX's shard_map tests do the same).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Sequence, Tuple

from hypothesis import strategies as st

from conformance.model.layout import MeshModel, Spec, SpecEntry

from .meshes import axis_names, factorizations
from .odds import mostly
from .reuse import permuted, sampled_from

ROLES = ("data", "fsdp", "tensor", "sequence")
AXIS_TYPES = ("Auto", "Explicit")


def _entry(axes: Sequence[str]) -> SpecEntry:
    """A spec entry for ``axes``: None for none, the name for one, the tuple for several."""
    axes = tuple(axes)
    if not axes:
        return None
    return axes[0] if len(axes) == 1 else axes


@dataclass(frozen=True)
class ParallelLayout:
    """Which mesh axes each kind of parallelism uses, as the field names them: data parallel (the
    batch dimension split over ``data``), FSDP (parameters split over ``fsdp`` on a drawn dimension,
    ``fsdp_dim``, the batch over data+fsdp), tensor parallel (heads / hidden units split over
    ``tensor``), sequence parallel (the sequence dimension of activations split over
    ``sequence``). Each mesh axis serves at most one role; an axis no role names is unused (its
    devices hold replicas)."""

    mesh: MeshModel
    axis_type: str                 # "Auto" or "Explicit"
    data: Tuple[str, ...] = ()
    fsdp: Tuple[str, ...] = ()
    tensor: Tuple[str, ...] = ()
    sequence: Tuple[str, ...] = ()
    fsdp_dim: int = 0              # which weight dimension FSDP splits: 0 the one TP leaves, 1 the other

    def __post_init__(self):
        for role in ROLES:
            object.__setattr__(self, role, tuple(getattr(self, role)))
        used = [a for role in ROLES for a in getattr(self, role)]
        if len(set(used)) != len(used):
            raise ValueError(f"an axis serves two roles in {self}")
        unknown = set(used) - set(self.mesh.axis_names)
        if unknown:
            raise ValueError(f"axes {sorted(unknown)} are not in the mesh {self.mesh.axis_names}")
        if self.axis_type not in AXIS_TYPES:
            raise ValueError(f"axis_type {self.axis_type!r} is not one of {AXIS_TYPES}")

    @property
    def name(self) -> str:
        """The roles used, short: "dp", "fsdp", "tp", "sp", joined by "+" ("replicated" if none)."""
        short = {"data": "dp", "fsdp": "fsdp", "tensor": "tp", "sequence": "sp"}
        used = [short[r] for r in ROLES if getattr(self, r)]
        return "+".join(used) if used else "replicated"

    def axes(self, role: str) -> Tuple[str, ...]:
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; roles are {ROLES}")
        return getattr(self, role)

    def size(self, role: str) -> int:
        """The product of the mesh sizes of that role's axes (1 if none)."""
        sizes = self.mesh.axis_sizes
        return math.prod(sizes[a] for a in self.axes(role))

    def batch_axes(self) -> Tuple[str, ...]:
        """The axes the batch dimension is split over: data then fsdp."""
        return self.data + self.fsdp

    def splits(self) -> Tuple[str, ...]:
        """The roles whose axes have a total size > 1 (those that actually split something)."""
        return tuple(r for r in ROLES if self.size(r) > 1)

    def describe(self) -> str:
        roles = ", ".join(f"{r}={getattr(self, r)}" for r in ROLES if getattr(self, r))
        return (f"{self.name} on mesh {dict(zip(self.mesh.axis_names, self.mesh.shape))} "
                f"({self.axis_type}; {roles or 'no roles'}; fsdp_dim={self.fsdp_dim})")

    # --- specs of the named array roles -------------------------------------------------------

    def activation_spec(self) -> Spec:
        """``(batch, seq, hidden)``: batch over data+fsdp, seq over sequence."""
        return (_entry(self.batch_axes()), _entry(self.sequence), None)

    def tensor_activation_spec(self) -> Spec:
        """``(batch, seq, ffn)`` between a column- and a row-parallel layer: ffn over tensor too."""
        return (_entry(self.batch_axes()), _entry(self.sequence), _entry(self.tensor))

    def tokens_spec(self) -> Spec:
        """Token ids / labels ``(batch, seq)``."""
        return (_entry(self.batch_axes()), _entry(self.sequence))

    def batch_spec(self, rank: int = 2) -> Spec:
        """A ``(batch, ...)`` array of ``rank`` with only the batch split (e.g. MLP inputs)."""
        return (_entry(self.batch_axes()),) + (None,) * (rank - 1)

    def column_weight_spec(self) -> Spec:
        """``(in, out)`` column-parallel: out over tensor; FSDP on in (``fsdp_dim`` 0) or out."""
        spec = [None, _entry(self.tensor)]
        return self._with_fsdp(spec, free=0)

    def row_weight_spec(self) -> Spec:
        """``(in, out)`` row-parallel: in over tensor; FSDP on out (``fsdp_dim`` 0) or in."""
        spec = [_entry(self.tensor), None]
        return self._with_fsdp(spec, free=1)

    def column_bias_spec(self) -> Spec:
        """The ``(out,)`` bias of a column-parallel layer: over tensor."""
        return (_entry(self.tensor),)

    def heads_weight_spec(self) -> Spec:
        """q/k/v projections ``(hidden, heads, head_dim)``: heads over tensor, FSDP on hidden."""
        return (_entry(self.fsdp), _entry(self.tensor), None)

    def heads_out_weight_spec(self) -> Spec:
        """The attention output projection ``(heads, head_dim, hidden)``: heads over tensor, FSDP
        on hidden."""
        return (_entry(self.tensor), None, _entry(self.fsdp))

    def embedding_spec(self) -> Spec:
        """``(vocab, hidden)``: FSDP on the drawn dimension."""
        spec = [None, None]
        spec[self.fsdp_dim] = _entry(self.fsdp)
        return tuple(spec)

    def vector_spec(self) -> Spec:
        """A ``(hidden,)`` parameter (layer-norm scale/offset): FSDP on it."""
        return (_entry(self.fsdp),)

    def gathered(self, spec: Spec) -> Spec:
        """``spec`` with the FSDP axes removed: a parameter after the FSDP all-gather."""
        def drop(entry):
            if entry is None:
                return None
            axes = (entry,) if isinstance(entry, str) else tuple(entry)
            return _entry(tuple(a for a in axes if a not in self.fsdp))
        return tuple(drop(e) for e in spec)

    def role_specs(self) -> dict:
        """The spec of every array role the model programs name (suites/test_model_programs.py,
        suites/test_training.py), under this layout."""
        batch, seq, tensor = self.activation_spec()[0], self.activation_spec()[1], self.tensor_activation_spec()[2]
        return {"act": self.activation_spec(), "tensor_act": self.tensor_activation_spec(),
                "batch": self.batch_spec(2), "tensor_batch": (batch, tensor), "tokens": self.tokens_spec(),
                "heads": (batch, seq, tensor, None), "heads_gathered": (batch, None, tensor, None),
                "scores": (batch, tensor, seq, None), "column_weight": self.column_weight_spec(),
                "row_weight": self.row_weight_spec(), "column_bias": self.column_bias_spec(),
                "heads_weight": self.heads_weight_spec(), "heads_out_weight": self.heads_out_weight_spec(),
                "embedding": self.embedding_spec(), "vector": self.vector_spec(), "scalar": ()}

    def gathered_role_specs(self) -> dict:
        """Every role's spec after the FSDP all-gather (``gathered``)."""
        return {role: self.gathered(spec) for role, spec in self.role_specs().items()}

    def _with_fsdp(self, spec, free: int) -> Spec:
        dim = free if self.fsdp_dim == 0 else 1 - free
        current = spec[dim]
        axes = () if current is None else ((current,) if isinstance(current, str) else tuple(current))
        spec[dim] = _entry(axes + self.fsdp)
        return tuple(spec)

    # --- sizes -------------------------------------------------------------------------------

    def dims(self, *, batch: int = 1, seq: int = 1, hidden: int = 1, ffn: int = 1, heads: int = 1,
             head_dim: int = 2, vocab: int = 1) -> Dict[str, int]:
        """Global sizes from per-shard ones, so every spec above divides: batch x (data*fsdp),
        seq x sequence, hidden x fsdp, ffn x tensor*fsdp, heads x tensor, vocab x fsdp."""
        f, t = self.size("fsdp"), self.size("tensor")
        return {"batch": batch * self.size("data") * f, "seq": seq * self.size("sequence"),
                "hidden": hidden * f, "ffn": ffn * t * f, "heads": heads * t, "head_dim": head_dim,
                "vocab": vocab * f}


def splits_something(layout: ParallelLayout) -> bool:
    """Whether some array is split over an axis of size > 1 under ``layout``."""
    return bool(layout.splits())


@st.composite
def parallel_layouts(draw, device_ids: Sequence[int], *, roles: Sequence[str] = ROLES,
                     max_axes: int = 3, axis_types: Sequence[str] = AXIS_TYPES,
                     fsdp_dims: Sequence[int] = (0, 1)) -> ParallelLayout:
    """A parallel layout over all of ``device_ids`` (in order, or now and then permuted):

    * a mesh of 1..``max_axes`` axes, mostly (7 in 8, where the devices allow one) with every axis
      of size > 1, so that each role given an axis splits;
    * each axis given one of ``roles`` (mostly, 15 in 16) or none (its devices then hold
      replicas); a role may get several axes (its arrays split over their product);
    * an axis type from ``axis_types``; the FSDP dimension from ``fsdp_dims``.

    On one device every axis has size 1: the layouts still name roles, and the programs still run.
    Shrinks towards one axis over all devices, in order, used for ``roles[0]``, the first axis
    type.
    """
    ids = tuple(device_ids)
    if not ids:
        raise ValueError("parallel_layouts() needs at least one device id")
    roles = tuple(roles)
    for role in roles:
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; roles are {ROLES}")
    shapes = factorizations(len(ids), 1, max_axes)
    cutting = tuple(s for s in shapes if all(n > 1 for n in s))
    use_cutting = draw(mostly(8)) and bool(cutting)
    shape = draw(sampled_from(cutting if use_cutting else shapes))
    if len(ids) > 1 and not draw(mostly(8)):
        ids = tuple(draw(permuted(ids)))
    names = draw(axis_names(len(shape)))
    mesh = MeshModel(ids, shape, names)
    assigned: Dict[str, Tuple[str, ...]] = {r: () for r in ROLES}
    for name in names:
        if draw(mostly(16)):
            role = draw(sampled_from(roles))
            assigned[role] = assigned[role] + (name,)
    axis_type = draw(sampled_from(tuple(axis_types)))
    fsdp_dim = draw(sampled_from(tuple(fsdp_dims)))
    return ParallelLayout(mesh, axis_type, fsdp_dim=fsdp_dim, **assigned)


__all__ = ["AXIS_TYPES", "ParallelLayout", "ROLES", "parallel_layouts", "splits_something"]
