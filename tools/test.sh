#!/usr/bin/env bash
# Builds gcomp and runs its tests: the default tier (unit tests, small models, CLI), or with
# --full also the full-size models (Release only; minutes). Installs what is missing first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
labels=(-LE full)
build_type=Release
for arg in "$@"; do
  case "$arg" in
    --full) labels=() ;;
    --debug) build_type=Debug ;;
    *) echo "usage: tools/test.sh [--full] [--debug]" >&2; exit 2 ;;
  esac
done
bash tools/setup.sh
build="build"
[ "$build_type" = Debug ] && build="build-debug"
jobs=$(nproc)
start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$jobs"
built=$(date +%s)
ctest --test-dir "$build" --output-on-failure -j"$jobs" "${labels[@]}"
done_at=$(date +%s)
echo "tools/test.sh: build $((built - start)) s, tests $((done_at - built)) s"
