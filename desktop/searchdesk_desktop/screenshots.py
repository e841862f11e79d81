"""Render the app's windows to PNG files for the docs, in a light and a dark colour scheme.

    python -m searchdesk_desktop.screenshots docs/images      (what `make screenshots` runs)

Each picture is one function below (a window in one state), listed in ``PICTURES``; add a state by
adding a function. Every picture is written as ``<name>.png`` (light) and ``<name>-dark.png``.
The dark scheme needs a platform that can switch colour schemes (a desktop session, or Xvfb with
Qt's xcb platform, as `make screenshots` uses); on the offscreen platform only the light pictures
are written, and the program says so.

Everything happens in a throw-away home folder (so paths read as a person's would:
``~/.config/Claude/...``), with a made-up packaged OAuth client and a keyring stand-in: it shows what
a user of a release build sees, and touches nothing on this machine. The environment is put back
afterwards. The check's results are the real server's, run on the demo.

The setup pages' pictures are made once per system (``SYSTEMS``), each in that system's own words: the
keyring the app names there and the Claude Desktop settings file it would find there. The platform is
faked only where the app reads it: the keyring's backend name (``keystore.describe_place``), Claude
Desktop's places (``claude_config.candidate_paths``, ``claude_found``) and how a path is spelt
(``claude_config.display_path``). The frame and fonts stay this machine's.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import Any

from searchdesk_server.deadlines import APPROVAL_WAIT_DEFAULT
from searchdesk_server.variables import Var

from .accounts import keystore
from .claude import config_file as claude_config
from .claude import found as claude_found

#: The Activity window's rows are asked at fixed times, so the image does not change run to run.
ACTIVITY_DAY = (2026, 11, 27)
_PROGRAM = claude_found.Evidence.PROGRAM
#: Claude Desktop's MSIX package on Windows (its folder name; platform-facts: claude-code#26073).
CLAUDE_MSIX = "Claude_pzs8sxrjxfjjc"


@dataclass(frozen=True)
class System:
    """A computer as one setup page pictures it: only what SearchDesk reads to choose its words there."""

    page: str  # docs/setup-<page>.md, and the pictures' file names
    platform: str  # sys.platform there
    keyring: str  # the keyring backend SearchDesk uses there (a name in keystore.ALLOWED_BACKENDS)
    home: PurePath  # a person's home folder there
    installed: claude_found.Found  # Claude Desktop, where its installer puts it
    env: Mapping[str, str] = field(default_factory=dict)
    packages: tuple[str, ...] = ()  # the MSIX package folders Windows lists

    @property
    def place(self) -> str:
        """Where step 1 says the sign-in is kept: the app's own words for this keyring."""
        return keystore.describe_place(self.keyring, self.env.get("XDG_CURRENT_DESKTOP", ""))

    @property
    def claude_settings(self) -> PurePath:
        """Claude Desktop's settings file as the app finds it there, Claude Desktop having run once (its folder
        exists): the same choice `claude_config.locate` makes on that system."""

        def list_dir(folder: PurePath) -> tuple[str, ...]:
            return self.packages if folder.name == "Packages" else ()

        places = claude_config.candidate_paths(self.platform, self.env, self.home, list_dir)
        return claude_config.choose(places, lambda p: p == places[0].parent)

    def shown(self, path: PurePath) -> str:
        """A path as step 2 spells it there (the app's own rule, with this system's home)."""
        return _DISPLAY_PATH(path, self.home, system=self.platform)


_WIN_HOME = PureWindowsPath(r"C:\Users\you")
#: The three setup pages' computers. Windows: Claude Desktop as it ships since early 2026 (an MSIX package,
#: its settings under the package's folder); macOS: Claude.app in /Applications; Linux: GNOME with GNOME
#: Keyring and a community build's `claude-desktop`.
SYSTEMS: tuple[System, ...] = (
    System(
        "macos",
        "darwin",
        "macOS Keychain",
        PurePosixPath("/Users/you"),
        claude_found.Found(_PROGRAM, "/Applications/Claude.app"),
    ),
    System(
        "windows",
        "win32",
        "Windows Credential Locker",
        _WIN_HOME,
        claude_found.Found(_PROGRAM, str(_WIN_HOME / "AppData" / "Local" / "Packages" / CLAUDE_MSIX)),
        env={"APPDATA": str(_WIN_HOME / "AppData" / "Roaming"), "LOCALAPPDATA": str(_WIN_HOME / "AppData" / "Local")},
        packages=(CLAUDE_MSIX,),
    ),
    System(
        "linux",
        "linux",
        "Secret Service",
        PurePosixPath("/home/you"),
        claude_found.Found(_PROGRAM, "/usr/bin/claude-desktop"),
        env={"XDG_CURRENT_DESKTOP": "GNOME"},
    ),
)
#: The other pictures (not the setup pages') are made on this system.
LINUX = SYSTEMS[2]
ACCOUNT = "you@example.com"  # as the docs name it
#: The second account of "two-accounts": an agency's service account for a client's site.
AGENCY = "reports@client-shop.iam.gserviceaccount.com"
CLIENT_ID = "release.apps.googleusercontent.com"
SCHEMES = ("light", "dark")


class _Keyring:
    """Stands in for the OS keyring in screenshots only: sign-in records in memory, never stored.

    A record given here is found as an earlier version's single sign-in, which the app moves to its
    own per-account record on start, as it does on a real machine."""

    def __init__(self, record: Any = None, system: System = LINUX) -> None:
        self.legacy = record
        self.records: dict[str, Any] = {}
        self.backend_name = system.keyring
        self.place = system.place

    def load(self, account: str) -> Any:
        return self.records.get(account.casefold())

    def load_legacy(self) -> Any:
        return self.legacy

    def save(self, record: Any) -> None:
        self.records[record.account.casefold()] = record

    def delete(self, account: str) -> None:
        self.records.pop(account.casefold(), None)

    def delete_legacy(self) -> None:
        self.legacy = None


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _scratch_home(prefix: str) -> Iterator[tuple[Path, Path]]:
    """A throw-away home with a development OAuth client in it, the environment put back after:
    nothing a picture is made from is kept, and no picture depends on the machine's own settings."""
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        root = Path(scratch)
        home = root / "home"
        home.mkdir()
        client = root / "oauth_client.json"
        client.write_text(json.dumps({"installed": {"client_id": CLIENT_ID, "client_secret": "x"}}))
        with _environment(HOME=str(home), **{Var.SEARCHDESK_OAUTH_CLIENT_FILE: str(client)}):
            yield root, home


@dataclass
class Scene:
    """The scratch machine a picture is taken on: a home, Claude Desktop's folder, a server program."""

    qapp: Any
    root: Path
    home: Path
    check: Any  # the real self-check's result on the demo
    made: list[Any]

    def core(
        self,
        *,
        demo: bool = False,
        signed_in: bool = False,
        added: bool = False,
        checked: bool = False,
        system: System = LINUX,
    ) -> Any:
        from .accounts.keystore import SignInRecord
        from .claude import config_file as cc
        from .core import Core
        from .settings import AppSettings

        claude = self.claude_file()  # ~/.config/Claude/claude_desktop_config.json on Linux
        claude.parent.mkdir(parents=True, exist_ok=True)  # Claude Desktop is installed
        claude.unlink(missing_ok=True)
        exe = self.root / "app" / "searchdesk-server"
        exe.parent.mkdir(exist_ok=True)
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
        settings = self.root / f"settings-{len(self.made)}.json"
        AppSettings(site_url="sc-domain:example.com", allowed_sites=["sc-domain:example.com"]).save(settings)
        record = (
            SignInRecord("1//screenshot", ACCOUNT, "packaged", CLIENT_ID, issued_at=int(time.time()))
            if signed_in
            else None
        )
        sockets = Path(tempfile.mkdtemp(prefix="sds-", dir=self.root))
        core = Core(
            demo=demo,
            settings_path=settings,
            claude_path=claude,
            keystore=_Keyring(record, system),  # type: ignore[arg-type]
            socket_path=str(sockets / "agent.sock"),
            server=cc.ServerCommand(str(exe)),
            open_browser=lambda url: False,
            find_claude=lambda **_: system.installed,  # the pictures show a computer with Claude Desktop on it
        )
        core.start()
        self.made.append(core)
        if added:
            core.add_to_claude(allow_demo=demo)
        if checked:
            core.last_check = self.check
            # Claude Desktop started SearchDesk once (its hello said so), at a fixed time: the same picture.
            core.settings.claude_seen_at = time.mktime((*ACTIVITY_DAY, 10, 2, 0, 0, 0, -1))
            core.settings.claude_seen_version = "0.14.10"
        return core

    def main_window(self, core: Any) -> Any:
        from .windows.main import MainWindow

        window = MainWindow(core, has_tray=True)
        self.made.append(window)
        return window

    def claude_file(self) -> Path:
        """The Claude Desktop settings file the scene's cores write (this machine's place, in the scratch home)."""
        return claude_config.locate(env={}, home=self.home)


#: The app's rule for spelling a path, kept before `pictured_on` stands in for it.
_DISPLAY_PATH = claude_config.display_path


@contextlib.contextmanager
def pictured_on(scene: Scene, system: System) -> Iterator[None]:
    """While a window is made and drawn: the scene's Claude Desktop settings file is spelt as `system` finds and
    spells its own (`System.claude_settings`, `System.shown`); every other path as the app spells it. The file
    itself stays in the scratch home, so nothing is written outside it. Put back afterwards."""
    real, claude = scene.claude_file(), system.shown(system.claude_settings)

    def display_path(path: PurePath, home: PurePath | None = None, system: str | None = None) -> str:
        return claude if path == real else _DISPLAY_PATH(path, home, system)

    claude_config.display_path = display_path
    try:
        yield
    finally:
        claude_config.display_path = _DISPLAY_PATH


def as_sent(
    q: Any,
    request_id: str,
    client: tuple[str, str] = ("claude-ai", "0.14.10"),
    *,
    server: str = "screenshots",
    account: str = ACCOUNT,
    demo: bool = False,
) -> Any:
    """The question as a server of this version sends it: bound to that server and its account (the
    UI walk asks the same way)."""
    from searchdesk_server.agent.protocol import ClientInfo, Requester

    return q.to_request(
        request_id,
        client=ClientInfo(*client),
        requester=Requester(server=server, account=account, demo=demo),
        wait_s=APPROVAL_WAIT_DEFAULT,
    )


def _questions() -> dict[str, Any]:
    from searchdesk_server.approval import question as q

    site = "https://www.example.com/"
    others = q.OwnerFacts(q.Ownership.OTHERS_REMAIN, 1)
    return {
        "delete_sitemap": q.delete_sitemap("sc-domain:example.com", "https://www.example.com/old/sitemap.xml", ACCOUNT),
        "delete_site": q.delete_site("https://staging.example.com/", ACCOUNT, q.OwnerFacts(q.Ownership.LAST_OWNER)),
        "unverify_site": q.unverify_site("https://shop.example.net/", ACCOUNT, others),
        "update_site_owners": q.update_site_owners(
            site,
            [ACCOUNT, "old-agency@example.net"],
            [ACCOUNT, "new-agency@example.net", "editor@example.com"],
            ACCOUNT,
        ),
    }


# --- the pictures: one function per window and state ---------------------------------------------


def first_run(scene: Scene) -> Any:
    """A release build's first start: nobody signed in, Claude Desktop installed, nothing added."""
    return scene.main_window(scene.core())


def all_set(scene: Scene) -> Any:
    """Signed in, added to Claude Desktop, and the check passed: three green steps."""
    return scene.main_window(scene.core(signed_in=True, added=True, checked=True))


def two_accounts(scene: Scene) -> Any:
    """Two Google accounts after a check: the person's own sign-in (the default) and an agency's
    service-account key file for a client's shop. The check's answer is put together from the real
    check's parts (the demo has one account of its own): the properties each account sees, and each
    account named."""
    from dataclasses import replace

    from searchdesk_server.stdio_check import CheckedAccount, accounts_table, sites_table

    core = scene.core(signed_in=True, added=True)
    key = scene.home / "Downloads" / "client-shop-key.json"
    key.parent.mkdir(exist_ok=True)
    key.write_text(
        json.dumps(
            {
                "type": "service_account",
                "client_email": AGENCY,
                "private_key": "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n",
                "project_id": "client-shop",
            }
        )
    )
    core.use_service_account(key)
    sites = [
        ("sc-domain:example.com", "siteOwner", ACCOUNT),
        ("https://blog.example.com/", "siteFullUser", ACCOUNT),
        ("sc-domain:client-shop.example", "siteOwner", AGENCY),
    ]
    accounts = [CheckedAccount(ACCOUNT, "oauth", 2), CheckedAccount(AGENCY, "service_account", 1)]
    data = {"sites": [{"site": site, "permission": perm, "account": who} for site, perm, who in sites]}
    core.last_check = replace(
        scene.check,
        verdict="SearchDesk works: it can read 3 properties for Claude (it checked https://www.example.com/).",
        accounts=accounts,
        tables=[sites_table(data), accounts_table(accounts)],
    )
    return scene.main_window(core)


def signing_in(scene: Scene) -> Any:
    """Step 1 waiting for the browser, with the link to copy and the time left."""
    core = scene.core()
    core.sign_in()
    return scene.main_window(core)


def demo(scene: Scene) -> Any:
    """The demo, added to Claude Desktop and checked."""
    return scene.main_window(scene.core(demo=True, added=True, checked=True))


def late_answer(scene: Scene) -> Any:
    """A yes given after Claude stopped waiting: the window says what to tell Claude."""
    core = scene.core(signed_in=True, added=True)
    entry = core.book.ask(as_sent(_questions()["delete_sitemap"], "late"))
    core.book.stopped_waiting(entry.key)
    core.book.answer(entry.key, True, "dialog")
    entry.activity.answered_at = time.mktime((*ACTIVITY_DAY, 10, 37, 0, 0, 0, -1))  # the same picture every run
    return scene.main_window(core)


def asked_again(scene: Scene) -> Any:
    """A property removal the person denied, which Claude asked about again: "Change my mind" beside it."""
    core = scene.core(signed_in=True, added=True)
    entry = core.book.ask(as_sent(_questions()["delete_site"], "asked-again"))
    core.book.answer(entry.key, False, "dialog")
    core.book.note_asked_again(entry.key)
    return scene.main_window(core)


def _approval(scene: Scene, tool: str, *, stopped: bool = False) -> Any:
    from .approval.book import ApprovalBook
    from .approval.dialog import ApprovalDialog

    book = ApprovalBook()
    entry = book.ask(as_sent(_questions()[tool], f"shot-{tool}"))
    if stopped:
        book.stopped_waiting(entry.key)
    dialog = ApprovalDialog(entry, arm_delay_ms=0, waiting_after=0 if stopped else 1)
    scene.made.append(dialog)
    return dialog


def approval_dialog(scene: Scene) -> Any:
    """Removing a sitemap (the docs' example question)."""
    return _approval(scene, "delete_sitemap")


def approval_delete_site(scene: Scene) -> Any:
    return _approval(scene, "delete_site")


def approval_unverify_site(scene: Scene) -> Any:
    return _approval(scene, "unverify_site")


def approval_update_site_owners(scene: Scene) -> Any:
    return _approval(scene, "update_site_owners")


def approval_stopped_waiting(scene: Scene) -> Any:
    """The question still open after Claude's call stopped waiting."""
    return _approval(scene, "delete_sitemap", stopped=True)


def _settle(scene: Scene, until: Callable[[], bool]) -> None:
    """Let Qt run until `until` holds (a few seconds at most): a dialog arms, a line is laid out."""
    from PySide6.QtCore import QDeadlineTimer

    deadline = QDeadlineTimer(5000)
    while not until() and not deadline.hasExpired():
        scene.qapp.processEvents()


def approval_late_yes(scene: Scene) -> Any:
    """Approved after Claude stopped waiting: right above the buttons, what to tell Claude, by when and
    before what; the footer says closing changes nothing (issue 36)."""
    from .approval.book import ApprovalBook
    from .approval.dialog import ApprovalDialog
    from .approval.words import late_yes_words

    book = ApprovalBook()
    entry = book.ask(as_sent(_questions()["delete_sitemap"], "shot-late"))
    book.stopped_waiting(entry.key)
    dialog = ApprovalDialog(entry, arm_delay_ms=0)
    scene.made.append(dialog)
    dialog.decided.connect(lambda key, ok: book.answer(key, ok, "dialog"))
    dialog.place()
    dialog.show()
    _settle(scene, lambda: dialog.armed)
    dialog.approve_button.click()
    _settle(scene, lambda: dialog.late_answer)
    answered = time.mktime((*ACTIVITY_DAY, 10, 37, 0, 0, 0, -1))  # the same picture every run
    dialog.late_label.setText(f"Approved. {late_yes_words(answered)}")
    for _ in range(3):
        scene.qapp.processEvents()
    return dialog


def approval_approved_before(scene: Scene) -> Any:
    """Claude Desktop restarted its server before Claude asked again: the new server's question, exactly the
    words approved before, says so at its top and waits for a new yes (issue 36)."""
    from .approval.book import ApprovalBook
    from .approval.dialog import ApprovalDialog

    book = ApprovalBook()
    question = _questions()["delete_sitemap"]
    before = book.ask(as_sent(question, "shot-before", server="srv-before"))
    book.stopped_waiting(before.key)
    book.answer(before.key, True, "dialog")
    before.activity.answered_at = time.mktime((*ACTIVITY_DAY, 10, 34, 0, 0, 0, -1))  # the same picture every run
    entry = book.ask(as_sent(question, "shot-again", server="srv-again"))
    dialog = ApprovalDialog(entry, arm_delay_ms=0)
    scene.made.append(dialog)
    return dialog


def approval_owner_change_small_screen(scene: Scene) -> Any:
    """Thirty owners replaced, at the size the dialog opens on a 1024×600 screen: the sentences, counts,
    heading and consequence in view; only the addresses scroll (issue 36)."""
    from searchdesk_server.approval import question as q

    from .approval.book import ApprovalBook
    from .approval.dialog import ApprovalDialog

    owners = [f"owner{i:02}@example.com" for i in range(30)]
    new = [ACCOUNT, "new-agency@example.net"]
    question = q.update_site_owners("sc-domain:example.com", [ACCOUNT, *owners], new, ACCOUNT)
    dialog = ApprovalDialog(ApprovalBook().ask(as_sent(question, "shot-owners")), arm_delay_ms=0)
    dialog.setFixedSize(*SMALL_SCREEN_DIALOG)
    scene.made.append(dialog)
    return dialog


#: The size the approval dialog opens at on a 1024×600 screen (tests/desktop/approval/owner_change_walk.py
#: measures it there: as wide as fits beside the notifications' room once too tall, and the screen's height
#: less the room for a title bar).
SMALL_SCREEN_DIALOG = (800, 560)


#: How each system lays out a notification, for the pictures only (the figures that decide whether Approve
#: is offered are approval.notification_question.FITS): its name, the bubble's width in px, its colours,
#: and whether the buttons sit in a column at the side (macOS, on hover) rather than a row below.
NOTE_LOOKS = {
    "win32": ("Windows", 364, "#2b2b2b", "#3a3a3a", False),
    "darwin": ("macOS", 440, "#ececec", "#d6d6d6", True),
    "gnome": ("GNOME", 388, "#353535", "#4a4a4a", False),
    "kde": ("KDE Plasma", 380, "#232629", "#31363b", False),
}


def _note_bubble(system: str) -> Any:
    """One system's notification of the sitemap removal, laid out with that system's figures
    (approval.notification_question.FITS: the title's lines, a subtitle line of its own, the lines of body) and its
    buttons as composed."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

    from .approval.book import ApprovalBook
    from .approval.notification_question import FITS, LABELS, compose
    from .icons import app_icon
    from .widgets import plain_label

    _name, width, back, button, side = NOTE_LOOKS[system]
    fit = FITS[system]
    note = compose(ApprovalBook().ask(as_sent(_questions()["delete_sitemap"], f"note-{system}")), fit=fit)
    ink = "#1d1d1f" if system == "darwin" else "#f2f2f2"
    bubble = QFrame()
    bubble.setObjectName("bubble")
    bubble.setStyleSheet(
        f"#bubble{{background:{back};border-radius:{12 if system != 'win32' else 4}px;}} QLabel{{color:{ink};}}"
        f" QPushButton{{background:{button};color:{ink};border:none;border-radius:6px;padding:6px 14px;}}"
    )
    bubble.setFixedWidth(width)
    outer = QHBoxLayout(bubble)
    outer.setContentsMargins(14, 12, 14, 12)
    text = QVBoxLayout()
    outer.addLayout(text, 1)
    head = QHBoxLayout()
    icon = QLabel()
    icon.setPixmap(app_icon().pixmap(16, 16))
    head.addWidget(icon)
    head.addWidget(plain_label("SearchDesk", selectable=False), 1)
    text.addLayout(head)

    def rows(words: str, limit: int, bold: bool = False) -> None:
        label = plain_label(_laid_out(words, fit.line_chars, limit), selectable=False)
        if bold:
            label.setStyleSheet("font-weight:bold;")
        text.addWidget(label)

    rows(note.summary, fit.title_lines, bold=True)
    if note.subtitle:
        rows(note.subtitle, 1)
    rows(note.body, fit.lines)
    buttons = QVBoxLayout() if side else QHBoxLayout()
    for action in note.actions:
        buttons.addWidget(QPushButton(LABELS[action]))
    (outer if side else text).addLayout(buttons)
    bubble.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
    return bubble


def _laid_out(words: str, line_chars: int, limit: int) -> str:
    """`words` wrapped at `line_chars` as the system counts them, cut with "…" after `limit` lines."""
    rows = [line[i : i + line_chars] for line in words.split("\n") for i in range(0, max(len(line), 1), line_chars)]
    return "\n".join(rows[:limit]) + ("…" if len(rows) > limit else "")


def notification_forms(scene: Scene) -> Any:
    """The notification form of a sitemap removal as each system lays it out, drawn by SearchDesk (the
    systems' own frames differ; the words, the lines each shows and the buttons are what SearchDesk sends:
    approval.notification_question.compose with that system's figures). Fixed colours: one picture serves
    both schemes."""
    from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

    sheet = QWidget()
    sheet.setObjectName("sheet")
    sheet.setStyleSheet("#sheet{background:#f7f7f7;} QLabel#caption{color:#444;}")
    grid = QGridLayout(sheet)
    grid.setContentsMargins(16, 16, 16, 16)
    grid.setHorizontalSpacing(20)
    grid.setVerticalSpacing(14)
    for n, system in enumerate(NOTE_LOOKS):
        cell = QVBoxLayout()
        caption = QLabel(f"drawn by SearchDesk: how {NOTE_LOOKS[system][0]} lays it out")
        caption.setObjectName("caption")
        cell.addWidget(caption)
        cell.addWidget(_note_bubble(system))
        cell.addStretch(1)
        grid.addLayout(cell, n // 2, n % 2)
    sheet.setAutoFillBackground(True)
    scene.made.append(sheet)
    return sheet


def settings(scene: Scene) -> Any:
    from PySide6.QtWidgets import QMessageBox

    from .windows.settings import SettingsWindow

    window = SettingsWindow(scene.core(signed_in=True, added=True))

    def discard(box: QMessageBox) -> QMessageBox.StandardButton:
        box.deleteLater()
        return QMessageBox.StandardButton.Discard

    window.choose = discard  # closed after its picture: a picture's edits are thrown away, nobody is asked
    scene.made.append(window)
    return window


def settings_mistake(scene: Scene) -> Any:
    """A property Google would read two ways, explained beside its field."""
    window = settings(scene)
    window.site.setText("example.com")
    return window


_SITEMAP = "https://www.example.com/sitemap.xml"


def activity(scene: Scene) -> Any:
    """A morning's record, read from a journal written as the server writes it (at fixed times, so the
    picture does not change run to run): a sitemap submitted (nobody is asked), a sitemap removal
    approved in a notification, a property removal declined, an owner change approved in the window
    that Google refused, a page sent for recrawling by a scheduled job with its own key file, and an
    ownership question still waiting."""
    from dataclasses import replace
    from datetime import datetime

    from searchdesk_server.approval.question import PROPERTY, SITEMAP, describe_client
    from searchdesk_server.journal.paths import journal_path, seen_path
    from searchdesk_server.journal.store import Approval, Entry, Journal, Kind, Result, Target

    from .windows.activity import ActivityWindow

    q = _questions()
    claude = describe_client("claude-ai", "0.14.10")

    def row(tool: str, site: str, values: Any, approval: Approval, **more: Any) -> Entry:
        targets = tuple(Target(label, value) for label, value in values)
        fields = {"account": ACCOUNT, "asked_by": claude, **more}
        kind = Kind.ANSWER if approval in (Approval.DECLINED, Approval.WAITING) else Kind.CHANGE
        return Entry(kind, tool=tool, site=site, targets=targets, approval=approval, **fields)

    site, shop = "sc-domain:example.com", "sc-domain:client-shop.example"
    page = (("Page", "https://client-shop.example/spring-sale"), ("Google is told the page was", "updated"))
    # (minute, the row, what Google did (None: nothing was sent), Google's refusal in words)
    morning: list[tuple[int, Entry, Result | None, str]] = [
        (5, row("submit_sitemap", site, ((PROPERTY, site), (SITEMAP, _SITEMAP)), Approval.NOT_ASKED), Result.DONE, ""),
        (12, row("delete_sitemap", site, q["delete_sitemap"].values, Approval.NOTIFICATION), Result.DONE, ""),
        (19, row("delete_site", "https://staging.example.com/", q["delete_site"].values, Approval.DECLINED), None, ""),
        (
            26,
            row("update_site_owners", "https://www.example.com/", q["update_site_owners"].values, Approval.DIALOG),
            Result.REFUSED,
            "Google does not know new-agency@example.net as a Google account.",
        ),
        (
            33,
            row("request_indexing", shop, page, Approval.NOT_ASKED, account=AGENCY, asked_by=describe_client("")),
            Result.DONE,
            "",
        ),
        (40, row("unverify_site", "https://shop.example.net/", q["unverify_site"].values, Approval.WAITING), None, ""),
    ]
    with _environment(XDG_DATA_HOME=str(scene.home / ".local" / "share")):  # ~/.local/share/searchdesk
        core = scene.core(signed_in=True, added=True)
        path = journal_path()
        for old in (path, seen_path(path)):
            old.unlink(missing_ok=True)
        journal = Journal(path)
        for minute, entry, result, words in morning:
            at = datetime(*ACTIVITY_DAY, 9, minute).astimezone()  # this computer's 09:05, whatever its zone
            change = journal.append(entry, at=at)
            if result is not None:
                outcome = Entry(Kind.OUTCOME, tool=entry.tool, result=result, words=words, about=change.seq)
                journal.append(replace(outcome, account=entry.account, site=entry.site), at=at.replace(second=2))
        window = ActivityWindow(core, journals=[path])
    scene.made.append(window)
    window.refresh()
    return window


def about(scene: Scene) -> Any:
    from .windows.about import AboutDialog

    dialog = AboutDialog(scene.core(signed_in=True))
    scene.made.append(dialog)
    return dialog


Picture = Callable[[Scene], Any]
#: (file name without ".png", how to make the window); the docs name these files.
PICTURES: list[tuple[str, Picture]] = [
    ("first-run", first_run),
    ("signing-in", signing_in),
    ("all-set", all_set),
    ("two-accounts", two_accounts),
    ("demo", demo),
    ("late-answer", late_answer),
    ("asked-again", asked_again),
    ("approval-dialog", approval_dialog),
    ("approval-delete-site", approval_delete_site),
    ("approval-unverify-site", approval_unverify_site),
    ("approval-update-site-owners", approval_update_site_owners),
    ("approval-stopped-waiting", approval_stopped_waiting),
    ("approval-late-yes", approval_late_yes),
    ("approval-approved-before", approval_approved_before),
    ("approval-owner-change-1024x600", approval_owner_change_small_screen),
    ("notification-forms", notification_forms),
    ("settings", settings),
    ("settings-mistake", settings_mistake),
    ("activity", activity),
    ("about", about),
]

#: Drawn in fixed colours (a notification server's bubble): one picture serves both schemes.
SAME_IN_EVERY_SCHEME = frozenset({"notification-forms"})


# --- rendering ---------------------------------------------------------------------------------------


def _set_scheme(qapp: Any, scheme: str) -> bool:
    """Switch the app's colour scheme; False when the platform cannot (the offscreen one)."""
    from PySide6.QtCore import Qt

    wanted = Qt.ColorScheme.Dark if scheme == "dark" else Qt.ColorScheme.Light
    qapp.styleHints().setColorScheme(wanted)
    qapp.processEvents()
    now = qapp.styleHints().colorScheme()
    return bool(now == wanted or (scheme == "light" and now == Qt.ColorScheme.Unknown))  # unknown: Qt's light


def _natural_size(window: Any) -> None:
    """As large as the window's content wants at its width (within the screen), so nothing scrolls."""
    from PySide6.QtWidgets import QScrollArea, QTableWidget

    from .widgets import fit_height

    area = window.findChild(QScrollArea)
    table = window.findChild(QTableWidget)
    room = window.screen().availableGeometry().height() - 40
    if table is not None and table.isVisible():  # every row in view
        extra = window.height() - table.viewport().height()
        window.resize(window.width(), min(table.verticalHeader().length() + extra, room))
    elif area is not None and area.widget() is not None and type(window).__name__ != "ApprovalDialog":
        content = area.widget()
        extra = window.height() - area.viewport().height()
        want = content.heightForWidth(area.viewport().width()) if content.hasHeightForWidth() else 0
        if want > 0:
            window.resize(window.width(), min(want + extra, room))
    else:
        fit_height(window)


def grab(qapp: Any, window: Any, path: Path) -> Path:
    from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEvent

    window.show()
    for _ in range(3):
        qapp.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    if hasattr(window, "armed") and not window.late_answer:  # a dialog as a person answers it: in front, buttons on
        window.activateWindow()
        deadline = QDeadlineTimer(5000)
        while not window.armed and not deadline.hasExpired():
            qapp.processEvents()
    _natural_size(window)
    qapp.processEvents()
    window.grab().save(str(path))
    return path


def render(out: Path, schemes: tuple[str, ...] = SCHEMES, only: frozenset[str] = frozenset()) -> list[Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from .icons import app_icon

    qapp = QApplication.instance() or QApplication(sys.argv[:1])
    gc.disable()  # collected in _dispose, on this thread (app.MainThreadGC says why)
    assert isinstance(qapp, QApplication)
    qapp.setWindowIcon(app_icon())
    qapp.setStyle("Fusion")
    out.mkdir(parents=True, exist_ok=True)
    with _scratch_home("sdshot-") as (root, home):
        scene = Scene(qapp, root, home, _demo_check(home), [])
        written: list[Path] = []
        try:
            for scheme in schemes:
                if not _set_scheme(qapp, scheme):
                    print(
                        f"The {scheme} pictures were skipped: this platform cannot switch colour schemes "
                        "(run `make screenshots`, which uses Xvfb).",
                        file=sys.stderr,
                    )
                    continue
                suffix = "" if scheme == "light" else f"-{scheme}"
                for name, picture in PICTURES:
                    if (only and name not in only) or (scheme != "light" and name in SAME_IN_EVERY_SCHEME):
                        continue
                    written.append(grab(qapp, picture(scene), out / f"{name}{suffix}.png"))
                    _dispose(scene)
        finally:
            _dispose(scene)
            _set_scheme(qapp, "light")
        return written


def _demo_check(home: Path) -> Any:
    """The real self-check of the demo server (what step 3 shows after a check)."""
    from searchdesk_server.stdio_check import run_check

    from .claude import config_file as cc

    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), Var.SEARCHDESK_DEMO: "true"}
    return asyncio.run(run_check(cc.server_command().argv(), env))


def _dispose(scene: Scene) -> None:
    from PySide6.QtCore import QCoreApplication, QEvent

    from .core import Core

    for obj in scene.made:
        if isinstance(obj, Core):
            obj.cancel_sign_in()
            obj.stop(wait=True)
            obj.listener.deleteLater()
        elif hasattr(obj, "close_silently"):
            obj.close_silently()
        else:
            obj.close()
        obj.deleteLater()
    scene.made.clear()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()  # on the Qt thread, as the app's MainThreadGC does; automatic collection is off


# --- the setup pages' pictures: one per step of the main window ----------------------------------

#: The demo's "today" for the check in step 3, so the picture does not change run to run.
STEPS_DAY = "2026-11-27"
STEPS = (1, 2, 3)


def step_picture(step: int, system: System) -> str:
    """The file name of one step's picture for one system's setup page (light scheme)."""
    return f"setup-step-{step}-{system.page}.png"


#: Every setup-page picture, by system then step: docs/setup-<page>.md shows its own three.
STEP_PICTURES = tuple(step_picture(step, system) for system in SYSTEMS for step in STEPS)


def render_steps(out: Path, schemes: tuple[str, ...] = SCHEMES) -> list[Path]:
    """The main window's three steps, each pictured done, for each system's setup page.

    Signed in with a made-up account, added to Claude Desktop's settings file, and checked for real
    against the demo's server; each picture is that step's row only (step 3 with the check's result),
    so what a page says about its step is what the picture shows. A failing check is never pictured.
    Each system's pictures carry that system's words (`pictured_on`, `System`).
    As ``render``: a throw-away home, nothing stored, the environment put back, light and dark.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtWidgets import QApplication

    from .icons import app_icon

    qapp = QApplication.instance() or QApplication(sys.argv[:1])
    gc.disable()  # collected in _dispose, on this thread (app.MainThreadGC says why)
    assert isinstance(qapp, QApplication)
    qapp.setWindowIcon(app_icon())
    out.mkdir(parents=True, exist_ok=True)
    with _scratch_home("sdsteps-") as (root, home):
        env = {**os.environ, Var.SEARCHDESK_DEMO: "true", Var.SEARCHDESK_DEMO_TODAY: STEPS_DAY}
        from searchdesk_server.stdio_check import run_check

        from .claude import config_file as cc

        report = asyncio.run(run_check(cc.server_command().argv(), env))
        if not report.ok:  # the setup pages show a passing check: never publish a failing one
            raise RuntimeError(f"the demo's check failed, so step 3 cannot be pictured: {report.verdict}")
        scene = Scene(qapp, root, home, report, [])
        written = []
        try:
            for scheme in schemes:
                if not _set_scheme(qapp, scheme):
                    continue  # the offscreen platform: light only (render() says so)
                suffix = "" if scheme == "light" else f"-{scheme}"
                for system in SYSTEMS:
                    with pictured_on(scene, system):
                        window = step_window(scene, system)
                        grab(qapp, window, root / "whole.png")
                        for step, row in zip(STEPS, (window.step1, window.step2, window.step3), strict=True):
                            area = QRect(row.mapTo(window, QPoint(0, 0)), row.size())
                            path = out / step_picture(step, system).replace(".png", f"{suffix}.png")
                            window.grab(area.adjusted(-4, -4, 4, 4)).save(str(path))
                            written.append(path)
                        _dispose(scene)
            return written
        finally:
            _dispose(scene)
            _set_scheme(qapp, "light")


def step_window(scene: Scene, system: System) -> Any:
    """The main window with its three steps done, as on `system` (inside `pictured_on` for step 2's path)."""
    return scene.main_window(scene.core(signed_in=True, added=True, checked=True, system=system))


def main(argv: list[str] | None = None) -> int:
    """``screenshots [FOLDER [NAME ...]]``: every picture into FOLDER (docs/images), or only the named ones
    (file names without ".png", as in PICTURES: a window changed alone is pictured alone)."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "docs/images")
    only = frozenset(args[1:])
    unknown = only - {name for name, _ in PICTURES}
    if unknown:
        print(f"No such picture: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    for path in [*render(out, only=only), *([] if only else render_steps(out))]:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
