"""What Claude Desktop holds of SearchDesk right now: our entry in its settings file (claude/config_file.py)
and an installed SearchDesk extension (claude/extension.py), read together into one status. No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from . import config_file as cc
from . import extension


@dataclass(frozen=True)
class ClaudeStatus:
    check: cc.EntryCheck
    connected: int  # servers connected to this app right now
    extension: Path | None = None  # an installed SearchDesk extension (.mcpb) in Claude Desktop
    extension_version: str = ""  # the version its manifest names
    demo: bool = False  # this app runs the demo

    @property
    def extension_is_ours(self) -> bool:
        """The extension is this app's: this version, and never in the demo (an extension is always real)."""
        return self.extension is not None and not self.demo and self.extension_version == __version__

    @property
    def short(self) -> str:
        state = self.check.state
        if self.extension is not None and state is cc.EntryState.ABSENT:
            text = "Claude Desktop: added (extension)" if self.extension_is_ours else "Claude Desktop: needs attention"
        else:
            text = {
                cc.EntryState.ABSENT: "Claude Desktop: not added",
                cc.EntryState.OK: "Claude Desktop: added" + (" (demo)" if self.check.demo else ""),
                cc.EntryState.OTHER_MODE: "Claude Desktop: set up for "
                + ("the demo" if self.check.demo else "your real account"),
                cc.EntryState.OTHER_COPY: "Claude Desktop: needs repair",
                cc.EntryState.BROKEN: "Claude Desktop: needs repair",
                cc.EntryState.OWN_CREDENTIALS: "Claude Desktop: uses other Google credentials",
                cc.EntryState.INVALID_FILE: "Claude Desktop: settings file unreadable",
            }[state]
        if self.connected:
            text += f", {self.connected} connected now"
        return text


def read_status(
    claude_path: Path, server: cc.ServerCommand, agent_socket: str, *, connected: int, demo: bool
) -> ClaudeStatus:
    """Claude Desktop's settings entry checked against this app's server, and its installed extension."""
    check = cc.check(claude_path, server, agent_socket, demo=demo)
    installed = extension.installed_extension(claude_path)
    version = extension.extension_version(installed) if installed is not None else ""
    return ClaudeStatus(check, connected, installed, version, demo)
