"""The update manifest's signing side (issue 35): a signer that imports nothing of the app, in a Python of
its own pinned by hash, that the release workflows run the same way, behind a first step that refuses a
key the app would not carry; and the one format (docs/update-manifest.md) the signer writes and the app
reads, checked by signing with the script and reading with the app's own code.
"""

from __future__ import annotations

import ast
import base64
import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests import REPO as ROOT

PACKAGING = ROOT / "packaging"
SIGNER = PACKAGING / "sign_manifest.py"
WORKFLOWS = ROOT / ".github" / "workflows"
#: What the signer's Python may hold besides the standard library: the signer and what it needs.
SIGNER_PACKAGES = {"cryptography", "cffi", "pycparser"}
#: What it must never see: the app, the server, and what the app depends on.
NEVER = ("searchdesk_desktop", "searchdesk_server", "httpx", "PySide6", "shiboken6", "truststore")
RELEASES = "https://github.com/searchdesk/searchdesk/releases"

sys.path.insert(0, str(PACKAGING))
import sign_manifest  # noqa: E402


def signer_site(tmp_path: Path) -> Path:
    """A folder holding only the signer's packages (as signer.sh's venv does), taken from this venv."""
    import _cffi_backend
    import cffi
    import cryptography
    import pycparser

    site = tmp_path / "signer-site"
    site.mkdir()
    for module in (cryptography, cffi, pycparser):
        folder = Path(module.__file__ or "").parent
        (site / folder.name).symlink_to(folder)
    backend = Path(_cffi_backend.__file__ or "")
    (site / backend.name).symlink_to(backend)
    return site


#: Runs the script as `python -I -S` would with the signer's venv: no site-packages, no PYTHONPATH, the
#: signer's folder alone added; a module in NEVER fails to import loudly; prints what was imported.
RUNNER = """
import importlib.abc, json, runpy, sys
site, script, report, never = sys.argv[1], sys.argv[2], sys.argv[3], tuple(sys.argv[4].split(","))
class Never(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in never:
            raise ImportError(f"the signer imported {name}")
        return None
sys.meta_path.insert(0, Never())
sys.path.insert(0, site)
sys.argv = [script, *sys.argv[5:]]
try:
    runpy.run_path(script, run_name="__main__")
finally:
    with open(report, "w") as fh:
        json.dump(sorted({m.split(".")[0] for m in sys.modules}), fh)
"""


def run_signer(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, stdin: str = ""
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    report = tmp_path / "imported.json"
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            RUNNER,
            str(signer_site(tmp_path)),
            str(SIGNER),
            str(report),
            ",".join(NEVER),
            *args,
        ],
        capture_output=True,
        text=True,
        input=stdin,
        env={"PATH": os.environ.get("PATH", ""), **(env or {})},
        cwd=tmp_path,
        timeout=60,
    )
    imported = set(json.loads(report.read_text())) if report.exists() else set()
    return done, imported


def fresh_key(tmp_path: Path, name: str = "release.key") -> tuple[Path, str]:
    key = Ed25519PrivateKey.generate()
    path = tmp_path / name
    path.write_text(sign_manifest.private_b64(key) + "\n")
    return path, sign_manifest.public_b64(key)


def test_the_signer_imports_only_the_standard_library_and_cryptography(tmp_path: Path) -> None:
    """Read (every import in the file) and run (isolated: nothing of the app or its dependencies reachable)."""
    tree = ast.parse(SIGNER.read_text(encoding="utf-8"))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "a relative import in the signer"
            roots.add((node.module or "").split(".")[0])
    assert roots - sys.stdlib_module_names == {"cryptography"}
    assert "sys.path" not in SIGNER.read_text(encoding="utf-8"), "the signer reaches into the repository's packages"

    key_file, public = fresh_key(tmp_path)
    out = tmp_path / "update.json"
    page = f"{RELEASES}/tag/v9.9.9"
    done, imported = run_signer(
        tmp_path,
        "sign",
        "--key-file",
        str(key_file),
        "--version",
        "9.9.9",
        "--url",
        page,
        "--out",
        str(out),
        "--public-key",
        public,
    )
    assert done.returncode == 0, done.stderr
    assert out.is_file()
    # Besides the standard library: the signer's packages, cffi's backend and the `_openssl` module
    # cryptography's Rust extension registers, and the script itself.
    others = imported - sys.stdlib_module_names - {"__main__", "_cffi_backend", "_openssl"}
    assert others <= SIGNER_PACKAGES, sorted(others)
    assert "cryptography" in imported


def test_signed_by_the_script_and_read_by_the_app_as_the_format_says(tmp_path: Path) -> None:
    """The one definition in practice: the isolated script signs (the key on standard input, as the
    workflow gives it), the app's own reader believes it, with the 30 days the format names."""
    from searchdesk_desktop.updates.manifest import VALID_DAYS, Seen, check_fresh, load_key, read_manifest

    key_file, public = fresh_key(tmp_path)
    out = tmp_path / "update.json"
    done, _ = run_signer(
        tmp_path,
        "sign",
        "--key-file",
        "-",
        "--version",
        "9.9.9",
        "--url",
        f"{RELEASES}/tag/v9.9.9",
        "--out",
        str(out),
        "--now",
        "2026-12-04T12:00:00Z",
        stdin=key_file.read_text(),
    )
    assert done.returncode == 0, done.stderr
    app_key = load_key(public)
    assert app_key is not None
    release = read_manifest(out.read_bytes(), app_key)
    issued = datetime(2026, 12, 4, 12, tzinfo=UTC).timestamp()
    assert (release.version, release.url, release.issued) == ("9.9.9", f"{RELEASES}/tag/v9.9.9", issued)
    assert release.expires - release.issued == VALID_DAYS * 24 * 3600 == sign_manifest.VALID_DAYS * 24 * 3600
    check_fresh(release, Seen(), issued + 3600)  # believed an hour later
    payload = json.loads(base64.b64decode(json.loads(out.read_bytes())["payload"]))
    assert sorted(payload) == ["app", "expires", "issued", "url", "version"]  # docs/update-manifest.md's table
    doc = (ROOT / "docs" / "update-manifest.md").read_text(encoding="utf-8")
    assert all(f"| `{name}`" in doc for name in payload)


def test_the_app_refuses_a_manifest_valid_for_longer_than_the_format_allows() -> None:
    from searchdesk_desktop.updates.manifest import NotOurs, load_key, read_manifest

    key = Ed25519PrivateKey.generate()
    issued = datetime(2026, 12, 4, tzinfo=UTC)
    good = sign_manifest.manifest(key, "9.9.9", f"{RELEASES}/tag/v9.9.9", issued)
    doc = json.loads(good)
    body = json.loads(base64.b64decode(doc["payload"]))
    body["expires"] = sign_manifest.stamp(issued + timedelta(days=365))
    payload = json.dumps(body).encode()
    forever = json.dumps(
        {"payload": base64.b64encode(payload).decode(), "signature": base64.b64encode(key.sign(payload)).decode()}
    )
    public = load_key(sign_manifest.public_b64(key))
    assert public is not None
    read_manifest(good, public)
    with pytest.raises(NotOurs, match="validity"):
        read_manifest(forever.encode(), public)


@pytest.mark.parametrize(
    ("secret", "public", "says"),
    [
        ("key", "", "UPDATE_PUBLIC_KEY is not"),
        ("key", "other", "is not the public half"),
        ("", "public", "UPDATE_SIGNING_KEY is not"),
        ("key", "not a key", "not a base64 raw Ed25519 public key"),
    ],
)
def test_the_first_step_fails_on_a_secret_without_its_public_key(
    tmp_path: Path, secret: str, public: str, says: str
) -> None:
    """`signer.sh check-key`, each release job's first step, as the workflow gives it the secret and the
    variable; it stops the job before anything is built."""
    key_file, right = fresh_key(tmp_path)
    _, wrong = fresh_key(tmp_path, "other.key")
    env = {
        "SEARCHDESK_UPDATE_SIGNING_KEY": key_file.read_text().strip() if secret else "",
        "SEARCHDESK_UPDATE_PUBLIC_KEY": {"": "", "public": right, "other": wrong, "not a key": "abc"}[public],
    }
    done, _ = run_signer(tmp_path, "check-key", env=env)
    assert done.returncode == 2, done
    assert says in done.stderr


@pytest.mark.parametrize("both", [True, False])
def test_the_first_step_passes_with_both_matching_or_neither(tmp_path: Path, both: bool) -> None:
    key_file, public = fresh_key(tmp_path)
    env = (
        {"SEARCHDESK_UPDATE_SIGNING_KEY": key_file.read_text(), "SEARCHDESK_UPDATE_PUBLIC_KEY": public} if both else {}
    )
    done, _ = run_signer(tmp_path, "check-key", env=env)
    assert done.returncode == 0, done.stderr
    assert ("The update key checks" if both else "does not check for updates") in done.stdout


def pins(text: str) -> dict[str, str]:
    return {
        m["name"].lower(): m["version"]
        for m in re.finditer(r"^(?P<name>[A-Za-z0-9_.-]+)==(?P<version>\S+)", text, re.M)
    }


def test_the_signers_requirements_are_hashed_and_pinned_as_constraints_txt() -> None:
    """The signer's Python installs exactly constraints.txt's versions, each by hash, and the whole of what
    cryptography needs (so --require-hashes cannot stop on a missing one)."""
    from importlib.metadata import requires

    text = (PACKAGING / "signer-requirements.txt").read_text(encoding="utf-8")
    signer = pins(text)
    assert set(signer) == SIGNER_PACKAGES
    locked = pins((ROOT / "constraints.txt").read_text(encoding="utf-8"))
    assert {name: locked.get(name) for name in signer} == signer, "signer-requirements.txt drifted from constraints.txt"
    for block in re.split(r"\n(?=[A-Za-z])", text.split("\n\n", 1)[1].strip()):
        hashes = re.findall(r"--hash=sha256:([0-9a-f]+)", block)
        assert hashes and all(len(h) == 64 for h in hashes), block.splitlines()[0]
    needed = {"cryptography"}
    for name in ("cryptography", "cffi"):
        for line in requires(name) or []:
            if "extra ==" not in line and "python_full_version < '3.11'" not in line:
                needed.add(re.split(r"[ ;<>=!~\[]", line, maxsplit=1)[0].lower())
    assert needed == SIGNER_PACKAGES


def steps(name: str) -> dict[str, list[dict[str, Any]]]:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    return {job: body.get("steps") or [] for job, body in data["jobs"].items()}


SETUP = re.compile(r"^(?:actions/checkout|actions/setup-python)@")


def test_each_release_job_checks_the_key_first_and_signs_only_in_the_signers_python() -> None:
    jobs = {**{f"release.yml {j}": s for j, s in steps("release.yml").items() if j != "draft"}}
    jobs |= {f"update-manifest.yml {j}": s for j, s in steps("update-manifest.yml").items()}
    assert {"release.yml macos", "release.yml windows", "release.yml linux", "update-manifest.yml resign"} <= set(jobs)
    for label, job in jobs.items():
        first = next(
            i
            for i, step in enumerate(job)
            if not SETUP.match(str(step.get("uses", ""))) and step.get("run") != "bash packaging/container_base.sh"
        )
        check = job[first]
        assert check.get("run") == "bash packaging/signer.sh check-key", f"{label}: first step is {check.get('name')}"
        assert set(check["env"]) == {"SEARCHDESK_UPDATE_SIGNING_KEY", "SEARCHDESK_UPDATE_PUBLIC_KEY"}, label
    signing = [
        step
        for job in jobs.values()
        for step in job
        if str(step.get("name", "")).startswith("Sign the update manifest")
    ]
    assert len(signing) == 2  # the release's, and the weekly re-signing's
    for step in signing:
        assert str(step["run"]).startswith("bash packaging/signer.sh sign "), step["run"]
    for name in ("release.yml", "update-manifest.yml"):
        for job in steps(name).values():
            for step in job:
                run = str(step.get("run", ""))
                assert "sign_manifest" not in run, f"{name}: {run!r} runs the signer outside signer.sh"
                assert ".venv" not in run or "sign" not in run, f"{name}: {run!r}"
                if "UPDATE_SIGNING_KEY" in json.dumps(step.get("env") or {}):
                    assert run.startswith("bash packaging/signer.sh "), f"{name}: the key reaches {run!r}"
    script = (PACKAGING / "signer.sh").read_text(encoding="utf-8")
    assert not [line for line in script.splitlines() if ".venv" in line and not line.lstrip().startswith("#")]
    assert "venv --clear" in script and "--require-hashes" in script and "--only-binary" in script
    assert '-I "$here/sign_manifest.py"' in script


def test_the_public_key_goes_from_the_repository_variable_into_the_app(tmp_path: Path) -> None:
    import spec_common

    from searchdesk_desktop.updates import checker as update_check

    release = yaml.safe_load((WORKFLOWS / "release.yml").read_text(encoding="utf-8"))
    assert release["env"][spec_common.UPDATE_KEY_VAR] == "${{ vars.UPDATE_PUBLIC_KEY }}"
    _, public = fresh_key(tmp_path)
    entries = spec_common.update_key_datas({spec_common.UPDATE_KEY_VAR: public}, tmp_path / "build")
    assert [(dest, kind) for dest, _, kind in entries] == [(spec_common.UPDATE_KEY_DEST, "DATA")]
    written = Path(entries[0][1])
    assert Path(spec_common.UPDATE_KEY_DEST).name == update_check.KEY_FILE.name
    assert spec_common.UPDATE_KEY_DEST.split("/")[0] == update_check.KEY_FILE.parent.name
    assert update_check.built_in_key(written) == public  # what the frozen app reads at the package's top
    assert spec_common.update_key_datas({}, tmp_path / "build") == []
    with pytest.raises(spec_common.BuildConfigError, match="44 characters"):
        spec_common.update_key_datas({spec_common.UPDATE_KEY_VAR: "not-a-key"}, tmp_path / "build")
    assert not update_check.KEY_FILE.exists(), "a release key file in the source tree would ship in every build"


def test_the_weekly_re_signing_is_scheduled_with_the_least_it_needs() -> None:
    data = yaml.safe_load((WORKFLOWS / "update-manifest.yml").read_text(encoding="utf-8"))
    on = data.get("on", data.get(True))
    assert on["schedule"] and "workflow_dispatch" in on
    assert data["permissions"] == {"contents": "read"}
    assert data["jobs"]["resign"]["permissions"] == {"contents": "write"}
    upload = next(s for s in data["jobs"]["resign"]["steps"] if "latest_release.sh upload" in str(s.get("run", "")))
    assert "secrets." not in json.dumps(upload), "the token and the signing key share a step"


def test_without_the_key_the_release_signs_nothing_and_says_so(tmp_path: Path) -> None:
    """The release step without the secret: no Python made, no file, a line in the log, the job goes on."""
    out = tmp_path / "update.json"
    env = {"PATH": os.environ.get("PATH", ""), "GITHUB_REPOSITORY": "searchdesk/searchdesk"}
    done = subprocess.run(
        ["bash", str(PACKAGING / "signer.sh"), "sign", "v1.2.0", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0 and "No update key" in done.stdout, done
    assert not out.exists()
