"""The main window's approval section: questions waiting, answers given after Claude stopped waiting
(what to tell Claude), and denied questions Claude asked again (each with "Change my mind")."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from searchdesk_server.agent.protocol import QUESTION_OPEN_S, minutes

from ..approval.book import Entry, State
from ..approval.words import late_yes_words
from ..history import tool_title, values_text
from ..widgets import bold, panel, plain_label, plural

ASKED_AGAIN_ROWS = 3  # the main window lists at most this many; the next appear as these go


class ApprovalsSection(QFrame):
    """Questions waiting, answers given after Claude stopped waiting (what to tell Claude), and denied
    questions Claude asked again."""

    #: "Show the question": the owner brings the waiting question forward (the app: ApprovalQueue).
    review_requested = Signal()

    def __init__(self) -> None:
        super().__init__()
        layout = panel(self, "approvals")
        layout.addWidget(bold(plain_label("Approval questions", selectable=False), 1.1))
        row = QHBoxLayout()
        self.waiting = plain_label("", selectable=False)
        self.review_button = QPushButton("Show the question")
        self.review_button.setAutoDefault(False)
        self.review_button.clicked.connect(self.review_requested)
        row.addWidget(self.waiting, 1)
        row.addWidget(self.review_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(row)
        self.late = QVBoxLayout()
        layout.addLayout(self.late)
        self.late_labels: list[QLabel] = []
        #: Denied questions Claude asked again, each with "Change my mind" (the main window fills it).
        self.asked_again = QVBoxLayout()
        layout.addLayout(self.asked_again)

    def show_state(self, waiting: int, late: list[Entry]) -> None:
        self.waiting.setText(
            f"{plural(waiting, 'approval question')} waiting for you." if waiting else "No approval questions waiting."
        )
        self.review_button.setEnabled(bool(waiting))
        texts = [late_answer_text(e) for e in newest_per_target(late)]
        while len(self.late_labels) > len(texts):
            self.late_labels.pop().deleteLater()
        while len(self.late_labels) < len(texts):
            label = bold(plain_label(""))
            label.setObjectName("lateAnswer")
            self.late.addWidget(label)
            self.late_labels.append(label)
        for label, text in zip(self.late_labels, texts, strict=True):
            label.setText(text)


def newest_per_target(entries: list[Entry]) -> list[Entry]:
    """One entry per target (the tool and its targets: the fingerprint), the newest answer's: a question
    answered again for the same sitemap replaces the older line rather than contradicting it beside it."""
    newest: dict[str, Entry] = {}
    for entry in entries:
        held = newest.get(entry.fingerprint)
        if held is None or (entry.activity.answered_at or 0.0) >= (held.activity.answered_at or 0.0):
            newest[entry.fingerprint] = entry
    return [e for e in entries if newest.get(e.fingerprint) is e]


def late_answer_text(entry: Entry) -> str:
    """What the person does after answering a question Claude stopped waiting for."""
    a = entry.activity
    what = f"“{tool_title(a.tool)}” ({values_text(a.values, 3).replace(chr(10), '; ')})"
    answered = a.answered_at or time.time()
    if entry.state is State.APPROVED:
        return f"You approved {what} after Claude stopped waiting. {late_yes_words(answered)}"
    return (
        f"You said no to {what} after Claude stopped waiting: nothing will be done. If Claude asks again within "
        f"{minutes(QUESTION_OPEN_S)} it is told no; you can tell Claude you said no."
    )
