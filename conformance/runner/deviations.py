"""Known deviations: what a JAX version is known to get wrong against a property, read from
``suites/known_deviations.toml`` (format 2) and the users' ``--deviations`` files.

Every entry names its symptom (``conformance.checking.symptoms``): how the deviation shows, and
only a failure that shows so is excused. A strict entry turns its deterministic test into a strict
xfail that only a failure matching the symptom satisfies (any other failure fails, saying which
entry it did not match and what it saw; a pass says the deviation is fixed). A random property's
entry (``strict = false``) also names a trigger (``conformance.checking.triggers``): an example
that fails is excused only when the trigger holds for it and the failure is the symptom; every
other example runs and can fail, and the excused ones are counted in the run report.

The suites get two fixtures: ``known_deviations`` (the entries in effect, asked by test function)
and ``excuses`` (this random property's entries, applied around each way an example runs).
"""

from __future__ import annotations

import ast
import collections
import contextlib
import difflib
import functools
import hashlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from conformance import toml_schema
from conformance.checking import triggers, wrongness
from conformance.checking.case import excusable, is_oracle_failure
from conformance.checking.symptoms import Seen, Symptom

from .devices import UsageError
from .run_folder import ROOT

FORMAT = 2  # the deviation file format this runner reads: ``format = 2`` at the top of the file
DEVIATIONS_FILE = ROOT / "suites" / "known_deviations.toml"  # the list the runner applies by default


# What a deviation is, by the rule at the top of suites/known_deviations.toml: a bug (a wrong value,
# a crash, an invalid input accepted, or another exception type than the one JAX's docs or tests
# state) or unspecified (another exception type where JAX states none: the rule is the suite's
# reading). A change JAX made on purpose is not an entry: the model follows it, through compat.
KINDS = ("bug", "unspecified")

# Where an entry applies: every backend (no ``backend``), one platform, or one device kind (any other
# string, compared with JAX's ``device_kind`` ignoring case, e.g. "NVIDIA H200" or "TPU v5 lite").
PLATFORMS = {"cpu": ("cpu",), "gpu": ("gpu", "cuda", "rocm"), "cuda": ("gpu", "cuda"), "rocm": ("gpu", "rocm"),
             "tpu": ("tpu",)}
GPU_MAKERS = ("cuda", "rocm")  # the names a GPU client's platform_version carries


class KnownDeviationSeen(Exception):
    """A strict entry's test failed with its entry's symptom (the strict xfail's only accepted
    exception: any other failure of the test fails it)."""


@dataclass(frozen=True)
class Deviation:
    """A behaviour a JAX version is known to get wrong: the test (and, for a parametrized one, the
    ``params`` it covers), the versions, a one-line reason, and the ``symptom`` it shows; a random
    property's entry is not ``strict``, names the ``trigger`` its examples must meet and the
    deterministic test that ``reproduced_by`` shows it every time."""

    test: str
    jax: str
    reason: str
    symptom: Symptom = Symptom(raises=("Exception",))
    strict: bool = True
    reproduced_by: str = ""
    kind: str = ""  # one of KINDS
    upstream: str = ""  # the JAX/XLA issue or fix it matches, or "none found"
    backend: str = ""  # where it applies: "" (everywhere), a PLATFORMS key, or a device kind
    source: str = ""  # the file it was read from
    trigger: str = ""  # a random entry's trigger (a name in conformance.checking.triggers.TRIGGERS)
    params: Tuple[str, ...] = ()  # the parametrized cases of ``test`` it covers (test[param])
    line: int = 0  # where the entry starts in its file
    cause: str = ""  # a bug's root cause: an id in suites/bugs/causes.toml (entries that share it share a report)
    processes: str = ""  # the runs it applies to: "" (every run), "one" (one process) or "several" (multi-controller)

    @property
    def label(self) -> str:
        """How reports and messages name the entry: its test, range and symptom."""
        return f"{self.test.split('::')[-1]} (JAX {self.jax}; {self.symptom.describe()})"

    @property
    def where(self) -> str:
        return f"{shown_path(self.source, ROOT) if self.source else '?'}:{self.line}"

    def why_not(self, seen: Seen, candidates: Sequence[object] = (), mesh_kind: Optional[str] = None) -> Optional[str]:
        """None when this entry excuses the failure ``seen`` (of an example whose ``candidates`` the
        trigger is asked about, on a mesh of ``mesh_kind``); otherwise why not, as a phrase."""
        if self.trigger and not triggers.holds(self.trigger, candidates):
            return f"its trigger {self.trigger} does not hold for this example"
        return self.symptom.why_not(seen, mesh_kind, candidates)

    def applies_on(self, platform: str, device_kind: str, platform_version: str = "") -> bool:
        """Whether the entry applies on this backend: ``platform`` as JAX names it (cpu, gpu, cuda,
        tpu, ...), its devices' ``device_kind`` and its client's ``platform_version`` (which tells a
        CUDA GPU from a ROCm one where JAX calls both "gpu")."""
        if not self.backend:
            return True
        wanted = self.backend.lower()
        if wanted in PLATFORMS:
            others = [m for m in GPU_MAKERS if m != wanted] if wanted in GPU_MAKERS else []
            return platform.lower() in PLATFORMS[wanted] and not any(m in platform_version.lower() for m in others)
        return wanted == device_kind.lower()

    def applies_to(self, process_count: int) -> bool:
        """Whether the entry applies to a run of ``process_count`` processes."""
        return self.processes == "" or (self.processes == "one") == (process_count == 1)

    @property
    def test_ids(self) -> Tuple[str, ...]:
        """The test ids the entry names: its test, or one per case of its ``params``."""
        return tuple(f"{self.test}[{p}]" for p in self.params) if self.params else (self.test,)

    def matches(self, nodeid: str) -> bool:
        """Whether the entry names the test ``nodeid``: the test itself, or one of its ``params``."""
        return any(nodeid == n or nodeid.endswith("/" + n) for n in self.test_ids)

    def did_not_reproduce(self, jax_version: str) -> str:
        """What a strict entry that passed on ``jax_version`` says: JAX fixed it there, and the entry's
        range should be narrowed to end before that release (the run still fails, so it is)."""
        return (f"[XPASS(strict)] FIXED IN THIS JAX ({jax_version}): the known deviation did not "
                f"reproduce. Narrow the range of its entry at {self.where} "
                f"(jax = \"{self.jax}\") so that it ends before {jax_version}; its reason: {self.reason}")

    @property
    def xfail_reason(self) -> str:
        seen = "" if self.strict else f" (random property; reproduced by {self.reproduced_by})"
        return f"known deviation (JAX {self.jax}): {self.reason}{seen}"


# The schema of an entry, one for the suite's file and the users': each key and the type its value
# must have (TOML's own types: a range is a quoted string, ``jax = ">=0.4.30"``).
DEVIATION_SCHEMA = toml_schema.Schema(
    table="deviation", top=("format",), holds=f"format = {FORMAT} and [[deviation]] tables",
    keys=(toml_schema.Key("test", str, required=True), toml_schema.Key("params", list),
          toml_schema.Key("jax", str, required=True), toml_schema.Key("reason", str, required=True),
          toml_schema.Key("kind", str), toml_schema.Key("upstream", str), toml_schema.Key("strict", bool),
          toml_schema.Key("reproduced_by", str), toml_schema.Key("backend", str),
          toml_schema.Key("symptom", dict, required=True), toml_schema.Key("trigger", str),
          toml_schema.Key("cause", str), toml_schema.Key("processes", str)))


def load_deviations(path: Path, tests_exist: bool = True, root: Path = ROOT) -> List[Deviation]:
    """Read a known-deviation list (format 2) against the entry schema; a malformed entry, or one
    naming a test the suites under ``root`` do not have (``tests_exist``), is a usage error naming
    it by ``file:line``."""
    if not path.exists():
        return []
    top, entries = toml_schema.read(path, DEVIATION_SCHEMA, UsageError)
    if top.get("format") != FORMAT:
        raise UsageError(f"{path}: deviation file format {top.get('format', 1)!r} is not read by this suite: "
                         f"write format = {FORMAT} at the top and give every entry a symptom (and a random "
                         f"property's entry a trigger), as suites/known_deviations.toml does")
    return [parse_entry(entry, root if tests_exist else None) for entry in entries]


def planted_entry(values: dict, path: str = "planted.toml") -> toml_schema.Entry:
    """``values`` as one entry of a deviation file at ``path`` (for self-tests that plant entries)."""
    return toml_schema.checked(values, DEVIATION_SCHEMA, path, 1, error=UsageError)


def parse_entry(entry: toml_schema.Entry, tests_root: Optional[Path] = None) -> Deviation:
    """One ``[[deviation]]`` entry as a Deviation; what is wrong with it beyond the schema is refused
    naming where (the ``file:line`` of the key at fault, or of the entry's header) and what
    (``tests_root``: where the tests it names must exist; None: not checked)."""
    refuse = entry.refuse
    try:
        SpecifierSet(entry["jax"])
    except InvalidSpecifier:
        refuse(f"has an invalid jax range {entry['jax']!r} (a range as packaging reads it, "
               f"e.g. \">=0.4.30,<0.5\")", "jax")
    strict = entry.get("strict", True)
    if not strict and not entry.get("reproduced_by"):
        refuse("is not strict, so it must name the strict deterministic test that reproduces it (reproduced_by)",
               "strict")
    trigger = entry.get("trigger")
    if not strict and not trigger:
        refuse("is not strict, so it must name the trigger its examples meet (trigger = one of "
               f"{', '.join(sorted(triggers.TRIGGERS))})", "strict")
    if strict and trigger:
        refuse("is strict (a deterministic test), so it takes no trigger: a trigger selects examples of a "
               "random property", "trigger")
    if trigger and trigger not in triggers.TRIGGERS:
        close = ", ".join([n for n in sorted(triggers.TRIGGERS) if n.startswith(trigger)][:3]
                          or difflib.get_close_matches(trigger, triggers.TRIGGERS, n=3)) or "none close"
        refuse(f"names an unknown trigger {trigger!r} (similar: {close})", "trigger")
    kind = entry.get("kind")
    if kind == "documented change":
        refuse("has kind = 'documented change': a change JAX made on purpose is not a deviation; the model follows "
               "it (conformance/jaxside/compat.py decides by feature), and the releases before it are its rule too",
               "kind")
    if kind and kind not in KINDS:
        refuse(f"has kind = {kind!r}, not one of {', '.join(KINDS)}", "kind")
    if entry.get("cause") and kind != "bug":
        refuse(f"has cause = {entry['cause']!r} but kind = {kind!r}: only a bug has a root cause to report", "cause")
    backend = entry.get("backend")
    if backend and backend_problem(backend):
        refuse(f"has backend = {backend!r}: {backend_problem(backend)}", "backend")
    if entry.get("processes") not in (None, "", "one", "several"):
        refuse(f"has processes = {entry['processes']!r}: \"one\" (one-process runs only) or \"several\" "
               "(multi-controller runs only)", "processes")
    params = entry.get("params")
    if not all(isinstance(p, str) and p for p in params):
        refuse(f"has params = {params!r}: a list of the parametrized case ids it covers", "params")
    if params and "[" in entry["test"]:
        refuse("names a parametrized case in test and params too: name the test, and its cases in params", "params")
    try:
        symptom = Symptom.parse(entry["symptom"])
    except ValueError as e:
        refuse(str(e), "symptom")
    if not strict and symptom.wrong in ("values", "layout") and not symptom.where:
        refuse(f"is not strict and its symptom is wrong {symptom.wrong} at any element: name how they are wrong "
               f"(where = one of {', '.join(n for n, w in wrongness.SHOWN_BY.items() if w == symptom.wrong)}; "
               "conformance/checking/wrongness.py), so that another wrong value inside the trigger fails", "symptom")
    if symptom.where and strict:
        refuse("is strict, so its symptom takes no where (its test checks one call): where says how a random "
               "property's examples go wrong", "symptom")
    if symptom.mesh and strict:
        refuse("is strict, so its symptom takes no mesh (the test's mesh is fixed): mesh limits a random property's",
               "symptom")
    for key in ("test", "reproduced_by"):
        problem = entry.get(key) and tests_root is not None and missing_test(entry[key], tests_root)
        if problem:
            refuse(f"has {key} = {entry[key]!r}, which names no test: {problem}", key)
    return Deviation(test=entry["test"], jax=entry["jax"], reason=entry["reason"], symptom=symptom, strict=strict,
                     reproduced_by=entry.get("reproduced_by"), kind=kind, upstream=entry.get("upstream"),
                     backend=backend, source=entry.path, trigger=trigger, params=tuple(params), line=entry.line,
                     cause=entry.get("cause"), processes=entry.get("processes") or "")


def backend_problem(backend: str) -> str:
    """Why ``backend`` names no backend ("" when it does): a platform name as ``--backend`` and JAX
    take them, or a device kind as JAX reports it (which has a space or a digit: "NVIDIA H200",
    "TPU v5 lite"); a word that is neither is a misspelling."""
    if backend.lower() in PLATFORMS or any(ch.isspace() or ch.isdigit() for ch in backend):
        return ""
    close = difflib.get_close_matches(backend.lower(), PLATFORMS, n=1)
    return (f"not a platform ({', '.join(PLATFORMS)}) nor a device kind as JAX names one (e.g. \"NVIDIA H200\")"
            + (f"; did you mean {close[0]!r}?" if close else ""))


def unknown_cases(entries: Sequence[Deviation], nodeids: Sequence[str]) -> List[str]:
    """One line (``file:line: ...``) per entry that names a parametrized case its test, as
    collected (``nodeids``, before any -k/-m deselection), does not have; an entry whose test was
    not collected at all (another file was selected) is not judged."""
    cases: Dict[str, List[str]] = collections.defaultdict(list)
    for nodeid in nodeids:
        function, _, case = nodeid.partition("[")
        cases[function].append(case.removesuffix("]"))
    problems = []
    for d in entries:
        test, _, named = d.test.partition("[")
        wanted = list(d.params) or ([named.removesuffix("]")] if named else [])
        collected = next((ids for function, ids in cases.items()
                          if function == test or function.endswith("/" + test)), None)
        if collected is None or not wanted:
            continue
        for case in wanted:
            if case not in collected:
                close = difflib.get_close_matches(case, collected, n=1)
                problems.append(f"{d.where}: deviation names a case {test}[{case}] that is not collected"
                                + (f" (did you mean {close[0]!r}?)" if close
                                   else f" (its cases: {', '.join(collected[:8])})"))
    return problems


@functools.lru_cache(maxsize=None)
def test_functions(path: Path) -> List[str]:
    """The test functions a suite file defines (read, not imported)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.name for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")]


def missing_test(test: str, root: Path = ROOT) -> str:
    """Why ``test`` (``file::function``, a case's ``[id]`` allowed) names no test of the checkout ("" when
    it does), with a close match when there is one; the parametrized case itself is checked when
    the tests are collected."""
    file, _, function = test.partition("::")
    function = function.split("[", 1)[0]
    path = root / file
    if not path.is_file():
        candidates = sorted(p.relative_to(root).as_posix() for p in (root / "suites").glob("**/test_*.py"))
        ending = [c for c in candidates if c.endswith("/" + file)]
        if len(ending) == 1:
            path = root / ending[0]
        else:
            close = difflib.get_close_matches(file, candidates, n=1)
            return f"no file {file}" + (f" (did you mean {close[0]}?)" if close else "")
    names = test_functions(path)
    if function not in names:
        close = difflib.get_close_matches(function, names, n=1)
        return f"{file} has no {function}" + (f" (did you mean {close[0]}?)" if close else "")
    return ""


@dataclass(frozen=True)
class DeviationFile:
    """A known-deviation list as a run read it: the suite's own (``origin`` "suite") or a user's
    (``--deviations``, "user"), its SHA-256 and its entries."""

    path: Path
    origin: str
    sha256: str
    entries: Tuple[Deviation, ...]


def read_deviation_file(path: Path, origin: str, option: str, root: Path = ROOT) -> DeviationFile:
    """Read a known-deviation list named by ``option`` (its tests looked for under ``root``, the
    run's root folder); a missing file is a usage error."""
    if not path.is_file():
        raise UsageError(f"{option} {path}: no such file")
    return DeviationFile(path, origin, hashlib.sha256(path.read_bytes()).hexdigest(),
                         tuple(load_deviations(path, root=root)))


def shown_path(path: Path, root: Path) -> str:
    """A file's path as headers and reports show it: relative to the checkout when inside it."""
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def is_unexpected_pass(deviation: Optional[Deviation], call, report) -> bool:
    """Whether ``report`` (a test phase's) is a strict known deviation's call that passed, which
    pytest turns into a failure with no exception."""
    return (deviation is not None and deviation.strict and report.when == "call" and report.failed
            and call.excinfo is None)


def nodeid_of(function: Callable, root: Path) -> str:
    """``suites/<file>.py::<name>``: a test function's id, as deviation entries name it."""
    path = Path(inspect.getsourcefile(function)).resolve().relative_to(root)
    return f"{path.as_posix()}::{function.__name__}"


class DeviationsInEffect:
    """The known deviations of the installed JAX (the ``known_deviations`` fixture)."""

    def __init__(self, deviations: Sequence[Deviation], root: Path, files: Sequence[dict] = (),
                 read: Sequence[Deviation] = ()):
        self.deviations = tuple(deviations)
        self.root = root
        self.files = tuple(files)  # per file read: path, origin, sha256, in_effect, other_backends
        self.read = tuple(read)  # every entry of every file, in effect here or not

    @classmethod
    def select(cls, files: Sequence[DeviationFile], version_in: Callable[[str], bool], platform: str,
               device_kind: str, root: Path, platform_version: str = "",
               process_count: int = 1) -> "DeviationsInEffect":
        """The entries of ``files`` whose range holds this JAX (``version_in``), whose backend is
        this one and whose ``processes`` this run's; the users' files first, so that where a user's
        entry and the suite's name one test, the user's applies."""
        chosen, summary = [], []
        read = [d for file in files for d in file.entries]
        for file in sorted(files, key=lambda f: f.origin != "user"):
            in_range = [d for d in file.entries if version_in(d.jax) and d.applies_to(process_count)]
            here = [d for d in in_range if d.applies_on(platform, device_kind, platform_version)]
            chosen += here
            summary.append({"path": shown_path(file.path, root), "origin": file.origin, "sha256": file.sha256,
                            "in_effect": len(here), "other_backends": len(in_range) - len(here)})
        return cls(chosen, root, summary, read)

    def header(self) -> str:
        """``31 (31 from suites/known_deviations.toml, 2 from team.toml; 1 more is for another
        backend)``: the count in effect, by file."""
        parts = ", ".join(f"{f['in_effect']} from {f['path']}" for f in self.files)
        elsewhere = sum(f["other_backends"] for f in self.files)
        more = f"; {elsewhere} more for another backend, not applied" if elsewhere else ""
        return f"{len(self)} ({parts or 'no file'}{more})"

    def __len__(self) -> int:
        return len(self.deviations)

    def for_test(self, nodeid: str) -> Optional[Deviation]:
        """The first entry that applies to the test ``nodeid`` (path::name[param]), or None."""
        return next((d for d in self.deviations if d.matches(nodeid)), None)

    def all_for_test(self, nodeid: str) -> Tuple[Deviation, ...]:
        """Every entry that applies to the test ``nodeid``."""
        return tuple(d for d in self.deviations if d.matches(nodeid))

    def covers(self, test_function: Callable) -> Optional[Deviation]:
        """The entry for ``test_function`` (a deterministic reproduction), or None: whether this JAX
        is known to get that test wrong."""
        return self.for_test(nodeid_of(test_function, self.root))


def not_matched(entries: Sequence[Deviation], seen: Seen, reasons: Sequence[str]) -> str:
    """The note a failure gets when known deviations apply to its test but none excuses it."""
    lines = [f"not a known deviation: it failed with {seen.describe()}; the entries for this test do not "
             "excuse it:"]
    lines += [f"  {entry.where} {entry.label}: {why}" for entry, why in zip(entries, reasons)]
    return "\n".join(lines)


def strict_verdict(entries: Sequence[Deviation], failure: BaseException) -> Exception:
    """What a strict known deviation's test that raised ``failure`` becomes: KnownDeviationSeen
    when an entry's symptom matches it, else the failure itself, with a note naming each entry and
    why it did not match."""
    seen = Seen.of(failure)
    reasons = []
    for entry in entries:
        why = entry.why_not(seen)
        if why is None:
            return KnownDeviationSeen(f"{entry.label}: saw {seen.describe()}")
        reasons.append(why)
    failure.add_note(not_matched(entries, seen, reasons))
    return failure


# The note a failure of the oracle gets where it reaches an excuse context.
ORACLE_NOTE = ("not a known deviation: it failed in the oracle (the unsharded run, or its comparison with numpy or "
               "an analytic reference), which no entry excuses: every sharded way is judged against it")


def once_per_example(examples: list, example) -> None:
    """Add ``example`` to ``examples`` unless it is there (by identity); None counts every time."""
    if example is None or not any(e is example for e in examples):
        examples.append(example)


class Excuses:
    """A random property's known deviations on the installed JAX (the ``excuses`` fixture): around
    each way an example runs, a failure that one entry's trigger and symptom cover is excused (a
    Hypothesis event, counted per entry for the run report); any other failure propagates, with a
    note saying which entries it did not match and why.

    Use: ``with excuses.way(candidates, mesh_kind=...): ...`` for each way; ``candidates`` are what
    the triggers are asked about (the example, or a program's steps the failing value depends on,
    as a sequence or a function of the failure). The oracle (``with case.oracle(): ...``: the
    unsharded run and its comparison with numpy) runs outside every way, and a failure it tagged
    is never excused (``conformance.checking.case``)."""

    def __init__(self, entries: Sequence[Deviation]):
        self.entries = tuple(e for e in entries if not e.strict)
        self.excused: Dict[Deviation, list] = collections.defaultdict(list)  # per entry, the examples it excused
        self.refused: Dict[str, list] = collections.defaultdict(list)  # per refusal accepted, the examples

    def __bool__(self) -> bool:
        return bool(self.entries)

    @contextlib.contextmanager
    def way(self, candidates, *, mesh_kind: Optional[str] = None, example=None):
        """(``example``: the drawn example the way belongs to, so that an example whose several
        ways an entry excuses counts once; an oracle check inside the way raises, with or without
        entries: see ``conformance.checking.case.excusable``.)"""
        with excusable():
            if not self.entries:
                yield
                return
            try:
                yield
            except Exception as failure:  # noqa: BLE001 - matched against the entries, re-raised otherwise
                self.excuse_or_raise(failure, candidates, mesh_kind, example)

    def excuse_or_raise(self, failure: Exception, candidates, mesh_kind: Optional[str], example=None) -> None:
        """Count ``failure`` as excused by the first entry whose trigger holds for ``candidates`` and
        whose symptom it shows; raise it otherwise, with a note saying why (a failure tagged as the
        oracle's is never excused: every way is judged against the oracle)."""
        if is_oracle_failure(failure):
            failure.add_note(ORACLE_NOTE)
            raise failure
        seen = Seen.of(failure)
        chosen = candidates(failure) if callable(candidates) else candidates
        reasons = []
        for entry in self.entries:
            why = entry.why_not(seen, chosen, mesh_kind)
            if why is None:
                self.count(entry, example)
                return
            reasons.append(why)
        failure.add_note(not_matched(self.entries, seen, reasons))
        raise failure

    def count(self, entry: Deviation, example=None, what: str = "excused") -> None:
        """Count ``example`` as excused by ``entry`` (once per example), as a Hypothesis event and in
        the run report; also for a check skipped because a strict entry says this JAX gets it wrong
        (``what`` says which)."""
        once_per_example(self.excused[entry], example)
        from hypothesis import event  # (the runner's plugin imports no Hypothesis at its top)
        event(f"{what} by a known deviation: {entry.label}")

    def accept_refusal(self, what: str, example=None) -> None:
        """Count ``example`` (once) as one whose refusal was accepted because our sharding-rule model
        says JAX rejects it, or has no rule for it: ``what`` names the operation and which (e.g.
        "matmul (b): as our sharding-rule model says"); a Hypothesis event too."""
        once_per_example(self.refused[what], example)
        from hypothesis import event
        event(f"refusal accepted: {what}")

    def refusals(self) -> List[dict]:
        """Per kind of refusal accepted: what and how many examples (for the run report)."""
        return [{"refusal": what, "examples": len(examples)} for what, examples in sorted(self.refused.items())]

    def report(self) -> List[dict]:
        """Per entry that excused something: its label, file:line, range, kind, upstream, trigger
        and count."""
        return [{"entry": e.label, "where": e.where, "jax": e.jax, "kind": e.kind or None,
                 "upstream": e.upstream or None, "trigger": e.trigger, "symptom": e.symptom.describe(),
                 "excused": len(examples)}
                for e, examples in sorted(self.excused.items(), key=lambda kv: kv[0].where)]
