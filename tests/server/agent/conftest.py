"""Fixtures for the agent-socket tests.

The conformance suite runs against every listener in LISTENERS. Each entry makes an unstarted
`tests.agentref.ListenerHarness`: start(socket_path, script) / stop() / set_script() / answer() /
requests() / wait_for_requests(). To hold the desktop app's listener to the same contract, give it
such a harness (e.g. tests/desktop/agent_harness.py: it starts the app's listener at the given path
with a fake keyring and fake Google from the Script, and answers dialogs as qtbot would) and add
one line here:

    "desktop": lambda: importlib.import_module("tests.desktop.agent_harness").DesktopListener(),
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.agentref import AgentProcess, AgentThread, ListenerHarness, Script
from tests.agentref.fixtures import agent_folder, agent_socket, reference_agent  # noqa: F401 (fixtures)

LISTENERS: dict[str, Callable[[], ListenerHarness]] = {
    "reference": AgentThread,
    "reference-subprocess": AgentProcess,
    "desktop": lambda: importlib.import_module("tests.desktop.agent_harness").DesktopListener(),
}


@pytest.fixture(params=sorted(LISTENERS))
def make_listener(request: pytest.FixtureRequest) -> Iterator[Callable[[], ListenerHarness]]:
    """An unstarted listener of each kind (for the trust tests, which expect start() to refuse)."""
    made: list[ListenerHarness] = []

    def make() -> ListenerHarness:
        harness = LISTENERS[request.param]()
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.stop()


@pytest.fixture
def listener(make_listener: Callable[[], ListenerHarness], agent_socket: str) -> ListenerHarness:  # noqa: F811
    """A started listener of each kind at `agent_socket` (SEARCHDESK_AGENT_SOCKET points at it)."""
    harness = make_listener()
    harness.start(agent_socket, Script())
    return harness


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A short scratch folder (0700, ours) for trust tests that build their own folders inside it."""
    folder = Path(tempfile.mkdtemp(prefix="sdt-"))
    try:
        yield folder
    finally:
        for path in (folder, *folder.rglob("*")):
            if not path.is_symlink():
                try:
                    os.chown(path, os.geteuid(), os.getegid())
                    os.chmod(path, 0o700)
                except OSError:
                    pass
        shutil.rmtree(folder, ignore_errors=True)
