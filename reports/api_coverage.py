"""The run's API coverage: every (entry, parameter) of the installed JAX's inventory
(``conformance/jaxside/inventories/``) against what the run's properties called
(``report.json``'s ``api_calls``, recorded by ``conformance/runner/api_calls.py``) and what people
wrote of the rest (``conformance/jaxside/api_coverage.toml``).

Vocabulary:

- a **pair** is (entry, parameter) of the inventory;
- its **status**: ``checked`` (a property passed it in this run: the forms and contexts seen are
  listed), else the status of the file's row for it: ``checked by`` (a class the recorder cannot
  wrap, constructed by the suites the row names; ``not run`` when none of them ran here),
  ``refused as documented``, ``not applicable`` or ``not yet``, each with the row's reason; else
  ``no row``, which ``--check`` refuses;
- a **row** of the file names an entry, the parameters it speaks for (``["*"]``: all of the
  entry's parameters that the run did not check), a status, a reason and, for ``checked by``, the
  suites (``by``).

    python -m reports api-coverage [RUN] [--check] [--markdown FILE]

RUN defaults to the newest run folder of the installed JAX under reports/runs/.

The **contexts** of a computing entry (one of the inventory's namespaces that compute: jax.numpy,
jax.lax, jax.random): each calling context the recorder tells apart (``eager``, ``jit``,
``shard_map body``, ``vmap``, ``grad``) is ``checked`` where a property called the entry there in
this run, else the status and reason of a row of ``api_contexts.toml`` for it (``not applicable``,
``refused as documented``, ``not yet``), else ``no row``, which ``--check`` refuses too.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from conformance import toml_schema
from conformance.jaxside import inventory

from .record import ReportError

ROWS_FILE = Path(inventory.__file__).with_name("api_coverage.toml")
CONTEXT_ROWS_FILE = Path(inventory.__file__).with_name("api_contexts.toml")
COMPUTING_NAMESPACES = ("jax.numpy", "jax.lax", "jax.random")  # the inventory's namespaces whose entries compute
CONTEXTS = ("eager", "jit", "shard_map body", "vmap", "grad")  # as conformance/runner/api_calls.py tells them apart
CONTEXT_STATUSES = ("refused as documented", "not applicable", "not yet")
STATUSES = ("checked by", "refused as documented", "not applicable", "not yet")
ROW_SCHEMA = toml_schema.Schema(
    table="entry", holds="[[entry]] tables", named_by="name", top=("format",),
    keys=(toml_schema.Key("name", str, required=True), toml_schema.Key("parameters", list, required=True),
          toml_schema.Key("status", str, required=True), toml_schema.Key("reason", str, required=True),
          toml_schema.Key("by", list)))


@dataclass(frozen=True)
class Row:
    """What people wrote of an entry's parameters that a run's calls do not show."""

    name: str
    parameters: Tuple[str, ...]
    status: str
    reason: str
    by: Tuple[str, ...] = ()
    where: str = ""

    def speaks_for(self, parameter: str) -> bool:
        return "*" in self.parameters or parameter in self.parameters


CONTEXT_ROW_SCHEMA = toml_schema.Schema(
    table="entry", holds="[[entry]] tables", named_by="name", top=("format",),
    keys=(toml_schema.Key("name", str, required=True), toml_schema.Key("contexts", list, required=True),
          toml_schema.Key("status", str, required=True), toml_schema.Key("reason", str, required=True)))


@dataclass(frozen=True)
class ContextRow:
    """What people wrote of an entry's calling contexts that a run's calls do not show (``name``:
    an entry, or a namespace's entries as ``jax.lax.*``; ``contexts``: those it speaks for, ``["*"]``
    every one the run did not check)."""

    name: str
    contexts: Tuple[str, ...]
    status: str
    reason: str
    where: str = ""

    def speaks_for(self, entry: str, context: str) -> bool:
        names = self.name == entry or self.name.endswith(".*") and entry.rsplit(".", 1)[0] == self.name[:-2]
        return names and ("*" in self.contexts or context in self.contexts)


def load_context_rows(path: Path = CONTEXT_ROWS_FILE) -> List[ContextRow]:
    rows = []
    for entry in toml_schema.read(path, CONTEXT_ROW_SCHEMA, error=ReportError)[1]:
        if entry["status"] not in CONTEXT_STATUSES:
            entry.refuse(f"has status {entry['status']!r}, not one of {', '.join(CONTEXT_STATUSES)}", "status")
        unknown = [c for c in entry["contexts"] if c not in CONTEXTS + ("*",)]
        if unknown:
            entry.refuse(f"names contexts {unknown}, not among {', '.join(CONTEXTS)} or '*'", "contexts")
        rows.append(ContextRow(entry["name"], tuple(entry["contexts"]), entry["status"], entry["reason"],
                               entry.where()))
    return rows


@dataclass(frozen=True)
class ContextCell:
    """One (computing entry, context) and its status in a run."""

    entry: str
    context: str
    status: str
    detail: str = ""


def computing(entries: Dict[str, dict]) -> List[str]:
    """The inventory's entries that compute (those of ``COMPUTING_NAMESPACES``)."""
    return [e for e in entries if e.rsplit(".", 1)[0] in COMPUTING_NAMESPACES]


def context_table(entries: Dict[str, dict], api_calls: Sequence[list], rows: Sequence[ContextRow]) -> List[ContextCell]:
    """Every (computing entry, context) of ``entries`` with its status (see the module's vocabulary);
    a specific row wins over a namespace's."""
    seen = {(entry, context) for entry, _parameter, _form, _spelling, context, *_ in api_calls}
    ordered = sorted(rows, key=lambda r: r.name.endswith(".*"))
    cells = []
    for entry in computing(entries):
        for context in CONTEXTS:
            if (entry, context) in seen:
                cells.append(ContextCell(entry, context, "checked"))
                continue
            row = next((r for r in ordered if r.speaks_for(entry, context)), None)
            cells.append(ContextCell(entry, context, "no row", f"not called there and no row of "
                                     f"{CONTEXT_ROWS_FILE.name} says why") if row is None else
                         ContextCell(entry, context, row.status, row.reason))
    return cells


def context_summary(cells: Sequence[ContextCell]) -> Dict[str, int]:
    counts: Dict[str, int] = defaultdict(int)
    for c in cells:
        counts[c.status] += 1
    return {"cells": len(cells), "entries": len({c.entry for c in cells}), **dict(sorted(counts.items()))}


def context_markdown(cells: Sequence[ContextCell]) -> str:
    """The contexts' part of the table: a summary line, then per entry its contexts' statuses, and
    each reason once."""
    counted = context_summary(cells)
    lines = [f"## Calling contexts of the {counted['entries']} computing entries", "",
             f"{counted['cells']} (entry, context) cells: "
             + ", ".join(f"{n} {k}" for k, n in counted.items() if k not in ("cells", "entries")), "",
             "| entry | " + " | ".join(CONTEXTS) + " |", "|---|" + "---|" * len(CONTEXTS)]
    reasons: Dict[str, int] = {}
    by_entry: Dict[str, Dict[str, ContextCell]] = defaultdict(dict)
    for c in cells:
        by_entry[c.entry][c.context] = c
        if c.status != "checked":
            reasons.setdefault(f"{c.status}: {c.detail}", len(reasons) + 1)
    for entry, row in by_entry.items():
        marks = [("checked" if c.status == "checked" else f"{c.status} [{reasons[f'{c.status}: {c.detail}']}]")
                 for c in (row[k] for k in CONTEXTS)]
        lines.append(f"| `{entry}` | " + " | ".join(marks) + " |")
    lines += [""] + [f"[{n}] {why}" for why, n in reasons.items()]
    return "\n".join(lines) + "\n"


def load_rows(path: Path = ROWS_FILE) -> List[Row]:
    rows = []
    for entry in toml_schema.read(path, ROW_SCHEMA, error=ReportError)[1]:
        if entry["status"] not in STATUSES:
            entry.refuse(f"has status {entry['status']!r}, not one of {', '.join(STATUSES)}", "status")
        if (entry["status"] == "checked by") != bool(entry.get("by")):
            entry.refuse("gives `by` (the suites that construct it) exactly when its status is 'checked by'", "by")
        rows.append(Row(name=entry["name"], parameters=tuple(entry["parameters"]), status=entry["status"],
                        reason=entry["reason"], by=tuple(entry.get("by") or ()), where=entry.where()))
    return rows


@dataclass(frozen=True)
class Pair:
    """One (entry, parameter) of the inventory and its status in a run."""

    entry: str
    parameter: str
    status: str
    detail: str  # the forms and contexts seen, or the row's reason
    forms: Tuple[str, ...] = ()
    contexts: Tuple[str, ...] = ()


def table(entries: Dict[str, dict], api_calls: Sequence[list], rows: Sequence[Row],
          suites_run: Sequence[str]) -> List[Pair]:
    """Every pair of ``entries`` (an inventory's) with its status (see the module's vocabulary)."""
    seen: Dict[Tuple[str, str], Dict[str, set]] = defaultdict(lambda: {"forms": set(), "contexts": set()})
    for entry, parameter, form, spelling, context, *_ in api_calls:
        seen[entry, parameter]["forms"].add(f"{form} ({spelling})")
        seen[entry, parameter]["contexts"].add(context)
    by_entry = defaultdict(list)
    for row in rows:
        by_entry[row.name].append(row)
    pairs = []
    for entry, described in entries.items():
        for parameter in [p[0] for p in described["params"]] or ["(no parameters)"]:
            if (entry, parameter) in seen or parameter == "(no parameters)" and \
                    any(e == entry for e, _ in seen):
                found = seen.get((entry, parameter), {"forms": set(), "contexts": set()})
                pairs.append(Pair(entry, parameter, "checked", "", tuple(sorted(found["forms"])),
                                  tuple(sorted(found["contexts"]))))
                continue
            row = next((r for r in by_entry.get(entry, ()) if r.speaks_for(parameter)), None)
            if row is None:
                pairs.append(Pair(entry, parameter, "no row", "no property passed it and no row of "
                                  f"{ROWS_FILE.name} says why"))
            elif row.status == "checked by":
                ran = [s for s in row.by if any(r == s or r.startswith(s + "::") for r in suites_run)]
                pairs.append(Pair(entry, parameter, "checked by" if ran else "not run",
                                  f"{row.reason} ({', '.join(ran or row.by)})"))
            else:
                pairs.append(Pair(entry, parameter, row.status, row.reason))
    return pairs


def summary(pairs: Sequence[Pair]) -> Dict[str, int]:
    counts: Dict[str, int] = defaultdict(int)
    for p in pairs:
        counts[p.status] += 1
    return {"pairs": len(pairs), "entries": len({p.entry for p in pairs}), **dict(sorted(counts.items()))}


def markdown(pairs: Sequence[Pair], jax_version: str) -> str:
    counted = summary(pairs)
    done = counted.get("checked", 0) + counted.get("checked by", 0) + counted.get("refused as documented", 0)
    lines = [f"# API coverage, JAX {jax_version}", "",
             f"{counted['entries']} entries, {counted['pairs']} (entry, parameter) pairs: "
             + ", ".join(f"{n} {k}" for k, n in counted.items() if k not in ("pairs", "entries"))
             + f"; checked or refused as documented: {100 * done / max(1, counted['pairs']):.1f}%", "",
             "| entry | parameter | status | forms (spelling) | contexts | why |", "|---|---|---|---|---|---|"]
    for p in pairs:
        lines.append(f"| `{p.entry}` | `{p.parameter}` | {p.status} | {', '.join(p.forms)} | "
                     f"{', '.join(p.contexts)} | {p.detail} |")
    return "\n".join(lines) + "\n"


def of_run(record: dict, rows: Optional[Sequence[Row]] = None) -> Tuple[str, List[Pair]]:
    """(the run's JAX version, its table) of a run record."""
    version = record["environment"]["jax"]
    stored = inventory.path_for(version)
    if not stored.exists():
        raise ReportError(f"no stored inventory for JAX {version} ({stored}): take it with "
                          f"python -m conformance.jaxside.inventory write")
    entries = json.loads(stored.read_text(encoding="utf-8"))["entries"]
    if "api_calls" not in record:
        raise ReportError("the run recorded no API calls (a report written before the recorder)")
    ran = [t["id"] for t in record["tests"] if t["outcome"] not in ("skipped",)]
    return version, table(entries, record["api_calls"], load_rows() if rows is None else rows, ran)


def contexts_of_run(record: dict, rows: Optional[Sequence[ContextRow]] = None) -> List[ContextCell]:
    """The contexts' table of a run record (its JAX's stored inventory, as ``of_run``)."""
    entries = json.loads(inventory.path_for(record["environment"]["jax"]).read_text(encoding="utf-8"))["entries"]
    return context_table(entries, record.get("api_calls", ()), load_context_rows() if rows is None else rows)


def api_changes(base_version: str, new_version: str) -> List[str]:
    """What NEW's stored inventory adds, removes, renames or changes against BASE's (one line each;
    an entry or parameter NEW adds is not covered until a property passes it), or a line saying an
    inventory is missing."""
    paths = [inventory.path_for(v) for v in (base_version, new_version)]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        return [f"no stored inventory {', '.join(missing)}: the API's changes are not listed"]
    old, new = (json.loads(p.read_text(encoding="utf-8"))["entries"] for p in paths)
    return inventory.differences(old, new)


def api_changes_text(base_version: str, new_version: str) -> str:
    changes = api_changes(base_version, new_version)
    if not changes:
        return f"The sharding API's inventory: no change from JAX {base_version} to {new_version}."
    return (f"The sharding API's inventory, JAX {base_version} -> {new_version} ({len(changes)} changes; what "
            "is added is not covered until a property passes it):\n" + "\n".join(f"  {c}" for c in changes))
