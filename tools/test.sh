#!/usr/bin/env bash
# Builds gcomp and runs its tests: the default tier (unit tests, small models, conformance,
# malformed corpus, CLI); --full adds the full-size models (Release only; minutes); --sanitize
# builds with AddressSanitizer + UndefinedBehaviorSanitizer (no CUDA parts) in build-asan and runs
# the default tier under it; --tsan builds the shared-plan thread test with ThreadSanitizer in
# build-tsan and runs it on plans the Release build compiles. Installs what is missing first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
labels=(-LE full)
build_type=Release
build="build"
extra=()
tsan=0
for arg in "$@"; do
  case "$arg" in
    --full) labels=() ;;
    --debug) build_type=Debug; build="build-debug" ;;
    --sanitize)
      build_type=RelWithDebInfo; build="build-asan"
      # Line tables only (-g1): the reports' stack traces keep file:line, and the test files compile
      # faster (tests/graph/nn_ops_test.cc: 89 -> 65 s).
      extra=(-DGCOMP_SANITIZE=ON -DGCOMP_ENABLE_CUDA=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
             "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
      export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:abort_on_error=0"
      export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
      ;;
    --tsan) tsan=1 ;;
    *) echo "usage: tools/test.sh [--full] [--debug] [--sanitize] [--tsan]" >&2; exit 2 ;;
  esac
done
bash tools/setup.sh
jobs=$(nproc)
if [ "$tsan" = 1 ]; then
  # One plan shared by 8 threads with their own sessions (tests/api/threads_test.cc) under
  # ThreadSanitizer: only that program is built instrumented (no CUDA); the Release build's CLI
  # compiles the plans. One kernel thread per session: GCC's OpenMP runtime (libgomp) is not
  # instrumented, so ThreadSanitizer cannot see its team barriers and reports every OpenMP team's
  # use of its caller's stack as a race (the Release tier runs 1/2/3 kernel threads).
  start=$(date +%s)
  if [ ! -x build/tools/gcomp ]; then
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > build.configure.log 2>&1 || { cat build.configure.log; exit 1; }
    cmake --build build -j"$jobs" --target gcomp
  fi
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGCOMP_SANITIZE_THREAD=ON \
    -DGCOMP_ENABLE_CUDA=OFF > build-tsan.configure.log 2>&1 || { cat build-tsan.configure.log; exit 1; }
  cmake --build build-tsan -j"$jobs" --target threads_tests
  plans=$(mktemp -d)
  trap 'rm -rf "$plans"' EXIT
  for m in tv_small_resnet_op17_dynamic tv_small_vit_op17_dynamic; do
    if [ ! -f "build/models/$m/model.onnx" ]; then ctest --test-dir build -R models.generate.small > /dev/null; fi
    build/tools/gcomp compile "build/models/$m/model.onnx" --batch 4 -o "$plans/$m.gplan" > /dev/null
  done
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" GCOMP_THREADS_ITERATIONS=40 \
    GCOMP_THREADS_KERNEL_THREADS=1 build-tsan/tests/api/threads_tests "$plans"/*.gplan
  echo "tools/test.sh --tsan: $(( $(date +%s) - start )) s"
  exit 0
fi
start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "${extra[@]}" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$jobs"
built=$(date +%s)
ctest --test-dir "$build" --output-on-failure -j"$jobs" "${labels[@]}"
done_at=$(date +%s)
echo "tools/test.sh: build $((built - start)) s, tests $((done_at - built)) s"
