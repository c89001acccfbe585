#!/usr/bin/env bash
# The one command for a machine with a GPU (DESIGN: build here, run there).
#
#   tools/gpu_check.sh pack   On the build machine: builds gcomp, the gpu tests and cuda_bench
#                             (Release build in build/), and packs them with every shared library
#                             they need that a bare GPU machine lacks (protobuf, abseil, oneDNN,
#                             OpenBLAS, the C++ runtime, glibc's loader; not the CUDA libraries)
#                             and three small fixtures into gpu_carry/bundle.tar.xz (< 60 MiB).
#   tools/gpu_check.sh run    On the GPU machine, from the repository root, with gpu_carry/ carried:
#                             unpacks, finds cuBLASLt/cuDNN/NVRTC (CUDA toolkit or the Python
#                             environment's nvidia-* wheels), then within 9 minutes
#                               1. the gpu session tests (graph replay, device pointers, shared
#                                  weights, cuBLASLt epilogue order);
#                               2. small ResNet fixtures and a small ViT at fp32/fp16/bf16, batch
#                                  1..max, against ONNX Runtime;
#                               2b. the attention kernels alone (cuDNN SDPA, flash, exact) at
#                                  sequence lengths 1, 50, 197, 256 against the interpreter;
#                               3. ResNet-50 exported there with its own torch, the same checks;
#                               4. ResNet-50 fp16 against PyTorch eager and torch.compile at batch
#                                  1, 32, 256 (tools/bench/gpu_vs_torch.py);
#                               5. ViT-B/16 exported there: the checks of 3 and the benchmark of 4
#                                  at batch 1, 64, 256;
#                             and writes $OUT/gpu_report.md, $OUT/gpu_report.json, the benchmark
#                             tables and gpu_logs.tar.gz (every section's full log).
#                             GCOMP_GPU_SECTIONS="sessions small_models ..." runs only those
#                             sections (with the plan compile and exports they read).
#   tools/gpu_check.sh pack-triton / run-triton   The Triton backend on the GPU (KIND_GPU instances
#                             serving cuda plans), with a bundle of its own (gpu_carry_triton/):
#                             a second lease, or the rest of one (run-triton takes under 7 minutes).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}

pack() {
  set -e
  local build=${BUILD:-$root/build}
  cmake --build "$build" --target gcomp cuda_session_tests cuda_bench
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/bin" "$stage/lib" "$stage/models"
  local bins=("$build/tools/gcomp" "$build/tests/gpu/cuda_session_tests" "$build/tools/bench/cuda_bench")
  cp "${bins[@]}" "$stage/bin/"
  copy_libs "$stage/lib" "${bins[@]}"
  for m in tv_small_resnet_op17_dynamic zoo_small_resnet_op9 tv_small_vit_op17_dynamic; do
    cp -r "$build/models/$m" "$stage/models/"
  done
  seal "$stage" gpu_carry run
}

# copy_libs DIR BINARY...: the shared libraries the binaries need, but the CUDA libraries the GPU
# machine has itself (and tritonserver's own, carried beside it), and glibc's loader.
copy_libs() {
  local dir=$1
  shift
  for lib in $(ldd "$@" | awk '/=>/ {print $3}' | grep -v nvidia_pytriton.libs | sort -u); do
    case "$(basename "$lib")" in
      libcublas*|libcudnn*|libnvrtc*|libcuda.so*) ;;  # the GPU machine's own
      *) cp -L "$lib" "$dir/" ;;
    esac
  done
  cp -L /lib64/ld-linux-x86-64.so.2 "$dir/"
}

# seal STAGE CARRY MODE: STAGE packed into CARRY/bundle.tar.xz, which must fit the carry.
seal() {
  local stage=$1 carry=$2 mode=$3
  mkdir -p "$root/$carry"
  tar -C "$stage" -cf - . | xz -T0 -6 > "$root/$carry/bundle.tar.xz"
  rm -rf "$stage"
  local bytes
  bytes=$(stat -c %s "$root/$carry/bundle.tar.xz")
  echo "$carry/bundle.tar.xz: $((bytes / 1048576)) MiB"
  if [ "$bytes" -gt $((60 * 1048576)) ]; then echo "too large for the 64 MiB carry" >&2; exit 1; fi
  echo "run there: tools/gpu_check.sh $mode   (carry: $carry)"
}

# wrap WORK BINARY...: finds this machine's cuBLASLt/cuDNN/NVRTC (the CUDA toolkit or the Python
# environment's nvidia-* wheels) into $cudalibs, and writes WORK/BINARY wrappers that run
# WORK/bin/BINARY with the carried libraries: the system's glibc when it is at least the build's,
# else the carried loader and libc ($loader is then set to that loader).
wrap() {
  local work=$1
  shift
  local dirs=() d
  for lib in libcublasLt.so.13 libcudnn.so.9 libnvrtc.so.13; do
    d=$( { ls -d /usr/local/cuda*/lib64 /usr/local/cuda*/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu 2>/dev/null;
           $py -c 'import site; [print(p) for p in site.getsitepackages()]' 2>/dev/null | sed 's|$|/nvidia/*/lib|'; } |
         while read -r pat; do for x in $pat; do [ -e "$x/$lib" ] && echo "$x"; done; done | head -1)
    [ -n "$d" ] && dirs+=("$d")
  done
  cudalibs=$(printf '%s\n' "${dirs[@]}" | awk '!seen[$0]++' | paste -sd:)
  need=$(strings "$work/lib/libc.so.6" | grep -m1 -o 'GNU C Library[^.]*\.[0-9]*' | grep -o '[0-9]*\.[0-9]*$')
  have=$(ldd --version 2>/dev/null | head -1 | grep -o '[0-9]*\.[0-9]*$')
  loader=""
  if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" = "$need" ]; then
    rm -f "$work/lib/libc.so.6" "$work/lib/libm.so.6" "$work/lib/ld-linux-x86-64.so.2"
  else
    loader="$work/lib/ld-linux-x86-64.so.2"
  fi
  for b in "$@"; do
    if [ -z "$loader" ]; then
      printf '#!/bin/sh\nLD_LIBRARY_PATH=%s:%s exec %s "$@"\n' "$work/lib" "$cudalibs" "$work/bin/$b" > "$work/$b"
    else
      printf '#!/bin/sh\nexec %s --library-path %s:%s %s "$@"\n' "$loader" "$work/lib" "$cudalibs" "$work/bin/$b" > "$work/$b"
    fi
    chmod +x "$work/$b"
  done
}

run() {
  local out=${OUT:?set OUT to the report folder}
  local py=${PYTHON:-python3}
  local start=$SECONDS
  local work=/tmp/gcomp_gpu_check
  rm -rf "$work" && mkdir -p "$work"
  tar -C "$work" -xJf "$root/gpu_carry/bundle.tar.xz"
  wrap "$work" gcomp cuda_session_tests cuda_bench
  mkdir -p "$out"
  local md="$out/gpu_report.md" json="$out/gpu_report.json"
  {
    echo "# gcomp GPU check"
    echo
    echo "- device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
    echo "- CUDA libraries: ${cudalibs:-none found}; glibc here $have, build $need"
    echo "- python: $($py -c 'import torch, onnxruntime; print("torch", torch.__version__, "onnxruntime", onnxruntime.__version__)' 2>&1 | tail -1)"
  } > "$md"
  local results=()
  section() {  # NAME TIMEOUT COMMAND...
    local name=$1 limit=$2
    shift 2
    # GCOMP_GPU_SECTIONS="a b": only those (and the plans and exports they read).
    case "$name" in plans_compile|export_*) ;; *)
      if [ -n "${GCOMP_GPU_SECTIONS:-}" ] && ! [[ " $GCOMP_GPU_SECTIONS " == *" $name "* ]]; then return; fi ;;
    esac
    local t0=$SECONDS log="$out/$name.log"
    timeout "$limit" "$@" > "$log" 2>&1
    local rc=$?
    local status=pass
    [ $rc -eq 77 ] && status=skipped
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && status="fail (exit $rc)"
    [ $rc -eq 124 ] && status="timeout after ${limit}s"
    { echo; echo "## $name: $status ($((SECONDS - t0)) s)"; echo; echo '```'; tail -40 "$log"; echo '```'; } >> "$md"
    results+=("{\"section\": \"$name\", \"status\": \"$status\", \"seconds\": $((SECONDS - t0))}")
  }
  section plans_compile 60 env GCOMP="$work/gcomp" MODELS="$work/models" OUT="$work/plans" sh "$root/tests/gpu/compile_plans.sh"
  section sessions 60 "$work/cuda_session_tests" "$work/plans/tv_small_resnet_op17_dynamic_fp16.gplan" \
    "$work/plans/tv_small_resnet_op17_dynamic_fp32.gplan" "$work/plans/tv_small_resnet_op17_dynamic_bf16.gplan"
  section small_models 100 $py "$root/tests/gpu/check_gpu_plans.py" "$work/gcomp" "$work/models" \
    tv_small_resnet_op17_dynamic zoo_small_resnet_op9 tv_small_vit_op17_dynamic
  section attention 90 $py "$root/tests/gpu/check_gpu_attention.py" "$work/gcomp"
  section export_resnet50 60 $py "$root/tools/bench/gpu_vs_torch.py" export "$work/full/tv_resnet50"
  section resnet50 150 $py "$root/tests/gpu/check_gpu_plans.py" "$work/gcomp" "$work/full" tv_resnet50
  section benchmark $((330 - (SECONDS - start))) $py "$root/tools/bench/gpu_vs_torch.py" bench "$work/full/tv_resnet50" \
    --gcomp "$work/gcomp" --cuda-bench "$work/cuda_bench" --json "$out/gpu_bench.json" --markdown "$out/gpu_bench.md"
  [ -f "$out/gpu_bench.md" ] && { echo; echo "## benchmark table"; echo; cat "$out/gpu_bench.md"; } >> "$md"
  section export_vit_b_16 60 $py "$root/tools/bench/gpu_vs_torch.py" export "$work/full/tv_vit_b_16" --model vit_b_16
  section vit_b_16 150 $py "$root/tests/gpu/check_gpu_plans.py" "$work/gcomp" "$work/full" tv_vit_b_16
  section benchmark_vit $((530 - (SECONDS - start))) $py "$root/tools/bench/gpu_vs_torch.py" bench \
    "$work/full/tv_vit_b_16" --model vit_b_16 --batches 1,64,256 --gcomp "$work/gcomp" --cuda-bench "$work/cuda_bench" \
    --json "$out/gpu_bench_vit.json" --markdown "$out/gpu_bench_vit.md"
  [ -f "$out/gpu_bench_vit.md" ] && { echo; echo "## benchmark table (ViT-B/16)"; echo; cat "$out/gpu_bench_vit.md"; } >> "$md"
  printf '{"total_seconds": %d, "sections": [%s]}\n' $((SECONDS - start)) "$(IFS=,; echo "${results[*]}")" > "$json"
  # One archive of the full logs (the report keeps each one's last 40 lines): a run's $OUT comes
  # back as a handful of files.
  (cd "$out" && tar -czf gpu_logs.tar.gz ./*.log && rm -f ./*.log)
  echo "report: $md ($((SECONDS - start)) s)"
}

# The Triton backend's GPU part: a bundle of its own (tritonserver's ~26 MiB do not fit beside the
# main bundle in one 64 MiB carry): the CLI, libtriton_gcomp.so with libgcomp.so.0 and their
# libraries, nvidia-pytriton's tritonserver with the libraries it bundles, the small ResNet fixture.
pack_triton() {
  set -e
  local build=${BUILD:-$root/build}
  cmake --build "$build" --target gcomp triton_gcomp
  local ts
  ts=$(cd "$root/tests/triton" && PYTHONDONTWRITEBYTECODE=1 "$root/.venv-triton/bin/python" -c 'import triton_server; print(triton_server.tritonserver_binary())')
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/bin" "$stage/lib" "$stage/models" "$stage/backends/gcomp" \
    "$stage/tritonserver/pytriton/tritonserver/bin" "$stage/tritonserver/nvidia_pytriton.libs"
  cp "$build/tools/gcomp" "$stage/bin/"
  cp "$build/triton/backends/gcomp/libtriton_gcomp.so" "$stage/backends/gcomp/"
  copy_libs "$stage/lib" "$build/tools/gcomp" "$build/triton/backends/gcomp/libtriton_gcomp.so" "$ts"
  cp "$ts" "$stage/tritonserver/pytriton/tritonserver/bin/"
  for lib in $(ldd "$ts" | awk '/=>/ {print $3}' | grep nvidia_pytriton.libs); do
    cp -L "$lib" "$stage/tritonserver/nvidia_pytriton.libs/"
  done
  cp -r "$build/models/tv_small_resnet_op17_dynamic" "$stage/models/"
  seal "$stage" gpu_carry_triton run-triton
}

# On the GPU machine with gpu_carry_triton/ carried: tests/gpu/check_gpu_triton.py (KIND_GPU cuda
# plans and a KIND_CPU cpu plan in one tritonserver, outputs against `gcomp run`, 8 concurrent
# clients, bad requests, a clean stop); writes $OUT/gpu_triton_report.md. Without nvidia-smi it
# serves the cpu model alone (a check of the bundle on the build machine).
run_triton() {
  local out=${OUT:?set OUT to the report folder}
  local py=${PYTHON:-python3}
  local start=$SECONDS work=/tmp/gcomp_gpu_triton
  rm -rf "$work" && mkdir -p "$work"
  tar -C "$work" -xJf "$root/gpu_carry_triton/bundle.tar.xz" || { echo "no gpu_carry_triton/bundle.tar.xz" >&2; return 1; }
  wrap "$work" gcomp
  local gpu_args=() md="$out/gpu_triton_report.md"
  command -v nvidia-smi > /dev/null && nvidia-smi > /dev/null 2>&1 || gpu_args=(--cpu-only)
  local libpath="$work/lib:$work/tritonserver/nvidia_pytriton.libs${cudalibs:+:$cudalibs}"
  local loader_args=()
  [ -n "$loader" ] && loader_args=(--loader "$loader")
  mkdir -p "$out"
  timeout 420 $py "$root/tests/gpu/check_gpu_triton.py" "$work/gcomp" "$work/backends" "$work/models" "$work/t" \
    --tritonserver "$work/tritonserver/pytriton/tritonserver/bin/tritonserver" --library-path "$libpath" \
    "${loader_args[@]}" "${gpu_args[@]}" > "$out/gpu_triton.log" 2>&1
  local rc=$?
  {
    echo "# gcomp Triton GPU check"
    echo
    echo "- device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || true)${gpu_args:+none (no nvidia-smi): the cpu model only}"
    echo "- CUDA libraries: ${cudalibs:-none found}; glibc here $have, build $need"
    echo "- exit $rc after $((SECONDS - start)) s"
    echo
    echo '```'
    tail -60 "$out/gpu_triton.log"
    echo '```'
  } > "$md"
  echo "report: $md"
  return $rc
}

case "$mode" in
  pack) pack ;;
  run) run ;;
  pack-triton) pack_triton ;;
  run-triton) run_triton ;;
  *) echo "usage: tools/gpu_check.sh pack|run|pack-triton|run-triton" >&2; exit 2 ;;
esac
