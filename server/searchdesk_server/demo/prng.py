"""Reproducible pseudo-randomness for the demo data.

Every number in the demo comes from SHAKE-256 of a key (the family, the search type, the day offset …),
never from `random`'s global state or the clock, so two processes on two machines with the same "today"
build byte-identical answers, and tests can pin values.
"""

from __future__ import annotations

import bisect
import hashlib
import struct
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_SCALE = 1.0 / 4294967296.0
_BLOCK = 512


def _seed(key: Sequence[object]) -> bytes:
    return "\x1f".join(str(part) for part in key).encode("utf-8")


def unit(*key: object) -> float:
    """One uniform number in [0, 1) for a key: for values that are looked up, not streamed."""
    digest = hashlib.blake2b(_seed(key), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 18446744073709551616.0


def token(*key: object, length: int = 22) -> str:
    """A stable, URL-safe token for a key (verification tokens, result ids)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    digest = hashlib.shake_256(_seed(key)).digest(length)
    return "".join(alphabet[b & 63] for b in digest)


def hexdigest(*key: object, length: int = 16) -> str:
    """A stable lowercase hex string of `length` characters for a key."""
    return hashlib.shake_256(_seed(key)).hexdigest((length + 1) // 2)[:length]


class Stream:
    """A stream of uniform numbers for one key, drawn in blocks from SHAKE-256."""

    __slots__ = ("_block", "_pos", "_seed", "_values")

    def __init__(self, *key: object) -> None:
        self._seed = _seed(key)
        self._values: tuple[int, ...] = ()
        self._pos = 0
        self._block = 0

    def random(self) -> float:
        """The next number in [0, 1)."""
        if self._pos >= len(self._values):
            data = hashlib.shake_256(self._seed + b"\x1e" + str(self._block).encode()).digest(4 * _BLOCK)
            self._values = struct.unpack(f"<{_BLOCK}I", data)
            self._block += 1
            self._pos = 0
        value = self._values[self._pos]
        self._pos += 1
        return value * _SCALE

    def below(self, n: int) -> int:
        """An integer in [0, n)."""
        return min(int(self.random() * n), n - 1)

    def pick(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def weighted(self, cumulative: Sequence[float]) -> int:
        """An index drawn with the weights whose running totals are `cumulative`."""
        target = self.random() * cumulative[-1]
        return min(bisect.bisect_right(cumulative, target), len(cumulative) - 1)


def cumulative(weights: Sequence[float]) -> list[float]:
    """Running totals, for `Stream.weighted`."""
    total = 0.0
    out: list[float] = []
    for weight in weights:
        total += weight
        out.append(total)
    return out
