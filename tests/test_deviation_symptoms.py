"""Known deviations excuse only their own symptom: the symptom and trigger matchers against
hand-built failures, the deviation file's format 2 and its refusals, and, end to end, one meta-test
per excuse path that plants an unrelated failure and shows the run goes red.

Excuse paths: a strict entry's test (only a failure with the entry's symptom is its xfail); a
random property's examples (only those the trigger holds for that fail with the symptom); the
unsharded check (never excused); a generated program's step (only the failing step, or a step the
failing output depends on); an Explicit mesh's ShardingTypeError (only where our sharding-rule
model rejects the operands).
"""

import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from dataclasses import replace

import numpy as np
import pytest

from conformance.checking.case import Case, ConformanceFailure
from conformance.checking.symptoms import Seen, Symptom
from conformance.checking import triggers
from conformance.model.layout import MeshModel
from conformance.runner.deviations import (DEVIATIONS_FILE, Deviation, Excuses, KnownDeviationSeen, load_deviations,
                                           strict_verdict)
from conformance.runner.devices import UsageError
from conformance.runner.pytest_process import fresh_environment
from conformance.checking.ways import Way
from strategies.batched import VmapExample

ROOT = Path(__file__).resolve().parents[1]
MESH = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))


def failure_of(check) -> BaseException:
    """The exception ``check(case)`` raises on a Case."""
    with pytest.raises(Exception) as caught:
        check(Case("f(x)"))
    return caught.value


# --- Seen and Symptom -------------------------------------------------------------------------
def test_a_failure_is_seen_as_its_check_and_what_it_shows():
    """Wrong values, a wrong layout, an exception inside accepts(), and a bare exception each read
    as what they are."""
    values = Seen.of(failure_of(lambda c: c.same_bits("(b) jit result", np.array([1]), np.array([2]))))
    assert (values.raised, values.check, values.shows) == ("", "(b) jit result", "values")
    shape = Seen.of(failure_of(lambda c: c.same_bits("r", np.zeros(2), np.zeros(3))))
    assert shape.shows == "shape"
    layout = Seen.of(failure_of(lambda c: c.index_map("x sharding", {0: 1}, {0: 2})))
    assert layout.shows == "layout"
    raised = Seen.of(failure_of(lambda c: c.accepts("(a) eager", lambda: int("x"))))
    assert (raised.raised, raised.check, raised.shows) == ("ValueError", "(a) eager", "raised")
    assert "invalid literal" in raised.message
    bare = Seen.of(KeyError("k"))
    assert (bare.raised, bare.check, bare.shows) == ("KeyError", "", "raised")
    accepted = Seen.of(failure_of(lambda c: c.rejects("Mesh", lambda: 1, (ValueError,))))
    assert accepted.shows == "accepted"


@pytest.mark.parametrize("table, seen, why", [
    ({"raises": "ValueError", "match": "^Incompatible"},
     Seen("ValueError", "Incompatible types", "(a) eager", "raised"), None),
    ({"raises": "ValueError", "match": "^Incompatible"},
     Seen("ValueError", "another message", "(a) eager", "raised"), "does not match"),
    ({"raises": "ValueError"}, Seen("TypeError", "m", "(a) eager", "raised"), "expected ValueError"),
    ({"raises": "ValueError"}, Seen("", "wrong", "(a) eager", "values"), "expected ValueError"),
    ({"wrong": "values", "at": r"^\(b\)"}, Seen("", "w", "(b) jit result", "values"), None),
    ({"wrong": "values", "at": r"^\(b\)"}, Seen("", "w", "(a) eager result", "values"), "the check is not"),
    ({"wrong": "values", "ways": ["(b)", "(c)"]},
     Seen("", "w", "(c) jit with sharding constraints output v1", "values"), None),
    ({"wrong": "values", "ways": ["(b)", "(c)"]}, Seen("", "w", "(b)/(c) in a subprocess", "values"), None),
    ({"wrong": "values", "ways": ["(b)"]}, Seen("", "w", "(a) eager v1 = jnp.negative(v0)", "values"),
     "the check ran in (a), not in (b)"),
    ({"raises": "ValueError", "ways": ["(a)"]}, Seen("ValueError", "m", "device_put of x", "raised"), "ran in no way"),
    ({"wrong": "values"}, Seen("", "w", "(b) jit result", "layout"), "expected wrong values"),
    ({"wrong": "values"}, Seen("", "w", "unsharded result vs numpy", "values", oracle=True), "never excused"),
    ({"wrong": "values"}, Seen("", "w", "(0) unsharded v0 = -x0 vs numpy", "values", oracle=True), "never excused"),
    ({"raises": ["JaxRuntimeError", "XlaRuntimeError"]}, Seen("XlaRuntimeError", "m", "jit", "raised"), None),
])
def test_a_symptom_explains_only_its_own_failures(table, seen, why):
    """An exception of another class or message, a wrong outcome of another kind or at another
    check, and any failure of the unsharded run are not the symptom."""
    got = Symptom.parse(table).why_not(seen)
    assert (got is None) if why is None else (got is not None and why in got), got


def test_a_symptom_limited_to_a_mesh_kind_explains_failures_on_that_kind_only():
    symptom = Symptom.parse({"raises": "ValueError", "mesh": "Explicit"})
    seen = Seen("ValueError", "m", "(a) eager", "raised")
    assert symptom.why_not(seen, "Explicit") is None
    assert "limited to Explicit" in symptom.why_not(seen, "Auto")
    assert "does not say its mesh's kind" in symptom.why_not(seen)  # a property that passes none: not excused


@pytest.mark.parametrize("table, message", [
    ({}, "either raises"),
    ({"raises": "ValueError", "wrong": "values"}, "either raises"),
    ({"wrong": "nonsense"}, "not one of"),
    ({"raises": "not a class"}, "name exception classes"),
    ({"raises": "ValueError", "match": "("}, "not a regular expression"),
    ({"raises": "ValueError", "mesh": "explicit"}, "not one of Auto, Explicit"),
    ({"raises": "ValueError", "messge": "x"}, "unknown key(s) messge"),
])
def test_a_malformed_symptom_is_refused_with_its_reason(table, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Symptom.parse(table)


# --- the file -----------------------------------------------------------------------------------
ENTRY = '''
[[deviation]]
test = "suites/test_x.py::test_y"
jax = ">=0.4.30"
reason = "r"
kind = "bug"
upstream = "none found"
'''


@pytest.mark.parametrize("text, message", [
    (ENTRY + "symptom = { raises = 'ValueError' }\n", "format 1 is not read"),
    ("format = 2\n" + ENTRY, "lacks symptom"),
    ("format = 2\n" + ENTRY + "symptom = { raises = 'ValueError' }\nstrict = false\n"
     "reproduced_by = 'suites/t.py::test_r'\n", "must name the trigger"),
    ("format = 2\n" + ENTRY + "symptom = { raises = 'ValueError' }\n"
     "trigger = 'at_update_of_a_value_a_constraint_has_just_cut'\n",
     "takes no trigger"),
    ("format = 2\n" + ENTRY + "symptom = { raises = 'ValueError' }\nstrict = false\n"
     "reproduced_by = 'suites/t.py::test_r'\ntrigger = 'no_such_trigger'\n", "unknown trigger"),
    ("format = 2\n" + ENTRY + "symptom = { raises = 'ValueError' }\nbackend_ = 'tpu'\n", "unknown key(s) backend_"),
    ("format = 2\n" + ENTRY + "symptom = { raises = 'ValueError', mesh = 'Explicit' }\n", "takes no mesh"),
])
def test_a_deviation_file_is_refused_with_file_line_and_reason(tmp_path, text, message):
    path = tmp_path / "mine.toml"
    path.write_text(text)
    with pytest.raises(UsageError, match=re.escape(message)) as refused:
        load_deviations(path)
    assert str(refused.value).startswith(str(path)) and "\n" not in str(refused.value)
    if "format 1" not in message:  # the line of the key at fault, or of the entry's header
        line = int(re.match(rf"{re.escape(str(path))}:(\d+):", str(refused.value))[1])
        assert 3 <= line <= len(text.splitlines()), str(refused.value)


def test_every_shipped_entry_names_a_symptom_and_every_random_one_a_trigger():
    deviations = load_deviations(DEVIATIONS_FILE)
    assert deviations, "the suite's list is empty"
    for d in deviations:
        assert d.symptom.raises or d.symptom.wrong, d.where
        assert d.strict or d.trigger in triggers.TRIGGERS, d.where
        # (shard_map's replication checker raises a bare Exception about psum: the one exception allowed)
        assert d.symptom.raises != ("Exception",) or "psum" in d.test or "Collective psum" in d.symptom.match, \
            f"{d.where}: name the exception's class"


def test_an_entry_names_its_parametrized_cases_and_no_others():
    """An entry for test[param], or for test with params = [...], matches those cases only; one for
    the bare test does not match its parametrized cases."""
    one = Deviation("suites/t.py::test_p[a]", ">=0.4.30", "r")
    listed = Deviation("suites/t.py::test_p", ">=0.4.30", "r", params=("a", "b"))
    bare = Deviation("suites/t.py::test_p", ">=0.4.30", "r")
    assert one.matches("suites/t.py::test_p[a]") and not one.matches("suites/t.py::test_p[b]")
    assert listed.matches("suites/t.py::test_p[b]") and not listed.matches("suites/t.py::test_p[c]")
    assert bare.matches("suites/t.py::test_p") and not bare.matches("suites/t.py::test_p[a]")


# --- strict entries ------------------------------------------------------------------------------
def test_a_strict_entry_takes_only_its_symptom_as_its_xfail():
    entry = Deviation("suites/t.py::test_r", ">=0.4.30", "r", Symptom.parse({"raises": "ValueError", "match": "^bad"}))
    assert isinstance(strict_verdict([entry], ValueError("bad input")), KnownDeviationSeen)
    other = KeyError("unrelated")
    verdict = strict_verdict([entry], other)
    assert verdict is other
    assert any("not a known deviation" in note and "expected ValueError" in note for note in other.__notes__)


# --- random entries ----------------------------------------------------------------------------
def random_entry(trigger="second_layout_change_in_a_row", **symptom):
    return Deviation("suites/t.py::test_p", ">=0.4.30", "r", Symptom.parse(symptom or {"wrong": "values"}),
                     strict=False, reproduced_by="suites/t.py::test_r", trigger=trigger)


def raise_in(excuses, candidates, failure, mesh_kind=None):
    with excuses.way(candidates, mesh_kind=mesh_kind):
        raise failure


def oracle_check(case):
    with case.oracle():
        case.same_bits("unsharded result vs numpy", np.array([1]), np.array([2]))


def test_a_random_entry_excuses_the_examples_its_trigger_and_symptom_cover_and_counts_them(monkeypatch):
    import hypothesis
    monkeypatch.setattr(hypothesis, "event", lambda *a, **k: None)
    excuses = Excuses([random_entry()])
    twice = triggers.Call("layout change of a layout change", (), way=Way.JIT_SHARDINGS)  # (what the trigger holds for)
    wrong = failure_of(lambda c: c.same_bits("(b) jit output v1", np.array([1]), np.array([2])))
    raise_in(excuses, [twice], wrong)  # excused: no exception
    assert [r["excused"] for r in excuses.report()] == [1]
    for candidates, failure in (
            ([triggers.Call("negative", (), way=Way.JIT_SHARDINGS)], wrong),  # the trigger does not hold
            ([twice], failure_of(lambda c: c.index_map("(b) jit output v1 sharding", {0: 1}, {0: 2}))),  # not values
            ([twice], failure_of(oracle_check))):
        with pytest.raises(ConformanceFailure) as raised:
            raise_in(excuses, candidates, failure)
        assert any("not a known deviation" in n for n in raised.value.__notes__)
    assert [r["excused"] for r in excuses.report()] == [1]


def test_a_check_skipped_for_a_strict_entry_is_counted_in_the_report_once_per_example(monkeypatch):
    """The checks a strict entry's reproduction makes a random property skip (a returned input's
    layout, an XLA abort in a warm interpreter) count as excused by that entry, as the triggered
    excuses do; an Excuses with no random entries counts them too."""
    import hypothesis
    seen = []
    monkeypatch.setattr(hypothesis, "event", seen.append)
    strict = Deviation("suites/t.py::test_r", "<0.7.0", "ignores a returned input's constraint",
                       Symptom.parse({"wrong": "layout"}))
    excuses, example = Excuses([]), object()
    excuses.count(strict, example, "(c) layout of a returned input not checked")
    excuses.count(strict, example, "(c) layout of a returned input not checked")
    excuses.count(strict, object(), "(c) layout of a returned input not checked")
    assert [(r["entry"], r["excused"]) for r in excuses.report()] == [(strict.label, 2)]
    assert seen[0] == f"(c) layout of a returned input not checked by a known deviation: {strict.label}"


# --- triggers ------------------------------------------------------------------------------------
def _with_unknown_specs(call):
    """``call`` with every spec unknown (None): its operands', its output's, and so its producers'."""
    return replace(call, in_specs=tuple(None for _ in call.in_specs), out_spec=None,
                   producers=tuple(None if p is None else _with_unknown_specs(p) for p in call.producers))


def test_every_trigger_of_a_call_answers_where_no_spec_is_known():
    """Each trigger that reads a program step (its example pair's calls, tests/trigger_examples.py)
    answers True or False, never raises, for those calls with every spec unknown (None: an eager step's
    output, a value whose layout the jit decides): a trigger that raised would stop the excuse path and
    leave every failure of the example unexcused (met on 0.6.1, the sixth matrix pass, seed 1501281121:
    cuts() of an unknown output spec raised TypeError inside jitted_at_update_of_a_transposed_replicated_
    value_into_a_cut_output)."""
    from tests.trigger_examples import EXAMPLES
    for name, pair in EXAMPLES.items():
        for example in (pair.holds, pair.misses):
            if isinstance(example, triggers.Call):
                answer = triggers.TRIGGERS[name](_with_unknown_specs(example))
                assert answer in (True, False), f"got {answer!r} from {name}, but should be True or False"


def test_triggers_hold_for_the_examples_they_name_and_not_others():
    x = np.arange(4, dtype=np.int32)
    clamped = triggers.Call("dynamic_slice", (x, np.int32(3)), {"sizes": (2,)}, MESH, "Auto", ((), ()), ("a",),
                            Way.JIT_SHARDINGS)
    in_range = triggers.Call("dynamic_slice", (x, np.int32(1)), {"sizes": (2,)}, MESH, "Auto", ((), ()), ("a",),
                             Way.JIT_SHARDINGS)
    replicated_out = triggers.Call("dynamic_slice", (x, np.int32(3)), {"sizes": (2,)}, MESH, "Auto", ((), ()), (),
                                   Way.JIT_SHARDINGS)
    assert triggers.clamped_start_with_a_cut_output(clamped)
    assert not triggers.clamped_start_with_a_cut_output(in_range)
    assert not triggers.clamped_start_with_a_cut_output(replicated_out)
    y = np.zeros((2, 3, 2), np.float32)
    w = np.zeros((2, 2, 1), np.float32)
    split = triggers.Call("matmul", (y, w), {}, MESH, "Explicit", ((), ("a",)), (), "(a) eager")
    alike = triggers.Call("matmul", (y, w), {}, MESH, "Explicit", (("a",), ("a",)), (), "(a) eager")
    auto = triggers.Call("matmul", (y, w), {}, MESH, "Auto", ((), ("a",)), (), "(a) eager")
    assert triggers.explicit_batch_dimensions_split_differently(split)
    assert not triggers.explicit_batch_dimensions_split_differently(alike)
    assert not triggers.explicit_batch_dimensions_split_differently(auto)
    two = triggers.Call("add", (np.zeros((2, 4)), np.zeros((2, 4))), {}, MESH, "Explicit", (("a",), (None, "a")), (),
                        "(a) eager")
    one = triggers.Call("add", (np.zeros((2, 4)), np.zeros((2, 4))), {}, MESH, "Explicit", (("a",), ("a",)), (),
                        "(a) eager")
    assert triggers.explicit_one_axis_on_two_dimensions_of_a_broadcast(two)
    assert not triggers.explicit_one_axis_on_two_dimensions_of_a_broadcast(one)
    size_one = MeshModel(tuple(range(8)), (8, 1), ("a", "b"))
    v = np.zeros(2, np.int32)
    scatter = lambda specs: triggers.Call("at_add_indices", (v, v, v), {}, MESH, "Explicit", specs, (), "(a) eager")
    assert triggers.explicit_update_sharded_unlike_its_operand(scatter(((), (), ("a",))))  # indices replicated
    assert not triggers.explicit_update_sharded_unlike_its_operand(scatter(((), ("a",), ("a",))))  # as expected
    ranged = triggers.Call("at_min", (np.zeros(2), np.zeros(1)), {}, size_one, "Explicit", ((), ("b",)), (),
                           "(a) eager")
    assert triggers.explicit_update_sharded_unlike_its_operand(ranged)  # a size-1 axis is part of the type
    edge = lambda spec: triggers.Call("pad", (np.zeros(3),), {"mode": "edge"}, size_one, "Explicit", (spec,), ())
    assert triggers.explicit_edge_pad_of_a_sharded_operand(edge(("b",)))
    assert not triggers.explicit_edge_pad_of_a_sharded_operand(edge(()))



def test_the_mirror_pad_trigger_holds_where_a_cut_dimension_gets_no_padding():
    """What a nightly run met on 0.6.2: jnp.pad(x, ((0, 0), (0, 0)), mode='symmetric') of x
    uint32[2, 2] sharded P('a') over a=2 (the cut dimension unpadded, its edges sliced all the
    same); not a cut dimension that is padded, an unpadded one that is not cut, nor another mode."""
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    size_one = MeshModel(tuple(range(8)), (8, 1), ("a", "b"))
    x = np.zeros((2, 2), np.uint32)
    pad = lambda widths, spec, mode="symmetric", on=mesh: triggers.Call(
        "pad", (x,), {"widths": widths, "mode": mode}, on, "Explicit", (spec,), None, "(a) eager")
    rule = triggers.explicit_mirror_pad_of_a_cut_dimension_it_does_not_pad
    assert rule(pad(((0, 0), (0, 0)), ("a",)))  # what was met
    assert rule(pad(((0, 0), (1, 0)), ("a",)))
    assert rule(pad(((0, 0), (1, 0)), ("a",), "reflect"))
    assert not rule(pad(((1, 0), (0, 0)), ("a",)))  # the cut dimension is padded: refused by the model too
    assert not rule(pad(((0, 0), (1, 0)), (None, "a")))  # the padded dimension is the cut one
    assert not rule(pad(((0, 0), (0, 0)), ("b",), on=size_one))  # a size-1 axis cuts nothing
    assert not rule(pad(((0, 0), (0, 0)), ("a",), "wrap"))
    assert not rule(pad(((0, 0), (0, 0)), ()))
    auto = triggers.Call("pad", (x,), {"widths": ((0, 0), (0, 0)), "mode": "symmetric"}, mesh, "Auto", (("a",),), None)
    assert not rule(auto)


def test_the_unconstrained_trigger_holds_where_a_constrained_dimension_drops_an_input_axis():
    """What the strict reproductions and a nightly run on 0.4.30 met: a constrained dimension asked
    None where the input cuts it over 'a', or ('b',) where the input cuts it over ('b', 'a'); not a
    constraint that keeps the input's axes, one that adds an axis, nor a dropped axis of size 1 or on
    an unconstrained dimension."""
    mesh = MeshModel(tuple(range(8)), (4, 2, 1), ("a", "b", "x"))
    example = lambda in_spec, spec, unconstrained=(1, 2): SimpleNamespace(
        mesh=mesh, in_spec=in_spec, spec=spec, constrained=tuple(d for d in range(3) if d not in unconstrained))
    rule = triggers.constrained_dimension_dropping_an_axis_its_input_cuts_it_over
    assert rule(example(("a",), (None, None, None)))
    assert rule(example((("b", "a"),), (("b",), None, None)))  # the nightly example on 0.4.30
    assert not rule(example((("b", "a"),), (("b", "a"), None, None)))
    assert not rule(example(("b",), (("b", "a"), None, None)))  # asks more: no axis dropped
    assert not rule(example((("b", "x"),), (("b",), None, None)))  # x has size 1: cuts nothing
    assert not rule(example((None, "a"), (None, None, None)))  # dimension 1 is unconstrained
    assert rule(example((None, "a"), (None, None, None), unconstrained=(2,)))


def test_the_stack_trigger_holds_for_save_only_these_names_alone():
    assert triggers.stack_checkpointed_to_save_only_the_named_value(SimpleNamespace(policy="save_only_these_names"))
    for policy in ("nothing_saveable", "everything_saveable", "dots_saveable", "dots_with_no_batch_dims_saveable"):
        assert not triggers.stack_checkpointed_to_save_only_the_named_value(SimpleNamespace(policy=policy))


def test_the_triggers_widened_by_the_release_matrix_hold_on_what_it_met():
    """What the release matrix met (2026-12-01): on 0.4.30 a clamped dynamic_update_slice start on a
    cut operand with a replicated output, a jitted concatenate of a partially replicated operand
    into a replicated output, a jitted clipped take on a cut axis; on 0.4.35 the grad of a jit
    whose in and out shardings cut alike; later passes as marked."""
    x = np.array([0.0, 0.125], np.float32)
    dus = lambda start, specs, out: triggers.Call("dynamic_update_slice", (x, np.zeros(1, np.float32), np.int32(start)),
                                                   {}, MESH, "Auto", specs, out, Way.JIT_SHARDINGS)
    assert triggers.moved_start_with_a_cut_operand_or_output(dus(2, (("a",), (), ()), ()))
    assert triggers.moved_start_with_a_cut_operand_or_output(dus(2, ((), (), ()), ("a",)))
    assert not triggers.moved_start_with_a_cut_operand_or_output(dus(2, ((), (), ()), ()))  # nothing cut
    assert not triggers.moved_start_with_a_cut_operand_or_output(dus(1, (("a",), (), ()), ()))  # in range
    wide = MeshModel(tuple(range(8)), (4, 2), ("a", "b"))
    v = np.array([0, 1], np.int32)
    join = lambda specs, out, way: triggers.Call("concatenate", (v, v), {"axis": 0}, wide, "Auto", specs, out, way)
    assert triggers.partially_replicated_join(join((("b",), ()), (), Way.JIT_SHARDINGS))
    assert triggers.partially_replicated_join(join(((), ()), ("a",), Way.JIT_SHARDINGS))
    assert not triggers.partially_replicated_join(join(((), ()), (), Way.JIT_SHARDINGS))
    assert not triggers.partially_replicated_join(join(((), ()), ("a",), "(a) eager"))  # eager: the operands say
    take = lambda idx, spec, way: triggers.Call("take_clip", (v, np.int32(idx)), {"axis": 0}, MESH, "Auto",
                                                (spec, ()), (), way)
    assert triggers.clipped_take_on_a_cut_axis(take(2, ("a",), Way.JIT_SHARDINGS))
    assert triggers.clipped_take_on_a_cut_axis(take(2, ("a",), "(a) eager"))
    assert not triggers.clipped_take_on_a_cut_axis(take(1, ("a",), Way.JIT_SHARDINGS))  # in range
    assert not triggers.clipped_take_on_a_cut_axis(take(2, (), Way.JIT_SHARDINGS))  # the axis is whole
    # take_along_axis over two or more mesh axes, the operand or the indices cut; one axis is not enough
    cube = MeshModel(tuple(range(8)), (2, 2, 2), ("a", "b", "x"))
    along = lambda specs, out, way=Way.JIT_SHARDINGS: triggers.Call("take_along_axis", (np.zeros((2, 2), np.int32),
                                                            np.zeros((2, 2), np.int32)), {"axis": 0}, cube, "Auto",
                                                            specs, out, way, (2, 2))
    assert triggers.take_along_a_cut_operand_over_two_mesh_axes(along((("a",), ()), ("x", "b")))
    assert triggers.take_along_a_cut_operand_over_two_mesh_axes(along((("a",), ("x", "b")), None, "(a) eager"))
    assert not triggers.take_along_a_cut_operand_over_two_mesh_axes(along((("a",), ()), ("a",)))  # one axis
    assert not triggers.take_along_a_cut_operand_over_two_mesh_axes(along((("a",), ()), ("x", "b"), "(a) eager"))
    assert not triggers.take_along_a_cut_operand_over_two_mesh_axes(along(((), ()), ("x", "b")))  # nothing cut
    # the stack's dimension before the new one cut in an operand only (met on 0.4.30, seed 2994294646)
    wide_mesh = MeshModel(tuple(range(8)), (4, 2), ("a", "b"))
    stack = lambda specs, out, way=Way.JIT_SHARDINGS: triggers.Call("stack", (v, v), {"axis": 1}, wide_mesh, "Auto",
                                                            specs, out, way, (2, 2))
    assert triggers.jitted_stack_cutting_its_new_dimension_after_a_cut_one(stack((("a",), ()), (None, "b")))
    assert not triggers.jitted_stack_cutting_its_new_dimension_after_a_cut_one(stack(((), ()), (None, "b")))
    assert not triggers.jitted_stack_cutting_its_new_dimension_after_a_cut_one(stack((("b",), ()), (None, "b")))
    assert not triggers.jitted_stack_cutting_its_new_dimension_after_a_cut_one(stack((("a",), ()), (None, "b"),
                                                                                     "(a) eager"))
    assert not triggers.jitted_stack_cutting_its_new_dimension_after_a_cut_one(stack((("a",), ()), ("a",)))

    line = MeshModel(tuple(range(2)), (2,), ("a",))
    autodiff = lambda transform, out: SimpleNamespace(transform=transform, mesh=line, x_spec=(None, "a"),
                                                      w_spec=(None, "a"), out_spec=out)
    assert triggers.transposed_jit_with_a_cut_output(autodiff("grad", (None, "a")))  # in and out alike (0.4.35)
    assert triggers.transposed_jit_with_a_cut_output(autodiff("vjp", ("a",)))
    assert not triggers.transposed_jit_with_a_cut_output(autodiff("jvp", (None, "a")))  # nothing transposed
    assert not triggers.transposed_jit_with_a_cut_output(autodiff("grad", ()))  # the output whole

    # the second pass (0.9.2): an eager lax.pad and a program's eager jnp.reshape of a cut operand
    shaped = lambda op, spec, way, **static: triggers.Call(op, (np.zeros((2, 4), np.uint32),), static,
                                                           wide, "Auto", (spec,), (), way)
    assert triggers.eager_pad_reshape_or_concatenate_of_a_cut_operand(shaped("reshape", ("b", "a"), "(a) eager",
                                                                             shape=(4, 2)))
    assert triggers.eager_pad_reshape_or_concatenate_of_a_cut_operand(shaped("lax_pad_negative", ("a",), "(a) eager"))
    assert triggers.eager_pad_reshape_or_concatenate_of_a_cut_operand(shaped("pad", ("a",), "(a) eager",
                                                                             mode="constant"))
    # (the tenth pass, 0.9.1: an eager edge pad, which joins edge slices; other modes not met)
    assert triggers.eager_pad_reshape_or_concatenate_of_a_cut_operand(shaped("pad", ("a",), "(a) eager", mode="edge"))
    assert not triggers.eager_pad_reshape_or_concatenate_of_a_cut_operand(shaped("pad", ("a",), "(a) eager",
                                                                                 mode="wrap"))
    assert not triggers.eager_pad_reshape_or_concatenate_of_a_cut_operand(
        shaped("reshape", ("b", "a"), Way.JIT_SHARDINGS, shape=(4, 2)))
    assert not triggers.eager_pad_reshape_or_concatenate_of_a_cut_operand(shaped("reshape", (), "(a) eager",
                                                                                 shape=(4, 2)))
    join = lambda specs: triggers.Call("concatenate", (np.zeros(2, np.int32), np.zeros(8, np.int32)), {"axis": 0},
                                       MeshModel(tuple(range(8)), (8,), ("a",)), "Auto", specs, (), "(a) eager")
    assert triggers.eager_pad_reshape_or_concatenate_of_a_cut_operand(join(((), ("a",))))  # (the third pass, 0.9.2)
    assert not triggers.eager_pad_reshape_or_concatenate_of_a_cut_operand(join(((), ())))
    cube = MeshModel(tuple(range(4)), (2, 2, 1), ("a", "b", "x"))  # and an Explicit ravel onto ('a', 'x'), x of size 1
    ravel = lambda spec: triggers.Call("roll", (np.zeros((2, 2), np.int32),), {"shift": 0, "axis": None},
                                       cube, "Explicit", (spec,), (), "(a) eager")
    assert triggers.explicit_flattening_onto_axes_ending_with_a_size_one_axis(ravel(("b", ("a", "x"))))
    assert not triggers.explicit_flattening_onto_axes_ending_with_a_size_one_axis(ravel(("b", ("x", "a"))))
    assert not triggers.explicit_flattening_onto_axes_ending_with_a_size_one_axis(ravel(("b", "x")))
    grid = MeshModel(tuple(range(6)), (3, 1, 2), ("b", "a", "x"))  # and a layout change onto ('b', 'a', 'x') (0.12.0.1)
    move = lambda op, spec: triggers.Call(op, (np.zeros((6, 6), np.uint32),), {"spec": spec}, grid, "Auto",
                                          (("b",),), (), Way.JIT_SHARDINGS)
    assert triggers.layout_change_onto_combined_axes(move("constraint", (None, ("b", "a", "x"))))
    assert triggers.layout_change_onto_combined_axes(move("device_put", (("b", "x"),)))
    assert not triggers.layout_change_onto_combined_axes(move("constraint", (None, ("b", "a"))))  # one axis cuts
    assert not triggers.layout_change_onto_combined_axes(move("negative", (None, ("b", "x"))))  # not a layout change

    # the third pass (0.7.0): on an Explicit mesh a clamped dynamic_slice of a cut operand, output replicated
    ds = lambda axis_type, spec: triggers.Call("dynamic_slice", (np.arange(8, dtype=np.int32), np.int32(7)),
                                               {"sizes": (4,)}, MESH, axis_type, (spec, ()), (), Way.JIT_SHARDINGS)
    assert triggers.clamped_start_with_a_cut_output(ds("Explicit", ("a",)))
    assert not triggers.clamped_start_with_a_cut_output(ds("Auto", ("a",)))  # Auto: the output is replicated
    assert not triggers.clamped_start_with_a_cut_output(ds("Explicit", ()))

    # the third pass (0.4.33): a jitted take_along_axis of an operand with ('b', 'y') on one dimension
    cube3 = MeshModel(tuple(range(8)), (2, 2, 2), ("a", "b", "y"))
    along = lambda specs, way=Way.JIT_SHARDINGS, mesh=cube3: triggers.Call("take_along_axis",
                                                                   (np.zeros((2, 4, 2), np.int32),) * 2, {"axis": 0},
                                                                   mesh, "Auto", specs, ("a", None, "b"), way)
    assert triggers.jitted_take_along_over_combined_axes(along(((None, ("b", "y"), "a"), ())))
    assert triggers.jitted_take_along_over_combined_axes(along(((), (("a", "b"),))))  # on the indices
    assert not triggers.jitted_take_along_over_combined_axes(along((None, ())))  # None cuts nothing
    assert not triggers.jitted_take_along_over_combined_axes(along(((None, "b", "a"), ())))  # one axis a dimension
    assert not triggers.jitted_take_along_over_combined_axes(along(((None, ("b", "y"), "a"), ()), "(a) eager"))
    size_one_y = MeshModel(tuple(range(4)), (2, 2, 1), ("a", "b", "y"))
    assert not triggers.jitted_take_along_over_combined_axes(along(((None, ("b", "y"), "a"), ()), mesh=size_one_y))

    # an upgrade run (0.12.0.1): vmap of lax.select with an operand over ('b', 'y')
    grid2 = MeshModel(tuple(range(6)), (3, 2), ("y", "b"))
    select = lambda specs, mesh=grid2: VmapExample(None, (), {}, mesh, specs, True)
    assert triggers.vmapped_operands_over_combined_axes(select((("b",), (None, None, ("b", "y")))))
    assert not triggers.vmapped_operands_over_combined_axes(select((("b",), (None, "y"))))
    assert not triggers.vmapped_operands_over_combined_axes(select(((("b", "y"),),),
                                                                   MeshModel(tuple(range(2)), (1, 2), ("y", "b"))))

    # the third pass (0.4.37): vmap of an edge pad over a batch cut over b of an (a=4, b=2) mesh
    from strategies.ops import CATALOGUE
    ops = {op.name: op for op in CATALOGUE}
    batch = np.zeros((2, 2, 2), np.int32)
    vmapped = lambda name, spec, mesh=wide: VmapExample(ops[name], (batch,), {}, mesh, (spec,), False)
    assert triggers.vmapped_partially_replicated_join(vmapped("pad", (None, None, "b")))
    assert triggers.vmapped_partially_replicated_join(vmapped("roll", ("a",)))
    assert not triggers.vmapped_partially_replicated_join(vmapped("pad", ("a", None, "b")))  # every axis used
    assert not triggers.vmapped_partially_replicated_join(vmapped("pad", ()))  # nothing cut
    assert not triggers.vmapped_partially_replicated_join(vmapped("pad", ("a",),
                                                                  MeshModel(tuple(range(8)), (8,), ("a",))))
    assert not triggers.vmapped_partially_replicated_join(vmapped("negative", (None, None, "b")))  # no join

    # a later pass (0.4.35, seed 1428177788): x[i], the same gather as take along axis 0
    x14, i4 = np.zeros((1, 4), np.float32), np.zeros(4, np.int32)
    indexed = lambda i, out, op="index_array": triggers.Call(op, (x14, i), {}, MESH, "Auto",
                                                             ((None, "a"), ("a",)), out, Way.JIT_SHARDINGS, (4, 4))
    assert triggers.jitted_take_of_operand_and_indices_cut_alike_into_another_axis(indexed(i4, ("b",)))
    assert triggers.jitted_take_of_operand_and_indices_cut_alike_into_another_axis(indexed(i4, ("b",), "take"))
    assert not triggers.jitted_take_of_operand_and_indices_cut_alike_into_another_axis(indexed(i4, ("a",)))  # own axis
    assert not triggers.jitted_take_of_operand_and_indices_cut_alike_into_another_axis(
        indexed(np.int32(0), ("b",)))  # 0-d


# --- end to end: an unrelated failure under an entry goes red ------------------------------------
SUITE = '''
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from conformance.checking.case import Case
from conformance.checking.triggers import Call

pytestmark = pytest.mark.mesh

def test_strict():
    {strict_body}

@settings(max_examples=20, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(0, 5))
def test_random(n, excuses):
    case = Case(f"f({{n}})")
    with case.oracle():
        case.same_bits("unsharded result vs numpy", np.array([n]), np.array([n + {oracle}]))
    with excuses.way([Call("{op}", (), way="(b)")]):
        case.same_bits("(b) jit result", np.array([{got}]), np.array([n + 1]))
'''

DEVIATIONS = '''format = 2
[[deviation]]
test = "suites/test_planted_excuses.py::test_strict"
jax = ">=0"
reason = "raises ValueError 'bad'"
symptom = { raises = "ValueError", match = "^bad" }

[[deviation]]
test = "suites/test_planted_excuses.py::test_random"
jax = ">=0"
reason = "wrong values at (b) for a layout change of a layout change"
strict = false
reproduced_by = "suites/test_planted_excuses.py::test_strict"
trigger = "second_layout_change_in_a_row"
symptom = { wrong = "values", at = '^\\(b\\) ', where = "zeros" }
'''


LAYOUT_TWICE = "layout change of a layout change"  # the op second_layout_change_in_a_row holds for


@pytest.mark.parametrize("strict_body, op, oracle, outcome, got", [
    ("raise ValueError('bad input')", LAYOUT_TWICE, 0, "1 passed, 1 xfailed", "0"),  # both entries excuse their symptom
    ("raise KeyError('unrelated')", LAYOUT_TWICE, 0, "1 failed, 1 passed", "0"),  # strict: another exception
    ("raise ValueError('bad input')", "negative", 0, "1 failed, 1 xfailed", "0"),  # random: the trigger does not hold
    # the unsharded check: never excused
    ("raise ValueError('bad input')", LAYOUT_TWICE, 1, "1 failed, 1 xfailed", "0"),
    ("raise ValueError('bad input')", LAYOUT_TWICE, 0, "1 failed, 1 xfailed", "n + 7"),  # not wrong as where says
])
def test_an_unrelated_failure_under_a_known_deviation_fails_the_run(tmp_path, strict_body, op, oracle, outcome, got):
    """End to end (a planted suite under planted entries): each excuse path excuses its own symptom
    and nothing else; the excused examples are in the run report."""
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "test_planted_excuses.py").write_text(SUITE.format(strict_body=strict_body, op=op,
                                                                             oracle=oracle, got=got))
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    (tmp_path / "planted.toml").write_text(DEVIATIONS)
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA",
                             "suites/test_planted_excuses.py", "--known-deviations", "planted.toml",
                             "--report-dir", "run"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env=fresh_environment({"PYTHONPATH": str(ROOT)}))
    assert outcome in result.stdout, result.stdout[-3000:]
    if outcome.startswith("1 failed") and not oracle:  # (the unsharded check runs outside any excuse)
        assert "not a known deviation" in result.stdout, result.stdout[-3000:]
    if op == LAYOUT_TWICE and not oracle and got == "0":
        import json
        record = json.loads((tmp_path / "run" / "report.json").read_text())
        random = next(t for t in record["tests"] if t["id"].endswith("test_random"))
        assert random["excused"] and random["excused"][0]["excused"] > 0, random


def test_compare_and_the_run_page_show_the_examples_each_entry_excused():
    """A release where an excuse fires far more often is visible: compare lists the entries whose
    excused counts differ (base -> new), the run page tabulates them."""
    from reports.compare import excused_lines
    from reports.html import run_page
    from tests.test_reports import entry, record as a_record

    def record(count):
        return a_record([entry("suites/t.py::test_p[dynamic_slice]", excused=[
            {"entry": "test_p[dynamic_slice] (JAX <0.12.0; wrong values)", "where": "k.toml:9", "jax": "<0.12.0",
             "trigger": "clamped_start_with_a_cut_output", "symptom": "wrong values", "excused": count}])])
    lines = excused_lines(record(1), record(10))
    assert len(lines) == 2 and "1 -> 10" in lines[1] and "test_p[dynamic_slice]" in lines[1], lines
    assert excused_lines(record(3), record(3)) == []
    page = run_page(record(10))
    assert "Examples excused by known deviations (10)" in page and "clamped_start_with_a_cut_output" in page


def test_a_backend_entry_applies_where_its_name_says():
    """cuda and rocm entries apply on JAX's "gpu" platform of their maker only (its client's
    platform_version tells them apart); gpu on both; a device kind on that kind only."""
    from conformance.runner.deviations import Deviation
    entry = lambda backend: Deviation("suites/t.py::test_x", ">=0", "r", backend=backend)
    assert entry("cuda").applies_on("gpu", "NVIDIA H200", "PJRT C API\ncuda 12080")
    assert not entry("cuda").applies_on("gpu", "AMD Instinct MI300X", "PJRT C API\nrocm 60300")
    assert entry("rocm").applies_on("gpu", "AMD Instinct MI300X", "rocm 60300")
    assert entry("gpu").applies_on("gpu", "AMD Instinct MI300X", "rocm 60300")
    assert entry("cuda").applies_on("cuda", "NVIDIA H200")
    assert not entry("cuda").applies_on("cpu", "cpu") and not entry("tpu").applies_on("gpu", "NVIDIA H200")
    assert entry("NVIDIA H200").applies_on("gpu", "nvidia h200") and \
        not entry("NVIDIA H200").applies_on("gpu", "NVIDIA A100")


def test_the_axis_moved_into_combined_axes_trigger_holds_for_the_greater_abort():
    """jitted_axis_moved_into_combined_axes: the 0.12.0.1 finding (greater of x0 int32[3, 1, 6]
    P(('b', 'x'), None, 'y') and x1 int32[1, 1, 6] P('x', None, ('b', 'y')), output P('x', None,
    ('b', 'y')) on a (2, 3, 1) mesh ('y', 'b', 'x')) and its smallest form (x P('b') onto P(None,
    ('b', 'y')) on (2, 3)) hold; ('y', 'b') (its first axis not moved), an axis already on that
    dimension, an eager call and a reduction whose operand outranks its result do not."""
    finding_mesh = MeshModel(tuple(range(6)), (2, 3, 1), ("y", "b", "x"))
    x0, x1 = np.zeros((3, 1, 6), np.int32), np.zeros((1, 1, 6), np.int32)
    finding = triggers.Call("greater", (x0, x1), {}, finding_mesh, "Auto",
                            ((("b", "x"), None, "y"), ("x", None, ("b", "y"))),
                            ("x", None, ("b", "y")), "(b) jit with in/out_shardings", (3, 1, 6))
    assert triggers.jitted_axis_moved_into_combined_axes(finding)
    mesh = MeshModel(tuple(range(6)), (2, 3), ("b", "y"))
    x, y = np.zeros((2, 6), np.int32), np.int32(5)

    def holds(in_spec, out_spec, way="(b) jit with in/out_shardings", operands=(x, y), shape=(2, 6)):
        return triggers.jitted_axis_moved_into_combined_axes(
            triggers.Call("greater", operands, {}, mesh, "Auto", (in_spec, ()), out_spec, way, shape))
    assert holds(("b",), (None, ("b", "y")))  # the smallest form
    assert not holds(("b",), (None, ("y", "b")))  # its first axis is not the moved one
    assert not holds(("y",), (None, ("b", "y")))  # 'b' cuts no other dimension
    assert not holds(("b",), (None, ("b", "y")), "(a) eager")
    assert not holds(("b",), ("b",))  # no combined axes
    assert not holds(("b",), (None, ("b", "y")), operands=(x,), shape=(6,))  # a reduction: nothing aligns


def test_the_axis_moved_into_combined_axes_trigger_holds_for_the_arange_times_abort():
    """jitted_axis_moved_into_combined_axes: the 0.12.0.1 CI finding of stop 53 (arange_times of x0
    int32[3, 6, 2] P('b') on an Auto (a=2, b=3) mesh into P(None, ('b', 'a'))) holds, jitted either way,
    and not eager; into P(None, ('a', 'b')) ('b' not first) it does not."""
    mesh = MeshModel(tuple(range(6)), (2, 3), ("a", "b"))
    x0 = np.zeros((3, 6, 2), np.int32)

    def holds(out_spec, way):
        return triggers.jitted_axis_moved_into_combined_axes(
            triggers.Call("arange_times", (x0,), {}, mesh, "Auto", (("b",),), out_spec, way, (3, 6, 2)))
    assert holds((None, ("b", "a")), "(b) jit with in/out_shardings")
    assert holds((None, ("b", "a")), "(c) jit with sharding constraints")
    assert not holds((None, ("b", "a")), "(a) eager")
    assert not holds((None, ("a", "b")), "(b) jit with in/out_shardings")


def test_the_axis_moved_into_combined_axes_trigger_holds_for_the_explicit_reshape_and_dot_aborts():
    """jitted_axis_moved_into_combined_axes: the 0.12.0.1 CI findings of stop 68 on an Explicit
    (a=3, b=2) mesh hold: x int32[6, 3] P(None, 'a') reshaped to (1, 1, 6, 3) into P(None, None,
    ('a', 'b')), and jnp.dot of int32[6, 2, 3] P(None, None, 'a') and int32[6, 3, 2] P(None, None,
    'b') into P(('b', 'a')); on an Auto mesh (measured: they compile), eager, with the other axis
    first, with the moved axis already on that dimension, or a reshape that splits a dimension,
    they do not."""
    mesh = MeshModel(tuple(range(6)), (3, 2), ("a", "b"))
    jitted = "(b) jit with in/out_shardings"

    def reshaped(out_spec, shape=(1, 1, 6, 3), in_spec=(None, "a"), axis_type="Explicit", way=jitted):
        return triggers.jitted_axis_moved_into_combined_axes(triggers.Call(
            "reshape", (np.zeros((6, 3), np.int32),), {"shape": shape}, mesh, axis_type, (in_spec,), out_spec,
            way, shape))
    assert reshaped((None, None, ("a", "b")))  # the finding
    assert reshaped((None, None, ("a", "b")), way="(c) jit with sharding constraints")
    assert not reshaped((None, None, ("a", "b")), axis_type="Auto")
    assert not reshaped((None, None, ("a", "b")), way="(a) eager")
    assert not reshaped((None, None, ("b", "a")))  # 'b' cuts nothing
    assert not reshaped((None, None, None, ("a", "b")))  # 'a' stays on its dimension
    assert not reshaped((("a", "b"), None), shape=(3, 6))  # not a size-1 reshape: no dimension lands
    assert reshaped((None, ("a", "b")), shape=(6, 3, 1), in_spec=("a",))

    def dotted(out_spec, in_specs=((None, None, "a"), (None, None, "b")), axis_type="Explicit"):
        return triggers.jitted_axis_moved_into_combined_axes(triggers.Call(
            "dot_int", (np.zeros((6, 2, 3), np.int32), np.zeros((6, 3, 2), np.int32)), {}, mesh, axis_type,
            in_specs, out_spec, jitted, (6, 2, 6, 2)))
    assert dotted((("b", "a"),))  # the finding: 'b' cuts the result's last dimension
    assert not dotted((("b", "a"),), axis_type="Auto")
    assert not dotted((("a", "b"),))  # 'a' cuts a contracted dimension only, which lands nowhere
    assert not dotted((("b", "a"),), in_specs=((None, None, "a"), ()))
    assert not dotted((None, None, None, ("b", "a")))  # 'b' stays on its dimension


def test_accepted_refusals_are_counted_once_per_example_and_shown_on_the_run_page(monkeypatch, tmp_path):
    """A refusal accepted because the model says JAX rejects the call is counted per kind, once per
    example (as excused examples are), written in the run report (the schema takes it) and tabulated
    on the run page beside the excused examples."""
    import hypothesis
    import json
    from reports.html import run_page
    from reports.record import load
    from tests.test_reports import entry, record as a_record
    monkeypatch.setattr(hypothesis, "event", lambda *a, **k: None)
    excuses, one, other = Excuses([]), object(), object()
    for example in (one, one, other):
        excuses.accept_refusal("matmul (b): rejected with ShardingTypeError as our sharding-rule model says", example)
    excuses.accept_refusal("where (a): rejected with ShardingTypeError as our sharding-rule model says", one)
    assert excuses.refusals() == [
        {"refusal": "matmul (b): rejected with ShardingTypeError as our sharding-rule model says", "examples": 2},
        {"refusal": "where (a): rejected with ShardingTypeError as our sharding-rule model says", "examples": 1}]
    run = a_record([entry("suites/t.py::test_p[matmul]", refusals=excuses.refusals())])
    (tmp_path / "report.json").write_text(json.dumps(run))
    assert load(tmp_path / "report.json")["tests"][0]["refusals"][0]["examples"] == 2
    page = run_page(run)
    assert "Refusals accepted by the model (3)" in page and "as our sharding-rule model says" in page


def test_an_empty_message_is_matched_with_the_function_that_raised_it():
    """A symptom that matches an empty message (a bare assert) must name where it is raised
    (``raised_in``, the innermost frame's module.function): a bare AssertionError from another
    function is not it; raised_in goes with raises only."""
    def split_on_one_axis():
        raise AssertionError()  # a bare assert, as JAX's is (pytest rewrites this file's asserts)

    def somewhere_else():
        raise AssertionError()

    with pytest.raises(ValueError, match="name the function that raises it"):
        Symptom.parse({"raises": "AssertionError", "match": "^$"})
    with pytest.raises(ValueError, match="goes with raises"):
        Symptom.parse({"wrong": "values", "raised_in": "x"})
    symptom = Symptom.parse({"raises": "AssertionError", "match": "^$", "raised_in": r"\.split_on_one_axis$"})
    for fn, excused in ((split_on_one_axis, True), (somewhere_else, False)):
        try:
            fn()
        except AssertionError as e:
            seen = Seen.of(e)
        assert seen.frame.endswith(fn.__name__)
        assert (symptom.why_not(seen) is None) == excused, symptom.why_not(seen)
        case = Case("f(x)")
        try:
            case.accepts("(a) eager f(x)", fn)  # a failure of a check: the call's exception is its context
        except ConformanceFailure as failure:
            assert (symptom.why_not(Seen.of(failure)) is None) == excused


# --- how wrong values go wrong (conformance/checking/wrongness.py) ---------------------------------
def test_each_wrongness_holds_for_its_bug_and_not_for_a_value_computed_wrongly():
    """Hand-worked: the cause texts' examples hold (a clamp misread, an update dropped, a doubled
    join, zeros of a clipped take, a pad misread, an unshifted pad); the same results with one element
    computed wrongly (a value no operand holds), the right values, or another shape do not."""
    from conformance.checking import wrongness
    a = lambda *v: np.array(v, np.int32)
    x = a(0, 1, 2, 3)
    call = lambda *operands: triggers.Call("op", operands, {}, MESH, "Auto", (), (), Way.JIT_SHARDINGS)
    cases = [  # (pattern, the call, expected, got as the bug makes it, got computed wrongly)
        ("values_of_the_expected_result", call(x, np.int32(3)), a(2, 3), a(3, 3), a(2, 4)),
        ("values_of_the_expected_result", call(np.arange(8)), a(4, 5, 6, 7), a(7, 7, 7, 7), a(4, 5, 6, 8)),
        ("the_operand_in_place", call(x, a(9), np.int32(5)), a(0, 1, 2, 9), a(0, 1, 2, 3), a(0, 1, 2, 10)),
        ("the_operand_in_place", call(a(0, 1), np.int32(0)), a(1, 0), a(0, 1), a(1, 5)),
        ("multiplied_by_the_replica_count", call(), a(1, 2, 3, 4), a(2, 4, 6, 8), a(2, 4, 6, 9)),
        ("multiplied_by_the_replica_count", call(), a(1, 2, 3, 4), a(2, 4, 9, 12),
         a(2, 4, 9, 13)),  # blocks held 2, 3 times
        ("multiplied_by_the_replica_count", call(), np.array([-0.0, 0.125], np.float32),
         np.array([0.0, 0.5], np.float32),
         np.array([0.0, 0.25 + 2 ** -20], np.float32)),  # a replica sum from +0.0 (0.4.36): -0.0 comes back +0.0
        ("zeros", call(), a(2, 3), a(0, 0), a(0, 1)),
        ("zeros_or_values_of_the_operands", call(a(1, 2, 3, 4), a(10, 20, 30, 40)),
         a(1, 10, 2, 20, 3, 30, 4, 40), a(1, 10, 3, 30, 3, 0, 4, 0),
         a(1, 10, 3, 30, 3, 5, 4, 0)),  # a stack on 0.4.30: rows read from elsewhere, zeros
        ("values_of_the_operands", call(a(1, 2, 3), np.int32(0)), a(1, 0, 2, 0, 3, 0), a(1, 0, 2, 2, 0, 3),
         a(1, 0, 2, 0, 4, 0)),
        ("values_of_the_operands", call(x, a(9)), a(0, 1, 2, 9), a(0, 3, 2, 9), a(0, 8, 2, 9)),
    ]
    for name, c, expected, bug, computed in cases:
        assert wrongness.holds(name, [c], expected, bug), f"got {name} not holding for {bug}, but should [{expected}]"
        for got in (computed, expected, bug[:-1]):
            assert not wrongness.holds(name, [c], expected, got), f"got {name} holding for {got}, but should not"
    assert not wrongness.holds("values_of_the_operands", [SimpleNamespace()], a(1), a(0)), "no Call: no operands"
    # a strided .at[].max of a slice read from another shard (0.6.1, seed 435230726): a value of the sliced
    # operand, through the negations, the constraint and the second slice between them; numpy's own steps
    # upstream of the slices (a negation of x) are not applied again
    sliced = triggers.Call("strided_slice", (a(0, 1, 2, 3),), {"index": (slice(None, 2, 1),)}, MESH, "Auto",
                           ((("a",),),))
    again = triggers.Call("strided_slice", (a(0, 1),), {"index": (slice(None, None, 2),)}, MESH, "Auto", ((),),
                          producers=(sliced,))
    negated = triggers.Call("negative", (a(0),), {}, MESH, "Auto", ((),), producers=(
        triggers.Call("constraint", (a(0),), {"spec": ()}, MESH, "Auto", ((),), producers=(again,)),))
    at_max = triggers.Call("at_max", (a(0), a(0)), {"index": slice(None, None, 2)}, MESH, "Auto", ((), ()), (),
                           Way.JIT_SHARDINGS, producers=(negated, negated))
    assert triggers.strided_at_update_of_a_slice_of_a_partially_replicated_operand(at_max)
    assert wrongness.holds("values_of_the_sliced_operand", [at_max], a(0), a(-3))
    assert not wrongness.holds("values_of_the_sliced_operand", [at_max], a(0), a(3)), "the negation applies"
    upstream = replace(sliced, producers=(triggers.Call("negative", (a(0, -1, -2, -3),), {}, MESH, "Auto", ((),)),))
    assert wrongness.holds("values_of_the_sliced_operand", [replace(at_max, producers=(
        replace(negated, producers=(replace(negated.producers[0],
                                            producers=(replace(again, producers=(upstream,)),)),)),
        None))], a(0), a(-3))
    # a scatter beside a prefix slice of its operand, as long per shard (0.6.1, seed 435230726): the update's
    # elements past the slice are 0, through the negation, the device_put and the sum: -(1 + 2 + 0) = -3 for -5;
    # not with the slice starting at 1, nor for a sum computed otherwise
    three = MeshModel((0, 1, 2), (3,), ("a",))
    u = np.arange(3, dtype=np.uint32)
    beside = triggers.Call("slice", (u,), {"index": (slice(0, 2),)}, three, "Auto", ((("a",),),), (),
                           Way.JIT_CONSTRAINTS)
    update = triggers.Call("at_set_shifted", (u,), {"axis": 0, "shift": 1}, three, "Auto", ((("a",),),), (),
                           Way.JIT_CONSTRAINTS, beside=(beside,))
    summed = triggers.Call("sum_int", (u,), {"axis": None, "keepdims": False}, three, "Auto", ((),), (),
                           Way.JIT_CONSTRAINTS,
                           producers=(triggers.Call("negative", (u,), {}, three, "Auto", ((),), (), Way.JIT_CONSTRAINTS,
                                                    producers=(triggers.Call("device_put", (u,), {"spec": ()}, three,
                                                                             "Auto", ((),), (), Way.JIT_CONSTRAINTS,
                                                                             producers=(update,)),)),))
    minus = lambda v: np.array(v, np.int64).astype(np.uint32)
    assert wrongness.holds("updated_outside_a_prefix_slice_beside_it_as_zeros", [summed], minus(-5), minus(-3))
    assert not wrongness.holds("updated_outside_a_prefix_slice_beside_it_as_zeros", [summed], minus(-5), minus(-4))
    later = replace(update, beside=(replace(update.beside[0], static={"index": (slice(1, 3),)}),))
    assert not wrongness.holds("updated_outside_a_prefix_slice_beside_it_as_zeros", [replace(summed, producers=(
        replace(summed.producers[0], producers=(replace(summed.producers[0].producers[0], producers=(later,)),)),))],
        minus(-5), minus(-3)), "a slice from 1 is not the bug's"
    # an .at[idx].add of a transposed replicated value into a cut output, negated after (0.6.2, seed 1852810764's
    # replay): the second device's first row holds the operand's old row 0, negated; not a row computed otherwise,
    # nor the old row without the negation
    v = np.array([[0, -6], [-1, -7], [-2, -8], [-3, -9]], np.int32)
    added = triggers.Call("at_add_indices", (v, a(0), np.array([[0, 1]], np.int32)), {}, MESH, "Auto", ((), (), ()),
                          None, Way.JIT_SHARDINGS)
    after = triggers.Call("negative", (v,), {}, MESH, "Auto", ((),), ("a",), Way.JIT_SHARDINGS, producers=(added,))
    right = np.array([[0, 5], [1, 7], [2, 8], [3, 9]], np.int32)
    assert wrongness.holds("values_of_the_updates_operand_after_it", [after], right,
                           np.array([[0, 5], [1, 7], [0, 6], [3, 9]], np.int32))
    assert not wrongness.holds("values_of_the_updates_operand_after_it", [after], right,
                               np.array([[0, 5], [1, 7], [0, 10], [3, 9]], np.int32))
    assert not wrongness.holds("values_of_the_updates_operand_after_it", [after], right,
                               np.array([[0, 5], [1, 7], [0, -6], [3, 9]], np.int32))
    # an edge pad over two dimensions joins twice: each join multiplies (found on 0.4.31: x int32[2, 1] P('a')
    # on an (a=2, b=4) mesh, padded ((0, 1), (0, 1)) into P(None, 'a'), gave 16 where 1); a pad over one
    # dimension, or in mode constant, joins once
    edge2 = triggers.Call("pad", (a(0, 1),), {"widths": ((0, 1), (0, 1)), "mode": "edge"}, MESH, "Auto", (), (),
                          Way.JIT_SHARDINGS)
    assert wrongness.joins_made(edge2) == 2
    assert wrongness.holds("multiplied_by_the_replica_count", [edge2], a(0, 0, 1, 1, 1, 1), a(0, 0, 16, 16, 16, 16))
    for once in (replace(edge2, static={"widths": ((0, 1), (0, 0)), "mode": "edge"}),
                 replace(edge2, static={"widths": ((0, 1), (0, 1)), "mode": "constant"}), call()):
        assert wrongness.joins_made(once) == 1
        assert not wrongness.holds("multiplied_by_the_replica_count", [once], a(0, 0, 1, 1, 1, 1),
                                   a(0, 0, 16, 16, 16, 16))
    # a lax.pad whose negative edge moves dimension 0 while dimension 1 is padded too: the move not applied
    # leaves the operand in place with dimension 1 padded (found on 0.4.33: config ((1, -1, 0), (0, 1, 0)))
    x2 = np.arange(4, dtype=np.float32).reshape(2, 2)
    padneg = triggers.Call("lax_pad_negative", (x2, np.float32(0)), {"config": ((1, -1, 0), (0, 1, 0))}, MESH,
                           "Auto", (), ("a",), Way.JIT_SHARDINGS)
    right = np.array([[0, 0, 0], [0, 1, 0]], np.float32)
    assert wrongness.holds("the_operand_in_place", [padneg], right, np.array([[0, 1, 0], [2, 3, 0]], np.float32))
    assert not wrongness.holds("the_operand_in_place", [padneg], right, np.array([[0, 1, 0], [2, 4, 0]], np.float32))
    assert not wrongness.holds("the_operand_in_place", [padneg], right, np.array([[0, 1, 5], [2, 3, 0]], np.float32))
    wrong_dtype = np.array([3, 3], np.int64)
    assert not wrongness.holds("values_of_the_expected_result", [call(x)], a(2, 3), wrong_dtype)


def test_each_layout_wrongness_holds_for_its_bug_and_not_for_blocks_cut_otherwise():
    """Hand-worked layouts on two devices: the whole array on each where P('a') was asked (and a
    zero-size shard of the whole shape); the whole array on one device of two; an axis kept that a
    constraint dropped (finer blocks); the first of two constraints; each not for blocks cut otherwise."""
    from conformance.checking import wrongness
    from conformance.model.layout import Layout
    two = MeshModel((0, 1), (2,), ("a",))
    blocks = lambda spec, shape=(4,): Layout(two, spec, shape).blocks
    moved = {0: ((2, 4),), 1: ((0, 2),)}
    sized = triggers.Call("slice_empty", (), {}, two, "Auto", (), (None, "a"), Way.JIT_SHARDINGS, (0, 2))
    assert wrongness.holds("replicated_where_cut_was_asked", [None], blocks(("a",)), blocks(()))
    assert not wrongness.holds("replicated_where_cut_was_asked", [None], blocks(("a",)), moved)
    assert not wrongness.holds("replicated_where_cut_was_asked", [None], blocks(()), blocks(()))
    assert wrongness.holds("replicated_where_cut_was_asked", [sized], (0, 1), (0, 2))
    assert not wrongness.holds("replicated_where_cut_was_asked", [sized], (0, 1), (0, 3))
    assert wrongness.holds("held_by_fewer_devices", [None], blocks(("a",)), {0: ((0, 4),)})
    assert wrongness.holds("held_by_fewer_devices", [None], blocks(()), {0: ((0, 4),)})
    assert not wrongness.holds("held_by_fewer_devices", [None], blocks(("a",)), blocks(()))
    assert not wrongness.holds("held_by_fewer_devices", [None], blocks(("a",)), {0: ((0, 2),)})
    assert wrongness.holds("cut_finer_than_asked", [None], blocks(()), blocks(("a",)))
    assert not wrongness.holds("cut_finer_than_asked", [None], blocks(("a",)), moved)
    twice = triggers.Call("layout change of a layout change", (), {"earlier": ((("a",), (4,)),)}, two, "Auto", (),
                          None, Way.JIT_SHARDINGS)
    assert wrongness.holds("laid_out_as_an_earlier_change", [twice], blocks(()), blocks(("a",)))
    assert not wrongness.holds("laid_out_as_an_earlier_change", [twice], blocks(()), moved)


def test_a_random_entry_says_how_its_values_or_layout_go_wrong():
    """A random entry with wrong values or layout names a wrongness (where); where is refused on a
    strict entry, with another kind of outcome, and when it names no pattern; the shipped file has
    no random entry with a bare values or layout symptom and no empty-message assert without the
    function that raised it."""
    base = {"test": "suites/t.py::test_r", "jax": ">=0", "reason": "r"}
    random = {**base, "strict": False, "reproduced_by": "suites/t.py::test_s",
              "trigger": "second_layout_change_in_a_row"}
    for entry, message in (
            ({**random, "symptom": {"wrong": "values", "at": "^\\(b\\) "}}, "name how they are wrong"),
            ({**random, "symptom": {"wrong": "layout"}}, "name how they are wrong"),
            ({**base, "symptom": {"wrong": "values", "where": "zeros"}}, "is strict, so its symptom takes no where"),
            ({**random, "symptom": {"wrong": "layout", "where": "zeros"}}, 'goes with wrong = "values"'),
            ({**random, "symptom": {"wrong": "values", "where": "nowhere"}}, "not one of")):
        with pytest.raises(UsageError, match=message):
            deviations_parse(entry)
    shipped = load_deviations(DEVIATIONS_FILE)
    bare = [e.where for e in shipped
            if not e.strict and e.symptom.wrong in ("values", "layout") and not e.symptom.where]
    empty = [e.where for e in shipped if e.symptom.match == "^$" and not e.symptom.raised_in]
    assert (bare, empty) == ([], []), \
        f"got bare symptoms at {bare} and empty-message asserts at {empty}, but should be none"


def deviations_parse(entry):
    from conformance.runner.deviations import parse_entry, planted_entry
    return parse_entry(planted_entry(entry))


def test_an_earlier_layout_kept_beside_the_last_one_is_laid_out_as_an_earlier_change():
    """What 0.4.31 met: -x0 of uint32[2, 2, 3] constrained P(None, None, 'a'), then returned
    P(None, 'b') on a (3, 2) mesh, comes back cut over both: each device's block is the overlap of
    the two layouts; blocks moved elsewhere are not."""
    from conformance.checking import wrongness
    from conformance.model.layout import Layout
    mesh = MeshModel(tuple(range(6)), (3, 2), ("a", "b"))
    shape = (2, 2, 3)
    asked, earlier = Layout(mesh, (None, "b"), shape).blocks, Layout(mesh, (None, None, "a"), shape).blocks
    both = Layout(mesh, (None, "b", "a"), shape).blocks
    twice = triggers.Call("layout change of a layout change", (), {"earlier": (((None, None, "a"), shape),)}, mesh,
                          "Auto", (), None, Way.JIT_CONSTRAINTS)
    assert wrongness.holds("laid_out_as_an_earlier_change", [twice], asked, both)
    assert wrongness.holds("laid_out_as_an_earlier_change", [twice], asked, earlier)
    moved = {d: asked[(d + 2) % 6] for d in asked}
    assert not wrongness.holds("laid_out_as_an_earlier_change", [twice], asked, moved)


def test_a_pad_starting_inside_interior_padding_runs_unsharded_only_where_its_abort_is_in_effect():
    """The draws hold lax.pad configurations whose negative low edge starts on an interior padding
    element; where the reproduction of XLA's abort on them is a known deviation, an example with
    a cut operand or output runs its unsharded check only, counted under that entry; elsewhere, and
    with nothing cut, it runs every way."""
    from hypothesis import given, settings, HealthCheck
    import suites.test_sharding_invariance as suite
    from strategies.ops.inputs import lax_pad_statics
    mesh = MeshModel((0, 1), (2,), ("a",))

    def pad(config, in_spec=("a",), out_spec=(), way="(b)"):
        return triggers.Call("lax_pad_negative", (np.arange(4, dtype=np.float32), np.float32(0)), {"config": config},
                             mesh, "Auto", (in_spec, ()), out_spec, way)
    assert suite.starts_inside_interior_padding_of_a_cut_layout(pad(((-1, 0, 1),)))  # the reproduction
    assert suite.starts_inside_interior_padding_of_a_cut_layout(pad(((-1, 0, 1),), (), ("a",)))  # the output cut
    assert not suite.starts_inside_interior_padding_of_a_cut_layout(pad(((-2, 0, 1),)))  # starts on an element
    assert not suite.starts_inside_interior_padding_of_a_cut_layout(pad(((-1, 0, 0),)))  # no interior padding
    assert not suite.starts_inside_interior_padding_of_a_cut_layout(pad(((-1, 0, 1),), ()))  # nothing cut
    seen = []

    @settings(max_examples=300, database=None, suppress_health_check=list(HealthCheck))
    @given(static=lax_pad_statics((4,)))
    def draw(static):
        seen.append(suite.starts_inside_interior_padding_of_a_cut_layout(pad(static["config"])))
    draw()
    assert any(seen), "the draws never start a pad inside its interior padding"
    from pathlib import Path
    from conformance.runner.deviations import DeviationsInEffect
    root = Path(suite.__file__).resolve().parents[1]
    entry = deviations_parse({"test": f"suites/test_sharding_invariance_reproductions.py::{suite.PAD_ABORT.__name__}",
                              "jax": ">=0.4.30", "reason": "r", "kind": "bug",
                              "symptom": {"wrong": "mismatch", "match": "x"}})
    assert DeviationsInEffect([entry], root).covers(suite.PAD_ABORT) is entry
    assert DeviationsInEffect([], root).covers(suite.PAD_ABORT) is None


def test_the_vmapped_dynamic_slice_triggers_hold_exactly_where_the_starts_were_measured_wrong():
    """Measured on 0.4.30 (n = 2, slices of one element): with the batch cut, starts -6..-3 and 3..7
    go wrong, -2..2 are right; with the sliced dimension cut, 2 goes wrong too (0.4.30 and 0.4.37),
    and a slice of two elements is right; nothing holds for a replicated operand or another
    operation."""
    from types import SimpleNamespace
    mesh = MeshModel((0, 1), (2,), ("b",))
    x = np.array([[1, 2], [3, 4]], np.int32)

    def vmapped(start, spec, op="dynamic_slice", sizes=(1,), data=x):
        return VmapExample(SimpleNamespace(name=op), (data, np.array([start, start], np.int32)), {"sizes": sizes},
                           mesh, (spec, ()), False)
    batch, sliced = triggers.vmapped_dynamic_slice_far_out_of_range_over_a_cut_batch, \
        triggers.vmapped_dynamic_slice_far_out_of_range_on_a_cut_dimension
    assert [s for s in range(-6, 8) if batch(vmapped(s, ("b",)))] == [-6, -5, -4, -3, 3, 4, 5, 6, 7]
    assert [s for s in range(-6, 8) if sliced(vmapped(s, (None, "b")))] == [-6, -5, -4, -3, 2, 3, 4, 5, 6, 7]
    assert not sliced(vmapped(5, (None, "b"), sizes=(2,), data=np.arange(8, dtype=np.int32).reshape(2, 4)))
    assert not batch(vmapped(5, ())) and not sliced(vmapped(5, ()))  # replicated
    assert not batch(vmapped(5, (None, "b"))) and not sliced(vmapped(5, ("b",)))  # the other dimension cut
    assert not batch(vmapped(5, ("b",), op="take")) and not sliced(vmapped(5, (None, "b"), op="take"))


def test_the_size_one_merge_trigger_holds_where_0_6_1_kept_the_spec():
    """explicit_merge_over_size_one_axes_only holds for the 0.6.1 finding ((4, 4@b, 8) to (16, 8), b
    of size 1), not for an axis of size 2, a split, a merge of unsharded dimensions, or an Auto mesh."""
    from strategies.contractions import Reshape
    mesh = MeshModel(tuple(range(8)), (8, 1), ("a", "b"))
    x = np.arange(128, dtype=np.int32).reshape(4, 4, 8)

    def reshape(spec, kind="merge", dims=(0, 1), axis_type="Explicit"):
        return Reshape(mesh, axis_type, x, (16, 8), kind, dims, (0,), spec, ())
    holds = triggers.explicit_merge_over_size_one_axes_only
    assert holds(reshape((None, "b")))  # the finding
    assert not holds(reshape((None, "a")))  # an axis of size 8
    assert not holds(reshape((None, None, "b")))  # the merged dimensions unsharded
    assert not holds(reshape((None, "b"), kind="split", dims=(1,)))
    assert not holds(reshape((None, "b"), axis_type="Auto"))


def test_the_prefix_slice_trigger_holds_where_the_slice_keeps_its_operands_shard_shape():
    """Measured on 0.10.2 (a prefix slice returned replicated beside -x): wrong for x[0:1] of x[2]
    over two devices, x[0:2] of x[3] and x[0:5] of x[6] over three, x[0:5] of x[8] over four; right
    for x[0:2] of x[4] over two, x[0:3] of x[6] over three, x[1:5] of x[6] over three, x[0:5] of x[8]
    over two; and a slice of a concatenate inside its first operand reads that operand."""
    def sliced(n, ways, index, producers=()):
        mesh = MeshModel(tuple(range(ways)), (ways,), ("a",))
        return triggers.Call("slice", (np.arange(n),), {"index": (index,)}, mesh, "Auto", ((("a",),),), (),
                             Way.JIT_CONSTRAINTS, producers=producers)
    wrong = [(2, 2, slice(0, 1)), (3, 3, slice(0, 2)), (6, 3, slice(0, 5)), (8, 4, slice(0, 5))]
    right = [(4, 2, slice(0, 2)), (6, 3, slice(0, 3)), (6, 3, slice(1, 5)), (8, 2, slice(0, 5))]
    for n, ways, index in wrong:
        assert triggers.jitted_prefix_slice_with_its_operands_shard_shape(sliced(n, ways, index)), (n, ways, index)
    for n, ways, index in right:
        assert not triggers.jitted_prefix_slice_with_its_operands_shard_shape(sliced(n, ways, index)), (n, ways, index)
    assert not triggers.jitted_prefix_slice_with_its_operands_shard_shape(
        replace(sliced(2, 2, slice(0, 1)), way="(a) eager")), "eager: no partitioned program"
    two = MeshModel((0, 1), (2,), ("a",))
    concat = triggers.Call("concatenate", (np.arange(2), np.arange(1)), {"axis": 0}, two, "Auto", ((("a",),), ()), (),
                           Way.JIT_CONSTRAINTS)
    whole = triggers.Call("slice", (np.arange(3),), {"index": (slice(-4, None),)}, two, "Auto", ((("a",),),), (),
                          Way.JIT_CONSTRAINTS, producers=(concat,))
    assert not triggers.jitted_prefix_slice_with_its_operands_shard_shape(sliced(3, 2, slice(0, 1))), "x[0:1] of x[3]"
    assert triggers.jitted_prefix_slice_with_its_operands_shard_shape(sliced(3, 2, slice(0, 1), (whole,)))
    assert not triggers.jitted_prefix_slice_with_its_operands_shard_shape(sliced(3, 2, slice(0, 3), (whole,))), \
        "past the concatenate's first operand"
    # through the steps XLA folds away (met on 0.6.1, seed 435230726): v0[0:3].set in place, a device_put
    same = triggers.Call("at_set_shifted", (np.arange(3),), {"axis": 0, "shift": 0}, two, "Auto", ((("a",),),), (),
                         Way.JIT_CONSTRAINTS, producers=(concat,))
    assert triggers.jitted_prefix_slice_with_its_operands_shard_shape(sliced(3, 2, slice(0, 1), (same,)))
    shifted = replace(same, static={"axis": 0, "shift": 1})
    assert not triggers.jitted_prefix_slice_with_its_operands_shard_shape(sliced(3, 2, slice(0, 1), (shifted,))), \
        "a shifted update is a value of its own"
    put = triggers.Call("device_put", (np.arange(2),), {"spec": ()}, two, "Auto", ((("a",),),), (), Way.JIT_SHARDINGS)
    assert triggers.jitted_prefix_slice_with_its_operands_shard_shape(
        replace(sliced(2, 2, slice(0, 1), (put,)), in_specs=((),)))


def test_within_two_ulps_holds_for_a_rounding_difference_only():
    """Hand-worked: -1.7149543 for -1.714954 (float32, two ulps apart: 0.8.1's normal draw) holds;
    three ulps, a NaN, or an integer difference do not."""
    from conformance.checking import wrongness
    e = np.array([-0.12597287, -1.714954], np.float32)
    assert wrongness.holds("within_two_ulps", [None], e, np.array([-0.12597287, -1.7149543], np.float32))
    three = e.copy()
    three[1] = np.nextafter(np.nextafter(np.nextafter(e[1], -np.inf), -np.inf), -np.inf)
    assert not wrongness.holds("within_two_ulps", [None], e, three)
    assert not wrongness.holds("within_two_ulps", [None], e, np.array([-0.12597287, np.nan], np.float32))
    assert not wrongness.holds("within_two_ulps", [None], np.array([1, 2], np.int32), np.array([1, 3], np.int32))


def test_negative_zeros_made_positive_holds_for_a_lost_sign_of_zero_only():
    """[-0.0, 1.0] returned as [0.0, 1.0] is a -0.0 made +0.0; a +0.0 made -0.0, a -0.0 made 1.0, or
    integers, are not."""
    from conformance.checking import wrongness
    e = np.array([-0.0, 1.0], np.float32)
    assert wrongness.holds("negative_zeros_made_positive", [None], e, np.array([0.0, 1.0], np.float32))
    assert not wrongness.holds("negative_zeros_made_positive", [None], np.array([0.0, 1.0], np.float32),
                               np.array([-0.0, 1.0], np.float32))
    assert not wrongness.holds("negative_zeros_made_positive", [None], e, np.array([1.0, 1.0], np.float32))
    assert not wrongness.holds("negative_zeros_made_positive", [None], np.array([0, 1], np.int32),
                               np.array([0, 2], np.int32))
