"""SearchDesk's own environment variables: named once (`variables.Var`), read only by the Config, and
written under the same names by the desktop app's Claude entry and the `.mcpb` manifest."""

from __future__ import annotations

import ast
import datetime
import json
import os
import sys
from pathlib import Path

import pytest

from searchdesk_server import variables
from searchdesk_server.config import load
from searchdesk_server.runtime import Runtime
from searchdesk_server.variables import APP_ENTRY_ENV, SETTINGS_VARS, ConfigError, Var

REPO = Path(__file__).resolve().parents[3]
SOURCES = (REPO / "server" / "searchdesk_server", REPO / "desktop" / "searchdesk_desktop")
#: The modules that may look at the process environment: the one line handing the Config the environment
#: (cli.py), the secrets scrubbed from it once read (credential_setting.py), and the socket path for the
#: app, which has no server Config.
ENVIRONMENT_READERS = {"server/searchdesk_server/credential_setting.py", "server/searchdesk_server/cli.py"}
APP_SOCKET_PATH = "server/searchdesk_server/agent/paths.py"
#: Where the app finds the journals Windows redirected into a package: Windows' own %LOCALAPPDATA%, no setting.
JOURNAL_PATHS = "server/searchdesk_server/journal/paths.py"


def python_files() -> list[Path]:
    return sorted(p for root in SOURCES for p in root.rglob("*.py"))


def test_every_name_is_written_once() -> None:
    """A variable's name as a string of its own appears only in variables.py; every other module imports it."""
    names = {v.value for v in Var}
    found = []
    for path in python_files():
        if path.name == "variables.py" and path.parent.name == "searchdesk_server":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.value}")
            if isinstance(node, ast.keyword) and node.arg in names:  # f(SEARCHDESK_X=...) writes the name too
                found.append(f"{path.relative_to(REPO)}:{node.value.lineno} {node.arg}=")
    assert found == []


def test_only_the_config_reads_the_environment_in_the_server() -> None:
    readers = set()
    for path in python_files():
        if "searchdesk_server" not in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        if "os.environ" in text or "getenv(" in text:
            readers.add(str(path.relative_to(REPO)))
    assert readers <= ENVIRONMENT_READERS | {APP_SOCKET_PATH, JOURNAL_PATHS}, readers
    paths = (REPO / APP_SOCKET_PATH).read_text(encoding="utf-8")
    assert "agent_socket_setting(os.environ)" in paths and paths.count("os.environ") == 1
    journal = (REPO / JOURNAL_PATHS).read_text(encoding="utf-8")
    assert journal.count("os.environ") == 1 and '"LOCALAPPDATA"' in journal


def test_the_mcpb_manifest_and_the_apps_entry_use_the_settings_names() -> None:
    from searchdesk_desktop.claude.config_file import ServerSettings

    manifest = json.loads((REPO / "packaging" / "mcpb" / "manifest.json").read_text(encoding="utf-8"))
    env = manifest["server"]["mcp_config"]["env"]
    assert list(env) == [*SETTINGS_VARS, *APP_ENTRY_ENV]
    assert {k: env[k] for k in APP_ENTRY_ENV} == dict(APP_ENTRY_ENV)  # the extension asks in the app, as the entry
    every = ServerSettings(
        read_only=True,
        groups=("sites",),
        site_url="https://a.example/",
        allowed_sites=("https://a.example/",),
        brand_terms=(("https://a.example/", ("a example", "a+b")),),
        demo=True,
        agent_socket="/tmp/x.sock",
    ).env()
    assert set(every) == {*SETTINGS_VARS, Var.SEARCHDESK_DEMO, Var.SEARCHDESK_AGENT_SOCKET, *APP_ENTRY_ENV}
    assert load(every).read_only and load(every).agent_socket == "/tmp/x.sock"  # and the server reads them so
    assert load(every).ask_in_app and load(every).never_a_token
    assert load(every).brand_terms == {"https://a.example/": ("a example", "a+b")}


@pytest.mark.parametrize("raw", ["tomorrow", "2026-13-01", "2026-02-30", "20260101", "2026-01-01T00:00", "2026-1-01"])
def test_a_pinned_day_is_a_real_date_written_yyyy_mm_dd(raw: str) -> None:
    with pytest.raises(ConfigError, match=r"SEARCHDESK_DEMO_TODAY .*YYYY-MM-DD"):
        load({Var.SEARCHDESK_DEMO_TODAY: raw})


@pytest.mark.anyio
async def test_the_pinned_day_is_today_for_the_periods_and_the_demos_data() -> None:
    from mcp import Client

    from searchdesk_server.server import build_server

    pinned = load({Var.SEARCHDESK_DEMO_TODAY: " 2026-03-31 "}, demo_flag=True)
    assert pinned.today == datetime.date(2026, 3, 31) and load({}).today is None
    args = {"site": "sc-domain:example.com", "period": "yesterday", "dimensions": ["date"], "data_state": "all"}
    async with Client(build_server(pinned), mode="legacy") as client:
        result = await client.call_tool("query_search_analytics", args)
    data = result.structured_content
    assert data is not None and (data["start_date"], data["end_date"]) == ("2026-03-30", "2026-03-30")
    assert [row["date"] for row in data["rows"]] == ["2026-03-30"]  # the demo's data ends on the same day


def test_the_socket_is_resolved_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert load({Var.SEARCHDESK_AGENT_SOCKET: " ~/a.sock "}).agent_socket == str(tmp_path / "a.sock")
    assert load({Var.SEARCHDESK_AGENT_SOCKET: "rel/a.sock"}).agent_socket == os.path.abspath("rel/a.sock")
    assert load({}).agent_socket is None
    monkeypatch.setattr(sys, "platform", "win32")
    assert variables.agent_socket_setting({Var.SEARCHDESK_AGENT_SOCKET: "my-pipe"}) == r"\\.\pipe\my-pipe"
    assert variables.agent_socket_setting({Var.SEARCHDESK_AGENT_SOCKET: r"\\.\pipe\x"}) == r"\\.\pipe\x"


@pytest.mark.anyio
async def test_approvals_and_tokens_use_the_one_resolved_socket(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    runtime = Runtime(load({Var.SEARCHDESK_AGENT_SOCKET: "~/agent.sock"}))
    await runtime.client()  # the app's sign-in: its token source takes the runtime's agent
    assert runtime.agent() is not runtime.approval_agent()  # a connection each
    assert runtime.agent().path == runtime.approval_agent().path == str(tmp_path / "agent.sock")
    source = runtime._source
    assert source is not None and source._agent is runtime.agent()  # type: ignore[attr-defined]
    await runtime.aclose()
