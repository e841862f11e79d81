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

from PySide6.QtWidgets import QMessageBox, QWidget

from ..keeping.archive_keeper import EXPLAINED, QUESTION, PropertyLine
from ..titles import title
from ..widgets import OnceQuestion
from . import kept_here
from .kept_here import KeptBox

if TYPE_CHECKING:
    from ..core import Core

SWITCH = "Keep my history beyond 16 months on this computer"
DELETE_COPY = "Delete the copy"


def keep_or_delete_box(parent: QWidget, core: Core, email: str, *, removed: bool) -> QMessageBox:
    """Asked once, when an account with archive files here is withheld from Claude or removed: keep
    them (they stay, unread, and nothing more is copied for the account) or delete them (Keep is the
    default and Escape, `kept_here.keep_or_delete_box`)."""
    _kept, aside = core.archive.archives.files(email)
    unused = f"unless you add {email} again" if removed else f"while {email} is not shared with Claude"
    damaged = [p for p in aside if not p.name.endswith(("-wal", "-shm"))]  # SQLite's side files are not copies
    also = ""
    if damaged:
        copies = "copy" if len(damaged) == 1 else f"{len(damaged)} copies"
        also = f", and the damaged {copies} of it SearchDesk set aside earlier"
    return kept_here.keep_or_delete_box(
        parent,
        title=title(core.demo, "keep the copied history?"),
        text=f"Keep the history SearchDesk copied for {email}? It stays on this computer and is not used {unused}."
        f"\n\n{DELETE_COPY} removes that history from this computer{also}. Days Google no longer has cannot "
        "be copied again.",
        name="keepOrDeleteCopy",
        delete=DELETE_COPY,
    )


def ask_keep_or_delete(
    parent: QWidget, core: Core, email: str, ask: Callable[[QMessageBox], bool], *, removed: bool
) -> None:
    """After a withhold or a removal: asks only when the account has files here; Delete removes them
    on a worker thread (then Settings' lines are read again), Keep leaves them."""
    kept_here.ask_keep_or_delete(
        core, core.archive, email, lambda: keep_or_delete_box(parent, core, email, removed=removed), ask
    )


class ArchiveQuestion(OnceQuestion):
    """The archive's question, once, in the main window after a sign-in; it stays until answered."""

    def __init__(self) -> None:
        super().__init__("archiveQuestion", QUESTION, EXPLAINED, "Yes, keep it")


class ArchiveBox(KeptBox[PropertyLine]):
    """Settings' box: the one switch, then a line per kept property with Pause and Delete."""

    def __init__(self, core: Core) -> None:
        super().__init__(
            core,
            core.archive,
            heading="Your history beyond 16 months",
            name="archive",
            switch=SWITCH,
            explained="The copy holds each property's clicks, impressions, pages, countries, devices and the "
            "searches people made, in your data folder. It stays on this computer; delete it here at any time.",
            idle="not being copied",
        )

    def _active(self, line: PropertyLine) -> bool:
        return line.copied

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
        self.core.archive.delete(line.account, line.site, done=self._deleted)
