#!/usr/bin/env bash
# Builds gcomp's libFuzzer targets (tests/fuzz, clang-14 with ASan + UBSan, in build-fuzz) and runs
# them: first every committed crash input of tests/fuzz/crashes/TARGET/ (a replay: each must now be
# handled without a crash), then SECONDS of fuzzing per target from a seed corpus built here (the
# small fixture models and the malformed-model corpus for fuzz_import, the fixtures' TensorProto
# inputs and outputs for fuzz_tensor). New crash inputs land in build-fuzz/artifacts/TARGET/.
#   tools/fuzz.sh [SECONDS] [TARGET ...]      (default 60 s, every target)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_import fuzz_tensor)
bash tools/setup.sh
build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGCOMP_ENABLE_CUDA=OFF -DGCOMP_BUILD_TESTS=OFF -DGCOMP_BUILD_TOOLS=OFF -DGCOMP_INSTALL=OFF \
    -DGCOMP_FUZZ=ON > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

# Seeds.
seeds="$build/seeds"
if [ ! -f "$seeds/.done" ]; then
  rm -rf "$seeds"
  mkdir -p "$seeds/fuzz_import" "$seeds/fuzz_tensor"
  .venv/bin/python tests/models/make_models.py --out "$build/models" --tier small > /dev/null
  .venv/bin/python tests/malformed/make_corpus.py "$build/malformed" > /dev/null
  find "$build/models" "$build/malformed" -name '*.onnx' -size -2M | while read -r f; do
    cp "$f" "$seeds/fuzz_import/$(echo "$f" | md5sum | cut -c1-16).onnx"
  done
  find "$build/models" -name '*.pb' -size -2M | while read -r f; do
    cp "$f" "$seeds/fuzz_tensor/$(echo "$f" | md5sum | cut -c1-16).pb"
  done
  touch "$seeds/.done"
fi

status=0
for t in "${targets[@]}"; do
  crashes="tests/fuzz/crashes/$t"
  work="$build/corpus/$t"
  artifacts="$build/artifacts/$t"
  mkdir -p "$work" "$artifacts"
  limits=(-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10)
  if [ -d "$crashes" ] && [ -n "$(ls -A "$crashes")" ]; then
    echo "== $t: replaying $(ls "$crashes" | wc -l) committed crash inputs"
    "$build/tests/fuzz/$t" "${limits[@]}" "$crashes"/* > "$build/$t.replay.log" 2>&1 || {
      tail -30 "$build/$t.replay.log"; status=1; }
  fi
  echo "== $t: fuzzing for $seconds s"
  if ! "$build/tests/fuzz/$t" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$work" "$seeds/$t" > "$build/$t.log" 2>&1; then
    tail -40 "$build/$t.log"
    status=1
  fi
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|cov: " "$build/$t.log" | tail -4
done
exit $status
