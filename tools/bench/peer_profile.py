#!/usr/bin/env python3
"""Where the CPU peers spend their time, layer by layer, next to `gcomp bench --profile`.

ONNX Runtime (fp32; its session profiler, the settings cpu_vs_ort.py uses) and OpenVINO (its
per-node performance counters, PERF_COUNT, at f32 or bf16 inference precision) each run the model
at one batch: a warm-up, then timed runs whose per-node times are averaged. Prints per engine the
median latency, the time per node kind (ORT op / OpenVINO layer type and implementation) and the
slowest nodes. gcomp's own side: `gcomp bench PLAN --batch B --threads T --profile`.

Usage: peer_profile.py MODEL.onnx [--batch 8] [--precision fp32|bf16] [--threads 2] [--runs 6]
       [--top 30] [--peers ort,openvino]
"""
import argparse
import collections
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np


def model_input(path, batch):
    import onnx
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inp = next(i for i in m.graph.input if i.name not in inits)
    dims = [d.dim_value if d.dim_value > 0 else batch for d in inp.type.tensor_type.shape.dim]
    dims[0] = batch
    return inp.name, dims


def report(name, latencies, per_kind, per_node, top):
    print(f"{name}: p50 {statistics.median(latencies):.3f} ms over {len(latencies)} runs; "
          f"nodes sum {sum(per_kind.values()):.3f} ms per run")
    for k, v in sorted(per_kind.items(), key=lambda kv: -kv[1]):
        print(f"  {v:9.3f} ms  {k}")
    print(f"  slowest {top} nodes:")
    for k, v in sorted(per_node.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {v:9.3f} ms  {k}")


def profile_ort(path, batch, threads, runs, x, name):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_profiling = True
    with tempfile.TemporaryDirectory() as tmp:
        so.profile_file_prefix = os.path.join(tmp, "ort")
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        warm = 3
        for _ in range(warm):
            sess.run(None, {name: x})
        lat = []
        for _ in range(runs):
            t = time.perf_counter()
            sess.run(None, {name: x})
            lat.append((time.perf_counter() - t) * 1e3)
        events = json.load(open(sess.end_profiling()))
    nodes = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    per_run = len(nodes) // (warm + runs)
    timed = nodes[warm * per_run:]
    per_kind, per_node = collections.defaultdict(float), collections.defaultdict(float)
    for e in timed:
        op = e["args"].get("op_name", "?")
        per_kind[op] += e["dur"] / 1e3 / runs
        per_node[f"{e['name'][:-len('_kernel_time')]} ({op})"] += e["dur"] / 1e3 / runs
    return lat, per_kind, per_node


def profile_openvino(path, batch, threads, runs, x, precision):
    import openvino as ov
    core = ov.Core()
    m = core.read_model(path)
    m.reshape({m.inputs[0].get_any_name(): list(x.shape)})
    cfg = {"INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY",
           "INFERENCE_PRECISION_HINT": "bf16" if precision == "bf16" else "f32", "PERF_COUNT": True}
    req = core.compile_model(m, "CPU", cfg).create_infer_request()
    for _ in range(3):
        req.infer({0: x})
    lat = []
    per_kind, per_node = collections.defaultdict(float), collections.defaultdict(float)
    for _ in range(runs):
        t = time.perf_counter()
        req.infer({0: x})
        lat.append((time.perf_counter() - t) * 1e3)
        for p in req.profiling_info:
            if p.status != p.Status.EXECUTED:
                continue
            ms = p.real_time.total_seconds() * 1e3 / runs
            per_kind[f"{p.node_type} {p.exec_type}"] += ms
            per_node[f"{p.node_name} ({p.node_type} {p.exec_type})"] += ms
    return lat, per_kind, per_node


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--peers", default="ort,openvino")
    a = ap.parse_args()
    name, dims = model_input(a.model, a.batch)
    x = np.random.default_rng(0).random(dims, dtype=np.float32)
    print(f"{a.model}: input {name} {dims}, {a.precision}, {a.threads} threads")
    peers = a.peers.split(",")
    if "ort" in peers:
        if a.precision == "bf16":
            print("ort: skipped (its CPU provider has no bf16 path)")
        else:
            report("ort", *profile_ort(a.model, a.batch, a.threads, a.runs, x, name), a.top)
    if "openvino" in peers:
        report("openvino", *profile_openvino(a.model, a.batch, a.threads, a.runs, x, a.precision), a.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
