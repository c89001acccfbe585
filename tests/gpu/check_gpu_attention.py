"""The cuda attention kernels on their own, on a device, against the reference interpreter.

One opset-23 Attention node (plus a residual Add, so that it is not the fp32 output), ViT-B/16's
heads (12 of 64, Q/K/V [batch, S, 768]), for sequence lengths 1, 50, 197 and 256 at batch 3,
compiled with `gcomp compile --target cuda`:
  - fp32: the exact kernel, within DESIGN.md's fp32 tolerance;
  - fp16 and bf16: cuda.cudnn.sdpa (cuDNN's fused attention, or its flash fallback where cuDNN's
    support check declines: `bench --json` says which ran), and the flash-attention kernel itself
    (`--exclude-kernels cuda.cudnn.sdpa`): cosine >= 0.9999 (fp16) / 0.999 (bf16) and max|err| <=
    1e-2 (fp16) / 3e-2 (bf16) of max|ref|.
The reference is `gcomp run MODEL --target ref` (the reference interpreter, fp32) on the same inputs.
Exits 77 (skipped) with the reason where this machine has no CUDA device.
Usage: check_gpu_attention.py GCOMP"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "passes"))
from gcomp_run import compare_precision, run_named  # noqa: E402

HEADS, HEAD, BATCH = 12, 64, 3
SEQS = (1, 50, 197, 256)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


def attention_model(path, seq):
    shape = ["batch", seq, HEADS * HEAD]
    # y = Attention(q, k, v) + q: the attention does not produce the graph output (which stays fp32),
    # so at fp16/bf16 it runs in that precision.
    node = helper.make_node("Attention", ["q", "k", "v"], ["a"], name="attention", q_num_heads=HEADS,
                            kv_num_heads=HEADS)
    add = helper.make_node("Add", ["a", "q"], ["y"], name="residual")
    graph = helper.make_graph([node, add], "attention",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "qkv"],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def algorithm(gcomp, plan):
    rc, out = run([gcomp, "bench", plan, "--batch", str(BATCH), "--warmup", "0", "--iterations", "1", "--json"])
    if rc != 0:
        return f"(bench failed: {out.strip()[:120]})"
    for a in json.loads(out).get("algorithms", []):
        if a["step"] == "attention":
            return a["algorithm"]
    return "(no attention step)"


def main():
    gcomp = sys.argv[1]
    failed = checked = 0
    rng = np.random.default_rng(20261202)
    with tempfile.TemporaryDirectory() as tmp:
        for seq in SEQS:
            model = os.path.join(tmp, f"attention_{seq}.onnx")
            attention_model(model, seq)
            inputs = {n: rng.standard_normal([BATCH, seq, HEADS * HEAD]).astype(np.float32) for n in "qkv"}
            ref = run_named(gcomp, model, inputs, os.path.join(tmp, "ref"), ["--target", "ref"])
            for prec, exclude in (("fp32", None), ("fp16", None), ("fp16", "cuda.cudnn.sdpa"), ("bf16", None),
                                  ("bf16", "cuda.cudnn.sdpa")):
                label = f"S={seq} {prec}" + (" flash" if exclude else "")
                plan = os.path.join(tmp, f"attention_{seq}_{prec}.gplan")
                rc, out = run([gcomp, "compile", model, "-o", plan, "--target", "cuda", "--precision", prec,
                               "--batch", "8"] + (["--exclude-kernels", exclude] if exclude else []))
                if rc != 0:
                    print(f"FAIL {label}: compile: {out.strip()}")
                    failed += 1
                    continue
                try:
                    got = run_named(gcomp, plan, inputs, os.path.join(tmp, "out"))
                except RuntimeError as e:
                    if "no CUDA device" in str(e):
                        print(f"SKIPPED: {e}")
                        return 77
                    print(f"FAIL {label}: {e}")
                    failed += 1
                    continue
                ok, what = compare_precision(prec, got, ref, *((0.9999, 1e-2) if prec == "fp16" else (0.999, 3e-2)))
                ran = algorithm(gcomp, plan)
                if prec != "fp32" and ("exact" in ran or (exclude and "flash" not in ran)):
                    ok, what = False, f"{what}; not the Tensor Core kernel this case is for"
                checked += 1
                print(f"{'PASS' if ok else 'FAIL'} {label}: {what}; ran {ran[:160]}")
                failed += not ok
    print(f"{checked} comparisons, {failed} failed")
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
