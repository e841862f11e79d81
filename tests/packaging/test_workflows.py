"""The GitHub workflows stay hardened and keep one build path (issue 27), checked without GitHub.

actionlint and zizmor (make lint) check the workflows against GitHub's rules; this checks the project's
own: every action pinned to a full commit with its tag beside it, no pull_request_target, a read-only
token at the top, secrets only in a signing step's `env:` (the Google OAuth client, a build input, in a
build step's), no expression in a script (event text goes through `env:`), and every script calling a
packaging/ script, make, or `bash .ci/run`: nothing is built only in YAML.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
NAMES = ["ci.yml", "release.yml", "update-manifest.yml"]

PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<action>[^@\s]+)@(?P<ref>\S+)(?P<rest>.*)$")
SHA = re.compile(r"[0-9a-f]{40}")
TAG_COMMENT = re.compile(r"^\s+#\s*v\d+(\.\d+)*\s*$")
#: What a script line may run: a packaging/ script (python or bash), make, or .ci/run.
ALLOWED_RUN = re.compile(
    r"^(?:(?:python3?|\.venv/(?:bin|Scripts)/python(?:\.exe)?)\s+packaging/\S+\.py|bash\s+packaging/\S+\.sh"
    r"|bash\s+\.ci/run|make(?:\s+[\w-]+)*)(?:\s|$)"
)
SECRET = re.compile(r"\$\{\{\s*secrets\.(\w+)\s*\}\}")
#: A build input, not a signing credential: each system's build step may have it.
BUILD_SECRETS = {"GOOGLE_OAUTH_CLIENT_JSON"}


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path.name} is not a mapping"
    return data


def triggers(data: dict[Any, Any]) -> set[str]:
    on = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` as True
    if isinstance(on, str):
        return {on}
    return set(on or ())


def problems(path: Path) -> list[str]:
    """Every way `path` breaks the rules above, one sentence each."""
    text = path.read_text(encoding="utf-8")
    data = load(path)
    found: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        match = PINNED.match(line)
        if not match or match["action"].startswith("./"):
            continue
        if not SHA.fullmatch(match["ref"]):
            found.append(f"line {number}: {match['action']}@{match['ref']} is not pinned to a 40-hex commit")
        elif not TAG_COMMENT.match(match["rest"]):
            found.append(f"line {number}: {match['action']} has no tag comment (# vX.Y.Z) beside its commit")
    if "pull_request_target" in triggers(data):
        found.append("pull_request_target is a trigger (it runs with secrets on others' code)")
    if data.get("permissions") != {"contents": "read"}:
        found.append(f"top-level permissions are {data.get('permissions')!r}, not {{contents: read}}")
    for where in ("env",):
        if SECRET.search(str(data.get(where, ""))):
            found.append("a secret is in the workflow's own env (every step would see it)")
    for job_name, job in (data.get("jobs") or {}).items():
        if SECRET.search(yaml.safe_dump({k: v for k, v in job.items() if k != "steps"})):
            found.append(f"job {job_name}: a secret outside its steps")
        for index, step in enumerate(job.get("steps") or []):
            label = f"job {job_name}, step {step.get('name') or step.get('uses') or index}"
            outside_env = yaml.safe_dump({k: v for k, v in step.items() if k != "env"})
            if SECRET.search(outside_env):
                found.append(f"{label}: a secret outside the step's env")
            used = set(SECRET.findall(yaml.safe_dump(step.get("env") or {})))
            signs = "sign" in str(step.get("name", "")).lower()
            if used - BUILD_SECRETS and not signs:
                found.append(f"{label}: secrets {sorted(used - BUILD_SECRETS)} in a step that does not sign")
            script = step.get("run")
            if script is None:
                continue
            if "${{" in script:
                found.append(f"{label}: an expression inside the script (pass it through env:)")
            for raw in str(script).splitlines():
                line = raw.strip()
                if line and not line.startswith("#") and not ALLOWED_RUN.match(line):
                    found.append(f"{label}: runs {line!r}, not a packaging/ script, make or bash .ci/run")
    return found


@pytest.mark.parametrize("name", NAMES)
def test_the_workflow_is_hardened_and_builds_only_through_scripts(name: str) -> None:
    assert problems(WORKFLOWS / name) == []


@pytest.mark.parametrize("name", NAMES)
def test_every_job_that_writes_says_so_itself(name: str) -> None:
    """Write access is granted per job, never at the top (checked above), and each such job names it."""
    for job_name, job in load(WORKFLOWS / name)["jobs"].items():
        perms = job.get("permissions", {})
        assert isinstance(perms, dict), f"{job_name}: permissions must be a mapping, not {perms!r}"
        assert set(perms.values()) <= {"read", "write", "none"}, job_name


#: Runner images GitHub has retired or announced it will stop running, with where it says so: a job on one
#: would never start (or stop starting) on the first tag.
RETIRED_RUNNERS = {
    "macos-12": "actions/runner-images#10721",
    "macos-13": "actions/runner-images#13046: fully unsupported by December 4th (2025)",
    "macos-14": "actions/runner-images#13518: fully unsupported by November 2nd (2026)",
    "macos-14-xlarge": "actions/runner-images#13518",
    "macos-14-large": "actions/runner-images#13518",
}
#: What the macOS release job runs on: macOS 15 on Apple silicon (actions/runner-images, README.md at commit
#: 148c0a4acb53bb2c7c853446a290aec86b61d3c3), and the stored readme of that image its comment cites.
MACOS_RUNNER = "macos-15"
MACOS_README = re.compile(r"images/macos/macos-15-arm64-Readme\.md at commit\s+#?\s*[0-9a-f]{40}")


def runner_labels(data: dict[Any, Any]) -> dict[str, list[str]]:
    """job -> the runner labels it may run on (a `${{ matrix.os }}` expanded from the matrix's `include`)."""
    found: dict[str, list[str]] = {}
    for job_name, job in data["jobs"].items():
        runs_on = str(job.get("runs-on", ""))
        if "matrix.os" in runs_on:
            include = job.get("strategy", {}).get("matrix", {}).get("include", [])
            found[job_name] = [str(row["os"]) for row in include]
        else:
            found[job_name] = [runs_on]
    return found


@pytest.mark.parametrize("name", NAMES)
def test_no_job_runs_on_a_retired_runner_image(name: str) -> None:
    retired = {
        f"{job}: {label}": RETIRED_RUNNERS[label]
        for job, labels in runner_labels(load(WORKFLOWS / name)).items()
        for label in labels
        if label in RETIRED_RUNNERS
    }
    assert not retired, f"jobs on a runner image GitHub retires: {retired}"


def test_the_macos_release_job_runs_on_apple_silicon_and_cites_that_images_readme() -> None:
    """The macOS build is for Apple silicon only, so its runner is the arm64 macOS 15 image, and the comment
    listing the tools the job starts cites that image's readme (not another image's)."""
    assert runner_labels(load(WORKFLOWS / "release.yml"))["macos"] == [MACOS_RUNNER]
    text = (WORKFLOWS / "release.yml").read_text(encoding="utf-8")
    macos_job = text.split("\n  macos:\n", 1)[1].split("\n  windows:\n", 1)[0]
    assert MACOS_README.search(re.sub(r"\n\s*#", " ", macos_job)), "cite the macos-15-arm64 readme and its commit"
    assert "macos-14-arm64-Readme" not in macos_job


def test_one_commit_per_action_everywhere() -> None:
    """The same action is pinned to the same commit in both workflows (one table in the closing note)."""
    seen: dict[str, set[str]] = {}
    for name in NAMES:
        for line in (WORKFLOWS / name).read_text(encoding="utf-8").splitlines():
            match = PINNED.match(line)
            if match:
                seen.setdefault(match["action"], set()).add(match["ref"])
    assert seen, "no actions found"
    assert {a: refs for a, refs in seen.items() if len(refs) > 1} == {}


def test_scripts_the_workflows_call_exist() -> None:
    for name in NAMES:
        for path in re.findall(
            r"(?<![\w/])(packaging/[\w.-]+\.(?:py|sh)|\.ci/run)", (WORKFLOWS / name).read_text(encoding="utf-8")
        ):
            assert (ROOT / path).is_file(), f"{name} calls {path}, which does not exist"


BROKEN = {
    "unpinned": ("actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1", "actions/checkout@v7"),
    "no tag comment": (
        "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1",
        "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1",
    ),
    "pull_request_target": ("  pull_request:\n", "  pull_request_target:\n"),
    "write-all": ("permissions:\n  contents: read\n\nconcurrency", "permissions: write-all\n\nconcurrency"),
    "injection": ("run: bash .ci/run", 'run: echo "${{ github.event.head_commit.message }}" && bash .ci/run'),
    "built in YAML": ("run: bash .ci/run", "run: pip install pyinstaller && pyinstaller packaging/searchdesk.spec"),
    "secret in a test step": (
        '          CI: "true"\n          QT_QPA',
        '          CI: "true"\n          TOKEN: ${{ secrets.MACOS_CERT_PASSWORD }}\n          QT_QPA',
    ),
}
EXPECTED = {
    "unpinned": "is not pinned to a 40-hex commit",
    "no tag comment": "has no tag comment",
    "pull_request_target": "pull_request_target is a trigger",
    "write-all": "top-level permissions are 'write-all'",
    "injection": "an expression inside the script",
    "built in YAML": "not a packaging/ script, make or bash .ci/run",
    "secret in a test step": "in a step that does not sign",
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_broken_copy_is_caught(kind: str, tmp_path: Path) -> None:
    """Each rule can fail: ci.yml broken one way at a time is reported for exactly that."""
    old, new = BROKEN[kind]
    text = (WORKFLOWS / "ci.yml").read_text(encoding="utf-8")
    assert old in text, f"the broken copy for {kind!r} no longer applies to ci.yml"
    broken = tmp_path / "ci.yml"
    broken.write_text(text.replace(old, new, 1), encoding="utf-8")
    found = problems(broken)
    assert any(EXPECTED[kind] in p for p in found), found


def test_every_secret_and_variable_is_documented_by_its_name() -> None:
    """docs/contributing.md's table names each secret and variable exactly as release.yml reads it."""
    text = (WORKFLOWS / "release.yml").read_text(encoding="utf-8")
    names = set(re.findall(r"\$\{\{\s*(?:secrets|vars)\.(\w+)", text))
    assert names, "release.yml reads no secrets or variables"
    docs = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    assert sorted(n for n in names if f"`{n}`" not in docs) == []
