"""Reference model of sharding in types: whether JAX's rules type an operation of the catalogue on
operands sharded over Explicit mesh axes, and which spec they give its result.

Pure Python: the model never imports JAX. It restates, small, the rules JAX states: the
"Explicit sharding" doc (each result dimension takes the one sharding its input dimensions agree
on, or it is an error; a mesh axis named on two dimensions of a result is an error) and the
``_*_sharding_rule`` functions of ``jax/_src/lax`` (``lax.py``, ``slicing.py``,
``control_flow/loops.py``) that implement it, as of JAX 0.10.2.

Vocabulary:

* An operand's **type** is its shape and its spec over the mesh (``layout.Spec``). Rules compare
  specs in **canonical** form (``canonical_spec``): one entry per dimension, an entry ``None``, one
  axis name, or a tuple of two or more names, so ``('a',)`` is ``'a'`` and a missing trailing entry
  is ``None``. A size-1 mesh axis is a sharding like any other: it cuts nothing, but a spec naming
  it differs from ``None``.
* A dimension's **tiling** is the product of the sizes of the axes its entry names.
* A **primitive rule** (``broadcast``, ``dot_general``, ``reshape``, ``gather``, ...) is one lax
  primitive's sharding rule: operand types in, the result's canonical spec out, or ``IllTyped``.
* A **route** is the sequence of primitives a ``jax.numpy`` call binds for given static arguments
  (``jnp.pad(mode="edge")`` binds slices, a ``jnp.repeat`` and a concatenate); a catalogue family's
  rule runs the primitive rules along its route.
* A **verdict** is ``Accepts(out_spec)`` (well typed; ``out_spec`` is the result's canonical spec,
  or None where the rules leave it open), ``Rejects(reason)`` (JAX's rules reject these operand
  types: a ``ShardingTypeError`` is the documented outcome) or ``Unmodelled(reason)`` (no rule here;
  a rejection is not judged).

``sharding_verdict`` is the entry point. Where JAX's code and its stated rule part, the stated
rule decides (``reshape``). Where JAX changed a rule deliberately and said so, the rule of the
release under test decides: ``ReleaseRules`` says which of those changes it has (the caller tells,
from ``conformance.jaxside.compat``; the default is JAX 0.10.2's rules).

The model is in three layers, each importing only those before it; this module re-exports their
public names, so callers import from here:

* ``sharding_primitives``: the primitive rules, canonical specs and tilings;
* ``sharding_indexing``: jnp's indexing (static slices, integer arrays, ``.at[]`` targets,
  ``take_along_axis``) as the slices, gathers and scatters it binds;
* ``sharding_families``: the catalogue families' rules, ``ReleaseRules``, the verdicts and
  ``sharding_verdict``.
"""

# Re-exported, by layer, top first: every public name of the three layers.
from .sharding_families import (ARG_REDUCTIONS, BATCHED_INDEXING, FAMILY_RULES, INDEXING_FAMILIES, LATEST,
                                SHIFTED_UPDATES, Accepts, Call, Rejects, ReleaseRules, Unmodelled, Verdict,
                                batched_indexing_refusal, documented_indexing_refusal,
                                dynamic_slice, sharding_verdict, shifted_ranges, slice_through_gather)
from .sharding_indexing import (Indexer, full_index, indexer, slice_triple, static_slice, take_along_axis,
                                through_gather, updates_for, whole_slice)
from . import sharding_vocabulary, sharding_vocabulary_indexing, sharding_vocabulary_lax_structure, \
    sharding_vocabulary_linalg, sharding_vocabulary_shapes
from .sharding_primitives import (GatherDims, IllTyped, Shape, axes_argument, axis_argument, broadcast,
                                  canonical_entry, canonical_spec, consensus, cumulative, dot_general, entry_axes,
                                  expand_dims, gather, merged_groups, no_repeated_axis, one_sharded_spec,
                                  one_split_or_merge, permutation, reduce, reshape, resized, same_specs, scatter,
                                  select, show_spec, sort, squeeze, stack, tiling, transpose)

# The vocabulary's families (``strategies/ops/vocabulary_*.py``), each rule in its own module.
for _module in (sharding_vocabulary, sharding_vocabulary_shapes, sharding_vocabulary_indexing,
                sharding_vocabulary_linalg, sharding_vocabulary_lax_structure):
    _clash = set(_module.RULES) & set(FAMILY_RULES)
    assert not _clash, f"{_module.__name__} redefines the rules of {sorted(_clash)}"
    FAMILY_RULES.update(_module.RULES)
