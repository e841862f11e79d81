"""Small helpers the agent tests share (kept here, not in a conftest, so they import by one name)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from collections.abc import Coroutine, Iterable
from typing import Any, TypeVar

import pytest

from searchdesk_server.agent.client import AgentClient
from searchdesk_server.agent.protocol import ApprovalRequest, Decision, Value

from .harness import REPO_ROOT

T = TypeVar("T")

NOBODY = 65534
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not IS_ROOT, reason="needs root: only root can chown a folder to another user or setuid() to a second user"
)


async def request_approval(agent: AgentClient, /, *, values: Iterable[Value] = (), **fields: Any) -> Decision:
    """The question built from its fields and asked (the server builds its ApprovalRequest itself):
    invalid fields raise before anything is sent, as the protocol's types do."""
    return await agent.ask(ApprovalRequest(values=tuple(values), **fields))


def run(coro: Coroutine[Any, Any, T], timeout: float = 20.0) -> T:
    """Run one test coroutine with a hard ceiling: a hang is a failure, never a stuck suite."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def without_a_handler(module: str) -> subprocess.CompletedProcess[str]:
    """Import `module` (a listener) in a fresh interpreter whose table has one method more than it handles."""
    script = textwrap.dedent(f"""
        from searchdesk_server.agent import protocol
        extra = protocol.MethodSpec(name="test/echo", params=protocol.HelloParams, result=protocol.Hello)
        protocol.METHODS = {{**protocol.METHODS, extra.name: extra}}
        import {module}
    """)
    return subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False
    )
