"""Step 3's result, "What Claude would see": a plain summary, the verdict, and each answer of the check
as a small table of plain labels, with a note under a row that needs one (the demo's hostile rows, URL
Inspection's verdict in words)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from ..check.run import CheckSubject
from ..widgets import SupportDetails, bold, panel, plain_label


def plain_properties(text: str) -> str:
    """Every Domain property in `text` as a site owner names it ("the domain example.com"), not in the
    "sc-domain:" spelling Google's programs use (the server's own wording, `stdio_check.shown`)."""
    from searchdesk_server.stdio_check import shown

    return DOMAIN_PROPERTY.sub(lambda m: shown(m.group(0)), text)


DOMAIN_PROPERTY = re.compile(r"sc-domain:[^\s),;]+")


@functools.cache
def hostile_rows() -> dict[str, str]:
    """The demo's deliberately hostile searches and pages, as the check shows them (cleaned and cut as the
    server's tables cut every cell), each with what it tests; the demo's own constants are the one list."""
    from searchdesk_server.demo import vocab
    from searchdesk_server.stdio_check import CELL_CHARS
    from searchdesk_server.text.cleaning import flatten

    tests = {
        vocab.HOSTILE_INJECTION: "it tries to give Claude an order. Claude gets it as data, never as an "
        "instruction, and removing a property always asks you first.",
        vocab.HOSTILE_BIDI: "it hid a character that turns text backwards. SearchDesk removed it, so the words "
        "read as they are.",
        vocab.HOSTILE_ZERO_WIDTH: "it hid invisible characters between its words. SearchDesk removed them.",
        vocab.HOSTILE_PIPE: "it would break the layout of a table. SearchDesk keeps it in one cell.",
        vocab.HOSTILE_LONG: "it is very long. SearchDesk shortens it, and the … shows where.",
        vocab.HOSTILE_PAGE: "its address hid a character that changes a terminal's colours. SearchDesk removed it.",
    }
    return {flatten(text, CELL_CHARS): f"{HOSTILE} {why}" for text, why in tests.items()}


HOSTILE = "A test of SearchDesk's protections: the demo made this up on purpose, because"

#: What URL Inspection's verdict means for the page, in the words of Google's reference
#: (IndexStatusInspectionResult.verdict: PASS is "Valid", FAIL "Error", NEUTRAL "Excluded" in Search
#: Console), keyed by the word the check shows (`stdio_check.INSPECTION_WORDS`, the one translation).
VERDICT_MEANINGS = {
    "PASS": "Google has this page in its index: it can appear in search results.",
    "FAIL": "Google cannot index this page: the lines below say what stopped it.",
    "NEUTRAL": "This page is not in Google's index, usually on purpose: for example it redirects to "
    "another page, carries a 'noindex' rule, or is a copy of a page Google shows instead. The Coverage line "
    "says which. Nothing needs doing unless you want this very address in search results.",
}


def _verdict_row() -> str:
    from searchdesk_server.stdio_check import INSPECTION_FIELDS

    return dict(INSPECTION_FIELDS)["verdict"]


VERDICT_ROW = _verdict_row()
"""The label of URL Inspection's verdict row in the check's table ("Verdict")."""


def verdict_meaning(shown: str) -> str:
    """The plain meaning of the verdict the check shows ("Excluded"), or "" for one Google sent as is."""
    from searchdesk_server.stdio_check import INSPECTION_WORDS

    code = next((c for c, word in INSPECTION_WORDS["verdict"].items() if word == shown), "")
    return VERDICT_MEANINGS.get(code, "")


def check_summary(report: Any, demo: bool) -> str:
    """The report's first words: one or two sentences on what the check did and what it means."""
    if not getattr(report, "ok", False):
        return "SearchDesk tried to read your Search Console data the way Claude will, and could not."
    text = "SearchDesk read your Search Console data the way Claude will; below is a sample of what Claude would get."
    if demo:
        text += " It is the demo's made-up data, and a few searches in it are hostile on purpose to test SearchDesk's "
        text += "protections (each is marked)."
    return text


def _numeric(text: str) -> bool:
    return bool(text) and text.replace(",", "").replace(".", "", 1).replace("-", "", 1).isdigit()


class ReportTable(QFrame):
    """One answer of the check as a small grid of plain, selectable labels in the window's own font: a
    title, the column names, the rows (which scroll sideways on a narrow screen rather than widen the
    window); a row with something to explain gets a note under the grid, naming the row."""

    def __init__(self, table: Any, notes: Callable[[tuple[str, ...]], str]) -> None:
        super().__init__()
        self.setObjectName("reportTable")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        self.title = bold(plain_label(plain_properties(table.title)))
        layout.addWidget(self.title)
        self.inner = QWidget()
        grid = QGridLayout(self.inner)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(16)
        grid.setVerticalSpacing(2)
        columns = tuple(table.columns)
        numeric = [bool(table.rows) and all(_numeric(row[i]) for row in table.rows) for i in range(len(columns))]
        line = 0
        if any(columns):
            for c, name in enumerate(columns):
                grid.addWidget(bold(plain_label(name, wrap=False, selectable=False)), line, c, self._align(numeric[c]))
            line += 1
        #: Each row's cells as shown, and its note ("" when none): the tests read these.
        self.rows: list[tuple[tuple[str, ...], str]] = []
        self.note_labels: list[QLabel] = []
        for row in table.rows:
            cells = tuple(plain_properties(cell) for cell in row)
            for c, cell in enumerate(cells):
                grid.addWidget(plain_label(cell, wrap=False), line, c, self._align(numeric[c]))
            line += 1
            note = notes(tuple(row))
            self.rows.append((cells, note))
            if note:
                label = plain_label(note)
                label.setObjectName("rowNote")
                italic = label.font()
                italic.setItalic(True)
                label.setFont(italic)
                self.note_labels.append(label)
        grid.setColumnStretch(len(columns), 1)  # room to spare goes right of the last column
        self.area = SidewaysScroll(self.inner)
        layout.addWidget(self.area)
        for label in self.note_labels:
            layout.addWidget(label)
        if table.more:
            layout.addWidget(plain_label(f"… and {table.more} more", selectable=False))

    @staticmethod
    def _align(numeric: bool) -> Qt.AlignmentFlag:
        side = Qt.AlignmentFlag.AlignRight if numeric else Qt.AlignmentFlag.AlignLeft
        return side | Qt.AlignmentFlag.AlignTop


class SidewaysScroll(QScrollArea):
    """Content as tall as it is, scrolling sideways only when the window is narrower than it."""

    def __init__(self, content: QWidget) -> None:
        super().__init__()
        self.setWidget(content)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        widget = self.widget()
        content = widget.sizeHint() if widget is not None else QSize()
        room = self.horizontalScrollBar().sizeHint().height() if content.width() > self.viewport().width() else 0
        return QSize(content.width(), content.height() + room)

    def minimumSizeHint(self) -> QSize:
        return QSize(120, self.sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.updateGeometry()  # the scroll bar comes or goes with the width: the height follows


class CheckResult(QFrame):
    """The check as a result: "What Claude would see", a plain summary first, the verdict, then each answer
    as a small table; what the server said when it failed only under "Details for support"."""

    def __init__(self) -> None:
        super().__init__()
        layout = panel(self, "checkResult")
        self.heading = bold(plain_label("What Claude would see", selectable=False), 1.1)
        self.summary = plain_label("")
        self.summary.setObjectName("checkSummary")
        self.verdict = bold(plain_label(""))
        self.subject = plain_label("")
        self.tables_box = QVBoxLayout()
        self.tables: list[ReportTable] = []
        self.support = SupportDetails()  # what the server said, when the check failed: for support only
        for widget in (self.heading, self.summary, self.verdict, self.subject):
            layout.addWidget(widget)
        layout.addLayout(self.tables_box)
        layout.addWidget(self.support)

    def show_report(self, verdict: str, subject: CheckSubject, report: Any, *, demo: bool = False) -> None:
        self.summary.setText(check_summary(report, demo))
        self.verdict.setText(plain_properties(verdict))
        self.subject.setText(f"Checked for {subject.account}, with {subject.entry}.")
        for table in self.tables:
            table.hide()
            table.deleteLater()
        self.tables = [ReportTable(t, self._notes(demo)) for t in getattr(report, "tables", [])]
        for table in self.tables:
            self.tables_box.addWidget(table)
        self.support.set_text(str(getattr(report, "error", "") or ""))

    @staticmethod
    def _notes(demo: bool) -> Callable[[tuple[str, ...]], str]:
        """What a row needs said under it: the demo's hostile rows, and URL Inspection's verdict."""
        hostile = hostile_rows() if demo else {}

        def note(row: tuple[str, ...]) -> str:
            if len(row) == 2 and row[0] == VERDICT_ROW:
                meaning = verdict_meaning(row[1])
                return f"{row[1]}: {meaning}" if meaning else ""
            return next((f"“{cell}”: {hostile[cell]}" for cell in row if cell in hostile), "")

        return note
