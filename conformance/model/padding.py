"""lax.pad in numpy: the catalogue's reference for it (``strategies.ops``) and what the known
deviations' wrongness patterns compute a pad as a bug leaves it (``conformance.checking.wrongness``)."""

from __future__ import annotations

import numpy as np


def lax_pad_reference(x, value, *, config):
    """lax.pad: ``interior`` copies of ``value`` between elements, then ``low``/``high`` at the
    ends; a negative ``low``/``high`` removes that many elements instead."""
    for axis, (low, high, interior) in enumerate(config):
        n = x.shape[axis]
        size = n + max(n - 1, 0) * interior
        shape = list(x.shape)
        shape[axis] = size
        dilated = np.full(shape, value, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(0, size, interior + 1)
        dilated[tuple(index)] = x
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(low, 0), max(high, 0))
        x = np.pad(dilated, widths, constant_values=value)
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(-low, 0), x.shape[axis] - max(-high, 0))
        x = x[tuple(index)]
    return x
