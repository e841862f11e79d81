"""The security suite's set-up: planted secrets, the witness that looks for them, and ways to run a server.

Secrets are planted once for the whole session: an OAuth client (id, secret, refresh token) and a
service-account key whose values no redactor would recognise by shape, so only "never echoed" can
keep them out of what we see. Every fake Google of this suite accepts exactly these credentials, and
every server here runs with them. The witness checks each thing a test saw (tool results, stdout,
stderr, exception messages, /proc/<pid>/environ of servers and their children) against the planted
values and every access token the fakes handed out; each test fails on its own leak, and the session
fails at its end if any leak was seen at all.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, settings
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.agentref.fixtures import agent_folder, agent_socket, reference_agent  # noqa: F401
from tests.fakegoogle import FakeGoogle
from tests.fakegoogle.backend import OAuthClient
from tests.server.stdio import DEMO_TODAY, REPO

NO_AGENT = tempfile.mkdtemp(prefix="sd-sec-none-")

#: SEARCHDESK_FUZZ=1 explores new examples on every run (and SD_EXAMPLES=n sets how many); by default
#: the examples are derived from each test's name, so a CI run is repeatable and its failures reproduce.
FUZZ = os.environ.get("SEARCHDESK_FUZZ", "") == "1"
EXAMPLES = int(os.environ.get("SD_EXAMPLES", "200"))
settings.register_profile(
    "security",
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=not FUZZ,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
PROPERTY_SETTINGS = settings.get_profile("security")


# --------------------------------------------------------------------------------------------------
# Planted secrets


@dataclass(frozen=True)
class Planted:
    """Recognisable credentials for the session; none of them matches a credential shape on purpose."""

    client_id: str
    client_secret: str
    refresh_token: str
    key_id: str

    def service_account_info(self, fake: FakeGoogle) -> dict[str, str]:
        return {**fake.service_account_info, "private_key_id": self.key_id}

    def oauth_env(self) -> dict[str, str]:
        return {
            "GSC_CLIENT_ID": self.client_id,
            "GSC_CLIENT_SECRET": self.client_secret,
            "GSC_REFRESH_TOKEN": self.refresh_token,
        }

    def service_account_env(self, fake: FakeGoogle) -> dict[str, str]:
        return {"GSC_SERVICE_ACCOUNT_KEY": json.dumps(self.service_account_info(fake))}

    def needles(self, fake: FakeGoogle | None = None) -> dict[str, str]:
        """The secret values. The client id is not one (OAuth shows it to anyone at sign-in; Google's
        token endpoint may quote it), so only the process environment is checked for it."""
        found = {
            "client secret": self.client_secret,
            "refresh token": self.refresh_token,
            "private key id": self.key_id,
        }
        if fake is not None:
            body = "".join(
                line for line in fake.service_account_info["private_key"].splitlines() if "-----" not in line
            )
            for i, start in enumerate((40, len(body) // 2, len(body) - 80)):
                found[f"private key slice {i}"] = body[start : start + 32]
        return found


def _plant() -> Planted:
    tag = secrets.token_hex(6)
    return Planted(
        client_id=f"sdplant{tag}-client.apps.example",
        client_secret=f"sdplant{tag}-clientsecret-{secrets.token_hex(12)}",
        refresh_token=f"sdplant{tag}-refreshtoken-{secrets.token_hex(24)}",
        key_id=f"sdplant{tag}keyid{secrets.token_hex(14)}",
    )


# --------------------------------------------------------------------------------------------------
# The witness


@dataclass
class Witness:
    planted: Planted
    fakes: list[FakeGoogle] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    expected: set[str] = field(default_factory=set)
    _tokens: set[str] = field(default_factory=set)
    _read: dict[int, tuple[int, int]] = field(default_factory=dict)  # id(fake) -> (log entries, tokens) read

    def needles(self) -> dict[str, str]:
        found = dict(self.planted.needles(self.fakes[0] if self.fakes else None))
        found.update(self.extra)
        for fake in self.fakes:  # every access token any fake handed out or was shown, read incrementally
            backend = fake.backend
            with backend._lock:
                seen_log, seen_tokens = self._read.get(id(fake), (0, 0))
                self._tokens.update(e.token for e in backend.log[seen_log:] if e.token)
                if len(backend.tokens) != seen_tokens:
                    self._tokens.update(backend.tokens)
                self._read[id(fake)] = (len(backend.log), len(backend.tokens))
        for token in self._tokens:
            found[f"access token {token[:12]}…"] = token
        return found

    def expect(self, *channels: str) -> None:
        """A test promises to show these channels to the witness (checked at the end of the session)."""
        self.expected.update(channels)

    def secret(self, name: str, value: str) -> None:
        self.extra[name] = value

    def saw(self, channel: str, text: str | bytes, where: str = "") -> None:
        """Check one thing a test saw; the channel (results, stdout, …) is counted for the report."""
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        self.counts[channel] = self.counts.get(channel, 0) + 1
        for name, needle in self.needles().items():
            if needle and needle in text:
                self.violations.append(f"the {name} appeared in {channel}{f' ({where})' if where else ''}")

    def saw_result(self, result: Any, where: str = "") -> None:
        for block in getattr(result, "content", None) or []:
            if getattr(block, "type", "") == "text":
                self.saw("tool results", block.text, where)
        structured = getattr(result, "structured_content", None)
        if structured is not None:
            self.saw("tool results", json.dumps(structured, ensure_ascii=False), where)

    def saw_exception(self, exc: BaseException, where: str = "") -> None:
        for part in _leaves(exc):
            self.saw("exception messages", f"{type(part).__name__}: {part}", where)

    def saw_environ(self, pid: int, where: str = "") -> bool:
        try:
            raw = Path(f"/proc/{pid}/environ").read_bytes()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            return False
        self.saw("/proc/<pid>/environ", raw, where)
        if self.planted.client_id.encode() in raw:
            self.violations.append(f"the client id (GSC_CLIENT_ID) appeared in /proc/<pid>/environ ({where})")
        return True


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


@pytest.fixture(scope="session")
def planted() -> Planted:
    return _plant()


@pytest.fixture(scope="session")
def witness(planted: Planted) -> Iterator[Witness]:
    w = Witness(planted)
    yield w
    report = os.environ.get("SD_SECURITY_REPORT")
    if report:  # the figures for a closing note: what was looked at, per worker
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(f"{report}.{worker}.json").write_text(json.dumps(w.counts, indent=1, sort_keys=True))
    assert not w.violations, "planted secrets leaked:\n" + "\n".join(sorted(set(w.violations)))
    unseen = sorted(c for c in w.expected if not w.counts.get(c))
    assert not unseen, f"channels a test promised to show the witness were never shown: {unseen}"


@pytest.fixture(autouse=True)
def _no_leak_in_this_test(witness: Witness) -> Iterator[None]:
    before = len(witness.violations)
    yield
    leaked = witness.violations[before:]
    assert not leaked, "planted secrets leaked:\n" + "\n".join(sorted(set(leaked)))


# --------------------------------------------------------------------------------------------------
# The fake Google, accepting only the planted credentials


def plant_into(fake: FakeGoogle, planted: Planted) -> FakeGoogle:
    fake.backend.oauth = OAuthClient(planted.client_id, planted.client_secret, planted.refresh_token)
    fake.oauth_info = {
        "client_id": planted.client_id,
        "client_secret": planted.client_secret,
        "refresh_token": planted.refresh_token,
    }
    fake.backend.service_account_kid = planted.key_id
    fake.service_account_info["private_key_id"] = planted.key_id
    return fake


def new_fake(folder: Path, planted: Planted, witness: Witness, **kwargs: Any) -> FakeGoogle:
    fake = plant_into(FakeGoogle(folder, **kwargs), planted)
    witness.fakes.append(fake)
    return fake


def sent_nowhere_else(fake: FakeGoogle, planted: Planted) -> None:
    """The refresh token, client secret and key are sent to the token endpoint or nowhere."""
    needles = planted.needles(fake)
    for entry in fake.log:
        if entry.host == "oauth2.googleapis.com":
            continue
        sent = f"{entry.path}?{entry.query} {entry.token} ".encode() + entry.body
        leaked = [name for name, needle in needles.items() if needle.encode() in sent]
        assert not leaked, f"{leaked} sent to {entry.host}{entry.path}"


@pytest.fixture
def fake(tmp_path: Path, planted: Planted, witness: Witness) -> Iterator[FakeGoogle]:
    fake = new_fake(tmp_path / "fake", planted, witness)
    try:
        yield fake
    finally:
        fake.close()
    sent_nowhere_else(fake, planted)


# --------------------------------------------------------------------------------------------------
# Servers


def base_env(fake: FakeGoogle, home: Path, socket: str | None = None) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "SEARCHDESK_DEMO_TODAY": DEMO_TODAY,
        "SEARCHDESK_AGENT_SOCKET": socket or os.path.join(NO_AGENT, "agent.sock"),
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
        **fake.env,
    }


def children_of(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry))
    return out


def tree(pid: int) -> list[int]:
    """`pid` and all its descendants."""
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(children_of(current))
    return out


async def server_pid(tag: str, timeout: float = 10.0) -> int:
    """The server subprocess (a direct child: the SDK starts it) whose environment carries `tag`.

    Waits for it: with the 2026-07-28 protocol the client is ready before the child has even exec'd.
    """
    needle = f"SD_SECURITY_TAG={tag}".encode()
    deadline = time.monotonic() + timeout
    while True:
        for pid in children_of(os.getpid()):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"searchdesk_server" in cmdline and needle in environ:
                return pid
        if time.monotonic() > deadline:
            raise AssertionError("the server subprocess was not found")
        await anyio.sleep(0.02)


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@dataclass
class Served:
    """A running server subprocess: its client, its pid, and where its stderr goes."""

    client: Client
    pid: int
    stderr_path: Path

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


@asynccontextmanager
async def serve(
    fake: FakeGoogle,
    witness: Witness,
    home: Path,
    env: Mapping[str, str],
    *,
    socket: str | None = None,
    mode: str = "legacy",
    args: tuple[str, ...] = (),
    **client_kw: Any,
) -> AsyncIterator[Served]:
    """A real stdio server reaching the fake over the proxy path; stderr and environ go to the witness.
    `args` follow `-m searchdesk_server` (`--demo`: the demo started by hand)."""
    home.mkdir(parents=True, exist_ok=True)
    tag = secrets.token_hex(6)
    full_env = {**base_env(fake, home, socket), **env, "SD_SECURITY_TAG": tag}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "searchdesk_server", *args], env=full_env, cwd=REPO
    )
    stderr_path = home / f"stderr-{tag}.txt"
    with open(stderr_path, "w+", encoding="utf-8") as errlog:
        try:
            async with Client(
                stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=90, **client_kw
            ) as client:
                pid = await server_pid(tag)
                served = Served(client, pid, stderr_path)
                yield served
                # Read once the test has used it (it scrubs its environment while starting up).
                for p in tree(pid):
                    witness.saw_environ(p, "server, after its calls")
        finally:
            errlog.flush()
            witness.saw("stderr", stderr_path.read_bytes(), "server")


@pytest.fixture
def folder(agent_folder: Path) -> Path:  # noqa: F811 (the imported fixture, asked for by name)
    """A short folder of the test's own for the app's socket (socket paths are limited to about 100 bytes)."""
    return agent_folder
