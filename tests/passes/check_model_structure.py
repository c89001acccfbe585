"""Structure and numerics of O2 on the model fixtures.
For each model folder: `gcomp inspect --level O0/O2 --format json` gives the graphs; the O2 graph
must have the fused structure below; the reference interpreter's outputs on the O0 and the O2
graph must agree within rtol 1e-4 (atol 1e-5*max|O0|) at every stored batch size, and
`gcomp check --level O2` must match the stored ONNX Runtime references.
Usage: check_model_structure.py GCOMP MODELS_DIR MODEL [MODEL ...]"""
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from gcomp_run import run_model  # noqa: E402


def inspect(gcomp, path, level):
    p = subprocess.run([gcomp, "inspect", path, "--level", level, "--format", "json"], capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"inspect --level {level} failed: {p.stderr.strip()}")
    return json.loads(p.stdout)


def ops(doc):
    return collections.Counter(n["op"] for n in doc["nodes"])


def with_residual(doc, op):
    # The residual is input 3 of FusedConv and FusedGemm.
    return sum(1 for n in doc["nodes"] if n["op"] == op and len(n["inputs"]) > 3 and n["inputs"][3] is not None)


def activation(doc, op, act):
    return sum(1 for n in doc["nodes"] if n["op"] == op and n["attributes"].get("activation") == act)


def check_resnet(o0, o2, fail, meta):
    c0, c2 = ops(o0), ops(o2)
    convs = c0["Conv"]
    blocks = c0["Add"] if c0["Add"] else 0
    for op in ("BatchNormalization", "Add", "Relu", "Conv"):
        if c2[op]:
            fail(f"{c2[op]} standalone {op} left")
    if c2["FusedConv"] != convs:
        fail(f"{convs} Conv -> {c2['FusedConv']} FusedConv, expected {convs}")
    if with_residual(o2, "FusedConv") != blocks:
        fail(f"{with_residual(o2, 'FusedConv')} FusedConv with a residual, expected {blocks} (one per block)")
    return f"{convs} Conv -> {c2['FusedConv']} FusedConv ({with_residual(o2, 'FusedConv')} with residual)"


def token_pools(doc):
    """ReduceMean over the token axis of [batch, S, E] rows: the global average pool of ViTs
    without a class token (timm's global_pool="avg"), not a LayerNorm statistic."""
    return sum(1 for n in doc["nodes"] if n["op"] == "ReduceMean" and n["attributes"].get("axes") == [1]
               and n["attributes"].get("keepdims") == 0)


def check_vit(o0, o2, fail, meta):
    c0, c2 = ops(o0), ops(o2)
    # DeiT's distilled head: (head(cls) + head_dist(dist)) / 2, the Add a residual of the second head.
    heads = 2 if "distilled" in meta.get("notes", {}).get("exported_as", "") else 1
    c2["ReduceMean"] -= token_pools(o2)
    blocks = c0["Softmax"] or c0["Attention"]
    if c2["Attention"] != blocks:
        fail(f"{c2['Attention']} Attention, expected {blocks} (one per block)")
    if c2["LayerNorm"] != 2 * blocks + 1:
        fail(f"{c2['LayerNorm']} LayerNorm, expected {2 * blocks + 1}")
    for op in ("Erf", "Gelu", "Softmax", "ReduceMean", "Pow", "Sqrt", "LayerNormalization"):
        if c2[op]:
            fail(f"{c2[op]} standalone {op} left")
    gelu = activation(o2, "FusedGemm", "gelu") + activation(o2, "FusedGemm", "gelu_tanh")
    if gelu != blocks:
        fail(f"{gelu} FusedGemm with GELU, expected {blocks} (every FC1)")
    res = with_residual(o2, "FusedGemm")
    if res != 2 * blocks + heads - 1:
        fail(f"{res} FusedGemm with a residual, expected {2 * blocks + heads - 1} (both residual adds of every "
             f"block{', and the sum of the two heads' if heads == 2 else ''})")
    return f"{blocks} blocks: {c2['Attention']} Attention, {c2['LayerNorm']} LayerNorm, {gelu} GELU-FC1, {res} residual FusedGemm"


def compare_o0_o2(gcomp, case_dir, fail):
    """The reference interpreter on the O0 and the O2 graph agree within rtol 1e-4 on every stored
    data set (batch 1 and 3 for dynamic-batch models)."""
    worst = 0.0
    for data_set in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
        inputs = sorted(glob.glob(os.path.join(data_set, "input_*.pb")))
        with tempfile.TemporaryDirectory() as d:
            o0 = run_model(gcomp, os.path.join(case_dir, "model.onnx"), inputs, ["--level", "O0"], os.path.join(d, "o0"))
            o2 = run_model(gcomp, os.path.join(case_dir, "model.onnx"), inputs, ["--level", "O2"], os.path.join(d, "o2"))
        for a, b in zip(o0, o2):
            atol = 1e-5 * float(np.abs(a).max())
            if a.shape != b.shape or not np.allclose(b, a, rtol=1e-4, atol=atol):
                fail(f"{os.path.basename(data_set)}: O2 differs from O0 (max abs {np.abs(b - a).max()})")
            worst = max(worst, float(np.abs(b - a).max()) / max(float(np.abs(a).max()), 1e-30))
    return worst


def main():
    gcomp, models_dir, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    failures = []
    for name in names:
        path = f"{models_dir}/{name}/model.onnx"
        problems = []
        try:
            o0 = inspect(gcomp, path, "O0")
            start = time.monotonic()
            o2 = inspect(gcomp, path, "O2")
            secs = time.monotonic() - start
            with open(f"{models_dir}/{name}/meta.json") as f:
                meta = json.load(f)
            kind = check_vit if meta["family"] == "vit" else check_resnet
            summary = kind(o0, o2, problems.append, meta)
            p = subprocess.run([gcomp, "check", f"{models_dir}/{name}", "--level", "O2"], capture_output=True,
                               text=True, timeout=1800)
            if p.returncode != 0:
                problems.append("gcomp check --level O2: " + (p.stdout + p.stderr).strip().replace("\n", " | "))
            worst = compare_o0_o2(gcomp, f"{models_dir}/{name}", problems.append)
            summary += (f"; nodes {len(o0['nodes'])} -> {len(o2['nodes'])}; max |O2-O0|/max|O0| {worst:.1e};"
                        f" inspect O2 {secs:.2f} s")
        except RuntimeError as e:
            problems.append(str(e))
            summary = ""
        print(f"{'ok' if not problems else 'FAIL':4} {name:32} {summary}")
        failures += [f"{name}: {p}" for p in problems]
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
