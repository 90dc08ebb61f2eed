"""``jax.random`` on sharded keys and into sharded outputs: a draw (uniform, normal, bits, randint,
permutation, split, fold_in) jitted with drawn ``out_shardings``, from one key or from a batch of
distinct keys (placed with a drawn spec, drawn under vmap), equals the same draw unsharded on one
device as far as JAX promises it, and is laid out as the out_shardings ask. jax.random's module
docstring marks Threefry "identical across shardings" with ``jax_threefry_partitionable`` off and
on (the flag's default flipped to True in 0.5.0; ``compat.threefry_partitionable``), so both values
are drawn: the raw random bits it generates, "though numerical floating point differences could lead
to downstream differences in values coming out of float-producing random samplers" (a JAX maintainer
on that table, jax-ml/jax#15484; JAX's own test of it, tests/array_test.py::test_random_bits_is_pure_map,
compares the bits, exactly). The sharded and the one-device draws are two compilations of one program,
which XLA may round differently: "JIT compilation does not guarantee bitwise exact outputs" (a JAX
maintainer, jax-ml/jax#26147). So a draw of an integer or unsigned dtype (bits, randint, permutation,
split's key data) must match bit for bit, and a floating-point draw (uniform, normal, normal after
fold_in) within the tolerance JAX's own test harness allows two compilations of one function
(``compare_compilations`` and ``COMPILATION_TOLERANCE`` of conformance/checking/tolerance.py, as
suites/test_random_samplers.py compares its draws); typed keys (``jax.random.wrap_key_data``, the
type ``jax.random.key`` makes) and raw uint32 keys (as ``PRNGKey`` makes) both. Bounds JAX documents
(uniform in [minval, maxval), randint in [minval, maxval), a permutation permutes) are checked
against numpy."""

from dataclasses import dataclass
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance.checking.layouts import check_layout
from conformance.checking.repro import describe_mesh, scripted_case, spec_literal
from conformance.checking.tolerance import compare_compilations
from conformance.jaxside import bridge, compat
from conformance.model.layout import Layout, MeshModel, Spec
from strategies import cutting_meshes, cutting_specs, dividing_specs

pytestmark = pytest.mark.random
DEVICES = bridge.live_device_ids()
# Threefry programs are slow to compile (0.2-0.6 s each on CPU, six times the other suites' programs;
# two an example: the sharded one and the unsharded one): one property, single keys and batches of
# keys in turn, with half the examples of the other suites' properties, scaling with the profile.
EXAMPLES = max(5, settings().max_examples // 20)


@dataclass(frozen=True)
class Sampler:
    """A draw from a key into an array of ``shape`` (its JAX source: a lambda of ``key, shape``),
    the trailing dimensions its result adds to ``shape``, and what numpy checks of its values."""

    name: str
    source: str
    extra_dims: tuple = ()
    bounds: tuple = ()       # [low, high) that every value lies in, where JAX documents one
    permutes: bool = False   # the result permutes the rows of arange(size).reshape(shape)


SAMPLERS = (
    Sampler("uniform", "lambda key, shape: jax.random.uniform(key, shape, minval=-2.0, maxval=3.0)",
            bounds=(-2.0, 3.0)),
    Sampler("normal", "lambda key, shape: jax.random.normal(key, shape)"),
    Sampler("bits", "lambda key, shape: jax.random.bits(key, shape)"),
    Sampler("randint", "lambda key, shape: jax.random.randint(key, shape, -50, 1000)", bounds=(-50, 1000)),
    Sampler("permutation", "lambda key, shape: jax.random.permutation(key, jnp.arange(int(np.prod(shape)), "
            "dtype=jnp.int32).reshape(shape), axis=0)", permutes=True),
    Sampler("split", "lambda key, shape: jax.random.key_data(jax.random.split(key, shape))", extra_dims=(2,)),
    Sampler("fold_in", "lambda key, shape: jax.random.normal(jax.random.fold_in(key, 7), shape)"),
)
# A key from its two uint32 words: typed (jax.random.wrap_key_data, the key type jax.random.key makes)
# or raw (the uint32[2] array jax.random.PRNGKey makes), as a script spells it and as a function.
KEY_SOURCES = {"typed": "jax.random.wrap_key_data({})", "raw": "jnp.asarray({})"}
KEYS = {"typed": lambda data: jax.random.wrap_key_data(data), "raw": lambda data: jnp.asarray(data)}


@dataclass(frozen=True)
class Draw:
    """One example: a sampler, the key kind and data (uint32[2], or [batch, 2] for a batch of
    distinct keys), the flag's value, a mesh, the per-key shape,
    the batch (0: one key), the keys' spec (a batch only) and the output's spec."""

    sampler: Sampler
    key_kind: str
    data: np.ndarray
    partitionable: bool
    mesh: MeshModel
    shape: tuple
    batch: int
    key_spec: Spec
    out_spec: Spec

    @property
    def out_shape(self) -> tuple:
        return ((self.batch,) if self.batch else ()) + self.shape + self.sampler.extra_dims


def check_values(case, what: str, sampler: Sampler, got: np.ndarray, shape: tuple) -> None:
    """numpy's checks of one key's draw: documented bounds, and that a permutation permutes."""
    if sampler.bounds:
        low, high = sampler.bounds
        case.true(f"{what}: every value in [{low}, {high})", bool(np.all((got >= low) & (got < high))))
    if sampler.permutes:
        rows = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
        case.true(f"{what}: the rows of arange permuted", np.array_equal(np.sort(got, axis=0), rows))


@st.composite
def single_key_draws(draw) -> Draw:
    """A sampler, key kind, key data and flag value; a shape of rank 1 or 2 with sides from (2, 4, 1,
    8); a mesh that cuts it where the devices allow; an output spec that cuts it where possible."""
    sampler = draw(st.sampled_from(SAMPLERS))
    shape = tuple(draw(st.lists(st.sampled_from((2, 4, 1, 8)), min_size=1, max_size=2)))
    mesh = draw(cutting_meshes(DEVICES, shape, max_axes=2))
    return Draw(sampler, draw(st.sampled_from(tuple(KEY_SOURCES))), draw(key_data(())),
                draw(st.booleans()), mesh, shape, 0, (), draw(cutting_specs(mesh, shape, where_possible=True)))


def key_data(batch: tuple) -> st.SearchStrategy:
    """The uint32 words of a key, or of a batch of keys all distinct (``batch``: () or (n,))."""
    return hnp.arrays(np.uint32, (*batch, 2), elements=st.integers(0, 2**32 - 1), unique=bool(batch))


def sampler_function(sampler: Sampler, shape: tuple):
    f = bridge.function_of(sampler.source)
    return lambda key: f(key, shape)


def check_random_draw_into_sharded_outputs(example: Draw, excuses) -> None:
    """The oracle (the draw jitted unsharded, within numpy's bounds) outside every excuse context,
    then the draw jitted with out_shardings against it inside the example's way."""
    sampler, s = example.sampler, lambda spec: f"NamedSharding(mesh, {spec_literal(spec)})"
    call = f"jax.jit(lambda key: ({sampler.source})(key, {example.shape}), out_shardings={s(example.out_spec)})"
    case = scripted_case(
        f"{call} on {describe_mesh(example.mesh)}, key {KEY_SOURCES[example.key_kind].format(example.data.tolist())}, "
        f"jax_threefry_partitionable={example.partitionable}",
        [compat.THREEFRY_PARTITIONABLE_SOURCE.format(example.partitionable),
         f"key = {KEY_SOURCES[example.key_kind].format('data')}",
         f"f = lambda key: ({sampler.source})(key, {example.shape})",
         f"sharded, unsharded = jax.jit(f, out_shardings={s(example.out_spec)})(key), jax.jit(f)(key)",
         "print(sharded, unsharded, sep='\\n')"],
        meshes={"mesh": example.mesh}, arrays={"data": example.data},
        outcomes={"the jitted draw": "sharded", "np.asarray of the jitted draw": "np.asarray(sharded)",
                  "the unsharded draw": "unsharded", "the jitted draw vs the unsharded draw": "sharded",
                  "the unsharded draw:": "unsharded", "result": "sharded"})
    f = sampler_function(sampler, example.shape)
    key = KEYS[example.key_kind](example.data)
    with case.oracle():  # (one device, the default one: the key is not committed to any)
        expected = np.asarray(case.accepts("the unsharded draw", lambda: jax.jit(f)(key)))
        check_values(case, "the unsharded draw", sampler, expected, example.shape)
    with excuses.way(lambda failure: localized(example, failure)):
        g = jax.jit(f, out_shardings=bridge.named_sharding(example.mesh, example.out_spec))
        result = case.accepts("the jitted draw", lambda: g(key))
        got = case.accepts("np.asarray of the jitted draw", lambda: np.asarray(result))
        compare_compilations(case, "the jitted draw vs the unsharded draw", got, expected)
        check_layout(case, result, Layout(example.mesh, example.out_spec, example.out_shape), what="result")


@st.composite
def batched_key_draws(draw) -> Draw:
    """As ``single_key_draws``, but from a batch of 2, 4 or 8 distinct keys laid out by a
    spec that cuts the batch where the mesh allows, each key drawing an array of rank 0 or 1 (sides
    from (1, 2, 4)) under vmap; the output's spec divides (batch, *shape)."""
    sampler = draw(st.sampled_from(SAMPLERS))
    batch = draw(st.sampled_from((4, 2, 8)))
    shape = tuple(draw(st.lists(st.sampled_from((2, 1, 4)), min_size=1 if sampler.permutes else 0, max_size=1)))
    mesh = draw(cutting_meshes(DEVICES, (batch,), max_axes=2))
    key_spec = draw(cutting_specs(mesh, (batch,), where_possible=True))
    out_shape = (batch, *shape, *sampler.extra_dims)
    return Draw(sampler, draw(st.sampled_from(tuple(KEY_SOURCES))), draw(key_data((batch,))),
                draw(st.booleans()), mesh, shape, batch, key_spec,
                draw(dividing_specs(mesh, out_shape[:1 + len(shape)])))


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=st.one_of(single_key_draws(), batched_key_draws()))
def test_random_draws_into_sharded_outputs_equal_the_unsharded_draws(example, excuses):
    """A jax.random draw jitted with out_shardings, from one key or under vmap from a batch of keys
    placed with a spec, equals the same draw unsharded on one device (with jax_threefry_partitionable
    off or on; bit for bit where it is of an integer or unsigned dtype, within the tolerance JAX
    allows two compilations of one function where it is floating-point), laid out as asked."""
    check = check_random_draws_from_sharded_keys if example.batch else check_random_draw_into_sharded_outputs
    with compat.threefry_partitionable(example.partitionable):
        check(example, excuses)


class Localized:
    """A drawn example with the ``values`` a known deviation's ``where`` reads in place of the
    failed check's: its Threefry bits, unsharded and jitted as the draw was, where they differ;
    None where they agree (what goes wrong is then the sampler's values, which the ``where`` reads
    from the failed check)."""

    def __init__(self, example: Draw, values: Optional[tuple]):
        self.example, self.values = example, values

    def __getattr__(self, name):
        return getattr(self.example, name)


def localized(example: Draw, failure: BaseException) -> list:
    """What a failing draw's entries are asked about: the example, with the step under every
    sampler, ``jax.random.bits`` of the same keys into the same output shape and layout, run
    unsharded and jitted as the draw was (whether the Threefry bits go wrong, or only what the
    sampler makes of them); the example alone where that raises."""
    keys = KEYS[example.key_kind](example.data)
    sharding = bridge.named_sharding(example.mesh, example.out_spec)
    try:
        with compat.threefry_partitionable(example.partitionable):
            if example.batch:
                raw = example.key_kind == "raw"
                key_spec = tuple(example.key_spec) + ((None,) if raw and example.key_spec else ())
                f = jax.vmap(lambda key: jax.random.bits(key, example.out_shape[1:]))
                placed = bridge.placed(keys, bridge.named_sharding(example.mesh, key_spec))
            else:
                f, placed = (lambda key: jax.random.bits(key, example.out_shape)), keys
            values = np.asarray(jax.jit(f)(keys)), np.asarray(jax.jit(f, out_shardings=sharding)(placed))
    except Exception as e:  # noqa: BLE001 - the bits could not be drawn: the example alone is asked about
        failure.add_note(f"the draw's Threefry bits could not be drawn to localize it ({type(e).__name__})")
        return [example]
    same = values[0].tobytes() == values[1].tobytes()
    failure.add_note(f"localized: the draw's Threefry bits (jax.random.bits into the same layout) are "
                     f"{'right: what goes wrong is what the sampler makes of them' if same else 'wrong'}")
    return [Localized(example, None if same else values)]


def check_random_draws_from_sharded_keys(example: Draw, excuses) -> None:
    """The oracle (the vmapped draws jitted unsharded, each within numpy's bounds) outside every
    excuse context, then the draws from the placed keys jitted with out_shardings against it
    inside the example's way."""
    sampler, s = example.sampler, lambda spec: f"NamedSharding(mesh, {spec_literal(spec)})"
    raw = example.key_kind == "raw"
    key_spec = tuple(example.key_spec) + ((None,) if raw and example.key_spec else ())
    call = (f"jax.jit(jax.vmap(lambda key: ({sampler.source})(key, {example.shape})), out_shardings="
            f"{s(example.out_spec)}) of keys {KEY_SOURCES[example.key_kind].format(example.data.tolist())}, "
            f"placed {spec_literal(key_spec)}")
    case = scripted_case(
        f"{call} on {describe_mesh(example.mesh)}, jax_threefry_partitionable={example.partitionable}",
        [compat.THREEFRY_PARTITIONABLE_SOURCE.format(example.partitionable),
         f"keys = {KEY_SOURCES[example.key_kind].format('data')}",
         f"f = lambda key: ({sampler.source})(key, {example.shape})",
         f"sharded = jax.jit(jax.vmap(f), out_shardings={s(example.out_spec)})(jax.device_put(keys, {s(key_spec)}))",
         "unsharded = jax.jit(jax.vmap(f))(keys)",
         "print(sharded, unsharded, sep='\\n')"],
        meshes={"mesh": example.mesh}, arrays={"data": example.data},
        outcomes={"placing the keys": f"jax.device_put(keys, {s(key_spec)})", "the jitted draw": "sharded",
                  "np.asarray of the jitted draw": "np.asarray(sharded)", "the unsharded draws": "unsharded",
                  "the jitted draw vs the unsharded draws": "sharded", "result": "sharded"})
    f = sampler_function(sampler, example.shape)
    keys = KEYS[example.key_kind](example.data)
    with case.oracle():  # JAX states that vmap over Threefry keys is exact: the unsharded vmap is each key's own draw
        expected = np.asarray(case.accepts("the unsharded draws", lambda: jax.jit(jax.vmap(f))(keys)))
        for i, row in enumerate(expected):
            check_values(case, f"the unsharded draws, key {i}", sampler, row, example.shape)
    with excuses.way(lambda failure: localized(example, failure)):
        placed = case.accepts("placing the keys",
                              lambda: bridge.placed(keys, bridge.named_sharding(example.mesh, key_spec)))
        g = jax.jit(jax.vmap(f), out_shardings=bridge.named_sharding(example.mesh, example.out_spec))
        result = case.accepts("the jitted draw", lambda: g(placed))
        got = case.accepts("np.asarray of the jitted draw", lambda: np.asarray(result))
        compare_compilations(case, "the jitted draw vs the unsharded draws", got, expected)
        check_layout(case, result, Layout(example.mesh, example.out_spec, example.out_shape), what="result")


def test_threefry_partitionable_defaults_as_the_changelog_states():
    """jax_threefry_partitionable is on by default from JAX 0.5.0 and off before, as JAX's changelog
    states (unless the environment sets JAX_THREEFRY_PARTITIONABLE)."""
    import os
    if "JAX_THREEFRY_PARTITIONABLE" in os.environ:
        pytest.skip("JAX_THREEFRY_PARTITIONABLE is set in the environment: the flag is not at its default")
    case = scripted_case("jax.config.jax_threefry_partitionable",
                         ["print(jax.config.jax_threefry_partitionable)"],
                         outcomes={"jax_threefry_partitionable": "jax.config.jax_threefry_partitionable"})
    case.equal("jax_threefry_partitionable", compat.threefry_partitionable_setting(),
               compat.THREEFRY_PARTITIONABLE_DEFAULT)


# --- deterministic reproductions of what the property above found -------------------------------


def check_a_jitted_draw_against_the_unsharded_one(draw: str, mesh, data: np.ndarray, key_kind: str,
                                                 partitionable: bool, bits: str = "") -> None:
    """``jax.jit(lambda key: <draw>, out_shardings=P('a'))`` of the key made from ``data``
    (``key_kind``) on ``mesh``, with jax_threefry_partitionable as given, against the same draw
    jitted unsharded (``compare_compilations``: bit for bit for an integer or unsigned draw); with
    ``bits`` (the ``jax.random.bits`` draw under a float ``draw``, of the same key into the same
    layout), those first, bit for bit."""
    checks = [("the jitted bits vs the unsharded bits", bits)] if bits else []
    checks.append(("the jitted draw vs the unsharded draw", draw))
    sharded = lambda d: f"jax.jit(lambda key: {d}, out_shardings=NamedSharding(mesh, P('a')))(key)"
    case = scripted_case(f"{sharded(draw)} with jax_threefry_partitionable={partitionable} on {describe_mesh(mesh)}, "
                         f"key {data.tolist()}",
                         [compat.THREEFRY_PARTITIONABLE_SOURCE.format(partitionable),
                          f"key = {KEY_SOURCES[key_kind].format('data')}",
                          *(f"print({sharded(d)}, jax.jit(lambda key: {d})(key))" for _, d in checks)],
                         meshes={"mesh": mesh}, arrays={"data": data},
                         outcomes={what: sharded(d) for what, d in checks})
    for what, d in checks:
        f = bridge.function_of(f"lambda key: {d}")
        with compat.threefry_partitionable(partitionable):
            key = KEYS[key_kind](data)
            got = jax.jit(f, out_shardings=bridge.named_sharding(mesh, ("a",)))(key)
            expected = np.asarray(jax.jit(f)(key))
        compare_compilations(case, what, np.asarray(got), expected)


@bridge.needs_devices(4, "for a 2x2 mesh")
def test_non_partitionable_draw_into_a_partially_replicated_output():
    """With jax_threefry_partitionable off, jax.random.bits(key, (4,)) jitted with out_shardings
    P('a') on a 2x2 mesh (each block held by two devices) equals the unsharded draw."""
    check_a_jitted_draw_against_the_unsharded_one("jax.random.bits(key, (4,))",
                                                  bridge.first_devices_mesh(("a", 2), ("b", 2)),
                                                  np.array([0, 3], np.uint32), "raw", False)  # (jax.random.PRNGKey(3))


@bridge.needs_devices(8, "for eight shards")
def test_a_normal_draw_into_eight_shards_has_the_unsharded_bits():
    """With jax_threefry_partitionable on, jax.random.normal(key, (8,)) jitted with out_shardings
    P('a') over eight devices draws the random bits of the unsharded draw, bit for bit, and normal
    values within the tolerance JAX allows two compilations of one function (found on 0.8.1 by the
    release matrix, seed 3442758830: element 2 two ulps off, from equal bits, on 0.7.0-0.8.1)."""
    check_a_jitted_draw_against_the_unsharded_one("jax.random.normal(key, (8,))", bridge.first_devices_mesh(("a", 8)),
                                                  np.array([1411, 1596981141], np.uint32), "typed", True,
                                                  bits="jax.random.bits(key, (8,))")


def check_vmapped_draws_of_cut_keys_against_the_unsharded_ones(draw: str, bits: str, data: np.ndarray,
                                                              partitionable: bool) -> None:
    """``jax.jit(<bits>, out_shardings=P())`` of the typed keys made from ``data`` placed P('a')
    over eight devices, with jax_threefry_partitionable as given, against the same bits jitted
    unsharded, bit for bit (``bits``: the ``jax.random.bits`` draws under the float ``draw``); then
    ``draw`` so, against the same draws jitted unsharded (``compare_compilations``)."""
    mesh = bridge.first_devices_mesh(("a", 8))
    checks = [("the jitted bits vs the unsharded bits", bits), ("the jitted draws vs the unsharded draws", draw)]
    sharded = lambda d: (f"jax.jit({d}, out_shardings=NamedSharding(mesh, P()))"
                         f"(jax.device_put(keys, NamedSharding(mesh, P('a'))))")
    case = scripted_case(f"{sharded(draw)} with jax_threefry_partitionable={partitionable} on {describe_mesh(mesh)}, "
                         f"keys {data.tolist()}",
                         [compat.THREEFRY_PARTITIONABLE_SOURCE.format(partitionable),
                          f"keys = {KEY_SOURCES['typed'].format('data')}",
                          *(f"print({sharded(d)}, jax.jit({d})(keys))" for _, d in checks)],
                         meshes={"mesh": mesh}, arrays={"data": data},
                         outcomes={what: sharded(d) for what, d in checks})
    for what, d in checks:
        f = bridge.function_of(d)
        with compat.threefry_partitionable(partitionable):
            keys = KEYS["typed"](data)
            got = jax.jit(f, out_shardings=bridge.named_sharding(mesh, ()))(
                bridge.placed(keys, bridge.named_sharding(mesh, ("a",))))
            expected = np.asarray(jax.jit(f)(keys))
        compare_compilations(case, what, np.asarray(got), expected)


@bridge.needs_devices(8, "for eight shards")
def test_normal_draws_of_eight_keys_split_eight_ways_have_the_unsharded_bits():
    """jax.vmap(lambda key: jax.random.normal(jax.random.fold_in(key, 7), ())) jitted with
    out_shardings P() of eight keys placed P('a') over eight devices draws the random bits of the
    same draws jitted unsharded, bit for bit, and normal values within the tolerance JAX allows two
    compilations of one function, jax_threefry_partitionable off (found on 0.7.0 by the release
    matrix, seed 2600034720: element 7 one ulp off, from equal bits, on 0.7.0-0.8.1)."""
    data = np.array([[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11], [12, 13], [3473, 2878368095]], np.uint32)
    check_vmapped_draws_of_cut_keys_against_the_unsharded_ones(
        "jax.vmap(lambda key: jax.random.normal(jax.random.fold_in(key, 7), ()))",
        "jax.vmap(lambda key: jax.random.bits(jax.random.fold_in(key, 7), ()))", data, False)


@bridge.needs_devices(8, "for eight shards")
def test_partitionable_normal_draws_of_eight_keys_split_eight_ways_have_the_unsharded_bits():
    """jax.vmap(lambda key: jax.random.normal(key, (4,))) jitted with out_shardings P() of eight
    keys placed P('a') over eight devices draws the random bits of the same draws jitted unsharded,
    bit for bit, and normal values within the tolerance JAX allows two compilations of one
    function, jax_threefry_partitionable on (found on 0.12.0.1, seed 2273204870: element (3, 1) one
    ulp off, from equal bits, on 0.12.0 on: XLA:CPU's erf_inv of an (8, 4) array rounds otherwise
    than of a (1, 4) one)."""
    check_vmapped_draws_of_cut_keys_against_the_unsharded_ones(
        "jax.vmap(lambda key: jax.random.normal(key, (4,)))", "jax.vmap(lambda key: jax.random.bits(key, (4,)))",
        np.arange(16, dtype=np.uint32).reshape(8, 2), True)
