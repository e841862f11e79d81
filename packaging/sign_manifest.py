"""Sign the update manifest (update.json) a release carries, for the app's update check.

The app believes a manifest only when the project's Ed25519 key signed it and only while it is fresh
(docs/update-manifest.md is the one definition of the file, its signed bytes and its times). This script
is the signing half. It runs in a Python of its own that holds the standard library and `cryptography`
(installed from packaging/signer-requirements.txt, by hash), never in the build's virtual environment:
so it imports nothing of the app, and nothing the app depends on can see the key.

    # once: make the key; the private key goes to a file outside the repository (mode 0600)
    python3 packaging/sign_manifest.py keygen --private-key-file ~/searchdesk-release.key
    #   -> prints the value for the repository variable UPDATE_PUBLIC_KEY; the file's one line is the
    #      secret UPDATE_SIGNING_KEY

    # a release's first step: the secret and the variable must both be set and match, or both be unset
    SEARCHDESK_UPDATE_SIGNING_KEY=... SEARCHDESK_UPDATE_PUBLIC_KEY=... python3 packaging/sign_manifest.py check-key

    # each release, and weekly for the latest one: sign (the key from a file, or "-" for standard input)
    python3 packaging/sign_manifest.py sign --key-file K --version 1.2.0 \\
        --url https://github.com/searchdesk/searchdesk/releases/tag/v1.2.0 --out dist/update.json \\
        [--public-key P] [--now 2026-12-04T12:00:00Z]

`sign` refuses a key whose public half is not --public-key (the app would ignore the manifest), a version
that is not like 1.2.0, and a link that is not that version's release page on GitHub. Upload the file to
the release as `update.json`: the app asks `<releases>/latest/download/update.json`.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import os
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

APP = "searchdesk"
#: How long a manifest may be believed; the app refuses a longer one (docs/update-manifest.md).
VALID_DAYS = 30
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
VERSION = re.compile(r"^\d{1,6}(?:\.\d{1,6}){1,3}$")
RELEASE_PAGE = re.compile(r"^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/releases/tag/v(?P<version>[0-9.]+)$")
#: What the release workflow's first step reads: the secret's private half and the variable's public half.
KEY_VARIABLE = "SEARCHDESK_UPDATE_SIGNING_KEY"
PUBLIC_VARIABLE = "SEARCHDESK_UPDATE_PUBLIC_KEY"


class SignError(Exception):
    """What the maintainer must fix; the message says what."""


def public_b64(key: Ed25519PrivateKey) -> str:
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode()


def private_b64(key: Ed25519PrivateKey) -> str:
    raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    return base64.b64encode(raw).decode()


def load_private(text: str) -> Ed25519PrivateKey:
    try:
        return Ed25519PrivateKey.from_private_bytes(base64.b64decode(text.strip(), validate=True))
    except (ValueError, binascii.Error):
        raise SignError("the signing key is not a base64 raw Ed25519 private key (keygen writes one)") from None


def check_public(text: str) -> str:
    """The public key as given (UPDATE_PUBLIC_KEY), once it is 32 bytes of base64."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (ValueError, binascii.Error):
        raw = b""
    if len(raw) != 32:
        raise SignError("the public key is not a base64 raw Ed25519 public key (keygen prints one)")
    return text.strip()


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(TIME_FORMAT)


def manifest(key: Ed25519PrivateKey, version: str, url: str, issued: datetime) -> bytes:
    """The signed manifest, exactly as docs/update-manifest.md defines it: the signature is over the
    payload bytes the file carries, and the reader verifies those bytes before it parses them."""
    issued = issued.astimezone(UTC).replace(microsecond=0)
    body = {
        "app": APP,
        "version": version,
        "url": url,
        "issued": stamp(issued),
        "expires": stamp(issued + timedelta(days=VALID_DAYS)),
    }
    payload = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    doc = {"payload": base64.b64encode(payload).decode(), "signature": base64.b64encode(key.sign(payload)).decode()}
    return (json.dumps(doc, indent=1) + "\n").encode()


def sign(
    key: Ed25519PrivateKey, version: str, url: str, *, expect_public: str = "", issued: datetime | None = None
) -> bytes:
    """Check the key and the facts against the app's rules (docs/update-manifest.md), then sign."""
    if expect_public and public_b64(key) != check_public(expect_public):
        raise SignError("this key is not the one whose public half the app carries; the app would ignore it")
    if not VERSION.match(version):
        raise SignError(f"{version!r} is not a version like 1.2.0")
    page = RELEASE_PAGE.match(url)
    if page is None or page["version"] != version:
        raise SignError(
            f"the link must be version {version}'s release page: https://github.com/<owner>/<repo>/releases/tag/v{version}"
        )
    return manifest(key, version, url, issued or datetime.now(UTC))


def check_key(env: dict[str, str]) -> str:
    """A release's first step: the signing secret and the public key are both set and match, or both unset.

    Either alone would ship an app that never hears of a release (a key but no signed file) or a file no
    app can believe (a signed file but no key in the app); a mismatch, a file every app refuses."""
    private, public = env.get(KEY_VARIABLE, "").strip(), env.get(PUBLIC_VARIABLE, "").strip()
    if not private and not public:
        return "No update key: this release's app does not check for updates, and it carries no update.json."
    if private and not public:
        raise SignError(
            "the secret UPDATE_SIGNING_KEY is set but the repository variable UPDATE_PUBLIC_KEY is not: set it to "
            "the public key keygen printed, or remove the secret"
        )
    if public and not private:
        raise SignError(
            "the repository variable UPDATE_PUBLIC_KEY is set but the secret UPDATE_SIGNING_KEY is not (in the "
            "release environment): an app with the key would never hear of this release"
        )
    if public_b64(load_private(private)) != check_public(public):
        raise SignError(
            "UPDATE_PUBLIC_KEY is not the public half of UPDATE_SIGNING_KEY: the app would refuse every update.json"
        )
    return "The update key checks: the app carries UPDATE_PUBLIC_KEY; update.json is signed with its private half."


def parse_now(text: str) -> datetime:
    try:
        return datetime.strptime(text, TIME_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        raise SignError(f"--now must look like 2026-12-04T12:00:00Z, not {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Make the release key, check it, or sign a release's update.json.")
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("keygen", help="make a new key; write the private key to a file outside the repository")
    gen.add_argument("--private-key-file", type=Path, required=True)
    sub.add_parser("check-key", help=f"${KEY_VARIABLE} and ${PUBLIC_VARIABLE}: both set and matching, or neither")
    signing = sub.add_parser("sign", help="write the signed update.json for one release")
    signing.add_argument(
        "--key-file", required=True, help='the private key (keygen\'s file), or "-" for standard input'
    )
    signing.add_argument("--version", required=True, help="the release's version, e.g. 1.2.0")
    signing.add_argument(
        "--url", required=True, help="the release page: https://github.com/<owner>/<repo>/releases/tag/v<version>"
    )
    signing.add_argument("--out", type=Path, required=True)
    signing.add_argument(
        "--public-key", default="", help="refuse unless the key's public half is this (UPDATE_PUBLIC_KEY)"
    )
    signing.add_argument("--now", default="", help="the issued time (default: now), like 2026-12-04T12:00:00Z")
    args = parser.parse_args(argv)
    try:
        if args.command == "keygen":
            path: Path = args.private_key_file
            if path.resolve().is_relative_to(Path(__file__).resolve().parents[1]):
                raise SignError("keep the private key outside the repository")
            if path.exists():
                raise SignError(f"{path} exists; not overwriting a key")
            key = Ed25519PrivateKey.generate()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(private_b64(key) + "\n")
            print(f"Private key written to {path}: its one line is the secret UPDATE_SIGNING_KEY (keep it secret).")
            print("Set the repository variable UPDATE_PUBLIC_KEY to:")
            print(public_b64(key))
            return 0
        if args.command == "check-key":
            print(check_key(dict(os.environ)))
            return 0
        text = sys.stdin.read() if args.key_file == "-" else Path(args.key_file).read_text(encoding="utf-8")
        issued = parse_now(args.now) if args.now else None
        body = sign(load_private(text), args.version, args.url, expect_public=args.public_key, issued=issued)
        args.out.write_bytes(body)
        print(f"Signed update.json for {args.version} -> {args.out}")
        return 0
    except (SignError, OSError) as exc:
        print(f"sign_manifest: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
