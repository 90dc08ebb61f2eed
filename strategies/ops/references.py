"""numpy references for the catalogue entries numpy has no single function for."""

from __future__ import annotations

import numpy as np

from conformance.model.padding import lax_pad_reference  # noqa: F401 - the catalogue's reference


def clamped_starts(shape, starts, sizes):
    """Where lax.dynamic_slice begins: a negative start counts from the end (start + side), then
    each start is clamped into 0..side - size (same in 0.4.30 and 0.10.2)."""
    return tuple(min(max(int(s) + (n if s < 0 else 0), 0), n - k) for s, n, k in zip(starts, shape, sizes))


def dynamic_slice_reference(x, *starts, sizes):
    begin = clamped_starts(x.shape, starts, sizes)
    return x[tuple(slice(b, b + k) for b, k in zip(begin, sizes))]


def dynamic_update_slice_reference(x, update, *starts):
    begin = clamped_starts(x.shape, starts, update.shape)
    y = x.copy()
    y[tuple(slice(b, b + k) for b, k in zip(begin, update.shape))] = update
    return y


def pad_reference(x, *, widths, mode):
    return np.pad(x, widths, mode=mode)


def shifted_ranges(shape, axis, shift):
    """``(dst, src)`` index tuples along ``axis`` with ``x[dst]`` and ``x[src]`` the same size and
    ``shift`` apart: ``x.at[:-1].set(x[1:])`` is ``shift=1`` on axis 0."""
    n = shape[axis]
    lead = (slice(None),) * axis
    if shift >= 0:
        return lead + (slice(0, n - shift),), lead + (slice(shift, n),)
    return lead + (slice(-shift, n),), lead + (slice(0, n + shift),)


def at_shifted_reference(method: str):
    """``x.at[dst].<method>(x[src])`` for "set" or "add", with ``shifted_ranges``."""
    def reference(x, *, axis, shift):
        dst, src = shifted_ranges(x.shape, axis, shift)
        y = x.copy()
        if method == "set":
            y[dst] = x[src]
        else:
            y[dst] = y[dst] + x[src]
        return y
    return reference


def at_range_reference(method: str):
    """``x.at[index].<method>(u)`` for "min" or "max"."""
    combine = {"min": np.minimum, "max": np.maximum}[method]

    def reference(x, u, *, index):
        y = x.copy()
        y[index] = combine(y[index], u)
        return y
    return reference


def scatter_add_reference(x, idx, u):
    y = x.copy()
    np.add.at(y, idx, u)
    return y
