#!/usr/bin/env bash
# The main job on its embedded default: exports torchvision's resnet50 (random weights, opset 17,
# dynamic batch) with Debian's torch, imports it with gcomp and prints the graph summary, prints
# what O3 for cuda makes of it, then runs the O2 graph on the reference interpreter and checks the
# result against ONNX Runtime.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > build.configure.log 2>&1 || { cat build.configure.log; exit 1; }
cmake --build build -j"$(nproc)" --target gcomp
model=tv_resnet50_op17_dynamic
.venv/bin/python tests/models/make_models.py --out build/models --only "$model"
./build/tools/gcomp inspect "build/models/$model/model.onnx" --level O0 --summary
./build/tools/gcomp inspect "build/models/$model/model.onnx" --level O3 --target cuda --summary
./build/tools/gcomp check "build/models/$model" --target ref --level O2
