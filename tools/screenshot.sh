#!/usr/bin/env bash
# Renders a page (e.g. from `gcomp inspect --format html`) to a PNG in headless Chromium.
# Usage: tools/screenshot.sh PAGE.html OUT.png [WIDTHxHEIGHT] [#node=NAME&zoom=Z]
# Installs Debian's `chromium` with apt-get when it is missing. On a gcomp page the fragment
# selects and centres node NAME (its details in the side panel) and sets the zoom (1 = 100%).
set -euo pipefail

if [[ $# -lt 2 || $# -gt 4 ]]; then
  echo "usage: $0 PAGE.html OUT.png [WIDTHxHEIGHT] [#node=NAME&zoom=Z]" >&2
  exit 2
fi
page=$(realpath "$1")
out=$(realpath -m "$2")
size=${3:-1600x1000}
fragment=${4:-}
if [[ ! $size =~ ^[0-9]+x[0-9]+$ ]]; then
  echo "$0: size '$size' is not WIDTHxHEIGHT" >&2
  exit 2
fi
[[ -f $page ]] || { echo "$0: $page: no such file" >&2; exit 2; }

if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
url="file://${page}${fragment}"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
  --screenshot="$out" --window-size="${size/x/,}" "$url" 2>"$profile/log" || {
  cat "$profile/log" >&2
  exit 1
}
[[ -s $out ]] || { echo "$0: chromium wrote no screenshot" >&2; cat "$profile/log" >&2; exit 1; }
echo "$out"
