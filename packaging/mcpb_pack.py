"""Build SearchDesk's MCP Bundle (.mcpb) for this OS from the server-only PyInstaller build.

A .mcpb is a zip of manifest.json and the server that Claude for macOS and Windows installs with
a double-click. We ship `server.type: "binary"`: the frozen server, so the user needs no Python.
Each OS gets its own .mcpb holding only its own executable; `compatibility.platforms` says which.
Only the Linux one can be built on Linux, and there is no official Claude Desktop for Linux, so the
Linux .mcpb exists to be validated and smoke-tested in CI; the macOS and Windows ones come from
build_macos.py and build_windows.py on those systems.

Validation and packing use the official CLI, @anthropic-ai/mcpb, installed from the npm registry
with `npm ci` from the committed lock (packaging/mcpb/cli/) into build/mcpb-cli (never committed).

Spec: https://github.com/modelcontextprotocol/mcpb/blob/main/MANIFEST.md (manifest_version 0.3)
CLI:  https://github.com/modelcontextprotocol/mcpb/blob/main/CLI.md
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import node_cli
from buildlib import ASSETS, BUILD, DIST, PACKAGING, BuildError, Runner, exe, machine, main_wrapper, os_name
from spec_common import version

MANIFEST = PACKAGING / "mcpb" / "manifest.json"
CLI_LOCK_DIR = PACKAGING / "mcpb" / "cli"
CLI_DIR = BUILD / "mcpb-cli"
ICON = ASSETS / "png" / "searchdesk-512.png"


def cli_version() -> str:
    data = json.loads((CLI_LOCK_DIR / "package.json").read_text(encoding="utf-8"))
    return str(data["dependencies"]["@anthropic-ai/mcpb"])


CLI_PACKAGE = CLI_DIR / "node_modules" / "@anthropic-ai" / "mcpb"


def cli_command(run: Runner | None = None) -> list[str]:
    """`node <the CLI's JavaScript entry>`: no npm shim (node_cli.py says why), on every system."""
    if run is not None and run.dry_run and not (CLI_PACKAGE / "package.json").is_file():
        return ["node", str(CLI_PACKAGE / "dist" / "cli" / "cli.js")]
    try:
        return node_cli.command_here(CLI_PACKAGE, "mcpb")
    except node_cli.NodeCliError as exc:
        raise BuildError(str(exc)) from None


def ensure_cli(run: Runner) -> list[str]:
    """The pinned mcpb CLI, installed with `npm ci` unless that exact version is already there."""
    installed = CLI_PACKAGE / "package.json"
    want = cli_version()
    if installed.is_file() and json.loads(installed.read_text(encoding="utf-8")).get("version") == want:
        return cli_command(run)
    npm = run.tool("npm", "Install Node.js 18 or later (it brings npm); the MCPB CLI is a Node program.")
    if not run.dry_run:
        CLI_DIR.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(CLI_LOCK_DIR / name, CLI_DIR / name)
    run.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=CLI_DIR)
    return cli_command(run)


def catalogue_tools() -> list[dict[str, str]]:
    """The tools for the install dialog, from the one catalogue (the diagnostic tool is opt-in)."""
    from searchdesk_server import catalogue

    tools = []
    for spec in catalogue.TOOLS:
        if spec.diagnostic:
            continue
        note = " (asks you first, in the SearchDesk app)" if spec.guarded else ""
        tools.append({"name": spec.name, "description": f"{spec.title}{note}"})
    return tools


def staged_manifest(platform_name: str) -> dict[str, Any]:
    """The committed manifest, for one OS, with the catalogue's tools; its version must match."""
    manifest: dict[str, Any] = json.loads(MANIFEST.read_text(encoding="utf-8"))
    if manifest.get("version") != version():
        raise BuildError(
            f"packaging/mcpb/manifest.json says version {manifest.get('version')!r} but pyproject.toml says "
            f"{version()!r}; update the manifest."
        )
    manifest["compatibility"]["platforms"] = [platform_name]
    if platform_name == "win32":
        manifest["server"]["entry_point"] += ".exe"
    manifest["tools"] = catalogue_tools()
    return manifest


def stage(server_dir: Path, platform_name: str, where: Path, run: Runner) -> Path:
    """build/mcpb/<os>/: manifest.json, icon.png and server/ (the whole onedir build)."""
    entry = server_dir / exe("searchdesk-server", platform_name)
    if not run.dry_run and not entry.is_file():
        raise BuildError(f"{entry} is missing; build packaging/server-only.spec first (make bundle does).")
    run.say(f"stage {server_dir} -> {where}/server")
    if run.dry_run:
        return where
    if where.exists():
        shutil.rmtree(where)
    shutil.copytree(server_dir, where / "server", symlinks=True)
    shutil.copy2(ICON, where / "icon.png")
    text = json.dumps(staged_manifest(platform_name), indent=2, ensure_ascii=False) + "\n"
    (where / "manifest.json").write_text(text, encoding="utf-8")
    return where


def output_name(platform_name: str) -> str:
    os_label = {"darwin": "macos", "win32": "windows", "linux": "linux"}[platform_name]
    return f"searchdesk-{version()}-{os_label}-{machine()}.mcpb"


def build(server_dir: Path, run: Runner, *, platform_name: str | None = None, out: Path | None = None) -> Path:
    """Stage, validate and pack; returns the .mcpb path."""
    platform_name = platform_name or os_name()
    out = out or DIST / output_name(platform_name)
    mcpb = ensure_cli(run)
    where = stage(server_dir, platform_name, BUILD / "mcpb" / platform_name, run)
    run.run([*mcpb, "validate", where / "manifest.json"])
    if not run.dry_run:
        out.unlink(missing_ok=True)
    run.run([*mcpb, "pack", where, out])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the .mcpb for this OS from dist/searchdesk-server.")
    parser.add_argument("--server-dir", type=Path, default=DIST / "searchdesk-server")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    run = Runner(dry_run=args.dry_run)

    def body() -> int:
        path = build(args.server_dir, run, out=args.out)
        run.say(f"mcpb: {path}")
        return 0

    return main_wrapper("mcpb_pack", body)


if __name__ == "__main__":
    raise SystemExit(main())
