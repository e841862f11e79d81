"""Window titles in one place, so the demo is labelled in every window and dialog the same way."""

from __future__ import annotations

APP = "SearchDesk"
DEMO_APP = "SearchDesk (Demo)"


def app_name(demo: bool) -> str:
    return DEMO_APP if demo else APP


def title(demo: bool, what: str = "") -> str:
    """``SearchDesk: what`` — or ``SearchDesk (Demo): what``: a person must never mistake the demo."""
    name = app_name(demo)
    return f"{name}: {what}" if what else name
