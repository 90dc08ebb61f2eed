"""The draws of suites/test_random.py and of the custom-rule properties of suites/test_autodiff.py
exercise sharding: measured over runs of the default profile's size (5 examples a run, the minimal
one first), as Hypothesis's engine draws them, with 8 device ids (what the suites force by default;
nothing compiles, only the drawn example objects are counted).

* random draws whose output (or, for a batch of keys, the keys) is cut over a mesh axis of size > 1:
  >= 90% (a layout bug is invisible on a draw nothing cuts);
* both values of jax_threefry_partitionable, both key kinds (typed, raw), single keys and batches:
  each >= 30% (the property's rule is stated for each);
* random draws with distinct values to compare: a key batch is distinct by construction; a single
  key's draw has more than one element in >= 70% (a repeated-block bug is invisible on one element);
* custom-rule jit examples where some spec (x, w or the output) cuts: >= 80%; custom-rule shard_map
  examples whose body axis has size > 1: >= 70%.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st

from conformance.model.layout import spec_axes
from tests import test_draw_statistics as draw_statistics

RUNS, SIZE = 40, 5


def runs(strategy: st.SearchStrategy, count: int = RUNS, size: int = SIZE) -> list:
    """``count`` runs of ``size`` examples, each from its own seed, pooled."""
    return [x for run in draw_statistics.runs(strategy, count, size) for x in run]


def cuts(mesh, spec) -> bool:
    return any(mesh.axis_sizes[name] > 1 for axes in spec_axes(spec) for name in axes)


@pytest.fixture
def eight_devices(monkeypatch):
    """The suites' strategies drawing over 8 device ids, whatever this process's JAX has."""
    import suites.test_autodiff as autodiff
    import suites.test_random as random_suite
    monkeypatch.setattr(random_suite, "DEVICES", tuple(range(8)))
    monkeypatch.setattr(autodiff, "DEVICES", tuple(range(8)))
    return random_suite, autodiff


def share(items, predicate) -> float:
    return sum(1 for x in items if predicate(x)) / len(items)


def test_random_draws_cut_and_cover_both_flag_values_and_key_kinds(eight_devices):
    random_suite, _ = eight_devices
    drawn = runs(st.one_of(random_suite.single_key_draws(), random_suite.batched_key_draws()))
    stats = {
        "cut": share(drawn, lambda d: cuts(d.mesh, d.out_spec) or (d.batch and cuts(d.mesh, d.key_spec))),
        "partitionable off": share(drawn, lambda d: not d.partitionable),
        "partitionable on": share(drawn, lambda d: d.partitionable),
        "typed keys": share(drawn, lambda d: d.key_kind == "typed"),
        "raw keys": share(drawn, lambda d: d.key_kind == "raw"),
        "single key": share(drawn, lambda d: not d.batch),
        "batch of keys": share(drawn, lambda d: bool(d.batch)),
    }
    singles = [d for d in drawn if not d.batch]
    stats["single draws of more than one element"] = share(singles, lambda d: int(np.prod(d.out_shape)) > 1)
    floors = {"cut": 0.9, "single draws of more than one element": 0.7}
    low = {k: v for k, v in stats.items() if v < floors.get(k, 0.3)}
    assert not low, f"below the floors: {low} (all: {stats})"


def test_custom_rule_examples_shard(eight_devices):
    _, autodiff = eight_devices
    jit = runs(autodiff.custom_rule_jit_examples())
    jit_cut = share(jit, lambda e: any(cuts(e.mesh, s) for s in (e.x_spec, e.w_spec, e.out_spec)))
    bodies = runs(autodiff.custom_rule_body_examples())
    body_cut = share(bodies, lambda e: e[3].axis_sizes[e[4]] > 1)
    assert jit_cut >= 0.8 and body_cut >= 0.7, (jit_cut, body_cut)
