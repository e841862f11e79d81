"""SearchDesk's entry in Claude Desktop's settings file, as this app writes it: the command that starts
the server and the variables its ``env`` carries. No file is read or written here (claude/config_file.py does).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchdesk_server import variables as server_variables
from searchdesk_server.variables import Var

SERVER_KEY = "searchdesk"
DEMO_VAR = Var.SEARCHDESK_DEMO
SOCKET_VAR = Var.SEARCHDESK_AGENT_SOCKET
#: Google credentials a server takes from its environment; an entry carrying any of them does not use
#: this app's sign-in (the server's own list, so the two cannot drift).
CREDENTIAL_VARS = (*server_variables.CREDENTIAL_VARS, Var.GOOGLE_APPLICATION_CREDENTIALS)
#: The variables the settings window owns; everything else in our entry's env is left as it is.
SETTINGS_VARS = server_variables.SETTINGS_VARS
#: What every entry this app writes carries, the demo's included (SEARCHDESK_ASK_IN_APP=true: such a
#: server asks in Claude's dialog or this app, or refuses; it never offers the two-call token).
APP_ENTRY_ENV = server_variables.APP_ENTRY_ENV


@dataclass(frozen=True)
class ServerSettings:
    """The choices that reach the server through the entry's ``env``."""

    read_only: bool = False
    groups: tuple[str, ...] = ()  # empty: every tool
    site_url: str = ""
    allowed_sites: tuple[str, ...] = ()
    #: Brand terms per property (report_brand_split's default), as the Settings window keeps them.
    brand_terms: tuple[tuple[str, tuple[str, ...]], ...] = ()
    demo: bool = False
    #: Where this app listens. Claude Desktop may start the server with a bare environment (no
    #: XDG_RUNTIME_DIR), in which the default path would differ; naming it keeps both ends together.
    agent_socket: str = ""

    def env(self) -> dict[str, str]:
        env: dict[str, str] = {Var.GSC_READ_ONLY: "true" if self.read_only else "false", **APP_ENTRY_ENV}
        if self.groups:
            env[Var.GSC_ALLOW_TOOLS] = ",".join(self.groups)
        if self.site_url:
            env[Var.GSC_SITE_URL] = self.site_url
        if self.allowed_sites:
            env[Var.GSC_ALLOWED_SITES] = ",".join(self.allowed_sites)
        if self.brand_terms:
            env[Var.GSC_BRAND_TERMS] = json.dumps({site: list(terms) for site, terms in self.brand_terms})
        if self.demo:
            env[DEMO_VAR] = "true"
        if self.agent_socket:
            env[SOCKET_VAR] = self.agent_socket
        return env


@dataclass(frozen=True)
class ServerCommand:
    command: str
    args: tuple[str, ...] = ()

    def argv(self) -> list[str]:
        return [self.command, *self.args]


def server_command(
    *, frozen: bool | None = None, executable: str | None = None, platform: str | None = None
) -> ServerCommand:
    """The absolute command Claude Desktop should run: the server executable beside ours.

    Frozen (PyInstaller): both executables share one folder. In development: the venv's
    ``searchdesk-server`` script, else this interpreter with ``-m searchdesk_server``.
    """
    frozen = bool(getattr(sys, "frozen", False)) if frozen is None else frozen
    exe = Path(executable or sys.executable).absolute()
    win = (platform or sys.platform) == "win32"
    name = "searchdesk-server.exe" if win else "searchdesk-server"
    sibling = exe.parent / name
    if frozen or sibling.is_file():
        return ServerCommand(str(sibling))
    return ServerCommand(str(exe), ("-m", "searchdesk_server"))


def entry_for(command: ServerCommand, settings: ServerSettings) -> dict[str, Any]:
    return {"command": command.command, "args": list(command.args), "env": settings.env()}


def is_demo_entry(entry: Mapping[str, Any]) -> bool:
    env = entry.get("env")
    return isinstance(env, Mapping) and str(env.get(DEMO_VAR, "")).strip().lower() in ("true", "1", "yes")
