"""The upgrade gate end to end, on real small runs of ``pytest suites/ -m mesh``: each verdict of
``python -m reports compare`` (safe, regressions, a known regression, an accepted regression, and
not comparable for an incomplete run, a run of no test, another selection and other devices) with
its exit status; and the acceptance file refused where it is malformed."""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from conformance.runner.pytest_process import run_pytest
from reports import gate
from reports.__main__ import main
from reports.record import ReportError

MESH = ["suites/", "-m", "mesh"]
FAULT = ["-p", "tests.faults", "--plant-fault", "make-mesh-cycles-devices"]  # kills this one property
BROKEN = "suites/test_mesh.py::test_make_mesh_rejects_more_devices_than_exist"
KNOWN = f'''format = 2

[[deviation]]
test = "{BROKEN}"
jax = ">=0.4.30"
reason = "make_mesh hands out more devices than exist (planted)"
kind = "bug"
upstream = "https://example.invalid/planted"
symptom = {{ wrong = "accepted", at = "^make_mesh$" }}
'''


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The run folders: base, again (another seed), fault, known (the fault and a deviation file
    naming it), crash (killed half-way), selection (-k), devices (4)."""
    root = tmp_path_factory.mktemp("gate")
    (root / "known.toml").write_text(KNOWN)
    plans = {"base": MESH, "again": MESH, "fault": FAULT + MESH,
             "known": FAULT + MESH + ["--deviations", str(root / "known.toml")],
             "crash": ["-p", "tests.probes.crash_half_way"] + MESH, "selection": MESH + ["-k", "make_mesh"],
             "devices": MESH + ["--devices", "4"]}
    def one(name):
        env = {"PROBE_CRASH_AT": BROKEN} if name == "crash" else None
        done = run_pytest([*plans[name], "--report-dir", str(root / name)], env=env, timeout=600)
        return name, done
    with ThreadPoolExecutor(2) as pool:
        outcomes = dict(pool.map(one, plans))
    assert outcomes["base"].returncode == 0, outcomes["base"].stdout[-2000:]
    assert outcomes["fault"].returncode == 1 and outcomes["known"].returncode == 0, outcomes["known"].stdout[-2000:]
    assert outcomes["crash"].returncode == 134
    return root


def gate_says(capsys, *args):
    status = main(["compare", *map(str, args)])
    return status, capsys.readouterr().out


def test_the_same_suites_on_the_same_jax_are_safe(runs, capsys):
    status, out = gate_says(capsys, runs / "base", runs / "again")
    assert status == 0 and out.splitlines()[0] == "VERDICT: SAFE (no regression)", out


def test_a_property_that_breaks_is_a_regression(runs, capsys):
    status, out = gate_says(capsys, runs / "base", runs / "fault")
    assert status == 1, out
    assert out.splitlines()[0] == "VERDICT: REGRESSIONS (1 regression(s))", out
    assert BROKEN in out and "but should raise ValueError" in out


def test_a_property_that_becomes_a_known_deviation_is_a_known_regression(runs, capsys):
    """Passing on BASE and xfailed on NEW by an entry: a regression the team would take on, listed
    with its entry's range, kind, upstream link and file:line."""
    status, out = gate_says(capsys, runs / "base", runs / "known")
    assert status == 1 and out.splitlines()[0] == "VERDICT: REGRESSIONS (1 known regression(s))", out
    (line,) = [ln for ln in out.splitlines() if BROKEN in ln]
    assert "passed -> xfailed" in line and "https://example.invalid/planted" in line and "known.toml:3" in line


def test_an_accepted_regression_is_safe_and_only_it(runs, capsys, tmp_path):
    accept = tmp_path / "accept.toml"
    accept.write_text(f'[[accept]]\ntest = "{BROKEN}"\nreason = "we pin make_mesh callers"\n')
    status, out = gate_says(capsys, runs / "base", runs / "fault", "--accept", accept)
    assert status == 0 and out.splitlines()[0] == "VERDICT: SAFE (1 accepted regression(s))", out
    assert "we pin make_mesh callers" in out
    other = tmp_path / "other.toml"
    other.write_text('[[accept]]\ntest = "suites/test_mesh.py::test_mesh_attributes_match_the_model"\nreason = "x"\n')
    status, out = gate_says(capsys, runs / "base", runs / "fault", "--accept", other)
    assert status == 1 and "accepted, but no such regression here (1)" in out, out
    ranged = tmp_path / "ranged.toml"  # held for a newer JAX than NEW's only
    ranged.write_text(f'[[accept]]\ntest = "{BROKEN}"\nreason = "x"\njax = ">=99"\n')
    assert gate_says(capsys, runs / "base", runs / "fault", "--accept", ranged)[0] == 1


@pytest.mark.parametrize("new, reason", [
    ("crash", "NEW is incomplete"),
    ("selection", "NEW selected other tests: -k make_mesh (BASE: no -k)"),
    ("devices", "NEW ran with device count 4 (BASE: 8)"),
])
def test_runs_that_measure_something_else_are_not_comparable(runs, capsys, new, reason):
    status, out = gate_says(capsys, runs / "base", runs / new)
    lines = out.splitlines()
    assert status == 3 and lines[0].startswith("VERDICT: NOT COMPARABLE"), out
    assert any(reason in ln for ln in lines[1:]), out
    assert any("rerun as BASE ran: pytest suites/ -m mesh --devices 8" in ln for ln in lines), out


def test_a_run_of_no_test_is_not_comparable(runs, capsys, tmp_path):
    """(A run that selects nothing writes no report, so this one is a real report emptied.)"""
    record = json.loads((runs / "base" / "report.json").read_text())
    record["tests"], record["summary"] = [], {k: 0 for k in record["summary"]}
    (tmp_path / "report.json").write_text(json.dumps(record))
    status, out = gate_says(capsys, runs / "base", tmp_path)
    assert status == 3 and "NEW ran no test" in out, out


def test_the_markdown_leads_with_the_verdict(runs, capsys, tmp_path):
    status, _ = gate_says(capsys, runs / "base", runs / "fault", "--markdown", tmp_path / "gate.md")
    assert status == 1
    assert (tmp_path / "gate.md").read_text().splitlines()[2] == "**VERDICT: REGRESSIONS (1 regression(s))**"


@pytest.mark.parametrize("new, status, banner, words", [
    ("again", 0, "green", "Verdict: SAFE"),
    ("fault", 1, "red", "Verdict: REGRESSIONS"),
    ("devices", 3, "amber", "Verdict: NOT COMPARABLE"),
])
def test_the_html_page_leads_with_the_verdict_banner(runs, capsys, tmp_path, new, status, banner, words):
    """The page opens with the gate's verdict in its colour (and the reasons), links each run's
    page, and lists the regression where there is one."""
    assert gate_says(capsys, runs / "base", runs / new, "--html", tmp_path / "gate.html")[0] == status
    text = (tmp_path / "gate.html").read_text()
    first = text.index('<div class="banner')
    assert text[first:].startswith(f'<div class="banner {banner}"><strong>{words}</strong> (exit status {status})'), \
        text[first:first + 300]
    assert text.index("BASE</th>") > first
    if new == "fault":
        assert BROKEN in text and "pass -&gt; fail (regression) (1)" in text
    if new == "devices":
        assert "NEW ran with device count 4 (BASE: 8)" in text
    for run in ("base", new):
        if (runs / run / "report.html").is_file():
            assert f'/{run}/report.html"' in text


@pytest.mark.parametrize("text, message", [
    ('[accept]\ntest = "t"\nreason = "r"\n', "[accept] is one table: write each entry as a [[accept]] table"),
    ('[[accept]]\ntest = "t"\n', ":1: acceptance lacks reason"),
    ('[[accept]]\ntest = "t"\nreason = "r"\nwhy = "w"\n', ":4: acceptance has unknown key(s) why"),
    ('[[accept]]\ntest = "t"\nreason = "r"\njax = 0.4\n',
     ":4: acceptance has jax = 0.4, a number, but jax must be a string: quote it"),
    ('[[acept]]\ntest = "t"\n', ":1: unknown table or key 'acept': the file holds [[accept]] tables"),
    ('[[accept]\n', "not TOML"),
])
def test_a_malformed_acceptance_file_is_refused_naming_its_line(tmp_path, text, message):
    path = tmp_path / "accept.toml"
    path.write_text(text)
    with pytest.raises(ReportError, match=None) as refused:
        gate.load_acceptances(path)
    assert message in str(refused.value), str(refused.value)


def test_a_missing_acceptance_file_is_a_usage_error(runs, capsys, tmp_path):
    assert main(["compare", str(runs / "base"), str(runs / "again"), "--accept", str(tmp_path / "none.toml")]) == 2
    assert "no such file" in capsys.readouterr().err


# --- the rules on hand-made records ----------------------------------------------------------------
def test_an_excuse_new_to_the_new_jax_is_a_known_regression_and_a_draw_is_not():
    """A random property passing in both runs whose examples NEW had excused by an entry BASE's JAX
    is outside of is a known regression; by an entry BASE's JAX is in too, only a draw."""
    from tests.test_reports import entry, record
    from reports import compare as cmp
    excused = lambda jax: [{"entry": "test_p (JAX %s; wrong values)" % jax, "where": "d.toml:9", "jax": jax,
                            "upstream": "https://example.invalid/1", "excused": 3}]
    base = record([entry("suites/t.py::test_p")], jax="0.10.2")
    fresh = record([entry("suites/t.py::test_p", excused=excused(">=0.11"))], jax="0.12.0")
    drawn = record([entry("suites/t.py::test_p", excused=excused(">=0.10"))], jax="0.12.0")
    (change,) = cmp.compare(base, fresh)
    assert change.kind == "known-regression" and "3 example(s) excused" in change.detail and "d.toml:9" in change.detail
    assert cmp.compare(base, drawn) == []
    assert gate.verdict(base, fresh, cmp.compare(base, fresh)).name == gate.REGRESSIONS


def test_properties_missing_under_the_same_suite_commit_make_runs_not_comparable():
    """The same suite commit and selection run the same properties: one missing means the run is
    not what it claims; under another commit it is the suite's change (listed as removed)."""
    from tests.test_reports import entry, record
    from reports import compare as cmp
    both = [entry("suites/t.py::test_a"), entry("suites/t.py::test_b")]
    base = record(both, suite={"version": "1", "commit": "abc"})
    new = record(both[:1], suite={"version": "1", "commit": "abc"})
    verdict = gate.verdict(base, new, cmp.compare(base, new))
    assert verdict.name == gate.NOT_COMPARABLE and verdict.exit_status == 3
    assert "NEW lacks 1 property the other ran (first: suites/t.py::test_b)" in verdict.reasons
    moved = record(both[:1], suite={"version": "1", "commit": "def"})
    assert gate.verdict(base, moved, cmp.compare(base, moved)).name == gate.SAFE
    assert [c.kind for c in cmp.compare(base, moved)] == ["removed"]


def test_the_rerun_command_repeats_the_base_runs_selection():
    from tests.test_reports import record
    base = record([], selection={"paths": ["suites/test_mesh.py"], "markers": "mesh and not slow", "keywords": "",
                                 "deselect": []}, device_count=4, profile="nightly", x64=True)
    assert gate.rerun_command(base) == ("pytest suites/test_mesh.py -m 'mesh and not slow' --devices 4 "
                                        "--hypothesis-profile=nightly --x64")
