"""Assertion helpers whose failures a person can act on.

Every message reads ``<what>=<got>, but should be <expected> [<call>]`` and ends with a script that
reproduces the case without Hypothesis. A property builds one ``Case`` per example and asks it to
check things; the first disagreement raises ``ConformanceFailure`` (an ``AssertionError``). Where
the property names the script's expression for the failing check (``outcomes``), the script ends
with its verdict (``conformance.checking.verdict``): it prints what JAX returns and what it should
return, and exits 1 while they differ.

The oracle (the unsharded run, and its comparison with numpy or an analytic reference) is what
every sharded way is judged against, so no known deviation may excuse its failure. A property runs
its oracle checks inside ``with case.oracle(): ...``: every failure raised there is tagged
(``is_oracle_failure``), and ``Excuses`` never excuses a tagged failure. The oracle also runs
outside every excuse context (``Excuses.way``, which marks its body with ``excusable()``): entering
one inside the other raises ``OracleInsideAnExcuse``, and so does a check named as the oracle's
(``ORACLE_NAMES``: "unsharded ...", "(0) ...") inside an excuse context, passing or not.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import re
import sys
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Type

import numpy as np

from . import verdict as verdicts


# What a failed check shows (``ConformanceFailure.shows``): the words known-deviation symptoms use.
SHOWS = (
    "values",    # an array's elements differ (same_bits, close)
    "dtype",     # an array's dtype differs
    "shape",     # an array's shape differs
    "layout",    # a sharding, its index map, its devices or its shard shapes differ
    "mismatch",  # any other compared value differs (equal, true): an exit status, a printed result
    "raised",    # the call raised where it should return (``raised`` names the exception)
    "accepted",  # the call returned where it should raise
)

# Names that say a check judges the unsharded run against numpy (not what makes it the oracle's: the
# tag does; a check so named inside an excuse context raises OracleInsideAnExcuse)
ORACLE_NAMES = re.compile(r"^(unsharded|\(0\))")
ORACLE_TAG = "conformance_oracle"  # the attribute a failure raised inside Case.oracle() carries
_in_the_oracle = contextvars.ContextVar("in_the_oracle", default=False)
_excusable = contextvars.ContextVar("excusable", default=False)

# Who is told of each new Case's script (the runner's ``last_words``: the example a process was
# running when it crashed), in the order they asked.
_case_watchers: list = []


def watch_cases(callback: Callable[[str], None]) -> None:
    """Call ``callback(script)`` with the reproduction script of every Case made from now on."""
    _case_watchers.append(callback)


class ConformanceFailure(AssertionError):
    """JAX disagreed with the reference model or with numpy. ``finding`` is the one-line message,
    ``repro`` the stand-alone script (both also in the text), for the run report; ``check`` names
    the check that failed (its ``what``), ``shows`` what it saw (one of ``SHOWS``) and, where the
    call raised, ``raised`` and ``raised_message`` the exception's class name and message; and
    ``expected`` and ``got``, what the check compared (two arrays, two block maps, two shapes):
    what a known deviation's symptom is matched against. Raised inside ``Case.oracle()``, it is
    tagged as the oracle's (``is_oracle_failure``)."""

    def __init__(self, message: str, finding: str = "", repro: str = "", *, check: str = "",
                 shows: str = "", raised: str = "", raised_message: str = "", expected=None, got=None,
                 raised_in: str = ""):
        super().__init__(message)
        self.raised_in = raised_in  # where a subprocess's exception was raised (``module.function``), when known
        self.finding = finding or message
        self.repro = repro
        self.check = check
        self.shows = shows
        self.raised = raised
        self.raised_message = raised_message
        self.expected = expected
        self.got = got


class OracleInsideAnExcuse(RuntimeError):
    """A property ran an oracle check (``Case.oracle()``, or a check named as the oracle's) inside an
    excuse context (``Excuses.way``), or an excuse context inside the oracle: a mistake of the
    property, which no known deviation excuses (it is tagged as the oracle's)."""


def tag_oracle(failure: BaseException) -> BaseException:
    """Tag ``failure`` as the oracle's: no known deviation excuses it."""
    setattr(failure, ORACLE_TAG, True)
    return failure


def is_oracle_failure(failure: BaseException) -> bool:
    """Whether ``failure`` was raised inside ``Case.oracle()`` (an oracle check's, or the unsharded
    run's own exception) or is an oracle placed inside an excuse context."""
    return bool(getattr(failure, ORACLE_TAG, False))


def oracle_is_running() -> bool:
    """Whether the code running now is inside a ``Case.oracle()`` block."""
    return _in_the_oracle.get()


@contextlib.contextmanager
def excusable():
    """Mark the body as one a known deviation may excuse (``Excuses.way`` runs each way inside it):
    an oracle check inside it raises OracleInsideAnExcuse, as does entering it inside the oracle."""
    if _in_the_oracle.get():
        raise tag_oracle(OracleInsideAnExcuse(
            "an excuse context (excuses.way) was entered inside Case.oracle(), but should be outside the oracle"))
    token = _excusable.set(True)
    try:
        yield
    finally:
        _excusable.reset(token)


class OracleOnDemand:
    """An exact property's one-device oracle, run only where it can change a verdict. Where the
    comparison is exact, a sharded way compared with numpy's value checks the same bits the oracle
    checks JAX's unsharded run against, so a way that passes needs no one-device program. The
    oracle (``run``: its checks inside ``Case.oracle()``) runs once, before anything is excused:

    * where a way fails, before a known deviation is asked about the failure (``way``: the body runs
      as an excusable one, its failure is localized by the oracle, then judged by ``excuse(name)``,
      the property's excuse context), so that an oracle's failure is never excused;
    * where not every way in ``names`` ``passed`` (refused, skipped, excused without a failure):
      ``finish`` runs it, so that every example is checked against numpy by some run.

    What it gives up: a one-device jit bug that no sharded way shows (the unsharded run is wrong
    where the sharded ones are right)."""

    def __init__(self, run: Callable[[], Any], names: Sequence[str]):
        self._run, self._names, self._passed, self.ran = run, frozenset(names), set(), False

    def ensure(self) -> None:
        """Run the oracle's checks, once."""
        if not self.ran:
            self.ran = True
            self._run()

    @contextlib.contextmanager
    def way(self, name: str, excuse: Callable[[str], Any]):
        try:
            with excusable():
                yield
        except Exception as failure:  # localized by the oracle, then judged by the excuse context
            self.ensure()
            with excuse(name):
                raise failure

    def passed(self, name: str) -> None:
        """Way ``name`` ran and passed every check."""
        self._passed.add(name)

    def finish(self) -> None:
        """Run the oracle unless every way passed."""
        if self._passed != self._names:
            self.ensure()


def _bits(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x).reshape(np.shape(x))  # (ascontiguousarray makes a 0-d array 1-d)
    return x.view(f"u{x.dtype.itemsize}") if x.dtype.itemsize in (1, 2, 4, 8) else x.view(np.uint8)


def _computed(result):
    """``result`` once JAX has computed it (``jax.block_until_ready``; JAX dispatches asynchronously,
    so an error its executable meets while it runs is raised only here). Any other value as it is."""
    jax = sys.modules.get("jax")  # (this module does not import JAX; a result from JAX means it is loaded)
    return jax.block_until_ready(result) if jax is not None else result


def _short(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + " ..."


def error_names_dimension(message: str, dims: Sequence[int]) -> bool:
    """True when an error message names one of ``dims`` ("dimension 1", "array axis 1", "axis 1")."""
    return any(re.search(rf"\b(dimension|axis) {d}\b", message) for d in dims)


# Where a verdict audit writes what it saw (``python -m tests.verdict_audit``): a directory, or unset.
AUDIT_ENV = "CONFORMANCE_VERDICT_AUDIT"
_audited = set()


def _record(record: dict) -> None:
    with open(os.path.join(os.environ[AUDIT_ENV], f"{os.getpid()}.jsonl"), "a") as out:
        out.write(json.dumps(record) + "\n")


def _audit_failure(case: "Case", check: str, verdict: str) -> None:
    """Under a verdict audit, record a check that failed (a known deviation, or a finding): its
    script, which should exit 1 while JAX misbehaves, or that it has no verdict."""
    if os.environ.get(AUDIT_ENV):
        test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" (", 1)[0]
        kind = "no script" if not case.repro else "failed" if verdict else "no verdict"
        name = verdicts.outcome_name(case.outcomes, check)
        _record({"test": test, "check": check, "kind": kind, "outcome": name,
                 **({"script": case.repro + verdict} if verdict else {})})


def _audit(case: "Case", what: str, lines: Callable[[str], Sequence[str]], exact: bool) -> None:
    """Under a verdict audit, record a check that passed: whether the property named the script's
    expression for it, and (once per test and outcome) the script with its verdict, which should
    exit 0 since JAX behaved in-process."""
    if not os.environ.get(AUDIT_ENV):
        return
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" (", 1)[0]
    name = what if exact else verdicts.outcome_name(case.outcomes, what)
    expression = case.outcomes.get(name) if name is not None else None
    if not case.repro:
        kind, key = "no script", re.sub(r"\d+", "N", what)
    elif expression is None:
        kind, key = "no verdict", re.sub(r"\d+", "N", what)
    else:
        kind, key = "scripted", name
    if (test, kind, key) in _audited:
        return
    _audited.add((test, kind, key))
    record = {"test": test, "check": what, "kind": kind, "outcome": name if kind == "scripted" else None}
    if kind == "scripted":
        record["script"] = case.repro + case.verdict(what, lines, exact)
    _record(record)


class Case:
    """One example under test: a one-line description of the call, and a script reproducing it."""

    def __init__(self, call: str, repro: str = "", outcomes: Optional[Dict[str, str]] = None, indent: str = ""):
        """(``outcomes``: {a check's name, or the name it extends (``verdict.outcome_name``): the
        expression in ``repro`` whose value that check judges}; ``indent``: where the script's last
        lines are, e.g. inside a ``with`` block for an Explicit mesh.)"""
        self.call = call
        self.repro = repro
        self.outcomes = dict(outcomes or {})
        self.indent = indent
        for watcher in _case_watchers:
            watcher(repro or f"# (no script) {call}")

    @contextlib.contextmanager
    def oracle(self):
        """Run the oracle's checks (the unsharded run, its comparison with numpy or an analytic
        reference) in the body: any exception it raises is tagged as the oracle's, which no known
        deviation excuses; inside an excuse context it raises OracleInsideAnExcuse instead."""
        __tracebackhide__ = True  # pytest leaves our frames out of the traceback
        if _excusable.get():
            raise tag_oracle(OracleInsideAnExcuse(
                f"Case.oracle() was entered inside an excuse context (excuses.way), but should be outside every "
                f"excuse context [{self.call}]"))
        token = _in_the_oracle.set(True)
        try:
            yield
        except Exception as failure:  # any exception of the oracle is the oracle's
            tag_oracle(failure)
            raise
        finally:
            _in_the_oracle.reset(token)

    def _starting_check(self, what: str) -> None:
        """Where every check starts: raise OracleInsideAnExcuse when check ``what`` is named as the
        oracle's (ORACLE_NAMES) and runs inside an excuse context, where a known deviation could
        excuse it."""
        __tracebackhide__ = True  # pytest leaves our frames out of the traceback
        if _excusable.get() and ORACLE_NAMES.search(what):
            raise tag_oracle(OracleInsideAnExcuse(
                f"check {what!r} is named as the oracle's (the unsharded run) and ran inside an excuse context "
                f"(excuses.way), but should run outside every excuse context, under case.oracle() [{self.call}]"))

    def jitted_first(self, judge: Callable[[Callable], Any], jitted: Callable, eager: Callable):
        """``judge(jitted)``: an unsharded run's checks (inside ``oracle()``) on the function jitted
        on one device, one compilation where running it eagerly asks for one per operation; where
        they fail or raise, ``judge(eager)``, whose failure is the oracle's. What a property's
        unsharded run gives either way is what numpy's reference allows."""
        try:
            return judge(jitted)
        except Exception:  # noqa: BLE001 - the eager run, judged, says what is wrong (an audit saw this check fail)
            return judge(eager)

    def verdict(self, what: str, lines: Callable[[str], Sequence[str]], exact: bool = False) -> str:
        """The script's verdict lines for check ``what`` (``lines(expression)``), or "" where the
        property named no expression for it."""
        expression = self.outcomes.get(what) if exact else verdicts.outcome_for(self.outcomes, what)
        if expression is None or not self.repro:
            return ""
        return "\n" + "\n".join("    " + self.indent + line for line in lines(expression))

    def fail(self, message: str, *, check: str = "", shows: str = "mismatch", raised: str = "",
             raised_message: str = "", verdict: str = "", expected=None, got=None, raised_in: str = "") -> None:
        """Raise the ConformanceFailure of ``message``, naming the ``check``, what it ``shows`` and
        what it compared (``verdict``: the lines that end the script, from ``verdict()``)."""
        __tracebackhide__ = True  # pytest leaves our frames out of the traceback
        self._starting_check(check)
        _audit_failure(self, check, verdict)
        repro = self.repro + verdict if self.repro else ""
        footer = f"\n\nReproduce without Hypothesis:\n{repro}" if repro else ""
        raise ConformanceFailure(f"{message}{footer}", message, repro, check=check, shows=shows,
                                 raised=raised, raised_message=raised_message, expected=expected, got=got,
                                 raised_in=raised_in)

    def _mismatch(self, what: str, got, expected, shows: str = "mismatch", verdict: str = "") -> None:
        __tracebackhide__ = True  # pytest leaves our frames out of the traceback
        self.fail(f"{what}={got!r}, but should be {expected!r} [{self.call}]", check=what, shows=shows,
                  verdict=verdict, expected=expected, got=got)

    def equal(self, what: str, got, expected, *, shows: str = "mismatch",
              judged: Optional[Callable[[str], Sequence[str]]] = None) -> None:
        """``got == expected`` (``shows``: what a difference shows, for known-deviation symptoms;
        ``judged``: the verdict lines of a check that judges a part of an outcome, e.g. one shard
        of an array's layout, whose outcome is then found by prefix as for values; without it the
        outcome is the value compared, named by the check's exact name)."""
        __tracebackhide__ = True  # pytest leaves our frames out of the traceback
        self._starting_check(what)
        lines = judged or (lambda e: verdicts.equal_lines(e, expected))
        if got != expected:
            self._mismatch(what, got, expected, shows, self.verdict(what, lines, exact=judged is None))
        _audit(self, what, lines, exact=judged is None)

    def true(self, what: str, got: bool) -> None:
        __tracebackhide__ = True  # pytest leaves our frames out of the traceback
        self._starting_check(what)
        lines = lambda e: verdicts.equal_lines(e, True)
        if not got:
            self._mismatch(what, got, True, verdict=self.verdict(what, lines, exact=True))
        _audit(self, what, lines, exact=True)

    def index_map(self, what: str, got: Dict[int, tuple], expected: Dict[int, tuple], *,
                  judged: Optional[Callable[[str], Sequence[str]]] = None) -> None:
        """Two ``{device id: block}`` maps agree device by device; the message lists the devices
        that differ (``judged``: as for ``equal``)."""
        __tracebackhide__ = True  # pytest leaves our frames out of the traceback
        self._starting_check(what)
        judge = judged or (lambda e: verdicts.index_map_lines(e, expected))
        if got == expected:
            _audit(self, what, judge, exact=False)
            return
        lines = []
        for device in sorted(set(got) | set(expected)):
            if device not in expected:
                lines.append(f"  device {device}: holds {got[device]}, but should hold nothing")
            elif device not in got:
                lines.append(f"  device {device}: holds nothing, but should hold {expected[device]}")
            elif got[device] != expected[device]:
                lines.append(f"  device {device}: holds {got[device]}, but should hold {expected[device]}")
        self.fail(f"{what} differs from the model on {len(lines)} device(s) [{self.call}]\n"
                  + "\n".join(lines[:16]) + ("\n  ..." if len(lines) > 16 else ""), check=what, shows="layout",
                  verdict=self.verdict(what, judge), expected=expected, got=got)

    def same_bits(self, what: str, got, expected, *, judged: Optional[Callable[[str], Sequence[str]]] = None) -> None:
        """Same shape, dtype and bit pattern (so NaN payloads and -0.0 count; ``judged``: as for
        ``equal``)."""
        __tracebackhide__ = True  # pytest leaves our frames out of the traceback
        self._starting_check(what)
        got, expected = np.asarray(got), np.asarray(expected)
        judge = judged or (lambda e: verdicts.values_lines(e, expected, bits=True))
        verdict = lambda: self.verdict(what, judge)
        if got.dtype != expected.dtype:
            self._mismatch(f"{what}.dtype", got.dtype.name, expected.dtype.name, "dtype", verdict())
        if got.shape != expected.shape:
            self._mismatch(f"{what}.shape", got.shape, expected.shape, "shape", verdict())
        differ = _bits(got) != _bits(expected)
        if differ.any():
            where = tuple(int(i) for i in np.argwhere(differ)[0])
            self.fail(f"{what} differs in {int(differ.sum())} of {got.size} element(s); first at "
                      f"{where}: got {got[where]!r}, but should be {expected[where]!r} [{self.call}]",
                      check=what, shows="values", verdict=verdict(), expected=expected, got=got)
        _audit(self, what, judge, exact=False)

    def close(self, what: str, got, expected, *, rtol: float, atol) -> None:
        """Same shape and dtype, values within ``atol + rtol * |expected|`` (NaN matches NaN);
        ``atol`` is a number or an array of ``expected``'s shape (a bound per element)."""
        __tracebackhide__ = True  # pytest leaves our frames out of the traceback
        self._starting_check(what)
        got, expected = np.asarray(got), np.asarray(expected)
        judge = lambda e: verdicts.values_lines(e, expected, rtol=rtol, atol=atol)
        verdict = lambda: self.verdict(what, judge)
        if got.dtype != expected.dtype:
            self._mismatch(f"{what}.dtype", got.dtype.name, expected.dtype.name, "dtype", verdict())
        if got.shape != expected.shape:
            self._mismatch(f"{what}.shape", got.shape, expected.shape, "shape", verdict())
        g, e = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64), \
            expected.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
        if np.ndim(atol) and np.shape(atol) != expected.shape:
            raise ValueError(f"{what}: a per-element atol has shape {np.shape(atol)}, the values {expected.shape}")
        ok = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
        if not ok.all():
            where = tuple(int(i) for i in np.argwhere(~ok)[0])
            bound = f"atol={atol}" if not np.ndim(atol) else \
                f"the per-element atol ({float(np.asarray(atol)[where])!r} there)"
            self.fail(f"{what} differs in {int((~ok).sum())} of {got.size} element(s) beyond "
                      f"rtol={rtol}, {bound}; first at {where}: got {got[where]!r}, but should "
                      f"be {expected[where]!r} [{self.call}]", check=what, shows="values", verdict=verdict(),
                      expected=expected, got=got)
        _audit(self, what, judge, exact=False)

    def accepts(self, what: str, fn: Callable):
        """``fn()`` returns, and its result is computed (``jax.block_until_ready``, as the
        script does); an exception is a failure that quotes it."""
        __tracebackhide__ = True  # pytest leaves our frames out of the traceback
        self._starting_check(what)
        try:
            result = _computed(fn())
        except Exception as e:  # noqa: BLE001 - any exception is the finding
            self.fail(f"{what} raised {type(e).__name__}: {_short(e)}, but should be accepted "
                      f"[{self.call}]", check=what, shows="raised", raised=type(e).__name__,
                      raised_message=str(e), verdict=self.verdict(what, verdicts.returns_lines))
        _audit(self, what, verdicts.returns_lines, exact=False)
        return result

    def rejects(self, what: str, fn: Callable, errors: Tuple[Type[BaseException], ...],
                names_dims: Optional[Sequence[int]] = None) -> BaseException:
        """``fn()`` raises one of ``errors``; when ``names_dims`` is given, the message names one of
        those dimensions."""
        __tracebackhide__ = True  # pytest leaves our frames out of the traceback
        self._starting_check(what)
        expected = " or ".join(e.__name__ for e in errors)
        judge = lambda e: verdicts.raises_lines(e, [error.__name__ for error in errors])
        verdict = lambda: self.verdict(what, judge)
        try:
            result = fn()
        except errors as e:
            if names_dims is not None and not error_names_dimension(str(e), names_dims):
                self.fail(f"{what} raised {type(e).__name__}: {_short(e)}, but the message should "
                          f"name dimension {' or '.join(map(str, names_dims))} [{self.call}]", check=what,
                          shows="raised", raised=type(e).__name__, raised_message=str(e))
            _audit(self, what, judge, exact=False)
            return e
        except Exception as e:  # noqa: BLE001 - any other exception is the failure this check reports
            self.fail(f"{what} raised {type(e).__name__}: {_short(e)}, but should raise {expected} "
                      f"[{self.call}]", check=what, shows="raised", raised=type(e).__name__,
                      raised_message=str(e), verdict=verdict())
        self.fail(f"{what} returned {_short(repr(result), 200)}, but should raise {expected} "
                  f"[{self.call}]", check=what, shows="accepted", verdict=verdict())
