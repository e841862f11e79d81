"""Small helpers every packaging script shares: paths, running commands, tools and secrets.

Why a plan-then-run style: each per-OS script must be able to say exactly what it would do
(`--dry-run`, which CI runs on Linux where codesign/signtool do not exist) and must stop at the
first missing tool or variable with a sentence that says what to install or set, before it has
changed anything. Secrets come only from environment variables and are never printed.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from spec_common import APP_NAME, BUNDLE_ID, ROOT, version

__all__ = ["APP_NAME", "BUNDLE_ID", "ROOT", "version"]

DIST = ROOT / "dist"
BUILD = ROOT / "build"
PACKAGING = ROOT / "packaging"
ASSETS = ROOT / "assets"
PYTHON = Path(sys.executable)


class BuildError(Exception):
    """Something the person running the build must fix; the message says what and how."""


def machine() -> str:
    """x86_64 / arm64, spelled the same on every OS (Windows says AMD64, Linux aarch64)."""
    raw = platform.machine().lower()
    return {"amd64": "x86_64", "x64": "x86_64", "aarch64": "arm64"}.get(raw, raw)


def os_name() -> str:
    """The platform name the .mcpb manifest uses: darwin, win32 or linux."""
    if sys.platform == "darwin":
        return "darwin"
    if sys.platform == "win32":
        return "win32"
    return "linux"


def exe(name: str, platform_name: str | None = None) -> str:
    return f"{name}.exe" if (platform_name or os_name()) == "win32" else name


@dataclass
class Runner:
    """Runs (or, in a dry run, prints) commands; records how long each step took."""

    dry_run: bool = False
    secrets: list[str] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        print(text, flush=True)

    def show(self, cmd: Sequence[str | Path]) -> str:
        shown = shlex.join(str(c) for c in cmd)
        for secret in self.secrets:
            if secret:
                shown = shown.replace(secret, "***")
        return shown

    def run(
        self,
        cmd: Sequence[str | Path],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        capture: bool = False,
    ) -> str:
        """Run `cmd` (no shell); raise BuildError naming the command when it fails."""
        self.say(f"+ {self.show(cmd)}")
        if self.dry_run:
            return ""
        merged = None if env is None else {**os.environ, **env}
        try:
            done = subprocess.run(
                [str(c) for c in cmd],
                cwd=cwd,
                env=merged,
                check=False,
                text=True,
                stdout=subprocess.PIPE if capture else None,
            )
        except FileNotFoundError:
            raise BuildError(f"{cmd[0]} was not found; install it or put it on PATH.") from None
        if done.returncode != 0:
            raise BuildError(f"{Path(str(cmd[0])).name} failed with exit status {done.returncode} (command above).")
        return done.stdout or ""

    @contextmanager
    def step(self, title: str) -> Iterator[None]:
        self.say(f"\n== {title}")
        start = time.perf_counter()
        yield
        self.timings.append((title, time.perf_counter() - start))

    def tool(self, name: str, how: str) -> str:
        """The path of a required tool, or stop with `how` (in a dry run: note it and go on)."""
        found = shutil.which(name)
        if found:
            return found
        if self.dry_run:
            self.missing.append(f"{name} (not on PATH here: {how})")
            return name
        raise BuildError(f"{name} is required and was not found on PATH. {how}")

    def env(self, name: str, what: str, *, secret: bool = True, default: str | None = None) -> str:
        """A setting from the environment; a secret is redacted from every command shown."""
        value = os.environ.get(name, "").strip()
        if not value and default is not None:
            return default
        if not value:
            if self.dry_run:
                self.missing.append(f"${name} ({what})")
                return f"${{{name}}}"
            raise BuildError(f"Set {name}: {what}. Nothing secret is stored in the repository.")
        if secret:
            self.secrets.append(value)
        return value

    def summary(self) -> None:
        if self.timings:
            self.say("\nsteps: " + ", ".join(f"{t} {s:.1f} s" for t, s in self.timings))
        if self.dry_run:
            if self.missing:
                self.say("\ndry run: a real run here would stop at the first of these:")
                for m in dict.fromkeys(self.missing):
                    self.say(f"  - {m}")
            self.say("dry run: nothing was changed.")


def main_wrapper(name: str, body: Callable[[], int | None]) -> int:
    """Run `body()` and turn a BuildError into one clear line and exit status 2."""
    try:
        result = body()
    except BuildError as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 2
    return int(result or 0)


def sha256(path: Path) -> str:
    """A file's SHA-256, read a megabyte at a time (release files are hundreds of megabytes)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def dir_size(path: Path) -> int:
    """Bytes of regular files under `path` (symlinks not followed, as du -b --apparent-size would)."""
    total = 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_size
    return total


def mib(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB"


def require_dir(path: Path, hint: str, *, dry_run: bool = False) -> None:
    if not path.is_dir() and not dry_run:
        raise BuildError(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} does not exist; {hint}")
