"""The draws of the assembly properties (suites/test_device_put.py: pieces in any order over
permuted meshes, wrong pieces; suites/test_multiprocess.py: broadcast sources) exercise what they
are for: measured over runs of the size the suites use (as Hypothesis's engine draws them, the
minimal example first in each run), each statistic holds its stated floor.

No JAX here and nothing compiles: the strategies take device ids (8, as the suites force by
default). What is counted is computed here, not taken from the strategies. ``python -m
tests.test_assembly_strategies`` prints the table.

* meshes whose device order is not the ids' order (a bug that matches pieces to devices by
  position, or by id, only shows there): floor 60%;
* pieces handed over in neither the mesh's order nor the ids' order: floor 80%;
* layouts with two or more different blocks (a mix-up of pieces is invisible with one): 60%;
* every two different blocks of x hold different values (so a piece on the wrong device shows):
  100%;
* each kind of wrong piece (outside the sharding, on another piece's device, misshapen): 15%;
* broadcast sources other than process 0 (with 2 processes; process 0's own value is the default
  answer, so only those catch a broadcast that keeps each process's value): 35%.
"""

from __future__ import annotations

from typing import Dict

import numpy as np

from conformance.model.layout import block_slices
from strategies import assembly
from tests.test_draw_statistics import runs

DEVICES = tuple(range(8))
EXAMPLES_PER_RUN, RUNS = 10, 20  # ASSEMBLY_EXAMPLES of the default profile
FLOORS = {"permuted mesh": 0.60, "pieces in neither order": 0.80, "two or more blocks": 0.60,
          "different blocks differ": 1.0, "broadcast source not process 0": 0.35,
          **{f"wrong piece: {kind}": 0.15 for kind in assembly.WRONG_PIECES}}


def measured() -> Dict[str, float]:
    examples = [e for run in runs(assembly.assembly_examples(DEVICES), RUNS, EXAMPLES_PER_RUN) for e in run]
    stats = {"permuted mesh": np.mean([list(layout.mesh.device_ids) != sorted(layout.mesh.device_ids)
                                       for layout, _, _ in examples]),
             "pieces in neither order": np.mean([order != layout.mesh.device_ids and list(order) != sorted(order)
                                                 for layout, _, order in examples]),
             "two or more blocks": np.mean([len(set(layout.blocks.values())) > 1 for layout, _, _ in examples])}
    differ = []
    for layout, x, _ in examples:
        blocks = sorted(set(layout.blocks.values()))
        pieces = [x[block_slices(b)] for b in blocks]
        differ.append(all(not np.array_equal(p, q) for i, p in enumerate(pieces) for q in pieces[i + 1:]))
    stats["different blocks differ"] = np.mean(differ)
    wrong = [e for run in runs(assembly.wrong_pieces(DEVICES), RUNS, EXAMPLES_PER_RUN) for e in run]
    for kind in assembly.WRONG_PIECES:
        stats[f"wrong piece: {kind}"] = np.mean([k == kind for _, _, _, k, _ in wrong])
    sources = [s for run in runs(assembly.broadcast_sources(2), RUNS, 20) for s in run]
    stats["broadcast source not process 0"] = np.mean([s not in (None, 0) for s in sources])
    return {name: float(value) for name, value in stats.items()}


def table(stats: Dict[str, float]) -> str:
    return "\n".join(f"{name:40s} {stats[name]:6.1%}  (floor {FLOORS[name]:.0%})" for name in FLOORS)


def test_assembly_draws_hold_their_floors():
    """Every statistic of the assembly draws holds its floor."""
    stats = measured()
    print(table(stats))
    low = {name: stats[name] for name in FLOORS if stats[name] < FLOORS[name]}
    assert not low, f"below the floor: {low}\n{table(stats)}"


def test_wrong_pieces_are_wrong_in_the_drawn_way():
    """Each drawn wrong piece is wrong as its kind says, and the other pieces are the model's."""
    for run in runs(assembly.wrong_pieces(DEVICES), 3, 30):
        for layout, x, pieces, kind, victim in run:
            devices = [d for d, _ in pieces]
            right = dict(assembly.pieces_of(layout, x, layout.mesh.device_ids))
            assert all(np.array_equal(p, right[d]) for d, p in pieces if d != victim and d in right
                       and kind != "two-pieces-on-one-device")
            if kind == "device-outside-the-sharding":
                assert set(devices) - set(layout.mesh.device_ids), (kind, devices)
            elif kind == "two-pieces-on-one-device":
                assert len(set(devices)) < len(devices), (kind, devices)
            else:
                assert set(devices) == set(layout.mesh.device_ids)
                assert [d for d, p in pieces if p.shape != layout.shard_shape] == [victim]


if __name__ == "__main__":
    print(table(measured()))
