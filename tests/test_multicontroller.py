"""The multi-controller mode's parts that one process can check: arrays through JSON, the global value
assembled from every process's shards (other processes played by a stand-in exchange), one verdict
from every process's outcomes, meshes that reach every process, and the suites' readiness table."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conformance.jaxside import multicontroller as mc
from conformance.model.layout import DeviceIds
from conformance.runner import multi_controller
from conformance.runner.devices import UsageError
from conformance.model.layout import in_turn, leading

ROOT = Path(__file__).resolve().parents[1]


class StandIn:
    """An exchange whose other processes answer what the test says (process 0 is this one)."""

    def __init__(self, *others):
        self.others, self.asked = list(others), []

    def everyone(self, what, value):
        self.asked.append(what)
        return [value, *self.others]

    def forget(self):
        pass


@pytest.mark.parametrize("x", [np.float32(-0.0), np.arange(6, dtype=np.int8).reshape(2, 3),
                               np.array([np.nan, 1.5], jnp.bfloat16), np.zeros((0, 2), np.float32)])
def test_an_array_comes_back_from_json_with_its_dtype_shape_and_bits(x):
    got = mc.decode(mc.encode(np.asarray(x)))
    assert (got.dtype, got.shape, got.tobytes()) == (np.asarray(x).dtype, np.shape(x), np.asarray(x).tobytes())


def shard(device, block, values):
    return [device, [list(b) for b in block], mc.encode(np.asarray(values, np.int32))]


def test_the_global_value_is_assembled_from_every_process_shards():
    x = jax.device_put(np.arange(4, dtype=np.int32))  # (one device here: it holds [0, 4))
    other = StandIn([shard(9, [(0, 4)], [0, 1, 2, 3])])  # another process's replica of the same block
    got = mc.value_of(other, x, lambda a: np.asarray(a))
    assert got.tolist() == [0, 1, 2, 3] and other.asked == ["the value of a int32[4] jax.Array"]


def test_replicas_that_differ_between_processes_fail_naming_both():
    x = jax.device_put(np.arange(4, dtype=np.int32))
    with pytest.raises(AssertionError, match=r"device 9 \(process 1\) holds \[0, 1, 2, 7\]"):
        mc.value_of(StandIn([shard(9, [(0, 4)], [0, 1, 2, 7])]), x, lambda a: np.asarray(a))


def test_a_shard_of_another_shape_than_its_block_fails_as_jaxs_own_read_does():
    """An int32[0, 2] array whose shard over a cut second side is [0, 2] (a known deviation of
    0.9.1-0.11.1; likewise float32[3, 1] shards of [4, 1] blocks, 0.7.0-0.11.x): numpy's ValueError,
    as JAX's own one-process read raises it before 0.12, so the deviations' symptoms read alike."""
    x = jax.device_put(np.zeros((0, 2), np.int32))
    with pytest.raises(ValueError, match=r"could not broadcast input array from shape \(0,2\) into shape \(0,1\)"):
        mc.value_of(StandIn([shard(9, [(0, 0), (0, 1)], np.zeros((0, 2)))]), x, lambda a: np.asarray(a))


def test_an_element_no_process_holds_fails():
    x = jax.device_put(np.arange(4, dtype=np.int32))
    answers = StandIn([])

    def mine_only_half(what, value):
        return [[shard(0, [(0, 2)], [0, 1])], []]
    answers.everyone = mine_only_half
    with pytest.raises(AssertionError, match=r"no process holds elements \[\[2\], \[3\]\]"):
        mc.value_of(answers, x, lambda a: np.asarray(a))


def test_one_verdict_where_every_process_agrees():
    mc.agree(StandIn(None), "outcome of an example", None)  # every process passed
    failure = ValueError("same")
    with pytest.raises(ValueError, match="same"):  # every process failed alike: each raises its own
        mc.agree(StandIn(mc.outcome(failure)), "outcome of an example", failure)


def test_processes_that_disagree_fail_every_process_naming_each_outcome():
    with pytest.raises(mc.ProcessesDisagree, match=r"process 0: passed; process 1: builtins.ValueError: bad"):
        mc.agree(StandIn(mc.outcome(ValueError("bad"))), "outcome of an example", None)
    with pytest.raises(mc.ProcessesDisagree, match=r"process 0: builtins.KeyError"):
        mc.agree(StandIn(mc.outcome(ValueError("bad"))), "outcome of an example", KeyError("k"))


def test_a_leading_subset_reaches_every_process():
    ids = DeviceIds((0, 1, 2, 3, 8, 9, 10, 11), [(0, 1, 2, 3), (8, 9, 10, 11)])
    assert leading(ids, 3) == [0, 8, 1]  # the first three in process order are all process 0's
    assert leading(ids, 6) == [0, 1, 2, 3, 8, 9]  # these already reach both
    assert leading(ids, 1) == list(ids)  # one device cannot reach two processes: all of them
    four = DeviceIds(range(8), [{0, 1}, {2, 3}, {4, 5}, {6, 7}])
    assert leading(four, 5) == [0, 2, 4, 6, 1]
    assert leading(four, 2) == list(four)  # a drawn mesh reaches every process
    assert in_turn(four, 2) == [0, 2]  # a fixed one of fewer devices: the first device of two of them
    assert leading((0, 1, 2), 2) == [0, 1]  # one process: the first ones, as ever


def test_every_suite_says_whether_it_runs_multi_controller():
    suites = {p.stem for p in (ROOT / "suites").glob("test_*.py")}
    named = multi_controller.load()
    assert set(named) == suites
    assert all(r.runs or r.why for r in named.values())
    with pytest.raises(UsageError, match="does not name suite 'test_new'"):
        multi_controller.skip_reason("test_new", named)


def test_numpy_of_an_array_counts_as_ours_only_from_the_suite_code():
    assert mc.called_from_our_code(1)  # (this file is under tests/)


def test_an_exception_can_hold_only_from_a_number_of_processes(tmp_path):
    table = tmp_path / "multi_controller.toml"
    table.write_text('[[suite]]\nname = "test_x"\nruns = true\n'
                     'except = [{ test = "test_y", why = "four only", from_processes = 3 }]\n')
    named = multi_controller.load(table)
    assert multi_controller.skip_reason("test_x", named, "test_y", 2) == ""
    assert multi_controller.skip_reason("test_x", named, "test_y", 4).endswith("four only")
    table.write_text('[[suite]]\nname = "test_x"\nruns = true\nexcept = [{ test = "test_y", why = "w", '
                     'from_processes = 1 }]\n')
    with pytest.raises(UsageError, match="from_processes = N"):
        multi_controller.load(table)


def test_an_exception_names_tests_by_name_and_parameters_with_stars():
    assert multi_controller.matches("test_y[*-Device-*]", "test_y[numpy.zeros-Device-eager]")
    assert not multi_controller.matches("test_y[*-Device-*]", "test_y[numpy.zeros-P-Explicit]")
    assert multi_controller.matches("test_x", "test_x") and not multi_controller.matches("test_x", "test_x[a]")
