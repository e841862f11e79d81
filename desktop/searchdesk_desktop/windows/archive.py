"""What the person sees of the archive: the question (once, after sign-in) and Settings' box.

The box's controls act at once, as the record's Clear does: the switch turns the copy on or off, each
kept property has its line ("Kept since <date> · <size> on this computer · last copied <time>"), Pause
(nothing new is asked of Google for it; what is kept stays) and Delete. A property of an account Claude
may no longer use stays listed until the person deletes it: it is never copied for again, and never read.
The lines are read from the store with a reader's connection of their own (archive_sync.Archives.kept),
a few milliseconds, so the window never waits on the copier.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QCheckBox, QGroupBox, QHBoxLayout, QMessageBox, QPushButton, QVBoxLayout, QWidget

from ..archive_keeper import EXPLAINED, QUESTION, PropertyLine
from ..titles import title
from ..widgets import OnceQuestion, clear_layout, plain_label

if TYPE_CHECKING:
    from ..core import Core

SWITCH = "Keep my history beyond 16 months on this computer"
KEEP = "Keep"
DELETE_COPY = "Delete the copy"


def keep_or_delete_box(parent: QWidget, core: Core, email: str, *, removed: bool) -> QMessageBox:
    """Asked once, when an account with archive files here is withheld from Claude or removed: keep
    them (they stay, unread, and nothing more is copied for the account) or delete them. Yes is Delete,
    No is Keep (the default and Escape: nothing is lost by a stray key); the windows ask through their
    ``ask``, so a test answers as a person would."""
    _kept, aside = core.archive.archives.files(email)
    unused = f"unless you add {email} again" if removed else f"while {email} is not shared with Claude"
    damaged = [p for p in aside if not p.name.endswith(("-wal", "-shm"))]  # SQLite's side files are not copies
    also = ""
    if damaged:
        copies = "copy" if len(damaged) == 1 else f"{len(damaged)} copies"
        also = f", and the damaged {copies} of it SearchDesk set aside earlier"
    box = QMessageBox(
        QMessageBox.Icon.Question,
        title(core.demo, "keep the copied history?"),
        f"Keep the history SearchDesk copied for {email}? It stays on this computer and is not used {unused}."
        f"\n\n{DELETE_COPY} removes that history from this computer{also}. Days Google no longer has cannot "
        "be copied again.",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        parent,
    )
    box.setObjectName("keepOrDeleteCopy")
    box.button(QMessageBox.StandardButton.Yes).setText(DELETE_COPY)
    box.button(QMessageBox.StandardButton.No).setText(KEEP)
    box.setDefaultButton(QMessageBox.StandardButton.No)
    box.setEscapeButton(QMessageBox.StandardButton.No)
    return box


def ask_keep_or_delete(
    parent: QWidget, core: Core, email: str, ask: Callable[[QMessageBox], bool], *, removed: bool
) -> None:
    """After a withhold or a removal: asks only when the account has files here; Delete removes them
    on a worker thread (then Settings' lines are read again), Keep leaves them."""
    if not core.archive.has_copy(email):
        return
    if ask(keep_or_delete_box(parent, core, email, removed=removed)):
        core.archive.delete(email, None, done=lambda: core._later(core.archive_deleted.emit))


class ArchiveQuestion(OnceQuestion):
    """The archive's question, once, in the main window after a sign-in; it stays until answered."""

    def __init__(self) -> None:
        super().__init__("archiveQuestion", QUESTION, EXPLAINED, "Yes, keep it")


class ArchiveBox(QGroupBox):
    """Settings' box: the one switch, then a line per kept property with Pause and Delete."""

    def __init__(self, core: Core) -> None:
        super().__init__("Your history beyond 16 months")
        self.setObjectName("archive")
        self.core = core
        column = QVBoxLayout(self)
        self.switch = QCheckBox(SWITCH)
        self.switch.setObjectName("archiveSwitch")
        self.switch.setChecked(core.archive.on)
        self.switch.toggled.connect(self._switched)
        column.addWidget(self.switch)
        column.addWidget(
            plain_label(
                "The copy holds each property's clicks, impressions, pages, countries, devices and the searches "
                "people made, in your data folder. It stays on this computer; delete it here at any time.",
                selectable=False,
            )
        )
        self.rows = QVBoxLayout()
        column.addLayout(self.rows)
        self.lines: list[PropertyLine] = []
        self.refresh()
        core.archive_deleted.connect(self.refresh)  # a Qt connection: gone with the window

    def _switched(self, on: bool) -> None:
        if on != self.core.archive.on:
            self.core.archive.set_on(on)
            self.core.changed.emit()
        self.refresh()

    def refresh(self) -> None:
        """The lines as the store has them now."""
        clear_layout(self.rows)
        self.lines = [] if self.core.demo else self.core.archive.lines()
        for line in self.lines:
            self.rows.addWidget(self._row(line))

    def _row(self, line: PropertyLine) -> QWidget:
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        words = f"{line.site} ({line.account})\n{line.text}"
        if line.paused:
            words += " · paused"
        elif not line.copied:
            words += " · not being copied"
        layout.addWidget(plain_label(words), 1)
        pause = QPushButton("Resume" if line.paused else "Pause")
        pause.setAutoDefault(False)
        pause.clicked.connect(lambda _c=False, ln=line: self._pause(ln))
        delete = QPushButton("Delete")
        delete.setAutoDefault(False)
        delete.clicked.connect(lambda _c=False, ln=line: self._delete(ln))
        layout.addWidget(pause)
        layout.addWidget(delete)
        return row

    def _pause(self, line: PropertyLine) -> None:
        self.core.archive.pause(line.site, not line.paused)
        self.refresh()

    def _delete(self, line: PropertyLine) -> None:
        answer = QMessageBox.question(
            self,
            "Delete the copy",
            f"Delete SearchDesk's copy of {line.site}'s history on this computer? Days Google no longer has "
            "cannot be copied again.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        self.core.archive.pause(line.site, True)  # so the copier does not start it again at once
        self.core.archive.delete(line.account, line.site, done=lambda: self.core._later(self.core.archive_deleted.emit))
