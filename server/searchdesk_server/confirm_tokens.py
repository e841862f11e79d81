"""The two-call token: proof that the same call was made twice, used when nobody can be asked.

A token is random (128 bits and more), single use, lives `protocol.TOKEN_LIFETIME_S`, is bound to one fingerprint and
the words of the question it was issued with (a question that reads differently now needs a new
one), and is compared in constant time; at most 100 are pending (the oldest is dropped first).
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from enum import Enum

from .agent.protocol import TOKEN_LIFETIME_S

TTL_SECONDS = TOKEN_LIFETIME_S
MAX_PENDING = 100


class Redeemed(Enum):
    OK = "ok"
    UNKNOWN = "unknown"  # invalid, expired, spent, or issued for other arguments
    CHANGED = "changed"  # issued for these arguments, but the question reads differently now


class TokenBook:
    def __init__(self, ttl: float = TTL_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._pending: OrderedDict[str, tuple[str, str, float]] = OrderedDict()  # token -> (fp, digest, expiry)

    def _prune(self) -> None:
        now = self._clock()
        for token in [t for t, (_, _, exp) in self._pending.items() if exp <= now]:
            del self._pending[token]
        while len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)

    def issue(self, fingerprint: str, digest: str) -> str:
        token = "sdk_" + secrets.token_urlsafe(24)  # 192 bits
        self._pending[token] = (fingerprint, digest, self._clock() + self._ttl)
        self._prune()
        return token

    def redeem(self, fingerprint: str, digest: str, token: str) -> Redeemed:
        """Whether the token proves this very question was asked before; every token tried is spent."""
        self._prune()
        match = None
        for candidate in self._pending:
            if hmac.compare_digest(candidate.encode(), token.encode()):
                match = candidate
        if match is None:
            return Redeemed.UNKNOWN
        bound, words, _ = self._pending.pop(match)
        if not hmac.compare_digest(bound, fingerprint):
            return Redeemed.UNKNOWN
        return Redeemed.OK if hmac.compare_digest(words, digest) else Redeemed.CHANGED
