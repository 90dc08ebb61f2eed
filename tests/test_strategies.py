"""The strategies keep their promises: every drawn mesh, spec and shape is what it says it is.

Device ids are given explicitly, so these tests also cover device counts this machine does not
force (1, 6, 12) and non-contiguous ids (as on a second process, where ids start at 2048).
"""

import math

import ml_dtypes
import numpy as np
import pytest
from random import Random

from hypothesis import find, given, settings
from hypothesis import strategies as st

from conformance.model.layout import Layout, MeshModel, SpecError, check_spec, spec_axes, spec_tiling
from strategies import (arrays, can_cut, cutting_meshes, cutting_specs, dtype_of, dtypes, factorizations,
                        incongruent_shapes, invalid_partition_specs, layouts, layouts_sharing_shape, meshes,
                        partition_specs, sharding_specs, supported_dtype_names)
from strategies.arrays import BASE_DTYPES, X64_DTYPES, ramps
from strategies.meshes import cutting_factorizations
from strategies.ops.inputs import values
from strategies.spmd import device_counts

def minimal(strategy):
    """The simplest example of ``strategy`` that Hypothesis shrinks to, found deterministically (a
    fixed random source, no example database): what the strategy promises to shrink towards."""
    return find(strategy, lambda _: True, random=Random(0), settings=settings(database=None))


DEVICE_SETS = [tuple(range(8)), (0,), tuple(range(6)), tuple(range(12)), (2048, 2049, 2050, 2051)]
device_sets = st.sampled_from(DEVICE_SETS)


@pytest.mark.parametrize("n", [1, 2, 6, 8, 12])
def test_factorizations_are_complete_and_exact(n):
    """Every ordered factorization of n into 1..4 factors appears once, fewest axes first."""
    shapes = factorizations(n)
    assert all(math.prod(s) == n for s in shapes)
    assert len(set(shapes)) == len(shapes)
    assert [len(s) for s in shapes] == sorted(len(s) for s in shapes)
    brute = {s for k in range(1, 5) for s in np.ndindex(*(n,) * k)}
    brute = {tuple(d + 1 for d in s) for s in brute if math.prod(d + 1 for d in s) == n}
    assert set(shapes) == brute


@given(ids=device_sets, data=st.data())
def test_meshes_use_each_device_once(ids, data):
    """A drawn mesh holds distinct devices from the given ones, as many as its shape needs, with
    distinct axis names; without subsets it holds all of them."""
    mesh = data.draw(meshes(ids))
    assert set(mesh.device_ids) <= set(ids)
    assert len(set(mesh.device_ids)) == len(mesh.device_ids) == math.prod(mesh.shape)
    assert len(set(mesh.axis_names)) == len(mesh.axis_names) == len(mesh.shape)
    full = data.draw(meshes(ids, subsets=False, reorder=False))
    assert full.device_ids == ids


@given(ids=device_sets, rank=st.integers(0, 4), data=st.data())
def test_partition_specs_are_valid(ids, rank, data):
    """Every drawn spec is valid for its mesh and rank: known axes, each at most once, at most
    ``rank`` entries, entries None / str / tuple of str."""
    mesh = data.draw(meshes(ids))
    spec = data.draw(partition_specs(mesh, rank))
    check_spec(mesh, spec, rank)
    assert all(e is None or isinstance(e, str) or (isinstance(e, tuple) and e and
                                                    all(isinstance(n, str) for n in e)) for e in spec)


@given(ids=device_sets, rank=st.integers(0, 3), data=st.data())
def test_invalid_partition_specs_are_invalid(ids, rank, data):
    """Every drawn invalid spec is rejected by the model with the kind the strategy states."""
    mesh = data.draw(meshes(ids))
    spec, kind = data.draw(invalid_partition_specs(mesh, rank))
    with pytest.raises(SpecError) as info:
        check_spec(mesh, spec, rank)
    assert info.value.kind == kind


@given(ids=device_sets, data=st.data())
def test_congruent_layouts_divide(ids, data):
    """layouts() builds shapes its spec divides, every rank from 0 to 3."""
    layout = data.draw(layouts(ids))
    assert layout.is_congruent
    assert all(d % t == 0 for d, t in zip(layout.shape, layout.tiling))


@given(ids=device_sets, data=st.data())
def test_layouts_of_either_kind_say_which(ids, data):
    """layouts(congruent=None) may draw either kind; an incongruent one only where a dim is cut."""
    layout = data.draw(layouts(ids, congruent=None))
    if not layout.is_congruent:
        assert any(t > 1 for t in layout.tiling)


@given(ids=device_sets.filter(lambda ids: len(ids) > 1), data=st.data())
def test_incongruent_layouts_do_not_divide(ids, data):
    """layouts(congruent=False) and incongruent_shapes() build shapes some tiled dim does not divide."""
    layout = data.draw(layouts(ids, congruent=False))
    assert not layout.is_congruent and layout.indivisible_dims
    shape = data.draw(incongruent_shapes(layout.mesh, layout.spec, layout.rank))
    assert not Layout(layout.mesh, layout.spec, shape).is_congruent


@given(ids=device_sets, data=st.data())
def test_layouts_sharing_shape_all_divide(ids, data):
    """layouts_sharing_shape gives each mesh its own valid spec over one shape that all divide."""
    mesh_list = [data.draw(meshes(ids)) for _ in range(3)]
    chain = data.draw(layouts_sharing_shape(mesh_list, data.draw(st.integers(0, 3))))
    assert len({layout.shape for layout in chain}) == 1
    assert all(layout.is_congruent for layout in chain)
    assert [layout.mesh for layout in chain] == mesh_list


def test_spec_strategy_reaches_every_form():
    """The spec strategy produces None, bare axes, 1-tuples, multi-axis tuples in both orders,
    trailing Nones and unused axes (checked over a fixed-seed sample)."""
    mesh = MeshModel(tuple(range(4)), (2, 2), ("a", "b"))
    seen = set()

    @settings(max_examples=300, derandomize=True, database=None)
    @given(spec=partition_specs(mesh, 2))
    def collect(spec):
        for entry in spec:
            seen.add("none" if entry is None else "bare" if isinstance(entry, str)
                     else "one-tuple" if len(entry) == 1 else f"tuple-{entry}")
        if spec and spec[-1] is None:
            seen.add("trailing-none")
        if {n for axes in spec_axes(spec) for n in axes} != {"a", "b"}:
            seen.add("unused-axis")

    collect()
    assert seen >= {"none", "bare", "one-tuple", "tuple-('a', 'b')", "tuple-('b', 'a')",
                    "trailing-none", "unused-axis"}


def test_dtype_lists():
    """Without x64 the 64-bit dtypes are left out; with it they are added; bfloat16 is ml_dtypes'."""
    assert supported_dtype_names(False) == BASE_DTYPES
    assert supported_dtype_names(True) == BASE_DTYPES + X64_DTYPES
    assert dtype_of("bfloat16").name == "bfloat16"


@given(dtype=dtypes(supported_dtype_names(x64=True)), shape=st.sampled_from([(), (0,), (3,), (2, 0, 2), (2, 3)]),
       data=st.data())
def test_arrays_have_the_requested_dtype_and_shape(dtype, shape, data):
    """arrays() gives exactly the dtype and shape asked, 0-d and zero-size included."""
    x = data.draw(arrays(dtype, shape))
    assert x.dtype == dtype and x.shape == shape


@given(dtype=dtypes(["float16", "bfloat16", "float32", "complex64"]), data=st.data())
def test_finite_arrays_are_finite_and_bounded(dtype, data):
    """arrays(finite=True, max_magnitude=m) holds only finite values of magnitude at most m."""
    x = data.draw(arrays(dtype, (4,), finite=True, max_magnitude=10.0))
    values = x.astype(np.complex128)
    assert np.isfinite(values).all() and (np.abs(values.real) <= 10).all() and \
        (np.abs(values.imag) <= 10).all()


# --- strategies that cut ---------------------------------------------------------------------
@given(ids=device_sets, sides=st.lists(st.sampled_from([0, 1, 2, 3, 4, 6, 8]), max_size=4), data=st.data())
def test_cutting_meshes_are_meshes_and_mostly_cut(ids, sides, data):
    """A cutting mesh holds distinct devices from the given ones as its shape needs, like
    ``meshes``; without subsets it holds all of them."""
    for mesh in (data.draw(cutting_meshes(ids, sides)), data.draw(cutting_meshes(ids, sides, subsets=False))):
        assert set(mesh.device_ids) <= set(ids)
        assert len(set(mesh.device_ids)) == len(mesh.device_ids) == math.prod(mesh.shape)
        assert len(set(mesh.axis_names)) == len(mesh.axis_names) == len(mesh.shape)
    assert len(mesh.device_ids) == len(ids)


def test_cutting_meshes_shrink_to_all_devices_with_the_cutting_axis_first():
    """The minimal cutting mesh: all devices in order, the fewest axes that can cut a side, the
    cutting one first; and for a side only a subset can cut (3 of 8 devices), the largest such."""
    ids = tuple(range(8))
    assert minimal(cutting_meshes(ids, (2,))).shape == (2, 4)
    assert minimal(cutting_meshes(ids, (8,))).shape == (8,)
    assert minimal(cutting_meshes(ids, (3,))).device_ids == tuple(range(6))
    assert cutting_factorizations(8, (4,), 1, 2) == ((4, 2), (2, 4))


@given(ids=device_sets, shape=st.lists(st.sampled_from([1, 2, 3, 4, 6, 8, 0]), max_size=3).map(tuple),
       data=st.data())
def test_cutting_and_sharding_specs_divide_and_cut(ids, shape, data):
    """A cutting spec is valid, divides the shape and names an axis of size > 1 on a dimension of
    a preferred side where asked and possible; a sharding spec divides; a shape no axis can cut
    has no cutting spec."""
    mesh = data.draw(meshes(ids))
    prefer = tuple(data.draw(st.lists(st.integers(0, len(shape) - 1), max_size=2))) if shape else ()
    for spec in (data.draw(sharding_specs(mesh, shape, prefer=prefer)),) + (
            (data.draw(cutting_specs(mesh, shape, prefer=prefer)),) if can_cut(mesh, shape) else ()):
        check_spec(mesh, spec, len(shape))
        assert all(side % t == 0 for side, t in zip(shape, spec_tiling(mesh, spec, len(shape))))
    if can_cut(mesh, shape):
        assert any(mesh.axis_sizes[n] > 1 for axes in spec_axes(spec) for n in axes)
    else:
        with pytest.raises(ValueError, match="divides a side"):
            data.draw(cutting_specs(mesh, shape))


def test_cutting_specs_shrink_to_one_axis_on_the_first_preferred_dimension():
    mesh = MeshModel(tuple(range(8)), (2, 4), ("a", "b"))
    assert minimal(cutting_specs(mesh, (2, 4))) == (("a",),)
    assert minimal(cutting_specs(mesh, (2, 4), prefer=(1,))) == (None, ("a",))
    assert minimal(cutting_specs(mesh, (3, 4), prefer=(0,))) == (None, ("a",))


@given(dtype=dtypes(supported_dtype_names(x64=True)),
       shape=st.sampled_from([(), (0,), (3,), (2, 0, 2), (2, 3), (4, 4)]),
       bound=st.sampled_from([None, 2, 8, 10]), data=st.data())
def test_ramps_vary_within_their_range(dtype, shape, bound, data):
    """A ramp has the dtype and shape asked, stays in its range (the dtype's, or -bound..bound;
    finite floats, none subnormal when asked) and never holds one value in 3 elements or more."""
    x = data.draw(ramps(dtype, shape, bound=bound, subnormals=False))
    assert x.dtype == dtype and x.shape == shape
    if dtype.kind in "fc":
        magnitude = np.abs(np.stack([x.real, x.imag]).astype(np.float64))
        assert np.isfinite(magnitude).all() and (magnitude <= (bound or 100)).all()
        assert ((magnitude == 0) | (magnitude >= float(ml_dtypes.finfo(x.real.dtype).tiny))).all()
    elif dtype.kind in "iu" and bound is not None:
        assert (np.abs(x.astype(np.float64)) <= bound).all()
    if x.size >= 3:
        assert len(np.unique(x.reshape(-1))) > 1


def test_varied_values_shrink_to_a_ramp():
    """The minimal array of ``inputs.values`` (and of ``arrays``) is 0, 1, 2, ... in order."""
    assert minimal(values("int32", (2, 3))).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert minimal(arrays(np.dtype("uint8"), (4,))).tolist() == [0, 1, 2, 3]
    assert minimal(values("bool", (4,))).tolist() == [False, True, True, False]


@given(n=st.integers(1, 12), min_size=st.integers(1, 3), data=st.data())
def test_device_counts_are_in_range(n, min_size, data):
    """A device count is between ``min_size`` and ``n`` (when ``n`` allows ``min_size``)."""
    if n >= min_size:
        assert min_size <= data.draw(device_counts(n, min_size=min_size)) <= n


def test_a_reused_factory_returns_one_strategy_per_distinct_arguments():
    """``strategies.reuse.reused``: equal hashable arguments give the same object (Hypothesis then
    validates it once), another value or type another one, an unhashable argument a fresh one; the
    arrays strategy is one such factory."""
    from strategies.reuse import reused
    made = []

    @reused
    def factory(*sides, kind="any"):
        made.append(sides)
        return st.just(sides)
    assert factory(1, 2) is factory(1, 2) and len(made) == 1
    assert factory(1, 2, kind="other") is not factory(1, 2)
    assert factory(1.0, 2) is not factory(1, 2), "typed: 1.0 is not 1"
    assert factory([1, 2]) is not factory([1, 2]), "a list cannot be a key: made afresh"
    assert arrays(np.int32, (2, 3)) is arrays("int32", [2, 3])
    assert arrays(np.int32, (2, 3)) is not arrays(np.int32, (3, 2))


@settings(max_examples=50)
@given(shape=st.sampled_from(((2,), (4, 2), (8,))), data=st.data())
def test_small_floats_hold_no_subnormal_and_stay_within_a_fiftieth_of_the_range(shape, data):
    """small_floats: float32 of the shape, magnitude <= 2, none subnormal (what 0.5.0's seed 2420009782
    met: 4.3e-37 / 50); and without_subnormals takes exactly the subnormal elements to 0."""
    from strategies.arrays import without_subnormals
    from strategies.spmd import small_floats
    x = data.draw(small_floats(shape))
    tiny = np.finfo(np.float32).tiny
    assert x.dtype == np.float32 and x.shape == shape
    assert not ((x != 0) & (np.abs(x) < tiny)).any(), f"got subnormals in {x.tolist()}, but should have none"
    assert (np.abs(x) <= 2).all(), f"got {x.tolist()}, but should be within 100 / 50"
    mixed = np.array([4.2820457e-37 / 50, -1e-39, 0.0, -0.0, tiny, 1.5], np.float32)
    assert without_subnormals(mixed).tolist() == [0.0, 0.0, 0.0, 0.0, float(tiny), 1.5]
