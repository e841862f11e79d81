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

from PySide6.QtWidgets import QMessageBox, QWidget

from searchdesk_server.coverage.words import TITLE

from ..keeping.coverage_keeper import EXPLAINED, QUESTION, SWITCH, WatchLine
from ..titles import title
from ..widgets import OnceQuestion
from . import kept_here
from .kept_here import KeptBox

if TYPE_CHECKING:
    from ..core import Core

DELETE_RESULTS = "Delete the results"


class CoverageQuestion(OnceQuestion):
    """The watch's question, once, in the main window after the archive's; it stays until answered."""

    def __init__(self) -> None:
        super().__init__("coverageQuestion", QUESTION, EXPLAINED, "Yes, keep track")


def keep_or_delete_box(parent: QWidget, core: Core, email: str, *, removed: bool) -> QMessageBox:
    """Asked once, when an account with a watch here is withheld from Claude or removed: keep its results
    (unread; nothing more is inspected for it) or delete them. Keep is the default and Escape."""
    unused = f"unless you add {email} again" if removed else f"while {email} is not shared with Claude"
    return kept_here.keep_or_delete_box(
        parent,
        title=title(core.demo, "keep which pages are in Google?"),
        text=f"Keep what SearchDesk found about which of {email}'s pages are in Google? It stays on this computer "
        f"and is not used {unused}.\n\n{DELETE_RESULTS} removes it from this computer.",
        name="keepOrDeleteWatch",
        delete=DELETE_RESULTS,
    )


def ask_keep_or_delete(
    parent: QWidget, core: Core, email: str, ask: Callable[[QMessageBox], bool], *, removed: bool
) -> None:
    """After a withhold or a removal: asks only when the account has a watch file here."""
    kept_here.ask_keep_or_delete(
        core, core.coverage, email, lambda: keep_or_delete_box(parent, core, email, removed=removed), ask
    )


class CoverageBox(KeptBox[WatchLine]):
    """Settings' box: the one switch, then a line per watched property with Pause and Delete."""

    def __init__(self, core: Core) -> None:
        super().__init__(
            core,
            core.coverage,
            heading=TITLE,
            name="coverage",
            switch=SWITCH,
            explained="SearchDesk reads your sitemaps from your own website and asks Google about each page, a "
            "little each day, leaving room for Claude's own checks. The results stay on this computer.",
            idle="not being checked",
        )

    def _active(self, line: WatchLine) -> bool:
        return line.watched

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
        self.core.coverage.delete(line.account, line.site, done=self._deleted)
