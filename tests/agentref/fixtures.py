"""Pytest fixtures for other test folders: `from tests.agentref.fixtures import *  # noqa: F403` in a conftest.

- `agent_folder`: a fresh folder, ours, mode 0700, with a short path (sockets allow ~104 bytes).
- `agent_socket`: the socket path in it, exported as SEARCHDESK_AGENT_SOCKET for the test.
- `reference_agent`: the reference agent running in-process at `agent_socket` (default Script:
  a token for any scope, questions left pending). Call `.set_script(...)` / `.answer(...)` on it.
- `reference_agent_process`: the same as a subprocess, for tests that run a server subprocess beside it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import AgentProcess, AgentThread


@pytest.fixture
def agent_folder() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="sd-"))  # mkdtemp: ours, 0700, short
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def agent_socket(agent_folder: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = str(agent_folder / "agent.sock")
    monkeypatch.setenv("SEARCHDESK_AGENT_SOCKET", path)
    return path


@pytest.fixture
def reference_agent(agent_socket: str) -> Iterator[AgentThread]:
    agent = AgentThread()
    agent.start(agent_socket)
    try:
        yield agent
    finally:
        agent.stop()


@pytest.fixture
def reference_agent_process(agent_socket: str) -> Iterator[AgentProcess]:
    agent = AgentProcess()
    agent.start(agent_socket)
    try:
        yield agent
    finally:
        agent.stop()
