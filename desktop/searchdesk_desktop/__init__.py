"""SearchDesk desktop app (tray, sign-in, approvals)."""

__version__ = "0.1.0"
