"""Ahead-of-time compilation of sharded code: ``jax.jit(f, in_shardings=..., out_shardings=...)
.lower(...).compile()`` reports the model's input and output layouts, lowered from arrays or from
``jax.ShapeDtypeStruct``s (or, with no in_shardings, from committed arguments, whose layouts it
keeps); calling it with arguments laid out as lowered, or with host (numpy) arguments, gives the
jitted result; an argument committed to another layout is refused with ValueError (the AOT
documentation: compiled functions do not reshard their arguments), never answered wrongly."""

from typing import NamedTuple

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.checking.case import Case
from conformance.checking import isolation
from conformance.checking.repro import check_in_a_subprocess, describe_mesh, scripted_case, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel, spec_axes
from strategies import cutting_meshes, dividing_specs, sharding_specs
from strategies.ops import CATALOGUE

pytestmark = [pytest.mark.aot, pytest.mark.uncached]  # checks compilation itself
DEVICES = bridge.live_device_ids()
# Lowering and compiling one small program per example is cheap: a quarter of the profile's examples.
EXAMPLES = max(10, settings().max_examples // 4)
LOWERED_FROM = ("arrays", "ShapeDtypeStructs", "committed arrays, no in_shardings")
SINGLE_OPERAND_OPS = tuple(op for op in CATALOGUE if op.family in ("elementwise", "reduction", "scan", "shape"))


@st.composite
def aot_examples(draw):
    """A one-operand catalogue operation and its input; a mesh that mostly cuts one of them; a spec
    for the input and for the output, each mostly cutting (a compiled function's reported
    shardings are checked on layouts that split something); what the lowering is given; and a
    dividing spec for the input, to call the compiled function with."""
    op = draw(st.sampled_from(SINGLE_OPERAND_OPS))
    (x,), static = draw(op.inputs)
    with np.errstate(all="ignore"):
        expected = np.asarray(op.reference(x, **static))
    mesh = draw(cutting_meshes(DEVICES, np.shape(x) + np.shape(expected), max_axes=2))
    return (op, x, static, expected, mesh, draw(sharding_specs(mesh, x.shape)),
            draw(sharding_specs(mesh, expected.shape)), draw(st.sampled_from(LOWERED_FROM)),
            draw(dividing_specs(mesh, x.shape)))


COMPILED: dict = {}  # (the lowered module's text, the mesh's devices in order) -> what compile() made of it


def compiled_once(lowered, mesh):
    """``lowered.compile()``, or what it gave for an earlier example lowered to the same module on the
    same devices in the same order (an example lowered from ShapeDtypeStructs asks for the program
    one lowered from arrays did): one program, not compiled twice."""
    key = (lowered.as_text(), tuple(mesh.device_ids), tuple(mesh.shape))
    if key not in COMPILED:
        COMPILED[key] = lowered.compile()
    return COMPILED[key]


def layout_map(case: Case, what: str, sharding, layout: Layout) -> None:
    case.index_map(what, bridge.index_map(sharding, layout.shape), layout.blocks)


def moves_an_axis_to_another_dimension(in_spec, out_spec) -> bool:
    """Whether some mesh axis names one dimension in ``in_spec`` and another in ``out_spec``."""
    where = lambda spec: {a: d for d, axes in enumerate(spec_axes(spec)) for a in axes}
    before, after = where(in_spec), where(out_spec)
    return any(a in after and after[a] != d for a, d in before.items())


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=aot_examples())
def test_compiled_function_shardings_and_calls(example, known_deviations, excuses, warm_interpreter):
    """A compiled function's input_shardings and output_shardings are the model's layouts; called
    with arguments laid out as lowered, or with a numpy argument, it gives numpy's answer; called
    with an argument committed to a layout that places blocks otherwise, it raises ValueError."""
    op, x0, static, expected, mesh, in_spec, out_spec, lowered_from, other_spec = example
    s = lambda spec: f"NamedSharding(mesh, {spec_literal(spec)})"
    explicit = lowered_from != "committed arrays, no in_shardings"
    jit_args = f", in_shardings={s(in_spec)}" if explicit else ""
    lower_arg = (f"jax.ShapeDtypeStruct(x.shape, x.dtype, sharding={s(in_spec)})"
                 if lowered_from == "ShapeDtypeStructs" else "x")
    compile_call = f"jax.jit(f{jit_args}, out_shardings={s(out_spec)}).lower({lower_arg}).compile()"
    called = {"compiled(x laid out as lowered)": "compiled(x)", "compiled(numpy x)": "compiled(x0)",
              "compiled(x laid out equivalently)": "compiled(other)"}
    case = scripted_case(f"jax.jit({op.source} with {static!r}, in_shardings="
                f"{spec_literal(in_spec) if explicit else '(none)'}, out_shardings={spec_literal(out_spec)})"
                f".lower(<{lowered_from}>).compile() on {describe_mesh(mesh)}, x {x0.dtype}{list(x0.shape)}; "
                f"then called with x laid out as {spec_literal(other_spec)}",
                ["import functools", f"f = functools.partial({op.source}, **{static!r})",
                        f"x = jax.device_put(x0, {s(in_spec)})",
                        f"compiled = {compile_call}",
                        "print(compiled.input_shardings, compiled.output_shardings)",
                        "print(compiled(x), compiled(x0))",
                        f"other = jax.device_put(x0, {s(other_spec)})",
                        "try:",
                        "    print(compiled(other))",
                        "except Exception as e:",
                        "    print('raised:', type(e).__name__, e)"],
                       meshes={"mesh": mesh}, arrays={"x0": x0},
                       outcomes={"lower().compile()": compile_call,
                                 "compiled.input_shardings keyword part": "compiled.input_shardings[1]",
                                 "compiled.input_shardings[0][0]": "compiled.input_shardings[0][0]",
                                 "compiled.output_shardings": "compiled.output_shardings",
                                 **{what: call for what, call in called.items()},
                                 **{f"{what} result dtype": f"np.asarray({call}).dtype.name"
                                    for what, call in called.items()},
                                 **{f"{what} result": f"np.asarray({call})" for what, call in called.items()},
                                 **{f"{what} result sharding": f"{call}.sharding" for what, call in called.items()},
                                 "compiled(x committed to another layout)": "compiled(other)"})
    aborts = known_deviations.covers(test_a_compiled_logical_not_moving_a_combined_axis_compiles)
    if aborts and moves_an_axis_to_another_dimension(in_spec, out_spec):
        # This JAX's XLA may abort the process on such a compile (that test's known deviation): the
        # case runs in a warm interpreter first, and in this process only if it lives.
        if isolation.aborted_in_a_warm_interpreter(case, warm_interpreter, excuses, aborts, example,
                                                    "an XLA abort compiling a layout that moves an axis"):
            return
    sharding = lambda spec: bridge.named_sharding(mesh, spec)
    f = bridge.function_of(op.source)
    body = lambda x: f(x, **static)
    x = bridge.placed(x0, sharding(in_spec))
    jitted = jax.jit(body, in_shardings=sharding(in_spec), out_shardings=sharding(out_spec)) if explicit else \
        jax.jit(body, out_shardings=sharding(out_spec))
    argument = (jax.ShapeDtypeStruct(x0.shape, x.dtype, sharding=sharding(in_spec))
                if lowered_from == "ShapeDtypeStructs" else x)
    compiled = case.accepts("lower().compile()", lambda: compiled_once(jitted.lower(argument), mesh))
    in_layout, out_layout = Layout(mesh, in_spec, x0.shape), Layout(mesh, out_spec, expected.shape)
    (in_shardings,), kwargs = compiled.input_shardings
    case.equal("compiled.input_shardings keyword part", kwargs, {})
    layout_map(case, "compiled.input_shardings[0][0]", in_shardings, in_layout)
    layout_map(case, "compiled.output_shardings", compiled.output_shardings, out_layout)
    expected_dtype = op.result_dtype((x0,), x64=compat.x64_enabled())  # the model's, not JAX's
    for what, arg in (("compiled(x laid out as lowered)", x), ("compiled(numpy x)", x0)):
        result = case.accepts(what, lambda: compiled(arg))  # noqa: B023 - called in this iteration
        got = np.asarray(result)
        case.equal(f"{what} result dtype", got.dtype.name, expected_dtype.name)
        case.close(f"{what} result", got, expected.astype(expected_dtype), rtol=op.rtol, atol=op.atol)
        layout_map(case, f"{what} result sharding", result.sharding, out_layout)
    other = bridge.placed(x0, sharding(other_spec))
    if Layout(mesh, other_spec, x0.shape).blocks == in_layout.blocks:
        got = np.asarray(case.accepts("compiled(x laid out equivalently)", lambda: compiled(other)))
        case.equal("compiled(x laid out equivalently) result dtype", got.dtype.name, expected_dtype.name)
        case.close("compiled(x laid out equivalently) result", got, expected.astype(expected_dtype), rtol=op.rtol,
                   atol=op.atol)
    else:
        case.rejects("compiled(x committed to another layout)", lambda: compiled(other), (ValueError,))


def test_a_compiled_logical_not_moving_a_combined_axis_compiles(run_isolated):
    """jax.jit(jnp.logical_not, in_shardings=P(('y', 'x')), out_shardings=P('x', ('y',), None)) on a
    (y=3, x=2) mesh, lowered from a ShapeDtypeStruct bool[6, 6, 2], compiles and computes; run in a
    subprocess because XLA's SPMD partitioner aborts the process on it (found by the release matrix
    on 0.11.2, seed 3912681170)."""
    if len(DEVICES) < 6:
        pytest.skip(f"needs 6 devices for a (3, 2) mesh; this run has {len(DEVICES)}")
    lines = ["mesh = Mesh(np.array([devices[i] for i in range(6)]).reshape(3, 2), ('y', 'x'))",
             "s_in, s_out = NamedSharding(mesh, P(('y', 'x'))), NamedSharding(mesh, P('x', ('y',), None))",
             "c = jax.jit(jnp.logical_not, in_shardings=s_in, out_shardings=s_out).lower("
             "jax.ShapeDtypeStruct((6, 6, 2), np.bool_, sharding=s_in)).compile()",
             "print(int(np.asarray(c(jax.device_put(np.zeros((6, 6, 2), np.bool_), s_in))).sum()))"]
    check_in_a_subprocess("jax.jit(jnp.logical_not, in_shardings=P(('y', 'x')), out_shardings=P('x', ('y',), None))"
                          ".lower(bool[6, 6, 2]).compile() on a (y=3, x=2) mesh", lines, run_isolated,
                          printed="72", what="the number of True results")


# --- a compiled executable's argument checks (issue 41) ---------------------------------------
OTHER_ARGUMENTS = ("the same spec on other devices", "another shape", "another dtype")


class OtherArgumentExample(NamedTuple):
    """A compiled function's input (dtype, shape, mesh, spec) and the argument it is called with:
    how it differs (one of OTHER_ARGUMENTS) and, for other devices, its mesh."""

    dtype: str
    shape: tuple
    mesh: MeshModel
    spec: tuple
    other: str
    other_mesh: MeshModel


@st.composite
def other_argument_examples(draw):
    """A compiled ``x * 2 + 1`` of an int32 or float32 input laid out over a mesh that mostly cuts
    it, and an argument that differs from what it was compiled for in one way: its devices (the
    same spec on a mesh of the same shape over the devices in another order, or over others), its
    shape (twice the rows, so the spec still divides it) or its dtype (the other of int32 and
    float32)."""
    dtype = draw(st.sampled_from(("int32", "float32")))
    rows = draw(st.integers(1, 3))
    mesh = draw(cutting_meshes(DEVICES, (rows * len(DEVICES), 2), max_axes=2))
    spec = draw(sharding_specs(mesh, (rows * len(DEVICES), 2)))
    shape = (rows * len(DEVICES), 2)
    other = draw(st.sampled_from(OTHER_ARGUMENTS))
    other_mesh = mesh
    if other == OTHER_ARGUMENTS[0]:
        pool = draw(st.permutations(DEVICES))
        other_mesh = type(mesh)(tuple(pool[:mesh.size]), mesh.shape, mesh.axis_names)
    return OtherArgumentExample(dtype, shape, mesh, spec, other, other_mesh)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=other_argument_examples())
def test_compiled_function_refuses_arguments_it_was_not_compiled_for(example, excuses):
    """A compiled function called with an argument of another shape or dtype than it was lowered
    for raises TypeError; with the same spec on other devices it raises ValueError where any device
    would hold another block than it was compiled for (it does not reshard), and where every device
    holds the same block it either computes numpy's answer or raises ValueError (JAX compares
    device assignments, not only blocks)."""
    dtype, shape, mesh, spec, other, other_mesh = example
    x0 = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    argument = {OTHER_ARGUMENTS[0]: "jax.device_put(x0, NamedSharding(other_mesh, spec))",
                OTHER_ARGUMENTS[1]: "jax.device_put(np.concatenate([x0, x0]), NamedSharding(mesh, spec))",
                OTHER_ARGUMENTS[2]: f"jax.device_put(x0.astype('{'float32' if dtype == 'int32' else 'int32'}'), "
                                    "NamedSharding(mesh, spec))"}[other]
    case = scripted_case(f"jax.jit(lambda x: x * 2 + 1, in_shardings=NamedSharding(mesh, {spec_literal(spec)}))"
                         f".lower(x).compile() on {describe_mesh(mesh)}, x {dtype}{list(shape)}; then called with "
                         f"{other} ({argument}{', ' + describe_mesh(other_mesh) if other_mesh is not mesh else ''})",
                         [f"spec = {spec_literal(spec)}",
                          "compiled = jax.jit(lambda x: x * 2 + 1, in_shardings=NamedSharding(mesh, spec))"
                          ".lower(jax.device_put(x0, NamedSharding(mesh, spec))).compile()",
                          "try:",
                          f"    print(compiled({argument}))",
                          "except Exception as e:",
                          "    print('raised:', type(e).__name__, e)"],
                         meshes={"mesh": mesh, "other_mesh": other_mesh}, arrays={"x0": x0},
                         outcomes={"the call": f"compiled({argument})"})
    sharding = bridge.named_sharding(mesh, spec)
    x = bridge.placed(x0, sharding)
    compiled = compiled_once(jax.jit(lambda v: v * 2 + 1, in_shardings=sharding).lower(x), mesh)
    if other == OTHER_ARGUMENTS[1]:
        longer = np.concatenate([x0, x0])  # (twice the rows: the spec still divides them)
        case.rejects("the call", lambda: compiled(jax.device_put(longer, sharding)), (TypeError,))
    elif other == OTHER_ARGUMENTS[2]:
        case.rejects("the call", lambda: compiled(jax.device_put(x0.astype("float32" if dtype == "int32" else "int32"),
                                                                sharding)), (TypeError,))
    else:
        moved = bridge.placed(x0, bridge.named_sharding(other_mesh, spec))
        if Layout(other_mesh, spec, shape).blocks == Layout(mesh, spec, shape).blocks:
            try:
                got = np.asarray(compiled(moved))
            except ValueError:  # (refused as documented: the device assignment differs)
                return
            case.same_bits("the call's result", got, x0 * 2 + 1)
        else:
            with excuses.way([example], example=example):
                case.rejects("the call", lambda: compiled(moved), (ValueError,))


@bridge.needs_devices(4, "for two meshes of two devices")
def test_a_compiled_function_refuses_an_argument_on_other_devices():
    """``jax.jit(lambda x: x * 2 + 1, in_shardings=NamedSharding(mesh, P('a'))).lower(x).compile()``
    for a mesh of devices 0-1, called with x placed P('a') on a mesh of devices 2-3, raises
    ValueError: a compiled function does not move its arguments (found on 0.4.30, 2026-12-06)."""
    mesh, other = bridge.first_devices_mesh(("a", 2)), MeshModel((2, 3), (2,), ("a",))
    x0 = np.arange(4, dtype=np.int32).reshape(2, 2)
    call = "compiled(jax.device_put(x0, NamedSharding(other, P('a'))))"
    case = scripted_case(f"{call}, compiled = jax.jit(lambda x: x * 2 + 1, in_shardings=NamedSharding(mesh, "
                         f"P('a'))).lower(x).compile(); {describe_mesh(mesh)}, other {describe_mesh(other)}",
                         ["compiled = jax.jit(lambda x: x * 2 + 1, in_shardings=NamedSharding(mesh, P('a')))"
                          ".lower(jax.device_put(x0, NamedSharding(mesh, P('a')))).compile()",
                          "try:", f"    print({call})", "except Exception as e:",
                          "    print('raised:', type(e).__name__, e)"],
                         meshes={"mesh": mesh, "other": other}, arrays={"x0": x0}, outcomes={"the call": call})
    sharding = bridge.named_sharding(mesh, ("a",))
    compiled = jax.jit(lambda v: v * 2 + 1, in_shardings=sharding).lower(jax.device_put(x0, sharding)).compile()
    case.rejects("the call", lambda: compiled(jax.device_put(x0, bridge.named_sharding(other, ("a",)))), (ValueError,))
