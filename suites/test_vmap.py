"""``vmap`` of sharded code equals the stacked per-example results: catalogue operations vmapped
over sharded batches (the batch dimension sharded or not), vmap of shard_map bodies with
collectives, and ``spmd_axis_name``, which shards the batch dimension of every sharding constraint
inside over the named mesh axis (the model: that axis prepended to the constraint's spec)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conformance.checking import triggers, verdict
from conformance.checking.layouts import check_layout
from conformance.checking.repro import (array_literal, describe_mesh, mesh_literal, scripted_case, shard_map_lines,
                                        spec_literal)
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel, spec_axes
from strategies import dividing_specs, meshes
from strategies.batched import VmapExample, VmappedBody
from strategies.ops import CATALOGUE
from strategies.specs import restricted_to
from strategies.spmd import sample_values, small_floats
from suites import test_sharding_invariance_reproductions as reproductions
from suites.test_autodiff import BODIES

pytestmark = pytest.mark.vmap
DEVICES = bridge.live_device_ids()
EXAMPLES = max(8, settings().max_examples // 10)


def batch_of(x: np.ndarray, size: int, *, shifted: bool) -> np.ndarray:
    """``size`` examples made from one operand: its values rolled by 0, 1, ... places (same dtype,
    shape and value set, so index operands stay in range); ``shifted`` (for an operation's first,
    data operand) also adds the example's index (bools: flips odd examples), so that no two
    examples are equal, even of a constant operand."""
    x = np.asarray(x)
    rolled = [np.roll(x.ravel(), i).reshape(x.shape) for i in range(size)]
    if shifted:
        with np.errstate(over="ignore"):
            rolled = [r ^ bool(i % 2) if r.dtype == bool else (r + np.asarray(i).astype(r.dtype)).astype(r.dtype)
                      for i, r in enumerate(rolled)]
    return np.stack(rolled)


@st.composite
def vmap_examples(draw):
    """A ``VmapExample``: a catalogue operation, its operands batched
    by 1, 2 or 4 along a new leading dimension, a mesh, a dividing spec per batched operand (the
    batch dimension sharded or not), and whether vmap runs under jit."""
    op = draw(st.sampled_from(CATALOGUE))
    operands, static = draw(op.inputs)
    size = draw(st.sampled_from((2, 4, 1)))
    batches = tuple(batch_of(x, size, shifted=i == 0) for i, x in enumerate(operands))
    mesh = draw(meshes(DEVICES, max_axes=2))
    specs = tuple(draw(batch_split_half_the_time(mesh, draw(dividing_specs(mesh, b.shape)), size)) for b in batches)
    return VmapExample(op, batches, static, mesh, specs, draw(st.booleans()))


@st.composite
def batch_split_half_the_time(draw, mesh, spec, size: int):
    """``spec``, or, half the time when it leaves the batch dimension whole, that dimension split
    over an unused mesh axis of size > 1 that divides the batch (a sharded batch is the case vmap
    must get right, and dividing_specs alone seldom draws it)."""
    used = {name for axes in spec_axes(spec) for name in axes}
    fitting = [a for a in mesh.axis_names
               if a not in used and 1 < mesh.axis_sizes[a] and size % mesh.axis_sizes[a] == 0]
    if (spec and spec[0] is not None) or not fitting or not draw(st.booleans()):
        return spec
    return (draw(st.sampled_from(fitting)),) + tuple(spec[1:])


def split_batch_example():
    """Always run: eager vmap of negation over a batch of rows split over every device."""
    ids = tuple(DEVICES)
    negative = next(op for op in CATALOGUE if op.name == "negative")
    batch = np.arange(2 * len(ids), dtype=np.int32).reshape(len(ids), 2)
    return VmapExample(negative, (batch,), {}, MeshModel(ids, (len(ids),), ("a",)), (("a",),), False)


@settings(max_examples=2 * EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=vmap_examples())
@example(example=split_batch_example())
def test_vmap_of_an_operation_over_a_sharded_batch(example, excuses, known_deviations, run_isolated):
    """vmap of a catalogue operation over sharded batched operands, eager or under jit, equals numpy's
    operation applied to each example and stacked."""
    aborts = known_deviations.covers(reproductions.test_select_of_operands_split_over_one_axis_and_over_combined_axes)
    pad_aborts = known_deviations.covers(reproductions.test_lax_pad_starting_inside_interior_padding)
    isolate = run_isolated if ((aborts is not None and triggers.vmapped_operands_over_combined_axes(example))
                               or (pad_aborts is not None
                                   and triggers.vmapped_pad_starting_inside_interior_padding(example))) \
        else None
    with excuses.way([example]):
        check_vmap_of_an_operation_over_a_sharded_batch(example, isolate)


def check_vmap_of_an_operation_over_a_sharded_batch(example, run_isolated=None):
    """(``run_isolated``: run the vmap in a fresh interpreter, its values judged by the script's
    verdict: XLA may abort the process on operands over combined mesh axes, or on a pad starting
    inside interior padding.)"""
    op, batches, static, mesh, specs, jitted = example
    names = [f"x{i}" for i in range(len(batches))]
    run = "jax.jit(jax.vmap(f))" if jitted else "jax.vmap(f)"
    script_lines = ["import functools", f"f = functools.partial({op.source}, **{static!r})",
                    f"args = [jax.device_put(x, NamedSharding(mesh, s)) for x, s in zip("
                    f"({''.join(n + ', ' for n in names)}), "
                    f"({''.join(spec_literal(s) + ', ' for s in specs)}))]",
                    f"print({run}(*args))"]
    case = scripted_case(f"{run} with f = {op.source} and {static!r}; {describe_mesh(mesh)}; batched inputs "
                + "; ".join(f"{n}: {b.dtype}{list(b.shape)} {spec_literal(s)}"
                            for n, b, s in zip(names, batches, specs)),
                script_lines, meshes={"mesh": mesh}, arrays=dict(zip(names, batches)),
                         outcomes={run: f"{run}(*args)", "vmap result": f"{run}(*args)",
                                   "np.asarray of the result": f"np.asarray({run}(*args))",
                                   "vmap result dtype": f"np.asarray({run}(*args)).dtype.name"})
    with np.errstate(all="ignore"):
        expected = np.stack([np.asarray(op.reference(*(b[i] for b in batches), **static))
                             for i in range(batches[0].shape[0])])
    expected_dtype = op.result_dtype(batches, x64=compat.x64_enabled())  # vmap keeps the operation's dtype
    if run_isolated is not None:
        lines = [f"mesh = {mesh_literal(mesh)}", *(f"{n} = {array_literal(b)}" for n, b in zip(names, batches)),
                 *script_lines[:-1], *verdict.values_lines(f"{run}(*args)", expected.astype(expected_dtype),
                                                           rtol=op.rtol, atol=op.atol)]
        done = run_isolated(lines)
        crashed = [line.strip() for line in done.stderr.splitlines() if "Check failed" in line][:1]
        case.equal(
            f"exit status of the vmap in a subprocess (negative: killed by a signal; 1: values differ; "
            f"{' | '.join(crashed + done.stdout.strip().splitlines()[-2:] + done.stderr.strip().splitlines()[-1:])})",
            done.returncode, 0)
        return
    f = jax.vmap(functools.partial(bridge.function_of(op.source), **static))
    args = [bridge.placed(b, bridge.named_sharding(mesh, s)) for b, s in zip(batches, specs)]
    result = case.accepts(run, lambda: (jax.jit(f) if jitted else f)(*args))
    got = case.accepts("np.asarray of the result", lambda: np.asarray(result))
    case.equal("vmap result dtype", got.dtype.name, expected_dtype.name)
    case.close("vmap result", got, expected.astype(expected_dtype), rtol=op.rtol, atol=op.atol)


@st.composite
def vmapped_body_examples(draw):
    """A shard_map body with a collective (from test_autodiff's table), a mesh of one or two axes
    over every device, the collective's axis, and float32 batches of 1 or 2 examples."""
    body = draw(st.sampled_from(BODIES))
    mesh = draw(meshes(DEVICES, max_axes=2, subsets=False))
    axis = draw(st.sampled_from(mesh.axis_names))
    n = mesh.axis_sizes[axis]
    shape = (draw(st.integers(1, 2)), n * n * draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    values = small_floats(shape)
    return VmappedBody(body, mesh, axis, draw(values), draw(values))


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=vmapped_body_examples())
def test_vmap_of_a_shard_map_body_with_collectives(example, excuses):
    """vmap of a jitted shard_map whose body runs a collective equals the same function written
    without shard_map, applied to each example and stacked."""
    check_vmap_of_a_shard_map_body_with_collectives(example, excuses)


@functools.lru_cache(maxsize=None)
def global_function(source: str, n: int):
    """A body's global function for an axis of ``n`` devices, jitted once: the one-device runs of
    every example of it share its programs (eagerly, each operation asked for its own)."""
    return jax.jit(functools.partial(bridge.function_of(source), n=n))


def check_vmap_of_a_shard_map_body_with_collectives(example, excuses):
    """The oracle (the global function, unsharded, per example) outside every excuse context, then
    the vmap of the jitted shard_map against it inside the example's way."""
    body, mesh, axis, xs, ws = example
    n = mesh.axis_sizes[axis]
    in_spec = ((axis,),)
    out_spec = tuple((axis,) if e == "A" else e for e in body.out_spec)
    setup, call = shard_map_lines(f"functools.partial({body.body}, a={axis!r}, n={n})", (in_spec, in_spec), out_spec)
    case = scripted_case(f"jax.vmap(jax.jit(shard_map({body.body} with a={axis!r}, "
                f"in_specs {spec_literal(in_spec)} x2, "
                f"out_specs {spec_literal(out_spec)}))) on {describe_mesh(mesh)}, batches float32{list(xs.shape)}",
                ["import functools", *setup, f"print(jax.vmap(jax.jit({call}))(xs, ws))",
                        f"print(jax.vmap(functools.partial({body.global_source}, n={n}))(xs, ws))"],
                       meshes={"mesh": mesh}, arrays={"xs": xs, "ws": ws},
                       outcomes={"vmap of the shard_map": f"np.asarray(jax.vmap(jax.jit({call}))(xs, ws))"})
    reference = global_function(body.global_source, n)
    with case.oracle():
        expected = np.stack([np.asarray(reference(jnp.asarray(x), jnp.asarray(w))) for x, w in zip(xs, ws)])
    with excuses.way([example]):
        local = bridge.function_of(body.body)
        g = jax.jit(compat.shard_map(lambda b, v: local(b, v, a=axis, n=n), bridge.jax_mesh(mesh), (in_spec, in_spec),
                                     out_spec, check=True))
        got = case.accepts("vmap of the shard_map", lambda: np.asarray(jax.vmap(g)(xs, ws)))
        case.close("vmap of the shard_map result", got, expected, rtol=2e-5, atol=2e-5)


@st.composite
def spmd_axis_examples(draw):
    """A mesh of one or two axes, the axis to map the batch over, a batch (a multiple of that
    axis's size) of int32 rows, and a constraint spec for each row over the other axes."""
    mesh = draw(meshes(DEVICES, max_axes=2))
    axis = draw(st.sampled_from(mesh.axis_names))
    rows = (draw(st.sampled_from((2, 4, 1, 8))), draw(st.sampled_from((1, 2, 4))))
    x = draw(sample_values("int32", (mesh.axis_sizes[axis] * draw(st.integers(1, 2)), *rows)))
    others = tuple(a for a in mesh.axis_names if a != axis)
    inner = restricted_to(draw(dividing_specs(mesh, rows)), others)
    return mesh, axis, x, inner


def batch_over_every_device():
    """Always run: a batch of one row per device, mapped over the one axis of a mesh of every device
    (so that a batch left whole shows, whatever the draws: a fault dropping spmd_axis_name escaped
    the drawn examples now and then)."""
    mesh = bridge.line_mesh()
    return mesh, "a", np.arange(2 * mesh.size, dtype=np.int32).reshape(mesh.size, 2, 1), ()


@settings(max_examples=EXAMPLES)
@given(example=spmd_axis_examples())
@example(example=batch_over_every_device())
def test_spmd_axis_name_shards_the_batch_of_a_constraint(example):
    """jit(vmap(f, spmd_axis_name=axis)) where f constrains each row to a spec lays the result out as
    that spec with the axis prepended (the batch dimension split over it), with the right values."""
    mesh, axis, x, inner = example
    outer = ((axis,),) + inner
    case = scripted_case(f"jax.jit(jax.vmap(lambda r: with_sharding_constraint(r * 2, "
                f"NamedSharding(mesh, {spec_literal(inner)})), "
                f"spmd_axis_name={axis!r}))(x) on {describe_mesh(mesh)}, x int32{list(x.shape)}",
                [f"f = lambda r: jax.lax.with_sharding_constraint(r * 2, NamedSharding(mesh, {spec_literal(inner)}))",
                        f"y = jax.jit(jax.vmap(f, spmd_axis_name={axis!r}))(x)",
                        "print(y.sharding, y)"], meshes={"mesh": mesh}, arrays={"x": x},
                       outcomes={"spmd_axis_name vmap": f"jax.jit(jax.vmap(f, spmd_axis_name={axis!r}))(x)",
                                 "result": "np.asarray(y)", "spmd_axis_name result": "y"})
    sharding = bridge.named_sharding(mesh, inner)
    f = jax.jit(jax.vmap(lambda r: compat.constrain(r * 2, sharding), spmd_axis_name=axis))
    result = case.accepts("spmd_axis_name vmap", lambda: f(x))
    with np.errstate(over="ignore"):
        case.same_bits("result", np.asarray(result), x * np.int32(2))
    check_layout(case, result, Layout(mesh, outer, x.shape), what="spmd_axis_name result")


def test_vmap_of_a_checked_shard_map_with_psum():
    """vmap of a jitted shard_map whose body is psum (replication check on) sums each example's
    blocks."""
    mesh = bridge.line_mesh()
    n = mesh.size
    xs = np.arange(2 * n, dtype=np.float32).reshape(2, n)
    setup, call = shard_map_lines("lambda b: jax.lax.psum(b, 'a')", ((("a",),),), ())
    case = scripted_case(f"jax.vmap(jax.jit({call}))(xs) on {describe_mesh(mesh)}, xs float32[2, {n}]",
                [*setup, f"print(jax.vmap(jax.jit({call}))(xs))"], meshes={"mesh": mesh}, arrays={"xs": xs},
                         outcomes={"vmap of the shard_map": f"jax.vmap(jax.jit({call}))(xs)",
                                   "result": f"np.asarray(jax.vmap(jax.jit({call}))(xs))"})
    g = jax.jit(compat.shard_map(lambda b: jax.lax.psum(b, "a"), bridge.jax_mesh(mesh), ((("a",),),), (), check=True))
    got = case.accepts("vmap of the shard_map", lambda: jax.vmap(g)(xs))
    case.same_bits("result", np.asarray(got), xs.sum(axis=1, keepdims=True))


@bridge.needs_devices(8, "for a dimension of eight cut eight ways")
def test_eager_vmap_of_a_concatenate_of_a_cut_operand_with_replicated_ones():
    """jax.vmap(lambda *xs: jnp.concatenate(xs, axis=0)) of x0, x1 int32[2, 2, 2] placed P() and x2
    int32[2, 8, 2] placed P(None, 'a') on eight devices, eagerly, joins each example's three pieces
    (found on 0.9.2 by the release matrix, seed 2064527310: IndivisibleError)."""
    mesh = bridge.first_devices_mesh(("a", 8))
    x0 = np.arange(8, dtype=np.int32).reshape(2, 2, 2)
    x1 = x0 + 8
    x2 = np.arange(32, dtype=np.int32).reshape(2, 8, 2) + 16
    call = "jax.vmap(lambda *xs: jnp.concatenate(xs, axis=0))(*args)"
    case = scripted_case(f"{call} on {describe_mesh(mesh)}: x0, x1 int32[2, 2, 2] P(), x2 int32[2, 8, 2] P(None, 'a')",
                         ["args = [jax.device_put(x, NamedSharding(mesh, s)) for x, s in "
                          "((x0, P()), (x1, P()), (x2, P(None, 'a')))]", f"print({call})"],
                         meshes={"mesh": mesh}, arrays={"x0": x0, "x1": x1, "x2": x2},
                         outcomes={"jax.vmap(f)": call, "result": f"np.asarray({call})"})
    args = [bridge.placed(x, bridge.named_sharding(mesh, s)) for x, s in ((x0, ()), (x1, ()), (x2, (None, "a")))]
    got = case.accepts("jax.vmap(f)", lambda: jax.vmap(lambda *xs: jnp.concatenate(xs, axis=0))(*args))
    case.same_bits("result", np.asarray(got), np.concatenate([x0, x1, x2], axis=1))
