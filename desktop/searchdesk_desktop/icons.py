"""The app and tray icons (SVG copies of assets/, kept in the package so a build carries them)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QGuiApplication, QIcon, QPalette

RESOURCES = Path(__file__).with_name("resources")


def app_icon() -> QIcon:
    return QIcon(str(RESOURCES / "searchdesk.svg"))


def tray_icon() -> QIcon:
    """A dark glyph on light panels, a light one on dark panels."""
    window = QGuiApplication.palette().color(QPalette.ColorRole.Window)
    name = "tray-dark.svg" if window.lightness() < 128 else "tray-light.svg"
    return QIcon(str(RESOURCES / name))
