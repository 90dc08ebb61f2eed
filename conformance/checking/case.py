"""Assertion helpers whose failures a person can act on.

Every message reads ``<what>=<got>, but should be <expected> [<call>]`` and ends with a script that
reproduces the case without Hypothesis. A property builds one ``Case`` per example and asks it to
check things; the first disagreement raises ``ConformanceFailure`` (an ``AssertionError``).
"""

from __future__ import annotations

import re
from typing import Callable, Dict, Optional, Sequence, Tuple, Type

import numpy as np


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


class ConformanceFailure(AssertionError):
    """JAX disagreed with the reference model or with numpy. ``finding`` is the one-line message,
    ``repro`` the stand-alone script (both also in the text), for the run report; ``check`` names
    the check that failed (its ``what``), ``shows`` what it saw (one of ``SHOWS``) and, where the
    call raised, ``raised`` and ``raised_message`` the exception's class name and message: what a
    known deviation's symptom is matched against."""

    def __init__(self, message: str, finding: str = "", repro: str = "", *, check: str = "",
                 shows: str = "", raised: str = "", raised_message: str = ""):
        super().__init__(message)
        self.finding = finding or message
        self.repro = repro
        self.check = check
        self.shows = shows
        self.raised = raised
        self.raised_message = raised_message


def _bits(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x).reshape(np.shape(x))  # (ascontiguousarray makes a 0-d array 1-d)
    return x.view(f"u{x.dtype.itemsize}") if x.dtype.itemsize in (1, 2, 4, 8) else x.view(np.uint8)


def _short(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + " ..."


def error_names_dimension(message: str, dims: Sequence[int]) -> bool:
    """True when an error message names one of ``dims`` ("dimension 1", "array axis 1", "axis 1")."""
    return any(re.search(rf"\b(dimension|axis) {d}\b", message) for d in dims)


class Case:
    """One example under test: a one-line description of the call, and a script reproducing it."""

    def __init__(self, call: str, repro: str = ""):
        self.call = call
        self.repro = repro

    def fail(self, message: str, *, check: str = "", shows: str = "mismatch", raised: str = "",
             raised_message: str = "") -> None:
        """Raise the ConformanceFailure of ``message``, naming the ``check`` and what it ``shows``."""
        footer = f"\n\nReproduce without Hypothesis:\n{self.repro}" if self.repro else ""
        raise ConformanceFailure(f"{message}{footer}", message, self.repro, check=check, shows=shows,
                                 raised=raised, raised_message=raised_message)

    def _mismatch(self, what: str, got, expected, shows: str = "mismatch") -> None:
        self.fail(f"{what}={got!r}, but should be {expected!r} [{self.call}]", check=what, shows=shows)

    def equal(self, what: str, got, expected, *, shows: str = "mismatch") -> None:
        """``got == expected`` (``shows``: what a difference shows, for known-deviation symptoms)."""
        if got != expected:
            self._mismatch(what, got, expected, shows)

    def true(self, what: str, got: bool) -> None:
        if not got:
            self._mismatch(what, got, True)

    def index_map(self, what: str, got: Dict[int, tuple], expected: Dict[int, tuple]) -> None:
        """Two ``{device id: block}`` maps agree device by device; the message lists the devices
        that differ."""
        if got == expected:
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
                  + "\n".join(lines[:16]) + ("\n  ..." if len(lines) > 16 else ""), check=what, shows="layout")

    def same_bits(self, what: str, got, expected) -> None:
        """Same shape, dtype and bit pattern (so NaN payloads and -0.0 count)."""
        got, expected = np.asarray(got), np.asarray(expected)
        if got.dtype != expected.dtype:
            self._mismatch(f"{what}.dtype", got.dtype.name, expected.dtype.name, "dtype")
        if got.shape != expected.shape:
            self._mismatch(f"{what}.shape", got.shape, expected.shape, "shape")
        differ = _bits(got) != _bits(expected)
        if differ.any():
            where = tuple(int(i) for i in np.argwhere(differ)[0])
            self.fail(f"{what} differs in {int(differ.sum())} of {got.size} element(s); first at "
                      f"{where}: got {got[where]!r}, but should be {expected[where]!r} [{self.call}]",
                      check=what, shows="values")

    def close(self, what: str, got, expected, *, rtol: float, atol: float) -> None:
        """Same shape and dtype, values within ``atol + rtol * |expected|`` (NaN matches NaN)."""
        got, expected = np.asarray(got), np.asarray(expected)
        if got.dtype != expected.dtype:
            self._mismatch(f"{what}.dtype", got.dtype.name, expected.dtype.name, "dtype")
        if got.shape != expected.shape:
            self._mismatch(f"{what}.shape", got.shape, expected.shape, "shape")
        g, e = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64), \
            expected.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
        ok = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
        if not ok.all():
            where = tuple(int(i) for i in np.argwhere(~ok)[0])
            self.fail(f"{what} differs in {int((~ok).sum())} of {got.size} element(s) beyond "
                      f"rtol={rtol}, atol={atol}; first at {where}: got {got[where]!r}, but should "
                      f"be {expected[where]!r} [{self.call}]", check=what, shows="values")

    def accepts(self, what: str, fn: Callable):
        """``fn()`` returns; an exception is a failure that quotes it."""
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - any exception is the finding
            self.fail(f"{what} raised {type(e).__name__}: {_short(e)}, but should be accepted "
                      f"[{self.call}]", check=what, shows="raised", raised=type(e).__name__,
                      raised_message=str(e))

    def rejects(self, what: str, fn: Callable, errors: Tuple[Type[BaseException], ...],
                names_dims: Optional[Sequence[int]] = None) -> BaseException:
        """``fn()`` raises one of ``errors``; when ``names_dims`` is given, the message names one of
        those dimensions."""
        expected = " or ".join(e.__name__ for e in errors)
        try:
            result = fn()
        except errors as e:
            if names_dims is not None and not error_names_dimension(str(e), names_dims):
                self.fail(f"{what} raised {type(e).__name__}: {_short(e)}, but the message should "
                          f"name dimension {' or '.join(map(str, names_dims))} [{self.call}]", check=what,
                          shows="raised", raised=type(e).__name__, raised_message=str(e))
            return e
        except Exception as e:  # noqa: BLE001
            self.fail(f"{what} raised {type(e).__name__}: {_short(e)}, but should raise {expected} "
                      f"[{self.call}]", check=what, shows="raised", raised=type(e).__name__,
                      raised_message=str(e))
        self.fail(f"{what} returned {_short(repr(result), 200)}, but should raise {expected} "
                  f"[{self.call}]", check=what, shows="accepted")
