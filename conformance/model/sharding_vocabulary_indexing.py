"""Sharding-in-types rules for the vocabulary's indexing families (``strategies/ops/vocabulary_indexing.py``),
each a function of a ``sharding_families.Call`` to the result's canonical spec, raising
``IllTyped`` where JAX's rules reject the operand shardings; ``RULES`` maps a family to its rule
(``sharding_rules`` adds them to ``FAMILY_RULES``).

Each rule restates the route its ``jax.numpy`` functions bind (JAX 0.10.2, ``jax/_src/numpy``) through
the primitive rules of ``sharding_primitives``."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Dict

from .layout import Spec
from .sharding_families import Call
from .sharding_primitives import IllTyped, axis_argument, broadcast, same_specs, show_spec, sort


def _named(spec: Spec) -> bool:
    """Whether ``spec`` names a mesh axis (one of size 1 too: the rules compare entries, not tilings)."""
    return any(entry is not None for entry in spec)


def _whole_comparison(c: Call) -> Spec:
    """``jnp.allclose``, ``array_equal``, ``array_equiv``: elementwise comparisons of the operands
    broadcast together (the broadcasting rule), then ``jnp.all`` over every dimension (the reduce
    rule drops them all): a scalar."""
    broadcast(c.shapes, c.specs, c.op)
    return ()


def _partition(c: Call) -> Spec:
    """``jnp.partition``/``argpartition`` swap ``axis`` last and bind ``lax.top_k`` there, whose rule
    refuses an operand sharded along it ("The input should be unsharded over the axis along which
    to compute the top_k values"); the result keeps the operand's spec. (The entries then sort each
    side along the same, unsharded, dimension.)"""
    shape, spec = c.x
    axis = axis_argument(c.static["axis"], len(shape))
    if spec[axis] is not None:
        raise IllTyped(f"{c.op}: lax.top_k along dimension {axis}, sharded {spec[axis]!r}")
    return spec


def _nothing_named(c: Call, what: str) -> None:
    for spec in c.specs:
        if _named(spec):
            raise IllTyped(f"{c.op}: {what}; an operand is sharded {show_spec(spec)}")


def _compaction(c: Call) -> Spec:
    """The functions that gather a data-dependent number of entries to a static ``size``:

    * ``jnp.nonzero`` (``argwhere``, and ``flatnonzero`` after a ravel) counts with
      ``jnp.cumsum(mask)`` over no axis, which refuses an operand that is not fully replicated ("The
      input should be fully replicated when axis is not specified to cumsum"; a ravel keeps the axes
      a spec names, or is refused itself);
    * ``jnp.compress`` moves ``axis`` first (a transpose), orders the condition with ``jnp.argsort``
      (the sort rule: the condition unsharded) and gathers along that dimension (the gather rule: it
      must be unsharded); the result keeps the operand's other entries. Over no axis it ravels the
      operand first; ``jnp.extract`` ravels both. Every result of these is replicated but for
      ``compress``'s kept dimensions."""
    if c.op in ("jnp.argwhere", "jnp.nonzero", "jnp.flatnonzero"):
        _nothing_named(c, "jnp.cumsum over no axis needs a fully replicated operand")
        return (None,) * (1 if c.op == "jnp.flatnonzero" else 2)
    if c.op == "jnp.extract" or (c.op == "jnp.compress" and c.static["axis"] is None):
        _nothing_named(c, "the raveled condition is sorted and the raveled operand gathered from")
        return (None,)
    if c.op != "jnp.compress":
        raise IllTyped(f"no compaction rule for {c.op}")
    shape, spec = c.shapes[1], c.specs[1]
    if _named(c.specs[0]):
        raise IllTyped(f"jnp.compress: the condition, sorted by jnp.argsort, is sharded {show_spec(c.specs[0])}")
    axis = axis_argument(c.static["axis"], len(shape))
    if spec[axis] is not None:
        raise IllTyped(f"jnp.compress: the gathered dimension {axis} is sharded {spec[axis]!r}")
    return spec


def _sort_last(c: Call) -> Spec:
    """``jnp.sort_complex``: ``lax.sort`` along the last dimension (the sort rule)."""
    shape, spec = c.x
    return sort(spec, len(shape) - 1, c.op, c.rules.sort_keeps_a_sharded_dimension)


def _lexsort(c: Call) -> Spec:
    """``jnp.lexsort``: one ``lax.sort`` of the keys and an unsharded ``broadcasted_iota``, whose
    operands must be sharded alike ("Arguments to sort must have equal shardings") and unsharded
    along ``axis``: every key unsharded."""
    same_specs(c.specs + ((None,) * len(c.shapes[0]),), "jnp.lexsort: the keys and the iota sorted with them")
    return sort(c.specs[0], axis_argument(c.static["axis"], len(c.shapes[0])), c.op)


def _set(c: Call) -> Spec:
    """``jnp.unique`` (over no axis), ``unique_*`` and the ``*1d`` set operations ravel their
    operands (a ravel keeps the axes a spec names, or is refused) and sort the result
    (``union1d`` concatenates first: operands sharded alike): refused wherever an operand names a
    mesh axis; but ``setdiff1d`` sorts its first operand only, and compares the second, raveled,
    with it (``_in1d``'s compare_all: broadcast, then ``jnp.all`` over it), which any spec its
    ravel accepts passes. The results are replicated (an inverse reshaped to the operand's shape)."""
    if c.op == "jnp.setdiff1d":  # ar2 is only compared with (``_in1d``'s compare_all: a broadcast, then jnp.all)
        _nothing_named(replace(c, specs=c.specs[:1]), "the raveled first operand is sorted")
        c.reshape(c.shapes[1], c.specs[1], (math.prod(c.shapes[1]),))
        return (None,)
    _nothing_named(c, "the raveled operands are sorted along their one dimension")
    if c.op.endswith("inverse"):
        return (None,) * len(c.shapes[0])
    return (None,) * (2 if c.op == "jnp.intersect1d:indices" else 1)


RULES: Dict[str, Callable[[Call], Spec]] = {
    "whole_comparison": _whole_comparison, "partition": _partition, "compaction": _compaction,
    "sort_last": _sort_last, "lexsort": _lexsort, "set": _set,
}
