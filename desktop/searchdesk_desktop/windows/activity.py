"""The Activity window: every change SearchDesk made at Google and every question it asked, from the
record the server keeps on this computer; and what Check the record found."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QHideEvent, QKeySequence, QShowEvent, QTextOption
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from searchdesk_server.journal.check import Report
from searchdesk_server.journal.paths import all_journals, journal_path

from .. import history
from ..claude import config_file as cc
from ..core import Core
from ..titles import title
from ..widgets import (
    ZWSP,
    ChoiceBox,
    FlowLayout,
    bold,
    breakable,
    demo_banner,
    error_label,
    fit_to_screen,
    keep_width,
    plain_label,
    scrolling,
    set_error,
)


class ActivityWindow(QDialog):
    """Every change SearchDesk made at Google, and every question it asked, read from the record the
    server keeps on this computer (``history``): it outlasts the app, and holds changes made without it.

    It reads again when the record changes: while the window is shown, a timer compares each journal's
    file and its write-ahead log (size, time changed) every ``POLL_MS``. Not a QFileSystemWatcher: a
    watcher on the folder hears only files coming and going, not a row appended to the write-ahead log,
    and it would wake for the app's own note of the newest row seen (written by every read); a watcher on
    the files loses the log each time SQLite removes it (the last connection closing) and must be set
    again, and on a network folder it may hear nothing at all. Four stat calls every two seconds, only
    while the window is open, cost nothing and work the same on every system."""

    COLUMNS = history.COLUMNS
    DETAILS = 2
    #: Columns whose long cells wrap, at about this many characters (the others fit their contents).
    WRAP_CHARS: ClassVar[dict[int, int]] = {0: 11, 1: 13, 3: 17, 4: 15, 5: 16, 6: 14, 7: 20}
    #: The details column never gets narrower than this many characters (the table scrolls instead).
    DETAILS_CHARS = 20
    #: A filter's box shows about this many characters.
    FILTER_CHARS = 24
    #: Lines shown at most (the newest); Copy as CSV has every one.
    MAX_SHOWN = 500
    POLL_MS = 2000

    def __init__(self, core: Core, journals: list[Path] | None = None) -> None:
        """`journals`: the files to read (default: every journal of this app, `all_journals`)."""
        super().__init__()
        self.core = core
        self._journals = journals
        self.history = history.History([])
        self._stamp: object = None
        self.check_dialog: RecordCheckDialog | None = None
        self.setWindowTitle(title(core.demo, "Activity"))
        layout = QVBoxLayout(self)
        if core.demo:
            layout.addWidget(demo_banner())
        folder = cc.display_path(journal_path(demo=core.demo).parent)
        layout.addWidget(
            plain_label(
                "Every change SearchDesk made at Google and every question it asked you, newest first, also "
                "those made without this app (by a program given its own Google credentials). SearchDesk "
                f"keeps this record on this computer, in {folder}; how long it is kept is set in Settings.",
                selectable=False,
            )
        )
        layout.addLayout(self._filters())
        self.problem = error_label()
        layout.addWidget(self.problem)
        self.empty = plain_label(
            "Nothing yet. Each change SearchDesk makes at Google, and each question it asks you, appears here.",
            selectable=False,
        )
        self.empty.setObjectName("empty")
        layout.addWidget(self.empty)
        self.more = plain_label("", selectable=False)
        layout.addWidget(self.more)
        self.table = self._table()
        layout.addWidget(self.table, 1)
        self.table.viewport().installEventFilter(self)
        # A line whole: Enter (or a double click) on it, or this button, opens every value of it in full.
        self.table.activated.connect(lambda index: self.show_line(index.row()))
        self.line_dialog: LineDialog | None = None
        layout.addLayout(self._buttons())
        fit_to_screen(self, 1200, 560)  # every column in view where the screen allows
        self._poll = QTimer(self)
        self._poll.setInterval(self.POLL_MS)
        self._poll.timeout.connect(self._poll_record)

    def _filters(self) -> FlowLayout:
        """Property and Google account: each shows the lines of one, or of all."""
        filters = FlowLayout()
        self.site_filter = ChoiceBox()
        self.account_filter = ChoiceBox()
        for label, box in (("Property:", self.site_filter), ("Google account:", self.account_filter)):
            # As wide as a usual address: a long one is cut in the box (its list and tooltip show it whole)
            # rather than widening the window past a small screen.
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(self.FILTER_CHARS)
            box.currentIndexChanged.connect(self.show_lines)
            pair = QWidget()
            row = QHBoxLayout(pair)
            row.setContentsMargins(0, 0, 8, 0)
            row.addWidget(plain_label(label, selectable=False))
            row.addWidget(box)
            filters.addWidget(pair)
        return filters

    def _table(self) -> QTableWidget:
        """The lines, one row each, plain text to read and select (Copy copies the cells chosen)."""
        table = QTableWidget(0, len(self.COLUMNS))
        table.setHorizontalHeaderLabels(list(self.COLUMNS))
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        table.setWordWrap(True)
        table.verticalHeader().setVisible(False)
        table.horizontalHeader().setStretchLastSection(False)
        copy = QAction("Copy", table)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.triggered.connect(self.copy_selection)
        table.addAction(copy)
        return table

    def _buttons(self) -> FlowLayout:
        """Show the whole line, Check the record, Copy as CSV, Close."""
        buttons = FlowLayout(align_right=True)
        self.line_button = QPushButton("Show the whole line")
        self.line_button.setAutoDefault(False)
        self.line_button.setToolTip("Every value of the chosen line in full (or press Enter on the line)")
        self.line_button.clicked.connect(lambda _checked=False: self.show_line(max(self.table.currentRow(), 0)))
        self.check_button = QPushButton("Check the record")
        self.check_button.setAutoDefault(False)
        self.check_button.clicked.connect(self.check_record)
        self.csv_button = QPushButton("Copy as CSV")
        self.csv_button.setAutoDefault(False)
        self.csv_button.clicked.connect(self.copy_csv)
        # As wide as it will be once it says "Copied as CSV": the buttons beside it never move.
        keep_width(self.csv_button, "Copied as CSV")
        close = QPushButton("Close")
        close.setAutoDefault(False)  # Enter on a line opens it; it never closes the window
        close.clicked.connect(self.close)
        for button in (self.line_button, self.check_button, self.csv_button, close):
            buttons.addWidget(button)
        return buttons

    @property
    def journals(self) -> list[Path]:
        """The journals shown: the demo app's own only, or the person's (with any Windows package wrote)."""
        return list(self._journals) if self._journals is not None else all_journals(demo=self.core.demo)

    def _record_stamp(self) -> object:
        """What changes when any journal is written: each file's and its write-ahead log's size and time."""
        stamp = []
        for path in self.journals:
            for file in (path, path.with_name(path.name + "-wal")):
                try:
                    info = file.stat()
                    stamp.append((str(file), info.st_mtime_ns, info.st_size))
                except OSError:
                    stamp.append((str(file), 0, -1))
        return tuple(stamp)

    def _poll_record(self) -> None:
        if self.isVisible() and self._record_stamp() != self._stamp:
            self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._poll.start()

    def hideEvent(self, event: QHideEvent) -> None:
        self._poll.stop()
        super().hideEvent(event)

    def refresh(self) -> None:
        """Read every journal again (and note the newest row of each that checks), then show it."""
        self.history = history.read(self.journals)
        self._stamp = self._record_stamp()
        problems = self.history.problems
        set_error(
            self.problem,
            " ".join(r.render().splitlines()[0] for r in problems)
            + (" Click Check the record for what the check found." if problems else ""),
        )
        self._fill_filter(self.site_filter, "All properties", self.history.sites())
        self._fill_filter(self.account_filter, "All accounts", self.history.accounts(), shown=history.account_name)
        self.show_lines()

    @staticmethod
    def _fill_filter(box: QComboBox, every: str, values: list[str], shown: Callable[[str], str] = str) -> None:
        """The choices, keeping the one made (while it is still in the record)."""
        chosen = box.currentData()
        box.blockSignals(True)
        box.clear()
        box.addItem(every, history.ALL)
        for value in values:
            box.addItem(shown(value), value)
        at = box.findData(chosen) if chosen is not None else 0
        for index in range(box.count()):
            box.setItemData(index, box.itemText(index), Qt.ItemDataRole.ToolTipRole)
        box.setCurrentIndex(max(at, 0))
        box.blockSignals(False)

    def lines(self) -> list[history.Line]:
        """The lines the filters let through, newest first."""
        site = self.site_filter.currentData() or history.ALL
        account = self.account_filter.currentData() or history.ALL
        return self.history.filtered(site, account)

    def rows(self, *, all_values: bool = False) -> list[list[str]]:
        return [line.cells(whole=all_values) for line in self.lines()]

    def show_lines(self) -> None:
        lines = self.lines()
        shown = lines[: self.MAX_SHOWN]
        self.empty.setVisible(not lines)
        self.table.setVisible(bool(lines))
        self.csv_button.setEnabled(bool(lines))
        self.line_button.setEnabled(bool(lines))
        self.more.setText(
            f"Showing the newest {len(shown):,} of {len(lines):,}; Copy as CSV copies every one."
            if len(lines) > len(shown)
            else ""
        )
        self.more.setVisible(len(lines) > len(shown))
        self.table.setRowCount(len(shown))
        for r, line in enumerate(shown):
            full = line.cells(whole=True)
            row = line.cells(whole=False)
            for c in (3, 6):  # an address (the account, or one Google named) wraps at its @ and dots on screen
                row[c] = breakable(row[c])  # copied (Copy, Copy as CSV, the tooltip) it is whole
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)  # items are always plain text
                item.setToolTip(full[c])  # whole, also where a long address is cut at its column's edge
                self.table.setItem(r, c, item)
        self.fit_columns()

    def fit_columns(self) -> None:
        """Every header whole; short columns fit their contents, long ones wrap; the details take the
        rest of the width (at least DETAILS_CHARS: on a narrow screen the table scrolls sideways)."""
        table, header = self.table, self.table.horizontalHeader()
        char = table.fontMetrics().horizontalAdvance("x")
        used = 0
        for c in range(len(self.COLUMNS)):
            if c == self.DETAILS:
                continue
            width = max(table.sizeHintForColumn(c), header.sectionSizeHint(c))
            if c in self.WRAP_CHARS:
                width = max(header.sectionSizeHint(c), min(width, self.WRAP_CHARS[c] * char))
            table.setColumnWidth(c, width)
            used += width
        least = max(header.sectionSizeHint(self.DETAILS), self.DETAILS_CHARS * char)
        table.setColumnWidth(self.DETAILS, max(table.viewport().width() - used, least))
        table.resizeRowsToContents()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # The table's own visible width, once it is known: the window's resize comes before its
        # layout has resized the table, and a scroll bar coming or going changes it too.
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self.fit_columns()
        return super().eventFilter(watched, event)

    def show_line(self, row: int) -> None:
        """Every value of the line shown in table row `row`, whole, in a window of its own: a long address
        is cut at its column's edge, and a tooltip cannot be read without a mouse."""
        shown = self.lines()[: self.MAX_SHOWN]
        if not 0 <= row < len(shown):
            return
        if self.line_dialog is None:
            self.line_dialog = LineDialog(self.core.demo)
        self.line_dialog.show_line(shown[row])

    def csv_text(self) -> str:
        """The lines the filters let through as CSV, every value in full, cells escaped as the server's
        CSV export does."""
        from searchdesk_server.tools.analytics.export import safe_cell

        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(self.COLUMNS)
        for row in self.rows(all_values=True):
            writer.writerow([safe_cell(cell) for cell in row])
        return out.getvalue()

    def copy_csv(self) -> None:
        QGuiApplication.clipboard().setText(self.csv_text())
        self.csv_button.setText("Copied as CSV")

    def copy_selection(self) -> None:
        cells = sorted((i.row(), i.column(), i.text()) for i in self.table.selectedItems())
        lines: dict[int, list[str]] = {}
        for row, _col, text in cells:
            lines.setdefault(row, []).append(text.replace("\n", "; ").replace(ZWSP, ""))
        QGuiApplication.clipboard().setText("\n".join("\t".join(v) for v in lines.values()))

    def check_record(self) -> None:
        """Run the server's own check on every journal shown, and say what it found."""
        reports = history.check_all(self.journals)
        if self.check_dialog is None:
            self.check_dialog = RecordCheckDialog(self.core.demo)
        self.check_dialog.show_reports(reports)


class RecordCheckDialog(QDialog):
    """What Check the record found, as the command `searchdesk-server --check-journal` prints it."""

    def __init__(self, demo: bool) -> None:
        super().__init__()
        self.setWindowTitle(title(demo, "Check the record"))
        layout = QVBoxLayout(self)
        self.verdict = bold(plain_label("", selectable=False))
        layout.addWidget(self.verdict)
        self.report = plain_label("")
        body = QWidget()
        inner = QVBoxLayout(body)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addWidget(self.report)
        inner.addStretch(1)
        area = scrolling(body)
        area.setWidgetResizable(True)
        layout.addWidget(area, 1)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(close)
        layout.addLayout(row)
        fit_to_screen(self, 640, 320)

    def show_reports(self, reports: list[Report]) -> None:
        if any(r.unreadable for r in reports):
            verdict = "The record could not be checked."
        elif any(r.problem for r in reports):
            verdict = "The record does not check: a row was changed, or removed without a note."
        else:
            verdict = "The record checks: no row was changed, and none was removed without a note."
        self.verdict.setText(verdict)
        self.report.setText(history.check_text(reports))
        self.show()
        self.raise_()
        self.activateWindow()


class LineDialog(QDialog):
    """One line of Activity with every value whole, to read, select and copy (Enter on a line opens it).

    A read-only text box that wraps anywhere: a long address has no space to wrap at, and in the table it
    is cut at its column's edge. The box takes the keyboard, so the text can be read and selected
    without a mouse; Copy copies it all. A window of its own, not Activity's child: a dialog presses the
    first default button among all its children on Enter, and Enter on a line must open it, not close it."""

    def __init__(self, demo: bool) -> None:
        super().__init__()
        self.setObjectName("activityLine")
        self.setWindowTitle(title(demo, "Activity, one line"))
        layout = QVBoxLayout(self)
        self.heading = bold(plain_label("", selectable=False))
        layout.addWidget(self.heading)
        self.text = QPlainTextEdit()
        self.text.setObjectName("wholeLine")
        self.text.setReadOnly(True)
        self.text.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.text.setTabChangesFocus(True)
        layout.addWidget(self.text, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setAutoDefault(False)
        keep_width(self.copy_button, "Copied")
        self.copy_button.clicked.connect(self.copy)
        close = QPushButton("Close")
        close.setDefault(True)
        close.clicked.connect(self.close)
        row.addWidget(self.copy_button)
        row.addWidget(close)
        layout.addLayout(row)
        fit_to_screen(self, 640, 440)

    @staticmethod
    def whole_text(line: history.Line) -> str:
        """The line as its window shows it: each column's name, then its value whole, a blank line between."""
        cells = line.cells(whole=True)
        return "\n\n".join(f"{name}:\n{value}" for name, value in zip(history.COLUMNS, cells, strict=True) if value)

    def show_line(self, line: history.Line) -> None:
        self.heading.setText(f"{line.what}, {line.when}")
        self.text.setPlainText(self.whole_text(line))
        self.copy_button.setText("Copy")
        self.show()
        self.raise_()
        self.activateWindow()
        self.text.setFocus()

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text.toPlainText())
        self.copy_button.setText("Copied")
