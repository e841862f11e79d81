"""A system notification beside each approval dialog: a nudge, never the only way to answer.

It goes out through the app's notification channel (``searchdesk_desktop.notices.channel``); this module decides
what it says and what a press on it may do.

What makes a press count (issue 17): Approve is offered only where the server's notification form
fits what the system shows while its Approve button is visible (``FITS``, issue 24); otherwise "Show
the question" (``REVIEW``: brings the dialog forward) and Deny, and why in a few words. Each
notification carries a random nonce, as its identifier and inside every button's key, mapped to the
book's Entry it was sent for. A press does nothing when its nonce is unknown, when that Entry is no
longer the book's open question with the words the notification showed (the entry's digest when it
was sent, issue 23: a replaced question's old notification never answers), or when it comes sooner
than the dialog's arming delay (``arming.ARM_DELAY_MS``, the one constant) after the
notification was shown; Review only ever brings the dialog forward (``review_requested``). Then, as the
press arrives, the system is asked whether the screen is locked (``screen_lock``, issue 24): a press
while locked is ignored and the notification sent again (a new nonce); where it cannot tell, the press
counts and ``lock_unknown`` fires once. The book keeps the first answer. A notification is withdrawn
when its question is answered, replaced, withdrawn or expires.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from PySide6.QtCore import QObject, Qt, Signal, Slot

from searchdesk_server.approval.question import asked_by, question_lines, value_line

from ..notices.channel import BUTTON_KEYS_REUSED, CLICK, Channel, Note
from ..notices.notifier_additions import APPROVE
from .arming import ARM_DELAY_MS
from .book import ApprovalBook, Entry, Origin, origin
from .screen_lock import LockReader, LockState, read_lock_state

log = logging.getLogger(__name__)

DENY, REVIEW = "deny", "review"  # and APPROVE, the layer's (notices/notifier_additions.py)
LABELS = {APPROVE: "Approve", DENY: "Deny", REVIEW: "Show the question"}


@dataclass(frozen=True)
class Fit:
    """What a system shows of a notification while its Approve button is visible: the title's lines, and
    the lines below it (the subtitle and the body), at about `line_chars` characters a line."""

    title_lines: int
    lines: int  # the subtitle (unless `subtitle`) and the body together
    line_chars: int = 40
    subtitle: bool = False  # a subtitle line of its own (macOS, through our notifier layer)

    def rows(self, text: str) -> int:
        """Lines `text` takes, each of its own lines wrapped at `line_chars`."""
        return sum(max(1, -(-len(row) // self.line_chars)) for row in text.split("\n"))

    def holds(self, title: str, subtitle: str, body: str) -> bool:
        return self.misfit(title, subtitle, body) is None

    def misfit(self, title: str, subtitle: str, body: str) -> Misfit | None:
        """Which part does not fit while Approve is visible (the first of title, subtitle, body), or None."""
        below = body if self.subtitle or not subtitle else f"{subtitle}\n{body}"
        if self.rows(title) > self.title_lines:
            return Misfit.TITLE
        if self.subtitle and subtitle and self.rows(subtitle) > 1:
            return Misfit.SUBTITLE
        if self.rows(below) > self.lines:
            return Misfit.BODY
        return None


class Misfit(Enum):
    """The part of a notification that is too long for a system (`Fit.misfit`), each with its own reason."""

    TITLE = "title"
    SUBTITLE = "subtitle"
    BODY = "body"


#: Per system, what shows while Approve is visible; Approve is offered only when the server's form fits.
#: Each figure from the vendor's documentation or the shell's source (raise one only with a new source):
#: - Windows: "The default (and maximum) is up to 2 lines of text for the title, and up to 4 lines
#:   (combined) for the two additional description elements" (Microsoft Learn, "App notification
#:   content", Text elements); the toast is 364 px wide (ibid., hero image): about 40 characters a line.
#: - macOS: a banner shows the title, a subtitle line and two lines of body, and Apple offers no way to
#:   show more: "longer than the two line preview MacOS provides" (mackworth/cTiVo#546, macOS 14),
#:   "displaying only 2 lines ... not supported by the macOS Notification Center API"
#:   (mikaelbr/node-notifier#191), no API to expand (julienXX/terminal-notifier#309); its buttons show
#:   while the pointer is over it (Apple HIG, Notifications). Counted at 40 characters a line, to be safe.
#: - GNOME: the expanded banner (its buttons show when it expands) holds `DEFAULT_EXPAND_LINES = 6` lines
#:   of body (gnome-shell js/ui/messageList.js, LabelExpanderLayout: `min * this._expandLines`); its title
#:   is one St.Label line (`setTitle` replaces newlines with spaces). Read in the GNOME 3.3x-40 sources;
#:   not re-checked in the newest shell, whose message list was rewritten.
#: - KDE Plasma: the popup's body holds `maximumLineCount: 8` lines before it scrolls (plasma-workspace
#:   applets/notifications/NotificationPopup.qml, with DelegatePopup.qml's `Layout.maximumHeight:
#:   Kirigami.Units.gridUnit * maximumLineCount`); its title counted as one line, to be safe.
#: - "linux": any other notification server (dunst, xfce4-notifyd, ...): the strictest Linux figure.
FITS = {
    "win32": Fit(2, 4),
    "darwin": Fit(1, 2, subtitle=True),
    "gnome": Fit(1, 6),
    "kde": Fit(1, 8),
    "linux": Fit(1, 6),
}


def linux_desktop(current_desktop: str | None = None) -> str:
    """Which Linux notification server's figures apply: the desktop the session says it is
    (``XDG_CURRENT_DESKTOP``, a colon-separated list such as ``ubuntu:GNOME`` or ``KDE``); "linux"
    (the strictest figure) for any other or none."""
    names = (os.environ.get("XDG_CURRENT_DESKTOP", "") if current_desktop is None else current_desktop).split(":")
    folded = {name.strip().casefold() for name in names}
    if "gnome" in folded:
        return "gnome"
    if "kde" in folded:
        return "kde"
    return "linux"


def system_fit(platform: str = sys.platform, current_desktop: str | None = None) -> Fit:
    """This system's figures; an unknown system gets the strictest (macOS's)."""
    key = linux_desktop(current_desktop) if platform.startswith("linux") else platform
    return FITS.get(key, FITS["darwin"])


def question_text(entry: Entry) -> str:
    """The question as the dialog words it: the server's sentences, the heading, the values, the client."""
    r = entry.request
    lines = [line for line in question_lines(r.what, r.consequence, r.pairs) if line]  # no blank line in a banner
    lines.append(asked_by(r.client.name, r.client.version))
    return "\n".join(lines)


#: The only words the app adds to the server's form: where the question comes from. The notification's own
#: header names SearchDesk on every system; a demo question's title says "Demo" in few enough characters
#: that the longest action still fits a one-line title (issue 36: "SearchDesk (Demo): End verified
#: ownership" did not). A real account's question in the demo app never offers Approve: its label is the app's.
ORIGIN_LABELS = {
    Origin.REAL: "SearchDesk",
    Origin.DEMO: "Demo",
    Origin.REAL_IN_DEMO_APP: "SearchDesk (Demo)",
}
#: Why Approve is not offered, when the app decides it (the server's own reasons are its form's): the part
#: that does not fit, named (issue 36: a title too long was reported as the whole being too long).
WHY_REAL_IN_DEMO = "A real Google account, not the demo."
WHY_TOO_LONG = "The details take more lines than this notification shows."
WHY_TITLE_TOO_LONG = "Its title is longer than this notification shows."
WHY_ACCOUNT_TOO_LONG = "The account's name is longer than this notification shows."
WHY_MISFIT = {Misfit.TITLE: WHY_TITLE_TOO_LONG, Misfit.SUBTITLE: WHY_ACCOUNT_TOO_LONG, Misfit.BODY: WHY_TOO_LONG}
WHY_NO_FORM = "The program that asked sent no short form."
SHOW_TO_DECIDE = "Show the question to decide."


def labelled(summary: str, body: str, actions: tuple[str, ...], subtitle: str = "") -> Note:
    """A note with these buttons, each with its words (``LABELS``): the channel shows what it is given."""
    return Note(summary, body, actions, subtitle, tuple(LABELS[kind] for kind in actions))


def compose(entry: Entry, *, demo: bool = False, fit: Fit | None = None) -> Note:
    """The server's notification form with Approve and Deny where it fits what this system shows while
    Approve is visible (`Fit.holds`); else "Show the question" and Deny, and why in a few words. The app
    adds only its origin label; a question from a real account in the demo app never offers Approve."""
    fit = fit or system_fit()
    where = origin(entry.request, demo_app=demo)
    label = ORIGIN_LABELS[where]
    form = entry.request.notification
    if form is None:  # an older server: the question's start, and the whole question in the dialog
        r = entry.request
        target = value_line(*r.pairs[0]) if r.pairs else ""
        body = "\n".join(x for x in (f"{WHY_NO_FORM} {SHOW_TO_DECIDE}", r.what, target) if x)
        return labelled(f"{label}: approval needed", body, (REVIEW, DENY))
    summary = f"{label}: {form.title}"
    why = form.show_question
    if not why and where is Origin.REAL_IN_DEMO_APP:
        why = WHY_REAL_IN_DEMO
    misfit = None if why else fit.misfit(summary, form.subtitle, form.body)
    if misfit is not None:
        why = WHY_MISFIT[misfit]
    if not why:
        if fit.subtitle:
            return labelled(summary, form.body, (APPROVE, DENY), form.subtitle)
        return labelled(summary, "\n".join(x for x in (form.subtitle, form.body) if x), (APPROVE, DENY))
    lines = [f"{why} {SHOW_TO_DECIDE}", form.subtitle, *(x for x in form.body.split("\n") if x != form.show_question)]
    return labelled(summary, "\n".join(x for x in lines if x), (REVIEW, DENY))


@dataclass
class _Sent:
    entry: Entry
    offered: tuple[str, ...]
    digest: str  # the words it showed: the entry's digest when it was sent
    shown_at: float | None = None  # monotonic; None until the service has it


class ApprovalNotifications(QObject):
    """One notification per open question; its buttons turned into answers under the rules above.

    ``review_requested`` is emitted for "Show the question" or a click on the notification: the
    dialog should come forward (``review``, given at construction, is connected to it).
    ``lock_unknown`` fires once, the first time a press counted although the system could not say
    whether the screen was locked (the main window notes it; see ``screen_lock``)."""

    review_requested = Signal()
    lock_unknown = Signal()

    def __init__(
        self,
        book: ApprovalBook,
        channel: Channel,
        *,
        review: Callable[[], None],
        demo: bool = False,
        arm_delay_ms: int = ARM_DELAY_MS,
        fit: Fit | None = None,
        clock: Callable[[], float] = time.monotonic,
        lock_state: LockReader = read_lock_state,
    ) -> None:
        super().__init__()
        self.book = book
        self._lock_state = lock_state
        self._told_lock_unknown = False
        self._checks: set[asyncio.Task[None]] = set()
        self.channel = channel
        self.review_requested.connect(review)
        self.demo = demo
        self.arm_delay_s = arm_delay_ms / 1000
        self.fit = fit or system_fit()
        self._clock = clock
        self._sent: dict[str, _Sent] = {}  # nonce -> what it was sent for
        # Queued: a press reported from inside an asyncio callback is handled from the Qt loop.
        channel.shown.connect(self._shown, Qt.ConnectionType.QueuedConnection)
        channel.pressed.connect(self._pressed, Qt.ConnectionType.QueuedConnection)
        book.on_change.append(self._changed)

    def close(self) -> None:
        """Stop sending (the app is quitting); ``channel.finish()`` then withdraws what is on screen."""
        if self._changed in self.book.on_change:
            self.book.on_change.remove(self._changed)
        self._sent.clear()
        for task in self._checks:
            task.cancel()  # a press still waiting on the lock check answers nothing now

    def _changed(self, entry: Entry) -> None:
        nonce = next((n for n, sent in self._sent.items() if sent.entry is entry), None)
        if entry.is_open and nonce is None:
            note = compose(entry, demo=self.demo, fit=self.fit)
            nonce = secrets.token_hex(16)
            self._sent[nonce] = _Sent(entry, note.actions, entry.digest)
            self.channel.send(nonce, note)
        elif not entry.is_open and nonce is not None:
            del self._sent[nonce]
            self.channel.withdraw(nonce)

    @Slot(str)
    def _shown(self, nonce: str) -> None:
        sent = self._sent.get(nonce)
        if sent is not None and sent.shown_at is None:
            sent.shown_at = self._clock()

    @Slot(str, str)
    def _pressed(self, nonce: str, key: str) -> None:
        kind, _, key_nonce = key.partition(".")
        if kind in (REVIEW, CLICK):
            self.review_requested.emit()  # harmless whatever it came from: the dialog shows the whole question
            return
        sent = self._sent.get(nonce)
        if sent is None or kind not in sent.offered or (key_nonce != nonce and not BUTTON_KEYS_REUSED):
            return  # unknown or stale notification, a button it did not offer, or a key of another one
        if not self._still_asked(sent):
            return  # that question is over or reads otherwise now (the book tells us, and we withdraw it)
        if sent.shown_at is None or self._clock() - sent.shown_at < self.arm_delay_s:
            return  # too soon to have been read: the dialog arms its Approve only after this delay too
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no asyncio loop (never in the app): nothing can ask the system
            self._decide(sent, kind == APPROVE, LockState.UNKNOWN)
            return
        task = loop.create_task(self._after_lock_check(sent, kind == APPROVE))
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)

    def _still_asked(self, sent: _Sent) -> bool:
        """The Entry it was sent for is the book's open question, with the words it showed."""
        current = self.book.get(sent.entry.key)  # the key names the words: other words find nothing
        return current is sent.entry and current.is_open and current.digest == sent.digest

    async def _after_lock_check(self, sent: _Sent, approve: bool) -> None:
        """Ask the system whether the screen is locked, as the press arrives; then decide."""
        self._decide(sent, approve, await self._lock_state())

    def _decide(self, sent: _Sent, approve: bool, state: LockState) -> None:
        if state is LockState.LOCKED:
            log.info("a notification button was pressed while the screen is locked: ignored")
            self._send_again(sent)  # the press closed it on most systems; the question stays open
            return
        if state is LockState.UNKNOWN and not self._told_lock_unknown:
            self._told_lock_unknown = True
            self.lock_unknown.emit()
        if self._still_asked(sent):  # the book may have moved on while the system answered
            self._answer(sent.entry, approve)

    def _send_again(self, sent: _Sent) -> None:
        """A new notification (a new nonce, arming from when it is shown) for a question still open,
        in place of one whose press was ignored: the person can answer from it once unlocked."""
        nonce = next((n for n, s in self._sent.items() if s is sent), None)
        if nonce is None or not self._still_asked(sent):
            return
        del self._sent[nonce]
        self.channel.withdraw(nonce)
        self._changed(sent.entry)

    def _answer(self, entry: Entry, approve: bool) -> None:
        """The one place a notification answers the book."""
        self.book.answer(entry.key, approve, "notification")
