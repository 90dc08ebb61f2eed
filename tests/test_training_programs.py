"""Self-tests of suites/test_training.py's model parts: the numpy Adam reference against a
hand-worked step, the MLP's and the stack's analytic gradients against central differences, the
stack's numpy forward pass against a hand-worked layer, Adam's carried bound on a worst case, and the
draws' floors (how often the training and stack examples split something, use each role, draw
Explicit meshes, each checkpoint policy, bfloat16).

Floors, measured over 400 draws of each strategy as Hypothesis's engine draws them (runs of 20, the
minimal example first in each), on 8 devices (the suites' default):

* >= 70% of the examples split some array over a mesh axis of size > 1 (the layout names a role
  whose axes have a total size > 1);
* each role (data, fsdp, tensor, sequence) splits in >= 20% of them, and >= 25% combine two roles
  that split;
* Explicit meshes in >= 25% (where the release has them);
* each checkpoint policy in >= 10% of the stack examples; bfloat16 in >= 12% of the drawn stacks.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance.jaxside import compat
from suites import test_training as t
from tests.test_draw_statistics import runs

DEVICES = tuple(range(8))


def test_adam_reference_matches_a_hand_worked_step():
    """One Adam step from zero moments, g = 0.5, p = 1, lr 0.01, b1 0.9, b2 0.99, eps 0.1: m = 0.05,
    v = 0.0025, mhat = 0.5, vhat = 0.25, p = 1 - 0.01 * 0.5 / (0.5 + 0.1) = 0.991666...; a second
    step with g = -0.5: m = 0.045 - 0.05 = -0.005, v = 0.002475 + 0.0025 = 0.004975, mhat =
    -0.005 / 0.19, vhat = 0.004975 / 0.0199 = 0.25, update 0.01 * (0.005 / 0.19) / 0.6."""
    hp = t.Adam(lr=0.01, b1=0.9, b2=0.99, eps=0.1)
    state = {"m": {"w": np.zeros(1)}, "v": {"w": np.zeros(1)}, "count": 0}
    updates, state = t.adam_reference({"w": np.array([0.5])}, state, hp)
    assert state["count"] == 1
    np.testing.assert_allclose(state["m"]["w"], [0.05])
    np.testing.assert_allclose(state["v"]["w"], [0.0025])
    np.testing.assert_allclose(updates["w"], [-0.01 * 0.5 / 0.6])
    updates, state = t.adam_reference({"w": np.array([-0.5])}, state, hp)
    np.testing.assert_allclose(state["m"]["w"], [-0.005])
    np.testing.assert_allclose(state["v"]["w"], [0.004975])
    np.testing.assert_allclose(updates["w"], [0.01 * (0.005 / 0.19) / (0.5 + 0.1)])


def test_applied_in_float32_rounds_each_sum():
    """1 + 2**-24 is a tie that float32 rounds to even (1.0), so two such updates leave 1.0, while
    their float64 sum 2**-23 is float32's next value after 1; and 1 + 3 * 2**-24 rounds up to
    1 + 2**-22 (the tie goes to the even neighbour)."""
    tiny = np.array([2.0 ** -24])
    assert t.applied_in_float32(np.array([1.0], np.float32), [tiny, tiny])[0] == np.float32(1.0)
    assert t.applied_in_float32(np.array([1.0], np.float32), [tiny + tiny])[0] == np.float32(1 + 2.0 ** -23)
    assert t.applied_in_float32(np.array([1.0], np.float32), [3 * tiny])[0] == np.float32(1 + 2.0 ** -22)
    assert t.applied_in_float32(np.array([1.0], np.float32), [tiny]).dtype == np.float32


def central_differences(loss, params: dict, step: float = 1e-6) -> dict:
    """``d loss / d params[k]`` for every element of every parameter, by central differences."""
    numeric = {}
    for k, p in params.items():
        numeric[k] = np.zeros_like(p)
        for index in np.ndindex(p.shape):
            up, down = {**params, k: p.copy()}, {**params, k: p.copy()}
            up[k][index] += step
            down[k][index] -= step
            numeric[k][index] = (loss(up) - loss(down)) / (2 * step)
    return numeric


def test_mlp_reference_gradient_matches_central_differences():
    """The MLP's hand-written backpropagation equals central differences of its loss (float64)."""
    r = np.random.default_rng(1)
    params = {"embed": r.uniform(-1, 1, (5, 3)), "w1": r.uniform(-1, 1, (3, 4)) / 3,
              "b1": r.uniform(-0.5, 0.5, (4,)), "w2": r.uniform(-1, 1, (4, 5)) / 4}
    ids, labels = r.integers(0, 5, (2, 3)), r.integers(0, 5, (2, 3))
    _, grads = t.mlp_reference(params, ids, labels)
    numeric = central_differences(lambda p: t.mlp_reference(p, ids, labels)[0], params)
    for k in params:
        np.testing.assert_allclose(grads[k], numeric[k], rtol=1e-6, atol=1e-8, err_msg=k)


def test_stack_reference_applies_the_layers_in_order():
    """Two hand-worked scalar layers: h1 = 1 + tanh(1 * 2 + 0) * 1, h2 = h1 + tanh(h1 * 1 + 1) * -1."""
    params = {"w_in": np.array([[[2.0]], [[1.0]]]), "b": np.array([[0.0], [1.0]]),
              "w_out": np.array([[[1.0]], [[-1.0]]])}
    h1 = 1 + np.tanh(2.0)
    h2 = h1 - np.tanh(h1 + 1)
    loss, h = t.stack_reference(params, np.ones((1, 1, 1)), np.zeros((1, 1, 1), np.float32))
    np.testing.assert_allclose(h, [[[h2]]])
    np.testing.assert_allclose(loss, h2 ** 2)


def test_stack_gradients_match_central_differences():
    """The stack's hand-written backpropagation equals central differences of its loss (float64)."""
    r = np.random.default_rng(2)
    params = {"w_in": r.uniform(-1, 1, (2, 3, 4)) / 3, "b": r.uniform(-1, 1, (2, 4)),
              "w_out": r.uniform(-1, 1, (2, 4, 3)) / 8}
    x, target = r.uniform(-1, 1, (2, 2, 3)), r.uniform(-1, 1, (2, 2, 3))
    grads = t.stack_gradients(params, x, target)
    numeric = central_differences(lambda p: t.stack_reference(p, x, target)[0], params)
    for k in params:
        np.testing.assert_allclose(grads[k], numeric[k], rtol=1e-6, atol=1e-9, err_msg=k)


def test_adam_reference_carries_a_bound_that_covers_a_perturbed_gradient():
    """Adam's reference on Bounded gradients (each off by up to 1e-4): a first step from a gradient
    moved within that bound, near |g| ~ eps where the update is steepest and at 0, moves the update
    by no more than the bound it carries."""
    from conformance.checking import running_error as rounding
    zero = {"m": {"w": np.zeros(1)}, "v": {"w": np.zeros(1)}, "count": 0}
    for g in (0.0, 1e-3, t.ADAM.eps, 1.0):
        bounded, _ = t.adam_reference({"w": rounding.Bounded([g], [1e-4])}, zero)
        for moved in (g - 1e-4, g + 1e-4):
            a, _ = t.adam_reference({"w": np.array([moved])}, zero)
            assert abs(a["w"][0] - bounded["w"].value[0]) <= bounded["w"].bound[0], (g, moved)


# --- draw statistics ------------------------------------------------------------------------
def _splitting_roles(layout) -> set:
    return set(layout.splits())


@pytest.fixture(scope="module")
def training_draws():
    return [e for run in runs(t.training_examples(), 20, 20) for e in run]


@pytest.fixture(scope="module")
def stack_draws():
    return [e for run in runs(t.stack_examples(soak=True), 20, 20) for e in run]


def _layout_floors(layouts) -> dict:
    n = len(layouts)
    split = [_splitting_roles(layout) for layout in layouts]
    stats = {"split something": sum(bool(s) for s in split) / n,
             "two roles": sum(len(s) >= 2 for s in split) / n,
             **{f"{role} splits": sum(role in s for s in split) / n for role in ("data", "fsdp", "tensor", "sequence")}}
    if "Explicit" in compat.mesh_axis_types():
        stats["Explicit"] = sum(layout.axis_type == "Explicit" for layout in layouts) / n
    return stats


FLOORS = {"split something": 0.70, "two roles": 0.25, "data splits": 0.20, "fsdp splits": 0.20,
          "tensor splits": 0.20, "sequence splits": 0.20, "Explicit": 0.25}


def test_training_examples_split_with_every_role(training_draws):
    """Training examples meet the layout floors (module docstring)."""
    stats = _layout_floors([e.layout for e in training_draws])
    print(stats)
    assert {k: v for k, v in stats.items() if v < FLOORS[k]} == {}


def test_stack_examples_split_and_draw_every_policy_and_bfloat16(stack_draws):
    """Drawn stacks meet the layout floors, draw each policy in >= 10% and bfloat16 in >= 12%."""
    stats = _layout_floors([e.layout for e in stack_draws])
    n = len(stack_draws)
    stats.update({f"policy {p}": sum(e.policy == p for e in stack_draws) / n for p in t.POLICIES})
    stats["bfloat16"] = sum(e.dtype == "bfloat16" for e in stack_draws) / n
    print(stats)
    floors = {**FLOORS, **{f"policy {p}": 0.10 for p in t.POLICIES}, "bfloat16": 0.12}
    assert {k: v for k, v in stats.items() if v < floors[k]} == {}
