"""SearchDesk desktop app (tray, sign-in, approvals)."""

from . import _immortal  # noqa: F401  (must run before any Qt call; see the module)

__version__ = "0.1.0"
