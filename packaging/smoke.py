"""Smoke-test the frozen programs exactly as a user's machine would run them; exit 1 on any failure.

What it proves (each a separate check, all run even after one fails):
- the app's `searchdesk-server --demo` answers initialize, tools/list and a query_search_analytics
  over stdio (JSON-RPC written by hand here, so the test does not lean on the SDK under test);
- `searchdesk-server --check --demo` passes, and so does the desktop app's `searchdesk --check --demo`
  (which must find the server executable beside its own);
- `searchdesk --demo` starts offscreen and quits cleanly when asked (`--quit-after`);
- the server executable's own archive holds no PySide6, and the server-only build ships no Qt;
- the .mcpb validates and, unpacked by the official CLI, its server started with the manifest's own
  command and environment (user_config defaults substituted as Claude does) answers tools/list;
- on Linux, the tarball's install.sh and uninstall.sh work in a throwaway home.
It also measures sizes and start times and can write them as Markdown (--write).

Every program runs with a throwaway HOME and XDG directories, so nothing of the user's is touched.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from buildlib import BUILD, DIST, PYTHON, ROOT, dir_size, exe, machine, mib, os_name, version
from mcpb_pack import cli_command, output_name

APP = DIST / "SearchDesk"
SERVER_ONLY = DIST / "searchdesk-server"
PROTOCOL = "2025-06-18"
READ_TIMEOUT = 60.0


class SmokeFailure(Exception):
    """One check failed; the message says what was expected and what happened."""


# --- an isolated environment ----------------------------------------------------------------


def isolated_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A clean environment in a throwaway home: no session bus, no user config, offscreen Qt."""
    runtime = home / "run"
    for sub in ("cfg", "data", "cache", "state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "USERPROFILE": str(home),
        "XDG_CONFIG_HOME": str(home / "cfg"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_RUNTIME_DIR": str(runtime),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "QT_QPA_PLATFORM": "offscreen",
    }
    for keep in ("SYSTEMROOT", "WINDIR", "APPDATA", "LOCALAPPDATA", "TEMP", "TMP"):
        if keep in os.environ:
            env[keep] = os.environ[keep]
    env.update(extra or {})
    return env


# --- a minimal MCP client over stdio ----------------------------------------------------------


class StdioPeer:
    """One server process; newline-delimited JSON-RPC both ways."""

    def __init__(self, cmd: list[str], env: dict[str, str]) -> None:
        self.cmd = cmd
        self.errlog = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errlog, env=env, bufsize=0
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 1

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        deadline = time.monotonic() + READ_TIMEOUT
        while True:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise SmokeFailure(f"no answer to {method} within {READ_TIMEOUT:.0f} s{self.stderr_tail()}") from None
            if not line:
                raise SmokeFailure(f"the server exited before answering {method}{self.stderr_tail()}")
            try:
                msg = json.loads(line)
            except ValueError:
                raise SmokeFailure(f"the server wrote a non-JSON line on stdout: {line[:120]!r}") from None
            if msg.get("id") == rid:
                if "error" in msg:
                    raise SmokeFailure(f"{method} returned an error: {msg['error']}")
                return dict(msg["result"])

    def initialize(self) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "smoke", "version": "1"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def stderr_tail(self) -> str:
        self.errlog.seek(0)
        tail = self.errlog.read()[-1500:].decode("utf-8", "replace").strip()
        return f"; its stderr ends:\n{tail}" if tail else ""

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # EOF on stdin: the stdio transport's way of saying goodbye
        try:
            code = self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise SmokeFailure(f"{Path(self.cmd[0]).name} did not exit within 15 s of stdin closing") from None
        finally:
            self.errlog.close()
        return code


def tool_text(result: dict[str, Any]) -> str:
    return "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")


def expected_tools() -> int:
    from searchdesk_server import catalogue

    return sum(1 for t in catalogue.TOOLS if not t.diagnostic)


def time_to_tools(cmd: list[str], env: dict[str, str]) -> float:
    """Seconds from spawn to the tools/list answer: what a client waits for on every (re)start."""
    peer = StdioPeer(cmd, env)
    try:
        peer.initialize()
        peer.request("tools/list")
        return time.perf_counter() - peer.started
    finally:
        peer.close()


# --- the checks -----------------------------------------------------------------------------


@dataclass
class Smoke:
    work: Path
    results: list[tuple[str, bool, str]] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)

    def home(self, name: str) -> Path:
        path = self.work / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def check(self, name: str, fn: Callable[[], str]) -> None:
        start = time.perf_counter()
        try:
            detail = fn()
            ok = True
        except SmokeFailure as exc:
            ok, detail = False, str(exc)
        except (OSError, subprocess.SubprocessError) as exc:
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        took = time.perf_counter() - start
        self.results.append((name, ok, detail))
        print(f"{'PASS' if ok else 'FAIL'} {name} ({took:.1f} s){': ' + detail if detail else ''}", flush=True)

    # app: the server over stdio
    def server_stdio(self) -> str:
        cmd = [str(APP / exe("searchdesk-server")), "--demo"]
        peer = StdioPeer(cmd, isolated_env(self.home("server-stdio")))
        try:
            init = peer.initialize()
            tools = peer.request("tools/list")["tools"]
            names = [t["name"] for t in tools]
            if len(names) != expected_tools() or "query_search_analytics" not in names:
                raise SmokeFailure(f"tools/list offered {len(names)} tools; expected {expected_tools()}")
            sites = peer.request("tools/call", {"name": "list_sites", "arguments": {}})
            listed = (sites.get("structuredContent") or {}).get("sites") or []
            if sites.get("isError") or not listed:
                raise SmokeFailure(f"list_sites gave no properties: {tool_text(sites)[:300]}")
            site = listed[0]["site"]
            args = {"site": site, "period": "last28days", "dimensions": ["query"], "row_limit": 5}
            perf = peer.request("tools/call", {"name": "query_search_analytics", "arguments": args})
            text = tool_text(perf)
            if perf.get("isError") or not text.strip():
                raise SmokeFailure(f"query_search_analytics failed: {text[:300]}")
        finally:
            code = peer.close()
        if code != 0:
            raise SmokeFailure(f"exit status {code} after stdin closed")
        server = init.get("serverInfo", {})
        return f"{server.get('name')} {server.get('version')}, {len(names)} tools, analytics for {site}"

    def run_cli(self, cmd: list[str], home: str, timeout: float = 120) -> tuple[int, str]:
        done = subprocess.run(
            cmd,
            env=isolated_env(self.home(home)),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        return done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")

    def server_check(self) -> str:
        code, out = self.run_cli([str(APP / exe("searchdesk-server")), "--check", "--demo"], "server-check")
        verdict = next((line for line in reversed(out.splitlines()) if line.startswith(("PASS", "FAIL"))), "")
        if code != 0 or not verdict.startswith("PASS"):
            raise SmokeFailure(f"exit {code}: {verdict or out[-800:]}")
        return verdict

    def desktop_check(self) -> str:
        code, out = self.run_cli([str(APP / exe("searchdesk")), "--check", "--demo"], "desktop-check")
        verdict = next((line for line in reversed(out.splitlines()) if line.startswith(("PASS", "FAIL"))), "")
        if code != 0 or not verdict.startswith("PASS"):
            raise SmokeFailure(f"exit {code}: {verdict or out[-800:]}")
        return verdict

    def desktop_gui(self) -> str:
        start = time.perf_counter()
        cmd = [str(APP / exe("searchdesk")), "--demo", "--quit-after", "2"]
        code, out = self.run_cli(cmd, "desktop-gui", timeout=60)
        took = time.perf_counter() - start
        if code != 0:
            raise SmokeFailure(f"exit status {code} (expected 0 after --quit-after 2); output:\n{out[-1500:]}")
        if "Traceback" in out:
            raise SmokeFailure(f"exited 0 but printed a traceback:\n{out[-1500:]}")
        return f"started offscreen and quit cleanly after {took:.1f} s; {self.notification_layer('desktop-gui')}"

    def notification_layer(self, home: str) -> str:
        """The app's log says why it has no notifications here (no session bus in this throwaway home):
        a reason from the notification service, not a module or file missing from the build, and given
        from inside the running asyncio loop."""
        log = next(self.home(home).rglob("searchdesk.log"), None)
        if log is None:
            return "no log in the throwaway home on this system: notification layer not checked"
        line = next((x for x in log.read_text(encoding="utf-8").splitlines() if "system notifications" in x), "")
        if not line:
            raise SmokeFailure("the notification layer never reported whether it can notify")
        if any(bad in line for bad in ("ModuleNotFound", "ImportError", "FileNotFound", "no asyncio loop")):
            raise SmokeFailure(f"the notification layer is broken in this build: {line}")
        return f"notification layer: {line.split(': ', 1)[-1]}"

    def no_qt_in_server(self) -> str:
        from PyInstaller.archive.readers import pkg_archive_contents  # type: ignore[import-untyped]

        modules = [str(m) for m in pkg_archive_contents(str(APP / exe("searchdesk-server")))]
        bad = sorted({m.split(".")[0] for m in modules if m.split(".")[0] in ("PySide6", "shiboken6", "keyring")})
        if bad:
            raise SmokeFailure(f"the server's archive contains {', '.join(bad)}")
        qt_files = [p for p in SERVER_ONLY.rglob("*") if "Qt6" in p.name or p.name.startswith("PySide6")]
        if qt_files:
            raise SmokeFailure(f"the server-only build ships Qt: {qt_files[0].relative_to(SERVER_ONLY)}")
        return f"{len(modules)} modules in the server's archive, none from PySide6/keyring; server-only has no Qt"

    def oauth_client(self) -> str:
        """A release build carries the client given at build time; a development build carries none."""
        from spec_common import OAUTH_CLIENT_DEST, OAUTH_CLIENT_VAR

        internal = APP / "_internal" if (APP / "_internal").is_dir() else APP
        bundled = internal / OAUTH_CLIENT_DEST
        wanted = os.environ.get(OAUTH_CLIENT_VAR, "").strip()
        if not wanted:
            if bundled.exists():
                raise SmokeFailure(f"{OAUTH_CLIENT_VAR} is unset but the bundle has {OAUTH_CLIENT_DEST}")
            return "development build: no OAuth client inside (the app offers the alternatives)"
        if not bundled.is_file() or bundled.read_bytes() != Path(wanted).expanduser().read_bytes():
            raise SmokeFailure(f"{OAUTH_CLIENT_DEST} in the bundle is missing or differs from {OAUTH_CLIENT_VAR}")
        return f"OAuth client from {OAUTH_CLIENT_VAR} is at _internal/{OAUTH_CLIENT_DEST}"

    def mcpb(self) -> str:
        bundle = DIST / output_name(os_name())
        mcpb_cli = cli_command()
        if not bundle.is_file():
            raise SmokeFailure(f"{bundle.name} is missing; run packaging/bundle.py")
        unpacked = self.work / "mcpb-unpacked"
        done = subprocess.run(
            [*mcpb_cli, "unpack", str(bundle), str(unpacked)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise SmokeFailure(f"mcpb unpack failed: {(done.stdout + done.stderr)[-800:]}")
        manifest = json.loads((unpacked / "manifest.json").read_text(encoding="utf-8"))
        cmd, env = resolve_mcp_config(manifest, unpacked)
        if not os.access(cmd[0], os.X_OK):
            raise SmokeFailure(f"{cmd[0]} is not executable after unpacking (exec bit lost?)")
        peer = StdioPeer(cmd, isolated_env(self.home("mcpb-server"), env))
        try:
            peer.initialize()
            tools = peer.request("tools/list")["tools"]
        finally:
            peer.close()
        if len(tools) != len(manifest.get("tools", [])):
            raise SmokeFailure(f"the server offers {len(tools)} tools; the manifest lists {len(manifest['tools'])}")
        self.facts["mcpb_unpacked"] = mib(dir_size(unpacked))
        shown = " ".join(f"{k}={v!r}" for k, v in sorted(env.items()))
        return f"{bundle.name}: unpacked server ({shown}) lists {len(tools)} tools"

    def linux_install(self) -> str:
        tarball = DIST / f"searchdesk-{version()}-linux-{machine()}.tar.gz"
        home = self.home("install-home")
        env = isolated_env(home)
        subprocess.run(["tar", "-xzf", str(tarball), "-C", str(self.work)], check=True)
        top = self.work / tarball.name.removesuffix(".tar.gz")
        done = subprocess.run(["sh", str(top / "install.sh")], env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SmokeFailure(f"install.sh failed: {(done.stdout + done.stderr)[-800:]}")
        entry = home / "data" / "applications" / "searchdesk.desktop"
        exec_line = next((x for x in entry.read_text().splitlines() if x.startswith("Exec=")), "")
        target = exec_line.removeprefix("Exec=").strip('"')
        if not os.access(target, os.X_OK):
            raise SmokeFailure(f"the installed .desktop file runs {exec_line!r}, which is not executable")
        done = subprocess.run(
            [str(home / ".local" / "bin" / "searchdesk-server"), "--version"], env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SmokeFailure(f"~/.local/bin/searchdesk-server --version failed: {done.stderr[-400:]}")
        done = subprocess.run(["sh", str(top / "uninstall.sh")], env=env, capture_output=True, text=True, check=False)
        left = [p for p in (entry, home / "data" / "searchdesk", home / ".local" / "bin" / "searchdesk") if p.exists()]
        if done.returncode != 0 or left:
            raise SmokeFailure(f"uninstall.sh left {left} (exit {done.returncode}): {done.stderr[-400:]}")
        return f"install.sh -> {exec_line.replace(str(home / 'data'), '$XDG_DATA_HOME')}; uninstall.sh removed it"


def resolve_mcp_config(manifest: dict[str, Any], root: Path) -> tuple[list[str], dict[str, str]]:
    """The command and environment Claude Desktop would use with the user_config defaults.

    Mirrors getMcpConfigForManifest in @anthropic-ai/mcpb (src/shared/config.ts): platform override,
    then ${__dirname} and ${user_config.KEY} substitution (booleans as "true"/"false").
    """
    config = dict(manifest["server"]["mcp_config"])
    override = config.get("platform_overrides", {}).get(os_name(), {})
    command = override.get("command", config["command"])
    args = override.get("args", config.get("args", []))
    env = override.get("env", config.get("env", {}))
    values = {"__dirname": str(root), "/": os.sep, "pathSeparator": os.sep}
    for key, option in manifest.get("user_config", {}).items():
        default = option.get("default")
        if default is not None:
            values[f"user_config.{key}"] = (
                ("true" if default else "false") if isinstance(default, bool) else str(default)
            )

    def sub(text: str) -> str:
        out = re.sub(r"\$\{([^}]+)\}", lambda m: values.get(m.group(1), m.group(0)), text)
        if "${" in out:
            raise SmokeFailure(f"unresolved variable in the manifest's mcp_config: {out!r}")
        return out

    return [sub(command), *(sub(a) for a in args)], {k: sub(v) for k, v in env.items()}


# --- measurements ---------------------------------------------------------------------------


def measure(smoke: Smoke, runs: int) -> dict[str, str]:
    """Sizes, and start-to-tools/list for frozen vs unfrozen server; desktop start-to-exit."""
    facts: dict[str, str] = {}
    facts["app folder (dist/SearchDesk)"] = mib(dir_size(APP))
    facts["server-only folder (dist/searchdesk-server)"] = mib(dir_size(SERVER_ONLY))
    tarball = DIST / f"searchdesk-{version()}-linux-{machine()}.tar.gz"
    if tarball.is_file():
        facts[f"app tarball ({tarball.name})"] = mib(tarball.stat().st_size)
    bundle = DIST / output_name(os_name())
    if bundle.is_file():
        facts[f".mcpb ({bundle.name})"] = mib(bundle.stat().st_size)
    if "mcpb_unpacked" in smoke.facts:
        facts[".mcpb unpacked"] = smoke.facts["mcpb_unpacked"]

    frozen = [str(APP / exe("searchdesk-server")), "--demo"]
    unfrozen = [str(PYTHON), "-m", "searchdesk_server", "--demo"]
    env = isolated_env(smoke.home("timing"))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "server"), str(ROOT / "desktop")])
    samples: dict[str, list[float]] = {"frozen": [], "unfrozen": []}
    for _ in range(runs):  # interleaved, so a busy moment hits both alike
        samples["frozen"].append(time_to_tools(frozen, env))
        samples["unfrozen"].append(time_to_tools(unfrozen, env))
    for kind, values in samples.items():
        facts[f"server start to tools/list, {kind}: first of {runs}"] = f"{values[0]:.2f} s"
        facts[f"server start to tools/list, {kind}: median of {runs}"] = f"{statistics.median(values):.2f} s"

    desktop = {
        "frozen": [str(APP / exe("searchdesk")), "--demo", "--quit-after", "0"],
        "unfrozen": [str(PYTHON), "-m", "searchdesk_desktop", "--demo", "--quit-after", "0"],
    }
    for kind, cmd in desktop.items():
        times, codes = [], set()
        for i in range(3):
            start = time.perf_counter()
            e = isolated_env(smoke.home(f"desktop-time-{kind}-{i}"), {"PYTHONPATH": env["PYTHONPATH"]})
            codes.add(subprocess.run(cmd, env=e, capture_output=True, timeout=60, check=False).returncode)
            times.append(time.perf_counter() - start)
        note = "" if codes == {0} else f" (exit status {sorted(codes)}: not a clean run)"
        facts[f"desktop app start to exit (--quit-after 0, offscreen), {kind}: median of 3"] = (
            f"{statistics.median(times):.2f} s{note}"
        )
    return facts


def load_average() -> str:
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def one_line(text: str, limit: int = 300) -> str:
    flat = " / ".join(line.strip() for line in text.splitlines() if line.strip())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def size_cuts() -> list[str]:
    """Before/after per part and each cut's saving, when `make bundle-sizes` left an uncut snapshot."""
    import sizes

    uncut = BUILD / "sizes-uncut.json"
    if not uncut.is_file():
        return []
    return [
        "## What the app folder is made of, and each cut",
        "",
        "*Before*: the same sources built with `SEARCHDESK_BUILD_NO_CUTS=1`; *after*: this build "
        "(`make bundle-sizes` makes both). Apparent sizes, as above. Compression is not a cut: the tarball "
        "and the `.mcpb` keep their compression (gzip level 6, zip), so their smaller sizes come from "
        "these cuts alone.",
        "",
        sizes.compare(json.loads(uncut.read_text(encoding="utf-8")), APP),
        "",
    ]


def markdown(results: list[tuple[str, bool, str]], facts: dict[str, str]) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Bundle measurements",
        "",
        f"Written by `packaging/smoke.py --write` on {now}: {platform.system()} {machine()}, "
        f"{os.cpu_count()} CPUs (load average {load_average()} when written), Python {platform.python_version()}, "
        f"SearchDesk {version()}. "
        "Start times are wall-clock from process creation, in a fresh throwaway home each time; the files "
        "are in the OS page cache (the build has just written them), so the first start after a reboot "
        "is slower than these. Sizes are apparent sizes (MiB).",
        "",
        "| measure | value |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in facts.items()),
        "",
        *size_cuts(),
        "## Smoke checks",
        "",
        *(f"- {'PASS' if ok else 'FAIL'} {name}: {one_line(detail)}" for name, ok, detail in results),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Smoke-test dist/ (built by packaging/bundle.py).")
    parser.add_argument("--write", type=Path, help="write sizes, times and results as Markdown here")
    parser.add_argument("--runs", type=int, default=5, help="start-time samples per variant (default 5)")
    parser.add_argument("--no-measure", action="store_true", help="checks only")
    args = parser.parse_args(argv)
    if not APP.is_dir():
        print(f"smoke: {APP} is missing; run `make bundle` first.", file=sys.stderr)
        return 1
    BUILD.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="smoke-", dir=BUILD))
    try:
        smoke = Smoke(work)
        smoke.check("searchdesk-server --demo over stdio", smoke.server_stdio)
        smoke.check("searchdesk-server --check --demo", smoke.server_check)
        smoke.check("searchdesk --check --demo (finds its server)", smoke.desktop_check)
        smoke.check("searchdesk --demo starts offscreen and quits", smoke.desktop_gui)
        smoke.check("server carries no Qt", smoke.no_qt_in_server)
        smoke.check("OAuth client only when given at build time", smoke.oauth_client)
        smoke.check(".mcpb unpacks and its server answers", smoke.mcpb)
        if os_name() == "linux":
            smoke.check("Linux tarball install.sh / uninstall.sh", smoke.linux_install)
        failed = [name for name, ok, _ in smoke.results if not ok]
        if not args.no_measure:
            facts = measure(smoke, args.runs)
            print("\n" + "\n".join(f"{k}: {v}" for k, v in facts.items()))
            if args.write:
                args.write.parent.mkdir(parents=True, exist_ok=True)
                args.write.write_text(markdown(smoke.results, facts), encoding="utf-8")
                print(f"\nwritten: {args.write}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failed:
        print(f"\nsmoke: {len(failed)} check(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print("\nsmoke: all checks passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
