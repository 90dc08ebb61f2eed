"""pmap: what each device receives (in_axes), how results are stacked (out_axes), static
arguments, tracing, and the errors for sizes that do not fit, against conformance/model/spmd.py."""

import functools
import re
from dataclasses import dataclass

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax import lax

from conformance.checking import verdict as verdicts
from conformance.checking.repro import scripted_case, tree_literal
from conformance.jaxside import bridge, compat
from conformance.model import spmd
from conformance.model.layout import MeshModel
from strategies import arrays, dtype_of, reuse
from strategies.spmd import argument_trees, device_selections

pytestmark = pytest.mark.pmap
DEVICES = bridge.live_device_ids()


def double_plus_one(*args):
    """The body of the pytree properties: every leaf times 2 plus 1 (numpy and JAX alike)."""
    return spmd.tree_map(lambda leaf: leaf * 2 + 1, args)


def add_unmapped(a, b):
    """The body of the in_axes=(0, None) property: the unmapped b, on every device."""
    return b + a.sum() * 0


def psum_over_i(a):
    return lax.psum(a, "i")


# A property that must trace and compile afresh in every example (it counts traces of a new
# function) takes a fifth of the profile's examples: 20 by default, 200 nightly.
FRESH_COMPILE_EXAMPLES = max(10, settings().max_examples // 5)


def check_tree(case, what, got, expected):
    """Leaf by leaf: same structure, dtype, shape and bits."""
    got_leaves, expected_leaves = spmd.tree_leaves(got), spmd.tree_leaves(expected)
    case.equal(f"{what}: number of leaves", len(got_leaves), len(expected_leaves))
    case.equal(f"{what}: structure", type(got).__name__, type(expected).__name__)
    for i, (g, e) in enumerate(zip(got_leaves, expected_leaves)):
        case.same_bits(f"{what} leaf {i}", np.asarray(g), np.asarray(e))


@st.composite
def pytree_examples(draw):
    """A device selection, argument pytrees and in_axes for its size, and an out_axes valid for
    every output leaf."""
    selection = draw(device_selections(DEVICES))
    args, in_axes = draw(argument_trees(selection.size))
    per_device = spmd.device_args(args, in_axes, 0)
    lowest_rank = min(np.ndim(leaf) for leaf in spmd.tree_leaves(per_device))
    out_axes = draw(st.integers(0, lowest_rank))
    return selection, args, in_axes, out_axes


@given(example=pytree_examples())
def test_pmap_of_pytrees_matches_the_model(example):
    """For argument pytrees (dicts, lists, tuples) with in_axes prefixes of ints and Nones, device i
    gets slice i of each mapped leaf and every unmapped leaf whole, and the results are stacked
    along out_axes; with devices=, slice i lands on the i-th listed device."""
    selection, args, in_axes, out_axes = example
    leaves = len(spmd.tree_leaves(args))  # double_plus_one keeps the arguments' structure
    case = scripted_case(f"jax.pmap(double_plus_one, in_axes={in_axes!r}, out_axes={out_axes}"
                         f"{selection.code})(*args)",
                         ["double_plus_one = lambda *args: jax.tree_util.tree_map(lambda l: l * 2 + 1, args)",
                          f"args = {tree_literal(args)}",
                          f"f = jax.pmap(double_plus_one, in_axes={in_axes!r}, out_axes={out_axes}{selection.code})",
                          "print(f(*args))",
                          *(["# for each result leaf, {slice position: id of the device holding it}; then the",
                             "# first leaf's map, or the first map that differs from it",
                             "holders = [{(s.index[0] if isinstance(s.index[0], int) else s.index[0].start or 0): "
                             "s.device.id",
                             "            for s in leaf.addressable_shards} "
                             "for leaf in jax.tree_util.tree_leaves(f(*args))]",
                             "holder = next((h for h in holders if h != holders[0]), holders[0])"]
                            if out_axes == 0 else [])],
                         outcomes={"pmap": "f(*args)",
                                   "pmap result: number of leaves": "len(jax.tree_util.tree_leaves(f(*args)))",
                                   "pmap result: structure": "type(f(*args)).__name__",
                                   **{f"pmap result leaf {i}": f"np.asarray(jax.tree_util.tree_leaves(f(*args))[{i}])"
                                      for i in range(leaves)},
                                   "device holding each slice": "holder"})
    with np.errstate(over="ignore"):
        expected = spmd.pmap_reference(double_plus_one, args, in_axes, out_axes)
    f = bridge.pmapped(double_plus_one, selection, in_axes=in_axes, out_axes=out_axes)
    got = case.accepts("pmap", lambda: f(*args))
    check_tree(case, "pmap result", got, expected)
    if out_axes == 0:
        for leaf in spmd.tree_leaves(got):
            placed = {s.device.id: compat.index_position(s.index[0]) for s in leaf.addressable_shards}
            case.equal("device holding each slice", {pos: d for d, pos in placed.items()},
                       dict(enumerate(selection.ids)))


@st.composite
def broadcast_examples(draw):
    """A mapped argument and an unmapped one whose leading size may equal the device count."""
    selection = draw(device_selections(DEVICES))
    k = selection.size
    x = draw(arrays(np.int32, (k, 2)))
    leading = draw(st.sampled_from([k, 1, 3]))
    y = draw(arrays(np.int32, (leading, 2)))
    return selection, x, y


@given(example=broadcast_examples())
def test_unmapped_argument_reaches_every_device_whole(example):
    """in_axes=(0, None): every device gets the whole second argument, even when its leading size
    equals the number of devices (it is not split)."""
    selection, x, y = example
    call = f"jax.pmap(lambda a, b: b + a.sum() * 0, in_axes=(0, None){selection.code})(x, y)"
    case = scripted_case(call, [f"print({call})"], arrays={"x": x, "y": y},
                         outcomes={"pmap": call, "pmap result": f"np.asarray({call})"})
    f = bridge.pmapped(add_unmapped, selection, in_axes=(0, None))
    got = case.accepts("pmap", lambda: f(x, y))
    case.same_bits("pmap result", np.asarray(got), np.stack([y] * selection.size))


@given(selection=device_selections(DEVICES), data=st.data())
def test_out_axes_none_returns_the_replicated_value(selection, data):
    """With out_axes=None, a value that is the same on every device (a psum) comes back once,
    not stacked."""
    x = data.draw(arrays(np.int32, (selection.size, 3)))
    call = f"jax.pmap(lambda a: lax.psum(a, 'i'), axis_name='i', out_axes=None{selection.code})(x)"
    case = scripted_case(call, [f"print({call})"], arrays={"x": x},
                         outcomes={"pmap": call, "pmap result": f"np.asarray({call})"})
    f = bridge.pmapped(psum_over_i, selection, axis_name="i", out_axes=None)
    got = case.accepts("pmap", lambda: f(x))
    with np.errstate(over="ignore"):
        expected = spmd.stack_outputs(spmd.psum(list(x)), None)
    case.same_bits("pmap result", np.asarray(got), expected)


@bridge.needs_devices(2, "for values that differ across devices")
def test_out_axes_none_rejects_a_value_that_differs_across_devices():
    """out_axes=None promises a replicated result: a value that differs across devices is an error,
    not one device's value."""
    x = np.arange(2 * 3, dtype=np.int32).reshape(2, 3)
    case = scripted_case("jax.pmap(lambda a: a, out_axes=None)(x)", arrays={"x": x},
                         outcomes={"pmap(out_axes=None)": "jax.pmap(lambda a: a, out_axes=None)(x)"})
    case.rejects("pmap(out_axes=None) of an unreplicated value",
                 lambda: jax.pmap(lambda a: a, out_axes=None)(x), (ValueError,))


@dataclass
class Traced:
    """A pmapped function shared by a property's examples over one device selection, and every
    value its body has been traced with, in order."""

    f: object
    traces: list


@pytest.fixture
def traced_functions():
    """A property's store of ``Traced`` functions, one per device selection and kind, shared by its
    examples (so that an example that meets a signature an earlier one traced asks for no program
    again) and fresh for each property run (after the runner may have let JAX's caches go)."""
    return {}


def traced_function(store: dict, key, body_of) -> Traced:
    """``store``'s ``Traced`` for ``key``, made by pmapping ``body_of(traces)`` the first time."""
    if key not in store:
        traces = []
        store[key] = Traced(bridge.pmapped(body_of(traces), key[0], **dict(key[2:])), traces)
    return store[key]


def scaling_body(traces):
    def scale(a, k):
        traces.append(k)
        return a * k
    return scale


@given(selection=device_selections(DEVICES), statics=st.lists(st.integers(-3, 3), min_size=1, max_size=4))
@settings(max_examples=FRESH_COMPILE_EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_static_broadcasted_argnums(selection, statics, traced_functions):
    """A static argument reaches every device as the Python value; each distinct value is traced
    once, and equal values reuse the trace (the property's examples share one function per device
    selection, so a value an earlier example traced is not traced again)."""
    x = np.arange(selection.size * 2, dtype=np.int32).reshape(selection.size, 2)
    traced = traced_function(traced_functions, (selection, "scale", ("static_broadcasted_argnums", 1)), scaling_body)
    earlier = list(dict.fromkeys(traced.traces))
    before = len(traced.traces)
    case = scripted_case(f"pmap(scale, static_broadcasted_argnums=1) called with k in {statics}"
                         + (f", after calls with k in {earlier}" if earlier else ""),
                         ["traces = []",
                          "def scale(a, k):",
                          "    traces.append(k)",
                          "    return a * k",
                          f"f = jax.pmap(scale, static_broadcasted_argnums=1{selection.code})",
                          f"for k in {earlier}:  # the calls of the examples before",
                          "    f(x, k)",
                          "before = len(traces)",
                          f"print([f(x, k) for k in {statics}])"], arrays={"x": x},
                         outcomes={"pmap": f"[f(x, k) for k in {statics}]",
                                   **{f"f(x, {k})": f"np.asarray(f(x, {k}))" for k in statics},
                                   "traces (static values seen first here)": "sorted(traces[before:])"})
    for k in statics:
        case.same_bits(f"f(x, {k})", np.asarray(case.accepts("pmap", lambda: traced.f(x, k))),  # noqa: B023 - called in this iteration
                       x * np.int32(k))
    case.equal("traces (static values seen first here)", sorted(traced.traces[before:]),
               sorted(set(statics) - set(earlier)))


SIGNATURES = [((1,), "int32"), ((1, 2), "int32"), ((1,), "float32"), ((1, 2), "float32")]


def doubling_body(traces):
    def body(a):
        traces.append((a.shape, a.dtype.name))
        return a * 2
    return body


@given(selection=device_selections(DEVICES), calls=st.lists(st.integers(0, len(SIGNATURES) - 1),
                                                     min_size=1, max_size=6))
@settings(max_examples=FRESH_COMPILE_EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_traced_once_per_input_signature(selection, calls, traced_functions):
    """The pmapped function is traced once per distinct input shape and dtype (as the seed's
    print statement shows), however often it is called (the property's examples share one function
    per device selection, so a signature an earlier example traced is not traced again)."""
    traced = traced_function(traced_functions, (selection, "double"), doubling_body)
    earlier = [s for s in range(len(SIGNATURES)) if signature_traced(traced.traces, SIGNATURES[s])]
    before = len(traced.traces)
    inputs = []
    for i in calls:
        shape, dtype = SIGNATURES[i]
        inputs.append(np.ones((selection.size,) + shape[1:], dtype_of(dtype)))
        traced.f(inputs[-1])
    shapes = lambda ids: ", ".join(f"(({selection.size},) + {SIGNATURES[i][0][1:]}, np.{SIGNATURES[i][1]})"
                                   for i in ids)
    case = scripted_case(f"pmap(body) called on signatures {[SIGNATURES[i] for i in calls]}"
                         + (f", after calls on {[SIGNATURES[i] for i in earlier]}" if earlier else ""),
                         ["traces = []",
                          f"f = jax.pmap(lambda a: traces.append(a.shape) or a * 2{selection.code})",
                          f"for shape, dtype in [{shapes(earlier)}]:  # the calls of the examples before",
                          "    f(np.ones(shape, dtype))",
                          "before = len(traces)",
                          f"for shape, dtype in [{shapes(calls)}]:",
                          "    f(np.ones(shape, dtype))",
                          "print(len(traces) - before)"],
                         outcomes={"number of traces (signatures seen first here)": "len(traces) - before"})
    case.equal("number of traces (signatures seen first here)", len(traced.traces) - before,
               len(set(calls) - set(earlier)))


def signature_traced(traces, signature) -> bool:
    """Whether ``traces`` (per-device shapes and dtypes) hold ``signature``'s."""
    shape, dtype = signature
    return any(t[0] == shape[1:] and t[1] == dtype for t in traces)


@bridge.needs_devices(2, "(on one device pmap's message names neither size from JAX 0.8.0, which JAX's own "
                          "testDeviceCountError allows: test_mapped_axis_of_two_onto_one_device_is_rejected checks "
                          "the rejection)")
@given(extra=st.integers(1, 4))
def test_mapped_axis_larger_than_the_device_count_is_rejected(extra):
    """A mapped axis longer than the number of devices raises ValueError naming both sizes."""
    n = len(DEVICES)
    x = np.zeros((n + extra, 2), np.float32)
    call = f"jax.pmap(lambda a: a)(np.zeros(({n + extra}, 2), np.float32))"
    case = scripted_case(call, ["try:", f"    print({call})",
                                "except ValueError as e:", "    error = e", "    print('raised:', repr(e))"],
                         outcomes={"pmap of an oversized axis": call,
                                   f"the message names the axis size {n + extra} and the {n} devices":
                                   f"'{n + extra}' in str(error) and '{n}' in str(error)"})
    error = case.rejects("pmap of an oversized axis", lambda: jax.pmap(lambda a: a)(x), (ValueError,))
    case.true(f"the message names the axis size {n + extra} and the {n} devices",
              str(n + extra) in str(error) and str(n) in str(error))


def test_mapped_axis_of_two_onto_one_device_is_rejected():
    """jax.pmap(lambda a: 2 * a, devices=<one device>)(np.zeros((2, 2))), what pmap runs on a
    one-device backend, raises ValueError. (Its message names neither size from JAX 0.8.0, when
    pmap became jit(shard_map): "cannot select an axis to squeeze out ..."; JAX's own pmap_test
    testDeviceCountError has asked only for IndivisibleError or ValueError since then, so this
    property asks no more of the message.)"""
    device = bridge.devices_by_id()[DEVICES[0]]
    call = f"jax.pmap(lambda a: 2 * a, devices=[devices[{DEVICES[0]}]])(np.zeros((2, 2), np.float32))"
    case = scripted_case(call, outcomes={"pmap of an axis of 2 onto one device": call})
    case.rejects("pmap of an axis of 2 onto one device",
                 lambda: jax.pmap(lambda a: 2 * a, devices=[device])(np.zeros((2, 2), np.float32)), (ValueError,))


@dataclass(frozen=True)
class DevicesGiven:
    """A pmap call's ``devices=``: how many devices are given, and the mapped axis's size."""

    given: int
    axis_size: int


# Each (devices given, axis size) pair once: a release that maps the axis anyway (a known deviation)
# compiles a program per pair, and a filtered draw met pairs again (22 programs asked for twice on 0.10.2)
MISMATCHED_COUNTS = tuple(DevicesGiven(m, size) for m in range(1, len(DEVICES) + 1)
                          for size in range(1, len(DEVICES) + 1) if m != size)


@functools.lru_cache(maxsize=None)
def identity_for_axis(size: int):
    """The devices= properties' function for an axis of ``size``, given more devices than that: one
    per size, since a release that accepts such a call (the known deviation pmap_devices_axis_size)
    compiles the same program whatever the number given (20 programs asked for twice on 0.10.2
    with one function per example). An axis larger than the devices given is refused before
    compiling, each call with a function of its own: a refusal leaves a shared function's store
    empty on 0.8.0-0.9.0 (pmap_store_left_empty_by_a_refusal)."""
    def identity(a):
        return a
    return identity


def check_devices_given(example: DevicesGiven) -> None:
    ids = tuple(DEVICES[:example.given])
    x = np.zeros((example.axis_size, 2), np.float32)
    call = (f"jax.pmap(lambda a: a, devices=[devices[i] for i in {list(ids)}])"
            f"(np.zeros(({example.axis_size}, 2), np.float32))")
    case = scripted_case(f"jax.pmap(lambda a: a, devices=<{example.given} devices>)"
                         f"(np.zeros(({example.axis_size}, 2)))",
                         outcomes={"pmap with devices= of another count": call})
    case.rejects("pmap with devices= of another count",
                 lambda: jax.pmap(identity_for_axis(example.axis_size) if example.given > example.axis_size
                                  else (lambda a: a),
                                  devices=[bridge.devices_by_id()[i] for i in ids])(x), (ValueError,))


@bridge.needs_devices(2, "to pass fewer devices than the axis size")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_devices_must_match_the_mapped_axis(data, excuses):
    """With devices=[...], a mapped axis whose size is not the number of devices given raises
    ValueError."""
    example = data.draw(reuse.sampled_from(MISMATCHED_COUNTS), label="devices given, axis size")
    with excuses.way([example]):
        check_devices_given(example)


@bridge.needs_devices(2, "to pass two devices")
def test_a_pmapped_function_that_refused_a_call_runs_a_later_valid_one():
    """f = jax.pmap(lambda a: a, devices=<two devices>) refuses f(np.zeros((3, 2))) with ValueError,
    then f(np.zeros((2, 2))) returns its argument: a refusal leaves the function usable (found when
    the devices= property shared one pmapped function between its examples, on 0.8.0-0.8.2 in the
    seventh matrix pass: a later call raised StoreException 'Store empty')."""
    ids = list(DEVICES[:2])
    call = f"f = jax.pmap(lambda a: a, devices=[devices[i] for i in {ids}])"
    case = scripted_case(f"{call}; f(np.zeros((3, 2))) refused, then f(np.zeros((2, 2)))",
                         [call, "try:", "    f(np.zeros((3, 2), np.float32))", "except ValueError as e:",
                          "    print('refused:', e)", "print(f(np.arange(4, dtype=np.float32).reshape(2, 2)))"],
                         outcomes={"the refused call": "f(np.zeros((3, 2), np.float32))",
                                   "the valid call after it":
                                   "np.asarray(f(np.arange(4, dtype=np.float32).reshape(2, 2)))"})
    f = jax.pmap(lambda a: a, devices=[bridge.devices_by_id()[i] for i in ids])
    case.rejects("the refused call", lambda: f(np.zeros((3, 2), np.float32)), (ValueError,))
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    case.same_bits("the valid call after it", np.asarray(case.accepts("the valid call after it", lambda: f(x))), x)


@bridge.needs_devices(2, "to pass more devices than the axis size")
def test_two_devices_for_a_mapped_axis_of_one_are_refused():
    """jax.pmap(lambda a: a, devices=<2 devices>)(np.zeros((1, 2))) raises ValueError: the mapped
    axis's size must equal the number of devices given (pmap's docstring)."""
    check_devices_given(DevicesGiven(2, 1))


@given(sizes=st.tuples(st.integers(1, 4), st.integers(1, 4)).filter(lambda s: s[0] != s[1]))
def test_inconsistent_mapped_sizes_are_rejected(sizes):
    """Two mapped arguments of different sizes raise ValueError (whose message JAX does not fix:
    since pmap became jit(shard_map) its own tests accept any ValueError)."""
    a, b = (np.zeros((s, 2), np.float32) for s in sizes)
    call = (f"jax.pmap(lambda a, b: a + b)(np.zeros(({sizes[0]}, 2), np.float32), "
            f"np.zeros(({sizes[1]}, 2), np.float32))")
    case = scripted_case(call, outcomes={"pmap of inconsistent sizes": call})
    case.rejects("pmap of inconsistent sizes", lambda: jax.pmap(lambda p, q: p + q)(a, b), (ValueError,))


# A refusal of a negative axis names what it refuses: in_axes or out_axes, or says "negative".
NAMES_THE_AXES = re.compile(r"in_axes|out_axes|negative")


@bridge.needs_devices(4, "for a 4x4 array")
@pytest.mark.parametrize("in_axes, out_axes", [(-1, 0), (0, -1)], ids=["in_axes=-1", "out_axes=-1"])
def test_negative_axes_count_from_the_end_or_are_refused(in_axes, out_axes):
    """pmap documents in_axes/out_axes as non-negative integers; a negative one either counts from
    the end, as in numpy and vmap, or is refused with a ValueError that names the argument (its
    docstring's rule): it never maps or stacks along another axis, nor fails on the way."""
    x = np.arange(16, dtype=np.int32).reshape(4, 4)
    call = f"jax.pmap(lambda a: a * 2, in_axes={in_axes}, out_axes={out_axes})(x)"
    named = "in_axes" if in_axes < 0 else "out_axes"
    refused = f"isinstance(e, ValueError) and re.search({NAMES_THE_AXES.pattern!r}, str(e)) is not None"
    case = scripted_case(call, ["import re, sys", "try:", f"    got = {call}", "except Exception as e:",
                                "    print(type(e).__name__, e)", f"    sys.exit(0 if {refused} else 1)",
                                "print(got)"],
                         arrays={"x": x}, outcomes={"pmap": "got", "pmap result": "np.asarray(got)"})
    try:
        got = jax.pmap(lambda a: a * 2, in_axes=in_axes, out_axes=out_axes)(x)
    except Exception as e:  # noqa: BLE001 - only the stated refusal passes
        if isinstance(e, ValueError) and NAMES_THE_AXES.search(str(e)):
            return
        case.fail(f"pmap raised {type(e).__name__}: {e}, but should count from the end or refuse the "
                  f"negative {named} with a ValueError saying so [{case.call}]", check="pmap", shows="raised",
                  raised=type(e).__name__, raised_message=str(e), verdict=case.verdict("pmap", verdicts.returns_lines))
    expected = spmd.pmap_reference(lambda a: a * 2, (x,), in_axes, out_axes)
    case.same_bits("pmap result", np.asarray(got), expected)


# --- the seed's examples -------------------------------------------------------------------------


def seed_expectations(n):
    """What the seed's three examples print for n devices (data_size_per_device = 4)."""
    scaled = [[2 * (4 * r + c) for c in range(4)] for r in range(n)]
    return {
        "scale_by_two": scaled,
        "scale_and_add": [[float(v + 100) for v in row] for row in scaled],
        "scale_and_sum": (scaled, [sum(map(sum, scaled))] * n),
    }


SEED_N = [2, 8]


@pytest.mark.parametrize("n", SEED_N)
@pytest.mark.parametrize("example", ["scale_by_two", "scale_and_add", "scale_and_sum"])
def test_seed_examples(example, n, capsys):
    """The seed's scale_by_two, scale_and_add (in_axes=(0, None)) and scale_and_sum (psum over
    'devices') print what the seed says for 2 and 8 devices, and print their tracing message once
    over two calls."""
    if len(DEVICES) < n:
        pytest.skip(f"needs {n} devices; this backend has {len(DEVICES)}")
    sharded = np.arange(n * 4).reshape(n, 4)
    bodies = {
        "scale_by_two": (lambda x: print("Compiling and running scale_by_two...") or x * 2, {}, ()),
        "scale_and_add": (lambda x, y: print("Compiling and running scale_and_add...") or x * 2 + y,
                          {"in_axes": (0, None)}, (np.float32(100.0),)),
        "scale_and_sum": (lambda x: print("Compiling and running scale_and_sum...") or
                          (x * 2, lax.psum((x * 2).sum(), axis_name="devices")),
                          {"axis_name": "devices"}, ()),
    }
    sources = {  # the same bodies, as the script writes them
        "scale_by_two": ("lambda x: print('Compiling and running scale_by_two...') or x * 2", "", ""),
        "scale_and_add": ("lambda x, y: print('Compiling and running scale_and_add...') or x * 2 + y",
                          ", in_axes=(0, None)", ", np.float32(100.0)"),
        "scale_and_sum": ("lambda x: print('Compiling and running scale_and_sum...') or "
                          "(x * 2, lax.psum((x * 2).sum(), axis_name='devices'))", ", axis_name='devices'", ""),
    }
    body, kwargs, extra = bodies[example]
    f = jax.pmap(body, **kwargs)
    source, kwargs_source, extra_source = sources[example]
    as_lists = "jax.tree_util.tree_map(lambda a: np.asarray(a).tolist(), {})"
    case = scripted_case(f"{example} on {n} devices",
                         ["import contextlib, io",
                          f"# the seed's {example}, with num_devices = {n}",
                          f"sharded = np.arange({n} * 4).reshape({n}, 4)",
                          f"f = jax.pmap({source}{kwargs_source})",
                          "printed = io.StringIO()",
                          "with contextlib.redirect_stdout(printed):",
                          f"    first, second = f(sharded{extra_source}), f(sharded{extra_source})",
                          "print(printed.getvalue())",
                          "print(first, second)"],
                         outcomes={"output": "np.asarray(first).tolist()",
                                   "scaled data": "np.asarray(first[0]).tolist()",
                                   "global sum on every device": "np.asarray(first[1]).tolist()",
                                   "second call": as_lists.format("second"),
                                   "tracing messages printed over two calls": "printed.getvalue().count('Compiling')"})
    first, second = f(sharded, *extra), f(sharded, *extra)
    expected = seed_expectations(n)[example]
    if example == "scale_and_sum":
        case.equal("scaled data", np.asarray(first[0]).tolist(), expected[0])
        case.equal("global sum on every device", np.asarray(first[1]).tolist(), expected[1])
    else:
        case.equal("output", np.asarray(first).tolist(), expected)
    case.equal("second call", spmd.tree_map(lambda a: np.asarray(a).tolist(), second),
               spmd.tree_map(lambda a: np.asarray(a).tolist(), first))
    case.equal("tracing messages printed over two calls", capsys.readouterr().out.count("Compiling"), 1)


@compat.requires("set_mesh")
@bridge.needs_devices(2, "for a mesh of two devices")
def test_pmap_inside_a_set_mesh_context():
    """pmap works inside a `with jax.set_mesh(mesh):` block as outside it (set_mesh governs jit's
    sharding in context; pmap names its own devices)."""
    mesh = MeshModel(DEVICES[:2], (2,), ("x",))
    x = np.arange(4, dtype=np.int32).reshape(2, 2)

    def run():
        with compat.feature("set_mesh")(bridge.jax_mesh(mesh)):
            return jax.pmap(lambda a: a + 1)(x)
    case = scripted_case("with jax.set_mesh(mesh): jax.pmap(lambda a: a + 1)(x)",
                         ["def run():", "    with jax.set_mesh(mesh):", "        return jax.pmap(lambda a: a + 1)(x)"],
                         meshes={"mesh": mesh}, arrays={"x": x},
                         outcomes={"pmap inside set_mesh": "run()", "pmap result": "np.asarray(run())"})
    case.same_bits("pmap result", np.asarray(case.accepts("pmap inside set_mesh", run)), x + 1)
