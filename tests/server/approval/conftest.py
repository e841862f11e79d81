"""The approval matrix's set-up: a real server subprocess talking to the fake Google over the
proxy path, the reference agent on the socket, and the fake's request log as the judge."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import ElicitResult

from searchdesk_server import catalogue
from searchdesk_server.demo.routes import ROUTES
from tests.agentref import ApprovalScript, Script
from tests.agentref.fixtures import agent_folder, agent_socket, reference_agent  # noqa: F401
from tests.fakegoogle import FakeGoogle
from tests.server.stdio import DEMO_TODAY, REPO

WWW = "https://www.example.com/"
SITEMAP = "https://www.example.com/old/sitemap.xml"

#: The guarded tools, as the catalogue says (the matrix runs for each).
GUARDED = tuple(t.name for t in catalogue.TOOLS if t.guarded)

#: Example arguments for each guarded tool, on the fake Google's data; everything else about a tool
#: comes from its catalogue entry (test_units checks every guarded tool has an entry here).
TARGETS: dict[str, dict[str, Any]] = {
    "delete_sitemap": {"site": WWW, "feedpath": SITEMAP},
    "delete_site": {"site": "https://blog.example.com/"},
    "unverify_site": {"site": WWW},
    "update_site_owners": {"site": WWW, "owners": ["demo.owner@example.com", "new.person@example.com"]},
}


def acted(fake: FakeGoogle, tool: str) -> int:
    """How many of `tool`'s own requests (its catalogue entry's Google method) reached Google."""
    route = next(r for r in ROUTES if r.id == catalogue.BY_NAME[tool].endpoint)
    return sum(
        1
        for r in fake.api_requests()
        if (r.method, r.host) == (route.method, route.host) and route.match(r.path.strip("/").split("/")) is not None
    )


@dataclass
class Elicitor:
    """A scripted client dialog that records every question it was shown."""

    action: str = "accept"
    content: dict[str, Any] | None = field(default_factory=lambda: {"confirm": True})
    error: bool = False
    seen: list[str] = field(default_factory=list)

    async def __call__(self, ctx: Any, params: Any) -> Any:
        self.seen.append(params.message)
        if self.error:
            from mcp_types import ErrorData

            return ErrorData(code=-32603, message="dialog failed")
        return ElicitResult(action=self.action, content=self.content if self.action == "accept" else None)


@pytest.fixture
def fake(fake_google: FakeGoogle) -> FakeGoogle:
    """The shared fake Google (tests/fakegoogle/plugin.py), under the short name these tests use."""
    return fake_google


def server_env(fake: FakeGoogle, socket: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "XDG_DATA_HOME": os.environ.get("XDG_DATA_HOME", "/tmp"),
        "SEARCHDESK_DEMO_TODAY": DEMO_TODAY,
        "SEARCHDESK_AGENT_SOCKET": socket,
        "GSC_SERVICE_ACCOUNT_KEY_FILE": str(fake.service_account_file()),
        "SEARCHDESK_APPROVAL_WAIT": "2",
        **fake.env,
    }
    env.update(extra or {})
    return env


@asynccontextmanager
async def serve(
    fake: FakeGoogle,
    socket: str,
    mode: str,
    elicitor: Callable[[Any, Any], Awaitable[Any]] | None = None,
    extra: dict[str, str] | None = None,
) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "searchdesk_server"], env=server_env(fake, socket, extra), cwd=REPO
    )
    kwargs: dict[str, Any] = {"mode": mode, "read_timeout_seconds": 60}
    if elicitor is not None:
        kwargs["elicitation_callback"] = elicitor
    async with Client(params, **kwargs) as client:
        yield client


def script(decision: str, delay: float = 0.0) -> Script:
    return Script(approval=ApprovalScript(decision=decision, delay=delay))
