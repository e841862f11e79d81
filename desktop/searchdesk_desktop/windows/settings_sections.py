"""The sections of Settings that hold its fields: the tools Claude is offered, the Google accounts Claude
may use, and the properties (the default one and the allowed ones).

Each is a box of its own that builds its fields and says what they hold, as the main window's steps
do; `settings.SettingsWindow` lays them out, checks them together (`validate`) and saves them. The
window keeps each field under its old name (``window.site``, ``window.group_boxes``, …), where tests
and the screenshots reach them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QFormLayout,
    QGroupBox,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from searchdesk_server.tool_spec import GROUPS

from ..accounts.model import AccountRow
from ..widgets import ChoiceBox, FlowLayout, clear_layout, error_label, plain_label
from .settings_form import (
    GROUP_TITLES,
    WARNING_STYLE,
    AccountChoice,
    ListCompleter,
    group_tools,
    group_tooltip,
)


def stacked(*widgets: QWidget) -> QWidget:
    """Widgets one under the other with little room between them: a field with its hint and messages."""
    holder = QWidget()
    column = QVBoxLayout(holder)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(2)
    for widget in widgets:
        column.addWidget(widget)
    return holder


class ToolsBox(QGroupBox):
    """Tools Claude is offered: every tool, or the groups ticked (a group's tooltip names its tools)."""

    def __init__(self) -> None:
        super().__init__("Tools Claude is offered")
        tools = QVBoxLayout(self)
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
        self.groups_error = error_label()
        tools.addWidget(self.groups_error)


class AccountsBox(QGroupBox):
    """The Google accounts Claude may use: one tick box per account (``show_rows``)."""

    def __init__(self) -> None:
        super().__init__("Google accounts Claude may use")
        self.setObjectName("claudeAccounts")
        accounts = QVBoxLayout(self)
        accounts.addWidget(
            plain_label(
                "Claude reads and changes Search Console only through the accounts ticked here; it is not told "
                "about the others. This takes effect at once: no need to restart Claude Desktop.",
                selectable=False,
            )
        )
        self.account_column = QVBoxLayout()
        accounts.addLayout(self.account_column)
        self.accounts_error = error_label()
        accounts.addWidget(self.accounts_error)

    def show_rows(self, rows: Sequence[AccountRow], toggled: Callable[[], object]) -> dict[str, QCheckBox]:
        """One box per account, ticked when Claude may use it (`toggled`: called on every tick); shown
        with two or more accounts (or when one is withheld), so a person with one account never has to
        think about it. Returns each account's box by its e-mail address."""
        self.setVisible(len(rows) > 1 or any(not r.for_claude for r in rows))
        clear_layout(self.account_column)
        boxes: dict[str, QCheckBox] = {}
        for row in rows:
            choice = AccountChoice(row.email + (" (the default account)" if row.default else ""))
            choice.box.setChecked(row.for_claude)
            choice.setToolTip(row.kind_words)
            choice.box.toggled.connect(toggled)
            self.account_column.addWidget(choice)
            boxes[row.email] = choice.box
        return boxes


class PropertiesBox(QGroupBox):
    """Properties: the default one (picked from the accounts' own, or typed) and the allowed ones."""

    def __init__(self) -> None:
        super().__init__("Properties")
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        form.addRow(
            plain_label(
                "Properties are written as Search Console lists them: https://www.example.com/ for one "
                "address and the pages under it, sc-domain:example.com for a whole domain (every address on it).",
                selectable=False,
            )
        )
        self._default_row(form)
        self._allowed_row(form)

    def _default_row(self, form: QFormLayout) -> None:
        """The default property, picked from the accounts' own properties (the last check's list), or typed."""
        self.site_choice = ChoiceBox()
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
        self.site_error = error_label()
        #: A default none of the accounts Claude may use could see: said, with what to do (Save still works:
        #: the property may be about to be added in Search Console).
        self.site_warning = plain_label("")
        self.site_warning.setObjectName("warning")
        self.site_warning.setStyleSheet(WARNING_STYLE)
        self.site_warning.setVisible(False)
        self.site_hint = plain_label("", selectable=False)
        form.addRow(
            "Default property:",
            stacked(self.site_choice, self.site_hint, self.site_error, self.site_warning),
        )

    def _allowed_row(self, form: QFormLayout) -> None:
        """The allowed properties, typed, comma separated (the accounts' own are offered as one types)."""
        self.allowed = QLineEdit()
        self.allowed.setPlaceholderText("sc-domain:example.com, https://shop.example.net/")
        self.allowed_completer = ListCompleter([], self.allowed)
        self.allowed_completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.allowed_completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.allowed.setCompleter(self.allowed_completer)
        self.allowed_error = error_label()
        allowed_hint = plain_label(
            "Separate them with commas. Claude is refused any other property. Leave empty to allow every "
            "property your Google account can see.",
            selectable=False,
        )
        form.addRow("Allowed properties:", stacked(self.allowed, allowed_hint, self.allowed_error))

    def offer(self, sites: list[str], *, demo: bool) -> None:
        """The accounts' own properties, from the last check that listed them, to pick from (what the
        default's field holds stays as it is)."""
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
            whose = "the demo's" if demo else "your"
            hint = f"Used when Claude names no property. Pick one from the list ({whose} properties at the last check)"
        else:
            hint = (
                "Used when Claude names no property. After Check it works (main window, step 3), your "
                "properties are in this list to pick from"
            )
        self.site_hint.setText(hint + ", or leave it empty for none.")
