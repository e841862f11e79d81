"""SearchDesk's tests. `REPO` is the repository's root, for a test that reads a file of the project
(its depth below the root is then no test's concern: tests sit in subject folders, docs/contributing.md)."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
