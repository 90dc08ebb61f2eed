"""How a known deviation's wrong outcome is wrong: a random entry's ``wrong = "values"`` or
``"layout"`` symptom names one (``where = "<name>"``), and a failure is its symptom only when the
predicate holds for what the failed check compared, so that another wrong value inside the trigger
(a value computed wrongly rather than read from the wrong place, a layout cut where the bug leaves
it whole) is not excused.

Vocabulary:

* ``expected`` and ``got`` are what the failed check compared: two arrays for values (the step's own,
  in a program whose failure was localized to a step), two ``{device: block}`` maps or two shard
  shapes for a layout (a block is a ``(start, stop)`` pair per dimension);
* the *wrong elements* are those whose bits differ;
* ``call`` is the candidate the trigger held for (``conformance.checking.triggers.Call``, or another
  property's example: a predicate over values reads a Call's operands and result shape where it
  needs them, and holds for no other example).

Each pattern is a one-sentence rule: ``WRONGNESS`` maps its name to its predicate.
"""

from __future__ import annotations

import itertools
from typing import Callable, Dict

import numpy as np

from conformance.model.padding import lax_pad_reference
from conformance.model.program import LAYOUT_CHANGES
from conformance.model.sharding_rules import shifted_ranges

from .triggers import (AT_UPDATES, CUMULATIVE, STATIC_SLICES, Call, cuts_dim, index_parts,
                       jitted_prefix_slice_with_its_operands_shard_shape,
                       prefix_slice_dims_with_the_operands_shard_shape)


def _bits(x: np.ndarray) -> np.ndarray:
    """``x``'s elements as unsigned integers of their width (a wider one as its bytes, last)."""
    x = np.ascontiguousarray(x).reshape(np.shape(x))
    if x.dtype.itemsize in (1, 2, 4, 8):
        return x.view(f"u{x.dtype.itemsize}").reshape(x.shape + (1,))
    return x.view(np.uint8).reshape(x.shape + (x.dtype.itemsize,))


def _arrays(expected, got):
    """``(expected, got, wrong)``: two arrays of one shape and dtype and the mask of their wrong
    elements; None where they are not two such arrays or nothing is wrong."""
    if not isinstance(expected, np.ndarray) or not isinstance(got, np.ndarray):
        return None
    if expected.shape != got.shape or expected.dtype != got.dtype or expected.dtype.kind not in "biufc":
        return None
    wrong = (_bits(expected) != _bits(got)).any(axis=-1)
    return (expected, got, wrong) if wrong.any() else None


def _among(values: np.ndarray, pool: np.ndarray) -> bool:
    """Whether each of ``values`` is one of ``pool`` (compared as ``values``' dtype, NaN as NaN)."""
    pool = np.asarray(pool).ravel()
    if pool.dtype.kind not in "biufc" or values.size == 0:
        return False
    with np.errstate(all="ignore"):
        pool = pool.astype(values.dtype)
    if values.dtype.kind in "fc":
        nan = np.isnan(values)
        return bool(np.isin(values[~nan], pool).all() and (not nan.any() or np.isnan(pool).any()))
    return bool(np.isin(values, pool).all())


def values_of_the_expected_result(call, expected, got) -> bool:
    """Every wrong element holds a value that the expected result holds elsewhere: values read
    from other positions of the right window (a start clamped otherwise), none computed."""
    found = _arrays(expected, got)
    return found is not None and _among(found[1][found[2]], found[0])


def _operand_values(call) -> "np.ndarray | None":
    """Every value the call's numeric operands hold (a vmap example's: its batches), flattened; None
    for no operands."""
    operands = call.operands if isinstance(call, Call) else getattr(call, "batches", None)
    if not operands:
        return None
    return np.concatenate([np.asarray(x).ravel() for x in operands if np.asarray(x).dtype.kind in "biufc"])


def values_of_the_operands(call, expected, got) -> bool:
    """Every wrong element holds a value one of the call's operands holds (a padding value
    included): values read from the wrong positions, none computed."""
    found, pool = _arrays(expected, got), _operand_values(call)
    return found is not None and pool is not None and _among(found[1][found[2]], pool)


def zeros_or_values_of_the_operands(call, expected, got) -> bool:
    """Every wrong element is zero or holds a value one of the call's operands holds (as
    ``values_of_the_operands``): blocks read from the wrong devices, and blocks no device wrote."""
    found, pool = _arrays(expected, got), _operand_values(call)
    return found is not None and pool is not None and _among(found[1][found[2]], np.append(pool, 0))


def unshifted(call):
    """What ``call`` leaves where its shift is not applied: the first operand itself; for lax.pad
    (``lax_pad_negative``), the same pad with each dimension that has a negative edge and is cut in
    the output (jitted; eager: in the operand) kept in place (its edges ``(low, high)`` as
    ``(0, low + high)``: the same size, nothing moved), the other dimensions padded as asked. None
    for no operands."""
    if not isinstance(call, Call) or not call.operands:
        return None
    x = np.asarray(call.operands[0])
    if call.op != "lax_pad_negative":
        return x
    laid_out = call.in_specs[0] if call.eager and call.in_specs else call.out_spec
    config = tuple((0, lo + hi, i) if (lo < 0 or hi < 0) and cuts_dim(call.mesh, laid_out, d) else (lo, hi, i)
                   for d, (lo, hi, i) in enumerate(call.static["config"]))
    return lax_pad_reference(x, np.asarray(call.operands[1], x.dtype), config=config)


def the_operand_in_place(call, expected, got) -> bool:
    """Every wrong element holds the operand's own value at its position (``unshifted``: for a
    lax.pad, the pad without the move of its negative-edge dimensions): an update dropped, a shift
    not applied."""
    found = _arrays(expected, got)
    x = unshifted(call) if found is not None else None
    if x is None or x.shape != found[1].shape:
        return False
    with np.errstate(all="ignore"):
        x = x.astype(found[1].dtype)
    wrong = found[2]
    return bool((_bits(found[1][wrong]) == _bits(x[wrong])).all())


def zeros(call, expected, got) -> bool:
    """Every wrong element is zero."""
    found = _arrays(expected, got)
    return found is not None and not found[1][found[2]].any()


def joins_made(call) -> int:
    """How many joins ``call`` chains: jnp.pad in a mode that copies the array's own values (edge,
    wrap, reflect, symmetric, ...) joins once per dimension it pads (one concatenate each); any other
    call, one."""
    if isinstance(call, Call) and call.op == "pad" and call.static.get("mode", "constant") != "constant":
        return max(1, sum(1 for w in call.static.get("widths", ()) if any(w)))
    return 1


def multiplied_by_the_replica_count(call, expected, got) -> bool:
    """Every wrong element is its expected value times a whole number from 2 to 8 (how many devices
    hold its block, which may differ from operand to operand), in the result's own arithmetic, as a
    sum of the replicas from +0.0 computes it (a -0.0 comes back +0.0: met on 0.4.36 in the seventh
    matrix pass, seed 2989380259, a stack of [-0.0, 0.125] replicated into a partially replicated
    output); times a product of such numbers, one per join, where the call chains joins
    (``joins_made``: an edge pad over two dimensions multiplies twice)."""
    found = _arrays(expected, got)
    if found is None or found[0].dtype.kind not in "iufc":
        return False
    factors = {1}
    for _ in range(joins_made(call)):
        factors = factors | {f * k for f in factors for k in range(2, 9)}
    e, g = found[0][found[2]], found[1][found[2]]
    with np.errstate(all="ignore"):
        multiple = np.zeros(e.shape, bool)
        for k in sorted(factors - {1}):
            multiple |= (_bits(e * e.dtype.type(k) + e.dtype.type(0)) == _bits(g)).all(axis=-1)
    return bool(multiple.all())


def _blocks(value):
    """The blocks a layout check compared: the values of a ``{device: block}`` map, or None."""
    if isinstance(value, dict) and value and all(isinstance(b, tuple) for b in value.values()):
        return list(value.values())
    return None


def _shape(value):
    return value if isinstance(value, tuple) and all(isinstance(n, (int, np.integer)) for n in value) else None


def _extent(blocks) -> tuple:
    """The whole array the blocks are parts of: per dimension, the first start and the last stop."""
    return tuple((min(b[d][0] for b in blocks), max(b[d][1] for b in blocks)) for d in range(len(blocks[0])))


def replicated_where_cut_was_asked(call, expected, got) -> bool:
    """Devices were to hold different blocks, and every device holds the whole array (or, where a
    shard shape was compared, a shard of the whole result's shape)."""
    e, g = _blocks(expected), _blocks(got)
    if e is not None and g is not None:
        whole = _extent(e)
        return len(set(e)) > 1 and all(b == whole for b in g)
    e, g = _shape(expected), _shape(got)
    whole = getattr(call, "result_shape", None)
    return e is not None and g is not None and whole is not None and g == tuple(whole) and e != g


def cut_finer_than_asked(call, expected, got) -> bool:
    """Every device holds a part of the block it was to hold, and some device a smaller part: the
    result is cut over more than was asked (an axis kept that the layout asked to drop)."""
    e, g = expected, got
    if not (isinstance(e, dict) and isinstance(g, dict) and e and set(g) <= set(e)):
        return False
    if _blocks(e) is None or _blocks(g) is None:
        return False
    inside = all(len(g[d]) == len(e[d]) and all(e0 <= g0 and g1 <= e1 for (g0, g1), (e0, e1) in zip(g[d], e[d]))
                 for d in g)
    return inside and any(g[d] != e[d] for d in g)


def held_by_fewer_devices(call, expected, got) -> bool:
    """Some of the devices that were to hold the result hold nothing, and every device that holds
    a block holds the whole array: the result sits on fewer devices than asked (one, as a
    constant would)."""
    if not (isinstance(expected, dict) and isinstance(got, dict) and got):
        return False
    e, g = _blocks(expected), _blocks(got)
    if e is None or g is None:
        return False
    whole = _extent(e)
    return set(got) < set(expected) and all(b == whole for b in g)


def laid_out_as_an_earlier_change(call, expected, got) -> bool:
    """The result is laid out as one of the layout changes it went through asked (the call's
    ``static["earlier"]``: ``(spec, shape)`` of each, on its mesh), or as that layout and the one
    asked last together (each device's block the overlap of the two: an earlier cut kept beside the
    last one's, met on 0.4.31), not as the last one asks."""
    from conformance.model.layout import Layout
    if not isinstance(call, Call) or call.mesh is None or not isinstance(got, dict) or not isinstance(expected, dict):
        return False

    def overlap(one, other):
        return tuple((max(a0, b0), min(a1, b1)) for (a0, a1), (b0, b1) in zip(one, other))
    for spec, shape in call.static.get("earlier", ()):
        blocks = Layout(call.mesh, spec, tuple(shape)).blocks
        if blocks == got or (set(blocks) == set(got) == set(expected)
                             and all(got[d] == overlap(blocks[d], expected[d]) for d in got)):
            return True
    return False


# The unary steps a window may pass through on its way to the update (dtype-preserving, in numpy).
_UNARY = {"negative": np.negative, "abs": np.abs, "logical_not": np.logical_not}


def _window_steps(call: Call):
    """``(the dynamic_slice, the unary steps from it to the call, in order)`` for a call whose
    first operand a lax.dynamic_slice made through layout changes and ``_UNARY`` steps; else
    ``(None, None)``."""
    return _unary_steps_back_to(call.producers[0] if call.producers else None, ("dynamic_slice",))


def _unary_steps_back_to(made, targets):
    """``(the first step of ``targets`` reached from ``made`` back through layout changes and
    ``_UNARY`` steps, those unary steps in the order they run)``; ``(None, None)`` where another
    step, or an input, comes first."""
    steps = []
    while made is not None and made.op not in targets:
        if made.op in _UNARY:
            steps.append(made.op)
        elif made.op not in LAYOUT_CHANGES + ("layout change of a layout change",):
            return None, None
        made = made.producers[0] if made.producers else None
    return (made, steps[::-1]) if made is not None else (None, None)


def _updated(call: Call, x: np.ndarray):
    """The catalogue's .at[] update ``call`` applied to ``x`` in numpy (its references' rules)."""
    s, ops, y = call.static, call.operands, np.array(x, copy=True)
    if call.op == "at_add_indices":
        np.add.at(y, np.asarray(ops[1]), np.asarray(ops[2]).astype(y.dtype))
    elif call.op in ("at_min", "at_max"):
        f = np.minimum if call.op == "at_min" else np.maximum
        y[s["index"]] = f(y[s["index"]], np.asarray(ops[1]).astype(y.dtype))
    else:  # at_set_shifted, at_add_shifted: x.at[dst].<set|add>(x[src])
        dst, src = shifted_ranges(x.shape, s["axis"], s["shift"])
        y[dst] = x[src] if call.op == "at_set_shifted" else y[dst] + x[src]
    return y


def updated_from_another_window(call, expected, got) -> bool:
    """Every wrong element is what the .at[] update computes from another window of the
    dynamic_slice that made its operand (through layout changes and negations): the update applied
    to a window read at another start of its source, any start, the clamped range's or past it
    (openxla/xla#49121's fold reads the update's elements at the unclamped start), not a value
    computed otherwise."""
    found = _arrays(expected, got)
    if found is None or not isinstance(call, Call) or call.op not in AT_UPDATES:
        return False
    made, steps = _window_steps(call)
    if made is None:
        return False
    source, sizes = np.asarray(made.operands[0]), tuple(made.static["sizes"])
    dtype = np.asarray(call.operands[0]).dtype
    with np.errstate(all="ignore"):
        for starts in itertools.product(*(range(n) for n in source.shape)):
            window = source
            for axis, (t, k) in enumerate(zip(starts, sizes)):  # (read past the end: the last element)
                window = np.take(window, np.minimum(t + np.arange(k), source.shape[axis] - 1), axis=axis)
            for step in steps:
                window = _UNARY[step](window)
            other = _updated(call, window.astype(dtype))
            if other.shape == found[1].shape and other.dtype == found[1].dtype and \
                    (_bits(other)[found[2]] == _bits(found[1])[found[2]]).all():
                return True
    return False


def values_of_the_sliced_operand(call, expected, got) -> bool:
    """Every wrong element holds a value of the operand static slices read from, where they made
    the call's first operand (through layout changes and ``_UNARY`` steps, applied to that
    operand's values too; the first slice of a slice of a slice): an element read from another part
    of the operand than the slices'."""
    found = _arrays(expected, got)
    if found is None or not isinstance(call, Call) or not call.producers:
        return False
    steps, made, source = [], call.producers[0], None
    while made is not None:
        if made.op in _UNARY:
            steps.append(made.op)
        elif made.op in STATIC_SLICES:
            source, between = made, list(steps)  # (the unary steps between this slice and the call)
        elif made.op not in LAYOUT_CHANGES + ("layout change of a layout change",):
            break
        made = made.producers[0] if made.producers else None
    return source is not None and _wrong_among_the_operand_after(found, source, between[::-1])


def _wrong_among_the_operand_after(found, made: Call, steps) -> bool:
    """Whether the wrong elements of ``found`` are among the values of ``made``'s first operand with
    ``steps`` (``_UNARY`` names, in the order they run after ``made``) applied."""
    if not made.operands:
        return False
    pool = np.asarray(made.operands[0])
    with np.errstate(all="ignore"):
        for step in steps:
            pool = _UNARY[step](pool)
    return _among(found[1][found[2]], np.asarray(pool).astype(found[1].dtype).reshape(-1))


def within_two_ulps(call, expected, got) -> bool:
    """Every wrong element is a finite float at most two units in the last place from the expected
    one: a rounding difference, not a value computed otherwise."""
    found = _arrays(expected, got)
    if found is None or found[0].dtype.kind != "f":
        return False
    e, g = found[0][found[2]], found[1][found[2]]
    low, high = e, e
    for _ in range(2):
        low, high = np.nextafter(low, -np.inf), np.nextafter(high, np.inf)
    return bool((np.isfinite(e) & np.isfinite(g) & (low <= g) & (g <= high)).all())


def negative_zeros_made_positive(call, expected, got) -> bool:
    """Every wrong element is a -0.0 of the expected result returned as +0.0: the sign of a zero
    lost (a masked sum, -0.0 + 0.0), no value otherwise changed."""
    found = _arrays(expected, got)
    if found is None or found[0].dtype.kind != "f":
        return False
    e, g = found[0][found[2]], found[1][found[2]]
    return bool(((e == 0) & np.signbit(e) & (g == 0) & ~np.signbit(g)).all())


# The catalogue's reductions a step may apply to an update's elements (its numpy function).
_REDUCTIONS = {"sum_int": np.sum, "sum_float": np.sum, "max": np.max, "min_int": np.min}


def updated_outside_a_prefix_slice_beside_it_as_zeros(call, expected, got) -> bool:
    """Every wrong element is what the steps from an .at[] update to the call (layout changes,
    ``_UNARY`` steps, ``_REDUCTIONS``) compute when the update's elements outside a prefix slice of its operand
    beside it (``jitted_prefix_slice_with_its_operands_shard_shape``) are 0: the update written
    into the slice's gathered buffer, padded with zeros to the operand's shape."""
    found = _arrays(expected, got)
    if found is None or not isinstance(call, Call):
        return False
    chain, made = [], call
    while made is not None and made.op not in AT_UPDATES:
        if made.op not in tuple(_UNARY) + tuple(_REDUCTIONS) + LAYOUT_CHANGES + ("layout change of a layout change",):
            return False
        chain.append(made)
        made = made.producers[0] if made.producers else None
    if made is None or not made.operands:
        return False
    x = np.asarray(made.operands[0])
    for other in made.beside:
        if not jitted_prefix_slice_with_its_operands_shard_shape(other):
            continue
        index = index_parts(other.static["index"])
        inside = np.zeros(x.shape, dtype=bool)
        inside[tuple(index) + (slice(None),) * (x.ndim - len(index))] = True
        value = np.where(inside, _updated(made, x), np.zeros((), x.dtype))
        with np.errstate(all="ignore"):
            for step in chain[::-1]:
                if step.op in _UNARY:
                    value = _UNARY[step.op](value)
                elif step.op in _REDUCTIONS:
                    dtype = {"dtype": value.dtype} if _REDUCTIONS[step.op] is np.sum else {}
                    value = _REDUCTIONS[step.op](value, axis=step.static.get("axis"),
                                                 keepdims=step.static.get("keepdims", False), **dtype)
        value = np.asarray(value)
        if value.shape == found[1].shape and value.dtype == found[1].dtype and \
                (_bits(value)[found[2]] == _bits(found[1])[found[2]]).all():
            return True
    return False


def scanned_as_if_past_a_prefix_slice_beside_it_were_its_identity(call, expected, got) -> bool:
    """Every wrong element is what the cumulative step that made the call's value (the call, or
    through ``_UNARY`` steps and layout changes) computes when its operand's elements past a prefix
    slice beside it (``jitted_prefix_slice_with_its_operands_shard_shape``, along the scan's axis)
    are the scan's identity: a forward scan (cumsum, cumprod, cummax) stops at the slice's end, its
    wrong elements past the slice all the result's last element inside it; a reverse cumsum is 0
    past the slice and sums the slice's elements only before it."""
    found = _arrays(expected, got)
    if found is None or not isinstance(call, Call):
        return False
    made, steps = _unary_steps_back_to(call, CUMULATIVE)
    if made is None or not made.operands or found[1].ndim == 0:
        return False
    x = np.asarray(made.operands[0])
    if x.shape != found[1].shape:
        return False
    axis = made.static.get("axis", 0) % x.ndim
    for other in made.beside:
        if axis not in prefix_slice_dims_with_the_operands_shard_shape(other):
            continue
        part = index_parts(other.static["index"])[axis]
        stop = part.indices(x.shape[axis])[1]
        past = (np.arange(x.shape[axis]) >= stop).reshape((-1,) + (1,) * (x.ndim - 1 - axis))
        past = np.broadcast_to(past, x.shape)
        if made.op == "cumsum_reverse":
            kept = np.where(past, np.zeros((), x.dtype), x)
            with np.errstate(all="ignore"):
                value = np.flip(np.cumsum(np.flip(kept, axis), axis=axis, dtype=x.dtype), axis)
                for op in steps:
                    value = _UNARY[op](value)
            value = np.asarray(value)
            if value.dtype != found[1].dtype:
                continue
        else:
            if not (past | ~found[2]).all():  # (a wrong element inside the slice)
                continue
            last = np.take(found[1], [stop - 1], axis=axis)
            value = np.where(past, np.broadcast_to(last, x.shape), found[1])
        if (_bits(value)[found[2]] == _bits(found[1])[found[2]]).all():
            return True
    return False


def values_of_the_dynamic_slices_operand(call, expected, got) -> bool:
    """Every wrong element holds a value of the operand of the lax.dynamic_slice that made the call's
    first operand (through layout changes and ``_UNARY`` steps, applied to that operand's values
    too): read at another start than the clamped one (openxla/xla#49121's fold), none computed."""
    found = _arrays(expected, got)
    if found is None or not isinstance(call, Call):
        return False
    made, steps = _window_steps(call)
    return made is not None and _wrong_among_the_operand_after(found, made, steps)


def values_of_the_updates_operand_after_it(call, expected, got) -> bool:
    """Every wrong element holds a value of the operand of the .at[] update that made the call's
    value (the call itself, or through ``_UNARY`` steps and layout changes, applied to that operand's
    values too): elements of the operand left where the update was to write, or read from the wrong
    positions, none computed."""
    found = _arrays(expected, got)
    if found is None or not isinstance(call, Call):
        return False
    made, steps = _unary_steps_back_to(call, AT_UPDATES)
    return made is not None and _wrong_among_the_operand_after(found, made, steps)


WRONGNESS: Dict[str, Callable[[object, object, object], bool]] = {f.__name__: f for f in (
    values_of_the_expected_result, values_of_the_operands, zeros_or_values_of_the_operands, the_operand_in_place, zeros,
    multiplied_by_the_replica_count, replicated_where_cut_was_asked, cut_finer_than_asked,
    laid_out_as_an_earlier_change, updated_from_another_window, values_of_the_sliced_operand,
    updated_outside_a_prefix_slice_beside_it_as_zeros, within_two_ulps, values_of_the_updates_operand_after_it,
    scanned_as_if_past_a_prefix_slice_beside_it_were_its_identity, values_of_the_dynamic_slices_operand,
    negative_zeros_made_positive, held_by_fewer_devices,
)}
SHOWN_BY = {name: "layout" if name in ("replicated_where_cut_was_asked", "cut_finer_than_asked",
                                       "laid_out_as_an_earlier_change", "held_by_fewer_devices")
            else "values" for name in WRONGNESS}
def holds(name: str, candidates, expected, got) -> bool:
    """Whether pattern ``name`` holds for ``expected``/``got`` with one of ``candidates`` (the
    calls a trigger held for; a candidate's own ``values``, a program step's localized
    ``(expected, got)``, replace the failed check's)."""
    rule = WRONGNESS[name]
    for c in candidates or (None,):
        values = getattr(c, "values", None)
        if rule(c, *(values if values is not None else (expected, got))):
            return True
    return False
