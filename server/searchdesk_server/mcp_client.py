"""What the MCP client on the other end of a request declared about itself.

Read by the approval chain (may it ask through the client's own dialog?) and by describe_connection
(which reports the same facts); it lives below both, so a tool never imports the chain that guards it.
"""

from __future__ import annotations

from typing import Any

from .text.display import show_value


def declared_form(ctx: Any) -> bool:
    """Did this request's client declare form elicitation? (A bare `elicitation: {}` means form.)"""
    caps = ctx.session.client_capabilities
    el = getattr(caps, "elicitation", None) if caps is not None else None
    if el is None:
        return False
    return el.form is not None or el.url is None


def client_info(ctx: Any) -> tuple[str, str]:
    """The client's self-reported name and version, shown safely (cleaned like any value)."""
    params = ctx.session.client_params
    info = getattr(params, "client_info", None)
    if info is None:
        return "", ""
    return show_value(str(info.name)[:2048]), show_value(str(info.version)[:2048])


#: MCP clients whose self-reported names a person would not recognise.
KNOWN_CLIENTS = {"claude-ai": "Claude Desktop", "claude-code": "Claude Code"}
#: Names SDKs use when the program gives none of its own.
UNNAMED_CLIENTS = frozenset({"", "mcp"})


def describe_client(name: str, version: str = "") -> str:
    """Who asked, in the one wording the dialog, the notification and Activity all use: only what the
    program says it is, a known name said plainly (claude-ai: Claude Desktop), an SDK's default name as
    no name at all."""
    if name.strip().casefold() in UNNAMED_CLIENTS:
        return "a program that did not give its name"
    plain = KNOWN_CLIENTS.get(name.strip().casefold(), name)
    return f"a program that says it is {plain}" + (f" (version {version})" if version else "")
