"""python -m tests.agentref --socket PATH [--script JSON|@FILE] [--max-connections N] ...

Runs the reference agent as its own process (for tests that start a real server beside it).

stdout, one JSON object a line: {"event": "ready", "socket", "pid"} once listening, or
{"event": "failed", "kind", "message"} (exit 2); then {"event": "request", "method", "params",
"connection"} for every request, and "dialog" / "answer" / "cancel" / "refused_peer" / "ack" events.

stdin, one JSON object a line: {"cmd": "answer", "fingerprint", "decision", "seq"},
{"cmd": "script", "script": {...}, "seq"}, {"cmd": "stop"}. Each is acknowledged with
{"event": "ack", "seq", "result"}. End of stdin stops the agent (so it never outlives its test):
start it with stdin=PIPE, and close stdin (or send "stop", or SIGTERM) to stop it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from .agent import ReferenceAgent
from .script import Script


def _emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _script(value: str | None) -> Script:
    if not value:
        return Script()
    text = Path(value[1:]).read_text(encoding="utf-8") if value.startswith("@") else value
    return Script.from_json(json.loads(text))


async def _main(args: argparse.Namespace) -> int:
    agent = ReferenceAgent(
        args.socket,
        _script(args.script),
        max_connections=args.max_connections,
        max_pending=args.max_pending,
        max_in_flight=args.max_in_flight,
        line_timeout=args.line_timeout,
        on_event=_emit,
    )
    try:
        await agent.start()
    except Exception as err:
        _emit({"event": "failed", "kind": type(err).__name__, "message": str(err)})
        return 2
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)

    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    async def commands() -> None:
        while line := await reader.readline():
            try:
                cmd = json.loads(line)
            except ValueError:
                continue
            result: Any = None
            if cmd.get("cmd") == "answer":
                result = agent.answer(cmd["fingerprint"], cmd["decision"])
            elif cmd.get("cmd") == "script":
                agent.script = Script.from_json(cmd["script"])
            elif cmd.get("cmd") == "stop":
                _emit({"event": "ack", "seq": cmd.get("seq"), "result": True})
                break
            _emit({"event": "ack", "seq": cmd.get("seq"), "result": result})
        stop.set()

    task = loop.create_task(commands())
    _emit({"event": "ready", "socket": args.socket, "pid": os.getpid()})
    await stop.wait()
    task.cancel()
    await agent.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.agentref", description=__doc__.splitlines()[2])
    parser.add_argument("--socket", required=True, help="the socket path to listen at")
    parser.add_argument("--script", help="the Script as JSON, or @FILE holding it")
    parser.add_argument("--max-connections", type=int, default=256)
    parser.add_argument("--max-pending", type=int, default=32)
    parser.add_argument("--max-in-flight", type=int, default=32)
    parser.add_argument("--line-timeout", type=float, default=30.0)
    return asyncio.run(_main(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
