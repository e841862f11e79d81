"""The app as a site owner meets it (issue 15): an honest checklist, a sign-in that never strands the
person, approvals that close the loop, and the small things (the tray, "connected now", the keyring).

Real parts throughout: Claude Desktop's settings file in a temp folder, the real keyring, the real
self-check and server, the app's real listener, real Qt widgets.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from searchdesk_desktop import __version__
from searchdesk_desktop.accounts.keystore import describe_place
from searchdesk_desktop.approval.dialog import STOPPED_WAITING
from searchdesk_desktop.approval.queue import ApprovalQueue
from searchdesk_desktop.check.run import CHECK_WORDS
from searchdesk_desktop.claude import config_file as cc
from searchdesk_desktop.core import Core
from searchdesk_desktop.windows import step_google as windows
from searchdesk_desktop.windows.about import AboutDialog
from searchdesk_desktop.windows.parts import OK, PROBLEM, TODO
from searchdesk_server.google.grants import AUTH_URL
from tests.desktop.agent_helpers import Background
from tests.desktop.helpers import arm, core_args, finish, make_core, make_window
from tests.server.stdio import connect, text_of

SITE = "sc-domain:example.com"
FEED = "https://www.example.com/old/sitemap.xml"


def entry(place: dict) -> dict:
    return json.loads(Path(place["claude_path"]).read_text())["mcpServers"]["searchdesk"]


def write_entry(place: dict, *, demo: bool, **env: str) -> None:
    settings = cc.ServerSettings(demo=demo, agent_socket=place["socket_path"])
    cc.add(place["claude_path"], place["server"], settings, allow_demo=demo)
    if env:
        data = json.loads(Path(place["claude_path"]).read_text())
        data["mcpServers"]["searchdesk"]["env"].update(env)
        Path(place["claude_path"]).write_text(json.dumps(data))


# --- step 2: green only for this app's own entry ---------------------------------------------------


@pytest.mark.parametrize(
    ("app_demo", "entry_demo", "extra", "state"),
    [
        (False, False, {}, cc.EntryState.OK),
        (True, True, {}, cc.EntryState.OK),
        (False, True, {}, cc.EntryState.OTHER_MODE),
        (True, False, {}, cc.EntryState.OTHER_MODE),
        (False, False, {"GSC_REFRESH_TOKEN": "1//x"}, cc.EntryState.OWN_CREDENTIALS),
        (False, False, {"GOOGLE_APPLICATION_CREDENTIALS": "/k.json"}, cc.EntryState.OWN_CREDENTIALS),
        (False, False, {cc.SOCKET_VAR: "/elsewhere/agent.sock"}, cc.EntryState.OTHER_COPY),
    ],
)
def test_entry_is_ours_only_when_command_mode_socket_and_credentials_match(
    place: dict, app_demo: bool, entry_demo: bool, extra: dict[str, str], state: cc.EntryState
) -> None:
    write_entry(place, demo=entry_demo, **extra)
    found = cc.check(place["claude_path"], place["server"], place["socket_path"], demo=app_demo)
    assert found.state is state, found


def test_an_entry_that_does_not_say_where_the_app_is_is_not_ours(place: dict) -> None:
    write_entry(place, demo=False)
    data = json.loads(Path(place["claude_path"]).read_text())
    del data["mcpServers"]["searchdesk"]["env"][cc.SOCKET_VAR]
    Path(place["claude_path"]).write_text(json.dumps(data))
    found = cc.check(place["claude_path"], place["server"], place["socket_path"])
    assert found.state is cc.EntryState.OTHER_COPY and found.detail == "it names no place to reach this app"
    cc.repair(place["claude_path"], place["server"], place["socket_path"])
    assert cc.check(place["claude_path"], place["server"], place["socket_path"]).state is cc.EntryState.OK


def test_real_app_switches_a_demo_entry_to_your_account(qtbot: QtBot, place: dict, real_keyring: object) -> None:
    write_entry(place, demo=True)
    core = make_core(place)
    window = make_window(qtbot, core, place)
    assert window.step2.state == PROBLEM
    assert window.step2.status.text() == "Claude Desktop uses the demo, not your account"
    assert list(window.step2.button_widgets) == ["Switch Claude Desktop to your account"]
    assert core.claude_status().short == "Claude Desktop: set up for the demo"
    assert window.step3.state == TODO and not window.step3.button_widgets  # nothing to check until step 2 is right
    qtbot.mouseClick(window.step2.button_widgets["Switch Claude Desktop to your account"], Qt.MouseButton.LeftButton)
    env = entry(place)["env"]
    assert cc.DEMO_VAR not in env and env[cc.SOCKET_VAR] == place["socket_path"]
    assert window.step2.state == OK and window.step2.status.text() == "Added to Claude Desktop"
    assert "Check it works" in window.step3.button_widgets
    finish(core)


def test_demo_app_switches_a_real_entry_to_the_demo_only_when_asked(qtbot: QtBot, place: dict) -> None:
    write_entry(place, demo=False)
    core = make_core(place, demo=True)
    window = make_window(qtbot, core, place)
    assert window.step2.status.text() == "Claude Desktop uses your real account, not the demo"
    button = window.step2.button_widgets["Switch Claude Desktop to the demo"]
    assert list(window.step2.button_widgets) == ["Switch Claude Desktop to the demo"]
    window.ask = lambda box: False
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert cc.DEMO_VAR not in entry(place)["env"]  # "No": the real entry stays
    window.ask = lambda box: True
    qtbot.mouseClick(window.step2.button_widgets["Switch Claude Desktop to the demo"], Qt.MouseButton.LeftButton)
    assert entry(place)["env"][cc.DEMO_VAR] == "true"
    assert window.step2.state == OK and window.step2.status.text() == "Added to Claude Desktop (the demo)"
    finish(core)


def test_an_entry_with_credentials_of_its_own_is_replaced_by_this_apps(
    qtbot: QtBot, place: dict, real_keyring: object
) -> None:
    write_entry(place, demo=False, GSC_CLIENT_ID="x", GSC_CLIENT_SECRET="y", GSC_REFRESH_TOKEN="1//z")
    core = make_core(place)
    window = make_window(qtbot, core, place)
    assert window.step2.state == PROBLEM
    assert window.step2.status.text() == "Claude Desktop's entry uses other Google credentials"
    qtbot.mouseClick(window.step2.button_widgets["Use SearchDesk's sign-in instead"], Qt.MouseButton.LeftButton)
    assert not set(cc.CREDENTIAL_VARS) & set(entry(place)["env"])
    assert window.step2.state == OK
    finish(core)


def test_demo_settings_never_reach_a_real_entry(
    qtbot: QtBot, place: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_keyring: object
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    args = core_args(place, "settings_path")
    write_entry(place, demo=False)
    demo = Core(demo=True, **args)  # type: ignore[arg-type]
    demo.apply_settings(read_only=True, groups=[], site_url=SITE, allowed_sites=[SITE])
    assert "GSC_SITE_URL" not in entry(place)["env"]  # the real entry is not the demo's to change
    assert entry(place)["env"]["GSC_READ_ONLY"] == "false"
    real = Core(**args)  # type: ignore[arg-type]
    assert real.settings.site_url == "" and real.settings_path != demo.settings_path
    cc.remove(place["claude_path"])
    real.add_to_claude()
    assert "GSC_SITE_URL" not in entry(place)["env"] and entry(place)["env"]["GSC_READ_ONLY"] == "false"
    for core in (demo, real):
        core.listener.deleteLater()
        core.deleteLater()


# --- step 3: a result stands only for the account and entry it checked -----------------------------


def test_a_check_names_what_it_checked_and_goes_when_the_entry_changes(qtbot: QtBot, place: dict) -> None:
    place = dict(place, server=cc.server_command())  # the real server, run by the real self-check
    core = make_core(place, demo=True)
    window = make_window(qtbot, core, place)
    window.add_to_claude(confirm=lambda: True)
    with qtbot.waitSignal(core.check_done, timeout=60_000):
        window.run_check()
    assert window.step3.status.text().startswith("SearchDesk works")  # Claude Desktop has not started it yet
    assert "with Claude Desktop's SearchDesk entry (the demo)" in window.check_result.subject.text()
    core.apply_settings(read_only=True, groups=[], site_url="", allowed_sites=[])  # the entry changes
    assert core.last_check is None
    assert window.step3.status.text() == "Not checked yet" and not window.check_result.isVisibleTo(window)
    finish(core)


def test_a_check_goes_when_the_account_changes(qtbot: QtBot, place: dict, tmp_path: Path, real_keyring: object) -> None:
    keys = []
    for name in ("a", "b"):
        key = tmp_path / f"{name}.json"
        key.write_text(
            json.dumps(
                {
                    "type": "service_account",
                    "client_email": f"{name}@proj.iam.gserviceaccount.com",
                    "private_key": "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n",
                }
            )
        )
        keys.append(key)
    core = make_core(place)
    core.use_service_account(keys[0])
    core.last_check = "a result for a@"
    assert core.last_check == "a result for a@"
    assert core.check_subject().account == "the service account a@proj.iam.gserviceaccount.com"
    core.use_service_account(keys[1])  # a second account: Claude may use both, and the check covers both
    assert core.last_check is None
    assert core.check_subject().account == (
        "the service account a@proj.iam.gserviceaccount.com and the service account b@proj.iam.gserviceaccount.com"
    )
    core.last_check = "a result for both"
    core.set_claude_may_use("a@proj.iam.gserviceaccount.com", False)  # Settings keeps one from Claude
    assert core.last_check is None
    finish(core)


def test_a_failed_check_speaks_the_apps_words(qtbot: QtBot, place: dict, real_keyring: object) -> None:
    """Not signed in: the real server asks this app, which has no account; the verdict says what to do here."""
    place = dict(place, server=cc.server_command())
    core = make_core(place)
    window = make_window(qtbot, core, place)
    with qtbot.waitSignal(core.check_done, timeout=60_000):
        window.run_check()
    assert window.step3.state == PROBLEM
    verdict = window.check_result.verdict.text()
    assert verdict == CHECK_WORDS["not_configured"]
    shown = "\n".join(w.text() for w in window.findChildren(type(window.status_line)) if w.isVisibleTo(window))
    for words in ("credential variables", "see docs", "Open SearchDesk", "list_sites", "GSC_"):
        assert words not in shown
    finish(core)


# --- the .mcpb route (macOS and Windows; untested against a real Claude Desktop here) --------------


def _extension(place: dict, version: str) -> None:
    folder = Path(place["claude_path"]).parent / "Claude Extensions" / "local.mcpb.searchdesk.searchdesk"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"name": "searchdesk", "version": version}))


def test_bundle_build_switches_a_demo_entry_to_the_extension(
    qtbot: QtBot, place: dict, tmp_path: Path, real_keyring: object
) -> None:
    bundle = tmp_path / "searchdesk.mcpb"
    bundle.write_text("zip")
    opened: list[Path] = []
    write_entry(place, demo=True)
    core = make_core(place, bundle=bundle, open_file=lambda p: opened.append(p) or True)  # type: ignore[func-returns-value]
    window = make_window(qtbot, core, place)
    qtbot.mouseClick(window.step2.button_widgets["Switch Claude Desktop to your account"], Qt.MouseButton.LeftButton)
    assert opened == [bundle] and cc.read_entry(place["claude_path"]) is None
    assert window.step2.status.text() == "Opened in Claude Desktop"
    finish(core)


def test_demo_app_with_the_extension_installed_is_not_green(qtbot: QtBot, place: dict) -> None:
    _extension(place, __version__)
    core = make_core(place, demo=True)
    window = make_window(qtbot, core, place)
    assert window.step2.state == PROBLEM
    window.ask = lambda box: True
    qtbot.mouseClick(window.step2.button_widgets["Switch Claude Desktop to the demo"], Qt.MouseButton.LeftButton)
    assert "Remove it there first" in window.step2.error.text()
    assert not Path(place["claude_path"]).exists()
    finish(core)


def test_an_extension_of_another_version_needs_updating(
    qtbot: QtBot, place: dict, tmp_path: Path, real_keyring: object
) -> None:
    """A build that carries the extension file offers to update it; a release carries none, so it says to remove
    the old one in Claude Desktop and offers nothing that would put SearchDesk in Claude Desktop twice."""
    _extension(place, "0.0.1")
    core = make_core(place)
    window = make_window(qtbot, core, place)
    assert window.step2.state == PROBLEM and set(window.step2.button_widgets) == {"Look again"}
    assert "version 0.0.1" in window.step2.detail.text()
    assert "Remove it in Claude Desktop (Settings, Extensions, SearchDesk)" in window.step2.detail.text()
    finish(core)
    bundle = tmp_path / "searchdesk.mcpb"
    bundle.write_text("zip")
    core = make_core(place, bundle=bundle)
    window = make_window(qtbot, core, place)
    assert window.step2.state == PROBLEM and "Update the extension" in window.step2.button_widgets
    finish(core)


# --- sign-in -----------------------------------------------------------------------------------------


def test_sign_in_shows_the_link_to_copy_and_the_time_left(
    qtbot: QtBot, place: dict, tmp_path: Path, real_keyring: object
) -> None:
    client = tmp_path / "client.json"
    client.write_text(json.dumps({"installed": {"client_id": "cid", "client_secret": "cs"}}))
    core = make_core(place, open_browser=lambda url: False)  # the browser did not open
    window = make_window(qtbot, core, place)
    window.sign_in_with_client_file(client)
    link = window.signin_link
    assert window.step1.status.text() == "Waiting for you in the browser…"
    assert link.isVisibleTo(window) and link.link.text() == core.signin_url and link.link.isReadOnly()
    assert core.signin_url.startswith(AUTH_URL + "?")
    assert re.fullmatch(r"SearchDesk waits [45]:\d\d more for you to finish\.", link.time_left.text())
    first = link.time_left.text()
    qtbot.waitUntil(lambda: link.time_left.text() != first, timeout=3000)  # it counts down
    qtbot.mouseClick(link.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == core.signin_url
    with qtbot.waitSignal(core.signin_done, timeout=10_000):
        window.step1.button_widgets["Cancel"].click()
    assert not link.isVisibleTo(window)
    finish(core)


def test_file_pickers_start_in_downloads_else_home(
    qtbot: QtBot, place: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    assert windows.start_folder() == str(home)
    (home / "Downloads").mkdir()
    assert windows.start_folder() == str(home / "Downloads")
    asked: list[str] = []
    monkeypatch.setattr(
        windows.QFileDialog,
        "getOpenFileName",
        staticmethod(lambda parent, caption, folder, kinds: (asked.append(folder), ("", ""))[1]),
    )
    core = make_core(place, demo=True)
    window = make_window(qtbot, core, place)
    window.choose_client_file()
    window.choose_service_account()
    assert asked == [str(home / "Downloads")] * 2
    finish(core)


# --- approvals close the loop --------------------------------------------------------------------


class Claude:
    """One server process, as Claude Desktop keeps it running, calling delete_sitemap and, on cue, once
    more: a yes is bound to the server (and account) that asked, so only this process can use it."""

    def __init__(self, path: str) -> None:
        self.first: list[tuple[str, bool]] = []
        self.again = threading.Event()
        self.session = Background(lambda: self._run(path))

    async def _run(self, path: str) -> tuple[str, bool]:
        env = {"SEARCHDESK_AGENT_SOCKET": path, "SEARCHDESK_APPROVAL_WAIT": "1"}
        async with connect(env=env) as client:
            result = await client.call_tool("delete_sitemap", {"site": SITE, "feedpath": FEED})
            self.first.append((text_of(result), bool(result.is_error)))
            if not await asyncio.to_thread(self.again.wait, 60):
                raise TimeoutError("the test never asked Claude to try again")
            result = await client.call_tool("delete_sitemap", {"site": SITE, "feedpath": FEED})
            return text_of(result), bool(result.is_error)

    def first_answer(self, qtbot: QtBot) -> tuple[str, bool]:
        qtbot.waitUntil(lambda: bool(self.first) or self.session.done.is_set(), timeout=60_000)
        if not self.first:
            self.session.wait(qtbot)  # raises what went wrong
        return self.first[0]

    def try_again(self, qtbot: QtBot) -> tuple[str, bool]:
        self.again.set()
        return self.session.wait(qtbot, 60_000)


def test_a_late_answer_says_what_to_tell_claude(qtbot: QtBot, place: dict) -> None:
    core = make_core(place, demo=True)
    queue = ApprovalQueue(core.book, demo=True, arm_delay_ms=0)
    window = make_window(qtbot, core, place)
    claude = Claude(place["socket_path"])
    text, is_error = claude.first_answer(qtbot)
    assert is_error and "SearchDesk" in text  # Claude stopped waiting; nothing was deleted
    dialog = queue.dialog
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.stopped_label.isVisibleTo(dialog))
    assert dialog.stopped_label.text() == STOPPED_WAITING
    arm(qtbot, dialog)  # only a person who looked answers
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    late = window.approvals.late_labels
    qtbot.waitUntil(lambda: len(late) == 1)
    assert late[0].text().startswith("You approved “Remove a sitemap” (Property: sc-domain:example.com; Sitemap: ")
    assert "Now tell Claude: “I approved it in SearchDesk, please try again.”" in late[0].text()
    assert window.approvals.waiting.text() == "No approval questions waiting."
    # Claude asks again: the yes is used once, and the window no longer asks the person to do anything.
    text, is_error = claude.try_again(qtbot)
    assert not is_error, text
    qtbot.waitUntil(lambda: not window.approvals.late_labels)
    assert core.book.activity[-1].decision == "approved" and core.book.activity[-1].late  # and used: done above
    queue.close()
    queue.deleteLater()
    finish(core)


# --- the smaller items ---------------------------------------------------------------------------


def test_connected_now_clears_as_soon_as_the_server_goes(qtbot: QtBot, place: dict) -> None:
    core = make_core(place, demo=True)
    window = make_window(qtbot, core, place)
    server = socket.socket(socket.AF_UNIX)
    server.connect(place["socket_path"])
    qtbot.waitUntil(lambda: "1 connected now" in window.status_line.text(), timeout=3000)
    server.close()
    qtbot.waitUntil(lambda: "connected now" not in window.status_line.text(), timeout=3000)
    finish(core)


def test_closing_to_the_tray_says_where_the_app_went_once(qtbot: QtBot, qapp: object, place: dict) -> None:
    from searchdesk_desktop.app import DesktopApp

    core = Core(demo=True, **core_args(place))  # type: ignore[arg-type]
    app = DesktopApp(qapp, core, autostart=place["autostart"], tray=True)  # type: ignore[arg-type]
    app.start()
    assert app.tray is not None and app.tray.last_message is None
    app.window.close()
    heading, text = app.tray.last_message or ("", "")
    assert heading == "SearchDesk (Demo) is still running" and "Quit SearchDesk" in text
    app.tray.last_message = None
    app.window.show()
    app.window.close()
    assert app.tray.last_message is None  # said once
    app.quit()
    app.dispose()


def test_the_keyring_is_named_as_a_person_knows_it(qtbot: QtBot, place: dict, real_keyring: object) -> None:
    assert describe_place("Secret Service", "GNOME") == "your system's keyring (GNOME Keyring)"
    assert describe_place("Secret Service", "KDE") == "your system's keyring (KDE Wallet)"
    assert describe_place("macOS Keychain") == "your Mac's keychain"
    assert describe_place("Windows Credential Locker") == "Windows Credential Manager"
    core = make_core(place)
    about = AboutDialog(core)
    qtbot.addWidget(about)
    assert dict(about.rows)["Sign-in kept in"] == "your system's keyring (GNOME Keyring)"
    finish(core)
