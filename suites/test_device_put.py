"""device_put round trips, where each shard lands, resharding, and computation following its
inputs' sharding; values are compared with numpy and placements with the reference model."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.cases import check_layout, layout_case
from conformance.jaxbridge import devices_by_id, layout_sharding, line_mesh, needs_devices
from conformance.model import Layout, block_slices, normalize_index
from strategies import arrays, dtype_of, dtypes, layouts, layouts_sharing_shape, meshes
from strategies.arrays import SMALL_DTYPES
from strategies.tutorial import tutorial_array, tutorial_examples

pytestmark = pytest.mark.device_put


@st.composite
def layouts_with_arrays(draw, **layout_kwargs):
    """A congruent layout and an array of its shape, of any supported dtype and any values."""
    layout = draw(layouts(**layout_kwargs))
    return layout, draw(arrays(draw(dtypes()), layout.shape))


@given(case=layouts_with_arrays())
@tutorial_examples(lambda layout: {"case": (layout, tutorial_array())})
def test_round_trip_preserves_bits(case):
    """Host -> sharded -> host returns the same dtype, shape and bits, for every dtype and value
    (NaN payloads, -0.0, subnormals, extremes)."""
    layout, x = case
    check = layout_case(layout, "np.asarray(jax.device_put(x, sharding))",
                        ["y = jax.device_put(x, sharding)", "print(np.asarray(y))"], x=x)
    y = check.accepts("device_put", lambda: jax.device_put(x, layout_sharding(layout)))
    check.equal("y.dtype", np.dtype(y.dtype).name, x.dtype.name)
    check.equal("y.shape", tuple(y.shape), x.shape)
    check.same_bits("np.asarray(y)", np.asarray(y), x)


@given(case=layouts_with_arrays())
@tutorial_examples(lambda layout: {"case": (layout, tutorial_array())})
def test_every_shard_holds_its_block(case):
    """Each addressable shard of device_put(x, sharding) is on the device the model names and
    holds x[block] for that device's block."""
    layout, x = case
    check = layout_case(layout, "jax.device_put(x, sharding).addressable_shards",
                        ["y = jax.device_put(x, sharding)",
                         "for s in y.addressable_shards: print(s.device, s.index, np.asarray(s.data))"],
                        x=x)
    check_layout(check, jax.device_put(x, layout_sharding(layout)), layout, x)


@st.composite
def reshard_chains(draw):
    """Three layouts of one non-empty shape over independently drawn meshes (sub-meshes and
    reorderings included), and an array for them."""
    mesh_list = [draw(meshes()) for _ in range(3)]
    chain = draw(layouts_sharing_shape(mesh_list, draw(st.integers(0, 3)), zero_size=False))
    x = draw(arrays(draw(dtypes(SMALL_DTYPES)), chain[0].shape))
    return chain, x


@given(case=reshard_chains())
def test_resharding_chain_keeps_values_and_ends_in_last_layout(case):
    """device_put of a non-empty array through s1 -> s2 -> s3 keeps every value and leaves the
    array laid out as s3 (zero-size arrays: test_reshard_zero_size_array_onto_reordered_mesh)."""
    (first, second, third), x = case
    check = layout_case(first, "device_put(device_put(device_put(x, s1), s2), s3)",
                        ["y = jax.device_put(jax.device_put(jax.device_put(x, sharding), s2), s3)"],
                        x=x, extra_layouts={"s2": second, "s3": third})
    y = jax.device_put(x, layout_sharding(first))
    for step, layout in (("s2", second), ("s3", third)):
        y = check.accepts(f"device_put to {step}", lambda: jax.device_put(y, layout_sharding(layout)))
        check.same_bits(f"values after resharding to {step}", np.asarray(y), x)
    check.true("result sharding is_equivalent_to s3",
               y.sharding.is_equivalent_to(layout_sharding(third), third.rank))
    check_layout(check, y, third, x)


@given(case=layouts_with_arrays())
def test_device_get_round_trip(case):
    """jax.device_get of a sharded array is a numpy array with x's dtype, shape and bits."""
    layout, x = case
    check = layout_case(layout, "jax.device_get(jax.device_put(x, sharding))",
                        ["print(jax.device_get(jax.device_put(x, sharding)))"], x=x)
    got = jax.device_get(jax.device_put(x, layout_sharding(layout)))
    check.equal("type(device_get(y))", type(got).__name__, "ndarray")
    check.same_bits("device_get(y)", got, x)


@given(case=layouts_with_arrays(max_rank=2))
def test_make_array_from_callback_round_trip(case):
    """make_array_from_callback asks only for the model's blocks, for every block, and assembles
    an array equal to x with the model's layout."""
    layout, x = case
    requested = []

    def callback(index):
        requested.append(index)
        return x[index]

    check = layout_case(layout, "jax.make_array_from_callback(x.shape, sharding, lambda i: x[i])",
                        ["y = jax.make_array_from_callback(x.shape, sharding, lambda i: x[i])"], x=x)
    y = jax.make_array_from_callback(x.shape, layout_sharding(layout), callback)
    asked = {normalize_index(index, x.shape) for index in requested}
    check.equal("blocks requested from the callback", sorted(asked),
                sorted(set(layout.blocks.values())))
    check.same_bits("np.asarray(y)", np.asarray(y), x)
    check_layout(check, y, layout, x)


@given(case=layouts_with_arrays(max_rank=2))
def test_make_array_from_single_device_arrays_round_trip(case):
    """make_array_from_single_device_arrays, given x[block] on each device as the model says,
    assembles x with the model's layout."""
    layout, x = case
    by_id = devices_by_id()
    pieces = [jax.device_put(x[block_slices(layout.block(d))], by_id[d]) for d in layout.mesh.device_ids]
    blocks = {d: block_slices(layout.block(d)) for d in layout.mesh.device_ids}
    check = layout_case(layout, "jax.make_array_from_single_device_arrays(x.shape, sharding, pieces)", [
        f"blocks = {blocks!r}  # the model's block of each device",
        "pieces = [jax.device_put(x[idx], devices[d]) for d, idx in blocks.items()]",
        "y = jax.make_array_from_single_device_arrays(x.shape, sharding, pieces)"], x=x)
    y = check.accepts("make_array_from_single_device_arrays",
                      lambda: jax.make_array_from_single_device_arrays(
                          x.shape, layout_sharding(layout), pieces))
    check.same_bits("np.asarray(y)", np.asarray(y), x)
    check_layout(check, y, layout, x)


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


@st.composite
def elementwise_cases(draw):
    """An elementwise op, a congruent layout of rank <= 2 and an array of the op's dtype."""
    name = draw(st.sampled_from(sorted(ELEMENTWISE)))
    layout = draw(layouts(max_rank=2, max_side=2, zero_size=False))
    x = draw(arrays(dtype_of(ELEMENTWISE[name][2]), layout.shape, finite=True, max_magnitude=10.0))
    return name, layout, x


@given(case=elementwise_cases())
@tutorial_examples(lambda layout: {"case": ("sin", layout, tutorial_array())})
def test_elementwise_ops_follow_input_sharding(case):
    """An elementwise op on a sharded non-empty array (jnp.sin(y) as in the tutorial) returns
    numpy's values, laid out like its input: equivalent sharding, the model's blocks on the model's
    devices."""
    name, layout, x = case
    fn, reference, _, rtol, atol = ELEMENTWISE[name]
    check = layout_case(layout, f"{name}(jax.device_put(x, sharding))",
                        ["y = jax.device_put(x, sharding)", f"z = {name}(y)  # see ELEMENTWISE",
                         "print(z.sharding, np.asarray(z))"], x=x)
    y = jax.device_put(x, layout_sharding(layout))
    z = check.accepts(name, lambda: fn(y))
    with np.errstate(over="ignore"):  # integer ops wrap around, as in JAX
        expected = reference(x)
    check.close(f"{name}(y)", np.asarray(z), expected, rtol=rtol, atol=atol)
    check.true(f"{name}(y).sharding.is_equivalent_to(y.sharding)",
               z.sharding.is_equivalent_to(y.sharding, layout.rank))
    check_layout(check, z, layout, what=f"{name}(y)")


@st.composite
def jit_cases(draw):
    """Input and output layouts of one shape over meshes of the same devices in the same order
    (their shapes and axis names drawn independently), and an int32 array."""
    in_mesh = draw(meshes())
    out_mesh = draw(meshes(in_mesh.device_ids, subsets=False, reorder=False))
    in_layout, out_layout = draw(layouts_sharing_shape([in_mesh, out_mesh], draw(st.integers(0, 2)),
                                                       zero_size=False))
    x = draw(arrays(np.int32, in_layout.shape))
    return in_layout, out_layout, x


def jit_case(in_layout, out_layout, x):
    return layout_case(in_layout, "jax.jit(lambda a: a * 3 - 1, in_shardings=sharding, "
                                  "out_shardings=out)(jax.device_put(x, sharding))", [
        "f = jax.jit(lambda a: a * 3 - 1, in_shardings=sharding, out_shardings=out)",
        "z = f(jax.device_put(x, sharding))", "print(z.sharding, np.asarray(z))"],
        x=x, extra_layouts={"out": out_layout})


def times_three_minus_one(a):
    """A jitted body defined once, so equal draws reuse its compilation (a lambda would not)."""
    return a * 3 - 1


def plus_one(a):
    return a + 1


def jit_call(in_layout, out_layout, x):
    f = jax.jit(times_three_minus_one, in_shardings=layout_sharding(in_layout),
                out_shardings=layout_sharding(out_layout))
    return lambda: f(jax.device_put(x, layout_sharding(in_layout)))


@given(case=jit_cases())
def test_jit_in_and_out_shardings(case):
    """jit(f, in_shardings=s1, out_shardings=s2) over one device assignment (same devices, same
    order), on a non-empty x committed to s1, returns numpy's f(x) laid out as s2 says."""
    in_layout, out_layout, x = case
    check = jit_case(in_layout, out_layout, x)
    z = check.accepts("jit", jit_call(in_layout, out_layout, x))
    with np.errstate(over="ignore"):  # int32 wraps around, as in JAX
        expected = x * np.int32(3) - np.int32(1)
    check_layout(check, z, out_layout, expected, what="output shard")


@st.composite
def mixed_device_jit_cases(draw):
    """Input and output layouts of one shape whose meshes list different devices, or the same
    devices in another order."""
    in_mesh = draw(meshes())
    out_mesh = draw(meshes().filter(lambda m: m.device_ids != in_mesh.device_ids))
    in_layout, out_layout = draw(layouts_sharing_shape([in_mesh, out_mesh], draw(st.integers(0, 2))))
    return in_layout, out_layout, np.zeros(in_layout.shape, np.int32)


@needs_devices(2, "for two device assignments")
@given(case=mixed_device_jit_cases())
def test_jit_rejects_different_device_assignments(case):
    """jit whose in_shardings and out_shardings have different device assignments (other devices,
    or the same devices in another order) raises ValueError rather than running on either."""
    in_layout, out_layout, x = case
    check = jit_case(in_layout, out_layout, x)
    check.rejects("jit over two device sets", jit_call(in_layout, out_layout, x), (ValueError,))


@needs_devices(2, "to cut an array")
def test_elementwise_op_on_zero_size_array_keeps_sharding():
    """jnp.sin of a zero-size array sharded over every device keeps the input's sharding, as it does
    for non-empty arrays (the property above)."""
    layout = Layout(line_mesh(), ("a",), (0, 2))
    x = np.zeros(layout.shape, np.float32)
    check = layout_case(layout, "jnp.sin(jax.device_put(x, sharding)).sharding",
                        ["print(jnp.sin(jax.device_put(x, sharding)).sharding)"], x=x)
    z = jnp.sin(jax.device_put(x, layout_sharding(layout)))
    check.true("jnp.sin(y).sharding.is_equivalent_to(y.sharding)",
               z.sharding.is_equivalent_to(layout_sharding(layout), layout.rank))


@needs_devices(2, "to cut an array")
def test_jit_out_shardings_on_zero_size_array():
    """jit with out_shardings P(None, 'a') over every device, on a zero-size (0, n) array, returns
    shards of the model's shard shape (0, 1), as device_put does."""
    mesh = line_mesh()
    layout = Layout(mesh, (None, "a"), (0, mesh.size))
    x = np.zeros(layout.shape, np.int32)
    check = layout_case(layout, "jax.jit(lambda a: a + 1, out_shardings=sharding)(x)", [
        "z = jax.jit(lambda a: a + 1, out_shardings=sharding)(x)",
        "print(z.sharding.shard_shape(z.shape), [s.data.shape for s in z.addressable_shards])"], x=x)
    z = check.accepts("jit", lambda: jax.jit(plus_one, out_shardings=layout_sharding(layout))(x))
    check.true("z.sharding.is_equivalent_to(sharding)",
               z.sharding.is_equivalent_to(layout_sharding(layout), layout.rank))
    check_layout(check, z, layout, x + 1)


@needs_devices(2, "to reorder a mesh")
def test_reshard_zero_size_array_onto_reordered_mesh():
    """device_put of a zero-size replicated array onto P('a') over the same devices in another order
    is accepted and laid out as the model says, as for non-empty arrays."""
    source = Layout(line_mesh(), (), (0, 1))
    target = Layout(line_mesh(reverse=True), ("a",), (0, 1))
    x = np.zeros(source.shape, np.float32)
    check = layout_case(source, "jax.device_put(jax.device_put(x, sharding), target)",
                        ["z = jax.device_put(jax.device_put(x, sharding), target)"],
                        x=x, extra_layouts={"target": target})
    y = jax.device_put(x, layout_sharding(source))
    z = check.accepts("device_put", lambda: jax.device_put(y, layout_sharding(target)))
    check.true("z.sharding.is_equivalent_to(target)",
               z.sharding.is_equivalent_to(layout_sharding(target), target.rank))
    check_layout(check, z, target, x)
