#!/usr/bin/env bash
# Installs what building and testing gcomp needs on a fresh Debian 12 machine:
# the Debian packages (compiler toolchain, protobuf, abseil, ONNX protobuf classes, GoogleTest,
# oneDNN and OpenBLAS for the CPU kernels, xxHash for plan section hashes, torch/torchvision for
# exports, clang-14 with its libFuzzer runtime for tools/fuzz.sh) and a Python virtual environment (.venv, system site packages
# for Debian's torch) with the pinned PyPI tooling of tools/requirements.txt and, without their
# dependencies, the CUDA header and tool wheels of tools/requirements-nodeps.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

pkgs=(build-essential cmake ninja-build pkg-config libprotobuf-dev protobuf-compiler libabsl-dev
      libonnx-dev libonnx-testdata libgtest-dev libgmock-dev libdnnl-dev libopenblas-dev libxxhash-dev python3 python3-venv python3-pip python3-torch
      clang-14 libclang-rt-14-dev
      python3-torchvision)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

venv="$root/.venv"
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/python" ] || ! cat "$root/tools/requirements.txt" "$root/tools/requirements-nodeps.txt" | cmp -s - "$stamp"; then
  echo "setup: creating $venv"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$root/tools/requirements.txt"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r "$root/tools/requirements-nodeps.txt"
  cat "$root/tools/requirements.txt" "$root/tools/requirements-nodeps.txt" > "$stamp"
fi

# The Triton tests' environment: a real tritonserver (PyPI's nvidia-pytriton bundles the binary and
# its libraries) and the tritonclient HTTP/gRPC clients, apart from .venv (tritonclient pins an
# older protobuf).
tvenv="$root/.venv-triton"
tstamp="$tvenv/.requirements"
if [ ! -x "$tvenv/bin/python" ] || ! cat "$root/tests/triton/requirements.txt" "$root/tests/triton/requirements-nodeps.txt" | cmp -s - "$tstamp"; then
  echo "setup: creating $tvenv"
  /usr/bin/python3 -m venv "$tvenv"
  "$tvenv/bin/pip" install -q --disable-pip-version-check -r "$root/tests/triton/requirements.txt"
  "$tvenv/bin/pip" install -q --disable-pip-version-check --no-deps -r "$root/tests/triton/requirements-nodeps.txt"
  cat "$root/tests/triton/requirements.txt" "$root/tests/triton/requirements-nodeps.txt" > "$tstamp"
fi
