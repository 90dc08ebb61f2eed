"""The smallest reproductions of what the generated programs (``test_programs.py``) found that the
single-operation catalogue does not, one deterministic test each; ``known_deviations.toml`` lists
the versions each one fails on."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conformance.checking.layouts import check_layout
from conformance.checking.repro import check_in_a_subprocess, scripted_case, spec_literal
from conformance.jaxside import bridge
from conformance.model.layout import Layout
from suites.test_sharding_invariance_reproductions import explicit_accepts, explicit_only

pytestmark = pytest.mark.programs


@bridge.needs_devices(2, "to split over two devices")
def test_the_second_of_two_constraints_in_a_row_applies():
    """jit(lambda x: with_sharding_constraint(with_sharding_constraint(jnp.flip(x), P('a')), P()))
    returns flip(x) replicated, as the last constraint asks (found by the generated-program soak on
    JAX 0.4.38, with -x)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.arange(4, dtype=np.uint32)
    source = ("jax.jit(lambda x: jax.lax.with_sharding_constraint(jax.lax.with_sharding_constraint("
              "jnp.flip(x), NamedSharding(mesh, P('a'))), NamedSharding(mesh, P())))")
    case = scripted_case(f"{source}(x on P())", [f"y = {source}(x)", "print(y.sharding)"],
                         meshes={"mesh": mesh}, placed={"x": (x, ())}, outcomes={"result": "y"})
    constrain = jax.lax.with_sharding_constraint
    y = jax.jit(lambda a: constrain(constrain(jnp.flip(a), bridge.named_sharding(mesh, ("a",))),
                                    bridge.named_sharding(mesh, ())))(
        bridge.placed(x, bridge.named_sharding(mesh, ())))
    check_layout(case, y, Layout(mesh, (), x.shape), x[::-1], what="result")


@bridge.needs_devices(8, "for a (1, 4, 2) mesh")
def test_strided_at_min_after_a_constraint_with_a_replicated_output():
    """jit(f, in_shardings=P(), out_shardings=P()) of f(x, u) = with_sharding_constraint(jnp.abs(x),
    P('b')).at[-1::2].min(u) on a (1, 4, 2) mesh ('a', 'b', 'x'), x = [1, 0, 1, 1, 1, 1, 1, 1] and
    u = [0] (uint32), is [1, 0, 1, 1, 1, 1, 1, 0], as numpy (found by a random program draw on 0.10.2)."""
    mesh = bridge.first_devices_mesh(("a", 1), ("b", 4), ("x", 2))
    x = np.array([1, 0, 1, 1, 1, 1, 1, 1], np.uint32)
    u = np.zeros((1,), np.uint32)
    source = ("jax.jit(lambda x, u: jax.lax.with_sharding_constraint(jnp.abs(x), NamedSharding(mesh, P('b')))"
              ".at[-1::2].min(u), in_shardings=(replicated, replicated), out_shardings=replicated)")
    case = scripted_case(f"{source}(x, u)", ["replicated = NamedSharding(mesh, P())", f"y = {source}(x, u)",
                                             "print(np.asarray(y))"], meshes={"mesh": mesh}, arrays={"x": x, "u": u},
                         outcomes={"result": "np.asarray(y)"})
    replicated = bridge.named_sharding(mesh, ())
    f = jax.jit(lambda a, b: jax.lax.with_sharding_constraint(jnp.abs(a), bridge.named_sharding(mesh, ("b",)))
                .at[-1::2].min(b), in_shardings=(replicated, replicated), out_shardings=replicated)
    y = f(bridge.placed(x, replicated), bridge.placed(u, replicated))
    expected = x.copy()
    expected[-1::2] = np.minimum(expected[-1::2], u)
    case.same_bits("result", np.asarray(y), expected)


@bridge.needs_devices(2, "to split over two devices")
def test_an_at_set_of_a_transposed_replicated_value_into_a_split_output():
    """jax.jit(lambda x: with_sharding_constraint(x, P()).T.at[0].set(7), out_shardings=P('a')) of x
    uint32[2, 4] (10, 20, ..., 80) split P('a') over two devices returns numpy's x.T with row 0 set to
    7 (found by a random program on 0.6.2, the replay of seed 1852810764, as -(swapaxes(constrain(v,
    P()), 0, -1).at[x5].add(x6)) into P('a'))."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = (10 * np.arange(1, 9, dtype=np.uint32)).reshape(2, 4)
    source = ("jax.jit(lambda x: jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P())).T.at[0].set(7), "
              "out_shardings=NamedSharding(mesh, P('a')))")
    case = scripted_case(f"{source}(x on P('a'))", [f"y = {source}(x)", "print(np.asarray(y))"],
                         meshes={"mesh": mesh}, placed={"x": (x, ("a",))}, outcomes={"result": "np.asarray(y)"})
    f = jax.jit(lambda a: jax.lax.with_sharding_constraint(a, bridge.named_sharding(mesh, ())).T.at[0].set(7),
                out_shardings=bridge.named_sharding(mesh, ("a",)))
    y = f(bridge.placed(x, bridge.named_sharding(mesh, ("a",))))
    expected = x.T.copy()
    expected[0] = 7
    case.same_bits("result", np.asarray(y), expected)


@bridge.needs_devices(2, "to split over two devices")
def test_an_at_add_of_one_row_after_a_constraint_cutting_a_replicated_value():
    """jax.jit(lambda x: with_sharding_constraint(x, P('a')).at[jnp.array([0])].add(u), out_shardings=P())
    of a replicated x uint32[4, 2] (10, 20, ..., 80) and u = [[1, 2]] on two devices returns numpy's
    x with row 0 raised by u (found by a random program on 0.6.2, seed 1852810764's replay, as
    .at[x5].add(x6) of a value constrained from P() to P('a'))."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = (10 * np.arange(1, 9, dtype=np.uint32)).reshape(4, 2)
    u = np.array([[1, 2]], np.uint32)
    source = ("jax.jit(lambda x, u: jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P('a')))"
              ".at[jnp.array([0])].add(u), out_shardings=NamedSharding(mesh, P()))")
    case = scripted_case(f"{source}(x on P(), u)", [f"y = {source}(x, u)", "print(np.asarray(y))"],
                         meshes={"mesh": mesh}, placed={"x": (x, ())}, arrays={"u": u},
                         outcomes={"result": "np.asarray(y)"})
    f = jax.jit(lambda a, b: jax.lax.with_sharding_constraint(a, bridge.named_sharding(mesh, ("a",)))
                .at[jnp.array([0])].add(b), out_shardings=bridge.named_sharding(mesh, ()))
    y = f(bridge.placed(x, bridge.named_sharding(mesh, ())), u)
    expected = x.copy()
    expected[0] += u[0]
    case.same_bits("result", np.asarray(y), expected)


@bridge.needs_devices(2, "to split over two devices")
def test_a_shifted_set_of_one_element_after_a_constraint_cutting_a_replicated_vector():
    """jax.jit(lambda x: (lambda v: v.at[0:1].set(v[5:6]))(with_sharding_constraint(x, P('a'))),
    out_shardings=P()) of a replicated x = [1, ..., 6] (float32) on two devices returns numpy's
    [6, 2, 3, 4, 5, 6] (found by a random program in the release matrix on 0.4.30, 2026-12-07, as
    .at[0:1].set(v[5:6]) of v uint32[6, 2] constrained from P() to P('a'))."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.arange(1, 7, dtype=np.float32)
    source = ("jax.jit(lambda x: (lambda v: v.at[0:1].set(v[5:6]))(jax.lax.with_sharding_constraint(x, "
              "NamedSharding(mesh, P('a')))), out_shardings=NamedSharding(mesh, P()))")
    case = scripted_case(f"{source}(x on P())", [f"y = {source}(x)", "print(np.asarray(y))"],
                         meshes={"mesh": mesh}, placed={"x": (x, ())}, outcomes={"result": "np.asarray(y)"})
    f = jax.jit(lambda a: (lambda v: v.at[0:1].set(v[5:6]))(
        jax.lax.with_sharding_constraint(a, bridge.named_sharding(mesh, ("a",)))),
        out_shardings=bridge.named_sharding(mesh, ()))
    y = f(bridge.placed(x, bridge.named_sharding(mesh, ())))
    expected = x.copy()
    expected[0] = x[5]
    case.same_bits("result", np.asarray(y), expected)


@bridge.needs_devices(2, "to split over two devices")
def test_an_at_set_of_an_edge_pad_of_a_split_vector():
    """jax.jit(lambda x: jnp.pad(x, (0, 2), mode='edge').at[0].set(7), out_shardings=P()) of x = [0, 1]
    (uint32) split P('a') over two devices returns numpy's [7, 1, 1, 1] (found by a random program on
    0.10.2 in CI, as .at[0:1].set(v[5:6]) of an edge pad of a vector split three ways)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.arange(2, dtype=np.uint32)
    source = ("jax.jit(lambda x: jnp.pad(x, (0, 2), mode='edge').at[0].set(7), "
              "out_shardings=NamedSharding(mesh, P()))")
    case = scripted_case(f"{source}(x on P('a'))", [f"y = {source}(x)", "print(np.asarray(y))"],
                         meshes={"mesh": mesh}, placed={"x": (x, ("a",))}, outcomes={"result": "np.asarray(y)"})
    f = jax.jit(lambda a: jnp.pad(a, (0, 2), mode="edge").at[0].set(7), out_shardings=bridge.named_sharding(mesh, ()))
    y = f(bridge.placed(x, bridge.named_sharding(mesh, ("a",))))
    expected = np.pad(x, (0, 2), mode="edge")
    expected[0] = 7
    case.same_bits("result", np.asarray(y), expected)


@bridge.needs_devices(8, "for a (2, 4) mesh")
def test_a_strided_at_max_of_a_slice_of_a_partially_replicated_operand():
    """jax.jit(lambda x: (lambda v: v.at[::2].max(v))(x[0:1]), in_shardings=P('a'), out_shardings=P())
    of x = [0, 1] (uint32) on a (2, 4) mesh ('a', 'b') returns numpy's [0]: the max of an element with
    itself (found by a random program on 0.6.1, seed 435230726, with two negations between the
    slice and the update)."""
    mesh = bridge.first_devices_mesh(("a", 2), ("b", 4))
    x = np.arange(2, dtype=np.uint32)
    source = ("jax.jit(lambda x: (lambda v: v.at[::2].max(v))(x[0:1]), in_shardings=NamedSharding(mesh, P('a')), "
              "out_shardings=NamedSharding(mesh, P()))")
    case = scripted_case(f"{source}(x)", [f"y = {source}(x)", "print(np.asarray(y))"], meshes={"mesh": mesh},
                         arrays={"x": x}, outcomes={"result": "np.asarray(y)"})
    f = jax.jit(lambda a: (lambda v: v.at[::2].max(v))(a[0:1]), in_shardings=bridge.named_sharding(mesh, ("a",)),
                out_shardings=bridge.named_sharding(mesh, ()))
    y = f(bridge.placed(x, bridge.named_sharding(mesh, ("a",))))
    case.same_bits("result", np.asarray(y), np.maximum(x[0:1], x[0:1]))


@bridge.needs_devices(2, "to split over two devices")
def test_a_strided_at_min_of_a_split_row_by_itself():
    """jax.jit(lambda x: x.at[::2].min(x), in_shardings=P(None, 'a'), out_shardings=P()) of x = [[0, 1]]
    (uint32) split over two devices returns numpy's x: the min of each element with itself (found by a
    random program on 0.4.33, seed 582396028, on a (2, 4) mesh)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.arange(2, dtype=np.uint32).reshape(1, 2)
    source = ("jax.jit(lambda x: x.at[::2].min(x), in_shardings=NamedSharding(mesh, P(None, 'a')), "
              "out_shardings=NamedSharding(mesh, P()))")
    case = scripted_case(f"{source}(x)", [f"y = {source}(x)", "print(np.asarray(y))"], meshes={"mesh": mesh},
                         arrays={"x": x}, outcomes={"result": "np.asarray(y)"})
    f = jax.jit(lambda a: a.at[::2].min(a), in_shardings=bridge.named_sharding(mesh, (None, "a")),
                out_shardings=bridge.named_sharding(mesh, ()))
    y = f(bridge.placed(x, bridge.named_sharding(mesh, (None, "a"))))
    case.same_bits("result", np.asarray(y), np.minimum(x, x))


def test_a_vmapped_update_of_each_example_by_itself():
    """jax.jit(jax.vmap(lambda v, i: lax.dynamic_update_slice(v, v, (i,)))) of a batch x uint32[2, 4]
    laid out P(None, 'a') over two devices, with a batch of starts [0, 0], returns x: each example
    updated by itself at 0 (found by the program contexts property on 0.4.31, seed 2707344947: vmap
    makes the update a scatter of the operand by itself)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x, starts = np.arange(8, dtype=np.uint32).reshape(2, 4), np.zeros(2, np.int32)
    source = ("jax.jit(jax.vmap(lambda v, i: lax.dynamic_update_slice(v, v, (i,))), "
              "in_shardings=(NamedSharding(mesh, P(None, 'a')), NamedSharding(mesh, P())))")
    case = scripted_case(f"{source}(x, starts)", [f"y = {source}(x, starts)", "print(np.asarray(y))"],
                         meshes={"mesh": mesh}, arrays={"x": x, "starts": starts}, outcomes={"result": "np.asarray(y)"})
    f = jax.jit(jax.vmap(lambda v, i: jax.lax.dynamic_update_slice(v, v, (i,))),
                in_shardings=(bridge.named_sharding(mesh, (None, "a")), bridge.named_sharding(mesh, ())))
    case.same_bits("result", np.asarray(f(x, starts)), x)


@bridge.needs_devices(4, "for a (2, 2) mesh")
def test_a_vmapped_update_of_each_example_by_itself_over_two_axes(run_isolated):
    """jax.jit(jax.vmap(lambda v, i, j: lax.dynamic_update_slice(v, v, (i, j)))) of a batch x
    uint32[2, 2, 2] laid out P('y', 'a') on a (2, 2) mesh ('a', 'y'), with a batch of starts, returns
    x; run in a subprocess because XLA aborts the process on it (found by the program contexts
    property on 0.4.31, seed 2707344947: the process died)."""
    ids = list(bridge.live_device_ids()[:4])
    lines = [f"mesh = Mesh(np.array([devices[i] for i in {ids}]).reshape((2, 2)), ('a', 'y'))",
             "x = np.arange(8, dtype=np.uint32).reshape(2, 2, 2)",
             "starts = np.zeros(2, np.int32)",
             "f = jax.jit(jax.vmap(lambda v, i, j: lax.dynamic_update_slice(v, v, (i, j))), "
             "in_shardings=(NamedSharding(mesh, P('y', 'a')), NamedSharding(mesh, P()), NamedSharding(mesh, P())))",
             "y = np.asarray(f(x, starts, starts))",
             "print(y.tolist() == x.tolist(), '# should be True')"]
    check_in_a_subprocess("jit(vmap(update of each example by itself)) over two mesh axes", lines, run_isolated,
                          printed="True # should be True", what="result equals x")


def jitted_in_a_subprocess_lines(mesh_shape, axis_names: str, x: str, jitted: str, in_spec: str, expected: str) -> list:
    """Script lines for a fresh interpreter: a mesh of the first devices shaped ``mesh_shape`` with
    ``axis_names``, ``x`` (an expression) put on ``in_spec``, the ``jitted`` function's result of it,
    and whether it equals ``expected`` (an expression of x), printed as "True # should be True"."""
    ids = list(bridge.live_device_ids()[:int(np.prod(mesh_shape))])
    return [f"mesh = Mesh(np.array([devices[i] for i in {ids}]).reshape({mesh_shape}), {axis_names})",
            f"x = {x}",
            f"f = {jitted}",
            f"y = np.asarray(f(jax.device_put(x, NamedSharding(mesh, {in_spec}))))",
            f"print(y.tolist() == ({expected}).tolist(), '# should be True')"]


@bridge.needs_devices(6, "for a (3, 2) mesh")
def test_constraint_onto_two_combined_axes_after_a_split_input(run_isolated):
    """jit(lambda a: with_sharding_constraint(-a, P(None, ('b', 'x'))), in_shardings=P('b'),
    out_shardings=P()) of a uint32[6, 6] on a (3, 2) mesh ('b', 'x') returns -a; run in a subprocess
    because XLA's SPMD partitioner aborts the process on it (found by a random program on 0.12.0.1
    in the second release matrix pass: the worker died)."""
    lines = jitted_in_a_subprocess_lines(
        (3, 2), "('b', 'x')", "np.arange(36, dtype=np.uint32).reshape(6, 6)",
        "jax.jit(lambda a: lax.with_sharding_constraint(-a, NamedSharding(mesh, P(None, ('b', 'x')))), "
        "in_shardings=NamedSharding(mesh, P('b')), out_shardings=NamedSharding(mesh, P()))", "P('b')", "-x")
    check_in_a_subprocess("jit(constraint onto ('b', 'x') of a value split over 'b', replicated output)", lines,
                     run_isolated, printed="True # should be True", what="result equals -x")


def test_a_shift_of_a_cumsum_under_plain_jit_copies_the_values_before_the_shift():
    """jax.jit(lambda x: (lambda v: v.at[1:4].set(v[0:3]))(jnp.cumsum(-x))) of x = arange(4)
    (uint32, no sharding) gives numpy's [0, 0, 2**32 - 1, 2**32 - 3]: the update reads v's values
    from before the update (found by a random program on 0.12.0.1; XLA:CPU's in-place
    dynamic-update-slice fusion, openxla/xla#49176)."""
    x = np.arange(4, dtype=np.uint32)
    source = "jax.jit(lambda x: (lambda v: v.at[1:4].set(v[0:3]))(jnp.cumsum(-x)))"
    case = scripted_case(f"{source}(x)", [f"y = {source}(x)", "print(np.asarray(y))"], arrays={"x": x},
                         outcomes={"result": "np.asarray(y)"})
    y = jax.jit(lambda a: (lambda v: v.at[1:4].set(v[0:3]))(jnp.cumsum(-a)))(x)
    v = np.cumsum(-x, dtype=np.uint32)
    expected = v.copy()
    expected[1:4] = v[0:3]
    case.same_bits("result", np.asarray(y), expected)


def test_a_strided_at_max_of_a_clamped_dynamic_slice_under_plain_jit():
    """jax.jit(lambda x, s, u: lax.dynamic_slice(x, (s,), (2,)).at[::2].max(u)) of x = [0, 1, 2],
    s = -1 (counted from the end: 2, clamped to 1) and u = [0] (uint32, no sharding) gives numpy's
    [1, 2]: the update reads the clamped window (found by a random program on 0.11.0, seed
    879519627; XLA's algebraic simplifier folds the update's read of the slice into one
    dynamic-slice clamped with the wrong size, openxla/xla#49121)."""
    x, u = np.arange(3, dtype=np.uint32), np.zeros((1,), np.uint32)
    source = "jax.jit(lambda x, s, u: lax.dynamic_slice(x, (s,), (2,)).at[::2].max(u))"
    case = scripted_case(f"{source}(x, -1, u)", [f"y = {source}(x, np.int32(-1), u)", "print(np.asarray(y))"],
                         arrays={"x": x, "u": u}, outcomes={"result": "np.asarray(y)"})
    y = jax.jit(lambda a, s, b: jax.lax.dynamic_slice(a, (s,), (2,)).at[::2].max(b))(x, np.int32(-1), u)
    expected = x[1:3].copy()
    expected[::2] = np.maximum(expected[::2], u)
    case.same_bits("result", np.asarray(y), expected)


def test_a_take_of_a_clamped_dynamic_slice_under_plain_jit():
    """jax.jit(lambda x, s: jnp.take(lax.dynamic_slice(x, (s,), (2,)), [0])) of x = arange(4) (uint32,
    no sharding) and s = -1 (counted from the end: 3, clamped to 2) gives numpy's [2]: the gather reads
    the clamped window (found by a random program on 0.8.3 in the eleventh matrix pass, seed
    1545607637, as v[::2] of such a slice, which jnp took through gather under jit before 0.9.1; XLA's
    algebraic simplifier folds the gather into one dynamic-slice clamped with the wrong size,
    openxla/xla#49121)."""
    x = np.arange(4, dtype=np.uint32)
    source = "jax.jit(lambda x, s: jnp.take(lax.dynamic_slice(x, (s,), (2,)), np.array([0])))"
    case = scripted_case(f"{source}(x, -1)", [f"y = {source}(x, np.int32(-1))", "print(np.asarray(y))"],
                         arrays={"x": x}, outcomes={"result": "np.asarray(y)"})
    y = jax.jit(lambda a, s: jnp.take(jax.lax.dynamic_slice(a, (s,), (2,)), np.array([0])))(x, np.int32(-1))
    case.same_bits("result", np.asarray(y), x[2:3])


@bridge.needs_devices(8, "for an (a=4, b=2) mesh")
def test_a_stack_of_a_clamped_dynamic_slice_into_a_cut_output():
    """jax.jit(lambda x, s: constrain(jnp.stack((v, v, v)), P()) for v = lax.dynamic_slice(x, (s,),
    (2,)), in_shardings=(P('a'), P()), out_shardings=P(None, 'b')) of x = arange(4) (uint32) and s = -1
    (3, clamped to 2) on an (a=4, b=2) mesh returns three rows [2, 3]: the output cuts the slice's
    dimension, and each shard must still read the clamped window (found by a random program on 0.8.3
    in the eleventh matrix pass, seed 1545607637; the dynamic_slice_clamp fold, openxla/xla#49121)."""
    mesh = bridge.first_devices_mesh(("a", 4), ("b", 2))
    x = np.arange(4, dtype=np.uint32)
    source = ("jax.jit(lambda x, s: (lambda v: jax.lax.with_sharding_constraint(jnp.stack((v, v, v)), "
              "NamedSharding(mesh, P())))(lax.dynamic_slice(x, (s,), (2,))), "
              "in_shardings=(NamedSharding(mesh, P('a')), NamedSharding(mesh, P())), "
              "out_shardings=NamedSharding(mesh, P(None, 'b')))")
    case = scripted_case(f"{source}(x, -1)", [f"y = {source}(x, np.int32(-1))", "print(np.asarray(y))"],
                         meshes={"mesh": mesh}, arrays={"x": x}, outcomes={"result": "np.asarray(y)"})
    replicated = bridge.named_sharding(mesh, ())
    f = jax.jit(lambda a, s: (lambda v: jax.lax.with_sharding_constraint(jnp.stack((v, v, v)), replicated))(
        jax.lax.dynamic_slice(a, (s,), (2,))), in_shardings=(bridge.named_sharding(mesh, ("a",)), replicated),
        out_shardings=bridge.named_sharding(mesh, (None, "b")))
    y = case.accepts("jit", lambda: f(bridge.jit_argument(x, bridge.named_sharding(mesh, ("a",))), np.int32(-1)))
    case.same_bits("result", np.asarray(y), np.stack([x[2:4]] * 3))


def test_a_bfloat16_einsum_summing_in_float32_runs():
    """jax.jit(lambda a, b: jnp.einsum('bsh,vh->bsv', a, b, preferred_element_type=jnp.float32)) of
    bfloat16 a[1, 4, 4] and b[4, 4] (no sharding) returns numpy's float32 einsum of the same values
    (small integers: exact in bfloat16 and in the float32 sum; found by the transformer block of
    test_model_programs in bfloat16 on 0.7.1, the dot of its logits)."""
    a = np.arange(16, dtype=np.float32).reshape(1, 4, 4) % 5
    b = np.arange(16, dtype=np.float32).reshape(4, 4) % 3
    source = "jax.jit(lambda a, b: jnp.einsum('bsh,vh->bsv', a, b, preferred_element_type=jnp.float32))"
    case = scripted_case(f"{source}(a, b), a bfloat16[1, 4, 4], b bfloat16[4, 4]",
                         ["a, b = a.astype(jnp.bfloat16), b.astype(jnp.bfloat16)", f"y = {source}(a, b)",
                          "print(np.asarray(y))"], arrays={"a": a, "b": b},
                         outcomes={"jit": f"{source}(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16))",
                                   "result": "np.asarray(y)"})
    f = jax.jit(lambda x, y: jnp.einsum("bsh,vh->bsv", x, y, preferred_element_type=jnp.float32))
    got = case.accepts("jit", lambda: f(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16)))
    case.same_bits("result", np.asarray(got), np.einsum("bsh,vh->bsv", a, b))


@bridge.needs_devices(2, "to cut the output over two devices")
def test_a_second_at_min_after_a_strided_one_on_a_constrained_value():
    """jit(lambda x, u, w: with_sharding_constraint(-x, P()).at[::2].min(u).at[0:1:2].min(w),
    out_shardings=P('a')) of x = arange(8) as uint32[4, 2], u = arange(4) as [2, 2], w = [[0, 1]]
    on two devices returns numpy's values (found by a random program on 0.4.35, seed 1653263232;
    measured on 0.10.2: right with one update alone, with no constraint, or with a replicated output)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.arange(8, dtype=np.uint32).reshape(4, 2)
    u, w = np.arange(4, dtype=np.uint32).reshape(2, 2), np.arange(2, dtype=np.uint32).reshape(1, 2)
    source = ("jax.jit(lambda x, u, w: jax.lax.with_sharding_constraint(-x, NamedSharding(mesh, P()))"
              ".at[::2].min(u).at[0:1:2].min(w), out_shardings=NamedSharding(mesh, P('a')))")
    case = scripted_case(f"{source}(x, u, w)", [f"y = {source}(x, u, w)", "print(np.asarray(y))"],
                         meshes={"mesh": mesh}, arrays={"x": x, "u": u, "w": w}, outcomes={"result": "np.asarray(y)"})
    f = jax.jit(lambda a, b, c: jax.lax.with_sharding_constraint(-a, bridge.named_sharding(mesh, ()))
                .at[::2].min(b).at[0:1:2].min(c), out_shardings=bridge.named_sharding(mesh, ("a",)))
    expected = -x
    expected[::2] = np.minimum(expected[::2], u)
    expected[0:1:2] = np.minimum(expected[0:1:2], w)
    case.same_bits("result", np.asarray(f(x, u, w)), expected)


def two_results_of_a_split_vector(first: str, second: str, x: np.ndarray, devices: int = 2):
    """``(case, mesh, y)``: y = jit(lambda x: (constrain(<first>, P()), constrain(<second>, P()))) of
    ``x`` constrained P('a') over two devices (or ``devices``; ``first`` and ``second``: expressions
    of x), with the case that names the call and its checks "first result" and "second result"."""
    mesh = bridge.first_devices_mesh(("a", devices))
    source = (f"jax.jit(lambda x: (lambda x: (c({first}, NamedSharding(mesh, P())), "
              f"c({second}, NamedSharding(mesh, P()))))"
              "(c(x, NamedSharding(mesh, P('a')))))")
    case = scripted_case(f"{source}(x on P('a')), c = jax.lax.with_sharding_constraint",
                         ["c = jax.lax.with_sharding_constraint", f"y = {source}(x)", "print(y)"],
                         meshes={"mesh": mesh}, placed={"x": (x, ("a",))},
                         outcomes={"jit": f"{source}(x)", "first result": "y[0]", "second result": "y[1]"})
    c = jax.lax.with_sharding_constraint
    replicated, split = bridge.named_sharding(mesh, ()), bridge.named_sharding(mesh, ("a",))
    parts = [bridge.function_of(f"lambda x: {e}") for e in (first, second)]
    f = jax.jit(lambda a: (lambda a: tuple(c(part(a), replicated) for part in parts))(c(a, split)))
    return case, mesh, case.accepts("jit", lambda: f(bridge.placed(x, split)))


@bridge.needs_devices(2, "to split over two devices")
def test_the_sum_of_a_scatter_returned_beside_a_prefix_slice_of_its_operand():
    """jit(lambda x: (constrain(x[0:3], P()), constrain(jnp.sum(x.at[0:2].set(7)), P()))) of x
    float32[4] constrained P('a') over two devices returns ([0, 1, 2], 19): a slice as long, per
    shard, as its operand, returned beside a scatter of the operand (found by a random program draw
    on 0.6.1, seed 435230726, as a sum of the negated x0.at[0:2].set(x0[1:3]) of x0 uint32[3] P('a')
    on a (3, 2) mesh, returned beside x0[:-1])."""
    x = np.arange(4, dtype=np.float32)
    case, _, y = two_results_of_a_split_vector("x[0:3]", "jnp.sum(x.at[0:2].set(7.0))", x)
    case.same_bits("first result", np.asarray(y[0]), x[0:3])
    case.same_bits("second result", np.asarray(y[1]), np.float32(19.0))


@bridge.needs_devices(4, "to split over four devices")
def test_a_cumsum_returned_beside_a_longer_prefix_slice_of_its_operand():
    """jit(lambda x: (constrain(x[0:2], P()), constrain(jnp.cumsum(x), P()))) of x = [3, 10, 6, 2]
    (uint32) constrained P('a') over four devices returns ([3, 10], [3, 13, 19, 21]): the values
    form of a scan beside a prefix slice of its operand as long per shard, one that does not abort (the
    tenth matrix pass's 0.10.1 finding, seed 2686075859, aborted with a slice of one shard:
    test_a_cumsum_returned_beside_a_prefix_slice_of_its_operand)."""
    x = np.array([3, 10, 6, 2], dtype=np.uint32)
    case, _, y = two_results_of_a_split_vector("x[0:2]", "jnp.cumsum(x)", x, devices=4)
    case.same_bits("first result", np.asarray(y[0]), x[0:2])
    case.same_bits("second result", np.asarray(y[1]), np.cumsum(x, dtype=np.uint32))


@bridge.needs_devices(4, "to split over four devices")
def test_a_cumsum_jitted_into_out_shardings_beside_a_longer_prefix_slice_of_its_operand():
    """jax.jit(lambda x: (constrain(x[0:2], P()), jnp.cumsum(x)), in_shardings=P('a'), out_shardings=(P(),
    P())) of x = [3, 10, 6, 2] (uint32) over four devices returns ([3, 10], [3, 13, 19, 21]): the same
    scan and slice as test_a_cumsum_returned_beside_a_longer_prefix_slice_of_its_operand with the
    cumsum laid out by out_shardings, not a constraint (the property's way (b)), where XLA compiles it."""
    x = np.array([3, 10, 6, 2], dtype=np.uint32)
    check_the_second_result_comes_back_whole(4, "lambda x: (replicate(x[0:2]), jnp.cumsum(x))", {"x": (x, ("a",))},
                                             np.cumsum(x, dtype=np.uint32))


def check_the_second_result_comes_back_whole(devices: int, body: str, inputs: dict, expected: np.ndarray) -> None:
    """``f = jax.jit(<body>, in_shardings=<each input's spec>, out_shardings=(P(), P()))`` on a mesh
    ('a',) of ``devices`` devices, called on ``inputs`` (name -> (value, spec)); ``body`` is a lambda
    over the inputs that may call ``replicate`` (a sharding constraint onto P()): its second result has
    ``expected``'s shape and bits."""
    mesh = bridge.first_devices_mesh(("a", devices))
    names = ", ".join(inputs)
    in_specs = ", ".join(f"NamedSharding(mesh, {spec_literal(spec)})" for _, spec in inputs.values())
    case = scripted_case(f"jax.jit({body}, in_shardings=({in_specs},), out_shardings=(P(), P()))({names}), "
                         "replicate = a sharding constraint onto P()",
                         ["replicate = lambda v: jax.lax.with_sharding_constraint(v, NamedSharding(mesh, P()))",
                          f"f = jax.jit({body}, in_shardings=({in_specs},), "
                          "out_shardings=(NamedSharding(mesh, P()), NamedSharding(mesh, P())))",
                          f"y = f({names})", "print(y)"],
                         meshes={"mesh": mesh}, placed=dict(inputs),
                         outcomes={"jit": f"f({names})", "second result.shape": "y[1].shape", "second result": "y[1]"})
    replicated = bridge.named_sharding(mesh, ())
    shardings = tuple(bridge.named_sharding(mesh, spec) for _, spec in inputs.values())
    replicate = lambda v: jax.lax.with_sharding_constraint(v, replicated)
    f = jax.jit(bridge.function_of(f"lambda replicate: {body}")(replicate), in_shardings=shardings,
                out_shardings=(replicated, replicated))
    y = case.accepts("jit", lambda: f(*(bridge.placed(v, s) for (v, _), s in zip(inputs.values(), shardings))))
    case.equal("second result.shape", y[1].shape, expected.shape)
    case.same_bits("second result", np.asarray(y[1]), expected)


@bridge.needs_devices(2, "to split over two devices")
def test_a_value_returned_beside_a_constrained_prefix_slice_of_it():
    """jit(lambda x: (lambda y: (constrain(y[0:1], P()), y))(-x), in_shardings=P('a'),
    out_shardings=(P(), P())) of x uint32[2] over two devices returns ([0], -x): the value itself
    comes back whole beside its one-element slice (found by a random program draw on 0.6.1, seed
    435230726, on an (a=2, b=4) mesh)."""
    x = np.arange(2, dtype=np.uint32)
    check_the_second_result_comes_back_whole(2, "lambda x: (lambda y: (replicate(y[0:1]), y))(-x)",
                                             {"x": (x, ("a",))}, -x)


@bridge.needs_devices(4, "to split over four devices")
def test_a_shifted_update_returned_beside_a_prefix_slice_of_its_operand():
    """jit(lambda x: (constrain(x[:-1], P()), x.at[0:3].set(x[1:4])), in_shardings=P('a'),
    out_shardings=(P(), P())) of x uint32[4] over four devices returns (x[:3], the update) with the
    update whole (found by a random program draw on 0.6.1, seed 435230726, on an (a=4, b=2) mesh)."""
    x = np.array([5, 7, 9, 11], np.uint32)
    check_the_second_result_comes_back_whole(4, "lambda x: (replicate(x[:-1]), x.at[0:3].set(x[1:4]))",
                                             {"x": (x, ("a",))}, np.concatenate((x[1:4], x[3:])))


def check_returned_beside_a_prefix_slice_of_a_join(second: str) -> None:
    """jit(lambda x, z: (constrain(jnp.concatenate((x, z))[0:1], P()), <second>), in_shardings=(P('a'),
    P()), out_shardings=(P(), P())) of x = [5, 7] uint32 over two devices and z = [9]: the second result
    (``second``: an expression of x equal to x) comes back whole, as x."""
    x, z = np.array([5, 7], np.uint32), np.array([9], np.uint32)
    check_the_second_result_comes_back_whole(2, f"lambda x, z: (replicate(jnp.concatenate((x, z))[0:1]), {second})",
                                             {"x": (x, ("a",)), "z": (z, ())}, x)


@bridge.needs_devices(2, "to split over two devices")
def test_an_identity_update_returned_beside_a_prefix_slice_of_a_join_leading_with_its_operand():
    """jit(lambda x, z: (constrain(jnp.concatenate((x, z))[0:1], P()), x.at[0:2].set(x[0:2])),
    in_shardings=(P('a'), P()), out_shardings=(P(), P())) of x uint32[2] over two devices and z
    uint32[1] returns (x[0:1], x): the update of x by its own elements comes back whole beside the
    slice (found by a random program draw on 0.6.1, seed 435230726, on an (a=2, b=4) mesh)."""
    check_returned_beside_a_prefix_slice_of_a_join("x.at[0:2].set(x[0:2])")


@bridge.needs_devices(2, "to split over two devices")
def test_an_input_returned_beside_a_prefix_slice_of_a_join_leading_with_it():
    """jit(lambda x, z: (constrain(jnp.concatenate((x, z))[0:1], P()), x), in_shardings=(P('a'), P()),
    out_shardings=(P(), P())) of x uint32[2] over two devices and z uint32[1] returns (x[0:1], x): the
    input comes back whole beside the slice (met reducing the identity-update form of 0.6.1's seed
    435230726 by hand)."""
    check_returned_beside_a_prefix_slice_of_a_join("x")


@bridge.needs_devices(2, "to split over two devices")
def test_a_one_element_slice_of_a_split_vector_returned_beside_it():
    """jit(lambda x: (constrain(-x, P()), constrain(x[0:1], P()))) of x uint32[2] constrained P('a')
    over two devices returns (-x, x[0:1]) replicated: a slice smaller than the shard count, returned
    beside another use of its operand (found by a random program draw on 0.10.2, seed 2060031791)."""
    x = np.arange(2, dtype=np.uint32)
    case, mesh, y = two_results_of_a_split_vector("-x", "x[0:1]", x)
    case.same_bits("first result", np.asarray(y[0]), -x)
    case.same_bits("second result", np.asarray(y[1]), x[0:1])
    for name, got, expected in (("first", y[0], -x), ("second", y[1], x[0:1])):
        check_layout(case, got, Layout(mesh, (), expected.shape), expected, what=f"{name} result")


@explicit_only
@bridge.needs_devices(2, "to split over two devices")
def test_an_edge_pad_of_a_split_vector_put_replicated_inside_a_jit():
    """On an Explicit mesh, jax.jit(lambda v: jnp.pad(jax.device_put(v, P()), ((1, 0),), mode='edge'),
    out_shardings=P()) of x = [0, 1] (uint32) split P('a') over two devices returns numpy's [0, 0, 1]
    replicated (found by a random program on 0.12.0.1 in CI: an edge pad of a device_put of a vector
    split one element per device on an (a=2, b=4) mesh)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.arange(2, dtype=np.uint32)
    explicit_accepts("an edge pad of a split vector put replicated, jitted", mesh, {"x": (x, ("a",))},
                     "jax.jit(lambda v: jnp.pad(jax.device_put(v, NamedSharding(mesh, P())), ((1, 0),), mode='edge'), "
                     "out_shardings=NamedSharding(mesh, P()))(x)", np.pad(x, ((1, 0),), mode="edge"), ())


@bridge.needs_devices(4, "for a (2, 2) mesh")
def test_a_tril_of_a_shifted_update_of_columns_cut_over_two_axes_into_rows_cut_over_the_major_one():
    """jax.jit(lambda x: jnp.tril(x.at[:, 1:].set(x[:, :3]), -2), out_shardings=P('a')) of x uint32[2, 4]
    P(None, ('a', 'b')) on a (b=2, a=2) mesh returns numpy's value (found by a random program on 0.12.0.1,
    replaying CI's seed 2676004163: the same update of x[2, 4, 8] P(None, None, ('a', 'b')) on a (b=2, y=1,
    a=4) mesh, a tril and a device_put, into P(None, 'a', 'y'))."""
    mesh = bridge.first_devices_mesh(("b", 2), ("a", 2))
    x = np.arange(8, dtype=np.uint32).reshape(2, 4)
    source = "jax.jit(lambda x: jnp.tril(x.at[:, 1:].set(x[:, :3]), -2), out_shardings=NamedSharding(mesh, P('a')))"
    case = scripted_case(f"{source}(x on P(None, ('a', 'b')))", [f"y = {source}(x)", "print(np.asarray(y))"],
                         meshes={"mesh": mesh}, placed={"x": (x, (None, ("a", "b")))},
                         outcomes={"jit": f"{source}(x)", "result": "np.asarray(y)"})
    f = jax.jit(lambda a: jnp.tril(a.at[:, 1:].set(a[:, :3]), -2), out_shardings=bridge.named_sharding(mesh, ("a",)))
    y = case.accepts("jit", lambda: f(bridge.placed(x, bridge.named_sharding(mesh, (None, ("a", "b"))))))
    expected = x.copy()
    expected[:, 1:] = x[:, :3]
    case.same_bits("result", np.asarray(y), np.tril(expected, -2))


@bridge.needs_devices(4, "for a (2, 2) mesh")
def test_a_cumsum_of_a_shifted_update_of_columns_cut_over_two_axes_into_rows_cut_over_the_major_one(run_isolated):
    """jax.jit(lambda x: jnp.cumsum(x.at[:, 1:].set(x[:, :3]), axis=1), out_shardings=P('a')) of x
    uint32[2, 4] P(None, ('a', 'b')) on a (b=2, a=2) mesh returns numpy's value; run in a subprocess
    because XLA's SPMD partitioner aborts the process on it (met reducing the tril form of the 0.12.0.1
    replay of CI's seed 2676004163: the same update read by a cumsum)."""
    lines = jitted_in_a_subprocess_lines(
        (2, 2), "('b', 'a')", "np.arange(8, dtype=np.uint32).reshape(2, 4)",
        "jax.jit(lambda a: jnp.cumsum(a.at[:, 1:].set(a[:, :3]), axis=1), out_shardings=NamedSharding(mesh, P('a')))",
        "P(None, ('a', 'b'))", "np.cumsum(np.concatenate([x[:, :1], x[:, :3]], axis=1), axis=1, dtype=np.uint32)")
    check_in_a_subprocess("jit(cumsum of x.at[:, 1:].set(x[:, :3]), x over (None, ('a', 'b')), into P('a'))", lines,
                          run_isolated, printed="True # should be True", what="result equals numpy's")


@bridge.needs_devices(4, "for a mesh of four")
def test_a_cumsum_returned_beside_a_prefix_slice_of_its_operand(run_isolated):
    """jax.jit(lambda x: (constrain(x[:1], P()), jnp.cumsum(x)), out_shardings=(P(), P())) of x =
    arange(4) (uint32) put on P('a') over four devices returns ([0], [0, 1, 3, 6]); run in a
    subprocess because XLA's SPMD partitioner aborts the process on it (found by a random program on
    0.10.1 in the tenth release matrix pass, seed 2686075859: the slice's absolute value returned
    beside the cumsum, on an (a=4, b=2) mesh)."""
    ids = list(bridge.live_device_ids()[:4])
    lines = [f"mesh = Mesh(np.array([devices[i] for i in {ids}]), ('a',))",
             "replicated = NamedSharding(mesh, P())",
             "f = jax.jit(lambda x: (lax.with_sharding_constraint(x[:1], replicated), jnp.cumsum(x)), "
             "out_shardings=(replicated, replicated))",
             "y = f(jax.device_put(np.arange(4, dtype=np.uint32), NamedSharding(mesh, P('a'))))",
             "print([np.asarray(v).tolist() for v in y] == [[0], [0, 1, 3, 6]], '# should be True')"]
    check_in_a_subprocess("jit((constrain(x[:1], P()), cumsum(x))) of x = arange(4) over P('a') on four devices",
                          lines, run_isolated, printed="True # should be True", what="result equals numpy's",
                          shows="values")


@bridge.needs_devices(4, "for a (2, 2) mesh")
def test_a_concatenate_of_a_dynamic_slice_laid_out_replicated_with_itself(run_isolated):
    """jax.jit(lambda x, i: jnp.concatenate((wsc(v, P()), v)) for v = lax.dynamic_slice(x, (i,), (5,)),
    out_shardings=P('b')) of x = arange(8) (uint32) and i = 1 on a (b=2, x=2) mesh returns [1..5, 1..5];
    run in a subprocess because the program may never return (its kernels spin: the subprocess arms
    Python's faulthandler for 1 s once the program is compiled, which runs in microseconds; found by
    a random program on 0.11.0 in the seventh matrix pass, its (b) way hung)."""
    ids = list(bridge.live_device_ids()[:4])
    lines = [f"mesh = Mesh(np.array([devices[i] for i in {ids}]).reshape((2, 2)), ('b', 'x'))",
             "def f(x, i):",
             "    v = lax.dynamic_slice(x, (i,), (5,))",
             "    return jnp.concatenate((lax.with_sharding_constraint(v, NamedSharding(mesh, P())), v))",
             "x, i = np.arange(8, dtype=np.uint32), np.int32(1)",
             "compiled = jax.jit(f, out_shardings=NamedSharding(mesh, P('b'))).lower(x, i).compile()",
             "import faulthandler; faulthandler.dump_traceback_later(1, exit=True)  # (it never returns: ended)",
             "y = np.asarray(compiled(x, i))",
             "print(y.tolist() == np.concatenate([x[1:6], x[1:6]]).tolist(), '# should be True')"]
    check_in_a_subprocess("jit(concatenate((wsc(dynamic_slice(x, (i,), (5,)), P()), the same slice)), into P('b') "
                          "on a (b=2, x=2) mesh)", lines, run_isolated, printed="True # should be True",
                          what="result equals numpy's", shows="values")
