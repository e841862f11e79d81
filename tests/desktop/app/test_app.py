"""The app's windows and tray: first-run steps, state at a glance, sign-in, Claude Desktop, autostart."""

from __future__ import annotations

import gc
import json
import os
import tempfile
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from searchdesk_desktop.accounts.keystore import KeyStore
from searchdesk_desktop.accounts.model import AccountState as Account
from searchdesk_desktop.claude import config_file as cc
from searchdesk_desktop.core import Core
from searchdesk_desktop.lifecycle.autostart import Autostart
from searchdesk_desktop.lifecycle.single_instance import SingleInstance
from searchdesk_desktop.tray import Tray
from searchdesk_desktop.windows.about import AboutDialog
from searchdesk_desktop.windows.parts import OK, PROBLEM, TODO
from searchdesk_server.agent import client as agent_client
from tests.desktop.agent_helpers import in_background
from tests.desktop.fake_oauth import CLIENT_ID, CLIENT_SECRET, EMAIL, FakeOAuth, fake_oauth_server
from tests.desktop.helpers import DEMO_SERVER, app_env, core_args, finish, make_core, make_tray, make_window, question

WM_RO = "https://www.googleapis.com/auth/webmasters.readonly"


def test_first_run_without_oauth_client_offers_choices(qtbot: QtBot, place: dict, real_keyring: object) -> None:
    core = make_core(place)
    window = make_window(qtbot, core, place)
    assert window.windowTitle() == "SearchDesk"
    assert window.step1.state == TODO and window.step1.badge.text() == "1"
    assert "no Google OAuth client built in" in window.step1.detail.text()
    assert list(window.step1.button_widgets) == [
        "Try the demo",
        "Use my own OAuth client file…",
        "Use a service-account key file…",
    ]
    assert window.step2.status.text() == "Not added yet"
    assert window.step3.status.text() == "Not checked yet"
    assert window.status_lines() == ["Not signed in", "Claude Desktop: not added", "No approvals waiting"]
    finish(core)


def test_wrong_key_file_says_which_it_is(qtbot: QtBot, place: dict, tmp_path: Path, real_keyring: object) -> None:
    core = make_core(place)
    window = make_window(qtbot, core, place)
    client_file = tmp_path / "client.json"
    client_file.write_text(json.dumps({"installed": {"client_id": "x", "client_secret": "y"}}))
    window.use_service_account(client_file)
    assert "is an OAuth client file (Desktop app), not a service-account key" in window.step1.error.text()
    assert window.step1.error.isVisibleTo(window)
    assert window.step1.state == PROBLEM
    finish(core)


def test_service_account_file(qtbot: QtBot, place: dict, tmp_path: Path, real_keyring: object) -> None:
    core = make_core(place)
    window = make_window(qtbot, core, place)
    key = tmp_path / "sa.json"
    key.write_text(
        json.dumps(
            {
                "type": "service_account",
                "client_email": "bot@proj.iam.gserviceaccount.com",
                "private_key": "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n",
            }
        )
    )
    window.use_service_account(key)
    assert window.step1.state == OK
    assert window.step1.status.text() == "Service account bot@proj.iam.gserviceaccount.com"
    saved = json.loads(Path(place["settings_path"]).read_text())
    assert saved["accounts"] == [
        {"email": "bot@proj.iam.gserviceaccount.com", "kind": "service_account", "key_file": str(key)}
    ]
    window.sign_out()
    assert core.account.state is Account.SIGNED_OUT
    finish(core)


def test_sign_in_with_own_client_then_token_hand_off(
    qtbot: QtBot, place: dict, tmp_path: Path, real_keyring: object
) -> None:
    with fake_oauth_server() as fake:
        browser = _browser(fake)
        core = make_core(
            place,
            auth_uri=fake.auth_uri,
            open_browser=browser,
        )
        window = make_window(qtbot, core, place)
        client_file = tmp_path / "client.json"
        client_file.write_text(json.dumps({"installed": {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}}))
        with qtbot.waitSignal(core.signin_done, timeout=10_000) as done:
            window.sign_in_with_client_file(client_file)
            assert window.step1.status.text() == "Waiting for you in the browser…"
        assert done.args == [""]
        assert window.step1.status.text() == f"Signed in as {EMAIL}"
        assert "your system's keyring (GNOME Keyring)" in window.step1.detail.text()
        assert "Testing" in window.step1.detail.text()  # an own client: the 7-day warning
        assert KeyStore().load(EMAIL) is not None
        # A server asks the app for a token: minted from the stored refresh token at "Google".

        async def token() -> object:
            async with agent_client.AgentClient(place["socket_path"]) as c:
                return await c.token([WM_RO])

        got = in_background(qtbot, token)
        assert got.account == EMAIL and got.access_token in fake.issued  # type: ignore[attr-defined]
        # Google revokes the grant (say, from the account's security page): the app says so.
        fake.revoked.update(fake.refresh_tokens)

        async def forced() -> object:
            async with agent_client.AgentClient(place["socket_path"]) as c:
                return await c.token([WM_RO], force_refresh=True)

        with pytest.raises(agent_client.AppRefreshFailed):
            in_background(qtbot, forced)
        qtbot.waitUntil(lambda: core.account.state is Account.EXPIRED)
        assert window.step1.status.text() == "Sign-in expired: sign in again"
        assert "Google no longer accepts this sign-in" in window.step1.detail.text()
        fake.revoked.clear()
        # One click signs in again with the same (own) OAuth client.
        with qtbot.waitSignal(core.signin_done, timeout=10_000) as again:
            qtbot.mouseClick(window.step1.button_widgets["Sign in again"], Qt.MouseButton.LeftButton)
        assert again.args == [""]
        assert window.step1.status.text() == f"Signed in as {EMAIL}"
        # Sign out revokes at Google and forgets the token here.
        window.sign_out()
        qtbot.waitUntil(lambda: bool(fake.revoked), timeout=5000)
        assert KeyStore().load(EMAIL) is None
        with pytest.raises(agent_client.AppSignedOut):
            in_background(qtbot, token)
        finish(core)


def _browser(fake: FakeOAuth):  # type: ignore[no-untyped-def]
    def open_browser(url: str) -> bool:
        threading.Thread(target=fake.browser, args=(url,), daemon=True).start()
        return True

    return open_browser


def test_add_repair_remove_claude(qtbot: QtBot, place: dict, tmp_path: Path, real_keyring: object) -> None:
    core = make_core(place)
    window = make_window(qtbot, core, place)
    window.add_to_claude()
    assert window.step2.state == OK and window.step2.status.text() == "Added to Claude Desktop"
    entry = json.loads(Path(place["claude_path"]).read_text())["mcpServers"]["searchdesk"]
    assert entry["command"] == place["server"].command
    assert entry["env"]["SEARCHDESK_AGENT_SOCKET"] == place["socket_path"]
    # The app was moved: the entry is found broken and repaired in one click.
    moved = cc.ServerCommand(str(tmp_path / "moved-server"))
    Path(place["server"].command).rename(moved.command)
    core.claude.server = moved
    window.refresh()
    assert window.step2.state == PROBLEM and "Repair" in window.step2.button_widgets
    qtbot.mouseClick(window.step2.button_widgets["Repair"], Qt.MouseButton.LeftButton)
    assert window.step2.state == OK
    # Removing asks first; "No" leaves the entry where it is.
    asked: list[str] = []
    window.ask = lambda box: asked.append(box.text()) or False  # type: ignore[func-returns-value]
    qtbot.mouseClick(window.step2.button_widgets["Remove from Claude Desktop"], Qt.MouseButton.LeftButton)
    assert asked and "Remove SearchDesk from Claude Desktop?" in asked[0]
    assert window.step2.state == OK
    window.ask = lambda box: True
    qtbot.mouseClick(window.step2.button_widgets["Remove from Claude Desktop"], Qt.MouseButton.LeftButton)
    assert window.step2.status.text() == "Not added yet"
    finish(core)


def test_invalid_claude_file_is_explained(qtbot: QtBot, place: dict, real_keyring: object) -> None:
    path = Path(place["claude_path"])
    path.parent.mkdir()
    path.write_text("{ not json")
    core = make_core(place)
    window = make_window(qtbot, core, place)
    assert window.step2.status.text() == "Claude Desktop's settings file cannot be read"
    assert str(path) in window.step2.detail.text() and "did not change it" in window.step2.detail.text()
    assert path.read_text() == "{ not json"
    finish(core)


def test_demo_is_labelled_and_asks_before_adding(qtbot: QtBot, place: dict) -> None:
    core = make_core(place, demo=True)
    window = make_window(qtbot, core, place)
    assert window.windowTitle() == "SearchDesk (Demo)"
    assert window.findChild(type(window.step1.status), "demoBanner") is not None
    assert window.step1.status.text() == "Demo: no Google account needed"
    window.add_to_claude(confirm=lambda: False)
    assert not Path(place["claude_path"]).exists()
    window.add_to_claude(confirm=lambda: True)
    assert window.step2.status.text() == "Added to Claude Desktop (the demo)"
    about = AboutDialog(core)
    qtbot.addWidget(about)
    assert dict(about.rows)["Version"].endswith("(demo)")
    finish(core)


def test_demo_says_demo_in_every_window_dialog_and_the_tray(qtbot: QtBot, place: dict) -> None:
    from searchdesk_desktop.approval.dialog import ApprovalDialog
    from searchdesk_desktop.approval.notification_question import compose
    from searchdesk_desktop.check.console import verdict_box

    core = make_core(place, demo=True)
    window = make_window(qtbot, core, place)
    window.show_settings()
    window.show_activity()
    window.show_about()
    entry = core.book.ask(question(requester=DEMO_SERVER))
    approval = ApprovalDialog(entry, demo=True, arm_delay_ms=0)
    confirm = window.confirm_demo_box()
    check = verdict_box("PASS", True, demo=True)
    tray = make_tray(core, place)
    for widget in (approval, confirm, check):
        qtbot.addWidget(widget)
    titles = {
        "main": window.windowTitle(),
        "settings": window.settings_window.windowTitle(),  # type: ignore[union-attr]
        "activity": window.activity_window.windowTitle(),  # type: ignore[union-attr]
        "about": window.about_dialog.windowTitle(),  # type: ignore[union-attr]
        "approval": approval.windowTitle(),
        "add the demo?": confirm.windowTitle(),
        "check": check.windowTitle(),
        "tray tooltip": tray.toolTip(),
        "tray menu": " / ".join(tray.texts()),
        "notification": compose(entry, demo=True).summary,
    }
    assert {k: v for k, v in titles.items() if "Demo" not in v} == {}
    for banner_window in (window.settings_window, window.activity_window):
        assert banner_window.findChild(type(window.step1.status), "demoBanner") is not None  # type: ignore[union-attr]
    tray.deleteLater()
    finish(core)


async def _claude_desktop_connects(path: str) -> None:
    from searchdesk_server.agent.client import AgentClient
    from searchdesk_server.agent.protocol import ClientInfo

    async with AgentClient(path) as client:
        await client.announce(ClientInfo(name="claude-ai", version="0.14.10"))


def test_check_it_works_runs_the_real_server(qtbot: QtBot, place: dict) -> None:
    place = dict(place, server=cc.server_command())  # the real server, as Claude Desktop would start it
    core = make_core(place, demo=True)
    window = make_window(qtbot, core, place)
    window.add_to_claude(confirm=lambda: True)
    with qtbot.waitSignal(core.check_done, timeout=60_000):
        qtbot.mouseClick(window.step3.button_widgets["Check it works"], Qt.MouseButton.LeftButton)
        assert window.step3.status.text() == "Checking…"
    result = window.check_result
    works = "SearchDesk works: it can read 5 properties for Claude (it checked the domain example.com)."
    # The check's server is SearchDesk's own: until Claude Desktop has started one, no tick says Claude can.
    assert window.step3.state == TODO, result.verdict.text()
    assert window.step3.status.text() == "SearchDesk works; Claude Desktop has not started it yet"
    assert result.verdict.text().startswith(works) and "Claude Desktop started" not in result.verdict.text()
    # A server Claude Desktop started connects and says so (the additive `client` of hello), for real.
    in_background(qtbot, lambda: _claude_desktop_connects(core.listener.path or ""))
    qtbot.waitUntil(lambda: core.claude_seen() is not None)
    window.refresh()
    assert window.step3.state == OK and window.step3.status.text() == "It works"
    assert result.isVisibleTo(window) and result.heading.text() == "What Claude would see"
    assert result.verdict.text().startswith(works + " Claude Desktop started SearchDesk at ")
    assert result.verdict.text().endswith("and it answered (it says it is version 0.14.10).")
    assert (
        result.subject.text()
        == "Checked for the demo (no Google account), with Claude Desktop's SearchDesk entry (the demo)."
    )
    tables = {t.title.text(): t for t in result.tables}
    properties = tables["Properties this account can see"]
    for label in properties.findChildren(QLabel):
        assert label.textFormat() == Qt.TextFormat.PlainText
    cells = [cells for cells, _note in properties.rows]
    assert ("the domain example.com", "owner") in cells  # Search Console's words, not Google's codes
    inspection = next(t for title, t in tables.items() if title.startswith("How Google sees"))
    assert ("Indexing", "Allowed") in [c for c, _ in inspection.rows]
    assert ("Page fetch", "Successful") in [c for c, _ in inspection.rows]
    text = "\n".join(label.text() for t in result.tables for label in t.findChildren(QLabel))
    for code in ("siteOwner", "siteRestrictedUser", "INDEXING_ALLOWED", "SUCCESSFUL", "NEUTRAL"):
        assert code not in text
    assert not any(line.startswith("|") for line in text.splitlines())  # no Markdown
    assert "\u202e" not in text  # the demo's bidi override is gone, not hidden in the table
    finish(core)


def test_tray_menu_and_window_show_state(qtbot: QtBot, place: dict) -> None:
    core = make_core(place, demo=True)
    window = make_window(qtbot, core, place)
    opened: list[str] = []
    tray = Tray(
        core,
        open_window=lambda: opened.append("window"),
        review=lambda: opened.append("review"),
        show_activity=lambda: None,
        show_about=lambda: None,
        quit_app=lambda: opened.append("quit"),
        autostart=place["autostart"],
    )
    texts = tray.texts()
    assert texts[:3] == [
        "DEMO: made-up data, no Google account",
        "Claude Desktop: not added",
        "No approvals waiting",
    ]
    assert "Quit SearchDesk" in texts and "Start at login" in texts
    core.book.ask(question())
    tray.rebuild()
    review = next(a for a in tray.menu.actions() if a.text().startswith("1 approval"))
    assert review.text() == "1 approval question waiting: review" and review.isEnabled()
    review.trigger()
    assert opened == ["review"]
    qtbot.waitUntil(lambda: window.status_lines()[2] == "1 approval waiting")
    assert window.approvals.review_button.isEnabled()
    assert window.approvals.waiting.text() == "1 approval question waiting for you."
    assert tray.toolTip() == "SearchDesk (Demo): 1 question waiting"
    core.book.ask(question("https://other.example/"))
    qtbot.waitUntil(lambda: window.approvals.waiting.text() == "2 approval questions waiting for you.")
    start = next(a for a in tray.menu.actions() if a.text() == "Start at login")
    start.trigger()
    assert place["autostart"].is_enabled()
    tray.deleteLater()
    finish(core)


# Activity (the record the server keeps, its CSV and its cells) is tested in test_activity_record.py.


def test_autostart_linux(tmp_path: Path) -> None:
    auto = Autostart(["/opt/Search Desk/searchdesk", "--autostart"], platform="linux", home=tmp_path, env={})
    assert not auto.is_enabled()
    auto.enable()
    text = (tmp_path / ".config" / "autostart" / "searchdesk.desktop").read_text()
    assert 'Exec="/opt/Search Desk/searchdesk" --autostart' in text
    assert auto.is_enabled()
    auto.disable()
    assert not auto.is_enabled()


def test_autostart_macos_plist(tmp_path: Path) -> None:
    import plistlib

    auto = Autostart(["/Applications/SearchDesk.app/Contents/MacOS/searchdesk"], platform="darwin", home=tmp_path)
    auto.enable()
    data = plistlib.loads((tmp_path / "Library/LaunchAgents/com.searchdesk.app.plist").read_bytes())
    assert data["RunAtLoad"] is True and data["ProgramArguments"][0].endswith("searchdesk")
    auto.disable()
    assert not auto.is_enabled()


def test_second_launch_brings_the_first_forward(qtbot: QtBot) -> None:
    folder = Path(tempfile.mkdtemp(prefix="sdi-"))
    name = str(folder / "app.sock")
    first = SingleInstance(name)
    assert first.claim()
    with qtbot.waitSignal(first.activated, timeout=5000):
        assert not SingleInstance(name).claim()
    first.release()
    os.rmdir(folder) if not any(folder.iterdir()) else None


def test_log_redacts_token_shapes() -> None:
    import logging

    from searchdesk_desktop.logs import Redact

    record = logging.LogRecord("x", logging.INFO, __file__, 1, "got %s", ("ya29.abc-def",), None)
    Redact().filter(record)
    assert "ya29" not in record.getMessage() and "[redacted]" in record.getMessage()


def test_screenshots_render(tmp_path: Path, qtbot: QtBot) -> None:
    """Offscreen (no colour-scheme switching) the light pictures are written and the dark ones skipped."""
    from PySide6.QtGui import QImage

    from searchdesk_desktop.screenshots import PICTURES, render

    before = {k: os.environ.get(k) for k in ("HOME", "SEARCHDESK_OAUTH_CLIENT_FILE")}
    paths = render(tmp_path)
    assert [p.name for p in paths] == [f"{name}.png" for name, _ in PICTURES]
    assert {k: os.environ.get(k) for k in before} == before  # the environment is put back
    for p in paths:
        image = QImage(str(p))
        assert image.width() > 300 and image.height() > 150, p.name


def test_smoke_demo_app_starts_and_quits(tmp_path: Path) -> None:
    """`searchdesk --demo --quit-after 1` as a real process: it starts, listens, logs, quits cleanly."""
    import subprocess
    import sys

    env = app_env(tmp_path, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-m", "searchdesk_desktop", "--demo", "--quit-after", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "state" / "searchdesk" / "log" / "searchdesk.log").read_text()
    assert "SearchDesk started (demo)" in log and "SearchDesk quitting" in log
    assert "ya29" not in log and "demo-" not in log


def test_try_the_demo_restarts_the_app_on_the_demo(
    qtbot: QtBot, qapp: object, place: dict, real_keyring: object
) -> None:
    """The new copy must find the single-instance name and the agent socket free, or it would only
    bring this one forward and exit: both are let go before it starts."""
    import sys

    from searchdesk_desktop.app import DesktopApp
    from searchdesk_desktop.lifecycle.single_instance import ask_to_quit

    folder = Path(tempfile.mkdtemp(prefix="sdi-"))
    single = SingleInstance(str(folder / "app.sock"))
    assert single.claim()
    core = Core(**core_args(place))  # type: ignore[arg-type]
    seen: list[tuple[list[str], bool, bool]] = []

    def launch(command: list[str]) -> bool:
        seen.append((list(command), core.listener.listening, ask_to_quit(single.name, timeout=0.1)))
        return True

    app = DesktopApp(qapp, core, autostart=place["autostart"], tray=False, single=single, launch=launch)  # type: ignore[arg-type]
    app.start()
    qtbot.mouseClick(app.window.step1.button_widgets["Try the demo"], Qt.MouseButton.LeftButton)
    assert seen == [([sys.executable, "-m", "searchdesk_desktop", "--demo"], False, False)]
    assert app.window.isHidden()
    app.dispose()
    folder.rmdir()


def test_the_window_says_so_when_notifications_are_refused(qtbot: QtBot, qapp: object, place: dict) -> None:
    from searchdesk_desktop.app import DesktopApp
    from searchdesk_desktop.notices.channel import SystemNotifications, refused_text

    core = Core(**core_args(place))  # type: ignore[arg-type]
    app = DesktopApp(qapp, core, autostart=place["autostart"], tray=False)  # type: ignore[arg-type]
    channel = app.notes.channel
    assert isinstance(channel, SystemNotifications)
    channel.state = "refused"  # what macOS or Windows answers when the person said no
    channel.state_changed.emit()
    assert refused_text() in app.window.status_line.text()
    assert "Notifications are off for SearchDesk" in refused_text("darwin") and "System Settings" in refused_text(
        "darwin"
    )
    channel.state = "ready"
    channel.state_changed.emit()
    assert "Notifications are off" not in app.window.status_line.text()
    app.gc.stop()
    app.dispose()
    gc.collect()  # the app's Qt objects die here, on the Qt thread


def test_without_claude_desktop_no_step_is_green_and_nothing_says_claude_can(qtbot: QtBot, place: dict) -> None:
    """A Mac or Windows PC with no Claude Desktop (their rules: SearchDesk adds itself before it is installed):
    adding the demo and checking it leave steps 2 and 3 unticked, and nothing says Claude can see anything (the
    settings folder SearchDesk made itself is no evidence). Linux's rules: tests/desktop/claude/test_step2_linux.py."""
    Path(place["claude_entry"]).unlink()
    place = dict(place, server=cc.server_command())
    core = make_core(place, demo=True)
    core.system = "darwin"
    window = make_window(qtbot, core, place)
    assert "Claude Desktop was not found" in window.step2.detail.text()
    window.add_to_claude(confirm=lambda: True)
    assert Path(place["claude_path"]).is_file()  # the entry is written, ready for Claude Desktop
    assert window.step2.state != OK and "Claude Desktop was not found" in window.step2.status.text()
    with qtbot.waitSignal(core.check_done, timeout=60_000):
        qtbot.mouseClick(window.step3.button_widgets["Check it works"], Qt.MouseButton.LeftButton)
    assert window.step3.state != OK
    assert window.step3.status.text() == "SearchDesk works; Claude Desktop was not found"
    shown = " ".join(w.text() for w in window.findChildren(QLabel) if w.isVisibleTo(window))
    assert "Claude can see" not in shown and "It works" not in shown
    # Once Claude Desktop is installed (its desktop entry appears), step 2 turns green on the next look.
    Path(place["claude_entry"]).write_text("[Desktop Entry]\nName=Claude\n")
    window.refresh()
    assert window.step2.state == OK
    finish(core)
