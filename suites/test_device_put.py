"""device_put round trips, where each shard lands, resharding, and computation following its
inputs' sharding; values are compared with numpy and placements with the reference model."""


from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conformance.checking import isolation
from conformance.checking.case import Case

from conformance.checking.layouts import check_layout, layout_case
from conformance.checking.repro import check_in_a_subprocess
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel, block_slices, normalize_index
from strategies import arrays, assembly, dtype_of, dtypes, layouts, layouts_sharing_shape, meshes, supported_dtype_names
from strategies.arrays import SMALL_DTYPES
from strategies.tutorial import tutorial_array, tutorial_examples, tutorial_layouts

pytestmark = pytest.mark.device_put
DEVICES = bridge.live_device_ids()
DTYPES = supported_dtype_names(compat.x64_enabled())
TUTORIAL_LAYOUTS = tutorial_layouts(bridge.tutorial_mesh_ids((4, 2)))


@dataclass(frozen=True)
class HostValuePut:
    """A host value ``x`` put onto ``layout`` (what a known deviation's trigger reads)."""

    layout: Layout
    x: np.ndarray


@st.composite
def layouts_with_arrays(draw, **layout_kwargs):
    """A congruent layout and an array of its shape, of any supported dtype and any values."""
    layout = draw(layouts(DEVICES, **layout_kwargs))
    return layout, draw(arrays(draw(dtypes(DTYPES)), layout.shape))


def special_values_example() -> tuple:
    """Float32 values whose bits a careless copy loses (-0.0, a NaN with a payload, infinities, a
    subnormal, the extremes), cut over every device: an explicit example, since a random draw does
    not hold them all every time."""
    bits = np.array([0x80000000, 0x7FC00001, 0x7F800000, 0xFF800000, 0x00000001, 0x7F7FFFFF,
                     0xFF7FFFFF, 0x3F800000], dtype=np.uint32)
    n = len(DEVICES)
    x = np.resize(bits, 2 * n).view(np.float32)
    return Layout(MeshModel(DEVICES, (n,), ("a",)), ("a",), x.shape), x


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # (excuses counts over the examples)
@given(example=layouts_with_arrays())
@tutorial_examples(TUTORIAL_LAYOUTS, lambda layout: {"example": (layout, tutorial_array())})
@example(example=special_values_example())
def test_round_trip_preserves_bits(example, excuses):
    """Host -> sharded -> host returns the same dtype, shape and bits, for every dtype and value
    (NaN payloads, -0.0, subnormals, extremes)."""
    with excuses.way([HostValuePut(*example)]):
        check_round_trip(*example)


def check_round_trip(layout: Layout, x: np.ndarray) -> None:
    case = layout_case(layout, "np.asarray(jax.device_put(x, sharding))",
                       ["y = jax.device_put(x, sharding)", "print(np.asarray(y))"], x=x,
                       outcomes={"device_put": "jax.device_put(x, sharding)", "y.dtype": "np.dtype(y.dtype).name",
                                 "y.shape": "tuple(y.shape)", "np.asarray(y)": "y"})
    y = case.accepts("device_put", lambda: jax.device_put(x, bridge.layout_sharding(layout)))
    case.equal("y.dtype", np.dtype(y.dtype).name, x.dtype.name)
    case.equal("y.shape", tuple(y.shape), x.shape)
    case.same_bits("np.asarray(y)", np.asarray(y), x)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=layouts_with_arrays())
@tutorial_examples(TUTORIAL_LAYOUTS, lambda layout: {"example": (layout, tutorial_array())})
@example(example=special_values_example())
def test_every_shard_holds_its_block(example, excuses):
    """Each addressable shard of device_put(x, sharding) is on the device the model names and
    holds x[block] for that device's block."""
    with excuses.way([HostValuePut(*example)]):
        check_every_shard(*example)


def check_every_shard(layout: Layout, x: np.ndarray) -> None:
    case = layout_case(layout, "jax.device_put(x, sharding).addressable_shards",
                       ["y = jax.device_put(x, sharding)",
                        "for s in y.addressable_shards: print(s.device, s.index, np.asarray(s.data))"],
                       x=x, outcomes={"shard": "y"})
    check_layout(case, jax.device_put(x, bridge.layout_sharding(layout)), layout, x)


@st.composite
def reshard_chains(draw):
    """Three layouts of one non-empty shape over independently drawn meshes (sub-meshes and
    reorderings included), and an array for them."""
    mesh_list = [draw(meshes(DEVICES)) for _ in range(3)]
    chain = draw(layouts_sharing_shape(mesh_list, draw(st.integers(0, 3)), zero_size=False))
    x = draw(arrays(draw(dtypes(SMALL_DTYPES)), chain[0].shape))
    return chain, x


@given(example=reshard_chains())
def test_resharding_chain_keeps_values_and_ends_in_last_layout(example):
    """device_put of a non-empty array through s1 -> s2 -> s3 keeps every value and leaves the
    array laid out as s3 (zero-size arrays: test_reshard_zero_size_array_onto_reordered_mesh)."""
    (first, second, third), x = example
    case = layout_case(first, "device_put(device_put(device_put(x, s1), s2), s3)",
                       ["y1 = jax.device_put(x, sharding)", "y2 = jax.device_put(y1, s2)",
                        "y = jax.device_put(y2, s3)"],
                       x=x, extra_layouts={"s2": second, "s3": third},
                       outcomes={"device_put to s2": "jax.device_put(y1, s2)", "values after resharding to s2": "y2",
                                 "device_put to s3": "jax.device_put(y2, s3)", "values after resharding to s3": "y",
                                 "result sharding is_equivalent_to s3":
                                 f"y.sharding.is_equivalent_to(s3, {third.rank})",
                                 "shard": "y"})
    y = jax.device_put(x, bridge.layout_sharding(first))
    for step, layout in (("s2", second), ("s3", third)):
        y = case.accepts(f"device_put to {step}", lambda: jax.device_put(y, bridge.layout_sharding(layout)))  # noqa: B023 - called in this iteration
        case.same_bits(f"values after resharding to {step}", np.asarray(y), x)
    case.true("result sharding is_equivalent_to s3",
              y.sharding.is_equivalent_to(bridge.layout_sharding(third), third.rank))
    check_layout(case, y, third, x)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=layouts_with_arrays())
def test_device_get_round_trip(example, excuses):
    """jax.device_get of a sharded array is a numpy array with x's dtype, shape and bits."""
    with excuses.way([HostValuePut(*example)]):
        check_device_get(*example)


def check_device_get(layout: Layout, x: np.ndarray) -> None:
    case = layout_case(layout, "jax.device_get(jax.device_put(x, sharding))",
                       ["print(jax.device_get(jax.device_put(x, sharding)))"], x=x,
                       outcomes={"type(device_get(y))": "type(jax.device_get(jax.device_put(x, sharding))).__name__",
                                 "device_get(y)": "jax.device_get(jax.device_put(x, sharding))"})
    got = jax.device_get(jax.device_put(x, bridge.layout_sharding(layout)))
    case.equal("type(device_get(y))", type(got).__name__, "ndarray")
    case.same_bits("device_get(y)", got, x)


@given(example=layouts_with_arrays(max_rank=2))
def test_make_array_from_callback_round_trip(example):
    """make_array_from_callback asks only for the model's blocks, for every block of a device the
    process addresses, and assembles an array equal to x with the model's layout."""
    layout, x = example
    requested = []

    def callback(index):
        requested.append(index)
        return x[index]

    case = layout_case(layout, "jax.make_array_from_callback(x.shape, sharding, lambda i: x[i])",
                       ["requested = []  # the indices the callback is asked for",
                        "y = jax.make_array_from_callback(x.shape, sharding, "
                        "lambda i: (requested.append(i), x[i])[1])"],
                       x=x, outcomes={"blocks requested from the callback":
                                      "sorted({tuple(s.indices(n)[:2] for s, n in zip(i, x.shape)) "
                                      "for i in requested})",
                                      "np.asarray(y)": "y", "shard": "y"})
    y = jax.make_array_from_callback(x.shape, bridge.layout_sharding(layout), callback)
    asked = {normalize_index(index, x.shape) for index in requested}
    case.equal("blocks requested from the callback", sorted(asked),  # (each process: its own devices')
               sorted({layout.block(d) for d in bridge.addressable_ids(layout.mesh.device_ids)}))
    case.same_bits("np.asarray(y)", np.asarray(y), x)
    check_layout(case, y, layout, x)


@given(example=layouts_with_arrays(max_rank=2))
def test_make_array_from_single_device_arrays_round_trip(example):
    """make_array_from_single_device_arrays, given x[block] on each device as the model says (each
    process: on the devices it addresses), assembles x with the model's layout."""
    layout, x = example
    by_id = bridge.devices_by_id()
    pieces = [jax.device_put(x[block_slices(layout.block(d))], by_id[d])
              for d in bridge.addressable_ids(layout.mesh.device_ids)]  # (this process's devices: all, in one)
    blocks = {d: block_slices(layout.block(d)) for d in layout.mesh.device_ids}
    case = layout_case(layout, "jax.make_array_from_single_device_arrays(x.shape, sharding, pieces)", [
        f"blocks = {blocks!r}  # the model's block of each device",
        "pieces = [jax.device_put(x[idx], devices[d]) for d, idx in blocks.items()]",
        "y = jax.make_array_from_single_device_arrays(x.shape, sharding, pieces)"], x=x,
        outcomes={"make_array_from_single_device_arrays":
                  "jax.make_array_from_single_device_arrays(x.shape, sharding, pieces)",
                  "np.asarray(y)": "y", "shard": "y"})
    y = case.accepts("make_array_from_single_device_arrays",
                     lambda: jax.make_array_from_single_device_arrays(
                         x.shape, bridge.layout_sharding(layout), pieces))
    case.same_bits("np.asarray(y)", np.asarray(y), x)
    check_layout(case, y, layout, x)


# Elementwise operations: (name, jax function, numpy function, dtype, rtol, atol). Integer ops are
# exact. Float rtol allows a few float32 ulps between XLA's and numpy's transcendental functions;
# float atol is the smallest normal float32, because XLA's CPU backend flushes subnormal results to
# zero (1e-20 * 1e-20 is 0 there, 1e-40 in numpy) whatever the sharding.
TINY = float(np.finfo(np.float32).tiny)
ELEMENTWISE = {
    "sin": (jnp.sin, np.sin, "float32", 2e-6, 2e-6),
    "cos": (jnp.cos, np.cos, "float32", 2e-6, 2e-6),
    "exp": (jnp.exp, np.exp, "float32", 2e-6, TINY),
    "add_one": (lambda a: a + 1, lambda a: a + np.float32(1), "float32", 0.0, TINY),
    "square": (lambda a: a * a, lambda a: a * a, "float32", 0.0, TINY),
    "int_times_two": (lambda a: a * 2, lambda a: a * np.int32(2), "int32", 0.0, 0.0),
    "int_negative": (jnp.negative, np.negative, "int32", 0.0, 0.0),
}
# Each operation's jax function as a script spells it.
ELEMENTWISE_SOURCES = {"sin": "jnp.sin", "cos": "jnp.cos", "exp": "jnp.exp", "add_one": "lambda a: a + 1",
                       "square": "lambda a: a * a", "int_times_two": "lambda a: a * 2",
                       "int_negative": "jnp.negative"}


@st.composite
def elementwise_examples(draw):
    """An elementwise op, a congruent layout of rank <= 2 and an array of the op's dtype."""
    name = draw(st.sampled_from(sorted(ELEMENTWISE)))
    layout = draw(layouts(DEVICES, max_rank=2, max_side=2, zero_size=False))
    x = draw(arrays(dtype_of(ELEMENTWISE[name][2]), layout.shape, finite=True, max_magnitude=10.0))
    return name, layout, x


@given(example=elementwise_examples())
@tutorial_examples(TUTORIAL_LAYOUTS, lambda layout: {"example": ("sin", layout, tutorial_array())})
def test_elementwise_ops_follow_input_sharding(example):
    """An elementwise op on a sharded non-empty array (jnp.sin(y) as in the tutorial) returns
    numpy's values, laid out like its input: equivalent sharding, the model's blocks on the model's
    devices."""
    name, layout, x = example
    fn, reference, _, rtol, atol = ELEMENTWISE[name]
    case = layout_case(layout, f"{name}(jax.device_put(x, sharding))",
                       ["y = jax.device_put(x, sharding)", f"{name} = {ELEMENTWISE_SOURCES[name]}",
                        f"z = {name}(y)", "print(z.sharding, np.asarray(z))"], x=x,
                       outcomes={name: f"{name}(y)", f"{name}(y)": "z",
                                 f"{name}(y).sharding.is_equivalent_to(y.sharding)":
                                     f"z.sharding.is_equivalent_to(y.sharding, {layout.rank})"})
    y = jax.device_put(x, bridge.layout_sharding(layout))
    z = case.accepts(name, lambda: fn(y))
    with np.errstate(over="ignore"):  # integer ops wrap around, as in JAX
        expected = reference(x)
    case.close(f"{name}(y)", np.asarray(z), expected, rtol=rtol, atol=atol)
    case.true(f"{name}(y).sharding.is_equivalent_to(y.sharding)",
              z.sharding.is_equivalent_to(y.sharding, layout.rank))
    check_layout(case, z, layout, what=f"{name}(y)")


@st.composite
def jit_examples(draw):
    """Input and output layouts of one shape over meshes of the same devices in the same order
    (their shapes and axis names drawn independently), and an int32 array."""
    in_mesh = draw(meshes(DEVICES))
    out_mesh = draw(meshes(in_mesh.device_ids, subsets=False, reorder=False))
    in_layout, out_layout = draw(layouts_sharing_shape([in_mesh, out_mesh], draw(st.integers(0, 2)),
                                                       zero_size=False))
    x = draw(arrays(np.int32, in_layout.shape))
    return in_layout, out_layout, x


def jit_case(in_layout, out_layout, x, outcomes=None, *, runs=True):
    """(``runs``: the script runs the call, else it leaves it to the verdict, for a call that
    should raise.)"""
    call = ["z = f(jax.device_put(x, sharding))", "print(z.sharding, np.asarray(z))"] if runs else []
    return layout_case(in_layout, "jax.jit(lambda a: a * 3 - 1, in_shardings=sharding, "
                                  "out_shardings=out)(jax.device_put(x, sharding))", [
        "f = jax.jit(lambda a: a * 3 - 1, in_shardings=sharding, out_shardings=out)", *call],
        x=x, extra_layouts={"out": out_layout}, outcomes=outcomes)


def times_three_minus_one(a):
    """A jitted body defined once, so equal draws reuse its compilation (a lambda would not)."""
    return a * 3 - 1


def plus_one(a):
    return a + 1


def jit_call(in_layout, out_layout, x):
    f = jax.jit(times_three_minus_one, in_shardings=bridge.layout_sharding(in_layout),
                out_shardings=bridge.layout_sharding(out_layout))
    return lambda: f(jax.device_put(x, bridge.layout_sharding(in_layout)))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # (excuses counts over the examples)
@given(example=jit_examples())
def test_jit_in_and_out_shardings(example, known_deviations, excuses, warm_interpreter):
    """jit(f, in_shardings=s1, out_shardings=s2) over one device assignment (same devices, same
    order), on a non-empty x committed to s1, returns numpy's f(x) laid out as s2 says."""
    in_layout, out_layout, x = example
    case = jit_case(in_layout, out_layout, x, {"jit": "f(jax.device_put(x, sharding))", "output shard": "z"})
    aborts = known_deviations.covers(test_jit_between_two_meshes_of_one_device_order_compiles)
    if in_layout.mesh != out_layout.mesh and aborts:
        # This JAX's XLA may abort the process on a change of mesh (that test's known deviation):
        # the case runs in a warm interpreter first, and in this process only if it lives.
        if isolation.aborted_in_a_warm_interpreter(case, warm_interpreter, excuses, aborts, example,
                                                    "an XLA abort between two meshes in a warm interpreter"):
            return
    z = case.accepts("jit", jit_call(in_layout, out_layout, x))
    with np.errstate(over="ignore"):  # int32 wraps around, as in JAX
        expected = x * np.int32(3) - np.int32(1)
    check_layout(case, z, out_layout, expected, what="output shard")


@st.composite
def mixed_device_jit_examples(draw):
    """Input and output layouts of one shape whose meshes list different devices, or the same
    devices in another order."""
    in_mesh = draw(meshes(DEVICES))
    out_mesh = draw(meshes(DEVICES).filter(lambda m: m.device_ids != in_mesh.device_ids))
    in_layout, out_layout = draw(layouts_sharing_shape([in_mesh, out_mesh], draw(st.integers(0, 2))))
    return in_layout, out_layout, np.zeros(in_layout.shape, np.int32)


@bridge.needs_devices(2, "for two device assignments")
@given(example=mixed_device_jit_examples())
def test_jit_rejects_different_device_assignments(example):
    """jit whose in_shardings and out_shardings have different device assignments (other devices,
    or the same devices in another order) raises ValueError rather than running on either."""
    in_layout, out_layout, x = example
    case = jit_case(in_layout, out_layout, x, {"jit over two device sets": "f(jax.device_put(x, sharding))"},
                    runs=False)
    case.rejects("jit over two device sets", jit_call(in_layout, out_layout, x), (ValueError,))


@bridge.needs_devices(2, "to cut an array")
def test_elementwise_op_on_zero_size_array_keeps_sharding():
    """jnp.sin of a zero-size array sharded over every device keeps the input's sharding, as it does
    for non-empty arrays (the property above)."""
    layout = Layout(bridge.line_mesh(), ("a",), (0, 2))
    x = np.zeros(layout.shape, np.float32)
    case = layout_case(layout, "jnp.sin(jax.device_put(x, sharding)).sharding",
                       ["print(jnp.sin(jax.device_put(x, sharding)).sharding)"], x=x,
                       outcomes={"jnp.sin(y).sharding.is_equivalent_to(y.sharding)":
                                 f"jnp.sin(jax.device_put(x, sharding)).sharding"
                                 f".is_equivalent_to(sharding, {layout.rank})"})
    z = jnp.sin(jax.device_put(x, bridge.layout_sharding(layout)))
    case.true("jnp.sin(y).sharding.is_equivalent_to(y.sharding)",
              z.sharding.is_equivalent_to(bridge.layout_sharding(layout), layout.rank))


@bridge.needs_devices(2, "to cut an array")
def test_jit_out_shardings_on_zero_size_array():
    """jit with out_shardings P(None, 'a') over every device, on a zero-size (0, n) array, returns
    shards of the model's shard shape (0, 1), as device_put does."""
    mesh = bridge.line_mesh()
    layout = Layout(mesh, (None, "a"), (0, mesh.size))
    x = np.zeros(layout.shape, np.int32)
    case = layout_case(layout, "jax.jit(lambda a: a + 1, out_shardings=sharding)(x)", [
        "z = jax.jit(lambda a: a + 1, out_shardings=sharding)(x)",
        "print(z.sharding.shard_shape(z.shape), [s.data.shape for s in z.addressable_shards])"], x=x,
        # (the jit check's outcome is the result's sharding: printing the result itself would
        # read its shards back, which fails where the layout does, a check of its own)
        outcomes={"jit": "jax.jit(lambda a: a + 1, out_shardings=sharding)(x).sharding",
                  "z.sharding.is_equivalent_to(sharding)": f"z.sharding.is_equivalent_to(sharding, {layout.rank})",
                  "shard": "z"})
    z = case.accepts("jit", lambda: jax.jit(plus_one, out_shardings=bridge.layout_sharding(layout))(x))
    case.true("z.sharding.is_equivalent_to(sharding)",
              z.sharding.is_equivalent_to(bridge.layout_sharding(layout), layout.rank))
    check_layout(case, z, layout, x + 1)


@bridge.needs_devices(2, "to reorder a mesh")
def test_reshard_zero_size_array_onto_reordered_mesh():
    """device_put of a zero-size replicated array onto P('a') over the same devices in another order
    is accepted and laid out as the model says, as for non-empty arrays."""
    source = Layout(bridge.line_mesh(), (), (0, 1))
    target = Layout(bridge.line_mesh(reverse=True), ("a",), (0, 1))
    x = np.zeros(source.shape, np.float32)
    case = layout_case(source, "jax.device_put(jax.device_put(x, sharding), target)",
                       ["z = jax.device_put(jax.device_put(x, sharding), target)"],
                       x=x, extra_layouts={"target": target},
                       outcomes={"device_put": "jax.device_put(jax.device_put(x, sharding), target)",
                                 "z.sharding.is_equivalent_to(target)":
                                 f"z.sharding.is_equivalent_to(target, {target.rank})",
                                 "shard": "z"})
    y = jax.device_put(x, bridge.layout_sharding(source))
    z = case.accepts("device_put", lambda: jax.device_put(y, bridge.layout_sharding(target)))
    case.true("z.sharding.is_equivalent_to(target)",
              z.sharding.is_equivalent_to(bridge.layout_sharding(target), target.rank))
    check_layout(case, z, target, x)


@bridge.needs_devices(6, "for a (1, 3, 2, 1) mesh and a (6, 1) one over the same devices")
def test_jit_between_two_meshes_of_one_device_order_compiles(run_isolated):
    """jit(lambda a: a * 3 - 1) with in_shardings P(('x', 'y'), 'a') on a (1, 3, 2, 1) mesh and
    out_shardings P(('x',), ('b',)) on a (6, 1) mesh of the same devices in the same order returns
    numpy's answer; run in a subprocess because XLA's SPMD partitioner aborts the process on it
    (found by test_jit_in_and_out_shardings on 0.12.0.1 in CI, seed 635306368)."""
    ids = list(bridge.first_ids(bridge.live_device_ids(), 6))
    order = [ids[3], ids[2], ids[0], ids[4], ids[1], ids[5]]
    lines = [f"m1 = Mesh(np.array([devices[i] for i in {order}]).reshape(1, 3, 2, 1), ('x', 'a', 'b', 'y'))",
             f"m2 = Mesh(np.array([devices[i] for i in {order}]).reshape(6, 1), ('x', 'b'))",
             "s1, s2 = NamedSharding(m1, P(('x', 'y'), 'a')), NamedSharding(m2, P(('x',), ('b',)))",
             "f = jax.jit(lambda a: a * 3 - 1, in_shardings=s1, out_shardings=s2)",
             "print(np.asarray(f(jax.device_put(np.zeros((6, 6), np.int32), s1))).sum())"]
    check_in_a_subprocess("jit(a * 3 - 1) from P(('x', 'y'), 'a') on a (1, 3, 2, 1) mesh to P(('x',), ('b',)) "
                          "on a (6, 1) mesh of the same devices", lines, run_isolated, printed="-36",
                          what="sum of the result")


# --- arrays assembled from pieces in any order, over permuted meshes (issue 26) -----------------
ASSEMBLY_EXAMPLES = max(8, settings().max_examples // 10)


def assembly_case(layout: Layout, x, pieces, call: str, outcomes: dict, *, runs: bool = True):
    """A case whose script rebuilds the pieces ((device, values) pairs, in the order they are handed
    over) and, where ``runs``, the assembled array ``y``."""
    listed = [(d, np.asarray(data).tolist(), str(np.asarray(data).dtype)) for d, data in pieces]
    return layout_case(layout, call, [
        f"listed = {listed!r}  # (device, values, dtype) of each piece, in the order handed over",
        "pieces = [jax.device_put(np.array(v, dt), devices[d]) for d, v, dt in listed]",
        *(["y = jax.make_array_from_single_device_arrays(x.shape, sharding, pieces)"] if runs else [])],
        x=x, outcomes=outcomes)


def assembled_from(layout: Layout, x, pieces):
    by_id = bridge.devices_by_id()
    placed = [jax.device_put(data, by_id[d]) for d, data in pieces if d in bridge.addressable_of([d])]
    return lambda: jax.make_array_from_single_device_arrays(x.shape, bridge.layout_sharding(layout), placed)


@settings(max_examples=ASSEMBLY_EXAMPLES)
@given(example=assembly.assembly_examples(DEVICES))
def test_single_device_arrays_in_any_order_assemble_by_device(example):
    """make_array_from_single_device_arrays, given each device's block of x in any order over a
    mesh of permuted devices, assembles x: each piece goes to the device it is on, not to a
    position in the list."""
    layout, x, order = example
    pieces = assembly.pieces_of(layout, x, order)
    case = assembly_case(layout, x, pieces, "jax.make_array_from_single_device_arrays(x.shape, sharding, "
                         "pieces)  # pieces in any order", {
                             "make_array_from_single_device_arrays":
                                 "jax.make_array_from_single_device_arrays(x.shape, sharding, pieces)",
                             "np.asarray(y)": "y", "shard": "y"})
    y = case.accepts("make_array_from_single_device_arrays", assembled_from(layout, x, pieces))
    case.same_bits("np.asarray(y)", np.asarray(y), x)
    check_layout(case, y, layout, x)


@settings(max_examples=ASSEMBLY_EXAMPLES)
@given(example=assembly.assembly_examples(DEVICES))
def test_make_array_from_callback_over_a_permuted_mesh_puts_each_block_on_its_device(example):
    """make_array_from_callback over a mesh of permuted devices gives each device the callback's
    value for that device's block (the model's), so the array equals x."""
    layout, x, _ = example
    case = layout_case(layout, "jax.make_array_from_callback(x.shape, sharding, lambda i: x[i])  # permuted mesh",
                       ["y = jax.make_array_from_callback(x.shape, sharding, lambda i: x[i])"], x=x,
                       outcomes={"make_array_from_callback":
                                 "jax.make_array_from_callback(x.shape, sharding, lambda i: x[i])",
                                 "np.asarray(y)": "y", "shard": "y"})
    y = case.accepts("make_array_from_callback",
                     lambda: jax.make_array_from_callback(x.shape, bridge.layout_sharding(layout), lambda i: x[i]))
    case.same_bits("np.asarray(y)", np.asarray(y), x)
    check_layout(case, y, layout, x)


@settings(max_examples=ASSEMBLY_EXAMPLES)
@given(example=assembly.wrong_pieces(DEVICES))
def test_make_array_from_single_device_arrays_refuses_a_misplaced_or_misshapen_piece(example):
    """make_array_from_single_device_arrays refuses, with ValueError (as its checks state), pieces
    one of which is on a device outside the sharding, on another piece's device, or not of the
    sharding's shard shape."""
    layout, x, pieces, kind, victim = example
    case = assembly_case(layout, x, pieces, f"jax.make_array_from_single_device_arrays(x.shape, sharding, "
                         f"pieces)  # {kind} (the piece of device {victim})",
                         {"make_array_from_single_device_arrays refuses the pieces":
                          "jax.make_array_from_single_device_arrays(x.shape, sharding, pieces)"}, runs=False)
    case.rejects("make_array_from_single_device_arrays refuses the pieces",
                 assembled_from(layout, x, pieces), (ValueError,))


# --- One host value put on every process's devices ------------------------------------------------
# In a multi-controller run (--processes N) the mesh holds every process's devices and each process
# passes device_put the same host value, as JAX asks; device_put checks that it is the same
# everywhere (multihost_utils.assert_equal) before placing it. In one process the same calls run on
# that process's devices. The reproduction of each is a stand-alone script of two processes.

def across_processes_case(call: str, script_name: str) -> Case:
    return Case(f"{call} on every device of {jax.process_count()} process(es)",
                f"    python suites/bugs/{script_name}.py   # two processes of two CPU devices; exits 1 while "
                f"the bug is there")


def every_device_mesh() -> MeshModel:
    return MeshModel(DEVICES, (len(DEVICES),), ("a",))


def put_on_every_device_keeps_bits(x: np.ndarray, script_name: str) -> None:
    mesh = every_device_mesh()
    case = across_processes_case("jax.device_put(x, NamedSharding(mesh, P('a')))", script_name)
    y = case.accepts("device_put", lambda: jax.device_put(x, bridge.named_sharding(mesh, ("a",))))
    case.same_bits("np.asarray(y)", np.asarray(y), x)


def values_with(bits: int) -> np.ndarray:
    """float32 [0, 1.25, 2.5, ...] over two elements per device, the first element's bits ``bits``."""
    x = np.arange(2 * len(DEVICES), dtype=np.float32) * np.float32(1.25)
    x.view(np.uint32)[0] = bits
    return x


def test_device_put_of_a_value_holding_a_nan_keeps_its_bits_on_every_process():
    """device_put of a host float32 value holding a NaN onto every device (of every process) returns
    its bits, NaN included."""
    put_on_every_device_keeps_bits(values_with(0x7FC00000), "device_put_of_a_nan_across_processes")


def test_device_put_of_a_value_holding_a_subnormal_keeps_its_bits_on_every_process():
    """device_put of a host float32 value holding a subnormal onto every device (of every process)
    returns its bits, the subnormal included."""
    put_on_every_device_keeps_bits(values_with(0x00000060), "device_put_of_a_subnormal_across_processes")


def test_device_put_of_typed_keys_onto_every_process_keeps_their_data():
    """device_put of a typed PRNG key array onto every device (of every process) returns keys of the
    same key data."""
    mesh = every_device_mesh()
    keys = jax.random.split(jax.random.key(7), len(DEVICES))
    case = across_processes_case("jax.device_put(jax.random.split(jax.random.key(7), n), NamedSharding(mesh, P('a')))",
                                 "device_put_of_typed_keys_across_processes")
    y = case.accepts("device_put", lambda: jax.device_put(keys, bridge.named_sharding(mesh, ("a",))))
    case.same_bits("key_data(y)", np.asarray(jax.random.key_data(y)), np.asarray(jax.random.key_data(keys)))


def test_device_put_inside_an_explicit_mesh_context_lays_the_value_out_as_outside():
    """device_put of a host value onto a NamedSharding of an Explicit mesh over every device (of
    every process), inside that mesh's context, returns the value laid out as asked, as outside it."""
    mesh = every_device_mesh()
    x = np.arange(2 * len(DEVICES), dtype=np.float32)
    jmesh = bridge.jax_mesh(mesh, "Explicit")
    call = (f"with {compat.MESH_CONTEXT_SOURCE}(mesh): jax.device_put(x, NamedSharding(mesh, P('a')))"
            " on an Explicit mesh")
    case = across_processes_case(call, "device_put_inside_an_explicit_mesh_context_across_processes")
    with compat.mesh_context(jmesh, "Explicit"):
        y = case.accepts("device_put", lambda: jax.device_put(x, bridge.named_sharding(mesh, ("a",), "Explicit")))
    case.same_bits("np.asarray(y)", np.asarray(y), x)
    case.equal("y.sharding's spec", tuple(y.sharding.spec), ("a",))


@bridge.needs_devices(2, "for a mesh of two rows")
def test_device_put_of_an_eager_flip_of_a_cut_array_replicates_it_on_every_process():
    """device_put onto P() of jnp.flip of a two-element array cut over the rows of a (2, n/2) mesh of
    every device (of every process), an eager result, returns the flipped value replicated."""
    if len(DEVICES) % 2:
        pytest.skip(f"needs an even number of devices for a (2, n/2) mesh; this run has {len(DEVICES)}")
    mesh = MeshModel(DEVICES, (2, len(DEVICES) // 2), ("a", "b"))
    x = np.arange(2, dtype=np.uint32)
    case = across_processes_case("jax.device_put(jnp.flip(x, axis=0), NamedSharding(mesh, P())) of x cut as P('a')",
                                 "device_put_of_an_eager_result_across_processes")
    flipped = jnp.flip(bridge.placed(x, bridge.named_sharding(mesh, ("a",))), axis=0)
    y = case.accepts("device_put", lambda: jax.device_put(flipped, bridge.named_sharding(mesh, ())))
    case.same_bits("np.asarray(y)", np.asarray(y), x[::-1])
    case.true("y is replicated", y.sharding.is_fully_replicated)
