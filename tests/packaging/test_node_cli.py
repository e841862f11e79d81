"""The MCPB CLI starts on every system: `node` on its JavaScript entry, found by each system's own rules.

The resolver is pure, so Windows' rules are given to it here on Linux (PATHEXT, the .cmd/.ps1 shims npm
writes, a folder with a space, a quoted PATH entry) rather than faked through os.name. Issue 35: the
Windows release job started node_modules/.bin/mcpb, a sh script Windows cannot run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path, PureWindowsPath

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import mcpb_pack  # noqa: E402
import node_cli  # noqa: E402
from buildlib import Runner  # noqa: E402

WINDOWS = node_cli.Rules.for_windows(".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC;.PS1")
#: What npm and the Node.js installer leave on a Windows machine (GitHub's runner has Node in Program Files).
WINDOWS_FILES = {
    r"C:\Users\runner\AppData\Roaming\npm\node.cmd",
    r"C:\Users\runner\AppData\Roaming\npm\node.ps1",
    r"C:\Users\runner\AppData\Roaming\npm\node",
    r"C:\Program Files\nodejs\node.exe",
    r"C:\Program Files\nodejs\npm.cmd",
    r"D:\a\search desk\build\mcpb-cli\node_modules\.bin\mcpb",
    r"D:\a\search desk\build\mcpb-cli\node_modules\.bin\mcpb.cmd",
    r"D:\a\search desk\build\mcpb-cli\node_modules\.bin\mcpb.ps1",
}
WINDOWS_PATH = r'C:\Users\runner\AppData\Roaming\npm;"C:\Program Files\nodejs";C:\Windows\system32;'
CLI_PACKAGE = PureWindowsPath(r"D:\a\search desk\build\mcpb-cli\node_modules\@anthropic-ai\mcpb")


def mcpb_package_json() -> dict[str, object]:
    """The pinned CLI's own package entry, as the committed npm lock records its `bin`."""
    lock = json.loads((ROOT / "packaging" / "mcpb" / "cli" / "package-lock.json").read_text(encoding="utf-8"))
    entry = lock["packages"]["node_modules/@anthropic-ai/mcpb"]
    return {"name": "@anthropic-ai/mcpb", "bin": entry["bin"]}


def test_windows_finds_node_exe_past_the_shims_npm_wrote() -> None:
    found = node_cli.find_executable("node", WINDOWS_PATH, WINDOWS, WINDOWS_FILES.__contains__)
    assert found == r"C:\Program Files\nodejs\node.exe"


def test_windows_takes_pathext_in_its_order_and_only_what_starts_without_a_shell() -> None:
    files = {r"C:\t\node.com", r"C:\t\node.exe", r"C:\t\mcpb.cmd", r"C:\t\mcpb.ps1", r"C:\t\mcpb"}
    assert node_cli.find_executable("node", r"C:\t", WINDOWS, files.__contains__) == r"C:\t\node.com"
    assert node_cli.find_executable("mcpb", r"C:\t", WINDOWS, files.__contains__) is None
    exe_first = node_cli.Rules.for_windows(".EXE;.COM")
    assert node_cli.find_executable("node", r"C:\t", exe_first, files.__contains__) == r"C:\t\node.exe"


def test_the_mcpb_cli_on_windows_is_node_on_its_entry_in_a_folder_with_a_space() -> None:
    argv = node_cli.command(mcpb_package_json(), CLI_PACKAGE, "mcpb", WINDOWS_PATH, WINDOWS, WINDOWS_FILES.__contains__)
    assert argv == [
        r"C:\Program Files\nodejs\node.exe",
        r"D:\a\search desk\build\mcpb-cli\node_modules\@anthropic-ai\mcpb\dist\cli\cli.js",
    ]


def test_no_node_is_a_sentence_not_a_shim() -> None:
    with pytest.raises(node_cli.NodeCliError, match=r"install Node\.js"):
        node_cli.command(mcpb_package_json(), CLI_PACKAGE, "mcpb", r"C:\Windows", WINDOWS, WINDOWS_FILES.__contains__)
    with pytest.raises(node_cli.NodeCliError, match="no command 'nope'"):
        node_cli.entry_point(mcpb_package_json(), CLI_PACKAGE, "nope")


def test_the_build_and_the_smoke_test_start_the_cli_through_node() -> None:
    """What mcpb_pack hands to its runner, and what smoke.py starts: never a .bin shim, never mcpb.exe."""
    argv = mcpb_pack.ensure_cli(Runner(dry_run=True))
    assert isinstance(argv, list) and len(argv) == 2
    assert Path(argv[0]).name in ("node", "node.exe") and argv[1].endswith(str(Path("dist", "cli", "cli.js")))
    assert all(".bin" not in part for part in argv)
    smoke = (ROOT / "packaging" / "smoke.py").read_text(encoding="utf-8")
    assert 'exe("mcpb")' not in smoke and ".bin" not in smoke


@pytest.mark.skipif(shutil.which("node") is None, reason="no Node.js here")
def test_node_cli_starts_a_real_entry(tmp_path: Path) -> None:
    """This machine's rules, a real node and a package laid out as npm lays it out, in a folder with a space."""
    package = tmp_path / "node modules" / "tool"
    (package / "bin").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "tool", "bin": {"tool": "bin/tool.js"}}))
    (package / "bin" / "tool.js").write_text("console.log('started', process.argv.length)\n")
    argv = node_cli.command_here(package, "tool")
    done = subprocess.run([*argv, "one"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "started 3"
