"""The smallest reproductions of what the sharding-invariance catalogue found
(``test_sharding_invariance.py``), one deterministic test each; ``known_deviations.toml`` lists the
versions each one fails on. Each states the rule the random property checks, for one case.
"""

import re
from dataclasses import dataclass, field
from typing import Mapping, Optional, Tuple, Union

import jax
import numpy as np
import pytest

from conformance.checking import verdict as verdicts
from conformance.checking.layouts import check_layout
from conformance.checking.repro import check_in_a_subprocess, scripted_case, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel, Spec

pytestmark = pytest.mark.sharding_invariance
explicit_only = compat.requires("explicit_sharding")


def explicit_namespace(mesh: MeshModel, arrays: dict):
    """The Explicit JAX mesh over ``mesh``, and the names an expression of the reproductions below
    evaluates in (what their scripts import, ``mesh``, and ``arrays`` = {name: (value, spec)}
    committed)."""
    jmesh = bridge.jax_mesh(mesh, "Explicit")
    namespace = {"jax": jax, "jnp": jax.numpy, "lax": jax.lax, "np": np, "mesh": jmesh,
                 "NamedSharding": jax.sharding.NamedSharding, "P": jax.sharding.PartitionSpec}
    namespace.update({name: bridge.placed(value, bridge.named_sharding(mesh, spec, "Explicit"))
                      for name, (value, spec) in arrays.items()})
    return jmesh, namespace


def returns_or_rejects_lines(expression: str, expected) -> list:
    """The verdict of ``explicit_outcome``'s rule: ``expression`` raises a ShardingTypeError, or
    returns numpy's ``expected`` exactly; exit 1 on any other exception or value."""
    names = sorted(e.__name__ for e in compat.SHARDING_TYPE_ERRORS)
    values = [line for line in verdicts.values_lines("got", expected) if line not in ("import sys", "got = got")]
    return ["import sys",
            "try:",
            f"    got = {expression}",
            "except Exception as e:",
            "    print('raised:', type(e).__name__, str(e)[:1000])",
            f"    print('expected: ShardingTypeError, or {np.asarray(expected).tolist()}')",
            f"    sys.exit(0 if type(e).__name__ in {names!r} else 1)",
            *values]


@dataclass(frozen=True)
class Modelled:
    """What a reproduction's expression calls, as our sharding-rule model reads it
    (``conformance/model/sharding_rules.py``): an operation of one of its families, the operands in
    the operation's order (a name of the reproduction's ``arrays``, or ``(value, spec)`` for an
    operand the expression writes as a literal) and its static arguments."""

    op: str
    family: str
    operands: Tuple[Union[str, Tuple[object, Spec]], ...]
    static: Mapping = field(default_factory=dict)

    def verdict(self, mesh: MeshModel, arrays: dict):
        """The model's verdict on this call, eager on an Explicit mesh over ``mesh``, by the rules
        of the installed release (``compat.sharding_rule_set``)."""
        from conformance.model import sharding_rules as rules
        placed = [arrays[o] if isinstance(o, str) else o for o in self.operands]
        return rules.sharding_verdict(self.op, self.family, [np.shape(x) for x, _ in placed], [s for _, s in placed],
                                      self.static, mesh, eager=True, rules=compat.sharding_rule_set())


def explicit_as_modelled(title: str, mesh: MeshModel, arrays: dict, expression: str, expected,
                         modelled: Modelled) -> None:
    """On an Explicit mesh over ``mesh`` (inside its mesh context), with ``arrays`` = {name: (value,
    spec)} committed, ``expression`` (the call ``modelled`` describes) does what our sharding-rule
    model says: where the model rejects the operand types, it raises a ShardingTypeError or returns
    numpy's ``expected``; elsewhere it returns numpy's ``expected``, laid out as the model's result
    spec where it states one (a refusal there is a failure)."""
    from conformance.model import sharding_rules as rules
    verdict = modelled.verdict(mesh, arrays)
    if isinstance(verdict, rules.Rejects):
        explicit_outcome(title, mesh, arrays, expression, expected, verdict.reason)
    elif isinstance(verdict, rules.Accepts):
        explicit_accepts(f"{title} (our sharding-rule model accepts it, typed {spec_literal(verdict.out_spec)})", mesh,
                         arrays, expression, expected, verdict.out_spec)
    else:
        explicit_accepts(f"{title} (our sharding-rule model has no rule for it: {verdict.reason})", mesh, arrays,
                         expression, expected)


def explicit_outcome(title: str, mesh: MeshModel, arrays: dict, expression: str, expected, rejected_for: str) -> None:
    """On an Explicit mesh over ``mesh`` (inside its mesh context), with ``arrays`` = {name: (value,
    spec)} committed, ``expression``, which our sharding-rule model rejects (``rejected_for``), is
    rejected with a ShardingTypeError or returns numpy's ``expected`` values: an ill-typed
    operation says so in the documented way."""
    case = scripted_case(f"{title}: {expression} (our sharding-rule model rejects it: {rejected_for})",
                         meshes={"mesh": mesh}, axis_type="Explicit",
                         placed=arrays, in_context=[f"call = lambda: {expression}"],
                         outcomes={expression: "np.asarray(call())"})
    jmesh, namespace = explicit_namespace(mesh, arrays)
    with compat.mesh_context(jmesh, "Explicit"):
        try:
            result = eval(expression, namespace)
        except compat.SHARDING_TYPE_ERRORS:
            return
        except Exception as e:  # noqa: BLE001 - the finding
            case.fail(f"{expression} raised {type(e).__name__}: {' '.join(str(e).split())[:300]}, "
                      f"but should return {expected.tolist()} or raise ShardingTypeError [{case.call}]",
                      check=expression, shows="raised", raised=type(e).__name__, raised_message=str(e),
                      verdict=case.verdict(expression, lambda e: returns_or_rejects_lines(e, expected)))
    case.close(expression, np.asarray(result), expected, rtol=0, atol=0)


def explicit_accepts(title: str, mesh: MeshModel, arrays: dict, expression: str, expected,
                     spec: Optional[Spec] = None) -> None:
    """On an Explicit mesh over ``mesh`` (inside its mesh context), with ``arrays`` = {name: (value,
    spec)} committed, ``expression`` is accepted and returns numpy's ``expected`` bit for bit and,
    when ``spec`` is given, laid out as ``spec`` says: a well-typed operation the model types."""
    case = scripted_case(f"{title}: {expression}", meshes={"mesh": mesh}, axis_type="Explicit",
                         placed=arrays, in_context=[f"call = lambda: {expression}"],
                         outcomes={expression: "call()"})
    jmesh, namespace = explicit_namespace(mesh, arrays)
    with compat.mesh_context(jmesh, "Explicit"):
        result = case.accepts(expression, lambda: eval(expression, namespace))
    case.same_bits(expression, np.asarray(result), expected)
    if spec is not None:
        check_layout(case, result, Layout(mesh, spec, expected.shape), what=expression)


# What JAX's Explicit-sharding doc says a refusal asks for: "we throw an error and require the user to
# provide an `out_sharding` argument" (the gather's "Use `.at[...].get(out_sharding=)`", the reshape's
# "via the `out_sharding` argument", "`sharding` argument" on 0.6.x)
ASKS_FOR_AN_OUT_SHARDING = re.compile(r"sharding[=`]")


def explicit_refuses(title: str, mesh: MeshModel, arrays: dict, expression: str, feature: Optional[str] = None,
                     refusal: re.Pattern = ASKS_FOR_AN_OUT_SHARDING) -> None:
    """On an Explicit mesh over ``mesh`` (inside its mesh context), with ``arrays`` = {name: (value,
    spec)} committed, ``expression`` raises a ShardingTypeError whose message asks for an output
    sharding (or matches ``refusal``): the refusal JAX's docs state (for a release without the
    compat ``feature``, where one is named; any other exception, and any value returned, is a
    failure)."""
    why = f"compat.{feature} is False: " if feature else ""
    case = scripted_case(f"{title}: {expression} ({why}JAX's docs state a refusal)",
                         meshes={"mesh": mesh}, axis_type="Explicit", placed=arrays,
                         in_context=[f"call = lambda: {expression}"], outcomes={expression: "call()"})
    jmesh, namespace = explicit_namespace(mesh, arrays)
    with compat.mesh_context(jmesh, "Explicit"):
        error = case.rejects(expression, lambda: eval(expression, namespace), compat.SHARDING_TYPE_ERRORS)
    if not refusal.search(str(error)):
        case.fail(
            f"{expression} raised {type(error).__name__}: {' '.join(str(error).split())[:300]}, but the "
            f"documented refusal "
            f"{'asks for an out_sharding' if refusal is ASKS_FOR_AN_OUT_SHARDING else 'says ' + repr(refusal.pattern)}"
            f" [{case.call}]", check=expression,
            shows="raised", raised=type(error).__name__, raised_message=str(error))


def explicit_accepts_since(feature: str, title: str, mesh: MeshModel, arrays: dict, expression: str, expected,
                           spec: Optional[Spec] = None, refusal: re.Pattern = ASKS_FOR_AN_OUT_SHARDING) -> None:
    """``explicit_accepts`` where the installed JAX has the rule change ``compat.<feature>``;
    before it, ``explicit_refuses`` (with ``refusal``): the refusal JAX's docs stated."""
    if getattr(compat, feature):
        explicit_accepts(title, mesh, arrays, expression, expected, spec)
    else:
        explicit_refuses(title, mesh, arrays, expression, feature, refusal)


MISSING_SCATTER_RULE = re.compile(r"^sharding rule for scatter(-add)? is not implemented")


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_broadcast_conflict_is_a_sharding_type_error():
    """jnp.where broadcasting x (2,1,1) and y (2,1), both sharded on 'a' along their first
    dimension, would put 'a' on two output dimensions: an ill-typed program, so ShardingTypeError
    (or a correct answer), not an internal error."""
    x, y = np.arange(2, dtype=np.int32).reshape(2, 1, 1), np.arange(2, dtype=np.int32).reshape(2, 1) + 5
    explicit_as_modelled("broadcast conflict", bridge.first_devices_mesh(("a", 2)),
                         {"x": (x, ("a",)), "y": (y, ("a",))}, "jnp.where(True, x, y)",
                         np.where(True, x, y), Modelled("where", "selection", ((np.True_, ()), "x", "y")))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_gather_conflict_is_a_sharding_type_error():
    """x[idx] with x (2,4) sharded on 'a' along dimension 1 and idx (2,) sharded on 'a' would put
    'a' on two output dimensions: ShardingTypeError (or a correct answer), not an internal error."""
    x, idx = np.arange(8, dtype=np.float32).reshape(2, 4), np.array([1, 0], np.int32)
    explicit_as_modelled("gather conflict", bridge.first_devices_mesh(("a", 2)),
                         {"x": (x, (None, "a")), "idx": (idx, ("a",))}, "x[idx]", x[idx],
                         Modelled("index_array", "gather", ("x", "idx")))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_scatter_update_conflict_is_a_sharding_type_error():
    """x.at[0:2].set(u) with x (4,) replicated and u (2,) sharded on 'a': the update's sharding
    differs from the target's, so ShardingTypeError (or a correct answer), not a ValueError."""
    x, u = np.arange(4, dtype=np.float32), np.array([7, 8], np.float32)
    expected = x.copy()
    expected[0:2] = u
    explicit_as_modelled("scatter update conflict", bridge.first_devices_mesh(("a", 2)),
                         {"x": (x, ()), "u": (u, ("a",))}, "x.at[0:2].set(u)", expected,
                         Modelled("at_set", "at", ("x", "u"), {"index": slice(0, 2)}))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_batched_matmul_with_one_operand_sharded_on_the_batch_dimension():
    """x @ y with x (2,3,2) replicated and y (2,2,1) sharded on 'a' along the batch dimension: the
    batch shardings differ, so ShardingTypeError (or a correct answer), not a ValueError. (Found by
    the catalogue's matmul entry in a 64-device run, over a size-1 axis; any axis size shows it.)"""
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    y = np.arange(4, dtype=np.float32).reshape(2, 2, 1)
    explicit_as_modelled("batched matmul, batch dimension sharded on one side", bridge.first_devices_mesh(("a", 2)),
                         {"x": (x, ()), "y": (y, ("a",))}, "x @ y", x @ y,
                         Modelled("matmul", "contraction", ("x", "y")))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_empty_slice_of_sharded_array():
    """x[0:0, :1] of x (2,4) sharded on 'a' along dimension 1 is an empty (0,1) array, or a
    ShardingTypeError as for the non-empty x[:, :1]; not a divisibility ValueError."""
    x = np.arange(8, dtype=np.int32).reshape(2, 4)
    explicit_as_modelled("empty slice", bridge.first_devices_mesh(("a", 2)), {"x": (x, (None, "a"))},
                         "x[0:0, :1]", x[0:0, :1],
                         Modelled("slice_empty", "slicing", ("x",), {"index": (slice(0, 0), slice(None, 1))}))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_at_update_of_a_range_its_dimension_split_does_not_divide():
    """x.at[0:1].set(u) of x = [1, 5] sharded P('a') on an Explicit mesh (a=2) and u = [4]
    replicated is [4, 5], or a ShardingTypeError (u is not sharded as x[0:1] would be); not a
    divisibility ValueError (found on 0.8.0 by the release matrix: .at[::2].max)."""
    x, u = np.array([1.0, 5.0], np.float32), np.array([4.0], np.float32)
    explicit_as_modelled("range update", bridge.first_devices_mesh(("a", 2)), {"x": (x, ("a",)), "u": (u, ())},
                         "x.at[0:1].set(u)", np.array([4.0, 5.0], np.float32),
                         Modelled("at_set", "at", ("x", "u"), {"index": slice(0, 1)}))


@bridge.needs_devices(4, "to shard four ways")
@explicit_only
def test_explicit_indivisible_split_with_a_size_one_dimension_is_a_sharding_type_error():
    """jnp.reshape(x, (2, 2, 4, 1)) of x int32[4, 4] sharded P('y') four ways on an Explicit mesh
    splits the cut dimension into sizes 4 cannot divide: a ShardingTypeError (as for the same
    reshape to (2, 2, 4)) or numpy's reshape, not an internal IndexError (found on 0.8.1 by a
    random program in the release matrix)."""
    x = np.arange(16, dtype=np.int32).reshape(4, 4)
    explicit_as_modelled("reshape splitting a dimension cut four ways", bridge.first_devices_mesh(("y", 4)),
                         {"x": (x, ("y",))}, "jnp.reshape(x, (2, 2, 4, 1))", x.reshape(2, 2, 4, 1),
                         Modelled("reshape", "shape", ("x",), {"shape": (2, 2, 4, 1)}))


@bridge.needs_devices(3, "for a mesh of three")
@explicit_only
def test_explicit_merge_with_size_one_dimensions_around_it():
    """jnp.reshape(x, (1, 9, 1)) of x int32[3, 3] sharded P('a') over a=3 (a merge of the sharded
    major dimension, with a size-1 dimension on either side) returns numpy's reshape or raises a
    ShardingTypeError, not an internal IndexError (found on 0.12.0.1 by the rerun of the releases
    the second matrix pass touched)."""
    x = np.arange(9, dtype=np.int32).reshape(3, 3)
    explicit_as_modelled("merge with size-1 dimensions around it", bridge.first_devices_mesh(("a", 3)),
                         {"x": (x, ("a",))}, "jnp.reshape(x, (1, 9, 1))", x.reshape(1, 9, 1),
                         Modelled("reshape", "shape", ("x",), {"shape": (1, 9, 1)}))


@bridge.needs_devices(4, "for a 2x2x1 mesh")
@explicit_only
def test_explicit_merge_onto_axes_ending_with_a_size_one_axis():
    """jnp.reshape(x, (4,)) of x int32[2, 2] sharded P('b', ('a', 'x')) over a=2, b=2 and x=1 (a
    size-1 axis, which cuts nothing) returns numpy's reshape, as it does for x sharded P('b', ('x',
    'a')) or P('b', 'a') (found on 0.10.2 by the second release matrix pass: jnp.roll with
    axis=None ravels). Before JAX merged dimensions sharded in order
    (compat.EXPLICIT_RESHAPE_DEALS_MESH_AXES), its doc's rule refuses a merge of sharded dimensions
    with a ShardingTypeError."""
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    explicit_accepts_since("EXPLICIT_RESHAPE_DEALS_MESH_AXES", "merge onto axes ending with a size-1 axis",
                           bridge.first_devices_mesh(("a", 2), ("b", 2), ("x", 1)), {"x": (x, ("b", ("a", "x")))},
                           "jnp.reshape(x, (4,))", x.reshape(4))


@bridge.needs_devices(2, "for a two-axis mesh")
@explicit_only
def test_explicit_merge_of_a_dimension_sharded_over_a_size_one_axis():
    """jnp.reshape(x, (6,)) of x int32[3, 2] sharded P('x', 'a') over a=2 and x=1 (a size-1 axis,
    which cuts nothing) returns numpy's reshape, as for x sharded P(None, 'a') (found on 0.8.0 by
    the release matrix: jnp.argmax over all axes ravels). Before JAX merged dimensions sharded in
    order (compat.EXPLICIT_RESHAPE_DEALS_MESH_AXES), its doc's rule refuses a merge whose second
    dimension is sharded with a ShardingTypeError."""
    x = np.arange(6, dtype=np.int32).reshape(3, 2)
    explicit_accepts_since("EXPLICIT_RESHAPE_DEALS_MESH_AXES", "merge over a size-1 axis",
                           bridge.first_devices_mesh(("a", 2), ("x", 1)), {"x": (x, ("x", "a"))},
                           "jnp.reshape(x, (6,))", x.reshape(6))


@bridge.needs_devices(4, "for a (2, 2) mesh")
@explicit_only
def test_explicit_merge_of_two_dimensions_each_sharded():
    """jnp.reshape(x, (4,)) of x int32[2, 2] sharded P('a', 'b') over a=2 and b=2 returns numpy's
    reshape laid out P(('a', 'b')): merging dimensions sharded in order gives their axes in order
    (found on 0.6.2 by a random program: jnp.argmax over all axes of (2@b, 4@a) ravels). Before JAX
    did so (compat.EXPLICIT_RESHAPE_DEALS_MESH_AXES), its doc's rule ("In all other cases we throw
    an error and require the user to provide an `out_sharding` argument") refuses it with a
    ShardingTypeError."""
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    explicit_accepts_since("EXPLICIT_RESHAPE_DEALS_MESH_AXES", "merge of two sharded dimensions",
                           bridge.first_devices_mesh(("a", 2), ("b", 2)), {"x": (x, ("a", "b"))},
                           "jnp.reshape(x, (4,))", x.reshape(4), spec=(("a", "b"),))


@bridge.needs_devices(4, "to shard four ways")
@explicit_only
def test_explicit_dynamic_slice_of_a_cut_operand_clamps_its_start_once():
    """On an Explicit mesh, lax.dynamic_slice(x, (start,), (4,)) of x = arange(8) sharded four
    ways with a traced start of 7 clamps it to 4 and returns [4, 5, 6, 7] (the output's type keeps
    the operand's sharding, so the output is cut though nothing asks for it; found on 0.7.0 by the
    third release-matrix pass)."""
    x = np.arange(8, dtype=np.int32)
    explicit_accepts("dynamic_slice", bridge.first_devices_mesh(("a", 4)),
                     {"x": (x, ("a",)), "start": (np.int32(7), ())}, "lax.dynamic_slice(x, (start,), (4,))", x[4:8])


@bridge.needs_devices(2, "for a two-axis mesh")
@explicit_only
def test_explicit_edge_pad_over_size_one_axis():
    """jnp.pad(x, ((0, 0),), mode='edge') of x (1,) sharded over a size-1 axis (which cuts
    nothing) returns x, as for a replicated x."""
    x = np.array([3.0], np.float32)
    explicit_as_modelled("edge pad", bridge.first_devices_mesh(("a", 2), ("y", 1)), {"x": (x, ("y",))},
                         "jnp.pad(x, ((0, 0),), mode='edge')", np.pad(x, ((0, 0),), mode="edge"),
                         Modelled("pad", "padding", ("x",), {"widths": ((0, 0),), "mode": "edge"}))


@bridge.needs_devices(2, "for a two-axis mesh")
@explicit_only
def test_explicit_edge_pad_of_a_matrix_over_size_one_axis():
    """jnp.pad(x, ((1, 0), (0, 0)), mode='edge') of x (2, 4) whose columns are sharded over a
    size-1 axis (which cuts nothing) returns numpy's edge pad, as for a replicated x (the
    one-dimensional case raises a ShardingTypeError from 0.11.0; this one still fails otherwise;
    found by a random program on 0.12.0.1)."""
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    explicit_as_modelled("edge pad of a matrix", bridge.first_devices_mesh(("a", 2), ("y", 1)), {"x": (x, (None, "y"))},
                         "jnp.pad(x, ((1, 0), (0, 0)), mode='edge')", np.pad(x, ((1, 0), (0, 0)), mode="edge"),
                         Modelled("pad", "padding", ("x",), {"widths": ((1, 0), (0, 0)), "mode": "edge"}))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_symmetric_pad_leaves_an_unpadded_cut_dimension_alone():
    """jnp.pad(x, ((0, 0), (1, 0)), mode='symmetric') of x int32[2, 2] sharded P('a') on an
    Explicit mesh (a=2) returns numpy's pad laid out P('a'): the cut dimension has no padding, so
    nothing slices it (JAX's fix 1f556c1262 skips such dimensions; found on 0.6.2 by a random
    program at the nightly profile: zero widths on both dimensions)."""
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    explicit_accepts("symmetric pad of an uncut dimension", bridge.first_devices_mesh(("a", 2)),
                     {"x": (x, ("a",))}, "jnp.pad(x, ((0, 0), (1, 0)), mode='symmetric')",
                     np.pad(x, ((0, 0), (1, 0)), mode="symmetric"), spec=("a",))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_edge_pad_leaves_an_unpadded_cut_dimension_alone():
    """jnp.pad(x, ((0, 0), (0, 0)), mode='edge') of x int32[2, 2] sharded P('a') on an Explicit
    mesh (a=2) returns x laid out P('a'): padding nothing slices nothing (what JAX's fix 1f556c1262
    states for the mirror modes; found on 0.8.1 by a random program: uint32[1, 2] P(None, 'a'))."""
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    explicit_accepts("edge pad of nothing", bridge.first_devices_mesh(("a", 2)),
                     {"x": (x, ("a",))}, "jnp.pad(x, ((0, 0), (0, 0)), mode='edge')",
                     np.pad(x, ((0, 0), (0, 0)), mode="edge"), spec=("a",))


@bridge.needs_devices(2, "for a two-axis mesh")
@explicit_only
def test_explicit_argmax_over_size_one_axis():
    """jnp.argmax(x) over all axes of x (6, 3) sharded over a size-1 axis (which cuts nothing)
    returns the flat index of the maximum, as for a replicated x."""
    x = (np.arange(18, dtype=np.int32) * 7 % 18).reshape(6, 3)
    explicit_as_modelled("argmax", bridge.first_devices_mesh(("a", 2), ("b", 1)), {"x": (x, (None, "b"))},
                         "jnp.argmax(x)", np.argmax(x), Modelled("argmax", "reduction", ("x",), {"axis": None}))


@bridge.needs_devices(2, "for a two-axis mesh")
@explicit_only
def test_explicit_merge_past_the_first_dimension_over_a_size_one_axis_is_refused():
    """jnp.reshape(x, (4, 2)) of x int32[2, 2, 2] sharded P(None, 'b') over a=2, b=1 merges
    dimensions 0 and 1, the second named by a (size-1) axis: every release's stated rule refuses it
    (before 0.10.0 a merge takes a group sharded in its first dimension only; from 0.10.0 a sharded
    dimension cannot merge into a minor position) with a ShardingTypeError asking for an
    out_sharding, not a result typed with 'b' on another dimension (found on 0.6.1 by the release
    matrix, seed 1860177467: (4, 4@b, 8) to (16, 8) typed P(None, 'b'))."""
    x = np.arange(8, dtype=np.int32).reshape(2, 2, 2)
    explicit_refuses("merge past the first dimension over a size-1 axis", bridge.first_devices_mesh(("a", 2), ("b", 1)),
                     {"x": (x, (None, "b"))}, "jnp.reshape(x, (4, 2))")


@bridge.needs_devices(2, "for a two-axis mesh")
@explicit_only
def test_explicit_reshape_over_size_one_axis():
    """jnp.reshape(x, (4, 1)) of x (2, 1, 2) sharded over a size-1 axis (which cuts nothing)
    returns numpy's reshape, as for a replicated x, or a ShardingTypeError."""
    x = np.arange(4, dtype=np.int32).reshape(2, 1, 2)
    explicit_as_modelled("reshape", bridge.first_devices_mesh(("a", 2), ("b", 1)), {"x": (x, ("b",))},
                         "jnp.reshape(x, (4, 1))", x.reshape(4, 1),
                         Modelled("reshape", "shape", ("x",), {"shape": (4, 1)}))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_merge_of_a_minor_sharded_dimension_into_a_column():
    """jnp.reshape(x, (8, 1)) of x int32[2, 2, 2] sharded P(None, None, 'a') on an Explicit mesh
    (a=2) merges a cut minor dimension (and adds a size-1 one): a ShardingTypeError, as for the
    same merge to (8,), or numpy's reshape; not a bare AssertionError (found on 0.9.0 by a random
    program at the nightly profile: (2, 2, 8@a) to (32, 1))."""
    x = np.arange(8, dtype=np.int32).reshape(2, 2, 2)
    explicit_as_modelled("merge of a cut minor dimension into a column", bridge.first_devices_mesh(("a", 2)),
                         {"x": (x, (None, None, "a"))}, "jnp.reshape(x, (8, 1))", x.reshape(8, 1),
                         Modelled("reshape", "shape", ("x",), {"shape": (8, 1)}))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_reshape_adding_a_size_one_dimension_is_well_typed():
    """jnp.reshape(w, (1, 4)) of w int32[2, 2] sharded P('a') on an Explicit mesh (a=2) returns
    numpy's reshape: the Explicit-sharding rule drops size-1 dimensions before it decides a
    split or merge, so (2@a, 2) -> (4@a,) -> (1, 4@a) is well typed (found when the catalogue's
    ShardingTypeErrors were judged by the sharding-rule model)."""
    w = np.arange(4, dtype=np.int32).reshape(2, 2)
    explicit_accepts("reshape adding a size-one dimension", bridge.first_devices_mesh(("a", 2)),
                     {"w": (w, ("a",))}, "jnp.reshape(w, (1, 4))", w.reshape(1, 4))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_reshape_of_an_unsharded_operand_adding_a_size_one_dimension_is_well_typed():
    """jnp.reshape(w, (1, 4)) of w int32[2, 2] replicated (P()) on an Explicit mesh (a=2) returns
    numpy's reshape laid out P(None, None): an unsharded operand stays unsharded, whatever the
    reshape (found by the catalogue on 0.6.0; JAX's test_fully_replicated_reshape states it)."""
    w = np.arange(4, dtype=np.int32).reshape(2, 2)
    explicit_accepts("reshape of a replicated operand adding a size-one dimension", bridge.first_devices_mesh(("a", 2)),
                     {"w": (w, ())}, "jnp.reshape(w, (1, 4))", w.reshape(1, 4), spec=(None, None))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_jit_of_a_strided_slice_is_well_typed():
    """jax.jit(lambda a: a[::2]) of x float32[4] sharded P('a') on an Explicit mesh (a=2) returns
    [0, 2]: under jit a static strided slice binds lax.slice, whose rule keeps a spec that divides
    the result (found when the catalogue's ShardingTypeErrors were judged by the sharding-rule
    model, on 0.6.2). Before JAX typed indexing so (compat.EXPLICIT_INDEXING_INFERS_SHARDING), its
    doc lists "`gather` (i.e. indexing ops)" among the ops missing sharding rules: the slice is
    refused with a ShardingTypeError asking for an out_sharding."""
    x = np.arange(4, dtype=np.float32)
    explicit_accepts_since("EXPLICIT_INDEXING_INFERS_SHARDING", "jit of a strided slice",
                           bridge.first_devices_mesh(("a", 2)), {"x": (x, ("a",))}, "jax.jit(lambda a: a[::2])(x)",
                           x[::2])


@bridge.needs_devices(8, "for a (b=2, x=4) mesh")
def test_a_wrap_pad_of_a_dimension_cut_over_two_axes_into_a_layout_moving_the_first():
    """jax.jit(lambda x: jnp.pad(x, ((0, 0), (0, 0), (0, 1)), mode='wrap'), out_shardings=P('b')) of x
    int32[2, 2, 8] sharded P(None, None, ('b', 'x')) on a (b=2, x=4) mesh returns numpy's pad (found by
    the eleventh release matrix pass on 0.12.0.1, seed 1920690675: XLA's HLO verifier refused it)."""
    x = np.arange(32, dtype=np.int32).reshape(2, 2, 8)
    auto_case("wrap pad", bridge.first_devices_mesh(("b", 2), ("x", 4)), {"x": (x, (None, None, ("b", "x")))},
              "jnp.pad(x, ((0, 0), (0, 0), (0, 1)), mode='wrap')", ("b",),
              np.pad(x, ((0, 0), (0, 0), (0, 1)), mode="wrap"))


@bridge.needs_devices(8, "for an Explicit (a=2, b=4) mesh")
@explicit_only
def test_explicit_take_of_a_sharded_operand_along_another_dimension():
    """jnp.take(x, [0, 2], axis=0) of x uint32[4, 8] sharded P(None, 'b') on an Explicit (a=2, b=4)
    mesh returns rows 0 and 2 typed P(None, 'b'): the gather rule keeps the sharding of a dimension
    it takes whole. Before JAX had a gather rule (compat.EXPLICIT_GATHER_HAS_A_SHARDING_RULE, 0.7.0)
    it is refused with a ShardingTypeError asking for an out_sharding, the doc's "missing sharding
    rules ... `gather`" (met on 0.6.1 in the tenth matrix pass, seed 3018875404, where the model
    refused more than the release: every slice of a sharded operand)."""
    x = np.arange(32, dtype=np.uint32).reshape(4, 8)
    explicit_accepts_since("EXPLICIT_GATHER_HAS_A_SHARDING_RULE", "take of rows of a column-sharded matrix",
                           bridge.first_devices_mesh(("a", 2), ("b", 4)), {"x": (x, (None, "b"))},
                           "jnp.take(x, np.array([0, 2]), axis=0)", x[[0, 2]], spec=(None, "b"))


@bridge.needs_devices(8, "for an Explicit (a=2, b=4) mesh")
@explicit_only
def test_explicit_jit_of_a_shifted_set_of_a_sharded_operand_along_another_dimension():
    """jax.jit(lambda x: x.at[0:3].set(x[1:4])) of x uint32[4, 8] sharded P(None, 'b') on an Explicit
    (a=2, b=4) mesh returns x's rows shifted up by one, typed P(None, 'b'). Before JAX had a scatter
    rule (compat.EXPLICIT_SCATTER_HAS_A_SHARDING_RULE, 0.6.1) it is refused, the doc's "missing
    sharding rules ... `scatter`"."""
    x = np.arange(32, dtype=np.uint32).reshape(4, 8)
    explicit_accepts_since("EXPLICIT_SCATTER_HAS_A_SHARDING_RULE", "jit of a shifted .at[].set",
                           bridge.first_devices_mesh(("a", 2), ("b", 4)), {"x": (x, (None, "b"))},
                           "jax.jit(lambda x: x.at[0:3].set(x[1:4]))(x)", np.concatenate([x[1:4], x[3:]]),
                           spec=(None, "b"), refusal=MISSING_SCATTER_RULE)


@bridge.needs_devices(8, "for an Explicit (a=2, b=4) mesh")
@explicit_only
def test_explicit_jit_of_a_shifted_add_of_a_sharded_operand_along_another_dimension():
    """jax.jit(lambda x: x.at[0:3].add(x[1:4])) of x uint32[4, 8] sharded P(None, 'b') on an Explicit
    (a=2, b=4) mesh returns x with rows 0-2 plus rows 1-3, typed P(None, 'b'). Before JAX had a
    scatter-add rule (compat.EXPLICIT_SCATTER_ADD_HAS_A_SHARDING_RULE, 0.7.0) it is refused."""
    x = np.arange(32, dtype=np.uint32).reshape(4, 8)
    expected = x.copy()
    expected[0:3] += x[1:4]
    explicit_accepts_since("EXPLICIT_SCATTER_ADD_HAS_A_SHARDING_RULE", "jit of a shifted .at[].add",
                           bridge.first_devices_mesh(("a", 2), ("b", 4)), {"x": (x, (None, "b"))},
                           "jax.jit(lambda x: x.at[0:3].add(x[1:4]))(x)", expected, spec=(None, "b"),
                           refusal=MISSING_SCATTER_RULE)


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_argsort_keeps_the_sharding_of_its_batch_dimension():
    """jnp.argsort(x, axis=1) of x int32[2, 2] sharded P('a') on an Explicit mesh (a=2) returns
    [[1, 0], [0, 1]] typed P('a', None): sorting along dimension 1 keeps dimension 0's sharding
    (found on 0.6.2 when the eager result was checked against the sharding-rule model)."""
    x = np.array([[3, 1], [0, 2]], np.int32)
    explicit_accepts("argsort of a row-sharded matrix", bridge.first_devices_mesh(("a", 2)), {"x": (x, ("a",))},
                     "jnp.argsort(x, axis=1)", np.argsort(x, axis=1).astype(np.int32), spec=("a", None))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_empty_slice_keeps_the_sharding_of_its_other_dimensions():
    """x[0:0] of x int32[2, 2] sharded P(None, 'a') on an Explicit mesh (a=2) is an empty (0, 2)
    array typed P(None, 'a'): slicing dimension 0 keeps dimension 1's sharding, as a non-empty
    slice does (found on 0.6.2 when the eager result was checked against the sharding-rule model)."""
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    explicit_accepts("empty slice of a column-sharded matrix", bridge.first_devices_mesh(("a", 2)),
                     {"x": (x, (None, "a"))}, "x[0:0]", x[0:0], spec=(None, "a"))


@explicit_only
def test_explicit_roll_of_a_one_row_array_named_by_a_size_one_axis():
    """jnp.roll(x, 1, axis=1) of x int32[1, 4] sharded P('x') on an Explicit mesh (x=1) returns
    [[3, 0, 1, 2]] typed P('x', None): rolling dimension 1 keeps dimension 0's sharding (found on
    0.11.0 by the release matrix, seed 2369086892: one piece of the roll, x[:, 3:4], comes out typed
    P(None, None) and the concatenate refuses the two pieces)."""
    x = np.arange(4, dtype=np.int32).reshape(1, 4)
    explicit_accepts("roll of a one-row array on a size-1 axis", bridge.first_devices_mesh(("x", 1)),
                     {"x": (x, ("x",))}, "jnp.roll(x, 1, axis=1)", np.roll(x, 1, axis=1), spec=("x", None))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_at_set_of_a_sharded_array_has_a_sharding_rule():
    """x.at[0:2].set(x + 1) of x = [1, 5] sharded P('a') on an Explicit mesh (a=2) returns [2, 6]
    (found on 0.6.0 by the release matrix, where scatter had no sharding rule)."""
    x = np.array([1.0, 5.0], np.float32)
    explicit_accepts("static-range .at[].set on an Explicit mesh", bridge.first_devices_mesh(("a", 2)),
                     {"x": (x, ("a",))}, "x.at[0:2].set(x + 1)", x + 1)


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_at_add_of_a_sharded_array_has_a_sharding_rule():
    """x.at[0:2].add(x) of x = [1, 5] sharded P('a') on an Explicit mesh (a=2) returns [2, 10]
    (found on 0.6.1 by the release matrix, where scatter-add had no sharding rule)."""
    x = np.array([1.0, 5.0], np.float32)
    explicit_accepts("static-range .at[].add on an Explicit mesh", bridge.first_devices_mesh(("a", 2)),
                     {"x": (x, ("a",))}, "x.at[0:2].add(x)", x + x)


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_tril_of_a_row_sharded_matrix_is_well_typed():
    """jnp.tril(m) of m int32[2, 2] sharded P('a') on an Explicit mesh (a=2) returns numpy's tril:
    the mask it selects with is an iota of the same shape, which must not make the select
    ill-typed (found on 0.6.0 by the release matrix)."""
    m = np.arange(4, dtype=np.int32).reshape(2, 2)
    explicit_accepts("tril of a row-sharded matrix", bridge.first_devices_mesh(("a", 2)), {"m": (m, ("a",))},
                     "jnp.tril(m)", np.tril(m))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_where_of_a_sharded_condition_and_replicated_cases_is_well_typed():
    """jnp.where(c, x, y) of c = [True, False] sharded P('a'), x = [1, 2] and y = [7] replicated on
    an Explicit mesh (a=2) returns [1, 7]: the cases broadcast to the condition's sharding (found
    on 0.7.0 by the release matrix)."""
    c, x, y = np.array([True, False]), np.array([1, 2], np.int32), np.array([7], np.int32)
    explicit_accepts("where with a sharded condition", bridge.first_devices_mesh(("a", 2)),
                     {"c": (c, ("a",)), "x": (x, ()), "y": (y, ())}, "jnp.where(c, x, y)", np.where(c, x, y))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_device_put_inside_jit_types_its_result():
    """Under jit on an Explicit mesh (a=2), jax.device_put(v, NamedSharding(mesh, P('a'))) of a
    replicated v = [0, 1, 2, 3] is typed P('a'), so a dynamic_update_slice of it by u = [7, 8]
    sharded P('a') at 1 is well typed and returns [0, 7, 8, 3] (found on 0.8.1 by a random program
    in the release matrix)."""
    v, u = np.arange(4, dtype=np.uint32), np.array([7, 8], np.uint32)
    explicit_accepts("device_put inside jit", bridge.first_devices_mesh(("a", 2)),
                     {"v": (v, ()), "u": (u, ("a",)), "s": (np.int32(1), ())},
                     "jax.jit(lambda v, u, s: lax.dynamic_update_slice("
                     "jax.device_put(v, NamedSharding(mesh, P('a'))), u, (s,)))(v, u, s)",
                     np.array([0, 7, 8, 3], np.uint32))


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_device_put_inside_vmap_cuts_the_unbatched_dimension():
    """Under jit(vmap(f)) on an Explicit mesh (a=2), f(v) = -jax.device_put(v, NamedSharding(mesh,
    P(None, 'a'))) of each [1, 2] value of a batch x uint32[2, 1, 2] cuts v's last dimension (as a
    sharding constraint's batching rule does: the spec names the unbatched value's dimensions) and
    returns -x (found by the contexts property on 0.10.2: device_put's batching rule applies the spec
    to the batched value, whose size-1 dimension P(None, 'a') then cannot cut)."""
    x = np.arange(4, dtype=np.uint32).reshape(2, 1, 2)
    explicit_accepts("device_put inside vmap", bridge.first_devices_mesh(("a", 2)), {"x": (x, ())},
                     "jax.jit(jax.vmap(lambda v: -jax.device_put(v, NamedSharding(mesh, P(None, 'a')))))(x)",
                     -x)


@bridge.needs_devices(2, "to shard over two devices")
@explicit_only
def test_explicit_strided_at_max_has_a_sharding_rule():
    """x.at[::2].max(u) of replicated x = [1, 5] and u = [4] on an Explicit mesh (a=2) returns
    [4, 5] (found on 0.6.2, where scatter-max had no sharding rule)."""
    x, u = np.array([1.0, 5.0], np.float32), np.array([4.0], np.float32)
    explicit_accepts("strided .at[].max on an Explicit mesh", bridge.first_devices_mesh(("a", 2)),
                     {"x": (x, ()), "u": (u, ())}, "x.at[::2].max(u)", np.array([4.0, 5.0], np.float32))


@bridge.needs_devices(2, "to shard over two devices")
def test_lax_pad_starting_inside_interior_padding(run_isolated):
    """lax.pad(x, 0, [(-1, 0, 1)]) of x = [0, 1, 2, 3] sharded over two devices drops the first
    element of [0, 0, 1, 0, 2, 0, 3] and returns [0, 1, 0, 2, 0, 3], as unsharded; run in a
    subprocess because XLA's SPMD partitioner aborts the process on it."""
    lines = ["mesh = Mesh(np.array([devices[i] for i in sorted(devices)[:2]]), ('a',))",
             "x = jax.device_put(np.arange(4, dtype=np.float32), NamedSharding(mesh, P('a')))",
             "f = jax.jit(lambda a: lax.pad(a, np.float32(0), [(-1, 0, 1)]), out_shardings=NamedSharding(mesh, P()))",
             "print(np.asarray(f(x)).tolist())"]
    check_in_a_subprocess("jit(lambda a: lax.pad(a, 0, [(-1, 0, 1)]))(x sharded on 'a')", lines, run_isolated,
                     printed=str([0.0, 1.0, 0.0, 2.0, 0.0, 3.0]))


def auto_case(title: str, mesh: MeshModel, arrays: dict, expression: str, out_spec, expected, *,
              eager: bool = False) -> None:
    """On an Auto mesh over ``mesh``, with ``arrays`` = {name: (value, spec)} committed,
    ``expression`` (eager, or under jit with ``out_shardings`` = ``out_spec``) returns numpy's
    ``expected``, and under jit is laid out as ``out_spec`` says."""
    names = list(arrays)
    call = expression if eager else \
        f"jax.jit(lambda {', '.join(names)}: {expression}, out_shardings=out)({', '.join(names)})"
    lines = [] if eager else [f"out = NamedSharding(mesh, {spec_literal(out_spec)})"]
    case = scripted_case(f"{title}: {call}", lines, meshes={"mesh": mesh}, placed=arrays,
                         outcomes={call: call, "jit": call, "result": call})
    namespace = {"jax": jax, "jnp": jax.numpy, "lax": jax.lax, "np": np}
    committed = {name: bridge.placed(value, bridge.named_sharding(mesh, spec))
                 for name, (value, spec) in arrays.items()}
    fn = eval(f"lambda {', '.join(names)}: {expression}", namespace)
    if eager:
        result = case.accepts(expression, lambda: fn(**committed))
    else:
        jitted = jax.jit(fn, out_shardings=bridge.named_sharding(mesh, out_spec))
        result = case.accepts("jit", lambda: jitted(**committed))
    case.close(call, np.asarray(result), np.asarray(expected), rtol=0, atol=0)
    if not eager:
        check_layout(case, result, Layout(mesh, out_spec, np.shape(expected)), np.asarray(expected),
                     what="result")


@bridge.needs_devices(2, "to shard over two devices")
def test_dynamic_slice_clamps_its_start_once_with_a_sharded_output():
    """lax.dynamic_slice(x, (start,), (2,)) of x = [0, 1, 2, 3] with a traced start of 3 clamps
    it to 2 and returns [2, 3], with the output sharded over two devices as unsharded."""
    x = np.arange(4, dtype=np.int32)
    auto_case("dynamic_slice", bridge.first_devices_mesh(("a", 2)), {"x": (x, ()), "start": (np.int32(3), ())},
              "lax.dynamic_slice(x, (start,), (2,))", ("a",), x[2:4])


@bridge.needs_devices(2, "to shard over two devices")
def test_dynamic_update_slice_normalizes_a_negative_start_with_a_sharded_output():
    """lax.dynamic_update_slice(x, [[9]], (start, start)) of a 2x2 x with a traced start of -3
    counts it from the end (-3 + 2 = -1) and clamps it to 0, updating x[0, 0], with the output
    sharded as unsharded."""
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    expected = x.copy()
    expected[0, 0] = 9
    auto_case("dynamic_update_slice", bridge.first_devices_mesh(("a", 2)),
              {"x": (x, ()), "start": (np.int32(-3), ())},
              "lax.dynamic_update_slice(x, np.full((1, 1), 9, np.float32), (start, start))",
              (None, "a"), expected)


@bridge.needs_devices(2, "to shard over two devices")
def test_dynamic_update_slice_clamps_its_start_on_a_sharded_operand():
    """lax.dynamic_update_slice(x, [9], (start,)) of x = [0, 1, 2, 3] sharded over two devices,
    with a traced start of 5, clamps it to 3 and returns [0, 1, 2, 9] under jit with a replicated
    output, as unsharded (found on 0.4.30 by the release matrix; openxla/xla#49118 shows it with
    the output sharded too)."""
    x = np.arange(4, dtype=np.float32)
    auto_case("dynamic_update_slice", bridge.first_devices_mesh(("a", 2)),
              {"x": (x, ("a",)), "start": (np.int32(5), ())},
              "lax.dynamic_update_slice(x, np.full((1,), 9, np.float32), (start,))", (),
              np.array([0, 1, 2, 9], np.float32))


@bridge.needs_devices(8, "for a 2x2x2 mesh")
def test_take_along_axis_of_an_operand_cut_on_the_taken_axis():
    """jax.jit(jnp.take_along_axis(v, i, axis=2)) of v float32[1, 4, 8] cut four ways along the
    taken axis and indices i [1, 4, 2] cut on their second dimension returns numpy's
    take_along_axis, with the output sharded (None, ('a', 'y'), 'b') (found on 0.4.33 by a random
    program in the release matrix)."""
    v = np.arange(32, dtype=np.float32).reshape(1, 4, 8)
    i = np.array([[[0, 2], [0, 6], [7, 0], [0, 6]]], np.int32)
    auto_case("take_along_axis", bridge.first_devices_mesh(("a", 2), ("y", 2), ("b", 2)),
              {"v": (v, (None, None, ("a", "y"))), "i": (i, (None, ("b", "a"), None))},
              "jnp.take_along_axis(v, i, axis=2)", (None, ("a", "y"), "b"), np.take_along_axis(v, i, axis=2))


@bridge.needs_devices(8, "for a 2x2x2 mesh")
def test_take_along_axis_of_an_operand_cut_over_combined_axes():
    """jax.jit(jnp.take_along_axis(x, i, axis=0)) of x = arange(16) as int32[2, 4, 2] sharded
    (None, ('b', 'y'), 'a') and replicated zero indices i returns x's first row twice, as numpy's
    take_along_axis, with the output sharded ('a', None, 'b') (found on 0.4.33 by the third
    release-matrix pass)."""
    x = np.arange(16, dtype=np.int32).reshape(2, 4, 2)
    i = np.zeros((2, 4, 2), np.int32)
    auto_case("take_along_axis", bridge.first_devices_mesh(("a", 2), ("b", 2), ("y", 2)),
              {"x": (x, (None, ("b", "y"), "a")), "i": (i, ())},
              "jnp.take_along_axis(x, i, axis=0)", ("a", None, "b"), np.take_along_axis(x, i, axis=0))


@bridge.needs_devices(8, "for a 2x2x2 mesh")
def test_take_along_axis_into_an_output_cut_over_combined_axes_out_of_mesh_order():
    """jax.jit(jnp.take_along_axis(x, i, axis=1)) of x = arange(4) as int32[1, 2, 2] and indices
    int32[1, 8, 2], both replicated, with the output sharded (None, ('x', 'b'), 'a') returns numpy's
    take_along_axis (found on 0.4.30 by the release matrix, seed 3621032615; right into
    (None, ('b', 'x'), 'a'), (None, 'x', 'a') or (None, ('x', 'b')))."""
    x = np.arange(4, dtype=np.int32).reshape(1, 2, 2)
    i = np.array([[[1, 1], [1, 1], [0, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1]]], np.int32)
    auto_case("take_along_axis", bridge.first_devices_mesh(("a", 2), ("b", 2), ("x", 2)),
              {"x": (x, ()), "i": (i, ())}, "jnp.take_along_axis(x, i, axis=1)", (None, ("x", "b"), "a"),
              np.take_along_axis(x, i, axis=1))


@bridge.needs_devices(4, "to shard four ways")
def test_eager_pad_of_an_array_sharded_four_ways():
    """jnp.pad(x, ((0, 2),)) of x = [0, 1, 2, 3] sharded four ways returns [0, 1, 2, 3, 0, 0]
    eagerly, as unsharded (found on 0.9.2 by the release matrix)."""
    x = np.arange(4, dtype=np.int32)
    auto_case("constant pad", bridge.first_devices_mesh(("a", 4)), {"x": (x, ("a",))}, "jnp.pad(x, ((0, 2),))",
              None, np.pad(x, ((0, 2),)), eager=True)


@bridge.needs_devices(8, "for a 4x2 mesh")
def test_concatenate_into_a_partially_replicated_output():
    """jnp.concatenate of two replicated [1, 2], [3, 4] with out_shardings P('a') on a 4x2 mesh
    (each block held by two devices) is [1, 2, 3, 4]."""
    mesh = bridge.first_devices_mesh(("a", 4), ("b", 2))
    v = np.array([1, 2], np.int32)
    auto_case("concatenate", mesh, {"x": (v, ()), "y": (v + 2, ())}, "jnp.concatenate([x, y])", ("a",),
              np.array([1, 2, 3, 4], np.int32))


@bridge.needs_devices(4, "for a 2x2 mesh")
def test_roll_of_an_operand_left_replicated_over_an_axis_its_output_cuts():
    """jit(lambda x: jnp.roll(x, 1, axis=0), out_shardings=P(('b', 'x'))) of x = [[1, 2], ..., [7, 8]]
    sharded P(None, 'b') on a 2x2 mesh (the operand replicated over 'x', which the output cuts) is
    [[7, 8], [1, 2], [3, 4], [5, 6]] (found on 0.4.36 by the release matrix, seed 936147697: the last
    block left zero; the same operand into P('b') is doubled, the known form of this bug)."""
    x = np.arange(1, 9, dtype=np.int32).reshape(4, 2)
    auto_case("roll", bridge.first_devices_mesh(("b", 2), ("x", 2)), {"x": (x, (None, "b"))},
              "jnp.roll(x, 1, axis=0)", (("b", "x"),), np.roll(x, 1, axis=0))


@bridge.needs_devices(2, "to shard over two devices")
def test_vmapped_dynamic_slice_far_past_the_end_over_a_cut_batch():
    """jax.vmap(lambda x, s: lax.dynamic_slice(x, (s,), (1,))) of x = [[1, 2], [3, 4]] sharded on its
    batch dimension over two devices, with starts [3, 3] (past the end by more than one: clamped to
    1), returns [[2], [4]] (found on 0.4.30 by the release matrix, seed 2406389851)."""
    x = np.array([[1, 2], [3, 4]], np.int32)
    auto_case("vmap of dynamic_slice", bridge.first_devices_mesh(("b", 2)),
              {"x": (x, ("b",)), "s": (np.array([3, 3], np.int32), ())},
              "jax.vmap(lambda x, s: lax.dynamic_slice(x, (s,), (1,)))(x, s)", None, np.array([[2], [4]], np.int32),
              eager=True)


@bridge.needs_devices(2, "to shard over two devices")
def test_take_clip_of_a_sharded_array():
    """jnp.take(x, 3, axis=0, mode='clip') of a 2x2 x sharded on its rows clamps the index to 1 and
    returns x[1]."""
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    auto_case("take clip", bridge.first_devices_mesh(("a", 2)), {"x": (x, ("a",))},
              "jnp.take(x, np.int32(3), axis=0, mode='clip')", None, x[1], eager=True)


@bridge.needs_devices(4, "for a 2x2 mesh")
def test_stack_into_an_output_cut_on_the_new_dimension_and_the_one_before():
    """jit(lambda x, y: jnp.stack([x, y], axis=1), out_shardings=P('a', 'b')) of x = y = [1, 2] on a
    2x2 mesh returns [[1, 1], [2, 2]], laid out P('a', 'b') (found by the catalogue's stack on 0.4.30,
    its first operand also cut)."""
    x = np.array([1, 2], np.int32)
    auto_case("stack", bridge.first_devices_mesh(("a", 2), ("b", 2)), {"x": (x, ()), "y": (x, ())},
              "jnp.stack([x, y], axis=1)", ("a", "b"), np.stack([x, x], axis=1))


@bridge.needs_devices(8, "for a 4x2 mesh")
def test_take_of_operand_and_indices_cut_alike_into_an_output_cut_over_another_axis():
    """jit(lambda x, i: jnp.take(x, i, axis=1), out_shardings=P(None, 'a')) of x int32[2, 2]
    committed P('b') and indices int32[4] committed P('b') on a 4x2 mesh ('a', 'b') compiles and
    returns numpy's take (found by the generated programs on 0.4.30: a take, then a constraint
    cutting the indices' dimension over 'a')."""
    x, i = np.arange(4, dtype=np.int32).reshape(2, 2), np.array([0, 1, 1, 0], np.int32)
    auto_case("take", bridge.first_devices_mesh(("a", 4), ("b", 2)), {"x": (x, ("b",)), "i": (i, ("b",))},
              "jnp.take(x, i, axis=1)", (None, "a"), np.take(x, i, axis=1))


@bridge.needs_devices(8, "for a 4x2 mesh")
def test_constraint_applies_to_a_returned_input():
    """jit(lambda a: with_sharding_constraint(a, P())) of an array sharded P('b') returns it
    replicated, as the constraint asks, even though the function returns its input."""
    mesh = bridge.first_devices_mesh(("a", 4), ("b", 2))
    x = np.array([1, 2], np.int32)
    case = scripted_case("jax.jit(lambda a: with_sharding_constraint(a, NamedSharding(mesh, P())))(x on P('b'))",
                         ["y = jax.jit(lambda a: jax.lax.with_sharding_constraint(a, NamedSharding(mesh, P())))(x)",
                          "print(y.sharding)"], meshes={"mesh": mesh}, placed={"x": (x, ("b",))},
                         outcomes={"result": "y"})
    y = jax.jit(lambda a: jax.lax.with_sharding_constraint(a, bridge.named_sharding(mesh, ())))(
        bridge.placed(x, bridge.named_sharding(mesh, ("b",))))
    check_layout(case, y, Layout(mesh, (), x.shape), x, what="result")


@bridge.needs_devices(2, "to shard over two devices")
def test_constraint_lays_out_a_zero_size_result():
    """jit(lambda x: with_sharding_constraint(x[0:0], P(None, 'a'))) of x int32[2, 2] sharded
    P('a') returns the empty (0, 2) result laid out as the constraint asks, each device holding
    its column block (found by the catalogue's slice_empty once its draws shard)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    case = scripted_case("jax.jit(lambda a: with_sharding_constraint(a[0:0], NamedSharding(mesh, P(None, 'a'))))"
                         "(x on P('a'))",
                         ["call = lambda: jax.jit(lambda a: jax.lax.with_sharding_constraint(a[0:0], "
                          "NamedSharding(mesh, P(None, 'a'))))(x)"],
                         meshes={"mesh": mesh}, placed={"x": (x, ("a",))},
                         outcomes={"jit": "call()", "result": "call()"})
    y = case.accepts("jit", lambda: jax.jit(lambda a: jax.lax.with_sharding_constraint(
        a[0:0], bridge.named_sharding(mesh, (None, "a"))))(bridge.placed(x, bridge.named_sharding(mesh, ("a",)))))
    check_layout(case, y, Layout(mesh, (None, "a"), (0, 2)), what="result")


@bridge.needs_devices(2, "to shard over two devices")
def test_lax_pad_with_a_negative_low_edge_and_a_sharded_output():
    """lax.pad([0, 1], 0, [(-1, 1, 0)]) drops the first element and appends a zero: [1, 0], with the
    output sharded over two devices as unsharded (found on 0.12.0.1 by a random lax_pad_negative
    draw once the draws shard; the old open-ended entry for that property had hidden it)."""
    auto_case("lax.pad", bridge.first_devices_mesh(("a", 2)), {"x": (np.array([0.0, 1.0], np.float32), ())},
              "lax.pad(x, np.float32(0), [(-1, 1, 0)])", ("a",), np.array([1.0, 0.0], np.float32))


@bridge.needs_devices(2, "to shard over two devices")
def test_lax_pad_interior_with_a_sharded_output():
    """lax.pad([1, 2, 3], 0, [(0, 1, 1)]) is [1, 0, 2, 0, 3, 0], with the output sharded over two
    devices as unsharded."""
    auto_case("lax.pad", bridge.first_devices_mesh(("a", 2)), {"x": (np.array([1, 2, 3], np.float32), ())},
              "lax.pad(x, np.float32(0), [(0, 1, 1)])", ("a",), np.array([1, 0, 2, 0, 3, 0], np.float32))


@bridge.needs_devices(2, "to shard over two devices")
def test_lax_pad_interior_of_a_single_element_with_a_sharded_output():
    """lax.pad([5], 0, [(0, 1, 1)]) is [5, 0] (interior padding of one element adds none), with
    the output sharded over two devices as unsharded."""
    auto_case("lax.pad", bridge.first_devices_mesh(("a", 2)), {"x": (np.array([5.0], np.float32), ())},
              "lax.pad(x, np.float32(0), [(0, 1, 1)])", ("a",), np.array([5.0, 0.0], np.float32))


@bridge.needs_devices(2, "to shard over two devices")
def test_slice_with_a_stride_beyond_the_dimension_of_a_sharded_array():
    """jit(lambda x: lax.slice(x, (1,), (2,), (3,))) of x = [0, 1] sharded over two devices (a
    stride longer than the dimension: one element) returns [1], as numpy's x[1:2:3]."""
    x = np.array([0, 1], np.float32)
    auto_case("lax.slice", bridge.first_devices_mesh(("a", 2)), {"x": (x, ("a",))},
              "lax.slice(x, (1,), (2,), (3,))", (), x[1:2:3])


@bridge.needs_devices(8, "to shard over eight devices")
def test_reversed_strided_slice_of_an_array_sharded_eight_ways():
    """jit(lambda x: x[:-2:-3]) of x = arange(8) sharded over eight devices returns [7], as numpy."""
    x = np.arange(8, dtype=np.float32)
    auto_case("x[:-2:-3]", bridge.first_devices_mesh(("a", 8)), {"x": (x, ("a",))}, "x[:-2:-3]", (), x[:-2:-3])


@bridge.needs_devices(6, "for a (3, 2) mesh")
def test_select_of_operands_split_over_one_axis_and_over_combined_axes(run_isolated):
    """jax.jit(lax.select) of c bool[4, 6, 6] sharded P('b'), x int32[4, 6, 6] P(None, None,
    ('b', 'y')) and y = -x P('b', 'y') on a (3, 2) mesh ('y', 'b') returns numpy's where(c, x, y);
    run in a subprocess because XLA's SPMD partitioner aborts the process on it (found by the vmap
    of lax.select in an upgrade run on 0.12.0.1)."""
    ids = list(bridge.live_device_ids()[:6])
    lines = [f"mesh = Mesh(np.array([devices[i] for i in {ids}]).reshape((3, 2)), ('y', 'b'))",
             "c = np.arange(144).reshape(4, 6, 6) % 3 == 0",
             "x = np.arange(144, dtype=np.int32).reshape(4, 6, 6)",
             "args = [jax.device_put(v, NamedSharding(mesh, s)) for v, s in zip((c, x, -x), "
             "(P('b'), P(None, None, ('b', 'y')), P('b', 'y')))]",
             "print(bool(np.array_equal(np.asarray(jax.jit(lax.select)(*args)), np.where(c, x, -x))))"]
    check_in_a_subprocess("jit(lax.select) of operands split over 'b' and over ('b', 'y')", lines,
                     run_isolated, printed="True", what="result equals numpy's")


@bridge.needs_devices(6, "for a (2, 3) mesh")
def test_compare_with_its_output_over_two_axes_the_first_moved_from_another_dimension(run_isolated):
    """jax.jit(lambda x, y: x > y, out_shardings=P(None, ('b', 'y'))) of x int32[2, 6] laid out
    P('b') and a scalar y on a (2, 3) mesh ('b', 'y') returns x > y; run in a subprocess because
    XLA's SPMD partitioner aborts the process on it (found by the catalogue's random greater
    property on 0.12.0.1, seed 2179752880: the worker died)."""
    ids = list(bridge.live_device_ids()[:6])
    lines = [f"mesh = Mesh(np.array([devices[i] for i in {ids}]).reshape((2, 3)), ('b', 'y'))",
             "x = np.arange(12, dtype=np.int32).reshape(2, 6)",
             "f = jax.jit(lambda x, y: x > y, out_shardings=NamedSharding(mesh, P(None, ('b', 'y'))))",
             "got = np.asarray(f(jax.device_put(x, NamedSharding(mesh, P('b'))), np.int32(5)))",
             "print(got.tolist() == (x > 5).tolist(), '# should be True')"]
    check_in_a_subprocess("jit(x > y) of x split over 'b', its output over ('b', 'y') on another dimension", lines,
                          run_isolated, printed="True # should be True", what="result equals x > y")


@bridge.needs_devices(4, "for a (2, 2) mesh")
def test_take_into_an_output_refining_its_operands_cut_of_a_passed_through_dimension(run_isolated):
    """jax.jit(lambda x, i: jnp.take(x, i, axis=0), out_shardings=P(None, ('b', 'x'))) of x
    int32[2, 4] laid out P(None, 'b') and i = [0] on a (2, 2) mesh ('b', 'x') returns x[[0]]; run in
    a subprocess because XLA's SPMD partitioner aborts the process on it (found by the catalogue's
    random take property on 0.11.2, seed 2681482569: the worker died)."""
    ids = list(bridge.live_device_ids()[:4])
    lines = [f"mesh = Mesh(np.array([devices[i] for i in {ids}]).reshape((2, 2)), ('b', 'x'))",
             "x = np.arange(8, dtype=np.int32).reshape(2, 4)",
             "f = jax.jit(lambda x, i: jnp.take(x, i, axis=0), out_shardings=NamedSharding(mesh, P(None, ('b', 'x'))))",
             "got = np.asarray(f(jax.device_put(x, NamedSharding(mesh, P(None, 'b'))), np.zeros(1, np.int32)))",
             "print(got.tolist() == x[[0]].tolist(), '# should be True')"]
    check_in_a_subprocess("jit(jnp.take(x, i, axis=0)) of x split over 'b' on a passed-through dimension, "
                          "its output over ('b', 'x') there",
                          lines, run_isolated, printed="True # should be True", what="result equals x[[0]]")


@bridge.needs_devices(6, "for a (2, 1, 3, 1) mesh")
def test_concatenate_constrained_across_two_differently_split_operands(run_isolated):
    """jit of jnp.concatenate((x0, x1), axis=2) with x0 int32[1, 6, 3] constrained to
    P(None, ('y', 'b', 'a')), x1 int32[1, 6, 6] to P('b', None, ('x', 'y')) and the result to
    P(None, 'x', ('a', 'y', 'b')) on a (2, 1, 3, 1) mesh ('x', 'b', 'a', 'y') returns zeros[1, 6, 9];
    run in a subprocess because XLA's SPMD partitioner aborts the process on it (found by the
    catalogue's random concatenate property)."""
    ids = list(bridge.live_device_ids()[:6])
    lines = [f"mesh = Mesh(np.array([devices[i] for i in "
             f"{ids[3:4] + ids[5:6] + ids[0:1] + ids[2:3] + ids[1:2] + ids[4:5]}])"
             ".reshape((2, 1, 3, 1)), ('x', 'b', 'a', 'y'))",
             "ins = (NamedSharding(mesh, P(None, ('y', 'b', 'a'))), NamedSharding(mesh, P('b', None, ('x', 'y'))))",
             "out = NamedSharding(mesh, P(None, ('x',), ('a', 'y', 'b')))",
             "args = [jax.device_put(np.zeros(s, np.int32), i) for s, i in zip(((1, 6, 3), (1, 6, 6)), ins)]",
             "f = jax.jit(lambda *a: lax.with_sharding_constraint(jnp.concatenate("
             "[lax.with_sharding_constraint(x, s) for x, s in zip(a, ins)], axis=2), out))",
             "print(np.asarray(f(*args)).shape)"]
    check_in_a_subprocess("jit(concatenate of two differently constrained operands, constrained output)", lines,
                     run_isolated, printed=str((1, 6, 9)), what="result shape")


@bridge.needs_devices(4, "to cut a dimension of four over four devices")
def test_eager_split_of_a_dimension_cut_over_more_devices_than_its_first_part():
    """jnp.reshape(x, (2, 2)) of x = [0, 1, 2, 3] sharded P('a') over four devices (an Auto mesh,
    eager) returns [[0, 1], [2, 3]]: the split's first part (2) is smaller than the axis (4), so the
    result cannot keep 'a' on one dimension, and JAX chooses a layout itself (found on 0.9.1 by
    test_reshape_across_a_sharded_dimension, seed 2159807315: (8,) P('a') over 8 devices to (2, 4))."""
    x = np.arange(4, dtype=np.int32)
    auto_case("split", bridge.first_devices_mesh(("a", 4)), {"x": (x, ("a",))}, "jnp.reshape(x, (2, 2))", None,
              x.reshape(2, 2), eager=True)


@bridge.needs_devices(4, "for a (2, 2) mesh")
def test_edge_pad_of_two_cut_dimensions_into_a_layout_moving_an_axis():
    """jit(lambda x: jnp.pad(x, ((0, 2), (1, 0)), mode='edge'), out_shardings=P('b')) of x int32[2, 2]
    P('a', 'b') on a (2, 2) mesh returns numpy's edge padding: 'b' moves from the second dimension
    to the first (found on 0.9.0 by test_sharding_never_changes_values[pad], seed 4046333785: x
    int32[2, 4, 2] P('a', 'b') on a (2, 4) mesh)."""
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    auto_case("edge pad", bridge.first_devices_mesh(("a", 2), ("b", 2)), {"x": (x, ("a", "b"))},
              "jnp.pad(x, ((0, 2), (1, 0)), mode='edge')", ("b",), np.pad(x, ((0, 2), (1, 0)), mode="edge"))


@bridge.needs_devices(8, "for a (2, 4) mesh")
def test_contraction_with_its_batch_laid_out_over_the_contracted_axis():
    """jit(lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((0,), (1,)))), out_shardings=P('b')) of
    x int32[4, 4] P('a', 'b') and y int32[4, 4] P('b', 'a') on a (2, 4) mesh returns numpy's
    einsum('bk,kb->b', x, y): the batch dimension, cut over 'a' in the operands, is returned over
    'b', which cuts the contracted one (found on 0.5.3 by test_contraction_over_sharded_dimensions,
    seed 1948660402)."""
    x = np.arange(16, dtype=np.int32).reshape(4, 4)
    y = (np.arange(16, dtype=np.int32) % 5).reshape(4, 4)
    auto_case("batch over the contracted axis", bridge.first_devices_mesh(("a", 2), ("b", 4)),
              {"x": (x, ("a", "b")), "y": (y, ("b", "a"))}, "lax.dot_general(x, y, (((1,), (0,)), ((0,), (1,))))",
              ("b",), np.einsum("bk,kb->b", x, y))


@bridge.needs_devices(8, "for a (2, 4) mesh")
def test_contraction_returning_its_batch_and_free_dimensions_over_swapped_axes():
    """jit(lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((0,), (1,)))), out_shardings=P('b', 'a'))
    of x int32[4, 4, 4] P('a', 'b') and y int32[4, 4] P('b', 'a') on a (2, 4) mesh returns numpy's
    einsum('bkm,kb->bm', x, y): the batch dimension, cut over 'a' in the operands, is returned over
    'b', which cuts the contracted one, and the free dimension over 'a' (found on 0.10.2 by
    test_contraction_over_sharded_dimensions, seed 995328243, as einsum 'bkm,kb->mb' on a (4, 2) mesh)."""
    x = np.arange(64, dtype=np.int32).reshape(4, 4, 4) % 7
    y = (np.arange(16, dtype=np.int32) % 5).reshape(4, 4)
    auto_case("batch and free dimension over swapped axes", bridge.first_devices_mesh(("a", 2), ("b", 4)),
              {"x": (x, ("a", "b")), "y": (y, ("b", "a"))}, "lax.dot_general(x, y, (((1,), (0,)), ((0,), (1,))))",
              ("b", "a"), np.einsum("bkm,kb->bm", x, y))


@bridge.needs_devices(8, "for a (4, 2) mesh")
def test_contraction_with_its_batch_returned_over_an_axis_cutting_other_contracted_dimensions():
    """jit(lambda x, y: lax.dot_general(x, y, (((1, 2), (1, 2)), ((0,), (0,)))), out_shardings=P('a'))
    of x int32[4, 4, 4] P('b', None, 'a') and y int32[4, 4, 4] P('b', 'a') on a (4, 2) mesh returns
    numpy's einsum('bkl,bkl->b', x, y): the batch dimension, cut over 'b' in the operands, is
    returned over 'a', which cuts l in x and k in y (found on 0.4.30 by
    test_contraction_over_sharded_dimensions, seed 349853846)."""
    x = np.arange(64, dtype=np.int32).reshape(4, 4, 4) % 7
    y = np.arange(64, dtype=np.int32).reshape(4, 4, 4) % 5
    auto_case("batch over an axis cutting other contracted dimensions", bridge.first_devices_mesh(("a", 4), ("b", 2)),
              {"x": (x, ("b", None, "a")), "y": (y, ("b", "a"))},
              "lax.dot_general(x, y, (((1, 2), (1, 2)), ((0,), (0,))))", ("a",), np.einsum("bkl,bkl->b", x, y))


@bridge.needs_devices(4, "for a (2, 2) mesh")
def test_shifted_update_into_a_layout_cutting_another_dimension_over_the_major_axis():
    """jit(lambda x: x.at[1:].set(x[:-1])) of x float32[4, 2] cut over ('a', 'b') on dimension 0,
    with the output cut over 'a' on dimension 1, returns numpy's shifted copy [x0, x0, x1, x2]."""
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    auto_case("x.at[1:].set(x[:-1])", bridge.first_devices_mesh(("a", 2), ("b", 2)), {"x": (x, (("a", "b"),))},
              "x.at[1:].set(x[:-1])", (None, "a"), np.concatenate([x[:1], x[:-1]]))


@bridge.needs_devices(4, "for a (2, 2) mesh")
def test_shifted_add_into_a_layout_cutting_another_dimension_over_the_major_axis():
    """jit(lambda x: x.at[1:].add(x[:-1])) of x float32[4, 2] cut over ('a', 'b') on dimension 0,
    with the output cut over 'a' on dimension 1, returns numpy's [x0, x1 + x0, x2 + x1, x3 + x2]
    (found on 0.10.2 by the catalogue's at_add_shifted, seed 3984663021, as x int32[2, 2, 8] cut
    over ('b', 'a') on dimension 2 into P('b') on a (4, 2) mesh)."""
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    auto_case("x.at[1:].add(x[:-1])", bridge.first_devices_mesh(("a", 2), ("b", 2)), {"x": (x, (("a", "b"),))},
              "x.at[1:].add(x[:-1])", (None, "a"), np.concatenate([x[:1], x[1:] + x[:-1]]))


@bridge.needs_devices(8, "for a (4, 2) mesh")
def test_shifted_add_of_a_dimension_cut_over_two_axes_into_a_layout_moving_them():
    """jit(lambda x: x.at[:, :, 1:].add(x[:, :, :-1]), out_shardings=P('b', None, 'a')) of x
    int32[2, 2, 8] cut over ('b', 'a') on dimension 2 of a (4, 2) mesh returns numpy's shifted sum
    (found on 0.10.2 by the catalogue's at_add_shifted, seed 3984663021: the operand comes back,
    its last element 0)."""
    x = np.arange(32, dtype=np.int32).reshape(2, 2, 8)
    expected = x.copy()
    expected[:, :, 1:] += x[:, :, :-1]
    auto_case("x.at[:, :, 1:].add(x[:, :, :-1])", bridge.first_devices_mesh(("a", 4), ("b", 2)),
              {"x": (x, (None, None, ("b", "a")))}, "x.at[:, :, 1:].add(x[:, :, :-1])", ("b", None, "a"), expected)


def check_shifted_update_constrained_into_a_layout_cutting_another_dimension_over_the_major_axis(method: str):
    """jit(lambda x: with_sharding_constraint(with_sharding_constraint(x, P(('a', 'b'))).at[1:].<method>(
    x[:-1]), P(None, 'a'))) of x float32[4, 2] on a (2, 2) mesh against numpy's (``method``: "set"
    or "add")."""
    mesh = bridge.first_devices_mesh(("a", 2), ("b", 2))
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    source = (f"jax.jit(lambda x: jax.lax.with_sharding_constraint((lambda v: v.at[1:].{method}(v[:-1]))("
              "jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P(('a', 'b'))))), "
              "NamedSharding(mesh, P(None, 'a'))))")
    case = scripted_case(f"{source}(x)", [f"y = {source}(x)", "print(np.asarray(y))"], meshes={"mesh": mesh},
                         placed={"x": (x, (("a", "b"),))}, outcomes={"result": "np.asarray(y)"})
    constrain = jax.lax.with_sharding_constraint
    update = bridge.function_of(f"lambda v: v.at[1:].{method}(v[:-1])")
    f = jax.jit(lambda a: constrain(update(constrain(a, bridge.named_sharding(mesh, (("a", "b"),)))),
                                    bridge.named_sharding(mesh, (None, "a"))))
    y = case.accepts("result", lambda: f(bridge.placed(x, bridge.named_sharding(mesh, (("a", "b"),)))))
    case.same_bits("result", np.asarray(y), np.concatenate([x[:1], x[1:] + x[:-1] if method == "add" else x[:-1]]))


@bridge.needs_devices(4, "for a (2, 2) mesh")
def test_shifted_add_constrained_into_a_layout_cutting_another_dimension_over_the_major_axis():
    """jit(lambda x: with_sharding_constraint(with_sharding_constraint(x, P(('a', 'b'))).at[1:].add(
    x[:-1]), P(None, 'a'))) of x float32[4, 2] returns numpy's [x0, x1 + x0, x2 + x1, x3 + x2]: the
    .add form of the constrained reproduction below."""
    check_shifted_update_constrained_into_a_layout_cutting_another_dimension_over_the_major_axis("add")


@bridge.needs_devices(4, "for a (2, 2) mesh")
def test_shifted_update_constrained_into_a_layout_cutting_another_dimension_over_the_major_axis():
    """jit(lambda x: with_sharding_constraint(with_sharding_constraint(x, P(('a', 'b'))).at[1:].set(
    x[:-1]), P(None, 'a'))) of x float32[4, 2] returns numpy's shifted copy [x0, x0, x1, x2]: the
    layouts asked by sharding constraints, as the catalogue's (c) way asks them."""
    check_shifted_update_constrained_into_a_layout_cutting_another_dimension_over_the_major_axis("set")


@bridge.needs_devices(2, "to shard over two devices")
def test_a_slice_into_a_replicated_output_keeps_the_sign_of_a_zero():
    """jit(lambda x: x[0:1], out_shardings=P()) of x = [-0.0, 1.0] split over two devices returns
    [-0.0], as numpy's slice (found on 0.10.2 as (-v)[0:1] of v = [0.0, 1.0] beside -v)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.array([-0.0, 1.0], np.float32)
    call = "jax.jit(lambda x: x[0:1], out_shardings=NamedSharding(mesh, P()))(x)"
    case = scripted_case(f"{call}, x P('a')", [f"print({call})"], meshes={"mesh": mesh}, placed={"x": (x, ("a",))},
                         outcomes={"jit": call, "result": call})
    f = jax.jit(lambda a: a[0:1], out_shardings=bridge.named_sharding(mesh, ()))
    result = case.accepts("jit", lambda: f(bridge.placed(x, bridge.named_sharding(mesh, ("a",)))))
    case.same_bits("result", np.asarray(result), x[0:1])


@explicit_only
@bridge.needs_devices(4, "for a (2, 2) mesh")
def test_explicit_exp_into_another_layout_has_the_unsharded_bits():
    """jit(jnp.exp, out_shardings=P(None, ('a', 'b'))) of x = arange(16) / 8 as float32[2, 4, 2]
    committed P('b', None, 'a') on an Explicit (2, 2) mesh returns the unsharded jit's bits (found on
    0.12.0.1 by the catalogue's exp, seed 2591753826: 3 of 16 elements one ulp off, 1.4549915 for
    1.4549913 at (0, 1, 1))."""
    mesh = bridge.first_devices_mesh(("a", 2), ("b", 2))
    x = (np.arange(16, dtype=np.float32) / 8).reshape(2, 4, 2)
    call = "jax.jit(jnp.exp, out_shardings=NamedSharding(mesh, P(None, ('a', 'b'))))(x)"
    case = scripted_case(f"{call}, x P('b', None, 'a') (the unsharded jit's bits expected)", [f"print({call})"],
                         meshes={"mesh": mesh}, axis_type="Explicit", placed={"x": (x, ("b", None, "a"))},
                         outcomes={"jit": call, "result": call})
    unsharded = np.asarray(jax.jit(jax.numpy.exp)(x))
    f = jax.jit(jax.numpy.exp, out_shardings=bridge.named_sharding(mesh, (None, ("a", "b")), "Explicit"))
    placed = bridge.placed(x, bridge.named_sharding(mesh, ("b", None, "a"), "Explicit"))
    result = case.accepts("jit", lambda: f(placed))
    case.same_bits("result", np.asarray(result), unsharded)


# --- found by the vocabulary (test_vocabulary_never_changes_values) ---------------------------------

@bridge.needs_devices(2, "to shard over two devices")
def test_eager_function_ignoring_its_operands_values_keeps_the_operands_layout():
    """jnp.imag(x) of a real float32[4] x committed over two devices as P('a') is zeros laid out as
    x, as jnp.zeros_like(x) is: the result of an operation on committed arrays lives where they do
    (jax-ml/jax#26040, open: jit drops the unused input, and its device with it; found by the
    vocabulary's jnp.imag, jnp.isreal, jnp.iscomplex and lax.integer_pow(x, 0))."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.arange(4, dtype=np.float32)
    case = scripted_case("jnp.imag(x) of x float32[4] on P('a')", ["y = jnp.imag(x)", "print(y.sharding)"],
                         meshes={"mesh": mesh}, placed={"x": (x, ("a",))}, outcomes={"result": "y"})
    y = case.accepts("result", lambda: jax.numpy.imag(bridge.placed(x, bridge.named_sharding(mesh, ("a",)))))
    check_layout(case, y, Layout(mesh, ("a",), x.shape), np.zeros(4, np.float32), what="result")


@bridge.needs_devices(2, "to shard over two devices")
def test_eager_erf_keeps_its_operands_layout():
    """lax.erf(x) of x float32[4] committed over two devices as P('a') is laid out as x, as every
    other elementwise operation's result is (the jax.Array tutorial: an elementwise operation's
    output is sharded as its input; found by the vocabulary's lax.erf: its result comes back
    replicated)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.array([0.0, 0.25, 0.5, 1.0], np.float32)
    case = scripted_case("lax.erf(x) of x float32[4] on P('a')", ["y = jax.lax.erf(x)", "print(y.sharding)"],
                         meshes={"mesh": mesh}, placed={"x": (x, ("a",))}, outcomes={"result": "y"})
    y = case.accepts("result", lambda: jax.lax.erf(bridge.placed(x, bridge.named_sharding(mesh, ("a",)))))
    check_layout(case, y, Layout(mesh, ("a",), x.shape), what="result")


@bridge.needs_devices(2, "to shard over two devices")
def test_mulhi_of_a_sharded_operand():
    """lax.mulhi(x, x) of x int32[2] committed over two devices as P('a') returns the high halves of
    the 64-bit products, as it does unsharded (found by the vocabulary's lax.mulhi: the partitioned
    program fails to compile, "Unable to convert MHLO to StableHLO")."""
    compat.parameters("jax.lax.mulhi")
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.array([3, -(2 ** 30)], np.int32)
    expected = ((x.astype(np.int64) * x.astype(np.int64)) >> 32).astype(np.int32)
    case = scripted_case("lax.mulhi(x, x) of x int32[2] on P('a')", ["y = jax.lax.mulhi(x, x)"],
                         meshes={"mesh": mesh}, placed={"x": (x, ("a",))}, outcomes={"result": "y"})
    y = case.accepts("result", lambda: jax.lax.mulhi(*[bridge.placed(x, bridge.named_sharding(mesh, ("a",)))] * 2))
    case.same_bits("result", np.asarray(y), expected)


@explicit_only
@bridge.needs_devices(2, "to shard over two devices")
def test_explicit_igamma_of_a_cut_and_a_replicated_operand():
    """On an Explicit mesh of two devices, lax.igamma(a, x) of a float32[2] cut P('a') and x
    replicated is typed as any elementwise operation of them (the cut operand's spec wins) and
    equals the unsharded run (found by the vocabulary's lax.igamma: its implementation's select of
    differently sharded values raises ShardingTypeError, as jnp.where did, jax-ml/jax#37853)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    a, x = np.array([1.5, 2.5], np.float32), np.array([1.0, 3.0], np.float32)
    expected = np.asarray(jax.lax.igamma(a, x))  # the unsharded run, on one device
    case = scripted_case("lax.igamma(a, x) of a float32[2] on P('a'), x on P(), Explicit mesh",
                         meshes={"mesh": mesh}, axis_type="Explicit", placed={"a": (a, ("a",)), "x": (x, ())},
                         in_context=["call = lambda: jax.lax.igamma(a, x)"], outcomes={"result": "call()"})
    jmesh, namespace = explicit_namespace(mesh, {"a": (a, ("a",)), "x": (x, ())})
    with compat.mesh_context(jmesh, "Explicit"):
        result = case.accepts("result", lambda: eval("lax.igamma(a, x)", namespace))
    case.close("result", np.asarray(result), expected, rtol=0, atol=0)
    check_layout(case, result, Layout(mesh, ("a",), a.shape), what="result")


@explicit_only
@bridge.needs_devices(2, "to shard over two devices")
def test_explicit_vmap_of_a_loop_over_a_constant_carry():
    """On an Explicit mesh of two devices, jax.vmap of lax.fori_loop(0, 2, lambda i, c: c + q,
    np.float32(0)) over q float32[4] cut P('a') equals 2 * q, laid out P('a') (found by the
    vocabulary's jnp.searchsorted with its method 'scan', which digitize, interp and the histograms
    go through, from 0.10.2 on: the loop's batching rule puts the vmapped mesh axis on the constant
    carry's sharding over an empty mesh, "Resource axis: a of P('a',) is not found in mesh: ()")."""
    mesh = bridge.first_devices_mesh(("a", 2))
    q = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    source = "jax.vmap(lambda v: lax.fori_loop(0, 2, lambda i, c: c + v, np.float32(0)))(q)"
    case = scripted_case(f"{source} of q float32[4] on P('a'), Explicit mesh", meshes={"mesh": mesh},
                         axis_type="Explicit", placed={"q": (q, ("a",))}, in_context=[f"call = lambda: {source}"],
                         outcomes={"result": "call()"})
    jmesh, namespace = explicit_namespace(mesh, {"q": (q, ("a",))})
    with compat.mesh_context(jmesh, "Explicit"):
        result = case.accepts("result", lambda: eval(source, namespace))
    case.close("result", np.asarray(result), q + q, rtol=0, atol=0)
    check_layout(case, result, Layout(mesh, ("a",), q.shape), what="result")


@explicit_only
@bridge.needs_devices(2, "to shard over two devices")
def test_explicit_vectorize_of_a_cut_and_a_replicated_operand():
    """On an Explicit mesh of two devices, jnp.vectorize(lambda a, b: a * b - a)(x, y) of x float32[4]
    cut P('a') and y replicated equals x * y - x, typed as that expression is, P('a') (found by the
    vocabulary's jnp.vectorize, matvec, vecmat, vecdot and piecewise: vectorize vmaps the operands as
    they are, and vmap refuses mapped dimensions sharded differently with a ValueError)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x, y = np.array([0.0, 1.0, 2.0, 3.0], np.float32), np.array([2.0, 3.0, 4.0, 5.0], np.float32)
    case = scripted_case("jnp.vectorize(lambda a, b: a * b - a)(x, y) of x float32[4] on P('a'), y on P(), "
                         "Explicit mesh", meshes={"mesh": mesh}, axis_type="Explicit",
                         placed={"x": (x, ("a",)), "y": (y, ())},
                         in_context=["call = lambda: jnp.vectorize(lambda a, b: a * b - a)(x, y)"],
                         outcomes={"result": "call()"})
    jmesh, namespace = explicit_namespace(mesh, {"x": (x, ("a",)), "y": (y, ())})
    with compat.mesh_context(jmesh, "Explicit"):
        result = case.accepts("result", lambda: eval("jnp.vectorize(lambda a, b: a * b - a)(x, y)", namespace))
    case.close("result", np.asarray(result), x * y - x, rtol=0, atol=0)
    check_layout(case, result, Layout(mesh, ("a",), x.shape), what="result")


@explicit_only
@bridge.needs_devices(2, "to shard over two devices")
def test_explicit_argpartition_off_the_partitioned_dimension():
    """On an Explicit mesh of two devices, jnp.argpartition(x, 3, axis=0) of x float32[12, 2] cut
    P(None, 'a') (off the partitioned dimension) gives indices that partition each column (the 3
    smallest, in any order, then the 4th smallest, then the rest), as jnp.argsort of the same x does
    (found by the vocabulary's jnp.argpartition: its proxy lax.full(x.shape, 1.0) is built
    replicated and vmapped with the cut top_k indices, which vmap refuses with a ValueError)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    x = np.arange(24, dtype=np.float32)[::-1].reshape(2, 12).T.copy()  # (each column descending)
    k, ordered = 3, np.sort(x, axis=0)
    case = scripted_case("jnp.argpartition(x, 3, axis=0) of x float32[12, 2] on P(None, 'a'), Explicit mesh",
                         meshes={"mesh": mesh}, axis_type="Explicit", placed={"x": (x, (None, "a"))},
                         in_context=["call = lambda: jnp.argpartition(x, 3, axis=0)"], outcomes={"result": "call()"})
    jmesh, namespace = explicit_namespace(mesh, {"x": (x, (None, "a"))})
    with compat.mesh_context(jmesh, "Explicit"):
        result = case.accepts("result", lambda: eval("jnp.argpartition(x, 3, axis=0)", namespace))
    got = np.take_along_axis(x, np.asarray(result), axis=0)
    case.equal("result: the 3 smallest of each column, sorted", np.sort(got[:k], axis=0).tolist(),
               ordered[:k].tolist())
    case.equal("result: the 4th smallest of each column", got[k].tolist(), ordered[k].tolist())


@explicit_only
@bridge.needs_devices(2, "to shard over two devices")
def test_explicit_polyval_at_cut_points():
    """On an Explicit mesh of two devices, jnp.polyval(p, x) of coefficients p = [1, 2, 3] and
    points x int32[4] cut P('a') equals numpy's x**2 + 2x + 3, typed as x is, P('a') (an
    elementwise polynomial of a cut array; found by the vocabulary's jnp.polyval: its scan starts
    from lax.full_like(x, 0, shape=...), typed replicated, while its body's result is cut)."""
    mesh = bridge.first_devices_mesh(("a", 2))
    p, x = np.array([1, 2, 3], np.int32), np.arange(4, dtype=np.int32)
    case = scripted_case("jnp.polyval(p, x) of p int32[3] on P(), x int32[4] on P('a'), Explicit mesh",
                         meshes={"mesh": mesh}, axis_type="Explicit", placed={"p": (p, ()), "x": (x, ("a",))},
                         in_context=["call = lambda: jnp.polyval(p, x)"], outcomes={"result": "call()"})
    jmesh, namespace = explicit_namespace(mesh, {"p": (p, ()), "x": (x, ("a",))})
    with compat.mesh_context(jmesh, "Explicit"):
        result = case.accepts("result", lambda: eval("jnp.polyval(p, x)", namespace))
    case.equal("result", np.asarray(result).tolist(), np.polyval(p, x).tolist())
    check_layout(case, result, Layout(mesh, ("a",), x.shape), what="result")


@bridge.needs_devices(2, "to shard over two devices")
def test_reduce_and_of_an_integer_array_split_over_two_devices():
    """lax.reduce_and(x, (0,)) of x int32[6, 3] committed over two devices as P('a') equals numpy's
    bitwise and down the columns, as it does unsharded (found by the vocabulary's lax.reduce_and,
    reduce_or and reduce_xor of integers, and reduce_xor of bools: XLA:CPU cannot compile the
    all-reduce of a bitwise computation that the partitioner emits, "UNIMPLEMENTED: Unsupported
    reduction computation")."""
    compat.parameters("jax.lax.reduce_and")
    mesh = bridge.first_devices_mesh(("a", 2))
    x = (np.arange(18, dtype=np.int32).reshape(6, 3) % 7) | 2
    case = scripted_case("lax.reduce_and(x, (0,)) of x int32[6, 3] on P('a')", ["y = jax.lax.reduce_and(x, (0,))"],
                         meshes={"mesh": mesh}, placed={"x": (x, ("a",))}, outcomes={"result": "y"})
    y = case.accepts("result", lambda: jax.lax.reduce_and(bridge.placed(x, bridge.named_sharding(mesh, ("a",))), (0,)))
    case.same_bits("result", np.asarray(y), np.bitwise_and.reduce(x, axis=0))


@bridge.needs_devices(8, "to cut over one axis of a (4, 2) mesh")
def test_convolve_of_a_short_operand_cut_over_part_of_the_mesh():
    """jax.jit(jnp.convolve) of x float32[2] laid out P('b') on a (4, 2) mesh (replicated over 'a')
    and y float32[3] replicated, into P('b'), equals numpy's [1, 4, 7, 6], as it does unsharded
    (found by the vocabulary's jnp.convolve, correlate and polymul: XLA splits the convolution's
    window over 'b' and sums the partial results over all eight devices, not each pair along 'b',
    multiplying every value by the size of 'a')."""
    mesh = bridge.first_devices_mesh(("a", 4), ("b", 2))
    x, y = np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0, 3.0], np.float32)
    cut, whole = bridge.named_sharding(mesh, ("b",)), bridge.named_sharding(mesh, ())
    case = scripted_case("jax.jit(jnp.convolve) of x float32[2] on P('b'), y float32[3] on P(), into P('b'), "
                         "(a=4, b=2) mesh", ["f = jax.jit(jnp.convolve, in_shardings=(NamedSharding(mesh, P('b')), "
                                             "NamedSharding(mesh, P())), out_shardings=NamedSharding(mesh, P('b')))",
                                             "z = f(x, y)"],
                         meshes={"mesh": mesh}, placed={"x": (x, ("b",)), "y": (y, ())}, outcomes={"result": "z"})
    f = jax.jit(jax.numpy.convolve, in_shardings=(cut, whole), out_shardings=cut)
    z = case.accepts("result", lambda: f(bridge.placed(x, cut), bridge.placed(y, whole)))
    case.close("result", np.asarray(z), np.convolve(x, y), rtol=0, atol=0)
