"""Self-tests of suites/test_model_programs.py's oracle and draws: its numpy float64 references
(layer norm, tanh-gelu, softmax, causal attention, the feed-forward layer, the MLP, the transformer
block's cross-entropy, the drawn stack's mean square) against examples worked by hand, and the
draws' floors.

Floors, measured over 400 draws of each strategy as Hypothesis's engine draws them (runs of 20, the
minimal example first in each), on 8 devices (the suites' default):

* model examples: bfloat16 in >= 15% (measured 23%), causal and non-causal attention each in
  >= 30% (45% causal), some array split over a mesh axis of size > 1 in >= 70% (98%);
* layer stacks: each block kind in >= 30% of the stacks (44-52%), two kinds or more in >= 40% (62%),
  four blocks in >= 15% (27%), a dense block changing the width in >= 10% (21%).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from suites import test_model_programs as m
from tests.test_draw_statistics import runs

GELU_OF_ONE = 0.8411919906082768  # 0.5 (1 + tanh(sqrt(2 / pi) * 1.044715)), the tanh form at 1


def test_layer_norm_of_one_two_three():
    """[1, 2, 3]: mean 2, variance 2/3, so (x - 2) / sqrt(2/3 + 1e-5) = [-c, 0, c], then scaled by
    [1, 2, 1] and offset by [0, 0, 5]."""
    c = 1 / math.sqrt(2 / 3 + 1e-5)
    got = m.np_layer_norm(np.array([[1.0, 2.0, 3.0]]), np.array([1.0, 2.0, 1.0]), np.array([0.0, 0.0, 5.0]))
    np.testing.assert_allclose(got, [[-c, 0.0, c + 5]], rtol=1e-15)


def test_gelu_at_zero_one_and_its_odd_part():
    """gelu(0) = 0, gelu(1) = 0.84119199..., and gelu(x) - gelu(-x) = x."""
    np.testing.assert_allclose(m.np_gelu(np.array([0.0, 1.0])), [0.0, GELU_OF_ONE], rtol=1e-15, atol=0)
    x = np.array([0.3, 1.7, 4.0])
    np.testing.assert_allclose(m.np_gelu(x) - m.np_gelu(-x), x, rtol=1e-15)


def test_softmax_of_zero_and_log_three():
    """softmax([0, ln 3]) = [1/4, 3/4], and adding 1000 to both (exp overflows unshifted) changes nothing."""
    s = np.array([0.0, math.log(3)])
    np.testing.assert_allclose(m.np_softmax(s), [0.25, 0.75], rtol=1e-15)
    np.testing.assert_allclose(m.np_softmax(s + 1000), [0.25, 0.75], rtol=1e-12)


def test_causal_attention_of_one_head_of_width_one():
    """q = k = v = x = [1, 2] (identity weights, one head of width 1): position 0 sees itself only
    (output 1); position 1 weighs scores [2, 4] by softmax, output (1 + 2 e^2) / (1 + e^2). Without
    the mask position 0 weighs scores [1, 2]: (1 + 2 e) / (1 + e)."""
    one = np.ones((1, 1, 1))
    p = {"wq": one, "wk": one, "wv": one, "wo": one}
    x = np.array([[[1.0], [2.0]]])
    e2, e = math.exp(2), math.exp(1)
    np.testing.assert_allclose(m.np_attention(p, x, True)[0, :, 0], [1.0, (1 + 2 * e2) / (1 + e2)], rtol=1e-15)
    np.testing.assert_allclose(m.np_attention(p, x, False)[0, :, 0], [(1 + 2 * e) / (1 + e), (1 + 2 * e2) / (1 + e2)],
                               rtol=1e-15)


def test_mlp_and_feed_forward_of_width_one():
    """w1 = 1, b1 = 0, w2 = 2, b2 = 1 on x = 1: 2 gelu(1) + 1, as an MLP and as a feed-forward layer."""
    params = {"w1": np.array([[1.0]]), "b1": np.array([0.0]), "w2": np.array([[2.0]]), "b2": np.array([1.0])}
    np.testing.assert_allclose(m.np_mlp(params, np.array([[1.0]])), [[2 * GELU_OF_ONE + 1]], rtol=1e-15)
    np.testing.assert_allclose(m.np_feed_forward(params, np.array([[[1.0]]])), [[[2 * GELU_OF_ONE + 1]]], rtol=1e-15)


def test_transformer_block_with_a_zero_embedding_predicts_uniformly():
    """A zero embedding table makes every logit 0 (they are h @ embed.T), whatever the layers do:
    the cross-entropy is ln(vocab) for any labels."""
    rng = np.random.default_rng(0)
    params = m.block_params(rng)
    params = {**params, "embed": np.zeros_like(params["embed"])}
    vocab = params["embed"].shape[0]
    ids = rng.integers(0, vocab, (2, 3))
    loss, logits = m.np_transformer_block(True, params, ids, rng.integers(0, vocab, (2, 3)))
    assert not logits.any()
    assert loss == pytest.approx(math.log(vocab), rel=1e-15)


def test_transformer_block_cross_entropy_picks_the_label():
    """Embedding rows e0 = [1, 0], e1 = [0, 1] with every layer zero (attention and feed-forward
    add nothing, so h = e[id]): the token id 0 gives logits [1, 0]; against label 0 its loss is
    ln(1 + e^-1), against label 1 it is ln(1 + e)."""
    zero2 = np.zeros((2, 1, 1))
    params = {"embed": np.eye(2), "ln1_scale": np.ones(2), "ln1_offset": np.zeros(2), "ln2_scale": np.ones(2),
              "ln2_offset": np.zeros(2),
              "attn": {"wq": zero2, "wk": zero2, "wv": zero2, "wo": np.zeros((1, 1, 2))},
              "ffn": {"w1": np.zeros((2, 1)), "b1": np.zeros(1), "w2": np.zeros((1, 2)), "b2": np.zeros(2)}}
    ids = np.array([[0]])
    loss0, logits = m.np_transformer_block(True, params, ids, np.array([[0]]))
    loss1, _ = m.np_transformer_block(True, params, ids, np.array([[1]]))
    np.testing.assert_allclose(logits, [[[1.0, 0.0]]])
    assert loss0 == pytest.approx(math.log(1 + math.exp(-1)), rel=1e-15)
    assert loss1 == pytest.approx(math.log(1 + math.e), rel=1e-15)


def test_layer_stack_of_one_norm_block():
    """A norm block on [1, 2, 3] (scale 1, offset 0) gives [-c, 0, c] with c^2 = 1 / (2/3 + 1e-5),
    whose mean square is (2/3) / (2/3 + 1e-5)."""
    x = np.array([[[1.0, 2.0, 3.0]]])
    out, mean_square = m.np_layer_stack((("norm", 3),), [{"scale": np.ones(3), "offset": np.zeros(3)}], x)
    c = 1 / math.sqrt(2 / 3 + 1e-5)
    np.testing.assert_allclose(out, [[[-c, 0.0, c]]], rtol=1e-15)
    assert mean_square == pytest.approx((2 / 3) / (2 / 3 + 1e-5), rel=1e-15)


# --- draw statistics ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def model_draws():
    return [e for run in runs(m.model_examples(), 20, 20) for e in run]


@pytest.fixture(scope="module")
def stack_draws():
    return [blocks for run in runs(m.layer_stacks(), 20, 20) for blocks in run]


def test_model_examples_draw_bfloat16_both_masks_and_split(model_draws):
    n = len(model_draws)
    stats = {"bfloat16": sum(e.dtype == "bfloat16" for e in model_draws) / n,
             "causal": sum(e.causal for e in model_draws) / n,
             "not causal": sum(not e.causal for e in model_draws) / n,
             "split something": sum(bool(e.layout.splits()) for e in model_draws) / n}
    floors = {"bfloat16": 0.15, "causal": 0.30, "not causal": 0.30, "split something": 0.70}
    assert all(stats[k] >= floors[k] for k in floors), f"got {stats}, but should be at least {floors}"


def test_layer_stacks_draw_every_kind_and_depth(stack_draws):
    n = len(stack_draws)
    stats = {**{kind: sum(any(b[0] == kind for b in blocks) for _, blocks in stack_draws) / n for kind in m.KINDS},
             "two kinds": sum(len({b[0] for b in blocks}) >= 2 for _, blocks in stack_draws) / n,
             "four blocks": sum(len(blocks) == 4 for _, blocks in stack_draws) / n,
             "width changed": sum(any(b[1] != first for b in blocks) for first, blocks in stack_draws) / n}
    floors = {**{kind: 0.30 for kind in m.KINDS}, "two kinds": 0.40, "four blocks": 0.15, "width changed": 0.10}
    assert all(stats[k] >= floors[k] for k in floors), f"got {stats}, but should be at least {floors}"


@pytest.mark.parametrize("dtype, made", [("bfloat16", False), ("float32", True)])
def test_a_bfloat16_block_is_not_run_sharded_where_its_dot_may_abort_the_process(dtype, made, monkeypatch):
    """Where the strict entry of the bfloat16 dot summing in float32 is in effect (XLA:CPU 0.7.1-0.8.0:
    split over devices, the dot's failure can leave the others waiting at an all-reduce until XLA
    aborts the process), the transformer block property makes no sharded run of a bfloat16 example and
    counts it under that entry; a float32 example runs sharded."""
    from conformance.model.layout import MeshModel
    from strategies.parallelism import ParallelLayout
    asked, counted = [], []

    class Stop(Exception):
        pass

    def run(case, layout, program, args, arg_specs, out_specs, float32_args, excused=None, sharded=True):
        asked.append(sharded)
        if sharded:
            raise Stop
        return None, None  # (then counted, below)

    class Effect:
        def covers(self, test):
            return "the entry" if test is m.BFLOAT16_DOT else None

    class Excuses:
        def way(self, *a, **k):
            return None

        def count(self, entry, example, what):
            counted.append(entry)
            raise Stop
    monkeypatch.setattr(m, "run_sharded_and_unsharded", run)
    layout = ParallelLayout(MeshModel(tuple(range(8)), (2, 4), ("b", "a")), "Explicit", (), (), ("b", "a"), (), 0)
    with pytest.raises(Stop):
        m.test_transformer_block_under_parallel_layouts.hypothesis.inner_test(
            example=m.ModelExample(layout, 1688906, dtype, True), excuses=Excuses(), known_deviations=Effect())
    assert asked == [made] and counted == ([] if made else ["the entry"])


@pytest.mark.parametrize("axis_type", ["Auto", "Explicit"])
def test_a_reproduction_scripts_placement_is_the_layouts(axis_type):
    """The definitions a reproduction script pastes (CONSTRAIN, then ``Placement``'s source from
    ``conformance.checking.placement`` and the programs') run on their own, and the ``place`` it
    writes (``placement_literal``) holds the specs, gathered specs and axis type of the layout's
    ``placement``, on the script's mesh."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    from conformance.checking.placement import placement, placement_literal
    from conformance.jaxside import bridge, compat
    from conformance.model.layout import MeshModel
    from strategies.parallelism import ParallelLayout
    if axis_type not in compat.mesh_axis_types():
        pytest.skip(f"{axis_type} axes are not on this release")
    ids = tuple(d.id for d in jax.local_devices())[:4]
    if len(ids) < 4:
        pytest.skip("needs 4 devices")
    layout = ParallelLayout(MeshModel(ids, (2, 2), ("a", "b")), axis_type, data=("a",), fsdp=("b",), fsdp_dim=1)
    mesh = bridge.jax_mesh(layout.mesh, axis_type)
    namespace = {"jax": jax, "jnp": jnp, "lax": lax, "np": np, "mesh": mesh}
    exec("\n".join(m._script_lines(f"place = {placement_literal(layout)}")), namespace)
    written, expected = namespace["place"], placement(layout)
    assert (written.mesh, written.axis_type, written.specs, written.gathered) == \
        (expected.mesh, expected.axis_type, expected.specs, expected.gathered)
