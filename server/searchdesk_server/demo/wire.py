"""Reading requests and writing answers the way Google's front end does.

Google's JSON parser accepts both the discovery document's camelCase names and their snake_case forms,
rejects unknown names ("Cannot find field") and wrong types ("Invalid value at …"), and reads enum values
without regard to case; answers are compact UTF-8 JSON with empty lists and objects left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from .faults import GoogleFault, bad_request

JSON_TYPE = "application/json; charset=UTF-8"
_SNAKE = re.compile(r"_([a-z0-9])")
_CAMEL = re.compile(r"([A-Z])")


def camel(name: str) -> str:
    return _SNAKE.sub(lambda m: m.group(1).upper(), name)


def snake(name: str) -> str:
    return _CAMEL.sub(lambda m: "_" + m.group(1).lower(), name)


def encode(payload: object) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def json_response(status: int, payload: object, headers: Mapping[str, str] | None = None) -> httpx.Response:
    data = encode(payload)
    merged = {"content-type": JSON_TYPE, "vary": "Origin, X-Origin, Referer", "server": "ESF"}
    merged.update(headers or {})
    merged["content-length"] = str(len(data))
    return _streamed(status, data, merged)


def empty_response() -> httpx.Response:
    """Google's answer to a write with no response body."""
    return _streamed(204, b"", {"server": "ESF"})


def _streamed(status: int, data: bytes, headers: dict[str, str]) -> httpx.Response:
    """A response whose body is still a stream, as from a real connection: clients that read it raw
    (aiter_raw, with their own byte ceilings) work; a Response(content=...) arrives already consumed."""
    return httpx.Response(status, headers=headers, stream=httpx.ByteStream(data))


def fault_response(fault: GoogleFault) -> httpx.Response:
    return json_response(fault.code, fault.body(), fault.headers)


def read_object(body: bytes, *, required: bool = True) -> dict[str, Any]:
    """The request body as a JSON object."""
    if not body.strip():
        if required:
            raise bad_request("Invalid JSON payload received. Expected an object, but the request body is empty.")
        return {}
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise bad_request("Invalid JSON payload received. Unexpected token.") from None
    if not isinstance(value, dict):
        raise bad_request('Invalid JSON payload received. Unknown name "": Root element must be a message.')
    return value


def fields(obj: Mapping[str, Any], allowed: Iterable[str], where: str = "") -> dict[str, Any]:
    """The object with camelCase keys; any name not in `allowed` is Google's "Cannot find field"."""
    names = set(allowed)
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = camel(key)
        if name not in names:
            at = f" at '{where}'" if where else ""
            raise bad_request(f'Invalid JSON payload received. Unknown name "{key}"{at}: Cannot find field.')
        out[name] = value
    return out


def invalid(field: str, kind: str, value: object) -> GoogleFault:
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)[:100]
    return bad_request(f"Invalid value at '{snake(field)}' ({kind}), \"{shown}\"")


def text(obj: Mapping[str, Any], field: str, default: str | None = None) -> str | None:
    value = obj.get(field, default)
    if value is None or isinstance(value, str):
        return value
    raise invalid(field, "TYPE_STRING", value)


def integer(obj: Mapping[str, Any], field: str, default: int) -> int:
    """An int32 field; Google also accepts whole numbers written as strings or floats."""
    value = obj.get(field)
    if value is None:
        return default
    if isinstance(value, bool):
        raise invalid(field, "TYPE_INT32", value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,10}", value.strip()):
        value = int(value.strip())
    if not isinstance(value, int) or not -(2**31) <= value < 2**31:
        raise invalid(field, "TYPE_INT32", value)
    return value


def enum_key(raw: str) -> str:
    return raw.replace("_", "").lower()


def enum(obj: Mapping[str, Any], field: str, choices: Mapping[str, str], default: str, kind: str) -> str:
    """An enum field read as Google reads it: any case, with or without underscores."""
    value = obj.get(field)
    if value is None:
        return default
    if not isinstance(value, str) or enum_key(value) not in choices:
        raise invalid(field, kind, value)
    return choices[enum_key(value)]


def array(obj: Mapping[str, Any], field: str) -> list[Any]:
    value = obj.get(field)
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad_request(f"Invalid JSON payload received. Proto field '{snake(field)}' is repeated; expected a list.")
    return value


def obj_at(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad_request(f"Invalid JSON payload received. Expected an object at '{where}'.")
    return value
