"""The agent socket's messages: every params and result of `protocol.METHODS`, declared as data.

Each message is a pydantic dataclass (`wire.Message`): both ends validate, the listener everything it
is sent, the client every result before trusting it. Here too are the kinds of value the fields hold,
each declared once with its bounds, and what the messages compute from their own fields (the digest of
a question's words, a question's size). The table that names these classes, the error codes' meanings
and the answer keys are `protocol`, which re-exports every name of this module: a user of the
protocol imports that one module.

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
from typing import Annotated, Any, Final, Literal, Self, TypeAlias

from pydantic import AfterValidator, BeforeValidator, Field, Strict, StringConstraints, model_validator

from .. import deadlines
from ..text.display import SHOWN_LIMIT, is_plain_text
from .framing import MAX_MESSAGE_BYTES
from .wire import Message as Message
from .wire import message, present

# --------------------------------------------------------------------------------------------------
# The features an app announces in `hello` (`Hello.features`); `protocol.METHODS` names the one a method needs

#: What an app announces in `hello` when it enforces it; a server needs "requester" before it asks.
FEATURE_REQUESTER: Final = "requester"
#: The app holds several Google accounts: `accounts/list`, and `account` in `credentials/token`.
FEATURE_ACCOUNTS: Final = "accounts"
FEATURES: Final = (FEATURE_REQUESTER, FEATURE_ACCOUNTS)

# --------------------------------------------------------------------------------------------------
# Bounds and times

PROTOCOL_VERSION: Final = 1

MAX_SCOPES: Final = 10
SCOPE_PREFIX: Final = "https://www.googleapis.com/auth/"
MAX_WAIT_S: Final = deadlines.APPROVAL_WAIT_MOST  # clients cancel a tool call after about a minute
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
QUESTION_OPEN_S: Final = deadlines.QUESTION_OPEN_SECONDS
#: How long a two-call confirm_token lives (only where nobody can be asked: docs/security.md).
TOKEN_LIFETIME_S: Final = deadlines.CONFIRM_TOKEN_SECONDS
MAX_QUESTION_BYTES: Final = 60 * 1024  # what, consequence and the values as a dialog lays them out
MAX_SERVER_ID_CHARS: Final = 64
MAX_NAME_CHARS: Final = 100  # the app's and server's name and version in hello
MAX_CLIENT_CHARS: Final = 240  # the MCP client's name and version, shown like any value (text.show_value)
MAX_REQUEST_ID_CHARS: Final = 128
MAX_ACCESS_TOKEN_CHARS: Final = 4096
MAX_ACCOUNT_CHARS: Final = 320
MAX_EXPIRES_IN: Final = 86_400

MAX_FEATURES: Final = 32
MAX_ACCOUNTS: Final = 100
MAX_QUOTA_PROJECT_CHARS: Final = 200

Decision: TypeAlias = Literal["approve", "deny", "pending"]
StatusDecision: TypeAlias = Literal["approve", "deny", "pending", "none"]
#: Where the person answered (additive on both answers): the app's dialog or its notification.
AnsweredIn: TypeAlias = Literal["dialog", "notification"]
TokenKind: TypeAlias = Literal["oauth", "service_account"]


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
# The messages, declared as data: `wire.Message` checks them when made and in `from_json`, and writes
# them (`to_json`); `OMIT_FOR_OLDER` names the additive fields left off the wire at their default.


@message
class ClientInfo(Message):
    """Who says it asked (self-reported by the MCP client; the dialog says "says it is")."""

    name: ClientText
    version: ClientText = ""


@message
class HelloParams(Message):
    """`hello` params: the protocol the caller speaks, and who it is (for the app's log only)."""

    WIRE_REQUIRED = ("protocol",)
    OMIT_FOR_OLDER = frozenset({"client"})

    protocol: ProtocolNumber = PROTOCOL_VERSION
    app: Name = ""
    version: Name = ""
    #: Additive: who started this server, as it says (the MCP client's name and version after `initialize`);
    #: the app's step "Claude Desktop started SearchDesk" is true only from this. An older server leaves it out.
    client: Annotated[ClientInfo | None, BeforeValidator(present)] = None


@message
class Hello(Message):
    """`hello` result. `features` lists what this app enforces (an older app sends none)."""

    WHERE = "result"
    WIRE_REQUIRED = ("protocol",)

    app: AppName
    version: Name
    protocol: ProtocolNumber = PROTOCOL_VERSION
    features: Annotated[tuple[Feature, ...], Field(max_length=MAX_FEATURES)] = ()

    @property
    def binds_requester(self) -> bool:
        return FEATURE_REQUESTER in self.features

    @property
    def serves_accounts(self) -> bool:
        """The app lists its accounts and hands out a token for the one named (an older app: one account)."""
        return FEATURE_ACCOUNTS in self.features


@message
class Requester(Message):
    """Who asks: one server process (a random id), the Google account it acts as, and whether it runs
    the demo. Self-reported: it keeps an honest second server from collecting another's yes; it does
    not stop a hostile program of the same user (docs/security.md). Every field is required."""

    server: ServerId
    account: Account | None
    demo: Flag


#: A request's optional `requester`: absent (an older server) or complete, never null.
OptionalRequester = Annotated[Requester | None, BeforeValidator(present)]


@message
class TokenParams(Message):
    """`credentials/token` params: full scope URLs; `force_refresh` after a 401 mints a new token.
    `account` names the Google account (an app that serves accounts); absent: the default account."""

    OMIT_FOR_OLDER = frozenset({"requester", "account"})

    scopes: Annotated[tuple[Scope, ...], Field(min_length=1, max_length=MAX_SCOPES)]
    force_refresh: Flag = False
    requester: OptionalRequester = None
    account: Annotated[Account | None, BeforeValidator(present)] = None


@message
class Token(Message):
    """`credentials/token` result: a short-lived access token (the refresh token never leaves the app)."""

    WHERE = "result"

    access_token: AccessToken = dataclasses.field(repr=False)
    expires_in: Lifetime
    kind: TokenKind
    account: AnyAccount


def client_project(client_id: str) -> str:
    """`quota_project` for an OAuth client: its id starts with its Google Cloud project's number
    (123456789012-abc.apps.googleusercontent.com); an id of another form stands for itself."""
    head = client_id.split("-", 1)[0]
    return head if head.isdigit() else client_id


def same_account(a: str | None, b: str | None) -> bool:
    """Google treats an e-mail address without regard to case; so do both ends of the socket."""
    return a is not None and b is not None and a.casefold() == b.casefold()


@message
class AccountsParams(Message):
    """`accounts/list` params: who asks (a demo app refuses a real server, as for tokens)."""

    OMIT_FOR_OLDER = frozenset({"requester"})

    requester: OptionalRequester = None


@message
class AccountInfo(Message):
    """One account Claude may use: its e-mail address, its kind, whether it is the default, and the
    Google Cloud project its calls are counted against (an OAuth client's or a service account's;
    "" when unknown). Never a token."""

    OMIT_FOR_OLDER = frozenset({"quota_project"})

    account: Account
    kind: TokenKind
    default: Flag
    quota_project: QuotaProject = ""


@message
class AccountList(Message):
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


@message
class Value(Message):
    """One caller- or Google-supplied value shown under the question, already cleaned by the server.

    `value` is what the question's words hold (a long one shortened, `text.shorten`: the digest of the words
    binds it); `whole` is the same value not shortened, cleaned and escaped exactly as `value` is, sent only
    when it differs (additive: an older app ignores it and shows `value`; an older server never sends it).
    """

    OMIT_FOR_OLDER = frozenset({"whole"})

    label: Label
    value: ValueText
    whole: Annotated[WholeText | None, BeforeValidator(present)] = None

    @property
    def full(self) -> str:
        """The value as the app's dialog shows it: whole."""
        return self.value if self.whole is None else self.whole


@message
class NotificationForm(Message):
    """`approval/request` `notification`: the question's notification form, written by the server beside the
    full question from the same facts (`approval.question`), sized for a Windows toast; the app adds only its
    origin label and offers Approve where the form fits what the system shows. Additive: an older app ignores
    it, an older server never sends it. `subtitle` "" is left out on the wire. `show_question`, when present,
    is why Approve is not offered whatever the system shows (a warning the form cannot carry, several owner
    changes): the notification then offers only "Show the question" and Deny, and says this. The fields
    are keyword-only so that their order is the wire's (title, subtitle, body, show_question)."""

    OMIT_FOR_OLDER = frozenset({"subtitle", "show_question"})

    _: dataclasses.KW_ONLY
    title: NoteTitle
    subtitle: OptionalNoteText = ""
    body: NoteBody
    show_question: OptionalNoteText = ""


@message
class ApprovalRequest(Message):
    """`approval/request` params: the server's question, bound to `fingerprint`, waited on for `wait_s`."""

    OMIT_FOR_OLDER = frozenset({"requester", "notification"})

    request_id: RequestIdText
    tool: ToolName
    what: Sentence
    consequence: Sentence
    values: Annotated[tuple[Value, ...], Field(max_length=MAX_VALUES)]
    fingerprint: Fingerprint
    client: ClientInfo
    wait_s: Seconds
    requester: OptionalRequester = None  # None: an older server, which does not send it
    notification: Annotated[NotificationForm | None, BeforeValidator(present)] = None  # None: an older server

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


@message
class ApprovalResult(Message):
    """`approval/request` result; `pending` means the dialog is still open (ask `approval/status` later)."""

    WHERE = "result"
    OMIT_FOR_OLDER = frozenset({"answered_in"})

    decision: Decision
    fingerprint: Fingerprint
    #: Additive: where the person answered, on an approve or a deny (an older app leaves it out).
    answered_in: Annotated[AnsweredIn | None, BeforeValidator(present)] = None


@message
class StatusParams(Message):
    """`approval/status` params; an approve is returned only to the `requester` that asked, and with
    `digest` (additive: an older server leaves it out) only from a question whose words have that
    digest (`words_digest`): a yes to other words is never the answer to this call."""

    OMIT_FOR_OLDER = frozenset({"requester", "digest"})

    fingerprint: Fingerprint
    requester: OptionalRequester = None
    digest: Annotated[WordsDigest | None, BeforeValidator(present)] = None


@message
class StatusResult(Message):
    """`approval/status` result; an `approve` returned here is consumed (the next status says `none`)."""

    WHERE = "result"
    OMIT_FOR_OLDER = frozenset({"answered_in"})

    decision: StatusDecision
    #: Additive, as on `ApprovalResult`.
    answered_in: Annotated[AnsweredIn | None, BeforeValidator(present)] = None


@message
class CancelParams(Message):
    """`approval/cancel` params."""

    request_id: RequestIdText


@message
class CancelResult(Message):
    """`approval/cancel` result: whether a question was open (or answered and unspent) and is now gone."""

    WHERE = "result"

    cancelled: Flag
