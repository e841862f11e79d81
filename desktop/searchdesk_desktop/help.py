"""Help: which page of SearchDesk's docs answers each message and window, the Help button that opens it, and
`open_address`, the one way the app opens anything in the system's browser or file manager.

One table, `TOPICS`, names for each place in the app the docs page and the heading on it that explains
what the person sees there; a test (tests/desktop/words/test_docs_match_app.py) fails when a page is gone or a
heading changed, so a Help button never lands on the top of the wrong page. The address itself comes
from `project.docs_url`, the one web address of the docs (this version's own pages).
"""

from __future__ import annotations

import re

from PySide6.QtCore import QDir, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QTextOption
from PySide6.QtWidgets import QDialog, QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout

from .project import docs_url
from .titles import title
from .widgets import in_front, keep_width, plain_label

HELP = "Help"
"""The label of every Help button and of the tray menu's Help."""

#: Each place in the app → (the docs page, the anchor of its heading; "" for the page's top).
TOPICS: dict[str, tuple[str, str]] = {
    # the tray menu and About
    "help": ("every-day.md", ""),
    "about": ("every-day.md", "about"),
    "settings": ("every-day.md", "choose-what-claude-may-do"),
    "log": ("troubleshooting.md", "nothing-here-helps"),
    # step 1: signing in
    "sign-in": ("troubleshooting-sign-in.md", ""),
    "keyring": ("troubleshooting-sign-in.md", "your-keyring-is-not-available"),
    "damaged": ("troubleshooting-sign-in.md", "your-saved-sign-in-is-damaged"),
    "expired": ("troubleshooting-sign-in.md", "sign-in-expired-sign-in-again"),
    "testing": ("troubleshooting-sign-in.md", "this-sign-in-may-end-7-days-after-it-began"),
    "no-client": (
        "troubleshooting-sign-in.md",
        "this-copy-of-searchdesk-has-no-google-oauth-client-built-in-a-development-build",
    ),
    # step 2: Claude Desktop
    "claude": ("troubleshooting-claude-desktop.md", ""),
    "claude-not-found": (
        "troubleshooting-claude-desktop.md",
        "claude-desktop-was-not-found-on-this-computer-searchdesk-can-add-itself-anyway",
    ),
    "claude-unreadable": ("troubleshooting-claude-desktop.md", "claude-desktops-settings-file-cannot-be-read"),
    "claude-twice": ("troubleshooting-claude-desktop.md", "searchdesk-is-in-claude-desktop-twice"),
    "claude-repair": ("troubleshooting-claude-desktop.md", "needs-repair-"),
    "claude-demo": ("troubleshooting-claude-desktop.md", "claude-desktop-uses-the-demo-not-your-account"),
    "claude-credentials": ("troubleshooting-claude-desktop.md", "claude-desktops-entry-uses-other-google-credentials"),
    "claude-extension": (
        "troubleshooting-claude-desktop.md",
        "the-searchdesk-extension-in-claude-desktop-is-another-version",
    ),
    # a development build's extension file only (a release carries none): the page's top
    "claude-opened": ("troubleshooting-claude-desktop.md", ""),
    "claude-linux": ("setup-linux.md", "step-2-add-to-claude-desktop"),
    # step 3: the check (one topic per kind of failure `check.run.CHECK_WORDS` words)
    "check": ("troubleshooting-check.md", ""),
    "check-could-not-run": ("troubleshooting-check.md", "the-check-could-not-run"),
    "check-not_configured": (
        "troubleshooting-check.md",
        "claude-would-get-no-data-searchdesk-has-no-google-account-to-use-yet",
    ),
    "check-auth": ("troubleshooting-check.md", "google-no-longer-accepts-your-sign-in"),
    "check-missing_scope": (
        "troubleshooting-check.md",
        "your-google-sign-in-did-not-allow-everything-searchdesk-needs",
    ),
    "check-permission": (
        "troubleshooting-check.md",
        "this-google-account-has-no-access-to-that-property-in-search-console",
    ),
    "check-no_properties": ("troubleshooting-check.md", "your-google-account-has-no-search-console-properties-yet"),
    "check-api_not_enabled": (
        "troubleshooting-check.md",
        "the-search-console-api-is-turned-off-in-your-google-cloud-project",
    ),
    "check-quota": ("troubleshooting-check.md", "googles-daily-limit-for-this-is-used-up"),
    "check-network": ("troubleshooting-check.md", "searchdesk-could-not-reach-google"),
    "check-switched_off": (
        "troubleshooting-check.md",
        "listing-your-properties-is-switched-off-in-settings-and-the-check-needs-it",
    ),
    "check-start": ("troubleshooting-check.md", "searchdesk-did-not-start"),
    "check-error": ("troubleshooting-check.md", "searchdesk-got-an-error-instead-of-your-data"),
    # approval questions
    "approvals": ("asking-a-person.md", "when-nobody-can-be-asked"),
}


def help_url(topic: str) -> str:
    """The address of the page (and heading) that explains `topic`; an unknown topic is a bug (KeyError)."""
    page, anchor = TOPICS[topic]
    return docs_url(page, anchor)


def check_topic(kind: str) -> str:
    """The topic of a failed check of this kind (`CheckReport.kind`); the check's page for any other."""
    topic = f"check-{kind}"
    return topic if topic in TOPICS else "check"


def open_help(topic: str, *, demo: bool = False) -> bool:
    """Open the page in the person's browser (the system's handler for web addresses); when none opens
    it, show its address (`open_address`)."""
    return open_address(help_url(topic), demo=demo)


def open_address(address: str | QUrl, *, demo: bool = False) -> bool:
    """Open a web page in the browser, or a folder in the file manager; True when the system took it.

    Every page and folder the app opens goes through here. When the system opens nothing (no browser
    set up, a locked-down desktop, a remote session), the person would otherwise see nothing happen at
    all: the address is shown instead, selectable, with a Copy button, so it can be pasted into a
    browser or another computer's."""
    url = address if isinstance(address, QUrl) else QUrl(address)
    if QDesktopServices.openUrl(url):
        return True
    AddressDialog(url, demo=demo).open_here()
    return False


_SHOWN: set[AddressDialog] = set()
"""The address windows open now (each has no parent to keep it alive)."""


class AddressDialog(QDialog):
    """The address SearchDesk could not open, to read, select and copy whole (it deletes itself on Close).

    The address is in a read-only text box that wraps anywhere: a web address has no spaces to wrap at,
    and one longer than the window would otherwise be cut off at 1024x600; selected, it copies exactly
    (no invisible break marks).

    A window of its own, never a child of the window whose button opened it: a dialog presses the first
    default button among all its children on Enter, and this one's Copy must not answer for that window."""

    #: The address box shows this many lines at most (it scrolls beyond: no address of the app is as long).
    LINES = 3

    def __init__(self, url: QUrl, *, demo: bool = False) -> None:
        super().__init__()
        self.setObjectName("addressDialog")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        local = url.isLocalFile()
        #: What Copy copies and the box shows: a folder as this computer names it, else the web address.
        self.address = QDir.toNativeSeparators(url.toLocalFile()) if local else url.toString()
        self.setWindowTitle(title(demo, "could not open this" if local else "could not open the page"))
        layout = QVBoxLayout(self)
        layout.addWidget(
            plain_label(
                "SearchDesk could not open the folder. It is here on this computer; copy its place and "
                "paste it into your file manager:"
                if local
                else "SearchDesk could not open your web browser. To read the page, copy its address "
                "and paste it into a browser, on this computer or another:",
                selectable=False,
            )
        )
        self.box = QPlainTextEdit(self.address)
        self.box.setObjectName("address")
        self.box.setReadOnly(True)
        self.box.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.box.setTabChangesFocus(True)
        lines = self.box.fontMetrics().lineSpacing() * self.LINES
        self.box.setFixedHeight(lines + 2 * self.box.frameWidth() + 2 * int(self.box.document().documentMargin()))
        layout.addWidget(self.box)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setDefault(True)
        self.copy_button.clicked.connect(self.copy)
        close = QPushButton("Close")
        close.setAutoDefault(False)
        close.clicked.connect(self.close)
        buttons.addWidget(self.copy_button)
        buttons.addWidget(close)
        layout.addLayout(buttons)
        keep_width(self.copy_button, "Copied")  # Close keeps its place when Copy says Copied
        self.resize(560, self.sizeHint().height())
        _SHOWN.add(self)
        self.finished.connect(lambda _result: _SHOWN.discard(self))

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.address)
        self.copy_button.setText("Copied")

    def open_here(self) -> None:
        """Show it in front, the address selected, so Ctrl+C copies it too."""
        in_front(self, activate=True)
        self.box.selectAll()
        self.box.setFocus()


class HelpButton(QPushButton):
    """A "Help" button that opens the page of its topic; the topic can change with what it stands beside."""

    def __init__(self, topic: str = "help") -> None:
        super().__init__(HELP)
        self.setObjectName("help")
        self.setAutoDefault(False)
        self.topic = topic
        self.clicked.connect(lambda _checked=False: open_help(self.topic))

    def set_topic(self, topic: str) -> None:
        """Point the button at another page (`TOPICS` must hold it)."""
        help_url(topic)  # fail here, where the mistake is, not when a person clicks
        self.topic = topic
        self.setToolTip(f"Opens the help page about this in your browser: {help_url(topic)}")


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower-case, punctuation dropped, spaces as hyphens
    (a repeated heading's "-1" suffix aside, which the help pages never need)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")
