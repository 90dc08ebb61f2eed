"""Where the model-program suites' values go under a parallel layout (``strategies.parallelism``):
one ``Placement`` per layout, used inside the programs of ``suites/test_model_programs.py`` and
``suites/test_training.py``, and the spec of every array role the programs name.

``Placement``'s source is pasted into the model programs' reproduction scripts
(``inspect.getsource``): it uses only ``jax``, ``jnp`` and ``CONSTRAIN``, which those scripts
define (``CONSTRAIN`` as ``compat.constrain`` spells it on the running release).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from conformance.jaxside import bridge, compat


def CONSTRAIN(x, sharding, axis_type):  # (capitals: the reproduction scripts define it too)
    return compat.constrain(x, sharding, axis_type)


class Placement:
    """Where a program's values go under a layout: ``specs`` names a spec per array role, on
    ``mesh`` (a jax Mesh) with ``axis_type`` axes. The one-device twin has ``mesh=None``, and every
    hook is then the identity (the same arithmetic, nothing placed). ``param`` is the FSDP
    all-gather (the parameter constrained to its spec without the FSDP axes); ``act`` constrains an
    activation; ``dot`` is an einsum summing in float32, naming its ``out_sharding`` on Explicit
    axes (JAX asks for it where a contracted dimension is split); ``take`` is ``table[ids]``, with
    its ``out_sharding`` on Explicit axes. ``contract`` and ``take_rows`` are an einsum in its
    operands' precision and ``table[ids]`` laid out as their role on either axis type: through the
    ``out_sharding`` on Explicit axes, constrained after on Auto ones."""

    def __init__(self, mesh=None, axis_type="Auto", specs=None, gathered=None):
        self.mesh, self.axis_type = mesh, axis_type
        self.specs, self.gathered = dict(specs or {}), dict(gathered or {})

    def _sharding(self, spec):
        return jax.sharding.NamedSharding(self.mesh, jax.sharding.PartitionSpec(*spec))

    def _explicit(self):
        return self.mesh is not None and self.axis_type == "Explicit"

    def param(self, w, role):
        if self.mesh is None:
            return w
        return CONSTRAIN(w, self._sharding(self.gathered[role]), self.axis_type)

    def act(self, x, role):
        if self.mesh is None:
            return x
        return CONSTRAIN(x, self._sharding(self.specs[role]), self.axis_type)

    def take(self, table, ids, role):
        """``table[ids]``; on Explicit axes with the out_sharding JAX asks for (``.at[].get``)."""
        if self._explicit():
            return table.at[ids].get(out_sharding=self._sharding(self.specs[role]))
        return table[ids]

    def take_rows(self, table, ids, role):
        """``table[ids]`` laid out as ``role``: ``take``, constrained after on Auto axes."""
        return self.take(table, ids, role) if self._explicit() else self.act(table[ids], role)

    def dot(self, subscripts, a, b, role, keep_float32=False):
        kwargs = {}
        if self._explicit():
            kwargs["out_sharding"] = self._sharding(self.specs[role])
        y = jnp.einsum(subscripts, a, b, preferred_element_type=jnp.float32, **kwargs)
        return y if keep_float32 else y.astype(a.dtype)

    def contract(self, subscripts, a, b, role):
        """``jnp.einsum(subscripts, a, b)`` (its operands' precision) laid out as ``role``: on Explicit
        axes through its ``out_sharding``, constrained after on Auto ones."""
        if self._explicit():
            return jnp.einsum(subscripts, a, b, out_sharding=self._sharding(self.specs[role]))
        return self.act(jnp.einsum(subscripts, a, b), role)


@functools.lru_cache(maxsize=None)
def placement(layout) -> Placement:
    """The ``Placement`` of ``layout`` (a ``strategies.parallelism.ParallelLayout``: its mesh and
    axis type, every role's spec); ``layout`` None: the one-device twin's, ``Placement()``."""
    if layout is None:
        return Placement()
    return Placement(bridge.jax_mesh(layout.mesh, layout.axis_type), layout.axis_type, layout.role_specs(),
                     layout.gathered_role_specs())


def placement_literal(layout) -> str:
    """``placement(layout)`` as a reproduction script writes it (its ``mesh`` the layout's)."""
    return f"Placement(mesh, {layout.axis_type!r}, {layout.role_specs()!r}, {layout.gathered_role_specs()!r})"


__all__ = ["CONSTRAIN", "Placement", "placement", "placement_literal"]
