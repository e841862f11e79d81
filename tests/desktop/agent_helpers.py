"""Run the server's asyncio agent client in a thread while the Qt loop runs in the test's thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from pytestqt.qtbot import QtBot

T = TypeVar("T")


class Background(Generic[T]):
    def __init__(self, make: Callable[[], Awaitable[T]]) -> None:
        self.result: T | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()

        def run() -> None:
            try:
                self.result = asyncio.run(make())  # type: ignore[arg-type]
            except BaseException as exc:
                self.error = exc
            finally:
                self.done.set()

        threading.Thread(target=run, daemon=True).start()

    def wait(self, qtbot: QtBot, timeout: int = 10_000) -> T:
        qtbot.waitUntil(self.done.is_set, timeout=timeout)
        if self.error is not None:
            raise self.error
        return self.result  # type: ignore[return-value]


def in_background(qtbot: QtBot, make: Callable[[], Awaitable[Any]], timeout: int = 10_000) -> Any:
    return Background(make).wait(qtbot, timeout)
