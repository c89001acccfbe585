#!/usr/bin/env bash
# The main job on its embedded default: exports torchvision's resnet50 (random weights, opset 17,
# dynamic batch) with Debian's torch, compiles it into a cpu plan, runs the plan on a generated
# 224x224 image tensor, checks the plan against ONNX Runtime on the stored test data, and
# benchmarks it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > build.configure.log 2>&1 || { cat build.configure.log; exit 1; }
cmake --build build -j"$(nproc)" --target gcomp
model=tv_resnet50_op17_dynamic
.venv/bin/python tests/models/make_models.py --out build/models --only "$model"
./build/tools/gcomp inspect "build/models/$model/model.onnx" --level O3 --target cpu --summary
./build/tools/gcomp compile "build/models/$model/model.onnx" -o build/resnet50.gplan --target cpu --batch 8
./build/tools/gcomp inspect build/resnet50.gplan | sed -n '1,8p;/^kernels:/,$p'
# A generated image: smooth colour gradients with a bright disc, normalized with ImageNet's mean/std.
.venv/bin/python - <<'PY'
import numpy as np
from onnx import numpy_helper
y, x = np.mgrid[0:224, 0:224] / 223.0
rgb = np.stack([x, y, 1 - x * y]) * 0.8
rgb += 0.6 * (((x - 0.6) ** 2 + (y - 0.4) ** 2) < 0.04)
mean, std = np.array([0.485, 0.456, 0.406])[:, None, None], np.array([0.229, 0.224, 0.225])[:, None, None]
image = ((np.clip(rgb, 0, 1) - mean) / std).astype(np.float32)[None]
open("build/image.pb", "wb").write(numpy_helper.from_array(image, "input").SerializeToString())
PY
./build/tools/gcomp run build/resnet50.gplan --input input=build/image.pb --output-dir build/main_job_out
.venv/bin/python -c "
import numpy as np, onnx; from onnx import numpy_helper
y = numpy_helper.to_array(onnx.load_tensor('build/main_job_out/output_0.pb'))[0]
print('top-5 classes (random weights):', ', '.join(f'{i} ({y[i]:.3f})' for i in np.argsort(-y)[:5]))"
./build/tools/gcomp check "build/models/$model" --target cpu
./build/tools/gcomp bench build/resnet50.gplan --batch 1 --threads "$(nproc)" --warmup 2 --iterations 10
