#!/usr/bin/env bash
# Builds gcomp's libFuzzer targets (tests/fuzz, clang-14 with ASan + UBSan, in build-fuzz) and runs
# them: first every committed crash input of tests/fuzz/crashes/TARGET/ (a replay: each must now be
# handled without a crash), then SECONDS of fuzzing per target from a seed corpus built here (the
# small fixture models and the malformed-model corpus for fuzz_import and fuzz_compile, the
# fixtures' TensorProto inputs and outputs for fuzz_tensor, cpu plans of the small fixtures at
# fp32/bf16/fp16 and batch 1 and 4 for fuzz_plan, compiled by the Release tree's gcomp, which is
# built first if missing). New crash inputs land in build-fuzz/artifacts/TARGET/.
#   tools/fuzz.sh [SECONDS] [TARGET ...]      (default 60 s, every target)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_import fuzz_tensor fuzz_compile fuzz_plan)
bash tools/setup.sh
build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
  # Line tables only: findings' stack traces keep file:line.
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
    -DGCOMP_ENABLE_CUDA=OFF -DGCOMP_BUILD_TESTS=OFF -DGCOMP_BUILD_TOOLS=OFF -DGCOMP_INSTALL=OFF \
    -DGCOMP_FUZZ=ON > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

# Seeds.
seeds="$build/seeds"
if [ ! -f "$seeds/.done-v2" ]; then
  rm -rf "$seeds"
  mkdir -p "$seeds/fuzz_import" "$seeds/fuzz_tensor" "$seeds/fuzz_compile" "$seeds/fuzz_plan"
  .venv/bin/python tests/models/make_models.py --out "$build/models" --tier small > /dev/null
  .venv/bin/python tests/malformed/make_corpus.py "$build/malformed" > /dev/null
  find "$build/models" "$build/malformed" -name '*.onnx' -size -2M | while read -r f; do
    cp "$f" "$seeds/fuzz_import/$(echo "$f" | md5sum | cut -c1-16).onnx"
  done
  find "$build/models" -name '*.pb' -size -2M | while read -r f; do
    cp "$f" "$seeds/fuzz_tensor/$(echo "$f" | md5sum | cut -c1-16).pb"
  done
  cp "$seeds/fuzz_import/"* "$seeds/fuzz_compile/"
  if [ ! -x build/tools/gcomp ]; then
    [ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > build.configure.log
    cmake --build build -j"$(nproc)" --target gcomp
  fi
  k=0
  for m in "$build"/models/*/model.onnx; do
    [ "$(stat -c %s "$m")" -lt 2000000 ] || continue
    # Every fixture at fp32 batch 1; every third also at bf16 with batch 4 and at fp16.
    opts=("--batch 1" )
    [ $((k % 3)) -eq 0 ] && opts+=("--precision bf16 --batch 4" "--precision fp16")
    for o in "${opts[@]}"; do
      # shellcheck disable=SC2086
      build/tools/gcomp compile "$m" -o "$seeds/fuzz_plan/$k$(echo "$o" | tr -d ' -').gplan" --target cpu $o > /dev/null
    done
    k=$((k + 1))
  done
  touch "$seeds/.done-v2"
fi

status=0
for t in "${targets[@]}"; do
  crashes="tests/fuzz/crashes/$t"
  work="$build/corpus/$t"
  artifacts="$build/artifacts/$t"
  mkdir -p "$work" "$artifacts"
  limits=(-rss_limit_mb=4096 -malloc_limit_mb=1024 -timeout=10)
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
