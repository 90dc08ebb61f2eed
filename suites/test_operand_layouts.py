"""Operand layouts an operation must see through, against numpy and the sharding-rule model:

* ``with_sharding_constraint`` whose spec leaves some dimensions ``PartitionSpec.UNCONSTRAINED``,
  under jit with ``in_shardings``: numpy's values, every constrained dimension laid out over the
  mesh axes it names (the unconstrained ones are JAX's choice, not compared); on an Explicit mesh
  such a spec is refused (``ValueError``, as JAX's NamedSharding states: no Auto axis to leave it to);
* reshapes that merge or split a sharded dimension: numpy's values, eager and under jit with
  in/out shardings (laid out as asked) on Auto meshes; on Explicit meshes, eager and jitted, the
  result laid out as the model's reshape rule says (``conformance/model/sharding_rules.py``, by
  the rules of the installed release) or the ``ShardingTypeError`` the model says JAX raises;
* ``lax.dot_general`` and ``jnp.einsum`` over drawn dimension numbers (0-1 batch, 1-2 contracting
  and 0-1 free dimensions per operand), contracting and batch dimensions mostly sharded: numpy's
  values (int32 operands in -8..8: the sums are exact), under jit with in/out shardings (laid out
  as asked) on Auto meshes; on Explicit meshes the result laid out as the model's dot_general /
  einsum rule says, or the ``ShardingTypeError`` it says JAX raises.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings

from conformance.checking.case import Case
from conformance.checking.layouts import check_layout
from conformance.checking.repro import describe_mesh, scripted_case, spec_literal
from conformance.jaxside import bridge, compat
from conformance.model import sharding_rules as rules
from conformance.model.layout import Layout, block_slices
from strategies.contractions import (Contraction, PartlyConstrained, Reshape, contraction_reference, contractions,
                                     partly_constrained, reshapes)

pytestmark = pytest.mark.operand_layouts
DEVICES = bridge.live_device_ids()
EXAMPLES = max(8, settings().max_examples // 10)
AXIS_TYPES = compat.mesh_axis_types()


def sharding_literal(spec) -> str:
    return f"NamedSharding(mesh, {spec_literal(spec)})"


def check_shards_hold(case: Case, array, expected: np.ndarray, what: str) -> None:
    """Every addressable shard of ``array`` holds ``expected[its block]``, bit for bit."""
    for view in bridge.shards(array):
        case.same_bits(f"{what} shard on device {view.device_id}", view.data, expected[block_slices(view.block)])


def in_context(mesh, axis_type: str, fn):
    """``fn()`` inside the mesh context an Explicit mesh needs (none for Auto)."""
    with compat.mesh_context(bridge.jax_mesh(mesh, axis_type), axis_type):
        return fn()


# --- with_sharding_constraint with UNCONSTRAINED dimensions ---------------------------------------
def unconstrained_literal(example: PartlyConstrained) -> str:
    entries = ["P.UNCONSTRAINED" if d in example.unconstrained else repr(e) for d, e in enumerate(example.spec)]
    return "P(" + ", ".join(entries) + ")"


def constrained_blocks(index_map: dict, dims) -> dict:
    """``{device: the (start, stop) of its block along each of dims}``."""
    return {device: tuple(block[d] for d in dims) for device, block in index_map.items()}


@compat.requires("PartitionSpec.UNCONSTRAINED")
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=partly_constrained(DEVICES, AXIS_TYPES))
def test_unconstrained_dimensions_leave_the_constrained_ones_as_asked(example, excuses):
    """A with_sharding_constraint whose spec leaves some dimensions UNCONSTRAINED, jitted with
    in_shardings, gives numpy's values and lays each constrained dimension out over the mesh axes
    its entry names (the device blocks along it are the model's); on an Explicit mesh such a spec
    is refused with ValueError, as JAX's NamedSharding states."""
    with excuses.way([example]):
        check_unconstrained_dimensions(example)


def check_unconstrained_dimensions(example: PartlyConstrained) -> None:
    x, mesh = example.x, example.mesh
    spec_text = unconstrained_literal(example)
    if example.axis_type == "Explicit":
        case = scripted_case(f"NamedSharding(Explicit mesh, {spec_text}); {describe_mesh(mesh)}", [],
                             meshes={"mesh": mesh}, axis_type="Explicit",
                             outcomes={"NamedSharding of a spec with UNCONSTRAINED on an Explicit mesh":
                                       f"NamedSharding(mesh, {spec_text})"})
        partly = compat.partly_unconstrained_spec(example.spec, example.unconstrained)
        case.rejects("NamedSharding of a spec with UNCONSTRAINED on an Explicit mesh",
                     lambda: jax.sharding.NamedSharding(bridge.jax_mesh(mesh, "Explicit"), partly),
                     compat.UNCONSTRAINED_ON_EXPLICIT_ERRORS)
        return
    dims = example.constrained
    got_blocks = (f"{{d.id: tuple(index[k].indices(n)[:2] for k, n in enumerate(y.shape) if k in {dims!r}) "
                  "for d, index in y.sharding.devices_indices_map(y.shape).items()}")
    call = (f"jax.jit(lambda x: with_sharding_constraint(x * 3 + 1, NamedSharding(mesh, {spec_text})), "
            f"in_shardings={spec_literal(example.in_spec)}); {describe_mesh(mesh)}; x int32{list(x.shape)}")
    case = scripted_case(call, [
        f"g = jax.jit(lambda x: jax.lax.with_sharding_constraint(x * 3 + 1, NamedSharding(mesh, {spec_text})), "
        f"in_shardings={sharding_literal(example.in_spec)})",
        f"y = g(jax.device_put(x, {sharding_literal(example.in_spec)}))",
        "print(y.sharding)",
    ], meshes={"mesh": mesh}, arrays={"x": x},
        outcomes={"jitted constraint": "y", "result": "y",
                  f"blocks along the constrained dimensions {dims}": got_blocks})
    constraint = jax.sharding.NamedSharding(bridge.jax_mesh(mesh),
                                            compat.partly_unconstrained_spec(example.spec, example.unconstrained))
    g = jax.jit(lambda x: jax.lax.with_sharding_constraint(x * 3 + 1, constraint),
                in_shardings=bridge.named_sharding(mesh, example.in_spec))
    y = case.accepts("jitted constraint", lambda: g(bridge.placed(x, bridge.named_sharding(mesh, example.in_spec))))
    expected = x * np.int32(3) + np.int32(1)
    case.same_bits("result", np.asarray(y), expected)
    check_shards_hold(case, y, expected, "result")
    asked = Layout(mesh, example.spec, x.shape)  # its unconstrained dimensions name no axis: whole blocks
    case.equal(f"blocks along the constrained dimensions {dims}",
               constrained_blocks(bridge.index_map(y.sharding, x.shape), dims),
               constrained_blocks(asked.blocks, dims), shows="layout")


@compat.requires("PartitionSpec.UNCONSTRAINED")
@bridge.needs_devices(2, "to cut the replicated dimension")
def test_a_replicated_dimension_beside_unconstrained_ones_is_replicated():
    """x int32[4, 4, 4] laid out P('a') and constrained to P(None, UNCONSTRAINED, UNCONSTRAINED) under
    jit comes back whole along dimension 0, as the constraint's None asks."""
    mesh = bridge.first_devices_mesh(("a", 2))
    check_unconstrained_dimensions(PartlyConstrained(mesh, "Auto", np.arange(64, dtype=np.int32).reshape(4, 4, 4),
                                                     ("a",), (None, None, None), (1, 2)))


@compat.requires("PartitionSpec.UNCONSTRAINED")
@bridge.needs_devices(8, "to cut dimension 0 over both axes of a (4, 2) mesh")
def test_a_dimension_constrained_to_one_of_its_axes_beside_unconstrained_ones_drops_the_other():
    """x int32[8, 4, 4] laid out P(('b', 'a')) on a (4, 2) mesh and constrained to P('b',
    UNCONSTRAINED, UNCONSTRAINED) under jit comes back split along dimension 0 over 'b' alone, as the
    constraint asks (found on 0.4.30 by the drawn constraints at the nightly profile)."""
    mesh = bridge.first_devices_mesh(("a", 4), ("b", 2))
    check_unconstrained_dimensions(PartlyConstrained(mesh, "Auto", np.arange(128, dtype=np.int32).reshape(8, 4, 4),
                                                     (("b", "a"),), (("b",), None, None), (1, 2)))


# --- reshapes that merge or split a sharded dimension -----------------------------------------------
@functools.lru_cache(maxsize=None)
def reshaping(new_shape):
    return lambda x: jnp.reshape(x, new_shape)


def reshape_model(example: Reshape):
    """The model's spec for the result on an Explicit mesh (``sharding_rules.reshape`` by the
    installed release's rule), or the reason it is ill-typed (a str)."""
    shape = example.x.shape
    try:
        return rules.reshape(example.mesh, shape, rules.canonical_spec(example.in_spec, len(shape)),
                             example.new_shape, deals_axes=compat.sharding_rule_set().reshape_deals_mesh_axes)
    except rules.IllTyped as e:
        return str(e)


@settings(max_examples=EXAMPLES,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # (excuses: see test_sharding_invariance)
@given(example=reshapes(DEVICES, AXIS_TYPES))
def test_reshape_across_a_sharded_dimension(example, excuses):
    """A reshape that merges or splits a sharded dimension gives numpy's values, eager and jitted;
    on an Auto mesh jitted with in/out shardings it is laid out as out_shardings asks; on an
    Explicit mesh (eager and jitted) it is laid out as the model's reshape rule says, or raises
    ShardingTypeError where the model says JAX refuses it."""
    x, mesh, axis_type = example.x, example.mesh, example.axis_type
    expected = x.reshape(example.new_shape)
    new = example.new_shape
    f = reshaping(new)
    put = lambda: bridge.placed(x, bridge.named_sharding(mesh, example.in_spec, axis_type))
    if axis_type == "Auto":
        jitted = f"jax.jit(lambda x: jnp.reshape(x, {new!r}), in_shardings={sharding_literal(example.in_spec)}, " \
                 f"out_shardings={sharding_literal(example.out_spec)})(xs)"
        case = scripted_case(
            f"jnp.reshape(x, {new}) ({example.kind} of dimensions {example.dims}), x int32{list(x.shape)} "
            f"{spec_literal(example.in_spec)}, out_shardings {spec_literal(example.out_spec)}; {describe_mesh(mesh)}",
            [f"xs = jax.device_put(x, {sharding_literal(example.in_spec)})",
             f"print('eager:', jnp.reshape(xs, {new!r}))", f"print('jit:', {jitted})"],
            meshes={"mesh": mesh}, arrays={"x": x},
            outcomes={"eager reshape": f"jnp.reshape(xs, {new!r})", "eager result": f"jnp.reshape(xs, {new!r})",
                      "jitted reshape": jitted, "jitted result": jitted})
        with excuses.way([example], mesh_kind=axis_type, example=example):
            eager = case.accepts("eager reshape", lambda: f(put()))
            case.same_bits("eager result", np.asarray(eager), expected)
            check_shards_hold(case, eager, expected, "eager result")
        g = jax.jit(f, in_shardings=bridge.named_sharding(mesh, example.in_spec),
                    out_shardings=bridge.named_sharding(mesh, example.out_spec))
        result = case.accepts("jitted reshape", lambda: g(put()))
        case.same_bits("jitted result", np.asarray(result), expected)
        check_layout(case, result, Layout(mesh, example.out_spec, new), x=expected, what="jitted result")
        return
    model = reshape_model(example)
    ways = {"eager": f"jnp.reshape(xs, {new!r})", "jitted": f"jax.jit(lambda x: jnp.reshape(x, {new!r}))(xs)"}
    case = scripted_case(
        f"jnp.reshape(x, {new}) ({example.kind} of dimensions {example.dims}), x int32{list(x.shape)} "
        f"{spec_literal(example.in_spec)}; Explicit {describe_mesh(mesh)}; the model says "
        f"{'ShardingTypeError: ' + model if isinstance(model, str) else spec_literal(model)}",
        [], meshes={"mesh": mesh}, axis_type="Explicit", arrays={"x": x},
        in_context=[f"xs = jax.device_put(x, {sharding_literal(example.in_spec)})",
                    *(f"print({way!r}, {source})" for way, source in ways.items())],
        outcomes={**{f"{way} reshape": source for way, source in ways.items()},
                  **{f"{way} result": source for way, source in ways.items()}})
    for way, run in (("eager", lambda: f(put())), ("jitted", lambda: jax.jit(f)(put()))):
        with excuses.way([example], mesh_kind=axis_type, example=example):
            if isinstance(model, str):
                case.rejects(f"{way} reshape", lambda: in_context(mesh, axis_type, run), compat.SHARDING_TYPE_ERRORS)  # noqa: B023 - called in this iteration
                event("reshape on an Explicit mesh: ShardingTypeError, as the model says")
                continue
            result = case.accepts(f"{way} reshape", lambda: in_context(mesh, axis_type, run))  # noqa: B023 - called in this iteration
            case.same_bits(f"{way} result", np.asarray(result), expected)
            check_layout(case, result, Layout(mesh, model, new), x=expected,
                         what=f"{way} result (the model's reshape rule)")


# --- dot_general and einsum over drawn dimension numbers ------------------------------------------
def contraction_source(c: Contraction) -> str:
    if c.spelling == "dot_general":
        return f"lambda x, y: lax.dot_general(x, y, {c.dimension_numbers!r})"
    return f"lambda x, y: jnp.einsum({c.subscripts!r}, x, y)"


def contraction_model(c: Contraction):
    """The model's spec for the result on an Explicit mesh (its dot_general rule; for einsum, the
    model's einsum route to it), or the reason it is ill-typed (a str)."""
    shapes = (c.x.shape, c.y.shape)
    specs = tuple(rules.canonical_spec(s, len(shape)) for s, shape in zip((c.lhs_spec, c.rhs_spec), shapes))
    if c.spelling == "dot_general":
        try:
            return rules.dot_general(specs[0], specs[1], c.contracting, c.batch,
                                     batch_specs_equal=compat.sharding_rule_set().batch_specs_equal)
        except rules.IllTyped as e:
            return str(e)
    verdict = rules.sharding_verdict("einsum", "contraction", shapes, specs, {"subscripts": c.subscripts}, c.mesh,
                                     rules=compat.sharding_rule_set())
    if isinstance(verdict, rules.Rejects):
        return verdict.reason
    assert isinstance(verdict, rules.Accepts) and verdict.out_spec is not None, verdict
    return verdict.out_spec


@settings(max_examples=EXAMPLES,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # (excuses: see test_sharding_invariance)
@given(example=contractions(DEVICES, AXIS_TYPES))
def test_contraction_over_sharded_dimensions(example, excuses):
    """lax.dot_general or jnp.einsum over drawn dimension numbers, its contracting and batch
    dimensions sharded, gives numpy's values; on an Auto mesh jitted with in/out shardings it is
    laid out as out_shardings asks; on an Explicit mesh, jitted, it is laid out as the model's
    dot_general rule says, or raises ShardingTypeError where the model says JAX refuses it."""
    c, mesh, axis_type = example, example.mesh, example.axis_type
    expected = contraction_reference(c)
    source = contraction_source(c)
    f = bridge.function_of(source)
    sharding = lambda spec: bridge.named_sharding(mesh, spec, axis_type)
    put = lambda: (bridge.placed(c.x, sharding(c.lhs_spec)), bridge.placed(c.y, sharding(c.rhs_spec)))
    placed = [f"xs = jax.device_put(x, {sharding_literal(c.lhs_spec)})",
              f"ys = jax.device_put(y, {sharding_literal(c.rhs_spec)})"]
    described = (f"{source} (x int32{list(c.x.shape)} {spec_literal(c.lhs_spec)}, y int32{list(c.y.shape)} "
                 f"{spec_literal(c.rhs_spec)}; letters {c.subscripts})")
    if axis_type == "Auto":
        jitted = (f"jax.jit({source}, in_shardings=({sharding_literal(c.lhs_spec)}, {sharding_literal(c.rhs_spec)}), "
                  f"out_shardings={sharding_literal(c.out_spec)})(xs, ys)")
        case = scripted_case(f"{described}, out_shardings {spec_literal(c.out_spec)}; {describe_mesh(mesh)}",
                             [*placed, f"print({jitted})"], meshes={"mesh": mesh}, arrays={"x": c.x, "y": c.y},
                             outcomes={"jitted contraction": jitted, "jitted result": jitted})
        g = jax.jit(f, in_shardings=(sharding(c.lhs_spec), sharding(c.rhs_spec)), out_shardings=sharding(c.out_spec))
        with excuses.way([example], mesh_kind=axis_type, example=example):
            result = case.accepts("jitted contraction", lambda: g(*put()))
            case.same_bits("jitted result", np.asarray(result), expected)
            check_layout(case, result, Layout(mesh, c.out_spec, expected.shape), x=expected, what="jitted result")
        return
    model = contraction_model(c)
    jitted = f"jax.jit({source})(xs, ys)"
    case = scripted_case(
        f"{described}; Explicit {describe_mesh(mesh)}; the model says "
        f"{'ShardingTypeError: ' + model if isinstance(model, str) else spec_literal(model)}",
        [], meshes={"mesh": mesh}, axis_type="Explicit", arrays={"x": c.x, "y": c.y},
        in_context=[*placed, f"print({jitted})"],
        outcomes={"jitted contraction": jitted, "jitted result": jitted})
    run = lambda: in_context(mesh, axis_type, lambda: jax.jit(f)(*put()))
    if isinstance(model, str):
        case.rejects("jitted contraction", run, compat.SHARDING_TYPE_ERRORS)
        event(f"{c.spelling} on an Explicit mesh: ShardingTypeError, as the model says")
        return
    result = case.accepts("jitted contraction", run)
    case.same_bits("jitted result", np.asarray(result), expected)
    check_layout(case, result, Layout(mesh, model, expected.shape), x=expected,
                 what="jitted result (the model's dot_general rule)")
