#!/usr/bin/env python3
"""gcomp's cpu runtime against ONNX Runtime on the CPU (DESIGN.md "Performance method").

For each model and batch: compiles the model once (`gcomp compile`, timed), then alternates rounds
of `gcomp bench PLAN --json` and an ONNX Runtime worker (both separate processes: fp32, the same
thread count, ORT with intra-op threads = that count, inter-op 1, sequential execution, all graph
optimizations), each round a warm-up plus timed iterations on the same seeded random input. Prints
per case the median over rounds of each side's median latency, the throughput ratio gcomp / ORT,
peak RSS of each process, gcomp's compile time and ORT's session-creation time, ORT's options and
absolute figures, and gcomp's kernel launch counts.

Usage: cpu_vs_ort.py GCOMP MODEL.onnx [MODEL.onnx ...] [--batches 1,8] [--threads 2] [--rounds 3]
       [--iterations 10] [--warmup 3] [--markdown FILE]
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
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--markdown", default="")
    a = ap.parse_args()
    batches = [int(b) for b in a.batches.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        worker = os.path.join(tmp, "ort_worker.py")
        with open(worker, "w") as f:
            f.write(ORT_WORKER)
        for model in a.models:
            name = os.path.basename(os.path.dirname(os.path.abspath(model))) or model
            plan = os.path.join(tmp, name + ".gplan")
            t0 = time.perf_counter()
            c = subprocess.run([a.gcomp, "compile", model, "-o", plan, "--target", "cpu", "--batch", str(max(batches))],
                               capture_output=True, text=True, timeout=3600)
            compile_s = time.perf_counter() - t0
            if c.returncode != 0:
                raise SystemExit(f"gcomp compile {model} failed: {c.stderr.strip()}")
            for batch in batches:
                g_p50, o_p50, g_runs, o_runs = [], [], [], []
                for _ in range(a.rounds):
                    g = run_json([a.gcomp, "bench", plan, "--batch", str(batch), "--threads", str(a.threads),
                                  "--warmup", str(a.warmup), "--iterations", str(a.iterations), "--json"])
                    o = run_json([sys.executable, worker, model, str(batch), str(a.threads), str(a.warmup),
                                  str(a.iterations)])
                    if "error" in o:
                        raise SystemExit(f"{model}: ONNX Runtime: {o['error']}")
                    g_p50.append(g["latency_ms"]["p50"])
                    o_p50.append(o["p50"])
                    g_runs.append(g)
                    o_runs.append(o)
                gm, om = statistics.median(g_p50), statistics.median(o_p50)
                row = {"model": name, "batch": batch, "threads": a.threads,
                       "gcomp_ms": gm, "ort_ms": om, "gcomp_per_s": batch * 1000 / gm, "ort_per_s": batch * 1000 / om,
                       "ratio": om / gm, "gcomp_rss_mb": max(r["peak_rss_mb"] for r in g_runs),
                       "ort_rss_mb": max(r["peak_rss_mb"] for r in o_runs), "compile_s": compile_s,
                       "ort_create_s": statistics.median(r["create_s"] for r in o_runs),
                       "kernels": g_runs[-1]["kernels"], "ort_options": o_runs[-1]["options"]}
                rows.append(row)
                print(json.dumps(row), flush=True)
    header = ("| model | batch | gcomp ms | ORT ms | gcomp img/s | ORT img/s | throughput gcomp/ORT | "
              "peak RSS gcomp / ORT (MB) | gcomp compile s | ORT session s |")
    lines = [header, "|" + "---|" * 10]
    for r in rows:
        lines.append(f"| {r['model']} | {r['batch']} | {r['gcomp_ms']:.1f} | {r['ort_ms']:.1f} | "
                     f"{r['gcomp_per_s']:.2f} | {r['ort_per_s']:.2f} | {r['ratio']:.2f}x | "
                     f"{r['gcomp_rss_mb']:.0f} / {r['ort_rss_mb']:.0f} | {r['compile_s']:.1f} | "
                     f"{r['ort_create_s']:.2f} |")
    text = "\n".join(lines)
    print(text)
    if rows:
        print("ONNX Runtime options:", json.dumps(rows[0]["ort_options"]))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
