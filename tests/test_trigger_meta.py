"""A meta-test per trigger: on an example the trigger holds for, a failure that shows an entry's
own symptom is excused, and an unrelated failure planted into the same example is not (another
exception type, a wrong dtype, a wrong value where the entry names another outcome, the unsharded
run against numpy, another mesh kind); on its near miss (tests/trigger_examples.py: the example
with the condition its bug needs taken away) not even the entry's own symptom is excused.

A failure is planted as ``Seen`` (what the excuses match: conformance.checking.symptoms), and the
entry's own symptom as a witness drawn from its patterns (``hypothesis.strategies.from_regex``);
one plant per trigger also goes through ``Excuses.way`` as a raised exception, as the property
runs it. The table of triggers and their meta-tests is tests/TRIGGERS.md.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from pathlib import Path
from typing import List, Tuple

import pytest
import numpy as np
from hypothesis import find, strategies as st

from conformance.checking import triggers
from conformance.checking.case import ORACLE_NAMES
from conformance.checking.symptoms import MESH_KINDS, Seen
from conformance.checking.ways import Way, ran_in
from conformance.runner.deviations import DEVIATIONS_FILE, Deviation, Excuses, load_deviations
from tests import trigger_examples as examples

TABLE = Path(__file__).with_name("TRIGGERS.md")


@functools.lru_cache(maxsize=None)
def shipped_entries() -> Tuple[Deviation, ...]:
    return tuple(load_deviations(DEVIATIONS_FILE))


def entries_naming(trigger: str) -> List[Deviation]:
    return [e for e in shipped_entries() if e.trigger == trigger]


@functools.lru_cache(maxsize=None)
def matching(pattern: str, default: str, avoid: str = "") -> str:
    """The simplest string ``pattern`` is found in (``default`` with no pattern), not one that
    ``avoid`` is found in."""
    if not pattern:
        return default
    return find(st.from_regex(pattern), lambda s: not (avoid and re.search(avoid, s)))


def witness(entry: Deviation, pair: examples.Pair) -> Seen:
    """A failure that shows ``entry``'s symptom: its exception (or wrong outcome), a message, check
    and frame its patterns find, and what the check compared as the bug makes it (``pair.wrong``)."""
    s = entry.symptom
    check = matching(s.at, f"{s.ways[0]} result" if s.ways else "(b) jit result", ORACLE_NAMES.pattern)
    if s.ways and not ran_in(check) & set(s.ways):  # (the check's name starts with the way it ran in)
        check = f"{s.ways[0]} {check.lstrip()}"
    if s.raises:
        return Seen(s.raises[0], matching(s.match, "planted"), check, "raised", matching(s.raised_in, ""))
    wrong = pair.wrong.get(s.where) if isinstance(pair.wrong, dict) else pair.wrong  # (one form per where)
    expected, got = wrong or (None, None)
    return Seen("", matching(s.match, "planted"), check, s.wrong, expected=expected, got=got)


def computed_wrongly(expected, example):
    """``expected`` gone wrong otherwise than a misread: one element computed anew (a value neither
    it nor the example's operands hold, not zero, no multiple of it), or every device's block moved
    past the one asked (or a shard shape that is no one's)."""
    if isinstance(expected, np.ndarray):
        operands = [np.asarray(x).ravel() for x in getattr(example, "operands", ())]
        taken = set(np.concatenate([expected.ravel().astype(np.int64)] + [x.astype(np.int64) for x in operands]
                                   + [expected.ravel().astype(np.int64) * k for k in range(2, 9)]).tolist())
        fresh = next(v for v in range(7, 10**6) if v not in taken)
        got = expected.copy()
        got.flat[0] = expected.dtype.type(fresh)
        return got
    if isinstance(expected, dict):
        return {d: tuple((stop, stop + 1) for _, stop in block) for d, block in expected.items()}
    return tuple(n + 1 for n in expected)


def mesh_kind_of(entry: Deviation, example) -> str:
    return entry.symptom.mesh or getattr(example, "axis_type", None)


def plants(entry: Deviation, pair: examples.Pair) -> List[Tuple[str, Seen, object]]:
    """The unrelated failures planted for ``entry``: (what, the failure, the mesh kind it is seen on
    or None for the example's)."""
    own = witness(entry, pair)
    s = entry.symptom
    out = [("another exception type", replace(own, raised="ZeroDivisionError", shows="raised"), None)]
    if s.wrong != "dtype":
        out.append(("a wrong dtype", replace(own, raised="", shows="dtype"), None))
    if s.raises:
        out.append(("wrong values instead of the exception", replace(own, raised="", shows="values"), None))
    elif s.wrong != "values":
        out.append(("wrong values", replace(own, shows="values"), None))
    out.append(("the unsharded run against numpy", replace(own, check="unsharded result vs numpy", oracle=True), None))
    other = next((w for w in Way if w not in s.ways), None) if s.ways else None
    if other is not None:
        out.append((f"in another way, {other.letter}", replace(own, check=f"{other} {own.check.split(' ', 1)[1]}"),
                    None))
    if s.where:
        what = "a value computed wrongly in one element" if s.wrong == "values" else "blocks past those asked"
        out.append((what, replace(own, got=computed_wrongly(own.expected, pair.holds)), None))
    if s.mesh:
        out.append((f"on an {next(k for k in MESH_KINDS if k != s.mesh)} mesh", own,
                    next(k for k in MESH_KINDS if k != s.mesh)))
    return out


def table_rows():
    rows = []
    for name in triggers.TRIGGERS:
        entries = entries_naming(name)
        named = ", ".join(f"`{e.where.rsplit(':', 1)[-1]}`" for e in entries)
        kinds = sorted({what for e in entries for what, _, _ in plants(e, examples.EXAMPLES[name])}, key=str)
        rows.append((name, f"{len(entries)} (lines {named})", kinds))
    return rows


def test_every_trigger_has_an_example_and_an_entry_and_every_example_a_trigger():
    assert sorted(examples.EXAMPLES) == sorted(triggers.TRIGGERS), (
        f"got examples for {sorted(set(examples.EXAMPLES) - set(triggers.TRIGGERS))} that are no trigger, but "
        f"should have one for each of {sorted(set(triggers.TRIGGERS) - set(examples.EXAMPLES))}")
    unused = [name for name in triggers.TRIGGERS if not entries_naming(name)]
    assert not unused, f"got triggers no entry of suites/known_deviations.toml names: {unused}, but should have none"


@pytest.mark.parametrize("trigger", list(triggers.TRIGGERS))
def test_no_entry_of_a_trigger_excuses_an_unrelated_failure(trigger, monkeypatch):
    import hypothesis
    monkeypatch.setattr(hypothesis, "event", lambda *a, **k: None)
    pair = examples.EXAMPLES[trigger]
    assert triggers.holds(trigger, [pair.holds]), f"got {trigger} not holding for its example, but should hold"
    assert not triggers.holds(trigger, [pair.misses]), (
        f"got {trigger} holding for its near miss ({pair.taken_away}), but should not")
    for entry in entries_naming(trigger):
        own = witness(entry, pair)
        why = entry.why_not(own, [pair.holds], mesh_kind_of(entry, pair.holds))
        assert why is None, f"got the entry at {entry.where} not excusing its own symptom ({own.describe()}): {why}"
        why = entry.why_not(own, [pair.misses], mesh_kind_of(entry, pair.holds))
        assert why and why.startswith("its trigger"), (
            f"got {why!r} for the near miss ({pair.taken_away}), but should be its trigger not holding [{entry.where}]")
        for what, seen, kind in plants(entry, pair):
            why = entry.why_not(seen, [pair.holds], kind or mesh_kind_of(entry, pair.holds))
            assert why is not None, f"got {what} ({seen.describe()}) excused by {entry.where}, but should fail"
        excuses = Excuses([entry])
        with pytest.raises(ZeroDivisionError) as raised:
            with excuses.way([pair.holds], mesh_kind=mesh_kind_of(entry, pair.holds)):
                raise ZeroDivisionError("planted")
        assert any("not a known deviation" in note for note in raised.value.__notes__)
        assert excuses.report() == []


def test_the_table_of_triggers_and_their_meta_tests_is_current():
    written = examples.table(table_rows())
    assert TABLE.read_text() == written, ("got tests/TRIGGERS.md out of date, but should be current: "
                                          "python -m tests.test_trigger_meta > tests/TRIGGERS.md")


@pytest.mark.parametrize("broadened, trigger", [
    ("the trigger holds for every example", "clamped_start_with_a_cut_output"),
    ("the wrongness holds for any wrong values", "clamped_start_with_a_cut_output"),
    ("the symptom takes any exception type", "explicit_at_add"),
    ("the symptom takes any outcome", "zero_size_result_constrained"),
])
def test_the_meta_test_fails_for_an_excuse_broadened(broadened, trigger, monkeypatch):
    """The meta-test of a trigger fails when its excuse is made broader than its bug: a trigger that
    holds everywhere (the near miss is excused), a wrongness that takes any values, a symptom that
    reads no exception type or no outcome (a planted failure is excused)."""
    from conformance.checking import symptoms, wrongness
    if broadened.startswith("the trigger"):
        monkeypatch.setitem(triggers.TRIGGERS, trigger, lambda example: True)
    elif broadened.startswith("the wrongness"):
        monkeypatch.setitem(wrongness.WRONGNESS, "values_of_the_expected_result", lambda call, e, g: True)
    else:
        keep = symptoms.Symptom.why_not

        def broad(self, seen, mesh_kind=None, candidates=()):
            loose = dict(raises=(seen.raised,) if self.raises and seen.raised else self.raises) \
                if "exception" in broadened else dict(wrong=seen.shows if seen.shows != "raised" else self.wrong)
            return keep(replace(self, **loose), seen, mesh_kind, candidates)
        monkeypatch.setattr(symptoms.Symptom, "why_not", broad)
    with pytest.raises(AssertionError, match="but should"):
        test_no_entry_of_a_trigger_excuses_an_unrelated_failure(trigger, monkeypatch)


if __name__ == "__main__":
    import sys
    sys.stdout.write(examples.table(table_rows()))


@pytest.mark.parametrize("shape, widths, mode, slices", [
    ((6,), ((1, 1),), "symmetric", [(1,), (1,)]),  # a one-element mirror on each side
    ((2,), ((5, 0),), "symmetric", [(2,), (2,), (1,)]),  # chunks of at most the side: 2 + 2 + 1
    ((2,), ((3, 3),), "wrap", [(1,), (1,)]),  # a whole copy each side, then one element
    ((2,), ((2, 4),), "wrap", []),  # whole copies only: no slice
    ((1, 3), ((1, 0), (0, 1)), "wrap", [(2, 1)]),  # a whole copy of the row, then a column spanning both rows
    ((0, 2), ((1, 1), (1, 0)), "symmetric", [(0, 1)]),  # an empty dimension is not padded
    ((3,), ((1, 1),), "constant", []),  # lax.pad: nothing concatenated
])
def test_pad_slices_follows_jnp_pad(shape, widths, mode, slices):
    """pad_slices lists the slices jnp.pad concatenates, worked by hand from JAX's _pad_wrap and
    _pad_symmetric_or_reflect."""
    got = triggers.pad_slices(shape, widths, mode)
    assert got == slices, f"got {got}, but should be {slices} [pad_slices({shape}, {widths}, {mode!r})]"


@pytest.mark.parametrize("shape, shift, spec, holds", [
    ((6, 2), 5, ("a",), True),  # the matrix's finding: a one-row window on rows cut in blocks of 3
    ((6, 2), -5, ("b",), True),  # either direction, any axis of size > 1
    ((6, 2), 4, ("a",), False),  # a two-row window: right
    ((6, 2), 3, ("a",), False),  # a window as long as a block: right
    ((4, 2), 3, ("b",), False),  # a one-row window on rows cut in blocks of one: right
])
def test_a_constraint_just_cutting_a_value_holds_for_shifted_windows_of_one(shape, shift, spec, holds):
    """at_update_of_a_value_a_constraint_has_just_cut holds for a shifted .at[].set after a constraint
    from P() exactly where the window is one element on a dimension cut into longer blocks (measured
    on 0.10.2, the trigger's docstring)."""
    x = np.zeros(shape, np.uint32)
    update = examples.call("at_set_shifted", (x,), {"axis": 0, "shift": shift}, in_specs=(spec,), out_spec=(),
                           way=examples.CONSTRAINED, producers=(examples.constraint((), spec),))
    got = triggers.at_update_of_a_value_a_constraint_has_just_cut(update)
    assert got is holds, (f"got {got}, but should be {holds} [at_update_of_a_value_a_constraint_has_just_cut of "
                          f".at[].set shifted {shift} of x{list(shape)} constrained from P() to P{spec}]")


@pytest.mark.parametrize("pad_spec, holds", [(("a",), True), ((), False)])
def test_a_moved_start_holds_for_an_operand_padded_from_a_cut_value(pad_spec, holds):
    """moved_start_with_a_cut_operand_or_output reads through a pad: a dynamic_update_slice at a
    start needing clamping, of an operand typed replicated that a pad of a cut value computed, holds
    (XLA keeps the pad's result cut; met on 0.10.2, seed 2503216327); of a pad of a replicated value,
    into a replicated output, it does not."""
    from tests.trigger_examples import call
    x5 = np.arange(5, dtype=np.int32)
    pad = call("pad", (np.arange(4, dtype=np.int32),), {"widths": ((1, 0),), "mode": "constant"},
               in_specs=(pad_spec,), out_spec=())
    update = call("dynamic_update_slice", (x5, x5[:1], np.int32(5)), in_specs=((), (), ()), out_spec=(),
                  producers=(pad, None, None))
    assert triggers.TRIGGERS["moved_start_with_a_cut_operand_or_output"](update) is holds


@pytest.mark.parametrize("x_spec, holds", [((None, "a"), True), ((), False)])
def test_a_strided_slice_holds_for_an_operand_selected_from_a_cut_value(x_spec, holds):
    """strided_slice_of_a_cut_dimension reads through a selection: x[::2, ::-3] of lax.select(c, x0,
    x0), typed as our model leaves it (unknown), holds where x0 cuts the strided dimension 1 (met on
    0.10.2, seed 2177110864); where nothing the selection reads cuts it, it does not."""
    from tests.trigger_examples import call
    x0 = np.arange(8, dtype=np.uint32).reshape(2, 2, 2)
    select = call("select", (np.ones((2, 2, 2), bool), x0, x0), in_specs=((None, None, "a"), x_spec, x_spec))
    sliced = call("strided_slice", (x0,), {"index": (slice(None, None, 2), slice(None, None, -3))},
                  in_specs=(None,), out_spec=(), producers=(select,))
    assert triggers.TRIGGERS["strided_slice_of_a_cut_dimension"](sliced) is holds
