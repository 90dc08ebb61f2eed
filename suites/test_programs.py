"""Generated programs: random chains of catalogue operations and layout changes on sharded arrays
(``strategies/programs.py``) equal the same program run unsharded, and numpy's values.

Each program runs four ways: (0) unsharded, step by step on one device, against numpy; (a) eagerly,
step by step, on committed sharded inputs: every step's value, its shards, and the layout of every
layout change; (b) as one ``jit`` with ``in_shardings``/``out_shardings`` and donated inputs; (c) as
one ``jit`` with constraints on the inputs and outputs. Each output of (b) and (c) must hold
numpy's value, laid out as asked. A failure prints the shrunk program as a script.

The unsharded run (0) is the oracle and is never excused. Every check is exact (numpy's bits), so
in this process it runs on demand (``OracleOnDemand``): where a sharded way fails, before the
failure is judged, and where a way is not checked whole; where ways run in a fresh interpreter it
runs first. The sharded ways run under this
property's known deviations (``excuses``): a failure is excused only where an entry's trigger
holds for the failing step (in (a)) or, in (b) and (c), for the first step whose prefix, jitted
the same way, goes wrong (``first_wrong_step``), and the failure shows the entry's symptom; later
ways still run. Every value has the layout our model derives for it (``derived_specs``), which a
prefix is computed into. Where XLA would abort this process on the program's shape, the jit ways
(and the eager one, for some shapes) run in a fresh interpreter, checked as here, each way under
its own excuses, a wrong output localized by prefixes each run in a fresh interpreter too.

Under ``--hypothesis-profile=soak`` the property runs in rounds, each in a fresh process, for
``--soak-minutes`` (``test_generated_programs_soak``); every distinct failure is reported.
"""

import dataclasses
import functools
import os
import warnings
from typing import Optional

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings

import conformance.checking.programs as programs_
import suites.test_programs_reproductions as reproductions
import suites.test_sharding_invariance_reproductions as invariance_reproductions
from conformance.checking.case import Case, OracleOnDemand
from conformance.checking.layouts import check_layout
import conformance.checking.triggers as triggers
from conformance.checking.symptoms import Seen
from conformance.checking.triggers import Call
from conformance.checking.ways import JIT_WAYS, Way
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel, spec_axes
from conformance.runner import environment, soak
from conformance.model.program import Program, Step
from conformance.model.sharding_rules import axes_argument
from strategies.ops import BY_NAME
import strategies.programs as strategies_programs
from strategies.programs import programs
from suites.test_sharding_invariance import (ABORT, GATHER_ABORT, aborts_under_jit, accepted_refusal,
                                             expected_rejection, forwards_an_input, sharding_verdict, why_not_rejected)

pytestmark = pytest.mark.programs
DEVICES = bridge.live_device_ids()

# Each example compiles every step eagerly twice (unsharded, sharded) and two whole programs: a
# half of the profile's examples (50 by default, 500 nightly and in each soak round).
EXAMPLES = max(8, settings().max_examples // 2)
PROPERTY_ID = "suites/test_programs.py::test_generated_programs_agree_with_the_unsharded_run"
SOAK = "soak"  # the Hypothesis profile under which the property runs in the soak's rounds


def spec_of(program: Program, name: str, way: Way = Way.EAGER):
    """The spec a value has by our model (``derived_specs``) when the program runs ``way``: under jit
    on an Auto mesh, a device_put keeps its operand's layout (measured on 0.4.31 to 0.10.2:
    jit(lambda v: jax.device_put(v, P())) of v P('a') returns P('a'); met on 0.4.31, seed
    3063195687: a concatenate of such a device_put's result is a partially replicated join)."""
    in_jit = Way.of(way).jitted and program.axis_type == "Auto"
    return derived_specs(program, device_put_retypes=not in_jit)[name]


def typed_step_call(program: Program, step: Step, specs: dict, way: str = "") -> Call:
    """``step`` as our sharding-rule model reads it, its operands typed with ``specs`` (by name)."""
    return Call(step.op, tuple(program.value(n) for n in step.operands), step.kwargs, program.mesh,
                program.axis_type, tuple(specs[n] for n in step.operands), None, way)


def auto_propagation():
    """The rules our sharding-rule model derives an Auto mesh's computed layouts by: the stated
    rules with indexing and reshapes typed, a contraction's batch dimension taking its sharded
    side's entry, a scan, sort or roll keeping its operand's layout and a concatenate taking its
    one sharded operand's, a dynamic slice unsharding the dimensions it resizes (an Auto mesh
    refuses nothing: forward propagation; met on 0.4.30, seed 3849284905:
    concatenate((x0 P('a'), x1, x2)), then a concatenate of that with itself returned P(), a
    partially replicated join our model had typed replicated; on 0.4.35, seed 1428177788, a
    dynamic slice of x0 P('b', None, 'a') to (1, 1, 4), laid out P(None, None, 'a'), then joined
    with a replicated value)."""
    from conformance.model import sharding_rules as rules
    return rules.ReleaseRules(indexing_infers_sharding=True, reshape_deals_mesh_axes=True, batch_specs_equal=False,
                              scan_keeps_a_sharded_dimension=True, sort_keeps_a_sharded_dimension=True,
                              roll_keeps_a_sharded_dimension=True, takes_the_one_sharded_operands_spec=True,
                              dynamic_slice_unshards_resized_dimensions=True,
                              dynamic_slice_replicates_a_resized_sharded_dimension=(
                                  not compat.AUTO_DYNAMIC_SLICE_KEEPS_WHOLE_DIMENSIONS))


def without_size_one_axes(mesh, spec):
    """``spec`` without its mesh axes of size 1, which shard nothing: on an Auto mesh XLA's
    shardings do not carry them, so two operands naming one on different dimensions do not conflict
    (met on 0.10.2, seed 3820354981: x + y of P('b', 'a') and P(None, None, 'b'), b of size 1, laid
    out P(None, 'a') for the dynamic_update_slice after it, which our model had typed replicated)."""
    if spec is None:
        return None
    from conformance.model import sharding_rules as rules
    kept = [tuple(a for a in rules.entry_axes(e) if mesh.axis_sizes[a] > 1) for e in spec]
    return tuple(None if not axes else axes[0] if len(axes) == 1 else axes for axes in kept)


@functools.lru_cache(maxsize=32)  # (a Program hashes by identity)
def derived_specs(program: Program, device_put_retypes: bool = True) -> dict:
    """The spec our model gives each value of ``program``, by name: an input's, a layout change's
    target, and a catalogue step's result as our sharding-rule model types it from its operands'
    (on an Explicit mesh by the installed release's rules, on an Auto mesh by ``auto_propagation``,
    its operands' size-1 mesh axes dropped: ``without_size_one_axes``;
    replicated, ``()``, where the rules reject the step or have none, but for an update (``.at``,
    ``dynamic_update_slice``) on an Auto mesh, which keeps its operand's layout: XLA propagates a
    scatter's or dynamic-update-slice's operand sharding to its result, whatever our Explicit rule
    says of the slice it reads or of an update split unlike it; met on 0.4.36, seed 190299437: a
    shifted .at[].set of a value cut P('a'), then an eager take(mode='clip') that read it cut; on
    0.7.1, seed 1169472492: a dynamic_update_slice of a value cut P('a') by a replicated update,
    whose prefix, computed into P() for it, was right, and into P('a') drops the update). (``device_put_retypes=False``:
    as a JAX whose device_put inside jit keeps its operand's type types the values.)"""
    from conformance.model import sharding_rules as rules
    by_rules = compat.sharding_rule_set() if program.axis_type == "Explicit" else auto_propagation()
    specs = dict(zip(program.inputs, program.in_specs))
    for step in program.steps:
        if step.changes_layout:
            kept = step.op == "device_put" and not device_put_retypes
            specs[step.result] = specs[step.operands[0]] if kept else step.spec
            continue
        call = typed_step_call(program, step, specs if program.axis_type == "Explicit" else
                               {n: without_size_one_axes(program.mesh, specs[n]) for n in step.operands})
        verdict = rules.sharding_verdict(call.op, BY_NAME[call.op].family, [np.shape(x) for x in call.operands],
                                         call.in_specs, call.static, call.mesh, rules=by_rules)
        if isinstance(verdict, rules.Accepts):
            specs[step.result] = verdict.out_spec
        elif program.axis_type == "Auto" and (BY_NAME[step.op].family == "at" or step.op == "dynamic_update_slice"):
            specs[step.result] = specs[step.operands[0]]  # (see the docstring)
        else:
            specs[step.result] = ()
    return specs


def computed_into(program: Program, name: str, way: Way = Way.EAGER):
    """The spec a jit way computes the value ``name`` into when it ends a prefix of the program
    (``first_wrong_step``): an output's spec, else its derived spec without the entries whose
    tiling does not divide their dimension (XLA pads such a dimension inside a program, but a jit
    returns only a layout that divides: met on 0.4.30, seed 3849284905, a join of length 7 laid out
    P('a'))."""
    outputs = dict(zip(program.outputs, program.out_specs))
    if name in outputs:
        return outputs[name]
    return dividing(program, name, spec_of(program, name, way))


def dividing(program: Program, name: str, spec):
    """``spec`` without the entries whose tiling does not divide their dimension of the value ``name``."""
    from conformance.model import sharding_rules as rules
    shape = np.shape(program.value(name))
    return tuple(e if e is None or n % rules.tiling(program.mesh, e) == 0 else None for n, e in zip(shape, spec))


def padded_operands(program: Program, step: Step, way: str, goes_wrong=None) -> list:
    """The steps computing ``step``'s operands whose derived layout does not divide their shape (XLA
    pads such a value inside the program, but no prefix can return it so: ``computed_into`` drops
    those entries), each as its call in that derived layout, kept only where its own prefix, with
    its value constrained to that layout inside the jit and returned in the dividing one, goes
    wrong, with those values (the symptom reads them). Met on 0.4.30, seed 3849284905: v0 =
    concatenate((x0 P('a'), x1, x2)) of length 5, a join partially replicated inside the program,
    then v0 + x2 returned P(), which came back multiplied while the prefix of v0, returned P(), was
    right; in a later pass, v4 = cumprod(v0) returned P(), whose values are a scan of multiplied
    ones (the join's own values, read this way, are multiplied). Each prefix is run by
    ``goes_wrong`` (default ``prefix_goes_wrong``)."""
    goes_wrong = goes_wrong or prefix_goes_wrong
    by_result = {s.result: s for s in program.steps}
    calls = []
    for name in (n for n in dict.fromkeys(step.operands) if n in by_result):
        derived = spec_of(program, name, way)
        returned = dividing(program, name, derived)
        if returned != derived:
            wrong = goes_wrong(program, way, by_result[name], returned, inside=derived)
            if wrong is not None and wrong[1] is not None:
                calls.append(dataclasses.replace(step_call(program, by_result[name], way), out_spec=derived,
                                                 values=wrong[1]))
    return calls


def layout_changed(program: Program) -> set:
    """The values a layout change made: each layout change's result, and that of a step whose JAX
    function returns its operand itself, or that XLA removes, when that operand is one
    (``traces_nothing``), so that a layout change of it is a layout change of a layout change."""
    changed = set()
    for s in program.steps:
        if s.changes_layout or (s.operands and s.operands[0] in changed and traces_nothing(program, s)):
            changed.add(s.result)
    return changed


# The catalogue's steps that return their operand for these static arguments, whatever its values:
# operation -> (operand's shape, static arguments) -> whether it does.
IDENTITIES = {
    "slice": lambda shape, kw: not triggers.narrowed_dimensions(shape, kw["index"]),
    "strided_slice": lambda shape, kw: not triggers.narrowed_dimensions(shape, kw["index"]),
    "transpose": lambda shape, kw: not triggers.moves_a_dimension("transpose", kw, len(shape)),
    "swapaxes": lambda shape, kw: not triggers.moves_a_dimension("swapaxes", kw, len(shape)),
    "broadcast_to": lambda shape, kw: tuple(kw["shape"]) == tuple(shape),
    "pad": lambda shape, kw: all(tuple(w) == (0, 0) for w in kw["widths"]),
    "roll": lambda shape, kw: (kw["axis"] is not None  # (flattened: kept)
                               and kw["shift"] % max(shape[kw["axis"]], 1) == 0),
    "at_set_shifted": lambda shape, kw: kw["shift"] == 0,
}


def traces_nothing(program: Program, step: Step) -> bool:
    """A step whose JAX function returns its operand itself, tracing no operation: ``jnp.abs`` of an
    unsigned or bool value (met on 0.4.33, seed 3890113860, where the first of two layout changes in
    a row then won), and ``jnp.reshape`` to the operand's own shape (lax.reshape returns the operand;
    met on 0.4.36, seed 81484243: v5 = jnp.reshape(v1, (2,)) of v1 constrained P('a'), returned P(),
    came out P('a')); and a reduction over no axes that keeps the dtype (``jnp.sum(v, axis=())``: JAX
    traces a reduce over no dimensions, which XLA's simplifier removes before partitioning; met on
    0.4.31, seed 2885603745: v4 = jnp.sum(v1, axis=()) of v1 constrained P(None, None, 'a'), returned
    P() through a constraint, came out as v1); and ``jnp.flip`` along axes all of size 1 (a reverse of
    size-1 dimensions, which XLA's simplifier removes too; met on 0.4.30, seed 986912483, cache off:
    v3 = jnp.flip(v2, axis=0) of v2 uint32[1, 2, 2, 2] constrained P(None, None, None, 'a'), returned
    P() through a constraint, came out P(None, None, None, 'a'); measured <0.7.0 over the releases); and
    the steps whose static arguments make them return their operand (``IDENTITIES``: a static slice of
    every element in order, which jnp's indexing returns as the operand, met on 0.6.2, seed 1852810764:
    v4 = v3[::1] of v3 constrained P('a'), returned P() through a constraint, came out P('a'), its
    script failing on <0.7.0 over the releases; then jnp.transpose(v4, (0, 1)) in its replay; the
    others measured on 0.6.2 between two constraints, each ignoring the second, and none on 0.7.0)."""
    operand, result = program.value(step.operands[0]), program.value(step.result)
    if step.op == "abs":
        return operand.dtype.kind in "ub"
    if step.op in IDENTITIES:
        return IDENTITIES[step.op](np.shape(operand), step.kwargs)
    if step.op == "flip":
        return all(np.shape(operand)[a] == 1 for a in axes_argument(step.kwargs.get("axis"), np.ndim(operand)))
    if step.op in BY_NAME and BY_NAME[step.op].family == "reduction":
        return step.kwargs.get("axis", None) == () and result.dtype == operand.dtype and \
            np.shape(result) == np.shape(operand)
    return step.op == "reshape" and np.shape(result) == np.shape(operand)


def step_call(program: Program, step: Step, way: str, producers: int = 4, neighbours: bool = True) -> Call:
    """A step as the known deviations' triggers read it, with the steps computing its operands
    (``producers``: how many steps back; theirs, and so on, to that depth: a trigger whose bug needs
    three steps reads them through layout changes) and, while that depth lasts and ``neighbours``,
    the program's other steps reading its first operand (``beside``) and those reading its result
    (``read_by``: ``readers``, each with its producers), without theirs (but a step XLA folds into its
    operand gets the ``read_by`` of each step beside it); a layout change of a layout change's
    result is the call "layout change of a layout change"."""
    changed = layout_changed(program)
    op = "layout change of a layout change" if step.changes_layout and step.operands[0] in changed else step.op
    static = {"spec": step.spec} if step.changes_layout else step.kwargs  # (a layout change's target)
    by_result = {s.result: s for s in program.steps}
    made_by = tuple(step_call(program, by_result[n], way, producers - 1, neighbours) if n in by_result else None
                    for n in step.operands) if producers > 0 else ()
    near = neighbours and producers > 0
    besides = [s for s in program.steps
               if s is not step and step.operands and s.operands[:1] == step.operands[:1]] if near else []
    # of a step XLA folds into its operand, the steps reading each step beside it too
    folded = bool(besides) and triggers.keeps_its_value(step.op, step.kwargs, np.shape(program.value(step.operands[0])),
                                                        np.shape(program.value(step.result)))
    beside = tuple(dataclasses.replace(step_call(program, s, way, 0, False), read_by=tuple(
        step_call(program, r, way, 3, False) for r in readers(program, s.result)) if folded else ()) for s in besides)
    read_by = tuple(step_call(program, s, way, 3, False) for s in readers(program, step.result)) if near else ()
    return Call(op, tuple(program.value(n) for n in step.operands), static, program.mesh, program.axis_type,
                tuple(spec_of(program, n, way) for n in step.operands),
                None if Way.of(way) is Way.EAGER else computed_into(program, step.result, way), way,
                tuple(np.shape(program.value(step.result))), made_by, beside=beside, read_by=read_by)


def readers(program: Program, name: str) -> list:
    """The steps reading the value ``name``, and those reading it through steps that keep it
    (``triggers.keeps_its_value``: a layout change, a whole slice, an .at[].set of itself)."""
    found, todo = [], [name]
    while todo:
        value = todo.pop()
        for s in program.steps:
            if value in s.operands and s not in found:
                found.append(s)
                if s.operands[0] == value and triggers.keeps_its_value(
                        s.op, s.kwargs, np.shape(program.value(value)), np.shape(program.value(s.result))):
                    todo.append(s.result)
    return found


def depends_on(program: Program, name: str) -> list:
    """The steps whose results the value ``name`` depends on (itself included)."""
    by_result = {s.result: s for s in program.steps}
    found, todo = [], [name]
    while todo:
        step = by_result.get(todo.pop())
        if step is not None and step not in found:
            found.append(step)
            todo += list(step.operands)
    return found


# XLA's SPMD partitioner aborts the process on a cumsum of a range update of a dimension cut over two
# axes, jitted into a layout cutting another dimension over the first (from 0.10.1; other steps reading
# the update fail its HLO verifier from 0.7.0): where this reproduction is a known deviation, a program
# with such a step runs its jit ways in a subprocess.
MOVED_UPDATE_ABORT = (
    reproductions.test_a_cumsum_of_a_shifted_update_of_columns_cut_over_two_axes_into_rows_cut_over_the_major_one)
JOIN_HANG = reproductions.test_a_concatenate_of_a_dynamic_slice_laid_out_replicated_with_itself
# It aborts on a scan of an operand sliced beside it to a prefix as long per shard (from 0.10.1; such
# a scan reads the slice's buffer from 0.5.1).
SCAN_BESIDE_A_PREFIX_SLICE = reproductions.test_a_cumsum_returned_beside_a_prefix_slice_of_its_operand


# The bugs that end the process, one row each: (its strict reproduction, whether a step call meets it,
# the ways of the step calls asked, the ways that then run in a fresh interpreter). A program runs those
# ways apart on a JAX whose known deviations cover the reproduction, where a step call of it meets the
# bug; the first row met decides.
PROCESS_ENDING = (
    # a layout change onto combined mesh axes aborts eagerly too
    (reproductions.test_constraint_onto_two_combined_axes_after_a_split_input,
     triggers.layout_change_onto_combined_axes, (Way.JIT_SHARDINGS,), (programs_.EAGER,) + programs_.ISOLATED_WAYS),
    # a join, or a step moving an operand's axis into combined axes of another dimension
    (ABORT, aborts_under_jit, (Way.JIT_SHARDINGS,), programs_.ISOLATED_WAYS),
    (MOVED_UPDATE_ABORT, triggers.jitted_read_of_a_range_update_moving_its_major_cut_axis, JIT_WAYS,
     programs_.ISOLATED_WAYS),
    # (it never returns: the subprocess's faulthandler ends it)
    (JOIN_HANG, triggers.jitted_concatenate_of_a_replicated_dynamic_slice_with_itself, JIT_WAYS,
     programs_.ISOLATED_WAYS),
    (SCAN_BESIDE_A_PREFIX_SLICE, triggers.jitted_scan_beside_a_prefix_slice_with_its_operands_shard_shape, JIT_WAYS,
     programs_.ISOLATED_WAYS),
    (GATHER_ABORT, triggers.jitted_gather_refining_the_cut_of_a_passed_through_dimension, JIT_WAYS,
     programs_.ISOLATED_WAYS),
)


def process_ending(program: Program, known_deviations):
    """``(the strict entry, the ways it ends the process on)`` where this JAX's known deviations say
    XLA ends the process on the program's shape (``PROCESS_ENDING``), else None."""
    for reproduction, meets, asked, ways in PROCESS_ENDING:
        if any(meets(step_call(program, step, way)) for step in program.steps for way in asked):
            entry = known_deviations.covers(reproduction)
            if entry is not None:
                return entry, ways
    return None


def isolated_ways(program: Program, known_deviations) -> tuple:
    """The ways of this program to run in a fresh interpreter, on a JAX whose known deviations say
    XLA ends the process on its shape (``process_ending``: all three ways for a layout change onto
    combined mesh axes, the two jit ways otherwise); none elsewhere."""
    ending = process_ending(program, known_deviations)
    return ending[1] if ending else ()


def jit_candidates(program: Program, way: str, output: str = "", failure: BaseException = None, note: bool = True,
                   goes_wrong=None, whole_program: bool = True):
    """What a jit way's failure is asked about: the first step that goes wrong (``first_wrong_step``:
    of those ``output`` depends on, or of every step when the failure is not an output's), else,
    when every prefix is right, the step computing ``output`` (every step for a failure of the call
    itself); and an output that is a layout change's result (the jit lays it out again). The step
    found is noted on ``failure`` where ``note``. Each prefix is run by ``goes_wrong`` (default
    ``prefix_goes_wrong``, in this process; ``isolated_prefix_goes_wrong`` runs each in a fresh
    interpreter); ``whole_program``: also ask about the first value the whole program, run in this
    process, computes wrongly (``first_wrong_inside``)."""
    located = first_wrong_step(program, way, output, failure is not None and Seen.of(failure).shows == "raised",
                               goes_wrong=goes_wrong)
    by_result = {s.result: s for s in program.steps}
    wanted = {s.result for s in (depends_on(program, output) if output else program.steps)}
    inside = first_wrong_inside(program, way, wanted) if whole_program else None
    if located is not None:
        steps = [located[0]]
        if failure is not None and note:
            failure.add_note(f"localized: of this program's steps run {way.split(' ', 1)[1]}, the first that goes "
                             f"wrong is {located[0].result} = {programs_.expression(located[0])} "
                             f"({located[1]}); the known deviations' triggers are asked about that step")
    else:
        steps = [by_result[output]] if output in by_result else [] if output else list(program.steps)
    changed = layout_changed(program)
    located_values = located[2] if located is not None else None
    laid_out = [c for s in steps for c in laid_out_as_asked(program, s, way, located_values)]
    if located is not None:  # (only a step found wrong is walked back through a scan; each source rerun)
        laid_out += carried_back(program, located[0], way, goes_wrong) + \
            padded_operands(program, located[0], way, goes_wrong)
    calls = candidate_calls(program, way, steps, bool(output in changed if output else changed & set(program.outputs)),
                            laid_out)
    if located is not None and located[2] is not None:  # (a symptom's where reads the step's own values)
        calls[0] = dataclasses.replace(calls[0], values=located[2])
    if located is not None:  # (and as the jit typed its operands, on an Explicit mesh)
        typed = typed_operands(program, way, located[0])
        if typed:
            calls.append(as_laid_out(calls[0], located[0], typed))
    if inside is not None and (located is None or inside[0] is not located[0]):
        step, shown, values, layouts = inside  # (also: the first value the whole program computes wrongly)
        if failure is not None:
            failure.add_note(f"also asked about: {step.result} = {programs_.expression(step)}, the first of the whole "
                             f"program's values that is wrong ({shown}), as computed and as laid out there")
        call = dataclasses.replace(step_call(program, step, way), values=values)
        calls += [call, as_laid_out(call, step, layouts)]
    return calls


def candidate_calls(program: Program, way: str, steps, laid_out_again: bool, more=()) -> list:
    """The calls of ``steps`` as the triggers read them, then ``more``; the pseudo-step "layout
    change of a layout change" where an output that is a layout change's result is laid out again
    by the jit (``laid_out_again``); and the pseudo-step of a step rejected as typed before a
    device_put."""
    calls = [step_call(program, s, way) for s in steps] + list(more)
    if laid_out_again:  # (with the layout each change asked for: what a symptom's where reads)
        earlier = tuple((s.spec, np.shape(program.value(s.result))) for s in program.steps if s.changes_layout)
        calls.append(Call("layout change of a layout change", (), {"earlier": earlier}, program.mesh, program.axis_type,
                          (), None, way))
    return calls + rejected_as_typed_before_a_device_put(program, way, steps)


def keeps_layout(program: Program, step: Step) -> bool:
    """A step whose result the jit lays out as its operands: a layout change (its target aside), a
    unary elementwise operation of the catalogue, or a broadcasting one whose operands all have its
    result's shape (``v3 + v3``: nothing broadcasts, so each operand is computed in its layout)."""
    if step.changes_layout or (step.op in BY_NAME and BY_NAME[step.op].family == "elementwise"):
        return True
    shape = np.shape(program.value(step.result))
    return (step.op in BY_NAME and BY_NAME[step.op].family == "broadcasting"
            and all(np.shape(program.value(n)) == shape for n in step.operands))


def laid_out_as_asked(program: Program, step: Step, way: str, values=None) -> list:
    """For a layout change, or an elementwise step (``keeps_layout``), that goes wrong under jit: the
    steps computing its operands (through any such steps before them, every operand of each), as
    computed into the layout asked of it (its call's output spec the change's target, or the layout
    the elementwise step's result is computed into: ``computed_into``), since the jit computes them
    there (a bug of two steps: a join, then a constraint that leaves it partially replicated; a
    clamped dynamic_slice, then a negation laid out cut; met on 0.4.30: a partially replicated
    concatenate, whose prefix was right, then a negation; on 0.4.38, seed 3790318310, negations then
    v3 + v3); and, where the change's result is computed into another layout again (an output
    that out_shardings lays out otherwise), those steps as computed into that layout too (the jit
    reshards it there, slicing it per shard: met on 0.11.0, a clamped dynamic_slice constrained to
    P() and returned P('b')). An empty list for any other step. A layout change's localized ``values`` (expected,
    got) are those of its operand as computed into its layout, bit for bit: the call of the step
    computing that operand carries them (what a symptom's where reads; met on 0.12.0.1 in CI: a
    dynamic_update_slice at a start to clamp, of a value constrained P(), then constrained P('a'),
    dropped the update)."""
    if not keeps_layout(program, step):
        return []
    sources = walked_back(program, step)
    own = values if step.changes_layout else None
    calls = [dataclasses.replace(step_call(program, source, way),
                                 values=own if source.result == step.operands[0] else None) for source in sources]
    return [dataclasses.replace(call, out_spec=t) for call in calls for t in layout_targets(program, step, way)]


def layout_targets(program: Program, step: Step, way: str) -> list:
    """The layouts a jit computes ``step``'s result into: a layout change's target, else the layout
    ``computed_into`` gives it; and, for a layout change returned otherwise, that layout too."""
    target = step.spec if step.changes_layout else computed_into(program, step.result, way)
    returned = computed_into(program, step.result, way)
    return [target] + ([returned] if step.changes_layout and returned != target else [])


def walked_back(program: Program, step: Step) -> list:
    """The steps, in program order, that compute the operands of ``step`` through steps that keep
    their layout (``keeps_layout``; every operand of each; ``step`` itself passed through),
    stopping at the first step on each path that does not (an input's layout is its own)."""
    by_result = {s.result: s for s in program.steps}
    sources, todo, seen = [], [step], set()
    while todo:
        current = todo.pop()
        if current.result in seen:
            continue
        seen.add(current.result)
        if current is not step and not keeps_layout(program, current):
            sources.append(current)
            continue
        todo += [by_result[n] for n in current.operands if n in by_result]
    return sorted(sources, key=program.steps.index)


# Same-shape families whose result's layout XLA's sharding propagation carries back to their operand
# under jit (measured on 0.4.31 and 0.10.2: a clamped dynamic_slice of x P('a'), then cumsum,
# cumprod, cummax, a reverse cumsum, flip, roll, tril or + iota, returned P('b'), computes the slice
# cut and goes wrong; then sort, or a full reduction, does not; on 0.10.0, + an input of shape (1, 1, 1)
# broadcast onto the slice's (1, 1, 2), returned P(None, None, 'b'), computes it cut too).
CARRIES_BACK_FAMILIES = ("scan", "permuting", "iota", "broadcasting")
SIZE_ONE_RESHAPES = ("reshape", "squeeze", "expand_dims")


def spec_carried_back(program: Program, step: Step, spec):
    """The layout the jit gives ``step``'s operands when its result is laid out ``spec``, where XLA's
    sharding propagation carries it back: ``spec`` itself for a step that keeps its layout
    (``keeps_layout``) or its operand's shape (``CARRIES_BACK_FAMILIES``); for a reshape, squeeze or
    expand_dims that only drops or adds dimensions of size 1, ``spec`` moved onto the operand's
    dimensions (met on 0.5.0, seed 1153646877: a clamped dynamic_slice of shape (2, 1), reshaped to
    (2,) and returned P('b')); for a transpose or swapaxes, ``spec`` permuted back (met on 0.5.0,
    the same seed in a later pass: the slice constrained P(), then transposed by (0, 1) and
    returned P('b')); for a jnp.take, ``spec`` of the dimensions it passes through, the taken
    dimension left whole (met on 0.10.0, seed 3668209805: the slice put P(), + a same-shape input,
    taken along axis 0, then negated and returned P(None, None, 'b')); None for any other step."""
    out_shape, in_shape = np.shape(program.value(step.result)), np.shape(program.value(step.operands[0]))
    family = BY_NAME[step.op].family if step.op in BY_NAME else None
    if keeps_layout(program, step) or (family in CARRIES_BACK_FAMILIES and in_shape == out_shape):
        return spec
    if step.op in ("transpose", "swapaxes"):  # (result dimension i is the operand's dimension perm[i])
        from conformance.model import sharding_rules as rules
        rank = len(in_shape)
        inverse = [int(i) for i in np.argsort(rules.permutation(step.op, step.kwargs, rank))]
        return rules.transpose(tuple(spec) + (None,) * (rank - len(spec)), inverse)
    if step.op in ("take", "take_clip"):  # (result: operand dims before axis, the indices' dims, those after)
        axis, taken = step.kwargs["axis"] % len(in_shape), np.ndim(program.value(step.operands[1]))
        entries = tuple(spec) + (None,) * (len(out_shape) - len(spec))
        return entries[:axis] + (None,) + entries[axis + taken:]
    if step.op in SIZE_ONE_RESHAPES and [n for n in in_shape if n != 1] == [n for n in out_shape if n != 1]:
        entries = iter(e for n, e in zip(out_shape, tuple(spec) + (None,) * (len(out_shape) - len(spec))) if n != 1)
        return tuple(None if n == 1 else next(entries) for n in in_shape)
    return None


def carried_back(program: Program, step: Step, way: str, goes_wrong=None) -> list:
    """For a step that goes wrong under jit and carries its layout back (``spec_carried_back``), the
    steps computing its operands through such steps (every operand of its shape), each as computed
    into the layout carried back to it, kept only where its own prefix, jitted as ``way`` into that
    layout, goes wrong, with those values (the symptom reads them): the first step that goes wrong
    in the layout the jit gave it (met on 0.4.31, seed 2998147126: a clamped dynamic_slice, cumsum,
    then a negation returned P('b')). Each prefix is run by ``goes_wrong`` (default
    ``prefix_goes_wrong``)."""
    goes_wrong = goes_wrong or prefix_goes_wrong
    by_result = {s.result: s for s in program.steps}
    todo = [(step, target) for target in layout_targets(program, step, way)]
    found, seen = [], set()
    while todo:
        current, spec = todo.pop()
        if (current.result, spec) in seen:
            continue
        seen.add((current.result, spec))
        carried = spec_carried_back(program, current, spec)
        if current is not step and carried is None:
            wrong = goes_wrong(program, way, current, spec)
            if wrong is not None and wrong[1] is not None:
                found.append((program.steps.index(current), dataclasses.replace(
                    step_call(program, current, way), out_spec=spec, values=wrong[1])))
            continue
        if carried is None:
            continue
        shape = np.shape(program.value(current.operands[0]))
        todo += [(by_result[n], carried) for n in current.operands
                 if n in by_result and np.shape(program.value(n)) == shape]
    return [call for _, call in sorted(found, key=lambda found: found[0])]


def refusal_candidates(program: Program, way: str, failure: BaseException) -> list:
    """What an Explicit mesh's refusal of a jit way (``failure``, a ShardingTypeError) is asked
    about, whether our model expects it: the candidates of the first step whose prefix raises (met at
    ten times the examples on 0.11.1, seed 1682753693: ten refusals of a pad, a stack, a sort, a
    matmul... the model expects, asked about an earlier dynamic_slice whose value was wrong)."""
    return jit_candidates(program, way, failure=failure, note=False)


def dependent_candidates(program: Program, way: str) -> list:
    """What a failure of the jit ways run in a fresh interpreter is asked about (the prefixes are not
    rerun in this process, which XLA may abort on the program's shape): every step; the steps whose
    results a layout change or an elementwise step computes into its layout (``laid_out_as_asked``,
    as a located step's are in this process: met on 0.11.2, seed 1305825535, a clamped dynamic_slice
    of a value constrained P(), constrained onto ('a', 'b') after it); and an output that is a layout
    change's result."""
    changed = layout_changed(program)
    laid_out = [c for s in program.steps for c in laid_out_as_asked(program, s, way)]
    return candidate_calls(program, way, program.steps, bool(changed & set(program.outputs)), laid_out)


def first_wrong_step(program: Program, way: str, output: str = "", raised: bool = False, goes_wrong=None):
    """``(step, what it showed, (expected, got) where its values differ, else None)`` for the first
    of the steps ``output`` depends on (every step when ``output`` is "") whose prefix of the
    program (``programs_.prefix_function``), jitted as ``way`` jits the program (in_shardings, or
    constraints on the inputs; its value laid out as the program asks for it where that is known),
    raises or returns another value than numpy's; None when each prefix is right. For a failure that
    ``raised``, the first whose prefix raises, where one does: a step before it that only computes a
    wrong value is another deviation, not the one that raised (met on 0.11.1 at ten times the
    examples, seed 1682753693: v0, a dynamic_slice clamped per shard on an Explicit mesh, wrong, was
    blamed for the ShardingTypeError of v1 = cumsum(v0, axis=0)). Each prefix is run by
    ``goes_wrong`` (default ``prefix_goes_wrong``)."""
    goes_wrong = goes_wrong or prefix_goes_wrong
    wanted = {s.result for s in (depends_on(program, output) if output else program.steps)}
    first = None
    for step in (s for s in program.steps if s.result in wanted):
        wrong = goes_wrong(program, way, step, computed_into(program, step.result, way))
        if wrong is not None and (not raised or wrong[0].startswith(RAISES)):
            return (step,) + wrong
        if wrong is not None and first is None:
            first = (step,) + wrong
    return first


def layouts_of(values: dict) -> dict:
    """``{name: spec}`` of the values among ``values`` laid out by a NamedSharding."""
    return {n: compat.spec_entries(v.sharding.spec) for n, v in values.items()
            if isinstance(getattr(v, "sharding", None), jax.sharding.NamedSharding)}


def as_laid_out(call: Call, step: Step, layouts: dict) -> Call:
    """``call`` with its operands' specs (and, under jit, its result's) as JAX laid the values out
    (``layouts``: by name) where known, in place of our model's: what a trigger asks about where the
    model derives a layout JAX did not give (met on 0.8.1, seed 3627269711: an Explicit program's
    v1 = v0.at[0:1].set(v0[0:1]) of v0 P(None, 'a') came out P(None, 'a'), derived replicated)."""
    return dataclasses.replace(
        call, in_specs=tuple(layouts.get(n, spec) for n, spec in zip(step.operands, call.in_specs)),
        out_spec=call.out_spec if call.eager else layouts.get(step.result, call.out_spec))


def typed_operands(program: Program, way: str, step: Step) -> dict:
    """On an Explicit mesh, ``{operand: spec}`` of the values ``step`` reads as the jit way types
    them (``jax.eval_shape`` of the steps before it: sharding in types, no compilation); nothing
    on an Auto mesh or where tracing them raises. Met on 0.8.1, seed 3627269711: a jitted pad's
    operand typed P(None, 'a') where our model, which refuses an .at update before it on that
    release, derives no layout."""
    by_result = {s.result: s for s in program.steps}
    names = tuple(dict.fromkeys(n for n in step.operands if n in by_result))
    if program.axis_type != "Explicit" or not names:
        return {}
    last = max(program.steps.index(by_result[n]) for n in names)
    fn = programs_.program_function(dataclasses.replace(program, steps=program.steps[:last + 1], outputs=names))
    try:
        typed = quietly(program, lambda: jax.eval_shape(jitted_as(program, way, fn), *placed(program)))
    except Exception:  # noqa: BLE001 - steps before it that raise: no types to read (the prefixes say which)
        return {}
    return layouts_of(dict(zip(names, typed)))


def first_wrong_inside(program: Program, way: str, wanted):
    """``(step, what it showed, (expected, got), {value: its spec})`` for the first step (of those
    named in ``wanted``) whose value, returned beside the outputs of the whole program jitted as
    ``way`` jits it (its own layout not asked), differs from numpy's, with the layouts the jit gave
    each step's value (where it returns a NamedSharding); None when each is right or the run raises. Met on
    0.4.30, seed 2994294646: v4 = jnp.take(v3, x3, axis=1, mode='clip') of v3 = device_put(v2, P())
    took zeros only where a later step's output P(None, 'a') cut v3 too; every prefix was right."""
    outputs = len(program.outputs)
    jitted = jitted_as(program, way, programs_.revealing_function(program), program.out_specs,
                       unasked=len(program.steps))
    try:
        revealed = quietly(program, lambda: jitted(*placed(program)))[outputs:]
        values = [np.asarray(v) for v in revealed]
    except Exception:  # noqa: BLE001 - a whole program that raises is the call's own failure, localized by its prefixes
        return None
    layouts = layouts_of({s.result: v for s, v in zip(program.steps, revealed)})
    for step, got in zip(program.steps, values):
        if step.result not in wanted:
            continue
        expected = program.value(step.result)
        if got.dtype != expected.dtype or got.shape != expected.shape:
            return step, f"inside the whole program its value is {got.dtype}{list(got.shape)}", None, layouts
        if got.tobytes() != np.ascontiguousarray(expected).tobytes():
            return step, "inside the whole program its value differs from numpy's", (expected, got), layouts
    return None


RAISES = "it raises "  # how prefix_goes_wrong says a prefix raised


def prefix_goes_wrong(program: Program, way: str, step: Step, spec, inside=None):
    """``(what it showed, (expected, got) where its values differ, else None)`` when the prefix of
    the program ending with ``step``, jitted as ``way`` with its value computed into ``spec`` (first
    constrained to ``inside`` within the jit, where given: a layout no jit returns), raises or
    returns another value than numpy's; None when it is right."""
    if inside is None:
        jitted = jitted_program(programs_.prefix(program, step), way, (spec,))
    else:
        sharding = bridge.named_sharding(program.mesh, inside, program.axis_type)
        prefix = constrained_inside(programs_.prefix_function(program, step),
                                    lambda x: compat.constrain(x, sharding, program.axis_type))
        jitted = jitted_as(program, way, prefix, (spec,))
    try:
        got = np.asarray(quietly(program, lambda: jitted(*placed(program)))[0])
    except Exception as e:  # noqa: BLE001 - a prefix that raises is the step that goes wrong
        return f"{RAISES}{type(e).__name__}", None
    return compared(program.value(step.result), got)


def compared(expected: np.ndarray, got: np.ndarray):
    """What ``prefix_goes_wrong`` says of a prefix that returned ``got``: None when it is numpy's
    ``expected`` bit for bit, else ``(what it showed, (expected, got) where only the values differ)``."""
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return f"its value is {got.dtype}{list(got.shape)}, but should be {expected.dtype}{list(expected.shape)}", None
    if got.tobytes() != np.ascontiguousarray(expected).tobytes():
        return "its value differs from numpy's", (expected, got)
    return None


def isolated_prefix_goes_wrong(run_isolated):
    """``prefix_goes_wrong`` with each prefix run in a fresh interpreter (``run_isolated``), as the
    jit ways of a program XLA may abort this process on are: the prefix as a program of its own
    (``programs_.isolated_lines``, the way's mode only), returning ``step``'s value in ``spec``
    (first constrained to ``inside`` by a layout change appended, where given). A prefix whose
    interpreter ends otherwise than with status 0 is one that raises (an abort included). Each
    prefix runs once (what it showed is kept)."""
    shown = {}

    def goes_wrong(program: Program, way: str, step: Step, spec, inside=None):
        key = ("\n".join(programs_.function_lines(programs_.prefix(program, step))), way, spec, inside)
        if key not in shown:
            shown[key] = run(program, way, step, spec, inside)
        return shown[key]

    def run(program: Program, way: str, step: Step, spec, inside):
        prefix = programs_.prefix(program, step)
        returned = step.result
        if inside is not None:
            returned = f"{step.result}_inside"
            prefix = dataclasses.replace(prefix, steps=prefix.steps + (Step(returned, "constraint", (step.result,),
                                                                            spec=inside),),
                                         values=prefix.values + ((returned, program.value(step.result)),))
        prefix = dataclasses.replace(prefix, outputs=(returned,), out_specs=(spec,), donated=())
        mode = Way.of(way).letter
        result = run_isolated(programs_.isolated_lines(prefix, (mode,)))
        if result.returncode != 0:
            raised = [m for m in map(programs_.EXCEPTION_LINE.match, result.stderr.strip().splitlines()) if m]
            return f"{RAISES}{raised[-1]['name'].rpartition('.')[2] if raised else 'an abort'}", None
        printed = programs_.read_printed(result.stdout)["printed"].get((mode, "0"))
        expected = program.value(step.result)
        got = None if printed is None else bytes.fromhex(printed)
        if got is None or len(got) != expected.nbytes:
            return f"its value printed is {'missing' if got is None else f'{len(got)} bytes'}, but should be " \
                   f"{expected.nbytes} bytes", None
        return compared(expected, np.frombuffer(got, expected.dtype).reshape(np.shape(expected)))
    return goes_wrong


def constrained_inside(fn, constrain):
    """``fn`` (returning a tuple) with each of its results passed through ``constrain``."""
    return lambda *args: tuple(map(constrain, fn(*args)))


def rejected_as_typed_before_a_device_put(program: Program, way: str, steps) -> list:
    """Under jit on an Explicit mesh, the pseudo-step REJECTED_AS_TYPED_BEFORE_A_DEVICE_PUT when one of
    ``steps`` is one our sharding-rule model rejects once each device_put is taken to keep its
    operand's type (what a known deviation's trigger asks about); else nothing."""
    from conformance.model import sharding_rules as rules
    if program.axis_type != "Explicit" or Way.of(way) is Way.EAGER or \
            not any(s.op == "device_put" for s in program.steps):
        return []
    kept = derived_specs(program, device_put_retypes=False)
    for s in steps:
        if s.changes_layout:
            continue
        if isinstance(sharding_verdict(typed_step_call(program, s, kept, way)), rules.Rejects):
            return [Call(triggers.REJECTED_AS_TYPED_BEFORE_A_DEVICE_PUT, (), {},
                         program.mesh, program.axis_type, (), None, way)]
    return []


def placed(program: Program):
    return [bridge.placed(x, bridge.named_sharding(program.mesh, s, program.axis_type))
            for x, s in zip(program.arrays, program.in_specs)]


def in_context(program: Program):
    return compat.mesh_context(bridge.jax_mesh(program.mesh, program.axis_type), program.axis_type)


def quietly(program: Program, fn):
    """``fn()`` in the program's mesh context with JAX's warnings silenced: a localization run, whose
    only concern is the values it returns or the exception it raises."""
    with in_context(program), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def classified(calls, axis_type: str, fn):
    """``(fn(), None)``; on an Explicit mesh, ``(None, outcome)`` when ``fn`` raises a
    ShardingTypeError that our sharding-rule model expects for one of ``calls`` (a sequence, or a
    function of the exception giving it, asked only then: the step the failure was localized to,
    the first whose prefix raises); any other exception propagates, a ShardingTypeError with a note
    saying why no step's rejection is expected."""
    try:
        return fn(), None
    except compat.SHARDING_TYPE_ERRORS as e:
        chosen = (calls(e) if callable(calls) else calls) if axis_type == "Explicit" else ()
        why = next(filter(None, (expected_rejection(c) for c in chosen)), None)
        if why is None:
            e.add_note("; ".join(f"{c.op}: {why_not_rejected(c)}" for c in chosen) or
                       f"an {axis_type} mesh rejects no sharding")
            raise
        return None, f"rejected with {type(e).__name__} as our sharding-rule model says ({why})"


def run(case: Case, program: Program, what: str, call, calls=(), excuses=None):
    """``call()``'s result; None, counted as an accepted refusal, when an Explicit mesh rejects the program with a
    ShardingTypeError where our sharding-rule model rejects one of ``calls``; any other exception
    is a failure."""
    result, outcome = case.accepts(what, lambda: classified(calls, program.axis_type, call))
    if outcome is not None:
        accepted_refusal(excuses, f"program {what.split(' ')[0]}: {outcome.split(' (')[0]}", program)
    return result


def check_values(case: Case, array, expected: np.ndarray, what: str, layout=None) -> None:
    """``array`` holds ``expected`` bit for bit, every shard its block of it, laid out as
    ``layout`` (default: as its own sharding says)."""
    got = case.accepts(f"np.asarray of {what}", lambda: np.asarray(array))
    case.same_bits(what, got, expected)
    layout = layout or bridge.layout_of(array.sharding, expected.shape)
    if layout is not None:
        check_layout(case, array, layout, x=expected, what=what)


UNSHARDED_PROGRAMS: dict = {}  # the unsharded program's text -> it jitted, returning every step's value


def unsharded_program(program: Program):
    """The program on one device, jitted, returning every step's value: built once per program
    text (the layouts it drops are not in it), so that examples of one computation over other
    meshes or layouts ask for one program (27 of 50 examples of a default run met one already)."""
    every_value = dataclasses.replace(program, outputs=tuple(s.result for s in program.steps))
    text = "\n".join(programs_.function_lines(every_value, unsharded=True))
    key = (text,) + ((program.mesh, program.axis_type) if "mesh" in text or "constrain" in text else ())
    if key not in UNSHARDED_PROGRAMS:
        UNSHARDED_PROGRAMS[key] = jax.jit(programs_.program_function(every_value, unsharded=True))
    return UNSHARDED_PROGRAMS[key]


def check_unsharded(case: Case, program: Program, jitted_first: bool = True) -> None:
    """(0) Each step on one device equals numpy's value: the oracle the sharded runs meet (tagged:
    no known deviation excuses its failure). The program jitted on one device is judged first
    (``Case.jitted_first``: one compilation, where step by step each operation asks for its own;
    not where the program runs its jit ways in a subprocess: XLA may abort or spin on it); where it
    raises or differs anywhere, each step runs eagerly and is judged."""
    described = {s.result: f"(0) unsharded {s.result} = {programs_.expression(s)}" for s in program.steps}

    def jitted():
        values = case.accepts("(0) unsharded program jitted on one device",
                              lambda: unsharded_program(program)(*map(jax.device_put, program.arrays)))
        for step, value in zip(program.steps, values):
            case.same_bits(f"{described[step.result]} vs numpy", np.asarray(value), program.value(step.result))

    def step_by_step():
        env = {n: jax.device_put(x) for n, x in zip(program.inputs, program.arrays)}
        for step in program.steps:
            fn = programs_.step_function(program, step, unsharded=True)
            env[step.result] = case.accepts(described[step.result], lambda: fn(env))  # noqa: B023 - called in this iteration
            case.same_bits(f"{described[step.result]} vs numpy", np.asarray(env[step.result]),
                           program.value(step.result))
    with case.oracle():
        if jitted_first:
            case.jitted_first(lambda run: run(), jitted, step_by_step)
        else:
            step_by_step()


def judged(on_demand: Optional[OracleOnDemand], name: str, excuse):
    """The excuse context ``excuse(name)`` of way ``name``; where the oracle runs on demand, its
    context around it (``OracleOnDemand.way``: a failure runs the oracle before it is judged)."""
    return on_demand.way(name, excuse) if on_demand is not None else excuse(name)


def check_eager(case: Case, program: Program, excuses, on_demand: Optional[OracleOnDemand] = None) -> None:
    """(a) Step by step on committed sharded inputs: every value, and the layout each layout change
    asks for (``on_demand``: the oracle, run where this way fails or does not finish)."""
    env = dict(zip(program.inputs, placed(program)))
    current = []  # the step running: what a failure's trigger is asked about
    excuse = lambda name: excuses.way(lambda failure: current, mesh_kind=program.axis_type, example=program)
    with judged(on_demand, Way.EAGER, excuse), in_context(program):
        for step in program.steps:
            call = step_call(program, step, Way.EAGER)
            current[:] = [call, as_laid_out(call, step, layouts_of(env))]
            fn = programs_.step_function(program, step)
            what = f"{Way.EAGER} {step.result} = {programs_.expression(step)}"
            value = run(case, program, what, lambda: fn(env), current, excuses)  # noqa: B023 - called in this iteration
            if value is None:
                return
            expected = program.value(step.result)
            layout = Layout(program.mesh, step.spec, expected.shape) if step.changes_layout else None
            check_values(case, value, expected, what, layout)
            env[step.result] = value
        if on_demand is not None:
            on_demand.passed(Way.EAGER)


def jitted_as(program: Program, way: str, fn, out_specs=None, donated=(), unasked: int = 0):
    """``fn`` (of the program's inputs, returning a tuple) jitted as ``way`` jits the program: (b)
    with in_shardings, out_shardings ``out_specs`` (none asked when None) and ``donated``; (c) with
    constraints on the inputs and, where ``out_specs`` is given, on the outputs (``unasked``: how
    many more results follow those of ``out_specs``, their layouts left to the jit)."""
    sharding = lambda spec: bridge.named_sharding(program.mesh, spec, program.axis_type)
    constrain = lambda x, s: compat.constrain(x, s, program.axis_type)
    ins = tuple(map(sharding, program.in_specs))
    outs = None if out_specs is None else tuple(map(sharding, out_specs))
    if Way.of(way) is Way.JIT_SHARDINGS:
        return jax.jit(fn, in_shardings=ins, donate_argnums=donated,
                       **({} if outs is None else {"out_shardings": outs + (None,) * unasked}))

    def constrained(*args):
        results = fn(*(constrain(x, s) for x, s in zip(args, ins)))
        return results if outs is None else tuple(constrain(o, s) for o, s in zip(results, outs)) + \
            tuple(results[len(outs):])
    return jax.jit(constrained)


JITTED_PROGRAMS: dict = {}  # (program text, mesh, axis type, layouts, donation, way) -> it jitted so


def jitted_program(program: Program, way: str, out_specs, donated=()):
    """The program jitted as ``way`` (``jitted_as``), built once per program text, mesh, axis type,
    layouts, donation and way: examples that differ only in their values (or shapes, which JAX's own
    cache tells apart), and a localized failure's prefix that is a whole program run before, call
    the same jitted function, so no program is compiled or asked for twice."""
    key = ("\n".join(programs_.function_lines(program)), program.mesh, program.axis_type, tuple(program.in_specs),
           tuple(out_specs), tuple(donated), way)
    if key not in JITTED_PROGRAMS:
        JITTED_PROGRAMS[key] = jitted_as(program, way, programs_.program_function(program), out_specs, donated)
    return JITTED_PROGRAMS[key]


def jit_ways(program: Program):
    """The program jitted each of the JIT_WAYS (``jitted_program``)."""
    return tuple((way, jitted_program(program, way, program.out_specs, program.donated)) for way in JIT_WAYS)


def check_jitted(case: Case, program: Program, ignores_returned_constraint, excuses,
                 on_demand: Optional[OracleOnDemand] = None) -> None:
    """(b) and (c): every output holds numpy's value, laid out as asked (``ignores_returned_constraint``:
    the strict entry saying this JAX ignores a constraint on a returned input, if one applies: the
    layout of an output that is an input is then not checked at (c), counted as excused by it;
    ``on_demand``: the oracle, run where a way fails or is not checked whole)."""
    for mode, jitted in jit_ways(program):
        current = [""]  # the output being checked ("": the call itself)
        excuse = lambda name: excuses.way(lambda failure: jit_candidates(program, mode, current[0], failure),  # noqa: B023 - called in this iteration
                                          mesh_kind=program.axis_type, example=program)
        with judged(on_demand, mode, excuse):
            with in_context(program), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Some donated buffers were not usable"
                outs = run(case, program, mode, lambda: jitted(*placed(program)),  # noqa: B023 - called in this iteration
                           lambda failure: refusal_candidates(program, mode, failure),  # noqa: B023 - called in this iteration
                           excuses)
            if outs is None:
                continue
            whole = True  # every output's values and layout checked
            for name, spec, out in zip(program.outputs, program.out_specs, outs):
                current[0] = name
                expected = program.value(name)
                if (mode is Way.JIT_CONSTRAINTS and ignores_returned_constraint
                        and forwards_an_input(program.arrays, expected)):
                    excuses.count(ignores_returned_constraint, program,
                                  f"{mode} layout of a returned input not checked")
                    check_values(case, out, expected, f"{mode} output {name}")
                    whole = False
                    continue
                check_values(case, out, expected, f"{mode} output {name}", Layout(program.mesh, spec, expected.shape))
            if whole and on_demand is not None:
                on_demand.passed(mode)


def subprocess_outcome(program: Program, name: str, way: str = ""):
    """An exception of class ``name`` from the ways in a subprocess, on an Explicit mesh: a documented
    rejection where our sharding-rule model rejects a step as ``way`` (the mode the subprocess was
    running: "(a)", each step eagerly; else the jit ways) runs it, else None (a failure). Met on
    0.12.0.1 in CI, seed 18148789: eager x0[:1:-1] of x0 cut P('a'), which jnp takes through gather,
    refused, was asked about as jitted, which computes it."""
    if name not in {e.__name__ for e in compat.SHARDING_TYPE_ERRORS}:
        return None
    calls = [step_call(program, s, Way.EAGER) for s in program.steps] if way == programs_.EAGER else \
        dependent_candidates(program, Way.JIT_SHARDINGS)
    why = next(filter(None, (expected_rejection(c) for c in calls)), None)
    return None if why is None else f"rejected with {name} ({why})"


def check_isolated(case: Case, program: Program, ways, ignores_returned_constraint, excuses, run_isolated) -> None:
    """``ways`` run in a fresh interpreter (XLA may abort this one on the program's shape), each
    value checked as in-process (every output of (b) and (c), every step's result in (a): its
    values, the layout asked, every shard's block), each jit way (each eager step) under its own
    excuses; a jit way's output with wrong values is localized as in-process (``jit_candidates``),
    each prefix run in a fresh interpreter too (``isolated_prefix_goes_wrong``; the whole program's
    values are not revealed here), and where no prefix goes wrong, or for a failure of the
    interpreter itself, every step is asked (``dependent_candidates``); a forwarded input's layout
    at (c) is left unchecked and counted where ``ignores_returned_constraint`` applies."""
    isolated_prefixes = isolated_prefix_goes_wrong(run_isolated)

    def candidates(label, output, failure):
        if label.startswith(programs_.EAGER + " "):  # one eager step, by its result's name (the subprocess's label)
            result = label[len(programs_.EAGER) + 1:]
            return [step_call(program, next(s for s in program.steps if s.result == result), Way.EAGER)]
        if output and Seen.of(failure).shows == "values":  # localized, each prefix in a fresh interpreter
            way = Way.of(label)
            if first_wrong_step(program, way, output, goes_wrong=isolated_prefixes) is not None:
                return jit_candidates(program, way, output, failure, goes_wrong=isolated_prefixes, whole_program=False)
        return [c for mode in label.split("/") for c in dependent_candidates(program, Way.of(mode))]

    def layout(mode, key, step):
        if Way.of(mode) is Way.JIT_CONSTRAINTS and ignores_returned_constraint and \
                forwards_an_input(program.arrays, program.value(program.outputs[int(key)])):
            excuses.count(ignores_returned_constraint, program, f"{mode} layout of a returned input not checked")
            return None
        return programs_.stated_layout(program, mode, key, step)
    outcome = programs_.check_jitted_in_subprocess(
        case, program, run_isolated, ways=ways, layouts=layout,
        classify=lambda name, message, way: subprocess_outcome(program, name, way),
        way_context=lambda label, output="": excuses.way(lambda failure: candidates(label, output, failure),
                                                         mesh_kind=program.axis_type, example=program))
    if outcome is not None:
        accepted_refusal(excuses, f"program {'/'.join(ways)} in a subprocess: {outcome.split(' (')[0]}", program)


def written_examples_of(programs_list):
    """``@example(program=...)`` for each program of the list."""
    def decorate(test):
        for program in reversed(programs_list):
            test = example(program=program)(test)
        return test
    return decorate


def written_examples():
    """Programs that every run checks, over all devices on one axis ``a``: a computed value
    constrained twice (the second constraint, at the output, must win); a reduction, a reshard
    and a scan of the reduced value; a scan of a computed value followed by a dynamic_slice; and a
    cumsum followed by a constraint and a strided .at[].min, or by a dynamic_update_slice with start
    -1 (the known deviations of those later steps must not excuse a wrong cumsum: the jit ways ask
    the first step that goes wrong); and a forward shift of a scan's result."""
    n = len(DEVICES)
    mesh = MeshModel(DEVICES, (n,), ("a",))
    arange = np.arange(2 * n * 2, dtype=np.uint32)
    x64 = compat.x64_enabled()
    written_program = functools.partial(strategies_programs.written_program, x64=x64)
    scanned = BY_NAME["cumsum"].result_dtype([arange], x64=x64)  # (uint64 with x64 on: an update must match it)
    return [
        written_program(mesh, [(arange[:2 * n], ())], [
            Step("v0", "flip", ("x0",), (("axis", 0),)),
            Step("v1", "constraint", ("v0",), spec=())], [("a",)]),
        written_program(mesh, [(arange.reshape(2, 2 * n), ("a",) if n <= 2 else ())], [
            Step("v0", "sum_int", ("x0",), (("axis", 0), ("keepdims", True))),
            Step("v1", "constraint", ("v0",), spec=(None, "a")),
            Step("v2", "cumsum", ("v1",), (("axis", 1),))], [(None, "a")]),
        written_program(mesh, [(arange.reshape(2, 2 * n), (None, "a")), (np.int32(0), ()), (np.int32(1), ())], [
            Step("v0", "roll", ("x0",), (("axis", 1), ("shift", 1))),
            Step("v1", "cumsum", ("v0",), (("axis", 1),)),
            Step("v2", "dynamic_slice", ("v1", "x1", "x2"), (("sizes", (1, 2)),))], [()]),
        # a cumsum, then steps whose known deviations' triggers hold: what goes wrong first is asked
        written_program(mesh, [(arange[:2 * n], ()), (np.zeros((1,), np.uint32), ())], [
            Step("v0", "cumsum", ("x0",), (("axis", 0),)),
            Step("v1", "constraint", ("v0",), spec=("a",)),
            Step("v2", "at_min", ("v1", "x1"), (("index", slice(-1, None, 2)),))], [()]),
        written_program(mesh, [(arange[:2 * n], ("a",)), (arange[:2].astype(scanned), ()), (np.int32(-1), ())], [
            Step("v0", "cumsum", ("x0",), (("axis", 0),)),
            Step("v1", "dynamic_update_slice", ("v0", "x1", "x2"))], [("a",)]),
        # a forward shift of a scan (XLA:CPU's in-place update misreads it: its entry's where reads the
        # localized step's own values)
        written_program(mesh, [(arange[:n], ())], [
            Step("v0", "negative", ("x0",)),
            Step("v1", "cumsum", ("v0",), (("axis", 0),)),
            Step("v2", "at_set_shifted", ("v1",), (("axis", 0), ("shift", -1)))], [()]),
    ]


@pytest.mark.skipif(f"config.getoption('hypothesis_profile') == {SOAK!r}",
                    reason="under --hypothesis-profile=soak the programs run in test_generated_programs_soak's rounds")
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(program=programs(DEVICES, axis_types=compat.mesh_axis_types(), x64=compat.x64_enabled()))
@written_examples_of(written_examples())
def test_generated_programs_agree_with_the_unsharded_run(program, excuses, known_deviations, run_isolated, tally):
    """A chain of catalogue operations with layout changes between them, run eagerly step by step
    or jitted with constraints or with in/out shardings and donation, gives the values of the same
    program run unsharded, laid out as each layout change and output asks."""
    check_program(program, excuses, known_deviations, run_isolated)
    count_steps(tally, program, [way.letter for way in Way])


def count_steps(tally, program: Program, ways) -> None:
    """Count each catalogue step of ``program`` as run in each of ``ways``, sharded where our model's
    spec of an operand or of its result (``spec_of``) cuts over a mesh axis of size > 1."""
    for step in program.steps:
        if step.changes_layout:
            continue
        for way in ways:
            specs = [spec_of(program, name) for name in (*step.operands, step.result)]
            tally.count(step.op, way, any(program.mesh.axis_sizes[a] > 1 for spec in specs for axes in
                                          spec_axes(spec or ()) for a in axes), program)


def check_program(program: Program, excuses, known_deviations, run_isolated) -> None:
    """Every way of ``program``, as the property states it."""
    case = programs_.program_case(program)
    soak.log_program(case.repro, os.environ.get(environment.PROGRAM_LOG))
    ignores_returned_constraint = known_deviations.covers(
        invariance_reproductions.test_constraint_applies_to_a_returned_input)
    isolated = isolated_ways(program, known_deviations)
    if isolated:
        check_unsharded(case, program, jitted_first=False)  # the oracle: never excused
        if programs_.EAGER not in isolated:
            check_eager(case, program, excuses)
        check_isolated(case, program, isolated, ignores_returned_constraint, excuses, run_isolated)
        return
    # Every check is exact (numpy's bits), so the oracle runs on demand: where a way fails (before
    # its failure is judged) or is not checked whole; never excused.
    on_demand = OracleOnDemand(lambda: check_unsharded(case, program), tuple(Way))
    check_eager(case, program, excuses, on_demand)
    check_jitted(case, program, ignores_returned_constraint, excuses, on_demand)
    on_demand.finish()


@pytest.mark.skipif(f"config.getoption('hypothesis_profile') != {SOAK!r}",
                    reason="runs only under --hypothesis-profile=soak (for --soak-minutes minutes)")
def test_generated_programs_soak(pytestconfig, record_property):
    """Under --hypothesis-profile=soak: rounds of the program property with fresh seeds, each in its
    own process, for --soak-minutes; every distinct failure (by its shrunk program, a crash
    included) is reported, and any fails the soak."""
    chosen = pytestconfig.getoption("--known-deviations")
    extra = ["--known-deviations", str(chosen)] if chosen else []
    if bridge.platform() == "cpu":
        extra += ["--devices", str(len(DEVICES))]
    else:
        extra += ["--backend", bridge.platform()]
    seed = int(os.environ.get(environment.SEED) or pytestconfig.getoption("hypothesis_seed") or 0)
    result = soak.run(PROPERTY_ID, pytestconfig.getoption("soak_minutes"), seed, extra=extra)
    print(soak.summary(result))
    soak.record_counts(result, record_property)  # the rounds' excused examples and accepted refusals, summed
    if result.findings:
        Case(f"soak of {PROPERTY_ID}", soak.scripts(result)).fail(soak.summary(result))
