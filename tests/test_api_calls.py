"""The API-call recorder (conformance/runner/api_calls.py) and the coverage table built from it
(reports/api_coverage.py), against hand-worked calls and a hand-written inventory."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from conformance.jaxside import bridge, compat
from conformance.runner import api_calls as calls
from reports import api_coverage as cov
from reports.record import ReportError


@pytest.mark.parametrize("value, form", [
    (None, "None"), (True, "bool"), (3, "int"), (-1, "negative int"), ("a", "str"), ([1, 2], "list"),
    ((1, 2), "tuple"), ((("a", "b"), None), "nested tuple"), ((0, -1), "tuple with a negative int"),
    (np.zeros(2), "numpy"), ({"a": 1}, "dict"), (len, "callable"), (P("a"), "PartitionSpec"),
    (np.float32, "dtype"), (jnp.bfloat16, "dtype"), (np.dtype("int8"), "dtype"),
])
def test_forms_of_plain_values(value, form):
    assert calls.form_of(value) == form


def test_forms_of_devices_shardings_and_arrays():
    mesh = bridge.jax_mesh(bridge.line_mesh())
    sharding = NamedSharding(mesh, P("a"))
    assert calls.form_of(jax.devices()[0]) == "Device"
    assert calls.form_of(sharding) == "NamedSharding"
    assert calls.form_of((sharding, P())) == "pytree (tuple) of shardings"
    assert calls.form_of(jnp.zeros(2)) == "jax.Array"
    assert calls.form_of(jax.device_put(np.zeros(len(jax.devices()) * 2), sharding)) == "sharded jax.Array"


@pytest.fixture
def recorder():
    """A recorder over jnp.zeros, jax.lax.psum and jax.device_put, active, removed afterwards."""
    r = calls.Recorder()
    r.install(["jax.numpy.zeros", "jax.lax.psum", "jax.device_put", "jax.sharding.NamedSharding",
               "jax.sharding.get_abstract_mesh"])
    r.active = True
    yield r
    r.uninstall()


def test_the_recorder_counts_each_parameter_passed_with_its_spelling_and_context(recorder):
    jnp.zeros((2,), dtype=jnp.float32)
    jax.jit(lambda: jnp.zeros([3]))()
    jax.vmap(lambda x: x + jnp.zeros(()))(np.ones(2))
    got = set(map(tuple, calls.as_rows(recorder.calls)))
    assert ("jax.numpy.zeros", "dtype", "dtype", "keyword", "eager", 1) in got
    if compat.current_trace_name() is not None:
        assert ("jax.numpy.zeros", "shape", "tuple", "positional", "eager", 1) in got
        assert ("jax.numpy.zeros", "shape", "list", "positional", "jit", 1) in got
        assert ("jax.numpy.zeros", "shape", "tuple", "positional", "vmap", 1) in got
    else:  # (before 0.4.36 a call without tracers among its arguments reads as eager)
        assert ("jax.numpy.zeros", "shape", "tuple", "positional", "eager", 2) in got
    assert not any(row[1] == "device" for row in got), "a default is not a form the caller chose"


def test_the_recorder_names_a_shard_map_body_and_counts_nothing_while_inactive(recorder):
    mesh = bridge.jax_mesh(bridge.line_mesh())
    body = compat.feature("jax.shard_map") if compat.FEATURES["jax.shard_map"].available else None
    if body is None:
        pytest.skip("jax.shard_map arrived in 0.6.1")
    x = np.arange(len(jax.devices()), dtype=np.float32)
    jax.jit(body(lambda a: jax.lax.psum(a, "a"), mesh=mesh, in_specs=P("a"), out_specs=P()))(x)
    rows = {tuple(r[:5]) for r in calls.as_rows(recorder.calls)}
    assert ("jax.lax.psum", "axis_name", "str", "positional", "shard_map body") in rows
    recorder.active = False
    before = recorder.calls.copy()
    jnp.zeros(3)
    assert recorder.calls == before


def test_uninstall_puts_the_originals_back():
    original = jnp.zeros
    r = calls.Recorder()
    assert r.install(["jax.numpy.zeros", "jax.sharding.NamedSharding", "jax.no_such_entry"]) == ["jax.numpy.zeros"]
    assert jnp.zeros is not original and jnp.zeros.__conformance_recorded__ is original
    r.uninstall()
    assert jnp.zeros is original


def test_a_call_that_does_not_bind_is_counted_as_unbindable(recorder):
    with pytest.raises(TypeError):
        jnp.zeros((2,), no_such_keyword=1)
    assert any(c.parameter == calls.UNBINDABLE for c in recorder.calls)


# --- the table ---------------------------------------------------------------------------------
INVENTORY = {"jax.f": {"params": [["x", "POSITIONAL_OR_KEYWORD", "", ""], ["axis", "KEYWORD_ONLY", "int", "0"]],
                       "returns": ""},
             "jax.C": {"params": [["a", "POSITIONAL_OR_KEYWORD", "", ""]], "returns": ""},
             "jax.g": {"params": [["y", "POSITIONAL_OR_KEYWORD", "", ""]], "returns": ""}}


def test_the_table_gives_each_pair_its_status():
    rows = [cov.Row("jax.C", ("*",), "checked by", "a class", by=("suites/test_c.py",)),
            cov.Row("jax.f", ("axis",), "not yet", "no property passes axis")]
    pairs = cov.table(INVENTORY, [["jax.f", "x", "numpy", "positional", "eager", 3, 1]], rows,
                      ["suites/test_c.py::test_one"])
    status = {(p.entry, p.parameter): p.status for p in pairs}
    assert status == {("jax.f", "x"): "checked", ("jax.f", "axis"): "not yet", ("jax.C", "a"): "checked by",
                      ("jax.g", "y"): "no row"}
    assert next(p for p in pairs if p.parameter == "x").forms == ("numpy (positional)",)
    assert cov.summary(pairs) == {"pairs": 4, "entries": 3, "checked": 1, "checked by": 1, "no row": 1,
                                  "not yet": 1}


def test_a_class_row_whose_suites_did_not_run_says_not_run():
    rows = [cov.Row("jax.C", ("*",), "checked by", "a class", by=("suites/test_c.py",))]
    pairs = cov.table({"jax.C": INVENTORY["jax.C"]}, [], rows, ["suites/test_other.py::test_x"])
    assert [p.status for p in pairs] == ["not run"]


def test_a_measured_call_wins_over_a_row():
    rows = [cov.Row("jax.g", ("*",), "not yet", "stale")]
    pairs = cov.table({"jax.g": INVENTORY["jax.g"]}, [["jax.g", "y", "int", "keyword", "jit", 1, 1]], rows, [])
    assert [(p.status, p.contexts) for p in pairs] == [("checked", ("jit",))]


@pytest.mark.parametrize("text, message", [
    ('[[entry]]\nname = "jax.f"\nparameters = ["*"]\nstatus = "maybe"\nreason = "r"\n', "has status 'maybe'"),
    ('[[entry]]\nname = "jax.f"\nparameters = ["*"]\nstatus = "checked by"\nreason = "r"\n', "gives `by`"),
    ('[[entry]]\nname = "jax.f"\nparameters = ["*"]\nstatus = "not yet"\n', "reason"),
])
def test_rows_that_break_the_file_are_refused(tmp_path, text, message):
    path = tmp_path / "rows.toml"
    path.write_text("format = 1\n" + text)
    with pytest.raises(ReportError, match=message):
        cov.load_rows(path)


def test_the_suites_rows_read():
    assert all(r.status in cov.STATUSES for r in cov.load_rows())


def test_each_computing_entry_has_each_context_checked_or_a_rows_reason():
    """A computing entry's context is checked where a call ran there, else a row's status (an
    entry's row before its namespace's), else "no row"; entries outside the computing namespaces
    have no contexts' cells."""
    inventory = {"jax.lax.psum": {"params": []}, "jax.numpy.zeros": {"params": []}, "jax.device_put": {"params": []}}
    rows = [cov.ContextRow("jax.lax.*", ("grad",), "not yet", "namespace"),
            cov.ContextRow("jax.lax.psum", ("eager", "grad"), "not applicable", "binds a mesh axis")]
    calls = [["jax.lax.psum", "x", "tracer", "positional", "shard_map body", 1, 1],
             ["jax.numpy.zeros", "shape", "tuple", "positional", "eager", 1, 1]]
    cells = {(c.entry, c.context): c.status for c in cov.context_table(inventory, calls, rows)}
    assert cells[("jax.lax.psum", "shard_map body")] == "checked"
    assert cells[("jax.lax.psum", "grad")] == "not applicable" and cells[("jax.lax.psum", "jit")] == "no row"
    assert cells[("jax.numpy.zeros", "eager")] == "checked" and cells[("jax.numpy.zeros", "vmap")] == "no row"
    assert {e for e, _ in cells} == {"jax.lax.psum", "jax.numpy.zeros"} and len(cells) == 2 * len(cov.CONTEXTS)
    text = cov.context_markdown(cov.context_table(inventory, calls, rows))
    assert "| `jax.lax.psum` | not applicable [" in text and "binds a mesh axis" in text


@pytest.mark.parametrize("text, message", [
    ('[[entry]]\nname = "jax.lax.psum"\ncontexts = ["pmap"]\nstatus = "not yet"\nreason = "r"\n', "names contexts"),
    ('[[entry]]\nname = "jax.lax.psum"\ncontexts = ["*"]\nstatus = "checked"\nreason = "r"\n', "has status"),
])
def test_context_rows_that_break_the_file_are_refused(tmp_path, text, message):
    path = tmp_path / "rows.toml"
    path.write_text("format = 1\n" + text)
    with pytest.raises(ReportError, match=message):
        cov.load_context_rows(path)


def test_the_suites_context_rows_read():
    assert all(r.status in cov.CONTEXT_STATUSES for r in cov.load_context_rows())


def test_a_call_the_recorder_cannot_read_still_runs(recorder, monkeypatch):
    """Recording never changes what a call does: a failure to read it is counted, not raised."""
    def broken(*args, **kwargs):
        raise RuntimeError("cannot read")
    monkeypatch.setattr(calls, "form_of", broken)
    assert np.asarray(jnp.zeros(2)).tolist() == [0.0, 0.0]
    assert any(c.parameter == calls.UNRECORDED and c.form == "RuntimeError" for c in recorder.calls)


def test_the_gate_lists_what_a_release_adds_removes_or_renames():
    """compare's API lines come from the two stored inventories: 0.12.0.1 renames make_mesh's
    axis_shapes and removes lax.psend; a release compared with itself has no change."""
    lines = cov.api_changes("0.10.2", "0.12.0.1")
    assert "jax.make_mesh: parameter axis_shapes removed (renamed to axis_sizes?)" in lines
    assert "removed: jax.lax.psend" in lines
    assert cov.api_changes("0.10.2", "0.10.2") == []
    assert cov.api_changes("0.10.2", "9.9.9")[0].startswith("no stored inventory")


def test_the_run_page_shows_the_api_coverage():
    from reports.html import api_coverage_part
    record = {"environment": {"jax": "0.10.2"}, "tests": [], "api_calls": [
        ["jax.device_put", "device", "NamedSharding", "keyword", "eager", 2, 1]]}
    part = "".join(api_coverage_part(record))
    assert "<h2>API coverage</h2>" in part and "NamedSharding (keyword)" in part
    assert "recorded no API calls" in "".join(api_coverage_part({"environment": {"jax": "0.10.2"}, "tests": []}))
