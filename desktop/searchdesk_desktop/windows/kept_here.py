"""What the archive and the coverage watch show alike of what they keep on this computer: Settings'
box (the one switch, then a line per property with Pause and Delete) and the keep-or-delete question
asked when an account with something kept here is withheld from Claude or removed.

Why one place: both boxes and both questions behave the same way and must keep doing so (Keep is
the default and Escape, the lines are read again after a deletion done on a worker); each side
keeps its own words, object names and what its Pause and Delete do (`windows/archive.py`,
`windows/coverage.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from PySide6.QtWidgets import QCheckBox, QGroupBox, QHBoxLayout, QMessageBox, QPushButton, QVBoxLayout, QWidget

from ..widgets import clear_layout, plain_label

if TYPE_CHECKING:
    from ..core import Core

KEEP = "Keep"


class Line(Protocol):
    """One property's line in Settings, as either keeper gives it."""

    @property
    def account(self) -> str: ...
    @property
    def site(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def paused(self) -> bool: ...


L = TypeVar("L", bound=Line)


class Deletes(Protocol):
    """What the keep-or-delete question needs of a keeper (``ArchiveKeeper``, ``CoverageKeeper``)."""

    def has_copy(self, account: str) -> bool: ...
    def delete(self, account: str, site: str | None, done: Callable[[], None] = ...) -> None: ...


class Keeper(Deletes, Protocol[L]):
    """What Settings' box needs of its keeper."""

    @property
    def on(self) -> bool: ...
    def set_on(self, on: bool) -> None: ...
    def lines(self) -> list[L]: ...


def keep_or_delete_box(parent: QWidget, *, title: str, text: str, name: str, delete: str) -> QMessageBox:
    """The question's box: Yes is `delete`, No is Keep (the default and Escape: nothing is lost by a
    stray key); the windows ask through their ``ask``, so a test answers as a person would."""
    box = QMessageBox(
        QMessageBox.Icon.Question,
        title,
        text,
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        parent,
    )
    box.setObjectName(name)
    box.button(QMessageBox.StandardButton.Yes).setText(delete)
    box.button(QMessageBox.StandardButton.No).setText(KEEP)
    box.setDefaultButton(QMessageBox.StandardButton.No)
    box.setEscapeButton(QMessageBox.StandardButton.No)
    return box


def ask_keep_or_delete(
    core: Core, keeper: Deletes, email: str, box: Callable[[], QMessageBox], ask: Callable[[QMessageBox], bool]
) -> None:
    """Asks only when the account has something kept here; Delete removes it on a worker thread
    (then Settings' lines are read again), Keep leaves it."""
    if not keeper.has_copy(email):
        return
    if ask(box()):
        keeper.delete(email, None, done=lambda: core._later(core.archive_deleted.emit))


class KeptBox(QGroupBox, Generic[L]):
    """Settings' box: the one switch and a few words, then a line per property with Pause and Delete.
    A subclass says whether a line is being worked on (`_active`) and what Pause and Delete do."""

    def __init__(
        self,
        core: Core,
        keeper: Keeper[L],
        *,
        heading: str,
        name: str,
        switch: str,
        explained: str,
        idle: str,
    ) -> None:
        super().__init__(heading)
        self.setObjectName(name)
        self.core = core
        self._keeper = keeper
        self._idle = idle
        column = QVBoxLayout(self)
        self.switch = QCheckBox(switch)
        self.switch.setObjectName(f"{name}Switch")
        self.switch.setChecked(keeper.on)
        self.switch.toggled.connect(self._switched)
        column.addWidget(self.switch)
        column.addWidget(plain_label(explained, selectable=False))
        self.rows = QVBoxLayout()
        column.addLayout(self.rows)
        self.lines: list[L] = []
        self.refresh()
        core.archive_deleted.connect(self.refresh)  # a deletion done on a worker: read again (gone with the window)

    def _switched(self, on: bool) -> None:
        if on != self._keeper.on:
            self._keeper.set_on(on)
            self.core.changed.emit()
        self.refresh()

    def refresh(self) -> None:
        """The lines as the store has them now."""
        clear_layout(self.rows)
        self.lines = [] if self.core.demo else self._keeper.lines()
        for line in self.lines:
            self.rows.addWidget(self._row(line))

    def _row(self, line: L) -> QWidget:
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        words = f"{line.site} ({line.account})\n{line.text}"
        if line.paused:
            words += " · paused"
        elif not self._active(line):
            words += f" · {self._idle}"
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

    def _active(self, line: L) -> bool:
        raise NotImplementedError

    def _pause(self, line: L) -> None:
        raise NotImplementedError

    def _delete(self, line: L) -> None:
        raise NotImplementedError

    def _deleted(self) -> None:
        """Read the lines again once a deletion on a worker is done (on the Qt thread)."""
        self.core._later(self.core.archive_deleted.emit)
