"""The compat module: version facts are decided there and nowhere else, and a missing API becomes
a skip whose reason names the API and the version."""

import re
from pathlib import Path

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding

from conformance.jaxside import compat

ROOT = Path(__file__).resolve().parents[1]


def test_no_version_checks_outside_compat():
    """No suite, strategy or helper module looks at a version number itself (the runner only to
    pick the deviations in effect and to name the version in what it prints; the release tooling
    only to pick the Python that makes a release's environment)."""
    pattern = re.compile(r"__version__|version_info|JAX_VERSION|version_in\(")
    runner = ROOT / "conformance" / "runner"
    allowed = {ROOT / "conformance" / "jaxside" / "compat.py", runner / "session.py", runner / "state.py",
               runner / "plugin.py", runner / "deviations.py", runner / "release_envs.py"}
    offenders = [str(p.relative_to(ROOT)) for folder in ("suites", "strategies", "conformance")
                 for p in (ROOT / folder).rglob("*.py")
                 if p not in allowed and pattern.search(p.read_text())]
    assert offenders == []


@pytest.mark.parametrize("name", sorted(compat.FEATURES))
def test_missing_feature_reason_names_api_and_version(name):
    """Each feature's skip reason names its API and the JAX version it arrived in or left in."""
    feature = compat.FEATURES[name]
    reason = feature.missing_reason
    assert feature.api in reason
    assert (feature.removed or feature.arrived) in reason
    assert ("removed in JAX" in reason) == bool(feature.removed)


def test_feature_lookup_skips_when_missing():
    """compat.feature() of a missing API skips the calling test (pytest's skip) with the
    version-naming reason, carrying the feature whose kind the run report records; compat.requires
    marks a test for the runner to do the same before its set-up."""
    missing = compat.Feature("jax.no_such_api", "jax.no_such_api", arrived="99.0")
    compat.FEATURES["_test_missing"] = missing
    try:
        with pytest.raises(pytest.skip.Exception, match=r"jax.no_such_api arrived in JAX 99.0") as info:
            compat.feature("_test_missing")
        assert type(info.value) is pytest.skip.Exception  # printed as pytest prints a skip
        assert info.value.feature.missing_kind == "api-arrived"
        mark = compat.requires("_test_missing")
        assert mark.name == compat.REQUIRES_MARK and mark.args == ("_test_missing",)
    finally:
        del compat.FEATURES["_test_missing"]


@compat.requires("make_mesh")
def test_a_required_feature_that_exists_runs():
    """A test marked compat.requires(name) runs where the API exists (make_mesh: JAX 0.4.32+)."""
    assert compat.FEATURES["make_mesh"].available


def test_present_features_resolve_to_objects():
    """An available feature resolves to the real object."""
    for feature in compat.FEATURES.values():
        assert (feature.obj is not None) == feature.available


def test_spec_errors_cover_what_jax_raises_for_a_repeated_axis():
    """A repeated mesh axis raises one of compat.SPEC_ERRORS on this JAX (ValueError, or
    DuplicateSpecError from 0.5.3, which is not a ValueError)."""
    mesh = Mesh(np.array(jax.local_devices()[:1]), ("a",))
    with pytest.raises(compat.SPEC_ERRORS):
        NamedSharding(mesh, compat.partition_spec(("a", "a")))


def test_partition_spec_round_trip():
    """spec_entries(partition_spec(entries)) gives the entries back, tuples included."""
    entries = ("a", None, ("b", "c"))
    assert compat.spec_entries(compat.partition_spec(entries)) == entries


def test_the_sharding_rule_set_is_the_stated_changes_this_jax_has(monkeypatch):
    """The model's ReleaseRules come from compat's constants, read when asked for (so that a
    planted fault or a test may flip one), and the behaviour table quotes what JAX stated before them."""
    rules = compat.sharding_rule_set()
    assert rules.indexing_infers_sharding == compat.EXPLICIT_INDEXING_INFERS_SHARDING
    assert rules.reshape_deals_mesh_axes == compat.EXPLICIT_RESHAPE_DEALS_MESH_AXES
    assert rules.scan_keeps_a_sharded_dimension == compat.EXPLICIT_SCAN_KEEPS_A_SHARDED_DIMENSION
    assert rules.sort_keeps_a_sharded_dimension == compat.EXPLICIT_SORT_KEEPS_A_SHARDED_DIMENSION
    monkeypatch.setattr(compat, "EXPLICIT_RESHAPE_DEALS_MESH_AXES", not compat.EXPLICIT_RESHAPE_DEALS_MESH_AXES)
    assert compat.sharding_rule_set().reshape_deals_mesh_axes == compat.EXPLICIT_RESHAPE_DEALS_MESH_AXES
    quotes = " ".join(c.quote for c in compat.BEHAVIOUR_CHANGES.values())
    assert "For example, `scatter` and `gather` (i.e. indexing ops)." in quotes
    assert "In all other cases we throw an error and require the user to provide an `out_sharding` argument." in quotes


def test_version_in():
    assert compat.version_in(">=0.4.30")
    assert not compat.version_in("<0.4.30")


def test_backend_is_initialized_after_devices():
    jax.devices()
    assert compat.backend_initialized()


def test_inside_compat_a_version_is_read_by_its_own_rule_only():
    """compat reads the version in two places only: ``version_in`` (the behaviour table's ranges go
    through it) and the skip reasons that name the installed release; every ``version_in`` call is
    the table's, and a feature looks its API up (no ``present=`` decided by version)."""
    source = (ROOT / "conformance" / "jaxside" / "compat.py").read_text()
    calls = re.findall(r"version_in\(([^)]*)\)", source)
    assert calls == ["specifier: str", "self.jax"], f"got version_in calls {calls}, but should be the table's only"


def test_the_behaviour_table_and_compat_name_the_same_constants():
    """Every entry of behaviour_changes.toml is a constant of compat decided by ``in_effect`` of its
    own name, and every such constant has its entry (with a rule before and a source)."""
    source = (ROOT / "conformance" / "jaxside" / "compat.py").read_text()
    decided = re.findall(r'in_effect\("([A-Z0-9_]+)"\)', source)
    assert sorted(decided) == sorted(compat.BEHAVIOUR_CHANGES), \
        f"got constants {sorted(decided)}, but should be the table's {sorted(compat.BEHAVIOUR_CHANGES)}"
    for name, change in compat.BEHAVIOUR_CHANGES.items():
        assert change.before and change.source and change.measured, name
        if name != "MAKE_MESH_DEFAULTS_TO_EXPLICIT":
            assert getattr(compat, name) is change.in_effect, name


def test_a_malformed_behaviour_change_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "changes.toml"
    path.write_text('[[change]]\nname = "X"\njax = ">=0.5"\nrule = "r"\nbefore = "b"\nsource = ["the docs"]\n'
                    'measured = "m"\n')
    with pytest.raises(ValueError, match=r"changes.toml:6: change 'X' has source = \['the docs'\]: each one of"):
        compat.load_behaviour_changes(path)
