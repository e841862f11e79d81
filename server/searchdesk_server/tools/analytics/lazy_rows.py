"""Result rows built only when the result budget reaches them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, overload


class LazyRows(Sequence[Mapping[str, Any]]):
    """Result rows built only when the budget reaches them: a report may rank 200,000 keys, but a
    100 kB result shows a few hundred, so only those are ever turned into dictionaries."""

    def __init__(self, keys: Sequence[Any], build: Callable[[Any], dict[str, Any]]) -> None:
        self._keys = keys
        self._build = build
        self._made: dict[int, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def _one(self, index: int) -> dict[str, Any]:
        row = self._made.get(index)
        if row is None:
            row = self._made[index] = self._build(self._keys[index])
        return row

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Mapping[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> Mapping[str, Any] | Sequence[Mapping[str, Any]]:
        if isinstance(index, slice):
            return [self._one(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._one(index)
