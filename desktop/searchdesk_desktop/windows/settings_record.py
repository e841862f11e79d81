"""Settings' record of changes: where it is, how long it is kept, and Clear the record (at once, after
a question that says what it does; the removal itself is `keeping`'s, on the core's worker)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QMessageBox, QPushButton, QVBoxLayout

from ..claude import config_file as cc
from ..core import Core
from ..keeping import record_keeper as keeping
from ..titles import title
from ..widgets import ChoiceBox, breakable, error_label, plain_label, set_error


class RecordBox(QGroupBox):
    """The record of changes: where it is, how long it is kept, and Clear the record."""

    def __init__(
        self, core: Core, ask: Callable[[QMessageBox], bool], bring_into_view: Callable[[QLabel], None]
    ) -> None:
        """`ask`: Settings' yes/no question (tests answer for the person); `bring_into_view`: scrolls a
        line that just appeared into view in Settings."""
        super().__init__("The record of changes")
        self.core = core
        self._ask = ask
        self._bring_into_view = bring_into_view
        self.setObjectName("record")
        column = QVBoxLayout(self)
        where = core.record_paths()[0]
        whose = (
            "The demo keeps its own record of the changes it makes"
            if core.demo
            else "SearchDesk keeps a record of every change it makes to your Search Console"
        )
        column.addWidget(
            plain_label(
                f"{whose}, on this computer only, in {breakable(cc.display_path(where))}. Activity shows it.",
                selectable=False,
            )
        )
        row = QHBoxLayout()
        label = plain_label("Kept for:", selectable=False)
        self.kept_for = ChoiceBox()
        self.kept_for.setObjectName("keptFor")
        for days, words in keeping.CHOICES:
            self.kept_for.addItem(words, days)
        label.setBuddy(self.kept_for)
        row.addWidget(label)
        row.addWidget(self.kept_for)
        row.addStretch(1)
        column.addLayout(row)
        clear_row = QHBoxLayout()
        self.clear_button = QPushButton("Clear the record…")
        self.clear_button.setAutoDefault(False)
        clear_row.addWidget(self.clear_button)
        clear_row.addStretch(1)
        column.addLayout(clear_row)
        self.record_status = plain_label("")
        self.record_status.setVisible(False)
        column.addWidget(self.record_status)
        self.record_error = error_label()
        column.addWidget(self.record_error)
        self.clear_button.clicked.connect(self.clear_record)

    def chosen_kept_for(self) -> int:
        """The days chosen in Kept for (keeping.FOREVER: until cleared)."""
        return int(self.kept_for.currentData())

    def confirm_clear_box(self) -> QMessageBox:
        """What Clear the record does, before it does it; the safe answer, Cancel, is the default."""
        record = "the demo's record of changes" if self.core.demo else "SearchDesk's record of changes"
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            title(self.core.demo, "clear the record?"),
            f"Clear {record}? Every change it lists is removed from this computer. One line stays, saying "
            "when you cleared it. Google keeps its own record of your Search Console, which this does not "
            "touch. This cannot be undone.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self.window(),
        )
        box.button(QMessageBox.StandardButton.Yes).setText("Clear the record")
        box.button(QMessageBox.StandardButton.No).setText("Cancel")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box

    def clear_record(self) -> None:
        """Ask, then clear on the core's worker (a server holding the journal can make it wait)."""
        if not self._ask(self.confirm_clear_box()):
            return
        self.clear_button.setEnabled(False)
        self.record_said("Clearing the record…")
        self.core.clear_record(self.cleared)

    def cleared(self, problem: str) -> None:
        self.clear_button.setEnabled(True)
        if problem:
            self.record_said("")
        else:
            self.record_said("Cleared. One line stays in the record, saying when you cleared it.")
        set_error(self.record_error, problem)
        self._bring_into_view(self.record_error if problem else self.record_status)

    def record_said(self, text: str) -> None:
        self.record_status.setText(text)
        self.record_status.setVisible(bool(text))
