"""Self-tests of the result dtypes the model-program and training suites check before any cast:
their derivations by the dtype model (suites/test_model_programs.py, suites/test_training.py)
against dtypes worked by hand from JAX's promotion table (bfloat16 with float32 is float32; a Python
float is weak; a cast gives its target), and the verdict a failed dtype check ends its script with
(``verdict.dtype_outcome``)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from conformance.checking.case import Case, ConformanceFailure
from conformance.checking.repro import script
from conformance.checking.verdict import dtype_outcome
from suites import test_model_programs as m
from suites import test_training as t
from tests.test_checks import run_script

F32, BF16, I32 = np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16), np.dtype(np.int32)


def arrays(dtype, *names) -> dict:
    return {name: np.zeros(2, dtype) for name in names}


def test_a_failed_dtype_check_reads_got_but_should_be_and_its_script_judges_the_dtype():
    """``case.equal("<what> dtype", ..., shows="dtype")`` fails with "<what> dtype='float32', but
    should be 'bfloat16' [call]", showing "dtype"; its script, ending with the verdict on
    ``dtype_outcome``'s expression, exits 1 while the value is float32 and 0 once it is bfloat16."""
    for expression, status in (("jnp.ones(2, jnp.float32)", 1), ("jnp.ones(2, jnp.bfloat16)", 0)):
        case = Case("f(x)", script([]), outcomes={"sharded output dtype": dtype_outcome(expression)})
        with pytest.raises(ConformanceFailure) as failure:
            case.equal("sharded output dtype", "float32", "bfloat16", shows="dtype")
        assert failure.value.finding == "sharded output dtype='float32', but should be 'bfloat16' [f(x)]"
        assert failure.value.shows == "dtype"
        result = run_script(failure.value.repro)
        assert result.returncode == status, (result.stdout, result.stderr[-2000:])


def test_model_program_dtypes_follow_the_programs_casts_and_promotions():
    """The MLP keeps bfloat16 on bfloat16 inputs, and is float32 once a bias is float32 (bfloat16
    joined with float32); the transformer block's loss and logits are float32 whatever its params
    (the logits' dot is kept in float32); a layer stack keeps its input's bfloat16 through dense,
    norm and attention blocks and turns float32 at an mlp block with float32 biases, its mean square
    float32; the shard_map layers on float32 are float32, and on bfloat16 x with float32 weights
    float32 (their einsums promote, no cast back)."""
    assert m.feed_forward_dtype(np.zeros(2, BF16), arrays(BF16, "b1", "b2")) == BF16
    assert m.feed_forward_dtype(np.zeros(2, BF16), {**arrays(BF16, "b1"), **arrays(F32, "b2")}) == F32
    assert m.block_dtypes() == (F32, F32)
    kept = (("dense", 4), ("norm", 4), ("attention", 4))
    assert m.layer_stack_dtypes(kept, [{}, {}, {}], np.zeros(2, BF16)) == (BF16, F32)
    assert m.layer_stack_dtypes(kept + (("mlp", 4),), [{}, {}, {}, arrays(F32, "b1", "b2")],
                                np.zeros(2, BF16)) == (F32, F32)
    weights = arrays(F32, "w1", "b1", "w2", "b2", "wq", "wk", "wv", "wo")
    for x, dtype in ((np.zeros(2, F32), F32), (np.zeros(2, BF16), F32)):
        assert m.manual_mlp_dtype(x, weights) == dtype
        assert m.manual_attention_dtype(x, weights) == dtype
    assert m.manual_mlp_dtype(np.zeros(2, BF16), arrays(BF16, "w1", "b1", "w2", "b2")) == BF16


def test_training_dtypes_follow_the_step_and_the_stack():
    """float32 params: every step's loss, gradients, updates, moments and params float32, the
    count int32. bfloat16 params: the loss bfloat16 (nothing leaves bfloat16), the gradients,
    moments (b1 m + (1 - b1) g with weak Python floats) and new params bfloat16, but the updates
    float32 (a bfloat16 moment divided by the float32 bias correction 1 - b1 ** t). A bfloat16
    stack with a float32 target: h and the gradients bfloat16, the loss float32 (h cast to
    float32)."""
    names = ("embed", "w1", "b1", "w2")
    for step in t.step_dtypes(arrays(F32, *names)):
        assert step["loss"] == F32 and step["count"] == I32
        assert all(set(step[part].values()) == {F32} for part in ("grads", "updates", "m", "v", "params"))
    steps = t.step_dtypes(arrays(BF16, *names))
    assert len(steps) == t.STEPS
    for step in steps:
        assert step["loss"] == BF16 and step["count"] == I32
        assert all(set(step[part].values()) == {BF16} for part in ("grads", "m", "v", "params"))
        assert set(step["updates"].values()) == {F32}
    stack = t.stack_dtypes(arrays(BF16, "w_in", "b", "w_out"), np.zeros(2, BF16), np.zeros(2, F32))
    assert stack == {"loss": F32, "h": BF16, "grads": {"w_in": BF16, "b": BF16, "w_out": BF16}}
