"""`searchdesk --uninstall-cleanup`: sign out (revoke + keyring), autostart off, Claude entry removed,
a running copy asked to quit; no output, exit status 0 even when a step fails."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from searchdesk_desktop.accounts.keystore import KeyStore, SignInRecord
from searchdesk_desktop.accounts.store import AccountStore
from searchdesk_desktop.claude import config_file as cc
from searchdesk_desktop.lifecycle import uninstall as cleanup
from searchdesk_desktop.lifecycle.autostart import Autostart
from searchdesk_desktop.settings import AppSettings
from tests.desktop.fake_oauth import CLIENT_ID, CLIENT_SECRET, EMAIL, fake_oauth_server
from tests.desktop.helpers import app_env

OTHER = {"command": "/usr/bin/other-server", "args": ["--x"], "env": {"K": "v"}}


def claude_file(path: Path, ours: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    servers: dict[str, object] = {"other": OTHER}
    if ours:
        servers["searchdesk"] = {"command": "/opt/searchdesk/searchdesk-server", "args": [], "env": {}}
    path.write_text(json.dumps({"globalShortcut": "Ctrl+Space", "mcpServers": servers}))
    return path


def test_uninstall_revokes_forgets_and_removes(
    tmp_path: Path, real_keyring: object, qapp: object, capfd: pytest.CaptureFixture[str]
) -> None:
    autostart = Autostart(["/opt/searchdesk/searchdesk"], platform="linux", home=tmp_path, env={})
    autostart.enable()
    claude = claude_file(tmp_path / "Claude" / cc.CONFIG_NAME)
    settings = tmp_path / "settings.json"
    AppSettings(site_url="https://www.example.com/", service_account_file="/keys/sa.json").save(settings)
    with fake_oauth_server() as fake:
        store = AccountStore(KeyStore(), AppSettings.load(settings), settings)
        store.add_sign_in(
            store.save_sign_in(SignInRecord("1//refresh-to-revoke", EMAIL, "own", CLIENT_ID, CLIENT_SECRET))
        )
        outcome = cleanup.run(
            keystore=KeyStore(),
            autostart=autostart,
            claude_paths=[claude],
            settings_path=settings,
            instance_name=str(tmp_path / "nobody-listens.sock"),
        )
        assert "1//refresh-to-revoke" in fake.revoked
    assert outcome.ok, outcome.steps
    assert outcome.detail("quit the running app") == "none was running"
    assert outcome.detail("sign out") == "revoked at Google and removed from the keyring"
    assert KeyStore().load(EMAIL) is None
    assert not autostart.is_enabled()
    assert json.loads(claude.read_text()) == {"globalShortcut": "Ctrl+Space", "mcpServers": {"other": OTHER}}
    kept = AppSettings.load(settings)
    assert kept.service_account_file == "" and kept.site_url == "https://www.example.com/"
    assert kept.accounts == [] and kept.default_account == ""
    assert capfd.readouterr().out == ""


def test_a_failing_step_does_not_stop_the_others(tmp_path: Path, no_dbus: None, qapp: object) -> None:
    """No keyring and one unreadable Claude file: both reported, everything else still done."""
    broken = tmp_path / "store" / cc.CONFIG_NAME
    broken.parent.mkdir()
    broken.write_text("{ not json")
    good = claude_file(tmp_path / "Claude" / cc.CONFIG_NAME)
    autostart = Autostart(["/x"], platform="linux", home=tmp_path, env={})
    autostart.enable()
    outcome = cleanup.run(
        autostart=autostart,
        claude_paths=[broken, good],
        settings_path=tmp_path / "settings.json",
        instance_name=str(tmp_path / "nobody.sock"),
    )
    failed = {name for name, ok, _ in outcome.steps if not ok}
    assert failed == {"sign out", "Claude Desktop"}
    assert "NoSecureKeyring" in outcome.detail("sign out")
    assert broken.read_text() == "{ not json"  # never touched
    assert "searchdesk" not in json.loads(good.read_text())["mcpServers"]
    assert not autostart.is_enabled()


def test_command_quits_the_running_app_prints_nothing_and_exits_0(tmp_path: Path) -> None:
    """As an uninstaller runs it: a real running app, the real command, no keyring to be had."""
    env = app_env(
        tmp_path,
        QT_QPA_PLATFORM="offscreen",
        DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/searchdesk-test-bus",  # no keyring: sign-out fails
    )
    log = tmp_path / "state" / "searchdesk" / "log" / "searchdesk.log"
    claude = claude_file(tmp_path / "cfg" / "Claude" / cc.CONFIG_NAME)
    autostart = tmp_path / "cfg" / "autostart" / "searchdesk.desktop"
    Autostart(["/x"], platform="linux", home=tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "cfg")}).enable()
    app = subprocess.Popen(
        [sys.executable, "-m", "searchdesk_desktop", "--demo", "--quit-after", "60"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not (log.exists() and "SearchDesk started" in log.read_text()):
            assert app.poll() is None and time.monotonic() < deadline, "the app did not start"
            time.sleep(0.05)
        done = subprocess.run(
            [sys.executable, "-m", "searchdesk_desktop", "--uninstall-cleanup"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0 and done.stdout == "", done.stderr
        assert app.wait(timeout=10) == 0  # it quit when asked, long before --quit-after
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    text = log.read_text()
    assert "uninstall cleanup: quit the running app: it quit" in text
    assert "uninstall cleanup: sign out: NoSecureKeyring" in text
    assert "uninstall cleanup finished with problems" in text
    assert not autostart.exists()
    assert json.loads(claude.read_text())["mcpServers"] == {"other": OTHER}


def test_an_unreadable_record_is_still_removed(tmp_path: Path, real_keyring: object, qapp: object) -> None:
    from searchdesk_desktop.accounts.keystore import ENTRY, SERVICE

    KeyStore().backend.set_password(SERVICE, ENTRY, "not a SearchDesk record")
    outcome = cleanup.run(
        autostart=Autostart(["/x"], platform="linux", home=tmp_path, env={}),
        claude_paths=[],
        settings_path=tmp_path / "settings.json",
        instance_name=str(tmp_path / "nobody.sock"),
    )
    assert outcome.ok, outcome.steps
    assert "unreadable sign-in record" in outcome.detail("sign out")
    assert KeyStore().backend.get_password(SERVICE, ENTRY) is None
