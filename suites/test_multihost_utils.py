"""``jax.experimental.multihost_utils`` and ``jax.make_array_from_process_local_data`` on one
process: each function's multi-process meaning (conformance/model/multihost.py) with one process,
which is what a pod's code does when it runs on a workstation or a single host. process_allgather
of per-process values stacks them once (``tiled=False``) or returns them (``tiled=True``);
broadcast_one_to_all returns the tree; host_local_array_to_global_array gives the global array laid
out as the pspec says, and global_array_to_host_local_array gives the values back;
make_array_from_process_local_data assembles the global array with its shape inferred or given;
sync_global_devices and assert_equal return None. Values are compared bit for bit, layouts with
the layout model. (Several processes: suites/test_multiprocess.py.)"""

from typing import NamedTuple

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax.experimental import multihost_utils

from conformance.checking.case import Case
from conformance.checking.layouts import check_layout, layout_case
from conformance.checking.repro import script, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model import multihost
from strategies import assembly, layouts

pytestmark = pytest.mark.multihost_utils
DEVICES = bridge.live_device_ids()
EXAMPLES = max(10, settings().max_examples // 4)  # one small program per example


def one_process(call: str) -> pytest.MarkDecorator:
    """These checks mean one process: a multi-process run has its own (test_multiprocess.py)."""
    return pytest.mark.skipif(jax.process_count() != 1, reason=f"{call} on one process: this run has "
                              f"{jax.process_count()} (suites/test_multiprocess.py checks several)")


def own_tree(tree: dict, kind: str):
    """The process's own pytree {"first", "rest"}: the model's leaves (process 0's), on the host or
    each committed to a device in turn."""
    leaves = [assembly.distinct_values(tuple(leaf["shape"]), leaf["dtype"], tree["seed"]) for leaf in tree["leaves"]]
    if kind == "jax":
        leaves = [jax.device_put(leaf, jax.devices()[i % len(jax.devices())]) for i, leaf in enumerate(leaves)]
    return leaves, {"first": leaves[0], "rest": tuple(leaves[1:])}


def tree_case(call: str, tree: dict, kind: str) -> Case:
    leaves = ", ".join(f"{leaf['dtype']}{tuple(leaf['shape'])}" for leaf in tree["leaves"])
    source = "jax.device_put(leaf, jax.devices()[i])" if kind == "jax" else "np.arange(size).reshape(shape) + seed"
    lines = ["from jax.experimental import multihost_utils",
             f"shapes = {[(tuple(leaf['shape']), leaf['dtype']) for leaf in tree['leaves']]!r}",
             f"leaves = [(np.arange(int(np.prod(s)), dtype=np.int64) + {tree['seed']}).astype(d).reshape(s) "
             "for s, d in shapes]",
             *(["leaves = [jax.device_put(v, jax.devices()[i % len(jax.devices())]) for i, v in enumerate(leaves)]"]
               if kind == "jax" else []),
             "tree = {'first': leaves[0], 'rest': tuple(leaves[1:])}",
             f"print({call})"]
    return Case(f"{call}; one process; tree {{'first', 'rest'}} of leaves {leaves} ({source})", script(lines))


def check_tree(case: Case, what: str, got, expected) -> None:
    """``got`` is the pytree {"first", "rest"} of ``expected`` leaves: structure, shapes, dtypes, bits."""
    case.equal(f"{what}: the tree's structure", (type(got).__name__, sorted(got), len(got["rest"])),
               ("dict", ["first", "rest"], len(expected) - 1))
    for i, (leaf, want) in enumerate(zip([got["first"], *got["rest"]], expected)):
        leaf = np.asarray(leaf)
        case.equal(f"{what}: leaf {i} shape", leaf.shape, want.shape, shows="shape")
        case.equal(f"{what}: leaf {i} dtype", leaf.dtype.name, want.dtype.name)
        case.same_bits(f"{what}: leaf {i}", leaf, want)


class AllgatherExample(NamedTuple):
    """A process_allgather example: the tree's leaves (strategies.assembly.per_process_trees), tiled,
    and whether the leaves are numpy values or single-device arrays."""

    tree: dict
    tiled: bool
    kind: str


@one_process("process_allgather")
@given(tree=assembly.per_process_trees(), tiled=st.booleans(), kind=st.sampled_from(("numpy", "jax")))
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_process_allgather_of_own_values_on_one_process_stacks_them_once_or_returns_them(tree, tiled, kind, excuses):
    """process_allgather of a pytree of host values or single-device arrays on one process gives
    each leaf stacked once on a new leading axis (tiled=False, and any scalar) or the leaf itself
    (tiled=True): the multi-process rule with one process."""
    example = AllgatherExample(tree, tiled, kind)
    call = f"multihost_utils.process_allgather(tree, tiled={tiled})"
    case = tree_case(call, tree, kind)
    leaves, value = own_tree(tree, kind)
    expected = multihost.gathered([leaves], tiled)  # (the model: nothing of JAX's to excuse)
    with excuses.way([example], example=example):
        got = case.accepts(call, lambda: multihost_utils.process_allgather(value, tiled=tiled))
        check_tree(case, call, got, expected)


@one_process("broadcast_one_to_all")
@given(tree=assembly.per_process_trees(), is_source=st.sampled_from((None, True)),
       kind=st.sampled_from(("numpy", "jax")))
@settings(max_examples=EXAMPLES)
def test_broadcast_one_to_all_on_one_process_returns_its_tree(tree, is_source, kind):
    """broadcast_one_to_all of a pytree on one process (the source by default, or is_source=True)
    returns the same tree, leaf for leaf."""
    call = ("multihost_utils.broadcast_one_to_all(tree)" if is_source is None else
            "multihost_utils.broadcast_one_to_all(tree, is_source=True)")
    case = tree_case(call, tree, kind)
    leaves, value = own_tree(tree, kind)
    kwargs = {} if is_source is None else {"is_source": True}
    got = case.accepts(call, lambda: multihost_utils.broadcast_one_to_all(value, **kwargs))
    check_tree(case, call, got, multihost.broadcast([leaves]))


PSPEC_FORMS = ("one PartitionSpec for the tree", "a PartitionSpec per leaf")


@one_process("host_local_array_to_global_array")
@given(layout=layouts(DEVICES, min_rank=1, max_rank=2, zero_size=False), form=st.sampled_from(PSPEC_FORMS),
       seed=st.integers(0, 99))
@settings(max_examples=EXAMPLES)
def test_host_local_and_global_arrays_on_one_process_round_trip(layout, form, seed):
    """host_local_array_to_global_array of one process's values (a tuple of two leaves, the pspec
    given once for the tree or once per leaf) is, with one process, the global array of those values
    laid out as the pspec says; global_array_to_host_local_array gives the values back."""
    x = assembly.distinct_values(layout.shape, "int32", seed)
    spec = spec_literal(layout.spec)
    pspecs = spec if form == PSPEC_FORMS[0] else f"({spec}, {spec})"
    to_global = f"multihost_utils.host_local_array_to_global_array((x, x + 1), mesh, {pspecs})"
    case = layout_case(layout, f"{to_global}; then global_array_to_host_local_array(..., mesh, {pspecs})",
                       ["from jax.experimental import multihost_utils",
                        f"g = {to_global}", "print(g[0].sharding, np.asarray(g[0]))",
                        f"print(multihost_utils.global_array_to_host_local_array(g, mesh, {pspecs}))"], x=x,
                       outcomes={"host_local_array_to_global_array": to_global})
    mesh = bridge.jax_mesh(layout.mesh)
    one = compat.partition_spec(layout.spec)
    given_pspecs = one if form == PSPEC_FORMS[0] else (one, one)
    expected = (x, x + 1)
    global_arrays = case.accepts("host_local_array_to_global_array",
                                 lambda: multihost_utils.host_local_array_to_global_array(expected, mesh, given_pspecs))
    for i, (array, want) in enumerate(zip(global_arrays, expected)):
        case.equal(f"global array {i} shape", tuple(array.shape), layout.shape)
        check_layout(case, array, layout, want, what=f"global array {i}")
    back = case.accepts("global_array_to_host_local_array",
                        lambda: multihost_utils.global_array_to_host_local_array(global_arrays, mesh, given_pspecs))
    for i, (local, want) in enumerate(zip(back, expected)):
        case.equal(f"host-local array {i} shape", tuple(np.shape(local)), want.shape)
        case.same_bits(f"host-local array {i}", np.asarray(local), want)


GLOBAL_SHAPE_FORMS = ("inferred", "given positionally", "given as global_shape=")


@one_process("make_array_from_process_local_data")
@given(layout=layouts(DEVICES, min_rank=1, max_rank=3, zero_size=False), form=st.sampled_from(GLOBAL_SHAPE_FORMS),
       seed=st.integers(0, 99))
@settings(max_examples=EXAMPLES)
def test_make_array_from_process_local_data_on_one_process_is_the_global_array(layout, form, seed):
    """make_array_from_process_local_data(sharding, local_data) on one process, with the global
    shape inferred or given (positionally, or as global_shape=), is the global array of those
    values laid out as the sharding says."""
    x = assembly.distinct_values(layout.shape, "float32", seed)
    shape_arg = {"inferred": "", "given positionally": f", {layout.shape}",
                 "given as global_shape=": f", global_shape={layout.shape}"}[form]
    call = f"jax.make_array_from_process_local_data(sharding, x{shape_arg})"
    case = layout_case(layout, call, [f"y = {call}", "print(y.sharding, np.asarray(y))"], x=x,
                       outcomes={"make_array_from_process_local_data": call})
    sharding = bridge.layout_sharding(layout)
    make = jax.make_array_from_process_local_data
    y = case.accepts("make_array_from_process_local_data", lambda: (
        make(sharding, x) if form == "inferred" else make(sharding, x, layout.shape)
        if form == "given positionally" else make(sharding, x, global_shape=layout.shape)))
    case.equal("y.shape", tuple(y.shape), layout.shape)
    case.equal("y.dtype", np.dtype(y.dtype).name, "float32")
    check_layout(case, y, layout, x)


@one_process("sync_global_devices and assert_equal")
def test_sync_global_devices_and_assert_equal_on_one_process_return_none():
    """sync_global_devices(name) and assert_equal(tree) (with and without fail_message) return None
    on one process: there is no other process to wait for or to differ from."""
    tree = {"a": np.arange(3), "b": (np.float32(1.5), jax.numpy.ones((2, 2)))}
    case = Case("multihost_utils.sync_global_devices('conformance'); multihost_utils.assert_equal(tree); one process",
                "")
    case.equal("sync_global_devices('conformance')",
               case.accepts("sync_global_devices", lambda: multihost_utils.sync_global_devices("conformance")), None)
    case.equal("assert_equal(tree)", case.accepts("assert_equal", lambda: multihost_utils.assert_equal(tree)), None)
    case.equal("assert_equal(tree, fail_message=...)",
               case.accepts("assert_equal with a message",
                            lambda: multihost_utils.assert_equal(tree, fail_message="differs")), None)



# --- deterministic reproductions of what the properties above found -----------------------------
@one_process("process_allgather")
@pytest.mark.parametrize("tiled", [False, True])
def test_process_allgather_of_a_scalar_on_one_process_stacks_it(tiled):
    """process_allgather(np.int32(7), tiled=...) on one process is array([7]) of shape (1,): its
    docstring says a scalar input is stacked, and on several processes it is (found on 0.10.2,
    2026-12-06)."""
    call = f"multihost_utils.process_allgather(np.int32(7), tiled={tiled})"
    case = Case(f"{call}; one process", script(["from jax.experimental import multihost_utils",
                                                 f"print(np.shape({call}))"]),
                outcomes={"the gathered scalar shape": f"np.shape({call})"})
    got = np.asarray(case.accepts(call, lambda: multihost_utils.process_allgather(np.int32(7), tiled=tiled)))
    case.equal("the gathered scalar shape", got.shape, (1,), shows="shape")
    case.same_bits("the gathered scalar", got, np.array([7], np.int32))
