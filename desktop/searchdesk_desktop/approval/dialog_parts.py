"""The approval dialog's parts that are widgets of their own: the strips that say where a question comes
from or what the person's yes did, the box that warns who loses access, and the status line kept right
above the buttons. `dialog.ApprovalDialog` lays them out with the question's words and its buttons.

Every label is ``widgets.plain_label``: nothing here interprets a caller's or Google's words.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QStyle, QVBoxLayout, QWidget

from ..widgets import plain_label

#: A pale yellow strip: the DEMO banner and the line that says the question changed.
NOTE_STYLE = "background:#fff3c4;color:#5c4400;padding:4px;border-radius:3px;"
#: A pale green strip: what the person's own yes did (a late yes, a yes given before for these words).
YES_STYLE = "background:#e3f1e3;color:#1f4d1f;padding:6px;border-radius:3px;"


def strip(text: str, name: str, style: str) -> QLabel:
    """One line on a coloured strip (`NOTE_STYLE`, `YES_STYLE`), named for the tests and screenshots."""
    label = plain_label(text, selectable=False)
    label.setObjectName(name)
    label.setStyleSheet(style)
    return label


class LossWarning(QFrame):
    """Where people lose access: an icon and a heading of its own (``label``), never colour alone."""

    def __init__(self, heading: QFont) -> None:
        super().__init__()
        self.setObjectName("lossWarning")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        loss = QHBoxLayout(self)
        loss.setContentsMargins(6, 4, 6, 4)
        icon = plain_label("", wrap=False, selectable=False)
        icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning).pixmap(24, 24))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        loss.addWidget(icon, 0)
        self.label = plain_label("", selectable=False)
        self.label.setFont(heading)
        loss.addWidget(self.label, 1)


class StatusSlot(QWidget):
    """The status line right above the buttons: that Claude stopped waiting (``stopped``, its text
    `stopped_words`), or after a late yes what to tell Claude (``late``). The dialog keeps room for it
    from the start, so a change of what it says moves nothing and hides nothing."""

    def __init__(self, stopped_words: str, bold: QFont) -> None:
        super().__init__()
        status = QVBoxLayout(self)
        status.setContentsMargins(0, 0, 0, 0)
        self.stopped = plain_label(stopped_words, selectable=False)
        self.stopped.setObjectName("stoppedWaiting")
        self.stopped.setFont(bold)
        status.addWidget(self.stopped)
        # After a late yes: what to tell Claude, in the status line's place (the words are answered by then).
        self.late = plain_label("")
        self.late.setObjectName("lateYes")
        self.late.setStyleSheet(YES_STYLE)
        self.late.setVisible(False)
        status.addWidget(self.late)
        status.addStretch(1)
