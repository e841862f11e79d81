"""The settings that reach the server: read-only, tool groups, default property, allowed properties;
and, with several Google accounts, which of them Claude may use.

They are saved in the app's settings and written into SearchDesk's entry in Claude Desktop's
settings file as the server's variables (``GSC_READ_ONLY``, ``GSC_ALLOW_TOOLS``, ``GSC_SITE_URL``,
``GSC_ALLOWED_SITES``). Properties are checked with the server's own rules (``normalise_property``),
so what is saved here is what the server accepts; mistakes are shown beside the field, never saved.
The accounts Claude may use stay in the app (it answers the server for them), so they take effect
at once, without restarting Claude Desktop. So does the record of changes: how long it is kept (saved
with the rest) and Clear the record (at once, after a question that says what it does); the removals
themselves are `keeping`'s, on the core's worker.

The default property is picked from the properties the accounts listed at the last check (typing one
still works), and one none of the accounts Claude may use could see is flagged with what to do. Close,
Escape and the window's X ask before unsaved changes are lost; a message that appears is scrolled
into view, and the outcome of Save stands outside what scrolls, so none is cut off on a small screen.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from searchdesk_server.approval.question import action_name
from searchdesk_server.catalogue import GROUPS, TOOLS
from searchdesk_server.properties import PropertyError, covers, normalise_property

from . import claude_config as cc
from . import keeping, update_check
from .core import Core
from .help import HelpButton
from .titles import title
from .widgets import (
    FlowLayout,
    bold,
    breakable,
    demo_banner,
    error_label,
    fit_to_screen,
    plain_label,
    scrolling,
    set_error,
)

#: How each catalogue group is named for a site owner; a group missing here shows its own name.
GROUP_TITLES = {
    "essential": "Essentials (the everyday reading tools)",
    "sites": "Properties",
    "sitemaps": "Sitemaps",
    "analytics": "Search performance",
    "inspection": "URL inspection",
    "indexing": "Indexing requests",
    "verification": "Site verification and owners",
    "reports": "Reports",
    "changes": "What SearchDesk changed (the record)",
}


def group_tools(group: str) -> list[str]:
    return [t.name for t in TOOLS if group in t.groups and not t.diagnostic]


def group_tooltip(group: str) -> str:
    """What a group lets Claude do, in the tools' own titles ("List sitemaps, Delete sitemap (asks you)")."""
    titles = [
        (action_name(t.name) + " (asks you first)" if t.guarded else t.title)
        for t in TOOLS
        if group in t.groups and not t.diagnostic
    ]
    return "Lets Claude: " + ", ".join(titles)


@dataclass
class Parsed:
    """The form's values, or the errors to show beside each field."""

    site_url: str = ""
    allowed_sites: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)


#: What people put between properties where the allowed properties take a comma, named for the error.
WRONG_SEPARATORS = {
    ";": "a semicolon",
    "|": "a vertical bar",
    "\t": "a tab",
    "\n": "a line break",
    "\r": "a line break",
}
_PROPERTY_START = re.compile(r"^(https?://|sc-domain:|[^\s/:]+\.[^\s/:]+)", re.IGNORECASE)


def wrong_separator(text: str, separators: dict[str, str] = WRONG_SEPARATORS) -> str:
    """What stands between two properties in ``text`` where a comma belongs ("a semicolon"), or ''.

    Only between things that each look like a property, so a URL with a ";" in its path is left to the
    server's rules; spaces count when they part two such things.
    """
    for char, name in separators.items():
        parts = [p for p in text.split(char) if p.strip()]
        if len(parts) > 1 and sum(bool(_PROPERTY_START.match(p.strip())) for p in parts) > 1:
            return name
    words = text.split()
    if len(words) > 1 and sum(bool(_PROPERTY_START.match(w)) for w in words) > 1:
        return "a space"
    return ""


def parse_property(text: str) -> str:
    """'' for an empty field, else the server's spelling of the property (PropertyError if refused)."""
    if wrong_separator(text, {",": "a comma", **WRONG_SEPARATORS}):
        raise PropertyError(
            "the default property is one property, not a list: choose one, and put the others under Allowed properties."
        )
    return normalise_property(text) if text.strip() else ""


def parse_properties(text: str) -> list[str]:
    """A comma list; an error names the entry by its position (the server's message says what is wrong),
    and a wrong separator by its name (the server would only say the entry has spaces in it)."""
    out: list[str] = []
    entries = [e.strip() for e in text.split(",")]
    for number, entry in enumerate(entries, start=1):
        if not entry:
            continue
        separator = wrong_separator(entry)
        if separator:
            raise PropertyError(f"put a comma between properties, not {separator}.")
        try:
            out.append(normalise_property(entry))
        except PropertyError as exc:
            where = f"Entry {number}: " if len([e for e in entries if e]) > 1 else ""
            raise PropertyError(f"{where}{exc}") from None
    return list(dict.fromkeys(out))


def parse_form(site_text: str, allowed_text: str) -> Parsed:
    parsed = Parsed()
    try:
        parsed.site_url = parse_property(site_text)
    except PropertyError as exc:
        parsed.errors["site"] = _sentence(str(exc))
    try:
        parsed.allowed_sites = parse_properties(allowed_text)
    except PropertyError as exc:
        parsed.errors["allowed"] = _sentence(str(exc))
    if (
        "site" not in parsed.errors
        and parsed.site_url
        and parsed.allowed_sites
        and not any(covers(a, parsed.site_url) for a in parsed.allowed_sites)
    ):
        parsed.errors["site"] = (
            "The default property is not among the allowed properties, so Claude would be refused "
            "whenever it used it. Add it to the allowed properties, or choose another."
        )
    return parsed


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def ask_choice(box: QMessageBox) -> QMessageBox.StandardButton:
    """A question with several answers, asked for real: the button chosen (the box is deleted after)."""
    try:
        return QMessageBox.StandardButton(box.exec())
    finally:
        box.deleteLater()


#: A warning that reads the same in a light and a dark theme (the DEMO banner's pair of colours).
WARNING_STYLE = "background:#fff3c4;color:#5c4400;padding:4px;border-radius:3px;"


class ListCompleter(QCompleter):
    """Completes the entry being typed in a comma list (the allowed properties), keeping the others."""

    def splitPath(self, path: str) -> list[str]:
        return [path.rsplit(",", 1)[-1].strip()]

    def pathFromIndex(self, index: QModelIndex | QPersistentModelIndex) -> str:
        chosen = super().pathFromIndex(index)
        widget = self.widget()
        text = widget.text() if isinstance(widget, QLineEdit) else ""
        head = text.rsplit(",", 1)[0].strip() if "," in text else ""
        return f"{head}, {chosen}" if head else chosen


def ask_yes(box: QMessageBox) -> bool:
    """The app's yes/no question, asked for real (the main window's; imported here when asked, as the
    main window imports this module)."""
    from .widgets import exec_yes

    return exec_yes(box)


class RecordNotice(QFrame):
    """The first start after the update, in the main window: SearchDesk now keeps a record of its
    changes, where, for how long, and how to clear it. It stays until the person closes it (OK, or Open
    Settings), and is not shown again after that (the app remembers it in its settings)."""

    open_settings = Signal()
    done = Signal()

    def __init__(self, core: Core) -> None:
        super().__init__()
        self.setObjectName("recordNotice")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        layout.addWidget(bold(plain_label("A record of changes", selectable=False), 1.1))
        folder = cc.display_path(core.record_paths()[0].parent)
        self.text = plain_label(keeping.notice_text(folder, core.settings.kept_for_days))
        layout.addWidget(self.text)
        buttons = FlowLayout(align_right=True)
        self.settings_button = QPushButton("Open Settings")
        self.ok_button = QPushButton("OK")
        for button in (self.settings_button, self.ok_button):
            button.setAutoDefault(False)
            buttons.addWidget(button)
        layout.addLayout(buttons)
        self.settings_button.clicked.connect(self.open_settings)
        self.settings_button.clicked.connect(self._close)
        self.ok_button.clicked.connect(self._close)

    def _close(self) -> None:
        self.hide()
        self.done.emit()


class AccountChoice(QWidget):
    """A check box for an account whose label wraps (an address can be longer than a small screen is
    wide); clicking the label ticks the box, as with an ordinary check box."""

    def __init__(self, text: str) -> None:
        super().__init__()
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.box = QCheckBox()
        self.box.setAccessibleName(text)
        self.label = plain_label(breakable(text), selectable=False)
        row.addWidget(self.box, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.label, 1)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.box.isEnabled():
            self.box.toggle()
        super().mousePressEvent(event)


class SettingsWindow(QDialog):
    """Edits the settings; Save writes them to the app's settings and to Claude Desktop's entry (the
    accounts Claude may use: to the app alone)."""

    def __init__(self, core: Core, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.core = core
        self.setWindowTitle(title(core.demo, "Settings"))
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        content = QWidget()
        layout = QVBoxLayout(content)
        if core.demo:
            layout.addWidget(demo_banner())
        layout.addWidget(bold(plain_label("What Claude can do with SearchDesk", selectable=False), 1.25))
        layout.addWidget(
            plain_label(
                "These settings reach SearchDesk through Claude Desktop. After saving, quit "
                "Claude Desktop fully and open it again.",
                selectable=False,
            )
        )

        self.read_only = QCheckBox("Read-only: Claude can read your data but cannot change anything")
        layout.addWidget(self.read_only)

        tools_box = QGroupBox("Tools Claude is offered")
        tools = QVBoxLayout(tools_box)
        self.all_tools = QCheckBox("Every tool")
        tools.addWidget(self.all_tools)
        groups = FlowLayout()
        groups.setContentsMargins(18, 0, 0, 0)
        self.group_boxes: dict[str, QCheckBox] = {}
        for group in GROUPS:
            box = QCheckBox(f"{GROUP_TITLES.get(group, group)} ({len(group_tools(group))})")
            box.setObjectName(f"group_{group}")
            box.setToolTip(group_tooltip(group))
            groups.addWidget(box)
            self.group_boxes[group] = box
        tools.addLayout(groups)
        self.groups_error = self._error_label()
        tools.addWidget(self.groups_error)
        layout.addWidget(tools_box)

        self.accounts_box = QGroupBox("Google accounts Claude may use")
        self.accounts_box.setObjectName("claudeAccounts")
        accounts = QVBoxLayout(self.accounts_box)
        accounts.addWidget(
            plain_label(
                "Claude reads and changes Search Console only through the accounts ticked here; it is not told "
                "about the others. This takes effect at once: no need to restart Claude Desktop.",
                selectable=False,
            )
        )
        self.account_column = QVBoxLayout()
        accounts.addLayout(self.account_column)
        self.account_boxes: dict[str, QCheckBox] = {}
        self.accounts_error = self._error_label()
        accounts.addWidget(self.accounts_error)
        layout.addWidget(self.accounts_box)

        props_box = QGroupBox("Properties")
        form = QFormLayout(props_box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        form.addRow(
            plain_label(
                "Properties are written as Search Console lists them: https://www.example.com/ for one "
                "address and the pages under it, sc-domain:example.com for a whole domain (every address on it).",
                selectable=False,
            )
        )
        # The default is picked from the accounts' own properties (the last check's list), or typed.
        self.site_choice = QComboBox()
        self.site_choice.setObjectName("defaultProperty")
        self.site_choice.setEditable(True)
        self.site_choice.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.site_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.site_choice.setMinimumContentsLength(16)
        line = self.site_choice.lineEdit()
        assert line is not None  # an editable combo box has one
        #: The default property as typed (the combo box's own line: picking from the list fills it too).
        self.site = line
        self.site.setPlaceholderText("Pick one of your properties, or type one")
        self.site_error = self._error_label()
        #: A default none of the accounts Claude may use could see: said, with what to do (Save still works:
        #: the property may be about to be added in Search Console).
        self.site_warning = plain_label("")
        self.site_warning.setObjectName("warning")
        self.site_warning.setStyleSheet(WARNING_STYLE)
        self.site_warning.setVisible(False)
        self.site_hint = plain_label("", selectable=False)
        form.addRow(
            "Default property:",
            self._stack(self.site_choice, self.site_hint, self.site_error, self.site_warning),
        )
        self.allowed = QLineEdit()
        self.allowed.setPlaceholderText("sc-domain:example.com, https://shop.example.net/")
        self.allowed_completer = ListCompleter([], self.allowed)
        self.allowed_completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.allowed_completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.allowed.setCompleter(self.allowed_completer)
        self.allowed_error = self._error_label()
        allowed_hint = plain_label(
            "Separate them with commas. Claude is refused any other property. Leave empty to allow every "
            "property your Google account can see.",
            selectable=False,
        )
        form.addRow("Allowed properties:", self._stack(self.allowed, allowed_hint, self.allowed_error))
        layout.addWidget(props_box)
        layout.addWidget(self._record_box())
        self.updates_box, self.update_switch = update_check.settings_box()
        # The demo never asks GitHub; a build without the release key has nothing to believe.
        self.updates_box.setVisible(not core.demo and core.updates_offered)
        layout.addWidget(self.updates_box)

        layout.addStretch(1)
        self.page: QScrollArea = scrolling(content)
        outer.addWidget(self.page, 1)
        # What Save did stands outside what scrolls, just above the buttons: always in view.
        self.status = plain_label("")
        self.status_error = error_label()
        said = QVBoxLayout()
        said.setContentsMargins(9, 4, 9, 0)
        said.addWidget(self.status)
        said.addWidget(self.status_error)
        outer.addLayout(said)
        buttons = FlowLayout(align_right=True)
        buttons.setContentsMargins(9, 0, 9, 9)
        self.save_button = QPushButton("Save")
        self.save_button.setDefault(True)
        self.close_button = QPushButton("Close")
        self.close_button.setAutoDefault(False)
        #: What each setting does and what its messages mean: the settings' help page.
        self.help_button = HelpButton("settings")
        buttons.addWidget(self.help_button)
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.close_button)
        outer.addLayout(buttons)
        fit_to_screen(self, 640, 720)

        self.all_tools.toggled.connect(self._all_tools_toggled)
        for box in self.group_boxes.values():
            box.toggled.connect(self.validate)
        self.site.textChanged.connect(self.validate)
        self.allowed.textChanged.connect(self.validate)
        self.save_button.clicked.connect(self.save)
        self.close_button.clicked.connect(self.close)
        core.accounts.changed.connect(self._show_accounts)
        core.check_done.connect(self._check_done)
        self.clear_button.clicked.connect(self.clear_record)
        #: Asks the person a yes/no question (tests answer for them).
        self.ask: Callable[[QMessageBox], bool] = ask_yes
        #: Asks a question with several answers (unsaved changes: Save, Discard, Keep editing).
        self.choose: Callable[[QMessageBox], QMessageBox.StandardButton] = ask_choice
        self._saved: dict[str, object] = {}
        self.load()

    def _record_box(self) -> QGroupBox:
        """The record of changes: where it is, how long it is kept, and Clear the record."""
        box = QGroupBox("The record of changes")
        box.setObjectName("record")
        column = QVBoxLayout(box)
        where = self.core.record_paths()[0]
        whose = (
            "The demo keeps its own record of the changes it makes"
            if self.core.demo
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
        self.kept_for = QComboBox()
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
        return box

    @staticmethod
    def _error_label() -> QLabel:
        return error_label()

    @staticmethod
    def _stack(*widgets: QWidget) -> QWidget:
        holder = QWidget()
        column = QVBoxLayout(holder)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        for widget in widgets:
            column.addWidget(widget)
        return holder

    # --- state ------------------------------------------------------------------------------
    def load(self) -> None:
        """Show what is saved now (also after Close and reopen: unsaved edits are dropped)."""
        s = self.core.settings
        self.read_only.setChecked(s.read_only)
        chosen = set(s.groups)
        self.all_tools.setChecked(not chosen)
        for group, box in self.group_boxes.items():
            box.setChecked(group in chosen)
        self._all_tools_toggled(not chosen)
        self.site.setText(s.site_url)
        self.allowed.setText(", ".join(s.allowed_sites))
        self.kept_for.setCurrentIndex(max(0, self.kept_for.findData(keeping.kept_for(s.kept_for_days))))
        self.update_switch.setChecked(s.update_check)
        set_error(self.record_error, self.core.record_problem)
        self._offer_properties()
        self._show_accounts()
        self._say(self._where())
        self.validate()
        self._saved = self._form()

    def _offer_properties(self) -> None:
        """The accounts' own properties, from the last check that listed them, to pick from."""
        seen = self.core.seen_sites
        sites = list(seen.sites) if seen is not None else []
        typed = self.site.text()
        self.site_choice.blockSignals(True)
        self.site_choice.clear()
        self.site_choice.addItems(sites)
        self.site_choice.blockSignals(False)
        self.site.setText(typed)  # filling the list must not change what the field holds
        completer = self.site_choice.completer()
        if completer is not None:  # type a part of a property's name, pick it from what matches
            completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
            completer.setFilterMode(Qt.MatchFlag.MatchContains)
            completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.allowed_completer.model().setStringList(sites)  # type: ignore[attr-defined]
        if sites:
            whose = "the demo's" if self.core.demo else "your"
            hint = f"Used when Claude names no property. Pick one from the list ({whose} properties at the last check)"
        else:
            hint = (
                "Used when Claude names no property. After Check it works (main window, step 3), your "
                "properties are in this list to pick from"
            )
        self.site_hint.setText(hint + ", or leave it empty for none.")

    def _check_done(self, _result: object) -> None:
        """A check just listed the accounts' properties: offer them, and look at the default again."""
        self._offer_properties()
        self.validate()

    def _form(self) -> dict[str, object]:
        """What the form holds now, to tell unsaved changes from what was loaded or saved."""
        return {
            "read_only": self.read_only.isChecked(),
            "groups": (self.all_tools.isChecked(), tuple(self.chosen_groups())),
            "site": self.site.text().strip(),
            "allowed": self.allowed.text().strip(),
            "kept_for": self.chosen_kept_for(),
            "updates": self.update_switch.isChecked(),
            "accounts": tuple(sorted(self.claude_accounts().items())),
        }

    def has_unsaved_changes(self) -> bool:
        return bool(self._saved) and self._form() != self._saved

    def unsaved_box(self) -> QMessageBox:
        """Before closing with changes not saved: Save (the default), Discard, or Keep editing (Escape)."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            title(self.core.demo, "save your changes?"),
            "You changed the settings but have not saved them. Save them now? If you discard them, "
            "the settings stay as they were.",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.button(QMessageBox.StandardButton.Save).setText("Save")
        box.button(QMessageBox.StandardButton.Discard).setText("Discard changes")
        box.button(QMessageBox.StandardButton.Cancel).setText("Keep editing")
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        box.setEscapeButton(QMessageBox.StandardButton.Cancel)
        return box

    def reject(self) -> None:
        """Close, Escape and the window's X all end here (QDialog's close event calls it): with unsaved
        changes, ask first; Keep editing, or a Save that found mistakes, leaves the window open."""
        if self.has_unsaved_changes():
            answer = self.choose(self.unsaved_box())
            if answer == QMessageBox.StandardButton.Save:
                if not self.save() or self.status_error.isVisible():
                    return  # the mistakes, or what went wrong, are in view beside the fields
            elif answer == QMessageBox.StandardButton.Discard:
                self.load()
            else:
                return
        super().reject()

    def _show_accounts(self) -> None:
        """One box per account, ticked when Claude may use it; shown with two or more accounts (or when
        one is withheld), so a person with one account never has to think about it."""
        rows = self.core.accounts.rows
        self.accounts_box.setVisible(len(rows) > 1 or any(not r.for_claude for r in rows))
        while self.account_column.count():
            item = self.account_column.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()
                widget.deleteLater()
        self.account_boxes = {}
        for row in rows:
            choice = AccountChoice(row.email + (" (the default account)" if row.default else ""))
            choice.box.setChecked(row.for_claude)
            choice.setToolTip(row.kind_words)
            choice.box.toggled.connect(self.validate)
            self.account_column.addWidget(choice)
            self.account_boxes[row.email] = choice.box
        self.validate()
        if self._saved:  # the accounts changed elsewhere: the boxes show what is saved now
            self._saved["accounts"] = self._form()["accounts"]

    def claude_accounts(self) -> dict[str, bool]:
        """Each account's e-mail address, and whether it is ticked."""
        return {email: box.isChecked() for email, box in self.account_boxes.items()}

    def chosen_groups(self) -> list[str]:
        if self.all_tools.isChecked():
            return []
        return [g for g, box in self.group_boxes.items() if box.isChecked()]

    def _all_tools_toggled(self, every: bool) -> None:
        for box in self.group_boxes.values():
            box.setEnabled(not every)
        self.validate()

    def validate(self) -> Parsed:
        """Check every field now and show each problem beside its field; Save is off while any remain."""
        parsed = parse_form(self.site.text(), self.allowed.text())
        if not self.all_tools.isChecked() and not self.chosen_groups():
            parsed.errors["groups"] = "Choose at least one group, or offer every tool."
        if self.account_boxes and not any(self.claude_accounts().values()):
            parsed.errors["accounts"] = (
                "Tick at least one account: with none, Claude could not read any of your Search Console data."
            )
        appeared: list[QLabel] = []
        for key, label in (
            ("groups", self.groups_error),
            ("site", self.site_error),
            ("allowed", self.allowed_error),
            ("accounts", self.accounts_error),
        ):
            text = parsed.errors.get(key, "")
            if text and text != label.text():
                appeared.append(label)
            set_error(label, text)
        warning = self._unseen_warning(parsed)
        if warning and warning != self.site_warning.text():
            appeared.append(self.site_warning)
        set_error(self.site_warning, warning)
        if appeared:
            self._bring_into_view(appeared[0])
        self.save_button.setEnabled(not parsed.errors)
        return parsed

    def _unseen_warning(self, parsed: Parsed) -> str:
        """The default property, when none of the accounts ticked here could see it at the last check."""
        seen = self.core.seen_sites
        ticked = [email for email, on in self.claude_accounts().items() if on]
        if "site" in parsed.errors or not parsed.site_url or seen is None or not seen.unseen(parsed.site_url, ticked):
            return ""
        from searchdesk_server.selfcheck import shown

        prop = shown(parsed.site_url)
        if self.core.demo:
            return (
                f"The demo's made-up data does not include {prop}, so Claude could not use it as the "
                "default. Pick one of the demo's properties from the list."
            )
        one = len(ticked) <= 1
        who = "Your Google account could not see" if one else "None of the Google accounts ticked above could see"
        return (
            f"{who} {prop} in Search Console at the last check, so Claude could not use it as the default. "
            "Pick one of your properties from the list; or, if this is your site, add it in Search Console "
            f"with {'that account' if one else 'one of them'}, then run Check it works again (main window, step 3)."
        )

    def _bring_into_view(self, label: QLabel) -> None:
        """Scroll a message that just appeared into view, once the layout has made room for it."""
        if self.isVisible():
            QTimer.singleShot(
                0, self, lambda: self.page.ensureWidgetVisible(label, 0, 12) if label.isVisible() else None
            )

    def errors(self) -> dict[str, str]:
        return self.validate().errors

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
            self,
        )
        box.button(QMessageBox.StandardButton.Yes).setText("Clear the record")
        box.button(QMessageBox.StandardButton.No).setText("Cancel")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box

    def clear_record(self) -> None:
        """Ask, then clear on the core's worker (a server holding the journal can make it wait)."""
        if not self.ask(self.confirm_clear_box()):
            return
        self.clear_button.setEnabled(False)
        self._record_said("Clearing the record…")
        self.core.clear_record(self._cleared)

    def _cleared(self, problem: str) -> None:
        self.clear_button.setEnabled(True)
        if problem:
            self._record_said("")
        else:
            self._record_said("Cleared. One line stays in the record, saying when you cleared it.")
        set_error(self.record_error, problem)
        self._bring_into_view(self.record_error if problem else self.record_status)

    def _record_said(self, text: str) -> None:
        self.record_status.setText(text)
        self.record_status.setVisible(bool(text))

    def save(self) -> bool:
        parsed = self.validate()
        if parsed.errors:
            return False
        for email, allowed in self.claude_accounts().items():
            row = self.core.accounts.find(email)
            if row is not None and row.for_claude != allowed:
                self.core.set_claude_may_use(email, allowed)
        if self.chosen_kept_for() != keeping.kept_for(self.core.settings.kept_for_days):
            self.core.set_kept_for(self.chosen_kept_for())
        if self.update_switch.isChecked() != self.core.settings.update_check and not self.core.demo:
            self.core.settings.update_check = self.update_switch.isChecked()
            self.core.settings.update_check_asked = True  # answered here: the main window asks no more
            self.core.settings.save(self.core.settings_path)
            self.core.changed.emit()  # the app's notice and its daily check follow
        try:
            change = self.core.apply_settings(
                read_only=self.read_only.isChecked(),
                groups=self.chosen_groups(),
                site_url=parsed.site_url,
                allowed_sites=parsed.allowed_sites,
            )
        except cc.ClaudeConfigError as exc:
            self._say(f"Saved in SearchDesk, but Claude Desktop's settings were not changed: {exc}", error=True)
            self._saved = self._form()
            return True
        # Show the server's spelling of what was saved (https://example.com -> https://example.com/).
        self.site.setText(parsed.site_url)
        self.allowed.setText(", ".join(parsed.allowed_sites))
        lines = ["Saved. " + self._where(updated=change.changed)]
        if self.core.missing_scopes():
            lines.append(
                "The tools you chose need permissions your Google sign-in did not grant: sign in again "
                "(step 1) so Google asks you for them."
            )
        self._say("\n".join(lines))
        self._saved = self._form()
        return True

    def _where(self, *, updated: bool = False) -> str:
        status = self.core.claude_status()
        if status.check.state is cc.EntryState.OTHER_MODE:
            mode = "the demo's" if status.check.demo else "for your real account"
            return (
                f"SearchDesk's entry in Claude Desktop is {mode}, so these settings stay here; they go in when "
                "you switch Claude Desktop to this SearchDesk (main window, step 2)."
            )
        if status.check.state is not cc.EntryState.ABSENT:
            if updated:
                return "Claude Desktop's settings file was updated: restart Claude Desktop to use them."
            return "They are in Claude Desktop's settings file; restart Claude Desktop after a change."
        if status.extension is not None:
            return (
                "SearchDesk is a Claude Desktop extension here: set the same choices in Claude Desktop too "
                "(Settings, Extensions, SearchDesk)."
            )
        return "SearchDesk is not in Claude Desktop yet; these settings go in when you add it."

    def _say(self, text: str, *, error: bool = False) -> None:
        self.status.setText("" if error else text)
        self.status.setVisible(not error)
        set_error(self.status_error, text if error else "")
