"""Fixtures for the desktop app: a real keyring on a private D-Bus, and app-wide isolation.

The keyring fixture starts a private ``dbus-daemon`` and an unlocked ``gnome-keyring-daemon``: the same
Secret Service a Linux desktop has, so the tests exercise the real backend, not a stand-in. Missing
binaries fail the run when ``CI`` is set (a forgotten install step must turn red) and skip otherwise.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

NEEDED = ("dbus-daemon", "gnome-keyring-daemon")


@pytest.fixture(autouse=True)
def collect_on_main_thread() -> Iterator[None]:
    """Qt objects must die on the Qt thread. With automatic GC on, a cycle holding a QTimer can be
    collected in a worker thread (a fake server, the agent client), leaving a dangling timer behind
    that crashes a later test. So: no automatic GC during a test, a full collection after it."""
    gc.disable()
    try:
        yield
    finally:
        gc.collect(0)  # with automatic GC off, everything this test made is still in generation 0
        gc.enable()


@pytest.fixture
def asyncio_in_qt(qapp: object) -> Iterator[asyncio.AbstractEventLoop]:
    """qasync's loop as this thread's running asyncio loop while the test spins Qt (qtbot's waits), as
    ``app.run`` has it in the app: asyncio callbacks then run on Qt's timers and socket notifiers."""
    import qasync
    from PySide6.QtCore import QCoreApplication

    loop = qasync.QEventLoop(qapp)
    asyncio._set_running_loop(loop)
    try:
        yield loop
    finally:
        tasks = asyncio.all_tasks(loop)
        for task in tasks:
            task.cancel()
        for _ in range(200):  # let the cancellations run, on Qt's timers
            if all(t.done() for t in tasks):
                break
            QCoreApplication.processEvents()
        asyncio._set_running_loop(None)
        loop.close()
        del loop
        gc.collect()  # the loop and its Qt objects die now, on this thread (it lived past generation 0)


@dataclass
class KeyringSession:
    bus_address: str
    home: Path
    env: dict[str, str]

    def lock(self) -> None:
        """Lock the default collection, as a screen lock would."""
        import secretstorage

        old = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = self.bus_address
        try:
            conn = secretstorage.dbus_init()
            secretstorage.get_default_collection(conn).lock()
            conn.close()
        finally:
            if old is None:
                os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)
            else:
                os.environ["DBUS_SESSION_BUS_ADDRESS"] = old


def _require_binaries() -> None:
    missing = [b for b in NEEDED if shutil.which(b) is None]
    if not missing:
        return
    msg = (
        f"real-keyring tests need {', '.join(missing)}: "
        "apt-get install -y --no-install-recommends gnome-keyring dbus-daemon"
    )
    if os.environ.get("CI"):
        pytest.fail(msg)
    pytest.skip(msg)


def _bus_env(home: Path) -> dict[str, str]:
    for sub in (".cache", ".local/share", ".config", "run"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    (home / "run").chmod(0o700)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(home / "run"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }


def _die_with_parent() -> None:
    """Linux: the bus ends if the test process dies (a crash must not leave daemons behind);
    gnome-keyring-daemon in turn exits when its bus goes away."""
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _start_bus(env: dict[str, str]) -> subprocess.Popen[str]:
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
    )
    assert bus.stdout is not None
    address = bus.stdout.readline().strip()
    if not address:
        bus.kill()
        pytest.fail("dbus-daemon printed no address")
    env["DBUS_SESSION_BUS_ADDRESS"] = address
    return bus


def _start(home: Path) -> tuple[KeyringSession, subprocess.Popen[str]]:
    env = _bus_env(home)
    bus = _start_bus(env)
    address = env["DBUS_SESSION_BUS_ADDRESS"]
    subprocess.run(
        ["gnome-keyring-daemon", "--unlock", "--components=secrets"],
        input="test-password",
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=20,
    )
    return KeyringSession(address, home, env), bus


def _stop(bus: subprocess.Popen[str]) -> None:
    bus.send_signal(signal.SIGTERM)
    try:
        bus.wait(timeout=5)
    except subprocess.TimeoutExpired:
        bus.kill()
        bus.wait()


@pytest.fixture(scope="session")
def keyring_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyringSession]:
    """One unlocked gnome-keyring on a private bus for the whole test session."""
    _require_binaries()
    session, bus = _start(tmp_path_factory.mktemp("keyring-home"))
    try:
        yield session
    finally:
        _stop(bus)


@pytest.fixture
def real_keyring(keyring_session: KeyringSession, monkeypatch: pytest.MonkeyPatch) -> KeyringSession:
    """Point this test's process at the private bus (the Secret Service backend reads it per call)."""
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", keyring_session.bus_address)
    wipe_keyring()
    return keyring_session


def wipe_keyring() -> None:
    """Remove every SearchDesk entry: each account's sign-in, and an earlier version's single one."""
    import keyring.backends.SecretService as ss

    from searchdesk_desktop.accounts.keystore import SERVICE

    backend = ss.Keyring()
    for item in backend.get_preferred_collection().search_items({"service": SERVICE}):
        item.delete()


@pytest.fixture
def fresh_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KeyringSession]:
    """A keyring of this test's own, for tests that lock it or otherwise spoil it."""
    _require_binaries()
    session, bus = _start(tmp_path / "kr")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", session.bus_address)
    try:
        yield session
    finally:
        _stop(bus)


@dataclass
class PrivateBus:
    address: str
    env: dict[str, str]


def _need_dbus_daemon() -> None:
    if shutil.which("dbus-daemon") is None:
        if os.environ.get("CI"):
            pytest.fail("dbus-daemon is missing: apt-get install -y dbus-daemon")
        pytest.skip("dbus-daemon is missing")


@pytest.fixture
def private_bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PrivateBus]:
    """A session bus of this test's own, with nothing on it."""
    _need_dbus_daemon()
    env = _bus_env(tmp_path / "bus")
    bus = _start_bus(env)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", env["DBUS_SESSION_BUS_ADDRESS"])
    try:
        yield PrivateBus(env["DBUS_SESSION_BUS_ADDRESS"], env)
    finally:
        _stop(bus)


@pytest.fixture
def private_system_bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PrivateBus]:
    """A second private bus standing in for the system bus (``DBUS_SYSTEM_BUS_ADDRESS``), with nothing
    on it: a fake logind goes there (``tests.desktop.fake_logind``), and no real one is ever asked."""
    _need_dbus_daemon()
    env = _bus_env(tmp_path / "sysbus")
    bus = _start_bus(env)
    env["DBUS_SYSTEM_BUS_ADDRESS"] = env.pop("DBUS_SESSION_BUS_ADDRESS")
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", env["DBUS_SYSTEM_BUS_ADDRESS"])
    try:
        yield PrivateBus(env["DBUS_SYSTEM_BUS_ADDRESS"], env)
    finally:
        _stop(bus)


@pytest.fixture
def no_dbus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/searchdesk-test-bus")


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, object]]:
    """Where a test's app keeps everything: settings, Claude's file, the socket, a server, autostart."""
    from searchdesk_desktop.claude import config_file as cc
    from searchdesk_desktop.claude import found as claude_found
    from searchdesk_desktop.lifecycle.autostart import Autostart

    folder = Path(tempfile.mkdtemp(prefix="sda-"))  # short: a socket path has a length limit
    exe = tmp_path / "bin" / "searchdesk-server"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.delenv("SEARCHDESK_OAUTH_CLIENT_FILE", raising=False)
    # Claude Desktop is installed on this test's computer (its desktop entry, where its installer puts it);
    # a test of a computer without it deletes the file.
    claude_entry = tmp_path / "share" / "applications" / "claude-desktop.desktop"
    claude_entry.parent.mkdir(parents=True)
    claude_entry.write_text("[Desktop Entry]\nName=Claude\n")
    places = {"XDG_DATA_HOME": str(tmp_path / "share"), "XDG_DATA_DIRS": str(tmp_path / "no-system"), "PATH": ""}
    yield {
        "settings_path": tmp_path / "settings.json",
        "claude_path": tmp_path / "Claude" / cc.CONFIG_NAME,
        "socket_path": str(folder / "agent.sock"),
        "server": cc.ServerCommand(str(exe)),
        "autostart": Autostart(home=tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "cfg")}),
        "find_claude": functools.partial(claude_found.on_this_computer, home=tmp_path, env=places),
        "claude_entry": claude_entry,
    }
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()
