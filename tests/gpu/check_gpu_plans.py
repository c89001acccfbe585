"""cuda plans of the ResNet and ViT fixtures run on a device, against ONNX Runtime (DESIGN.md tolerances).

For every model directory given (a fixture: model.onnx and test_data_set_*):
  - fp32 plans: every stored data set within |err| <= 1e-5*max|ref| + 1e-4*|ref| (DESIGN.md's fp32
    tolerance; cuDNN and cuBLASLt run true fp32, no TF32);
  - fp16 and bf16 plans: cosine >= 0.999 and max|err| <= 5e-2*max|ref| on the stored data sets;
  - fp8 plans (calibrated on test_data_set_0): ONNX Runtime at fp8's listed bound (gcomp_run.FP8_BOUNDS),
    and the same inputs through the sm_90-lowered graph on the reference interpreter (`run
    --reference`: e4m3 operands, column scales, fp16 storage as the kernels compute) at cosine >= 0.995,
    so the fp8 GEMMs (cuBLASLt outer-vector scales or the fallback epilogue) compute what the plan says
    (on the stored data sets of the small fixtures: the interpreter is slow on full-size models);
  - every precision, dynamic-batch models: seeded random inputs at batch 1, 2, 7 and the plan's
    maximum, each against ONNX Runtime on the same inputs (fp32 at the fp32 tolerance), so every
    batch size's algorithm choice and CUDA graph is exercised;
  - no inf or NaN anywhere.
(ViT fp16/bf16 plans run attention on the flash-attention kernel, fp32 plans on the exact one.)
Exits 77 (skipped) with the reason where this machine has no CUDA device.
Usage: check_gpu_plans.py GCOMP MODELS_DIR MODEL [MODEL ...]"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "passes"))
from gcomp_run import compare_precision, cosine, fp8_bound, read_tensor, run_named  # noqa: E402

MAX_BATCH = 16


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    return p.returncode, p.stdout + p.stderr


def main():
    gcomp, models_dir, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    failed = checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            case = os.path.join(models_dir, name)
            model_path = os.path.join(case, "model.onnx")
            model = onnx.load(model_path)
            inits = {i.name for i in model.graph.initializer}
            inp = [i for i in model.graph.input if i.name not in inits][0]
            dims = [d.dim_value if d.HasField("dim_value") else None for d in inp.type.tensor_type.shape.dim]
            dynamic = dims[0] is None
            session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
            calibration = ["--calibration", os.path.join(case, "test_data_set_0")]
            for prec in ("fp32", "fp16", "bf16", "fp8"):
                plan = os.path.join(tmp, f"{name}_{prec}.gplan")
                rc, out = run([gcomp, "compile", model_path, "-o", plan, "--target", "cuda", "--precision", prec,
                               "--level", "O3"] + (["--batch", str(MAX_BATCH)] if dynamic else []) +
                              (calibration if prec == "fp8" else []))
                if rc != 0:
                    print(f"FAIL {name} {prec}: compile: {out.strip()}")
                    failed += 1
                    continue
                cases = [(os.path.basename(s), read_tensor(os.path.join(s, "input_0.pb")),
                          read_tensor(os.path.join(s, "output_0.pb")))
                         for s in sorted(glob.glob(os.path.join(case, "test_data_set_*")))]
                if dynamic:
                    rng = np.random.default_rng(20261201)
                    for b in (1, 2, 7, MAX_BATCH):
                        x = rng.standard_normal([b] + dims[1:]).astype(np.float32)
                        cases.append((f"batch {b}", x, session.run(None, {inp.name: x})[0]))
                for label, x, ref in cases:
                    try:
                        got = run_named(gcomp, plan, {inp.name: x}, os.path.join(tmp, "out"))
                    except RuntimeError as e:
                        if "no CUDA device" in str(e):
                            print(f"SKIPPED: {e}")
                            return 77
                        print(f"FAIL {name} {prec} {label}: {e}")
                        failed += 1
                        continue
                    if prec == "fp8":
                        ok, what = compare_precision(prec, got, ref, *fp8_bound(name))
                    else:
                        ok, what = compare_precision(prec, got, ref)
                    if prec == "fp8" and "small" in name and label.startswith("test_data_set"):
                        lowered = run_named(gcomp, model_path, {inp.name: x}, os.path.join(tmp, "ref"),
                                            ["--target", "cuda:sm_90", "--reference", "--level", "O3", "--precision",
                                             "fp8"] + calibration)
                        cos = cosine(got.astype(np.float64), lowered.astype(np.float64))
                        ok = ok and cos >= 0.995
                        what += f"; vs the lowered graph on the reference interpreter: cosine {cos:.6f} (>= 0.995)"
                    checked += 1
                    print(f"{'PASS' if ok else 'FAIL'} {name} {prec} {label}: {what}")
                    failed += not ok
    print(f"{checked} comparisons, {failed} failed")
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
