"""The agent socket's protocol: one definition for the server (client) and the desktop app (listener).

Two programs written separately drift; this module is the single place where the wire format lives:
newline-delimited JSON-RPC 2.0, UTF-8, at most 64 KiB a message including its newline. It holds the
message types, their validation (both ends validate: the listener everything it is sent, the client
every result before trusting it), the stable error codes, the framing helpers and the fingerprint.

Pure stdlib and cheap to import, so the Qt app and the asyncio server can both use it.

Validation ignores unknown keys (a later minor addition must not break an older peer) but is strict
about every known one. Error messages describe a bad value (its kind, its length), never quote it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Final, Literal, TypeAlias, cast

from ..text import is_plain_text as is_plain_text

# --------------------------------------------------------------------------------------------------
# Constants

PROTOCOL_VERSION: Final = 1

MAX_MESSAGE_BYTES: Final = 64 * 1024  # one message, including its newline
MAX_SCOPES: Final = 10
SCOPE_PREFIX: Final = "https://www.googleapis.com/auth/"
MAX_WAIT_S: Final = 55  # clients cancel a tool call after about 60 s
#: A question's values and size are bounded by the message limit below, not by a count: the dialog
#: shows long lists whole (an owner change of hundreds of addresses). Elicitation and gateways keep
#: their own 4 KiB limit on the question (``approval.question.MAX_ELICIT_BYTES``).
MAX_VALUES: Final = 2000
MAX_LABEL_CHARS: Final = 100
MAX_VALUE_CHARS: Final = 240  # a long value is shown as its start, its end and a digest (text.show_value)
MAX_SENTENCE_CHARS: Final = 1000  # `what` and `consequence`, each
MAX_QUESTION_BYTES: Final = 60 * 1024  # what, consequence and the values as a dialog lays them out
MAX_SERVER_ID_CHARS: Final = 64
MAX_NAME_CHARS: Final = 100  # the app's and server's name and version in hello
MAX_CLIENT_CHARS: Final = 240  # the MCP client's name and version, shown like any value (text.show_value)
MAX_REQUEST_ID_CHARS: Final = 128
MAX_ID_CHARS: Final = 128  # a JSON-RPC id that is a string
MAX_ACCESS_TOKEN_CHARS: Final = 4096
MAX_ACCOUNT_CHARS: Final = 320
MAX_EXPIRES_IN: Final = 86_400

HELLO: Final = "hello"
TOKEN: Final = "credentials/token"  # noqa: S105  (a method name, not a secret)
APPROVAL_REQUEST: Final = "approval/request"
APPROVAL_STATUS: Final = "approval/status"
APPROVAL_CANCEL: Final = "approval/cancel"
ACCOUNTS_LIST: Final = "accounts/list"
#: What an app announces in `hello` when it enforces it; a server needs "requester" before it asks.
FEATURE_REQUESTER: Final = "requester"
#: The app holds several Google accounts: `accounts/list`, and `account` in `credentials/token`.
FEATURE_ACCOUNTS: Final = "accounts"
FEATURES: Final = (FEATURE_REQUESTER, FEATURE_ACCOUNTS)
MAX_FEATURES: Final = 32
MAX_ACCOUNTS: Final = 100
MAX_QUOTA_PROJECT_CHARS: Final = 200
METHODS: Final = frozenset({HELLO, TOKEN, APPROVAL_REQUEST, APPROVAL_STATUS, APPROVAL_CANCEL, ACCOUNTS_LIST})

Decision: TypeAlias = Literal["approve", "deny", "pending"]
StatusDecision: TypeAlias = Literal["approve", "deny", "pending", "none"]
TokenKind: TypeAlias = Literal["oauth", "service_account"]
RequestId: TypeAlias = "int | str"

DECISIONS: Final = ("approve", "deny", "pending")
STATUS_DECISIONS: Final = ("approve", "deny", "pending", "none")
TOKEN_KINDS: Final = ("oauth", "service_account")


class ErrorCode(IntEnum):
    """Stable JSON-RPC error codes. Standard ones first; the app's own live in -32000..-32099."""

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


#: What each code means and what the receiver should do; the conformance suite checks every code has one.
ERROR_MEANINGS: Final[Mapping[ErrorCode, str]] = {
    ErrorCode.PARSE_ERROR: "The line was not UTF-8 JSON. Answered with id null; the connection stays open.",
    ErrorCode.INVALID_REQUEST: "JSON, but not a JSON-RPC 2.0 request object (a batch, no method, a bad id).",
    ErrorCode.METHOD_NOT_FOUND: "No such method in this protocol version.",
    ErrorCode.INVALID_PARAMS: "A parameter is missing, mistyped or out of bounds; the message says which.",
    ErrorCode.INTERNAL_ERROR: "The listener failed; nothing was approved. Try again later.",
    ErrorCode.SIGNED_OUT: "No Google account is signed in to the app: sign in to SearchDesk.",
    ErrorCode.SCOPE_NOT_GRANTED: "Signed in without a requested scope (see data.missing): sign in again.",
    ErrorCode.REFRESH_FAILED: "Google refused to refresh the sign-in (revoked or expired): sign in again.",
    ErrorCode.KEYRING_LOCKED: "The OS keyring is locked or unusable, so no token can be read: unlock it.",
    ErrorCode.UNKNOWN_ACCOUNT: "The named account is not one Claude may use (removed, or withheld in Settings).",
    ErrorCode.PROTOCOL_MISMATCH: "hello named another protocol version; data.supported lists the listener's.",
    ErrorCode.TOO_LARGE: "A message was over 64 KiB. Answered with id null, then the connection is closed.",
    ErrorCode.BUSY: "Too many connections or requests in flight; the listener may close. Retry later.",
    ErrorCode.QUEUE_FULL: "Too many approvals are waiting for the person; answer some first.",
    ErrorCode.DEMO_APP: "The app runs the demo and refuses a real server's question and token requests.",
    ErrorCode.CANCELLED: "approval/cancel closed this question before it was answered; nothing is approved.",
}


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


# --------------------------------------------------------------------------------------------------
# Fingerprint


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, real UTF-8 (not \\u escapes), no NaN: the same bytes on every machine."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def fingerprint(tool: str, targets: Sequence[Any]) -> str:
    """Lowercase hex SHA-256 of the canonical JSON of `[tool, targets]`; every answer is bound to it."""
    return hashlib.sha256(canonical_json([tool, list(targets)]).encode("utf-8")).hexdigest()


def answer_key(fingerprint: str, requester: Requester | None) -> str:
    """What an answer is bound to on the app's side: the fingerprint and who asked (server and
    account). An older server sends no requester: its answers are bound to the fingerprint alone."""
    if requester is None:
        return fingerprint
    who = canonical_json([requester.server, requester.account])
    return f"{fingerprint}/{hashlib.sha256(who.encode('utf-8')).hexdigest()[:32]}"


# --------------------------------------------------------------------------------------------------
# Plain text: what the dialog may show. `is_plain_text` (imported above) is the one definition in
# `searchdesk_server.text`: the server escapes exactly what it refuses, so a question the server
# builds always passes here; the listener refuses anything else rather than show it.


def question_bytes(what: str, consequence: str, values: Sequence[Value]) -> int:
    """The question's size as a dialog lays it out: what, consequence, then one `label: value` a line."""
    size = len(what.encode("utf-8")) + 1 + len(consequence.encode("utf-8")) + 1
    for item in values:
        size += len(item.label.encode("utf-8")) + 2 + len(item.value.encode("utf-8")) + 1
    return size


# --------------------------------------------------------------------------------------------------
# Field readers: one place that turns "wrong" into a message naming the field, never the value


def _describe(value: object) -> str:
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


class _Reader:
    """Reads typed fields from one JSON object; every failure raises `error` naming the field."""

    def __init__(self, obj: object, where: str, error: type[InvalidParams] = InvalidParams) -> None:
        self.where = where
        self.error = error
        if not isinstance(obj, dict):
            raise error(f"{where} must be an object, not {_describe(obj)}.")
        self.obj: dict[str, Any] = obj

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}"

    def raw(self, key: str, *, required: bool = True) -> object:
        if key not in self.obj:
            if required:
                raise self.error(f"{self._name(key)} is missing.")
            return None
        return self.obj[key]

    def text(
        self,
        key: str,
        *,
        max_chars: int,
        min_chars: int = 1,
        pattern: re.Pattern[str] | None = None,
        required: bool = True,
        default: str = "",
    ) -> str:
        if key not in self.obj and not required:
            return default
        return check_text(
            self.raw(key),
            self._name(key),
            max_chars=max_chars,
            min_chars=min_chars,
            pattern=pattern,
            error=self.error,
        )

    def boolean(self, key: str, *, default: bool | None = None) -> bool:
        """A true/false field; required when no `default` is given."""
        if key not in self.obj:
            if default is None:
                raise self.error(f"{self._name(key)} is missing.")
            return default
        value = self.obj[key]
        if not isinstance(value, bool):
            raise self.error(f"{self._name(key)} must be true or false, not {_describe(value)}.")
        return value

    def integer(self, key: str, *, low: int, high: int) -> int:
        value = self.raw(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.error(f"{self._name(key)} must be a whole number, not {_describe(value)}.")
        if not low <= value <= high:
            raise self.error(f"{self._name(key)} must be between {low} and {high}.")
        return value

    def number(self, key: str, *, low: float, high: float) -> float:
        value = self.raw(key)
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            raise self.error(f"{self._name(key)} must be a number, not {_describe(value)}.")
        if not low <= value <= high:
            raise self.error(f"{self._name(key)} must be between {low} and {high} seconds.")
        return float(value)

    def choice(self, key: str, choices: Sequence[str]) -> str:
        value = self.raw(key)
        if not isinstance(value, str) or value not in choices:
            raise self.error(f"{self._name(key)} must be one of {', '.join(choices)}.")
        return value

    def items(self, key: str, *, max_items: int, min_items: int = 0) -> list[Any]:
        value = self.raw(key)
        if not isinstance(value, list):
            raise self.error(f"{self._name(key)} must be a list, not {_describe(value)}.")
        if not min_items <= len(value) <= max_items:
            raise self.error(f"{self._name(key)} must hold {min_items} to {max_items} items, not {len(value)}.")
        return value


def check_text(
    value: object,
    name: str,
    *,
    max_chars: int,
    min_chars: int = 1,
    pattern: re.Pattern[str] | None = None,
    error: type[InvalidParams] = InvalidParams,
) -> str:
    """A string within bounds, plain (see `is_plain_text`), and matching `pattern` when one is given."""
    if not isinstance(value, str):
        raise error(f"{name} must be a string, not {_describe(value)}.")
    if not min_chars <= len(value) <= max_chars:
        raise error(f"{name} must be {min_chars} to {max_chars} characters long, not {len(value)}.")
    if not is_plain_text(value):
        raise error(f"{name} contains control, format or separator characters.")
    if pattern is not None and not pattern.fullmatch(value):
        raise error(f"{name} is not in the expected form.")
    return value


_FINGERPRINT_RE: Final = re.compile(r"[0-9a-f]{64}")
_REQUEST_ID_RE: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_TOOL_RE: Final = re.compile(r"[a-z][a-z0-9_]{0,63}")
_SCOPE_RE: Final = re.compile(re.escape(SCOPE_PREFIX) + r"[A-Za-z0-9._-]{1,100}")
_ACCESS_TOKEN_RE: Final = re.compile(r"[\x21-\x7e]+")
_SERVER_ID_RE: Final = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_FEATURE_RE: Final = re.compile(r"[a-z][a-z0-9_.-]{0,39}")


# --------------------------------------------------------------------------------------------------
# Message types. `from_json` validates (raising InvalidParams); `to_json` gives the wire object.


@dataclass(frozen=True)
class HelloParams:
    """`hello` params: the protocol the caller speaks, and who it is (for the app's log only)."""

    protocol: int = PROTOCOL_VERSION
    app: str = ""
    version: str = ""

    @classmethod
    def from_json(cls, obj: object) -> HelloParams:
        r = _Reader(obj, "params")
        return cls(
            protocol=r.integer("protocol", low=0, high=2**31 - 1),
            app=r.text("app", max_chars=MAX_NAME_CHARS, min_chars=0, required=False),
            version=r.text("version", max_chars=MAX_NAME_CHARS, min_chars=0, required=False),
        )

    def to_json(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "app": self.app, "version": self.version}


@dataclass(frozen=True)
class Hello:
    """`hello` result. `features` lists what this app enforces (an older app sends none)."""

    app: str
    version: str
    protocol: int = PROTOCOL_VERSION
    features: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, obj: object, error: type[InvalidParams] = InvalidParams) -> Hello:
        r = _Reader(obj, "result", error)
        features: list[str] = []
        if "features" in r.obj:
            for i, item in enumerate(r.items("features", max_items=MAX_FEATURES)):
                features.append(
                    check_text(item, f"result.features[{i}]", max_chars=40, pattern=_FEATURE_RE, error=error)
                )
        return cls(
            app=r.text("app", max_chars=MAX_NAME_CHARS),
            version=r.text("version", max_chars=MAX_NAME_CHARS, min_chars=0),
            protocol=r.integer("protocol", low=0, high=2**31 - 1),
            features=tuple(features),
        )

    def to_json(self) -> dict[str, Any]:
        return {"app": self.app, "version": self.version, "protocol": self.protocol, "features": list(self.features)}

    @property
    def binds_requester(self) -> bool:
        return FEATURE_REQUESTER in self.features

    @property
    def serves_accounts(self) -> bool:
        """The app lists its accounts and hands out a token for the one named (an older app: one account)."""
        return FEATURE_ACCOUNTS in self.features


@dataclass(frozen=True)
class Requester:
    """Who asks: one server process (a random id), the Google account it acts as, and whether it runs
    the demo. Self-reported: it keeps an honest second server from collecting another's yes; it does
    not stop a hostile program of the same user (docs/security.md)."""

    server: str
    account: str | None
    demo: bool

    @classmethod
    def from_json(cls, obj: object, where: str, error: type[InvalidParams] = InvalidParams) -> Requester:
        r = _Reader(obj, where, error)
        account = r.raw("account")
        return cls(
            server=r.text("server", max_chars=MAX_SERVER_ID_CHARS, pattern=_SERVER_ID_RE),
            account=None
            if account is None
            else check_text(account, f"{where}.account", max_chars=MAX_ACCOUNT_CHARS, error=error),
            demo=r.boolean("demo"),
        )

    def to_json(self) -> dict[str, Any]:
        return {"server": self.server, "account": self.account, "demo": self.demo}


def _requester(r: _Reader) -> Requester | None:
    """The optional `requester` of a request: absent (an older server) or complete."""
    if "requester" not in r.obj:
        return None
    return Requester.from_json(r.obj["requester"], f"{r.where}.requester", r.error)


@dataclass(frozen=True)
class TokenParams:
    """`credentials/token` params: full scope URLs; `force_refresh` after a 401 mints a new token.
    `account` names the Google account (an app that serves accounts); absent: the default account."""

    scopes: tuple[str, ...]
    force_refresh: bool = False
    requester: Requester | None = None
    account: str | None = None

    def __post_init__(self) -> None:
        _check_scopes(list(self.scopes), "params.scopes", InvalidParams)
        if self.account is not None:
            check_text(self.account, "params.account", max_chars=MAX_ACCOUNT_CHARS)

    @classmethod
    def from_json(cls, obj: object) -> TokenParams:
        r = _Reader(obj, "params")
        scopes = r.items("scopes", min_items=1, max_items=MAX_SCOPES)
        return cls(
            scopes=tuple(scopes),
            force_refresh=r.boolean("force_refresh", default=False),
            requester=_requester(r),
            account=r.text("account", max_chars=MAX_ACCOUNT_CHARS) if "account" in r.obj else None,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scopes": list(self.scopes), "force_refresh": self.force_refresh}
        if self.requester is not None:
            out["requester"] = self.requester.to_json()
        if self.account is not None:
            out["account"] = self.account
        return out


def _check_scopes(scopes: list[Any], name: str, error: type[InvalidParams]) -> None:
    if not 1 <= len(scopes) <= MAX_SCOPES:
        raise error(f"{name} must hold 1 to {MAX_SCOPES} scopes, not {len(scopes)}.")
    for i, scope in enumerate(scopes):
        check_text(scope, f"{name}[{i}]", max_chars=200, pattern=_SCOPE_RE, error=error)


@dataclass(frozen=True)
class Token:
    """`credentials/token` result: a short-lived access token (the refresh token never leaves the app)."""

    access_token: str = field(repr=False)
    expires_in: int
    kind: TokenKind
    account: str

    @classmethod
    def from_json(cls, obj: object, error: type[InvalidParams] = InvalidParams) -> Token:
        r = _Reader(obj, "result", error)
        return cls(
            access_token=r.text("access_token", max_chars=MAX_ACCESS_TOKEN_CHARS, pattern=_ACCESS_TOKEN_RE),
            expires_in=r.integer("expires_in", low=0, high=MAX_EXPIRES_IN),
            kind=cast(TokenKind, r.choice("kind", TOKEN_KINDS)),
            account=r.text("account", max_chars=MAX_ACCOUNT_CHARS, min_chars=0),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "access_token": self.access_token,
            "expires_in": self.expires_in,
            "kind": self.kind,
            "account": self.account,
        }


def client_project(client_id: str) -> str:
    """`quota_project` for an OAuth client: its id starts with its Google Cloud project's number
    (123456789012-abc.apps.googleusercontent.com); an id of another form stands for itself."""
    head = client_id.split("-", 1)[0]
    return head if head.isdigit() else client_id


def same_account(a: str | None, b: str | None) -> bool:
    """Google treats an e-mail address without regard to case; so do both ends of the socket."""
    return a is not None and b is not None and a.casefold() == b.casefold()


@dataclass(frozen=True)
class AccountsParams:
    """`accounts/list` params: who asks (a demo app refuses a real server, as for tokens)."""

    requester: Requester | None = None

    @classmethod
    def from_json(cls, obj: object) -> AccountsParams:
        return cls(requester=_requester(_Reader(obj, "params")))

    def to_json(self) -> dict[str, Any]:
        return {} if self.requester is None else {"requester": self.requester.to_json()}


@dataclass(frozen=True)
class AccountInfo:
    """One account Claude may use: its e-mail address, its kind, whether it is the default, and the
    Google Cloud project its calls are counted against (an OAuth client's or a service account's;
    "" when unknown). Never a token."""

    account: str
    kind: TokenKind
    default: bool = False
    quota_project: str = ""

    def __post_init__(self) -> None:
        # The app validates what it sends, as the server validates its questions.
        check_text(self.account, "account", max_chars=MAX_ACCOUNT_CHARS)
        check_text(self.quota_project, "quota_project", max_chars=MAX_QUOTA_PROJECT_CHARS, min_chars=0)
        if self.kind not in TOKEN_KINDS:
            raise InvalidParams(f"kind must be one of {', '.join(TOKEN_KINDS)}.")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"account": self.account, "kind": self.kind, "default": self.default}
        if self.quota_project:
            out["quota_project"] = self.quota_project
        return out


@dataclass(frozen=True)
class AccountList:
    """`accounts/list` result: the accounts Claude may use, in the app's order, at most one default."""

    accounts: tuple[AccountInfo, ...]

    def __post_init__(self) -> None:
        _check_accounts(self.accounts, InvalidParams)

    @classmethod
    def from_json(cls, obj: object, error: type[InvalidParams] = InvalidParams) -> AccountList:
        r = _Reader(obj, "result", error)
        accounts = []
        for i, item in enumerate(r.items("accounts", max_items=MAX_ACCOUNTS)):
            a = _Reader(item, f"result.accounts[{i}]", error)
            accounts.append(
                AccountInfo(
                    account=a.text("account", max_chars=MAX_ACCOUNT_CHARS),
                    kind=cast(TokenKind, a.choice("kind", TOKEN_KINDS)),
                    default=a.boolean("default"),
                    quota_project=a.text(
                        "quota_project", max_chars=MAX_QUOTA_PROJECT_CHARS, min_chars=0, required=False
                    ),
                )
            )
        _check_accounts(accounts, error)
        return cls(accounts=tuple(accounts))

    def to_json(self) -> dict[str, Any]:
        return {"accounts": [a.to_json() for a in self.accounts]}


def _check_accounts(accounts: Sequence[AccountInfo], error: type[InvalidParams]) -> None:
    if len(accounts) > MAX_ACCOUNTS:
        raise error(f"result.accounts must hold at most {MAX_ACCOUNTS} accounts, not {len(accounts)}.")
    if sum(a.default for a in accounts) > 1:
        raise error("result.accounts names more than one default account.")
    if len({a.account.casefold() for a in accounts}) != len(accounts):
        raise error("result.accounts names an account twice.")


@dataclass(frozen=True)
class Value:
    """One caller- or Google-supplied value shown under the question, already cleaned by the server."""

    label: str
    value: str

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "value": self.value}


@dataclass(frozen=True)
class ClientInfo:
    """Who says it asked (self-reported by the MCP client; the dialog says "says it is")."""

    name: str
    version: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version}


@dataclass(frozen=True)
class ApprovalRequest:
    """`approval/request` params: the server's question, bound to `fingerprint`, waited on for `wait_s`."""

    request_id: str
    tool: str
    what: str
    consequence: str
    values: tuple[Value, ...]
    fingerprint: str
    client: ClientInfo
    wait_s: float
    requester: Requester | None = None  # None: an older server, which does not send it

    def __post_init__(self) -> None:
        # Validating on construction too means the server finds a bad question before it sends it.
        _approval_fields(self.to_json())

    @classmethod
    def from_json(cls, obj: object) -> ApprovalRequest:
        return cls(**_approval_fields(obj))

    def to_json(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id,
            "tool": self.tool,
            "what": self.what,
            "consequence": self.consequence,
            "values": [v.to_json() for v in self.values],
            "fingerprint": self.fingerprint,
            "client": self.client.to_json(),
            "wait_s": self.wait_s,
            **({} if self.requester is None else {"requester": self.requester.to_json()}),
        }


def _approval_fields(obj: object) -> dict[str, Any]:
    r = _Reader(obj, "params")
    values = []
    for i, item in enumerate(r.items("values", max_items=MAX_VALUES)):
        v = _Reader(item, f"params.values[{i}]")
        values.append(
            Value(
                label=v.text("label", max_chars=MAX_LABEL_CHARS),
                value=v.text("value", max_chars=MAX_VALUE_CHARS, min_chars=0),
            )
        )
    c = _Reader(r.raw("client"), "params.client")
    fields: dict[str, Any] = {
        "request_id": r.text("request_id", max_chars=MAX_REQUEST_ID_CHARS, pattern=_REQUEST_ID_RE),
        "tool": r.text("tool", max_chars=64, pattern=_TOOL_RE),
        "what": r.text("what", max_chars=MAX_SENTENCE_CHARS),
        "consequence": r.text("consequence", max_chars=MAX_SENTENCE_CHARS),
        "values": tuple(values),
        "fingerprint": r.text("fingerprint", max_chars=64, pattern=_FINGERPRINT_RE),
        "client": ClientInfo(
            name=c.text("name", max_chars=MAX_CLIENT_CHARS, min_chars=0),
            version=c.text("version", max_chars=MAX_CLIENT_CHARS, min_chars=0, required=False),
        ),
        "wait_s": r.number("wait_s", low=0, high=MAX_WAIT_S),
        "requester": _requester(r),
    }
    size = question_bytes(fields["what"], fields["consequence"], values)
    if size > MAX_QUESTION_BYTES:
        raise InvalidParams(f"The question is {size} bytes; at most {MAX_QUESTION_BYTES} are allowed.")
    return fields


@dataclass(frozen=True)
class ApprovalResult:
    """`approval/request` result; `pending` means the dialog is still open (ask `approval/status` later)."""

    decision: Decision
    fingerprint: str

    @classmethod
    def from_json(cls, obj: object, error: type[InvalidParams] = InvalidParams) -> ApprovalResult:
        r = _Reader(obj, "result", error)
        return cls(
            decision=cast(Decision, r.choice("decision", DECISIONS)),
            fingerprint=r.text("fingerprint", max_chars=64, pattern=_FINGERPRINT_RE),
        )

    def to_json(self) -> dict[str, Any]:
        return {"decision": self.decision, "fingerprint": self.fingerprint}


@dataclass(frozen=True)
class StatusParams:
    """`approval/status` params; an approve is returned only to the `requester` that asked."""

    fingerprint: str
    requester: Requester | None = None

    @classmethod
    def from_json(cls, obj: object) -> StatusParams:
        r = _Reader(obj, "params")
        return cls(fingerprint=r.text("fingerprint", max_chars=64, pattern=_FINGERPRINT_RE), requester=_requester(r))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fingerprint": self.fingerprint}
        if self.requester is not None:
            out["requester"] = self.requester.to_json()
        return out


@dataclass(frozen=True)
class StatusResult:
    """`approval/status` result; an `approve` returned here is consumed (the next status says `none`)."""

    decision: StatusDecision

    @classmethod
    def from_json(cls, obj: object, error: type[InvalidParams] = InvalidParams) -> StatusResult:
        return cls(decision=cast(StatusDecision, _Reader(obj, "result", error).choice("decision", STATUS_DECISIONS)))

    def to_json(self) -> dict[str, Any]:
        return {"decision": self.decision}


@dataclass(frozen=True)
class CancelParams:
    """`approval/cancel` params."""

    request_id: str

    @classmethod
    def from_json(cls, obj: object) -> CancelParams:
        r = _Reader(obj, "params")
        return cls(request_id=r.text("request_id", max_chars=MAX_REQUEST_ID_CHARS, pattern=_REQUEST_ID_RE))

    def to_json(self) -> dict[str, Any]:
        return {"request_id": self.request_id}


@dataclass(frozen=True)
class CancelResult:
    """`approval/cancel` result: whether a question was open (or answered and unspent) and is now gone."""

    cancelled: bool

    @classmethod
    def from_json(cls, obj: object, error: type[InvalidParams] = InvalidParams) -> CancelResult:
        r = _Reader(obj, "result", error)
        value = r.raw("cancelled")
        if not isinstance(value, bool):
            raise error(f"result.cancelled must be true or false, not {_describe(value)}.")
        return cls(cancelled=value)

    def to_json(self) -> dict[str, Any]:
        return {"cancelled": self.cancelled}


#: Each method's params parser, for a listener's dispatch table.
PARAMS: Final[Mapping[str, Any]] = {
    HELLO: HelloParams.from_json,
    TOKEN: TokenParams.from_json,
    APPROVAL_REQUEST: ApprovalRequest.from_json,
    APPROVAL_STATUS: StatusParams.from_json,
    APPROVAL_CANCEL: CancelParams.from_json,
    ACCOUNTS_LIST: AccountsParams.from_json,
}


# --------------------------------------------------------------------------------------------------
# Framing: one JSON-RPC message per line


@dataclass(frozen=True)
class Request:
    """A JSON-RPC request as read off the wire; params still unvalidated (see PARAMS)."""

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
        raise ProtocolError(ErrorCode.INVALID_REQUEST, f"A request must be a JSON object, not {_describe(obj)}.")
    request_id = _read_id(obj)
    if obj.get("jsonrpc") != "2.0":
        raise ProtocolError(ErrorCode.INVALID_REQUEST, 'jsonrpc must be "2.0".', request_id=request_id)
    method = obj.get("method")
    if not isinstance(method, str) or not method:
        raise ProtocolError(ErrorCode.INVALID_REQUEST, "method must be a non-empty string.", request_id=request_id)
    if "id" in obj and obj["id"] is None:
        raise ProtocolError(ErrorCode.INVALID_REQUEST, "id must not be null.")
    return Request(id=request_id, method=method, params=obj.get("params", {}))


def parse_params(request: Request) -> Any:
    """Validate `request.params` for its method; METHOD_NOT_FOUND / INVALID_PARAMS carry the request's id."""
    parser = PARAMS.get(request.method)
    if parser is None:
        raise ProtocolError(ErrorCode.METHOD_NOT_FOUND, "No such method in agent protocol 1.", request_id=request.id)
    try:
        return parser(request.params)
    except InvalidParams as err:
        raise InvalidParams(str(err), request_id=request.id) from None


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
