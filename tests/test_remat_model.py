"""The checkpoint-policy model (``conformance.model.remat``) on hand-worked cases, and the draws of
the branch and checkpoint properties of ``suites/test_control_flow.py`` against stated floors.

Hand-worked: sin_dot (d = x @ w; s = checkpoint_name(sin(d), "s"); g = einsum("ij,ij->i", s, v);
sum(sin(g))). Its derivative needs x, w, cos(d), s, v and cos(g). By policy, following what each
needed value is recomputed from:

* no checkpoint / everything_saveable: x, w, v, cos(d), s (named), cos(g);
* nothing_saveable: x, w, v only;
* dots_saveable: cos(d) from d (a dot: saved), s from d, cos(g) from g (a dot: saved): x, w, v, d, g;
* dots_with_no_batch_dims_saveable: as dots, but g has a batch dimension: recomputed from s and v,
  s from d: x, w, v, d;
* save_only_these_names("s"): cos(d) from d from x and w; s saved; cos(g) from g from s and v:
  x, w, v, s;
* save_any_names_but_these("s"): nothing else is named: x, w, v;
* save_any_names_but_these("t"): s is named, not "t": x, w, v, s.

Draw floors (runs of 10 examples, as the default profile gives each property; 20 runs):

* branch examples: x or y cut over a mesh axis of size > 1 in >= 75% of draws (measured 84%); k
  (the index's array) cut in >= 80% (90%); switch examples whose index is out of range in >= 25%
  of them (35%: a clamp bug shows); on releases with Explicit axes, Explicit examples whose
  branches agree in >= 25% (42%) and ones whose branches differ in >= 10% (15.5%) of draws (where
  the release compares branch sharding types: 0.7.2 on);
* checkpoint examples: some operand cut in >= 90% (99%); the contracted side k cut in >= 60% (79%);
  a policy other than everything_saveable in >= 80% (89.5%); an inner constraint in >= 30% (41%).
"""

from __future__ import annotations

import pytest

from conformance.model import remat
from conformance.model.layout import MeshModel, spec_axes
from conformance.model.remat import Policy, Residual
from tests import test_draw_statistics as draw_statistics

DEVICES = tuple(range(8))
RUNS, PER_RUN = 20, 10


def _sin_dot(constrained=False):
    return remat.sin_dot_program(4, 8, 2, name="s", constrained=constrained)


ARGS = (Residual("argument", "x", (4, 8)), Residual("argument", "w", (8, 2)), Residual("argument", "v", (4, 2)))
D = Residual("output", "dot_general", (4, 2))
G = Residual("output", "dot_general", (4,))
S = Residual("named", "s", (4, 2))
EVERYTHING = ARGS + (Residual("output", "cos", (4, 2)), S, Residual("output", "cos", (4,)))

HAND_WORKED = [
    (None, EVERYTHING),
    (Policy("everything_saveable"), EVERYTHING),
    (Policy("nothing_saveable"), ARGS),
    (Policy("dots_saveable"), ARGS + (D, G)),
    (Policy("checkpoint_dots"), ARGS + (D, G)),
    (Policy("dots_with_no_batch_dims_saveable"), ARGS + (D,)),
    (Policy("save_only_these_names", frozenset({"s"})), ARGS + (S,)),
    (Policy("save_only_these_names", frozenset({"t"})), ARGS),
    (Policy("save_any_names_but_these", frozenset({"s"})), ARGS),
    (Policy("save_any_names_but_these", frozenset({"t"})), ARGS + (S,)),
]


@pytest.mark.parametrize("policy, expected", HAND_WORKED, ids=lambda p: str(p) if p is None else getattr(p, "kind", ""))
def test_sin_dot_residuals_by_policy(policy, expected):
    assert remat.saved_residuals(_sin_dot(), policy) == tuple(sorted(expected))


def test_a_constraint_between_the_dot_and_sin_does_not_change_what_dots_saveable_saves():
    # cos(c) and s are recomputed from c, c (a constraint, not a dot) from d, which is saved
    assert remat.saved_residuals(_sin_dot(True), Policy("dots_saveable")) == tuple(sorted(ARGS + (D, G)))
    # with everything saveable, cos(c) is saved: the constraint's output is not needed itself
    assert remat.saved_residuals(_sin_dot(True), None) == tuple(sorted(EVERYTHING))


def test_unknown_policies_and_dangling_inputs_are_refused():
    with pytest.raises(ValueError):
        Policy("save_everything_twice")
    with pytest.raises(ValueError):
        remat.program([remat.Value("d", "dot", (2,), ("x", "w"))], ("d",))


def test_residual_text_reads_like_print_saved_residuals():
    assert str(Residual("named", "s", (4, 2))) == "[4, 2] named s"
    assert str(Residual("argument", "x", (4, 8))) == "[4, 8] from the argument x"


# --- draw statistics ---------------------------------------------------------------------------
def _runs(strategy):
    return [x for run in draw_statistics.runs(strategy, RUNS, PER_RUN) for x in run]


def _cuts(mesh: MeshModel, spec) -> bool:
    return any(mesh.axis_sizes[n] > 1 for axes in spec_axes(spec) for n in axes)


def _cut_dims(mesh: MeshModel, spec) -> set:
    return {d for d, axes in enumerate(spec_axes(spec)) if any(mesh.axis_sizes[n] > 1 for n in axes)}


def _share(examples, holds) -> float:
    return sum(1 for e in examples if holds(e)) / len(examples)


def test_branch_draws_shard_and_leave_the_index_range():
    from conformance.jaxside import compat
    from suites.test_control_flow import branch_examples, explicit_output_specs
    drawn = _runs(branch_examples(DEVICES))
    switches = [e for e in drawn if e.selector == "switch"]
    stats = {
        "x or y cut": _share(drawn, lambda e: _cuts(e.mesh, e.x_spec) or _cuts(e.mesh, e.y_spec)),
        "k cut": _share(drawn, lambda e: _cuts(e.mesh, e.k_spec)),
        "switch index out of range": _share(switches, lambda e: not 0 <= int(e.k.sum()) < e.branches),
    }
    floors = {"x or y cut": 0.75, "k cut": 0.8, "switch index out of range": 0.25}
    if "Explicit" in compat.mesh_axis_types() and compat.BRANCHES_COMPARE_OUTPUT_SHARDING_TYPES:
        agree = lambda e: len(set(explicit_output_specs(e))) == 1
        stats["Explicit, branches agree"] = _share(drawn, lambda e: e.axis_type == "Explicit" and agree(e))
        stats["Explicit, branches differ"] = _share(drawn, lambda e: e.axis_type == "Explicit" and not agree(e))
        floors.update({"Explicit, branches agree": 0.25, "Explicit, branches differ": 0.1})
    low = {k: v for k, v in stats.items() if v < floors[k]}
    print(stats)
    assert not low, f"below the floors {floors}: {low} (all: {stats})"


def test_checkpoint_draws_shard_and_vary_the_policy():
    from suites.test_control_flow import remat_examples
    drawn = _runs(remat_examples(DEVICES))
    stats = {
        "an operand cut": _share(drawn, lambda e: any(_cuts(e.mesh, s) for s in e.specs)),
        "contracted side cut": _share(drawn, lambda e: 1 in _cut_dims(e.mesh, e.specs[0])
                                      or 0 in _cut_dims(e.mesh, e.specs[1])),
        "policy not everything_saveable": _share(drawn, lambda e: e.policy[0] != "everything_saveable"),
        "inner constraint": _share(drawn, lambda e: e.inner_spec is not None),
    }
    floors = {"an operand cut": 0.9, "contracted side cut": 0.6, "policy not everything_saveable": 0.8,
              "inner constraint": 0.3}
    low = {k: v for k, v in stats.items() if v < floors[k]}
    print(stats)
    assert not low, f"below the floors {floors}: {low} (all: {stats})"
