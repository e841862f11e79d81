"""Step 1 of the main window, Google: signing in, the accounts (one card each when there are several),
and every action on them (sign in, again, as another account, a key or client file, the demo, sign out,
make default, remove)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QMetaMethod, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox

from ..accounts.keystore import KeystoreError
from ..accounts.model import AccountRow, AccountState
from ..accounts.signin import NoOAuthClient, SignInError
from ..core import Core
from ..titles import title
from .accounts import AccountsList
from .archive import ask_keep_or_delete
from .coverage import ask_keep_or_delete as ask_keep_or_delete_watch
from .parts import ADD_ACCOUNT, BUSY, OK, PROBLEM, ROUTING, TODO, SignInLink, Step, start_folder


class GoogleStep(Step):
    """Step 1: the Google account(s) Claude reads Search Console through."""

    #: "Try the demo": the app restarts itself on the demo (see DesktopApp.restart_in_demo). Unconnected
    #: (a window without the app around it, as for the screenshots), the step explains how instead.
    demo_requested = Signal()

    def __init__(self, core: Core, errors: dict[int, str], ask: Callable[[QMessageBox], bool]) -> None:
        super().__init__(1, "Sign in with Google", "sign-in", core, errors, ask)
        self.signin_link = SignInLink()
        self.extras.addWidget(self.signin_link)
        #: Two or more accounts: one card each (with one, step 1 stays as it always was).
        self.account_list = AccountsList()
        self.account_list.make_default.connect(self.make_default)
        self.account_list.sign_in_again.connect(self.sign_in_again_as)
        self.account_list.remove.connect(self.remove_account)
        self.extras.addWidget(self.account_list)
        core.signin_done.connect(self._signin_done)

    def several(self) -> bool:
        """Two or more accounts: step 1 lists them."""
        return not self.core.demo and len(self.core.accounts.rows) > 1

    def show_current(self) -> None:
        step, core = self, self.core
        account = core.account
        error = self.errors.get(1, "")
        self.signin_link.setVisible(core.signing_in)
        several = self.several() and account.state is not AccountState.KEYRING
        self.account_list.setVisible(several)
        if several:
            self.account_list.show_rows(core.accounts.rows)
        if core.signing_in:
            step.show_state(
                BUSY,
                "Waiting for you in the browser…",
                "SearchDesk opened Google's sign-in page in your browser. Sign in there, allow access, then "
                "come back here.",
            )
            self.signin_link.show_link(core.signin_url, core.signin_seconds_left())
            step.set_buttons([("Cancel", core.cancel_sign_in)])
            return
        if account.state is AccountState.DEMO:
            step.show_state(OK, "Demo: no Google account needed", account.detail)
            step.set_buttons([])
            return
        if several:
            self._show_accounts(core.accounts.rows, error)
            return
        if account.state is AccountState.SIGNED_IN:
            detail = "\n".join(x for x in (account.detail, account.warning) if x)
            due = account.warning_due
            step.show_state(PROBLEM if due else OK, account.short, detail, error, topic="testing" if due else "")
            step.set_buttons([("Sign in again", self.sign_in_again), ("Sign out", self.sign_out)])
            self._add_account_button()
            return
        if account.state is AccountState.EXPIRED:
            step.show_state(PROBLEM, account.short, account.detail, error, topic="expired")
            step.set_buttons([("Sign in again", self.sign_in_again), ("Sign out", self.sign_out)], "Sign in again")
            self._add_account_button()
            return
        if account.state is AccountState.SERVICE_ACCOUNT:
            step.show_state(OK, account.short, account.detail, error)
            step.set_buttons([("Stop using this key", self.sign_out)])
            self._add_account_button()
            return
        if account.state is AccountState.KEYRING and account.damaged:
            step.show_state(PROBLEM, "Your saved sign-in is damaged", account.detail, error, topic="damaged")
            step.set_buttons([("Sign out", self.sign_out)], "Sign out")
            return
        if account.state is AccountState.KEYRING:
            step.show_state(
                PROBLEM,
                "Your keyring is not available",
                account.detail,
                error,
                topic="keyring",
                support=account.details,  # which keyrings were tried, and why not
            )
            step.set_buttons([("Try again", core.refresh_account)])
            return
        try:
            core.oauth_client()
        except NoOAuthClient as exc:
            step.show_state(PROBLEM if error else TODO, account.short, str(exc), error, topic="no-client")
            step.set_buttons(
                [
                    ("Try the demo", self.try_demo),
                    ("Use my own OAuth client file…", self.choose_client_file),
                    ("Use a service-account key file…", self.choose_service_account),
                ],
                primary="Try the demo",
            )
            return
        except SignInError as exc:
            error = error or str(exc)
        step.show_state(PROBLEM if error else TODO, account.short, account.detail, error)
        step.set_buttons([("Sign in with Google", self.sign_in)], primary="Sign in with Google")

    def _show_accounts(self, rows: tuple[AccountRow, ...], error: str) -> None:
        """Step 1 with several accounts: how many, which need the person, the rule Claude follows, a card each."""
        waiting = [r for r in rows if not r.ok or r.warning_due]
        status = f"Signed in with {len(rows)} Google accounts"
        if waiting:
            status += f"; {len(waiting)} {'needs' if len(waiting) == 1 else 'need'} you (below)"
        self.show_state(PROBLEM if waiting or error else OK, status, ROUTING, error)
        self.set_buttons([])
        self._add_account_button()

    def _add_account_button(self) -> None:
        """The menu of ways to add an account: a sign-in (in a build without Google sign-in built in and
        no sign-in yet, with the person's own client file) or a service-account key file."""
        google = ("Sign in with another Google account", self.add_google_account)
        if not any(r.kind == "oauth" for r in self.core.accounts.rows):  # no sign-in's client to use again
            try:
                self.core.oauth_client()
            except NoOAuthClient:
                google = ("Sign in with my own OAuth client file…", self.choose_client_file)
            except SignInError:
                pass  # the sign-in says what is wrong
        self.add_menu_button(ADD_ACCOUNT, [google, ("Add a service-account key file…", self.choose_service_account)])

    # --- actions ----------------------------------------------------------------------------
    def _step1(self, action: Callable[[], object]) -> None:
        self.errors.pop(1, None)
        try:
            action()
        except SignInError as exc:
            self.errors[1] = str(exc)
        self.changed.emit()

    def sign_in(self) -> None:
        self._step1(self.core.sign_in)

    def sign_in_again(self) -> None:
        self._step1(self.core.sign_in_again)

    def sign_in_again_as(self, email: str) -> None:
        self._step1(lambda: self.core.sign_in_again(email))

    def add_google_account(self) -> None:
        """Sign in once more: the account chosen in the browser joins the others (the same OAuth client
        as a sign-in already here, so a person's own client keeps working)."""
        signed_in = next((r.email for r in self.core.accounts.rows if r.kind == "oauth"), None)
        self._step1(lambda: self.core.sign_in_again(signed_in) if signed_in else self.core.sign_in())

    def make_default(self, email: str) -> None:
        self.core.set_default_account(email)

    def remove_account(self, email: str, *, confirm: Callable[[], bool] | None = None) -> None:
        """Asks first, saying what removing does: revoked at Google, gone from the keyring, its properties
        out of Claude's reach."""
        row = self.core.accounts.find(email)
        if row is None:
            return
        if not (confirm or (lambda: self.ask(self.confirm_remove_account_box(row))))():
            return
        self.errors.pop(1, None)
        self.core.remove_account(email)
        ask_keep_or_delete(self.window(), self.core, email, self.ask, removed=True)  # its copied history, if any
        ask_keep_or_delete_watch(self.window(), self.core, email, self.ask, removed=True)  # its watch, if any

    def confirm_remove_account_box(self, row: AccountRow) -> QMessageBox:
        if row.kind == "oauth":
            try:
                place = self.core.keystore.place
            except KeystoreError:
                place = "your system's keyring"
            does = (
                f"SearchDesk signs this account out at Google and deletes its sign-in from {place}. Claude can "
                "then no longer use the properties this account sees, unless another of your accounts sees them too."
            )
            again = "You can add it again at any time by signing in."
        else:
            does = (
                "SearchDesk stops using this service account's key file (the file itself stays where it is). "
                "Claude can then no longer use the properties this account sees, unless another of your accounts "
                "sees them too."
            )
            again = "You can add the key file again at any time."
        others = [r for r in self.core.accounts.rows if r.email != row.email]
        if row.default and others:
            again = f"{others[0].email} becomes the default account. {again}"
        box = QMessageBox(
            QMessageBox.Icon.Question,
            title(self.core.demo, "remove this account?"),
            f"Remove {row.email} from SearchDesk?\n\n{does}\n\n{again}",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self.window(),
        )
        box.setObjectName("confirmRemoveAccount")
        box.button(QMessageBox.StandardButton.Yes).setText("Remove")
        box.button(QMessageBox.StandardButton.No).setText("Keep it")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box

    def sign_in_with_client_file(self, path: Path) -> None:
        self._step1(lambda: self.core.sign_in_with_client_file(path))

    def use_service_account(self, path: Path) -> None:
        self._step1(lambda: self.core.use_service_account(path))

    def choose_client_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self.window(), title(self.core.demo, "choose your OAuth client file"), start_folder(), "JSON files (*.json)"
        )
        if name:
            self.sign_in_with_client_file(Path(name))

    def choose_service_account(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self.window(),
            title(self.core.demo, "choose a service-account key file"),
            start_folder(),
            "JSON files (*.json)",
        )
        if name:
            self.use_service_account(Path(name))

    def try_demo(self) -> None:
        """Restart on the demo; a window without the app around it (screenshots) can only explain."""
        if self.isSignalConnected(QMetaMethod.fromSignal(self.demo_requested)):
            self.demo_requested.emit()
            return
        QMessageBox.information(
            self.window(),
            title(self.core.demo, "try the demo"),
            "Quit SearchDesk and start it again with the demo:\n\n    searchdesk --demo\n\n"
            "The demo answers with made-up data and never touches a Google account.",
        )

    def sign_out(self) -> None:
        default = self.core.store.default
        self.core.sign_out()
        if default is not None:  # its copied history, if any: kept unread, or deleted
            ask_keep_or_delete(self.window(), self.core, default.email, self.ask, removed=True)
            ask_keep_or_delete_watch(self.window(), self.core, default.email, self.ask, removed=True)

    def _signin_done(self, message: str) -> None:
        """The browser's sign-in ended: what went wrong, if anything, under the step."""
        if message:
            self.errors[1] = message
        else:
            self.errors.pop(1, None)
        self.changed.emit()
