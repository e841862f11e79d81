"""A bare stdio MCP client for the benchmarks: newline-delimited JSON-RPC, nothing in between.

Bare on purpose: the SDK's own client would add its own start-up and validation to every figure,
and the peers run other SDK versions. A reader thread turns stdout into a queue so every wait has a
timeout (a peer that hangs is reported, never waited on forever). The process's own counters —
CPU time and peak RSS — are read from /proc, so they measure the server alone, not this client.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PROTOCOL = "2025-11-25"
CLIENT_INFO = {"name": "searchdesk-bench", "version": "1"}
CLOCK_TICK = os.sysconf("SC_CLK_TCK")


class ServerFailed(RuntimeError):
    """The server exited, answered with an error, or did not answer in time."""


class StdioSession:
    """One server process spoken to over stdio (the 2025-11-25 handshake)."""

    def __init__(self, command: Sequence[str], env: dict[str, str], *, cwd: str | None = None, stderr: Path) -> None:
        self.started = time.perf_counter()
        self._stderr_path = stderr
        self._stderr = stderr.open("wb")
        self.proc = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=cwd,
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._ids = iter(range(1, 1_000_000))
        self.initialize_result: dict[str, Any] = {}
        threading.Thread(target=self._read, name="bench-stdout", daemon=True).start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise ServerFailed(f"the server closed its stdin ({type(exc).__name__}){self._why()}") from None

    def _why(self) -> str:
        """The last line the server wrote to stderr, to say why it failed (peers explain themselves there)."""
        with contextlib.suppress(OSError):
            self._stderr.flush()
            tail = [ln for ln in self._stderr_path.read_text(errors="replace").splitlines() if ln.strip()]
            if tail:
                return f"; its stderr ends: {tail[-1].strip()[:160]}"
        return ""

    def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 60.0) -> Response:
        """Send one request and wait for its answer; server-to-client requests get a polite error."""
        rid = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        sent = time.perf_counter()
        self._send(message)
        deadline = sent + timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise ServerFailed(f"no answer to {method} within {timeout:.0f} s{self._why()}")
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                code = self.proc.poll()
                raise ServerFailed(f"the server closed stdout before answering {method} (exit {code}){self._why()}")
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # not ours to judge here; a real client would log it
            if msg.get("id") == rid and "method" not in msg:
                elapsed = time.perf_counter() - sent
                if "error" in msg:
                    raise ServerFailed(f"{method} failed: {json.dumps(msg['error'])[:200]}")
                return Response(elapsed, msg["result"], len(line.rstrip(b"\n")), time.perf_counter())
            if "method" in msg and "id" in msg:  # the server asks us something: we offer nothing
                self._send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "not offered"}})

    def initialize(self, *, timeout: float = 60.0) -> dict[str, Any]:
        params = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": CLIENT_INFO}
        self.initialize_result = self.request("initialize", params, timeout=timeout).result
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self.initialize_result

    def list_tools(self, *, timeout: float = 60.0) -> Response:
        return self.request("tools/list", {}, timeout=timeout)

    def call_tool(self, name: str, arguments: dict[str, Any], *, timeout: float = 120.0) -> Response:
        return self.request("tools/call", {"name": name, "arguments": arguments}, timeout=timeout)

    # -- the process's own counters -------------------------------------------------------------------

    def cpu_seconds(self) -> float:
        """utime + stime of the whole process, every thread, exited ones included (clock-tick resolution)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICK

    def cpu_since(self, earlier: float) -> float:
        """CPU seconds since `earlier` (a `cpu_seconds()` reading), as a whole number of clock ticks:
        the difference of two tick counts each divided by CLOCK_TICK carries float noise (1.35 - 1.23
        is 0.12000000000000011), and a verdict against a limit must not turn on it."""
        return round((self.cpu_seconds() - earlier) * CLOCK_TICK) / CLOCK_TICK

    def peak_rss_mib(self) -> float:
        """VmHWM: the most resident memory the process has had so far."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise ServerFailed("no VmHWM in /proc status")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._stderr.close()

    def __enter__(self) -> StdioSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Response:
    __slots__ = ("elapsed", "line_bytes", "received", "result")

    def __init__(self, elapsed: float, result: dict[str, Any], line_bytes: int, received: float) -> None:
        self.elapsed = elapsed
        self.result = result
        self.line_bytes = line_bytes
        self.received = received


def cold_start(command: Sequence[str], env: dict[str, str], stderr: Path, timeout: float) -> tuple[float, Session]:
    """Spawn → `tools/list` answered: (seconds, what was learned). The process is ended afterwards."""
    with StdioSession(command, env, stderr=stderr) as session:
        start = session.started
        session.initialize(timeout=timeout)
        listed = session.list_tools(timeout=max(1.0, timeout - (time.perf_counter() - start)))
        elapsed = listed.received - start
        return elapsed, Session(session.initialize_result, listed.result, session.peak_rss_mib(), session.cpu_seconds())


class Session:
    """What one cold start taught us besides its time: the answers, peak RSS, and the CPU the process
    used to get there (nearly independent of other load on the machine, unlike the wall time)."""

    __slots__ = ("cpu_s", "initialize", "peak_rss_mib", "tools")

    def __init__(self, initialize: dict[str, Any], tools: dict[str, Any], peak_rss_mib: float, cpu_s: float) -> None:
        self.initialize = initialize
        self.tools = tools
        self.peak_rss_mib = peak_rss_mib
        self.cpu_s = cpu_s
