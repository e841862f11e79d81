"""Where ``searchdesk --check`` shows its verdict when there may be no console.

The Windows build of ``searchdesk`` is a windowed program: it has no stdout (``sys.stdout is None``,
as under pythonw), so ``print`` would show nothing. Run from a terminal, we attach to the parent's
console (``AttachConsole(ATTACH_PARENT_PROCESS)``) and write there; started any other way (a
shortcut, Explorer), there is no console to attach to, and the verdict appears in a message box.

Note for Windows terminals: cmd.exe does not wait for a windowed program, so its prompt may come back
before the verdict is printed; ``start /wait searchdesk --check`` waits, and sets ``%ERRORLEVEL%``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Literal, TextIO

#: AttachConsole's "the parent's console" (DWORD)-1.
ATTACH_PARENT_PROCESS = 0xFFFFFFFF

Route = Literal["stdout", "console", "box"]


def attach_parent_console(
    *, platform: str | None = None, kernel32: Any = None, opener: Callable[..., TextIO] = open
) -> TextIO | None:
    """Windows: attach to the console of the program that started us, and return a stream on it."""
    if (platform or sys.platform) != "win32":
        return None
    if kernel32 is None:
        import ctypes
        from ctypes import wintypes

        kernel32 = getattr(ctypes, "WinDLL")("kernel32", use_last_error=True)  # noqa: B009 (Windows only)
        kernel32.AttachConsole.argtypes = [wintypes.DWORD]
        kernel32.AttachConsole.restype = wintypes.BOOL
    if not kernel32.AttachConsole(ATTACH_PARENT_PROCESS):
        return None  # started without a console (Explorer, a shortcut): no parent console to use
    try:
        return opener("CONOUT$", "w", encoding="utf-8", errors="replace")
    except OSError:
        return None


def output_stream(attach: Callable[[], TextIO | None] | None = None) -> tuple[Route, TextIO | None]:
    """Decide once, before any Qt application exists: a message box needs a QApplication."""
    if sys.stdout is not None:
        return "stdout", sys.stdout
    stream = (attach or attach_parent_console)()
    return ("console", stream) if stream is not None else ("box", None)


def verdict_box(text: str, ok: bool, *, demo: bool = False) -> Any:
    """The verdict as a message box (needs a QApplication); the caller shows it with ``exec()``."""
    from PySide6.QtWidgets import QMessageBox

    from ..titles import title

    box = QMessageBox(
        QMessageBox.Icon.Information if ok else QMessageBox.Icon.Warning,
        title(demo, "check it works"),
        "SearchDesk works." if ok else "SearchDesk found a problem.",
        QMessageBox.StandardButton.Ok,
    )
    lines = [line for line in text.splitlines() if line.strip()]
    box.setInformativeText(lines[-1] if lines else text)  # the verdict: PASS/FAIL and the one sentence
    if len(lines) > 1:
        box.setDetailedText(text)  # everything the check printed, behind "Show Details..."
    return box


def deliver(text: str, ok: bool, route: Route, stream: TextIO | None, *, demo: bool = False) -> None:
    """Show the verdict where the person will see it."""
    if route in ("stdout", "console") and stream is not None:
        print(text, file=stream, flush=True)
        return
    box = verdict_box(text, ok, demo=demo)
    try:
        box.exec()
    finally:
        box.deleteLater()
