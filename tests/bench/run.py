"""`make bench`: SearchDesk measured side by side with the MCP SDK's own floor, in one run.

Every figure in docs/performance.md comes from this script's output. `--smoke` runs each of our
measurements once (no peers, nothing written) so `make test` keeps the harness from rotting.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FLOOR_SERVER = '''
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("floor")


@mcp.tool()
def ping(text: str) -> str:
    """Echo."""
    return text


mcp.run()
'''

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


@dataclass
class Sample:
    name: str
    values: list[float] = field(default_factory=list)
    error: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else float("nan")

    def span(self) -> str:
        return f"{min(self.values):.3f}–{max(self.values):.3f}" if self.values else "—"


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"), "PYTHONDONTWRITEBYTECODE": "1"}
    env.update(extra or {})
    return env


def list_tools_once(command: Sequence[str], env: dict[str, str], timeout: float = 60.0) -> tuple[float, dict]:
    """Spawn → `tools/list` answered, over stdio with the 2025-11-25 handshake; returns (seconds, result)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        payload = "".join(json.dumps(m) + "\n" for m in (INIT, INITIALIZED, LIST))
        proc.stdin.write(payload.encode())
        proc.stdin.flush()
        deadline = start + timeout
        while time.perf_counter() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed stdout before answering tools/list")
            msg = json.loads(line)
            if msg.get("id") == 2:
                elapsed = time.perf_counter() - start
                if "result" not in msg:
                    raise RuntimeError(f"tools/list failed: {msg.get('error')}")
                return elapsed, msg["result"]
        raise TimeoutError("no tools/list answer in time")
    finally:
        proc.kill()
        proc.wait(timeout=10)


def cold_start(runs: int, targets: dict[str, tuple[list[str], dict[str, str]]]) -> dict[str, Sample]:
    """Interleaved, so a noisy moment on the shared machine hits every target alike."""
    samples = {name: Sample(name) for name in targets}
    for _ in range(runs):
        for name, (cmd, env) in targets.items():
            if samples[name].error:
                continue
            try:
                samples[name].values.append(list_tools_once(cmd, env)[0])
            except Exception as exc:  # a target that fails is reported, never dropped
                samples[name].error = f"{type(exc).__name__}: {exc}"[:200]
    return samples


def menu_size(result: dict) -> dict[str, object]:
    tools = result.get("tools", [])
    compact: Callable[[object], int] = lambda v: len(json.dumps(v, separators=(",", ":"), ensure_ascii=False))  # noqa: E731
    total = compact(result)
    parts = {
        "descriptions": sum(len(t.get("description", "")) for t in tools),
        "input schemas": sum(compact(t.get("inputSchema", {})) for t in tools),
        "output schemas": sum(compact(t.get("outputSchema", {})) for t in tools if "outputSchema" in t),
        "annotations": sum(compact(t.get("annotations", {})) for t in tools if "annotations" in t),
    }
    per_tool = {t["name"]: compact(t) for t in tools}
    return {
        "total": total,
        "tools": len(tools),
        "per_tool_avg": total / max(len(tools), 1),
        "parts": parts,
        "per_tool": per_tool,
    }


def import_time_top(n: int = 8) -> list[tuple[str, int]]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import searchdesk_server.server"],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=REPO,
        timeout=60,
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        try:
            _self, cumulative, name = (p.strip() for p in line.split(":", 1)[1].split("|"))
            rows.append((name.strip(), int(cumulative)))
        except ValueError:
            continue
    top_level = [(name, us) for name, us in rows if not name.startswith(" ")]
    return sorted(top_level, key=lambda r: -r[1])[:n]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--smoke", action="store_true", help="one run of our own measurements; write nothing")
    ap.add_argument("--write", type=Path, help="write the Markdown report here")
    args = ap.parse_args(argv)
    runs = 1 if args.smoke else max(args.runs, 5)

    with tempfile.TemporaryDirectory(prefix="searchdesk-bench-") as tmp:
        floor = Path(tmp) / "floor.py"
        floor.write_text(FLOOR_SERVER)
        ours = [sys.executable, "-m", "searchdesk_server"]
        targets = {
            "MCP SDK floor (one-tool MCPServer)": ([sys.executable, str(floor)], _env()),
            "SearchDesk, all tools": (ours, _env({"SEARCHDESK_AGENT_SOCKET": os.path.join(tmp, "none.sock")})),
            "SearchDesk, essential preset": (ours, _env({"GSC_ALLOW_TOOLS": "essential"})),
            "SearchDesk --demo": ([*ours, "--demo"], _env()),
        }
        samples = cold_start(runs, targets)
        _, full = list_tools_once(ours, _env())
        _, essential = list_tools_once(ours, _env({"GSC_ALLOW_TOOLS": "essential"}))

    floor_median = samples["MCP SDK floor (one-tool MCPServer)"].median
    report = {
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "runs": runs,
        "cold_start": {
            s.name: {"median_s": s.median, "range_s": s.span(), "ratio": s.median / floor_median, "error": s.error}
            for s in samples.values()
        },
        "menu": menu_size(full),
        "menu_essential": menu_size(essential),
        "import_time_top_us": import_time_top(),
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    if args.write and not args.smoke:
        args.write.write_text(render(report), encoding="utf-8")
    bad = [s for s in samples.values() if s.error]
    return 1 if args.smoke and bad else 0


def render(r: dict) -> str:
    import importlib.metadata as md

    lines = [
        "# Performance",
        "",
        f"Measured by `make bench` on {r['date']}: {r['machine']}, Python {r['python']}, "
        f"mcp {md.version('mcp')}; median of {r['runs']} interleaved runs (min–max).",
        "",
        "## Cold start (spawn → `tools/list` answered, stdio, 2025-11-25 handshake)",
        "",
        "| Server | Median (s) | Range (s) | × SDK floor |",
        "|---|---|---|---|",
    ]
    for name, c in r["cold_start"].items():
        if c["error"]:
            lines.append(f"| {name} | failed: {c['error']} | | |")
        else:
            lines.append(f"| {name} | {c['median_s']:.3f} | {c['range_s']} | {c['ratio']:.2f} |")
    m, e = r["menu"], r["menu_essential"]
    lines += [
        "",
        "## Menu size (`tools/list` result, compact JSON as on the 2025-11-25 wire)",
        "",
        f"All tools: {m['total']:,} characters for {m['tools']} tools ({m['per_tool_avg']:.0f} per tool, "
        f"≈ {m['total'] // 4:,} tokens at 4 characters a token — an estimate).  ",
        f"Essential preset: {e['total']:,} characters for {e['tools']} tools (≈ {e['total'] // 4:,} tokens).",
        "",
        "| Part | Characters |",
        "|---|---|",
        *(f"| {k} | {v:,} |" for k, v in m["parts"].items()),
        "",
        "| Tool | Characters |",
        "|---|---|",
        *(f"| `{k}` | {v:,} |" for k, v in m["per_tool"].items()),
        "",
        "## Import time of the server's start-up path (`python -X importtime`, cumulative)",
        "",
        "| Module | ms |",
        "|---|---|",
        *(f"| `{name}` | {us / 1000:.0f} |" for name, us in r["import_time_top_us"]),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
