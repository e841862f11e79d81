"""Small widgets shared by the windows."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from .approval_dialog import plain_label


def demo_banner(text: str = "") -> QLabel:
    """The yellow strip every demo window carries: nobody should mistake made-up data for theirs."""
    banner = plain_label(
        text or "DEMO: SearchDesk is running on made-up Search Console data. No Google account is used.",
        selectable=False,
    )
    banner.setObjectName("demoBanner")
    banner.setStyleSheet("background:#fff3c4;color:#5c4400;padding:6px;border-radius:4px;font-weight:bold;")
    return banner
