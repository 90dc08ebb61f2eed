"""The one TOML reader (conformance/toml_schema.py) against hand-written files: every
refusal is one line naming ``file:line``, the entry and what is wrong; entries read as their keys
say, a key left out as its type's empty value."""

from __future__ import annotations

import pytest

from conformance import toml_schema as ts

class UsageError(Exception):
    """What the tests ask the reader to raise."""


SCHEMA = ts.Schema(table="thing", holds="[[thing]] tables", top=("format",), named_by="id",
                   keys=(ts.Key("id", str, required=True), ts.Key("tags", list), ts.Key("on", bool),
                         ts.Key("count", int)))


def read(tmp_path, text):
    path = tmp_path / "things.toml"
    path.write_text(text)
    return path, ts.read(path, SCHEMA, UsageError)


def test_entries_read_with_their_lines_and_empty_defaults(tmp_path):
    path, (top, (a, b)) = read(tmp_path, 'format = 1\n\n[[thing]]\nid = "a"\ntags = ["x"]\n\n[[thing]]\nid = "b"\n')
    assert top == {"format": 1}
    assert (a.line, b.line, a.where("tags"), b.where("tags")) == (3, 7, f"{path}:5", f"{path}:7")
    assert (a.get("tags"), b.get("tags"), b.get("on"), b.get("count"), b.get("on", True)) == (["x"], (), False, 0, True)
    assert b.noun == "thing 'b'" and dict(b) == {"id": "b"}


def test_inline_tables_are_found_one_a_line(tmp_path):
    with pytest.raises(UsageError) as refused:
        read(tmp_path, 'thing = [\n    { id = "a" },\n    { id = "b", count = "2" },\n]\n')
    assert str(refused.value).endswith("things.toml:3: thing 'b' has count = '2', a string, but count must be a number")


@pytest.mark.parametrize("text, message", [
    ('[[thing]]\nid = "a"\ncont = 2\n', ":3: thing 'a' has unknown key(s) cont (did you mean count?)"),
    ('[[thing]]\nid = "a"\nzzz = 2\n', ":3: thing 'a' has unknown key(s) zzz (known: id, tags, on, count)"),
    ('[[thing]]\nid = "a"\non = 1\n', ":3: thing 'a' has on = 1, a number, but on must be true or false"),
    ('[[thing]]\nid = "a"\ncount = true\n',
     ":3: thing 'a' has count = True, true or false, but count must be a number"),
    ('[[thing]]\nid = 3\n', ':2: thing has id = 3, a number, but id must be a string: quote it, id = "3"'),
    ('[[thing]]\nid = " "\n', ":1: thing ' ' lacks id"),
    ('[[thing]]\ntags = []\n', ":1: thing lacks id"),
    ('[thing]\nid = "a"\n', ":1: [thing] is one table: write each entry as a [[thing]] table (two brackets)"),
    ('[[things]]\nid = "a"\n',
     ":1: unknown table or key 'things': the file holds [[thing]] tables (did you mean 'thing'?)"),
    ('[[thing]\n', ":1: not TOML: "),
])
def test_a_malformed_file_is_refused_in_one_line_naming_file_and_line(tmp_path, text, message):
    with pytest.raises(UsageError) as refused:
        read(tmp_path, text)
    got = str(refused.value)
    assert got.startswith(str(tmp_path / "things.toml") + message) and "\n" not in got, \
        f"got {got!r}, but should start with {str(tmp_path / 'things.toml') + message!r}"


def test_a_loader_refuses_through_the_entry_in_the_same_form(tmp_path):
    path, (_, (entry,)) = read(tmp_path, '[[thing]]\nid = "a"\ntags = ["x"]\n')
    with pytest.raises(ValueError, match=r"things.toml:3: thing 'a' has tags that are wrong$"):
        ts.Entry(entry.given, SCHEMA, entry.path, entry.line, entry.key_lines, ValueError).refuse(
            "has tags that are wrong", "tags")
