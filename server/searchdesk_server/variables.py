"""Every environment variable of SearchDesk's own, named once (`Var`), and how each plain one is read.

A variable's name is written only here: the rest of the server, the desktop app's Claude entry and
the `.mcpb` manifest import it (a test fails when one is written out elsewhere). A bad value raises
`ConfigError`, whose message names the variable and the accepted values and never quotes a secret;
`config.load` puts the values together into one frozen Config, and `credential_setting` reads the
credential. Stdlib only: this runs before anything else on the start-up path.
"""

from __future__ import annotations

import datetime
import os
import re
import sys
from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from . import deadlines
from .text.phrases import describe, minutes


class Var(StrEnum):
    """Every environment variable of SearchDesk's own, by its name (a contract: README and docs/ name
    them to users). Each is the string itself, so it serves as a key and in messages."""

    GSC_SERVICE_ACCOUNT_KEY = "GSC_SERVICE_ACCOUNT_KEY"
    GSC_SERVICE_ACCOUNT_KEY_FILE = "GSC_SERVICE_ACCOUNT_KEY_FILE"
    GSC_CLIENT_ID = "GSC_CLIENT_ID"
    GSC_CLIENT_SECRET = "GSC_CLIENT_SECRET"  # noqa: S105 (a variable's name)
    GSC_REFRESH_TOKEN = "GSC_REFRESH_TOKEN"  # noqa: S105 (a variable's name)
    GOOGLE_APPLICATION_CREDENTIALS = "GOOGLE_APPLICATION_CREDENTIALS"
    GSC_READ_ONLY = "GSC_READ_ONLY"
    GSC_ALLOW_TOOLS = "GSC_ALLOW_TOOLS"
    GSC_DENY_TOOLS = "GSC_DENY_TOOLS"
    GSC_SITE_URL = "GSC_SITE_URL"
    GSC_ALLOWED_SITES = "GSC_ALLOWED_SITES"
    GSC_BRAND_TERMS = "GSC_BRAND_TERMS"
    ELICITATION = "ELICITATION"
    MCP_DIAGNOSTICS = "MCP_DIAGNOSTICS"
    SEARCHDESK_DEMO = "SEARCHDESK_DEMO"
    SEARCHDESK_DEMO_TODAY = "SEARCHDESK_DEMO_TODAY"
    SEARCHDESK_APPROVAL_WAIT = "SEARCHDESK_APPROVAL_WAIT"
    SEARCHDESK_AGENT_SOCKET = "SEARCHDESK_AGENT_SOCKET"
    SEARCHDESK_ASK_IN_APP = "SEARCHDESK_ASK_IN_APP"
    #: Read by the desktop app's sign-in (desktop accounts/signin.py), not by the server.
    SEARCHDESK_OAUTH_CLIENT_FILE = "SEARCHDESK_OAUTH_CLIENT_FILE"


#: The variables the desktop app's settings write into Claude's entry for the server (its Claude
#: entry and the `.mcpb` manifest's user settings); anything else in that entry is left as it is.
SETTINGS_VARS: Final = (
    Var.GSC_READ_ONLY,
    Var.GSC_ALLOW_TOOLS,
    Var.GSC_SITE_URL,
    Var.GSC_ALLOWED_SITES,
    Var.GSC_BRAND_TERMS,
)

#: What every entry the desktop app writes for Claude carries, whatever the settings (its Claude entry,
#: the demo's included, and the `.mcpb` manifest): such a server asks in the client's dialog or the app,
#: or refuses — it never offers the two-call token, which would be a way around the person that needs
#: only the app to be out of reach (closed, or its socket file removed by a cleaner).
APP_ENTRY_ENV: Final[Mapping[str, str]] = MappingProxyType({Var.SEARCHDESK_ASK_IN_APP: "true"})

#: Windows: named pipes live under this prefix; a bare name in SEARCHDESK_AGENT_SOCKET gets it.
PIPE_PREFIX: Final = "\\\\.\\pipe\\"

OAUTH_VARS = (Var.GSC_CLIENT_ID, Var.GSC_CLIENT_SECRET, Var.GSC_REFRESH_TOKEN)
CREDENTIAL_VARS = (Var.GSC_SERVICE_ACCOUNT_KEY, Var.GSC_SERVICE_ACCOUNT_KEY_FILE, *OAUTH_VARS)
TRUE_WORDS = ("true", "1", "yes")
FALSE_WORDS = ("false", "0", "no")
WAIT_RANGE = (1, deadlines.APPROVAL_WAIT_MOST)
DEFAULT_APPROVAL_WAIT = deadlines.APPROVAL_WAIT_DEFAULT


class ConfigError(Exception):
    """A setting the server cannot start with; the message names the variable and the fix."""


# --- small parsers ---------------------------------------------------------------------------


def parse_bool(env: Mapping[str, str], name: str) -> bool:
    raw = env.get(name, "").strip().lower()
    if raw == "":
        return False
    if raw in TRUE_WORDS:
        return True
    if raw in FALSE_WORDS:
        return False
    raise ConfigError(
        f"{name} is {describe(env[name])}; use one of true/false, 1/0, yes/no (any case), or leave it unset."
    )


def parse_elicitation(env: Mapping[str, str]) -> bool:
    name = Var.ELICITATION
    raw = env.get(name, "").strip().lower()
    if raw in ("", "true"):
        return True
    if raw == "false":
        return False
    raise ConfigError(f"{name} is {describe(env[name])}; use true or false (any case).")


def parse_wait(env: Mapping[str, str]) -> int:
    name = Var.SEARCHDESK_APPROVAL_WAIT
    raw = env.get(name, "").strip()
    if raw == "":
        return DEFAULT_APPROVAL_WAIT
    lo, hi = WAIT_RANGE
    if raw.isdigit() and lo <= int(raw) <= hi:
        return int(raw)
    raise ConfigError(
        f"{name} is {describe(env[name])}; "
        f"use whole seconds from {lo} to {hi} "
        f"(clients give up on a call after about {minutes(deadlines.CLIENT_WAIT_SECONDS)})."
    )


_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def parse_today(env: Mapping[str, str]) -> datetime.date | None:
    """A pinned day written exactly YYYY-MM-DD (not the other forms ISO 8601 allows), or None."""
    name = Var.SEARCHDESK_DEMO_TODAY
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        if _ISO_DAY.fullmatch(raw):
            return datetime.date.fromisoformat(raw)
    except ValueError:
        pass
    raise ConfigError(f"{name} is {describe(env[name])}; use a real date written YYYY-MM-DD, or unset it.")


def agent_socket_setting(env: Mapping[str, str]) -> str | None:
    """SEARCHDESK_AGENT_SOCKET resolved: on Windows a pipe name (a bare one gets the pipe prefix),
    elsewhere a path with `~` expanded, made absolute. None when unset (the default place)."""
    raw = env.get(Var.SEARCHDESK_AGENT_SOCKET, "").strip()
    if not raw:
        return None
    if sys.platform == "win32":
        return raw if raw.startswith(PIPE_PREFIX) else PIPE_PREFIX + raw
    return os.path.abspath(os.path.expanduser(raw))
