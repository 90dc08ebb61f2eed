"""Meta-tests for the assertion helpers and reproduction scripts: they fail when they should, and
their messages read "got X, but should be Y [call]" followed by a runnable reproduction."""

import os
import re
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from conformance.checking.case import Case, ConformanceFailure, error_names_dimension
from conformance.checking.repro import array_literal, script
from conformance.jaxside import compat
from conformance.model.layout import Layout, MeshModel

ROOT = Path(__file__).resolve().parents[1]
CASE = Case("f(x)", "    print('repro')")


def failure(fn):
    with pytest.raises(ConformanceFailure) as info:
        fn()
    return str(info.value)


def test_equal_message_reads_got_but_should_be():
    message = failure(lambda: CASE.equal("out.shape", (2,), (3,)))
    assert message.startswith("out.shape=(2,), but should be (3,) [f(x)]")
    assert message.endswith("Reproduce without Hypothesis:\n    print('repro')")
    CASE.equal("out.shape", (3,), (3,))


def test_true():
    assert failure(lambda: CASE.true("flag", False)).startswith("flag=False, but should be True [f(x)]")
    CASE.true("flag", True)


def test_index_map_lists_only_differing_devices():
    got = {0: ((0, 2),), 1: ((2, 4),), 2: ((0, 2),)}
    expected = {0: ((0, 2),), 1: ((0, 2),), 3: ((2, 4),)}
    message = failure(lambda: CASE.index_map("devices_indices_map", got, expected))
    assert "differs from the model on 3 device(s) [f(x)]" in message
    assert "device 1: holds ((2, 4),), but should hold ((0, 2),)" in message
    assert "device 2: holds ((0, 2),), but should hold nothing" in message
    assert "device 3: holds nothing, but should hold ((2, 4),)" in message
    assert "device 0" not in message
    CASE.index_map("m", expected, dict(expected))


@pytest.mark.parametrize("a, b", [
    (np.array([np.nan], np.float32), np.array([np.nan], np.float32).view(np.uint32) + 1),
    (np.array([0.0], np.float32), np.array([-0.0], np.float32)),
    (np.array([1, 2], np.int8), np.array([1, 3], np.int8)),
    (np.array([1.0], ml_dtypes.bfloat16), np.array([1.0078125], ml_dtypes.bfloat16)),
])
def test_same_bits_tells_apart_what_equality_hides(a, b):
    b = b.view(a.dtype)
    assert "differs in 1 of" in failure(lambda: CASE.same_bits("y", a, b))
    CASE.same_bits("y", a, a.copy())


def test_same_bits_reports_a_zero_dimensional_difference():
    message = failure(lambda: CASE.same_bits("r", np.int32(-5), np.int32(5)))
    assert "r differs in 1 of 1 element(s); first at (): got np.int32(-5), but should be np.int32(5) [f(x)]" in message


def test_same_bits_checks_dtype_and_shape_first():
    assert failure(lambda: CASE.same_bits("y", np.zeros(2, np.int32), np.zeros(2, np.int64))) \
        .startswith("y.dtype='int32', but should be 'int64'")
    assert failure(lambda: CASE.same_bits("y", np.zeros(2), np.zeros(3))) \
        .startswith("y.shape=(2,), but should be (3,)")


def test_close_uses_the_stated_tolerance():
    CASE.close("y", np.float32([1.0, np.nan]), np.float32([1.0 + 1e-7, np.nan]), rtol=1e-6, atol=0)
    message = failure(lambda: CASE.close("y", np.float32([1.0]), np.float32([1.1]), rtol=1e-6, atol=0))
    assert "beyond rtol=1e-06, atol=0" in message and "should be np.float32(1.1)" in message


def test_accepts_and_rejects():
    assert CASE.accepts("g", lambda: 5) == 5
    assert "g raised KeyError: 'k', but should be accepted [f(x)]" in failure(
        lambda: CASE.accepts("g", lambda: {}["k"]))
    assert "g returned 5, but should raise ValueError [f(x)]" in failure(
        lambda: CASE.rejects("g", lambda: 5, (ValueError,)))
    assert "g raised KeyError: 'k', but should raise ValueError" in failure(
        lambda: CASE.rejects("g", lambda: {}["k"], (ValueError,)))

    def bad():
        raise ValueError("dimension 0 should be divisible by 4")
    assert isinstance(CASE.rejects("g", bad, (ValueError,), names_dims=[0]), ValueError)
    assert "the message should name dimension 1" in failure(
        lambda: CASE.rejects("g", bad, (ValueError,), names_dims=[1]))


@pytest.mark.parametrize("message, dims, names", [
    ("the global size of its dimension 0 should be divisible by 4", [0], True),
    ("implies that array axis 1 is partitioned 2 times", [1], True),
    ("implies that array axis 1 is partitioned 2 times", [0], False),
    ("dimension 10 is wrong", [1], False),
])
def test_error_names_dimension(message, dims, names):
    """JAX 0.4.30 says "dimension N", 0.10 says "array axis N"; a different number does not count."""
    assert error_names_dimension(message, dims) is names


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "float16", "bfloat16", "float32",
                                   "complex64", "float64", "int64"])
def test_array_literal_rebuilds_the_exact_bits(dtype):
    import jax.numpy as jnp
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    x = (np.arange(6) - 2).astype(np.float32).reshape(2, 3).astype(dt)
    for value in (x, x[0, 0], x.T, x[:0]):  # 2-d, 0-d (a scalar), non-contiguous, empty
        rebuilt = eval(array_literal(value), {"np": np, "jnp": jnp})
        assert rebuilt.dtype == value.dtype and rebuilt.shape == np.shape(value)
        assert rebuilt.tobytes() == np.asarray(value).tobytes()


def test_repro_script_runs_on_its_own():
    """A reproduction script, run by a fresh Python with nothing of the suite imported, rebuilds
    the mesh, the sharding and the array."""
    mesh = MeshModel(tuple(range(4)), (2, 2), ("a", "b"))
    layout = Layout(mesh, ("a", None), (4, 2))
    x = np.arange(8, dtype=np.int32).reshape(4, 2)
    code = script(["sharding = NamedSharding(mesh, P('a', None))",
                   "y = jax.device_put(x, sharding)",
                   "print(sorted((d.id, idx[0].start) for d, idx in y.sharding.devices_indices_map(x.shape).items()))",
                   "print(np.asarray(y).sum())"],
                  meshes={"mesh": mesh}, arrays={"x": x})
    result = run_script(code)
    assert result.returncode == 0, result.stderr
    expected = sorted((d, start) for d, ((start, _), _) in layout.blocks.items())
    assert result.stdout.split("\n")[:2] == [str(expected), str(x.sum())]


def run_script(code: str) -> subprocess.CompletedProcess:
    """A reproduction script (as a failure message indents it) in a fresh Python, outside the
    checkout, without the platform and device count this run set."""
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_PLATFORMS")}
    return subprocess.run([sys.executable, "-c", "\n".join(line[4:] for line in code.splitlines())],
                          capture_output=True, text=True, env=env, cwd="/", timeout=120)


@compat.requires("explicit_sharding")
def test_repro_script_expresses_an_explicit_mesh():
    """A script over a mesh with Explicit axes builds it with those axis types, commits ``placed``
    arrays to it, and runs ``in_context`` lines inside the mesh context JAX asks for."""
    mesh = MeshModel(tuple(range(2)), (2,), ("a",))
    x = np.arange(4, dtype=np.float32)
    code = script(["print(x.sharding.spec)"], meshes={"mesh": mesh}, axis_type="Explicit",
                  placed={"x": (x, ("a",))},
                  in_context=["print(mesh.axis_types, (x * 2).sum())"])
    assert "AxisType.Explicit" in code and compat.MESH_CONTEXT_SOURCE in code
    result = run_script(code)
    assert result.returncode == 0, result.stderr
    assert "Explicit" in result.stdout and "12.0" in result.stdout, result.stdout


def test_a_warm_interpreter_runs_scripts_and_survives_their_crashes():
    """The warm interpreter runs script after script in one process (prints come back, a raise is
    status 1 with the exception's line); a script that kills the process returns the signal as a
    negative status with what it wrote to stderr, and the next script runs in a fresh one."""
    from conformance.checking.isolation import WarmInterpreter

    warm = WarmInterpreter(timeout=120)
    try:
        first = warm.run("    import os\n    print(os.getpid())")  # (a Case's repro is indented)
        again = warm.run("import os\nprint(os.getpid())")
        assert first.returncode == again.returncode == 0 and first.stdout == again.stdout, (first, again)
        raised = warm.run("print('before')\nraise ValueError('no')")
        assert (raised.returncode, raised.stdout, raised.stderr) == (1, "before\n", "ValueError: no\n"), raised
        died = warm.run("import os, signal, sys\nsys.stderr.write('Check failed: x\\n')\nsys.stderr.flush()\n"
                        "os.kill(os.getpid(), signal.SIGABRT)")
        assert died.returncode == -6 and "Check failed: x" in died.stderr, died
        fresh = warm.run("import os\nprint(os.getpid())")
        assert fresh.returncode == 0 and fresh.stdout != first.stdout, (fresh, first)
    finally:
        warm.close()


def test_a_fork_server_runs_each_script_as_a_fresh_interpreter_would(monkeypatch):
    """Each script runs in a forked child of an interpreter that has only imported the preamble's
    modules, and ends as ``python -c`` would: its prints and status, the traceback of a raise (as a
    new interpreter prints it), a SystemExit's code, a crash's signal as a negative status, a script
    killed after its timeout; no script sees what an earlier one did, and the fork beats a new
    interpreter."""
    import subprocess
    import time
    from conformance.checking.isolation import ForkServer, run_isolated
    from conformance.jaxside import bridge

    server = ForkServer()
    try:
        first = run_isolated(["seen = 1", "print(len(devices), int(jnp.arange(4).sum()))"], server=server)
        assert (first.returncode, first.stdout, first.stderr) == (0, f"{len(bridge.live_device_ids())} 6\n", ""), first
        again = run_isolated(["print('seen' in globals(), os.getpid())"], server=server)
        assert again.returncode == 0 and again.stdout.startswith("False "), again
        raised = run_isolated(["print('before')", "raise ValueError('no')"], server=server)
        plain = run_isolated(["print('before')", "raise ValueError('no')"])
        assert (raised.returncode, raised.stdout, raised.stderr) == (plain.returncode, plain.stdout, plain.stderr)
        assert raised.returncode == 1 and raised.stderr.splitlines()[-1] == "ValueError: no", raised
        assert run_isolated(["import sys", "sys.exit(3)"], server=server).returncode == 3
        died = run_isolated(["import signal, sys", "sys.stderr.write('Check failed: x\\n')", "sys.stderr.flush()",
                             "os.kill(os.getpid(), signal.SIGABRT)"], server=server)
        assert died.returncode == -6 and "Check failed: x" in died.stderr, died
        with pytest.raises(subprocess.TimeoutExpired):
            run_isolated(["import time", "time.sleep(60)"], server=server, timeout=1)
        started = time.monotonic()
        after = run_isolated(["print(os.getpid())"], server=server)
        forked = time.monotonic() - started
        started = time.monotonic()
        run_isolated(["print(os.getpid())"])
        assert after.returncode == 0 and after.stdout != again.stdout and forked < time.monotonic() - started
        serving = server.process.pid
        monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/next.py::test (call)")  # (pytest's, from test to test)
        seen = run_isolated(["print(os.environ['PYTEST_CURRENT_TEST'])"], server=server)
        assert seen.stdout == "tests/next.py::test (call)\n" and server.process.pid == serving, seen
        monkeypatch.setenv("CONFORMANCE_PROBE", "1")  # (any other change: a server started in it)
        seen = run_isolated(["print(os.environ['CONFORMANCE_PROBE'])"], server=server)
        assert seen.stdout == "1\n" and server.process.pid != serving, seen
    finally:
        server.close()


# --- the script's verdict ------------------------------------------------------------------------
def failed_script(case: Case, check) -> str:
    with pytest.raises(ConformanceFailure) as failure:
        check(case)
    return failure.value.repro


@pytest.mark.parametrize("outcome, status, printed", [
    ("jax.device_put(x, NamedSharding(mesh, P('a'))) + 1", 1, "got:      int32 [1, 2, 3, 4]"),  # JAX still wrong
    ("jax.device_put(x, NamedSharding(mesh, P('a')))", 0, "expected: int32 [0, 1, 2, 3]"),  # JAX behaves
])
def test_a_value_check_ends_its_script_with_a_verdict(outcome, status, printed):
    """The script of a failed value check prints what JAX returns and what it should, and exits 1
    while they differ, 0 once they agree (every shard against its block too)."""
    x = np.arange(4, dtype=np.int32)
    case = Case("x + 0", script([], meshes={"mesh": MeshModel((0, 1), (2,), ("a",))}, arrays={"x": x}),
                outcomes={"sharded x": outcome})
    repro = failed_script(case, lambda c: c.close("sharded x result", x + 1, x, rtol=0, atol=0))
    assert "expected = np.arange(4, dtype=np.int32)" in repro
    result = run_script(repro)
    assert result.returncode == status and printed in result.stdout, \
        (result.returncode, result.stdout, result.stderr[-2000:])


def test_a_call_that_should_return_or_raise_ends_its_script_with_a_verdict():
    """accepts: exit 1 while the call raises; rejects: exit 1 while it returns; a check the
    property named no expression for leaves the script as it was."""
    case = Case("calls", script([]), outcomes={"int of text": "int('x')", "int of a number": "int('1')"})
    raised = failed_script(case, lambda c: c.accepts("int of text", lambda: int("x")))
    result = run_script(raised)
    assert result.returncode == 1 and "raised: ValueError" in result.stdout, result.stdout
    returned = failed_script(case, lambda c: c.rejects("int of a number", lambda: int("1"), (ValueError,)))
    result = run_script(returned)
    assert result.returncode == 1 and "returned: 1" in result.stdout and "expected: ValueError" in result.stdout
    plain = failed_script(case, lambda c: c.equal("something else", 1, 2))
    assert plain == case.repro and "sys.exit" not in plain


class FailsWhileComputed:
    """A result whose computation fails only when it is waited for, as a JAX executable's error
    does under asynchronous dispatch (``jax.block_until_ready`` calls this method of a leaf)."""

    def block_until_ready(self):
        raise RuntimeError("UNIMPLEMENTED: met while the program ran")


LAZY_SOURCE = ("type('FailsWhileComputed', (), {'block_until_ready': "
               "lambda self: (_ for _ in ()).throw(RuntimeError('UNIMPLEMENTED: met while the program ran'))})()")


def test_a_call_that_should_return_is_waited_for_in_the_check_and_in_its_script():
    """accepts waits for the result (jax.block_until_ready): an error met while the program runs
    fails the check, and the script, which waits the same way, exits 1 while it is there (found on
    0.7.1: a script that did not wait printed 'returned, as it should' and exited 0 while the bug
    was there)."""
    case = Case("a program that fails as it runs", script([]), outcomes={"run": LAZY_SOURCE})
    message = failure(lambda: case.accepts("run", FailsWhileComputed))
    assert "run raised RuntimeError: UNIMPLEMENTED: met while the program ran, but should be accepted" in message
    result = run_script(failed_script(case, lambda c: c.accepts("run", FailsWhileComputed)))
    assert result.returncode == 1 and "raised: RuntimeError UNIMPLEMENTED" in result.stdout, (result.stdout,
                                                                                             result.stderr[-2000:])


def test_a_layout_check_ends_its_script_with_the_layout_that_differed():
    """check_layout's checks share one verdict: the script lists each device whose map, shard or
    data differs from the model's, and exits 1 while one does (0 for the layout asked for)."""
    from conformance.checking.layouts import check_layout
    import jax
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = MeshModel((0, 1), (2,), ("a",))
    x = np.arange(8, dtype=np.int32).reshape(4, 2)
    wanted, placed = Layout(mesh, ("a",), x.shape), Layout(mesh, (None, "a"), x.shape)
    jax_mesh = jax.sharding.Mesh(np.array([jax.devices()[0], jax.devices()[1]]), ("a",))
    y = jax.device_put(x, NamedSharding(jax_mesh, P(None, "a")))
    for spec, status in ((placed.spec, 1), (wanted.spec, 0)):
        case = Case("device_put", script([], meshes={"mesh": mesh}, arrays={"x": x}),
                    outcomes={"shard": f"jax.device_put(x, NamedSharding(mesh, P{tuple(spec)!r}))"})
        repro = failed_script(case, lambda c: check_layout(c, y, wanted, x))
        result = run_script(repro)
        assert result.returncode == status, (result.stdout, result.stderr[-2000:])
        if status:
            assert "device 0: sharding maps ((0, 4), (0, 1)), but should map ((0, 2), (0, 2))" in result.stdout


def test_a_verdict_audit_records_what_each_check_would_script(tmp_path, monkeypatch):
    """Under CONFORMANCE_VERDICT_AUDIT a passing check records whether its Case named an outcome
    (once per test and outcome, with the script), and a failing one its script too."""
    import json
    from conformance.checking import case as case_module
    monkeypatch.setenv(case_module.AUDIT_ENV, str(tmp_path))
    monkeypatch.setattr(case_module, "_audited", set())
    case = Case("calls", script([]), outcomes={"one": "1", "two": "1 + 2"})
    case.equal("one", 1, 1)
    case.equal("one", 1, 1)  # (recorded once)
    case.equal("three", 3, 3)
    with pytest.raises(ConformanceFailure):
        case.equal("two", 3, 2)
    Case("no script").true("four", True)
    records = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert [(r["check"], r["kind"]) for r in records] == [
        ("one", "scripted"), ("three", "no verdict"), ("two", "failed"), ("four", "no script")]
    assert run_script(records[0]["script"]).returncode == 0 and run_script(records[2]["script"]).returncode == 1


def test_jitted_first_judges_the_eager_run_only_where_the_jitted_one_fails():
    """Case.jitted_first: the jitted run's result where its checks pass (the eager run not made);
    the eager run's where they fail or it raises; the eager run's failure where both fail."""
    case, made = Case("f(x)"), []

    def judge(fn):
        value = fn()
        case.equal("value", value, 2)
        return value

    def run(name, value):
        def fn():
            made.append(name)
            if isinstance(value, Exception):
                raise value
            return value
        return fn
    assert case.jitted_first(judge, run("jit", 2), run("eager", 2)) == 2 and made == ["jit"]
    made.clear()
    assert case.jitted_first(judge, run("jit", 3), run("eager", 2)) == 2 and made == ["jit", "eager"]
    assert case.jitted_first(judge, run("jit", RuntimeError("no")), run("eager", 2)) == 2
    with pytest.raises(ConformanceFailure, match="value=3, but should be 2"):
        case.jitted_first(judge, run("jit", 4), run("eager", 3))


def test_two_float32_sums_in_different_orders_are_bounded_by_twice_gamma_n_minus_1_of_the_magnitudes():
    """summation_order_atol, hand-worked: [1, -1, 0.5] in float32 (n = 3, u = 2**-24): 2 * (2u / (1 -
    2u)) * 2.5; one term: 0; the 0.11.1 finding (1,024 terms whose magnitudes sum to 826.61: the
    sharded sum -0.57415771484375 and the global one -0.5742111206054688) lies within it, a sum one
    term of 1.0 off does not."""
    from conformance.checking.tolerance import summation_order_atol
    u = 2.0 ** -24
    assert summation_order_atol(np.array([1.0, -1.0, 0.5], np.float32)) == \
        pytest.approx(2 * (2 * u / (1 - 2 * u)) * 2.5)
    assert summation_order_atol(np.array([3.0])) == 0.0
    terms = np.full(1024, 826.61 / 1024)
    bound = summation_order_atol(terms)
    assert abs(-0.57415771484375 - -0.5742111206054688) <= bound < 1.0


def test_a_check_reads_the_outcome_of_its_own_name_or_of_the_name_it_extends_word_by_word():
    """``outcome_name``: the check's own name first, else the longest name it extends at a word's
    end; a name that is only the start of a longer word is not read (no trailing spaces needed)."""
    from conformance.checking.verdict import outcome_name
    outcomes = {"loss": "a", "logits": "b", "loss vs numpy": "c", "(b) jit with in/out_shardings": "d"}
    assert outcome_name(outcomes, "loss") == "loss"
    assert outcome_name(outcomes, "loss sharding devices_indices_map") == "loss"
    assert outcome_name(outcomes, "loss.shape") == "loss"
    assert outcome_name(outcomes, "loss vs numpy.dtype") == "loss vs numpy"
    assert outcome_name(outcomes, "losses") is None
    assert outcome_name(outcomes, "(b) jit with in/out_shardings output v3") == "(b) jit with in/out_shardings"
    assert outcome_name(outcomes, "unsharded loss") is None


def test_a_way_is_named_by_its_member_its_label_or_its_letter_and_nothing_else():
    from conformance.checking.ways import JIT_WAYS, Way
    assert [Way.of(x) for x in (Way.EAGER, "(b) jit with in/out_shardings", "(c)")] == list(Way)
    assert [w.letter for w in Way] == ["(a)", "(b)", "(c)"] and [w.jitted for w in Way] == [False, True, True]
    assert JIT_WAYS == (Way.JIT_SHARDINGS, Way.JIT_CONSTRAINTS) and f"{Way.EAGER} v1" == "(a) eager v1"
    for wrong in ("(b) jit", "(d)", "", "(c) jit with constraints"):
        with pytest.raises(ValueError, match="names no way"):
            Way.of(wrong)


def test_the_ways_a_check_ran_in_are_read_from_the_start_of_its_name():
    from conformance.checking.symptoms import Symptom
    from conformance.checking.ways import Way, ran_in
    assert ran_in("(b) jit with in/out_shardings output v3") == {Way.JIT_SHARDINGS}
    assert ran_in("(a) eager") == {Way.EAGER} and ran_in("(c) output 0 (in a subprocess)") == {Way.JIT_CONSTRAINTS}
    assert ran_in("(b)/(c) in a subprocess") == {Way.JIT_SHARDINGS, Way.JIT_CONSTRAINTS}
    assert ran_in("exit status of (b)/(c) in a subprocess") == set() and ran_in("(a)x") == set()
    assert Symptom.parse({"wrong": "values", "ways": ["(b)", "(c) jit with sharding constraints"]}).ways == \
        (Way.JIT_SHARDINGS, Way.JIT_CONSTRAINTS)
    for table, message in (({"wrong": "values", "ways": []}, "a list of the ways"),
                           ({"wrong": "values", "ways": "(b)"}, "a list of the ways"),
                           ({"wrong": "values", "ways": ["(d)"]}, "names no way")):
        with pytest.raises(ValueError, match=re.escape(message)):
            Symptom.parse(table)
