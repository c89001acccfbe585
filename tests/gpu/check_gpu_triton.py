#!/usr/bin/env python3
"""The Triton backend's GPU part, on a machine with a GPU (tools/gpu_check.sh run-triton).

Serves the small ResNet fixture as cuda plans (fp32 and fp16) on KIND_GPU instances and as a cpu
plan on a KIND_CPU instance in one tritonserver, then over HTTP (the KServe v2 JSON protocol:
urllib and numpy only, no tritonclient on that machine):
  1. each model's output for the fixture input against `gcomp run` of the same plan;
  2. 8 concurrent clients x 25 requests of 1 or 2 rows on the fp32 cuda model with dynamic
     batching: every response against its own rows of `gcomp run` at the plan's maximum batch;
  3. a request over the maximum batch and one with a wrong shape get errors; the model stays ready;
  4. the server stops cleanly.
Without a GPU (--cpu-only) only the cpu model is served: the script's own check on a build machine.

Usage: check_gpu_triton.py GCOMP BACKENDS_DIR MODELS_DIR WORK [--tritonserver PATH] [--loader LD --library-path P]
                           [--cpu-only]
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import sys
import urllib.error
import urllib.request

import numpy as np
import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "triton"))
import triton_server  # noqa: E402

FIXTURE = "tv_small_resnet_op17_dynamic"
MAX_BATCH = 8


def gcomp_run(gcomp, plan, name, x, work):
    return triton_server.gcomp_run(gcomp, plan, name, x, work)[0]


def infer(srv, model, name, x):
    body = json.dumps({"inputs": [{"name": name, "shape": list(x.shape), "datatype": "FP32",
                                   "data": x.ravel().tolist()}]}).encode()
    req = urllib.request.Request(f"http://{srv.http_url}/v2/models/{model}/infer", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        out = json.loads(r.read())["outputs"][0]
    return np.array(out["data"], np.float32).reshape(out["shape"])


def close(got, want, tol_rel):
    tol = tol_rel * max(1.0, float(np.abs(want).max()))
    return got.shape == want.shape and float(np.abs(got - want).max()) <= tol, float(np.abs(got - want).max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gcomp")
    ap.add_argument("backends")
    ap.add_argument("models")
    ap.add_argument("work")
    ap.add_argument("--tritonserver")
    ap.add_argument("--loader")
    ap.add_argument("--library-path", default="")
    ap.add_argument("--cpu-only", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    onnx_path = os.path.join(a.models, FIXTURE, "model.onnx")
    name = onnx.load(onnx_path).graph.input[0].name
    x = triton_server.read_pb(os.path.join(a.models, FIXTURE, "test_data_set_0", "input_0.pb"))
    repo = os.path.join(a.work, "repo")
    shutil.rmtree(repo, ignore_errors=True)
    # model -> (compile options, instance kind, tolerance relative to max |output|)
    models = {"resnet_cpu": ([], "KIND_CPU", 1e-4)}
    if not a.cpu_only:
        models["resnet_gpu"] = (["--target", "cuda"], "KIND_GPU", 1e-3)
        models["resnet_gpu_fp16"] = (["--target", "cuda", "--precision", "fp16"], "KIND_GPU", 1e-2)
    plans = {}
    for m, (opts, kind, _) in models.items():
        plans[m] = os.path.join(a.work, m + ".gplan")
        triton_server.compile_plan(a.gcomp, onnx_path, plans[m], MAX_BATCH, opts)
        triton_server.write_model(repo, m, f'backend: "gcomp"\ninstance_group [ {{ kind: {kind} }} ]\n'
                                  'dynamic_batching { max_queue_delay_microseconds: 1000 }\n', plan_from=plans[m])
    env = dict(os.environ)
    if a.library_path:
        env["LD_LIBRARY_PATH"] = a.library_path + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    prefix = [a.loader, "--library-path", a.library_path] if a.loader else []
    srv = triton_server.Server(repo, a.backends, os.path.join(a.work, "tritonserver.log"), binary=a.tritonserver,
                               env=env, prefix=prefix)
    failures = []
    try:
        srv.wait_ready(list(models))
        for m, (_, kind, tol) in models.items():
            want = gcomp_run(a.gcomp, plans[m], name, x, a.work)
            ok, err = close(infer(srv, m, name, x), want, tol)
            print(f"{m} ({kind}): max abs error vs gcomp run {err:.3g}: {'PASS' if ok else 'FAIL'}")
            if not ok:
                failures.append(m)
        busy = "resnet_cpu" if a.cpu_only else "resnet_gpu"
        tol = models[busy][2]
        pool = np.random.default_rng(3).standard_normal((16, *x.shape[1:])).astype(np.float32)
        want = np.concatenate([gcomp_run(a.gcomp, plans[busy], name, pool[i:i + MAX_BATCH], a.work)
                               for i in range(0, 16, MAX_BATCH)])

        def client(c):
            bad = []
            for i in range(25):
                rows = 2 if (c + i) % 4 == 0 else 1
                j = (c * 25 + i) % (16 - rows + 1)
                try:
                    ok, err = close(infer(srv, busy, name, pool[j:j + rows]), want[j:j + rows], tol)
                    if not ok:
                        bad.append(f"client {c} request {i}: max abs error {err:.3g}")
                except urllib.error.HTTPError as e:
                    bad.append(f"client {c} request {i}: HTTP {e.code} {e.read().decode()[:200]}")
            return bad

        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            bad = sum(ex.map(client, range(8)), [])
        stats = json.loads(srv.get(f"/v2/models/{busy}/stats")[1])["model_stats"][0]
        sizes = sorted({int(b["batch_size"]) for b in stats["batch_stats"]})
        print(f"{busy}: 8 clients x 25 requests: {200 - len(bad)} matched, batch sizes executed {sizes}")
        failures += bad[:5]
        if max(sizes) < 2:
            failures.append(f"{busy}: the dynamic batcher formed no batch of more than one row")
        for what, arr in (("batch over the maximum", np.zeros((MAX_BATCH + 1, *x.shape[1:]), np.float32)),
                          ("wrong shape", np.zeros((1, *x.shape[1:-1]), np.float32))):
            try:
                infer(srv, busy, name, arr)
                failures.append(f"{what}: accepted")
            except urllib.error.HTTPError as e:
                print(f"{what}: HTTP {e.code}: {e.read().decode()[:160]}")
        if srv.get(f"/v2/models/{busy}/ready")[0] != 200:
            failures.append(f"{busy} not ready after the bad requests")
    finally:
        code, leftovers = srv.stop()
        print(f"tritonserver exit {code}, leftover processes {leftovers}")
        if code != 0 or leftovers:
            failures.append("unclean stop")
            print(srv.read_log()[-3000:])
    if failures:
        print("FAIL:", *failures, sep="\n  ")
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
