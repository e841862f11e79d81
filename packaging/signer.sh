#!/usr/bin/env bash
# The update manifest's signing steps, as release.yml and update-manifest.yml run them:
#
#   bash packaging/signer.sh check-key      # a job's first step: the secret and the public key are both set
#                                           # and match, or neither is (sign_manifest.py check-key)
#   bash packaging/signer.sh sign TAG OUT   # sign update.json for release TAG (v1.2.0) of $GITHUB_REPOSITORY;
#                                           # without the key, says so and signs nothing (in a workflow,
#                                           # the step's output `signed` names OUT only when it signed)
#
# The key comes from $SEARCHDESK_UPDATE_SIGNING_KEY and $SEARCHDESK_UPDATE_PUBLIC_KEY (the secret
# UPDATE_SIGNING_KEY and the variable UPDATE_PUBLIC_KEY). Both run packaging/sign_manifest.py in a Python of
# its own, never the build's .venv: a virtual environment made afresh (--clear) in $SIGNER_DIR (default
# $RUNNER_TEMP/signer) holding the standard library and packaging/signer-requirements.txt (written by make
# lock with the release lock's hashes), installed by hash from wheels only; run isolated (-I), with the key
# on standard input, never in a file or an argument.
# $SIGNER_PYTHON names the interpreter to make it from (default: python3, else python, at least 3.11).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

signer_python() {
    local dir="${SIGNER_DIR:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/signer}" base py
    if command -v cygpath >/dev/null 2>&1; then dir="$(cygpath -u "$dir")"; fi # Git Bash on Windows: D:\a -> /d/a
    for base in ${SIGNER_PYTHON:-python3 python}; do
        if "$base" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then break; fi
        base=""
    done
    [ -n "$base" ] || { echo "signer.sh: no Python 3.11 or later (python3 or python) to make the signer's from" >&2; exit 1; }
    "$base" -I -m venv --clear "$dir" >&2
    if [ -x "$dir/bin/python" ]; then py="$dir/bin/python"; else py="$dir/Scripts/python.exe"; fi
    "$py" -I -m pip install --quiet --disable-pip-version-check --no-input --require-hashes --only-binary ':all:' \
        -r "$here/signer-requirements.txt" >&2
    "$py" -I -m pip uninstall --quiet --yes setuptools >/dev/null 2>&1 || true # seeded by venv on 3.11, not needed
    printf '%s\n' "$py"
}

case "${1:-}" in
check-key)
    py="$(signer_python)"
    "$py" -I "$here/sign_manifest.py" check-key
    ;;
sign)
    tag="${2:?usage: signer.sh sign TAG OUT}"
    out="${3:?usage: signer.sh sign TAG OUT}"
    if [ -z "${SEARCHDESK_UPDATE_SIGNING_KEY:-}" ]; then
        echo "No update key: release $tag carries no update.json (its app does not check for updates)."
        exit 0
    fi
    py="$(signer_python)"
    mkdir -p "$(dirname "$out")"
    printf '%s\n' "$SEARCHDESK_UPDATE_SIGNING_KEY" | "$py" -I "$here/sign_manifest.py" sign --key-file - \
        --version "${tag#v}" --url "https://github.com/${GITHUB_REPOSITORY:?}/releases/tag/$tag" \
        --public-key "${SEARCHDESK_UPDATE_PUBLIC_KEY:-}" --out "$out"
    if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "signed=$out" >>"$GITHUB_OUTPUT"; fi
    ;;
*)
    echo "usage: signer.sh check-key | signer.sh sign TAG OUT" >&2
    exit 2
    ;;
esac
