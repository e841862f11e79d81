"""What the reference agent is scripted to answer: its token or accounts, how a question is answered.

A test passes a `Script` to `ReferenceAgent` (or to `AgentProcess` as JSON: `Script.to_json` /
`Script.from_json`) and changes it while the agent runs (`set_script`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from searchdesk_server.agent import protocol


@dataclass
class TokenScript:
    """What `credentials/token` hands out. `error`: signed_out | refresh_failed | keyring_locked | internal."""

    access_token: str = "ya29.reference-token"
    refreshed_token: str = "ya29.reference-token-refreshed"
    expires_in: int = 3599
    kind: str = "oauth"
    account: str = "owner@example.com"
    granted_scopes: list[str] | None = None  # None: every scope is granted
    error: str | None = None
    refresh_error: str | None = None  # only when force_refresh is set


@dataclass
class AccountScript:
    """One of several accounts (Script.accounts): its e-mail, kind, token, whether it is the default, and
    `error` (as TokenScript's) for every token asked for it."""

    account: str
    access_token: str = "ya29.reference-token"
    kind: str = "oauth"
    default: bool = False
    error: str | None = None
    quota_project: str = ""


@dataclass
class ApprovalScript:
    """How a new dialog is answered: approve | deny | pending (never, unless a test answers), after `delay` s."""

    decision: str = "pending"
    delay: float = 0.0


@dataclass
class Script:
    token: TokenScript = field(default_factory=TokenScript)
    approval: ApprovalScript = field(default_factory=ApprovalScript)
    keep_s: float = 300.0
    drop: dict[str, int] = field(default_factory=dict)  # method -> drop the connection on its next N requests
    hello_protocol: int = protocol.PROTOCOL_VERSION  # what hello claims (to test the client's mismatch check)
    features: list[str] = field(default_factory=lambda: list(protocol.FEATURES))  # [] acts as an older app
    demo: bool = False  # act as the demo app: refuse real servers (DEMO_APP)
    #: Several accounts (the first marked default, or the first, is the default); None: the one of `token`.
    accounts: list[AccountScript] | None = None

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Script:
        obj = dict(obj)
        accounts = obj.pop("accounts", None)
        return cls(
            token=TokenScript(**obj.pop("token", {})),
            approval=ApprovalScript(**obj.pop("approval", {})),
            accounts=None if accounts is None else [AccountScript(**a) for a in accounts],
            **obj,
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def account_list(self) -> list[protocol.AccountInfo]:
        """What `accounts/list` answers: the scripted accounts, or the one of `token` (none when signed out)."""
        if self.accounts is None:
            t = self.token
            if t.error == "signed_out" or not t.account:
                return []
            return [protocol.AccountInfo(t.account, t.kind, default=True)]  # type: ignore[arg-type]
        default = next((a for a in self.accounts if a.default), self.accounts[0] if self.accounts else None)
        return [
            protocol.AccountInfo(a.account, a.kind, default=a is default, quota_project=a.quota_project)  # type: ignore[arg-type]
            for a in self.accounts
        ]

    def account_for(self, name: str | None) -> AccountScript | None:
        """The scripted account a token request names (None: the default); None when it names no such one."""
        if self.accounts is None:
            return None
        listed = self.account_list()
        wanted = next(
            (i.account for i in listed if (i.default if name is None else protocol.same_account(i.account, name))), None
        )
        return next((a for a in self.accounts if a.account == wanted), None)
