"""The vocabulary's promises: the stored list of the installed JAX's public jax.numpy and jax.lax
functions is the one it exports; every function of every supported release's list is covered by a
catalogue or vocabulary entry (``Op.covers``) or left out with its reason (``left_out.toml``), never
both; and the entries cover at least ``COVERED_FLOOR`` of the installed release's array-taking
functions (every function but those left out as taking or computing no array).

    python -m tests.test_vocabulary     the coverage per release, and the gaps
"""

from __future__ import annotations

import pytest

from strategies.ops import ENTRIES, left_out

# The floor: 90% of the installed release's array-taking functions (0.10.2, 2026-12-07: 435 of
# 478, 91.0%; 0.12.0.1, which adds functions, 89.9%, above the ratchet below it). Of the 492 entries, 49
# run on Auto meshes only (Op.explicit False: a route without an Explicit-mesh rule of ours, or an
# Explicit-mesh failure of JAX's entered as a known deviation with its strict reproduction).
COVERED_FLOOR = 0.89


def stored_lists() -> dict:
    from conformance.jaxside import vocabulary
    return vocabulary.stored_lists()


def functions_of(listing: dict) -> set:
    from conformance.jaxside import vocabulary
    return set(vocabulary.functions_of(listing))


def covered() -> set:
    return {name for op in ENTRIES for name in op.covers}


def coverage(listing: dict) -> tuple:
    """(covered, array-taking) functions of a release's list."""
    names, skipped = functions_of(listing), left_out.read()
    array_taking = {n for n in names if n not in skipped or skipped[n].array_taking}
    return covered() & array_taking, array_taking


def test_the_stored_list_is_what_the_installed_jax_exports():
    from conformance.jaxside import vocabulary
    now = vocabulary.installed()
    stored = vocabulary.stored(str(now["jax"]))
    for short in ("jnp", "lax"):
        assert stored[short] == now[short], (
            f"{short}: added {sorted(set(now[short]) - set(stored[short]))}, removed "
            f"{sorted(set(stored[short]) - set(now[short]))}: run python -m conformance.jaxside.vocabulary write")


def test_every_public_function_is_covered_or_left_out_with_its_reason():
    skipped = left_out.read()
    every = set().union(*(functions_of(listing) for listing in stored_lists().values()))
    neither = sorted(every - covered() - set(skipped))
    both = sorted(covered() & set(skipped))
    stale = sorted(set(skipped) - every)
    unknown = sorted(covered() - every)
    assert not neither, f"neither covered nor left out: {neither}"
    assert not both, f"covered and left out: {both}"
    assert not stale, f"left out but in no supported release: {stale}"
    assert not unknown, f"covered by an entry but in no supported release: {unknown}"


def test_the_entries_cover_the_floor_of_the_array_taking_functions():
    from conformance.jaxside import vocabulary
    listing = vocabulary.stored(str(vocabulary.installed()["jax"]))
    hits, array_taking = coverage(listing)
    share = len(hits) / len(array_taking)
    assert share >= COVERED_FLOOR, (f"{len(hits)} of {len(array_taking)} array-taking functions covered "
                                    f"({share:.1%}), below {COVERED_FLOOR:.0%}; not covered: "
                                    f"{sorted(array_taking - hits)}")


def test_a_reason_the_list_does_not_know_is_refused(tmp_path):
    bad = tmp_path / "left_out.toml"
    bad.write_text('function = [\n    { name = "jnp.save", why = "boring" },\n]\n')
    with pytest.raises(ValueError, match=r"left_out.toml:2: function 'jnp.save' has why = 'boring'"):
        left_out.read(bad)


if __name__ == "__main__":
    skipped = left_out.read()
    for version, listing in stored_lists().items():
        hits, array_taking = coverage(listing)
        print(f"JAX {version}: {len(hits)} of {len(array_taking)} array-taking functions covered "
              f"({len(hits) / len(array_taking):.1%}); {len(functions_of(listing)) - len(array_taking)} take no array")
    print("gaps:", sorted(n for n, f in skipped.items() if f.why == "gap"))
