"""The one reader of the TOML data files people edit: the known deviations
(``suites/known_deviations.toml`` and ``--deviations`` files), the root causes
(``suites/bugs/causes.toml``), a gate's acceptances (``reports compare --accept``) and the
supported releases (``conformance/runner/releases.toml``). Each file is refused the same way.

Vocabulary:

- A **file** holds a few top-level keys (``format = 2``) and one array of tables
  (``[[deviation]]``); each table is an **entry**.
- A **schema** names the entry's table and its keys; a **key** has the TOML type its value must
  have and whether every entry must give it (given empty, ``""``, ``" "`` or ``[]``, it counts as missing).
- An **error** is one line: ``file:line: `` (the line of the key at fault in its entry, else of
  the entry's header, else of the file's top-level key), how the entry is named ("deviation",
  "cause 'some_bug'"), then what is wrong; an unknown key names the closest known one.

What a loader checks beyond the schema (a range that packaging cannot read, a trigger that does
not exist) it refuses through the entry (``entry.refuse(message, key)``), so every message has
the same form; it then builds its own frozen dataclass by keyword. The error's class is the
caller's (the runner's UsageError, the reports' ReportError); it stands below every layer, so
compat reads its own table with it too.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, NoReturn, Optional, Sequence, Tuple, Type


# How an error names a TOML type (a range is a quoted string: ``jax = ">=0.4.30"``).
TOML_TYPES = {str: "a string", list: "a list", bool: "true or false", dict: "a table ({ ... })",
              int: "a number", float: "a number"}
EMPTY = {str: "", list: (), bool: False, dict: {}, int: 0}  # a key's value when an entry leaves it out


@dataclass(frozen=True)
class Key:
    """One key of an entry: its name, the TOML type of its value, and whether it is required."""

    name: str
    type: type
    required: bool = False


@dataclass(frozen=True)
class Schema:
    """The entries of one kind of file: the ``table`` each is written as (``[[table]]``), its
    ``keys``, the other top-level keys the file may hold (``top``), what the file holds (for the
    message that refuses anything else), the key whose value names an entry in messages, and the
    noun messages call an entry by (its table's name unless given)."""

    table: str
    keys: Tuple[Key, ...]
    holds: str
    top: Tuple[str, ...] = ()
    named_by: str = ""
    noun: str = ""  # how messages call an entry, where not by its table's name

    @property
    def names(self) -> Tuple[str, ...]:
        return tuple(k.name for k in self.keys)


@dataclass(frozen=True)
class Entry(Mapping):
    """One entry of a file, read against its schema: the values ``given`` (a key left out reads as
    its type's empty value through ``get``), where it is (``path``, header ``line``) and how it refuses."""

    given: Mapping[str, Any]
    schema: Schema
    path: str
    line: int
    key_lines: Mapping[str, int] = field(default_factory=dict)
    error: Type[Exception] = ValueError

    def __getitem__(self, key: str) -> Any:
        return self.given[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.given)

    def __len__(self) -> int:
        return len(self.given)

    def get(self, key: str, default: Any = None) -> Any:
        if key in self.given:
            return self.given[key]
        if default is not None:
            return default
        wanted = next((k.type for k in self.schema.keys if k.name == key), None)
        return EMPTY.get(wanted)

    @property
    def noun(self) -> str:
        """How messages name the entry: its table, and its name where it has one."""
        name = self.given.get(self.schema.named_by) if self.schema.named_by else None
        noun = self.schema.noun or self.schema.table
        return f"{noun} {name!r}" if isinstance(name, str) else noun

    def where(self, key: str = "") -> str:
        """``file:line`` of ``key`` in this entry (of the entry's header when it is not there)."""
        return f"{self.path}:{self.key_lines.get(key, self.line)}"

    def refuse(self, message: str, key: str = "") -> NoReturn:
        """Stop: ``file:line: <entry> <message>``."""
        raise self.error(f"{self.where(key)}: {self.noun} {message}")


def type_name(value: Any) -> str:
    return TOML_TYPES.get(type(value), type(value).__name__)


def checked(values: Mapping[str, Any], schema: Schema, path: str, line: int = 0,
            key_lines: Optional[Mapping[str, int]] = None, error: Type[Exception] = ValueError) -> Entry:
    """``values`` as an Entry of ``schema``, once its keys are known, typed as the schema says and
    the required ones given; else the entry refuses (unknown key, wrong type, missing key)."""
    entry = Entry(dict(values), schema, path, line, dict(key_lines or {}), error)
    unknown = sorted(set(values) - set(schema.names))
    if unknown:
        close = [c for k in unknown for c in difflib.get_close_matches(k, schema.names, n=1)]
        entry.refuse(f"has unknown key(s) {', '.join(unknown)}" + (f" (did you mean {', '.join(close)}?)" if close
                                                                   else f" (known: {', '.join(schema.names)})"),
                     unknown[0])
    for key in schema.keys:
        value = values.get(key.name)
        if key.name in values and \
                not (isinstance(value, key.type) and not (key.type is int and isinstance(value, bool))):
            hint = f': quote it, {key.name} = "{value}"' if key.type is str and isinstance(value, (int, float)) else ""
            entry.refuse(f"has {key.name} = {value!r}, {type_name(value)}, but {key.name} must be "
                         f"{TOML_TYPES[key.type]}{hint}", key.name)
    missing = [k.name for k in schema.keys if k.required and (values.get(k.name) in (None, [], {})
                                                             or str(values[k.name]).strip() == "")]
    if missing:
        entry.refuse(f"lacks {', '.join(missing)}")
    return entry


def key_line(lines: Sequence[str], first: int, last: int, key: str, inline: bool = False) -> int:
    """The line (1-based) of ``key = ...`` between lines ``first`` and ``last`` (0 when none is;
    ``inline``: of ``{ ..., key = ... }``)."""
    for n in range(max(first, 1), min(last, len(lines)) + 1):
        if (re.search(rf"[{{,]\s*{re.escape(key)}\s*=", lines[n - 1]) if inline
                else lines[n - 1].split("=", 1)[0].strip() == key):
            return n
    return 0


def header_line(lines: Sequence[str], name: str) -> int:
    """The first line naming top-level table or key ``name`` (0 when none does)."""
    for n, line in enumerate(lines, 1):
        bare = line.strip().strip("[]").strip()
        if bare == name or line.split("=", 1)[0].strip() == name:
            return n
    return 0


def read(path: Path, schema: Schema, error: Type[Exception] = ValueError) -> Tuple[Dict[str, Any], List[Entry]]:
    """The top-level keys of the file at ``path`` and its entries, each checked against ``schema``;
    the first thing wrong is an ``error`` naming ``file:line``."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        found = re.search(r"line (\d+)", str(e))
        raise error(f"{path}:{found[1] if found else '?'}: not TOML: {e}") from None
    known = (schema.table,) + schema.top
    for name in sorted(set(data) - set(known)):
        close = difflib.get_close_matches(name, known, n=1)
        raise error(f"{path}:{header_line(lines, name) or '?'}: unknown table or key {name!r}: the file holds "
                    f"{schema.holds}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    tables = data.get(schema.table, [])
    if not isinstance(tables, list):
        raise error(f"{path}:{header_line(lines, schema.table)}: [{schema.table}] is one table: write each entry "
                    f"as a [[{schema.table}]] table (two brackets)")
    starts = [n for n, line in enumerate(lines, 1) if line.strip() == f"[[{schema.table}]]"]
    inline = not starts and tables  # ``table = [ { ... }, ... ]``: an entry a line
    if inline:
        starts = [n for n, line in enumerate(lines, 1)
                  if n > header_line(lines, schema.table) and line.strip().startswith("{")]
    entries = []
    for i, values in enumerate(tables):
        first = starts[i] if i < len(starts) else 0
        last = first if inline else starts[i + 1] - 1 if i + 1 < len(starts) else len(lines)
        at = {key: key_line(lines, first, last, key, bool(inline)) for key in values}
        entries.append(checked(values, schema, str(path), first, {k: n for k, n in at.items() if n}, error))
    return {k: v for k, v in data.items() if k != schema.table}, entries
