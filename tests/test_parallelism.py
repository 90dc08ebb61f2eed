"""Self-tests of ``strategies.parallelism`` (its draws exercise every parallelism role, against
stated floors) and of ``conformance.checking.tolerance`` (unit roundoffs, the error ratio and its
log). No JAX here.

Floors, over 600 draws on 8 device ids (as the suites force by default):

* >= 70% of layouts split some array over an axis of size > 1;
* each role (data, fsdp, tensor, sequence) splits (size > 1) in >= 20% of them;
* >= 25% combine two or more splitting roles;
* both axis types and both FSDP dimensions are drawn (>= 20% each);
* on one device every layout still names roles and every size is 1.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from conformance.checking.tolerance import error_ratio, record_error, summarize_errors, unit_roundoff
from conformance.model.layout import MeshModel
from strategies.parallelism import ROLES, ParallelLayout, parallel_layouts

DRAWS = 600


def draw_layouts(device_ids, n=DRAWS, **options):
    found = []

    @settings(max_examples=n, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(parallel_layouts(device_ids, **options))
    def collect(layout):
        found.append(layout)
    collect()
    return found


@pytest.fixture(scope="module")
def layouts8():
    return draw_layouts(tuple(range(8)))


def share(items, pred):
    return sum(1 for x in items if pred(x)) / len(items)


def test_layouts_mostly_split_something(layouts8):
    assert share(layouts8, lambda layout: bool(layout.splits())) >= 0.70


@pytest.mark.parametrize("role", ROLES)
def test_each_role_splits_often(layouts8, role):
    assert share(layouts8, lambda layout: layout.size(role) > 1) >= 0.20


def test_layouts_combine_roles(layouts8):
    assert share(layouts8, lambda layout: len(layout.splits()) >= 2) >= 0.25


def test_axis_types_and_fsdp_dims_are_drawn(layouts8):
    for axis_type in ("Auto", "Explicit"):
        assert share(layouts8, lambda layout: layout.axis_type == axis_type) >= 0.20  # noqa: B023 - called in this iteration
    for dim in (0, 1):
        assert share(layouts8, lambda layout: layout.fsdp_dim == dim) >= 0.20  # noqa: B023 - called in this iteration


def test_specs_divide_the_dims(layouts8):
    """Every role's spec divides the sizes ``dims`` builds, and no axis serves two dimensions."""
    for layout in layouts8[:200]:
        d = layout.dims(batch=1, seq=2, hidden=2, ffn=1, heads=1, vocab=3)
        sizes = layout.mesh.axis_sizes
        shapes = {"activation_spec": (d["batch"], d["seq"], d["hidden"]),
                  "tensor_activation_spec": (d["batch"], d["seq"], d["ffn"]),
                  "column_weight_spec": (d["hidden"], d["ffn"]), "row_weight_spec": (d["ffn"], d["hidden"]),
                  "heads_weight_spec": (d["hidden"], d["heads"], d["head_dim"]),
                  "heads_out_weight_spec": (d["heads"], d["head_dim"], d["hidden"]),
                  "embedding_spec": (d["vocab"], d["hidden"]), "vector_spec": (d["hidden"],),
                  "tokens_spec": (d["batch"], d["seq"])}
        for method, shape in shapes.items():
            spec = getattr(layout, method)()
            named = []
            for side, entry in zip(shape, spec):
                axes = () if entry is None else ((entry,) if isinstance(entry, str) else entry)
                named += list(axes)
                assert side % math.prod(sizes[a] for a in axes) == 0, (layout, method, spec, shape)
            assert len(named) == len(set(named)), (layout, method, spec)


def test_one_device_layouts_still_run():
    for layout in draw_layouts((0,), n=50):
        assert all(layout.size(r) == 1 for r in ROLES)
        assert layout.mesh.size == 1


def test_layout_names_and_gathering():
    mesh = MeshModel(tuple(range(8)), (2, 2, 2), ("a", "b", "x"))
    layout = ParallelLayout(mesh, "Auto", data=("a",), fsdp=("b",), tensor=("x",))
    assert layout.name == "dp+fsdp+tp"
    assert layout.batch_axes() == ("a", "b") and layout.size("fsdp") == 2 and layout.size("sequence") == 1
    assert layout.column_weight_spec() == ("b", "x")
    assert layout.row_weight_spec() == ("x", "b")
    assert layout.gathered(layout.row_weight_spec()) == ("x", None)
    assert ParallelLayout(mesh, "Explicit").name == "replicated"
    with pytest.raises(ValueError):
        ParallelLayout(mesh, "Auto", data=("a",), tensor=("a",))


# --- unit roundoffs, error ratios ---------------------------------------------------------------


def test_unit_roundoffs():
    assert unit_roundoff("float32") == 2.0 ** -24
    assert unit_roundoff("bfloat16") == 2.0 ** -8
    with pytest.raises(ValueError):
        unit_roundoff("int32")


def test_error_ratio_and_log(tmp_path, monkeypatch):
    tol = {"rtol": 0.0, "atol": 0.5}
    assert error_ratio([1.0, 2.0], [1.25, 2.0], tol) == 0.5
    assert error_ratio([np.nan], [np.nan], tol) == 0.0
    assert error_ratio([np.nan], [1.0], tol) == np.inf
    log = tmp_path / "errors.jsonl"
    monkeypatch.setenv("CONFORMANCE_ERROR_LOG", str(log))
    record_error("p", [1.0], [1.1], {"rtol": 0.0, "atol": 1.0}, layout="dp")
    record_error("p", [1.0], [1.3], {"rtol": 0.0, "atol": 1.0})
    assert json.loads(log.read_text().splitlines()[0])["layout"] == "dp"
    summary = summarize_errors(str(log))
    assert summary["p"]["examples"] == 2 and summary["p"]["max_ratio"] == pytest.approx(0.3)
