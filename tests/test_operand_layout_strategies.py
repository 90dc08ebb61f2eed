"""The operand-layout strategies (``strategies/contractions.py``) exercise sharding where the
operation works, measured over runs of draws as Hypothesis's engine makes them for
``suites/test_operand_layouts.py`` (10 examples a run with the default profile), each share
against its stated floor; and their helpers, worked by hand.

No JAX here and nothing compiles: 8 device ids, as the suites force by default.

What is counted, and why each floor:

* constraints with UNCONSTRAINED dimensions (Auto draws): some constrained dimension cut over a
  mesh axis of size > 1 (>= 60%: else the check of the constrained axes sees only whole blocks),
  and the input laid out differently from the constraint along the constrained dimensions
  (>= 50%: a constraint that does nothing then shows);
* reshapes: the merged or split dimension of the input cut (>= 60%), merges and splits each
  (>= 30%);
* contractions: a contracting dimension cut on either operand (>= 60%), a batch dimension cut
  (>= 40% of the draws that have one), two contracting dimensions (>= 30%), each spelling (>= 30%);
* operands of more than one element that vary (>= 90%: a layout bug that moves blocks is invisible
  on an array of one value).
"""

from __future__ import annotations

import functools

import numpy as np

from conformance.model import sharding_rules as rules
from conformance.model.layout import Layout, MeshModel
from strategies.contractions import (Contraction, contraction_reference, contractions, cut_dims, dot_general_out,
                                     full_spec, partly_constrained, reshapes)
from tests.test_draw_statistics import Row, constant, minimal, runs, share, table

DEVICES = tuple(range(8))
AXIS_TYPES = ("Auto", "Explicit")
EXAMPLES_PER_RUN, RUNS = 10, 20


@functools.lru_cache(maxsize=None)
def drawn(name: str) -> tuple:
    strategy = {"constraints": partly_constrained, "reshapes": reshapes, "contractions": contractions}[name]
    return tuple(x for run in runs(strategy(DEVICES, AXIS_TYPES), RUNS, EXAMPLES_PER_RUN) for x in run)


def blocks_along(layout: Layout, dims) -> dict:
    return {d: tuple(block[k] for k in dims) for d, block in layout.blocks.items()}


def constraint_rows():
    auto = [e for e in drawn("constraints") if e.axis_type == "Auto"]
    cut = share(bool(cut_dims(e.mesh, e.spec) & set(e.constrained)) for e in auto)
    moved = share(blocks_along(Layout(e.mesh, e.in_spec, e.x.shape), e.constrained)
                  != blocks_along(Layout(e.mesh, e.spec, e.x.shape), e.constrained) for e in auto)
    return [Row("UNCONSTRAINED constraint: a constrained dimension cut", cut, 0.60, count=len(auto)),
            Row("UNCONSTRAINED constraint: input laid out otherwise along the constrained dimensions", moved, 0.50,
                count=len(auto))]


def reshape_rows():
    examples = drawn("reshapes")
    return [Row("reshape: the merged or split dimension cut",
                share(bool(cut_dims(e.mesh, e.in_spec) & set(e.dims)) for e in examples), 0.60, count=len(examples)),
            Row("reshape: merges", share(e.kind == "merge" for e in examples), 0.30, count=len(examples)),
            Row("reshape: splits", share(e.kind == "split" for e in examples), 0.30, count=len(examples))]


def contraction_rows():
    examples = drawn("contractions")
    with_batch = [c for c in examples if c.batch_letters]

    def cut_on_either(c: Contraction, pick) -> bool:
        (lhs, rhs) = pick(c)
        return bool(cut_dims(c.mesh, c.lhs_spec) & set(lhs)) or bool(cut_dims(c.mesh, c.rhs_spec) & set(rhs))
    return [Row("contraction: a contracting dimension cut", share(cut_on_either(c, lambda c: c.contracting)
                                                                   for c in examples), 0.60, count=len(examples)),
            Row("contraction: a batch dimension cut (of those with one)",
                share(cut_on_either(c, lambda c: c.batch) for c in with_batch), 0.40, count=len(with_batch)),
            Row("contraction: two contracting dimensions", share(len(c.contracting_letters) == 2 for c in examples),
                0.30, count=len(examples)),
            Row("contraction: dot_general", share(c.spelling == "dot_general" for c in examples), 0.30,
                count=len(examples)),
            Row("contraction: einsum", share(c.spelling == "einsum" for c in examples), 0.30, count=len(examples))]


def values_row():
    arrays = [e.x for e in drawn("constraints") + drawn("reshapes")] + \
        [a for c in drawn("contractions") for a in (c.x, c.y)]
    arrays = [a for a in arrays if a.size > 1]
    return Row("operands that vary", share(not constant(a) for a in arrays), 0.90, count=len(arrays))


def test_every_statistic_holds_its_floor():
    """Every share in the table is on the right side of its floor (the table is printed)."""
    rows = constraint_rows() + reshape_rows() + contraction_rows() + [values_row()]
    text = table(rows)
    print("\n" + text)
    failing = [r.name for r in rows if not r.held]
    assert not failing, f"below their floors: {failing}\n{text}"


def test_shrinking_heads_for_small_sharded_examples():
    """The minimal draws are small and cut where the operation works, on all the devices: a
    constraint of a rank-2 array of at most 16 elements, a constrained dimension cut; a merge or
    split of at most 16 elements, the merged or split dimension cut; a dot_general of two vectors
    over their one contracting dimension, cut."""
    e = minimal(partly_constrained(DEVICES, AXIS_TYPES))
    assert e.x.ndim == 2 and e.x.size <= 16 and e.mesh.device_ids == DEVICES, e
    assert cut_dims(e.mesh, e.spec) & set(e.constrained), e
    r = minimal(reshapes(DEVICES, AXIS_TYPES))
    assert r.x.size <= 16 and r.mesh.device_ids == DEVICES and cut_dims(r.mesh, r.in_spec) & set(r.dims), r
    c = minimal(contractions(DEVICES, AXIS_TYPES))
    assert (c.spelling, c.lhs, c.rhs) == ("dot_general", "k", "k") and c.mesh.device_ids == DEVICES, c
    assert cut_dims(c.mesh, c.lhs_spec) == {0}, c


# --- the helpers, by hand -------------------------------------------------------------------------
MESH = MeshModel(DEVICES, (2, 4), ("a", "b"))


def contraction(lhs, rhs, out, x_shape, y_shape, spelling="einsum") -> Contraction:
    x = np.arange(np.prod(x_shape), dtype=np.int32).reshape(x_shape) - 3
    y = np.arange(np.prod(y_shape), dtype=np.int32).reshape(y_shape) % 5
    return Contraction(MESH, "Auto", spelling, x, y, lhs, rhs, out, (), (), ())


def test_dimension_numbers_follow_the_letters():
    """x[k, b, m] . y[n, b, k]: contracting (2nd.. by position) ((0,), (2,)), batch ((1,), (1,)),
    dot_general's result letters batch, x's free, y's free."""
    c = contraction("kbm", "nbk", "bmn", (2, 4, 8), (4, 4, 2))
    assert c.dimension_numbers == (((0,), (2,)), ((1,), (1,)))
    assert dot_general_out("kbm", "nbk") == "bmn" and dot_general_out("lk", "kln") == "n"
    assert c.out_shape == (4, 8, 4)
    assert c.focus_dims() == (frozenset({0, 1}), frozenset({1, 2}))


def test_contraction_reference_sums_by_hand():
    """x[k, l] . y[l, k] over both letters is sum_{k,l} x[k,l] * y[l,k]; with a batch letter, per batch."""
    c = contraction("kl", "lk", "", (2, 4), (4, 2))
    assert contraction_reference(c) == sum(int(c.x[k, m]) * int(c.y[m, k]) for k in range(2) for m in range(4))
    c = contraction("bk", "kb", "b", (2, 4), (4, 2))
    np.testing.assert_array_equal(contraction_reference(c), [sum(int(c.x[b, k]) * int(c.y[k, b]) for k in range(4))
                                                             for b in range(2)])
    assert contraction_reference(c).dtype == np.int32


def test_the_model_reshapes_the_briefs_examples():
    """(4@a, 2) -> (8,) takes 'a'; (8@(a,b),) -> (2, 4) deals 'a' to the 2 and 'b' to the 4; before JAX
    0.10.0's rule, the split puts ('a','b') (8 ways) on the first new dimension of 2: ill-typed."""
    assert rules.reshape(MESH, (4, 2), ("a", None), (8,)) == ("a",)
    assert rules.reshape(MESH, (8,), (("a", "b"),), (2, 4)) == ("a", "b")
    try:
        rules.reshape(MESH, (8,), (("a", "b"),), (2, 4), deals_axes=False)
    except rules.IllTyped:
        pass
    else:
        raise AssertionError("the rule before 0.10.0 should refuse")


def test_drawn_shapes_are_what_they_say():
    """A merge's new shape merges its consecutive dims (same element count); a split's new
    dimensions multiply to the split side; a constraint's unconstrained entries name no axis."""
    for r in drawn("reshapes")[:100]:
        assert np.prod(r.x.shape) == np.prod(r.new_shape)
        if r.kind == "merge":
            assert r.new_shape[r.new_dims[0]] == np.prod([r.x.shape[d] for d in r.dims])
            assert list(r.dims) == list(range(r.dims[0], r.dims[-1] + 1))
        else:
            assert np.prod([r.new_shape[d] for d in r.new_dims]) == r.x.shape[r.dims[0]]
    for e in drawn("constraints")[:100]:
        assert len(e.spec) == e.x.ndim and e.unconstrained
        assert all(e.spec[d] is None for d in e.unconstrained)
        assert full_spec(e.spec, e.x.ndim) == e.spec


if __name__ == "__main__":
    print(table(constraint_rows() + reshape_rows() + contraction_rows() + [values_row()]))
