#!/usr/bin/env python3
"""gcomp's cpu runtime against its CPU peers, ONNX Runtime and OpenVINO (DESIGN.md "Performance method").

For each model, precision and batch: compiles the model once per precision (`gcomp compile
--precision P`, timed), then alternates rounds of `gcomp bench PLAN --json` and each peer's worker
(all separate processes, the same thread count, the same seeded random input), each round a
warm-up plus timed iterations:
  - ONNX Runtime (fp32 only: its CPU provider has no bf16 path): intra-op threads = the count,
    inter-op 1, sequential execution, all graph optimizations;
  - OpenVINO (CPU plugin): INFERENCE_NUM_THREADS = the count, NUM_STREAMS 1, PERFORMANCE_HINT
    LATENCY, INFERENCE_PRECISION_HINT f32 or bf16 (the row's precision).
Prints per case the median over rounds of each engine's median latency, the throughput ratios
gcomp / each peer and gcomp / the faster peer, peak RSS, compile and session-creation times, the
peers' options and versions, and gcomp's kernel launch counts.

Usage: cpu_vs_ort.py GCOMP MODEL.onnx [MODEL.onnx ...] [--batches 1,8] [--precisions fp32,bf16]
       [--peers ort,openvino] [--threads 2] [--rounds 3] [--iterations 10] [--warmup 3] [--markdown FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ORT_WORKER = r'''
import json, resource, sys, time
import numpy as np
import onnxruntime as ort
path, batch, threads, warmup, iterations = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
so = ort.SessionOptions()
so.intra_op_num_threads = threads
so.inter_op_num_threads = 1
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
t0 = time.perf_counter()
sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
create_s = time.perf_counter() - t0
inp = sess.get_inputs()[0]
shape = [batch if not isinstance(d, int) else d for d in inp.shape]
if isinstance(inp.shape[0], int) and inp.shape[0] != batch:
    print(json.dumps({"error": f"static batch {inp.shape[0]}"})); sys.exit(0)
x = np.random.default_rng(1234).standard_normal(shape, dtype=np.float32)
for _ in range(warmup):
    sess.run(None, {inp.name: x})
ms = []
for _ in range(iterations):
    t = time.perf_counter(); sess.run(None, {inp.name: x}); ms.append((time.perf_counter() - t) * 1000)
ms.sort()
print(json.dumps({"p50": ms[len(ms) // 2], "min": ms[0], "create_s": create_s,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "options": {"intra_op_num_threads": threads, "inter_op_num_threads": 1,
                              "execution_mode": "ORT_SEQUENTIAL", "graph_optimization_level": "ORT_ENABLE_ALL",
                              "providers": ["CPUExecutionProvider"], "version": ort.__version__}}))
'''

OV_WORKER = r'''
import json, resource, sys, time
import numpy as np
import openvino as ov
path, batch, threads, warmup, iterations, precision = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                                                       int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
core = ov.Core()
model = core.read_model(path)
inp = model.inputs[0]
pshape = inp.get_partial_shape()
if pshape[0].is_static and pshape[0].get_length() != batch:
    print(json.dumps({"error": f"static batch {pshape[0].get_length()}"})); sys.exit(0)
shape = [batch] + [d.get_length() for d in list(pshape)[1:]]
model.reshape({inp.get_any_name(): ov.PartialShape(shape)})
config = {"INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY",
          "INFERENCE_PRECISION_HINT": "bf16" if precision == "bf16" else "f32"}
t0 = time.perf_counter()
compiled = core.compile_model(model, "CPU", config)
create_s = time.perf_counter() - t0
req = compiled.create_infer_request()
x = np.random.default_rng(1234).standard_normal(shape, dtype=np.float32)
for _ in range(warmup):
    req.infer({0: x})
ms = []
for _ in range(iterations):
    t = time.perf_counter(); req.infer({0: x}); ms.append((time.perf_counter() - t) * 1000)
ms.sort()
got = {k: str(compiled.get_property(k)) for k in ("INFERENCE_NUM_THREADS", "NUM_STREAMS", "PERFORMANCE_HINT",
                                                  "INFERENCE_PRECISION_HINT")}
got["version"] = ov.__version__
print(json.dumps({"p50": ms[len(ms) // 2], "min": ms[0], "create_s": create_s,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "options": got}))
'''

PEER_NAMES = {"ort": "ORT", "openvino": "OpenVINO"}


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gcomp")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--precisions", default="fp32")
    ap.add_argument("--peers", default="ort,openvino")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--markdown", default="")
    a = ap.parse_args()
    batches = [int(b) for b in a.batches.split(",")]
    precisions = a.precisions.split(",")
    peers = a.peers.split(",")
    for p in peers:
        if p not in PEER_NAMES:
            raise SystemExit(f"unknown peer '{p}' (ort, openvino)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workers = {"ort": os.path.join(tmp, "ort_worker.py"), "openvino": os.path.join(tmp, "ov_worker.py")}
        for key, text in (("ort", ORT_WORKER), ("openvino", OV_WORKER)):
            with open(workers[key], "w") as f:
                f.write(text)
        for model in a.models:
            name = os.path.basename(os.path.dirname(os.path.abspath(model))) or model
            for precision in precisions:
                plan = os.path.join(tmp, f"{name}_{precision}.gplan")
                t0 = time.perf_counter()
                c = subprocess.run([a.gcomp, "compile", model, "-o", plan, "--target", "cpu", "--precision", precision,
                                    "--batch", str(max(batches))], capture_output=True, text=True, timeout=3600)
                compile_s = time.perf_counter() - t0
                if c.returncode != 0:
                    raise SystemExit(f"gcomp compile {model} --precision {precision} failed: {c.stderr.strip()}")
                # ONNX Runtime's CPU provider has no bf16 path: it is a peer of the fp32 rows only.
                row_peers = [p for p in peers if p != "ort" or precision == "fp32"]
                for batch in batches:
                    p50 = {"gcomp": []}
                    runs = {"gcomp": []}
                    for p in row_peers:
                        p50[p], runs[p] = [], []
                    for _ in range(a.rounds):
                        g = run_json([a.gcomp, "bench", plan, "--batch", str(batch), "--threads", str(a.threads),
                                      "--warmup", str(a.warmup), "--iterations", str(a.iterations), "--json"])
                        p50["gcomp"].append(g["latency_ms"]["p50"])
                        runs["gcomp"].append(g)
                        for p in row_peers:
                            args = [sys.executable, workers[p], model, str(batch), str(a.threads), str(a.warmup),
                                    str(a.iterations)] + ([precision] if p == "openvino" else [])
                            o = run_json(args)
                            if "error" in o:
                                raise SystemExit(f"{model}: {PEER_NAMES[p]}: {o['error']}")
                            p50[p].append(o["p50"])
                            runs[p].append(o)
                    ms = {k: statistics.median(v) for k, v in p50.items()}
                    row = {"model": name, "precision": precision, "batch": batch, "threads": a.threads,
                           "ms": ms, "per_s": {k: batch * 1000 / v for k, v in ms.items()},
                           "ratio": {p: ms[p] / ms["gcomp"] for p in row_peers},
                           "rss_mb": {k: max(r["peak_rss_mb"] for r in v) for k, v in runs.items()},
                           "compile_s": compile_s,
                           "create_s": {p: statistics.median(r["create_s"] for r in runs[p]) for p in row_peers},
                           "kernels": runs["gcomp"][-1]["kernels"],
                           "options": {p: runs[p][-1]["options"] for p in row_peers}}
                    row["ratio_vs_fastest_peer"] = min(row["ratio"].values()) if row_peers else None
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    cols = [p for p in peers]
    header = ("| model | precision | batch | gcomp ms | " + " | ".join(f"{PEER_NAMES[p]} ms" for p in cols) + " | " +
              " | ".join(f"gcomp/{PEER_NAMES[p]}" for p in cols) + " | gcomp / faster peer | peak RSS MB (gcomp, " +
              ", ".join(PEER_NAMES[p] for p in cols) + ") | gcomp compile s |")
    lines = [header, "|" + "---|" * (7 + 2 * len(cols))]
    for r in rows:
        cell = lambda d, p, fmt: (fmt.format(d[p]) if p in d else "n/a")  # noqa: E731
        lines.append(f"| {r['model']} | {r['precision']} | {r['batch']} | {r['ms']['gcomp']:.1f} | " +
                     " | ".join(cell(r["ms"], p, "{:.1f}") for p in cols) + " | " +
                     " | ".join(cell(r["ratio"], p, "{:.2f}x") for p in cols) + " | " +
                     (f"{r['ratio_vs_fastest_peer']:.2f}x" if r["ratio_vs_fastest_peer"] else "n/a") + " | " +
                     ", ".join(f"{r['rss_mb'][k]:.0f}" if k in r["rss_mb"] else "n/a" for k in ["gcomp"] + cols) +
                     f" | {r['compile_s']:.1f} |")
    text = "\n".join(lines)
    print(text)
    for p in cols:
        for precision in precisions:
            opts = next((r["options"][p] for r in rows if p in r["options"] and r["precision"] == precision), None)
            if opts:
                print(f"{PEER_NAMES[p]} options ({precision} rows):", json.dumps(opts))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
