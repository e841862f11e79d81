"""Help: which page of SearchDesk's docs answers each message and window, and the Help button that opens it.

One table, `TOPICS`, names for each place in the app the docs page and the heading on it that explains
what the person sees there; a test (tests/desktop/words/test_docs_match_app.py) fails when a page is gone or a
heading changed, so a Help button never lands on the top of the wrong page. The address itself comes
from `project.docs_url`, the one web address of the docs (this version's own pages).
"""

from __future__ import annotations

import re

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QPushButton

from .project import docs_url

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
    # step 3: the check (one topic per kind of failure `self_check.CHECK_WORDS` words)
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


def open_help(topic: str) -> None:
    """Open the page in the person's browser (the system's handler for web addresses)."""
    QDesktopServices.openUrl(QUrl(help_url(topic)))


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
