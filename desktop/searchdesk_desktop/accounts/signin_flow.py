"""One Google sign-in at a time, as the main window follows it: the consent page's address, the time
left, Cancel; the wait runs on a worker and its outcome comes back on the Qt thread.

Apart from the Core (which starts it and is told the outcome) so that the facade holds the order of
things and this holds the one sign-in's state: which flow is the present one, so a cancelled or
replaced sign-in's late outcome never clears the one that followed it. No Qt here: ``later`` runs a
callable on the Qt thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor

from .keystore import KeystoreError, SignInRecord
from .signin import SIGN_IN_TIMEOUT, LoopbackSignIn, OAuthClient, SignInError
from .store import AccountStore

log = logging.getLogger(__name__)

#: What the person reads when the sign-in stopped for a reason of ours (a bug, not Google's refusal).
DID_NOT_FINISH = "The sign-in did not finish. Try again."


class SignInFlow:
    """The present sign-in: started with `start`, its outcome handed to ``done(record, message)`` on the
    Qt thread (``record`` None and ``message`` for the person when it failed)."""

    def __init__(
        self,
        store: AccountStore,
        pool: Executor,
        later: Callable[[Callable[[], None]], None],
        done: Callable[[SignInRecord | None, str], None],
        *,
        open_browser: Callable[[str], object],
        auth_uri: str,
    ) -> None:
        self._store = store
        self._pool = pool
        self._later = later
        self._done = done
        self._open_browser = open_browser
        self._auth_uri = auth_uri  # Google's consent page, which only the browser opens (a test serves its own)
        self._flow: LoopbackSignIn | None = None
        #: While signing in: the consent page's address (the person may need to open it themselves)
        #: and when the wait ends (monotonic).
        self.url = ""
        self.deadline = 0.0

    @property
    def running(self) -> bool:
        return self._flow is not None

    def start(self, client: OAuthClient, scopes: tuple[str, ...]) -> str:
        """Open the browser at Google's consent page (an earlier sign-in is cancelled); the address."""
        self.cancel()
        flow = LoopbackSignIn(client, scopes, open_browser=self._open_browser, auth_uri=self._auth_uri)
        self._flow = flow
        self.url = flow.start()
        self.deadline = time.monotonic() + SIGN_IN_TIMEOUT
        log.info("sign-in started")
        self._pool.submit(self._finish, flow)
        return self.url

    def cancel(self) -> None:
        if self._flow is not None:
            self._flow.cancel()

    def seconds_left(self) -> int:
        return max(0, int(self.deadline - time.monotonic()))

    def _finish(self, flow: LoopbackSignIn) -> None:
        """On the worker: wait for Google's answer and keep the sign-in; then report on the Qt thread."""
        record: SignInRecord | None = None
        try:
            record = self._store.save_sign_in(flow.wait())
            message = ""
        except (SignInError, KeystoreError) as exc:
            message = str(exc)
        except Exception:
            log.exception("sign-in failed")
            message = DID_NOT_FINISH

        def done() -> None:
            if self._flow is flow:
                self._flow = None
                self.url = ""
            self._done(record, message)

        self._later(done)
