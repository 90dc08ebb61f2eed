"""Training steps and scanned, rematerialized layer stacks under parallelism layouts (data
parallel, FSDP, tensor and sequence parallel, and their combinations, on Auto and Explicit meshes:
``strategies.parallelism``) equal the same program run unsharded on one device, and numpy's
float64 references where they are cheap:

* a training step: an embedding gather, a tanh dense layer and a projection to the vocabulary,
  cross-entropy against integer labels under ``jax.value_and_grad``, then an Adam update (moments,
  bias correction), jitted with the layout's in/out shardings and the parameters and optimizer state
  donated, run for three steps: loss, gradients, parameters and moments equal the unsharded step's
  and numpy's (analytic gradient, our own Adam), the new parameters and state keep the layout step
  to step, and the donated inputs are deleted (their buffers fit the outputs exactly);
* a layer stack under ``lax.scan`` (parameters stacked on a leading layer dimension, sharded on the
  others) with ``jax.checkpoint`` and a drawn policy from ``jax.checkpoint_policies``, under
  ``jax.grad``: loss and gradients equal the unsharded run without checkpoint (and numpy's forward
  loss), the gradients are laid out as the parameters, and a layer saves what its policy says
  (``jax.ad_checkpoint.print_saved_residuals``: nothing, everything, dot outputs, or the named
  values only);
* the same stack with its depth, widths, policy and dtype drawn (a bfloat16 run against the float32
  one within the looser bound), for soaking.

Tolerances come from ``conformance.checking.tolerance.float_tolerance``, with each program's
reductions named beside it; every comparison records ``max |got - expected| / bound`` to
``$CONFORMANCE_ERROR_LOG`` (one JSON line per example and program).
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
from dataclasses import dataclass
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

from conformance.checking.case import Case
from conformance.checking.layouts import check_layout
from conformance.checking.repro import script
from conformance.checking.tolerance import float_tolerance, record_error, unit_roundoff
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, normalize_index
from strategies.parallelism import ParallelLayout, parallel_layouts

pytestmark = pytest.mark.training
DEVICES = bridge.live_device_ids()
# Each example compiles a whole training step (or a scan, its remat and its transpose) for its own
# layout, about 1 s on a quiet CPU: fewer examples than the suites' usual max(8, max_examples // 10).
TRAINING_EXAMPLES = max(6, settings().max_examples // 16)
STACK_EXAMPLES = max(4, settings().max_examples // 25)
AXIS_TYPES = compat.mesh_axis_types()
STEPS = 3


# --- sizes ------------------------------------------------------------------------------------
def side(base: int, *divisors: int) -> int:
    """The smallest multiple of ``base`` that every divisor divides: with 8 devices every role's
    size divides 8, so the programs keep one shape (one unsharded compilation) per program."""
    return math.lcm(base, *divisors)


def mlp_sizes(layout: ParallelLayout) -> dict:
    """Batch, sequence, hidden, ffn and vocabulary sides that every spec of ``layout`` divides."""
    d, f, t, s = (layout.size(r) for r in ("data", "fsdp", "tensor", "sequence"))
    return {"batch": side(8, d * f), "seq": side(4, s), "hidden": side(8, f),
            "ffn": side(16, t * f), "vocab": side(16, f)}


# --- placing values inside the programs ---------------------------------------------------------
# ``layout`` None is the unsharded twin: the same function with no placement at all.
def place(x, spec, layout: Optional[ParallelLayout]):
    """``x`` laid out as ``spec`` (with_sharding_constraint on Auto meshes, reshard on Explicit)."""
    if layout is None:
        return x
    return compat.constrain(x, bridge.named_sharding(layout.mesh, spec, layout.axis_type), layout.axis_type)


def contract(equation: str, a, b, spec, layout: Optional[ParallelLayout]):
    """``jnp.einsum(equation, a, b)`` laid out as ``spec``: on an Explicit mesh through its
    ``out_sharding`` (which JAX asks for where both contracted dimensions are split), else
    constrained after."""
    if layout is not None and layout.axis_type == "Explicit":
        return jnp.einsum(equation, a, b, out_sharding=bridge.named_sharding(layout.mesh, spec, "Explicit"))
    return place(jnp.einsum(equation, a, b), spec, layout)


def take_rows(table, ids, spec, layout: Optional[ParallelLayout]):
    """``table[ids]`` (an embedding lookup by gather) laid out as ``spec``: on an Explicit mesh
    through ``.at[ids].get(out_sharding=...)``, as JAX's explicit-sharding guide asks of indexing."""
    if layout is not None and layout.axis_type == "Explicit":
        return table.at[ids].get(out_sharding=bridge.named_sharding(layout.mesh, spec, "Explicit"))
    return place(table[ids], spec, layout)


# --- Adam ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Adam:
    """Adam's hyperparameters. ``eps`` is large (0.1) so that an update's error stays a small
    multiple of its gradient's error (see ``adam_tolerances``), not ``lr`` times a sign flip of a
    gradient near zero."""

    lr: float = 1e-2
    b1: float = 0.9
    b2: float = 0.99
    eps: float = 0.1


ADAM = Adam()


def adam_update(params, grads, state, hp: Adam = ADAM):
    """One Adam step in JAX: ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g^2``,
    ``p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)`` with ``t`` the new step count."""
    count = state["count"] + 1
    t = count.astype(jnp.float32)
    m = jax.tree_util.tree_map(lambda m, g: hp.b1 * m + (1 - hp.b1) * g, state["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: hp.b2 * v + (1 - hp.b2) * g * g, state["v"], grads)
    c1, c2 = 1 - hp.b1 ** t, 1 - hp.b2 ** t
    new = jax.tree_util.tree_map(
        lambda p, m, v: (p - hp.lr * (m / c1) / (jnp.sqrt(v / c2) + hp.eps)).astype(p.dtype), params, m, v)
    return new, {"m": m, "v": v, "count": count}


def adam_reference(params: dict, grads: dict, state: dict, hp: Adam = ADAM):
    """The same step in numpy float64 (dicts of arrays; ``state["count"]`` an int)."""
    t = int(state["count"]) + 1
    m = {k: hp.b1 * state["m"][k] + (1 - hp.b1) * grads[k] for k in params}
    v = {k: hp.b2 * state["v"][k] + (1 - hp.b2) * grads[k] ** 2 for k in params}
    c1, c2 = 1 - hp.b1 ** t, 1 - hp.b2 ** t
    new = {k: params[k] - hp.lr * (m[k] / c1) / (np.sqrt(v[k] / c2) + hp.eps) for k in params}
    return new, {"m": m, "v": v, "count": t}


def adam_tolerances(grad_atol: float, grad_max: float, param_max: float, steps: int, hp: Adam = ADAM,
                    dtype: str = "float32") -> dict:
    """Bounds for Adam's outputs after ``steps`` steps whose gradients are each off by at most
    ``grad_atol`` (largest |g| ``grad_max``, largest |p| ``param_max``):

    * ``m`` is a convex combination of the gradients: off by <= ``grad_atol``;
    * ``v`` of their squares: ``|d(g^2)| <= (2 |g| + dg) dg``;
    * the update ``u = mhat / (s + eps)``, ``s = sqrt(vhat)``: ``|du| <= |dmhat| / eps + |mhat| |ds|
      / (s + eps)^2``, with ``|mhat| <= (1 - b1) / sqrt(1 - b2) s`` (Kingma and Ba, section 2.1)
      and ``|ds| <= |dvhat| / (2 s)`` this is ``<= (1 + 5) dg / eps`` (``|dmhat| <= dg``: the bias
      correction divides a convex combination's weights back to a sum of 1);
    * the parameters add ``lr du`` per step, each rounded (``2 u |p|`` per step).
    """
    u = unit_roundoff(dtype)
    update = 6 * grad_atol / hp.eps
    return {"m": dict(rtol=0.0, atol=grad_atol + 4 * u * grad_max),
            "v": dict(rtol=0.0, atol=(2 * grad_max + grad_atol) * grad_atol + 4 * u * grad_max ** 2),
            "params": dict(rtol=0.0, atol=steps * (hp.lr * update + 2 * u * param_max))}


# --- program 1: a training step -----------------------------------------------------------------
def mlp_param_specs(layout: ParallelLayout) -> dict:
    return {"embed": layout.embedding_spec(), "w1": layout.column_weight_spec(),
            "b1": layout.column_bias_spec(), "w2": layout.row_weight_spec()}


def mlp_loss(params, ids, labels, layout: Optional[ParallelLayout]):
    """Mean cross-entropy of ``tanh(embed[ids] @ w1 + b1) @ w2`` against ``labels``; FSDP-split
    weights are gathered (placed without their FSDP axes) before use."""
    at = (lambda name: None) if layout is None else (lambda name: getattr(layout, name)())  # noqa: E731
    gathered = (lambda spec: None) if layout is None else layout.gathered  # noqa: E731
    embed = place(params["embed"], gathered(at("embedding_spec")), layout)
    x = take_rows(embed, ids, at("activation_spec"), layout)
    w1 = place(params["w1"], gathered(at("column_weight_spec")), layout)
    b1 = place(params["b1"], at("column_bias_spec"), layout)
    h = jnp.tanh(contract("bsd,df->bsf", x, w1, at("tensor_activation_spec"), layout) + b1)
    w2 = place(params["w2"], gathered(at("row_weight_spec")), layout)
    logits = contract("bsf,fv->bsv", h, w2, at("activation_spec"), layout)
    onehot = jax.nn.one_hot(labels, logits.shape[-1], dtype=logits.dtype)
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - jnp.sum(logits * onehot, axis=-1))


def train_step(params, state, ids, labels, layout: Optional[ParallelLayout] = None):
    """``(loss, grads, new params, new state)``: value_and_grad of ``mlp_loss``, then Adam."""
    loss, grads = jax.value_and_grad(lambda p: mlp_loss(p, ids, labels, layout))(params)
    new_params, new_state = adam_update(params, grads, state)
    return loss, grads, new_params, new_state


UNSHARDED_STEP = jax.jit(train_step)  # the unsharded twin: the same function on one device, compiled once per shape


def mlp_reference(params: dict, ids: np.ndarray, labels: np.ndarray):
    """numpy float64: the loss and its analytic gradient (backpropagation by hand)."""
    e, w1, b1, w2 = (params[k] for k in ("embed", "w1", "b1", "w2"))
    x = e[ids]
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2
    top = logits.max(-1, keepdims=True)
    z = np.exp(logits - top)
    lse = np.log(z.sum(-1)) + top[..., 0]
    picked = np.take_along_axis(logits, labels[..., None], -1)[..., 0]
    n = ids.size
    loss = float(np.mean(lse - picked))
    dlogits = z / z.sum(-1, keepdims=True)
    np.put_along_axis(dlogits, labels[..., None], np.take_along_axis(dlogits, labels[..., None], -1) - 1, -1)
    dlogits /= n
    dw2 = np.einsum("bsf,bsv->fv", h, dlogits)
    dpre = (dlogits @ w2.T) * (1 - h * h)
    dw1 = np.einsum("bsd,bsf->df", x, dpre)
    db1 = dpre.sum((0, 1))
    dembed = np.zeros_like(e)
    np.add.at(dembed, ids.reshape(-1), (dpre @ w1.T).reshape(-1, e.shape[1]))
    return loss, {"embed": dembed, "w1": dw1, "b1": db1, "w2": dw2}


def mlp_tolerances(sizes: dict, reference: str) -> dict:
    """The loss's and the gradients' bound. Reductions along the longest path: the contraction over
    hidden (x @ w1), over ffn (h @ w2), the logsumexp over the vocabulary, the mean over the
    batch*seq tokens; then the backward pass: the softmax's vocabulary sum, the contraction over the
    vocabulary (dlogits @ w2^T), and the sum over the tokens of each weight gradient (the embedding's
    scatter-add sums at most as many). Magnitude 4: the inputs keep |logits| <= 1, so each token's
    loss is <= log(vocab) + 2 < 5 and its mean's sum of |terms| / tokens <= 4; the gradients' sums of
    |terms| are <= 2."""
    tokens = sizes["batch"] * sizes["seq"]
    reductions = (sizes["hidden"], sizes["ffn"], sizes["vocab"], tokens, sizes["vocab"], sizes["vocab"], tokens)
    return {"loss": float_tolerance(reductions=reductions[:4], magnitude=4.0, reference=reference),
            "grads": float_tolerance(reductions=reductions, magnitude=4.0, reference=reference)}


@dataclass(frozen=True)
class TrainingExample:
    layout: ParallelLayout
    seed: int

    @property
    def sizes(self) -> dict:
        return mlp_sizes(self.layout)

    def inputs(self):
        """Initial params (float32; |logits| <= 1: embed in [-1, 1], w1's columns and w2's rows of
        absolute sum <= 1), Adam state (zeros), token ids and labels."""
        n = self.sizes
        r = np.random.default_rng(self.seed)
        params = {"embed": r.uniform(-1, 1, (n["vocab"], n["hidden"])),
                  "w1": r.uniform(-1, 1, (n["hidden"], n["ffn"])) / n["hidden"],
                  "b1": r.uniform(-0.5, 0.5, (n["ffn"],)),
                  "w2": r.uniform(-1, 1, (n["ffn"], n["vocab"])) / n["ffn"]}
        params = {k: v.astype(np.float32) for k, v in params.items()}
        ids = r.integers(0, n["vocab"], (n["batch"], n["seq"])).astype(np.int32)
        labels = r.integers(0, n["vocab"], (n["batch"], n["seq"])).astype(np.int32)
        return params, ids, labels


@st.composite
def training_examples(draw, roles=("data", "fsdp", "tensor", "sequence")) -> TrainingExample:
    """A parallelism layout over the live devices (Auto, or Explicit where the release has it) and
    a seed for the inputs."""
    layout = draw(parallel_layouts(DEVICES, roles=roles, axis_types=AXIS_TYPES))
    return TrainingExample(layout, draw(st.integers(0, 2 ** 16)))


def zero_state(params: dict) -> dict:
    return {"m": {k: np.zeros_like(v) for k, v in params.items()},
            "v": {k: np.zeros_like(v) for k, v in params.items()}, "count": np.int32(0)}


def sharded_training(layout: ParallelLayout, params0: dict, ids: np.ndarray, labels: np.ndarray, steps: int = STEPS,
                     inspect=None):
    """``steps`` steps of ``train_step`` jitted with the layout's in/out shardings, params and state
    donated (the new ones feed the next step): per step ``{"loss", "grads", "donated deleted"}`` as
    numpy values (the last: whether each donated input leaf was deleted by the call), and the last
    step's ``"params"`` and ``"state"``; ``inspect(step, params, state)`` sees each step's live
    outputs before the next step donates them. Nothing that is donated later is read on the host
    (a host copy may keep its buffer: on 0.4.30, reading an output made the next step keep it)."""
    mesh = bridge.jax_mesh(layout.mesh, layout.axis_type)
    sharding = lambda spec: bridge.named_sharding(layout.mesh, spec, layout.axis_type)  # noqa: E731
    p_sh = {k: sharding(s) for k, s in mlp_param_specs(layout).items()}
    s_sh = {"m": p_sh, "v": p_sh, "count": sharding(())}
    t_sh = sharding(layout.tokens_spec())
    step = jax.jit(functools.partial(train_step, layout=layout), in_shardings=(p_sh, s_sh, t_sh, t_sh),
                   out_shardings=(sharding(()), p_sh, p_sh, s_sh), donate_argnums=(0, 1))
    out = []
    with compat.mesh_context(mesh, layout.axis_type):
        params = jax.device_put(params0, p_sh)
        state = jax.device_put(zero_state(params0), s_sh)
        ids_, labels_ = jax.device_put(ids, t_sh), jax.device_put(labels, t_sh)
        for _ in range(steps):
            donated = jax.tree_util.tree_leaves((params, state))
            loss, grads, params, state = step(params, state, ids_, labels_)
            out.append({"loss": np.array(loss), "grads": jax.tree_util.tree_map(np.array, grads),
                        "donated deleted": [leaf.is_deleted() for leaf in donated]})
            if inspect is not None:
                inspect(len(out), params, state)
        out[-1].update(jax.tree_util.tree_map(np.array, {"params": params, "state": state}))
    return out


def check_layout_unread(case: Case, array, layout: Layout, what: str) -> None:
    """``array`` is laid out as ``layout`` says, judged without reading its data (which would keep
    a donated buffer alive): its sharding's index map, and each addressable shard's device, block
    and shape, are the model's."""
    case.index_map(f"{what} sharding devices_indices_map", bridge.index_map(array.sharding, layout.shape),
                   layout.blocks)
    case.index_map(f"{what} indices", {s.device.id: normalize_index(s.index, layout.shape)
                                       for s in array.addressable_shards}, layout.blocks)
    case.equal(f"{what} shard shapes", sorted({tuple(s.data.shape) for s in array.addressable_shards}),
               [tuple(layout.shard_shape)], shows="layout")


def unsharded_training(params0: dict, ids: np.ndarray, labels: np.ndarray, steps: int = STEPS):
    """The same steps with ``UNSHARDED_STEP`` on one device (nothing donated)."""
    params, state = jax.tree_util.tree_map(jnp.asarray, (params0, zero_state(params0)))
    out = []
    for _ in range(steps):
        loss, grads, params, state = UNSHARDED_STEP(params, state, jnp.asarray(ids), jnp.asarray(labels))
        out.append({"loss": loss, "grads": grads, "params": params, "state": state})
    return out


def reference_training(params0: dict, ids: np.ndarray, labels: np.ndarray, steps: int = STEPS):
    """The same steps in numpy float64 (``mlp_reference`` then ``adam_reference``)."""
    params = {k: v.astype(np.float64) for k, v in params0.items()}
    state = {"m": {k: np.zeros_like(v) for k, v in params.items()},
             "v": {k: np.zeros_like(v) for k, v in params.items()}, "count": 0}
    out = []
    for _ in range(steps):
        loss, grads = mlp_reference(params, ids, labels)
        new_params, state = adam_reference(params, grads, state)
        out.append({"loss": loss, "grads": grads, "params": new_params, "state": state})
        params = new_params
    return out


def layout_literal(layout: ParallelLayout) -> str:
    return repr(layout)


def repro_lines(call: str) -> list:
    """A reproduction's imports: this suite's programs, from the repository (run from its root)."""
    return ["import sys; sys.path.insert(0, '.')",
            "from conformance.model.layout import MeshModel",
            "from strategies.parallelism import ParallelLayout",
            "from suites import test_training as t", call]


def close(case: Case, what: str, program: str, got, expected, tolerance: dict, **details) -> None:
    """``case.close``, recording the error against the bound."""
    got, expected = np.asarray(got), np.asarray(expected)
    record_error(program, got, expected, tolerance, check=what, **details)
    case.close(what, got, expected.astype(got.dtype), **tolerance)


@settings(max_examples=TRAINING_EXAMPLES, deadline=None)
@given(example=training_examples())
def test_training_step_under_a_parallelism_layout(example):
    """Three Adam training steps jitted with a parallelism layout's shardings, params and state
    donated, give the unsharded step's and numpy's loss, gradients, params and moments, keep the
    layout, and delete the donated inputs."""
    layout = example.layout
    params0, ids, labels = example.inputs()
    program = f"training step ({layout.name}, {layout.axis_type})"
    case = Case(f"{STEPS} steps of jax.jit(train_step, donate_argnums=(0, 1)) under {layout.describe()}",
                script(repro_lines(f"layout = {layout_literal(layout)}") + [
                    f"params0, ids, labels = t.TrainingExample(layout, {example.seed}).inputs()",
                    "sharded = t.sharded_training(layout, params0, ids, labels)",
                    "unsharded = t.unsharded_training(params0, ids, labels)",
                    "print([s['loss'] for s in sharded], [s['loss'] for s in unsharded])"]),
                {"step": "t.sharded_training(layout, params0, ids, labels)"})
    specs = mlp_param_specs(layout)

    def inspect(step, params, state):  # the layout is kept step to step
        for k, spec in specs.items():
            for part, leaf in (("params", params[k]), ("m", state["m"][k]), ("v", state["v"][k])):
                check_layout_unread(case, leaf, Layout(layout.mesh, spec, params0[k].shape), f"step {step} {part} of {k}")
        check_layout_unread(case, state["count"], Layout(layout.mesh, (), ()), f"step {step} step count")

    sharded = case.accepts("step", lambda: sharded_training(layout, params0, ids, labels, inspect=inspect))
    unsharded = unsharded_training(params0, ids, labels)
    reference = reference_training(params0, ids, labels)
    same = mlp_tolerances(example.sizes, "same")
    exact = mlp_tolerances(example.sizes, "float64")
    grad_max = max(float(np.max(np.abs(g))) for r in reference for g in r["grads"].values())
    param_max = max(float(np.max(np.abs(p))) for r in reference for p in r["params"].values())
    adam_same = adam_tolerances(same["grads"]["atol"], grad_max, param_max, STEPS)
    adam_exact = adam_tolerances(exact["grads"]["atol"], grad_max, param_max, STEPS)
    for i, (got, twin, ref) in enumerate(zip(sharded, unsharded, reference)):
        step = f"step {i + 1}"
        close(case, f"{step} loss", program, got["loss"], twin["loss"], same["loss"])
        close(case, f"{step} loss vs numpy", program + " vs numpy", got["loss"], ref["loss"], exact["loss"])
        for k in specs:
            close(case, f"{step} gradient of {k}", program, got["grads"][k], twin["grads"][k], same["grads"])
            close(case, f"{step} gradient of {k} vs numpy's analytic one", program + " vs numpy",
                  got["grads"][k], ref["grads"][k], exact["grads"])
            if i + 1 < STEPS:
                continue
            for part, g, t_, r_ in (("params", got["params"][k], twin["params"][k], ref["params"][k]),
                                    ("m", got["state"]["m"][k], twin["state"]["m"][k], ref["state"]["m"][k]),
                                    ("v", got["state"]["v"][k], twin["state"]["v"][k], ref["state"]["v"][k])):
                close(case, f"{step} Adam {part} of {k}", program + " Adam", g, t_, adam_same[part])
                close(case, f"{step} Adam {part} of {k} vs numpy's Adam", program + " Adam vs numpy", g, r_,
                      adam_exact[part])
        if i + 1 == STEPS:
            case.equal(f"{step} step count", int(got["state"]["count"]), STEPS)
        case.equal(f"{step} donated params and state deleted", got["donated deleted"],
                   [True] * len(got["donated deleted"]))


# --- program 2: a scanned, rematerialized layer stack -------------------------------------------
POLICIES = ("nothing_saveable", "everything_saveable", "dots_saveable", "dots_with_no_batch_dims_saveable",
            "save_only_these_names")
SAVED_NAME = "hidden"


def checkpoint_policy(name: str):
    """The policy of ``jax.checkpoint_policies`` called ``name`` (save_only_these_names saving the
    value named ``SAVED_NAME``); skips, naming the version, where the release lacks it."""
    policy = compat.checkpoint_policy(name)
    return policy(SAVED_NAME) if name == "save_only_these_names" else policy


def stack_param_specs(layout: ParallelLayout) -> dict:
    """The stacked layer params: the layer dimension replicated, the others as a column-parallel
    (w_in, b) then row-parallel (w_out) dense pair."""
    return {"w_in": (None, *layout.column_weight_spec()), "b": (None, *layout.column_bias_spec()),
            "w_out": (None, *layout.row_weight_spec())}


def stack_layer(h, p, layout: Optional[ParallelLayout]):
    """One residual layer ``h + tanh(h @ w_in + b) @ w_out``, the pre-activation named
    ``SAVED_NAME`` (for save_only_these_names)."""
    at = (lambda name: None) if layout is None else (lambda name: getattr(layout, name)())  # noqa: E731
    gathered = (lambda spec: None) if layout is None else layout.gathered  # noqa: E731
    w_in = place(p["w_in"], gathered(at("column_weight_spec")), layout)
    w_out = place(p["w_out"], gathered(at("row_weight_spec")), layout)
    pre = contract("bsd,df->bsf", h, w_in, at("tensor_activation_spec"), layout) + p["b"]
    pre = compat.feature("checkpoint_name")(pre, SAVED_NAME)
    return h + contract("bsf,fd->bsd", jnp.tanh(pre), w_out, at("activation_spec"), layout)


def stack_loss(params, x, target, layout: Optional[ParallelLayout] = None, policy: Optional[str] = None):
    """``(mean((h - target)^2), h)`` with ``h`` the stack's output: the layers applied in order by
    ``lax.scan`` over the stacked params, each under ``jax.checkpoint(policy=...)`` (``policy``
    None: no checkpoint)."""
    layer = lambda h, p: (stack_layer(h, p, layout), None)  # noqa: E731
    if policy is not None:
        layer = jax.checkpoint(layer, policy=checkpoint_policy(policy))
    h, _ = lax.scan(layer, x, params)
    return jnp.mean(jnp.square(h.astype(jnp.float32) - target)), h


def stack_value_and_grad(params, x, target, layout=None, policy=None):
    """``((loss, h), gradients of the loss with respect to the params)``."""
    return jax.value_and_grad(stack_loss, has_aux=True)(params, x, target, layout, policy)


UNSHARDED_STACK = jax.jit(stack_value_and_grad)  # the unsharded twin, without checkpoint


def stack_reference(params: dict, x: np.ndarray, target: np.ndarray):
    """numpy float64: ``(loss, h)``, the layers in order, then the mean squared error."""
    h = np.asarray(x, np.float64)
    for layer in range(params["w_in"].shape[0]):
        w_in, b, w_out = (np.asarray(params[k][layer], np.float64) for k in ("w_in", "b", "w_out"))
        h = h + np.tanh(h @ w_in + b) @ w_out
    return float(np.mean((h - target) ** 2)), h


@dataclass(frozen=True)
class StackExample:
    layout: ParallelLayout
    policy: str
    layers: int
    hidden: int   # per FSDP shard
    ffn: int      # per tensor*FSDP shard
    dtype: str
    seed: int

    @property
    def sizes(self) -> dict:
        d, f, t, s = (self.layout.size(r) for r in ("data", "fsdp", "tensor", "sequence"))
        return {"batch": side(8, d * f), "seq": side(2, s), "hidden": side(self.hidden, f),
                "ffn": side(self.ffn, t * f)}

    def inputs(self):
        """Stacked params (each layer's w_in columns of absolute sum <= 1, b in [-1, 1], w_out rows
        of absolute sum <= 1/2: a layer adds at most 1/2 to |h|), x and a target in [-1, 1]."""
        n = self.sizes
        r = np.random.default_rng(self.seed)
        params = {"w_in": r.uniform(-1, 1, (self.layers, n["hidden"], n["ffn"])) / n["hidden"],
                  "b": r.uniform(-1, 1, (self.layers, n["ffn"])),
                  "w_out": r.uniform(-1, 1, (self.layers, n["ffn"], n["hidden"])) / (2 * n["ffn"])}
        shape = (n["batch"], n["seq"], n["hidden"])
        x, target = r.uniform(-1, 1, shape), r.uniform(-1, 1, shape)
        cast = lambda v: v.astype(np.float32).astype(jnp.bfloat16 if self.dtype == "bfloat16" else np.float32)  # noqa: E731
        return {k: cast(v) for k, v in params.items()}, cast(x), target.astype(np.float32)

    def tolerances(self, reference: str, loss: float) -> dict:
        """Bounds for ``h``, the loss and the gradients against a ``reference`` ("same": the
        unsharded run in the same dtype; "float64": numpy; "float32": the float32 run of a bfloat16
        program, from the same rounded inputs, so no input rounding: ``inputs=0``):

        * ``h``: per layer the contractions over hidden and over ffn; magnitude ``1 + layers/2``
          (|h| <= 1 + layers/2, and the weights' absolute column/row sums are <= 1);
        * the loss: ``h``'s error through ``d loss / d h = 2 (h - t) / n`` (absolute sum <= 2 (2 +
          layers/2)), plus the mean over the n elements, whose sum of |terms| is the loss itself
          (its terms are squares; ``loss`` from the float64 reference);
        * the gradients (sharded against unsharded only): the forward contractions, per layer the
          backward ones over hidden and ffn, each weight gradient's sum over the batch*seq tokens,
          and the loss's n elements; magnitude 1 (|d loss / d h| <= 2 (2 + layers/2) / n per element,
          so each weight gradient's sum of |terms| is far below it)."""
        n = self.sizes
        tokens, elements = n["batch"] * n["seq"], n["batch"] * n["seq"] * n["hidden"]
        common = dict(reference=reference, dtype=self.dtype, **({"inputs": 0} if reference == "float32" else {}))
        forward = (n["hidden"], n["ffn"]) * self.layers
        h = float_tolerance(reductions=forward, magnitude=1 + self.layers / 2, **common)
        mean = float_tolerance(reductions=(elements,), magnitude=max(loss, 1e-3), **common)
        backward = forward + (n["ffn"], n["hidden"], tokens) * self.layers + (elements,)
        return {"h": h, "loss": {"rtol": 0.0, "atol": h["atol"] * 2 * (2 + self.layers / 2) + mean["atol"]},
                "grads": float_tolerance(reductions=backward, magnitude=1.0, **common)}


@st.composite
def stack_examples(draw, *, soak: bool = False) -> StackExample:
    """A parallelism layout, a checkpoint policy, and (``soak``) the depth (1-4 layers), widths
    (hidden 4 or 8 per FSDP shard, ffn 8 or 16 per tensor*FSDP shard) and dtype (float32, or
    bfloat16 1 in 4); else 3 layers of hidden 8 and ffn 16, float32."""
    layout = draw(parallel_layouts(DEVICES, axis_types=AXIS_TYPES))
    policy = draw(st.sampled_from(POLICIES))
    if soak:
        layers = draw(st.integers(1, 4))
        hidden, ffn = draw(st.sampled_from((8, 4))), draw(st.sampled_from((16, 8)))
        dtype = "bfloat16" if draw(st.integers(0, 3)) == 3 else "float32"
    else:
        layers, hidden, ffn, dtype = 3, 8, 16, "float32"
    return StackExample(layout, policy, layers, hidden, ffn, dtype, draw(st.integers(0, 2 ** 16)))


def sharded_stack(example: StackExample, params, x, target):
    """value_and_grad of the checkpointed stack, jitted with the layout's in_shardings (and, on Auto
    meshes, the params' shardings as the gradients' out_shardings; on Explicit meshes the gradients'
    sharding is their type, the params', with none asked)."""
    layout = example.layout
    sharding = lambda spec: bridge.named_sharding(layout.mesh, spec, layout.axis_type)  # noqa: E731
    p_sh = {k: sharding(s) for k, s in stack_param_specs(layout).items()}
    a_sh = sharding(layout.activation_spec())
    fn = functools.partial(stack_value_and_grad, layout=layout, policy=example.policy)
    kwargs = {} if layout.axis_type == "Explicit" else {"out_shardings": ((sharding(()), a_sh), p_sh)}
    g = jax.jit(fn, in_shardings=(p_sh, a_sh, a_sh), **kwargs)
    with compat.mesh_context(bridge.jax_mesh(layout.mesh, layout.axis_type), layout.axis_type):
        return g(jax.device_put(params, p_sh), jax.device_put(x, a_sh), jax.device_put(target, a_sh))


def saved_residuals(policy: str, params, x) -> list:
    """What ``print_saved_residuals`` says one checkpointed layer (unsharded) saves for its
    backward pass: one line per residual."""
    layer = jax.checkpoint(lambda h, p: stack_layer(h, p, None), policy=checkpoint_policy(policy))
    first = {k: jnp.asarray(v[0]) for k, v in params.items()}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        compat.feature("print_saved_residuals")(layer, jnp.asarray(x), first)
    return [line for line in out.getvalue().splitlines() if line.strip()]


def check_saved_residuals(case: Case, policy: str, lines: list) -> None:
    """The residuals besides the arguments are: none (nothing_saveable); some (everything_saveable);
    some, all matmul results (dots_saveable, and dots_with_no_batch_dims_saveable, as the layer's
    dots have no batch dimensions); some, all named ``SAVED_NAME`` (save_only_these_names)."""
    computed = [line for line in lines if "from the argument" not in line]
    what = f"{policy}: the layer's saved residuals besides its arguments"
    if policy == "nothing_saveable":
        case.equal(what, computed, [])
        return
    case.true(f"{what} are not none ({lines})", bool(computed))
    if policy.startswith("dots"):
        # a matmul's result: dot_general's output, or (where jnp.einsum follows the dot with a
        # reduce_precision to its result type, as measured on 0.6.2) that op's, the same value
        case.equal(f"{what} that are not matmul results (dot_general, or einsum's reduce_precision of it)",
                   [c for c in computed if "dot_general" not in c and "reduce_precision" not in c], [])
    if policy == "save_only_these_names":
        case.equal(f"{what} that are not named {SAVED_NAME!r}",
                   [c for c in computed if f"named '{SAVED_NAME}'" not in c], [])


def check_stack(example: StackExample, program: str) -> None:
    layout = example.layout
    params, x, target = example.inputs()
    case = Case(f"value_and_grad of a {example.layers}-layer lax.scan stack under jax.checkpoint(policy="
                f"{example.policy}), {example.dtype}, sizes {example.sizes}, jitted under {layout.describe()}",
                script(repro_lines(f"layout = {layout_literal(layout)}") + [
                    f"example = t.StackExample(layout, {example.policy!r}, {example.layers}, {example.hidden}, "
                    f"{example.ffn}, {example.dtype!r}, {example.seed})",
                    "params, x, target = example.inputs()",
                    "(loss, h), grads = t.sharded_stack(example, params, x, target)",
                    "f32 = lambda v: np.asarray(v, np.float32)",
                    "(twin_loss, twin_h), twin_grads = t.UNSHARDED_STACK(*jax.tree_util.tree_map(f32, (params, x, target)))",
                    "print(loss, twin_loss)"]),
                {"value_and_grad": "t.sharded_stack(example, params, x, target)"})
    (loss, h), grads = case.accepts("value_and_grad", lambda: sharded_stack(example, params, x, target))
    f32 = lambda v: jnp.asarray(np.asarray(v, np.float32))  # noqa: E731
    (twin_loss, twin_h), twin_grads = UNSHARDED_STACK(*jax.tree_util.tree_map(f32, (params, x, target)))
    reference_loss, reference_h = stack_reference(params, x, target)
    low = example.dtype != "float32"
    same = example.tolerances("float32" if low else "same", reference_loss)
    exact = example.tolerances("float32" if low else "float64", reference_loss)
    details = {"layout": layout.name, "axis_type": layout.axis_type, "policy": example.policy,
               "layers": example.layers, "dtype": example.dtype}
    as32 = lambda v: np.asarray(v).astype(np.float32)  # noqa: E731
    close(case, "loss", program, as32(loss), twin_loss, same["loss"], **details)
    close(case, "stack output h", program, as32(h), twin_h, same["h"], **details)
    close(case, "loss vs numpy", program + " vs numpy", as32(loss), np.float32(reference_loss), exact["loss"], **details)
    close(case, "stack output h vs numpy", program + " vs numpy", as32(h), reference_h, exact["h"], **details)
    tolerance = same["grads"]
    specs = stack_param_specs(layout)
    for k, spec in specs.items():
        close(case, f"gradient of {k}", program, as32(grads[k]), twin_grads[k], tolerance, **details)
        check_layout(case, grads[k], Layout(layout.mesh, spec, params[k].shape), what=f"gradient of {k}")
    check_saved_residuals(case, example.policy, saved_residuals(example.policy, params, x))


@settings(max_examples=STACK_EXAMPLES, deadline=None)
@given(example=stack_examples())
def test_rematerialized_layer_stack_under_a_parallelism_layout(example):
    """value_and_grad of a 3-layer lax.scan stack under jax.checkpoint with a drawn policy, jitted
    with a parallelism layout's shardings, equals the unsharded run without checkpoint (and numpy's
    loss), lays the gradients out as the params, and a layer saves what its policy says."""
    check_stack(example, f"layer stack ({example.layout.name}, {example.policy})")


@settings(max_examples=STACK_EXAMPLES, deadline=None)
@given(example=stack_examples(soak=True))
def test_drawn_layer_stacks_under_parallelism_layouts(example):
    """A layer stack of drawn depth, widths, checkpoint policy and dtype (bfloat16 against the
    float32 run, within the looser bound), under a drawn parallelism layout, equals the unsharded
    float32 run without checkpoint within the bound its reductions give."""
    check_stack(example, f"drawn layer stack ({example.dtype})")
