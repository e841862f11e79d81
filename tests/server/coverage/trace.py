"""Which files a server subprocess opens: a `sitecustomize` on the child's PYTHONPATH adds an audit
hook (PEP 578) that writes every `open` and `sqlite3.connect` of a path under the watch's folder to a
log, so a test can show a store was never opened — not merely never read."""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

HOOK = """
import os, sys
_log = os.environ.get("SD_TRACE_OPENS")
def _hook(event, args):
    if _log and event in ("open", "sqlite3.connect") and args:
        path = args[0]
        if isinstance(path, (str, bytes, os.PathLike)):
            text = os.fsdecode(path)
            if "coverage" in text and not text.startswith(_log):
                with open(_log, "a", encoding="utf-8") as handle:
                    handle.write(text + "\\n")
sys.addaudithook(_hook)
"""


def traced(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """Environment for a server subprocess whose opens are traced, and the log they go to."""
    folder = tmp_path / "trace-hook"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(HOOK, encoding="utf-8")
    log = tmp_path / "opens.log"
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "SD_TRACE_OPENS": str(log)}, log


def opened(log: Path, path: Path) -> list[str]:
    """The traced opens of `path` (a plain path, or a file: URI naming it, as a read-only SQLite open is)."""
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [line for line in lines if str(path) in urllib.parse.unquote(line)]
