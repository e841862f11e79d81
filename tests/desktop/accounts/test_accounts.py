"""The app holds several Google accounts (issue 18): one keyring record per sign-in, key files by path,
a default, the accounts Claude may use; an earlier version's single sign-in is moved on first start.

Real parts: the Secret Service keyring on a private bus, the fake Google OAuth server for sign-ins and
revocations, the app's real listener asked over its socket by the server's own agent client, and, at
the end, a real server subprocess whose calls the fake Google's request log judges.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_desktop.accounts.keystore import (
    ENTRY,
    MAX_RECORD_BYTES_UTF16,
    SERVICE,
    KeyStore,
    SignInRecord,
    entry_for,
    now,
)
from searchdesk_desktop.accounts.model import ROW_ROLE
from searchdesk_desktop.accounts.model import AccountState as Account
from searchdesk_desktop.accounts.signin import OAuthClient
from searchdesk_desktop.core import Core
from searchdesk_desktop.settings import AppSettings
from searchdesk_server.agent import client as agent_client
from searchdesk_server.agent.protocol import AccountInfo
from tests.desktop.agent_helpers import Background, in_background
from tests.desktop.fake_oauth import CLIENT_ID, CLIENT_SECRET, EMAIL, FakeOAuth, fake_oauth_server
from tests.desktop.helpers import finish, make_core, plant_sign_in
from tests.fakegoogle import FakeGoogle
from tests.server.stdio import connect, text_of

WM_RO = "https://www.googleapis.com/auth/webmasters.readonly"
OTHER = "agency@example.net"
OWN = OAuthClient(CLIENT_ID, CLIENT_SECRET, "own", testing=True)
SA_KEY = "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"


def record(account: str, refresh: str, *, kind: str = "own", issued: int | None = None) -> SignInRecord:
    secret = CLIENT_SECRET if kind == "own" else ""
    return SignInRecord(refresh, account, kind, CLIENT_ID, secret, (WM_RO,), now() if issued is None else issued)  # type: ignore[arg-type]


def key_file(path: Path, email: str) -> Path:
    path.write_text(json.dumps({"type": "service_account", "client_email": email, "private_key": SA_KEY}))
    return path


def rows(core: Core) -> list[tuple[str, str, bool, Account]]:
    return [(r.email, r.kind, r.default, r.state) for r in core.accounts.rows]


def listed(qtbot: QtBot, core: Core) -> list[tuple[str, bool]]:
    """What a server is told: the accounts Claude may use, over the app's real socket."""

    async def ask() -> tuple[AccountInfo, ...]:
        async with agent_client.AgentClient(core.listener.path) as c:
            return await c.accounts()

    return [(a.account, a.default) for a in in_background(qtbot, ask)]


def token_for(qtbot: QtBot, core: Core, account: str | None, *, force: bool = False) -> agent_client.Token:
    async def ask() -> agent_client.Token:
        async with agent_client.AgentClient(core.listener.path) as c:
            return await c.token([WM_RO], force_refresh=force, account=account)

    return in_background(qtbot, ask)  # type: ignore[no-any-return]


def browser(fake: FakeOAuth):  # type: ignore[no-untyped-def]
    def open_browser(url: str) -> bool:
        threading.Thread(target=fake.browser, args=(url,), daemon=True).start()
        return True

    return open_browser


# --------------------------------------------------------------------------------------------------
# Migration


def test_an_earlier_versions_sign_in_and_key_file_are_moved_on_first_start(
    qtbot: QtBot, place: dict, tmp_path: Path, real_keyring: object
) -> None:
    old = record(EMAIL, "1//0g-old-refresh-" + "r" * 100)
    KeyStore().backend.set_password(SERVICE, ENTRY, old.encode())  # as the single-account version wrote it
    sa = key_file(tmp_path / "sa.json", "bot@proj.iam.gserviceaccount.com")
    AppSettings(service_account_file=str(sa), site_url="https://www.example.com/").save(place["settings_path"])
    core = make_core(place)
    # The key file came first in the earlier version, so it stays the account in use; the sign-in joins it.
    assert rows(core) == [
        ("bot@proj.iam.gserviceaccount.com", "service_account", True, Account.SERVICE_ACCOUNT),
        (EMAIL, "oauth", False, Account.SIGNED_IN),
    ]
    assert core.account.state is Account.SERVICE_ACCOUNT
    store = KeyStore()
    assert store.load_legacy() is None and store.load(EMAIL) == old
    stored = store.backend.get_password(SERVICE, entry_for(EMAIL))
    assert len(stored.encode("utf-16-le")) <= MAX_RECORD_BYTES_UTF16  # Windows' credential limit
    saved = AppSettings.load(place["settings_path"])
    assert saved.service_account_file == "" and saved.site_url == "https://www.example.com/"
    assert [a["email"] for a in saved.accounts] == ["bot@proj.iam.gserviceaccount.com", EMAIL]
    finish(core)
    again = make_core(place)  # the second start finds nothing left to move, and loses nothing
    assert rows(again) == [
        ("bot@proj.iam.gserviceaccount.com", "service_account", True, Account.SERVICE_ACCOUNT),
        (EMAIL, "oauth", False, Account.SIGNED_IN),
    ]
    assert KeyStore().load(EMAIL) == old
    finish(again)


def test_an_unreadable_earlier_record_is_reported_and_cleared_by_signing_out(
    qtbot: QtBot, place: dict, real_keyring: object
) -> None:
    KeyStore().backend.set_password(SERVICE, ENTRY, "not a SearchDesk record")
    core = make_core(place)
    assert core.account.state is Account.KEYRING and core.account.damaged and "damaged" in core.account.detail
    core.sign_out()
    assert core.account.state is Account.SIGNED_OUT
    assert KeyStore().backend.get_password(SERVICE, ENTRY) is None
    finish(core)


def test_a_damaged_sign_in_offers_what_clears_it(qtbot: QtBot, place: dict, real_keyring: object) -> None:
    """An account's record spoiled by another program: that account asks to be signed in again (which
    writes a good record over it), the others are untouched; an earlier version's spoiled record is
    cleared by Sign out, the one button the window then offers."""
    from tests.desktop.helpers import make_window

    for email in (EMAIL, OTHER):
        plant_sign_in(place, record(email, f"1//rt-{email}"))
    KeyStore().backend.set_password(SERVICE, entry_for(OTHER), "changed by another program")
    core = make_core(place)
    states = {row.email: (row.state, row.detail) for row in core.accounts.rows}
    assert states[EMAIL][0] is Account.SIGNED_IN
    assert states[OTHER][0] is Account.EXPIRED and "damaged" in states[OTHER][1] and "Sign in again" in states[OTHER][1]
    finish(core)

    legacy = dict(place, settings_path=Path(str(place["settings_path"])).with_name("legacy.json"))
    KeyStore().backend.set_password(SERVICE, ENTRY, "not a SearchDesk record")
    core = make_core(legacy)
    window = make_window(qtbot, core, legacy)
    assert list(window.step1.button_widgets) == ["Sign out"], "the damaged record's only cure is Sign out"
    window.step1.button_widgets["Sign out"].click()
    assert core.account.state is Account.SIGNED_OUT
    finish(core)


# --------------------------------------------------------------------------------------------------
# Adding, the default, Claude's accounts, removing


def test_a_second_sign_in_leaves_the_first_and_each_account_gets_its_own_token(
    qtbot: QtBot, place: dict, real_keyring: object
) -> None:
    with fake_oauth_server() as fake:
        core = make_core(place, auth_uri=fake.auth_uri, open_browser=browser(fake))
        for email in (EMAIL, OTHER):
            fake.email = email
            with qtbot.waitSignal(core.signin_done, timeout=10_000) as done:
                core.sign_in(OWN)
            assert done.args == [""]
        first, second = KeyStore().load(EMAIL), KeyStore().load(OTHER)
        assert first is not None and second is not None and first.refresh_token != second.refresh_token
        assert rows(core) == [(EMAIL, "oauth", True, Account.SIGNED_IN), (OTHER, "oauth", False, Account.SIGNED_IN)]
        assert core.account.account == EMAIL  # adding changed nothing about the first
        assert listed(qtbot, core) == [(EMAIL, True), (OTHER, False)]
        # Each token comes from its own account's refresh token; a server that names none gets the default.
        for account, used in ((OTHER, second), (None, first), (EMAIL.upper(), first)):
            token = token_for(qtbot, core, account)
            assert token.account == (OTHER if account == OTHER else EMAIL)
            assert fake.token_requests[-1]["refresh_token"] == used.refresh_token
        # Signing in again with the first account replaces its record only.
        fake.email = EMAIL
        with qtbot.waitSignal(core.signin_done, timeout=10_000):
            core.sign_in(OWN)
        renewed = KeyStore().load(EMAIL)
        assert renewed is not None and renewed.refresh_token != first.refresh_token
        assert KeyStore().load(OTHER) == second
        assert [r[0] for r in rows(core)] == [EMAIL, OTHER]
        finish(core)


def test_the_default_and_the_accounts_claude_may_use_are_kept_and_enforced(
    qtbot: QtBot, place: dict, real_keyring: object
) -> None:
    with fake_oauth_server() as fake:
        for email in (EMAIL, OTHER):
            fake.refresh_tokens[f"1//rt-{email}"] = [WM_RO]
            plant_sign_in(place, record(email, f"1//rt-{email}"))
        core = make_core(place, auth_uri=fake.auth_uri)
        changes: list[int] = []
        core.accounts.modelReset.connect(lambda: changes.append(1))
        core.set_default_account(OTHER)
        assert listed(qtbot, core) == [(EMAIL, False), (OTHER, True)]
        assert token_for(qtbot, core, None).account == OTHER
        core.set_claude_may_use(OTHER, False)  # Settings: Claude may not use the agency's account
        assert listed(qtbot, core) == [(EMAIL, True)]  # the default for Claude is now the one it may use
        with pytest.raises(agent_client.AppUnknownAccount):
            token_for(qtbot, core, OTHER)
        assert token_for(qtbot, core, None).account == EMAIL
        row = core.accounts.find(OTHER)
        assert row is not None and (row.default, row.for_claude, row.state) == (True, False, Account.SIGNED_IN)
        assert len(changes) == 2  # the model told its views twice
        index = core.accounts.index(1, 0)
        assert core.accounts.data(index) == OTHER and core.accounts.data(index, ROW_ROLE).default
        saved = AppSettings.load(place["settings_path"])
        assert (saved.default_account, saved.withheld_accounts) == (OTHER, [OTHER])
        finish(core)
        again = make_core(place, auth_uri=fake.auth_uri)  # kept across restarts
        assert listed(qtbot, again) == [(EMAIL, True)]
        finish(again)


def test_removing_a_sign_in_revokes_it_at_google_and_leaves_the_others(
    qtbot: QtBot, place: dict, tmp_path: Path, real_keyring: object
) -> None:
    with fake_oauth_server() as fake:
        for email in (EMAIL, OTHER):
            fake.refresh_tokens[f"1//rt-{email}"] = [WM_RO]
            plant_sign_in(place, record(email, f"1//rt-{email}"))
        core = make_core(place, auth_uri=fake.auth_uri)
        core.use_service_account(key_file(tmp_path / "sa.json", "bot@proj.iam.gserviceaccount.com"))
        core.remove_account(EMAIL)  # the default
        qtbot.waitUntil(lambda: "1//rt-" + EMAIL in fake.revoked, timeout=5000)
        assert fake.revoked == {"1//rt-" + EMAIL}
        assert KeyStore().load(EMAIL) is None and KeyStore().load(OTHER) is not None
        assert [(r[0], r[2]) for r in rows(core)] == [(OTHER, True), ("bot@proj.iam.gserviceaccount.com", False)]
        with pytest.raises(agent_client.AppUnknownAccount):
            token_for(qtbot, core, EMAIL)
        core.remove_account("bot@proj.iam.gserviceaccount.com")  # a key file: forgotten, the file stays
        assert (tmp_path / "sa.json").exists() and [r[0] for r in rows(core)] == [OTHER]
        assert fake.revoked == {"1//rt-" + EMAIL}
        finish(core)


# --------------------------------------------------------------------------------------------------
# Health, per account


def test_the_seven_day_warning_and_an_expired_sign_in_are_per_account(
    qtbot: QtBot, place: dict, real_keyring: object
) -> None:
    with fake_oauth_server() as fake:
        six_days_ago = now() - 6 * 24 * 3600
        fake.refresh_tokens["1//old"] = [WM_RO]
        fake.refresh_tokens["1//fresh"] = [WM_RO]
        plant_sign_in(place, record(EMAIL, "1//old", issued=six_days_ago))  # an own client in Testing
        plant_sign_in(place, record(OTHER, "1//fresh", kind="packaged"))  # the build's (not in Testing)
        core = make_core(place, auth_uri=fake.auth_uri)
        old, fresh = core.accounts.rows
        assert old.warning_due and "7 days" in old.warning
        assert fresh.warning == "" and not fresh.warning_due
        # Google revokes the first account's grant: only that account expires.
        fake.revoked.add("1//old")
        with pytest.raises(agent_client.AppRefreshFailed):
            token_for(qtbot, core, EMAIL, force=True)
        qtbot.waitUntil(lambda: core.accounts.rows[0].state is Account.EXPIRED, timeout=5000)
        assert core.accounts.rows[1].state is Account.SIGNED_IN
        assert core.account.state is Account.EXPIRED  # the default's status, for the main window
        finish(core)


# --------------------------------------------------------------------------------------------------
# The whole path: two service accounts in the app, a real server, the fake Google


def test_a_real_server_routes_through_the_apps_accounts_and_follows_a_removal(
    qtbot: QtBot, place: dict, tmp_path: Path, fake_google_env: FakeGoogle
) -> None:
    fake = fake_google_env
    agency = "agency-bot@proj-2.iam.gserviceaccount.com"
    fake.add_account(
        agency, {"https://www.example.com/": "siteRestrictedUser", "https://client.example.org/": "siteOwner"}
    )
    first = fake.service_account_file(tmp_path / "own.json")
    second = fake.service_account_file(tmp_path / "agency.json", **fake.add_service_account(agency, "proj-2"))
    core = make_core(place)
    core.use_service_account(second)  # the agency's first: the default
    core.use_service_account(first)
    env = {**fake.env, "SEARCHDESK_AGENT_SOCKET": str(core.listener.path), "HOME": str(tmp_path)}

    async def calls() -> list[str]:
        out = []
        async with connect(args=(), env=env) as client:
            for site in ("https://www.example.com/", "https://client.example.org/"):
                out.append(text_of(await client.call_tool("get_site", {"site": site})))
            done.wait(30)  # the person removes the first account in the app
            out.append(text_of(await client.call_tool("get_site", {"site": "https://www.example.com/"})))
        return out

    done = threading.Event()
    running = Background(calls)
    qtbot.waitUntil(lambda: len([r for r in fake.api_requests() if "/sites/" in r.path]) == 2, timeout=60_000)
    core.remove_account(json.loads(first.read_text())["client_email"])
    done.set()
    www, client, after = running.wait(qtbot, timeout=60_000)
    assert "Permission: owner" in www and "Permission: owner" in client and "restricted" in after, [www, after]
    seen = [fake.account_of(r.token) for r in fake.api_requests() if "/sites/" in r.path]
    assert seen == ["demo.owner@example.com", agency, agency]
    finish(core)
