"""Several Google accounts as a person handles them (issue 18, phase 2): the main window's account
cards, Settings' "Google accounts Claude may use", and the Activity log naming the account.

Real parts: Qt widgets (offscreen) clicked as a person would, the Secret Service keyring on a private
bus, the fake Google OAuth server for sign-ins and revocations, the app's real listener asked over its
socket, and a real server subprocess whose calls the fake Google's request log judges.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_desktop.accounts.keystore import KeyStore
from searchdesk_desktop.core import Core
from searchdesk_desktop.widgets import ZWSP
from searchdesk_desktop.windows.about import accounts_text
from searchdesk_desktop.windows.accounts import MAKE_DEFAULT, REMOVE
from searchdesk_desktop.windows.activity import ActivityWindow
from searchdesk_desktop.windows.main import MainWindow
from searchdesk_desktop.windows.parts import ADD_ACCOUNT
from searchdesk_desktop.windows.settings import SettingsWindow
from searchdesk_server.agent import client as agent_client
from tests.desktop.accounts.test_accounts import OTHER, WM_RO, browser, listed, record, token_for
from tests.desktop.agent_helpers import Background
from tests.desktop.fake_oauth import EMAIL, fake_oauth_server
from tests.desktop.helpers import finish, make_core, make_window, plant_sign_in
from tests.fakegoogle import FakeGoogle
from tests.server.stdio import connect, text_of


def cards(window: MainWindow) -> list[str]:
    """The accounts step 1 lists, as a person sees them (none while there is only one)."""
    if not window.account_list.isVisibleTo(window):
        return []
    return [c.email.text().replace(ZWSP, "") for c in window.account_list.cards]


def click(window: MainWindow, email: str, label: str) -> None:
    card = window.account_list.card(email)
    assert card is not None, cards(window)
    card.button_widgets[label].click()


def two_sign_ins(place: dict, fake: object) -> None:
    for email in (EMAIL, OTHER):
        fake.refresh_tokens[f"1//rt-{email}"] = [WM_RO]  # type: ignore[attr-defined]
        plant_sign_in(place, record(email, f"1//rt-{email}"))


def test_adding_a_second_account_in_the_window_leaves_the_first_as_it_was(
    qtbot: QtBot, place: dict, real_keyring: object
) -> None:
    with fake_oauth_server() as fake:
        fake.refresh_tokens["1//rt-first"] = [WM_RO]
        first = record(EMAIL, "1//rt-first")
        plant_sign_in(place, first)
        core = make_core(place, auth_uri=fake.auth_uri, open_browser=browser(fake))
        window = make_window(qtbot, core, place)
        # One account: step 1 as it always was, with one more choice; no list of accounts to read.
        assert cards(window) == [] and window.step1.status.text() == f"Signed in as {EMAIL}"
        add = window.step1.button_widgets[ADD_ACCOUNT]
        choices = [a.text() for a in add.menu().actions()]
        assert choices == ["Sign in with another Google account", "Add a service-account key file…"]
        fake.email = OTHER  # the person picks their other Google account in the browser
        with qtbot.waitSignal(core.signin_done, timeout=10_000) as done:
            add.menu().actions()[0].trigger()
        assert done.args == [""]
        assert KeyStore().load(EMAIL) == first  # untouched
        assert cards(window) == [EMAIL, OTHER]
        assert window.step1.status.text() == "Signed in with 2 Google accounts"
        assert core.account.account == EMAIL  # still the default
        assert listed(qtbot, core) == [(EMAIL, True), (OTHER, False)]
        assert token_for(qtbot, core, None).account == EMAIL
        assert fake.token_requests[-1]["refresh_token"] == "1//rt-first"
        finish(core)


def test_remove_asks_what_it_does_then_revokes_deletes_and_the_card_goes(
    qtbot: QtBot, place: dict, real_keyring: object
) -> None:
    with fake_oauth_server() as fake:
        two_sign_ins(place, fake)
        core = make_core(place, auth_uri=fake.auth_uri)
        window = make_window(qtbot, core, place)
        asked: list[str] = []
        window.ask = lambda box: asked.append(box.text()) or False  # "Keep it": nothing happens
        click(window, OTHER, REMOVE)
        assert cards(window) == [EMAIL, OTHER] and KeyStore().load(OTHER) is not None and not fake.revoked
        text = asked[0]
        assert f"Remove {OTHER} from SearchDesk?" in text
        for says in ("signs this account out at Google", "deletes its sign-in from", "keyring"):
            assert says in text, text
        assert "Claude can then no longer use the properties this account sees" in text
        window.ask = lambda box: True
        click(window, OTHER, REMOVE)
        qtbot.waitUntil(lambda: fake.revoked == {"1//rt-" + OTHER}, timeout=5000)
        assert KeyStore().load(OTHER) is None and KeyStore().load(EMAIL) is not None
        assert cards(window) == []  # one account left: step 1 as it always was
        assert window.step1.status.text() == f"Signed in as {EMAIL}"
        with pytest.raises(agent_client.AppUnknownAccount):
            token_for(qtbot, core, OTHER)
        finish(core)


def test_removing_the_default_says_which_account_takes_over(qtbot: QtBot, place: dict, real_keyring: object) -> None:
    with fake_oauth_server() as fake:
        two_sign_ins(place, fake)
        core = make_core(place, auth_uri=fake.auth_uri)
        window = make_window(qtbot, core, place)
        row = core.accounts.find(EMAIL)
        assert row is not None and row.default
        assert f"{OTHER} becomes the default account" in window.confirm_remove_account_box(row).text()
        window.remove_account(EMAIL, confirm=lambda: True)
        assert core.account.account == OTHER and token_for(qtbot, core, None).account == OTHER
        finish(core)


def test_make_default_sends_the_next_call_that_names_no_account_there(
    qtbot: QtBot, place: dict, real_keyring: object
) -> None:
    with fake_oauth_server() as fake:
        two_sign_ins(place, fake)
        core = make_core(place, auth_uri=fake.auth_uri)
        window = make_window(qtbot, core, place)
        assert token_for(qtbot, core, None).account == EMAIL
        assert MAKE_DEFAULT not in window.account_list.card(EMAIL).button_widgets  # type: ignore[union-attr]
        click(window, OTHER, MAKE_DEFAULT)
        card = window.account_list.card(OTHER)
        assert card is not None and "the default account" in card.facts.text()
        assert token_for(qtbot, core, None).account == OTHER
        assert fake.token_requests[-1]["refresh_token"] == "1//rt-" + OTHER
        assert "default: " + OTHER in window.status_line.text()
        finish(core)


def test_each_card_says_how_the_sign_in_is_and_what_it_sees(qtbot: QtBot, place: dict, real_keyring: object) -> None:
    """The 7-day "Testing" warning on the account it concerns (loud when near), a count after a check."""
    from searchdesk_server.stdio_check import CheckedAccount, CheckReport

    with fake_oauth_server() as fake:
        plant_sign_in(place, record(EMAIL, "1//old", issued=int(__import__("time").time()) - 6 * 24 * 3600))
        plant_sign_in(place, record(OTHER, "1//fresh", kind="packaged"))
        core = make_core(place, auth_uri=fake.auth_uri)
        window = make_window(qtbot, core, place)
        old, fresh = window.account_list.cards
        assert "7 days" in old.health.text() and old.health.objectName() == "error"  # due: said loudly
        assert "Sign in again" in old.button_widgets and "Sign in again" not in fresh.button_widgets
        assert fresh.health.text() == "Signed in."
        assert "properties not counted yet" in fresh.facts.text()
        assert window.step1.status.text() == "Signed in with 2 Google accounts; 1 needs you (below)"
        core.last_check = CheckReport(accounts=[CheckedAccount(EMAIL, "oauth", 3), CheckedAccount(OTHER, "oauth", 1)])
        old, fresh = window.account_list.cards
        assert "sees 3 properties" in old.facts.text() and "sees 1 property" in fresh.facts.text()
        finish(core)


# --------------------------------------------------------------------------------------------------
# Settings: the accounts Claude may use


def test_unticking_an_account_in_settings_hides_it_from_a_running_server(
    qtbot: QtBot, place: dict, tmp_path: Path, fake_google_env: FakeGoogle
) -> None:
    fake = fake_google_env
    agency = "agency-bot@proj-2.iam.gserviceaccount.com"
    fake.add_account(agency, {"https://client.example.org/": "siteOwner"})
    own = fake.service_account_file(tmp_path / "own.json")
    second = fake.service_account_file(tmp_path / "agency.json", **fake.add_service_account(agency, "proj-2"))
    core = make_core(place)
    core.use_service_account(own)
    core.use_service_account(second)
    settings = SettingsWindow(core)
    qtbot.addWidget(settings)
    own_email = json.loads(own.read_text())["client_email"]
    assert settings.accounts_box.isVisibleTo(settings) and list(settings.account_boxes) == [own_email, agency]
    env = {**fake.env, "SEARCHDESK_AGENT_SOCKET": str(core.listener.path), "HOME": str(tmp_path)}
    env["MCP_DIAGNOSTICS"] = "true"
    unticked = threading.Event()

    async def calls() -> list[str]:
        async with connect(args=(), env=env) as client:
            before = text_of(await client.call_tool("list_sites", {}))
            unticked.wait(30)
            after = text_of(await client.call_tool("list_sites", {}))
            described = text_of(await client.call_tool("describe_connection", {}))
        return [before, after, described]

    running = Background(calls)
    qtbot.waitUntil(lambda: any(fake.account_of(r.token) == agency for r in fake.api_requests()), timeout=60_000)
    settings.account_boxes[agency].setChecked(False)
    assert settings.save()
    unticked.set()
    before, after, described = running.wait(qtbot, timeout=60_000)
    assert "https://client.example.org/" in before and agency in before
    assert "https://client.example.org/" not in after and agency not in after, after
    assert agency not in described and own_email in described, described
    last = [r for r in fake.api_requests() if "/sites" in r.path][-1]
    assert fake.account_of(last.token) == "demo.owner@example.com"
    finish(core)


def test_settings_will_not_leave_claude_without_an_account(qtbot: QtBot, place: dict, real_keyring: object) -> None:
    with fake_oauth_server() as fake:
        two_sign_ins(place, fake)
        core = make_core(place, auth_uri=fake.auth_uri)
        settings = SettingsWindow(core)
        qtbot.addWidget(settings)
        for box in settings.account_boxes.values():
            box.setChecked(False)
        assert "Tick at least one account" in settings.accounts_error.text()
        assert not settings.save_button.isEnabled() and not settings.save()
        assert [r.for_claude for r in core.accounts.rows] == [True, True]  # nothing was saved
        settings.account_boxes[EMAIL].setChecked(True)
        assert settings.save() and listed(qtbot, core) == [(EMAIL, True)]
        settings.load()  # reopened: what is saved
        assert {e: b.isChecked() for e, b in settings.account_boxes.items()} == {EMAIL: True, OTHER: False}
        finish(core)


def test_settings_with_one_account_says_nothing_about_accounts(qtbot: QtBot, place: dict, real_keyring: object) -> None:
    plant_sign_in(place, record(EMAIL, "1//rt"))
    core = make_core(place)
    settings = SettingsWindow(core)
    qtbot.addWidget(settings)
    assert not settings.accounts_box.isVisibleTo(settings)
    finish(core)


# --------------------------------------------------------------------------------------------------
# Activity and About name the account


def test_activity_names_the_account_a_change_was_made_for(
    qtbot: QtBot, place: dict, real_keyring: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from searchdesk_server.journal.paths import journal_path
    from searchdesk_server.journal.store import Approval, Entry, Journal, Kind, Target

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # this test's own record
    with fake_oauth_server() as fake:
        two_sign_ins(place, fake)
        core: Core = make_core(place, auth_uri=fake.auth_uri)
        by = "a program that says it is Claude Desktop (version 0.9.1)"
        site = "https://example.com/"
        entry = Entry(Kind.ANSWER, "delete_site", OTHER, site, (Target("Property", site),), by, Approval.WAITING)
        Journal(journal_path()).append(entry)  # as the server records a question still waiting
        window = ActivityWindow(core)
        qtbot.addWidget(window)
        window.refresh()
        assert window.table.item(0, 3).text().replace(ZWSP, "") == OTHER  # wraps at its dots on screen
        assert window.table.item(0, 4).text() == by
        assert f"{OTHER},{by}" in window.csv_text()  # the copy has the address as it is
        window.table.item(0, 3).setSelected(True)
        window.copy_selection()
        from PySide6.QtGui import QGuiApplication

        assert QGuiApplication.clipboard().text() == OTHER
        assert accounts_text(core) == f"{EMAIL} (default), {OTHER}"
        finish(core)
