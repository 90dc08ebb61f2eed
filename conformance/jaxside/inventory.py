"""The sharding API as the installed JAX declares it: every public callable of the namespaces below
that takes or returns arrays, shardings, meshes, specs or devices, with its parameters (name, kind,
annotation, default) and return annotation, read with ``inspect``. One inventory is kept per
supported release (``inventories/jax-<version>.json`` beside this module), so that a release that
adds, removes or renames a parameter shows it (``diff``).

Vocabulary:

- an **entry** is a callable by its dotted public name (``jax.device_put``,
  ``jax.sharding.NamedSharding``, ``jax.stages.Lowered.compile``);
- a **parameter** is ``[name, kind, annotation, default]``: kind as ``inspect`` names it
  (``POSITIONAL_ONLY``, ``POSITIONAL_OR_KEYWORD``, ``VAR_POSITIONAL``, ``KEYWORD_ONLY``,
  ``VAR_KEYWORD``), the annotation as JAX's source writes it ("" for none), the default's repr
  without memory addresses ("" for none);
- a **namespace rule** says which callables of a module are entries: all public ones, a named
  list, or those with a parameter named so (``device`` or ``out_sharding`` in ``jax.numpy``).

    python -m conformance.jaxside.inventory write   the installed JAX's inventory, into inventories/
    python -m conformance.jaxside.inventory check   exit 1, naming the differences, when the stored one differs
    python -m conformance.jaxside.inventory diff OLD NEW   what NEW adds, removes and changes against OLD
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

FOLDER = Path(__file__).with_name("inventories")
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")

# The public entry points of ``jax`` itself that take or return arrays, shardings, meshes or devices
# (those a release lacks are left out of its inventory: the inventory says what it has).
JAX_TOP_LEVEL = ("device_put", "device_get", "device_put_replicated", "device_put_sharded", "jit", "pmap", "vmap",
                 "grad", "value_and_grad", "jvp", "vjp", "linearize", "checkpoint", "remat", "eval_shape",
                 "make_array_from_callback", "make_array_from_single_device_arrays",
                 "make_array_from_process_local_data", "make_mesh", "set_mesh", "shard_map", "typeof", "reshard",
                 "block_until_ready", "devices", "local_devices", "device_count", "local_device_count",
                 "process_index", "process_count", "named_call", "named_scope", "ShapeDtypeStruct")
LAX_COLLECTIVES = ("psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute", "pshuffle",
                   "all_to_all", "axis_index", "axis_size", "pbroadcast", "with_sharding_constraint")
SHARDING_WORDS = ("sharding", "axis_name", "axis_index_groups", "out_sharding")
STAGES_CLASSES = ("Wrapped", "Traced", "Lowered", "Compiled")


@dataclass(frozen=True)
class Namespace:
    """Which callables of ``module`` are entries (``select(name, parameter names)``), and why."""

    module: str
    why: str
    select: Callable[[str, Sequence[str]], bool]


NAMESPACES: Tuple[Namespace, ...] = (
    Namespace("jax", "the entry points that place, compute on or inspect sharded arrays",
              lambda name, params: name in JAX_TOP_LEVEL),
    Namespace("jax.sharding", "every public sharding, mesh and spec type", lambda name, params: True),
    Namespace("jax.lax", "the collectives, and every operation with a sharding or axis-name argument",
              lambda name, params: name in LAX_COLLECTIVES or any(p in SHARDING_WORDS for p in params)),
    Namespace("jax.numpy", "every function with a device= or out_sharding= argument",
              lambda name, params: "device" in params or "out_sharding" in params),
    Namespace("jax.random", "every public function (draws into sharded outputs, sharded keys)",
              lambda name, params: True),
    Namespace("jax.experimental.multihost_utils", "every public function", lambda name, params: True),
)


def _text(value) -> str:
    """An annotation or default as text, without memory addresses ("" for none)."""
    if value is inspect.Parameter.empty:
        return ""
    text = value if isinstance(value, str) else inspect.formatannotation(value)
    return unions_as_bars(ADDRESS.sub("", str(text)))


def _split_top_level(text: str) -> List[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "[" or -(ch == "]")
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return parts + [text[start:].strip()]


def unions_as_bars(text: str) -> str:
    """An annotation written as Python 3.13 prints it whatever Python reads it: ``Union[a, b]`` and
    ``Optional[a]`` as ``a | b`` and ``a | None``, ``NoneType`` as ``None``, no ``typing.`` prefix
    (the 3.11 and 3.13 environments print one annotation two ways)."""
    text = text.replace("typing.", "").replace("NoneType", "None")
    for word, extra in (("Union[", ""), ("Optional[", " | None")):
        while word in text:
            start = text.index(word)
            depth, end = 0, start + len(word) - 1
            for end in range(start + len(word) - 1, len(text)):
                depth += text[end] == "[" or -(text[end] == "]")
                if depth == 0:
                    break
            inner = " | ".join(_split_top_level(text[start + len(word):end]))
            text = text[:start] + inner + extra + text[end + 1:]
    return text


def _default(value) -> str:
    return "" if value is inspect.Parameter.empty else ADDRESS.sub("", repr(value))


def describe(entry) -> Optional[dict]:
    """``{"params": [[name, kind, annotation, default], ...], "returns": annotation}`` of a
    callable, or None where ``inspect`` cannot read its signature."""
    try:
        signature = inspect.signature(entry)
    except (TypeError, ValueError):
        return None
    return {"params": [[p.name, p.kind.name, _text(p.annotation), _default(p.default)]
                       for p in signature.parameters.values()],
            "returns": _text(signature.return_annotation)}


def public_callables(module) -> List[Tuple[str, object]]:
    """The public callables of ``module`` that JAX defines (not a ``functools.partial`` it imported)."""
    return [(name, getattr(module, name)) for name in sorted(dir(module))
            if not name.startswith("_") and callable(getattr(module, name, None))
            and str(getattr(getattr(module, name), "__module__", "") or "").startswith(("jax", "jaxlib"))]


def take() -> Dict[str, dict]:
    """The installed JAX's entries by dotted name (see the module's vocabulary)."""
    import warnings
    entries: Dict[str, dict] = {}
    with warnings.catch_warnings():  # (looking an API up is not using it: deprecated names warn on access)
        warnings.simplefilter("ignore")
        for namespace in NAMESPACES:
            try:
                module = importlib.import_module(namespace.module)
            except ImportError:
                continue
            for name, obj in public_callables(module):
                described = describe(obj)
                if described is not None and namespace.select(name, [p[0] for p in described["params"]]):
                    entries[f"{namespace.module}.{name}"] = described
        stages = importlib.import_module("jax.stages")
        for cls in (c for c in STAGES_CLASSES if hasattr(stages, c)):
            for name, obj in public_callables(getattr(stages, cls)):
                described = describe(obj)
                if described is not None:
                    entries[f"jax.stages.{cls}.{name}"] = described
    return dict(sorted(entries.items()))


def inventory(jax_version: str, entries: Dict[str, dict]) -> dict:
    return {"jax": jax_version, "namespaces": {n.module: n.why for n in NAMESPACES}, "entries": entries}


def dump(taken: dict) -> str:
    """The inventory as JSON, an entry a line (so a release's diff reads by entry)."""
    entries = ",\n".join(f"  {json.dumps(name)}: {json.dumps(e, separators=(',', ':'))}"
                          for name, e in taken["entries"].items())
    return (f'{{"jax": {json.dumps(taken["jax"])},\n "namespaces": {json.dumps(taken["namespaces"])},\n'
            f' "entries": {{\n{entries}\n }}}}\n')


def path_for(jax_version: str) -> Path:
    return FOLDER / f"jax-{jax_version}.json"


def differences(old: Dict[str, dict], new: Dict[str, dict]) -> List[str]:
    """One line per entry NEW adds or removes, and per parameter it adds, removes or changes (kind,
    annotation, default) against OLD; a parameter removed and one added in its place read as a
    rename candidate."""
    lines = [f"added: {name}" for name in new if name not in old]
    lines += [f"removed: {name}" for name in old if name not in new]
    for name in (n for n in new if n in old):
        before = {p[0]: p for p in old[name]["params"]}
        after = {p[0]: p for p in new[name]["params"]}
        gone, came = [p for p in before if p not in after], [p for p in after if p not in before]
        for p in gone:
            lines.append(f"{name}: parameter {p} removed" + (f" (renamed to {came[0]}?)" if len(gone) == len(came) == 1
                                                             else ""))
        lines += [f"{name}: parameter {p} added" for p in came]
        for p in (p for p in after if p in before and after[p] != before[p]):
            what = [f"{label} {b!r} -> {a!r}" for label, b, a in zip(("kind", "annotation", "default"),
                                                                      before[p][1:], after[p][1:]) if a != b]
            lines.append(f"{name}: parameter {p}: {'; '.join(what)}")
        if old[name]["returns"] != new[name]["returns"]:
            lines.append(f"{name}: returns {old[name]['returns']!r} -> {new[name]['returns']!r}")
    return lines


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.jaxside.inventory",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("write", help="write the installed JAX's inventory into inventories/")
    sub.add_parser("check", help="exit 1 when the stored inventory of the installed JAX differs from it")
    diff = sub.add_parser("diff", help="what NEW adds, removes and changes against OLD (releases or files)")
    diff.add_argument("old")
    diff.add_argument("new")
    args = parser.parse_args(argv)
    if args.command == "diff":
        read = lambda r: json.loads((Path(r) if r.endswith(".json") else path_for(r)).read_text())["entries"]
        print("\n".join(differences(read(args.old), read(args.new))) or "no difference")
        return 0
    from importlib.metadata import version
    jax_version = version("jax")
    taken = inventory(jax_version, take())
    if args.command == "write":
        FOLDER.mkdir(exist_ok=True)
        path_for(jax_version).write_text(dump(taken))
        print(f"wrote {path_for(jax_version)}: {len(taken['entries'])} entries")
        return 0
    stored = path_for(jax_version)
    if not stored.exists():
        print(f"no inventory stored for JAX {jax_version} ({stored}): python -m conformance.jaxside.inventory write")
        return 1
    found = differences(json.loads(stored.read_text())["entries"], taken["entries"])
    print("\n".join(found) or f"the stored inventory of JAX {jax_version} is current ({len(taken['entries'])} entries)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
