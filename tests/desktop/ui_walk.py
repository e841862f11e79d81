"""Walk every window of the app through the states a person meets, and check each one.

Run as a program (``python -m tests.desktop.ui_walk``) by ``test_readable.py``, one process per screen
set-up: the screen's size and Qt's scale factor are fixed when Qt starts, so each combination needs a
process of its own. The screen comes from the offscreen platform's ``configfile=`` option (or, for the
colour schemes, a real X server); the fonts are made larger here, before any window exists.

The states (issues 15 and 18): the main window (demo and real × signed out, signed in, service
account, two accounts (a sign-in near its 7-day "Testing" end and a service account; with ordinary
and with long addresses) × Claude Desktop's entry absent, the demo's, the real one's, a broken file ×
check not run, running, passed, failed; plus sign-in waiting, questions waiting, late answers,
"Claude asked again" and the confirmation before removing each of two accounts), each Settings
error, Settings' accounts Claude may use (and none ticked), Activity empty and with a record of 200 lines
(for two accounts), the approval dialog for each guarded tool (with 1 and with 200 owners; real, demo,
an older server in the demo app, Claude stopped waiting; before and after it arms), and About (one
account, two, the demo). Everything is real —
the app's own core and windows, the real keyring of the test session, Claude Desktop's settings
file in a scratch folder, the self-check's results from the real server — except Google, which no
state needs.

Prints a JSON list of problems (empty: every state passed) on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import faulthandler
import functools
import gc
import json
import os
import pickle
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, Qt, QUrl
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox, QWidget

from searchdesk_desktop.accounts.keystore import KeyStore, SignInRecord
from searchdesk_desktop.accounts.store import AccountStore
from searchdesk_desktop.approval.book import ApprovalBook, State
from searchdesk_desktop.approval.dialog import ApprovalDialog
from searchdesk_desktop.claude import config_file as cc
from searchdesk_desktop.claude import found as claude_found
from searchdesk_desktop.core import Core
from searchdesk_desktop.help import AddressDialog, help_url
from searchdesk_desktop.lifecycle.autostart import Autostart
from searchdesk_desktop.screenshots import as_sent
from searchdesk_desktop.settings import AppSettings
from searchdesk_desktop.widgets import fit_height
from searchdesk_desktop.windows.about import AboutDialog
from searchdesk_desktop.windows.activity import ActivityWindow
from searchdesk_desktop.windows.main import MainWindow
from searchdesk_desktop.windows.parts import OK, PROBLEM, TODO
from searchdesk_desktop.windows.settings import SettingsWindow
from searchdesk_server.agent.protocol import ApprovalRequest
from searchdesk_server.approval import question as server_question
from searchdesk_server.stdio_check import CHECK_CLIENT, CheckedAccount, CheckReport, shown
from tests.desktop.uicheck import contrast_problems, layout_problems

ACCOUNT = "alex.morgan@example-garden-supplies.com"
SA_EMAIL = "searchdesk-reader@example-garden-supplies.iam.gserviceaccount.com"
#: Addresses as long as real ones get (an agency's client, a project's service account).
LONG_ACCOUNT = "marketing.operations.team-lead@northern-regional-garden-supplies-cooperative.example.co.uk"
LONG_SA_EMAIL = "searchdesk-reporting-reader-2026@client-analytics-project-4821.iam.gserviceaccount.com"
#: The main window's accounts: none, one of each kind, two (a sign-in near Google's 7-day "Testing"
#: end, and a service account), and two with long addresses.
ACCOUNTS = ("signed out", "signed in", "service account", "two accounts", "two long accounts", "no OAuth client")
CLIENT_ID = "123456789012-release.apps.googleusercontent.com"
#: The walk's default property: not one the demo's account can see (the self-check warns about it).
DEFAULT_SITE = "sc-domain:example-garden-supplies.com"
#: The self-check's results every main-window state is shown with (`--reports` holds one more, "warned").
CHECKS = ("passed", "failed")

Check = Callable[[QWidget, str], list[str]]
NEVER = 600_000  # an arming delay no walk outlasts
ENTRIES = ("no entry", "demo entry", "real entry", "entry with its own credentials", "broken file")


def settle(qapp: QApplication) -> None:
    """Let layouts and deferred deletions run (a window's final geometry comes a few events later)."""
    for _ in range(3):
        qapp.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # buttons a state replaced
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)


class Scene:
    """A scratch home for one walk: Claude Desktop's folder, a server program, settings, a socket."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.claude = root / "Claude" / cc.CONFIG_NAME
        self.claude.parent.mkdir(parents=True)
        exe = root / "app" / "searchdesk-server"
        exe.parent.mkdir()
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
        self.server = cc.ServerCommand(str(exe))
        self.sockets = Path(tempfile.mkdtemp(prefix="sdw-"))  # short: a socket path has a length limit
        # Claude Desktop is installed on the walk's computer (its desktop entry where its installer puts it).
        entry = root / "share" / "applications" / "claude-desktop.desktop"
        entry.parent.mkdir(parents=True, exist_ok=True)
        entry.write_text("[Desktop Entry]\nName=Claude\n")
        places = {"XDG_DATA_HOME": str(root / "share"), "XDG_DATA_DIRS": str(root / "no-system"), "PATH": ""}
        self.find_claude = functools.partial(claude_found.on_this_computer, home=root, env=places)
        self.key_file = self._key_file("service-account.json", SA_EMAIL)
        self.long_key_file = self._key_file("client-analytics-project-4821-reporting-reader.json", LONG_SA_EMAIL)
        self.client_file = root / "oauth_client.json"
        self.client_file.write_text(json.dumps({"installed": {"client_id": CLIENT_ID, "client_secret": "x"}}))
        self._count = 0

    def _key_file(self, name: str, email: str) -> Path:
        path = self.root / name
        key = "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"
        path.write_text(json.dumps({"type": "service_account", "client_email": email, "private_key": key}))
        return path

    def core(self, *, demo: bool, account: str, **core_kw: Any) -> Core:
        """The app's core with its accounts: none ("signed out"), one Google sign-in ("signed in": its
        record in the real keyring, its line in the settings file), one service-account key file, or
        both ("two accounts": the sign-in is the default, made with the person's own OAuth client six
        days ago, so its 7-day "Testing" end is near; "two long accounts": the same with long
        addresses). With two, a check has counted each account's properties. `core_kw`: the Core's own
        arguments a state sets otherwise (a computer without Claude Desktop: `without_claude`)."""
        self._count += 1
        path = self.root / f"settings-{self._count}.json"
        settings = AppSettings(
            site_url=DEFAULT_SITE,
            allowed_sites=["sc-domain:example-garden-supplies.com", "https://shop.example-garden-supplies.com/"],
            first_run_done=True,
        )
        settings.save(path)
        keystore = KeyStore()
        keystore.delete(ACCOUNT)
        keystore.delete(LONG_ACCOUNT)
        store = AccountStore(keystore, settings, path)
        two = account in ("two accounts", "two long accounts")
        email = LONG_ACCOUNT if account == "two long accounts" else ACCOUNT
        if account == "signed in" or two:
            record = SignInRecord(
                refresh_token="1//walk-not-a-real-token",
                account=email,
                client_kind="own" if two else "packaged",
                client_id=CLIENT_ID,
                client_secret="x" if two else "",
                scopes=("https://www.googleapis.com/auth/webmasters",),
                issued_at=int(time.time()) - (6 * 24 * 3600 if two else 0),
            )
            store.add_sign_in(store.save_sign_in(record))
        if account == "service account" or two:
            store.add_key_file(self.long_key_file if account == "two long accounts" else self.key_file)
        places = {"claude_path": self.claude, "find_claude": self.find_claude, **core_kw}
        core = Core(
            demo=demo,
            settings_path=path,
            keystore=keystore,
            socket_path=str(self.sockets / f"a{self._count}.sock"),
            server=self.server,
            open_browser=lambda url: False,
            **places,
        )
        core.start()
        if two:  # a check has counted each account's properties
            core.last_check = CheckReport(accounts=[CheckedAccount(r.email, r.kind, 7) for r in core.accounts.rows])
            core.last_check = None
        return core

    def without_claude(self) -> dict[str, Any]:
        """A computer without Claude Desktop (the Core's arguments): no program where its installer puts
        it, and no settings folder of its own (the one SearchDesk makes when it adds itself is no evidence)."""
        bare = self.root / f"no-claude-{self._count}"
        places = {"XDG_DATA_HOME": str(bare / "share"), "XDG_DATA_DIRS": str(bare / "no-system"), "PATH": ""}
        return {
            "claude_path": bare / "Claude" / cc.CONFIG_NAME,
            "find_claude": functools.partial(claude_found.on_this_computer, home=bare, env=places),
        }

    def entry(self, kind: str) -> None:
        """Claude Desktop's settings file: no entry, the demo's entry, the real one's, or not JSON."""
        socket = str(self.sockets / f"a{self._count}.sock")
        self.claude.unlink(missing_ok=True)
        if kind == "demo entry":
            cc.add(self.claude, self.server, cc.ServerSettings(demo=True, agent_socket=socket), allow_demo=True)
        elif kind == "real entry":
            cc.add(self.claude, self.server, cc.ServerSettings(agent_socket=socket))
        elif kind == "entry with its own credentials":
            cc.add(self.claude, self.server, cc.ServerSettings(agent_socket=socket))
            data = json.loads(self.claude.read_text())
            data["mcpServers"]["searchdesk"]["env"]["GSC_REFRESH_TOKEN"] = "1//not-a-real-token"
            self.claude.write_text(json.dumps(data))
        elif kind == "broken file":
            self.claude.write_text('{"mcpServers": {"searchdesk": {"command": "/opt/SearchDesk/searchdesk-server",')

    def close(self) -> None:
        KeyStore().delete(ACCOUNT)
        KeyStore().delete(LONG_ACCOUNT)
        for p in self.sockets.iterdir():
            p.unlink()
        self.sockets.rmdir()


def dispose(*objects: Any) -> None:
    for obj in objects:
        if isinstance(obj, Core):
            obj.stop(wait=True)
            obj.listener.deleteLater()
        if obj is not None:
            obj.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()  # here, on the Qt thread: see main()


def request(
    q: Any, number: int, client: tuple[str, str] = ("claude-ai", "0.14.10"), *, demo: bool = False
) -> ApprovalRequest:
    """The question as a server of this version sends it: bound to that server and its account."""
    return as_sent(q, f"walk-{number}", client, server="walk-server", account="demo" if demo else ACCOUNT, demo=demo)


def owners(n: int, who: str) -> list[str]:
    return [f"{who}-{i:03d}.seo-contractor@agency-example-partners.com" for i in range(n)]


def questions() -> dict[str, Any]:
    site = "https://www.example-garden-supplies.com/"
    last = server_question.OwnerFacts(server_question.Ownership.LAST_OWNER)
    others = server_question.OwnerFacts(server_question.Ownership.OTHERS_REMAIN, 3)
    return {
        "delete_site": server_question.delete_site(site, ACCOUNT, last),
        "delete_sitemap": server_question.delete_sitemap(
            site, "https://www.example-garden-supplies.com/sitemaps/products-2026-archive-part-07.xml", ACCOUNT
        ),
        "unverify_site": server_question.unverify_site(site, ACCOUNT, others),
        "update_site_owners (1 owner)": server_question.update_site_owners(
            site, [ACCOUNT, "old.agency@example.net"], [ACCOUNT, "new.agency@example.net"], ACCOUNT
        ),
        "update_site_owners (200 owners)": server_question.update_site_owners(
            site, [ACCOUNT, *owners(200, "old")], [ACCOUNT, *owners(200, "new")], ACCOUNT
        ),
        **{
            f"{tool} ({n} other owners)": build(
                site,
                ACCOUNT,
                server_question.owner_facts([ACCOUNT, *owners(n, "other")], readable=True, account=ACCOUNT),
            )
            for tool, build in (
                ("delete_site", server_question.delete_site),
                ("unverify_site", server_question.unverify_site),
            )
            for n in (1, 10, 200)
        },
    }


# --- the walk ---------------------------------------------------------------------------------------


def main_window_states(qapp: QApplication, scene: Scene, reports: dict[str, Any]) -> Iterator[tuple[str, QWidget]]:
    for demo in (False, True):
        for account in ("demo",) if demo else ACCOUNTS:
            with _client_file(scene, present=account != "no OAuth client"):
                core = scene.core(demo=demo, account=account)
                window = MainWindow(core, has_tray=True)
                window.show()
                mode = "demo" if demo else "real"
                for entry in ENTRIES:
                    scene.entry(entry)
                    shown_checks = (("not checked", None), ("checking", "busy"), *((c, reports[c]) for c in CHECKS))
                    for check, result in shown_checks:
                        core.last_check = result
                        window.refresh()
                        settle(qapp)
                        yield f"main window ({mode}, {account}, {entry}, check {check})", window
                if account == "signed out":
                    core.sign_in()
                    window.refresh()
                    settle(qapp)
                    yield f"main window ({mode}, sign-in waiting)", window
                    core.cancel_sign_in()
                if account in ("signed in", "demo"):
                    yield from _approval_states(qapp, core, window, mode)
                if account.startswith("two"):
                    yield from _remove_states(qapp, core, window, account)
                window.close()
                dispose(window, core)


def _remove_states(qapp: QApplication, core: Core, window: MainWindow, account: str) -> Iterator[tuple[str, QWidget]]:
    """The confirmation before removing each account (the sign-in, which is the default; the key file)."""
    for row in core.accounts.rows:
        box = window.confirm_remove_account_box(row)
        box.show()
        settle(qapp)
        yield f"remove confirmation ({account}, {row.kind})", box
        box.close()
        dispose(box)


def _approval_states(qapp: QApplication, core: Core, window: MainWindow, mode: str) -> Iterator[tuple[str, QWidget]]:
    """Questions waiting; answers given after Claude stopped waiting (approved, and said no); and
    denied questions Claude asked again, each with "Change my mind" (more than the window lists)."""
    demo = mode == "demo"
    asked = list(questions().items())
    entries = [core.book.ask(request(q, 900 + n, demo=demo)) for n, (_name, q) in enumerate(asked)]
    window.refresh()
    settle(qapp)
    yield f"main window ({mode}, {len(entries)} questions waiting)", window
    for n, entry in enumerate(entries):
        core.book.stopped_waiting(entry.key)
        core.book.answer(entry.key, n % 2 == 0, "dialog")
    window.refresh()
    settle(qapp)
    yield f"main window ({mode}, answers after Claude stopped waiting)", window
    for entry in entries:
        core.book.take(entry.key)
    for n, entry in enumerate(entries):
        if entry.state is State.DENIED:
            for _ in range(n + 1):
                core.book.note_asked_again(entry.key)
    window.refresh()
    settle(qapp)
    yield f"main window ({mode}, Claude asked again after you said no)", window
    again = [core.book.ask(request(q, 950 + n, demo=demo)) for n, (_name, q) in enumerate(asked)]
    for entry in again:
        core.book.answer(entry.key, False, "dialog")
        core.book.note_asked_again(entry.key)
    window.refresh()
    settle(qapp)
    shown = len(core.book.asked_again_entries())
    yield f"main window ({mode}, Claude asked again about {shown} questions)", window


@contextlib.contextmanager
def _client_file(scene: Scene, *, present: bool) -> Iterator[None]:
    """A release build has an OAuth client built in; a development build has none."""
    saved = os.environ.pop("SEARCHDESK_OAUTH_CLIENT_FILE", None)
    if present:
        os.environ["SEARCHDESK_OAUTH_CLIENT_FILE"] = str(scene.client_file)
    try:
        yield
    finally:
        os.environ.pop("SEARCHDESK_OAUTH_CLIENT_FILE", None)
        if saved is not None:
            os.environ["SEARCHDESK_OAUTH_CLIENT_FILE"] = saved


def settings_states(qapp: QApplication, scene: Scene) -> Iterator[tuple[str, QWidget]]:
    yield from _settings_accounts_states(qapp, scene)
    for demo in (False, True):
        core = scene.core(demo=demo, account="signed in" if not demo else "demo")
        scene.entry("demo entry" if demo else "real entry")
        window = SettingsWindow(core)
        window.show()
        settle(qapp)
        mode = "demo" if demo else "real"
        yield f"settings ({mode})", window
        for name, edit in SETTINGS_EDITS.items():
            window.load()
            edit(window)
            settle(qapp)
            yield f"settings ({mode}, {name})", window
        yield from _close_with_edits_states(qapp, window, mode)
        window.load()
        scene.entry("broken file")
        window.save()
        settle(qapp)
        yield f"settings ({mode}, Claude's file broken on save)", window
        window.close()
        dispose(window, core)


def _settings_accounts_states(qapp: QApplication, scene: Scene) -> Iterator[tuple[str, QWidget]]:
    """Settings with two accounts (the list of accounts Claude may use), and with none of them ticked."""
    for account in ("two accounts", "two long accounts"):
        core = scene.core(demo=False, account=account)
        scene.entry("real entry")
        window = SettingsWindow(core)
        window.show()
        settle(qapp)
        yield f"settings ({account})", window
        for box in window.account_boxes.values():
            box.setChecked(False)
        settle(qapp)
        if "accounts" not in window.errors():
            raise RuntimeError("Settings let every account be unticked without saying what that means")
        yield f"settings ({account}, none ticked)", window
        window.load()  # back to what is saved (Close would ask about the edits)
        window.close()
        dispose(window, core)


def _close_with_edits_states(qapp: QApplication, window: SettingsWindow, mode: str) -> Iterator[tuple[str, QWidget]]:
    """Settings Close with edits asks (issue 26): Save, Discard changes or Keep editing; kept editing,
    the window stays open with the edit."""
    window.load()
    window.read_only.setChecked(not window.read_only.isChecked())
    asked: list[QMessageBox] = []

    def keep_editing(box: QMessageBox) -> QMessageBox.StandardButton:
        asked.append(box)
        return QMessageBox.StandardButton.Cancel

    window.choose = keep_editing
    window.close()
    if not asked or not window.isVisible() or not window.has_unsaved_changes():
        raise RuntimeError("Settings closed with unsaved changes without asking")
    box = asked[0]
    box.show()
    settle(qapp)
    yield f"settings ({mode}, Close with edits asks)", box
    box.close()
    dispose(box)
    window.load()


def autostart_demo_states(qapp: QApplication, scene: Scene) -> Iterator[tuple[str, QWidget]]:
    """Autostart in the demo (issue 26): ticked in the demo's main window, the entry starts the demo
    (``--demo``), and the real app does not count it as its own. Home is the scene's meanwhile."""
    saved = {name: os.environ.get(name) for name in ("HOME", "XDG_CONFIG_HOME")}
    os.environ["HOME"] = str(scene.root / "login")
    os.environ["XDG_CONFIG_HOME"] = str(scene.root / "login" / ".config")
    try:
        core = scene.core(demo=True, account="demo")
        window = MainWindow(core, has_tray=True)  # its start at login as the app makes it
        window.show()
        window.autostart_box.setChecked(True)
        settle(qapp)
        started = window.autostart.entry_args() or []
        if "--demo" not in started or not window.autostart_box.isChecked():
            raise RuntimeError(f"Start at login, ticked in the demo, does not start the demo: {started}")
        if Autostart().is_enabled():
            raise RuntimeError("the demo's start at login counts as the real app's")
        yield "main window (demo, starts at login)", window
        window.autostart_box.setChecked(False)
        window.close()
        dispose(window, core)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _no_group(window: SettingsWindow) -> None:
    window.all_tools.setChecked(False)
    for box in window.group_boxes.values():
        box.setChecked(False)


def _default_not_allowed(window: SettingsWindow) -> None:
    window.site.setText("sc-domain:other.example")
    window.allowed.setText("sc-domain:a.example")


def _too_many_brand_names(window: SettingsWindow) -> None:
    if not window.brand.fields:
        raise RuntimeError("Settings shows no line for the default property's brand names")
    next(iter(window.brand.fields.values())).setText(", ".join(f"garden supplies {i}" for i in range(21)))


#: Each mistake the Settings window explains beside its field.
SETTINGS_EDITS: dict[str, Callable[[SettingsWindow], None]] = {
    "no tool group": _no_group,
    "default property ambiguous": lambda w: w.site.setText("example-garden-supplies.com"),
    "allowed property refused": lambda w: w.allowed.setText("sc-domain:ok.example, ftp://files.example"),
    "default not allowed": _default_not_allowed,
    "too many brand names": _too_many_brand_names,
}


def question_for(n: int) -> Any:
    """The n-th of many different questions (each on a property of its own), every kind in turn."""
    site = f"https://shop-{n:03d}.example-garden-supplies.com/"
    last = server_question.OwnerFacts(server_question.Ownership.LAST_OWNER)
    kind = n % 5
    if kind == 0:
        return server_question.delete_site(site, ACCOUNT, last)
    if kind == 1:
        return server_question.delete_sitemap(site, f"{site}sitemaps/products-part-{n:03d}.xml", ACCOUNT)
    if kind == 2:
        return server_question.unverify_site(site, ACCOUNT, last)
    changed = owners(1 if kind == 3 else 200, f"new{n}")
    return server_question.update_site_owners(site, [ACCOUNT, *owners(1, "old")], [ACCOUNT, *changed], ACCOUNT)


#: Lines in the full Activity: a busy record of 200 changes and answers (and a gap where old rows went).
ACTIVITY_LINES = 200


def write_record(path: Path, lines: int = ACTIVITY_LINES) -> None:
    """A record as servers write it: every write tool in turn, approved every way, done, refused by
    Google (words and all), with no answer or no outcome; guarded calls declined, refused, or waiting;
    asked by two programs for two accounts (one with a long address); and one gap, where older rows
    were removed."""
    from datetime import UTC, datetime, timedelta

    from searchdesk_server.approval.question import describe_client
    from searchdesk_server.catalogue import TOOLS
    from searchdesk_server.journal.store import Approval, Entry, Journal, Kind, Result, Target

    journal = Journal(path)
    writes = [t for t in TOOLS if t.write]
    start = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
    approvals = (Approval.DIALOG, Approval.NOTIFICATION, Approval.CLIENT, Approval.TOKEN, Approval.APP)
    results = (Result.DONE, Result.REFUSED, Result.DONE, Result.UNKNOWN, None)
    answers = (Approval.DECLINED, Approval.REFUSED, Approval.WAITING, Approval.UNANSWERED)
    refusal = "Google says this account has no permission for the property; ask its owner to add you."
    said = "The SearchDesk app closed before anyone answered; {tool} did nothing. Open SearchDesk and ask again."
    journal.append(Entry(Kind.CHANGE, "submit_sitemap", ACCOUNT, "https://old.example/"), at=start)
    journal.remove_before(start + timedelta(minutes=1), "Changes before 2 November 2026 removed: kept for a year.")
    for n in range(lines - 1):
        spec = writes[n % len(writes)]
        at = start + timedelta(hours=n)
        client = ("claude-ai", "0.14.10") if n % 3 else ("Claude Code", "2.1.4")
        account = LONG_ACCOUNT if n % 2 else ACCOUNT
        if spec.guarded:
            q = question_for(n)
            values, site = q.values, q.site
        else:
            site = f"https://shop-{n:03d}.example-garden-supplies.com/"
            values = (("Property", site), ("Sitemap", f"{site}sitemaps/products-part-{n:03d}.xml"))
        common = {"account": account, "site": site, "asked_by": describe_client(*client)}
        targets = tuple(Target(label, value) for label, value in values)
        if spec.guarded and n % 4 == 3:  # sent nothing
            approval = answers[n % len(answers)]
            entry = Entry(Kind.ANSWER, spec.name, targets=targets, approval=approval, words=said, **common)
            journal.append(entry, at=at)
            continue
        approval = approvals[n % len(approvals)] if spec.guarded else Approval.NOT_ASKED
        change = journal.append(Entry(Kind.CHANGE, spec.name, targets=targets, approval=approval, **common), at=at)
        result = results[n % len(results)]
        if result is not None:
            words = refusal if result is Result.REFUSED else ""
            outcome = Entry(Kind.OUTCOME, spec.name, result=result, words=words, about=change.seq, **common)
            journal.append(outcome, at=at + timedelta(seconds=2))


def activity_states(qapp: QApplication, scene: Scene) -> Iterator[tuple[str, QWidget]]:
    """Empty, then a full record: 200 lines of every kind (see ``write_record``), read from a journal."""
    core = scene.core(demo=False, account="signed in")
    path = scene.root / f"journal-{time.monotonic_ns()}.sqlite3"
    window = ActivityWindow(core, journals=[path])
    window.refresh()
    window.show()
    settle(qapp)
    yield "activity (empty)", window
    write_record(path)
    window.refresh()
    settle(qapp)
    assert window.table.rowCount() == ACTIVITY_LINES, window.table.rowCount()
    yield f"activity ({ACTIVITY_LINES} lines)", window
    for row in range(4):  # a change done, one Google refused, with no answer from Google, not made
        window.show_line(row)
        line = window.line_dialog
        assert line is not None
        settle(qapp)
        yield f"activity (line {row + 1} whole)", line
    line.close()
    window.check_record()
    dialog = window.check_dialog
    assert dialog is not None
    settle(qapp)
    yield "check the record (intact)", dialog
    with sqlite3.connect(path) as db:  # edited by hand, and a change left without its outcome
        db.execute("UPDATE journal SET site = 'https://elsewhere.example/' WHERE seq = 40")
        db.execute("DELETE FROM journal WHERE seq = (SELECT MAX(seq) FROM journal) AND kind = 'outcome'")
    window.refresh()
    window.check_record()
    settle(qapp)
    yield "activity (a record that does not check)", window
    yield "check the record (does not check)", dialog
    dialog.close()
    window.close()
    dispose(dialog, line, window, core)


def approval_states(qapp: QApplication) -> Iterator[tuple[str, QWidget]]:
    """Each question: from a real server in the real app, from the demo, from an older server (no
    requester) in the demo app, and after Claude stopped waiting; each before the dialog is armed
    (the buttons off) and once armed."""
    cases = (
        ("", False, False),
        (", demo", True, True),
        (", older server in the demo app", True, None),
        (", Claude stopped waiting", False, False),
        (", Claude stopped waiting while it was open", False, False),
    )
    for number, (name, q) in enumerate(questions().items()):
        for label, demo_app, demo_server in cases:
            for arm_delay_ms in (NEVER, 0):
                book = ApprovalBook()
                asked = request(q, number, demo=bool(demo_server))
                entry = book.ask(asked if demo_server is not None else replace(asked, requester=None))
                if label == ", Claude stopped waiting":
                    book.stopped_waiting(entry.key)
                dialog = ApprovalDialog(entry, demo=demo_app, arm_delay_ms=arm_delay_ms, waiting_after=2)
                dialog.place()  # where and how large the queue shows it
                dialog.show()
                if label == ", Claude stopped waiting while it was open":
                    settle(qapp)
                    book.stopped_waiting(entry.key)
                    dialog.set_caller_waiting(False)  # as the queue does: the line appears, nothing moves
                dialog.activateWindow()  # as a person brings it to the front
                deadline = time.monotonic() + 5
                while arm_delay_ms == 0 and not dialog.armed and time.monotonic() < deadline:
                    qapp.processEvents()
                if dialog.armed != (arm_delay_ms == 0):
                    raise RuntimeError(f"the approval dialog ({name}{label}) armed={dialog.armed}")
                settle(qapp)
                fit_height(dialog)
                settle(qapp)
                yield f"approval dialog ({name}{label}, {'armed' if dialog.armed else 'not armed yet'})", dialog
                dialog.close_silently()
                dispose(dialog)


def about_states(qapp: QApplication, scene: Scene) -> Iterator[tuple[str, QWidget]]:
    for account in ("signed in", "two long accounts", "demo"):
        core = scene.core(demo=account == "demo", account=account)
        dialog = AboutDialog(core)
        dialog.show()
        settle(qapp)
        yield f"about ({account})", dialog
        # What Help shows when no browser opens (made here: on the X server of the colour walk a click
        # could start a real browser).
        address = AddressDialog(QUrl(help_url(dialog.help.topic)), demo=core.demo)
        address.open_here()
        settle(qapp)
        yield f"about ({account}, Help with no browser)", address
        address.close()
        dialog.close()
        dispose(dialog, core)


# --- ticks only on evidence (issue 26) --------------------------------------------------------------

#: What the main window may say only once Claude Desktop has started SearchDesk (and the check passed).
CLAIMS = ("Claude can see", "Claude can use", "It works", "Claude Desktop started SearchDesk")


def shown_text(window: QWidget) -> str:
    """Every label a person sees in `window`, as one text."""
    return " ".join(label.text() for label in window.findChildren(QLabel) if label.isVisibleTo(window))


def true_or_stop(holds: bool, state: str, window: MainWindow) -> None:
    """A step that says what is not so stops the walk, with what the window said (a layout problem is
    reported with the rest; an untrue tick is a failure of its own)."""
    if not holds:
        steps = [(s.state, s.status.text()) for s in (window.step1, window.step2, window.step3)]
        raise RuntimeError(f"untrue in {state}: steps {steps}; the window says: {shown_text(window)}")


def never_claims(window: MainWindow, state: str) -> None:
    """Step 2 not green, step 3 not green, and nothing says Claude can use SearchDesk."""
    said = [claim for claim in CLAIMS if claim in shown_text(window)]
    true_or_stop(window.step2.state != OK and window.step3.state != OK and not said, state, window)


def no_claude_states(qapp: QApplication, scene: Scene, reports: dict[str, Any]) -> Iterator[tuple[str, QWidget]]:
    """A computer without Claude Desktop, demo and real: on macOS or Windows (their rules) before step 2, after
    "Add (the demo) to Claude Desktop" (the button, answered yes) and after "Check it works" passed; on Linux,
    where Anthropic offers none, after a check that passed. Step 2 is never green and step 3 never says Claude
    can use SearchDesk."""
    for demo, account in ((True, "demo"), (False, "signed in")):
        mode = "demo" if demo else "real"
        core = scene.core(demo=demo, account=account, **scene.without_claude())
        window = MainWindow(core, has_tray=True)
        window.show()
        core.last_check = reports["passed"]
        window.refresh()
        settle(qapp)
        never_claims(window, f"{mode}, Linux, no Claude Desktop")
        true_or_stop("Look again" in window.step2.button_widgets, f"{mode}: Linux offered no Look again", window)
        yield f"main window ({mode}, Linux, no Claude Desktop, checked)", window
        window.close()
        dispose(window, core)
        core = scene.core(demo=demo, account=account, **scene.without_claude())
        core.system = "darwin"  # Anthropic's Claude Desktop exists there: SearchDesk adds itself before it
        window = MainWindow(core, has_tray=True)
        window.ask = lambda box: True  # yes, add the demo
        window.show()
        core.last_check = reports["passed"]
        window.refresh()
        settle(qapp)
        never_claims(window, f"{mode}, no Claude Desktop, checked before step 2")
        yield f"main window ({mode}, no Claude Desktop, checked before step 2)", window
        core.last_check = None
        window.refresh()
        window.step2.button_widgets["Add the demo to Claude Desktop" if demo else "Add to Claude Desktop"].click()
        settle(qapp)
        true_or_stop(core.claude_path.is_file(), f"{mode}: the entry was not written", window)
        never_claims(window, f"{mode}, no Claude Desktop, added")
        yield f"main window ({mode}, no Claude Desktop, added)", window
        core.last_check = reports["passed"]
        window.refresh()
        settle(qapp)
        never_claims(window, f"{mode}, no Claude Desktop, added and checked")
        yield f"main window ({mode}, no Claude Desktop, added and checked)", window
        window.close()
        dispose(window, core)


async def _says_who_started_it(socket: str, name: str, version: str) -> None:
    """What a server does once its MCP client has said who it is (runtime.announce_soon): the server's own
    agent client says hello with `client`, over the app's real socket. (The real stdio server sending it
    after tools/list: tests/security/agent_socket/test_started_by.py.)"""
    from searchdesk_server.agent.client import AgentClient
    from searchdesk_server.agent.protocol import ClientInfo

    async with AgentClient(socket) as client:
        await client.announce(ClientInfo(name=name, version=version))


def started_by(qapp: QApplication, core: Core, name: str, version: str) -> None:
    """A server started by a client called `name` connects to the app and says so (the additive `client`
    of hello), from a thread of its own; the Qt loop runs here meanwhile, as the app's does."""
    heard = threading.Event()

    def note(who: str, _version: str) -> None:
        if who == name:
            heard.set()

    core.listener.started_by.connect(note)
    failed: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(_says_who_started_it(core.listener.path or "", name, version))
        except BaseException as exc:  # shown below, on the walk's thread
            failed.append(exc)

    thread = threading.Thread(target=run, name=f"started-by-{name}", daemon=True)
    thread.start()
    while thread.is_alive():
        qapp.processEvents()
        time.sleep(0.01)
    core.listener.started_by.disconnect(note)
    if failed or not heard.is_set():
        raise RuntimeError(f"a server started by {name} never said so to the app: {failed!r}")


def claude_connects_states(qapp: QApplication, scene: Scene, reports: dict[str, Any]) -> Iterator[tuple[str, QWidget]]:
    """The demo with Claude Desktop installed and the check passed: a server the self-check starts says so
    and does not count; then one Claude Desktop started ("claude-ai") says so, and step 3 names it, with
    the time and the version it says it is. A default property the account cannot see stays a warning."""
    core = scene.core(demo=True, account="demo")
    scene.entry("demo entry")
    window = MainWindow(core, has_tray=True)
    window.show()
    core.last_check = reports["passed"]
    started_by(qapp, core, CHECK_CLIENT, "1.0")
    window.refresh()
    settle(qapp)
    state = "demo, checked, a server the self-check started connected"
    true_or_stop(core.claude_seen() is None and window.step2.state == OK, state, window)
    true_or_stop(window.step3.state == TODO and "Claude Desktop started" not in shown_text(window), state, window)
    yield f"main window ({state})", window
    started_by(qapp, core, claude_found.CLAUDE_DESKTOP_CLIENT, "0.14.10")
    window.refresh()
    settle(qapp)
    state = "demo, checked, Claude Desktop started SearchDesk"
    seen = core.claude_seen()
    true_or_stop(seen is not None and window.step3.state == OK, state, window)
    at = time.strftime("%H:%M", time.localtime(seen[0] if seen else 0))
    said = shown_text(window)
    true_or_stop(f"Claude Desktop started SearchDesk at {at}" in said, state, window)
    true_or_stop("and it answered (it says it is version 0.14.10)." in said, state, window)
    yield f"main window ({state})", window
    warned = reports["warned"]
    core.last_check = warned
    window.refresh()
    settle(qapp)
    state = "demo, the default property not the account's"
    said = shown_text(window)
    true_or_stop(window.step3.state == PROBLEM and "It works" not in said, state, window)
    true_or_stop(shown(DEFAULT_SITE) in said and f"it checked {shown(warned.checked)}" in said, state, window)
    yield f"main window ({state})", window
    window.close()
    dispose(window, core)


def walk(qapp: QApplication, scene: Scene, reports: dict[str, Any]) -> Iterator[tuple[str, QWidget]]:
    yield from main_window_states(qapp, scene, reports)
    yield from no_claude_states(qapp, scene, reports)
    yield from claude_connects_states(qapp, scene, reports)
    yield from settings_states(qapp, scene)
    yield from autostart_demo_states(qapp, scene)
    yield from activity_states(qapp, scene)
    yield from approval_states(qapp)
    yield from about_states(qapp, scene)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--check", choices=("layout", "contrast"), required=True)
    p.add_argument("--scheme", choices=("light", "dark"), default="")
    p.add_argument("--font-scale", type=float, default=1.0)
    p.add_argument("--reports", type=Path, required=True, help="the self-check's results (pickled)")
    args = p.parse_args(argv)
    faulthandler.enable()  # a crash shows where it happened in the test's report (stderr)
    qapp = QApplication(sys.argv[:1])
    # The app's MainThreadGC rule: a collection started by a worker thread (the keyring's, a token
    # pool's) would delete Qt objects from that thread and crash the walk later; so collect only in
    # dispose(), on this thread.
    gc.disable()
    if args.scheme:
        qapp.setStyle("Fusion")
        qapp.styleHints().setColorScheme(Qt.ColorScheme.Dark if args.scheme == "dark" else Qt.ColorScheme.Light)
        settle(qapp)
        wanted = Qt.ColorScheme.Dark if args.scheme == "dark" else Qt.ColorScheme.Light
        if qapp.styleHints().colorScheme() != wanted:
            print(json.dumps([f"the platform did not switch to the {args.scheme} colour scheme"]))
            return 2
    if args.font_scale != 1.0:
        font = qapp.font()
        font.setPointSizeF(font.pointSizeF() * args.font_scale)
        qapp.setFont(font)
    reports = pickle.loads(args.reports.read_bytes())
    check: Check = layout_problems if args.check == "layout" else contrast_problems
    # What exists by now (modules, Qt's wrappers, the application) lives as long as the walk: kept out
    # of dispose()'s collections, each looks only at what the walk made since, not the whole heap again.
    gc.collect()
    gc.freeze()
    problems: list[str] = []
    states = 0
    with tempfile.TemporaryDirectory(prefix="sdwalk-") as folder:
        scene = Scene(Path(folder))
        try:
            for state, window in walk(qapp, scene, reports):
                states += 1
                problems += check(window, state)
        finally:
            scene.close()
    print(json.dumps({"states": states, "problems": problems}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
