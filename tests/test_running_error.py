"""The running rounding-error bound (conformance.checking.running_error), worked by hand, and shown
to hold for real float32 arithmetic in other orders; the per-element atol it gives Case.close and
the verdict lines."""

import math
import sys

import numpy as np
import pytest

from conformance.checking import running_error as rounding
from conformance.checking.case import Case, ConformanceFailure
from conformance.checking.verdict import values_lines

U = 2.0 ** -24
LAMBDA = rounding.LAMBDA


def test_lambda_is_taken_from_the_stated_failure_probability():
    assert 2 * math.exp(-LAMBDA ** 2 / 2) == pytest.approx(rounding.FAILURE_PROBABILITY)
    assert 7.5 < LAMBDA < 7.6


def test_an_exact_input_has_no_bound_and_a_rounded_one_half_an_ulp():
    assert rounding.Bounded([1.0, -2.0]).bound.tolist() == [0.0, 0.0]
    assert rounding.Bounded.rounded([1.0, -2.0]).bound.tolist() == [U, 2 * U]
    assert rounding.Bounded.rounded([3.0], u="bfloat16").bound.tolist() == [3 * 2.0 ** -8]
    with pytest.raises(ValueError):
        rounding.Bounded([1.0], [-1.0])


def test_arithmetic_propagates_by_the_derivative_and_rounds_once():
    a = rounding.Bounded([2.0], [1e-3])
    b = rounding.Bounded([-4.0], [2e-3])
    # (a + b) = -2: 1e-3 + 2e-3 + u * 2
    assert (a + b).bound[0] == pytest.approx(3e-3 + 2 * U)
    # a * b = -8: |b| e_a + |a| e_b + u * 8 = 4e-3 + 4e-3 + 8u
    assert (a * b).bound[0] == pytest.approx(8e-3 + 8 * U)
    # a / b = -0.5: (e_a + |a/b| e_b) / |b| + u * 0.5 = (1e-3 + 1e-3) / 4 + u / 2
    assert (a / b).bound[0] == pytest.approx(5e-4 + U / 2)
    # a plain number is exact: 3 * a = 6: 3 e_a + 6u
    assert (3 * a).bound[0] == pytest.approx(3e-3 + 6 * U)
    assert (-a).bound[0] == 1e-3


def test_a_library_function_costs_its_stated_ulps():
    x = rounding.Bounded([0.0, 1.0], [1e-4, 0.0])
    y = np.exp(x)
    # exp(0) = 1: 1 * 1e-4 + FUNCTION_ULPS u; exp(1) = e: 0 + FUNCTION_ULPS u e
    assert y.bound.tolist() == pytest.approx([1e-4 + rounding.FUNCTION_ULPS * U, rounding.FUNCTION_ULPS * U * math.e])
    t = np.tanh(rounding.Bounded([0.0], [1e-4]))
    assert t.bound[0] == pytest.approx(1e-4)  # tanh'(0) = 1, tanh(0) = 0 rounds exactly
    assert np.log(rounding.Bounded([2.0], [1e-4])).bound[0] == \
        pytest.approx(5e-5 + rounding.FUNCTION_ULPS * U * math.log(2))
    # x**3 at 2 = 8: 3 * 4 * e, and pow's FUNCTION_ULPS u |8|
    assert (rounding.Bounded([2.0], [1e-4]) ** 3).bound[0] == pytest.approx(1.2e-3 + rounding.FUNCTION_ULPS * 8 * U)
    with pytest.raises(NotImplementedError):
        rounding.Bounded([2.0]) ** 0.5


def test_a_sum_of_n_terms_costs_lambda_sqrt_n_u_times_the_sum_of_their_magnitudes():
    x = rounding.Bounded([1.0, -2.0, 3.0, -4.0], [1e-3, 0, 0, 1e-3])
    s = np.sum(x)
    # value -2; incoming 2e-3; lambda * sqrt(4) * u * 10; the stored result u * 2
    assert s.value == -2.0
    assert s.bound == pytest.approx(2e-3 + LAMBDA * 2 * U * 10 + 2 * U)
    m = x.mean()
    # mean = the stored sum / 4, and its division: 2u |mean|
    assert m.bound == pytest.approx(s.bound / 4 + 2 * U * 0.5)
    one = rounding.Bounded([[5.0]], [[1e-3]]).sum(-1)
    assert one.bound.tolist() == [1e-3]  # nothing is added to a single term


def test_a_contraction_of_one_term_rounds_its_product_once():
    # (1, 1) @ (1, 1): no sum, but the product 0.3 * 0.9 is stored rounded (met on 0.10.2, seed
    # 3581110275: x @ w.T @ w of 1 x 1 float32 values, whose bound had been 0)
    a, b = rounding.Bounded([[0.3]]), rounding.Bounded([[0.9]])
    assert (a @ b).bound[0, 0] == pytest.approx(U * 0.27)


def test_a_cumsum_element_is_a_sum_of_the_terms_up_to_it():
    x = rounding.Bounded([1.0, -2.0, 3.0, -4.0], [1e-3, 0, 0, 1e-3])
    c = np.cumsum(x, axis=0)
    assert c.value.tolist() == [1.0, -1.0, 2.0, -2.0]
    # the first element is its one term, exact but for its incoming bound; the k-th: the incoming
    # bounds up to it, lambda sqrt(k) u times the magnitudes up to it, and u |value| stored
    assert c.bound[0] == pytest.approx(1e-3)
    assert c.bound[1] == pytest.approx(1e-3 + LAMBDA * math.sqrt(2) * U * 3 + U * 1)
    assert c.bound[3] == pytest.approx(2e-3 + LAMBDA * 2 * U * 10 + U * 2)
    rows = np.cumsum(rounding.Bounded([[1.0, 2.0], [3.0, 4.0]]), axis=1)
    assert rows.value.tolist() == [[1.0, 3.0], [3.0, 7.0]] and rows.bound[0, 0] == 0 and rows.bound[1, 0] == 0


def test_a_rounding_may_flush_a_subnormal_result_and_an_exact_operation_cannot():
    tiny = 2.0 ** -126
    product = rounding.Bounded([1e-20]) * rounding.Bounded([1e-20])   # 1e-40: subnormal in float32
    assert product.bound[0] == pytest.approx(U * 1e-40 + tiny) and product.bound[0] >= 1e-40
    assert (-product).bound[0] == product.bound[0]                        # negation rounds nothing
    assert np.sum(rounding.Bounded([1e-20, 1e-20])).bound >= 4 * tiny  # two terms: partial sums and products


def test_sin_and_cos_propagate_by_their_derivatives():
    s, c = np.sin(rounding.Bounded([0.0], [1e-4])), np.cos(rounding.Bounded([0.0], [1e-4]))
    assert s.bound[0] == pytest.approx(1e-4)                          # sin'(0) = 1; sin(0) = 0 rounds exactly
    assert c.bound[0] == pytest.approx(rounding.FUNCTION_ULPS * U)   # cos'(0) = 0; cos(0) = 1 costs its ulps


def test_an_einsum_contracts_the_letters_missing_from_its_output():
    a = rounding.Bounded([[1.0, 2.0, -3.0]], [[1e-3, 0, 0]])       # (1, 3)
    b = rounding.Bounded([[1.0], [1.0], [1.0]])                      # (3, 1)
    y = np.einsum("ij,jk->ik", a, b)
    # value 0; incoming |b| e_a = 1e-3; lambda sqrt(3) u (1 + 2 + 3); result 0 rounds exactly
    assert y.value.tolist() == [[0.0]]
    assert y.bound[0, 0] == pytest.approx(1e-3 + LAMBDA * math.sqrt(3) * U * 6)
    assert (a @ b).bound[0, 0] == y.bound[0, 0]
    outer = np.einsum("i,j->ij", rounding.Bounded([2.0]), rounding.Bounded([3.0]))
    # no contracted letter: one product, no sum, but the product is stored rounded (u |6|, and the
    # underflow term); the bound was 0 before a 1 x 1 gram showed it (0.10.2, seed 3581110275)
    assert outer.bound[0, 0] == pytest.approx(U * 6 + 2.0 ** -126)


def test_a_contraction_rounding_its_operands_costs_two_u_dot_per_term():
    a = rounding.Bounded([[1.0, 2.0, -3.0]], u_dot="tfloat32")     # (1, 3)
    b = rounding.Bounded([[1.0], [1.0], [1.0]], u_dot="tfloat32")  # (3, 1)
    y = np.einsum("ij,jk->ik", a, b)
    # each product's two operand roundings at 2**-11: 2 u_dot (1 + 2 + 3), beside the float32 sum's
    assert y.bound[0, 0] == pytest.approx(2 * 2.0 ** -11 * 6 + LAMBDA * math.sqrt(3) * U * 6)
    assert (a + 1).dtypes[2] == "tfloat32"  # (carried through elementwise steps)
    stored_bf16 = rounding.Bounded([[1.0, 2.0]], u="bfloat16", u_sum="float32", u_dot="tfloat32")
    assert stored_bf16.u_dot == 0.0  # bfloat16 values are exact in TF32: nothing added
    assert rounding.Bounded([1.0]).u_dot == 0.0


def tf32(x):
    """x rounded to nearest TF32 (10 explicit mantissa bits), as a tensor core reads a float32."""
    m, e = np.frexp(np.asarray(x, np.float64))
    return np.ldexp(np.round(m * 2.0 ** 11) / 2.0 ** 11, e)


@pytest.mark.parametrize("seed", range(5))
def test_the_tf32_bound_holds_for_products_of_operands_rounded_to_tf32(seed):
    """A float32 matmul of operands rounded to TF32 first (what DEFAULT precision does on recent
    NVIDIA GPUs) stays within the bound; without the u_dot term it does not."""
    r = np.random.default_rng(seed)
    a, b = r.uniform(-1, 1, (8, 64)).astype(np.float32), r.uniform(-1, 1, (64, 8)).astype(np.float32)
    run = (tf32(a).astype(np.float32) @ tf32(b).astype(np.float32)).astype(np.float64)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    with_dot = np.einsum("ij,jk->ik", rounding.Bounded(a, u_dot="tfloat32"), rounding.Bounded(b, u_dot="tfloat32"))
    without = np.einsum("ij,jk->ik", rounding.Bounded(a), rounding.Bounded(b))
    assert np.all(np.abs(run - exact) <= with_dot.bound)
    assert np.any(np.abs(run - exact) > without.bound)


def test_selecting_is_exact():
    x = rounding.Bounded([[1.0, 5.0, 3.0]], [[1e-3, 2e-3, 3e-3]])
    assert x.max(-1).bound.tolist() == [3e-3]  # the largest bound (the max may come from any of them)
    picked = np.take_along_axis(x, np.array([[1]]), -1)
    assert picked.value.tolist() == [[5.0]] and picked.bound.tolist() == [[2e-3]]
    w = np.where(np.array([[True, False, True]]), x, -1e9)
    assert w.bound.tolist() == [[1e-3, 0.0, 3e-3]]
    assert x[0, 1].bound == 2e-3


def test_an_operation_without_a_rule_is_refused():
    with pytest.raises(NotImplementedError, match="arcsin"):
        np.arcsin(rounding.Bounded([1.0]))
    with pytest.raises(NotImplementedError, match="cumprod"):
        np.cumprod(rounding.Bounded([1.0]))


def test_tolerances_are_the_bound_and_twice_it():
    r = rounding.Bounded([1.0, 2.0], [1e-6, 2e-6])
    low = rounding.Bounded([1.0, 2.0], [1e-3, 1e-3])
    assert rounding.reference_atol(r).tolist() == [1e-6, 2e-6]
    assert rounding.same_program_atol(r).tolist() == [2e-6, 4e-6]
    assert rounding.same_program_atol(low, r).tolist() == pytest.approx([1e-3 + 1e-6, 1e-3 + 2e-6])
    tree = rounding.tracked({"w": np.float32([1.0]), "ids": np.int32([3])}, rounded=True)
    assert isinstance(tree["w"], rounding.Bounded) and tree["ids"].dtype == np.int32


def _mlp(x, w1, w2):
    h = np.tanh(x @ w1)
    return h @ w2


@pytest.mark.parametrize("seed", range(5))
def test_the_bound_holds_for_float32_runs_in_other_orders(seed):
    """An MLP in float32 (numpy's order, and the contraction split in four partial sums added in
    reverse) is within the bound of the float64 value, and the two runs within twice it."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (8, 64)).astype(np.float32)
    w1 = (rng.uniform(-1, 1, (64, 32)) / 64).astype(np.float32)
    w2 = (rng.uniform(-1, 1, (32, 16)) / 32).astype(np.float32)
    reference = _mlp(*rounding.tracked((x, w1, w2)))
    plain = _mlp(x, w1, w2)
    parts = [x[:, i:i + 16] @ w1[i:i + 16] for i in range(0, 64, 16)]
    h = np.tanh(np.float32(sum(reversed(parts))))
    split = (h[:, :16] @ w2[:16] + h[:, 16:] @ w2[16:]).astype(np.float32)
    for run in (plain, split):
        assert (np.abs(run - reference.value) <= reference.bound).all()
    assert (np.abs(plain - split) <= rounding.same_program_atol(reference)).all()


def test_close_takes_a_bound_per_element():
    case = Case("f(x)", "    print('repro')")
    expected = np.float64([1.0, 100.0])
    atol = np.array([1e-6, 1e-3])
    case.close("y", np.float64([1.0 + 5e-7, 100.0 + 5e-4]), expected, rtol=0.0, atol=atol)
    # within the largest bound, but not within its own element's
    with pytest.raises(ConformanceFailure,
                       match=r"beyond rtol=0.0, the per-element atol \(1e-06 there\); first at \(0,\)"):
        case.close("y", np.float64([1.0 + 5e-4, 100.0]), expected, rtol=0.0, atol=atol)
    with pytest.raises(ValueError, match="per-element atol has shape"):
        case.close("y", expected, expected, rtol=0.0, atol=np.ones(3))


@pytest.mark.parametrize("got, status", [("np.float64([1.0 + 5e-7, 100.0 + 5e-4])", 0),
                                         ("np.float64([1.0 + 5e-4, 100.0])", 1)])
def test_the_verdict_lines_judge_each_element_by_its_bound(got, status):
    lines = values_lines(got, np.float64([1.0, 100.0]), atol=np.array([1e-6, 1e-3]))
    assert any(line.startswith("atol = np.array(") for line in lines)
    with pytest.raises(SystemExit) as done:
        exec("\n".join(["import numpy as np", *lines]), {"sys": sys})
    assert done.value.code == status


@pytest.mark.parametrize("name", ["exp", "tanh", "log", "rsqrt", "pow", "sin", "cos"])
def test_the_installed_jax_computes_its_functions_within_the_ulps_charged(name):
    """The bound charges XLA's float32 exp, tanh, log, rsqrt, pow, sin and cos FUNCTION_ULPS u |out| each: on a
    dense grid the installed JAX stays within it (a release whose functions lose accuracy makes
    every model-program bound unsafe, and fails here first)."""
    import jax
    from jax import lax
    wide = np.linspace(-10, 10, 200001).astype(np.float32)
    positive = np.linspace(1e-3, 100, 200001).astype(np.float32)
    base = np.linspace(0.5, 1.0, 200001).astype(np.float32)  # Adam's b1 ** t, t a float32 step count
    f, exact, x = {"exp": (jax.numpy.exp, np.exp, wide), "tanh": (jax.numpy.tanh, np.tanh, wide),
                   "log": (jax.numpy.log, np.log, positive),
                   "rsqrt": (lax.rsqrt, lambda v: 1 / np.sqrt(v), positive),
                   "pow": (lambda v: v ** np.float32(3), lambda v: v ** 3, base),
                   "sin": (jax.numpy.sin, np.sin, wide), "cos": (jax.numpy.cos, np.cos, wide)}[name]
    got = np.asarray(jax.jit(f)(x), np.float64)
    want = exact(x.astype(np.float64))
    zero = want == 0
    assert (got[zero] == 0).all(), f"jax {name} of {x[zero]} is {got[zero]}, but should be 0"
    worst = float(np.max(np.abs(got - want)[~zero] / (U * np.abs(want[~zero]))))
    assert worst <= rounding.FUNCTION_ULPS, (
        f"jax {name} in float32 is off by {worst:.2f} u|value|, but should be within "
        f"FUNCTION_ULPS={rounding.FUNCTION_ULPS}")


def test_sqrt_near_zero_is_capped_and_an_exact_zero_stays_exact():
    # sqrt(1e-8) = 1e-4 with e = 1e-6: first order e / (2 sqrt x) = 5e-3, capped by sqrt(e) = 1e-3
    y = np.sqrt(rounding.Bounded([1e-8, 0.0, 4.0], [1e-6, 0.0, 1e-6]))
    assert y.bound.tolist() == pytest.approx([1e-3 + rounding.FUNCTION_ULPS * U * 1e-4, 0.0,
                                              2.5e-7 + rounding.FUNCTION_ULPS * U * 2])
    assert rounding.Bounded([[1.0, 2.0]], [[3.0, 4.0]]).T.bound.tolist() == [[3.0], [4.0]]


def test_the_dot_operand_rounding_is_what_jax_states_of_default_precision():
    """TF32 on NVIDIA GPUs from Ampere (compute capability 8.0), bfloat16 on TPU, none on CPU, older
    GPUs, or where the configured default matmul precision asks for float32."""
    from conformance.jaxside.bridge import dot_operand_dtype_for
    assert dot_operand_dtype_for("gpu", "9.0", None) == "tfloat32"
    assert dot_operand_dtype_for("gpu", "8.0", "default") == "tfloat32"
    assert dot_operand_dtype_for("gpu", "7.0", None) is None
    assert dot_operand_dtype_for("gpu", None, None) is None
    assert dot_operand_dtype_for("tpu", None, None) == "bfloat16"
    assert dot_operand_dtype_for("cpu", None, None) is None
    for asked in ("highest", "float32", "F32_F32_F32"):
        assert dot_operand_dtype_for("gpu", "9.0", asked) is None
