"""Dynamo exports against TorchScript exports of the same architecture: after O2 each pair's graphs
hold the same compute ops (fused and otherwise, data movement aside: the head split is still there
until O3), and after O3 (cpu and cuda targets) the same ops of every kind, the same number of times
(a Reshape to [N, C] and a Flatten count as one view): the dynamo exporter's extra Transposes,
Reshapes, Gathers, IsNaN/Where guards and ReduceMean pools all went away. The weights differ (other exports
of other instances); the numerics are checked elsewhere (models.ref.*, passes.models.small,
plans.cpu.small).
Usage: check_export_parity.py GCOMP MODELS_DIR"""
import collections
import json
import subprocess
import sys

# dynamo export -> TorchScript export (or generator of the same form) of the same architecture
PAIRS = {
    "dyn_tv_small_vit": "tv_small_vit_op17_dynamic",
    "dyn_tv_small_vit_static": "tv_small_vit_op17_static",
    "dyn_hf_small_vit": "hf_small_vit_op13",
    "dyn_tv_small_resnet50": "tv_small_resnet_op17_dynamic",
}
LEVELS = (("O2", "cpu"), ("O3", "cpu"), ("O3", "cuda"))
MOVEMENT = {"Transpose", "view (Reshape|Flatten)", "Gather", "Slice", "Squeeze", "Unsqueeze", "Concat", "Expand",
            "Shape"}


def histogram(gcomp, path, level, target):
    p = subprocess.run([gcomp, "inspect", path, "--level", level, "--target", target, "--format", "json"],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"inspect {path} --level {level} --target {target}: {p.stderr.strip()}")
    ops = collections.Counter("view (Reshape|Flatten)" if n["op"] in ("Reshape", "Flatten") else n["op"]
                              for n in json.loads(p.stdout)["nodes"])
    return ops


def main():
    gcomp, models = sys.argv[1], sys.argv[2]
    failures = []
    for dyn, ts in PAIRS.items():
        for level, target in LEVELS:
            a = histogram(gcomp, f"{models}/{dyn}/model.onnx", level, target)
            b = histogram(gcomp, f"{models}/{ts}/model.onnx", level, target)
            ops = sorted(set(a) | set(b))
            if level == "O2":
                ops = [op for op in ops if op not in MOVEMENT]
            diff = {op: (a[op], b[op]) for op in ops if a[op] != b[op]}
            where = f"{dyn} vs {ts} at {level} {target}"
            if diff:
                failures.append(f"{where}: " + ", ".join(f"{op} {x} vs {y}" for op, (x, y) in diff.items()))
            print(f"{'ok' if not diff else 'FAIL':4} {where}: {sum(a.values())} nodes"
                  + ("" if not diff else f" vs {sum(b.values())}; {diff}"))
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
