"""Which of the sharding API's entries a run's properties call, with which parameters, in which
argument forms and calling contexts: measured, not declared. For the session, every entry of the
inventory (``conformance/jaxside/inventory.py``) that is a function is replaced in its public
module by a recorder that binds the call to the function's signature and counts, per parameter
passed, a **call** (entry, parameter, form, spelling, context), then calls the function unchanged.
Classes (``NamedSharding``, ``PartitionSpec``, ``Mesh``, ...) are left alone: replacing one would
change ``isinstance``; their rows come from ``conformance/jaxside/api_coverage.toml``.

Vocabulary:

- a **form** names how a value was given: ``list``, ``tuple``, ``nested tuple``, ``negative int``,
  ``int``, ``str``, ``None``, ``bool``, ``callable``, a sharding's or mesh's type name
  (``NamedSharding``, ``PartitionSpec``, ``SingleDeviceSharding``, ``Device``), ``jax.Array``
  (``sharded jax.Array`` when it spans several devices), ``numpy``, ``tracer``, ``dict``, ``dtype``,
  ``pytree`` (a list or tuple holding shardings), else the value's type name;
- a **spelling** is ``positional`` or ``keyword``;
- a **context** is where the call ran, read from the trace in effect (before 0.4.36, from its
  arguments' tracers): ``eager``, ``jit`` (tracing a jaxpr outside any manual axes), ``shard_map
  body`` (a manual mesh axis in effect), ``vmap``, ``grad`` (JVP or linearize); the innermost
  transformation names it.

Only the parameters a call passes are counted (a default is not a form the caller chose); a call
whose arguments do not bind to the signature counts once as parameter ``(unbindable)``, and one
the recorder fails to read as ``(unrecorded)`` (the form names the error): recording never changes
what a call does.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections import Counter
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

TRACE_CONTEXTS = {"EvalTrace": "eager", "DynamicJaxprTrace": "jit", "ShardMapTrace": "shard_map body",
                  "BatchTrace": "vmap", "JVPTrace": "grad", "LinearizeTrace": "grad", "JaxprTrace": "grad"}
TRACER_CONTEXTS = {"DynamicJaxprTracer": "jit", "ShardMapTracer": "shard_map body", "BatchTracer": "vmap",
                   "JVPTracer": "grad", "LinearizeTracer": "grad", "JaxprTracer": "grad"}
UNBINDABLE = "(unbindable)"
UNRECORDED = "(unrecorded)"  # the recorder failed to read the call (its form is the error's class)
NO_PARAMETERS = "(no parameters)"  # a call of an entry that takes none (the coverage table's pair for it)


@dataclass(frozen=True)
class ApiCall:
    """One kind of call: an inventory entry, a parameter it was passed, the argument's form, how
    it was spelled, and the context it ran in."""

    entry: str
    parameter: str
    form: str
    spelling: str
    context: str


def form_of(value) -> str:
    """The form of an argument (see the module's vocabulary)."""
    import jax
    import numpy as np

    if value is None:
        return "None"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "negative int" if value < 0 else "int"
    if isinstance(value, str):
        return "str"
    if isinstance(value, jax.core.Tracer):
        return "tracer"
    if isinstance(value, jax.Array):
        try:
            return "sharded jax.Array" if len(value.sharding.device_set) > 1 else "jax.Array"
        except Exception:  # noqa: BLE001 - a key array over a host value has no sharding (0.4.30)
            return "jax.Array"
    if isinstance(value, np.ndarray):
        return "numpy"
    if isinstance(value, jax.Device):
        return "Device"
    if isinstance(value, jax.sharding.PartitionSpec):  # (0.10 on names its class P)
        return "PartitionSpec"
    name = type(value).__name__
    if isinstance(value, (jax.sharding.Sharding, jax.sharding.Mesh)):
        return name
    if isinstance(value, (list, tuple)):
        kind = "list" if isinstance(value, list) else "tuple"
        if any(isinstance(v, (jax.sharding.Sharding, jax.sharding.PartitionSpec)) for v in value):
            return f"pytree ({kind}) of shardings"
        if kind == "tuple" and any(isinstance(v, tuple) for v in value):
            return "nested tuple"
        if any(isinstance(v, int) and not isinstance(v, bool) and v < 0 for v in value):
            return f"{kind} with a negative int"
        return kind
    if isinstance(value, dict):
        return "dict"
    if isinstance(value, np.dtype) or isinstance(value, type) and issubclass(value, np.generic) \
            or type(value).__name__ == "_ScalarMeta":  # (jnp.float32 and its kin)
        return "dtype"
    if callable(value):
        return "callable"
    return name


def context_of(args: tuple, kwargs: dict) -> str:
    """Where a call ran (see the module's vocabulary): the trace in effect, where JAX says
    (0.4.36 on); before, the tracers among its top-level arguments (and one level into lists,
    tuples and dicts), a call without one reading as eager."""
    import jax

    from conformance.jaxside import compat

    trace = compat.current_trace_name()
    if trace is not None:
        kind = TRACE_CONTEXTS.get(trace, trace)
    else:
        seen = set()
        for value in (*args, *kwargs.values()):
            inner = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) \
                else (value,)
            seen |= {TRACER_CONTEXTS.get(type(v).__name__, type(v).__name__) for v in inner
                     if isinstance(v, jax.core.Tracer)}
        kind = next((k for k in ("grad", "vmap", "shard_map body", "jit") if k in seen), min(seen, default="eager"))
    return "shard_map body" if kind == "jit" and compat.manual_axes_in_context() else kind


class Recorder:
    """Replaces inventory functions by counting wrappers (``install``), counts while ``active``,
    and puts the originals back (``uninstall``)."""

    def __init__(self):
        self.calls: Counter = Counter()
        self.active = False
        self.installed: List[Tuple[object, str, object]] = []

    def install(self, entries: Iterable[str]) -> List[str]:
        """Wrap each entry that resolves to a function (not a class, not a descriptor); the
        names wrapped."""
        wrapped = []
        for name in entries:
            found = resolve(name)
            if found is None:
                continue
            owner, attribute, original = found
            if inspect.isclass(original) or not callable(original) or inspect.isclass(owner) \
                    and not inspect.isfunction(inspect.getattr_static(owner, attribute)):
                continue
            try:
                signature = inspect.signature(original)
            except (TypeError, ValueError):
                continue
            setattr(owner, attribute, self.wrap(name, original, signature))
            self.installed.append((owner, attribute, original))
            wrapped.append(name)
        return wrapped

    def uninstall(self) -> None:
        for owner, attribute, original in reversed(self.installed):
            setattr(owner, attribute, original)
        self.installed.clear()

    def wrap(self, name: str, original, signature: inspect.Signature):
        recorder = self

        @functools.wraps(original)
        def recording(*args, **kwargs):
            # (JAX's own modules call each other through jax._src, never through these public
            # names: what is counted is what the properties call, a function traced inside an
            # entry's call included)
            if recorder.active:
                recorder.active = False  # (reading the context may call a wrapped entry itself)
                try:
                    recorder.record(name, signature, args, kwargs)
                except Exception as e:  # noqa: BLE001 - recording never changes what the call does
                    recorder.calls[ApiCall(name, UNRECORDED, type(e).__name__, "-", "-")] += 1
                finally:
                    recorder.active = True
            return original(*args, **kwargs)

        recording.__conformance_recorded__ = original
        return recording

    def record(self, name: str, signature: inspect.Signature, args: tuple, kwargs: dict) -> None:
        context = context_of(args, kwargs)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            self.calls[ApiCall(name, UNBINDABLE, "-", "-", context)] += 1
            return
        positional = len(args)
        if not signature.parameters:
            self.calls[ApiCall(name, NO_PARAMETERS, "-", "-", context)] += 1
            return
        for index, (parameter, value) in enumerate(bound.arguments.items()):
            kind = signature.parameters[parameter].kind
            if kind is inspect.Parameter.VAR_KEYWORD:  # (**kwargs: each keyword passed through it, by its name)
                for key, item in value.items():
                    self.calls[ApiCall(name, parameter, f"{form_of(item)} as {key}=", "keyword", context)] += 1
                continue
            if kind is inspect.Parameter.VAR_POSITIONAL:
                forms = sorted({form_of(v) for v in value}) or ["none"]
                for form in forms:
                    self.calls[ApiCall(name, parameter, form, "positional", context)] += 1
                continue
            spelling = "keyword" if parameter in kwargs else "positional" if index < positional else "keyword"
            self.calls[ApiCall(name, parameter, form_of(value), spelling, context)] += 1

    def since(self, before: Counter) -> Dict[ApiCall, int]:
        return {call: n - before.get(call, 0) for call, n in self.calls.items() if n > before.get(call, 0)}


def resolve(name: str) -> Optional[Tuple[object, str, object]]:
    """(the object holding it, its attribute, the callable) of a dotted entry name, or None where
    this JAX lacks it."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:-1]:
            owner = getattr(owner, part, None)
            if owner is None:
                return None
        original = getattr(owner, parts[-1], None)
        return None if original is None else (owner, parts[-1], original)
    return None


def as_rows(calls: Dict[ApiCall, int]) -> List[list]:
    """Calls as the report keeps them: [entry, parameter, form, spelling, context, count]."""
    return [[c.entry, c.parameter, c.form, c.spelling, c.context, n]
            for c, n in sorted(calls.items(), key=lambda item: tuple(vars(item[0]).values()))]
