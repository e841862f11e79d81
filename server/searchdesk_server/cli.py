"""`searchdesk-server`: parse the environment, then serve MCP over stdio (or run the self-check).

Config errors exit 1 with one line on stderr before any MCP traffic, so a client's log shows
the reason. stdout belongs to the protocol: nothing else is ever printed there while serving.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from . import __version__, sqlite_memory


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="searchdesk-server",
        description="SearchDesk's MCP server for Google Search Console (stdio).",
    )
    p.add_argument("--demo", action="store_true", help="serve the built-in demo Search Console (no Google account)")
    p.add_argument("--check", action="store_true", help="start the server as a child, exercise it, print a verdict")
    p.add_argument(
        "--check-journal",
        action="store_true",
        help="check SearchDesk's record of changes on this computer (no credentials or network needed)",
    )
    p.add_argument("--version", action="version", version=f"searchdesk-server {__version__}")
    return p


def server_command(demo: bool) -> list[str]:
    """The command that starts this server: the frozen executable, or this interpreter."""
    base = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "searchdesk_server"]
    return [*base, "--demo"] if demo else base


def main(argv: list[str] | None = None) -> int:
    sqlite_memory.statistics_off()  # before any file is opened (sqlite_memory.py)
    args = _parser().parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="searchdesk-server: %(message)s")
    if args.check_journal:
        return check_journal(demo=args.demo)
    from .config import load
    from .credential_setting import scrub_secrets
    from .variables import ConfigError

    try:
        config = load(os.environ, demo_flag=args.demo)
    except ConfigError as exc:
        print(f"searchdesk-server: {exc}", file=sys.stderr)
        return 1
    if args.check:
        import anyio

        from .stdio_check import run_check

        child_env = dict(os.environ)  # the child server gets the credentials; this process keeps none
        scrub_secrets()
        report = anyio.run(run_check, server_command(config.demo), child_env)
        print(report.render())
        return 0 if report.ok else 1
    scrub_secrets()
    print(config.startup_line(), file=sys.stderr, flush=True)
    if not config.elicitation:
        fallback = "and are refused without it" if config.never_a_token else "or the two-call token"
        print(
            f"searchdesk-server: ELICITATION=false — guarded tools fall back to the desktop dialog {fallback}",
            file=sys.stderr,
            flush=True,
        )
    import anyio

    anyio.run(_serve, config)
    return 0


def check_journal(*, demo: bool) -> int:
    """`--check-journal`: 0 when every journal on this computer checks (or there is none yet), else 1.
    Reads the files only: no settings, credentials or network, so it works wherever the server is installed."""
    from .journal.check import check
    from .journal.paths import all_journals
    from .journal.store import Journal

    reports = [check(Journal(path)) for path in all_journals(demo=demo)]
    print("\n\n".join(report.render() for report in reports))
    return 0 if all(report.ok for report in reports) else 1


async def _serve(config: object) -> None:
    from mcp.server.stdio import stdio_server

    from .config import Config
    from .server import build_server

    assert isinstance(config, Config)
    server = build_server(config)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
