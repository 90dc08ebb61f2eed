"""The one place that knows how JAX versions differ.

Suites never look at ``jax.__version__``: they ask this module which error a rejection raises,
whether an API exists, and how to spell a call. Two rules decide:

- an API is looked for, never decided by version (``FEATURES``, grouped by subject): one a version
  lacks becomes a skip (``feature_missing``) whose reason names the API and the version it arrived
  in or went away in, and whose kind the run report records;
- a behaviour with no API to look for is decided by release, in one table
  (``behaviour_changes.toml`` beside this module: the range, the rule there and the rule before,
  what JAX said and how it was measured); each is a constant here of the same name.

Importing this module imports JAX, so the runner imports it only after it has set the platform
and device-count environment (see ``conformance.runner.devices``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Optional

import jax
import jaxlib
import pytest
from jax.experimental import multihost_utils
from jax.sharding import Mesh, PartitionSpec
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from conformance import toml_schema
from conformance.model import remat

JAX_VERSION = Version(jax.__version__)
JAXLIB_VERSION = Version(getattr(jaxlib, "__version__", None) or jaxlib.version.__version__)


def version_in(specifier: str) -> bool:
    """True when the installed JAX matches a PEP 440 specifier such as ``">=0.5.3,<0.7"``."""
    return SpecifierSet(specifier).contains(JAX_VERSION, prereleases=True)


def _lookup(path: str):
    """The object at a dotted path such as ``jax._src.named_sharding.DuplicateSpecError``, or None."""
    module, _, name = path.rpartition(".")
    try:
        with warnings.catch_warnings():  # looking an API up is not using it (0.6.x warns on access)
            warnings.simplefilter("ignore", DeprecationWarning)
            return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


# --- Behaviours decided by release (behaviour_changes.toml) -------------------------------------
BEHAVIOUR_CHANGES_FILE = Path(__file__).with_name("behaviour_changes.toml")
BEHAVIOUR_CHANGE_SCHEMA = toml_schema.Schema(
    table="change", holds="[[change]] tables", named_by="name",
    keys=tuple(toml_schema.Key(name, kind, required=name != "quote") for name, kind in (
        ("name", str), ("jax", str), ("rule", str), ("before", str), ("source", list), ("quote", str),
        ("measured", str))))
SOURCE_FORMS = ("https://", "jax-ml/jax tests/", "none stated", "not searched yet")


@dataclass(frozen=True)
class BehaviourChange:
    """A behaviour JAX changed by release: ``rule`` holds on the releases of ``jax``, ``before`` on
    the others; ``source`` is what JAX said, ``quote`` its words, ``measured`` how the range was
    found."""

    name: str
    jax: str
    rule: str
    before: str
    source: tuple
    quote: str
    measured: str

    @property
    def in_effect(self) -> bool:
        return version_in(self.jax)


def load_behaviour_changes(path: Path = BEHAVIOUR_CHANGES_FILE) -> Dict[str, BehaviourChange]:
    """The table by name; a malformed entry is a ValueError naming its ``file:line``."""
    changes: Dict[str, BehaviourChange] = {}
    for entry in toml_schema.read(path, BEHAVIOUR_CHANGE_SCHEMA, ValueError)[1]:
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", entry["name"]) or entry["name"] in changes:
            entry.refuse("needs a name of its own in capitals (compat's constant)", "name")
        try:
            SpecifierSet(entry["jax"])
        except InvalidSpecifier:
            entry.refuse(f"has an invalid jax range {entry['jax']!r}", "jax")
        if not all(isinstance(x, str) and x.startswith(SOURCE_FORMS) for x in entry["source"]):
            entry.refuse(f"has source = {entry['source']!r}: each one of {', '.join(SOURCE_FORMS)}", "source")
        changes[entry["name"]] = BehaviourChange(
            **{k: " ".join(entry.get(k).split()) for k in ("name", "jax", "rule", "before", "quote", "measured")},
            source=tuple(entry["source"]))
    return changes


BEHAVIOUR_CHANGES = load_behaviour_changes()


def in_effect(name: str) -> bool:
    """Whether the behaviour change ``name`` of the table holds on the installed JAX."""
    return BEHAVIOUR_CHANGES[name].in_effect


# --- Errors ---------------------------------------------------------------------------------
# An indivisible (non-congruent) shape: ValueError up to 0.9, IndivisibleError (a ValueError
# subclass) from 0.10.0. Catching ValueError covers both.
INDIVISIBLE_ERRORS: tuple = (ValueError,)

# A PartitionSpec that names an unknown axis or repeats one: ValueError; from 0.5.3 a repeated axis
# raises DuplicateSpecError, which is NOT a ValueError subclass.
_duplicate_spec_error = _lookup("jax._src.named_sharding.DuplicateSpecError") or _lookup(
    "jax._src.sharding_impls.DuplicateSpecError")
SPEC_ERRORS: tuple = (ValueError,) + ((_duplicate_spec_error,) if _duplicate_spec_error else ())


# An operation that Explicit mesh axes make ill-typed (e.g. a contraction over differently sharded
# dimensions) raises ShardingTypeError, where the version has Explicit sharding in types.
SHARDING_TYPE_ERRORS: tuple = tuple(e for e in (_lookup("jax._src.core.ShardingTypeError"),) if e)


# --- Features that come and go ---------------------------------------------------------------
@dataclass(frozen=True)
class Feature:
    """An API that exists only in some JAX versions, found by looking for it, not by version."""

    api: str
    path: str
    arrived: Optional[str] = None
    removed: Optional[str] = None
    present: Optional[Callable[[], bool]] = None  # a behaviour, not an attribute: whether it is there

    @property
    def obj(self):
        found = _lookup(self.path)
        return found if self.present is None or (found is not None and self.present()) else None

    @property
    def available(self) -> bool:
        return self.obj is not None

    @property
    def missing_kind(self) -> str:
        """"api-removed" (this JAX is too new for it) or "api-arrived" (too old)."""
        return "api-removed" if self.removed else "api-arrived"

    @property
    def missing_reason(self) -> str:
        if self.removed:
            return f"{self.api} removed in JAX {self.removed} (installed: {JAX_VERSION})"
        return f"{self.api} arrived in JAX {self.arrived} (installed: {JAX_VERSION})"


def feature_missing(missing: Feature) -> BaseException:
    """The skip of a test whose API this JAX lacks: pytest's own skip, its reason naming the API and
    the version, carrying ``feature`` (the run report records its ``missing_kind``)."""
    skip = pytest.skip.Exception(missing.missing_reason, _use_item_location=True)
    skip.feature = missing
    return skip


def pmap_is_shard_map() -> bool:
    """Whether jax.pmap runs as jit(shard_map): the default from 0.8.0 (the flag
    jax_pmap_shmap_merge, which a user may turn off), the only pmap from 0.10.0 (the flag is gone
    and jax._src.pmap holds it). Measured: flag False on 0.7.x, True on 0.8.0-0.9.2, absent with
    jax._src.pmap from 0.10.0, absent without it before 0.7."""
    merged = getattr(jax.config, "jax_pmap_shmap_merge", None)
    return bool(merged) if merged is not None else importlib.util.find_spec("jax._src.pmap") is not None


def _checkpoint_policy_feature(name: str) -> Feature:
    """The policy ``name`` of jax.checkpoint_policies (a namespace object, not a module: the feature
    looks the namespace up and checks that it holds the policy)."""
    return Feature(f"jax.checkpoint_policies.{name}", "jax.ad_checkpoint.checkpoint_policies",
                   arrived="0.4.30 or before",
                   present=lambda: hasattr(_lookup("jax.ad_checkpoint.checkpoint_policies"), name))


FEATURES = {
    # --- devices and meshes
    "num_cpu_devices": Feature("jax_num_cpu_devices", "jax._src.xla_bridge.num_cpu_devices", arrived="0.5.0"),
    "make_mesh": Feature("jax.make_mesh", "jax.make_mesh", arrived="0.4.32"),
    "set_mesh": Feature("jax.set_mesh", "jax.set_mesh", arrived="0.7.1"),
    # 0.5.0-0.5.2 have an enum AxisTypes (plural; 0.5.0 names its members Hidden, Visible and
    # Collective): what needs AxisType by name skips there.
    "AxisType": Feature("jax.sharding.AxisType", "jax.sharding.AxisType", arrived="0.5.3"),
    # --- shardings and specs
    "PositionalSharding": Feature("PositionalSharding", "jax.sharding.PositionalSharding", removed="0.7.0"),
    # a dimension left to the partitioner: measured present on every release, 0.4.30 to 0.12.0.1
    "PartitionSpec.UNCONSTRAINED": Feature("PartitionSpec.UNCONSTRAINED", "jax.sharding.PartitionSpec",
                                           arrived="0.4.30 or before",
                                           present=lambda: hasattr(PartitionSpec, "UNCONSTRAINED")),
    # --- sharding in types: Explicit axes, whose rejections raise ShardingTypeError. 0.5.3 has
    # AxisType.Explicit but not this error class (measured over the releases: present from 0.6.0).
    "explicit_sharding": Feature("Explicit-axis sharding in types (core.ShardingTypeError)",
                                 "jax._src.core.ShardingTypeError", arrived="0.6.0"),
    "typeof": Feature("jax.typeof", "jax.typeof", arrived="0.5.3"),
    # out_sharding= of jnp.einsum / lax.dot_general without a config: on 0.5.0 it raises
    # NotImplementedError "out_sharding only works when sharding_in_types config is True" (an
    # experimental flag, off by default; measured: the flag exists on 0.5.0 only)
    "out_sharding_without_a_config": Feature("out_sharding= without the experimental jax_sharding_in_types config",
                                             "jax.numpy.einsum", arrived="0.5.1",
                                             present=lambda: not hasattr(jax.config, "jax_sharding_in_types")),
    # jnp.asarray(..., device=): its signature has the parameter (measured in the inventories: absent
    # on 0.4.30, present from 0.4.31)
    "asarray_device": Feature("jax.numpy.asarray(device=)", "jax.numpy.asarray", arrived="0.4.31",
                              present=lambda: "device" in inspect.signature(_lookup("jax.numpy.asarray")).parameters),
    # the mesh in effect where code runs, whose manual_axes name a shard_map body's axes (measured
    # in the inventories: absent on 0.5.2, present from 0.5.3)
    # the trace a call runs under (EvalTrace when eager), which the run's API coverage reads to name
    # a call's context (conformance/runner/api_calls.py): measured absent on 0.4.35, present on 0.4.36,
    # 0.10.2 and 0.12.0.1; before it the context is read from the arguments' tracers
    "trace_context": Feature("jax._src.core.trace_ctx (the trace in effect)", "jax._src.core.trace_ctx",
                             arrived="0.4.36"),
    "get_abstract_mesh": Feature("jax.sharding.get_abstract_mesh", "jax.sharding.get_abstract_mesh",
                                 arrived="0.5.3"),
    # --- shard_map and pmap
    "jax.shard_map": Feature("jax.shard_map", "jax.shard_map", arrived="0.6.1"),
    # The varying manual axes of a value in a shard_map body (jax.typeof(x).vma), which check_vma
    # checks: with jax.shard_map (measured: absent on 0.6.0, present on 0.6.1).
    "vma": Feature("the varying manual axes of a value (jax.typeof(x).vma)", "jax.shard_map", arrived="0.6.1"),
    # shard_map manual over some mesh axes only (axis_names=...; the rest stay automatic). Before
    # 0.6.1 the experimental shard_map's auto= did this, documented as experimental: not tested.
    "partial_manual": Feature("jax.shard_map(axis_names=...) over a subset of the mesh axes",
                              "jax.shard_map", arrived="0.6.1"),
    # JAX's pmap migration guide: nesting pmaps "is no longer supported" once pmap is
    # jit(shard_map); shard_map over a mesh of several axes does what nested pmaps did.
    "nested_pmap": Feature("nested jax.pmap (replaced by shard_map over a multi-axis mesh)", "jax.pmap",
                           removed="0.8.0", present=lambda: not pmap_is_shard_map()),
    # --- jax.random: the jax_threefry_partitionable flag's context manager (Threefry that XLA can
    # partition without communication) and typed keys; measured present on every supported release
    "threefry_partitionable": Feature("jax.threefry_partitionable (the jax_threefry_partitionable flag's "
                                      "context manager)", "jax.threefry_partitionable", arrived="0.4.30 or earlier"),
    "typed_keys": Feature("jax.random.key (typed PRNG keys)", "jax.random.key", arrived="0.4.16"),
    # --- jax.checkpoint: checkpoint_name, print_saved_residuals and every policy the remat model
    # knows (conformance/model/remat.py POLICIES); measured present, with the same residual lines,
    # on every release from 0.4.30 to 0.12.0.1
    "checkpoint_name": Feature("jax.ad_checkpoint.checkpoint_name", "jax.ad_checkpoint.checkpoint_name",
                               arrived="0.4.30 or before"),
    "print_saved_residuals": Feature("jax.ad_checkpoint.print_saved_residuals",
                                     "jax.ad_checkpoint.print_saved_residuals", arrived="0.4.30 or before"),
    **{f"checkpoint_policies.{name}": _checkpoint_policy_feature(name) for name in remat.POLICIES},
    # --- compilation: JAX asks for every executable it runs (jit, pmap, shard_map, AOT compile;
    # then compiled by XLA or served by the persistent cache) through
    # jax._src.compiler.compile_or_get_cached(backend, module, devices, ...), which
    # jax/_src/interpreters/pxla.py calls by attribute: measured on 0.4.30, 0.7.0, 0.10.2 and
    # 0.12.0.1. The runner counts distinct programs and repeated requests there.
    "compile_requests": Feature("jax._src.compiler.compile_or_get_cached (the programs JAX asks for)",
                                "jax._src.compiler.compile_or_get_cached", arrived="0.4.30 or before"),
}


def feature(name: str):
    """The API behind ``name``; skips the calling test (``feature_missing``, naming the version)
    when it is missing."""
    f = FEATURES[name]
    obj = f.obj
    if obj is None:
        raise feature_missing(f)
    return obj


@functools.lru_cache(maxsize=None)
def _stored_inventories() -> tuple:
    """(release, its entries) of every stored inventory (conformance/jaxside/inventories/), read once."""
    import json
    return tuple((Version(path.stem[4:]), json.loads(path.read_text()).get("entries", {}))
                 for path in (Path(__file__).parent / "inventories").glob("jax-*.json"))


def _inventory_releases(entry: str, parameter: Optional[str] = None) -> tuple:
    """When ``entry`` (or its ``parameter``) arrived and when it left, as the stored inventories
    (conformance/jaxside/inventories/) list it, seen from the installed release: (the first release
    with it, or "a later release"; the first release after the installed one's last with it that
    lacks it, where the installed release comes after every release with it, else None)."""
    having, lacking = [], []
    for version, entries in _stored_inventories():
        has = entry in entries if parameter is None else \
            any(p[0] == parameter for p in entries.get(entry, {}).get("params", ()))
        (having if has else lacking).append(version)
    return _arrived_and_left(having, lacking)


def _arrived_and_left(having, lacking) -> tuple:
    """Of the stored releases that have something (``having``) and those that lack it, seen from the
    installed release: (the first with it, or "a later release"; the first after the installed one's
    last with it that lacks it, where the installed release comes after every release with it, else None)."""
    if not having:
        return "a later release", None
    gone = [v for v in lacking if v > max(having)]
    return str(min(having)), (str(min(gone)) if gone and JAX_VERSION > max(having) else None)


def _resolve(entry: str):
    """The object at a dotted path whose tail may be attributes (a class's method:
    ``jax.stages.Compiled.as_text``), or None."""
    parts = entry.split(".")
    for i in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            found = getattr(found, name, None)
        return found
    return None


@functools.lru_cache(maxsize=None)
def parameter_feature(entry: str, parameter: str) -> Feature:
    """The parameter ``parameter`` of the public callable ``entry`` (a dotted path; a method as
    ``jax.stages.Compiled.as_text``) as a feature: present where the installed JAX's signature has
    it (inspect.signature, as the inventory reads it)."""
    def present() -> bool:
        found = _resolve(entry)
        try:
            return found is not None and parameter in inspect.signature(found).parameters
        except (TypeError, ValueError):
            return False
    arrived, removed = _inventory_releases(entry, parameter)
    return Feature(f"{entry}({parameter}=)", "jax.__version__", arrived=arrived, removed=removed, present=present)


@functools.lru_cache(maxsize=None)
def entry_feature(entry: str) -> Feature:
    """The public callable ``entry`` (a dotted path, a method's included) as a feature, present
    where the installed JAX has it; its arrival and removal as the stored inventories list it."""
    arrived, removed = _inventory_releases(entry)
    return Feature(entry, "jax.__version__", arrived=arrived, removed=removed,
                   present=lambda: _resolve(entry) is not None)


@functools.lru_cache(maxsize=None)
def _stored_vocabularies() -> tuple:
    """(release, the set of its public functions as "jnp.<name>"/"lax.<name>") of every stored
    vocabulary list (``conformance.jaxside.vocabulary``), read once."""
    from conformance.jaxside import vocabulary
    return tuple((Version(release), frozenset(vocabulary.functions_of(listing)))
                 for release, listing in vocabulary.stored_lists().items())


@functools.lru_cache(maxsize=None)
def vocabulary_feature(name: str) -> Feature:
    """The public function ``name`` ("jnp.cumulative_sum", "lax.mulhi") as a feature, present where
    the installed JAX exports it; its arrival and removal as the stored vocabulary lists say."""
    short, function = name.split(".", 1)
    module = {"jnp": "jax.numpy", "lax": "jax.lax"}[short]
    arrived, removed = _arrived_and_left([v for v, names in _stored_vocabularies() if name in names],
                                         [v for v, names in _stored_vocabularies() if name not in names])
    return Feature(f"{module}.{function}", "jax.__version__", arrived=arrived, removed=removed,
                   present=lambda: _resolve(f"{module}.{function}") is not None)


def parameters(entry: str, *names: str) -> None:
    """Skip the calling test (naming the version) unless the installed ``entry`` exists and takes
    every parameter of ``names``."""
    if not entry_feature(entry).available:
        raise feature_missing(entry_feature(entry))
    for name in names:
        f = parameter_feature(entry, name)
        if not f.available:
            raise feature_missing(f)


REQUIRES_MARK = "requires_feature"  # evaluated by the runner before a test's set-up


def requires(name: str):
    """A mark that skips a test when the API ``name`` is missing (``feature_missing``, with a reason
    naming the version)."""
    FEATURES[name]  # a KeyError now, not at run time, for a name that is not a feature
    return getattr(pytest.mark, REQUIRES_MARK)(name)


# --- Behaviours decided by release, one constant each (their rules: behaviour_changes.toml) -------
# Sharding in types: a change JAX made is a rule of the model for the releases before it and
# after; the sharding-rule model (conformance/model/sharding_rules, which imports no JAX) is told
# which of them the installed release has (``sharding_rule_set``).
EXPLICIT_INDEXING_INFERS_SHARDING: bool = in_effect("EXPLICIT_INDEXING_INFERS_SHARDING")
EXPLICIT_GATHER_HAS_A_SHARDING_RULE: bool = in_effect("EXPLICIT_GATHER_HAS_A_SHARDING_RULE")
EXPLICIT_SCATTER_HAS_A_SHARDING_RULE: bool = in_effect("EXPLICIT_SCATTER_HAS_A_SHARDING_RULE")
EXPLICIT_SCATTER_ADD_HAS_A_SHARDING_RULE: bool = in_effect("EXPLICIT_SCATTER_ADD_HAS_A_SHARDING_RULE")
EXPLICIT_BATCHED_SCATTER_HAS_A_SHARDING_RULE: bool = in_effect("EXPLICIT_BATCHED_SCATTER_HAS_A_SHARDING_RULE")
VMAP_SPMD_AXIS_NAME_OVER_AN_EXPLICIT_BATCH: bool = in_effect("VMAP_SPMD_AXIS_NAME_OVER_AN_EXPLICIT_BATCH")
EXPLICIT_RESHAPE_DEALS_MESH_AXES: bool = in_effect("EXPLICIT_RESHAPE_DEALS_MESH_AXES")
EXPLICIT_SCAN_KEEPS_A_SHARDED_DIMENSION: bool = in_effect("EXPLICIT_SCAN_KEEPS_A_SHARDED_DIMENSION")
EXPLICIT_SORT_KEEPS_A_SHARDED_DIMENSION: bool = in_effect("EXPLICIT_SORT_KEEPS_A_SHARDED_DIMENSION")
EXPLICIT_DOT_GENERAL_BATCH_SPECS_EQUAL: bool = in_effect("EXPLICIT_DOT_GENERAL_BATCH_SPECS_EQUAL")
DOT_GENERAL_OUT_SHARDING_TAKES_A_SPEC: bool = in_effect("DOT_GENERAL_OUT_SHARDING_TAKES_A_SPEC")
# XLA's propagation on Auto meshes (ReleaseRules.dynamic_slice_replicates_a_resized_sharded_dimension)
AUTO_DYNAMIC_SLICE_KEEPS_WHOLE_DIMENSIONS: bool = in_effect("AUTO_DYNAMIC_SLICE_KEEPS_WHOLE_DIMENSIONS")
# Meshes, branches, random, processes, the persistent cache
MAKE_MESH_DEFAULT_AXIS_TYPE = "Explicit" if in_effect("MAKE_MESH_DEFAULTS_TO_EXPLICIT") else "Auto"
BRANCHES_COMPARE_OUTPUT_SHARDING_TYPES: bool = in_effect("BRANCHES_COMPARE_OUTPUT_SHARDING_TYPES")
THREEFRY_PARTITIONABLE_DEFAULT: bool = in_effect("THREEFRY_PARTITIONABLE_DEFAULT")
KEY_IMPL_OF_A_BUILTIN_IS_ITS_NAME: bool = in_effect("KEY_IMPL_OF_A_BUILTIN_IS_ITS_NAME")
PARTIAL_MANUAL_CONSTRAINT_TAKES_A_BARE_SPEC: bool = in_effect("PARTIAL_MANUAL_CONSTRAINT_TAKES_A_BARE_SPEC")
MULTIPROCESS_CPU: bool = in_effect("MULTIPROCESS_CPU")
CONCURRENT_COLLECTIVES_HANG: bool = in_effect("CONCURRENT_COLLECTIVES_HANG")
RAGGED_DOT_DIFFERENTIABLE: bool = in_effect("RAGGED_DOT_DIFFERENTIABLE")
RAGGED_ALL_TO_ALL_DIFFERENTIABLE: bool = in_effect("RAGGED_ALL_TO_ALL_DIFFERENTIABLE")
EXPLICIT_CONV_HAS_A_SHARDING_RULE: bool = in_effect("EXPLICIT_CONV_HAS_A_SHARDING_RULE")
ALLGATHER_REFUSES_UNTILED_GLOBAL: bool = in_effect("ALLGATHER_REFUSES_UNTILED_GLOBAL")
PERSISTENT_CACHE_ON_CPU: bool = in_effect("PERSISTENT_CACHE_ON_CPU")


def sharding_rule_set():
    """The sharding-rule model's ``ReleaseRules`` for the installed JAX (read when called)."""
    from conformance.model.sharding_rules import ReleaseRules
    return ReleaseRules(indexing_infers_sharding=EXPLICIT_INDEXING_INFERS_SHARDING,
                        gather_has_a_rule=EXPLICIT_GATHER_HAS_A_SHARDING_RULE,
                        scatter_has_a_rule=EXPLICIT_SCATTER_HAS_A_SHARDING_RULE,
                        scatter_add_has_a_rule=EXPLICIT_SCATTER_ADD_HAS_A_SHARDING_RULE,
                        batched_scatter_has_a_rule=EXPLICIT_BATCHED_SCATTER_HAS_A_SHARDING_RULE,
                        reshape_deals_mesh_axes=EXPLICIT_RESHAPE_DEALS_MESH_AXES,
                        batch_specs_equal=EXPLICIT_DOT_GENERAL_BATCH_SPECS_EQUAL,
                        scan_keeps_a_sharded_dimension=EXPLICIT_SCAN_KEEPS_A_SHARDED_DIMENSION,
                        sort_keeps_a_sharded_dimension=EXPLICIT_SORT_KEEPS_A_SHARDED_DIMENSION)


# --- Backend start-up ----------------------------------------------------------------------
def backend_initialized() -> bool:
    """True once any JAX backend has been created (after which device counts are fixed)."""
    xla_bridge = importlib.import_module("jax._src.xla_bridge")
    probe = getattr(xla_bridge, "backends_are_initialized", None)
    if probe is not None:
        return bool(probe())
    return bool(getattr(xla_bridge, "_backends", None))


def set_cpu_device_count(n: int) -> None:
    """Ask for ``n`` CPU devices through the config option, where the version has one.

    The harness also sets ``XLA_FLAGS`` and ``JAX_NUM_CPU_DEVICES`` before JAX is imported; this
    covers the case where JAX was imported (and read its environment) before the harness ran.
    """
    if FEATURES["num_cpu_devices"].available:
        jax.config.update("jax_num_cpu_devices", n)


def platforms_setting() -> str:
    """The platform list JAX will use ('' for JAX's own default)."""
    return jax.config.jax_platforms or os.environ.get("JAX_PLATFORMS", "") or ""


@functools.lru_cache(maxsize=None)
def _feature_obj(name: str):
    return FEATURES[name].obj


def current_trace_name() -> Optional[str]:
    """The class name of the trace in effect where this is called (``EvalTrace`` when eager), or None
    where JAX does not say (before 0.4.36)."""
    context = _feature_obj("trace_context")
    return None if context is None else type(context.trace).__name__


def hide_from_jax_tracebacks(path: str) -> None:
    """Leave the frames of the file ``path`` out of JAX's filtered tracebacks and the source
    locations its errors name, as JAX's own (``register_exclusion`` of jax._src.source_info_util and
    traceback_util: measured present on 0.4.30, 0.10.2 and 0.12.0.1; a release without them names
    the frames)."""
    for module in ("jax._src.source_info_util", "jax._src.traceback_util"):
        register = getattr(importlib.import_module(module), "register_exclusion", None)
        if register is not None:
            register(path)


def manual_axes_in_context() -> bool:
    """Whether a shard_map body's manual mesh axes are in effect where this is called (the mesh in
    effect's manual_axes); False where JAX has no get_abstract_mesh (a body reads as jit there)."""
    get = _feature_obj("get_abstract_mesh")
    return get is not None and bool(getattr(get(), "manual_axes", ()))


def x64_enabled() -> bool:
    return bool(jax.config.jax_enable_x64)


# --- PartitionSpec ---------------------------------------------------------------------------
# PartitionSpec subclasses tuple up to 0.6.0; from 0.10.0 it no longer equals a tuple. Iterating it
# gives its entries in every version.
def partition_spec(entries) -> PartitionSpec:
    return PartitionSpec(*entries)


def spec_entries(spec: PartitionSpec) -> tuple:
    return tuple(spec)


# --- Meshes ---------------------------------------------------------------------------------


def axis_type(name: str):
    """``jax.sharding.AxisType.<name>`` ("Auto" or "Explicit"); skips where axis types are absent."""
    return getattr(feature("AxisType"), name)


# The axis types' first names: JAX 0.5.0 called them Hidden, Visible and Collective, 0.5.1 renamed
# them Auto, Explicit and Manual, with the same meanings (measured: 0.5.0 and 0.5.1 side by side).
AXIS_TYPE_RENAMES = {"Hidden": "Auto", "Visible": "Explicit", "Collective": "Manual"}


def axis_type_name(axis_type) -> str:
    """An axis type's name as the suite speaks of it ("Auto", "Explicit", "Manual")."""
    name = getattr(axis_type, "name", str(axis_type))
    return AXIS_TYPE_RENAMES.get(name, name)


def axis_type_names(mesh) -> tuple:
    """A mesh's axis types as names ("Auto", "Explicit", ...), one per axis. Before axis types
    existed every axis is "Auto"; 0.4.38 to 0.5.2 report a dict {type: axis names}, later a tuple."""
    types = getattr(mesh, "axis_types", None)
    if types is None:
        return ("Auto",) * len(mesh.axis_names)
    if isinstance(types, dict):
        by_axis = {axis: axis_type_name(t) for t, axes in types.items()
                   for axis in (axes if isinstance(axes, tuple) else (axes,))}
        return tuple(by_axis[name] for name in mesh.axis_names)
    return tuple(axis_type_name(t) for t in types)


def make_mesh(shape, names, *, devices=None, axis_types: Optional[str] = None):
    """``jax.make_mesh`` (skips where absent), with ``axis_types`` given by name for every axis."""
    kwargs = {} if devices is None else {"devices": devices}
    if axis_types is not None:
        kwargs["axis_types"] = (axis_type(axis_types),) * len(shape)
    with warnings.catch_warnings():
        # 0.8.x warns that the default will change; a call without axis_types wants the default.
        warnings.simplefilter("ignore", DeprecationWarning)
        return feature("make_mesh")(tuple(shape), tuple(names), **kwargs)


def mesh_with_axis_types(devices, names, axis_types: str):
    """``Mesh(devices, names, axis_types=...)`` with every axis of the named type."""
    return Mesh(devices, tuple(names), axis_types=(axis_type(axis_types),) * len(names))


def mesh_axis_types() -> tuple:
    """The mesh axis types to test: "Auto", and "Explicit" where sharding in types exists."""
    return ("Auto", "Explicit") if FEATURES["explicit_sharding"].available else ("Auto",)


def constrain(x, sharding, axis_type: str = "Auto"):
    """Inside jit, ask for ``x`` to be laid out as ``sharding``: ``with_sharding_constraint`` on Auto
    axes; on Explicit axes, which it refuses, ``reshard`` (``jax.sharding.reshard`` from 0.7.0,
    ``jax.experimental.shard.reshard`` before)."""
    if axis_type == "Auto":
        return jax.lax.with_sharding_constraint(x, sharding)
    return _lookup(CONSTRAIN_SOURCE["Explicit"])(x, sharding)


def mesh_context(mesh, axis_type: str = "Auto"):
    """The context an Explicit mesh's computations run in (JAX asks for it: eager ops and jit on
    Explicit axes need a context mesh): ``jax.set_mesh`` from 0.7.1, ``jax.sharding.use_mesh``
    before. Auto meshes run with no context, as in the tutorial."""
    if axis_type == "Auto":
        return contextlib.nullcontext()
    enter = FEATURES["set_mesh"].obj or _lookup("jax.sharding.use_mesh")
    return enter(mesh)


MESH_CONTEXT_SOURCE = "jax.set_mesh" if FEATURES["set_mesh"].available else "jax.sharding.use_mesh"

CONSTRAIN_SOURCE = {  # what constrain() calls, as text for reproduction scripts
    "Auto": "jax.lax.with_sharding_constraint",
    "Explicit": "jax.sharding.reshard" if _lookup("jax.sharding.reshard") else "jax.experimental.shard.reshard",
}


# --- Multi-process runs ---------------------------------------------------------------------
MULTIPROCESS_CPU_REASON = (f"multi-process collectives on CPU need JAX {BEHAVIOUR_CHANGES['MULTIPROCESS_CPU'].jax} "
                           f"with gloo (installed: {JAX_VERSION})")


def use_gloo_collectives() -> None:
    """Select gloo for CPU collectives across processes, where the option exists; let a process
    build its (empty) part of an array whose devices are all another process's, which 0.5.x only
    does with jax_enable_empty_arrays; and where CONCURRENT_COLLECTIVES_HANG, dispatch CPU programs
    synchronously (a multi-controller run's properties dispatch back to back: met on 0.4.38 as an
    abort in device_put's cross-process check, 2026-12-07)."""
    options = [("jax_cpu_collectives_implementation", "gloo"), ("jax_enable_empty_arrays", True)]
    if CONCURRENT_COLLECTIVES_HANG:  # (one CPU program at a time: no two collectives in flight at once)
        options.append(("jax_cpu_enable_async_dispatch", False))
    for option, value in options:
        try:
            jax.config.update(option, value)
        except (AttributeError, ValueError, KeyError):
            pass


# Where CONCURRENT_COLLECTIVES_HANG (behaviour_changes.toml), the property that dispatches two
# collectives at once is not run, and a partial read waits a moment before the next collective.
PARTIAL_READ_SETTLE_S = 0.05
CONCURRENT_COLLECTIVES_REASON = (
    f"two cross-process collectives in flight at once hang now and then on JAX "
    f"{BEHAVIOUR_CHANGES['CONCURRENT_COLLECTIVES_HANG'].jax} (gloo; "
    f"installed: {JAX_VERSION}); not run, since a hang ends the whole run. The other multi-process "
    f"properties wait for each collective")


def settle_after_partial_read() -> None:
    """On the versions above, after a call that read only part of a collective program's output
    (``process_allgather`` reads one device's shard; the program may still run on the other local
    devices), give those devices time to finish before the next collective is dispatched."""
    if CONCURRENT_COLLECTIVES_HANG:
        time.sleep(PARTIAL_READ_SETTLE_S)


# make_array_from_callback(..., dtype=) arrived in 0.5.x (absent in 0.4.38, present in 0.5.3). Without
# it a process that addresses no shard of the array cannot build its part of it.
CALLBACK_TAKES_DTYPE = "dtype" in inspect.signature(jax.make_array_from_callback).parameters


def make_array_from_callback(shape, sharding, callback, dtype):
    """``jax.make_array_from_callback``, telling the dtype where the version takes it."""
    if CALLBACK_TAKES_DTYPE:
        return jax.make_array_from_callback(shape, sharding, callback, dtype=dtype)
    return jax.make_array_from_callback(shape, sharding, callback)


def process_allgather(x):
    """``multihost_utils.process_allgather`` of a global array: the whole value on every process
    (``tiled=True``, which non-fully-addressable arrays require)."""
    return multihost_utils.process_allgather(x, tiled=True)


# --- shard_map and pmap ------------------------------------------------------------------------
def shard_map(f, mesh, in_specs, out_specs, check: bool = True, manual_axes=None):
    """``jax.shard_map`` (0.6.1+, ``check_vma``) or ``jax.experimental.shard_map.shard_map``
    (``check_rep``), with specs given as tuples of entries (or PartitionSpecs); ``manual_axes``
    (a subset of the mesh's axes, the rest automatic) needs the ``partial_manual`` feature."""
    to_spec = lambda s: s if isinstance(s, PartitionSpec) else partition_spec(s)
    in_specs = tuple(to_spec(s) for s in in_specs)
    out_specs = to_spec(out_specs)
    if manual_axes is not None and set(manual_axes) != set(mesh.axis_names):
        return feature("partial_manual")(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                                         check_vma=check, axis_names=set(manual_axes))
    new = FEATURES["jax.shard_map"].obj
    if new is not None:
        return new(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check)
    old = _lookup("jax.experimental.shard_map.shard_map")
    return old(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_rep=check)


def varying_axes(aval) -> frozenset:
    """The manual mesh axes a value in a shard_map body varies over: ``jax.typeof(x).vma`` from
    0.6.1, ``jax.typeof(x).manual_axis_type.varying`` from 0.10.0, which removed ``vma`` (measured
    over the releases: vma on 0.6.1-0.9.2, manual_axis_type from 0.10.0)."""
    vma = getattr(aval, "vma", None)
    return frozenset(aval.manual_axis_type.varying if vma is None else vma)


VARYING_AXES_SOURCE = ("jax.typeof({}).vma" if hasattr(_lookup("jax._src.core.ShapedArray"), "vma")
                       else "jax.typeof({}).manual_axis_type.varying")


SHARD_MAP_SOURCE = ("jax.shard_map" if FEATURES["jax.shard_map"].available
                    else "jax.experimental.shard_map.shard_map")
SHARD_MAP_CHECK = "check_vma" if FEATURES["jax.shard_map"].available else "check_rep"

# The error a runtime (XLA) refusal raises: jax.errors.JaxRuntimeError from 0.6 (an alias of
# jaxlib's XlaRuntimeError up to 0.9), jaxlib.xla_extension.XlaRuntimeError before (measured on
# 0.4.30, 0.6.2, 0.7.0, 0.10.2 and 0.12.0.1). Looked for, not decided by version.
RUNTIME_ERRORS: tuple = tuple(dict.fromkeys(
    e for e in (getattr(jax.errors, "JaxRuntimeError", None),
                getattr(importlib.import_module("jaxlib.xla_extension"), "XlaRuntimeError", None)
                if importlib.util.find_spec("jaxlib.xla_extension") else None) if e is not None))

# out_specs that leave out a mesh axis the body's result varies over, with the replication check
# on: ValueError when the body is traced (measured 0.4.30 to 0.10.2).
UNPROVABLE_REPLICATION_ERRORS: tuple = (ValueError,)


def index_position(entry) -> int:
    """Where a shard starts along a mapped axis: pmap's shards index it by an int up to 0.7.x
    (PmapSharding) and by a slice from 0.8.0."""
    return entry if isinstance(entry, int) else (entry.start or 0)


# --- Compilations ---------------------------------------------------------------------------
# jax.monitoring reports every backend compilation as this duration event, under the same name
# from 0.4.30 to 0.10.2 (jax/_src/dispatch.py BACKEND_COMPILE_EVENT). The runner counts them.
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
# ... and every executable its persistent compilation cache serves as this event (no duration),
# under the same name from 0.4.30 to 0.12.0.1 (jax/_src/compiler.py).
PERSISTENT_CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"



def program_key(module, devices) -> str:
    """A program's identity: its lowered module's text (no debug locations) and the ids of the
    devices it is compiled for, in order; two requests with one key ask XLA for one executable."""
    digest = hashlib.sha256(module.operation.get_asm(enable_debug_info=False).encode())
    digest.update(",".join(str(d.id) for d in getattr(devices, "flat", devices)).encode())
    return digest.hexdigest()[:24]


def watch_compile_requests(listener: Callable[[str, str], None]) -> bool:
    """From now on, call ``listener(module name, program_key)`` whenever JAX asks for an
    executable; False (nothing watched) where this JAX has no ``compile_requests``."""
    compiler = importlib.import_module("jax._src.compiler")
    asked = FEATURES["compile_requests"].obj
    if asked is None:
        return False

    @functools.wraps(asked)
    def compile_or_get_cached(backend, computation, devices, *args, **kwargs):
        try:
            name = str(computation.operation.attributes["sym_name"]).strip('"')
            listener(name, program_key(computation, devices))
        except Exception:  # noqa: BLE001 - counting must never change what JAX does
            pass
        return asked(backend, computation, devices, *args, **kwargs)

    compiler.compile_or_get_cached = compile_or_get_cached
    return True


# JAX's persistent compilation cache (jax_compilation_cache_dir) keeps executables on disk, keyed by
# the module, devices, compile options, XLA flags, backend and jaxlib. On CPU, measured over the 34
# releases (release_envs run, 2026-12-05; the scripts: tests/probes/cache_*.py):
# - five jitted programs compiled in one process are served, with the same results, in the next, on
#   every release (a pmap program is served too, except on 0.8.0-0.10.1, where its key differs from
#   one process to the next, so it is compiled again: slower, never wrong);
# - a jitted program with a donated input, served in the next process, returns wrong values on
#   0.4.30-0.4.35 ([[0, 1]] for -sum(x, axis=0) of x uint32[2, 2] split over 'a', and it writes into
#   the numpy array the input was put from); from 0.4.36 that program is right;
# - the training-step property (parameters and optimizer state donated, three steps; seed
#   1198186503), run three times on one cache folder, aborts or crashes (SIGABRT, SIGSEGV) on
#   0.4.30-0.5.3, even in the first run (a program asked for twice is served the second time), and
#   passes on 0.6.0 and later; without the cache it passes everywhere.
# Met by the release matrix on 0.4.30 (a generated program's donating way gave [[0, 1]]) and 0.4.31,
# 0.4.34, 0.4.35 and 0.4.37 (an xdist worker crashed in the training step). So the cache is used on
# CPU from 0.6.0 only. Its thresholds are set so small CPU programs are kept (by default only those
# that took a second to compile are).
PERSISTENT_CACHE_ON_CPU_REASON = (f"JAX {JAX_VERSION} serves some programs wrongly from its persistent "
                                  f"compilation cache on CPU (wrong values or a crash: donated inputs on "
                                  f"0.4.30-0.5.3, random samplers' loops on 0.6.0; right from 0.6.1)")


def persistent_cache_available(platform: str) -> bool:
    """Whether this JAX's persistent compilation cache serves programs on ``platform``."""
    return PERSISTENT_CACHE_ON_CPU if platform == "cpu" else True


def use_persistent_cache(folder: str) -> None:
    """Keep and serve every compiled program in ``folder`` from now on."""
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    jax.config.update("jax_enable_compilation_cache", True)


def no_persistent_cache() -> None:
    """Serve no program from a persistent cache and keep none (whatever JAX_COMPILATION_CACHE_DIR says)."""
    jax.config.update("jax_enable_compilation_cache", False)


@contextlib.contextmanager
def persistent_cache_off():
    """No program is served from or written to the persistent cache inside (a property that checks
    compilation itself); as it was after. JAX memoizes whether the cache is used, so the cache is
    reset (``jax.experimental.compilation_cache.compilation_cache.reset_cache``) on both sides."""
    from jax.experimental.compilation_cache import compilation_cache

    was = jax.config.values["jax_enable_compilation_cache"]
    jax.config.update("jax_enable_compilation_cache", False)
    compilation_cache.reset_cache()
    try:
        yield
    finally:
        jax.config.update("jax_enable_compilation_cache", was)
        compilation_cache.reset_cache()


# --- PartitionSpec.UNCONSTRAINED --------------------------------------------------------------
# On a mesh with no Auto axis, NamedSharding refuses a spec holding it with ValueError ("cannot
# contain `P.UNCONSTRAINED` when no mesh axis_types are `Auto`"; measured on 0.5.3, 0.6.0, 0.6.1,
# 0.6.2, 0.10.2, 0.12.0.1: from the first release with Explicit axes).
UNCONSTRAINED_ON_EXPLICIT_ERRORS: tuple = (ValueError,)


def partly_unconstrained_spec(entries, unconstrained) -> PartitionSpec:
    """The PartitionSpec of ``entries`` (one per dimension) whose dimensions ``unconstrained`` are
    ``PartitionSpec.UNCONSTRAINED`` (skips, naming the version, where it is missing)."""
    marker = feature("PartitionSpec.UNCONSTRAINED").UNCONSTRAINED
    return PartitionSpec(*(marker if d in set(unconstrained) else e for d, e in enumerate(entries)))


# --- jax.random ------------------------------------------------------------------------------
def threefry_partitionable(value: bool):
    """A context in which jax.random's Threefry runs with jax_threefry_partitionable = ``value``."""
    return feature("threefry_partitionable")(value)


def threefry_partitionable_setting() -> bool:
    """The flag's value now (its default, unless JAX_THREEFRY_PARTITIONABLE or a context set it)."""
    return bool(jax.config.jax_threefry_partitionable)


# A script's line that sets the flag for the rest of the script (the property uses the context).
THREEFRY_PARTITIONABLE_SOURCE = "jax.config.update('jax_threefry_partitionable', {})"


# --- jax.checkpoint ---------------------------------------------------------------------------
def checkpoint_policy(name: str):
    """``jax.checkpoint_policies.<name>``; skips, naming the version, where the release lacks it."""
    return getattr(feature(f"checkpoint_policies.{name}"), name)
