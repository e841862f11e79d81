"""Other Search Console MCP servers, installed at bench time from their registries into a throwaway
folder outside the repository, started with a dummy credential, and removed afterwards.

Nothing of theirs is vendored or committed. A peer that fails to install or start is reported with
the reason; it is never dropped from the table.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

INSTALL_TIMEOUT = 600.0


@dataclass
class Peer:
    name: str  # as the report shows it
    registry: str  # "PyPI" / "npm"
    package: str
    command: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    version: str = ""
    sdk: str = ""  # the MCP SDK it runs on, as installed
    error: str = ""  # why it could not be installed (empty: installed)


def _run(
    cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)


def _failure(what: str, proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln.strip() for ln in (proc.stderr or proc.stdout or "").splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith("WARNING: Location")]  # a local mirror's noise
    return f"{what} exited {proc.returncode}: {lines[-1][:200] if lines else 'no output'}"


def _base_python() -> str:
    """The interpreter behind our venv: the peer's venv must not see our packages."""
    return getattr(sys, "_base_executable", None) or sys.executable


def install_pypi_search_console(root: Path, credential: Path, home: Path) -> Peer:
    """PyPI `mcp-search-console` (module gsc_server): reads GSC_CREDENTIALS_PATH lazily at call time."""
    peer = Peer("mcp-search-console (PyPI)", "PyPI", "mcp-search-console")
    venv = root / "pypi-venv"
    try:
        proc = _run([_base_python(), "-m", "venv", str(venv)])
        if proc.returncode != 0:
            peer.error = _failure("python -m venv", proc)
            return peer
        pip = [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-cache-dir",
        ]
        proc = _run([*pip, peer.package])
        if proc.returncode != 0:
            peer.error = _failure("pip install", proc)
            return peer
    except (OSError, subprocess.TimeoutExpired) as exc:
        peer.error = f"install failed: {type(exc).__name__}: {exc}"[:200]
        return peer
    peer.version = _pip_version(venv, peer.package)
    peer.sdk = f"mcp {_pip_version(venv, 'mcp')} (Python)"
    exe = venv / "bin" / "mcp-search-console"
    peer.command = [str(exe)]
    peer.env = {
        "GSC_CREDENTIALS_PATH": str(credential),
        "GSC_SKIP_OAUTH": "true",  # never open a browser for the OAuth fallback
        "GSC_CONFIG_DIR": str(home / "mcp-gsc"),
    }
    return peer


def _pip_version(venv: Path, package: str) -> str:
    proc = _run([str(venv / "bin" / "python"), "-m", "pip", "show", "--disable-pip-version-check", package])
    for line in proc.stdout.splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
    return "?"


def install_npm_gsc(root: Path, credential: Path, home: Path) -> Peer:
    """npm `mcp-server-gsc`: exits at start without GOOGLE_APPLICATION_CREDENTIALS; reads it lazily."""
    peer = Peer("mcp-server-gsc (npm)", "npm", "mcp-server-gsc")
    folder = root / "npm"
    folder.mkdir()
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        peer.error = "node or npm is not on PATH"
        return peer
    env = {**os.environ, "npm_config_cache": str(root / "npm-cache"), "HOME": str(home)}
    try:
        proc = _run(
            [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error", peer.package],
            cwd=folder,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        peer.error = f"npm install failed: {type(exc).__name__}: {exc}"[:200]
        return peer
    if proc.returncode != 0:
        peer.error = _failure("npm install", proc)
        return peer
    package_dir = folder / "node_modules" / peer.package
    try:
        meta = json.loads((package_dir / "package.json").read_text())
        sdk = json.loads((folder / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json").read_text())
    except (OSError, ValueError) as exc:
        peer.error = f"installed, but its package.json is unreadable ({type(exc).__name__})"
        return peer
    peer.version = str(meta.get("version", "?"))
    peer.sdk = f"@modelcontextprotocol/sdk {sdk.get('version', '?')} (Node {_node_version(node)})"
    bin_entry = meta.get("bin")
    script = bin_entry.get(peer.package) if isinstance(bin_entry, dict) else bin_entry
    peer.command = [node, str(package_dir / str(script))]
    peer.env = {"GOOGLE_APPLICATION_CREDENTIALS": str(credential)}
    return peer


def _node_version(node: str) -> str:
    try:
        return _run([node, "--version"]).stdout.strip().lstrip("v")
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def install_all(root: Path, credential: Path, home: Path) -> list[Peer]:
    return [install_pypi_search_console(root, credential, home), install_npm_gsc(root, credential, home)]
