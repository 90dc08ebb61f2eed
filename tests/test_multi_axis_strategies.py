"""The strategies of ``strategies/manual.py`` exercise what their properties are about: measured over
runs of the size the suites use (10 examples: the default profile's tenth), as Hypothesis's engine
draws them, each statistic holds its stated floor. No JAX here.

* all_to_all over two mesh axes (``all_to_all_over_two_axes``): both axes of size > 1 (else the
  exchange is over one axis only and an implementation that ignores the other passes) in >= 85% of
  draws; tiled and untiled each in >= 25%; concat unlike split in >= 25% (the case that moves data
  between dimensions); a group of 4 or more devices in >= 85%;
* inputs of a body on an Explicit mesh (``laid_out_inputs``): a spec that cuts over an axis of size >
  1 in >= 60% (a replicated input shows no block out of place), meshes of two or more axes in >= 30%;
* ``inputs_varying_over_an_axis``: its axis always of size > 1 and named by the spec (100%), and the
  spec naming another axis of size > 1 too in >= 15% (out_specs then keep a cut dimension).
"""

from __future__ import annotations

from typing import Callable, Dict, List

from conformance.model.layout import spec_axes
from strategies.manual import all_to_all_over_two_axes, inputs_varying_over_an_axis, laid_out_inputs
from tests.test_draw_statistics import minimal, runs

DEVICES = tuple(range(8))
RUN_SIZE, RUN_COUNT = 10, 30


def share(examples: List, condition: Callable) -> float:
    return sum(1 for e in examples if condition(e)) / len(examples)


def drawn(strategy) -> List:
    return [e for run in runs(strategy, RUN_COUNT, RUN_SIZE) for e in run]


def cut_axes(mesh, spec) -> set:
    return {a for axes in spec_axes(spec) for a in axes if mesh.axis_sizes[a] > 1}


def statistics() -> Dict[str, tuple]:
    """{statistic: (measured share, floor, ceiling)}."""
    a2a = drawn(all_to_all_over_two_axes(DEVICES))
    inputs = drawn(laid_out_inputs(DEVICES))
    varying = drawn(inputs_varying_over_an_axis(DEVICES))
    both = lambda e: all(e.mesh.axis_sizes[a] > 1 for a in e.over)
    return {
        "all_to_all over two axes of size > 1": (share(a2a, both), 0.85, 1.0),
        "all_to_all tiled": (share(a2a, lambda e: e.tiled), 0.25, 0.75),
        "all_to_all concat unlike split": (share(a2a, lambda e: e.split != e.concat), 0.25, 1.0),
        "all_to_all group of 4+ devices": (share(a2a, lambda e: e.group_size >= 4), 0.85, 1.0),
        "explicit body input cut": (share(inputs, lambda e: bool(cut_axes(e[0], e[2]))), 0.60, 1.0),
        "explicit body mesh of 2+ axes": (share(inputs, lambda e: len(e[0].shape) >= 2), 0.30, 1.0),
        "varying axis of size > 1 named by the spec":
            (share(varying, lambda e: e[3] in cut_axes(e[0], e[2])), 1.0, 1.0),
        "varying input also cut over another axis":
            (share(varying, lambda e: bool(cut_axes(e[0], e[2]) - {e[3]})), 0.15, 1.0),
    }


def test_every_statistic_holds_its_floor():
    found = statistics()
    table = "\n".join(f"{name:45} {got:6.1%}  floor {low:.0%}" for name, (got, low, _) in found.items())
    print(table)
    failing = [name for name, (got, low, high) in found.items() if not low <= got <= high]
    assert not failing, f"below a floor (or above a ceiling): {failing}\n{table}"


def test_shrinking_heads_for_small_examples():
    """The minimal all_to_all example is rank 2, untiled, split 0 and concat 1 (both sides the group
    size, so that the exchanged call is valid too) over the first two axes of a (4, 2) mesh in
    device order; the minimal body input splits its first dimension of 8 over one axis."""
    e = minimal(all_to_all_over_two_axes(DEVICES))
    assert (e.mesh.shape, e.mesh.device_ids, e.over, e.split, e.concat, e.tiled, e.shape) == \
        ((4, 2), DEVICES, ("a", "b"), 0, 1, False, (8, 8))
    mesh, shape, spec = minimal(laid_out_inputs(DEVICES))
    assert (mesh.shape, shape) == ((8,), (8,)), (mesh, shape, spec)


if __name__ == "__main__":
    for name, (got, low, _) in statistics().items():
        print(f"{name:45} {got:6.1%}  floor {low:.0%}")
