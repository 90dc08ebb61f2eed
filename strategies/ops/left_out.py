"""The public functions of ``jax.numpy`` and ``jax.lax`` no catalogue or vocabulary entry covers, each
with why, read from ``left_out.toml`` beside this module (through the one schema reader,
``conformance.toml_schema``). ``tests/test_vocabulary.py`` holds the catalogue, this list and the
stored vocabulary lists (``vocabularies/``) together.

Vocabulary: a function's **why** is one of ``REASONS``; those in ``NOT_ARRAY_TAKING`` say the
function takes or computes no array, so it is outside the share the vocabulary's coverage is
measured against (the array-taking functions); the others (a collective, control flow, randomness,
a gap not yet filled) count as not covered.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict

from conformance import toml_schema

LEFT_OUT_FILE = Path(__file__).with_name("left_out.toml")

REASONS: Dict[str, str] = {
    "no_array": "takes no array argument: builds one from shapes or scalars (its device= and out_sharding= are "
                "checked by suites/test_api_parameters.py)",
    "query": "answers about dtypes, shapes or Python objects; computes no array",
    "io": "reads or writes files, buffers or foreign arrays",
    "printing": "formats or configures printing",
    "shape_helper": "computes shapes, dimension numbers or paddings for another function; no array",
    "token": "an ordering token or host transfer, not an array computation",
    "collective": "needs a named mesh axis: checked in shard_map bodies by suites/test_collectives.py",
    "control_flow": "takes Python functions as its body: checked by suites/test_control_flow.py",
    "randomness": "draws random bits: checked by suites/test_random.py and suites/test_random_samplers.py",
    "internal": "an internal hook exported for other JAX libraries (staging, DCE, platform dispatch, composites)",
    "sharding": "a sharding annotation: the catalogue's way (c) and suites/test_out_sharding.py check it",
    "gap": "array-taking and not yet covered: a gap, its note says what covering it needs",
}
NOT_ARRAY_TAKING = ("no_array", "query", "io", "printing", "shape_helper", "token")

SCHEMA = toml_schema.Schema(
    table="function", holds="function = [ { name = ..., why = ... }, ... ]", named_by="name",
    keys=(toml_schema.Key("name", str, required=True), toml_schema.Key("why", str, required=True),
          toml_schema.Key("note", str)))


@dataclass(frozen=True)
class LeftOut:
    """A public function left out of the vocabulary: its dotted name ("jnp.save"), why (a key of
    ``REASONS``) and a note."""

    name: str
    why: str
    note: str = ""

    @property
    def array_taking(self) -> bool:
        return self.why not in NOT_ARRAY_TAKING


def read(path: Path = LEFT_OUT_FILE) -> Dict[str, LeftOut]:
    """The left-out functions by name; an unknown reason or a name given twice stops with its ``file:line``."""
    found: Dict[str, LeftOut] = {}
    for entry in toml_schema.read(path, SCHEMA)[1]:
        if entry["why"] not in REASONS:
            entry.refuse(f"has why = {entry['why']!r}; the reasons are {', '.join(REASONS)}", "why")
        if entry["name"] in found:
            entry.refuse("is listed twice", "name")
        if not entry["name"].startswith(("jnp.", "lax.")):
            entry.refuse("must be named 'jnp.<name>' or 'lax.<name>'", "name")
        found[entry["name"]] = LeftOut(entry["name"], entry["why"], entry.get("note"))
    return found
