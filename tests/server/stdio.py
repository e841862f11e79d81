"""Starting the real server as a stdio subprocess, the way Claude Desktop does."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client, StdioServerParameters

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODES = ("legacy", "2026-07-28")
_NO_AGENT = tempfile.mkdtemp(prefix="sd-none-")
DEMO_TODAY = "2026-11-20"


def server_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A minimal environment: no ambient credentials leak in from the machine running the tests."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "SEARCHDESK_DEMO_TODAY": DEMO_TODAY,
        # A private, empty folder: the desktop app is simply "not running" unless a test starts an agent.
        "SEARCHDESK_AGENT_SOCKET": os.path.join(_NO_AGENT, "agent.sock"),
    }
    if "XDG_DATA_HOME" in os.environ:
        env["XDG_DATA_HOME"] = os.environ["XDG_DATA_HOME"]
    env.update(extra or {})
    return env


def params(args: tuple[str, ...] = ("--demo",), env: Mapping[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "searchdesk_server", *args], env=server_env(env), cwd=REPO
    )


@asynccontextmanager
async def connect(
    mode: str = "legacy",
    args: tuple[str, ...] = ("--demo",),
    env: Mapping[str, str] | None = None,
    **client_kw: Any,
) -> AsyncIterator[Client]:
    async with Client(params(args, env), mode=mode, read_timeout_seconds=60, **client_kw) as client:  # type: ignore[arg-type]
        yield client


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
