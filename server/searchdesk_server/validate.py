"""Checking a tool call's arguments against the catalogue before anything reaches Google.

A small validator for the schema subset the catalogue uses (type, enum, bounds, items,
required), plus the leniencies models need: a list sent as a JSON string (Claude does this)
and an integer sent as a numeric string. Unknown arguments are refused so a typo never becomes
a silently ignored filter. Messages describe a rejected value, never echo a hostile one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .text.phrases import describe, too_long
from .tool_spec import MAX_ID, ToolSpec


class ArgumentError(ValueError):
    """The call's arguments are wrong; the message says which and how to fix it."""


def _type_ok(expected: str, value: object) -> bool:
    if expected == "string":
        return isinstance(value, str)
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "array":
        return isinstance(value, list)
    if expected == "object":
        return isinstance(value, dict)
    return True


MAX_INT32 = 2**31 - 1
_INTEGER = re.compile(r"-?[0-9]{1,19}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _coerce(schema: Mapping[str, Any], value: object) -> object:
    expected = schema.get("type")
    if expected == "array" and isinstance(value, str) and value.strip().startswith("["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
            return value
    if expected == "integer" and isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip())  # ASCII digits only: "²" and "--5" pass isdigit() but not int()
    if expected == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def check_value(path: str, schema: Mapping[str, Any], value: object) -> object:
    value = _coerce(schema, value)
    expected = schema.get("type")
    if "enum" in schema:
        if value not in schema["enum"]:
            options = ", ".join(str(o) for o in schema["enum"])
            raise ArgumentError(f"{path} is {describe(value)}; use one of: {options}.")
        return value
    if isinstance(expected, str) and not _type_ok(expected, value):
        raise ArgumentError(
            f"{path} must be {'an' if expected[0] in 'aeiou' else 'a'} {expected}, not {describe(value)}."
        )
    if isinstance(value, str):
        limit = int(schema.get("maxLength", MAX_ID))
        if len(value) > limit:
            raise ArgumentError(too_long(path, len(value), limit))
        low = int(schema.get("minLength", 0))
        if len(value) < low:
            raise ArgumentError(f"{path} is {describe(value)}; it needs at least {low} characters.")
        if "\x00" in value:
            raise ArgumentError(f"{path} contains a NUL character.")
        if _SURROGATE.search(value):
            raise ArgumentError(f"{path} contains an invalid character (half of a UTF-16 surrogate pair).")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ArgumentError(f"{path} is {describe(value)}; the minimum is {schema['minimum']:,}.")
        # Google's integer fields are int32: an unbounded one still stops there.
        top = schema.get("maximum", MAX_INT32 if expected == "integer" else None)
        if top is not None and value > top:
            raise ArgumentError(f"{path} is {describe(value)}; the maximum is {top:,}.")
    if isinstance(value, list):
        lo, hi = schema.get("minItems", 0), schema.get("maxItems", 1000)
        if not lo <= len(value) <= hi:
            raise ArgumentError(f"{path} has {len(value):,} items; give {lo} to {hi}.")
        items = schema.get("items", {})
        value = [check_value(f"{path}[{i}]", items, v) for i, v in enumerate(value)]
    if isinstance(value, dict) and "properties" in schema:
        value = check_object(path, schema, value)
    return value


def check_object(path: str, schema: Mapping[str, Any], value: Mapping[str, Any]) -> dict[str, Any]:
    props: Mapping[str, Any] = schema.get("properties", {})
    unknown = [k for k in value if k not in props]
    if unknown:
        where = f" in {path}" if path else ""
        names = ", ".join(describe(k) for k in unknown[:5])
        known = ", ".join(props) or "none"
        raise ArgumentError(f"unknown argument{'s' if len(unknown) > 1 else ''}{where}: {names}. Accepted: {known}.")
    missing = [k for k in schema.get("required", ()) if value.get(k) in (None, "")]
    if missing:
        raise ArgumentError(f"missing required argument{'s' if len(missing) > 1 else ''}: {', '.join(missing)}.")
    out: dict[str, Any] = {}
    for key, item in value.items():
        if item is None:
            continue  # an explicit null means "not given", as models often send it
        out[key] = check_value(f"{path}.{key}" if path else key, props[key], item)
    return out


def check_arguments(spec: ToolSpec, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise ArgumentError("arguments must be an object.")
    return check_object("", spec.input_schema, arguments)
