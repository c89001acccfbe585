#!/usr/bin/env bash
# Builds gcomp and runs its tests: the default tier (unit tests, small models, conformance,
# malformed corpus, CLI); --full adds the full-size models (Release only; minutes); --sanitize
# builds with AddressSanitizer + UndefinedBehaviorSanitizer (no CUDA parts) in build-asan and runs
# the default tier under it. Installs what is missing first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
labels=(-LE full)
build_type=Release
build="build"
extra=()
for arg in "$@"; do
  case "$arg" in
    --full) labels=() ;;
    --debug) build_type=Debug; build="build-debug" ;;
    --sanitize)
      build_type=RelWithDebInfo; build="build-asan"
      extra=(-DGCOMP_SANITIZE=ON -DGCOMP_ENABLE_CUDA=OFF)
      export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:abort_on_error=0"
      export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
      ;;
    *) echo "usage: tools/test.sh [--full] [--debug] [--sanitize]" >&2; exit 2 ;;
  esac
done
bash tools/setup.sh
jobs=$(nproc)
start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "${extra[@]}" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$jobs"
built=$(date +%s)
ctest --test-dir "$build" --output-on-failure -j"$jobs" "${labels[@]}"
done_at=$(date +%s)
echo "tools/test.sh: build $((built - start)) s, tests $((done_at - built)) s"
