"""What traced code is told about layouts: ``jax.debug.inspect_array_sharding`` and
``jax.debug.visualize_array_sharding`` inside ``jit`` report the compiled layout of the traced value
(the model's layout for its in_shardings, or for a sharding constraint); inside a ``shard_map`` body
they report the body's local value, one block held whole by every device of the mesh; there,
the varying manual axes of its type (``jax.typeof(b).vma``) are exactly the mesh axes the block's
in_spec splits over; and on Explicit axes ``jax.typeof(x).sharding`` inside jit carries the
argument's spec."""

import io
from contextlib import redirect_stdout

import jax
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conformance.checking import verdict as verdicts
from conformance.checking.case import Case
from conformance.checking.repro import describe_mesh, scripted_case, shard_map_lines, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel, block_grid, spec_axes
from conformance.model.picture import PictureError, device_grid, parse_picture
from strategies import dividing_specs, meshes

pytestmark = pytest.mark.traced_inspection
DEVICES = bridge.live_device_ids()
EXAMPLES = max(8, settings().max_examples // 10)


def captured_lines(call: str) -> list:
    """Script lines that run ``call`` with what it prints caught in ``buffer`` (the picture), then
    print the callbacks' ``seen`` and the picture."""
    return ["buffer = io.StringIO()", "with contextlib.redirect_stdout(buffer):", f"    {call}",
            "print(seen, buffer.getvalue(), sep='\\n')"]


@st.composite
def traced_examples(draw):
    """A mesh of up to three axes; a float32 array of rank 1 or 2 (sides from 2, 4, 1, 8); a
    dividing spec for it as an argument and another as a constraint on a value computed from it."""
    mesh = draw(meshes(DEVICES, max_axes=3))
    shape = tuple(draw(st.lists(st.sampled_from((2, 4, 1, 8)), min_size=1, max_size=2)))
    return mesh, np.zeros(shape, np.float32), draw(dividing_specs(mesh, shape)), draw(dividing_specs(mesh, shape))


# Script lines reading a picture back into rows of device-id sets, as ``parse_picture`` and
# ``device_grid`` do (the cells between the top border's corners, their lines joined; labels
# "CPU 0,2,4,6"), for the verdict of a picture's check.
PICTURE_GRID_LINES = [
    *verdicts.PICTURE_LABELS_LINES,
    "def picture_grid(text):",
    "    return tuple(tuple(frozenset(int(i) for i in label.split(None, 1)[1].replace(' ', '').split(','))",
    "                       for label in cells) for cells in picture_labels(text))",
]


def check_picture(case: Case, text: str, layout: Layout, what: str) -> None:
    try:
        picture = parse_picture(text)
    except PictureError as e:
        case.fail(f"the {what} picture cannot be read ({e}) [{case.call}]\n{text}", check="reading the picture",
                  verdict=case.verdict("reading the picture", verdicts.returns_lines))
    case.equal(f"{what} picture (rows of device-id sets)", device_grid(picture), block_grid(layout))


@settings(max_examples=EXAMPLES)
@given(example=traced_examples())
def test_inspection_inside_jit_reports_the_compiled_layout(example):
    """Inside jit, inspect_array_sharding of an argument reports its in_shardings layout and of a
    constrained value the constraint's layout; visualize_array_sharding of the constrained value
    draws the model's block grid."""
    mesh, x, in_spec, inner_spec = example
    in_layout, inner_layout = Layout(mesh, in_spec, x.shape), Layout(mesh, inner_spec, x.shape)
    options = bridge.picture_options(inner_layout, bridge.platform().upper())
    s = lambda spec: f"NamedSharding(mesh, {spec_literal(spec)})"
    case = scripted_case(f"inside jax.jit(f, in_shardings={spec_literal(in_spec)}): inspect_array_sharding(x), and of "
                f"y = with_sharding_constraint(x + 1, {spec_literal(inner_spec)}), visualize_array_sharding(y) "
                f"on {describe_mesh(mesh)}, x float32{list(x.shape)}",
                ["import io, contextlib", *PICTURE_GRID_LINES, "seen = {}",
                        "def f(x):",
                        "    jax.debug.inspect_array_sharding(x, callback=lambda s: seen.setdefault('x', s))",
                        f"    y = jax.lax.with_sharding_constraint(x + 1, {s(inner_spec)})",
                        "    jax.debug.inspect_array_sharding(y, callback=lambda s: seen.setdefault('y', s))",
                        f"    jax.debug.visualize_array_sharding(y, use_color=False, **{options!r})",
                        "    return y",
                        *captured_lines(f"jax.jit(f, in_shardings={s(in_spec)})(x)")],
                meshes={"mesh": mesh}, arrays={"x": x},
                outcomes={"jit": f"jax.jit(f, in_shardings={s(in_spec)})(x)", "callbacks made": "sorted(seen)",
                          "inspect_array_sharding(x) index map": "seen['x']",
                          "inspect_array_sharding(y) index map": "seen['y']",
                          "visualize_array_sharding(y) picture (rows of device-id sets)":
                          "picture_grid(buffer.getvalue())",
                          "reading the picture": "picture_grid(buffer.getvalue())"})
    seen = {}
    inner = bridge.named_sharding(mesh, inner_spec)

    def f(x):
        jax.debug.inspect_array_sharding(x, callback=lambda s: seen.setdefault("x", s))
        y = compat.constrain(x + 1, inner)
        jax.debug.inspect_array_sharding(y, callback=lambda s: seen.setdefault("y", s))
        jax.debug.visualize_array_sharding(y, use_color=False, **options)
        return y

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        case.accepts("jit", lambda: jax.jit(f, in_shardings=bridge.named_sharding(mesh, in_spec))(
            bridge.jit_argument(x, bridge.named_sharding(mesh, in_spec))))
    case.equal("callbacks made", sorted(seen), ["x", "y"])
    case.index_map("inspect_array_sharding(x) index map", bridge.index_map(seen["x"], x.shape), in_layout.blocks)
    case.index_map("inspect_array_sharding(y) index map", bridge.index_map(seen["y"], x.shape), inner_layout.blocks)
    check_picture(case, buffer.getvalue(), inner_layout, "visualize_array_sharding(y)")


@st.composite
def body_examples(draw):
    """A mesh of up to three axes over every device; an array of rank 1 or 2 and its in_spec."""
    mesh = draw(meshes(DEVICES, max_axes=3, subsets=False))
    shape = tuple(draw(st.lists(st.sampled_from((2, 4, 1, 8)), min_size=1, max_size=2)))
    return mesh, np.zeros(shape, np.float32), draw(dividing_specs(mesh, shape))


@settings(max_examples=EXAMPLES)
@given(example=body_examples())
def test_inspection_inside_shard_map_reports_the_local_block(example):
    """Inside a shard_map body (replication check on, under jit), inspect_array_sharding of a block
    reports a layout of the block's shape held whole by every device of the mesh, and
    visualize_array_sharding draws it as one cell naming every device."""
    mesh, x, spec = example
    block_shape = Layout(mesh, spec, x.shape).shard_shape
    local = Layout(mesh, (), block_shape)
    options = bridge.picture_options(local, bridge.platform().upper())
    setup, call = shard_map_lines("body", (spec,), spec)
    case = scripted_case(f"inspect_array_sharding(b) and visualize_array_sharding(b) inside shard_map, in/out_specs "
                f"{spec_literal(spec)}, on {describe_mesh(mesh)}, x float32{list(x.shape)}",
                [*setup, "import io, contextlib", *PICTURE_GRID_LINES, "seen = []",
                        "def body(b):", "    jax.debug.inspect_array_sharding(b, callback=seen.append)",
                        f"    jax.debug.visualize_array_sharding(b, use_color=False, **{options!r})",
                        "    return b",
                        *captured_lines(f"jax.jit({call})(x)")], meshes={"mesh": mesh}, arrays={"x": x},
                outcomes={"shard_map": f"jax.jit({call})(x)", "callbacks made": "len(seen)",
                          "inspect_array_sharding(b) index map": "seen[0]",
                          "visualize_array_sharding(b) picture (rows of device-id sets)":
                          "picture_grid(buffer.getvalue())",
                          "reading the picture": "picture_grid(buffer.getvalue())"})
    seen = []

    def body(b):
        jax.debug.inspect_array_sharding(b, callback=seen.append)
        jax.debug.visualize_array_sharding(b, use_color=False, **options)
        return b

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        case.accepts("shard_map", lambda: jax.jit(compat.shard_map(body, bridge.jax_mesh(mesh), (spec,), spec,
                                                                   check=True))(x))
    case.equal("callbacks made", len(seen), 1)
    case.index_map("inspect_array_sharding(b) index map", bridge.index_map(seen[0], block_shape), local.blocks)
    check_picture(case, buffer.getvalue(), local, "visualize_array_sharding(b)")


@compat.requires("vma")
@settings(max_examples=EXAMPLES)
@given(example=body_examples())
def test_typeof_in_a_body_names_the_varying_axes(example):
    """Inside a shard_map body, the varying axes of jax.typeof(b) (.vma) are the set of mesh axes
    b's in_spec splits over, and a psum over them leaves none."""
    mesh, x, spec = example
    named = frozenset(name for axes in spec_axes(spec) for name in axes)
    setup, call = shard_map_lines("body", (spec,), ())
    case = scripted_case(f"jax.typeof(b).vma inside shard_map, in_specs {spec_literal(spec)}, on {describe_mesh(mesh)}",
                [*setup, "seen = []", "def body(b):",
                        f"    seen.append(frozenset({compat.VARYING_AXES_SOURCE.format('b')}))",
                        f"    t = jax.lax.psum(b, {tuple(sorted(named))!r})",
                        f"    seen.append(frozenset({compat.VARYING_AXES_SOURCE.format('t')}))",
                        "    return t", f"jax.jit({call})(x)", "print(seen)"], meshes={"mesh": mesh}, arrays={"x": x},
                outcomes={"shard_map": f"jax.jit({call})(x)", "jax.typeof(b).vma": "seen[0]",
                          "jax.typeof(psum(b, those axes)).vma": "seen[1]"})
    seen = []

    def body(b):
        seen.append(compat.varying_axes(jax.typeof(b)))
        total = jax.lax.psum(b, tuple(sorted(named)))
        seen.append(compat.varying_axes(jax.typeof(total)))
        return total

    case.accepts("shard_map",
                 lambda: jax.jit(compat.shard_map(body, bridge.jax_mesh(mesh), (spec,), (), check=True))(x))
    case.equal("jax.typeof(b).vma", seen[0], named)
    case.equal("jax.typeof(psum(b, those axes)).vma", seen[1], frozenset())


@compat.requires("explicit_sharding")
@settings(max_examples=3 * EXAMPLES)  # traced and lowered, never compiled: cheap
@given(example=traced_examples())
@example(example=(MeshModel(tuple(DEVICES), (len(DEVICES),), ("a",)), np.zeros(len(DEVICES), np.float32), ("a",), ()))
def test_typeof_on_explicit_axes_carries_the_spec(example):
    """On a mesh of Explicit axes, jax.typeof(x).sharding inside jit is the argument's sharding: the
    mesh's axis names and sizes, and a spec that lays x out as the argument's does."""
    mesh, x, spec, _ = example
    layout = Layout(mesh, spec, x.shape)
    case = scripted_case(f"jax.typeof(x).sharding inside jit on an Explicit {describe_mesh(mesh)}, "
                f"x float32{list(x.shape)} {spec_literal(spec)}",
                ["y = jax.device_put(x, NamedSharding(mesh, " + spec_literal(spec) + "))", "seen = []"],
                       meshes={"mesh": mesh}, axis_type="Explicit", arrays={"x": x},
                       in_context=["jax.jit(lambda y: seen.append(jax.typeof(y).sharding) or y).lower(y)",
                                   "print(seen[0])"],
                       # (the blocks of the spec JAX typed x with, on our mesh)
                       outcomes={"jit": "jax.jit(lambda y: seen.append(jax.typeof(y).sharding) or y).lower(y)",
                                 "jax.typeof(x).sharding mesh axes":
                                 "tuple(zip(seen[0].mesh.axis_names, seen[0].mesh.axis_sizes))",
                                 "blocks of jax.typeof(x).sharding's spec": "NamedSharding(mesh, seen[0].spec)"})
    sharding = bridge.named_sharding(mesh, spec, "Explicit")
    y = bridge.placed(x, sharding)
    seen = []
    with compat.mesh_context(bridge.jax_mesh(mesh, "Explicit"), "Explicit"):
        # (traced under jit as a call traces it, and lowered; not compiled: each example traces afresh)
        case.accepts("jit", lambda: jax.jit(lambda y: seen.append(compat.feature("typeof")(y).sharding) or y).lower(y))
    got = seen[0]  # on an abstract mesh (names and sizes, no devices): read its spec over ours
    case.equal("jax.typeof(x).sharding mesh axes", tuple(zip(got.mesh.axis_names, got.mesh.axis_sizes)),
               tuple(zip(mesh.axis_names, mesh.shape)))
    typed = Layout(mesh, compat.spec_entries(got.spec), x.shape)
    case.index_map("blocks of jax.typeof(x).sharding's spec", typed.blocks, layout.blocks)


def test_inspect_array_sharding_in_a_checked_body():
    """inspect_array_sharding inside a shard_map body with the replication check on is accepted and
    reports the local block held whole by every device (the deterministic case of the property
    above)."""
    mesh = bridge.line_mesh()
    n = mesh.size
    x = np.zeros((n * n,), np.float32)
    setup, call = shard_map_lines("body", ((("a",),),), (("a",),))
    case = scripted_case(f"inspect_array_sharding(b) inside {call} on {describe_mesh(mesh)}",
                [*setup, "seen = []", "def body(b):", "    jax.debug.inspect_array_sharding(b, callback=seen.append)",
                        "    return b", f"jax.jit({call})(x)", "print(seen)"], meshes={"mesh": mesh}, arrays={"x": x},
                outcomes={"shard_map": f"jax.jit({call})(x)", "inspect_array_sharding(b) index map": "seen[0]"})
    seen = []

    def body(b):
        jax.debug.inspect_array_sharding(b, callback=seen.append)
        return b

    case.accepts("shard_map", lambda: jax.jit(compat.shard_map(body, bridge.jax_mesh(mesh), ((("a",),),), (("a",),),
                                                               check=True))(x))
    case.index_map("inspect_array_sharding(b) index map", bridge.index_map(seen[0], (n,)),
                   Layout(mesh, (), (n,)).blocks)
