"""NamedSharding / Mesh / PartitionSpec layouts, each answer compared with the reference model."""

import math

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.checking.layouts import layout_case
from conformance.checking.repro import scripted_case
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel, SpecError, check_spec
from strategies import (axis_names, congruent_shapes, factorizations, invalid_partition_specs,
                        layouts, layouts_sharing_shape, meshes)
from strategies.tutorial import tutorial_examples, tutorial_layouts

pytestmark = pytest.mark.named_sharding
DEVICES = bridge.live_device_ids()
TUTORIAL_LAYOUTS = tutorial_layouts(bridge.tutorial_mesh_ids((4, 2)))


@given(layout=layouts(DEVICES))
@tutorial_examples(TUTORIAL_LAYOUTS)
def test_devices_indices_map_matches_model(layout):
    """devices_indices_map gives every mesh device exactly the block the model assigns it."""
    case = layout_case(layout, "sharding.devices_indices_map(shape)",
                       [f"print(sharding.devices_indices_map({layout.shape}))"],
                       outcomes={"devices_indices_map": "sharding"})
    case.index_map("devices_indices_map", bridge.index_map(bridge.layout_sharding(layout), layout.shape),
                   layout.blocks)


@given(layout=layouts(DEVICES))
@tutorial_examples(TUTORIAL_LAYOUTS)
def test_shard_shape_matches_model(layout):
    """shard_shape(global shape) is the global shape divided by the model's tiling."""
    case = layout_case(layout, "sharding.shard_shape(shape)",
                       [f"print(sharding.shard_shape({layout.shape}))"],
                       outcomes={"shard_shape": f"tuple(sharding.shard_shape({layout.shape}))"})
    case.equal("shard_shape", tuple(bridge.layout_sharding(layout).shard_shape(layout.shape)),
               layout.shard_shape)


@given(layout=layouts(DEVICES))
@tutorial_examples(TUTORIAL_LAYOUTS)
def test_is_fully_replicated_matches_model(layout):
    """is_fully_replicated is true exactly when no dimension is cut (size-1 axes do not cut)."""
    case = layout_case(layout, "sharding.is_fully_replicated", ["print(sharding.is_fully_replicated)"],
                       outcomes={"is_fully_replicated": "sharding.is_fully_replicated"})
    case.equal("is_fully_replicated", bridge.layout_sharding(layout).is_fully_replicated,
               layout.is_fully_replicated)


@given(layout=layouts(DEVICES, max_rank=2))
def test_addressable_devices_are_the_mesh_devices(layout):
    """addressable_devices are the mesh's devices this process owns (in one process, all of them),
    and device_set is exactly the mesh's devices."""
    sharding = bridge.layout_sharding(layout)
    case = layout_case(layout, "sharding.addressable_devices", ["print(sharding.addressable_devices)"],
                       outcomes={"addressable_devices ids": "frozenset(d.id for d in sharding.addressable_devices)",
                                 "device_set ids": "frozenset(d.id for d in sharding.device_set)"})
    case.equal("addressable_devices ids", frozenset(d.id for d in sharding.addressable_devices),
               bridge.addressable_of(layout.device_ids))
    case.equal("device_set ids", frozenset(d.id for d in sharding.device_set), layout.device_ids)


@given(layout=layouts(DEVICES, max_rank=2))
@tutorial_examples(TUTORIAL_LAYOUTS)
def test_replica_ids_match_model(layout):
    """Each shard's replica_id is its device's rank among the devices holding the same block."""
    x = np.zeros(layout.shape, np.int8)
    case = layout_case(layout, "[s.replica_id for s in jax.device_put(x, sharding).addressable_shards]",
                       ["y = jax.device_put(x, sharding)",
                        "print([(s.device.id, s.replica_id) for s in y.addressable_shards])"], x=x,
                       outcomes={"replica ids by device": "{s.device.id: s.replica_id for s in y.addressable_shards}"})
    got = {s.device_id: s.replica_id for s in bridge.shards(jax.device_put(x, bridge.layout_sharding(layout)))}
    case.equal("replica ids by device", got, {d: layout.replica_id(d) for d in layout.device_ids})


@st.composite
def spec_pairs(draw, *, max_rank=3):
    """Two layouts of one shape with specs drawn on one mesh, or on two meshes that are reshapes of
    the same device order (so the device assignment order is shared)."""
    first = draw(meshes(DEVICES))
    second = draw(st.sampled_from([first]) | meshes(first.device_ids, subsets=False, reorder=False))
    return draw(layouts_sharing_shape([first, second], draw(st.integers(0, max_rank))))


@given(pair=spec_pairs())
def test_equivalence_is_reflexive_and_symmetric(pair):
    """is_equivalent_to holds between a sharding and itself or a fresh copy, and is symmetric."""
    a, b = pair
    sa, sb = bridge.layout_sharding(a), bridge.layout_sharding(b)
    copy = jax.sharding.NamedSharding(bridge.jax_mesh(a.mesh), compat.partition_spec(a.spec))
    case = layout_case(a, "a.is_equivalent_to(b, ndim)", [
        "copy = NamedSharding(mesh, sharding.spec)",
        f"print(sharding.is_equivalent_to(sharding, {a.rank}), "
        f"sharding.is_equivalent_to(other, {a.rank}), other.is_equivalent_to(sharding, {a.rank}))"],
        extra_layouts={"other": b},
        outcomes={"a.is_equivalent_to(a)": f"sharding.is_equivalent_to(sharding, {a.rank})",
                  "a.is_equivalent_to(copy of a)": f"sharding.is_equivalent_to(copy, {a.rank})",
                  "b.is_equivalent_to(a) (symmetry with a.is_equivalent_to(b))":
                      f"other.is_equivalent_to(sharding, {a.rank})"})
    case.true("a.is_equivalent_to(a)", sa.is_equivalent_to(sa, a.rank))
    case.true("a.is_equivalent_to(copy of a)", sa.is_equivalent_to(copy, a.rank))
    case.equal("b.is_equivalent_to(a) (symmetry with a.is_equivalent_to(b))",
               sb.is_equivalent_to(sa, a.rank), sa.is_equivalent_to(sb, a.rank))


@given(pair=spec_pairs())
def test_equivalent_exactly_when_placements_agree(pair):
    """Over one device order, two shardings are equivalent for rank n exactly when the model
    places every block of every rank-n array on the same devices under both."""
    a, b = pair
    case = layout_case(a, "a.is_equivalent_to(b, ndim)",
                       [f"print(sharding.is_equivalent_to(other, {a.rank}))"], extra_layouts={"other": b},
                       outcomes={"is_equivalent_to": f"sharding.is_equivalent_to(other, {a.rank})"})
    case.equal("is_equivalent_to", bridge.layout_sharding(a).is_equivalent_to(bridge.layout_sharding(b), a.rank),
               a.equivalent(b))


@given(layout=layouts(DEVICES), extra=st.integers(0, 2))
def test_trailing_none_changes_nothing(layout, extra):
    """Padding a spec with trailing Nones up to the rank, e.g. P('a') -> P('a', None), gives an
    equivalent sharding with the same index map."""
    extra = min(extra, layout.rank - len(layout.spec))
    padded = Layout(layout.mesh, tuple(layout.spec) + (None,) * extra, layout.shape)
    case = layout_case(layout, "a.is_equivalent_to(padded, ndim)",
                       [f"print(sharding.is_equivalent_to(padded, {layout.rank}))"],
                       extra_layouts={"padded": padded},
                       outcomes={"is_equivalent_to(padded)": f"sharding.is_equivalent_to(padded, {layout.rank})",
                                 "padded devices_indices_map": "padded"})
    case.true("is_equivalent_to(padded)",
              bridge.layout_sharding(layout).is_equivalent_to(bridge.layout_sharding(padded), layout.rank))
    case.index_map("padded devices_indices_map", bridge.index_map(bridge.layout_sharding(padded), layout.shape),
                   layout.blocks)


def two_cut_axes_shapes(n_devices):
    """Mesh shapes over at most ``n_devices`` devices with at least two axes of size > 1."""
    return [shape for k in range(4, n_devices + 1) for shape in factorizations(k, 2)
            if sum(size > 1 for size in shape) >= 2]


@st.composite
def tuple_order_pairs(draw):
    """A spec whose entry at ``dim`` is a tuple of two or more mesh axes of size > 1, and the same
    spec with that tuple reversed."""
    ids = draw(st.permutations(DEVICES))
    mesh_shape = draw(st.sampled_from(two_cut_axes_shapes(len(ids))))
    mesh = MeshModel(bridge.first_ids(ids, math.prod(mesh_shape)), mesh_shape, draw(axis_names(len(mesh_shape))))
    cutting = [n for n, s in mesh.axis_sizes.items() if s > 1]
    axes = tuple(draw(st.permutations(cutting))[:draw(st.integers(2, len(cutting)))])
    rank = draw(st.integers(1, 2))
    dim = draw(st.integers(0, rank - 1))
    spec = tuple(axes if i == dim else None for i in range(rank))
    reversed_spec = tuple(axes[::-1] if i == dim else None for i in range(rank))
    shape = draw(congruent_shapes(mesh, spec, rank, max_side=2, zero_size=False))
    return Layout(mesh, spec, shape), Layout(mesh, reversed_spec, shape)


@bridge.needs_devices(4, "for two mesh axes of size > 1")
@given(pair=tuple_order_pairs())
def test_tuple_order_matters(pair):
    """P(('a','b')) and P(('b','a')) differ: the first axis of a tuple entry is the major one, so the
    index maps differ exactly as the model says and the shardings are not equivalent."""
    a, b = pair
    # (The model's claim that the two are not equivalent, judged by the script as JAX's index maps
    # of the two differing: the model's equivalence is their agreeing block by block.)
    indices = lambda name: (f"{{d.id: tuple(s.indices(n)[:2] for s, n in zip(i, {a.shape!r})) "
                            f"for d, i in {name}.devices_indices_map({a.shape!r}).items()}}")
    case = layout_case(a, "a vs a with its tuple entry reversed",
                       [f"print(sharding.is_equivalent_to(other, {a.rank}))"], extra_layouts={"other": b},
                       outcomes={"devices_indices_map(reversed)": "other",
                                 "model says equivalent": f"{indices('sharding')} == {indices('other')}",
                                 "is_equivalent_to(reversed)": f"sharding.is_equivalent_to(other, {a.rank})"})
    case.index_map("devices_indices_map(reversed)", bridge.index_map(bridge.layout_sharding(b), b.shape), b.blocks)
    case.equal("model says equivalent", a.equivalent(b), False)
    case.equal("is_equivalent_to(reversed)",
               bridge.layout_sharding(a).is_equivalent_to(bridge.layout_sharding(b), a.rank), False)


@st.composite
def invalid_spec_examples(draw):
    mesh = draw(meshes(DEVICES))
    rank = draw(st.integers(0, 3))
    spec, kind = draw(invalid_partition_specs(mesh, rank))
    return mesh, rank, spec, kind


@given(example=invalid_spec_examples())
def test_invalid_specs_are_rejected(example):
    """A spec naming an unknown mesh axis, repeating an axis, or longer than the array's rank is
    rejected (at NamedSharding construction or at device_put), never silently used."""
    mesh, rank, spec, kind = example
    with pytest.raises(SpecError) as model_error:  # the model agrees the spec is invalid
        check_spec(mesh, spec, rank)
    assert model_error.value.kind == kind
    x = np.zeros((1,) * rank, np.int8)
    layout = Layout(mesh, (), x.shape)
    case = layout_case(layout, f"device_put(x, NamedSharding(mesh, P{spec})) [{kind}]",
                       x=x, outcomes={f"NamedSharding with a spec with {kind}":
                                      f"jax.device_put(x, NamedSharding(mesh, P(*{spec!r})))"})
    case.rejects(f"NamedSharding with a spec with {kind}",
                 lambda: jax.device_put(x, jax.sharding.NamedSharding(
                     bridge.jax_mesh(mesh), compat.partition_spec(spec))),
                 compat.SPEC_ERRORS)


@bridge.needs_devices(2, "to reorder a mesh")
def test_equivalence_compares_the_ordered_device_list():
    """Two shardings whose meshes list the same devices in different orders are not equivalent, even
    where they put every block on the same devices: is_equivalent_to compares the ordered device
    assignment, as jit does when it refuses arguments laid out over the two."""
    ids = DEVICES
    rows = len(ids) // 2
    mesh = MeshModel(bridge.first_ids(ids, 2 * rows), (rows, 2), ("a", "b"))
    swapped = MeshModel(tuple(np.array(mesh.device_ids).reshape(rows, 2)[:, ::-1].flat), (rows, 2),
                        ("a", "b"))
    a, b = Layout(mesh, ("a",), (rows,)), Layout(swapped, ("a",), (rows,))
    assert a.same_placement(b) and not a.equivalent(b)
    both = (f"jax.jit(lambda x, y: x + y)(jax.device_put(np.arange({rows}, dtype=np.int32), sharding), "
            f"jax.device_put(np.arange({rows}, dtype=np.int32), other))")
    case = layout_case(a, "a.is_equivalent_to(b) over a column-swapped mesh",
                       ["print(sharding.is_equivalent_to(other, 1))"], extra_layouts={"other": b},
                       outcomes={"is_equivalent_to": "sharding.is_equivalent_to(other, 1)", "jit of both": both})
    sa, sb = bridge.layout_sharding(a), bridge.layout_sharding(b)
    case.equal("is_equivalent_to", sa.is_equivalent_to(sb, 1), False)
    x = np.arange(rows, dtype=np.int32)
    case.rejects("jit of both", lambda: jax.jit(lambda u, v: u + v)(jax.device_put(x, sa), jax.device_put(x, sb)),
                 (ValueError,))


@bridge.needs_devices(2, "for an axis of size > 1 (test_shard_shape_rejects_spec_longer_than_rank_over_a_size_one_axis "
                          "checks the size-1 form)")
def test_shard_shape_rejects_spec_longer_than_rank():
    """shard_shape of a spec with more entries than the shape's rank raises ValueError, as
    device_put with that sharding does."""
    mesh = bridge.line_mesh()
    layout = Layout(mesh, (), (mesh.size,))
    case = layout_case(layout, f"NamedSharding(mesh, P(None, 'a')).shard_shape(({mesh.size},))",
                       outcomes={"shard_shape": f"NamedSharding(mesh, P(None, 'a')).shard_shape(({mesh.size},))"})
    case.rejects("shard_shape", lambda: bridge.named_sharding(mesh, (None, "a")).shard_shape((mesh.size,)),
                 (ValueError,))


def test_shard_shape_rejects_spec_longer_than_rank_over_a_size_one_axis():
    """shard_shape((1,)) of P(None, 'a') on a mesh of one device ('a' of size 1) raises ValueError,
    as device_put with that sharding does: a spec longer than the rank is refused whatever the size
    of the axes it names (found on a one-GPU machine, where every mesh is 1 x 1)."""
    mesh = bridge.first_devices_mesh(("a", 1))
    layout = Layout(mesh, (), (1,))
    case = layout_case(layout, "NamedSharding(mesh, P(None, 'a')).shard_shape((1,))",
                       outcomes={"shard_shape": "NamedSharding(mesh, P(None, 'a')).shard_shape((1,))"})
    case.rejects("shard_shape", lambda: bridge.named_sharding(mesh, (None, "a")).shard_shape((1,)), (ValueError,))


@bridge.needs_devices(8, "for the tutorial's 4x2 mesh, so its explicit examples are not run")
def test_tutorial_mesh_holds_each_device_once():
    """The tutorial's create_device_mesh((4, 2)), on which its explicit examples run here, holds
    each of 8 devices exactly once (with fewer devices those examples cannot run: a skip says so)."""
    ids = bridge.tutorial_mesh_ids((4, 2))
    live = DEVICES
    check = f"create_device_mesh((4, 2)) ids={ids} are 8 distinct devices of {live}"
    case = scripted_case("mesh_utils.create_device_mesh((4, 2))", [
        "from jax.experimental import mesh_utils",
        "ids = [d.id for d in mesh_utils.create_device_mesh((4, 2), devices=jax.local_devices()[:8]).flat]",
        "print(ids)"], outcomes={check: "len(ids) == 8 and len(set(ids)) == 8 and set(ids) <= set(devices)"})
    case.true(check,
              len(ids) == 8 and len(set(ids)) == 8 and set(ids) <= set(live))
