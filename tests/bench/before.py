"""Start-up cost of an earlier commit beside this tree's, in the same `make bench` run (`--before REF`).

Why: a restructuring (issue 29 moved most desktop modules) must not make either start-up slower beyond
the measured spread, and only figures taken side by side, round by round, on one machine can say so.
Two start-ups are compared: the server's (spawn → `tools/list`, the cold start of section 1) and the
desktop app's (a fresh interpreter importing the app's start-up modules, up to the point where Qt would
open its first window; no display is needed for imports). The earlier commit is unpacked with
`git archive` into the bench's temporary folder and put first on PYTHONPATH, so its packages shadow
this tree's editable install.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Any

#: What the app imports before its first window: `searchdesk` runs searchdesk_desktop.__main__, which
#: imports the application and its windows.
DESKTOP_IMPORT = "import searchdesk_desktop.__main__, searchdesk_desktop.app"


def unpack(repo: Path, ref: str, folder: Path) -> str:
    """Unpack `ref`'s tree into `folder`; returns its short commit id (what the report names)."""
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", f"{ref}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    tar = subprocess.run(["git", "-C", str(repo), "archive", commit], check=True, capture_output=True).stdout
    folder.mkdir(parents=True)
    with tarfile.open(fileobj=BytesIO(tar)) as archive:
        archive.extractall(folder, filter="data")
    return commit


def pythonpath(tree: Path) -> str:
    """The earlier tree's two packages, ahead of this tree's editable install."""
    return f"{tree / 'server'}:{tree / 'desktop'}"


@dataclass
class DesktopImport:
    """Wall and CPU seconds of a fresh interpreter importing the app's start-up modules, per round."""

    name: str
    env: dict[str, str]
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    error: str = ""

    def measure(self, *, keep: bool = True) -> None:
        """One start-up; `keep=False` is the warm-up that writes the tree's bytecode caches first (a
        tree unpacked by `git archive` has none, and compiling is not start-up cost)."""
        if self.error:
            return
        code = (
            "import os, time; t = time.perf_counter(); "
            f"{DESKTOP_IMPORT}; "
            "w = time.perf_counter() - t; c = sum(os.times()[:2]); print(w, c)"
        )
        done = subprocess.run([sys.executable, "-c", code], env=self.env, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            self.error = (done.stderr.strip().splitlines() or ["failed"])[-1][:300]
            return
        wall, cpu = (float(x) for x in done.stdout.split())
        if not keep:
            return
        self.wall.append(wall)
        self.cpu.append(cpu)


def paired(now: list[float], before: list[float]) -> dict[str, float]:
    """now / before per round (median, min, max): a load that drifts over the run cancels out."""
    ratios = sorted(n / b for n, b in zip(now, before, strict=False) if b > 0)
    if not ratios:
        return {"median": float("nan"), "min": float("nan"), "max": float("nan"), "n": 0}
    return {"median": statistics.median(ratios), "min": ratios[0], "max": ratios[-1], "n": len(ratios)}


def markdown(result: dict[str, Any]) -> list[str]:
    """The section of docs/performance.md (absent when the run had no `--before`)."""
    if not result:
        return []
    rows = []
    for what, pair in result["pairs"].items():
        now, before, ratio = pair["now"], pair["before"], pair["ratio"]
        rows.append(
            f"| {what} | {before['median']:.3f} ({before['min']:.3f}–{before['max']:.3f}) | "
            f"{now['median']:.3f} ({now['min']:.3f}–{now['max']:.3f}) | "
            f"{ratio['median']:.2f} ({ratio['min']:.2f}–{ratio['max']:.2f}) |"
        )
    return [
        f"## Start-up before and after (`--before {result['ref']}`, commit {result['commit']})",
        "",
        f"The earlier commit's tree and this one, started alternately in each of the {result['rounds']} rounds "
        "(the earlier one unpacked with `git archive` and put first on PYTHONPATH). The server: spawn → "
        "`tools/list`, as in section 1. The app: a fresh interpreter importing "
        f"`{DESKTOP_IMPORT.removeprefix('import ')}` (what `searchdesk` loads before its first window). "
        "Median (min–max), seconds; the ratio is paired by round.",
        "",
        "| Start-up | before | now | now / before, per round |",
        "|---|---|---|---|",
        *rows,
        "",
        *(f"- {e}" for e in result.get("errors", [])),
        "",
    ]
