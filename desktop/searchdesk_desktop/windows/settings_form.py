"""Settings' pieces that are not the window: the tool groups as a site owner reads them, the form's
parsing with the server's own rules, the questions' real askers, the record notice of the main window,
an account's check box, and what Settings says about where its choices go."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QCompleter,
    QFrame,
    QHBoxLayout,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QWidget,
)

from searchdesk_server.approval.question import action_name
from searchdesk_server.catalogue import TOOLS
from searchdesk_server.coverage import words as coverage_words
from searchdesk_server.properties import PropertyError, covers, normalise_property

from ..claude import config_file as cc
from ..core import Core
from ..keeping import record_keeper as keeping
from ..widgets import FlowLayout, bold, breakable, exec_yes, panel, plain_label

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
    "coverage": coverage_words.TITLE,
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
    """The app's yes/no question, asked for real (the main window's)."""
    return exec_yes(box)


class RecordNotice(QFrame):
    """The first start after the update, in the main window: SearchDesk now keeps a record of its
    changes, where, for how long, and how to clear it. It stays until the person closes it (OK, or Open
    Settings), and is not shown again after that (the app remembers it in its settings)."""

    open_settings = Signal()
    done = Signal()

    def __init__(self, core: Core) -> None:
        super().__init__()
        layout = panel(self, "recordNotice")
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


def where_settings_go(core: Core, *, updated: bool = False) -> str:
    """Where Save puts the settings Claude Desktop reads, and what the person does next."""
    status = core.claude_status()
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


def unseen_warning(core: Core, parsed: Parsed, ticked: list[str]) -> str:
    """The default property, when none of the accounts `ticked` in Settings could see it at the last check."""
    seen = core.seen_sites
    if "site" in parsed.errors or not parsed.site_url or seen is None or not seen.unseen(parsed.site_url, ticked):
        return ""
    from searchdesk_server.stdio_check import shown

    prop = shown(parsed.site_url)
    if core.demo:
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
