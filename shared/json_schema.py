"""Check tool arguments against a JSON Schema that arrived at run time.

Tools defined by another program describe their arguments with a JSON Schema
dict instead of a pydantic class. This module checks the part of JSON Schema
that tool definitions use in practice: `type`, `properties`, `required`,
`additionalProperties`, `enum`, `const`, `items`, the string, number and array
bounds, and `anyOf`/`oneOf`/`allOf`. A keyword it does not know is not checked
here; the tool that receives the arguments still validates them itself.

The result is a list of problems, one readable line each, in the same shape as
a pydantic validation error: `path.to.field: what is wrong`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_problems(schema: Mapping[str, Any], value: Any, where: str = "") -> list[str]:
    """Every problem of `value` against `schema`; an empty list means it is valid."""
    problems: list[str] = []
    name = where or "arguments"
    types = schema.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(value, kind) for kind in allowed):
            return [f"{name}: expected {' or '.join(allowed)}, got {_json_type(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{name}: must be one of {schema['enum']!r}")
    if "const" in schema and value != schema["const"]:
        problems.append(f"{name}: must be {schema['const']!r}")
    if isinstance(value, dict):
        problems += _object_problems(schema, value, where)
    elif isinstance(value, list):
        problems += _array_problems(schema, value, where)
    elif isinstance(value, str):
        problems += _bounds(name, len(value), schema, "minLength", "maxLength", "characters")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{name}: must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{name}: must be at most {schema['maximum']}")
    problems += _combinations(schema, value, where)
    return problems


def _object_problems(schema: Mapping[str, Any], value: dict[str, Any], where: str) -> list[str]:
    problems = []
    properties: Mapping[str, Any] = schema.get("properties", {})
    for required in schema.get("required", []):
        if required not in value:
            problems.append(f"{_join(where, required)}: field required")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            problems += schema_problems(properties[key], item, _join(where, key))
        elif extra is False:
            problems.append(f"{_join(where, key)}: extra field not permitted")
        elif isinstance(extra, Mapping):
            problems += schema_problems(extra, item, _join(where, key))
    return problems


def _array_problems(schema: Mapping[str, Any], value: list[Any], where: str) -> list[str]:
    name = where or "arguments"
    problems = _bounds(name, len(value), schema, "minItems", "maxItems", "items")
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            problems += schema_problems(items, item, _join(where, str(index)))
    return problems


def _combinations(schema: Mapping[str, Any], value: Any, where: str) -> list[str]:
    name = where or "arguments"
    problems = []
    for part in schema.get("allOf", []):
        problems += schema_problems(part, value, where)
    any_of = schema.get("anyOf")
    if any_of and all(schema_problems(part, value, where) for part in any_of):
        problems.append(f"{name}: matches none of the allowed shapes (anyOf)")
    if "oneOf" in schema:
        matching = sum(not schema_problems(part, value, where) for part in schema["oneOf"])
        if matching != 1:
            problems.append(
                f"{name}: must match exactly one allowed shape (oneOf), matches {matching}"
            )
    return problems


def _bounds(
    name: str, size: int, schema: Mapping[str, Any], low: str, high: str, unit: str
) -> list[str]:
    problems = []
    if low in schema and size < schema[low]:
        problems.append(f"{name}: at least {schema[low]} {unit} required")
    if high in schema and size > schema[high]:
        problems.append(f"{name}: at most {schema[high]} {unit} allowed")
    return problems


def _is_type(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False  # JSON has no booleans that are numbers
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(kind, object))


def _json_type(value: Any) -> str:
    for kind in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is_type(value, kind):
            return kind
    return type(value).__name__


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
