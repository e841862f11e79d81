"""`describe_connection` (MCP_DIAGNOSTICS=true): what this server knows about this request and
how a destructive call would reach a person right now. Never a credential value."""

from __future__ import annotations

from typing import Any

from ..mcp_client import client_info, declared_form
from ..result import Output
from ..runtime import Call


async def _app_state(call: Call) -> tuple[str, str]:
    """("ok" | "old" | "absent" | "unusable", how the app is, in words)."""
    from ..agent.client import AgentUnavailable
    from ..agent.protocol import AgentError

    try:
        hello = await call.runtime.agent().app_hello()
    except AgentUnavailable:
        return "absent", "not running"
    except AgentError as exc:
        return "unusable", f"running but not usable ({type(exc).__name__})"
    if not hello.binds_requester:
        return "old", f"running ({hello.app} {hello.version}), too old to tie answers to this server"
    return "ok", f"running ({hello.app} {hello.version})"


async def _accounts(call: Call) -> tuple[list[dict[str, Any]], str]:
    """The Google accounts Claude may use (e-mails and kinds, never a token), and them in words."""
    from ..account_routing import KIND_WORDS
    from ..google.errors import GoogleError

    try:
        accounts = await call.runtime.directory.accounts()
    except GoogleError:
        return [], "not known now (the SearchDesk app could not be asked)"
    if not accounts:
        return [], "none (sign in with Google in the SearchDesk app)"
    words = [
        f"{a.label} ({KIND_WORDS.get(a.kind, a.kind)}{', default' if a.default and len(accounts) > 1 else ''})"
        for a in accounts
    ]
    return [a.describe() for a in accounts], ", ".join(words)


async def describe_connection(call: Call) -> Output:
    cfg = call.config
    ctx: Any = call.ctx
    protocol = ctx.session.protocol_version if ctx is not None else "unknown"
    form = declared_form(ctx) if ctx is not None else False
    name, version = client_info(ctx) if ctx is not None else ("unknown", "")
    state, app = await _app_state(call)
    accounts, accounts_text = await _accounts(call)
    if cfg.elicitation and form:
        path = "the client's own dialog (it declared MCP elicitation); if it cancels, the SearchDesk app's dialog"
    elif state == "ok":
        why = "ELICITATION=false" if not cfg.elicitation else "this client did not declare MCP elicitation"
        path = f"the SearchDesk app's dialog ({why})"
    elif state == "absent" and not call.runtime.token_possible:
        path = "nothing: a destructive call is refused until the SearchDesk app can be reached (no two-call token here)"
    elif state == "absent":
        path = (
            "the two-call token: nobody can be asked ("
            + ("ELICITATION=false" if not cfg.elicitation else "no client dialog")
            + f", SearchDesk app {app})"
        )
    else:
        path = f"nothing: a destructive call is refused while the SearchDesk app is {app}"
    data: dict[str, Any] = {
        "protocol_version": protocol,
        "client": {"name": name, "version": version},
        "elicitation_declared": form,
        "elicitation_setting": cfg.elicitation,
        "desktop_app": app,
        "guarded_path": path,
        "credential": cfg.credential.kind,
        "accounts": accounts,
        "scopes": list(cfg.scopes),
        "read_only": cfg.read_only,
        "demo": cfg.demo,
        "tools": len(cfg.tools),
    }
    lines = [
        f"Protocol revision: {protocol}",
        f"Client (as it says): {name} {version}".rstrip(),
        f"Declared MCP elicitation (form): {'yes' if form else 'no'}; ELICITATION setting: {cfg.elicitation}",
        f"SearchDesk app: {app}",
        f"A destructive tool would ask through: {path}",
        f"Credentials: {cfg.credential.describe()}",
        f"Google accounts Claude may use: {accounts_text}",
        f"Scopes: {', '.join(cfg.scopes) or 'none'}",
        f"Read-only: {cfg.read_only}; demo: {cfg.demo}; tools: {len(cfg.tools)}",
    ]
    return Output("\n".join(lines), data, from_google=False)
