#!/usr/bin/env bash
# The latest published release of $GH_REPO, for update-manifest.yml's weekly re-signing (gh, with $GH_TOKEN):
#
#   bash packaging/latest_release.sh find          # its tag to $GITHUB_OUTPUT as tag=...; none yet: says so
#   bash packaging/latest_release.sh upload TAG F  # replace that release's update.json with F
set -euo pipefail
case "${1:-}" in
find)
    if tag="$(gh release view --json tagName --jq .tagName)" && [ -n "$tag" ]; then
        echo "The latest published release is $tag."
        echo "tag=$tag" >>"${GITHUB_OUTPUT:-/dev/stdout}"
    else
        echo "No published release yet: nothing to sign."
    fi
    ;;
upload)
    tag="${2:?usage: latest_release.sh upload TAG FILE}"
    file="${3:?usage: latest_release.sh upload TAG FILE}"
    [ "$(basename "$file")" = update.json ] || { echo "latest_release.sh: the file must be named update.json" >&2; exit 2; }
    gh release upload "$tag" "$file" --clobber
    ;;
*)
    echo "usage: latest_release.sh find | latest_release.sh upload TAG FILE" >&2
    exit 2
    ;;
esac
