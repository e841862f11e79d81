"""A rotating log file in the user's log folder. Never tokens, questions or answers.

The app logs events ("sign-in finished", "approval asked: tool=delete_site fingerprint=ab12…"), never
values. As a second line of defence a filter masks anything shaped like a credential, by the same
rules the server applies to everything it passes on (`searchdesk_server.text.redaction.redact`).
"""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from searchdesk_server.text.redaction import redact


def log_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_log_dir("searchdesk", appauthor=False))


class Redact(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg = cleaned
            record.args = None
        return True


def setup(level: int = logging.INFO, folder: Path | None = None) -> Path:
    folder = folder or log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "searchdesk.log"
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(Redact())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    return path
