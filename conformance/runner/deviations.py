"""Known deviations: what a JAX version is known to get wrong against a property, read from
``suites/known_deviations.toml``.

The runner turns each entry in effect for the installed JAX into an xfail of its test (strict, or,
for a random property, not strict), and hands the suites two fixtures: ``known_deviations`` (which
entries are in effect, asked by test function) and ``known_deviation`` (this random property's
entry, which ends the property as an xfail at its first failing example, without shrinking).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

import pytest
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from .devices import UsageError
from .run_folder import ROOT

DEVIATIONS_FILE = ROOT / "suites" / "known_deviations.toml"  # the list the runner applies by default


# What a deviation is: a bug (JAX gets wrong what it means to do), a documented change (JAX changed
# the behaviour on purpose: the model follows the newer intent, the entry covers the releases
# before), or unspecified (JAX never said; the rule is the suite's reading).
KINDS = ("bug", "documented change", "unspecified")

# Where an entry applies: every backend (no ``backend``), one platform, or one device kind (any other
# string, compared with JAX's ``device_kind`` ignoring case, e.g. "NVIDIA H200" or "TPU v5 lite").
PLATFORMS = {"cpu": ("cpu",), "gpu": ("gpu", "cuda", "rocm"), "tpu": ("tpu",)}


@dataclass(frozen=True)
class Deviation:
    """A behaviour a JAX version is known to get wrong: the test, the versions, a one-line reason;
    a random property's entry is not ``strict`` and names the deterministic test that
    ``reproduced_by`` shows it every time."""

    test: str
    jax: str
    reason: str
    strict: bool = True
    reproduced_by: str = ""
    kind: str = ""  # one of KINDS
    upstream: str = ""  # the JAX/XLA issue or fix it matches, or "none found"
    backend: str = ""  # where it applies: "" (everywhere), a PLATFORMS key, or a device kind
    source: str = ""  # the file it was read from

    def applies_on(self, platform: str, device_kind: str) -> bool:
        """Whether the entry applies on this backend: ``platform`` as JAX names it (cpu, gpu, cuda,
        tpu, ...) and its devices' ``device_kind``."""
        if not self.backend:
            return True
        wanted = self.backend.lower()
        if wanted in PLATFORMS:
            return platform.lower() in PLATFORMS[wanted]
        return wanted == device_kind.lower()

    def matches(self, nodeid: str) -> bool:
        return nodeid == self.test or nodeid.endswith("/" + self.test) or \
            nodeid.split("[")[0] == self.test

    def did_not_reproduce(self, jax_version: str) -> str:
        """What a strict entry that passed on ``jax_version`` says: JAX fixed it there, and the entry's
        range should be narrowed to end before that release (the run still fails, so it is)."""
        return (f"[XPASS(strict)] FIXED IN THIS JAX ({jax_version}): the known deviation did not "
                f"reproduce. Narrow the range of its entry in suites/known_deviations.toml "
                f"(jax = \"{self.jax}\") so that it ends before {jax_version}; its reason: {self.reason}")

    @property
    def xfail_reason(self) -> str:
        seen = "" if self.strict else f" (random property; reproduced by {self.reproduced_by})"
        return f"known deviation (JAX {self.jax}): {self.reason}{seen}"


def load_deviations(path: Path) -> List[Deviation]:
    """Read the known-deviation list; a malformed entry is a usage error naming it."""
    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path}: {e}") from None
    out = []
    for i, entry in enumerate(data.get("deviation", [])):
        missing = [k for k in ("test", "jax", "reason") if not entry.get(k)]
        if missing:
            raise UsageError(f"{path}: deviation #{i + 1} lacks {', '.join(missing)}")
        try:
            SpecifierSet(entry["jax"])
        except InvalidSpecifier:
            raise UsageError(f"{path}: deviation #{i + 1} has an invalid jax range {entry['jax']!r}") from None
        strict = entry.get("strict", True)
        if not isinstance(strict, bool):
            raise UsageError(f"{path}: deviation #{i + 1} has strict = {strict!r}, not true or false")
        if not strict and not entry.get("reproduced_by"):
            raise UsageError(f"{path}: deviation #{i + 1} is not strict, so it must name the strict "
                             "deterministic test that reproduces it (reproduced_by)")
        kind = entry.get("kind", "")
        if kind and kind not in KINDS:
            raise UsageError(f"{path}: deviation #{i + 1} has kind = {kind!r}, not one of {', '.join(KINDS)}")
        backend = entry.get("backend", "")
        if not isinstance(backend, str):
            raise UsageError(f"{path}: deviation #{i + 1} has backend = {backend!r}: name a platform "
                             f"({', '.join(PLATFORMS)}) or a device kind, as a string")
        out.append(Deviation(entry["test"], entry["jax"], entry["reason"], strict,
                             entry.get("reproduced_by", ""), kind, entry.get("upstream", ""), backend,
                             str(path)))
    return out


@dataclass(frozen=True)
class DeviationFile:
    """A known-deviation list as a run read it: the suite's own (``origin`` "suite") or a user's
    (``--deviations``, "user"), its SHA-256 and its entries."""

    path: Path
    origin: str
    sha256: str
    entries: Tuple[Deviation, ...]


def read_deviation_file(path: Path, origin: str, option: str) -> DeviationFile:
    """Read a known-deviation list named by ``option``; a missing file is a usage error."""
    if not path.is_file():
        raise UsageError(f"{option} {path}: no such file")
    return DeviationFile(path, origin, hashlib.sha256(path.read_bytes()).hexdigest(),
                         tuple(load_deviations(path)))


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

    def __init__(self, deviations: Sequence[Deviation], root: Path, files: Sequence[dict] = ()):
        self.deviations = tuple(deviations)
        self.root = root
        self.files = tuple(files)  # per file read: path, origin, sha256, in_effect, other_backends

    @classmethod
    def select(cls, files: Sequence[DeviationFile], version_in: Callable[[str], bool], platform: str,
               device_kind: str, root: Path) -> "DeviationsInEffect":
        """The entries of ``files`` whose range holds this JAX (``version_in``) and whose backend is
        this one; the users' files first, so that where a user's entry and the suite's name one
        test, the user's applies."""
        chosen, summary = [], []
        for file in sorted(files, key=lambda f: f.origin != "user"):
            in_range = [d for d in file.entries if version_in(d.jax)]
            here = [d for d in in_range if d.applies_on(platform, device_kind)]
            chosen += here
            summary.append({"path": shown_path(file.path, root), "origin": file.origin, "sha256": file.sha256,
                            "in_effect": len(here), "other_backends": len(in_range) - len(here)})
        return cls(chosen, root, summary)

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
        """The entry that applies to the test ``nodeid`` (path::name[param]), or None."""
        return next((d for d in self.deviations if d.matches(nodeid)), None)

    def covers(self, test_function: Callable) -> Optional[Deviation]:
        """The entry for ``test_function`` (a deterministic reproduction), or None: whether this JAX
        is known to get that test wrong."""
        return self.for_test(nodeid_of(test_function, self.root))


class FirstFailureEnds:
    """A random property's known deviation (the ``known_deviation`` fixture). A random property
    does not draw its failing case in every run, so its entry is not strict; when it does fail, the
    first failing example ends the property as an xfail, unshrunk (shrinking recompiles at every
    step, for a failure that a deterministic reproduction already shows).

    Use: after drawing the example, ``if known_deviation.seen: return`` (the rest of the examples
    are drawn, as Hypothesis requires, but not run), then
    ``with known_deviation.first_failure_ends_the_property(): ...``. The runner turns a seen failure
    into the xfail after the property returns."""

    def __init__(self, deviation: Optional[Deviation]):
        self.deviation = deviation
        self.finding: Optional[str] = None

    @property
    def seen(self) -> bool:
        return self.finding is not None

    @contextlib.contextmanager
    def first_failure_ends_the_property(self):
        if self.deviation is None or self.deviation.strict:
            yield
            return
        try:
            yield
        except Exception as failure:  # noqa: BLE001 - any failure of this property is the deviation's
            self.finding = getattr(failure, "finding", None) or f"{type(failure).__name__}: {failure}"

    def xfail_if_seen(self) -> None:
        """After the property: an xfail naming the reproduction and the finding, if it failed."""
        if self.seen:
            pytest.xfail(f"known deviation, random property (reproduced by "
                         f"{self.deviation.reproduced_by.split('::')[-1]}): {self.finding}")
