"""What the person sees of the coverage watch: the question (once, after the archive's) and Settings' box.

The box's controls act at once, as the archive's do: the one switch turns the watch on or off; each
watched property has its line ("Watching N pages · M in Google · K not · X% checked · next pass
<date>"), Pause (nothing is fetched or inspected for it; what is kept stays) and Delete. A property of
an account Claude may no longer use stays listed until the person deletes it, never inspected again.
No notifications: the notification stays the place where SearchDesk asks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QCheckBox, QGroupBox, QHBoxLayout, QMessageBox, QPushButton, QVBoxLayout, QWidget

from ..coverage_keeper import EXPLAINED, QUESTION, SWITCH, WatchLine
from ..titles import title
from ..widgets import OnceQuestion, clear_layout, plain_label

if TYPE_CHECKING:
    from ..core import Core

KEEP = "Keep"
DELETE_RESULTS = "Delete the results"


class CoverageQuestion(OnceQuestion):
    """The watch's question, once, in the main window after the archive's; it stays until answered."""

    def __init__(self) -> None:
        super().__init__("coverageQuestion", QUESTION, EXPLAINED, "Yes, keep track")


def keep_or_delete_box(parent: QWidget, core: Core, email: str, *, removed: bool) -> QMessageBox:
    """Asked once, when an account with a watch here is withheld from Claude or removed: keep its results
    (unread; nothing more is inspected for it) or delete them. Keep is the default and Escape."""
    unused = f"unless you add {email} again" if removed else f"while {email} is not shared with Claude"
    box = QMessageBox(
        QMessageBox.Icon.Question,
        title(core.demo, "keep which pages are in Google?"),
        f"Keep what SearchDesk found about which of {email}'s pages are in Google? It stays on this computer "
        f"and is not used {unused}.\n\n{DELETE_RESULTS} removes it from this computer.",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        parent,
    )
    box.setObjectName("keepOrDeleteWatch")
    box.button(QMessageBox.StandardButton.Yes).setText(DELETE_RESULTS)
    box.button(QMessageBox.StandardButton.No).setText(KEEP)
    box.setDefaultButton(QMessageBox.StandardButton.No)
    box.setEscapeButton(QMessageBox.StandardButton.No)
    return box


def ask_keep_or_delete(
    parent: QWidget, core: Core, email: str, ask: Callable[[QMessageBox], bool], *, removed: bool
) -> None:
    """After a withhold or a removal: asks only when the account has a watch file here."""
    if not core.coverage.has_copy(email):
        return
    if ask(keep_or_delete_box(parent, core, email, removed=removed)):
        core.coverage.delete(email, None, done=lambda: core._later(core.archive_deleted.emit))


class CoverageBox(QGroupBox):
    """Settings' box: the one switch, then a line per watched property with Pause and Delete."""

    def __init__(self, core: Core) -> None:
        super().__init__("Which of your pages are in Google")
        self.setObjectName("coverage")
        self.core = core
        column = QVBoxLayout(self)
        self.switch = QCheckBox(SWITCH)
        self.switch.setObjectName("coverageSwitch")
        self.switch.setChecked(core.coverage.on)
        self.switch.toggled.connect(self._switched)
        column.addWidget(self.switch)
        column.addWidget(
            plain_label(
                "SearchDesk reads your sitemaps from your own website and asks Google about each page, a little "
                "each day, leaving room for Claude's own checks. The results stay on this computer.",
                selectable=False,
            )
        )
        self.rows = QVBoxLayout()
        column.addLayout(self.rows)
        self.lines: list[WatchLine] = []
        self.refresh()
        core.archive_deleted.connect(self.refresh)  # a deletion done on a worker: read again

    def _switched(self, on: bool) -> None:
        if on != self.core.coverage.on:
            self.core.coverage.set_on(on)
            self.core.changed.emit()
        self.refresh()

    def refresh(self) -> None:
        clear_layout(self.rows)
        self.lines = [] if self.core.demo else self.core.coverage.lines()
        for line in self.lines:
            self.rows.addWidget(self._row(line))

    def _row(self, line: WatchLine) -> QWidget:
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        words = f"{line.site} ({line.account})\n{line.text}"
        if line.paused:
            words += " · paused"
        elif not line.watched:
            words += " · not being checked"
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

    def _pause(self, line: WatchLine) -> None:
        self.core.coverage.pause(line.account, line.site, not line.paused)
        self.refresh()

    def _delete(self, line: WatchLine) -> None:
        answer = QMessageBox.question(
            self,
            "Delete the results",
            f"Delete what SearchDesk found about which of {line.site}'s pages are in Google? It is removed "
            "from this computer; the watch starts again from nothing if it is on.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        self.core.coverage.delete(
            line.account, line.site, done=lambda: self.core._later(self.core.archive_deleted.emit)
        )
