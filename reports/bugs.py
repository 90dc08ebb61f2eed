"""``python -m reports bugs``: what the suite found in JAX, one root cause at a time.

Vocabulary:

- A **cause** is one root cause in JAX or XLA (``suites/bugs/causes.toml``, a ``[[cause]]`` table
  each): a title that says what is wrong, a short description, where the behaviour it expects comes
  from (JAX's documentation, JAX's own tests, a maintainer's fix or reply: or, where none states
  it, our reading and why), the tracker it belongs to and what was checked to say so, the upstream
  issue (or "none found", with the searches on record), the related ones. Every known deviation of
  kind ``bug`` names its cause (``cause = "id"``); the entries that share a cause share one report.
- Its **script** (``suites/bugs/<id>.py``) is the smallest stand-alone reproduction: plain JAX and
  numpy, it prints what JAX returns and what it should, and exits 1 while the bug is there (a cause
  that ``aborts`` kills the process with SIGABRT instead), 0 once fixed. It forces as many CPU
  devices as its meshes use (its ``XLA_FLAGS`` line), and the reports say that count. Every cause in
  effect on a release from ``SCRIPTS_FROM`` (0.10.2) on has one, and on those releases it exits 1
  exactly where its cause is in effect; a cause fixed before is reproduced by its tests on a release
  in range.
- A **report** (``bugs DIR``: one markdown file per cause in effect on the installed JAX) is what a
  maintainer gets, in the form JAX's bug template asks for: title, description, where the expected
  behaviour comes from, the script, its output on this JAX trimmed to the line that matters, the
  first bad and last good release, the tracker, related issues, and ``jax.print_environment_info()``.
  It says "reproduced" only when the script exited as a present bug does.
- The **page** (``bugs --page BUGS.md``) lists every cause: the releases it affects, its status
  (open upstream, reported, not reported, fixed in a release) and how to reproduce it; generated from
  the two files, no JAX needed, and checked to be current by tests/test_bugs.py.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from conformance import toml_schema
from conformance.runner.deviations import DEVIATIONS_FILE, Deviation
from conformance.runner.devices import DEFAULT_CPU_DEVICES, UsageError
from conformance.runner.release_envs import measured_file, run_alone, script_environment
from conformance.runner.releases import RELEASES
from conformance.runner.run_folder import ROOT, write_atomically

BUGS_FOLDER = ROOT / "suites" / "bugs"
CAUSES_FILE = BUGS_FOLDER / "causes.toml"
PAGE = ROOT / "BUGS.md"
MEASURED_FILE = measured_file(DEVIATIONS_FILE)
VERSIONS = [r.jax for r in RELEASES]  # the supported releases, oldest first
TRACKERS = {"jax-ml/jax": "JAX emits the wrong program, or the error comes from JAX's own Python",
            "openxla/xla": "the program JAX emits is right and XLA compiles or runs it wrong"}
# The releases the scripts are written for: every cause in effect on one of them has a script, and
# on them a script exits 1 exactly while its cause is in effect. On an older release outside its
# cause's range a script may not run at all (its API is newer) or show an older cause of the same
# test, so there it is not judged.
SCRIPTS_FROM = "0.10.2"
# A script forces its device count before JAX starts, in this line; the reports quote the count.
FORCED_DEVICES = re.compile(r'^os\.environ\["XLA_FLAGS"\] = "--xla_force_host_platform_device_count=(\d+)"', re.M)
# A script of several processes (multi-controller JAX) starts its own copies, each told its devices:
# `XLA_FLAGS="--xla_force_host_platform_device_count=N")) for i in range(P)]` in its launcher.
LAUNCHED_COPIES = re.compile(r'XLA_FLAGS="--xla_force_host_platform_device_count=(\d+)"\)\) for i in range\((\d+)\)\]')
# An expected_from entry: a link, one of JAX's own tests, or (alone or with the sources it draws on)
# our reading of what JAX should do, with why.
JAX_TEST = re.compile(r"jax-ml/jax (tests/[\w/]+\.py)::\w+(?:::\w+)?")
OUR_READING = "our reading: "


@dataclass(frozen=True)
class Cause:
    """One root cause: what is wrong, where it belongs, what upstream knows of it."""

    id: str
    title: str
    description: str
    tracker: str
    tracker_checked: str
    upstream: str  # the issue that reports this very bug, or "none found"
    searches: Tuple[str, ...]  # the queries of the last search of both trackers
    searched: str  # when (YYYY-MM-DD)
    expected_from: Tuple[str, ...] = ()  # citations of the expected behaviour, or our reading and why
    related: Tuple[str, ...] = ()
    aborts: bool = False  # its script kills the process (SIGABRT) rather than exit 1
    reported: str = ""  # the issue we filed, once filed
    fixed_by: str = ""  # the upstream change that fixed it, where known
    api_removed: bool = False  # its range ends where JAX removed the API, not where it was fixed
    comment: str = ""  # for a bug upstream already reports: what to add there (a form of it the suite met)
    line: int = 0

    @property
    def script(self) -> Path:
        return BUGS_FOLDER / f"{self.id}.py"

    @property
    def filed(self) -> str:
        """The upstream issue for it (ours or another's), "" when none is known."""
        return self.reported or ("" if self.upstream in ("", "none found") else self.upstream)

    @property
    def our_reading(self) -> str:
        """Why we read the expected behaviour so, where no source states it ("" when one does)."""
        return next((e[len(OUR_READING):] for e in self.expected_from if e.startswith(OUR_READING)), "")

    @property
    def citations(self) -> List[str]:
        """The sources of the expected behaviour (those our reading draws on, where it is ours)."""
        return [e for e in self.expected_from if not e.startswith(OUR_READING)]


CAUSE_SCHEMA = toml_schema.Schema(
    table="cause", holds="[[cause]] tables", named_by="id",
    keys=(toml_schema.Key("id", str, required=True), toml_schema.Key("title", str, required=True),
          toml_schema.Key("description", str, required=True), toml_schema.Key("expected_from", list, required=True),
          toml_schema.Key("tracker", str, required=True), toml_schema.Key("tracker_checked", str, required=True),
          toml_schema.Key("upstream", str, required=True), toml_schema.Key("searches", list, required=True),
          toml_schema.Key("searched", str, required=True), toml_schema.Key("related", list),
          toml_schema.Key("aborts", bool), toml_schema.Key("reported", str), toml_schema.Key("fixed_by", str),
          toml_schema.Key("api_removed", bool), toml_schema.Key("comment", str)))


def expected_from_problem(entries: Sequence[str]) -> str:
    """What is wrong with a cause's expected_from ("" when nothing is): each entry should be a
    https:// link, one of JAX's tests or our reading with why, and our reading is given once."""
    for e in entries:
        if not isinstance(e, str) or not (e.startswith("https://") or JAX_TEST.fullmatch(e)
                                          or (e.startswith(OUR_READING) and e[len(OUR_READING):].strip())):
            return (f"has expected_from entry {e!r}, but each should be a https:// link, \"jax-ml/jax "
                    f"tests/<file>.py::<test>\" or \"{OUR_READING}<why we read it so>\"")
    readings = [e for e in entries if e.startswith(OUR_READING)]
    if len(readings) > 1:
        return f"has {len(readings)} \"{OUR_READING}...\" entries in expected_from, but should have at most one"
    return ""


def load_causes(path: Path = CAUSES_FILE) -> Dict[str, Cause]:
    """The causes of ``path`` by id; a malformed one is a usage error naming its ``file:line``."""
    causes: Dict[str, Cause] = {}
    for entry in toml_schema.read(path, CAUSE_SCHEMA, UsageError)[1]:
        refuse = entry.refuse
        if not re.fullmatch(r"[a-z][a-z0-9_]*", entry["id"]):
            refuse(f"has id = {entry['id']!r}: lower-case words joined by _ (it names its script)", "id")
        if entry["id"] in causes:
            refuse(f"is defined twice (also at line {causes[entry['id']].line})", "id")
        if expected_from_problem(entry["expected_from"]):
            refuse(expected_from_problem(entry["expected_from"]), "expected_from")
        if entry["tracker"] not in TRACKERS:
            refuse(f"has tracker = {entry['tracker']!r}, not one of {', '.join(TRACKERS)}", "tracker")
        links = [entry["upstream"], entry.get("reported"), entry.get("fixed_by"), *entry.get("related")]
        bad = [u for u in links if u and u != "none found" and not u.startswith("https://github.com/")]
        if bad:
            refuse(f"names {bad[0]!r}: an upstream link is a https://github.com/ issue, pull request or commit "
                   "(or upstream = \"none found\")")
        causes[entry["id"]] = Cause(
            id=entry["id"], title=entry["title"], description=" ".join(entry["description"].split()),
            tracker=entry["tracker"], tracker_checked=" ".join(entry["tracker_checked"].split()),
            upstream=entry["upstream"], searches=tuple(entry["searches"]), searched=entry["searched"],
            expected_from=tuple(" ".join(e.split()) for e in entry["expected_from"]),
            related=tuple(entry.get("related")), aborts=entry.get("aborts"), reported=entry.get("reported"),
            fixed_by=entry.get("fixed_by"), api_removed=entry.get("api_removed"),
            comment=entry.get("comment").strip(), line=entry.line)
    return causes


def affected(entries: Sequence[Deviation]) -> List[str]:
    """The supported releases any of ``entries`` is in effect on (their ranges are bisected), oldest first."""
    return [v for v in VERSIONS if any(SpecifierSet(d.jax).contains(v, prereleases=True) for d in entries)]


def spans(versions: Sequence[str]) -> str:
    """``0.6.0 – 0.10.2, 0.11.1``: runs of consecutive supported releases."""
    runs: List[List[str]] = []
    for v in versions:
        if runs and VERSIONS.index(v) == VERSIONS.index(runs[-1][-1]) + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]} – {run[-1]}" for run in runs)


@dataclass(frozen=True)
class Found:
    """A cause with the deviation entries that name it."""

    cause: Cause
    entries: Tuple[Deviation, ...]
    measured: Mapping[str, Mapping[str, str]] = None  # test id -> release -> fails/behaves/skipped

    def outcomes_on(self, version: str) -> List[str]:
        """How the cause's tests ended on ``version`` in the bisection (none where not measured)."""
        return [self.measured[t][version] for t in self.tests if self.measured and version in self.measured.get(t, {})]

    @property
    def releases(self) -> List[str]:
        return affected(self.entries)

    @property
    def first_bad(self) -> str:
        return self.releases[0]

    @property
    def before(self) -> str:
        """The release before the first bad one ("" when that is the oldest supported)."""
        at = VERSIONS.index(self.first_bad)
        return VERSIONS[at - 1] if at else ""

    @property
    def last_good(self) -> str:
        """The release before the first bad one, where the bisection saw every test of the cause
        behave ("" when it is the oldest supported, or its tests could not run there)."""
        return self.before if self.before_seen == "behaves" else ""

    @property
    def before_seen(self) -> str:
        """How the cause's tests ended on the release before the first bad one: "behaves" (every
        one), "fails" (one failed there, with a failure this cause's entries do not cover: another
        bug's), "skipped" (one could not run: its API is newer), "" where not measured or none is
        older."""
        seen = self.outcomes_on(self.before) if self.before else []
        if not seen:
            return ""
        return "fails" if "fails" in seen else "skipped" if "skipped" in seen else "behaves"

    @property
    def fixed_in(self) -> str:
        """The release after the last affected one ("" while the newest is affected)."""
        at = VERSIONS.index(self.releases[-1])
        return VERSIONS[at + 1] if at + 1 < len(VERSIONS) else ""

    @property
    def tests(self) -> List[str]:
        """The deterministic tests that show it (the strict entries' tests, parametrized cases named)."""
        return list(dict.fromkeys(t for d in self.entries if d.strict for t in d.test_ids))

    def in_effect_on(self, version: str) -> bool:
        return any(SpecifierSet(d.jax).contains(version, prereleases=True) and d.applies_on("cpu", "cpu")
                   for d in self.entries)


def measurement(path: Path = MEASURED_FILE) -> Dict[str, Dict[str, str]]:
    """The bisection's verdicts per test and release (``release_envs deviations --record``)."""
    return json.loads(path.read_text())["tests"] if path.is_file() else {}


def found(causes: Mapping[str, Cause], deviations: Sequence[Deviation],
          measured: Optional[Mapping[str, Mapping[str, str]]] = None) -> List[Found]:
    """Every cause with its entries, in the order of the causes file."""
    measured = measurement() if measured is None else measured
    return [Found(c, tuple(d for d in deviations if d.cause == c.id), measured) for c in causes.values()]


def problems(causes: Mapping[str, Cause], deviations: Sequence[Deviation]) -> List[str]:
    """What ties the deviation entries and the causes together, and is broken: a bug with no cause,
    a cause no entry names or that does not exist, a random entry whose cause is not its
    reproduction's, a cause in effect from 0.10.2 on with no script. One ``file:line`` line each."""
    out = []
    by_test: Dict[str, List[Deviation]] = {}
    for d in deviations:
        by_test.setdefault(d.test, []).append(d)
    for d in deviations:
        if d.kind == "bug" and not d.cause:
            out.append(f"{d.where}: a bug names no cause (cause = an id of {CAUSES_FILE.relative_to(ROOT)})")
        if d.cause and d.cause not in causes:
            close = difflib.get_close_matches(d.cause, causes, n=1)
            out.append(f"{d.where}: cause {d.cause!r} is not in {CAUSES_FILE.relative_to(ROOT)}"
                       + (f" (did you mean {close[0]!r}?)" if close else ""))
        if d.cause and d.kind != "bug":
            out.append(f"{d.where}: kind {d.kind!r} names a cause: only a bug has one")
        if not d.strict and d.cause:
            shown = [e for e in by_test.get(d.reproduced_by, []) if e.strict and e.cause]
            if shown and d.cause not in {e.cause for e in shown}:
                out.append(f"{d.where}: cause {d.cause!r} differs from its reproduction's "
                           f"({', '.join(sorted({e.cause for e in shown}))})")
    named = {d.cause for d in deviations}
    recent = [v for v in VERSIONS if Version(v) >= Version(SCRIPTS_FROM)]
    for f in found(causes, deviations):
        c = f.cause
        if c.id not in named:
            out.append(f"{CAUSES_FILE.relative_to(ROOT)}:{c.line}: cause {c.id!r} is named by no deviation entry")
        elif any(f.in_effect_on(v) for v in recent) and not c.script.is_file():
            out.append(f"{CAUSES_FILE.relative_to(ROOT)}:{c.line}: cause {c.id!r} is in effect from {SCRIPTS_FROM} on "
                       f"but has no script {c.script.relative_to(ROOT)}")
        if c.script.is_file() and not (FORCED_DEVICES.search(c.script.read_text()) or processes_of(c.script) > 1):
            out.append(f"{c.script.relative_to(ROOT)}:1: the script forces no device count, but should set "
                       "os.environ[\"XLA_FLAGS\"] = \"--xla_force_host_platform_device_count=N\" before it imports jax")
    return out


def processes_of(script: Path) -> int:
    """How many processes ``script`` runs as (a script of several starts its own copies), 1 for most."""
    launched = LAUNCHED_COPIES.search(script.read_text())
    return int(launched[2]) if launched else 1


def forced_devices(script: Path) -> int:
    """The number of CPU devices ``script`` forces before JAX starts (its ``XLA_FLAGS`` line; for a
    script of several processes, each copy's)."""
    forced = FORCED_DEVICES.search(script.read_text()) or LAUNCHED_COPIES.search(script.read_text())
    if forced is None:
        raise UsageError(f"{script}: forces no device count, but should set os.environ[\"XLA_FLAGS\"] = "
                         "\"--xla_force_host_platform_device_count=N\" before it imports jax")
    return int(forced[1])


def where(script: Path) -> str:
    """Where ``script`` runs, as a report says it: ``CPU, 2 forced host devices`` (``CPU, 2 processes
    of 2 forced host devices each`` for a script of several processes)."""
    n, processes = forced_devices(script), processes_of(script)
    if processes > 1:
        return f"CPU, {processes} processes of {n} forced host device{'' if n == 1 else 's'} each"
    return f"CPU, {n} forced host device{'' if n == 1 else 's'}"


# --- running a script ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """How a cause's script ended on the installed JAX."""

    returncode: int
    stdout: str
    stderr: str

    def shows_the_bug(self, cause: Cause) -> bool:
        return self.returncode == (-signal.SIGABRT if cause.aborts else 1)

    @property
    def status(self) -> str:
        if self.returncode < 0:
            return f"killed by {signal.Signals(-self.returncode).name}"
        return f"exit status {self.returncode}"


def run_script(script: Path, python: str = sys.executable, timeout: float = 600) -> Run:
    """Run ``script`` alone in a fresh interpreter (CPU, the devices it forces), from its own folder."""
    done = run_alone(python, script, timeout)
    if done is None:
        return Run(124, "", f"timed out after {timeout:.0f} s")
    return Run(done.returncode, done.stdout, done.stderr)


LOCAL = [re.compile(p) for p in (
    r"(?:/[\w.+@-]+)+/site-packages/",  # an installed package's folder
    r"(?:/[\w.+@-]+)+/(?:lib|lib64)/python3\.\d+/",  # the standard library's
    r"(?<![\w.])/(?:work|home|root|tmp|opt|usr|srv|var|mnt|Users)(?:/[\w.+@-]+)+",  # any other absolute path
)]


def without_local_paths(text: str) -> str:
    """``text`` with every local path cut to the file's name (an installed file keeps its path
    inside its package: ``jax/_src/lax/lax.py``), and the machine's name dropped."""
    text = LOCAL[0].sub("", text)
    text = LOCAL[1].sub("", text)
    text = LOCAL[2].sub(lambda m: m[0].rsplit("/", 1)[-1], text)
    return re.sub(r"node='[^']*'", "node='…'", text)


def has_local_path(text: str) -> Optional[str]:
    """The first local path in ``text``, or None."""
    for pattern in LOCAL:
        hit = pattern.search(text)
        if hit:
            return hit[0]
    return None


def output_shown(cause: Cause, run: Run, limit: int = 30) -> str:
    """What a report quotes of a run: what the script printed; for an abort, XLA's ``Check failed``
    line (its log prefix dropped); for a traceback that escaped a script, its last line only."""
    printed = run.stdout.rstrip().splitlines()[:limit]
    errors = run.stderr.rstrip().splitlines()
    checks = [re.sub(r"^[FEW]\d{4} [\d:.]+\s+\d+\s+", "", line) for line in errors if "Check failed" in line]
    if checks:
        printed += checks[:2]
    elif run.returncode not in (0, 1) and errors:
        printed.append(errors[-1])
    return without_local_paths("\n".join(printed))


def environment_info(python: str = sys.executable, devices: int = DEFAULT_CPU_DEVICES) -> str:
    """``jax.print_environment_info()`` as a script that forces ``devices`` CPU devices sees it, with no
    local path or machine name."""
    forced = {"XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}"}
    done = subprocess.run([python, "-c", "import jax; jax.print_environment_info()"], capture_output=True,
                          text=True, env=script_environment({**os.environ, **forced}), timeout=300)
    return without_local_paths(done.stdout.strip() or done.stderr.strip())


# --- the report ---------------------------------------------------------------------------------

def link_text(url: str) -> str:
    """``jax-ml/jax#21671`` for a GitHub issue or pull request; a commit as ``jax-ml/jax@609f697``."""
    m = re.match(r"https://github.com/([^/]+/[^/]+)/(?:issues|pull)/(\d+)", url)
    if m:
        return f"[{m[1]}#{m[2]}]({url})"
    m = re.match(r"https://github.com/([^/]+/[^/]+)/commit/([0-9a-f]{7})", url)
    return f"[{m[1]}@{m[2]}]({url})" if m else url


def citation_text(source: str) -> str:
    """A source of expected behaviour as a link: JAX's test ``tests/x.py::T::test`` (to its file), a
    docs.jax.dev page by its name (``JAX docs: jax.lax.pad``), a GitHub issue, pull request or commit
    as ``link_text`` writes it."""
    test = JAX_TEST.fullmatch(source)
    if test:
        return f"JAX's test [{source.split(' ', 1)[1]}](https://github.com/jax-ml/jax/blob/main/{test[1]})"
    page = re.fullmatch(r"https://docs\.jax\.dev/en/latest/(?:_autosummary/)?(.+?)\.html(?:#.*)?", source)
    if page:
        return f"[JAX docs: {page[1]}]({source})"
    linked = link_text(source)
    return linked if linked != source else f"<{source}>"


def expected_text(c: Cause) -> str:
    """Where the behaviour the description expects comes from: its sources, or our reading and why."""
    sources = ", ".join(citation_text(e) for e in c.citations)
    if c.our_reading:
        return (f"our reading (no source we found states it): {c.our_reading.rstrip('.')}"
                + (f" (drawing on {sources})" if sources else "") + ".")
    return f"as stated by {sources}."


def releases_line(f: Found) -> str:
    newest = RELEASES[-1].jax
    first = (f"first bad: {f.first_bad}; last good: {f.last_good}" if f.last_good else
             f"first bad: {f.first_bad}, the oldest release measured" if not f.before else
             f"first bad measured: {f.first_bad}; on the release before, {f.before}, its tests fail with another "
             f"bug's symptom, so whether this one is older is not told" if f.before_seen == "fails" else
             f"first bad measured: {f.first_bad}; the release before, {f.before}, could not run its tests "
             f"(their API is newer), so the bug may be older")
    now = (f"the API is gone from {f.fixed_in}" if f.fixed_in and f.cause.api_removed else
           f"fixed in {f.fixed_in}" if f.fixed_in else f"still in the newest, {newest}")
    return (f"{first}; {now}. Affected: {spans(f.releases)} (bisected over the {len(RELEASES)} releases "
            f"{RELEASES[0].jax} – {newest} by the tests listed below).")


def report(f: Found, run: Optional[Run], jax_version: str, env_info: str) -> str:
    """The markdown report of cause ``f`` as run on ``jax_version`` (``run``: its script's run)."""
    c = f.cause
    out = [f"# {c.title}", "", "### Description", "", c.description, "",
           f"**Expected behaviour**: {expected_text(c)}", ""]
    if run is None:
        out += ["(No script: reproduce with the tests below on a release in range.)", ""]
    else:
        source = c.script.read_text().rstrip()
        how = "aborts the process (SIGABRT)" if c.aborts else "exits 1"
        out += [f"The script prints what JAX returns and what it should, and {how} while the bug is there:", "",
                "```python", source, "```", ""]
        if run.shows_the_bug(c):
            out += [f"Reproduced on JAX {jax_version} ({where(c.script)}): `python {c.script.name}`, {run.status}:", ""]
        else:
            out += [f"**Not reproduced** on JAX {jax_version} ({where(c.script)}): `python {c.script.name}` ended with "
                    f"{run.status}, where the bug gives {how.split(' while')[0]}:", ""]
        out += ["```", output_shown(c, run) or "(nothing printed)", "```", ""]
    out += [f"**Releases**: {releases_line(f)}", "",
            f"**Where it belongs**: {c.tracker} ({TRACKERS[c.tracker]}). What was checked: {c.tracker_checked}", ""]
    searched = (f"searched {c.searched}, JAX's and XLA's trackers: " + "; ".join(f"\"{q}\"" for q in c.searches))
    if c.filed:
        out += [f"**Upstream**: {link_text(c.filed)}" + (" (ours)" if c.reported else " reports this bug") + ".", ""]
        if c.comment:
            out += [f"A comment for {link_text(c.filed)}:", "", c.comment, ""]
    else:
        out += [f"**Upstream**: no issue reports this bug ({searched}).", ""]
    related = [u for u in (*c.related, c.fixed_by) if u and u != c.filed]
    if related:
        out += ["**Related**: " + ", ".join(link_text(u) for u in related), ""]
    out += ["### System info (python version, jaxlib version, accelerator, etc.)", "", "```", env_info, "```", "",
            "Found by a property-based conformance suite of JAX's sharding.", "",
            footer(f)]
    return "\n".join(out)


def footer(f: Found) -> str:
    """What the suite's own people need and a maintainer does not: the cause's id and the suite's
    tests that show it, as an HTML comment (GitHub does not show it) at the end of the report."""
    return f"<!-- for the suite: cause {f.cause.id}; tests: {', '.join(f.tests) or 'none'} -->\n"


def in_effect(causes: Mapping[str, Cause], deviations: Sequence[Deviation], jax_version: str) -> List[Found]:
    return [f for f in found(causes, deviations) if f.entries and f.in_effect_on(jax_version)]


def write_reports(folder: Path, causes: Mapping[str, Cause], deviations: Sequence[Deviation], jax_version: str,
                  python: str = sys.executable,
                  runs: Optional[Mapping[str, Run]] = None) -> List[Tuple[Path, Found, Optional[Run]]]:
    """Run the script of every cause in effect on ``jax_version`` and write its report to
    ``folder/<id>.md``; reports of other causes already in ``folder`` are removed. (``runs``: how
    scripts already ran on that JAX, by cause id: those are not run again.)"""
    folder.mkdir(exist_ok=True)
    chosen = in_effect(causes, deviations, jax_version)
    env_info: Dict[int, str] = {}  # by the number of devices a script forces
    written = []
    for f in chosen:
        has_script = f.cause.script.is_file()
        run = ((runs or {}).get(f.cause.id) or run_script(f.cause.script, python)) if has_script else None
        devices = forced_devices(f.cause.script) if has_script else DEFAULT_CPU_DEVICES  # (the suite's tests)
        if devices not in env_info:
            env_info[devices] = environment_info(python, devices)
        path = folder / f"{f.cause.id}.md"
        write_atomically(path, report(f, run, jax_version, env_info[devices]))
        written.append((path, f, run))
    for stale in set(folder.glob("*.md")) - {p for p, _, _ in written}:
        if stale.stem in causes:
            stale.unlink()
    return written


# --- the page -----------------------------------------------------------------------------------

def status(f: Found) -> str:
    c = f.cause
    if f.fixed_in and c.api_removed:
        return (f"never fixed: the API is gone from {f.fixed_in}"
                + (f"; upstream: {link_text(c.filed)}" if c.filed else ""))
    if f.fixed_in:
        return f"fixed in {f.fixed_in}" + (f" ({link_text(c.fixed_by)})" if c.fixed_by else "") + (
            f"; reported as {link_text(c.filed)}" if c.filed else "")
    if c.reported:
        return f"reported: {link_text(c.reported)}"
    if c.filed:
        return f"open upstream: {link_text(c.filed)}"
    return "open, not reported upstream (report: `python -m reports bugs DIR`)"


def reproduce(f: Found) -> str:
    c = f.cause
    if c.script.is_file():
        return f"`python {c.script.relative_to(ROOT)}`"
    release = f.releases[-1]
    return (f"`python -m conformance.runner.release_envs test '{f.tests[0]}' --releases {release}`"
            if f.tests else f"the suite on {release}")


def page(causes: Mapping[str, Cause], deviations: Sequence[Deviation]) -> str:
    """BUGS.md: every cause, newest-affecting first."""
    every = [f for f in found(causes, deviations) if f.entries]
    every.sort(key=lambda f: (bool(f.fixed_in), -VERSIONS.index(f.releases[-1]), f.cause.title))
    open_ = [f for f in every if not f.fixed_in]
    unreported = [f for f in open_ if not f.cause.filed]
    out = ["# What the suite found in JAX", "",
           f"Every root cause of a known deviation of kind `bug`, generated by `python -m reports bugs --page BUGS.md` "
           f"from `{DEVIATIONS_FILE.relative_to(ROOT)}` and `{CAUSES_FILE.relative_to(ROOT)}` "
           f"(tests/test_bugs.py checks that it is current). Releases are the {len(RELEASES)} supported, "
           f"{RELEASES[0].jax} – {RELEASES[-1].jax}, as the entries' bisected ranges give them.", "",
           f"{len(every)} causes: {len(open_)} open in {RELEASES[-1].jax} ({len(unreported)} with no upstream "
           f"issue: `python -m reports bugs DIR` writes their reports), {len(every) - len(open_)} no longer seen "
           f"({sum(f.cause.api_removed for f in every if f.fixed_in)} of them because the API is gone).", "",
           "| what is wrong | releases | status | reproduce |", "|---|---|---|---|"]
    for f in every:
        out.append(f"| [{f.cause.title}](#{f.cause.id}) | {spans(f.releases)} | {status(f)} | {reproduce(f)} |")
    out.append("")
    for f in every:
        c = f.cause
        out += [f"## {c.id}", "", f"**{c.title}.** {c.description}", "",
                f"- expected behaviour: {expected_text(c)}",
                f"- releases: {spans(f.releases)} (first bad {f.first_bad}"
                + (f", last good {f.last_good}" if f.last_good else
                   f"; on {f.before} its tests fail with another bug's symptom" if f.before_seen == "fails" else
                   f"; its tests do not run on {f.before}" if f.before else ", the oldest supported") + ")",
                f"- status: {status(f)}",
                f"- belongs to: {c.tracker} ({c.tracker_checked})",
                f"- upstream search ({c.searched}): " + ("; ".join(f"\"{q}\"" for q in c.searches)),
                "- related: " + (", ".join(link_text(u) for u in c.related) or "none"),
                "- tests: " + ", ".join(f"`{t}`" for t in f.tests),
                ""]
        if c.comment:
            out += [f"A comment ready for {link_text(c.filed)} (the form of it this suite met):", "",
                    *(f"> {line}" if line else ">" for line in c.comment.splitlines()), ""]
    return "\n".join(out)
