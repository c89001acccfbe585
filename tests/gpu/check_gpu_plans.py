"""cuda plans of the ResNet and ViT fixtures run on a device, against ONNX Runtime (DESIGN.md tolerances).

For every model directory given (a fixture: model.onnx and test_data_set_*):
  - fp32 plans: every stored data set within |err| <= 1e-5*max|ref| + 1e-4*|ref| (DESIGN.md's fp32
    tolerance; cuDNN and cuBLASLt run true fp32, no TF32);
  - fp16 and bf16 plans: cosine >= 0.999 and max|err| <= 5e-2*max|ref| on the stored data sets;
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
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "passes"))
from gcomp_run import cosine, read_tensor  # noqa: E402

MAX_BATCH = 16


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    return p.returncode, p.stdout + p.stderr


def run_plan(gcomp, plan, name, x, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    f = os.path.join(out_dir, "input_0.pb")
    with open(f, "wb") as fh:
        fh.write(numpy_helper.from_array(x, name).SerializeToString())
    rc, out = run([gcomp, "run", plan, "--input", f"{name}={f}", "--output-dir", out_dir])
    if rc != 0:
        raise RuntimeError(out.strip())
    return read_tensor(os.path.join(out_dir, "output_0.pb"))


def compare(prec, got, ref):
    got, ref = got.astype(np.float64), ref.astype(np.float64)
    if not np.all(np.isfinite(got)):
        return False, "inf/NaN in the output"
    err = np.abs(got - ref)
    scale = np.abs(ref).max()
    if prec == "fp32":
        bound = 1e-5 * scale + 1e-4 * np.abs(ref)
        worst = float((err / np.maximum(bound, 1e-30)).max())
        return worst <= 1.0, f"max |err| / fp32 bound {worst:.3f}"
    cos = cosine(got, ref)
    rel = float(err.max() / max(scale, 1e-30))
    return cos >= 0.999 and rel <= 5e-2, f"cosine {cos:.6f}, max|err|/max|ref| {rel:.4f}"


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
            for prec in ("fp32", "fp16", "bf16"):
                plan = os.path.join(tmp, f"{name}_{prec}.gplan")
                rc, out = run([gcomp, "compile", model_path, "-o", plan, "--target", "cuda", "--precision", prec,
                               "--level", "O3"] + (["--batch", str(MAX_BATCH)] if dynamic else []))
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
                        got = run_plan(gcomp, plan, inp.name, x, os.path.join(tmp, "out"))
                    except RuntimeError as e:
                        if "no CUDA device" in str(e):
                            print(f"SKIPPED: {e}")
                            return 77
                        print(f"FAIL {name} {prec} {label}: {e}")
                        failed += 1
                        continue
                    ok, what = compare(prec, got, ref)
                    checked += 1
                    print(f"{'PASS' if ok else 'FAIL'} {name} {prec} {label}: {what}")
                    failed += not ok
    print(f"{checked} comparisons, {failed} failed")
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
