"""Generated programs (``strategies/programs.py``) in the contexts user code puts them in
(``strategies/contexts.py``): as a nested jit, under ``jax.checkpoint`` with a drawn policy, as a
``lax.scan`` body over stacked inputs, under ``vmap`` with ``spmd_axis_name`` drawn, and as a
``shard_map`` body over the mesh's axes with ``check_vma`` on and off. Each context's outputs must
equal numpy's run of the same program: the program's own values (nested jit, checkpoint), each
example's values stacked (scan, vmap), each device's blocks' values assembled by the out_specs
(shard_map, our model in ``conformance/model/spmd.py``). Every program runs in all five contexts.
In a shard_map body the program runs unsharded (its layout changes pass their operand through: a
body's values are per-device blocks, over manual axes), on blocks each device's of its own (its
uint32 inputs varied by block), and returns each output with a new leading dimension of one, which
the out_specs cut over the axes its inputs' body specs name.

The generated programs compute in uint32, so none is differentiable: grad and value_and_grad of
sharded code are checked per entry by ``test_calling_contexts`` and ``test_autodiff``, not here.

On an Explicit mesh, a vmap context's ShardingTypeError is accepted (counted) where our sharding-rule
model says vmap's batch of indices makes a step's indexing a gather or scatter JAX refuses
(``batched_indexing_refusal``: x[i], lax.dynamic_slice and lax.dynamic_update_slice slicing a
named dimension partially, or any named operand before the release's rule).

Where a context's run fails otherwise, the same program is judged outside any context first, as
``test_programs`` judges it (the unsharded run against numpy, never excused; the two jit ways under
that property's known deviations): a failure there is the program's, and fails here; a known
deviation of that property excusing it there, or a refusal our sharding-rule model accepts there,
means the context met the program's own deviation (counted in this property's report); a program
that behaves outside every context makes the context's failure the context's: this property's own
known deviations (asked about the context's steps, e.g. a device_put under vmap) or a finding. A program whose shape
XLA may abort this process on (``test_programs.isolated_ways``) is not run in a context, counted;
likewise a vmap context of a program updating a cut value by itself where that scatter's
reproductions are known deviations (jaxlib before 0.5: it aborts, raises or miscomputes).
"""

import contextlib
import warnings
from typing import List, Optional

import hypothesis
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import conformance.checking.programs as programs_
import suites.test_programs as programs_suite
import suites.test_programs_reproductions as reproductions
from conformance.checking.case import Case
from conformance.checking.repro import script, sharding_literal, spec_literal
from conformance.checking.triggers import Call
from conformance.checking.ways import Way
from conformance.jaxside import bridge, compat
from conformance.model import sharding_rules, spmd
from conformance.model.layout import Layout, spec_axes
from conformance.model.program import Program
from conformance.runner import state
from conformance.runner.deviations import Excuses
from strategies.contexts import Context, every_context, varied
from strategies.programs import programs, rerun

pytestmark = pytest.mark.programs
DEVICES = bridge.live_device_ids()
# Each example runs its program in each of the five contexts (a compile each): an eighth of the
# profile's examples (12 by default, 125 nightly).
EXAMPLES = max(8, settings().max_examples // 8)
NOT_RUN = "contexts not run (XLA may abort this process on the program's shape; test_programs runs it isolated)"


# --- what each context computes, by our model ------------------------------------------------
def batch_of(program: Program, n: int) -> List[np.ndarray]:
    """Each input stacked over ``n`` examples (``varied``)."""
    return [np.stack([varied(x, k) for k in range(n)]) for x in program.arrays]


def dependencies(program: Program, name: str) -> set:
    """The inputs the value ``name`` is computed from."""
    if name in program.inputs:
        return {name}
    step = next(s for s in program.steps if s.result == name)
    return set().union(*(dependencies(program, o) for o in step.operands))


def body_out_specs(program: Program, context: Context) -> tuple:
    """Each output's out_spec in the shard_map body, which returns it with a new leading dimension of
    one: every axis its inputs' body specs name (what it varies over), in mesh order, on that dimension."""
    specs = dict(zip(program.inputs, context.body_specs))
    out = []
    for name in program.outputs:
        named = {a for x in dependencies(program, name) for axes in spec_axes(specs[x]) for a in axes}
        axes = tuple(a for a in program.mesh.axis_names if a in named)
        out.append((axes,) if axes else ())
    return tuple(out)


def global_inputs(program: Program, context: Context) -> List[np.ndarray]:
    """The shard_map's global inputs: each device's block of input ``x`` is ``varied(x, k)``, ``k``
    the block's position among the input's distinct blocks (the layout model's)."""
    arrays = []
    for x, spec in zip(program.arrays, context.body_specs):
        x = np.asarray(x)
        tiling = [1] * x.ndim
        for d, axes in enumerate(spec_axes(spec)):
            tiling[d] = int(np.prod([program.mesh.axis_sizes[a] for a in axes]))
        shape = tuple(n * t for n, t in zip(x.shape, tiling))
        layout, out, seen = Layout(program.mesh, spec, shape), np.zeros(shape, x.dtype), {}
        for device in program.mesh.device_ids:
            block = layout.block(device)
            if block not in seen:
                seen[block] = len(seen)
                out[tuple(slice(lo, hi) for lo, hi in block)] = varied(x, seen[block])
        arrays.append(out)
    return arrays


def expected_outputs(program: Program, context: Context, x64: bool) -> tuple:
    """numpy's value of each output of the program run in ``context``."""
    if context.kind in ("scan", "vmap"):
        runs = [rerun(program, [varied(x, k) for x in program.arrays], x64=x64) for k in range(context.batch)]
        return tuple(np.stack([r[i] for r in runs]) for i in range(len(program.outputs)))
    if context.kind == "shard_map":
        blocks = [spmd.shard_map_blocks(program.mesh, spec, x)
                  for x, spec in zip(global_inputs(program, context), context.body_specs)]
        per_device = {d: rerun(program, [b[d] for b in blocks], x64=x64) for d in program.mesh.device_ids}
        return tuple(spmd.shard_map_assemble(program.mesh, spec, {d: out[i][None] for d, out in per_device.items()})
                     for i, spec in enumerate(body_out_specs(program, context)))
    return tuple(program.value(name) for name in program.outputs)


# --- the context's run, as the script a failure shows ---------------------------------------
def context_specs(program: Program, context: Context):
    """(the specs the inputs are placed by, the out_shardings' specs; None: no out_shardings)."""
    if context.kind == "shard_map":
        return tuple(context.body_specs), None
    if context.kind in ("scan", "vmap"):
        lead = context.spmd_axis_name if context.kind == "vmap" else None
        return (tuple((lead,) + tuple(s) for s in program.in_specs),
                tuple((lead,) + tuple(s) for s in program.out_specs))
    return tuple(program.in_specs), tuple(program.out_specs)


def context_lines(program: Program, context: Context) -> List[str]:
    """The lines that define ``program`` (``unsharded`` too, for a shard_map body) and
    ``contexted``, the program in ``context``, jitted."""
    in_specs, out_specs = context_specs(program, context)
    shardings = lambda specs: "(" + "".join(sharding_literal("mesh", s) + ", " for s in specs) + ")"
    jit_args = f"in_shardings={shardings(in_specs)}, out_shardings={shardings(out_specs)}" if out_specs else ""
    lines = [f"constrain = {compat.CONSTRAIN_SOURCE[program.axis_type]}", *programs_.function_lines(program)]
    if context.kind == "nested_jit":
        lines.append(f"contexted = jax.jit(lambda *a: jax.jit(program)(*a), {jit_args})")
    elif context.kind == "checkpoint":
        policy = f", policy=jax.checkpoint_policies.{context.policy}" if context.policy else ""
        lines.append(f"contexted = jax.jit(jax.checkpoint(program{policy}), {jit_args})")
    elif context.kind == "scan":
        lines.append(f"contexted = jax.jit(lambda *xs: lax.scan(lambda carry, x: (carry, program(*x)), None, xs)[1], "
                     f"{jit_args})")
    elif context.kind == "vmap":
        axis = f", spmd_axis_name={context.spmd_axis_name!r}" if context.spmd_axis_name else ""
        lines.append(f"contexted = jax.jit(jax.vmap(program{axis}), {jit_args})")
    else:
        outs = "(" + "".join(spec_literal(s) + ", " for s in body_out_specs(program, context)) + ")"
        ins = "(" + "".join(spec_literal(s) + ", " for s in in_specs) + ")"
        lines += [*programs_.function_lines(program, "unsharded", unsharded=True),
                  "body = lambda *blocks: tuple(jnp.expand_dims(o, 0) for o in unsharded(*blocks))",
                  f"contexted = jax.jit({compat.SHARD_MAP_SOURCE}(body, mesh=mesh, in_specs={ins}, out_specs={outs}, "
                  f"{compat.SHARD_MAP_CHECK}={context.check_vma}))"]
    lines.append(f"placements = {shardings(in_specs)}")
    return lines


def context_inputs(program: Program, context: Context) -> List[np.ndarray]:
    if context.kind in ("scan", "vmap"):
        return batch_of(program, context.batch)
    if context.kind == "shard_map":
        return global_inputs(program, context)
    return list(program.arrays)


def context_case(program: Program, context: Context) -> Case:
    """The Case of ``program`` in ``context``: its description and a script that runs it and prints
    each output against numpy's (the verdict a failing check appends)."""
    names = [f"a{k}" for k in range(len(program.inputs))]
    call_line = f"got = contexted(*[jax.device_put(x, s) for x, s in zip([{', '.join(names)}], placements)])"
    repro = script(context_lines(program, context), meshes={"mesh": program.mesh}, axis_type=program.axis_type,
                   arrays=dict(zip(names, context_inputs(program, context))), in_context=[call_line])
    outcomes = {f"{context.label} output {name}": f"got[{k}]" for k, name in enumerate(program.outputs)}
    outcomes.update({f"np.asarray of {what}": expr for what, expr in outcomes.items()})
    outcomes[context.label] = "got"
    return Case(f"{programs_.describe(program)}; in {context.label}", repro, outcomes,
                indent="    " if program.axis_type != "Auto" else "")


def run_in_context(program: Program, context: Context):
    """The program's outputs in ``context``, jitted as ``context_lines`` writes it."""
    scope = programs_.namespace(program)
    # (our own text; ``constrain`` is the namespace's, which looks up what the script's line names,
    # importing its module: met on 0.6.1, where jax.experimental.shard is not imported by jax)
    exec("\n".join(line for line in context_lines(program, context) if not line.startswith("constrain = ")), scope)
    placed = [bridge.placed(x, s) for x, s in zip(context_inputs(program, context), scope["placements"])]
    with programs_suite.in_context(program), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return scope["contexted"](*placed)


def check_context(case: Case, program: Program, context: Context, x64: bool) -> None:
    """The program's outputs in ``context`` hold numpy's values; on a release that refuses vmap's
    spmd_axis_name over a batch sharded on that Explicit axis (``compat``'s
    VMAP_SPMD_AXIS_NAME_OVER_AN_EXPLICIT_BATCH off: JAX's own ValueError up to 0.8.1), the refusal."""
    if context.spmd_axis_name is not None and program.axis_type == "Explicit" and \
            not compat.VMAP_SPMD_AXIS_NAME_OVER_AN_EXPLICIT_BATCH:
        case.rejects(context.label, lambda: run_in_context(program, context), (ValueError,))
        return
    expected = expected_outputs(program, context, x64)
    got = case.accepts(context.label, lambda: run_in_context(program, context))
    for name, out, want in zip(program.outputs, got, expected):
        value = case.accepts(f"np.asarray of {context.label} output {name}", lambda: np.asarray(out))  # noqa: B023 - called in this iteration
        case.same_bits(f"{context.label} output {name}", value, want)


# --- judging a failure: the program's own, or the context's ----------------------------------
def the_programs_own(program: Program, known_deviations, program_excuses: Excuses) -> bool:
    """Whether ``program`` goes wrong outside every context as test_programs judges it: raises that
    property's unexcused failure; True where a known deviation of it excused a failure or a refusal
    our model accepts was met (the context met the program's own deviation); False where the
    program behaves."""
    before = (sum(len(v) for v in program_excuses.excused.values()),
              sum(len(v) for v in program_excuses.refused.values()))
    case = programs_.program_case(program)
    returned_input = programs_suite.invariance_reproductions.test_constraint_applies_to_a_returned_input
    ignores = known_deviations.covers(returned_input)
    with case.oracle():
        programs_suite.check_unsharded(case, program)
    programs_suite.check_jitted(case, program, ignores, program_excuses)
    after = (sum(len(v) for v in program_excuses.excused.values()),
             sum(len(v) for v in program_excuses.refused.values()))
    return after != before


def batched_spec(program: Program, context: Context, name: str) -> tuple:
    """The spec of value ``name`` of the program under ``context``'s vmap: spmd_axis_name (or None)
    on the batch, then the value's own (``test_programs.spec_of``)."""
    return (context.spmd_axis_name,) + tuple(programs_suite.spec_of(program, name) or ())


# jaxlib's SPMD partitioner gets a scatter of an operand by itself wrong (spmd_strided_scatter_of_an_
# operand_by_itself): vmap makes a program's lax.dynamic_update_slice of a value by itself one
# (batched starts). On the releases where its reproductions are known deviations, such a vmap
# context of a cut value aborts the process (its form over two axes), raises or miscomputes: it is
# not run there, counted under the entry.
UPDATE_BY_ITSELF = reproductions.test_a_vmapped_update_of_each_example_by_itself_over_two_axes


def vmapped_update_of_a_cut_value_by_itself(program: Program, context: Context) -> bool:
    """Under vmap, a program's lax.dynamic_update_slice whose update is its operand, the batched
    operand (spmd_axis_name on the batch, its own spec after) cut over a mesh axis of size > 1."""
    if context.kind != "vmap":
        return False
    for step in program.steps:
        if step.op == "dynamic_update_slice" and step.operands[0] == step.operands[1]:
            spec = batched_spec(program, context, step.operands[0])
            if any(program.mesh.axis_sizes[a] > 1 for axes in spec_axes(spec) for a in axes):
                return True
    return False


def context_candidates(program: Program, context: Context) -> list:
    """What this property's known deviations' triggers are asked about where a context fails: under
    scan and vmap, each catalogue step as the jit ways see it (``test_programs.step_call``); under
    vmap also each device_put step as "vmap: device_put" (its spec as ``static["spec"]``) and each
    lax.dynamic_slice as "vmap: dynamic_slice" (its operand and starts, the batched operand's spec
    first: spmd_axis_name on the batch)."""
    if context.kind not in ("scan", "vmap"):
        return []
    calls = [programs_suite.step_call(program, s, Way.JIT_SHARDINGS) for s in program.steps if not s.changes_layout]
    if context.kind != "vmap":
        return calls
    lead = (context.spmd_axis_name,)
    for s in program.steps:
        if s.op == "device_put":
            calls.append(Call("vmap: device_put", (program.value(s.operands[0]),), {"spec": s.spec}, program.mesh,
                              program.axis_type, (programs_suite.spec_of(program, s.operands[0]),), None,
                              Way.JIT_SHARDINGS))
        elif s.op == "dynamic_slice":
            calls.append(Call("vmap: dynamic_slice", tuple(program.value(o) for o in s.operands), s.kwargs,
                              program.mesh, program.axis_type,
                              (batched_spec(program, context, s.operands[0]),) + (lead,) * (len(s.operands) - 1), None,
                              Way.JIT_SHARDINGS))
    return calls


def vmapped_indexing_refusal(program: Program, context: Context) -> Optional[str]:
    """Why our sharding-rule model says JAX refuses the program under vmap on an Explicit mesh: a
    step indexing with a traced index (x[i] of a scalar i, lax.dynamic_slice, lax.dynamic_update_slice)
    that vmap's batch of indices makes a gather or scatter JAX refuses (``batched_indexing_refusal``),
    or a jnp.pad the model's pad rule rejects with the batch dimension leading (met on 0.12.0.1, seed
    862107414: a symmetric pad of a cut [6] refused batched, accepted alone), or None."""
    if context.kind != "vmap" or program.axis_type != "Explicit":
        return None
    for step in program.steps:
        if step.op == "pad":  # vmap binds jnp.pad with a leading batch dimension, padded by nothing
            x = program.value(step.operands[0])
            static = dict(step.kwargs, widths=((0, 0),) + tuple(tuple(w) for w in step.kwargs["widths"]))
            verdict = sharding_rules.sharding_verdict(
                "pad", "padding", [(context.batch,) + np.shape(x)], [batched_spec(program, context, step.operands[0])],
                static, program.mesh, rules=compat.sharding_rule_set())
            if isinstance(verdict, sharding_rules.Rejects):
                return f"vmapped pad: {verdict.reason}"
            continue
        if step.op not in sharding_rules.BATCHED_INDEXING or (step.op == "index_array" and
                                                              np.ndim(program.value(step.operands[1])) != 0):
            continue
        x = program.value(step.operands[0])
        windows = (step.kwargs.get("sizes") if step.op == "dynamic_slice" else
                   np.shape(program.value(step.operands[1])) if step.op == "dynamic_update_slice" else ())
        spec = programs_suite.spec_of(program, step.operands[0])
        why = sharding_rules.batched_indexing_refusal(step.op, np.shape(x), spec, windows, compat.sharding_rule_set())
        if why is not None:
            return why
    return None


@pytest.fixture
def context_excuses(request, excuses, known_deviations) -> Excuses:
    """test_programs' known deviations (what a program met outside any context is judged by) and
    this property's, counted together in this property's report; ``.own``: this property's alone,
    which a context's failure is asked about (sharing the counts)."""
    found = Excuses(tuple(excuses.entries) + tuple(known_deviations.all_for_test(programs_suite.PROPERTY_ID)))
    found.own = Excuses(tuple(excuses.entries))
    found.own.excused, found.own.refused = found.excused, found.refused
    request.node.stash[state.EXCUSES] = found
    return found


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(program=programs(DEVICES, axis_types=compat.mesh_axis_types(), x64=compat.x64_enabled()), data=st.data())
def test_a_program_gives_numpys_values_in_every_context(program, data, known_deviations, context_excuses, tally):
    """A generated program run as a nested jit, under checkpoint, as a scan body, under vmap or as a
    shard_map body gives numpy's values of that program over the inputs that context hands it."""
    drawn = data.draw(every_context(program), label="contexts")
    ending = programs_suite.process_ending(program, known_deviations)
    if ending is not None:
        context_excuses.count(ending[0], program, NOT_RUN)
        return
    own = []  # whether the program goes wrong outside any context (judged once, on a context's failure)
    for context in drawn:
        by_itself = known_deviations.covers(UPDATE_BY_ITSELF) if vmapped_update_of_a_cut_value_by_itself(
            program, context) else None
        if by_itself is not None:
            context_excuses.count(by_itself, program, "vmap context not run (a scatter of an operand by itself)")
            continue
        hypothesis.event(f"context: {context.kind}")
        case = context_case(program, context)
        try:
            with context_excuses.own.way(context_candidates(program, context), mesh_kind=program.axis_type,
                                     example=program):
                check_context(case, program, context, compat.x64_enabled())
        except Exception as failure:
            refused = vmapped_indexing_refusal(program, context) \
                if getattr(failure, "raised", "") in {e.__name__ for e in compat.SHARDING_TYPE_ERRORS} else None
            if refused is not None:
                context_excuses.accept_refusal(f"{context.kind}: {refused.split(':')[0]}", program)
                continue
            with contextlib.suppress(AttributeError):
                failure.add_note(f"(judging the program outside any context, as test_programs does, after "
                                 f"{context.label} failed)")
            if not own:
                own.append(the_programs_own(program, known_deviations, context_excuses))
            if not own[0]:
                raise
            hypothesis.event(f"{context.kind}: the program's own known deviation, met outside any context")
        if context.kind == "shard_map":
            body_cut = any(program.mesh.axis_sizes[a] > 1 for spec in context.body_specs for axes in spec_axes(spec)
                           for a in axes)
            for step in program.steps:
                if not step.changes_layout:
                    tally.count(step.op, context.kind, body_cut, program)
        else:
            programs_suite.count_steps(tally, program, [context.kind])
