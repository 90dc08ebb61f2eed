"""The sharding API's inventory (conformance/jaxside/inventory.py): the stored inventory of the
installed JAX is what ``inspect`` reads from it now, every supported release has one, and a
release's differences are read right from hand-written inventories."""

from __future__ import annotations

import json

from conformance.jaxside import inventory
from conformance.runner.releases import RELEASES


def entry(*params, returns=""):
    return {"params": [list(p) for p in params], "returns": returns}


def test_the_stored_inventory_of_the_installed_jax_is_current():
    from importlib.metadata import version
    path = inventory.path_for(version("jax"))
    assert path.exists(), \
        f"got no inventory at {path}, but should have one: python -m conformance.jaxside.inventory write"
    found = inventory.differences(json.loads(path.read_text())["entries"], inventory.take())
    assert found == [], f"got the stored inventory differing from the installed JAX: {found[:10]}, but should be none"


def test_every_supported_release_has_an_inventory():
    missing = [r.jax for r in RELEASES if not inventory.path_for(r.jax).exists()]
    assert missing == [], f"got no inventory for {missing}, but every release in releases.toml should have one"


def test_differences_name_what_a_release_adds_removes_renames_and_changes():
    old = {"jax.a": entry(("x", "POSITIONAL_OR_KEYWORD", "", ""), ("axis_shapes", "KEYWORD_ONLY", "", "")),
           "jax.gone": entry()}
    new = {"jax.a": entry(("x", "POSITIONAL_ONLY", "", ""), ("axis_sizes", "KEYWORD_ONLY", "", "")),
           "jax.new": entry()}
    assert inventory.differences(old, new) == [
        "added: jax.new", "removed: jax.gone", "jax.a: parameter axis_shapes removed (renamed to axis_sizes?)",
        "jax.a: parameter axis_sizes added", "jax.a: parameter x: kind 'POSITIONAL_OR_KEYWORD' -> 'POSITIONAL_ONLY'"]
    assert inventory.differences(new, new) == []


def test_an_annotation_reads_the_same_from_python_3_11_and_3_13():
    assert inventory.unions_as_bars("Union[str, typing.Any, NoneType]") == "str | Any | None"
    assert inventory.unions_as_bars("Optional[Union[int, Sequence[int]]]") == "int | Sequence[int] | None"
    assert inventory.unions_as_bars("dict[str, Union[int, None]]") == "dict[str, int | None]"
