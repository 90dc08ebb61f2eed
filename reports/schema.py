"""A small JSON Schema checker for the subset ``schema.json`` uses: ``type`` (one or a list),
``enum``, ``required``, ``properties``, ``additionalProperties`` (false or a schema), ``items`` and
``minimum``. (The suite's dependencies do not include a JSON Schema library.)"""

from __future__ import annotations

TYPES = {
    "object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
    "integer": int, "number": (int, float),
}


class SchemaError(ValueError):
    """The document breaks the schema; the message gives the JSON path and the rule."""


def _is(value, type_name: str) -> bool:
    if type_name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, TYPES[type_name])


def validate(value, schema: dict, path: str = "$", unknown=None) -> None:
    """Raise SchemaError where ``value`` breaks ``schema``. With ``unknown`` (a list), a key that
    ``additionalProperties: false`` forbids is appended there (its JSON path) instead: what a reader
    skips in a record written by a newer suite."""
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(_is(value, t) for t in names):
            raise SchemaError(f"{path}: expected {' or '.join(names)}, got {type(value).__name__} {value!r:.80}")
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaError(f"{path}: {value!r} is not one of {schema['enum']}")
    if "minimum" in schema and _is(value, "number") and value < schema["minimum"]:
        raise SchemaError(f"{path}: {value} is below the minimum {schema['minimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                raise SchemaError(f"{path}: missing required key {key!r}")
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                validate(item, properties[key], f"{path}.{key}", unknown)
            elif extra is False and unknown is not None:
                unknown.append(f"{path}.{key}")
            elif extra is False:
                raise SchemaError(f"{path}: unexpected key {key!r}")
            elif isinstance(extra, dict):
                validate(item, extra, f"{path}.{key}", unknown)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            validate(item, schema["items"], f"{path}[{i}]", unknown)
