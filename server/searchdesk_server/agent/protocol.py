"""The agent socket's protocol: one definition for the server (client) and the desktop app (listener).

Two programs written separately drift; this module is the single place where the methods live. It
opens with `METHODS`, the table both ends and the conformance suite key on: for every method the
classes of its params and result messages, the errors it can answer and the `hello` feature a peer
must announce before it is used. The table names the classes themselves (as the MCP python-sdk's
`types/methods.py` does), and each entry is typed by them (`MethodSpec[P, R]`): the server's client
returns the result class of the method it calls, and a listener's handler takes its params class,
both checked by mypy. Then what each error code means, the key an answer is bound to, and reading a
request's params.

The messages themselves are `messages`; the framing under them (newline-delimited JSON-RPC 2.0,
UTF-8, at most 64 KiB a message including its newline; the stable error codes) is `framing`; the
plumbing every message shares (checks, `from_json`, the one `to_json`) is `wire`. Their names are
re-exported here, so a user of the protocol imports one module. No Qt and no asyncio.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Generic, TypeVar

from ..text.display import is_plain_text as is_plain_text
from ..text.phrases import minutes as minutes
from .framing import MAX_ID_CHARS as MAX_ID_CHARS
from .framing import MAX_MESSAGE_BYTES as MAX_MESSAGE_BYTES
from .framing import AgentError as AgentError
from .framing import ErrorCode as ErrorCode
from .framing import InvalidParams as InvalidParams
from .framing import LineBuffer as LineBuffer
from .framing import ProtocolError as ProtocolError
from .framing import Request as Request
from .framing import RequestId as RequestId
from .framing import Response as Response
from .framing import RpcError as RpcError
from .framing import decode as decode
from .framing import encode as encode
from .framing import encode_error as encode_error
from .framing import encode_request as encode_request
from .framing import encode_result as encode_result
from .framing import parse_request as parse_request
from .framing import parse_response as parse_response
from .messages import FEATURE_ACCOUNTS as FEATURE_ACCOUNTS
from .messages import FEATURE_REQUESTER as FEATURE_REQUESTER
from .messages import FEATURES as FEATURES
from .messages import MAX_ACCESS_TOKEN_CHARS as MAX_ACCESS_TOKEN_CHARS
from .messages import MAX_ACCOUNT_CHARS as MAX_ACCOUNT_CHARS
from .messages import MAX_ACCOUNTS as MAX_ACCOUNTS
from .messages import MAX_CLIENT_CHARS as MAX_CLIENT_CHARS
from .messages import MAX_EXPIRES_IN as MAX_EXPIRES_IN
from .messages import MAX_FEATURES as MAX_FEATURES
from .messages import MAX_LABEL_CHARS as MAX_LABEL_CHARS
from .messages import MAX_NAME_CHARS as MAX_NAME_CHARS
from .messages import MAX_NOTE_BODY_CHARS as MAX_NOTE_BODY_CHARS
from .messages import MAX_NOTE_LINES as MAX_NOTE_LINES
from .messages import MAX_NOTE_TITLE_CHARS as MAX_NOTE_TITLE_CHARS
from .messages import MAX_QUESTION_BYTES as MAX_QUESTION_BYTES
from .messages import MAX_QUOTA_PROJECT_CHARS as MAX_QUOTA_PROJECT_CHARS
from .messages import MAX_REQUEST_ID_CHARS as MAX_REQUEST_ID_CHARS
from .messages import MAX_SCOPES as MAX_SCOPES
from .messages import MAX_SENTENCE_CHARS as MAX_SENTENCE_CHARS
from .messages import MAX_SERVER_ID_CHARS as MAX_SERVER_ID_CHARS
from .messages import MAX_VALUE_CHARS as MAX_VALUE_CHARS
from .messages import MAX_VALUES as MAX_VALUES
from .messages import MAX_WAIT_S as MAX_WAIT_S
from .messages import PROTOCOL_VERSION as PROTOCOL_VERSION
from .messages import QUESTION_OPEN_S as QUESTION_OPEN_S
from .messages import SCOPE_PREFIX as SCOPE_PREFIX
from .messages import TOKEN_LIFETIME_S as TOKEN_LIFETIME_S
from .messages import AccessToken as AccessToken
from .messages import Account as Account
from .messages import AccountInfo as AccountInfo
from .messages import AccountList as AccountList
from .messages import AccountsParams as AccountsParams
from .messages import AnsweredIn as AnsweredIn
from .messages import AnyAccount as AnyAccount
from .messages import AppName as AppName
from .messages import ApprovalRequest as ApprovalRequest
from .messages import ApprovalResult as ApprovalResult
from .messages import CancelParams as CancelParams
from .messages import CancelResult as CancelResult
from .messages import ClientInfo as ClientInfo
from .messages import ClientText as ClientText
from .messages import Decision as Decision
from .messages import Feature as Feature
from .messages import Fingerprint as Fingerprint
from .messages import Flag as Flag
from .messages import Hello as Hello
from .messages import HelloParams as HelloParams
from .messages import Label as Label
from .messages import Lifetime as Lifetime
from .messages import Message as Message
from .messages import Name as Name
from .messages import NoteBody as NoteBody
from .messages import NoteTitle as NoteTitle
from .messages import NotificationForm as NotificationForm
from .messages import OptionalNoteText as OptionalNoteText
from .messages import OptionalRequester as OptionalRequester
from .messages import ProtocolNumber as ProtocolNumber
from .messages import QuotaProject as QuotaProject
from .messages import Requester as Requester
from .messages import RequestIdText as RequestIdText
from .messages import Scope as Scope
from .messages import Seconds as Seconds
from .messages import Sentence as Sentence
from .messages import ServerId as ServerId
from .messages import StatusDecision as StatusDecision
from .messages import StatusParams as StatusParams
from .messages import StatusResult as StatusResult
from .messages import Token as Token
from .messages import TokenKind as TokenKind
from .messages import TokenParams as TokenParams
from .messages import ToolName as ToolName
from .messages import Value as Value
from .messages import ValueText as ValueText
from .messages import WholeText as WholeText
from .messages import WordsDigest as WordsDigest
from .messages import canonical_json as canonical_json
from .messages import client_project as client_project
from .messages import fingerprint as fingerprint
from .messages import question_bytes as question_bytes
from .messages import same_account as same_account
from .messages import words_digest as words_digest

P = TypeVar("P", bound=Message)
R = TypeVar("R", bound=Message)

# --------------------------------------------------------------------------------------------------
# The methods: the one table of what the socket offers

HELLO: Final = "hello"
TOKEN: Final = "credentials/token"  # noqa: S105  (a method name, not a secret)
APPROVAL_REQUEST: Final = "approval/request"
APPROVAL_STATUS: Final = "approval/status"
APPROVAL_CANCEL: Final = "approval/cancel"
ACCOUNTS_LIST: Final = "accounts/list"


@dataclass(frozen=True, kw_only=True)
class MethodSpec(Generic[P, R]):
    """One method of the socket: its `name` on the wire, the classes of its `params` and `result`
    messages, the codes it answers besides `ANY_METHOD_ERRORS` (`errors`), and what the app must list
    in `hello`'s `features` before a server uses it (`feature`; None: every app of this protocol
    serves it). Typed by its two classes, so whoever holds a spec holds their types too."""

    name: str
    params: type[P]
    result: type[R]
    errors: tuple[ErrorCode, ...] = ()
    feature: str | None = None

    def offered_by(self, hello: Hello) -> bool:
        """Whether the app that said `hello` serves this method: it lists the feature, or none is needed."""
        return self.feature is None or self.feature in hello.features


HELLO_METHOD: Final = MethodSpec(name=HELLO, params=HelloParams, result=Hello, errors=(ErrorCode.PROTOCOL_MISMATCH,))
TOKEN_METHOD: Final = MethodSpec(
    name=TOKEN,
    params=TokenParams,
    result=Token,
    errors=(
        ErrorCode.SIGNED_OUT,
        ErrorCode.SCOPE_NOT_GRANTED,
        ErrorCode.REFRESH_FAILED,
        ErrorCode.KEYRING_LOCKED,
        ErrorCode.UNKNOWN_ACCOUNT,
        ErrorCode.DEMO_APP,
    ),
)
APPROVAL_REQUEST_METHOD: Final = MethodSpec(
    name=APPROVAL_REQUEST,
    params=ApprovalRequest,
    result=ApprovalResult,
    errors=(ErrorCode.QUEUE_FULL, ErrorCode.DEMO_APP, ErrorCode.CANCELLED),
    feature=FEATURE_REQUESTER,
)
APPROVAL_STATUS_METHOD: Final = MethodSpec(
    name=APPROVAL_STATUS, params=StatusParams, result=StatusResult, feature=FEATURE_REQUESTER
)
APPROVAL_CANCEL_METHOD: Final = MethodSpec(name=APPROVAL_CANCEL, params=CancelParams, result=CancelResult)
ACCOUNTS_LIST_METHOD: Final = MethodSpec(
    name=ACCOUNTS_LIST,
    params=AccountsParams,
    result=AccountList,
    errors=(ErrorCode.DEMO_APP,),
    feature=FEATURE_ACCOUNTS,
)

#: Every method of agent protocol 1, by name (each entry typed above; looked up by name, any message).
#: The listener's dispatch, the server's client, the reference agent and the conformance suite key on
#: it: a method is added here (its two messages in `messages`) and handled by the app's listener; both
#: listeners check on import that they handle exactly these (`check_handlers`).
METHODS: Final[Mapping[str, MethodSpec[Any, Any]]] = MappingProxyType(
    {
        spec.name: spec
        for spec in (
            HELLO_METHOD,
            TOKEN_METHOD,
            APPROVAL_REQUEST_METHOD,
            APPROVAL_STATUS_METHOD,
            APPROVAL_CANCEL_METHOD,
            ACCOUNTS_LIST_METHOD,
        )
    }
)


#: What any request may be answered with, whatever its method: the framing's refusals, a params check,
#: a listener's failure or load.
ANY_METHOD_ERRORS: Final = (
    ErrorCode.PARSE_ERROR,
    ErrorCode.INVALID_REQUEST,
    ErrorCode.METHOD_NOT_FOUND,
    ErrorCode.INVALID_PARAMS,
    ErrorCode.INTERNAL_ERROR,
    ErrorCode.TOO_LARGE,
    ErrorCode.BUSY,
)


def check_handlers(listener: str, handled: Iterable[str]) -> None:
    """Fail (LookupError) unless `handled` names every method of `METHODS` and no other: a listener calls
    it on import, so a method added to the table without a handler stops that listener from loading."""
    names = set(handled)
    missing, unknown = sorted(set(METHODS) - names), sorted(names - set(METHODS))
    if missing or unknown:
        raise LookupError(f"{listener} has no handler for {missing}, or handles methods METHODS lacks: {unknown}")


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
# What an answer is bound to

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
# Reading a request's params


def parse_params(request: Request) -> Message:
    """Validate `request.params` as its method's params message; METHOD_NOT_FOUND / INVALID_PARAMS carry
    the request's id."""
    spec = METHODS.get(request.method)
    if spec is None:
        raise ProtocolError(ErrorCode.METHOD_NOT_FOUND, "No such method in agent protocol 1.", request_id=request.id)
    try:
        params: Message = spec.params.from_json(request.params)
        return params
    except InvalidParams as err:
        raise InvalidParams(str(err), request_id=request.id) from None
