"""Structure and numerics of O3 (lowering and layout) on the model fixtures, for every target.
For each model and target: `gcomp inspect --level O3 --target T --format json` gives the graph,
whose lowering decisions and layout Transposes are counted and checked; the reference interpreter
on the O0 graph and on the O3 graph lowered for T (`gcomp run --reference`) agree within rtol 1e-4
(atol 1e-5*max|O0|) on every stored data set.
Usage: check_lowering.py GCOMP MODELS_DIR MODEL [MODEL ...]"""
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from gcomp_run import run_model  # noqa: E402

# The built-in targets and a hypothetical CPU with GEMM kernels only (no implicit-GEMM conv, no
# fused attention), which takes the im2col + GEMM and batched-GEMM attention lowerings.
GEMM_ONLY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "targets", "gemm_only_cpu.target")
TARGETS = ["ref", "cpu", "cuda", "cuda:sm_80", GEMM_ONLY]


def inspect(gcomp, path, target):
    p = subprocess.run([gcomp, "inspect", path, "--level", "O3", "--target", target, "--format", "json"],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"inspect --level O3 --target {target} failed: {p.stderr.strip()}")
    return json.loads(p.stdout)


def lowerings(doc):
    return collections.Counter(d["choice"] for n in doc["nodes"] for d in n["decisions"] if d["kind"] == "lowering")


def family(case_dir):
    with open(os.path.join(case_dir, "meta.json")) as f:
        return json.load(f)["family"]


def check_structure(name, target, doc, fail, ref_transposes=None, vit=False):
    ops = collections.Counter(n["op"] for n in doc["nodes"])
    low = lowerings(doc)
    cuda = target.startswith("cuda") or target == "cpu"  # implicit-GEMM conv and fused attention
    label = "gemm-only-cpu" if target == GEMM_ONLY else target
    if vit:
        if cuda and ops["Attention"] == 0:
            fail(f"{target}: no Attention left (the target has a fused kernel)")
        if not cuda and target != "ref" and ops["Attention"]:
            fail(f"{target}: {ops['Attention']} Attention left (no fused kernel: batched GEMMs expected)")
        if target == "ref" and low["batched GEMM + softmax"] != ops["Attention"]:
            fail("ref: every Attention must record its lowering decision")
        if cuda and ref_transposes is not None and ops["Transpose"] != ref_transposes:
            fail(f"{target}: {ops['Transpose']} Transpose, expected {ref_transposes} as for ref (NHWC patch tokens "
                 "need no Transpose, the input edge one replaces the export's)")
    else:
        if ops["Conv"]:
            fail(f"{target}: {ops['Conv']} Conv left")
        if target == "ref" and sum(low.values()) != ops["FusedConv"]:
            fail("ref: every FusedConv must record its lowering decision")
        # Without an implicit-GEMM conv every k x k conv becomes im2col + GEMM, except grouped ones,
        # which stay FusedConv and run per group (their decision says "direct (grouped)").
        if target == GEMM_ONLY and ops["FusedConv"] != low["direct (grouped)"]:
            fail(f"{label}: {ops['FusedConv']} FusedConv left, {low['direct (grouped)']} of them grouped "
                 "(no implicit-GEMM conv: im2col + GEMM expected)")
        if cuda and low["implicit GEMM"] != ops["FusedConv"]:
            fail(f"{target}: every remaining FusedConv must be an implicit GEMM")
        if target != "ref" and ops["Transpose"] != 1:
            fail(f"{target}: {ops['Transpose']} Transpose, expected exactly one (the NHWC input edge)")
    return (f"{label}: {ops['Transpose']} Transpose, {ops['FusedConv']} FusedConv, {ops['Im2Col']} Im2Col, "
            f"{ops['Attention']} Attention; lowerings {dict(low)}")


def main():
    gcomp, models_dir, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    failures = []
    for name in names:
        case_dir = f"{models_dir}/{name}"
        path = f"{case_dir}/model.onnx"
        ref_transposes = None
        for target in TARGETS:
            problems = []
            summary = ""
            try:
                doc = inspect(gcomp, path, target)
                if target == "ref":
                    ref_transposes = sum(1 for n in doc["nodes"] if n["op"] == "Transpose")
                summary = check_structure(name, target, doc, problems.append, ref_transposes,
                                          family(case_dir) == "vit")
                worst = 0.0
                for data_set in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
                    inputs = sorted(glob.glob(os.path.join(data_set, "input_*.pb")))
                    with tempfile.TemporaryDirectory() as d:
                        o0 = run_model(gcomp, path, inputs, ["--level", "O0"], os.path.join(d, "o0"))
                        o3 = run_model(gcomp, path, inputs, ["--level", "O3", "--target", target, "--reference"],
                                 os.path.join(d, "o3"))
                    for a, b in zip(o0, o3):
                        atol = 1e-5 * float(np.abs(a).max())
                        if a.shape != b.shape or not np.allclose(b, a, rtol=1e-4, atol=atol):
                            problems.append(f"{os.path.basename(data_set)}: O3 for {target} differs from O0 "
                                            f"(max abs {np.abs(b - a).max() if a.shape == b.shape else 'shape'})")
                        elif a.size:
                            worst = max(worst, float(np.abs(b - a).max()) / max(float(np.abs(a).max()), 1e-30))
                summary += f"; max |O3-O0|/max|O0| {worst:.1e}"
            except RuntimeError as e:
                problems.append(str(e))
            print(f"{'ok' if not problems else 'FAIL':4} {name:32} {summary}")
            failures += [f"{name} ({target}): {p}" for p in problems]
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
