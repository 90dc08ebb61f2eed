"""The bugs the suite found: causes, their scripts, the reports to file and BUGS.md.

The scripts run here, each alone in a fresh interpreter on the installed JAX (a child forked from one
that has imported JAX: ScriptServer): a cause in effect on
it must show its bug (exit 1, or SIGABRT for a cause that aborts), every other must exit 0.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from packaging.version import Version

from conformance.checking.isolation import ForkServer
from conformance.runner.deviations import DEVIATIONS_FILE, Deviation, load_deviations
from conformance.runner.devices import UsageError
from conformance.runner.release_envs import script_environment
from conformance.runner.run_folder import ROOT, write_atomically
from reports import bugs

JAX = importlib.metadata.version("jax")


@pytest.fixture(scope="module")
def every():
    causes, entries = bugs.load_causes(), load_deviations(DEVIATIONS_FILE)
    return causes, entries


def test_every_bug_has_a_cause_and_every_cause_its_entries_and_script(every):
    """Every bug entry names a cause that exists, every cause is named, a random entry shares its
    reproduction's cause, and a cause in effect from 0.10.2 on has a script."""
    assert bugs.problems(*every) == []


def test_the_page_is_current(every):
    """BUGS.md is what `python -m reports bugs --page` writes from the two files."""
    assert bugs.PAGE.read_text() == bugs.page(*every), "BUGS.md is stale: python -m reports bugs --page"


def test_the_readme_links_the_page_on_its_first_screen():
    first_screen = "\n".join((ROOT / "README.md").read_text().splitlines()[:30])
    assert "(BUGS.md)" in first_screen


@pytest.fixture(scope="module")
def script_runs(every, tmp_path_factory):
    """Every cause's script run once on the installed JAX, as a fresh interpreter runs it (under
    MESH_RECORDER, which only notes its meshes): cause id -> (how it ended, the most devices a mesh
    of it holds, 0 for none). Once per pytest run: the xdist workers of a run share the scripts out
    (in the run's temporary folder) and read each other's runs."""
    causes, _ = every
    one_run = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # (set in each worker of an xdist run)
    folder = tmp_path_factory.getbasetemp().parent / f"bug-script-runs-{one_run}" if one_run else \
        tmp_path_factory.mktemp("bug-script-runs")
    folder.mkdir(exist_ok=True)
    try:
        return shared_runs(folder, {c.id: c.script for c in causes.values() if c.script.is_file()})
    finally:
        _SCRIPT_SERVER.close()


def shared_runs(folder, scripts, pause: float = 0.2):
    """``recorded_run`` of each of ``scripts`` (cause id -> script), each run by whichever process
    sharing ``folder`` claims it first (a claim file holding its pid; a claim whose process is gone
    is taken again), its result kept there as JSON; returns them all once every one is kept."""
    def kept(cause):
        return folder / f"{cause}.json"

    pending = dict(scripts)
    while pending:
        for cause, script in list(pending.items()):
            if kept(cause).exists():
                del pending[cause]
                continue
            claim = folder / f"{cause}.claim"
            try:
                with open(claim, "x") as mine:
                    mine.write(str(os.getpid()))
            except FileExistsError:
                owner = claim.read_text()
                if owner and not process_alive(int(owner)) and not kept(cause).exists():
                    claim.unlink(missing_ok=True)  # its process died: claimed again on the next pass
                continue
            run, used = recorded_run(script, folder)
            write_atomically(kept(cause), json.dumps([dataclasses.asdict(run), used]))
            del pending[cause]
        if pending:
            time.sleep(pause)
    runs = {cause: json.loads(kept(cause).read_text()) for cause in scripts}
    return {cause: (bugs.Run(**run), used) for cause, (run, used) in runs.items()}


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def test_scripts_shared_by_two_processes_run_once_each_and_a_dead_claim_is_taken_again(tmp_path, monkeypatch):
    """shared_runs: a script another live process claimed is waited for, not run again; one claimed
    by a process that is gone is run here."""
    ran = []
    monkeypatch.setattr(sys.modules[__name__], "recorded_run",
                        lambda script, folder: (ran.append(script) or bugs.Run(1, "out", "err"), 2))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    (tmp_path / "b.claim").write_text(gone)
    (tmp_path / "c.claim").write_text(str(os.getppid()))  # a live process, whose result lands later
    later = threading.Timer(0.5, lambda: write_atomically(tmp_path / "c.json", json.dumps(
        [dataclasses.asdict(bugs.Run(0, "", "")), 0])))
    later.start()
    runs = shared_runs(tmp_path, {"a": "a.py", "b": "b.py", "c": "c.py"}, pause=0.01)
    later.join()
    assert sorted(ran) == ["a.py", "b.py"]
    assert runs == {"a": (bugs.Run(1, "out", "err"), 2), "b": (bugs.Run(1, "out", "err"), 2),
                    "c": (bugs.Run(0, "", ""), 0)}


@pytest.fixture(scope="module")
def written(every, script_runs, tmp_path_factory):
    """The reports ``python -m reports bugs DIR`` writes on the installed JAX, with their runs."""
    causes, entries = every
    return bugs.write_reports(tmp_path_factory.mktemp("bugs"), causes, entries, JAX,
                              runs={cause: run for cause, (run, _) in script_runs.items()})


def test_every_script_shows_its_bug_exactly_where_its_cause_is_in_effect(every, script_runs):
    """Each script, run alone in a fresh interpreter, shows its bug (exit 1, or SIGABRT where the
    cause aborts) for the causes in effect on this JAX and, on a release the scripts are written
    for (bugs.SCRIPTS_FROM on), exits 0 for the others."""
    causes, entries = every
    judged_when_absent = Version(JAX) >= Version(bugs.SCRIPTS_FROM)
    wrong = []
    for f in bugs.found(causes, entries):
        if not f.cause.script.is_file() or (not f.in_effect_on(JAX) and not judged_when_absent):
            continue
        run, _ = script_runs[f.cause.id]
        if f.in_effect_on(JAX) != run.shows_the_bug(f.cause) or (not f.in_effect_on(JAX) and run.returncode != 0):
            wrong.append(f"{f.cause.script.name}: {run.status} on JAX {JAX}, where the cause is "
                         f"{'in effect' if f.in_effect_on(JAX) else 'not in effect'}\n"
                         f"{run.stdout[-800:]}{run.stderr[-800:]}")
    assert not wrong, "\n".join(wrong)


def test_reports_are_written_only_in_effect_say_reproduced_and_hold_no_local_path(every, written):
    causes, entries = every
    assert {f.cause.id for _, f, _ in written} == {f.cause.id for f in bugs.in_effect(causes, entries, JAX)}
    for path, f, run in written:
        text = path.read_text()
        assert bugs.has_local_path(text) is None, f"{path.name}: local path {bugs.has_local_path(text)!r}"
        assert text.startswith(f"# {f.cause.title}\n")
        assert "### System info" in text and f"jax:    {JAX}" in text
        assert f"**Expected behaviour**: {bugs.expected_text(f.cause)}" in text, path.name
        if run is not None:
            devices = bugs.forced_devices(f.cause.script)
            assert f"Reproduced on JAX {JAX} ({bugs.where(f.cause.script)})" in text, path.name
            assert f"XLA_FLAGS=--xla_force_host_platform_device_count={devices}\n" in text, (
                f"{path.name}: the system info is not that of the script's {devices} devices")
            assert f.cause.script.read_text().strip() in text


def test_the_page_says_where_each_cause_s_expected_behaviour_comes_from(every):
    """Every cause on BUGS.md says what states the behaviour it expects, or that it is our reading."""
    causes, entries = every
    page = bugs.page(causes, entries)
    for f in bugs.found(causes, entries):
        if f.entries:
            section = page.split(f"\n## {f.cause.id}\n", 1)[1].split("\n## ", 1)[0]
            assert f"- expected behaviour: {bugs.expected_text(f.cause)}" in section, f.cause.id


# Runs a script (argv[1]) as a fresh interpreter would, recording how many distinct devices each
# jax.sharding.Mesh it builds holds (pmap builds one too) and each pmap's devices= names, one line
# each, to $MESHES_USED.
MESH_RECORDER = """
import os, runpy, sys
import jax
import numpy as np
from jax._src import mesh
record = open(os.environ["MESHES_USED"], "a")
def note(devices):
    record.write(f"{max(d.id for d in np.asarray(devices, dtype=object).flat) + 1}\\n")
    record.flush()
build, pmap = mesh.Mesh.__new__, jax.pmap
def built(cls, devices, *args, **kwargs):
    note(devices)
    return build(cls, devices, *args, **kwargs)
def pmapped(*args, devices=None, **kwargs):
    if devices is not None:
        note(devices)
    return pmap(*args, devices=devices, **kwargs)
mesh.Mesh.__new__, jax.pmap = built, pmapped
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


class ScriptServer(ForkServer):
    """Fresh interpreters for the bug scripts without JAX's import time (MESH_RECORDER imports JAX
    before the script sets its device count anyway: JAX reads XLA_FLAGS when its backend starts):
    the server imports JAX in the environment a script runs in (``script_environment``), and each
    script runs in a child forked from it (about a second less per script, of some 75)."""

    @staticmethod
    def _environment() -> dict:
        return {k: v for k, v in script_environment().items() if k != "PYTEST_CURRENT_TEST"}


_SCRIPT_SERVER = ScriptServer()


def recorded_run(script, folder, timeout: float = 600):
    """``script`` run on the installed JAX in a fresh interpreter (a child of ``_SCRIPT_SERVER``, as
    bugs.run_script runs it, its meshes recorded): (how it ended, the devices its meshes (and the
    devices= of its pmaps) reach: the highest device id any of them holds, plus one; 0: none)."""
    record = folder / f"{script.stem}.meshes"
    record.unlink(missing_ok=True)
    code = "\n".join(["import os, sys", f"os.chdir({str(script.parent)!r})",
                      f"os.environ.update({script_environment()!r})",
                      f"os.environ['MESHES_USED'] = {str(record)!r}", f"sys.argv = ['-c', {str(script)!r}]",
                      MESH_RECORDER])
    try:
        done = _SCRIPT_SERVER.run(code, timeout=timeout)
        run = bugs.Run(done.returncode, done.stdout, done.stderr)
    except subprocess.TimeoutExpired:
        run = bugs.Run(124, "", f"timed out after {timeout:.0f} s")
    return run, max((int(n) for n in record.read_text().split()), default=0) if record.exists() else 0


def devices_its_meshes_use(script, folder) -> int:
    """The devices the meshes of ``script`` (and the devices= of its pmaps) reach when it runs on the
    installed JAX: the highest device id any of them holds, plus one (0: none; two meshes over
    disjoint devices reach both)."""
    return recorded_run(script, folder)[1]


def test_a_script_of_several_processes_is_told_apart_and_says_where_it_runs():
    """A script that starts its own copies (multi-controller JAX) runs as that many processes of
    the devices its launcher forces on each; the report says so."""
    script = ROOT / "suites" / "bugs" / "device_put_of_a_nan_across_processes.py"
    assert (bugs.processes_of(script), bugs.forced_devices(script)) == (2, 2)
    assert bugs.where(script) == "CPU, 2 processes of 2 forced host devices each"
    one = ROOT / "suites" / "bugs" / "mesh_accepts_repeats.py"
    assert bugs.processes_of(one) == 1 and bugs.where(one).startswith("CPU, ")


def test_the_devices_a_script_s_meshes_use_are_counted_as_it_runs(tmp_path):
    script = tmp_path / "some_bug.py"
    script.write_text('import os\nos.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=3"\n'
                      "import jax\nimport numpy as np\nfrom jax.sharding import Mesh\n"
                      "Mesh(np.array(jax.devices()[:2]), ('a',))\njax.pmap(lambda a: a, devices=jax.devices()[:1])\n")
    assert devices_its_meshes_use(script, tmp_path) == 2
    script.write_text('import os\nos.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=3"\n'
                      "import jax\nimport numpy as np\nfrom jax.sharding import Mesh\n"
                      "Mesh(np.array(jax.devices()[:1]), ('a',)); Mesh(np.array(jax.devices()[1:3]), ('a',))\n")
    assert devices_its_meshes_use(script, tmp_path) == 3
    script.write_text('import os\nos.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=3"\n'
                      "import jax\nprint(jax.devices())\n")
    assert devices_its_meshes_use(script, tmp_path) == 0


def test_every_script_forces_no_more_devices_than_its_meshes_use(every, script_runs):
    """A script forces exactly the devices its meshes reach, one where it builds no mesh (a script of
    several processes is left out: its meshes are built in the copies it starts, which the recorder
    does not see; each copy's devices are in its launcher, which the report quotes)."""
    causes, _ = every
    wrong = []
    for c in causes.values():
        if c.script.is_file() and bugs.processes_of(c.script) == 1:
            used = max(script_runs[c.id][1], 1)
            if bugs.forced_devices(c.script) != used:
                wrong.append(f"{c.script.name} forces {bugs.forced_devices(c.script)} devices, but should force "
                             f"{used}, the devices its meshes (or pmap's devices=) reach")
    assert not wrong, "\n".join(wrong)


def test_reports_name_no_suite_test_nor_cause_id_above_their_footer(every, written):
    """A report reads without the suite's vocabulary: no test id of suites/, no "cause <id>" (nor
    any other cause's id) above the footer, which keeps them for the suite's people."""
    causes, entries = every
    for path, f, _ in written:
        body, _, foot = path.read_text().rpartition("<!-- for the suite:")
        assert body and f"cause {f.cause.id};" in foot, f"{path.name}: no footer"
        assert "suites/test_" not in body, \
            f"{path.name} names a suite test above its footer"  # (JAX's own tests may be cited)
        words = set(re.findall(r"[A-Za-z0-9_]+", body))
        others = [c for c in causes if c != f.cause.id and c in words]
        assert not others and f"cause {f.cause.id}" not in body, f"{path.name} names cause ids: {others}"


def test_every_cause_says_what_was_checked_to_route_it(every):
    """A report's routing names what was looked at (the program JAX emits, where the error comes
    from), never that it was not looked at."""
    causes, _ = every
    unrouted = [c.id for c in causes.values() if "not looked at" in c.tracker_checked]
    assert not unrouted, f"causes routed without a look: {unrouted}"


def test_scripts_are_plain_jax_and_numpy_with_no_unused_import(every):
    """A script imports only the standard library, jax and numpy (no suite code, no Hypothesis), uses
    every name it imports, sets its devices before JAX starts, and ends by exiting with its verdict."""
    import ast
    import sys
    allowed = set(sys.stdlib_module_names) | {"jax", "numpy"}
    causes, _ = every
    for c in causes.values():
        if not c.script.is_file():
            continue
        tree = ast.parse(c.script.read_text())
        imported = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update({(a.asname or a.name).split(".")[0]: a.name for a in node.names})
            elif isinstance(node, ast.ImportFrom):
                imported.update({a.asname or a.name: node.module for a in node.names})
        foreign = sorted(m for m in imported.values() if m.split(".")[0] not in allowed)
        assert not foreign, f"{c.script.name} imports {foreign}"
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        unused = sorted(name for name in imported if name not in used)
        assert not unused, f"{c.script.name}: unused import(s) {unused}"
        text = c.script.read_text()
        assert text.index("xla_force_host_platform_device_count") < text.index("import jax"), c.script.name
        assert "sys.exit(" in text or c.aborts, f"{c.script.name} should end with sys.exit(verdict)"


# --- the pieces, against hand-worked cases ------------------------------------------------------

CAUSE = """\
[[cause]]
id = "some_bug"
title = "x is wrong"
description = "It is."
tracker = "jax-ml/jax"
tracker_checked = "the jaxpr"
upstream = "none found"
searches = ["x wrong"]
searched = "2026-12-02"
expected_from = ["https://docs.jax.dev/en/latest/parallel.html"]
"""


@pytest.mark.parametrize("change, message", [
    ('tracker = "jax-ml/jax"', None),
    ('tracker = "google/jax"', ":5: cause 'some_bug' has tracker = 'google/jax', not one of jax-ml/jax, openxla/xla"),
    ('id = "some_bug"', None),
    ('id = "Some-Bug"', ":2: cause 'Some-Bug' has id = 'Some-Bug': lower-case words joined by _"),
    ('upstream = "none found"', None),
    ('upstream = "jax#1"', ":1: cause 'some_bug' names 'jax#1': an upstream link is a https://github.com/ issue"),
    ('searches = ["x wrong"]', None),
    ('searches = []', ":1: cause 'some_bug' lacks searches"),
    ('title = "x is wrong"', None),
    ('titel = "x is wrong"', ":3: cause 'some_bug' has unknown key(s) titel (did you mean title?)"),
    ('expected_from = ["jax-ml/jax tests/pjit_test.py::ShardingInTypesTest::test_slice"]', None),
    ('expected_from = ["our reading: no page says so", "https://github.com/jax-ml/jax/issues/1"]', None),
    ('expected_from = []', ":1: cause 'some_bug' lacks expected_from"),
    ('expected_from = ["the docs"]', ":10: cause 'some_bug' has expected_from entry 'the docs', but each should be "
                                     "a https:// link, \"jax-ml/jax tests/<file>.py::<test>\" or \"our reading: "),
    ('expected_from = ["jax-ml/jax pjit_test.py::test_slice"]', ":10: cause 'some_bug' has expected_from entry"),
    ('expected_from = ["our reading: "]', ":10: cause 'some_bug' has expected_from entry 'our reading: '"),
    ('expected_from = ["our reading: a", "our reading: b"]',
     ':10: cause \'some_bug\' has 2 "our reading: ..." entries in expected_from, but should have at most one'),
])
def test_a_malformed_cause_is_refused_naming_its_line(tmp_path, change, message):
    original = next(line for line in CAUSE.splitlines() if line.split(" =")[0] == change.split(" =")[0]
                    or (change.startswith("titel") and line.startswith("title")))
    path = tmp_path / "causes.toml"
    path.write_text(CAUSE.replace(original, change))
    if message is None:
        assert list(bugs.load_causes(path)) == ["some_bug"]
        return
    with pytest.raises(UsageError) as e:
        bugs.load_causes(path)
    assert str(e.value).startswith(f"{path}:") and message in str(e.value), str(e.value)


def test_a_cause_defined_twice_is_refused(tmp_path):
    path = tmp_path / "causes.toml"
    path.write_text(CAUSE + "\n" + CAUSE)
    with pytest.raises(UsageError, match=r":13: cause 'some_bug' is defined twice \(also at line 1\)"):
        bugs.load_causes(path)


def test_a_cause_that_does_not_say_where_its_expected_behaviour_comes_from_is_refused(tmp_path):
    path = tmp_path / "causes.toml"
    path.write_text(CAUSE.replace('expected_from = ["https://docs.jax.dev/en/latest/parallel.html"]\n', ""))
    with pytest.raises(UsageError, match=r"causes.toml:1: cause 'some_bug' lacks expected_from$"):
        bugs.load_causes(path)


def test_the_expected_behaviour_is_cited_or_said_to_be_our_reading():
    cited = cause(expected_from=("https://docs.jax.dev/en/latest/_autosummary/jax.lax.pad.html",
                                 "jax-ml/jax tests/pjit_test.py::ShardingInTypesTest::test_slice",
                                 "https://github.com/jax-ml/jax/commit/1f556c1262b7ba72b8cbd8290863c0a6aa625255"))
    assert (cited.our_reading, len(cited.citations)) == ("", 3)
    assert bugs.expected_text(cited) == (
        "as stated by [JAX docs: jax.lax.pad](https://docs.jax.dev/en/latest/_autosummary/jax.lax.pad.html), "
        "JAX's test [tests/pjit_test.py::ShardingInTypesTest::test_slice]"
        "(https://github.com/jax-ml/jax/blob/main/tests/pjit_test.py), "
        "[jax-ml/jax@1f556c1](https://github.com/jax-ml/jax/commit/1f556c1262b7ba72b8cbd8290863c0a6aa625255).")
    ours = cause(expected_from=("our reading: no page says so.", "https://docs.jax.dev/en/latest/parallel.html"))
    assert bugs.expected_text(ours) == (
        "our reading (no source we found states it): no page says so "
        "(drawing on [JAX docs: parallel](https://docs.jax.dev/en/latest/parallel.html)).")
    assert bugs.expected_text(cause(expected_from=("our reading: nothing says so",))) == (
        "our reading (no source we found states it): nothing says so.")
    assert bugs.citation_text("https://openxla.org/stablehlo/spec#pad") == "<https://openxla.org/stablehlo/spec#pad>"


@pytest.mark.parametrize("count, where", [(1, "CPU, 1 forced host device"), (6, "CPU, 6 forced host devices")])
def test_a_report_says_the_devices_its_script_forces(tmp_path, count, where):
    script = tmp_path / "some_bug.py"
    script.write_text(f'import os\nos.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count={count}"\n'
                      "import jax\n")
    assert (bugs.forced_devices(script), bugs.where(script)) == (count, where)
    script.write_text("import jax\n")
    with pytest.raises(UsageError, match="forces no device count, but should set"):
        bugs.forced_devices(script)


def cause(**kw) -> bugs.Cause:
    base = dict(id="some_bug", title="x is wrong", description="It is.", tracker="jax-ml/jax",
                tracker_checked="the jaxpr", upstream="none found", searches=("x wrong",), searched="2026-12-02")
    return bugs.Cause(**{**base, **kw})


def test_problems_name_the_entry_or_cause_that_is_wrong():
    causes = {"some_bug": cause(), "unused": cause(id="unused")}
    strict = Deviation("suites/t.py::test_a", ">=0.4.30", "r", kind="bug", cause="some_bug", line=3)
    entries = [strict,
               Deviation("suites/t.py::test_b", ">=0.4.30", "r", kind="bug", line=9),
               Deviation("suites/t.py::test_c", ">=0.4.30", "r", kind="bug", cause="sme_bug", line=12),
               Deviation("suites/t.py::test_p", ">=0.4.30", "r", strict=False, reproduced_by="suites/t.py::test_a",
                         kind="bug", cause="unused", line=15)]
    found = "\n".join(bugs.problems(causes, entries))
    assert ":9: a bug names no cause" in found
    assert ":12: cause 'sme_bug' is not in suites/bugs/causes.toml (did you mean 'some_bug'?)" in found
    assert ":15: cause 'unused' differs from its reproduction's (some_bug)" in found
    assert "cause 'some_bug' is in effect from 0.10.2 on but has no script suites/bugs/some_bug.py" in found


def test_releases_of_a_cause_come_from_its_entries_ranges():
    entries = (Deviation("suites/t.py::test_a", ">=0.6.0,<0.7.0,!=0.6.1", "r", kind="bug"),
               Deviation("suites/t.py::test_b", "==0.8.0", "r", kind="bug"))
    f = bugs.Found(cause(), entries, {"suites/t.py::test_a": {"0.5.3": "behaves"},
                                      "suites/t.py::test_b": {"0.5.3": "behaves"}})
    assert f.releases == ["0.6.0", "0.6.2", "0.8.0"]
    assert bugs.spans(f.releases) == "0.6.0, 0.6.2, 0.8.0"
    assert (f.first_bad, f.last_good, f.fixed_in) == ("0.6.0", "0.5.3", "0.8.1")
    skipped = bugs.Found(cause(), entries, {"suites/t.py::test_a": {"0.5.3": "skipped"},
                                            "suites/t.py::test_b": {"0.5.3": "behaves"}})
    assert (skipped.before, skipped.last_good) == ("0.5.3", ""), "a release whose tests skip is no evidence of good"
    assert "could not run its tests" in bugs.releases_line(skipped)
    failing = bugs.Found(cause(), entries, {"suites/t.py::test_a": {"0.5.3": "fails"},
                                            "suites/t.py::test_b": {"0.5.3": "behaves"}})
    assert failing.before_seen == "fails" and failing.last_good == ""
    line = bugs.releases_line(failing)  # (pmap_negative_axes: its tests ran on 0.7.2 and failed with another cause)
    assert "could not run" not in line and \
        "on the release before, 0.5.3, its tests fail with another bug's symptom" in line
    everything = bugs.Found(cause(), (Deviation("suites/t.py::test_a", ">=0.4.30", "r", kind="bug"),), {})
    assert bugs.spans(everything.releases) == "0.4.30 – 0.12.0.1"
    assert (everything.last_good, everything.fixed_in) == ("", "")


def test_local_paths_are_cut_and_an_abort_is_quoted_by_its_check_line():
    text = ("  File \"/work/main/.venv/lib/python3.11/site-packages/jax/_src/pjit.py\", line 3\n"
            "  File \"/usr/lib/python3.11/subprocess.py\", line 9\n"
            "see /tmp/pytest-of-root/x/report.md and /home/me/a.py\n"
            "platform: uname_result(system='Linux', node='my-box', release='6')")
    cut = bugs.without_local_paths(text)
    assert cut == ("  File \"jax/_src/pjit.py\", line 3\n  File \"subprocess.py\", line 9\n"
                   "see report.md and a.py\nplatform: uname_result(system='Linux', node='…', release='6')")
    assert bugs.has_local_path(cut) is None and \
        bugs.has_local_path(text) == "/work/main/.venv/lib/python3.11/site-packages/"
    run = bugs.Run(-signal.SIGABRT, "expected: a compiled program\n", textwrap.dedent("""\
        WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
        F0000 00:00:1764650000.123456   12345 hlo_sharding_util.cc:3014] Check failed: sliced.has_value() """
        """Could not slice dimension 1 with size 3
        *** Check failure stack trace: ***
            @     0x7f00 /work/venv/lib/python3.11/site-packages/jaxlib/xla_extension.so
        """))
    assert run.shows_the_bug(cause(aborts=True)) and not run.shows_the_bug(cause())
    assert bugs.output_shown(cause(aborts=True), run) == (
        "expected: a compiled program\nhlo_sharding_util.cc:3014] Check failed: sliced.has_value() "
        "Could not slice dimension 1 with size 3")
