"""The agent socket's protocol: one definition for the server (client) and the desktop app (listener).

Two programs written separately drift; this module is the single place where the wire format lives:
newline-delimited JSON-RPC 2.0, UTF-8, at most 64 KiB a message including its newline. It holds the
message types declared as data (pydantic dataclasses: both ends validate, the listener everything it
is sent, the client every result before trusting it), the stable error codes, the framing helpers
and the fingerprint.

No Qt and no asyncio, so the Qt app and the asyncio server can both use it; the server imports it only
when it talks to the app (never on its start-up path). Message schemas are built on first use.

Validation ignores unknown keys (a later minor addition must not break an older peer) but is strict
about every known one: no type coercion, no null for a field that may only be left out, bounds,
patterns and plain text. Error messages name the field and the rule, never quote the value.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Annotated, Any, ClassVar, Final, Literal, Self, TypeAlias, TypeVar, cast

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass
from typing_extensions import dataclass_transform  # typing's lacks frozen_default before 3.12

from ..text import SHOWN_LIMIT
from ..text import is_plain_text as is_plain_text
from ..text import minutes as minutes

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
MAX_VALUE_CHARS: Final = SHOWN_LIMIT  # 240: a long value is shown as its start, its end and a digest (text.shorten)
MAX_SENTENCE_CHARS: Final = 1000  # `what` and `consequence`, each
#: The notification form (`NotificationForm`): a title, a subtitle and a body of a few short lines. The
#: server sizes it for a Windows toast (question.NOTE_LINES, NOTE_LINE_CHARS); these are the wire's bounds.
MAX_NOTE_TITLE_CHARS: Final = 200
MAX_NOTE_LINES: Final = 8
MAX_NOTE_BODY_CHARS: Final = 1000

# The question's times: one definition for both programs and for every sentence a person reads that
# states them (``text.minutes``); a test fails when a sentence names a number of minutes not derived from here.
#: How long the app keeps a question open when nobody answers (the dialog, the notification), and then
#: keeps the answer for a later identical call to collect.
QUESTION_OPEN_S: Final = 300.0
#: How long a two-call confirm_token lives (only where nobody can be asked: docs/security.md).
TOKEN_LIFETIME_S: Final = 300.0
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
#: Where the person answered (additive on both answers): the app's dialog or its notification.
AnsweredIn: TypeAlias = Literal["dialog", "notification"]
TokenKind: TypeAlias = Literal["oauth", "service_account"]
RequestId: TypeAlias = "int | str"


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


def words_digest(
    what: str,
    consequence: str,
    values: Iterable[tuple[str, str]],
    notification: Mapping[str, str] | None = None,
) -> str:
    """The digest of a question's words: lowercase hex SHA-256 of the canonical JSON of
    `[what, consequence, [[label, value], …], notification]` (DESIGN.md, approval/status `digest`).

    A yes is bound to the words the person read, not only to the fingerprint: the same call made while
    Google's side changes (an owner added) reads differently, and a yes to one wording must never serve
    the other. Both programs compute it with this function, the server from the question it built, the
    app from the request it received. `value` is each value as shown (shortened when long), never the
    whole value beside it. `notification` is the request's notification form as it goes on the wire
    (`NotificationForm.to_json`: `{title, subtitle?, body, show_question?}`); None (JSON null in its place)
    for a request without one (an older server)."""
    words = [what, consequence, [[label, value] for label, value in values], notification]
    return hashlib.sha256(canonical_json(words).encode("utf-8")).hexdigest()


#: Between the fingerprint-and-requester part of an answer key and the digest of the words.
_WORDS_MARK: Final = "#"


def answer_key(fingerprint: str, requester: Requester | None, digest: str | None = None) -> str:
    """What an answer is bound to on the app's side: the fingerprint and who asked (server and
    account), and with `digest` the words too (`words_digest`). An older server sends no requester:
    its answers are bound to the fingerprint alone. Without `digest` the key names the question of
    that fingerprint and requester whatever its words (`question_of`)."""
    if requester is None:
        key = fingerprint
    else:
        who = canonical_json([requester.server, requester.account])
        key = f"{fingerprint}/{hashlib.sha256(who.encode('utf-8')).hexdigest()[:32]}"
    return key if digest is None else f"{key}{_WORDS_MARK}{digest}"


def question_of(key: str) -> tuple[str, str | None]:
    """An answer key taken apart: (the fingerprint-and-requester part, the words' digest or None)."""
    head, mark, digest = key.partition(_WORDS_MARK)
    return head, (digest if mark else None)


# --------------------------------------------------------------------------------------------------
# Plain text: what the dialog may show. `is_plain_text` (imported above) is the one definition in
# `searchdesk_server.text`: the server escapes exactly what it refuses, so a question the server
# builds always passes here; the listener refuses anything else rather than show it.


def question_bytes(what: str, consequence: str, values: Sequence[Value]) -> int:
    """The question's size as a dialog lays it out: what, consequence, then one `label: value` a line, each
    value whole (the app's dialog shows `Value.full`)."""
    size = len(what.encode("utf-8")) + 1 + len(consequence.encode("utf-8")) + 1
    for item in values:
        size += len(item.label.encode("utf-8")) + 2 + len(item.full.encode("utf-8")) + 1
    return size


# --------------------------------------------------------------------------------------------------
# Describing a value without quoting it


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


# --------------------------------------------------------------------------------------------------
# The fields: each kind of value declared once, with its bounds. Every text is plain (`is_plain_text`).


def _plain(value: str) -> str:
    if not is_plain_text(value):
        raise ValueError("contains control, format or separator characters")
    return value


def _plain_lines(value: str) -> str:
    """A notification body: a few lines, each plain text (the newline between them is the only control)."""
    lines = value.split("\n")
    if len(lines) > MAX_NOTE_LINES:
        raise ValueError(f"has {len(lines)} lines; at most {MAX_NOTE_LINES} are allowed")
    if not all(line and is_plain_text(line) for line in lines):
        raise ValueError("has an empty line, or control, format or separator characters")
    return value


NoteBody = Annotated[
    str, Strict(), StringConstraints(min_length=1, max_length=MAX_NOTE_BODY_CHARS), AfterValidator(_plain_lines)
]


def _present(value: object, info: ValidationInfo) -> object:
    """On the wire, an optional field that is there must hold a value: null is not "left out"."""
    if value is None and info.context == _FROM_WIRE:
        raise ValueError("must not be null; leave the field out instead")
    return value


_FROM_WIRE: Final = {"from": "wire"}  # the validation context of a message read off the socket
_Plain = AfterValidator(_plain)
Name = Annotated[str, Strict(), StringConstraints(max_length=MAX_NAME_CHARS), _Plain]
AppName = Annotated[str, Strict(), StringConstraints(min_length=1, max_length=MAX_NAME_CHARS), _Plain]
ClientText = Annotated[str, Strict(), StringConstraints(max_length=MAX_CLIENT_CHARS), _Plain]
Label = Annotated[str, Strict(), StringConstraints(min_length=1, max_length=MAX_LABEL_CHARS), _Plain]
ValueText = Annotated[str, Strict(), StringConstraints(max_length=MAX_VALUE_CHARS), _Plain]
#: A value whole: bounded only by the message it travels in.
WholeText = Annotated[str, Strict(), StringConstraints(max_length=MAX_MESSAGE_BYTES), _Plain]
Sentence = Annotated[str, Strict(), StringConstraints(min_length=1, max_length=MAX_SENTENCE_CHARS), _Plain]
NoteTitle = Annotated[str, Strict(), StringConstraints(min_length=1, max_length=MAX_NOTE_TITLE_CHARS), _Plain]
OptionalNoteText = Annotated[str, Strict(), StringConstraints(max_length=MAX_NOTE_TITLE_CHARS), _Plain]
Account = Annotated[str, Strict(), StringConstraints(min_length=1, max_length=MAX_ACCOUNT_CHARS), _Plain]
AnyAccount = Annotated[str, Strict(), StringConstraints(max_length=MAX_ACCOUNT_CHARS), _Plain]  # "" when unknown
QuotaProject = Annotated[str, Strict(), StringConstraints(max_length=MAX_QUOTA_PROJECT_CHARS), _Plain]
Fingerprint = Annotated[str, Strict(), StringConstraints(pattern=r"^[0-9a-f]{64}$"), _Plain]
WordsDigest = Annotated[str, Strict(), StringConstraints(pattern=r"^[0-9a-f]{64}$"), _Plain]  # words_digest
RequestIdText = Annotated[
    str, Strict(), StringConstraints(pattern=rf"^[A-Za-z0-9._:-]{{1,{MAX_REQUEST_ID_CHARS}}}$"), _Plain
]
ToolName = Annotated[str, Strict(), StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$"), _Plain]
Scope = Annotated[
    str, Strict(), StringConstraints(pattern=rf"^{re.escape(SCOPE_PREFIX)}[A-Za-z0-9._-]{{1,100}}$"), _Plain
]
AccessToken = Annotated[
    str, Strict(), StringConstraints(max_length=MAX_ACCESS_TOKEN_CHARS, pattern=r"^[\x21-\x7e]+$"), _Plain
]
ServerId = Annotated[str, Strict(), StringConstraints(pattern=rf"^[A-Za-z0-9._:-]{{1,{MAX_SERVER_ID_CHARS}}}$"), _Plain]
Feature = Annotated[str, Strict(), StringConstraints(pattern=r"^[a-z][a-z0-9_.-]{0,39}$"), _Plain]
ProtocolNumber = Annotated[int, Strict(), Field(ge=0, le=2**31 - 1)]
Seconds = Annotated[float, Strict(), Field(ge=0, le=MAX_WAIT_S, allow_inf_nan=False)]
Lifetime = Annotated[int, Strict(), Field(ge=0, le=MAX_EXPIRES_IN)]
Flag = Annotated[bool, Strict()]


# --------------------------------------------------------------------------------------------------
# Message types, declared as data and checked by pydantic: on construction (the server finds a bad
# question before it sends it; the app a bad answer before it answers) and in `from_json` (both ends
# check what they receive). `to_json` gives the wire object. A failure is InvalidParams naming the
# field and the rule it broke, never the value (pydantic's own words never quote it; the input is
# also hidden from its error's text).

_T = TypeVar("_T")
_CONFIG: Final = ConfigDict(extra="ignore", hide_input_in_errors=True, defer_build=True)


#: pydantic's type errors in JSON's words (a tuple is a list on the wire).
_JSON_TYPES: Final = {
    "dataclass_type": "an object",
    "dataclass_exact_type": "an object",
    "tuple_type": "a list",
    "string_type": "a string",
    "int_type": "a whole number",
    "float_type": "a number",
    "bool_type": "true or false",
}


def _complaint(err: ValidationError, where: str, names: Sequence[str] = ()) -> str:
    """The first problem, as `where.field[i].field: what is wrong.` (a positional argument by its name)."""
    first = err.errors(include_url=False, include_input=False, include_context=False)[0]
    loc = list(first["loc"])
    if loc and isinstance(loc[0], int) and names and not where:  # constructed with positional arguments
        loc[0] = names[loc[0]] if loc[0] < len(names) else loc[0]
    path = where
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    path = path or "the message"
    kind = first["type"]
    if kind == "missing":
        return f"{path} is missing."
    if kind in _JSON_TYPES:
        return f"{path} must be {_JSON_TYPES[kind]}."
    return f"{path}: {first['msg'].removeprefix('Value error, ')}."


@dataclass_transform(frozen_default=True, field_specifiers=(Field, dataclasses.field))
def _message(cls: type[_T]) -> type[_T]:
    """A frozen pydantic dataclass with the protocol's configuration."""
    return cast("type[_T]", pydantic_dataclass(cls, frozen=True, config=_CONFIG))


class _Checked(type):
    """Constructing a message checks it, and a failure is InvalidParams (never a pydantic error)."""

    def __call__(cls: type[_T], *args: Any, **kwargs: Any) -> _T:
        try:
            made: _T = super().__call__(*args, **kwargs)  # type: ignore[misc]
        except ValidationError as err:
            names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
            raise InvalidParams(_complaint(err, "", names)) from None
        return made


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def _adapter(cls: type[Any]) -> TypeAdapter[Any]:
    """The validator of a message type, built on its first message (off the app's start-up)."""
    if cls not in _ADAPTERS:
        _ADAPTERS[cls] = TypeAdapter(cls)
    return _ADAPTERS[cls]


class _Wire(metaclass=_Checked):
    """What every message type shares: checked when made, and read from the wire."""

    #: How errors name the message: "params" (a request's) or "result" (an answer's).
    WHERE: ClassVar[str] = "params"
    #: Fields the wire must carry although the constructor has a default for them.
    WIRE_REQUIRED: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def from_json(cls, obj: object, error: type[InvalidParams] = InvalidParams) -> Self:
        """The message in `obj` (parsed JSON), checked; raises `error` naming the field that is wrong."""
        if not isinstance(obj, dict):
            raise error(f"{cls.WHERE} must be an object, not {_describe(obj)}.")
        missing = [name for name in cls.WIRE_REQUIRED if name not in obj]
        if missing:
            raise error(f"{cls.WHERE}.{missing[0]} is missing.")
        try:
            parsed: Self = _adapter(cls).validate_python(obj, context=_FROM_WIRE)
        except ValidationError as err:
            raise error(_complaint(err, cls.WHERE)) from None
        return parsed


@_message
class ClientInfo(_Wire):
    """Who says it asked (self-reported by the MCP client; the dialog says "says it is")."""

    name: ClientText
    version: ClientText = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version}


@_message
class HelloParams(_Wire):
    """`hello` params: the protocol the caller speaks, and who it is (for the app's log only)."""

    WIRE_REQUIRED = ("protocol",)

    protocol: ProtocolNumber = PROTOCOL_VERSION
    app: Name = ""
    version: Name = ""
    #: Additive: who started this server, as it says (the MCP client's name and version after `initialize`);
    #: the app's step "Claude Desktop started SearchDesk" is true only from this. An older server leaves it out.
    client: Annotated[ClientInfo | None, BeforeValidator(_present)] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"protocol": self.protocol, "app": self.app, "version": self.version}
        if self.client is not None:
            out["client"] = self.client.to_json()
        return out


@_message
class Hello(_Wire):
    """`hello` result. `features` lists what this app enforces (an older app sends none)."""

    WHERE = "result"
    WIRE_REQUIRED = ("protocol",)

    app: AppName
    version: Name
    protocol: ProtocolNumber = PROTOCOL_VERSION
    features: Annotated[tuple[Feature, ...], Field(max_length=MAX_FEATURES)] = ()

    def to_json(self) -> dict[str, Any]:
        return {"app": self.app, "version": self.version, "protocol": self.protocol, "features": list(self.features)}

    @property
    def binds_requester(self) -> bool:
        return FEATURE_REQUESTER in self.features

    @property
    def serves_accounts(self) -> bool:
        """The app lists its accounts and hands out a token for the one named (an older app: one account)."""
        return FEATURE_ACCOUNTS in self.features


@_message
class Requester(_Wire):
    """Who asks: one server process (a random id), the Google account it acts as, and whether it runs
    the demo. Self-reported: it keeps an honest second server from collecting another's yes; it does
    not stop a hostile program of the same user (docs/security.md). Every field is required."""

    server: ServerId
    account: Account | None
    demo: Flag

    def to_json(self) -> dict[str, Any]:
        return {"server": self.server, "account": self.account, "demo": self.demo}


#: A request's optional `requester`: absent (an older server) or complete, never null.
OptionalRequester = Annotated[Requester | None, BeforeValidator(_present)]


@_message
class TokenParams(_Wire):
    """`credentials/token` params: full scope URLs; `force_refresh` after a 401 mints a new token.
    `account` names the Google account (an app that serves accounts); absent: the default account."""

    scopes: Annotated[tuple[Scope, ...], Field(min_length=1, max_length=MAX_SCOPES)]
    force_refresh: Flag = False
    requester: OptionalRequester = None
    account: Annotated[Account | None, BeforeValidator(_present)] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scopes": list(self.scopes), "force_refresh": self.force_refresh}
        if self.requester is not None:
            out["requester"] = self.requester.to_json()
        if self.account is not None:
            out["account"] = self.account
        return out


@_message
class Token(_Wire):
    """`credentials/token` result: a short-lived access token (the refresh token never leaves the app)."""

    WHERE = "result"

    access_token: AccessToken = dataclasses.field(repr=False)
    expires_in: Lifetime
    kind: TokenKind
    account: AnyAccount

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


@_message
class AccountsParams(_Wire):
    """`accounts/list` params: who asks (a demo app refuses a real server, as for tokens)."""

    requester: OptionalRequester = None

    def to_json(self) -> dict[str, Any]:
        return {} if self.requester is None else {"requester": self.requester.to_json()}


@_message
class AccountInfo(_Wire):
    """One account Claude may use: its e-mail address, its kind, whether it is the default, and the
    Google Cloud project its calls are counted against (an OAuth client's or a service account's;
    "" when unknown). Never a token."""

    account: Account
    kind: TokenKind
    default: Flag
    quota_project: QuotaProject = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"account": self.account, "kind": self.kind, "default": self.default}
        if self.quota_project:
            out["quota_project"] = self.quota_project
        return out


@_message
class AccountList(_Wire):
    """`accounts/list` result: the accounts Claude may use, in the app's order, at most one default."""

    WHERE = "result"

    accounts: Annotated[tuple[AccountInfo, ...], Field(max_length=MAX_ACCOUNTS)]

    @model_validator(mode="after")
    def _one_each(self) -> Self:
        if sum(a.default for a in self.accounts) > 1:
            raise ValueError("names more than one default account")
        if len({a.account.casefold() for a in self.accounts}) != len(self.accounts):
            raise ValueError("names an account twice")
        return self

    def to_json(self) -> dict[str, Any]:
        return {"accounts": [a.to_json() for a in self.accounts]}


@_message
class Value(_Wire):
    """One caller- or Google-supplied value shown under the question, already cleaned by the server.

    `value` is what the question's words hold (a long one shortened, `text.shorten`: the digest of the words
    binds it); `whole` is the same value not shortened, cleaned and escaped exactly as `value` is, sent only
    when it differs (additive: an older app ignores it and shows `value`; an older server never sends it).
    """

    label: Label
    value: ValueText
    whole: Annotated[WholeText | None, BeforeValidator(_present)] = None

    @property
    def full(self) -> str:
        """The value as the app's dialog shows it: whole."""
        return self.value if self.whole is None else self.whole

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "value": self.value}
        if self.whole is not None:
            out["whole"] = self.whole
        return out


@_message
class NotificationForm(_Wire):
    """`approval/request` `notification`: the question's notification form, written by the server beside the
    full question from the same facts (`approval.question`), sized for a Windows toast; the app adds only its
    origin label and offers Approve where the form fits what the system shows. Additive: an older app ignores
    it, an older server never sends it. `subtitle` "" is left out on the wire. `show_question`, when present,
    is why Approve is not offered whatever the system shows (a warning the form cannot carry, several owner
    changes): the notification then offers only "Show the question" and Deny, and says this."""

    title: NoteTitle
    body: NoteBody
    subtitle: OptionalNoteText = ""
    show_question: OptionalNoteText = ""

    def to_json(self) -> dict[str, str]:
        out = {"title": self.title}
        if self.subtitle:
            out["subtitle"] = self.subtitle
        out["body"] = self.body
        if self.show_question:
            out["show_question"] = self.show_question
        return out


@_message
class ApprovalRequest(_Wire):
    """`approval/request` params: the server's question, bound to `fingerprint`, waited on for `wait_s`."""

    request_id: RequestIdText
    tool: ToolName
    what: Sentence
    consequence: Sentence
    values: Annotated[tuple[Value, ...], Field(max_length=MAX_VALUES)]
    fingerprint: Fingerprint
    client: ClientInfo
    wait_s: Seconds
    requester: OptionalRequester = None  # None: an older server, which does not send it
    notification: Annotated[NotificationForm | None, BeforeValidator(_present)] = None  # None: an older server

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The values as (label, value), the form the question's words are laid out and bound in."""
        return tuple((v.label, v.value) for v in self.values)

    @property
    def digest(self) -> str:
        """The digest of the words this request carries (`words_digest`): what the app binds a yes to."""
        form = None if self.notification is None else self.notification.to_json()
        return words_digest(self.what, self.consequence, self.pairs, form)

    @model_validator(mode="after")
    def _fits_a_dialog(self) -> Self:
        size = question_bytes(self.what, self.consequence, self.values)
        if size > MAX_QUESTION_BYTES:
            raise ValueError(f"The question is {size} bytes; at most {MAX_QUESTION_BYTES} are allowed")
        return self

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
            **({} if self.notification is None else {"notification": self.notification.to_json()}),
        }


@_message
class ApprovalResult(_Wire):
    """`approval/request` result; `pending` means the dialog is still open (ask `approval/status` later)."""

    WHERE = "result"

    decision: Decision
    fingerprint: Fingerprint
    #: Additive: where the person answered, on an approve or a deny (an older app leaves it out).
    answered_in: Annotated[AnsweredIn | None, BeforeValidator(_present)] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"decision": self.decision, "fingerprint": self.fingerprint}
        if self.answered_in is not None:
            out["answered_in"] = self.answered_in
        return out


@_message
class StatusParams(_Wire):
    """`approval/status` params; an approve is returned only to the `requester` that asked, and with
    `digest` (additive: an older server leaves it out) only from a question whose words have that
    digest (`words_digest`): a yes to other words is never the answer to this call."""

    fingerprint: Fingerprint
    requester: OptionalRequester = None
    digest: Annotated[WordsDigest | None, BeforeValidator(_present)] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fingerprint": self.fingerprint}
        if self.requester is not None:
            out["requester"] = self.requester.to_json()
        if self.digest is not None:
            out["digest"] = self.digest
        return out


@_message
class StatusResult(_Wire):
    """`approval/status` result; an `approve` returned here is consumed (the next status says `none`)."""

    WHERE = "result"

    decision: StatusDecision
    #: Additive, as on `ApprovalResult`.
    answered_in: Annotated[AnsweredIn | None, BeforeValidator(_present)] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"decision": self.decision}
        if self.answered_in is not None:
            out["answered_in"] = self.answered_in
        return out


@_message
class CancelParams(_Wire):
    """`approval/cancel` params."""

    request_id: RequestIdText

    def to_json(self) -> dict[str, Any]:
        return {"request_id": self.request_id}


@_message
class CancelResult(_Wire):
    """`approval/cancel` result: whether a question was open (or answered and unspent) and is now gone."""

    WHERE = "result"

    cancelled: Flag

    def to_json(self) -> dict[str, Any]:
        return {"cancelled": self.cancelled}


#: Each method's params type, for a listener's dispatch table.
PARAMS: Final[Mapping[str, type[_Wire]]] = {
    HELLO: HelloParams,
    TOKEN: TokenParams,
    APPROVAL_REQUEST: ApprovalRequest,
    APPROVAL_STATUS: StatusParams,
    APPROVAL_CANCEL: CancelParams,
    ACCOUNTS_LIST: AccountsParams,
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
    kind = PARAMS.get(request.method)
    if kind is None:
        raise ProtocolError(ErrorCode.METHOD_NOT_FOUND, "No such method in agent protocol 1.", request_id=request.id)
    try:
        return kind.from_json(request.params)
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
