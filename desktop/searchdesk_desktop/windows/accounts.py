"""The Google accounts as the main window's first step lists them, once there are two or more.

One card per account says what a site owner needs to know about it (its address, whether it is a
sign-in or a key file, how many properties it sees, whether it still works, whether it is the
default) and offers what they can do with it (make it the default, sign in again, remove it). The
cards only show and ask; the main window acts (through the Core) on their signals.

With one account the first step stays as it always was and none of this is shown: a person with one
account never has to read about accounts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from ..accounts.model import AccountRow, AccountState
from ..claude.config_file import display_path
from ..help import HelpButton
from ..widgets import FlowLayout, bold, breakable, error_label, panel, plain_label, plural

MAKE_DEFAULT, SIGN_IN_AGAIN, REMOVE = "Make default", "Sign in again", "Remove"


def facts(row: AccountRow) -> str:
    """One line: the kind, the default, the properties it sees, and whether Claude may use it."""
    parts = [row.kind_words]
    if row.default:
        parts.append("the default account")
    if not row.for_claude:
        parts.append("Claude may not use it (see Settings)")
    elif row.properties is not None:
        parts.append(f"sees {plural(row.properties, 'property', 'properties')}")
    else:
        parts.append("properties not counted yet: “Check it works” counts them")
    return " · ".join(parts)


def health(row: AccountRow) -> tuple[str, bool]:
    """Whether the account works, in a sentence; True when the person has something to do."""
    if row.state is AccountState.SIGNED_IN:
        return (row.warning, row.warning_due) if row.warning else ("Signed in.", False)
    if row.state is AccountState.SERVICE_ACCOUNT:
        return f"Its key file: {display_path(Path(row.key_file))}", False
    return row.detail, not row.ok


#: The help page for an account that needs the person (any other problem: the sign-in page).
HEALTH_TOPICS = {AccountState.EXPIRED: "expired", AccountState.KEYRING: "keyring"}


class AccountCard(QFrame):
    """One account: its address, the facts line, its health, and its buttons."""

    def __init__(self, row: AccountRow, owner: AccountsList) -> None:
        super().__init__()
        self.row = row
        layout = panel(self, "accountCard")
        self.email = bold(plain_label(breakable(row.email), selectable=False))
        self.email.setAccessibleName(row.email)
        self.email.setObjectName("accountEmail")
        self.facts = plain_label(facts(row))
        text, problem = health(row)
        self.health: QLabel = error_label(text) if problem else plain_label(text)
        for widget in (self.email, self.facts, self.health):
            layout.addWidget(widget)
        #: Beside a problem: the page about it (help.TOPICS), as every error in the app has.
        self.help = HelpButton(HEALTH_TOPICS.get(row.state, "sign-in"))
        self.help.setAccessibleName(f"Help: {row.email}")
        self.buttons = FlowLayout(align_right=True)
        if problem:
            self.buttons.addWidget(self.help)
        else:
            self.help.hide()
        self.button_widgets: dict[str, QPushButton] = {}
        actions = []
        if not row.default:
            actions.append((MAKE_DEFAULT, owner.make_default))
        if row.kind == "oauth" and (row.state is AccountState.EXPIRED or row.warning):
            actions.append((SIGN_IN_AGAIN, owner.sign_in_again))
        actions.append((REMOVE, owner.remove))
        for label, signal in actions:
            button = QPushButton(label)
            button.setAutoDefault(False)
            button.setAccessibleName(f"{label}: {row.email}")
            button.clicked.connect(lambda _checked=False, s=signal, e=row.email: s.emit(e))
            self.buttons.addWidget(button)
            self.button_widgets[label] = button
        layout.addLayout(self.buttons)


class AccountsList(QWidget):
    """The cards, rebuilt when the rows change; each signal carries the account's e-mail address."""

    make_default = Signal(str)
    sign_in_again = Signal(str)
    remove = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("accounts")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.cards: list[AccountCard] = []

    def show_rows(self, rows: Sequence[AccountRow]) -> None:
        if [c.row for c in self.cards] == list(rows):
            return
        for card in self.cards:
            card.hide()
            card.deleteLater()
        self.cards = [AccountCard(row, self) for row in rows]
        for card in self.cards:
            self._layout.addWidget(card)

    def card(self, email: str) -> AccountCard | None:
        return next((c for c in self.cards if c.row.email.casefold() == email.casefold()), None)
