#!/usr/bin/env bash
# The update-manifest signer's own Python: a fresh virtual environment holding the standard library and
# packaging/signer-requirements.txt (cryptography and what it needs), installed by hash from wheels only.
# Never the build's .venv: the release key must not share a Python with the build's dependencies.
#
#   bash packaging/signer_venv.sh DIR [PYTHON]   # PYTHON: the interpreter to make it from (python3)
#
# Prints the new environment's python (bin/python, or Scripts/python.exe on Windows); everything else
# goes to standard error. Made afresh (--clear) each time, so nothing an earlier step wrote into DIR stays.
set -euo pipefail
dir="${1:?usage: signer_venv.sh DIR [PYTHON]}"
base="${2:-python3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$base" -I -m venv --clear "$dir" >&2
if [ -x "$dir/bin/python" ]; then py="$dir/bin/python"; else py="$dir/Scripts/python.exe"; fi
"$py" -I -m pip install --quiet --disable-pip-version-check --no-input --require-hashes --only-binary ':all:' \
    -r "$here/signer-requirements.txt" >&2
"$py" -I -m pip uninstall --quiet --yes setuptools >&2 2>/dev/null || true  # seeded by venv on 3.11, not needed
printf '%s\n' "$py"
