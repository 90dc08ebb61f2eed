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

from typing import Callable, Dict

import numpy as np

from .triggers import Call


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


def values_of_the_operands(call, expected, got) -> bool:
    """Every wrong element holds a value one of the call's operands holds (a padding value
    included): values read from the wrong positions, none computed."""
    found = _arrays(expected, got)
    if found is None or not isinstance(call, Call) or not call.operands:
        return False
    pool = np.concatenate([np.asarray(x).ravel() for x in call.operands if np.asarray(x).dtype.kind in "biufc"])
    return _among(found[1][found[2]], pool)


def the_operand_in_place(call, expected, got) -> bool:
    """The result has the first operand's shape and every wrong element holds the operand's own
    value at its position: an update dropped, a shift not applied."""
    found = _arrays(expected, got)
    if found is None or not isinstance(call, Call) or not call.operands:
        return False
    x = np.asarray(call.operands[0])
    if x.shape != found[1].shape:
        return False
    with np.errstate(all="ignore"):
        x = x.astype(found[1].dtype)
    wrong = found[2]
    return bool((_bits(found[1][wrong]) == _bits(x[wrong])).all())


def zeros(call, expected, got) -> bool:
    """Every wrong element is zero."""
    found = _arrays(expected, got)
    return found is not None and not found[1][found[2]].any()


def multiplied_by_the_replica_count(call, expected, got) -> bool:
    """Every wrong element is its expected value times a whole number from 2 to 8 (how many devices
    hold its block, which may differ from operand to operand), in the result's own arithmetic."""
    found = _arrays(expected, got)
    if found is None or found[0].dtype.kind not in "iufc":
        return False
    e, g = found[0][found[2]], found[1][found[2]]
    with np.errstate(all="ignore"):
        multiple = np.zeros(e.shape, bool)
        for k in range(2, 9):
            multiple |= (_bits(e * e.dtype.type(k)) == _bits(g)).all(axis=-1)
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


WRONGNESS: Dict[str, Callable[[object, object, object], bool]] = {f.__name__: f for f in (
    values_of_the_expected_result, values_of_the_operands, the_operand_in_place, zeros,
    multiplied_by_the_replica_count, replicated_where_cut_was_asked, cut_finer_than_asked,
    laid_out_as_an_earlier_change,
)}
SHOWN_BY = {name: "layout" if name in ("replicated_where_cut_was_asked", "cut_finer_than_asked",
                                       "laid_out_as_an_earlier_change") else "values" for name in WRONGNESS}
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
