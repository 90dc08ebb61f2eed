"""The contexts property's model (suites/test_program_contexts.py) against hand-worked examples:
what a batch varies, what a shard_map body's program sees and returns, and the script a failure
shows. No JAX computes anything here."""

import numpy as np

from conformance.model.layout import MeshModel
from conformance.model.program import Step
from strategies.contexts import Context, body_specs, varied
from strategies.programs import written_program
from suites.test_program_contexts import (body_out_specs, context_lines, expected_outputs, global_inputs)

LINE = MeshModel((0, 1), (2,), ("a",))
GRID = MeshModel((0, 1, 2, 3), (2, 2), ("a", "b"))


def negated(mesh, x, spec=()):
    return written_program(mesh, [(x, spec)], [Step("v0", "negative", ("x0",))], [()])


def test_a_batch_varies_its_uint32_inputs_only():
    """Example k of a uint32 input is x * (2k + 1) + k modulo 2**32 (x itself at 0); an int32 or
    boolean input is the same in every example."""
    x = np.array([0, 1, 2**32 - 1], np.uint32)
    assert varied(x, 0) is x or np.array_equal(varied(x, 0), x)
    assert varied(x, 1).tolist() == [1, 4, (3 * (2**32 - 1) + 1) % 2**32]
    assert varied(x, 2).tolist() == [2, 7, (5 * (2**32 - 1) + 2) % 2**32]
    index = np.array([1, 0], np.int32)
    assert varied(index, 3) is index and varied(np.array([True]), 1).tolist() == [True]


def test_vmap_and_scan_expect_each_example_stacked():
    """-x over a batch of two: [-x, -(3x + 1)] (uint32, wrapping)."""
    program = negated(LINE, np.array([1, 2], np.uint32))
    for kind in ("vmap", "scan"):
        (got,) = expected_outputs(program, Context(kind, batch=2), x64=False)
        assert got.dtype == np.uint32
        assert got.tolist() == [[2**32 - 1, 2**32 - 2], [2**32 - 4, 2**32 - 7]]


def test_a_shard_map_body_sees_blocks_and_returns_one_block_per_device():
    """x = [1, 2] is each block of an input cut over 'a' (two blocks: [1, 2] and [4, 7]); the body's
    -x comes back with a leading dimension of one, which the out_spec cuts over 'a': [[-1, -2],
    [-4, -7]]. An input cut over no axis gives a body that varies over none: out_spec P(), one row."""
    program = negated(LINE, np.array([1, 2], np.uint32))
    cut = Context("shard_map", body_specs=(("a",),))
    assert global_inputs(program, cut)[0].tolist() == [1, 2, 4, 7]
    assert body_out_specs(program, cut) == ((("a",),),)
    (got,) = expected_outputs(program, cut, x64=False)
    assert got.tolist() == [[2**32 - 1, 2**32 - 2], [2**32 - 4, 2**32 - 7]]
    whole = Context("shard_map", body_specs=((),))
    assert body_out_specs(program, whole) == ((),)
    assert expected_outputs(program, whole, x64=False)[0].tolist() == [[2**32 - 1, 2**32 - 2]]


def test_a_body_output_varies_over_the_axes_of_the_inputs_it_is_computed_from():
    """On a (2, 2) mesh, x0 cut over 'b' and x1 over 'a': an output of x0 alone varies over 'b',
    x0 + x1 over both, in the mesh's order."""
    x = np.array([1, 2], np.uint32)
    program = written_program(GRID, [(x, ()), (x, ())], [Step("v0", "negative", ("x0",)),
                                                         Step("v1", "add", ("v0", "x1"))], [(), ()],
                              outputs=("v0", "v1"))
    context = Context("shard_map", body_specs=(("b",), ("a",)))
    assert body_out_specs(program, context) == ((("b",),), (("a", "b"),))


def test_the_script_of_each_context_defines_the_program_there():
    """Each context's lines define ``contexted`` and ``placements``: a nested jit, checkpoint with
    its policy, a scan over the stacked inputs, vmap with its spmd_axis_name, a shard_map of the
    program run unsharded in its body."""
    program = negated(LINE, np.array([1, 2], np.uint32), ("a",))
    text = lambda context: "\n".join(context_lines(program, context))
    assert "jax.jit(lambda *a: jax.jit(program)(*a)" in text(Context("nested_jit"))
    assert "jax.checkpoint(program, policy=jax.checkpoint_policies.dots_saveable)" in \
        text(Context("checkpoint", policy="dots_saveable"))
    assert "lax.scan(lambda carry, x: (carry, program(*x)), None, xs)" in text(Context("scan", batch=2))
    assert "P(None, 'a')" in text(Context("scan", batch=2))  # the batch dimension leads, unsharded
    assert "jax.vmap(program, spmd_axis_name='a')" in text(Context("vmap", batch=2, spmd_axis_name="a"))
    body = text(Context("shard_map", body_specs=(("a",),), check_vma=False))
    assert "def unsharded(x0):" in body and "unsharded(*blocks)" in body and "=False" in body


def test_body_specs_name_each_axis_at_most_once():
    """Every drawn body spec names each mesh axis once at most, on a dimension of the input."""
    from hypothesis import given, settings

    @settings(max_examples=50, database=None)
    @given(body_specs(GRID, 2))
    def check(spec):
        named = [a for entry in spec for a in ((entry,) if isinstance(entry, str) else (entry or ()))]
        assert len(named) == len(set(named)) and len(spec) <= 2
    check()


def test_a_batch_of_indices_is_refused_where_it_slices_a_named_dimension_partially():
    """The measured cases (0.6.2, 0.7.2, 0.10.2) of x uint32[4, 8] per example on an Explicit (a=4,
    b=2) mesh: a dynamic_slice whose start moves along dimension 0 (uncut) keeping dimension 1 (cut
    over 'a') whole is accepted, one slicing the cut dimension partially is refused; an update likewise
    (a scatter); x[i] of a dimension typed 'b' is refused even over a size-1 axis, of an uncut one
    accepted; before the gather and scatter rules (0.6.x) any named operand is refused."""
    from conformance.model.sharding_rules import LATEST, batched_indexing_refusal
    from dataclasses import replace
    cut = (None, "a")
    assert batched_indexing_refusal("dynamic_slice", (4, 8), cut, (2, 8)) is None
    assert "dimension 1" in batched_indexing_refusal("dynamic_slice", (4, 8), cut, (4, 2))
    assert batched_indexing_refusal("dynamic_update_slice", (4, 8), cut, (1, 8)) is None
    assert "scatter" in batched_indexing_refusal("dynamic_update_slice", (4, 8), cut, (4, 4))
    assert batched_indexing_refusal("index_array", (2, 8), ("b",), ()) is not None
    assert batched_indexing_refusal("index_array", (2, 8), cut, ()) is None
    early = replace(LATEST, gather_has_a_rule=False, batched_scatter_has_a_rule=False)
    assert batched_indexing_refusal("dynamic_slice", (4, 8), cut, (2, 8), early) is not None
    assert batched_indexing_refusal("dynamic_slice", (4, 8), (), (2, 8), early) is None
    assert batched_indexing_refusal("take", (4, 8), cut, ()) is None  # (not an indexing vmap turns into a gather)
