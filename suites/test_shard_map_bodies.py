"""Code inside ``shard_map``: each device's body sees its blocks of the inputs (the layout model's
blocks for each ``in_specs`` entry) and the per-device results are assembled by ``out_specs``
(``conformance/model/spmd.py``). Checked here: the operation catalogue run inside bodies (eager,
under ``jit``, with ``jit`` inside the body, and manual over a subset of the mesh axes where the
version has it), collectives over several mesh axes at once, and what the replication check
(``check_vma``, ``check_rep`` before 0.6.1) accepts and refuses."""

import functools
from dataclasses import dataclass
from typing import Tuple

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from jax import lax

from conformance.checking.case import Case
from conformance.checking.layouts import check_layout
from conformance.checking.repro import describe_mesh, script, scripted_case, shard_map_lines, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model import dtypes, spmd
from conformance.model.layout import Layout, MeshModel, Spec
from strategies import dividing_specs, meshes
from strategies.batched import MultiAxisExample
from strategies.manual import inputs_varying_over_an_axis, laid_out_inputs
from strategies.ops import CATALOGUE, Op
from strategies.specs import broadcast_operand_spec, restricted_to
from strategies.spmd import permutations_pairs, sample_values
from suites.test_collectives import Collective
from suites.test_collectives import compare as compare_collective

pytestmark = pytest.mark.shard_map_bodies
DEVICES = bridge.live_device_ids()

# Operations a body can apply block by block with a result of its operand's rank: elementwise,
# broadcasting, scans, and reductions with keepdims (each block reduced on its own).
BODY_OPS = tuple(op for op in CATALOGUE if op.family in ("elementwise", "broadcasting", "scan")
                 or (op.family == "reduction" and "keepdims" in op.source))
MODES = ("eager", "jit", "jit inside the body", "jit, manual over some axes")

# Each example compiles one program or more: a tenth of the profile's examples (10 by default), or
# three tenths for the properties whose examples compile small programs (measured: 40-200 ms each).
EXAMPLES = max(8, settings().max_examples // 10)


@dataclass(frozen=True)
class BodyExample:
    """A catalogue operation as a shard_map body: operands, static arguments, mesh, the manual axes,
    one in_spec per operand, the out_spec, and how it is run."""

    op: Op
    operands: Tuple[np.ndarray, ...]
    static: dict
    mesh: MeshModel
    manual_axes: Tuple[str, ...]
    in_specs: Tuple[Spec, ...]
    out_spec: Spec
    mode: str

    def expected(self) -> np.ndarray:
        """The model: each device applies numpy's operation to its blocks; assembled by out_spec."""
        blocks = [spmd.shard_map_blocks(self.mesh, s, x) for x, s in zip(self.operands, self.in_specs)]
        with np.errstate(all="ignore"):
            per_device = {d: np.asarray(self.op.reference(*(b[d] for b in blocks), **self.static))
                          for d in self.mesh.device_ids}
        return spmd.shard_map_assemble(self.mesh, self.out_spec, per_device)


def modes() -> tuple:
    return MODES if compat.FEATURES["partial_manual"].available else MODES[:-1]


@st.composite
def body_examples(draw) -> BodyExample:
    """An operation from BODY_OPS with its inputs (reductions keep their dims); a mesh of up to
    three axes; an out_spec dividing the result and, per operand, the same spec aligned from the
    right (broadcast dimensions unsharded); for the partial-manual mode a proper subset of the axes
    is manual and the specs name only those."""
    op = draw(st.sampled_from(BODY_OPS))
    operands, static = draw(op.inputs)
    if "keepdims" in static:
        static = {**static, "keepdims": True}
    result_shape = np.broadcast_shapes(*(np.shape(x) for x in operands))
    mesh = draw(meshes(DEVICES, max_axes=3))
    mode = draw(st.sampled_from(modes()))
    manual = mesh.axis_names
    if mode == "jit, manual over some axes" and len(manual) > 1:
        manual = tuple(draw(st.permutations(manual))[:draw(st.integers(1, len(manual) - 1))])
    out_spec = restricted_to(draw(dividing_specs(mesh, result_shape)), manual)
    in_specs = tuple(broadcast_operand_spec(out_spec, np.shape(x), result_shape) for x in operands)
    return BodyExample(op, tuple(operands), static, mesh, manual, in_specs, out_spec, mode)


def body_case(example: BodyExample) -> Case:
    op = example.op
    names = [f"x{i}" for i in range(len(example.operands))]
    manual = None if example.manual_axes == example.mesh.axis_names else example.manual_axes
    body = "jax.jit(f)" if example.mode == "jit inside the body" else "f"
    setup, call = shard_map_lines(body, example.in_specs, example.out_spec, manual_axes=manual)
    run = call if example.mode == "eager" else f"jax.jit({call})"
    code = script([
        "import functools",
        f"f = functools.partial({op.source}, **{example.static!r})",
        *setup,
        "args = [jax.device_put(x, NamedSharding(mesh, s)) for x, s in zip(("
        + "".join(f"{n}, " for n in names) + "), ("
        + "".join(f"{spec_literal(s)}, " for s in example.in_specs) + "))]",
        f"print({run}(*args))",
    ], meshes={"mesh": example.mesh}, arrays=dict(zip(names, example.operands)))
    inputs = "; ".join(f"{n}: {x.dtype}{list(np.shape(x))} {spec_literal(s)}"
                       for n, x, s in zip(names, example.operands, example.in_specs))
    manual_text = "" if manual is None else f", manual axes {manual}"
    result = f"{run}(*args)"
    return Case(f"{op.name} inside shard_map ({example.mode}): {op.source} with {example.static!r}; "
                f"{describe_mesh(example.mesh)}{manual_text}; inputs {inputs}; out_specs "
                f"{spec_literal(example.out_spec)}", code,
                {"shard_map": call, example.mode: result, "np.asarray of the result": f"np.asarray({result})",
                 "shard_map result dtype": f"np.asarray({result}).dtype.name",
                 "shard_map result": result})  # (its values, and its layout: 'shard_map result sharding ...')


def split_arange_example(mode: str) -> BodyExample:
    """Always run: negation of an arange split over every device along its rows (so that a block
    out of place shows), in ``mode``."""
    ids = tuple(DEVICES)
    negative = next(op for op in CATALOGUE if op.name == "negative")
    x = np.arange(4 * len(ids), dtype=np.int32).reshape(2 * len(ids), 2)
    return BodyExample(negative, (x,), {}, MeshModel(ids, (len(ids),), ("a",)), ("a",), (("a",),), ("a",), mode)


BODY_RUNNERS: dict = {}  # (operation, static arguments, mode, mesh, specs, manual axes) -> the function run


def body_runner(example: BodyExample, manual):
    """The shard_map of the example's operation as run in its mode, built once per operation,
    static arguments, mode, mesh, specs and manual axes: examples that differ in their values (or
    shapes, which JAX's own cache tells apart) call the same function, so no program is asked for
    twice."""
    key = (example.op.name, repr(sorted(example.static.items())), example.mode, example.mesh, example.in_specs,
           example.out_spec, manual)
    if key not in BODY_RUNNERS:
        f = functools.partial(bridge.function_of(example.op.source), **example.static)
        body = jax.jit(f) if example.mode == "jit inside the body" else f
        mapped = compat.shard_map(body, bridge.jax_mesh(example.mesh), example.in_specs, example.out_spec,
                                  check=True, manual_axes=manual)
        BODY_RUNNERS[key] = mapped if example.mode == "eager" else jax.jit(mapped)
    return BODY_RUNNERS[key]


@settings(max_examples=3 * EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=body_examples())
@example(example=split_arange_example("eager"))
@example(example=split_arange_example("jit"))
def test_catalogue_operation_inside_shard_map_applies_per_block(example, excuses):
    """A catalogue operation as a shard_map body gives the model's assembly of the per-block
    results, eager or jitted, with jit inside the body or manual over some axes, laid out by
    out_specs."""
    with excuses.way([example]):
        check_body_example(example)


@compat.requires("partial_manual")
@bridge.needs_devices(8, "for a (2, 2, 2) mesh")
def test_a_body_manual_over_two_axes_out_of_their_names_order():
    """jax.jit(shard_map(lambda x: -x, mesh, in_specs=P(), out_specs=P(), axis_names={'b', 'a'})) on a
    (b=2, a=2, x=2) mesh, of x = [0, 1] replicated, returns [0, -1]: a body manual over two axes that
    the mesh orders otherwise than their names sort, another axis of size 2 left automatic (found by
    the eleventh release matrix pass on 0.6.2, seed 2055975281; the same body over ('a', 'b', 'x'), or
    manual over {'a', 'x'}, is right there)."""
    mesh = MeshModel(bridge.first_ids(DEVICES, 8), (2, 2, 2), ("b", "a", "x"))
    negative = next(op for op in CATALOGUE if op.name == "negative")
    check_body_example(BodyExample(negative, (np.arange(2, dtype=np.int32),), {}, mesh, ("b", "a"), ((),), (),
                                   "jit, manual over some axes"))


def check_body_example(example: BodyExample) -> None:
    """The example's body run in its mode: the model's values, dtype and (fully manual) layout."""
    case = body_case(example)
    expected = example.expected()
    manual = None if example.manual_axes == example.mesh.axis_names else example.manual_axes
    run = case.accepts("shard_map", lambda: body_runner(example, manual))
    args = [bridge.placed(x, bridge.named_sharding(example.mesh, s))
            for x, s in zip(example.operands, example.in_specs)]
    result = case.accepts(example.mode, lambda: run(*args))
    got = case.accepts("np.asarray of the result", lambda: np.asarray(result))
    expected_dtype = example.op.result_dtype(example.operands, x64=compat.x64_enabled())  # the model's, not JAX's
    case.equal("shard_map result dtype", got.dtype.name, expected_dtype.name)
    case.close("shard_map result", got, expected.astype(expected_dtype), rtol=example.op.rtol, atol=example.op.atol)
    if manual is None:
        check_layout(case, result, Layout(example.mesh, example.out_spec, expected.shape),
                     what="shard_map result")


# --- collectives over several mesh axes at once -------------------------------------------------
# Each distinct example compiles once (the programs are cached), most are cheap: thrice the examples.

MULTI_AXIS_COLLECTIVES = ("psum", "pmax", "all_gather", "psum_scatter", "ppermute", "axis_index")


@st.composite
def multi_axis_examples(draw):
    """A ``MultiAxisExample``: a mesh of two or three axes over every device, a
    collective over two or more of its axes in a drawn order (ppermute: along one axis), and one
    value per device, stacked in row-major mesh order."""
    mesh = draw(meshes(DEVICES, min_axes=2, max_axes=3, subsets=False))
    name = draw(st.sampled_from(MULTI_AXIS_COLLECTIVES))
    order = draw(st.permutations(mesh.axis_names))
    over = tuple(order[:1 if name == "ppermute" else draw(st.integers(2, len(order)))])
    size = int(np.prod([mesh.axis_sizes[a] for a in over]))
    rank = draw(st.integers(0 if name in ("psum", "pmax", "all_gather") else 1, 2))
    shape = [draw(st.integers(1, 2)) for _ in range(rank)]
    params = {}
    if name == "all_gather":
        tiled = rank > 0 and draw(st.booleans())
        params = {"axis": draw(st.integers(0, rank - 1 if tiled else rank)), "tiled": tiled}
    elif name == "psum_scatter":
        tiled = draw(st.booleans())
        dim = draw(st.integers(0, rank - 1))
        shape[dim] = size * (draw(st.integers(1, 2)) if tiled else 1)
        params = {"dim": dim, "tiled": tiled}
    elif name == "ppermute":
        params = {"perm": draw(permutations_pairs(size))}
    dtype = "float32" if name == "pmax" else draw(st.sampled_from(("int32", "float32")))
    values = draw(sample_values(dtype, (mesh.size, *shape), subnormals=name not in ("psum", "pmax", "psum_scatter")))
    return MultiAxisExample(mesh, over, Collective(name, tuple(sorted(params.items())), None), values)


def collective_source(collective: Collective, over: tuple, x: str) -> str:
    """The source of ``collective.call(<x>, over)`` for a reproduction script (not
    ``Collective.describe``'s, which passes psum_scatter ``dim=`` and axis_index an operand, neither
    of which those functions take)."""
    p = dict(collective.params)
    return {"psum": f"lax.psum({x}, {over!r})", "pmax": f"lax.pmax({x}, {over!r})",
            "all_gather": f"lax.all_gather({x}, {over!r}, axis={p.get('axis')!r}, tiled={p.get('tiled')!r})",
            "psum_scatter": f"lax.psum_scatter({x}, {over!r}, scatter_dimension={p.get('dim')!r}, "
                            f"tiled={p.get('tiled')!r})",
            "ppermute": f"lax.ppermute({x}, {over!r}, perm={list(p.get('perm', ()))!r})",
            "axis_index": f"lax.axis_index({over!r})"}[collective.name]


@functools.lru_cache(maxsize=None)
def multi_axis_program(collective: Collective, mesh: MeshModel, over: tuple):
    spec = (mesh.axis_names,)
    return jax.jit(compat.shard_map(lambda b: collective.call(b[0], over)[None], bridge.jax_mesh(mesh),
                                    (spec,), spec, check=True))


@settings(max_examples=3 * EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=multi_axis_examples())
def test_collectives_over_several_mesh_axes_in_a_body(example, excuses):
    """A collective over a tuple of mesh axes inside a shard_map body acts on the groups of devices
    that share every other coordinate, ordered by their index over the tuple (first axis major),
    with the replication check on."""
    with excuses.way([example]):
        check_collectives_over_several_mesh_axes_in_a_body(example)


def check_collectives_over_several_mesh_axes_in_a_body(example):
    mesh, over, collective, values = example
    spec = (mesh.axis_names,)
    setup, call = shard_map_lines(f"lambda b: {collective_source(collective, over, 'b[0]')}[None]", (spec,), spec)
    case = scripted_case(f"shard_map(lambda b: {collective.describe(repr(over))}) over {describe_mesh(mesh)}, "
                f"in/out_specs {spec_literal(spec)}",
                [*setup, f"print(jax.jit({call})(x))"], meshes={"mesh": mesh}, arrays={"x": values},
                outcomes={"shard_map": f"jax.jit({call})(x)",
                          f"shard_map({collective.name} over {over}) result": f"np.asarray(jax.jit({call})(x))"})
    got = np.asarray(case.accepts("shard_map", lambda: multi_axis_program(collective, mesh, over)(values)))
    expected = [None] * mesh.size
    for group in spmd.mesh_groups(mesh.shape, mesh.axis_names, over):
        for position, result in zip(group, collective.model([values[p] for p in group])):
            expected[position] = result
    compare_collective(case, f"shard_map({collective.name} over {over}) result", got, np.stack(expected),
                       collective)


# --- the replication check --------------------------------------------------------------------


@st.composite
def varying_examples(draw):
    """A mesh over every device with an axis of size > 1, that axis, and an int32 input whose
    first dimension it splits."""
    mesh = draw(meshes(DEVICES, max_axes=3, subsets=False).filter(lambda m: max(m.shape) > 1))
    axis = draw(st.sampled_from([a for a in mesh.axis_names if mesh.axis_sizes[a] > 1]))
    x = draw(sample_values("int32", (mesh.axis_sizes[axis] * draw(st.integers(1, 2)), 2)))
    return mesh, axis, x


@bridge.needs_devices(2, "for an axis of size > 1")
@settings(max_examples=max(4, EXAMPLES // 2))
@given(example=varying_examples())
def test_out_specs_must_cover_the_axes_a_body_varies_over(example):
    """With the replication check on, out_specs that leave out an axis the body's result varies over
    are refused; after psum over that axis the same out_specs are accepted and give the sum of the
    blocks."""
    mesh, axis, x = example
    spec = ((axis,),)
    setup, refused = shard_map_lines("lambda b: b * 2", (spec,), ())
    _, summed = shard_map_lines(f"lambda b: lax.psum(b, {axis!r})", (spec,), ())
    case = scripted_case(f"shard_map over {describe_mesh(mesh)} with in_specs {spec_literal(spec)}, out_specs P(), "
                f"{compat.SHARD_MAP_CHECK}=True: body b * 2 (varies over {axis!r}), and lax.psum(b, {axis!r})",
                [*setup, f"print(jax.jit({summed})(x))  # accepted",
                        "try:",
                        f"    print(jax.jit({refused})(x))  # should raise ValueError",
                        "except Exception as e:",
                        "    print('raised:', type(e).__name__, e)"],
                       meshes={"mesh": mesh}, arrays={"x": x},
                       outcomes={"out_specs P() for a body varying over the axis": f"jax.jit({refused})(x)",
                                 "out_specs P() after psum": f"jax.jit({summed})(x)",
                                 "psum result dtype": f"np.asarray(jax.jit({summed})(x)).dtype.name",
                                 "psum result": f"np.asarray(jax.jit({summed})(x))"})
    jmesh = bridge.jax_mesh(mesh)
    case.rejects("out_specs P() for a body varying over the axis",
                 lambda: jax.jit(compat.shard_map(lambda b: b * 2, jmesh, (spec,), (), check=True))(x),
                 compat.UNPROVABLE_REPLICATION_ERRORS)
    got = case.accepts("out_specs P() after psum",
                       lambda: jax.jit(compat.shard_map(lambda b: lax.psum(b, axis), jmesh, (spec,), (),
                                                        check=True))(x))
    blocks = spmd.shard_map_blocks(mesh, spec, x)
    groups = spmd.mesh_groups(mesh.shape, mesh.axis_names, (axis,))
    with np.errstate(over="ignore"):
        total = sum(blocks[mesh.device_ids[p]] for p in groups[0])
    psum_dtype = dtypes.result_dtype("same", (x.dtype,), x64=compat.x64_enabled())  # a collective keeps its dtype
    case.equal("psum result dtype", np.asarray(got).dtype.name, psum_dtype.name)
    case.same_bits("psum result", np.asarray(got), total.astype(psum_dtype))


@compat.requires("partial_manual")
@bridge.needs_devices(4, "for a 2 x n/2 mesh")
def test_a_body_manual_over_one_axis_sees_blocks_of_that_axis_only():
    """shard_map manual over 'i' of a mesh ('i', 'j') under jit: the body sees x split over 'i' only
    (whole along 'j', which stays automatic) and a psum over 'i' sums those blocks."""
    n = len(DEVICES)
    mesh = MeshModel(tuple(DEVICES), (2, n // 2), ("i", "j"))
    x = np.arange(2 * n, dtype=np.int32).reshape(4, n // 2)
    setup, call = shard_map_lines("lambda b: lax.psum(b, 'i') + b.shape[0]", ((("i",),),), (),
                                  manual_axes=("i",))
    case = scripted_case(f"{call}(x) on {describe_mesh(mesh)}, x int32[4, {n // 2}]",
                [*setup, f"print(jax.jit({call})(x))"], meshes={"mesh": mesh}, arrays={"x": x},
                outcomes={"shard_map manual over 'i'": f"jax.jit({call})(x)",
                          "result": f"np.asarray(jax.jit({call})(x))"})
    f = jax.jit(compat.shard_map(lambda b: lax.psum(b, "i") + b.shape[0], bridge.jax_mesh(mesh), ((("i",),),), (),
                                 check=True, manual_axes=("i",)))
    got = case.accepts("shard_map manual over 'i'", lambda: f(x))
    case.same_bits("result", np.asarray(got), x[:2] + x[2:] + np.int32(2))


# A constraint inside a body manual over 'i' of a mesh ('i', 'j') over the axis left automatic: as JAX's
# tests/shard_map_test.py test_partial_auto spells it (compat.PARTIAL_MANUAL_CONSTRAINT_TAKES_A_BARE_SPEC:
# a bare spec read against the body's mesh from 0.8.0; a NamedSharding of the concrete mesh before).
CONSTRAINED_OVER_J = [(None, "j"), ("j", None)]


def constraint_in_a_body(spec: tuple, mesh: MeshModel, axis_type: str = "Auto"):
    """The sharding argument of the constraint, and its source in a script."""
    if compat.PARTIAL_MANUAL_CONSTRAINT_TAKES_A_BARE_SPEC:
        return compat.partition_spec(spec), spec_literal(spec)
    return bridge.named_sharding(mesh, spec, axis_type), f"NamedSharding(mesh, {spec_literal(spec)})"


@functools.lru_cache(maxsize=None)
def constrained_in_a_partially_manual_body(spec: tuple, mesh: MeshModel, axis_type: str = "Auto"):
    """jit of shard_map manual over 'i' (in/out specs P('i', None)) of lambda b: constrain(b * 2 + 1)."""
    sharding, _ = constraint_in_a_body(spec, mesh, axis_type)
    body = lambda b: lax.with_sharding_constraint(b * 2 + 1, sharding)
    return jax.jit(compat.shard_map(body, bridge.jax_mesh(mesh, axis_type), ((("i",), None),), (("i",), None),
                                    manual_axes=("i",)))


def constraint_case(spec: tuple, mesh: MeshModel, x: np.ndarray, axis_type: str = "Auto") -> Case:
    _, source = constraint_in_a_body(spec, mesh, axis_type)
    setup, call = shard_map_lines(f"lambda b: lax.with_sharding_constraint(b * 2 + 1, {source})",
                                  ((("i",), None),), (("i",), None), manual_axes=("i",))
    placed = "x" if axis_type == "Auto" else "jax.device_put(x, NamedSharding(mesh, P('i', None)))"
    run = f"jax.jit({call})({placed})"
    return scripted_case(f"{call}(x) on {describe_mesh(mesh)} ({axis_type}), x int32{list(x.shape)}",
                         [*setup, f"print({run})"], meshes={"mesh": mesh}, axis_type=axis_type, arrays={"x": x},
                         outcomes={"the call": run, "result": f"np.asarray({run})"})


@compat.requires("partial_manual")
@bridge.needs_devices(4, "for a 2 x n/2 mesh")
@pytest.mark.parametrize("spec", CONSTRAINED_OVER_J, ids=["columns-over-j", "rows-over-j"])
def test_a_constraint_over_the_automatic_axis_of_a_partially_manual_body_keeps_its_values(spec):
    """lax.with_sharding_constraint over 'j' inside a jitted shard_map body manual over 'i' of an Auto
    mesh ('i', 'j') keeps the body's values: lambda b: constrain(b * 2 + 1) gives numpy's 2 x + 1."""
    n = len(DEVICES)
    mesh = MeshModel(bridge.first_ids(DEVICES, 2 * (n // 2)), (2, n // 2), ("i", "j"))
    x = np.arange(4 * n * (n // 2), dtype=np.int32).reshape(2 * n, 2 * (n // 2)) - n
    case = constraint_case(spec, mesh, x)
    got = case.accepts("the call", lambda: constrained_in_a_partially_manual_body(spec, mesh)(x))
    case.same_bits("result", np.asarray(got), x * 2 + 1)


@compat.requires("partial_manual")
@compat.requires("explicit_sharding")
@bridge.needs_devices(4, "for a 2 x n/2 mesh")
def test_a_constraint_naming_an_explicit_axis_of_a_partially_manual_body_is_refused():
    """On an Explicit mesh ('i', 'j'), with_sharding_constraint over 'j' inside a shard_map body
    manual over 'i' raises ValueError: a constraint names Auto axes only (an Explicit axis's layout
    is its type's, changed by reshard; the Explicit sharding docs)."""
    n = len(DEVICES)
    mesh = MeshModel(bridge.first_ids(DEVICES, 2 * (n // 2)), (2, n // 2), ("i", "j"))
    x = np.arange(4 * n * (n // 2), dtype=np.int32).reshape(2 * n, 2 * (n // 2))
    case = constraint_case((None, "j"), mesh, x, "Explicit")
    y = bridge.placed(x, bridge.named_sharding(mesh, (("i",), None), "Explicit"))
    error = case.rejects("the call", lambda: constrained_in_a_partially_manual_body((None, "j"), mesh, "Explicit")(y),
                         (ValueError,))
    case.true(f"the refusal names the Auto axes (got: {' '.join(str(error).split())[:200]})", "Auto axes" in str(error))


@bridge.needs_devices(4, "for a 2 x n/2 mesh")
@pytest.mark.parametrize("names", [("i",), ("i", "j")], ids=["over-i", "over-i-and-j"])
def test_psum_over_axes_a_value_is_invariant_over(names):
    """psum (replication check on) over axes the value is replicated over sums every device's copy,
    like any psum: over 'i' alone (the value split over 'j' only) it doubles the value, and over
    ('i', 'j') it sums the 'j' blocks and doubles that. The model: the sum over each group of
    devices that differ only along the named axes."""
    n = len(DEVICES)
    mesh = MeshModel(tuple(DEVICES), (2, n // 2), ("i", "j"))
    x = np.arange(n, dtype=np.int32)
    spec = (("j",),)
    setup, call = shard_map_lines(f"lambda b: lax.psum(b, {names!r})", (spec,), spec if names == ("i",) else ())
    case = scripted_case(f"{call}(x) on {describe_mesh(mesh)}, x = arange({n})",
                [*setup, f"print(jax.jit({call})(x))"], meshes={"mesh": mesh}, arrays={"x": x},
                outcomes={"shard_map": f"jax.jit({call})(x)", "psum result": f"np.asarray(jax.jit({call})(x))"})
    blocks = spmd.shard_map_blocks(mesh, spec, x)
    per_device = {}
    for group in spmd.mesh_groups(mesh.shape, mesh.axis_names, names):
        total = sum(blocks[mesh.device_ids[p]] for p in group)
        per_device.update({mesh.device_ids[p]: total for p in group})
    expected = spmd.shard_map_assemble(mesh, spec if names == ("i",) else (), per_device)
    f = jax.jit(compat.shard_map(lambda b: lax.psum(b, names), bridge.jax_mesh(mesh), (spec,),
                                 spec if names == ("i",) else (), check=True))
    got = case.accepts("shard_map", lambda: f(x))
    case.same_bits("psum result", np.asarray(got), expected)


# --- deterministic reproductions of what the properties above found -----------------------------


def test_pmax_in_a_checked_body():
    """pmax inside a shard_map body with the replication check on gives every device the maximum
    (the check knows pmax's result is replicated)."""
    mesh = bridge.line_mesh()
    x = np.arange(mesh.size, dtype=np.float32)
    setup, call = shard_map_lines("lambda b: lax.pmax(b, 'a')", ((("a",),),), ())
    case = scripted_case(f"{call}(x) with x = arange({mesh.size}) on {describe_mesh(mesh)}",
                [*setup, f"print(jax.jit({call})(x))"], meshes={"mesh": mesh}, arrays={"x": x},
                outcomes={"shard_map": f"jax.jit({call})(x)", "pmax result": f"np.asarray(jax.jit({call})(x))"})
    f = jax.jit(compat.shard_map(lambda b: lax.pmax(b, "a"), bridge.jax_mesh(mesh), ((("a",),),), (), check=True))
    got = case.accepts("shard_map", lambda: f(x))
    case.same_bits("pmax result", np.asarray(got), np.array([mesh.size - 1], np.float32))


# --- shard_map on a mesh of Explicit axes ---------------------------------------------------------
# jax.shard_map's docs: out_specs say how the output shards are concatenated (an axis left out is a
# promise that the output is equal along it, which check_vma verifies). JAX's explicit-sharding
# notebook: an Explicit axis's sharding is part of a value's type (jax.typeof), and at the top level of
# a fully Explicit mesh context "the concrete array sharding and type-specified sharding agree". So on
# an Explicit mesh the result is laid out by out_specs, and its type says that layout. (On an Explicit
# mesh in_specs must match the argument's sharding, which shard_map otherwise infers from it: the inputs
# here are put with their in_specs.)


def explicit_result_checks(case: Case, result, mesh: MeshModel, out_spec: Spec, expected: np.ndarray, what: str):
    """``result`` holds ``expected`` bit for bit, is laid out by ``out_spec`` (``check_layout``), and
    jax.typeof of it (outside the body, on the concrete result) has a sharding whose spec lays it out
    the same way over the mesh."""
    got = case.accepts(f"np.asarray of the {what}", lambda: np.asarray(result))
    case.same_bits(what, got, expected)
    layout = Layout(mesh, out_spec, expected.shape)
    check_layout(case, result, layout, what=what)
    typed = compat.feature("typeof")(result).sharding
    case.index_map(f"blocks of jax.typeof({what}).sharding's spec",
                   Layout(mesh, compat.spec_entries(typed.spec), expected.shape).blocks, layout.blocks)


def explicit_case(mesh: MeshModel, title: str, spec: Spec, x: np.ndarray, lines: list, outcomes: dict) -> Case:
    return scripted_case(f"{title} on an Explicit {describe_mesh(mesh)}, x {x.dtype}{list(x.shape)} "
                         f"{spec_literal(spec)}",
                         [f"y = jax.device_put(x, NamedSharding(mesh, {spec_literal(spec)}))"],
                         meshes={"mesh": mesh}, axis_type="Explicit", arrays={"x": x}, in_context=lines,
                         outcomes=outcomes)


@functools.lru_cache(maxsize=None)
def explicit_program(mesh: MeshModel, body, in_spec: Spec, out_spec: Spec):
    return jax.jit(compat.shard_map(body, bridge.jax_mesh(mesh, "Explicit"), (in_spec,), out_spec, check=True))


def stacked_blocks(b):
    return b[None]


@compat.requires("explicit_sharding")
@compat.requires("jax.shard_map")
@settings(max_examples=EXAMPLES)
@given(example=laid_out_inputs(DEVICES), data=st.data())
def test_a_body_on_an_explicit_mesh_sees_the_models_blocks(example, data):
    """On a mesh of Explicit axes, a shard_map body sees the model's block of its input on every
    device (returned stacked along a new dimension split over every mesh axis), and the result is
    laid out by out_specs, as its jax.typeof says."""
    mesh, shape, spec = example
    x = data.draw(sample_values("int32", shape), label="x")
    out_spec = (mesh.axis_names,)
    setup, call = shard_map_lines("lambda b: b[None]", (spec,), out_spec)
    run = f"jax.jit({call})(y)"
    case = explicit_case(mesh, f"{call}(x)", spec, x, [*setup, f"r = {run}", "print(r, jax.typeof(r))"],
                         {"shard_map": run, "np.asarray of the stacked blocks": f"np.asarray({run})",
                          "stacked blocks": run,  # (its values, and its layout: 'stacked blocks sharding ...')
                          "blocks of jax.typeof(stacked blocks).sharding's spec":
                          f"NamedSharding(mesh, jax.typeof({run}).sharding.spec)"})
    blocks = spmd.shard_map_blocks(mesh, spec, x)
    expected = spmd.shard_map_assemble(mesh, out_spec, {d: blocks[d][None] for d in mesh.device_ids})
    jmesh = bridge.jax_mesh(mesh, "Explicit")
    with compat.mesh_context(jmesh, "Explicit"):
        y = bridge.placed(x, bridge.named_sharding(mesh, spec, "Explicit"))
        result = case.accepts("shard_map", lambda: explicit_program(mesh, stacked_blocks, spec, out_spec)(y))
        explicit_result_checks(case, result, mesh, out_spec, expected, "stacked blocks")


@functools.lru_cache(maxsize=None)
def psum_over(axis: str):
    return lambda b: lax.psum(b, axis)


def doubled(b):
    return b * 2


@compat.requires("explicit_sharding")
@compat.requires("jax.shard_map")
@bridge.needs_devices(2, "for an axis of size > 1")
@settings(max_examples=EXAMPLES)
@given(example=inputs_varying_over_an_axis(DEVICES), data=st.data())
def test_out_specs_on_an_explicit_mesh_must_cover_the_axes_a_body_varies_over(example, data):
    """On a mesh of Explicit axes, as on Auto ones, out_specs that leave out an axis the body's result
    varies over are refused (replication check on); after psum over that axis they are accepted, give
    the model's group sums assembled by out_specs, and lay the result out as out_specs (and its
    jax.typeof) say."""
    mesh, shape, spec, axis = example
    x = data.draw(sample_values("int32", shape), label="x")
    out_spec = restricted_to(spec, [a for a in mesh.axis_names if a != axis])
    setup, refused = shard_map_lines("lambda b: b * 2", (spec,), out_spec)
    _, summed = shard_map_lines(f"lambda b: lax.psum(b, {axis!r})", (spec,), out_spec)
    case = explicit_case(mesh, f"out_specs {spec_literal(out_spec)} (without {axis!r}): "
                               f"body b * 2, and lax.psum(b, {axis!r})",
                         spec, x, [*setup, f"print(jax.jit({summed})(y))  # accepted",
                                   "try:", f"    print(jax.jit({refused})(y))  # should raise ValueError",
                                   "except Exception as e:", "    print('raised:', type(e).__name__, e)"],
                         {"out_specs without the axis for a body varying over it": f"jax.jit({refused})(y)",
                          "out_specs without the axis after psum": f"jax.jit({summed})(y)",
                          "np.asarray of the psum result": f"np.asarray(jax.jit({summed})(y))",
                          "psum result": f"jax.jit({summed})(y)",  # (its values, and its layout)
                          "blocks of jax.typeof(psum result).sharding's spec":
                              f"NamedSharding(mesh, jax.typeof(jax.jit({summed})(y)).sharding.spec)"})
    blocks = spmd.shard_map_blocks(mesh, spec, x)
    per_device = {}
    with np.errstate(over="ignore"):
        for group in spmd.mesh_groups(mesh.shape, mesh.axis_names, (axis,)):
            total = sum(blocks[mesh.device_ids[p]] for p in group).astype(x.dtype)
            per_device.update({mesh.device_ids[p]: total for p in group})
    expected = spmd.shard_map_assemble(mesh, out_spec, per_device)
    jmesh = bridge.jax_mesh(mesh, "Explicit")
    with compat.mesh_context(jmesh, "Explicit"):
        y = bridge.placed(x, bridge.named_sharding(mesh, spec, "Explicit"))
        case.rejects("out_specs without the axis for a body varying over it",
                     lambda: explicit_program(mesh, doubled, spec, out_spec)(y), compat.UNPROVABLE_REPLICATION_ERRORS)
        result = case.accepts("out_specs without the axis after psum",
                              lambda: explicit_program(mesh, psum_over(axis), spec, out_spec)(y))
        explicit_result_checks(case, result, mesh, out_spec, expected, "psum result")
