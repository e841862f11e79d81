"""Sign the update manifest (update.json) a release carries, for the app's update check.

The app (desktop/searchdesk_desktop/update_check.py) believes a manifest only when the project's
Ed25519 key signed it; the public half is `PUBLIC_KEY` there, the private half never enters the
repository. A maintainer (or the release workflow, from a secret) runs:

    # once: make the key; the private key goes to a file outside the repository (mode 0600)
    python packaging/sign_manifest.py keygen --private-key-file ~/searchdesk-release.key
    #   -> prints the PUBLIC_KEY line to put in update_check.py

    # each release: the private key from a file or from $SEARCHDESK_UPDATE_SIGNING_KEY (base64 raw key)
    python packaging/sign_manifest.py sign --version 1.2.0 --out dist/update.json

`sign` refuses a key whose public half is not the app's PUBLIC_KEY (a manifest the app would ignore),
and a link that is not this project's release page (the app would ignore that too). Upload the file to
the release as `update.json`: the app asks `<RELEASES>/latest/download/update.json`.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import os
import sys
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "desktop"))
sys.path.insert(0, str(ROOT / "server"))

KEY_VARIABLE = "SEARCHDESK_UPDATE_SIGNING_KEY"


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


def manifest(key: Ed25519PrivateKey, version: str, url: str) -> bytes:
    """The signed manifest for `version` at `url`, as the app reads it (update_check.read_manifest)."""
    payload = json.dumps({"app": "searchdesk", "version": version, "url": url}, sort_keys=True).encode()
    doc = {"payload": base64.b64encode(payload).decode(), "signature": base64.b64encode(key.sign(payload)).decode()}
    return (json.dumps(doc, indent=1) + "\n").encode()


def sign(key: Ed25519PrivateKey, version: str, url: str = "", expect_public: str | None = None) -> bytes:
    """Check the key and the facts against the app's own rules, then sign."""
    from searchdesk_desktop import update_check
    from searchdesk_desktop.project import RELEASES

    expected = update_check.PUBLIC_KEY if expect_public is None else expect_public
    if not expected:
        raise SignError("the app has no PUBLIC_KEY yet: run keygen and put the line it prints in update_check.py")
    if public_b64(key) != expected:
        raise SignError("this key is not the one whose public half is in the app; the app would ignore the manifest")
    if update_check.version_key(version) is None:
        raise SignError(f"{version!r} is not a version like 1.2.0")
    url = url or f"{RELEASES}/tag/v{version}"
    if not update_check.release_link_ok(url):
        raise SignError(f"the link must be this project's release page ({RELEASES}/...)")
    return manifest(key, version, url)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Make the release key, or sign a release's update.json.")
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("keygen", help="make a new key; write the private key to a file outside the repository")
    gen.add_argument("--private-key-file", type=Path, required=True)
    signing = sub.add_parser("sign", help="write the signed update.json for one release")
    signing.add_argument("--version", help="the release's version (default: the app's own)")
    signing.add_argument(
        "--if-key",
        action="store_true",
        help=f"with no key given (no ${KEY_VARIABLE}, no file), say so and sign nothing: a release without "
        "the key carries no update.json, and its notes say the update check will not hear of it",
    )
    signing.add_argument("--url", default="", help="the release page (default: <RELEASES>/tag/v<version>)")
    signing.add_argument("--private-key-file", type=Path, help=f"else ${KEY_VARIABLE}")
    signing.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "keygen":
            path: Path = args.private_key_file
            if path.resolve().is_relative_to(ROOT):
                raise SignError("keep the private key outside the repository")
            if path.exists():
                raise SignError(f"{path} exists; not overwriting a key")
            key = Ed25519PrivateKey.generate()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(private_b64(key) + "\n")
            print(f"Private key written to {path} (keep it secret; the release workflow reads it from a secret).")
            print("Put this line in desktop/searchdesk_desktop/update_check.py:")
            print(f'PUBLIC_KEY = "{public_b64(key)}"')
            return 0
        if args.private_key_file is not None:
            text = args.private_key_file.read_text(encoding="utf-8")
        else:
            text = os.environ.get(KEY_VARIABLE, "")
            if not text.strip() and args.if_key:
                print(f"No {KEY_VARIABLE}: this release carries no update.json (the update check will not hear of it).")
                return 0
            if not text.strip():
                raise SignError(f"give --private-key-file or set {KEY_VARIABLE}")
        from searchdesk_desktop import __version__

        body = sign(load_private(text), args.version or __version__, args.url)
        args.out.write_bytes(body)
        print(f"Signed update.json for {args.version} -> {args.out}")
        return 0
    except (SignError, OSError) as exc:
        print(f"sign_manifest: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
