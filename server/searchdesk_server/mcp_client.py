"""What the MCP client on the other end of a request declared about itself.

Read by the approval chain (may it ask through the client's own dialog?) and by describe_connection
(which reports the same facts); it lives below both, so a tool never imports the chain that guards it.
"""

from __future__ import annotations

from typing import Any

from .text import show_value


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
