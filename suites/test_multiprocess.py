"""Arrays and collectives across processes, checked against the model: run with
``pytest suites/ --processes N --devices M`` (N copies of the run, M CPU devices each, coordinated by
``jax.distributed``). Process 0 draws every example and checks the assembled answers; all processes
execute each step in lockstep (``conformance/runner/multiprocess/``: the protocol, and the steps in
``steps.py``). In a one-process run these properties skip, saying how to run them.
"""

import functools

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.checking.case import Case
from conformance.checking.repro import describe_layout
from conformance.jaxside import compat
from conformance.model import multihost
from conformance.model.layout import Layout, MeshModel, block_slices
from conformance.runner.multiprocess import steps
from strategies import assembly, congruent_shapes, dividing_specs, meshes, partition_specs

pytestmark = pytest.mark.multiprocess
EXAMPLES = max(5, settings().max_examples // 5)  # each example is a step across every process


@functools.lru_cache(maxsize=None)
def owners():
    """{device id: process index} of every device of the run."""
    return {d.id: d.process_index for d in jax.devices()}


def global_ids():
    return tuple(sorted(owners(), key=lambda i: (owners()[i], i)))


def mp_case(call: str, layout: Layout) -> Case:
    """A case whose reproduction is the command line: the example needs every process."""
    return Case(f"{call}; {describe_layout(layout)}; {jax.process_count()} processes x "
                f"{jax.local_device_count()} devices",
                f"    pytest suites/test_multiprocess.py --processes {jax.process_count()} "
                f"--devices {jax.local_device_count()} --hypothesis-seed=<the seed in the header>")


def payload(layout: Layout, seed: int, **extra) -> dict:
    return {"mesh": steps.describe(layout.mesh),
            "spec": [list(e) if isinstance(e, tuple) else e for e in layout.spec],
            "shape": list(layout.shape), "seed": seed, **extra}


def spans_every_process(mesh: MeshModel) -> bool:
    return {owners()[d] for d in mesh.device_ids} == set(range(jax.process_count()))


@st.composite
def global_layouts(draw, max_rank: int = 2, spanning: bool = False):
    """A congruent, non-empty layout over a mesh of any of the run's devices (all processes').
    With ``spanning``, or where make_array_from_callback takes no dtype (0.4.38: a process without
    a shard cannot build its part), the mesh holds a device of every process."""
    must_span = spanning or not compat.CALLBACK_TAKES_DTYPE
    mesh = draw(meshes(global_ids()).filter(lambda m: not must_span or spans_every_process(m)))
    rank = draw(st.integers(1, max_rank))
    spec = draw(partition_specs(mesh, rank))
    shape = draw(congruent_shapes(mesh, spec, rank, max_side=2, zero_size=False))
    return Layout(mesh, spec, shape), draw(st.integers(0, 99))


def assembled(case: Case, layout: Layout, answers, key: str = "shards"):
    """{device: (block, values)} over every process's answer; each process answers for exactly its
    own devices of the mesh."""
    held = {}
    for process, answer in enumerate(answers):
        devices = sorted(d for d, _, _ in answer[key])
        expected = sorted(d for d in layout.mesh.device_ids if owners()[d] == process)
        case.equal(f"devices whose shards process {process} addresses", devices, expected)
        for device, block, data in answer[key]:
            held[device] = (tuple(tuple(b) for b in block), np.asarray(data, np.int32))
    return held


def check_laid_out(case: Case, layout: Layout, answers, x) -> None:
    """Every process answered with exactly its own devices' shards, each the model's block of
    ``x`` (an answer that says the call raised fails, naming the process and the error)."""
    for process, answer in enumerate(answers):
        if "raised" in answer:
            case.fail(f"on process {process} it raised {answer['raised']}: {answer['message']}, "
                      f"but should return the array [{case.call}]")
    held = assembled(case, layout, answers)
    case.index_map("blocks held across processes", {d: b for d, (b, _) in held.items()}, layout.blocks)
    for device, (block, data) in held.items():
        case.same_bits(f"shard of device {device}", data, x[block_slices(block)])


@given(example=global_layouts())
@settings(max_examples=EXAMPLES)
def test_global_and_addressable_shards_match_the_model(example, multiprocess_leader):
    """make_array_from_callback over devices of several processes: each process addresses exactly
    its own devices' shards, each holding the model's block of the global values, and
    is_fully_addressable is true on a process exactly when it owns every device of the mesh."""
    layout, seed = example
    case = mp_case("jax.make_array_from_callback(shape, sharding, lambda i: x[i])", layout)
    answers = multiprocess_leader.run("layout", payload(layout, seed))
    check_laid_out(case, layout, answers, steps.values(layout.shape, seed))
    for process, answer in enumerate(answers):
        mine = all(owners()[d] == process for d in layout.mesh.device_ids)
        case.equal(f"is_fully_addressable on process {process}", answer["fully_addressable"], mine)


@st.composite
def process_split_layouts(draw):
    """A (processes, local devices) mesh 'p' x 'd' whose spec splits dimension 0 by process first
    (P('p'), P(('p','d')) or P('p','d')), so each process holds one range of rows."""
    count, local = jax.process_count(), jax.local_device_count()
    mesh = MeshModel(global_ids(), (count, local), ("p", "d"))
    spec = draw(st.sampled_from([("p",), (("p", "d"),), ("p", "d")]))
    shape = draw(congruent_shapes(mesh, spec, 2, max_side=2, zero_size=False))
    return Layout(mesh, spec, shape), draw(st.integers(0, 99))


@given(example=process_split_layouts())
@settings(max_examples=EXAMPLES)
def test_make_array_from_process_local_data_assembles_the_global_array(example, multiprocess_leader):
    """Each process passing only its own rows to make_array_from_process_local_data gives the
    global array the model predicts: every device's shard holds its block of the global values."""
    layout, seed = example
    rows = steps.process_rows(layout.mesh, layout.spec, layout.shape, owners())
    case = mp_case("jax.make_array_from_process_local_data(sharding, local_rows, shape)", layout)
    answers = multiprocess_leader.run("from_process_local_data",
                                      payload(layout, seed, rows=[list(rows[p]) for p in sorted(rows)]))
    check_laid_out(case, layout, answers, steps.values(layout.shape, seed))


@given(example=global_layouts(spanning=True))
@settings(max_examples=EXAMPLES)
def test_process_allgather_returns_the_global_value(example, multiprocess_leader):
    """process_allgather of an array over devices of every process is, on every process, the whole
    global value. (An array of one process's devices is that process's local value, which
    process_allgather stacks with the other processes' own: another contract.)"""
    layout, seed = example
    case = mp_case("multihost_utils.process_allgather(array, tiled=True)", layout)
    answers = multiprocess_leader.run("allgather", payload(layout, seed))
    x = steps.values(layout.shape, seed)
    for process, answer in enumerate(answers):
        case.same_bits(f"process_allgather on process {process}", np.asarray(answer["gathered"], np.int32), x)


@given(example=global_layouts(spanning=True))
@settings(max_examples=EXAMPLES)
def test_device_put_of_the_same_host_value_lays_it_out_across_processes(example, multiprocess_leader):
    """device_put of a numpy value that is the same on every process onto a sharding over devices
    of every process gives the global array the model lays out."""
    layout, seed = example
    case = mp_case("jax.device_put(x, sharding)  # x: the same numpy array on every process", layout)
    answers = multiprocess_leader.run("device_put", payload(layout, seed, source="host"))
    check_laid_out(case, layout, answers, steps.values(layout.shape, seed))


@st.composite
def reshard_examples(draw):
    """A global layout, and another one of the same shape over the same devices (in another order
    or mesh shape, with another dividing spec) to reshard from."""
    layout, seed = draw(global_layouts(spanning=True))
    source_mesh = draw(meshes(layout.mesh.device_ids, subsets=False))
    source_spec = draw(dividing_specs(source_mesh, layout.shape))
    return layout, Layout(source_mesh, source_spec, layout.shape), seed


@given(example=reshard_examples())
@settings(max_examples=EXAMPLES)
def test_device_put_reshards_a_global_array_over_the_same_devices(example, multiprocess_leader):
    """device_put of a global array (shards on every process) onto another sharding over the same
    devices moves each block where the model says and keeps every value."""
    layout, source, seed = example
    case = mp_case(f"jax.device_put(global_array, sharding)  # from {describe_layout(source)}", layout)
    answers = multiprocess_leader.run("device_put", payload(
        layout, seed, source={"mesh": steps.describe(source.mesh),
                              "spec": payload(source, seed)["spec"]}))
    check_laid_out(case, layout, answers, steps.values(layout.shape, seed))


@given(example=global_layouts(spanning=True))
@settings(max_examples=EXAMPLES)
def test_device_put_of_a_process_local_array_onto_other_processes_devices_is_refused(example, multiprocess_leader):
    """device_put of an array committed to one of this process's devices onto a sharding that
    holds other processes' devices raises ValueError on every process (the documented contract:
    the first argument of a cross-process device_put must be a host value or a global array), and
    never returns a partial array."""
    layout, seed = example
    case = mp_case("jax.device_put(jax.device_put(x, jax.local_devices()[0]), sharding)", layout)
    answers = multiprocess_leader.run("device_put", payload(layout, seed, source="local"))
    for process, answer in enumerate(answers):
        case.equal(f"what device_put raised on process {process}",
                   answer.get("raised", "nothing: it returned an array"), "ValueError")


@st.composite
def psum_layouts(draw):
    """Every device of the run on a 1-d mesh 'i' in a drawn order, dimension 0 sharded over it."""
    ids = draw(st.permutations(global_ids()))
    mesh = MeshModel(tuple(ids), (len(ids),), ("i",))
    rows, width = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    return Layout(mesh, ("i",), (len(ids) * rows, width)), draw(st.integers(0, 99))


def check_collectives(case: Case, layout: Layout, seed: int, answers) -> None:
    """psum leaves on every device the sum of the blocks, all_gather the whole value, and the
    replicated jnp.sum the column sums, on every process."""
    n, (rows_total, width) = layout.mesh.size, layout.shape
    x = steps.values(layout.shape, seed)
    expected = {"psum": x.reshape(n, rows_total // n, width).sum(0, dtype=np.int32),
                "all_gather": x, "sum": x.sum(0, dtype=np.int32)}
    for process, answer in enumerate(answers):
        for name, want in expected.items():
            for device, _, data in answer[name]:
                case.same_bits(f"{name} on device {device} (process {process})",
                               np.asarray(data, np.int32), want)


COLLECTIVES_CALL = ("jit(shard_map(lambda a: psum(a, 'i')))(x); jit(shard_map(lambda a: "
                    "all_gather(a, 'i', tiled=True), out_specs=P()))(x); jit(jnp.sum(a, 0), out_shardings=P())")


@given(example=psum_layouts())
@settings(max_examples=EXAMPLES)
def test_psum_all_gather_and_sum_across_processes_equal_the_model(example, multiprocess_leader):
    """Over an axis spanning every process, each waited for in turn: psum (shard_map under jit)
    leaves on each device the sum of all blocks, tiled all_gather the whole value, and jnp.sum
    under jit with a replicated output the column sums, on every device of every process."""
    layout, seed = example
    case = mp_case(COLLECTIVES_CALL, layout)
    answers = multiprocess_leader.run("collectives", payload(layout, seed, axis="i"))
    check_collectives(case, layout, seed, answers)


@pytest.mark.skipif(compat.CONCURRENT_COLLECTIVES_HANG, reason=compat.CONCURRENT_COLLECTIVES_REASON)
@given(example=psum_layouts())
@settings(max_examples=EXAMPLES)
def test_collectives_in_flight_together_across_processes_equal_the_model(example, multiprocess_leader):
    """The same three collectives dispatched back to back without waiting (as any training step
    does) finish, with the same values as one at a time."""
    layout, seed = example
    case = mp_case(COLLECTIVES_CALL + "  # dispatched back to back", layout)
    answers = multiprocess_leader.run("collectives", payload(layout, seed, axis="i", in_flight=True))
    check_collectives(case, layout, seed, answers)


@given(width=st.integers(1, 4), seed=st.integers(0, 99))
@settings(max_examples=EXAMPLES)
def test_pmap_psum_over_local_devices_spans_every_process(width, seed, multiprocess_leader):
    """pmap over each process's own devices with psum over the pmapped axis sums the rows of every
    device of every process (the axis spans the whole run)."""
    n = jax.device_count()
    x = steps.values((n, width), seed)
    case = Case(f"jax.pmap(lambda a: lax.psum(a, 'i'), axis_name='i')(local rows); {jax.process_count()} "
                f"processes x {jax.local_device_count()} devices", "")
    answers = multiprocess_leader.run("pmap_psum", {"width": width, "seed": seed})
    for process, answer in enumerate(answers):
        got = np.asarray(answer["rows"], np.int32)
        case.same_bits(f"pmap psum rows on process {process}", got,
                       np.tile(x.sum(0, dtype=np.int32), (jax.local_device_count(), 1)))


def test_multiprocess_run_is_what_was_asked(multiprocess_leader):
    """The run has the processes and devices the launcher started: every process contributes
    the same number of devices, and ids are distinct across processes."""
    count = jax.process_count()
    per_process = [sum(1 for p in owners().values() if p == q) for q in range(count)]
    assert per_process == [jax.local_device_count()] * count, per_process
    assert set(owners().values()) == set(range(count))
    assert compat.MULTIPROCESS_CPU or jax.default_backend() != "cpu"


# --- multihost_utils broadcast_one_to_all and process_allgather (issue 26) ----------------------
def broadcast_sources():
    """strategies.assembly.broadcast_sources for this run's process count (read when the first
    example is drawn, once the run's processes are known)."""
    return st.deferred(lambda: assembly.broadcast_sources(jax.process_count()))


def tree_case(call: str, tree: dict) -> Case:
    leaves = ", ".join(f"{leaf['dtype']}{tuple(leaf['shape'])}" for leaf in tree["leaves"])
    return Case(f"{call}; tree {{'first', 'rest'}} of leaves {leaves}, its values differing per process "
                f"(seed {tree['seed']}); {jax.process_count()} processes x {jax.local_device_count()} devices",
                f"    pytest suites/test_multiprocess.py --processes {jax.process_count()} "
                f"--devices {jax.local_device_count()} --hypothesis-seed=<the seed in the header>")


def check_tree(case: Case, what: str, answer: dict, expected_leaves) -> None:
    """``answer`` (a step's tree_answer) is the pytree {"first", "rest"} of ``expected_leaves``:
    same structure, and each leaf's shape, dtype and values."""
    if "raised" in answer or "error" in answer:
        case.fail(f"{what} raised {answer.get('raised')}: {answer.get('message')} [{case.call}]")
    case.equal(f"{what}: the tree's structure", (answer["type"], answer["keys"], len(answer["rest"])),
               ("dict", ["first", "rest"], len(expected_leaves) - 1))
    for i, (got, want) in enumerate(zip([answer["first"], *answer["rest"]], expected_leaves)):
        case.equal(f"{what}: leaf {i} shape", tuple(got["shape"]), want.shape)
        case.equal(f"{what}: leaf {i} dtype", got["dtype"], want.dtype.name)
        case.same_bits(f"{what}: leaf {i}", np.asarray(got["values"], want.dtype).reshape(want.shape), want)


@given(tree=assembly.per_process_trees(), source=broadcast_sources())
@settings(max_examples=EXAMPLES)
def test_broadcast_one_to_all_gives_every_process_the_source_value(tree, source, multiprocess_leader):
    """broadcast_one_to_all of a pytree whose values differ per process gives every process the
    source's tree (process 0's, or with is_source= the process where it is true), leaf for leaf."""
    call = ("multihost_utils.broadcast_one_to_all(tree)" if source is None else
            f"multihost_utils.broadcast_one_to_all(tree, is_source=jax.process_index() == {source})")
    case = tree_case(call, tree)
    answers = multiprocess_leader.run("broadcast", dict(tree, source=source))
    expected = multihost.broadcast([steps.local_leaves(tree, p) for p in range(jax.process_count())], source or 0)
    for process, answer in enumerate(answers):
        check_tree(case, f"broadcast_one_to_all on process {process}", answer, expected)


def gathered_leaves(tree: dict, tiled: bool):
    """process_allgather's model (conformance/model/multihost.py) of every process's own leaves."""
    return multihost.gathered([steps.local_leaves(tree, p) for p in range(jax.process_count())], tiled)


@given(tree=assembly.per_process_trees(), tiled=st.booleans(), kind=st.sampled_from(("numpy", "jax")))
@settings(max_examples=EXAMPLES)
def test_process_allgather_of_per_process_values_stacks_or_concatenates(tree, tiled, kind, multiprocess_leader):
    """process_allgather of a pytree of per-process values (numpy, or arrays on a local device)
    gives every process each leaf of every process in process order: stacked on a new leading axis
    with tiled=False (and for scalars), concatenated along axis 0 with tiled=True."""
    holder = "np.ndarray" if kind == "numpy" else "jax.Array on a local device"
    case = tree_case(f"multihost_utils.process_allgather(tree, tiled={tiled})  # leaves: {holder}", tree)
    answers = multiprocess_leader.run("allgather_local", dict(tree, tiled=tiled, **{"as": kind}))
    expected = gathered_leaves(tree, tiled)
    for process, answer in enumerate(answers):
        check_tree(case, f"process_allgather on process {process}", answer, expected)


@given(example=global_layouts(spanning=True), tiled=st.booleans())
@settings(max_examples=EXAMPLES)
def test_process_allgather_of_a_global_array_in_both_forms(example, tiled, multiprocess_leader):
    """process_allgather of a global array over devices of every process: with tiled=True the whole
    global value on every process; with tiled=False a ValueError on every process where JAX states
    it only supports tiled=True (0.8.0 on), before that the whole global value too (its docstring:
    "the data is fully replicated")."""
    layout, seed = example
    case = mp_case(f"multihost_utils.process_allgather(global_array, tiled={tiled})", layout)
    answers = multiprocess_leader.run("allgather_global", payload(layout, seed, tiled=tiled))
    x = steps.values(layout.shape, seed)
    for process, answer in enumerate(answers):
        if not tiled and compat.ALLGATHER_REFUSES_UNTILED_GLOBAL:
            case.equal(f"what process_allgather(tiled=False) raised on process {process}",
                       answer.get("raised", "nothing: it returned a value"), "ValueError")
            continue
        if "raised" in answer:
            case.fail(f"on process {process} it raised {answer['raised']}: {answer['message']}, "
                      f"but should return the global value [{case.call}]")
        case.same_bits(f"process_allgather on process {process}", np.asarray(answer["gathered"], np.int32), x)
