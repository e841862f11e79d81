"""Sealing the 2026-07-28 `requestState`: integrity-protected, bound to the tool, the fingerprint
and the words of the question shown, for `deadlines.QUESTION_STATE_SECONDS` (three times a question's
lifetime: 15 minutes), with a one-shot nonce. Also `ShownBook`: which
question this server put in front of the app's dialog, so a later yes counts only for those words.

The key lives only in this process, so a state from before a restart does not open. A state
that does not open for any reason counts as no answer; the caller asks again.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable

from .deadlines import QUESTION_STATE_SECONDS

TTL_SECONDS = QUESTION_STATE_SECONDS
PREFIX = "sd1."


class StateBook:
    def __init__(self, ttl: float = TTL_SECONDS, clock: Callable[[], float] = time.time) -> None:
        self._key = secrets.token_bytes(32)
        self._ttl = ttl
        self._clock = clock
        self._spent: dict[str, float] = {}  # nonce -> expiry

    def _mac(self, payload: bytes) -> str:
        return base64.urlsafe_b64encode(hmac.new(self._key, payload, hashlib.sha256).digest()).decode().rstrip("=")

    def seal(self, tool: str, fingerprint: str, digest: str) -> str:
        body = {
            "t": tool,
            "f": fingerprint,
            "q": digest,
            "n": secrets.token_urlsafe(16),
            "e": int(self._clock() + self._ttl),
        }
        payload = json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
        encoded = base64.urlsafe_b64encode(payload).decode().rstrip("=")
        return f"{PREFIX}{encoded}.{self._mac(payload)}"

    def open(self, state: str | None, tool: str, fingerprint: str, digest: str) -> bool:
        """True once for a state this process sealed for exactly this tool, fingerprint and question."""
        if not state or not state.startswith(PREFIX) or len(state) > 1024:
            return False
        try:
            encoded, mac = state[len(PREFIX) :].split(".", 1)
            payload = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
            body = json.loads(payload)
        except (ValueError, TypeError):
            return False
        if not hmac.compare_digest(self._mac(payload), mac) or not isinstance(body, dict):
            return False
        now = self._clock()
        self._spent = {n: e for n, e in self._spent.items() if e > now}
        nonce = body.get("n")
        if (body.get("t"), body.get("f"), body.get("q")) != (tool, fingerprint, digest) or not isinstance(nonce, str):
            return False
        if not isinstance(body.get("e"), int) or body["e"] <= now or nonce in self._spent:
            return False
        self._spent[nonce] = float(body["e"])
        return True


SHOWN_SECONDS = QUESTION_STATE_SECONDS  # longer than the app keeps a question plus its answer


class ShownBook:
    """question key -> the digest of the question this server last sent to the app for it. The key is
    the fingerprint and who asks (`protocol.answer_key` without a digest): one server process may ask
    the same fingerprint for two Google accounts, whose questions read differently.

    The fingerprint stays the same when Google's side changes (owners added between the question and
    the yes): a yes collected later counts only if the question built now reads exactly as the one the
    person answered (an app that binds the words itself, approval/status `digest`, checks this too; an
    older app does not). And a call still waiting for the app learns from it that a later call of this
    server asked the same question with other words, which the app then showed instead.
    """

    def __init__(self, ttl: float = SHOWN_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._shown: dict[str, tuple[str, float]] = {}

    def remember(self, key: str, digest: str) -> None:
        now = self._clock()
        self._shown = {k: v for k, v in self._shown.items() if v[1] > now}
        self._shown[key] = (digest, now + self._ttl)

    def matches(self, key: str, digest: str) -> bool:
        shown = self._shown.get(key)
        return shown is not None and shown[1] > self._clock() and hmac.compare_digest(shown[0], digest)
