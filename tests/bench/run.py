"""`make bench`: SearchDesk measured side by side with the MCP SDK's own floor and other Search Console
MCP servers, in one run, on one machine.

Every figure in docs/performance.md comes from this script's output (the JSON it prints is the same
data the Markdown is rendered from). Runs are interleaved round by round — each round does every cold
start (in rotating order) and every scenario once — so a noisy moment on a shared machine hits all
of them alike. `--smoke` runs each of our measurements once, installs no peers and writes nothing, so
`make test` keeps the harness from rotting; it exits 1 when any of our measurements fails.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script (`python tests/bench/run.py`): make `tests` importable
    sys.path.insert(0, str(REPO))

from tests.bench import archive as archive_bench  # noqa: E402
from tests.bench import before as before_bench  # noqa: E402
from tests.bench import coverage as coverage_bench  # noqa: E402
from tests.bench import peers as peer_install  # noqa: E402
from tests.bench import report, scenarios  # noqa: E402
from tests.bench.stdio import ServerFailed, cold_start  # noqa: E402

FLOOR_SERVER = '''
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("floor")


@mcp.tool()
def ping(text: str) -> str:
    """Echo."""
    return text


mcp.run()
'''

FLOOR = "MCP SDK floor (one-tool MCPServer)"
OURS_ALL = "SearchDesk, all tools"
OURS_ESSENTIAL = "SearchDesk, essential preset"
OURS_DEMO = "SearchDesk --demo"
OURS_BEFORE = "SearchDesk, all tools, before"
#: Frozen servers `make bundle` leaves in dist/ (packaging/bundle.py): the one the .mcpb ships, and the
#: one inside the desktop app's bundle.
FROZEN = {
    "SearchDesk frozen (server-only bundle, as in the .mcpb)": Path("searchdesk-server/searchdesk-server"),
    "SearchDesk frozen (inside the app bundle)": Path("SearchDesk/searchdesk-server"),
}
PEER_START_TIMEOUT = 30.0
OUR_START_TIMEOUT = 60.0


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------------
# Cold-start targets


@dataclass
class Target:
    name: str
    kind: str  # "floor" | "ours" | "frozen" | "peer"
    command: list[str]
    env: dict[str, str]
    timeout: float = OUR_START_TIMEOUT
    about: dict[str, str] = field(default_factory=dict)  # package, version, SDK
    samples: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    error: str = ""
    tools: dict[str, Any] | None = None
    initialize: dict[str, Any] | None = None


def measure_start(target: Target, logs: Path, *, keep: bool = True) -> None:
    if target.error:
        return
    stderr = logs / f"start-{target.kind}-{len(target.samples)}-{time.monotonic_ns()}.log"
    try:
        elapsed, session = cold_start(target.command, target.env, stderr, target.timeout)
    except (ServerFailed, OSError) as exc:  # a target that fails is reported, never dropped
        target.error = f"{type(exc).__name__}: {exc}"[:300]
        return
    if keep:
        target.samples.append(elapsed)
        target.rss.append(session.peak_rss_mib)
        target.cpu.append(session.cpu_s)
    target.tools, target.initialize = session.tools, session.initialize


def summary(values: Iterable[float]) -> dict[str, float]:
    vals = list(values)
    if not vals:
        return {"median": math.nan, "min": math.nan, "max": math.nan, "n": 0}
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}


def menu_size(result: dict[str, Any]) -> dict[str, Any]:
    """Characters of the compact JSON, split into parts that add up to the total."""
    tools = result.get("tools", [])

    def compact(value: object) -> int:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))

    parts = {
        "descriptions": sum(compact(t["description"]) for t in tools if "description" in t),
        "input schemas": sum(compact(t["inputSchema"]) for t in tools if "inputSchema" in t),
        "output schemas": sum(compact(t["outputSchema"]) for t in tools if "outputSchema" in t),
        "annotations": sum(compact(t["annotations"]) for t in tools if "annotations" in t),
    }
    total = compact(result)
    parts["names, titles, keys and punctuation"] = total - sum(parts.values())
    per_tool = {
        t.get("name", "?"): {
            "total": compact(t),
            "description": compact(t.get("description", "")) if "description" in t else 0,
            "input": compact(t["inputSchema"]) if "inputSchema" in t else 0,
            "output": compact(t["outputSchema"]) if "outputSchema" in t else 0,
            "annotations": compact(t["annotations"]) if "annotations" in t else 0,
        }
        for t in tools
    }
    return {
        "total": total,
        "tools": len(tools),
        "per_tool_avg": total / max(len(tools), 1),
        "tokens_estimate": round(total / 4),
        "parts": parts,
        "per_tool": per_tool,
    }


def snapshot_frozen(folder: Path) -> dict[str, Path | str]:
    """Copy each frozen bundle from dist/ into the bench's folder and return the copied executables.

    Measured from a copy taken at the start, so a `make bundle` running beside the bench (it replaces
    dist/ wholesale) cannot change or delete what is being started. A copy that fails is a reason."""
    dist = REPO / "dist"
    out: dict[str, Path | str] = {}
    for name, rel in FROZEN.items():
        exe = dist / rel
        if not exe.is_file():
            continue
        target = folder / rel.parent.name
        try:
            shutil.copytree(dist / rel.parent, target, symlinks=True)
        except (OSError, shutil.Error) as exc:
            out[name] = f"could not copy {rel.parent}/ ({type(exc).__name__}); dist/ was changing"
            continue
        copied = target / rel.name
        out[name] = copied if os.access(copied, os.X_OK) else f"{rel} is not executable"
    return out


def _tree_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def _du_bytes(path: Path) -> int:
    """What `du` counts (allocated blocks, every file and folder once): issue 28's app-folder limit is by `du`."""
    items = [path, *path.rglob("*")] if path.is_dir() else [path]
    return sum(i.lstat().st_blocks * 512 for i in items)


def bundle_state() -> dict[str, Any]:
    """What dist/ holds: sizes on disk, the .mcpb's unpacked size, and the newest change (to notice a
    bundle rebuilt while the bench ran)."""
    import zipfile

    dist = REPO / "dist"
    if not dist.is_dir():
        return {"present": False}
    entries: dict[str, dict[str, Any]] = {}
    newest = 0.0
    for entry in sorted(dist.iterdir()):
        info: dict[str, Any] = {
            "bytes": _tree_size(entry),
            "du_bytes": _du_bytes(entry),
            "kind": "folder" if entry.is_dir() else "file",
        }
        if entry.suffix == ".mcpb" and entry.is_file():
            try:
                with zipfile.ZipFile(entry) as archive:
                    info["unpacked_bytes"] = sum(i.file_size for i in archive.infolist())
            except (OSError, zipfile.BadZipFile):
                info["unpacked_bytes"] = None
        entries[entry.name] = info
        newest = max(newest, entry.stat().st_mtime)
    return {"present": True, "entries": entries, "newest_change": newest}


# --------------------------------------------------------------------------------------------------
# The run


@dataclass
class Bench:
    runs: int
    smoke: bool
    tmp: Path
    home: Path = field(init=False)
    logs: Path = field(init=False)
    failures: list[str] = field(default_factory=list)  # ours only: peers may fail and are reported
    before: str = ""  # `--before REF`: an earlier commit started beside this tree
    before_commit: str = ""

    def __post_init__(self) -> None:
        self.home = self.tmp / "home"
        self.logs = self.tmp / "logs"
        for folder in (self.home, self.logs):
            folder.mkdir(parents=True)

    def attempt(self, what: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:
            message = f"{what}: {type(exc).__name__}: {exc}"[:400]
            log(f"FAILED {message}")
            self.failures.append(message)
            return None


def dummy_credential(folder: Path) -> Path:
    """A well-formed service-account key that no Google would accept: enough for every server to start."""
    from tests.fakegoogle.certs import make_service_account_key

    private_pem, _ = make_service_account_key()
    path = folder / "dummy-service-account.json"
    doc = {
        "type": "service_account",
        "project_id": "bench-dummy",
        "private_key_id": "0" * 40,
        "private_key": private_pem,
        "client_email": "bench@bench-dummy.iam.gserviceaccount.com",
        "client_id": "1",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    path.write_text(json.dumps(doc))
    path.chmod(0o600)
    return path


def build_targets(
    bench: Bench, credential: Path, peers: list[peer_install.Peer], frozen: dict[str, Path | str]
) -> list[Target]:
    floor = bench.tmp / "floor.py"
    floor.write_text(FLOOR_SERVER)
    base = scenarios.python_env(bench.home)
    ours = [sys.executable, "-m", "searchdesk_server"]
    sa = {"GSC_SERVICE_ACCOUNT_KEY_FILE": str(credential)}
    targets = [
        Target(FLOOR, "floor", [sys.executable, str(floor)], base),
        Target(OURS_ALL, "ours", ours, {**base, **sa}),
        Target(OURS_ESSENTIAL, "ours", ours, {**base, **sa, "GSC_ALLOW_TOOLS": "essential"}),
        Target(OURS_DEMO, "ours", [*ours, "--demo"], base),
    ]
    if bench.before_commit:
        early = {**base, **sa, "PYTHONPATH": before_bench.pythonpath(bench.tmp / "before")}
        targets.append(Target(OURS_BEFORE, "before", ours, early, about={"commit": bench.before_commit}))
    for name, exe in frozen.items():
        about = {"path": str(FROZEN[name])}
        target = Target(name, "frozen", [str(exe)], {**base, **sa}, about=about)
        if isinstance(exe, str):
            target.error = exe
        targets.append(target)
    for peer in peers:
        target = Target(
            peer.name,
            "peer",
            peer.command,
            {**base, **peer.env},
            timeout=PEER_START_TIMEOUT,
            about={"registry": peer.registry, "package": peer.package, "version": peer.version, "sdk": peer.sdk},
        )
        if peer.error:
            target.error = f"not installed: {peer.error}"
        targets.append(target)
    return targets


def run(args: argparse.Namespace) -> dict[str, Any]:
    runs = 1 if args.smoke else max(args.runs, 5)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="searchdesk-bench-") as tmp_name:
        bench = Bench(runs, args.smoke, Path(tmp_name), before=args.before or "")
        if bench.before:
            bench.before_commit = before_bench.unpack(REPO, bench.before, bench.tmp / "before")
        bundle_before = bundle_state()
        credential = dummy_credential(bench.tmp)
        peers: list[peer_install.Peer] = []
        peer_root = bench.tmp / "peers"  # outside the repository; removed with the temp folder
        if not args.smoke and not args.no_peers:
            peer_root.mkdir()
            log("installing peers into a temporary folder (PyPI, npm)")
            peers = peer_install.install_all(peer_root, credential, bench.home)
            for peer in peers:
                log(f"  {peer.name}: {peer.error or f'{peer.version} on {peer.sdk}'}")
        # Not in a smoke run: a bundle being rebuilt next to `make test` must not fail the harness's test.
        frozen = {} if bench.smoke else snapshot_frozen(bench.tmp / "frozen")
        targets = build_targets(bench, credential, peers, frozen)
        result = measure(bench, targets)
        shutil.rmtree(peer_root, ignore_errors=True)
    result["peers_removed"] = not peer_root.exists()
    result["bundle"] = {**bundle_before, "changed_during_run": bundle_state() != bundle_before}
    result["duration_s"] = time.perf_counter() - started
    result["failures"] = bench.failures
    return result


def measure(bench: Bench, targets: list[Target]) -> dict[str, Any]:
    google = scenarios.Google(bench.tmp / "fake")
    agent = scenarios.Agent()
    ours = [sys.executable, "-m", "searchdesk_server"]
    env = google.env(bench.home)
    body = scenarios.analytics_body()
    analytics: list[dict[str, Any]] = []
    in_process: list[dict[str, Any]] = []
    batches: list[dict[str, Any]] = []
    approvals: list[list[scenarios.ApprovalSample] | None] = []
    imports: list[dict[str, Any]] = []
    py_env = scenarios.python_env(bench.home)
    desktop = [before_bench.DesktopImport("now", {**py_env, "QT_QPA_PLATFORM": "offscreen"})]
    if bench.before_commit:
        early = {**py_env, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": before_bench.pythonpath(bench.tmp / "before")}
        desktop.append(before_bench.DesktopImport("before", early))
    for start in desktop:
        start.measure(keep=False)
    try:
        if not bench.smoke:
            log("warm-up start of every server (not counted)")
            for target in targets:
                measure_start(target, bench.logs, keep=False)
        for round_no in range(bench.runs):
            log(f"round {round_no + 1} of {bench.runs}")
            shift = round_no % len(targets)
            for target in targets[shift:] + targets[:shift]:
                measure_start(target, bench.logs)
            for start in desktop if round_no % 2 else desktop[::-1]:
                start.measure()
            imports.append(bench.attempt("import time", lambda: scenarios.import_profile(ours[0], py_env, str(REPO))))
            analytics.append(
                bench.attempt(
                    "25,000-row analytics", lambda: scenarios.analytics_run(google, ours, env, body, bench.logs)
                )
            )
            in_process.append(bench.attempt("in-process analytics", lambda: scenarios.analytics_in_process(body)))
            batches.append(
                bench.attempt("inspect_urls × 20", lambda: scenarios.batch_run(google, ours, env, bench.logs))
            )
            approvals.append(
                bench.attempt("approval", lambda: scenarios.approval_run(google, agent, ours, env, bench.logs))
            )
        log("inspect_urls at a 429, and a profile of the 25,000-row answer")
        transient = bench.attempt(
            "inspect_urls with one 429",
            lambda: scenarios.batch_run(google, ours, env, bench.logs, fail=lambda n: n == 8),
        )
        persistent = bench.attempt(
            "inspect_urls with 429 from the 8th request on",
            lambda: scenarios.batch_run(google, ours, env, bench.logs, fail=lambda n: n >= 8),
        )
        profile = bench.attempt("profile", lambda: scenarios.analytics_in_process(body, profile=True))
    finally:
        agent.close()
        google.close()
    for target in targets:
        if target.kind in ("ours", "floor") and target.error:  # peers and bundles are reported, not fatal
            bench.failures.append(f"cold start of {target.name}: {target.error}")
    result = assemble(
        bench, targets, analytics, in_process, batches, approvals, imports, transient, persistent, profile
    )
    result["before"] = _before(bench, targets, desktop)
    return result


def _before(bench: Bench, targets: list[Target], desktop: list[before_bench.DesktopImport]) -> dict[str, Any]:
    """The start-ups of `--before REF` beside this tree's, paired by round (empty without `--before`)."""
    if not bench.before_commit:
        return {}
    server = {t.name: t for t in targets}
    now, early = desktop
    pairs = {
        "the server (spawn → tools/list)": (server[OURS_ALL].samples, server[OURS_BEFORE].samples),
        "the app (its start-up imports)": (now.wall, early.wall),
        "the app's CPU for those imports": (now.cpu, early.cpu),
    }
    errors = [f"{t.name}: {t.error}" for t in (server[OURS_ALL], server[OURS_BEFORE]) if t.error]
    errors += [f"the app's imports, {d.name}: {d.error}" for d in desktop if d.error]
    bench.failures += errors
    return {
        "ref": bench.before,
        "commit": bench.before_commit,
        "rounds": bench.runs,
        "pairs": {
            what: {"now": summary(n), "before": summary(b), "ratio": before_bench.paired(n, b)}
            for what, (n, b) in pairs.items()
        },
        "errors": errors,
    }


def _ok(items: list[Any]) -> list[Any]:
    return [i for i in items if i is not None]


def assemble(
    bench: Bench,
    targets: list[Target],
    analytics: list[Any],
    in_process: list[Any],
    batches: list[Any],
    approvals: list[Any],
    imports: list[Any],
    transient: Any,
    persistent: Any,
    profile: Any,
) -> dict[str, Any]:
    floor = next(t for t in targets if t.kind == "floor")
    floor_median = statistics.median(floor.samples) if floor.samples else math.nan
    cold: dict[str, Any] = {}
    menus: dict[str, Any] = {}
    for t in targets:
        s = summary(t.samples)
        # Paired by round: each start against the floor's start of the same round, seconds apart, so a
        # load that drifts over the run cancels out better than in a ratio of medians.
        ratios = summary(x / f for x, f in zip(t.samples, floor.samples, strict=False))
        cold[t.name] = {
            "kind": t.kind,
            **{f"{k}_s" if k != "n" else k: v for k, v in s.items()},
            "ratio_to_floor": ratios["median"],
            "ratio_min": ratios["min"],
            "ratio_max": ratios["max"],
            "ratio_of_medians": s["median"] / floor_median if t.samples else math.nan,
            "cpu_s": summary(t.cpu),
            "cpu_ratio": summary(x / f for x, f in zip(t.cpu, floor.cpu, strict=False) if f > 0),
            "cpu_samples_s": t.cpu,
            "rss_after_list_mib": summary(t.rss)["median"],
            "error": t.error,
            "about": t.about,
            "protocol": (t.initialize or {}).get("protocolVersion", ""),
            "server_info": (t.initialize or {}).get("serverInfo", {}),
            "samples_s": t.samples,
        }
        if t.tools is not None and t.name != FLOOR and t.kind != "before":
            menus[t.name] = menu_size(t.tools)
    fields = ("wall_s", "cpu_s", "first_call_wall_s", "first_call_cpu_s", "rss_after_list_mib", "rss_after_call_mib")
    a_ok = _ok(analytics)
    analytics_out: dict[str, Any] = {"runs": len(a_ok), "samples": a_ok}
    for key in fields:
        analytics_out[key] = summary(r[key] for r in a_ok)
    for key in ("google_bytes", "text_bytes", "structured_bytes", "message_bytes", "rows_shown"):
        analytics_out[key] = a_ok[-1][key] if a_ok else None
    ip_ok = _ok(in_process)
    analytics_out["in_process"] = {
        key: summary(r[key] for r in ip_ok) for key in ("tool_s", "to_result_s", "sdk_dump_s", "total_s")
    }
    analytics_out["profile"] = profile.get("profile") if profile else None
    b_ok = _ok(batches)
    batch_out: dict[str, Any] = {
        "runs": len(b_ok),
        "wall_s": summary(r["wall_s"] for r in b_ok),
        "max_in_flight": max((r["max_in_flight"] for r in b_ok), default=None),
        "requests": summary(r["requests"] for r in b_ok),
        "peak_per_minute": max((r["peak_per_minute"] for r in b_ok), default=None),
        "statuses": b_ok[-1]["statuses"] if b_ok else {},
        "latency_s": scenarios.BATCH_LATENCY,
        "urls": len(scenarios.BATCH_URLS),
        "at_429": {"one 429 (8th request)": transient, "429 from the 8th request on": persistent},
    }
    pairs: list[list[scenarios.ApprovalSample]] = _ok(approvals)
    approval_out: dict[str, Any] = {"runs": len(pairs)}
    for label, index in (("first", 0), ("second", 1)):
        ap = [p[index] for p in pairs]
        approval_out[label] = {
            "delete_s": summary(a.delete_s for a in ap),
            "submit_s": summary(a.submit_s for a in ap),
            "added_s": summary(a.delete_s - a.submit_s for a in ap),
            "agent_first_s": summary(a.agent_first_s for a in ap),
            "agent_answer_s": summary(a.agent_answer_s for a in ap),
            "google_after_answer_s": summary(a.google_after_answer_s for a in ap),
            "round_trip_s": summary(a.agent_answer_s + a.google_after_answer_s for a in ap),
            "agent_methods": ap[-1].methods if ap else [],
        }
    approval_out["samples"] = [[asdict(a) for a in p] for p in pairs]
    imp_ok = _ok(imports)
    out = {
        "smoke": bench.smoke,
        "runs": bench.runs,
        **report.environment(),
        "cold_start": cold,
        "menu": menus,
        "import_time": scenarios.median_import_profile(imp_ok) if imp_ok else None,
        "analytics": analytics_out,
        "batch": batch_out,
        "approval": approval_out,
        # The archive's figures (issue 28): its 20-million-row fixture is built once and kept, so not in a smoke run.
        "archive": None if bench.smoke else archive_bench.measure(max(bench.runs, 5), log),
        # The coverage watch's figures (issue 37): its 100,000-page fixture is built once and kept, as the archive's.
        "coverage": None if bench.smoke else coverage_bench.measure(max(bench.runs, 5), log),
        # The sitemap reader (a 50 MB file from a website on loopback) and the idle watcher (issue 37); a smoke
        # run reads the file once and watches the idle thread for 2 s.
        "coverage_reader": {
            "sitemap": coverage_bench.measure_sitemap(1 if bench.smoke else max(bench.runs, 5)),
            "idle": coverage_bench.measure_idle(2.0 if bench.smoke else 15.0),
        },
    }
    out["targets"] = report.targets(out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--runs", type=int, default=11, help="interleaved rounds (at least 5 unless --smoke)")
    ap.add_argument("--smoke", action="store_true", help="one round of our own measurements; no peers; write nothing")
    ap.add_argument("--no-peers", action="store_true", help="skip installing the other servers")
    ap.add_argument("--write", type=Path, help="write the Markdown report here")
    ap.add_argument("--before", metavar="REF", help="also start this earlier commit's server and app, side by side")
    args = ap.parse_args(argv)
    from searchdesk_server import sqlite_memory

    # As the server's main does, before any file is opened: the archive's reads are measured in this process.
    sqlite_memory.statistics_off()
    if args.smoke and args.write:
        ap.error("--smoke never writes the report")
    result = run(args)
    print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    if result["failures"]:
        log(f"{len(result['failures'])} of our measurements failed; not writing the report")
        for failure in result["failures"]:
            log(f"  {failure}")
        return 1
    if args.write:
        args.write.write_text(report.render(result), encoding="utf-8")
        log(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
