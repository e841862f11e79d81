"""The agent socket's framing: JSON-RPC 2.0 envelopes, one per line, and the stable error codes.

Below the methods and their messages (`protocol`), both ends share this layer: the server's client
(asyncio) and the desktop app's listener (Qt) read a byte stream into lines with `LineBuffer`, take a
line apart with `parse_request` / `parse_response`, and write one with `encode_result` /
`encode_error` / `encode_request`. A line is newline-delimited UTF-8 JSON of at most
`MAX_MESSAGE_BYTES` including its newline; JSON is read strictly (no NaN, no repeated keys). Nothing
here knows a method by name: `protocol.parse_params` turns a `Request`'s params into its message.

Stdlib only, besides `text.is_plain_text` (one definition of the plain text an id may hold).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final, TypeAlias

from ..text.display import is_plain_text

MAX_MESSAGE_BYTES: Final = 64 * 1024  # one message, including its newline
MAX_ID_CHARS: Final = 128  # a JSON-RPC id that is a string

RequestId: TypeAlias = "int | str"


class ErrorCode(IntEnum):
    """Stable JSON-RPC error codes. Standard ones first; the app's own live in -32000..-32099.
    What each means is `protocol.ERROR_MEANINGS`; which method answers which, `protocol.METHODS`."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603

    SIGNED_OUT = -32001
    SCOPE_NOT_GRANTED = -32002
    REFRESH_FAILED = -32003
    KEYRING_LOCKED = -32004
    UNKNOWN_ACCOUNT = -32005
    PROTOCOL_MISMATCH = -32010
    TOO_LARGE = -32020
    BUSY = -32021
    QUEUE_FULL = -32022
    DEMO_APP = -32023
    CANCELLED = -32030


# --------------------------------------------------------------------------------------------------
# Errors


class AgentError(Exception):
    """Base of every agent-socket error. `code` is the stable ErrorCode when one applies."""

    code: int | None = None

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class ProtocolError(AgentError):
    """A message breaks the protocol. `code` is what to answer with, `request_id` whom to answer."""

    def __init__(self, code: int, message: str, *, request_id: RequestId | None = None) -> None:
        super().__init__(message, code=code)
        self.request_id = request_id


class InvalidParams(ProtocolError):
    """A request's params (or, on the client side, a result) fail validation."""

    def __init__(self, message: str, *, request_id: RequestId | None = None) -> None:
        super().__init__(ErrorCode.INVALID_PARAMS, message, request_id=request_id)


def describe(value: object) -> str:
    """A JSON value named by its kind and size, never quoted: what an error message may say of it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


# --------------------------------------------------------------------------------------------------
# The envelopes


@dataclass(frozen=True)
class Request:
    """A JSON-RPC request as read off the wire; params still unvalidated (see `protocol.parse_params`)."""

    id: RequestId | None
    method: str
    params: object

    @property
    def is_notification(self) -> bool:
        return self.id is None


@dataclass(frozen=True)
class RpcError:
    """A JSON-RPC error object."""

    code: int
    message: str
    data: object = None


@dataclass(frozen=True)
class Response:
    """A JSON-RPC response; exactly one of `result` / `error` is meaningful."""

    id: RequestId | None
    result: object = None
    error: RpcError | None = None


# --------------------------------------------------------------------------------------------------
# Writing a line


def encode(message: Mapping[str, Any]) -> bytes:
    """One message as one line of UTF-8 JSON; refuses one over MAX_MESSAGE_BYTES (TOO_LARGE)."""
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n"
    if len(data) > MAX_MESSAGE_BYTES:
        raise ProtocolError(
            ErrorCode.TOO_LARGE, f"The message is {len(data)} bytes; at most {MAX_MESSAGE_BYTES} are allowed."
        )
    return data


def encode_request(request_id: RequestId, method: str, params: Mapping[str, Any]) -> bytes:
    return encode({"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)})


def encode_result(request_id: RequestId | None, result: Mapping[str, Any]) -> bytes:
    return encode({"jsonrpc": "2.0", "id": request_id, "result": dict(result)})


def encode_error(request_id: RequestId | None, code: int, message: str, data: object = None) -> bytes:
    error: dict[str, Any] = {"code": int(code), "message": message}
    if data is not None:
        error["data"] = data
    return encode({"jsonrpc": "2.0", "id": request_id, "error": error})


# --------------------------------------------------------------------------------------------------
# Reading a line


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError("a key appears twice")
        obj[key] = value
    return obj


def decode(line: bytes) -> object:
    """Parse one line (with or without its newline) as strict JSON: UTF-8, no NaN, no repeated keys."""
    if len(line) + (0 if line.endswith(b"\n") else 1) > MAX_MESSAGE_BYTES:
        raise ProtocolError(ErrorCode.TOO_LARGE, f"A message may be at most {MAX_MESSAGE_BYTES} bytes.")
    try:
        text = line.decode("utf-8")
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except UnicodeDecodeError:
        raise ProtocolError(ErrorCode.PARSE_ERROR, "The message is not valid UTF-8.") from None
    except (ValueError, RecursionError):
        raise ProtocolError(ErrorCode.PARSE_ERROR, "The message is not valid JSON.") from None


def _read_id(obj: dict[str, Any]) -> RequestId | None:
    """A usable id: an int, or a short string that survives UTF-8 (a lone surrogate would not)."""
    value = obj.get("id")
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53:
        return value
    if isinstance(value, str) and len(value) <= MAX_ID_CHARS and is_plain_text(value):
        return value
    raise ProtocolError(ErrorCode.INVALID_REQUEST, "id must be a whole number or a short plain string.")


def parse_request(line: bytes) -> Request:
    """A listener's first step on a line. Raises ProtocolError whose request_id says whom to answer."""
    obj = decode(line)
    if isinstance(obj, list):
        raise ProtocolError(ErrorCode.INVALID_REQUEST, "Batches are not supported: send one request a line.")
    if not isinstance(obj, dict):
        raise ProtocolError(ErrorCode.INVALID_REQUEST, f"A request must be a JSON object, not {describe(obj)}.")
    request_id = _read_id(obj)
    if obj.get("jsonrpc") != "2.0":
        raise ProtocolError(ErrorCode.INVALID_REQUEST, 'jsonrpc must be "2.0".', request_id=request_id)
    method = obj.get("method")
    if not isinstance(method, str) or not method:
        raise ProtocolError(ErrorCode.INVALID_REQUEST, "method must be a non-empty string.", request_id=request_id)
    if "id" in obj and obj["id"] is None:
        raise ProtocolError(ErrorCode.INVALID_REQUEST, "id must not be null.")
    return Request(id=request_id, method=method, params=obj.get("params", {}))


def parse_response(line: bytes) -> Response:
    """A client's reading of one line; raises ProtocolError when it is not a JSON-RPC 2.0 response."""
    obj = decode(line)
    if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
        raise ProtocolError(ErrorCode.INVALID_REQUEST, "The answer is not a JSON-RPC 2.0 response.")
    if "id" not in obj:
        raise ProtocolError(ErrorCode.INVALID_REQUEST, "The answer has no id.")
    response_id = _read_id(obj)
    has_result, has_error = "result" in obj, "error" in obj
    if has_result == has_error:
        raise ProtocolError(ErrorCode.INVALID_REQUEST, "An answer must carry exactly one of result and error.")
    if has_result:
        return Response(id=response_id, result=obj["result"])
    err = obj["error"]
    if not isinstance(err, dict):
        raise ProtocolError(ErrorCode.INVALID_REQUEST, "error must be an object.")
    code, message = err.get("code"), err.get("message")
    if not isinstance(code, int) or isinstance(code, bool) or not isinstance(message, str):
        raise ProtocolError(ErrorCode.INVALID_REQUEST, "error needs an integer code and a string message.")
    return Response(id=response_id, error=RpcError(code=code, message=message, data=err.get("data")))


class LineBuffer:
    """Splits a byte stream into lines, refusing any line longer than MAX_MESSAGE_BYTES.

    Both a QLocalSocket's readyRead and an asyncio reader hand over arbitrary chunks; this holds the
    partial line between them. After TOO_LARGE the stream cannot be resynchronised safely: close it.
    """

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self._limit = limit
        self._partial = bytearray()

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line."""
        return len(self._partial)

    def feed(self, data: bytes) -> list[bytes]:
        """Complete lines (newline stripped, blank lines skipped); raises ProtocolError(TOO_LARGE)."""
        lines: list[bytes] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if len(self._partial) + (end - start) + 1 > self._limit:
                raise self._too_large()
            self._partial += data[start:end]
            line, self._partial = bytes(self._partial), bytearray()
            if line.strip():
                lines.append(line)
            start = end + 1
        if len(self._partial) + (len(data) - start) + 1 > self._limit:
            raise self._too_large()
        self._partial += data[start:]
        return lines

    def _too_large(self) -> ProtocolError:
        self._partial = bytearray()
        return ProtocolError(
            ErrorCode.TOO_LARGE, f"A message may be at most {MAX_MESSAGE_BYTES} bytes, including its newline."
        )
