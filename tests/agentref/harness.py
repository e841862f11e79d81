"""Running the reference agent from a synchronous test: in a thread (in-process) or as a subprocess.

Both runners offer the same small interface, `ListenerHarness`, which is what the conformance suite
drives. The desktop app's listener joins the suite by offering it too (see
tests/server/agent/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from .agent import Recorded, ReferenceAgent
from .script import Script

REPO_ROOT = Path(__file__).resolve().parents[2]


class ListenerHarness(Protocol):
    """What the conformance suite needs from a listener under test."""

    name: str

    def start(self, socket_path: str, script: Script) -> None:
        """Listen at `socket_path`; raise paths.UntrustedFolder when its folder is not trusted."""

    def stop(self) -> None: ...

    def set_script(self, script: Script) -> None:
        """Change the token / approval behaviour for requests from now on."""

    def answer(self, fingerprint: str, decision: str) -> bool:
        """Answer the open dialog for `fingerprint` as the person would ("approve" / "deny")."""

    def requests(self) -> list[Recorded]: ...

    def wait_for_requests(self, method: str, count: int = 1, timeout: float = 5.0) -> list[Recorded]:
        """Block until `count` requests of `method` arrived (all of them returned); raise on timeout."""


# --------------------------------------------------------------------------------------------------
# In-process: a thread with its own event loop


class AgentThread:
    """The reference agent on its own loop in a thread, so test code may block or run its own loop."""

    name = "reference"

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._changed = threading.Condition()
        self.agent: ReferenceAgent | None = None

    def start(self, socket_path: str, script: Script | None = None) -> None:
        ready = threading.Event()
        failure: list[BaseException] = []

        def on_event(event: dict[str, Any]) -> None:
            with self._changed:
                self._changed.notify_all()

        async def main() -> None:
            self._stop = asyncio.Event()
            self.agent = ReferenceAgent(socket_path, script, on_event=on_event, **self._options)
            try:
                await self.agent.start()
            except BaseException as err:
                failure.append(err)
                ready.set()
                return
            ready.set()
            await self._stop.wait()
            await self.agent.stop()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            try:
                self._loop.run_until_complete(main())
            finally:
                self._loop.close()

        self._thread = threading.Thread(target=run, name="agentref", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise TimeoutError("the reference agent did not start")
        if failure:
            self._thread.join(5)
            raise failure[0]

    def stop(self) -> None:
        if self._thread is None or self._loop is None or self._stop is None:
            return
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(10)
        self._thread = None

    def _run(self, func: Any, *args: Any) -> Any:
        assert self._loop is not None

        async def call() -> Any:
            return func(*args)

        return asyncio.run_coroutine_threadsafe(call(), self._loop).result(5)

    def set_script(self, script: Script) -> None:
        assert self.agent is not None
        agent = self.agent
        self._run(lambda: setattr(agent, "script", script))

    def answer(self, fingerprint: str, decision: str) -> bool:
        assert self.agent is not None
        return bool(self._run(self.agent.answer, fingerprint, decision))

    def requests(self) -> list[Recorded]:
        assert self.agent is not None
        return list(self.agent.requests)

    def requests_of(self, method: str) -> list[Recorded]:
        return [r for r in self.requests() if r.method == method]

    def wait_for_requests(self, method: str, count: int = 1, timeout: float = 5.0) -> list[Recorded]:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [r for r in self.requests() if r.method == method]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{count} {method} request(s) expected, {len(found)} arrived")
                self._changed.wait(min(left, 0.05))

    def __enter__(self) -> AgentThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --------------------------------------------------------------------------------------------------
# Out of process: python -m tests.agentref


class AgentProcess:
    """The reference agent as a subprocess, steered over its stdin, reporting on its stdout."""

    name = "reference-subprocess"

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._proc: subprocess.Popen[str] | None = None
        self._events: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self._reader: threading.Thread | None = None
        self._seq = 0
        self.stderr = ""

    def command(self, socket_path: str, script: Script) -> list[str]:
        cmd = [sys.executable, "-m", "tests.agentref", "--socket", socket_path]
        cmd += ["--script", json.dumps(script.to_json())]
        for key, value in self._options.items():
            cmd += [f"--{key.replace('_', '-')}", str(value)]
        return cmd

    def start(self, socket_path: str, script: Script | None = None) -> None:
        from searchdesk_server.agent import paths

        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
        self._proc = subprocess.Popen(
            self.command(socket_path, script or Script()),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
            env=env,
        )
        self._reader = threading.Thread(target=self._read, name="agentref-stdout", daemon=True)
        self._reader.start()
        try:
            self._wait(lambda e: e.get("event") in ("ready", "failed"), 20)
        except TimeoutError:
            self.stop()
            raise
        failed = [e for e in self._events if e.get("event") == "failed"]
        if failed:
            self.stop()
            error = failed[0]
            if error.get("kind") == "UntrustedFolder":
                raise paths.UntrustedFolder(error.get("message", ""))
            raise RuntimeError(f"the reference agent did not start: {error.get('message')}")

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self._changed:
                self._events.append(event)
                self._changed.notify_all()
        with self._changed:
            self._events.append({"event": "exited"})
            self._changed.notify_all()

    def _wait(self, match: Any, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for event in self._events:
                    if match(event):
                        return event
                if any(e.get("event") == "exited" for e in self._events):
                    raise RuntimeError("the reference agent exited")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the reference agent did not report in time")
                self._changed.wait(left)

    def _command(self, cmd: dict[str, Any]) -> Any:
        assert self._proc is not None and self._proc.stdin is not None
        self._seq += 1
        seq = self._seq
        self._proc.stdin.write(json.dumps({**cmd, "seq": seq}) + "\n")
        self._proc.stdin.flush()
        return self._wait(lambda e: e.get("event") == "ack" and e.get("seq") == seq, 10).get("result")

    def set_script(self, script: Script) -> None:
        self._command({"cmd": "script", "script": script.to_json()})

    def answer(self, fingerprint: str, decision: str) -> bool:
        return bool(self._command({"cmd": "answer", "fingerprint": fingerprint, "decision": decision}))

    def events(self) -> list[dict[str, Any]]:
        with self._changed:
            return list(self._events)

    def requests(self) -> list[Recorded]:
        return [
            Recorded(method=e["method"], params=e["params"], connection=e["connection"])
            for e in self.events()
            if e.get("event") == "request"
        ]

    def requests_of(self, method: str) -> list[Recorded]:
        return [r for r in self.requests() if r.method == method]

    def wait_for_requests(self, method: str, count: int = 1, timeout: float = 5.0) -> list[Recorded]:
        deadline = time.monotonic() + timeout
        while True:
            found = [r for r in self.requests() if r.method == method]
            if len(found) >= count:
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{count} {method} request(s) expected, {len(found)} arrived")
            with self._changed:
                self._changed.wait(min(left, 0.05))

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()  # EOF on stdin: the agent stops and removes its socket
        except OSError:
            pass
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stderr is not None:
            self.stderr = proc.stderr.read()
        if self._reader is not None:
            self._reader.join(5)

    def __enter__(self) -> AgentProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
