"""Sharding-in-types rules for the vocabulary's own families (``strategies/ops/vocabulary.py``), each
a function of a ``sharding_families.Call`` to the result's canonical spec, raising ``IllTyped``
where JAX's rules reject the operand shardings; ``RULES`` maps a family to its rule
(``sharding_rules`` adds them to ``FAMILY_RULES``).

* ``differencing``: ``jnp.diff(x, axis=axis)`` indexes ``x[..., 1:, ...]`` and ``x[..., :-1, ...]``
  along ``axis`` (static slices, as jnp's indexing takes them: ``sharding_indexing.static_slice``)
  and subtracts them (``broadcast``), as jax/_src/numpy/lax_numpy.py's ``diff`` does for ``n=1``;
* ``clamp``: ``lax.clamp(min, x, max)`` is typed as ``x``, whatever ``min`` and ``max`` are
  (``_clamp_sharding_rule`` in jax/_src/lax/lax.py: ``return operand.sharding``).
"""

from __future__ import annotations

from typing import Callable, Dict

from .layout import Spec
from .sharding_families import Call, _NoRule
from .sharding_indexing import static_slice
from .sharding_primitives import axis_argument, broadcast


def _differencing(c: Call) -> Spec:
    (shape, spec), rank = c.x, len(c.x[0])
    if c.op != "jnp.diff":
        raise _NoRule(f"differencing operation {c.op!r}")
    axis = axis_argument(c.static["axis"], rank)
    lead = (slice(None),) * axis
    halves = [static_slice(c.mesh, shape, spec, lead + (s,), c.eager, not c.rules.indexing_infers_sharding)
              for s in (slice(1, None), slice(None, -1))]
    out_shape = tuple(n - 1 if d == axis else n for d, n in enumerate(shape))
    return broadcast([out_shape, out_shape], halves, "diff")


def _clamp(c: Call) -> Spec:
    return c.specs[1]


RULES: Dict[str, Callable[[Call], Spec]] = {"differencing": _differencing, "clamp": _clamp}
