"""Training steps and scanned, rematerialized layer stacks under parallel layouts (data
parallel, FSDP, tensor and sequence parallel, and their combinations, on Auto and Explicit meshes:
``strategies.parallelism``) equal the same program run unsharded on one device, and numpy's
float64 references where they are cheap:

* a training step: an embedding gather, a tanh dense layer and a projection to the vocabulary,
  cross-entropy against integer labels under ``jax.value_and_grad``, then Adam's updates (moments,
  bias correction) applied as an optimizer library does (``p + update``), jitted with the layout's
  in/out shardings and the parameters and optimizer state donated, run for three steps: loss,
  gradients, updates and moments equal the unsharded step's and numpy's (analytic gradient, our own
  Adam), the parameters are exactly the float32 sums of the initial ones and the updates, the new
  parameters and state keep the layout step to step, and the donated inputs are deleted (their
  buffers fit the outputs exactly);
* a layer stack under ``lax.scan`` (parameters stacked on a leading layer dimension, sharded on the
  others) with ``jax.checkpoint`` and a drawn policy from ``jax.checkpoint_policies``, under
  ``jax.grad``: loss and gradients equal the unsharded run without checkpoint and numpy's (forward
  pass and backpropagation by hand), the gradients are laid out as the parameters, and a layer
  saves what its policy says
  (``jax.ad_checkpoint.print_saved_residuals``: nothing, everything, dot outputs, or the named
  values only);
* the same stack with its depth, widths, policy and dtype drawn (a bfloat16 run against the float32
  one within the looser bound), for soaking.

Tolerances are per element, from the numpy references themselves: they run on
``running_error.Bounded`` values, which carry the bound on a float32 run of the same arithmetic (a
sharded run is within its bound of numpy's, and within twice it of the unsharded float32 run; a
bfloat16 run within its own bound, storing and summing in bfloat16, plus the float32 one). The
training step's parameters are judged bit for bit instead: against numpy their error is the
rounding of their own stores (a parameter near 0.5 takes an update near 1e-4 of it, and its
float32 store loses the update's low bits), which would hide an update's error below it, so the
updates are compared within their bound and the parameters are their exact float32 sums. Each
value compared has first the dtype that the dtype model (``conformance.model.dtypes``) derives from
the inputs' dtypes through the program's arithmetic (a gradient: its parameter's), checked before
the cast to float64. Every comparison records ``max |got - expected| / bound`` to
``$CONFORMANCE_ERROR_LOG`` (one JSON line per example and program).

The programs place their values through ``conformance.checking.placement``'s ``Placement`` (the
unsharded twin's places nothing), and each value is judged by
``conformance.checking.twin.against_twin_and_numpy``, as ``suites/test_model_programs.py`` places
and judges its own; the checkpoint policies are ``conformance.model.remat``'s.
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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax import lax

from conformance.checking.case import Case
from conformance.checking.placement import placement
from conformance.checking.repro import script
from conformance.checking import running_error as rounding
from conformance.checking.twin import against_twin_and_numpy, held, model_dtype
from conformance.checking import verdict
from conformance.checking.verdict import dtype_outcome, float64_outcome
from conformance.jaxside import bridge, compat
from conformance.model import remat
from conformance.model.layout import Layout
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


# --- Adam ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Adam:
    """Adam's hyperparameters. ``eps`` is large (0.1) so that an update's error stays a small
    multiple of its gradient's error (``m / (sqrt(v) + eps)`` is then at most ``1 / eps`` times as
    sensitive to ``m``), not ``lr`` times a sign flip of a gradient near zero."""

    lr: float = 1e-2
    b1: float = 0.9
    b2: float = 0.99
    eps: float = 0.1


ADAM = Adam()


def adam_update(grads, state, hp: Adam = ADAM):
    """One Adam step in JAX, as an optimizer's ``update`` returns it: ``m = b1 m + (1 - b1) g``,
    ``v = b2 v + (1 - b2) g^2``, the update ``-lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)``
    with ``t`` the new step count, and the new state."""
    count = state["count"] + 1
    t = count.astype(jnp.float32)
    m = jax.tree_util.tree_map(lambda m, g: hp.b1 * m + (1 - hp.b1) * g, state["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: hp.b2 * v + (1 - hp.b2) * g * g, state["v"], grads)
    c1, c2 = 1 - hp.b1 ** t, 1 - hp.b2 ** t
    updates = jax.tree_util.tree_map(lambda m, v: -hp.lr * (m / c1) / (jnp.sqrt(v / c2) + hp.eps), m, v)
    return updates, {"m": m, "v": v, "count": count}


def apply_updates(params, updates):
    """``p + update`` per parameter, in the parameter's dtype (as ``optax.apply_updates``)."""
    return jax.tree_util.tree_map(lambda p, u: (p + u).astype(p.dtype), params, updates)


def adam_reference(grads: dict, state: dict, hp: Adam = ADAM):
    """The same step in numpy float64 (dicts of arrays; ``state["count"]`` an int): the updates
    and the new state."""
    t = int(state["count"]) + 1
    m = {k: hp.b1 * state["m"][k] + (1 - hp.b1) * grads[k] for k in grads}
    v = {k: hp.b2 * state["v"][k] + (1 - hp.b2) * grads[k] ** 2 for k in grads}
    c1, c2 = 1 - hp.b1 ** t, 1 - hp.b2 ** t
    updates = {k: -hp.lr * (m[k] / c1) / (np.sqrt(v[k] / c2) + hp.eps) for k in grads}
    return updates, {"m": m, "v": v, "count": t}


def applied_in_float32(params0: np.ndarray, updates: list) -> np.ndarray:
    """``params0`` with each update added in turn, every sum rounded to float32 (numpy's float32
    addition is IEEE's, correctly rounded): the parameters a float32 run must hold after applying
    exactly those updates."""
    params = np.asarray(params0, np.float32)
    for u in updates:
        params = params + np.asarray(u, np.float32)
    return params


# --- program 1: a training step -----------------------------------------------------------------
MLP_PARAM_ROLES = {"embed": "embedding", "w1": "column_weight", "b1": "column_bias", "w2": "row_weight"}


def mlp_param_specs(layout: ParallelLayout) -> dict:
    specs = layout.role_specs()
    return {k: specs[role] for k, role in MLP_PARAM_ROLES.items()}


def mlp_loss(params, ids, labels, layout: Optional[ParallelLayout]):
    """Mean cross-entropy of ``tanh(embed[ids] @ w1 + b1) @ w2`` against ``labels``; FSDP-split
    weights are gathered (placed without their FSDP axes) before use. ``layout`` None is the
    unsharded twin: the same function with no placement at all."""
    place = placement(layout)
    embed = place.param(params["embed"], "embedding")
    x = place.take_rows(embed, ids, "act")
    w1 = place.param(params["w1"], "column_weight")
    b1 = place.act(params["b1"], "column_bias")
    h = jnp.tanh(place.contract("bsd,df->bsf", x, w1, "tensor_act") + b1)
    w2 = place.param(params["w2"], "row_weight")
    logits = place.contract("bsf,fv->bsv", h, w2, "act")
    onehot = jax.nn.one_hot(labels, logits.shape[-1], dtype=logits.dtype)
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - jnp.sum(logits * onehot, axis=-1))


def train_step(params, state, ids, labels, layout: Optional[ParallelLayout] = None):
    """``(loss, grads, updates, new params, new state)``: value_and_grad of ``mlp_loss``, then
    Adam's updates, applied."""
    loss, grads = jax.value_and_grad(lambda p: mlp_loss(p, ids, labels, layout))(params)
    updates, new_state = adam_update(grads, state)
    return loss, grads, updates, apply_updates(params, updates), new_state


UNSHARDED_STEP = jax.jit(train_step)  # the unsharded twin: the same function on one device, compiled once per shape


def mlp_reference(params: dict, ids: np.ndarray, labels: np.ndarray):
    """numpy float64 (plain or Bounded values): the loss and its analytic gradient
    (backpropagation by hand; the label and embedding terms as one-hot contractions)."""
    e, w1, b1, w2 = (params[k] for k in ("embed", "w1", "b1", "w2"))
    x = e[ids]
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2
    top = logits.max(-1, keepdims=True)
    z = np.exp(logits - top)
    lse = np.log(z.sum(-1)) + top[..., 0]
    picked = np.take_along_axis(logits, labels[..., None], -1)[..., 0]
    loss = np.mean(lse - picked)
    dlogits = (z / z.sum(-1, keepdims=True) - np.eye(w2.shape[1])[labels]) / ids.size
    dw2 = np.einsum("bsf,bsv->fv", h, dlogits)
    dpre = (dlogits @ w2.T) * (1 - h * h)
    dw1 = np.einsum("bsd,bsf->df", x, dpre)
    db1 = dpre.sum((0, 1))
    dembed = np.einsum("bsv,bsd->vd", np.eye(e.shape[0])[ids], dpre @ w1.T)
    return loss, {"embed": dembed, "w1": dw1, "b1": db1, "w2": dw2}


# --- the dtypes of what the programs return, from the dtype model (conformance.model.dtypes) -----
# Each follows the program's arithmetic by the catalogue's rules (``held``: a cast; Python floats
# and ints are weak types); a gradient has its parameter's dtype (jax.grad: "the same shape and
# type as the positional argument").
def mlp_loss_dtype(params: dict) -> np.dtype:
    """``mlp_loss``'s dtype: the embedding rows a gather ("same") of embed; the dense layer a
    "promote" einsum plus b1 ("promote") under tanh ("inexact"); the logits its "promote" einsum
    with w2; their logsumexp ("inexact") minus ("promote") the "sum" of the logits times their
    one-hot (cast to the logits' dtype, "promote"), averaged ("inexact")."""
    rows = model_dtype("same", params["embed"], np.int32)
    hidden = model_dtype("inexact", model_dtype("promote", model_dtype("promote", rows, params["w1"]), params["b1"]))
    logits = model_dtype("promote", hidden, params["w2"])
    picked = model_dtype("sum", model_dtype("promote", logits, held(logits)))
    return model_dtype("inexact", model_dtype("promote", model_dtype("inexact", logits), picked))


def adam_dtypes(grad, m, v, count) -> dict:
    """``adam_update``'s dtypes for one parameter (its gradient's, moments' and the step count's
    dtypes): ``b1 m + (1 - b1) g`` and ``b2 v + (1 - b2) g g`` "promote" with the weak Python
    floats; the count plus 1 "promote"; ``1 - b ** t`` of the float32 cast t "promote"; the
    update's divisions and sqrt "inexact", its lr and eps terms "promote"."""
    new_m = model_dtype("promote", model_dtype("promote", float, m), model_dtype("promote", float, grad))
    new_v = model_dtype("promote", model_dtype("promote", float, v),
                        model_dtype("promote", model_dtype("promote", float, grad), grad))
    correction = model_dtype("promote", int, model_dtype("promote", float, held(np.float32)))
    ratio = model_dtype("promote", float, model_dtype("inexact", new_m, correction))
    root = model_dtype("promote", model_dtype("inexact", model_dtype("inexact", new_v, correction)), float)
    return {"update": model_dtype("inexact", ratio, root), "m": new_m, "v": new_v,
            "count": model_dtype("promote", count, int)}


def step_dtypes(params0: dict, steps: int = STEPS) -> list:
    """Each step's dtypes, ``{"loss", "grads", "updates", "m", "v", "params": {name: dtype},
    "count"}``: the first step's inputs are ``params0``, zero moments of their dtypes and an int32
    count, each later step's the dtypes of the step before; the new params ``(p + u).astype(p.dtype)``
    are ``held`` of p's."""
    params, m, v, count = ({k: held(p) for k, p in params0.items()}, {k: held(p) for k, p in params0.items()},
                           {k: held(p) for k, p in params0.items()}, np.dtype(np.int32))
    out = []
    for _ in range(steps):
        adam = {k: adam_dtypes(held(params[k]), m[k], v[k], count) for k in params}
        m, v = {k: a["m"] for k, a in adam.items()}, {k: a["v"] for k, a in adam.items()}
        count = adam[next(iter(adam))]["count"]
        out.append({"loss": mlp_loss_dtype(params), "grads": {k: held(p) for k, p in params.items()},
                    "updates": {k: a["update"] for k, a in adam.items()}, "m": m, "v": v,
                    "params": {k: held(p) for k, p in params.items()}, "count": count})
        params = out[-1]["params"]
    return out


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
    """A parallel layout over the live devices (Auto, or Explicit where the release has it) and
    a seed for the inputs."""
    layout = draw(parallel_layouts(DEVICES, roles=roles, axis_types=AXIS_TYPES))
    return TrainingExample(layout, draw(st.integers(0, 2 ** 16)))


def zero_state(params: dict) -> dict:
    return {"m": {k: np.zeros_like(v) for k, v in params.items()},
            "v": {k: np.zeros_like(v) for k, v in params.items()}, "count": np.int32(0)}


def sharded_training(layout: ParallelLayout, params0: dict, ids: np.ndarray, labels: np.ndarray, steps: int = STEPS):
    """``steps`` steps of ``train_step`` jitted with the layout's in/out shardings, params and state
    donated (the new ones feed the next step): per step ``{"loss", "grads", "updates", "donated
    deleted", "layouts"}`` as numpy values (``donated deleted``: whether each donated input leaf was
    deleted by the call; ``layouts``: each output's layout, read as ``unread_layout`` reads it before
    the next step donates the output), and the last step's ``"params"`` and ``"state"``. Nothing
    that is donated later is read on the host (a host copy may keep its buffer: on 0.4.30, reading
    an output made the next step keep it)."""
    mesh = bridge.jax_mesh(layout.mesh, layout.axis_type)
    sharding = lambda spec: bridge.named_sharding(layout.mesh, spec, layout.axis_type)
    p_sh = {k: sharding(s) for k, s in mlp_param_specs(layout).items()}
    s_sh = {"m": p_sh, "v": p_sh, "count": sharding(())}
    t_sh = sharding(layout.tokens_spec())
    step = jax.jit(functools.partial(train_step, layout=layout), in_shardings=(p_sh, s_sh, t_sh, t_sh),
                   out_shardings=(sharding(()), p_sh, p_sh, p_sh, s_sh), donate_argnums=(0, 1))
    out = []
    with compat.mesh_context(mesh, layout.axis_type):
        params = bridge.placed(params0, p_sh)
        state = bridge.placed(zero_state(params0), s_sh)
        ids_, labels_ = bridge.placed(ids, t_sh), bridge.placed(labels, t_sh)
        for _ in range(steps):
            donated = jax.tree_util.tree_leaves((params, state))
            loss, grads, updates, params, state = step(params, state, ids_, labels_)
            layouts = {f"{part} of {k}": unread_layout(leaf, params0[k].shape)
                       for k in params0 for part, leaf in (("params", params[k]), ("update", updates[k]),
                                                           ("m", state["m"][k]), ("v", state["v"][k]))}
            layouts["step count"] = unread_layout(state["count"], ())
            out.append({"loss": np.array(loss), "grads": jax.tree_util.tree_map(np.array, grads),
                        "updates": jax.tree_util.tree_map(np.array, updates),
                        "donated deleted": [leaf.is_deleted() for leaf in donated], "layouts": layouts})
        out[-1].update(jax.tree_util.tree_map(np.array, {"params": params, "state": state}))
    return out


def unread_layout(array, shape: tuple) -> dict:
    """``array``'s layout, read without its data (a host copy would keep a donated buffer alive):
    its sharding's index map, each addressable shard's device and block, and the shards' shapes
    (``bridge.shard_blocks``: every process's, in a multi-controller run)."""
    indices, shard_shapes = bridge.shard_blocks(array, shape)
    return {"sharding devices_indices_map": bridge.index_map(array.sharding, shape),
            "indices": indices, "shard shapes": shard_shapes}


def check_unread_layout(case: Case, got: dict, layout: Layout, what: str) -> None:
    """An ``unread_layout`` record is ``layout``'s: the index map and every shard's block are the
    model's, and every shard has the model's shape."""
    judged = lambda e: verdict.equal_lines(e, layout.blocks)
    case.index_map(f"{what} sharding devices_indices_map", got["sharding devices_indices_map"], layout.blocks,
                   judged=judged)
    case.index_map(f"{what} indices", got["indices"], layout.blocks, judged=judged)
    case.equal(f"{what} shard shapes", got["shard shapes"], [tuple(layout.shard_shape)], shows="layout")


def unsharded_training(params0: dict, ids: np.ndarray, labels: np.ndarray, steps: int = STEPS):
    """The same steps with ``UNSHARDED_STEP`` on one device (nothing donated)."""
    params, state = jax.tree_util.tree_map(jnp.asarray, (params0, zero_state(params0)))
    out = []
    for _ in range(steps):
        loss, grads, updates, params, state = UNSHARDED_STEP(params, state, jnp.asarray(ids), jnp.asarray(labels))
        out.append({"loss": loss, "grads": grads, "updates": updates, "params": params, "state": state})
    return out


def reference_training(params0: dict, ids: np.ndarray, labels: np.ndarray, steps: int = STEPS):
    """The same steps in numpy float64 (``mlp_reference``, ``adam_reference``, then the updates
    added), on Bounded values: each carries the bound on a float32 run of the steps
    (``running_error``; contractions round their operands as the backend's DEFAULT precision does,
    ``bridge.default_dot_operand_dtype``)."""
    dot = bridge.default_dot_operand_dtype()
    params = rounding.tracked(params0, u_dot=dot)
    state = {"m": {k: np.zeros(v.shape) for k, v in params0.items()},
             "v": {k: np.zeros(v.shape) for k, v in params0.items()}, "count": 0}
    hp = Adam(*(rounding.Bounded.rounded(getattr(ADAM, f), u_dot=dot)
                for f in ("lr", "b1", "b2", "eps")))  # float32 in the run
    out = []
    for _ in range(steps):
        loss, grads = mlp_reference(params, ids, labels)
        updates, state = adam_reference(grads, state, hp)
        new_params = {k: params[k] + updates[k] for k in params}
        out.append({"loss": loss, "grads": grads, "updates": updates, "params": new_params, "state": state})
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


def close_to_both(case: Case, what: str, program: str, got, twin, reference, low=None, *, dtypes: tuple,
                  laid_out: Optional[Layout] = None, **details) -> None:
    """``against_twin_and_numpy``, numpy judging the sharded run: ``twin`` (the unsharded float32
    run) and ``got`` (a sharded run) have the dtype model's ``dtypes`` (got's, twin's; checked
    before any cast); ``got`` is within twice the float32 bound of ``twin`` (for a lower-precision
    run, within its bound ``low`` plus the float32 one), within its own bound of the float64
    ``reference`` (a Bounded value), and laid out as ``laid_out`` says where given. The checks are
    named ``what`` (``unsharded {what} dtype`` the twin's), the errors recorded under ``program``."""
    against_twin_and_numpy(case, what, got, twin, reference, low, dtypes=dtypes, sharded=what, numpy_judges="sharded",
                           records={"sharded vs unsharded": (program, dict(check=what, **details)),
                                    "sharded vs numpy": (program + " vs numpy", dict(check=f"{what} vs numpy",
                                                                                      **details))},
                           laid_out=laid_out)


def step_outcomes(specs: dict) -> dict:
    """The training step's checks and the script's expressions for them (the script's ``sharded``
    is ``sharded_training``'s list of steps)."""
    outcomes = {"steps": "t.sharded_training(layout, params0, ids, labels)",
                f"step {STEPS} steps counted": "int(sharded[-1]['state']['count'])"}
    for i in range(STEPS):
        outcomes[f"step {i + 1} loss"] = float64_outcome(f"sharded[{i}]['loss']")
        outcomes.update(dtype_outcomes(f"step {i + 1} loss", f"[{i}]['loss']"))
        outcomes[f"step {i + 1} donated params and state deleted"] = f"sharded[{i}]['donated deleted']"
        for name in [f"{part} of {k}" for k in specs for part in ("params", "update", "m", "v")] + ["step count"]:
            for check in ("sharding devices_indices_map", "indices", "shard shapes"):
                outcomes[f"step {i + 1} {name} {check}"] = f"sharded[{i}]['layouts'][{name!r}][{check!r}]"
        for k in specs:
            outcomes[f"step {i + 1} gradient of {k}"] = float64_outcome(f"sharded[{i}]['grads'][{k!r}]")
            outcomes[f"step {i + 1} Adam update of {k}"] = float64_outcome(f"sharded[{i}]['updates'][{k!r}]")
            outcomes.update(dtype_outcomes(f"step {i + 1} gradient of {k}", f"[{i}]['grads'][{k!r}]"))
            outcomes.update(dtype_outcomes(f"step {i + 1} Adam update of {k}", f"[{i}]['updates'][{k!r}]"))
    for k in specs:
        outcomes[f"step {STEPS} Adam params of {k}"] = f"sharded[-1]['params'][{k!r}]"
        outcomes[f"step {STEPS} Adam params of {k} dtype"] = dtype_outcome(f"sharded[-1]['params'][{k!r}]")
        for part in ("m", "v"):
            outcomes[f"step {STEPS} Adam {part} of {k}"] = float64_outcome(f"sharded[-1]['state'][{part!r}][{k!r}]")
            outcomes.update(dtype_outcomes(f"step {STEPS} Adam {part} of {k}", f"[-1]['state'][{part!r}][{k!r}]"))
    outcomes[f"step {STEPS} step count dtype"] = dtype_outcome("sharded[-1]['state']['count']")
    return outcomes


def dtype_outcomes(what: str, index: str, sharded: str = "sharded", unsharded: str = "unsharded") -> dict:
    """The script's expressions for ``close_to_both``'s dtype checks of ``what``: the dtypes of
    ``sharded + index`` and ``unsharded + index``."""
    return {f"{what} dtype": dtype_outcome(sharded + index),
            f"unsharded {what} dtype": dtype_outcome(unsharded + index)}


@settings(max_examples=TRAINING_EXAMPLES, deadline=None)
@given(example=training_examples())
def test_training_step_under_a_parallelism_layout(example):
    """Three Adam training steps jitted with a parallel layout's shardings, params and state
    donated, give the unsharded step's and numpy's loss, gradients, updates and moments, hold the
    float32 sums of the initial params and the updates, keep the layout, and delete the donated
    inputs."""
    layout = example.layout
    params0, ids, labels = example.inputs()
    program = f"training step ({layout.name}, {layout.axis_type})"
    case = Case(f"{STEPS} steps of jax.jit(train_step, donate_argnums=(0, 1)) under {layout.describe()}",
                script(repro_lines(f"layout = {layout_literal(layout)}") + [
                    f"params0, ids, labels = t.TrainingExample(layout, {example.seed}).inputs()",
                    "sharded = t.sharded_training(layout, params0, ids, labels)",
                    "unsharded = t.unsharded_training(params0, ids, labels)",
                    "print([s['loss'] for s in sharded], [s['loss'] for s in unsharded])"]),
                step_outcomes(mlp_param_specs(layout)))
    specs = mlp_param_specs(layout)
    sharded = case.accepts("steps", lambda: sharded_training(layout, params0, ids, labels))
    with case.oracle():
        unsharded = unsharded_training(params0, ids, labels)
    reference = reference_training(params0, ids, labels)
    both = lambda dtype: (dtype, dtype)
    for i, (got, twin, ref, dtypes) in enumerate(zip(sharded, unsharded, reference, step_dtypes(params0))):
        step = f"step {i + 1}"
        for name, record in got["layouts"].items():  # the layout is kept step to step
            spec, shape = ((), ()) if name == "step count" else (specs[name.split(" of ")[1]],
                                                                 params0[name.split(" of ")[1]].shape)
            check_unread_layout(case, record, Layout(layout.mesh, spec, shape), f"{step} {name}")
        close_to_both(case, f"{step} loss", program, got["loss"], twin["loss"], ref["loss"],
                      dtypes=both(dtypes["loss"]))
        for k in specs:
            close_to_both(case, f"{step} gradient of {k}", program, got["grads"][k], twin["grads"][k], ref["grads"][k],
                          dtypes=both(dtypes["grads"][k]))
            close_to_both(case, f"{step} Adam update of {k}", program + " Adam", got["updates"][k],
                          twin["updates"][k], ref["updates"][k], dtypes=both(dtypes["updates"][k]))
            if i + 1 < STEPS:
                continue
            for part in ("m", "v"):
                close_to_both(case, f"{step} Adam {part} of {k}", program + " Adam", got["state"][part][k],
                              twin["state"][part][k], ref["state"][part][k], dtypes=both(dtypes[part][k]))
            # The params are the updates' float32 sums, exactly: a check of the addition and the store
            # (each update is judged above, where the params' own rounding does not hide its error).
            case.equal(f"{step} Adam params of {k} dtype", np.asarray(got["params"][k]).dtype.name,
                       dtypes["params"][k].name, shows="dtype")
            case.same_bits(f"{step} Adam params of {k}", got["params"][k],
                           applied_in_float32(params0[k], [s["updates"][k] for s in sharded]))
        if i + 1 == STEPS:
            case.equal(f"{step} step count dtype", np.asarray(got["state"]["count"]).dtype.name, dtypes["count"].name,
                       shows="dtype")
            case.equal(f"{step} steps counted", int(got["state"]["count"]), STEPS)
        case.equal(f"{step} donated params and state deleted", got["donated deleted"],
                   [True] * len(got["donated deleted"]))


# --- program 2: a scanned, rematerialized layer stack -------------------------------------------
# remat.POLICIES in its order (the draws'), but checkpoint_dots (dots_saveable's other name: the same
# residuals) and save_any_names_but_these (the layer names one value only; ``residual_checks`` has no
# rule for it): the policies the stack's checks know.
POLICIES = tuple(p for p in remat.POLICIES if p not in ("checkpoint_dots", "save_any_names_but_these"))
SAVED_NAME = "hidden"


def checkpoint_policy(name: str):
    """The policy of ``jax.checkpoint_policies`` called ``name`` (save_only_these_names saving the
    value named ``SAVED_NAME``); skips, naming the version, where the release lacks it."""
    policy = compat.checkpoint_policy(name)
    return policy(SAVED_NAME) if name == "save_only_these_names" else policy


STACK_PARAM_ROLES = {"w_in": "column_weight", "b": "column_bias", "w_out": "row_weight"}


def stack_param_specs(layout: ParallelLayout) -> dict:
    """The stacked layer params: the layer dimension replicated, the others as a column-parallel
    (w_in, b) then row-parallel (w_out) dense pair."""
    specs = layout.role_specs()
    return {k: (None, *specs[role]) for k, role in STACK_PARAM_ROLES.items()}


def stack_layer(h, p, layout: Optional[ParallelLayout]):
    """One residual layer ``h + tanh(h @ w_in + b) @ w_out``, the pre-activation named
    ``SAVED_NAME`` (for save_only_these_names); ``layout`` None: nothing placed."""
    place = placement(layout)
    w_in = place.param(p["w_in"], "column_weight")
    w_out = place.param(p["w_out"], "row_weight")
    pre = place.contract("bsd,df->bsf", h, w_in, "tensor_act") + p["b"]
    pre = compat.feature("checkpoint_name")(pre, SAVED_NAME)
    return h + place.contract("bsf,fd->bsd", jnp.tanh(pre), w_out, "act")


def stack_loss(params, x, target, layout: Optional[ParallelLayout] = None, policy: Optional[str] = None):
    """``(mean((h - target)^2), h)`` with ``h`` the stack's output: the layers applied in order by
    ``lax.scan`` over the stacked params, each under ``jax.checkpoint(policy=...)`` (``policy``
    None: no checkpoint)."""
    layer = lambda h, p: (stack_layer(h, p, layout), None)
    if policy is not None:
        layer = jax.checkpoint(layer, policy=checkpoint_policy(policy))
    h, _ = lax.scan(layer, x, params)
    return jnp.mean(jnp.square(h.astype(jnp.float32) - target)), h


def stack_dtypes(params: dict, x, target) -> dict:
    """``stack_value_and_grad``'s dtypes, ``{"loss", "h", "grads": {name: dtype}}``, by the dtype
    model: a layer adds ("promote") to h the "promote" einsum of tanh ("inexact") of (h's "promote"
    einsum with w_in plus b, "promote") with w_out (lax.scan's carry: one layer's, as every layer is
    the same); the loss is the mean ("inexact") of the square ("promote") of h cast to float32
    minus ("promote") the target; a gradient has its parameter's dtype."""
    pre = model_dtype("promote", model_dtype("promote", held(x), params["w_in"]), params["b"])
    h = model_dtype("promote", held(x), model_dtype("promote", model_dtype("inexact", pre), params["w_out"]))
    error = model_dtype("promote", held(np.float32), target)
    return {"loss": model_dtype("inexact", model_dtype("promote", error, error)), "h": h,
            "grads": {k: held(p) for k, p in params.items()}}


def stack_value_and_grad(params, x, target, layout=None, policy=None):
    """``((loss, h), gradients of the loss with respect to the params)``."""
    return jax.value_and_grad(stack_loss, has_aux=True)(params, x, target, layout, policy)


UNSHARDED_STACK = jax.jit(stack_value_and_grad)  # the unsharded twin, without checkpoint


def stack_reference(params: dict, x, target):
    """numpy float64 (plain or Bounded values): ``(loss, h)``, the layers in order, then the mean
    squared error."""
    h = x
    for layer in range(params["w_in"].shape[0]):
        w_in, b, w_out = (params[k][layer] for k in ("w_in", "b", "w_out"))
        h = h + np.tanh(h @ w_in + b) @ w_out
    return np.mean((h - target) ** 2), h


def stack_gradients(params: dict, x, target) -> dict:
    """numpy float64 (plain or Bounded values): the loss's gradients with respect to the stacked
    params, by backpropagation by hand through the layers in reverse."""
    layers = params["w_in"].shape[0]
    inputs, activations, h = [], [], x
    for layer in range(layers):
        w_in, b, w_out = (params[k][layer] for k in ("w_in", "b", "w_out"))
        a = np.tanh(h @ w_in + b)
        inputs.append(h)
        activations.append(a)
        h = h + a @ w_out
    dh = 2 * (h - target) / np.prod(h.shape)
    grads = {"w_in": [None] * layers, "b": [None] * layers, "w_out": [None] * layers}
    for layer in reversed(range(layers)):
        w_in, w_out, a = params["w_in"][layer], params["w_out"][layer], activations[layer]
        grads["w_out"][layer] = np.einsum("bsf,bsd->fd", a, dh)
        dpre = (dh @ w_out.T) * (1 - a * a)
        grads["w_in"][layer] = np.einsum("bsd,bsf->df", inputs[layer], dpre)
        grads["b"][layer] = dpre.sum((0, 1))
        dh = dh + dpre @ w_in.T
    return {k: np.stack(v) for k, v in grads.items()}


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
        cast = lambda v: v.astype(np.float32).astype(jnp.bfloat16 if self.dtype == "bfloat16" else np.float32)
        return {k: cast(v) for k, v in params.items()}, cast(x), target.astype(np.float32)

    def references(self, params, x, target):
        """``(loss, h, grads)`` in float64 from the inputs as the run holds them, with the bound of
        a float32 run, and (bfloat16) the bound of a run that stores and sums in bfloat16 (from
        the same rounded inputs: no input rounding), else None; contractions round their operands as
        the backend's DEFAULT precision does (``bridge.default_dot_operand_dtype``)."""
        dot = bridge.default_dot_operand_dtype()

        def run(u):
            p, x_ = rounding.tracked((params, x), u=u, u_dot=dot)
            return (*stack_reference(p, x_, target), stack_gradients(p, x_, target))
        as64 = lambda v: np.asarray(v, np.float32).astype(np.float64)
        params, x = {k: as64(v) for k, v in params.items()}, as64(x)
        return run("float32"), (None if self.dtype == "float32" else run(self.dtype))


@st.composite
def stack_examples(draw, *, soak: bool = False) -> StackExample:
    """A parallel layout, a checkpoint policy, and (``soak``) the depth (1-4 layers), widths
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
    sharding = lambda spec: bridge.named_sharding(layout.mesh, spec, layout.axis_type)
    p_sh = {k: sharding(s) for k, s in stack_param_specs(layout).items()}
    a_sh = sharding(layout.activation_spec())
    fn = functools.partial(stack_value_and_grad, layout=layout, policy=example.policy)
    kwargs = {} if layout.axis_type == "Explicit" else {"out_shardings": ((sharding(()), a_sh), p_sh)}
    g = jax.jit(fn, in_shardings=(p_sh, a_sh, a_sh), **kwargs)
    with compat.mesh_context(bridge.jax_mesh(layout.mesh, layout.axis_type), layout.axis_type):
        return g(bridge.placed(params, p_sh), bridge.placed(x, a_sh), bridge.placed(target, a_sh))


def saved_residuals(policy: str, params, x) -> list:
    """What ``print_saved_residuals`` says one checkpointed layer (unsharded) saves for its
    backward pass: one line per residual."""
    layer = jax.checkpoint(lambda h, p: stack_layer(h, p, None), policy=checkpoint_policy(policy))
    first = {k: jnp.asarray(v[0]) for k, v in params.items()}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        compat.feature("print_saved_residuals")(layer, jnp.asarray(x), first)
    return [line for line in out.getvalue().splitlines() if line.strip()]


def computed_residuals(lines: list) -> list:
    """``saved_residuals``' lines besides the arguments'."""
    return [line for line in lines if "from the argument" not in line]


def not_matmul_results(computed: list) -> list:
    """The residuals that are not a matmul's result: dot_general's output, or (where jnp.einsum
    follows the dot with a reduce_precision to its result type, as measured on 0.6.2) that op's,
    the same value."""
    return [c for c in computed if "dot_general" not in c and "reduce_precision" not in c]


def not_named(computed: list) -> list:
    """The residuals not named ``SAVED_NAME``."""
    return [c for c in computed if f"named '{SAVED_NAME}'" not in c]


def residual_checks(policy: str) -> dict:
    """``check_saved_residuals``' checks for ``policy``: each check's name, its value from the
    printed ``lines``, what it should be, and the script's expression for it (the script's
    ``lines`` is ``saved_residuals``')."""
    what = f"{policy}: the layer's saved residuals besides its arguments"
    if policy == "nothing_saveable":
        return {what: (computed_residuals, [], "t.computed_residuals(lines)")}
    checks = {f"{what} are not none": (lambda lines: bool(computed_residuals(lines)), True,
                                        "bool(t.computed_residuals(lines))")}
    if policy.startswith("dots"):
        checks[f"{what} that are not matmul results (dot_general, or einsum's reduce_precision of it)"] = (
            lambda lines: not_matmul_results(computed_residuals(lines)), [],
            "t.not_matmul_results(t.computed_residuals(lines))")
    if policy == "save_only_these_names":
        checks[f"{what} that are not named {SAVED_NAME!r}"] = (
            lambda lines: not_named(computed_residuals(lines)), [], "t.not_named(t.computed_residuals(lines))")
    return checks


def check_saved_residuals(case: Case, policy: str, lines: list) -> None:
    """The residuals besides the arguments are: none (nothing_saveable); some (everything_saveable);
    some, all matmul results (dots_saveable, and dots_with_no_batch_dims_saveable, as the layer's
    dots have no batch dimensions); some, all named ``SAVED_NAME`` (save_only_these_names)."""
    for what, (judge, expected, _) in residual_checks(policy).items():
        case.equal(what, judge(lines), expected)


def stack_outcomes(policy: str) -> dict:
    """The stack's checks and the script's expressions for them: values in float64 as ``close``
    judges them; a gradient's layout checks (``gradient of <k> ...``) the live array; the saved
    residuals' checks the printed lines."""
    outcomes = {"value_and_grad": "t.sharded_stack(example, params, x, target)", "loss": float64_outcome("loss"),
                "stack output h": float64_outcome("h"), **dtype_outcomes("loss", "loss", "", "twin_"),
                **dtype_outcomes("stack output h", "h", "", "twin_")}
    for k in ("w_in", "b", "w_out"):
        outcomes.update({f"gradient of {k}": float64_outcome(f"grads[{k!r}]"),
                         f"gradient of {k} vs numpy": float64_outcome(f"grads[{k!r}]"),
                         f"gradient of {k} ": f"grads[{k!r}]"})
        outcomes.update(dtype_outcomes(f"gradient of {k}", f"grads[{k!r}]", "", "twin_"))
    outcomes.update({what: expression for what, (_, _, expression) in residual_checks(policy).items()})
    return outcomes


def check_stack(example: StackExample, program: str, excuses) -> None:
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
                    "(twin_loss, twin_h), twin_grads = t.UNSHARDED_STACK(*jax.tree_util.tree_map(f32, "
                    "(params, x, target)))",
                    "lines = t.saved_residuals(example.policy, params, x)",
                    "print(loss, twin_loss)"]),
                stack_outcomes(example.policy))
    (loss, h), grads = case.accepts("value_and_grad", lambda: sharded_stack(example, params, x, target))
    f32 = lambda v: jnp.asarray(np.asarray(v, np.float32))
    with case.oracle():
        (twin_loss, twin_h), twin_grads = UNSHARDED_STACK(*jax.tree_util.tree_map(f32, (params, x, target)))
    (reference_loss, reference_h, reference_grads), low = example.references(params, x, target)
    low_loss, low_h, low_grads = low or (None, None, {})
    dtypes = stack_dtypes(params, x, target)
    twin_dtypes = stack_dtypes(*jax.tree_util.tree_map(f32, (params, x, target)))
    details = {"layout": layout.name, "axis_type": layout.axis_type, "policy": example.policy,
               "layers": example.layers, "dtype": example.dtype}
    close_to_both(case, "loss", program, loss, twin_loss, reference_loss, low_loss,
                  dtypes=(dtypes["loss"], twin_dtypes["loss"]), **details)
    close_to_both(case, "stack output h", program, h, twin_h, reference_h, low_h,
                  dtypes=(dtypes["h"], twin_dtypes["h"]), **details)
    for k, spec in stack_param_specs(layout).items():
        close_to_both(case, f"gradient of {k}", program, grads[k], twin_grads[k], reference_grads[k],
                      low_grads.get(k), dtypes=(dtypes["grads"][k], twin_dtypes["grads"][k]),
                      laid_out=Layout(layout.mesh, spec, params[k].shape), **details)
    with excuses.way([example]):  # (only what print_saved_residuals says: a known deviation may excuse it)
        check_saved_residuals(case, example.policy, saved_residuals(example.policy, params, x))


@settings(max_examples=STACK_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=stack_examples())
def test_rematerialized_layer_stack_under_a_parallelism_layout(example, excuses):
    """value_and_grad of a 3-layer lax.scan stack under jax.checkpoint with a drawn policy, jitted
    with a parallel layout's shardings, equals the unsharded run without checkpoint (and numpy's
    loss), lays the gradients out as the params, and a layer saves what its policy says."""
    check_stack(example, f"layer stack ({example.layout.name}, {example.policy})", excuses)


@settings(max_examples=STACK_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=stack_examples(soak=True))
def test_drawn_layer_stacks_under_parallelism_layouts(example, excuses):
    """A layer stack of drawn depth, widths, checkpoint policy and dtype (bfloat16 against the
    float32 run, within the looser bound), under a drawn parallel layout, equals the unsharded
    float32 run without checkpoint within the bound its reductions give."""
    check_stack(example, f"drawn layer stack ({example.dtype})", excuses)
