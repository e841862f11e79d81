"""The accounts as the windows show them: one row per Google account, in a Qt list model.

The Core fills it (`set_rows`) on the Qt thread whenever an account is added, removed, made the
default, allowed or withheld for Claude, or its sign-in expires; views follow the model's own
signals (modelReset), and `changed` says the same in one signal for code that is not a view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from PySide6.QtCore import QAbstractListModel, QByteArray, QModelIndex, QPersistentModelIndex, Qt, Signal

from .store import AccountKind


class AccountState(Enum):
    """Where an account stands: what its row and the main window's first step say (the server's
    ``account_routing.Account`` is another thing: an account a server was given)."""

    DEMO = "demo"
    SIGNED_OUT = "signed_out"
    SIGNED_IN = "signed_in"
    SERVICE_ACCOUNT = "service_account"
    EXPIRED = "expired"
    KEYRING = "keyring_problem"


@dataclass(frozen=True)
class AccountRow:
    """One account: what it is, whether it works, and what Claude may do with it. Never a secret."""

    email: str
    kind: AccountKind
    state: AccountState
    default: bool = False
    for_claude: bool = True
    detail: str = ""  # one plain sentence for the UI
    warning: str = ""  # a Testing app's 7-day limit
    warning_due: bool = False  # the limit is near: say it loudly
    key_file: str = ""  # a service account's key file
    quota_project: str = ""  # the Google Cloud project its calls count against ("" unknown)
    properties: int | None = None  # how many properties it saw at the last check (None: not counted yet)

    @property
    def ok(self) -> bool:
        return self.state in (AccountState.SIGNED_IN, AccountState.SERVICE_ACCOUNT)

    @property
    def kind_words(self) -> str:
        return "Google sign-in" if self.kind == "oauth" else "Service-account key file"


#: The role under which each index holds its AccountRow.
ROW_ROLE = int(Qt.ItemDataRole.UserRole) + 1
ModelIndex = QModelIndex | QPersistentModelIndex


class AccountsModel(QAbstractListModel):
    """The account list: DisplayRole is the e-mail address, ToolTipRole the detail, ROW_ROLE the row."""

    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._rows: tuple[AccountRow, ...] = ()

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's own default)
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return row.email
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.detail
        if role == ROW_ROLE:
            return row
        return None

    def roleNames(self) -> dict[int, QByteArray]:
        return {**super().roleNames(), ROW_ROLE: QByteArray(b"account")}

    # --- for the Core and for code that is not a view -------------------------------------------

    @property
    def rows(self) -> tuple[AccountRow, ...]:
        return self._rows

    def find(self, email: str) -> AccountRow | None:
        return next((r for r in self._rows if r.email.casefold() == email.casefold()), None)

    def set_rows(self, rows: Sequence[AccountRow]) -> None:
        rows = tuple(rows)
        if rows == self._rows:
            return
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()
        self.changed.emit()
