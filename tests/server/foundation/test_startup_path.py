"""The start-up path (initialize, tools/list) imports only what it needs: Claude pays for it per chat."""

from __future__ import annotations

import subprocess
import sys

from tests.server.stdio import REPO

HEAVY = (
    "httpx",
    "google",
    "truststore",
    "platformdirs",
    "searchdesk_server.demo",
    "searchdesk_server.google",
    "searchdesk_server.agent",
    "searchdesk_server.approval",
    "searchdesk_server.tools",
    "PySide6",
    "keyring",
)


def test_server_module_and_tool_list_stay_light() -> None:
    code = (
        "import sys, anyio\n"
        "from searchdesk_server.config import load\n"
        "from searchdesk_server.server import build_server\n"
        "server = build_server(load({}, demo_flag=True))\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60, check=True)
    loaded = out.stdout.split()
    offenders = [m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert offenders == []
