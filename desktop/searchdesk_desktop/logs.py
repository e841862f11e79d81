"""A rotating log file in the user's log folder. Never tokens, questions or answers.

The app logs events ("sign-in finished", "approval asked: tool=delete_site fingerprint=ab12…"), never
values. As a second line of defence a filter masks anything shaped like a Google token.
"""

from __future__ import annotations

import logging
import logging.handlers
import re
from pathlib import Path

_TOKENISH = re.compile(r"(ya29\.[\w.-]+|1//[\w.-]+|GOCSPX-[\w-]+|-----BEGIN [A-Z ]*PRIVATE KEY-----)")


def log_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_log_dir("searchdesk", appauthor=False))


class Redact(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if _TOKENISH.search(message):
            record.msg = _TOKENISH.sub("[redacted]", message)
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
