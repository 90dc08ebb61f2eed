"""The operation catalogue keeps its promises: enough entries over every family the sharding
invariance issue names, inputs that its numpy references accept, and hand-worked answers from the
references written here (numpy has no dynamic_slice, lax.pad or shifted .at[] update)."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.model import dtypes
from conformance.model.layout import MeshModel, check_spec, spec_tiling
from strategies import dividing_specs
from strategies.ops import BY_NAME, CATALOGUE, ENTRIES, Op
from strategies.ops.inputs import index_statics, slice_length
from strategies.ops.references import (clamped_starts, dynamic_slice_reference, dynamic_update_slice_reference,
                                       lax_pad_reference, shifted_ranges)

FAMILIES = {"elementwise", "broadcasting", "reduction", "scan", "joining", "shape", "padding",
            "slicing", "dynamic", "at", "gather", "permuting", "sorting", "contraction",
            "selection", "iota"}


def test_catalogue_covers_every_family_with_forty_entries_or_more():
    assert len(CATALOGUE) >= 40 and len(BY_NAME) == len(ENTRIES)
    assert {op.family for op in CATALOGUE} == FAMILIES
    for name in ("sum_int", "max", "mean", "argmax", "any", "cumsum", "cumprod", "cummax",
                 "concatenate", "stack", "reshape", "transpose", "swapaxes", "squeeze",
                 "lax_pad_negative", "strided_slice", "slice_out_of_range", "slice_empty",
                 "dynamic_slice", "dynamic_update_slice", "at_set_shifted", "at_add_shifted",
                 "at_min", "at_max", "take", "roll", "flip", "sort", "argsort", "matmul", "einsum",
                 "where", "select", "add_iota"):
        assert name in BY_NAME, name


@pytest.mark.parametrize("op", ENTRIES, ids=lambda op: op.name)
@settings(max_examples=10, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_entry_draws_inputs_its_reference_accepts(op, data):
    """Each entry's inputs are numpy arrays (non-empty, so zero-size bugs stay in their own
    entries) with static arguments its numpy reference computes an answer for; only slice_empty
    answers with an empty array, and it always does."""
    operands, static = data.draw(op.inputs)
    assert all(isinstance(x, (np.ndarray, np.generic)) and np.size(x) > 0 for x in operands)
    with np.errstate(all="ignore"):
        expected = np.asarray(op.reference(*operands, **static))
    assert (expected.size == 0) == (op.name == "slice_empty")


# Entries whose numpy reference answers in another dtype than JAX's documentation gives, and why.
NUMPY_DTYPE_DIFFERS = {
    "cumsum": "jnp.cumsum's docstring: 'If not specified, then the output dtype will match the input "
              "dtype'; numpy's cumsum of an integer narrower than intp answers in intp (int32 -> int64)",
    "jnp.cumulative_sum": "jnp.cumulative_sum's docstring answers int32 for int32 (its examples); numpy's "
                          "cumulative_sum of an integer narrower than intp answers in intp, as cumsum does",
    "jnp.float_power": "jnp.float_power's docstring: 'promoting to the inexact dtype' (float32 stays float32); "
                       "numpy's float_power answers float64 for float32",
    "jnp.cov": "jnp.cov's docstring examples answer float32 for int32 observations (the inexact dtype of the "
               "input); numpy's cov computes in float64 whatever the input",
    "jnp.corrcoef": "jnp.corrcoef follows jnp.cov (float32 for float32 or int32 input); numpy's corrcoef computes "
                    "in float64 whatever the input",
    "jnp.polyder": "jnp.polyder's docstring example: int32 coefficients give float32 (promoted to inexact); "
                   "numpy's polyder keeps an integer input's int64",
    "jnp.polyint": "jnp.polyint's docstring example: int32 coefficients give float32; numpy's polyint divides by "
                   "an int64 arange, answering float64",
    "jnp.ravel_multi_index": "jnp.ravel_multi_index's docstring example answers int32 indices for int32 "
                             "multi-indices (they promote as usual); numpy's ravel_multi_index answers intp (int64)",
    "jnp.vander": "jnp.vander's docstring example answers int32 for int32 input; numpy's vander answers the "
                  "default int64 (its powers are computed in intp)",
    **dict.fromkeys(("jnp.interp", "jnp.interp:period"),
                    "jnp.interp's docstring examples answer float32 for float32 points (the inputs' inexact "
                    "dtype); numpy's interp computes in float64 whatever the input"),
    **dict.fromkeys(("jnp.histogram", "jnp.histogram:bin_array", "jnp.histogram:density"),
                    "our reading: jnp.histogram's docstring states no dtype and its counts come back float32 "
                    "for float32 samples (measured on 0.10.2: it counts with float weights); numpy's histogram "
                    "counts in intp, and its density is float64"),
    **dict.fromkeys(("jnp.histogram2d", "jnp.histogramdd"),
                    "jnp.histogram2d's docstring example counts in int32 (histogramdd, which it calls, too); "
                    "numpy's histogram2d and histogramdd count in float64"),
    "jnp.polymul": "jnp.polymul's docstring: 'The dtype of the output is always promoted to inexact' (float32 for "
                   "int32); the entry's reference convolves in float64",
    "jnp.polydiv:remainder": "jnp.polydiv's docstring: 'The dtype of the output is always promoted to inexact' "
                             "(float32 for float32 or int32); numpy's polydiv answers float64",
    "jnp.polyfit": "our reading: jnp.polyfit's docstring states no dtype and it solves in its inputs' inexact "
                   "dtype (float32, measured on 0.10.2); numpy's polyfit computes in float64",
    "jnp.roots": "jnp.roots's docstring examples answer complex64 for float32 coefficients; the entry's "
                 "reference (numpy's eigenvalues of the companion matrix) answers complex128",
}


@pytest.mark.parametrize("op", ENTRIES, ids=lambda op: op.name)
@settings(max_examples=5, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_entry_result_rule_gives_numpys_dtype_or_says_why_not(op, data):
    """On an entry's inputs its dtype rule gives numpy's reference dtype with x64 (numpy's defaults
    are 64-bit, as JAX's are with x64), and that dtype narrowed without x64; an entry where JAX's
    documentation and numpy differ says why in NUMPY_DTYPE_DIFFERS, and they do differ."""
    operands, static = data.draw(op.inputs)
    with np.errstate(all="ignore"):
        numpy_dtype = np.asarray(op.reference(*operands, **static)).dtype
    if op.name in NUMPY_DTYPE_DIFFERS:
        assert op.result_dtype(operands, x64=True) != numpy_dtype, NUMPY_DTYPE_DIFFERS[op.name]
    else:
        assert op.result_dtype(operands, x64=True) == numpy_dtype, f"{op.name} (rule {op.result!r})"
    # (where JAX's documented dtype is of another kind than numpy's, polyder's float for int, no narrowing relates them)
    if op.name not in NUMPY_DTYPE_DIFFERS or op.result_dtype(operands).kind == numpy_dtype.kind:
        assert op.result_dtype(operands) == dtypes.canonical(numpy_dtype), f"{op.name} (rule {op.result!r})"


def test_an_entry_with_an_unknown_dtype_rule_is_refused():
    with pytest.raises(dtypes.UnknownRule, match="no dtype rule 'widest'"):
        Op("x", "elementwise", "lambda x: x", np.positive, st.nothing(), result="widest")


def test_result_dtype_hand_worked():
    """sum of int32: int32, int64 with x64; argmax: int32; where: the branches' join; a gather:
    its data operand's dtype, whatever the indices' (the operands as the entries take them)."""
    x8, x32, idx = np.zeros((2, 2), np.int8), np.zeros((2, 2), np.int32), np.zeros(2, np.int32)
    assert BY_NAME["sum_int"].result_dtype((x32,)) == np.dtype("int32")
    assert BY_NAME["sum_int"].result_dtype((x32,), x64=True) == np.dtype("int64")
    assert BY_NAME["argmax"].result_dtype((np.zeros(3, np.float32),)) == np.dtype("int32")
    assert BY_NAME["where"].result_dtype((np.zeros(2, bool), x8, np.zeros(2, np.uint8))) == np.dtype("int16")
    assert BY_NAME["take"].result_dtype((x8, idx)) == np.dtype("int8")
    assert BY_NAME["add"].result_dtype((x8, x32)) == np.dtype("int32")


@given(data=st.data())
def test_dividing_specs_are_valid_and_divide_the_shape(data):
    """A drawn spec is valid for its mesh and every dimension's tiling divides its side."""
    shape_of_mesh = data.draw(st.sampled_from([(8,), (4, 2), (2, 2, 2), (1, 8), (2, 1, 4)]))
    mesh = MeshModel(tuple(range(math.prod(shape_of_mesh))), shape_of_mesh,
                     ("a", "b", "x")[:len(shape_of_mesh)])
    shape = tuple(data.draw(st.lists(st.sampled_from([1, 2, 3, 4, 6, 8, 0]), max_size=3)))
    spec = data.draw(dividing_specs(mesh, shape))
    check_spec(mesh, spec, len(shape))
    assert all(side % t == 0 for side, t in zip(shape, spec_tiling(mesh, spec, len(shape))))


def test_dynamic_slice_reference_counts_negative_starts_from_the_end_then_clamps():
    """Measured on JAX 0.4.30 and 0.7.2: for [0, 1, 2, 3] and size 2, start -1 -> 3 -> 2, start
    -3 -> 1, start -7 -> 0, start 5 -> 2."""
    x = np.arange(4)
    assert [clamped_starts((4,), (s,), (2,))[0] for s in (-7, -5, -4, -3, -1, 0, 3, 5)] == \
        [0, 0, 0, 1, 2, 0, 2, 2]
    assert dynamic_slice_reference(x, np.int32(-1), sizes=(2,)).tolist() == [2, 3]
    assert dynamic_update_slice_reference(x, np.array([9, 9]), np.int32(-5)).tolist() == [9, 9, 2, 3]


def test_lax_pad_reference_hand_worked():
    """Interior padding goes between elements; a negative edge removes elements (padding ones
    included)."""
    x = np.array([1.0, 2.0, 3.0])
    assert lax_pad_reference(x, 0.0, config=((0, 1, 1),)).tolist() == [1, 0, 2, 0, 3, 0]
    assert lax_pad_reference(x, 0.0, config=((-2, 0, 1),)).tolist() == [2, 0, 3]
    assert lax_pad_reference(x, 9.0, config=((1, -1, 0),)).tolist() == [9, 1, 2]
    # a negative low edge that starts the result on an interior padding element (1, 0, 2, 0, 3 less its first)
    assert lax_pad_reference(x, 0.0, config=((-1, 0, 1),)).tolist() == [0, 2, 0, 3]
    assert lax_pad_reference(x, 7.0, config=((-3, -1, 2),)).tolist() == [2, 7, 7]
    assert lax_pad_reference(np.ones((2, 2)), 0.0, config=((0, 0, 1), (1, 0, 0))).tolist() == \
        [[0, 1, 1], [0, 0, 0], [0, 1, 1]]


def test_shifted_ranges_match_the_tutorial_style_update():
    """shift=1 on axis 0 is x.at[:-1].set(x[1:])."""
    dst, src = shifted_ranges((5,), 0, 1)
    assert dst == (slice(0, 4),) and src == (slice(1, 5),)
    assert shifted_ranges((5,), 0, -2) == ((slice(2, 5),), (slice(0, 3),))


@given(shape=st.lists(st.integers(1, 8), min_size=1, max_size=3).map(tuple), data=st.data())
def test_static_index_kinds_keep_their_promise(shape, data):
    """In-range, strided and out-of-range indices select something; empty ones select nothing;
    out-of-range ones have a bound past an end."""
    for kind in ("in-range", "strided", "out-of-range", "empty"):
        index = data.draw(index_statics(kind)(shape))["index"]
        size = math.prod(slice_length(s, n) for s, n in zip(index, shape))
        assert (size == 0) == (kind == "empty"), (kind, index)
        if kind == "out-of-range":
            assert any(b is not None and not -n <= b <= n for s, n in zip(index, shape)
                       for b in (s.start, s.stop))
