#!/usr/bin/env python3
"""Serving through Triton against the plan run in process, in the same run.

Compiles MODEL.onnx into a cpu plan (maximum batch = the largest concurrency), serves it with a
real tritonserver (nvidia-pytriton's binary) through libtriton_gcomp.so with the dynamic batcher
on, and drives it at each concurrency C with C gRPC clients, each sending one-image requests back
to back. For each C it reports throughput, latency percentiles and the mean batch the dynamic
batcher formed, next to `gcomp bench --batch C` (the same plan and threads, in process).
Serving overhead = 1 - Triton throughput / gcomp bench throughput.

Usage (the tests' environment, .venv-triton):
  .venv-triton/bin/python tools/bench/triton_bench.py [--model build/models/tv_resnet50_op17_dynamic/model.onnx]
      [--concurrency 1,4,16] [--seconds 20] [--threads N] [--queue-delay-us 0] [--json OUT.json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx
import tritonclient.grpc as grpcclient

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "tests", "triton"))
import triton_server  # noqa: E402


def drive(srv, model, name, x, out, concurrency, seconds):
    """`concurrency` gRPC clients sending one request after another for `seconds`: latencies (s)."""
    latencies = [[] for _ in range(concurrency)]
    errors = []
    stop = time.perf_counter() + seconds

    def client(c):
        cl = grpcclient.InferenceServerClient(srv.grpc_url)
        inp = grpcclient.InferInput(name, list(x.shape), "FP32")
        inp.set_data_from_numpy(x)
        req = [grpcclient.InferRequestedOutput(out)]
        try:
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                cl.infer(model, [inp], outputs=req)
                latencies[c].append(time.perf_counter() - t0)
        except Exception as e:  # a failed request ends the run with its message
            errors.append(str(e))
        finally:
            cl.close()

    threads = [threading.Thread(target=client, args=(c,)) for c in range(concurrency)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        raise RuntimeError("requests failed: " + errors[0])
    return sum(latencies, []), wall


def model_stats(srv, model):
    s = json.loads(srv.get(f"/v2/models/{model}/stats")[1])["model_stats"][0]
    return int(s["inference_count"]), int(s["execution_count"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(root, "build/models/tv_resnet50_op17_dynamic/model.onnx"))
    ap.add_argument("--gcomp", default=os.path.join(root, "build/tools/gcomp"))
    ap.add_argument("--backends", default=os.path.join(root, "build/triton/backends"))
    ap.add_argument("--concurrency", default="1,4,16")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--queue-delay-us", type=int, default=0)
    ap.add_argument("--json")
    a = ap.parse_args()
    levels = [int(c) for c in a.concurrency.split(",")]
    work = tempfile.mkdtemp(prefix="gcomp_triton_bench_")
    plan = os.path.join(work, "model.gplan")
    triton_server.compile_plan(a.gcomp, a.model, plan, max(levels))
    repo = os.path.join(work, "repo")
    triton_server.write_model(
        repo, "m", 'backend: "gcomp"\ninstance_group [ { kind: KIND_CPU, count: 1 } ]\n'
        f'parameters {{ key: "threads" value: {{ string_value: "{a.threads}" }} }}\n'
        f'dynamic_batching {{ max_queue_delay_microseconds: {a.queue_delay_us} }}\n', plan_from=plan)
    g = onnx.load(a.model, load_external_data=False).graph
    init = {i.name for i in g.initializer}
    inp = [i for i in g.input if i.name not in init][0]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim][1:]
    x = np.random.default_rng(0).standard_normal([1] + shape).astype(np.float32)
    out = g.output[0].name

    rows = []
    srv = triton_server.Server(repo, a.backends, os.path.join(work, "tritonserver.log"))
    try:
        srv.wait_ready(["m"])
        drive(srv, "m", inp.name, x, out, max(levels), min(3.0, a.seconds))  # warm up every batch size
        for c in levels:
            n0, e0 = model_stats(srv, "m")
            lat, wall = drive(srv, "m", inp.name, x, out, c, a.seconds)
            n1, e1 = model_stats(srv, "m")
            lat_ms = np.array(lat) * 1e3
            rows.append({"concurrency": c, "requests": len(lat), "throughput_per_s": len(lat) / wall,
                         "latency_ms": {"p50": float(np.percentile(lat_ms, 50)), "p90": float(np.percentile(lat_ms, 90)),
                                        "p99": float(np.percentile(lat_ms, 99))},
                         "mean_batch": (n1 - n0) / max(1, e1 - e0)})
    finally:
        code, leftovers = srv.stop()
        if code != 0 or leftovers:
            print(f"tritonserver exit {code}, leftover processes {leftovers}", file=sys.stderr)
    for r in rows:
        b = json.loads(subprocess.run([a.gcomp, "bench", plan, "--batch", str(r["concurrency"]), "--threads",
                                       str(a.threads), "--warmup", "3", "--iterations",
                                       str(max(10, int(200 / r["concurrency"]))), "--json"],
                                      check=True, capture_output=True, text=True).stdout)
        r["gcomp_bench"] = {"batch": b["batch"], "throughput_per_s": b["throughput_per_s"],
                            "latency_ms": b["latency_ms"]}
        r["overhead"] = 1 - r["throughput_per_s"] / b["throughput_per_s"]

    print(f"{os.path.basename(os.path.dirname(a.model)) or a.model}: cpu plan, threads {a.threads}, "
          f"dynamic batching (max queue delay {a.queue_delay_us} us), {a.seconds:g} s per level")
    print("| concurrency | Triton img/s | p50 ms | p99 ms | mean batch | gcomp bench (batch = C) img/s | "
          "bench p50 ms | overhead |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        b = r["gcomp_bench"]
        print(f"| {r['concurrency']} | {r['throughput_per_s']:.1f} | {r['latency_ms']['p50']:.1f} | "
              f"{r['latency_ms']['p99']:.1f} | {r['mean_batch']:.2f} | {b['throughput_per_s']:.1f} | "
              f"{b['latency_ms']['p50']:.1f} | {100 * r['overhead']:.1f}% |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"model": a.model, "threads": a.threads, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
