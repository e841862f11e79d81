"""The two-call token: proof that the same call was made twice, used when nobody can be asked.

A token is random (128 bits and more), single use, lives 5 minutes, is bound to one fingerprint,
and is compared in constant time; at most 100 are pending (the oldest is dropped first).
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable

TTL_SECONDS = 300.0
MAX_PENDING = 100


class TokenBook:
    def __init__(self, ttl: float = TTL_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._pending: OrderedDict[str, tuple[str, float]] = OrderedDict()  # token -> (fingerprint, expiry)

    def _prune(self) -> None:
        now = self._clock()
        for token in [t for t, (_, exp) in self._pending.items() if exp <= now]:
            del self._pending[token]
        while len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)

    def issue(self, fingerprint: str) -> str:
        token = "sdk_" + secrets.token_urlsafe(24)  # 192 bits
        self._pending[token] = (fingerprint, self._clock() + self._ttl)
        self._prune()
        return token

    def redeem(self, fingerprint: str, token: str) -> bool:
        """True once for the right token and fingerprint; every token tried is spent either way."""
        self._prune()
        match = None
        for candidate in self._pending:
            if hmac.compare_digest(candidate.encode(), token.encode()):
                match = candidate
        if match is None:
            return False
        bound, _ = self._pending.pop(match)
        return hmac.compare_digest(bound, fingerprint)
