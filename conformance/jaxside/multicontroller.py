"""Every process runs the same test: the multi-controller mode of a multi-process run.

In ``pytest suites/ --processes N`` every process runs the whole pytest session: the same
collection, the same seed, so the same Hypothesis examples in the same order. A property runs
unchanged on each of them: its inputs are built on every process from the same drawn global value,
its programs span the processes' devices, and what it reads back is assembled here from what each
process addresses:

- ``value_of(array)`` (what ``np.asarray`` of a ``jax.Array`` gives a property): every process
  publishes the shards it addresses (device, block, bytes) and every process assembles the global
  value from all of them; two copies of one block that differ (replicas on two processes) and an
  element no process holds are failures, named;
- ``shards_of(array)`` (the layout checks' view): every process's addressable shards, each read
  by the process that addresses it.

So every process judges the same global facts and reaches the same verdict; ``agreeing`` checks
that at the end of each example and each test (one draw, one verdict): where the processes'
outcomes differ, every process fails the example with ``ProcessesDisagree``, naming each process's
outcome, so Hypothesis shrinks in lockstep.

The exchange goes through JAX's coordination service's key-value store (no JAX collective, so a
failing check cannot leave another process waiting in one); every exchange is numbered and named,
so processes that went different ways are told apart from a slow one.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import sys
import time
from typing import Callable, List, Optional

import numpy as np

from conformance.model.layout import DeviceIds

MIN_WAIT_S = 600.0  # an exchange waits at least this long for the slowest process (it may be compiling)
ACTIVE = None  # this run's Exchange where several processes run every test (``activate``), else None


class ProcessesDisagree(AssertionError):
    """The processes of a multi-controller run reached different outcomes for one example."""


class Diverged(AssertionError):
    """The processes made different exchanges at the same point: they ran different code."""


class ExchangeTimeout(AssertionError):
    """A process did not reach an exchange in time (stuck, or gone)."""


def _client():
    from jax._src import distributed
    return distributed.global_state.client


class Exchange:
    """Numbered all-to-all exchanges of JSON values between the processes of the run, numbered
    afresh in each test (``begin``): processes that went different ways in one test (``Diverged``)
    meet again at the next one's start."""

    def __init__(self, process_id: int, count: int, wait_s: float, progress: Optional[Callable] = None):
        self.process_id, self.count, self.wait_s = process_id, count, wait_s
        self.progress = progress  # told (n, what, test) at each exchange: a launcher sees a stuck run
        self.n = 0
        self.scope = 0  # the test's number in the session (the same on every process)
        self.mine: List[str] = []  # this process's keys not yet deleted
        self.where = ""  # the test running (named in a time-out)

    def begin(self, scope: int, where: str) -> None:
        """Exchanges from now on belong to test number ``scope`` (``where``: its id)."""
        self.scope, self.where, self.n = scope, where, 0

    def leave(self) -> None:
        """This process is done with the current test: a process still waiting in it learns so."""
        if self.count > 1:
            _client().key_value_set(f"conformance/spmd/{self.scope}/left/{self.process_id}", "1")
            self.mine.append(f"conformance/spmd/{self.scope}/left/{self.process_id}")

    def everyone(self, what: str, value) -> list:
        """Every process's ``value`` (index = process id) for the exchange named ``what``."""
        if self.count == 1:
            return [value]
        self.n += 1
        if self.progress is not None:
            self.progress(self.n, what, self.where)
        client = _client()
        key = f"conformance/spmd/{self.scope}/{self.n}/"
        at = caller()
        client.key_value_set(key + str(self.process_id), json.dumps({"what": what, "value": value, "at": at}))
        self.mine.append(key + str(self.process_id))
        answers = []
        for p in range(self.count):
            if p == self.process_id:
                answers.append(value)
                continue
            message = json.loads(self._wait_for(client, key + str(p), p, what, at))
            if message["what"] != what:
                raise Diverged(f"exchange {self.n} [{self.where}]: process {self.process_id} reached "
                               f"{what!r} at {at}, but process {p} reached {message['what']!r} at "
                               f"{message.get('at')}: the processes ran different code")
            answers.append(message["value"])
        return answers

    def _wait_for(self, client, key: str, p: int, what: str, at: str) -> str:
        """Process ``p``'s message at ``key``; Diverged where ``p`` left this test without it,
        ExchangeTimeout after ``wait_s``."""
        deadline = time.monotonic() + self.wait_s
        left = f"conformance/spmd/{self.scope}/left/{p}"
        while True:
            try:
                return client.blocking_key_value_get(key, 500)
            except Exception as e:  # noqa: BLE001 - a time-out: the client raises its runtime's error type
                waited = e
            try:
                client.blocking_key_value_get(left, 1)
            except Exception:  # noqa: BLE001 - not left: wait on
                if time.monotonic() > deadline:
                    raise ExchangeTimeout(
                        f"process {p} did not reach exchange {self.n} ({what}) within {self.wait_s:.0f} s "
                        f"[{self.where}]: {str(waited).splitlines()[0][:200]}") from None
                continue
            raise Diverged(f"exchange {self.n} [{self.where}]: process {self.process_id} reached {what!r} at "
                           f"{at}, but process {p} had ended the test without it: the processes ran "
                           f"different code")

    def forget(self) -> None:
        """Delete this process's keys, once every process has read them (after an agreement)."""
        client, keep = _client(), self.mine[-1:] if self.mine else []
        for key in self.mine[:-1]:
            try:
                client.key_value_delete(key)
            except Exception:  # noqa: BLE001 - a key left behind costs memory, not a verdict
                pass
        self.mine = keep


# --- devices -------------------------------------------------------------------------------------
ORDER = "CONFORMANCE_DEVICE_ORDER"  # "processes" (each process's devices together) or "interleaved"


def device_ids(order: Optional[str] = None) -> tuple:
    """Every device of the run, the order meshes are drawn over: each process's devices together
    (process 0's first), or ``interleaved`` (the first device of each process, then the second of
    each, ...), so that a mesh axis's neighbours live on different processes."""
    import jax
    order = order or os.environ.get(ORDER, "processes")
    by_process = {}
    for d in sorted(jax.devices(), key=lambda d: (d.process_index, d.id)):
        by_process.setdefault(d.process_index, []).append(d.id)
    groups = [by_process[p] for p in sorted(by_process)]
    if order == "interleaved":
        ids = tuple(i for column in zip(*groups) for i in column)
    elif order == "processes":
        ids = tuple(i for group in groups for i in group)
    else:
        raise ValueError(f"${ORDER}={order!r}: the device order is 'processes' or 'interleaved'")
    return DeviceIds(ids, groups)


HERE = os.path.realpath(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))  # the checkout


def nearest_frame(depth: int, *, past_here: bool = False):
    """The nearest frame from ``depth`` up whose file is not JAX's or numpy's (and, ``past_here``,
    not this module's); None where there is none."""
    frame = sys._getframe(depth + 1)
    while frame is not None:
        path = frame.f_code.co_filename
        library = any(f"{os.sep}{p}{os.sep}" in path for p in ("jax", "jaxlib", "numpy"))
        if not library and not (past_here and os.path.realpath(path) == HERE):
            return frame
        frame = frame.f_back
    return None


def caller() -> str:
    """``file:line`` (file within the checkout) of the nearest frame outside this module, JAX and numpy."""
    frame = nearest_frame(2, past_here=True)
    return f"{os.path.relpath(frame.f_code.co_filename, ROOT)}:{frame.f_lineno}" if frame else "?"


# --- arrays as JSON -----------------------------------------------------------------------------
def encode(x: np.ndarray) -> dict:
    x = np.array(x, order="C", copy=True)  # (np.ascontiguousarray makes a 0-d array 1-d)
    return {"dtype": x.dtype.name, "shape": list(x.shape), "bytes": base64.b64encode(x.tobytes()).decode()}


def decode(d: dict) -> np.ndarray:
    import jax.numpy as jnp
    dtype = np.dtype(jnp.dtype(d["dtype"]))
    return np.frombuffer(base64.b64decode(d["bytes"]), dtype).reshape(d["shape"])


def _blocks(array):
    """(device id, block, shard) of each addressable shard of ``array``."""
    from conformance.model.layout import normalize_index
    return [(s.device.id, [list(b) for b in normalize_index(s.index, array.shape)], s)
            for s in array.addressable_shards]


def value_of(exchange: Exchange, array, read: Callable) -> np.ndarray:
    """The global value of ``array``, assembled from every process's addressable shards (each read
    with ``read``, JAX's own ``np.asarray`` of a single-device array)."""
    mine = [[device, block, encode(np.asarray(read(s.data)))] for device, block, s in _blocks(array)]
    answers = exchange.everyone(f"the value of a {array.dtype.name}{list(array.shape)} jax.Array", mine)
    out = np.zeros(array.shape, np.dtype(array.dtype))
    held = {}
    for process, shards in enumerate(answers):
        for device, block, data in shards:
            index = tuple(slice(lo, hi) for lo, hi in block)
            data = decode(data)
            key = tuple(map(tuple, block))
            if key in held:
                other_device, other_process, other = held[key]
                if other.tobytes() != data.tobytes():
                    raise AssertionError(
                        f"the copies of block {key} of a {array.dtype.name}{list(array.shape)} array differ: "
                        f"device {other_device} (process {other_process}) holds {other.tolist()}, device {device} "
                        f"(process {process}) holds {data.tolist()}, but replicas should be equal")
                continue
            held[key] = (device, process, data)
            out[index] = data  # (a shard of another shape than its block: numpy's ValueError, as JAX's own read
            # raises it before 0.12, so a known deviation's symptom reads alike in both runs)
    covered = np.zeros(array.shape, bool)
    for key in held:
        covered[tuple(slice(lo, hi) for lo, hi in key)] = True
    if not covered.all():
        raise AssertionError(f"no process holds elements {np.argwhere(~covered).tolist()[:8]} of a "
                             f"{array.dtype.name}{list(array.shape)} array, but every element should be held")
    out.flags.writeable = False
    return out


def shards_of(exchange: Exchange, views: tuple, view_type) -> tuple:
    """Every process's addressable shard views (``bridge.ShardView``), in process order."""
    mine = [[v.device_id, [list(b) for b in v.block], v.replica_id, encode(v.data), sorted(v.data_devices)]
            for v in views]
    out = []
    for shards in exchange.everyone("the addressable shards of a jax.Array", mine):
        out += [view_type(device, tuple(tuple(b) for b in block), replica, decode(data), frozenset(devs))
                for device, block, replica, data, devs in shards]
    return tuple(out)


# --- np.asarray of a jax.Array, from the suites -------------------------------------------------
_OURS = tuple(os.path.join(ROOT, d) + os.sep for d in ("suites", "conformance", "strategies", "tests"))


def called_from_our_code(depth: int = 2) -> bool:
    """Whether the nearest frame outside JAX and numpy is the suite's own code (not JAX's, not
    pytest's or Hypothesis' reporting)."""
    frame = nearest_frame(depth)
    return frame is not None and os.path.realpath(frame.f_code.co_filename).startswith(_OURS)


def processes_of(a) -> frozenset:
    """The process indices of ``a``'s devices (empty for an array JAX cannot say it of: deleted, or
    a sharding without devices)."""
    try:
        return frozenset(d.process_index for d in a.sharding.device_set)
    except Exception:  # noqa: BLE001 - a deleted array, or a sharding without devices: JAX's own read says
        return frozenset()


def spans_processes(a, count: int) -> bool:
    """Whether ``a`` is a global array split over more than one process, whose value every process
    assembles together (a decision every process makes alike, from the sharding). An array on one
    process's devices is that process's own (a shard's data, a one-device run), and a fully
    replicated one on devices of every process is whole on each (numpy reads one with a single
    addressable shard through the buffer protocol, never asking): each process reads its own. (A
    replicated array on some processes' devices, a mesh smaller than the run, is assembled: the
    others hold none of it.) ``count``: the run's processes."""
    processes = processes_of(a)
    return len(processes) > 1 and (len(processes) < count or not a.is_fully_replicated)


def activate(exchange: Exchange) -> None:
    """From now on every test runs on every process: ``np.asarray(x)``, ``np.array(x)``,
    ``np.asanyarray(x)`` (and ``x.tolist()``, ``float(x)``, ...) of a ``jax.Array`` in the suites'
    code give the global value assembled from every process; JAX's own calls keep JAX's behaviour
    (they raise where a value spans processes)."""
    global ACTIVE
    from jax._src import array

    original = array.ArrayImpl.__dict__["_value"]
    reading = []  # (re-entered while this process reads its own shards: JAX's own read)

    def ours(a, depth: int) -> bool:
        """Whether reading ``a`` here assembles it: a global array split over processes, read by the
        suites' code (``depth``: the reader's frame), not while this process reads its own shards."""
        return not reading and spans_processes(a, exchange.count) and called_from_our_code(depth + 1)

    def assembled(a) -> np.ndarray:
        a._check_if_deleted()
        reading.append(True)
        try:
            return value_of(exchange, a, lambda single: original.fget(single))
        finally:
            reading.pop()

    @functools.wraps(original.fget)
    def _value(self):
        return assembled(self) if ours(self, 2) else original.fget(self)

    array.ArrayImpl._value = property(_value)

    # numpy reads an array with a single addressable shard through the buffer protocol, without
    # asking JAX (``_value``): on a process that holds one shard of an array spanning several, the
    # suites' ``np.asarray`` / ``np.array`` / ``np.asanyarray`` would read only that shard while the
    # other processes wait for it. Those three assemble the global value first.
    def assembling(convert):
        @functools.wraps(convert)
        def converted(a, *args, **kwargs):
            if isinstance(a, array.ArrayImpl) and ours(a, 2):
                a = assembled(a)
            return convert(a, *args, **kwargs)
        return converted

    for name in ("asarray", "array", "asanyarray"):
        setattr(np, name, assembling(getattr(np, name)))
    ACTIVE = exchange


# --- one draw, one verdict ----------------------------------------------------------------------
def outcome(error: Optional[BaseException]) -> Optional[str]:
    """An outcome as the processes compare it: None, or the exception's type and first line."""
    if error is None:
        return None
    first = str(error).strip().splitlines()[0][:300] if str(error).strip() else ""
    return f"{type(error).__module__}.{type(error).__qualname__}: {first}"


def agree(exchange: Exchange, what: str, error: Optional[BaseException]) -> None:
    """Every process's outcome of one example (or test); raise ``ProcessesDisagree`` on every
    process where they differ in kind (passed, or the exception's type)."""
    outcomes = exchange.everyone(what, outcome(error))
    kinds = {o.split(":", 1)[0] if o else None for o in outcomes}
    exchange.forget()
    if len(kinds) > 1:
        said = "; ".join(f"process {p}: {o or 'passed'}" for p, o in enumerate(outcomes))
        raise ProcessesDisagree(f"the processes reached different outcomes for one {what.split(' of ')[0]}: "
                                f"{said}, but every process should reach the same") from error
    if error is not None:
        raise error


def agreeing(exchange: Exchange, inner: Callable) -> Callable:
    """``inner`` (a Hypothesis test's body) made to agree on each example's outcome."""
    @functools.wraps(inner)
    def each_example(*args, **kwargs):
        result, error = None, None
        try:
            result = inner(*args, **kwargs)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # noqa: BLE001 - agreed on, then raised again by agree
            error = e
        agree(exchange, "outcome of an example", error)
        return result
    return each_example


def started(exchange: Exchange, number: int, nodeid: str) -> None:
    """Test number ``number`` (``nodeid``) starts: every process meets at its start."""
    exchange.begin(number, nodeid)
    exchange.everyone(f"start of {nodeid}", None)
