"""Keep or delete (issue 28): when an account whose history SearchDesk copied is withheld from Claude
(Settings) or removed (the main window's account card), the person is asked once whether to keep that
copy or delete it; Delete removes its files, a damaged copy set aside included; Keep leaves them, and
nothing more is copied for the account. Real parts: the real Core, Settings and main window (offscreen
Qt), real archive files on disk written by the server's own store."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from searchdesk_desktop.core import Core
from searchdesk_desktop.keeping.archive_keeper import Archives
from searchdesk_desktop.windows.accounts import REMOVE
from searchdesk_server.archive.store import TABLES, Archive
from tests.desktop.accounts.test_accounts import key_file
from tests.desktop.helpers import finish, make_core, make_window, open_settings

SITE = "https://kept.example/"
FIRST = "first@proj.iam.gserviceaccount.com"
SECOND = "second@proj.iam.gserviceaccount.com"


class Asked:
    """The windows' ``ask``, answered as a person would: what each box said and offered, then the answer."""

    def __init__(self, answer: bool, *, remove: bool = True) -> None:
        self.answer = answer
        self.remove = remove  # the removal's own question ("Remove" / "Keep it")
        self.boxes: list[dict[str, Any]] = []

    def __call__(self, box: QMessageBox) -> bool:
        yes, no = QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No
        self.boxes.append(
            {
                "name": box.objectName(),
                "text": box.text(),
                "yes": box.button(yes).text(),
                "no": box.button(no).text(),
                "default": box.defaultButton() is box.button(no),
            }
        )
        box.deleteLater()
        return self.remove if box.objectName() == "confirmRemoveAccount" else self.answer


def copy_of(core: Core, account: str, *, damaged: bool = False) -> list[Path]:
    """An account's copy as the copier writes it (the store's own writer), and a damaged one set aside."""
    path = core.archive.archives.path(account)
    path.parent.mkdir(parents=True, exist_ok=True)
    with Archive.open(path) as archive:
        day = dt.date(2024, 3, 1)
        archive.write_day(SITE, day, "web", {name: [] for name in TABLES}, copied_at=dt.datetime.now(dt.UTC))
    files = [path]
    if damaged:
        aside = path.with_name(f"{path.name}.damaged-20260101-000000")
        aside.write_bytes(b"not a database")
        files.append(aside)
    return files


@pytest.fixture
def core(place: dict[str, object], tmp_path: Path) -> Iterator[Core]:
    core = make_core(place, archive_options={"archives": Archives(tmp_path / "archive")})
    for email in (FIRST, SECOND):
        core.use_service_account(key_file(tmp_path / f"{email.split('@')[0]}.json", email))
    try:
        yield core
    finally:
        core.archive.stop()
        finish(core)


def withhold(qtbot: QtBot, core: Core, email: str, asked: Asked, *, share: str = "") -> None:
    """Settings' "Google accounts Claude may use": untick one (and tick ``share`` again), then Save."""
    settings = open_settings(qtbot, core)
    settings.ask = asked
    if share:
        settings.account_boxes[share].setChecked(True)
    settings.account_boxes[email].setChecked(False)
    assert settings.save()
    settings.close()


def test_withholding_an_account_with_a_copy_asks_once_and_keep_keeps_it_uncopied(
    qtbot: QtBot, core: Core, tmp_path: Path
) -> None:
    files = copy_of(core, SECOND)
    core.archive.set_on(True)
    assert SECOND in core.archive.scope().accounts
    asked = Asked(False)  # Keep
    withhold(qtbot, core, SECOND, asked)
    (box,) = asked.boxes
    assert box["name"] == "keepOrDeleteCopy" and box["default"]
    assert box["yes"] == "Delete the copy" and box["no"] == "Keep"
    assert box["text"].startswith(
        f"Keep the history SearchDesk copied for {SECOND}? It stays on this computer and is not used while "
        f"{SECOND} is not shared with Claude."
    )
    assert "Delete the copy removes that history from this computer. Days Google no longer has" in box["text"]
    assert all(f.exists() for f in files)
    # Nothing more is copied for it: the copier's scope no longer lists it (its requests stop there).
    assert core.archive.sync is not None and SECOND not in core.archive.sync.scope().accounts
    assert FIRST in core.archive.sync.scope().accounts
    # Withholding the other account, which has no copy here, asks nothing.
    withhold(qtbot, core, FIRST, asked, share=SECOND)
    assert len(asked.boxes) == 1


def test_delete_removes_the_copy_and_the_damaged_one_set_aside(qtbot: QtBot, core: Core, tmp_path: Path) -> None:
    files = copy_of(core, SECOND, damaged=True)
    others = copy_of(core, FIRST)
    asked = Asked(True)  # Delete the copy
    withhold(qtbot, core, SECOND, asked)
    (box,) = asked.boxes
    assert (
        "removes that history from this computer, and the damaged copy of it SearchDesk set aside earlier."
        in box["text"]
    )
    qtbot.waitUntil(lambda: not any(f.exists() for f in files), timeout=3000)
    assert all(f.exists() for f in others)  # the other account's copy is untouched
    assert core.archive.archives.files(SECOND) == ([], [])


def test_removing_an_account_asks_only_when_it_has_a_copy(
    qtbot: QtBot, real_keyring: object, core: Core, place: dict[str, object], tmp_path: Path
) -> None:
    files = copy_of(core, SECOND)
    window = make_window(qtbot, core, place)
    asked = Asked(False, remove=True)  # "Remove" in the removal's own box, then Keep
    window.ask = asked
    card = window.account_list.card(SECOND)
    assert card is not None
    card.button_widgets[REMOVE].click()  # as a person does, on the account's card
    assert [b["name"] for b in asked.boxes] == ["confirmRemoveAccount", "keepOrDeleteCopy"]
    assert asked.boxes[1]["text"].startswith(
        f"Keep the history SearchDesk copied for {SECOND}? It stays on this computer and is not used unless "
        f"you add {SECOND} again."
    )
    assert core.accounts.find(SECOND) is None and all(f.exists() for f in files)
    assert SECOND not in core.archive.scope().accounts
    window.remove_account(FIRST)  # no copy here: only the removal's own question
    assert [b["name"] for b in asked.boxes][2:] == ["confirmRemoveAccount"]
    assert core.accounts.find(FIRST) is None


def test_signing_out_asks_too_and_delete_removes_the_copy(
    qtbot: QtBot, real_keyring: object, core: Core, place: dict[str, object], tmp_path: Path
) -> None:
    files = copy_of(core, FIRST)  # the default account
    window = make_window(qtbot, core, place)
    asked = Asked(True)  # Delete the copy
    window.ask = asked
    window.sign_out()  # step 1's Sign out: the default account
    assert [b["name"] for b in asked.boxes] == ["keepOrDeleteCopy"]
    assert FIRST in asked.boxes[0]["text"] and core.accounts.find(FIRST) is None
    qtbot.waitUntil(lambda: not any(f.exists() for f in files), timeout=3000)
