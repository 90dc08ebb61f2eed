"""The suites have teeth: with a planted fault (tests/faults/) the suites it targets fail.

``pytest tests/`` runs a quick subset (one fault per area, marked ``quick_fault``);
``pytest tests/ --faults all`` runs every fault of the catalogue (2 min 16 s with ``-n 2`` on 2
cores), each against its target suites in a subprocess with ``-x``. Which properties each fault
kills, and the time to the first failure of ``pytest suites/ -x``, are measured by
``python -m tests.faults.killmap`` into ``tests/faults/kill_maps/``; the last test here checks that
the maps cover every property.
"""

import json
import re
from pathlib import Path

import pytest

from conformance.jaxside import compat
from conformance.runner.pytest_process import run_pytest
from tests.faults import FAULTS, unkilled
from tests.faults.multi_controller import ACROSS_PROCESSES
from conformance.runner.areas import AREAS
from tests.faults.killmap import MAPS, USAGE_ERROR, suite_selection

ROOT = Path(__file__).resolve().parents[1]
# The quick subset: one fault per area, each with the property of its areas that shows it first (as
# -x over the areas met it on 0.10.2, or a killer in its kill map) and what its failure message must
# say. By default (--faults quick) each runs that property alone; under --faults all, its areas.
QUICK = {
    "swap-index-map": ("suites/test_congruence.py::test_device_put_accepts_exactly_congruent",
                       "devices_indices_map differs from the model"),
    # (replicating an indivisible shape instead of refusing it: the property's written indivisible example)
    "device-put-replicates": ("suites/test_congruence.py::test_device_put_accepts_exactly_congruent",
                              "but should raise ValueError"),
    "device-put-accepts-indivisible": ("suites/test_congruence.py::test_device_put_accepts_exactly_congruent",
                                       "but should raise ValueError"),
    "visualize-shifted-labels": ("suites/test_visualize.py::test_picture_is_the_models_block_grid",
                                 "picture (rows of device-id sets)="),
    "ppermute-inverse": ("suites/test_collectives.py::test_collective_under_pmap[ppermute]", "pmap(ppermute) result"),
    # (the drawn example decides whether a shape or the values show it, and on which leaf: about one
    # seed in ten fails on another leaf's shape or on values, so the message is matched up to there)
    "pmap-ignores-out-axes": ("suites/test_pmap.py::test_out_axes_none_returns_the_replicated_value", "pmap result"),
    "create-device-mesh-repeats": ("suites/test_named_sharding.py::test_tutorial_mesh_holds_each_device_once",
                                   "distinct devices of"),
    "constraint-ignored": ("suites/test_sharding_invariance.py::test_sharding_never_changes_values[abs]",
                           "result sharding devices_indices_map differs from the model"),
    "shard-map-skips-the-replication-check": (
        "suites/test_shard_map_bodies.py::test_out_specs_must_cover_the_axes_a_body_varies_over",
        "but should raise ValueError"),
    "reverse-mode-moves-cotangents": ("suites/test_autodiff.py::test_custom_rules_inside_shard_map",
                                      "devices_indices_map differs from the model"),
    "vmap-ignores-spmd-axis-name": ("suites/test_vmap.py::test_spmd_axis_name_shards_the_batch_of_a_constraint",
                                    "spmd_axis_name result"),
    "jit-ignores-donate-argnums": (
        "suites/test_control_flow.py::test_donated_sharded_input_is_deleted_and_nothing_else_changes",
        "donated input is_deleted()=False"),
    "compiled-call-reshards-arguments": ("suites/test_aot.py::test_compiled_function_shardings_and_calls",
                                         "but should raise ValueError"),
    "inspect-array-sharding-reports-a-split": (
        "suites/test_traced_inspection.py::test_inspect_array_sharding_in_a_checked_body", "inspect_array_sharding"),
    "constraint-after-a-constraint-dropped": (
        "suites/test_programs.py::test_generated_programs_agree_with_the_unsharded_run",
        "sharding devices_indices_map differs from the model"),
    # excuses as narrow as their bugs: a plain regression under an entry, a rejection on Explicit meshes
    "dynamic-slice-plus-one": (
        "suites/test_sharding_invariance_reproductions.py::test_explicit_dynamic_slice_of_a_cut_operand_clamps_its_start_once",
        "not a known deviation: it failed with wrong values"),
    "abs-asserts-on-explicit": ("suites/test_sharding_invariance.py::test_sharding_never_changes_values[abs]",
                                "(a) eager raised AssertionError: , but should be accepted"),
}


# Faults that only an example drawn on an Explicit mesh can show (38% of catalogue draws: with the
# default profile's 4 examples of jnp.abs, about one random seed in seven draws none, and the
# property passes). Their runs use a seed that draws one, so the self-test is deterministic.
EXPLICIT_ONLY_SEED = {"abs-asserts-on-explicit": 1, "sin-rejects-explicit": 1}


def run_suites(selection, fault=None, extra=()):
    """The suites in a subprocess with ``-x``, the default profile's examples, no shrinking (a
    fault is caught or not all the same; shrinking a broad fault's failure costs minutes)."""
    args = ["-p", "tests.faults", "-x", "--hypothesis-profile", "default-no-shrink", *selection, *extra]
    args += ["--plant-fault", fault] if fault else []
    return run_pytest(args, timeout=900)


def fault_params():
    for name in sorted(FAULTS):
        marks = [pytest.mark.fault_catalogue] + ([pytest.mark.quick_fault] if name in QUICK else [])
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("fault", list(fault_params()))
def test_planted_fault_is_caught_by_its_suites(fault, pytestconfig):
    """Under the fault its target suites fail (exit status 1), with a readable message and a
    reproduction script; a fault whose API this JAX lacks skips, saying so (a quick one, by default,
    runs only the property of its areas that QUICK names)."""
    targets = FAULTS[fault].suites
    across = "multiprocess" in targets or fault in ACROSS_PROCESSES  # (only several processes show it)
    if across:
        if not compat.MULTIPROCESS_CPU:
            pytest.skip(compat.MULTIPROCESS_CPU_REASON)
    seeded = [f"--hypothesis-seed={EXPLICIT_ONLY_SEED[fault]}"] if fault in EXPLICIT_ONLY_SEED else []
    alone = fault in QUICK and pytestconfig.getoption("--faults") == "quick"
    result = run_suites([QUICK[fault][0]] if alone else suite_selection(targets), fault,
                        ["--processes", "2", "--devices", "4"] if across else seeded)
    if result.returncode == USAGE_ERROR and "cannot be planted on this JAX" in result.stderr:
        pytest.skip(result.stderr.strip().splitlines()[-1])
    assert result.returncode == 1, f"{fault} was not caught by {targets}:\n{result.stdout[-3000:]}"
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED suites/")]
    assert failed, f"{fault}: the run failed, but no property of suites/ did:\n{result.stdout[-3000:]}"
    says = QUICK.get(fault, ("", ""))[1]
    assert says in result.stdout, f"{fault}: its finding should say {says!r}"
    assert "Reproduce without Hypothesis:" in result.stdout or across


def test_each_quick_fault_names_a_property_of_its_areas():
    """A quick fault's property (what it runs alone by default) exists in a suite file of one of the
    fault's target areas, and the message it must show is stated."""
    for fault, (prop, says) in QUICK.items():
        path, _, name = prop.partition("::")
        text = (ROOT / path).read_text()
        assert says and f"def {name.split('[')[0]}(" in text, fault
        marks = next(line for line in text.splitlines() if line.startswith("pytestmark = "))
        assert any(re.search(rf"pytest\.mark\.{area}\b", marks) for area in FAULTS[fault].suites), (fault, path)


def test_catalogue_entries_are_described():
    """Every fault has a one-line description, a function that plants it, and target suite areas
    that exist; every explanation of an unkilled property names a property that exists."""
    for name, fault in FAULTS.items():
        assert fault.name == name and fault.description and "\n" not in fault.description, name
        assert callable(fault.plant), name
        assert fault.suites and set(fault.suites) <= set(AREAS), (name, fault.suites)
    for test_id, reason in unkilled().items():
        path, _, name = test_id.partition("::")
        assert reason and f"def {name.split('[')[0]}(" in (ROOT / path).read_text(), test_id


def test_a_fault_is_registered_once_with_one_line():
    """The registry refuses a second fault of the same name, a description over two lines, and a
    target that is not a suite area."""
    from tests.faults.registry import fault
    with pytest.raises(ValueError, match="registered twice"):
        fault("swap-index-map", "again", suites=("named_sharding",))
    with pytest.raises(ValueError, match="one-line description"):
        fault("new-fault", "two\nlines", suites=("named_sharding",))
    with pytest.raises(ValueError, match="not suite areas"):
        fault("new-fault", "one line", suites=("test_named_sharding.py",))


def test_a_stopped_kill_map_resumes_only_on_the_commit_it_measured(tmp_path, capsys):
    """``--resume`` finishes a map from the faults saved in its ``.partial`` file, without
    running them again, and refuses a partial measured on another commit or device count."""
    from tests.faults import killmap
    out = tmp_path / "jax-x.json"
    partial = tmp_path / "jax-x.json.partial"
    test_id = "suites/test_visualize.py::test_picture_is_the_models_block_grid"
    saved = {"jax": killmap.version("jax"), "devices": 8, "commit": "0" * 40,
             "unfaulted": {"wall": 1.0, "tests": {test_id: {"outcome": "passed"}}},
             "faults": {"swap-index-map": {"plantable": True, "seconds_to_first_failure": 2.0, "x_status": 1,
                                           "killed": [test_id]}}}
    partial.write_text(json.dumps(saved))
    args = ["--resume", "--faults", "swap-index-map", "--output", str(out)]
    assert killmap.main(args) == 2 and not out.exists(), "resumed a partial of another commit"
    assert "not resumed" in capsys.readouterr().err
    partial.write_text(json.dumps({**saved, "commit": killmap.measured_commit()}))
    assert killmap.main(args) == 0
    record = json.loads(out.read_text())
    assert record["properties"] == {test_id: ["swap-index-map"]} and record["unfaulted_seconds"] == 1.0
    assert not partial.exists(), "the partial should go once the map is written"


def kill_maps():
    """The one-process kill maps (one per JAX version)."""
    return [json.loads(p.read_text()) for p in sorted(MAPS.glob("jax-*.json")) if not p.name.endswith("processes.json")]


def test_each_fault_across_processes_is_caught_by_several_and_invisible_to_one():
    """In the multi-controller kill map, each fault of ``ACROSS_PROCESSES`` (one per family of what
    only several processes show) kills a property that passed unfaulted with several processes, and
    fails nothing when its target areas run in one process."""
    maps = sorted(MAPS.glob("jax-*-processes.json"))
    if not maps:
        pytest.skip("no multi-controller kill map measured yet: python -m tests.faults.killmap multi-controller")
    for path in maps:
        record = json.loads(path.read_text())
        assert sorted(record["faults"]) == sorted(ACROSS_PROCESSES), path.name
        for name, result in record["faults"].items():
            assert result["killed"], f"{path.name}: {name} killed nothing with {record['processes']} processes"
            assert not result["one_process_failed"], \
                f"{path.name}: {name} is seen by a one-process run: {result['one_process_failed'][:5]}"


def test_every_property_is_killed_by_a_fault_or_explained():
    """Across the measured kill maps (one per JAX version), every property of suites/ that passes
    unfaulted on some version is killed by at least one fault on a version where it passes
    unfaulted (a kill where a known deviation xfails it proves nothing), or is listed in
    unkilled.toml with the reason; one that skips or is xfailed on every version measured is
    explained by its skip reason or its entries."""
    maps = kill_maps()
    if not maps:
        pytest.skip("no kill map measured yet: python -m tests.faults.killmap")
    explained = unkilled()
    collected = run_pytest(["--collect-only", "-q", "suites/"], timeout=300)
    ids = [line.strip() for line in collected.stdout.splitlines() if line.startswith("suites/")]
    assert ids, collected.stdout[-2000:]
    unmeasured, not_killed = [], []
    for test_id in ids:
        if any(test_id.startswith(pattern) for pattern in explained):
            continue
        outcomes = [m["baseline"].get(test_id) for m in maps]
        if all(o is None for o in outcomes):
            unmeasured.append(test_id)
        elif any(m["properties"].get(test_id) and m["baseline"].get(test_id) == "passed" for m in maps):
            continue  # (a kill counts only on a release where the property passes unfaulted: no entry excuses it)
        elif "passed" in outcomes:  # (skipped wherever measured: explained by the skip reason)
            not_killed.append(test_id)
    assert not unmeasured, (f"{len(unmeasured)} properties are in no kill map (re-run python -m "
                            f"tests.faults.killmap): {unmeasured[:10]}")
    assert not not_killed, (f"{len(not_killed)} passing properties are killed by no fault: give them one, "
                            f"or explain them in tests/faults/unkilled.toml: {not_killed}")
