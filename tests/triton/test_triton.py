"""libtriton_gcomp.so under a real tritonserver (nvidia-pytriton's binary), through tritonclient's
HTTP and gRPC clients. Every served output is compared with `gcomp run` on the same plan and input.

Environment: GCOMP_CLI (build/tools/gcomp), GCOMP_MODELS (build/models), GCOMP_TRITON_BACKENDS
(build/triton/backends), GCOMP_TRITON_WORK (a scratch folder)."""
import concurrent.futures
import contextlib
import json
import os
import re
import shutil
import tempfile
import time
import urllib.error
import urllib.request

import numpy as np
import onnx
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

import triton_server

GCOMP = os.environ["GCOMP_CLI"]
MODELS = os.environ["GCOMP_MODELS"]
BACKENDS = os.environ["GCOMP_TRITON_BACKENDS"]
WORK = os.environ.get("GCOMP_TRITON_WORK") or tempfile.mkdtemp(prefix="gcomp_triton_")
MAX_BATCH = 8

# Served fixtures: name -> (fixture folder, config.pbtxt beyond `backend`).
SERVED = {
    "resnet": ("tv_small_resnet_op17_dynamic",
               'instance_group [ { kind: KIND_CPU, count: 2 } ]\n'
               'parameters { key: "threads" value: { string_value: "1" } }\n'
               'dynamic_batching { max_queue_delay_microseconds: 2000 }\n'),
    "vit": ("tv_small_vit_op17_dynamic", 'instance_group [ { kind: KIND_CPU } ]\n'),
    # A static-batch plan: Triton does not batch it (max_batch_size 0, full dims).
    "resnet_static": ("tv_small_resnet_op17_static", 'instance_group [ { kind: KIND_CPU } ]\n'),
}


def plan_path(fixture):
    return os.path.join(WORK, "plans", fixture + ".gplan")


def input_name(fixture):
    return onnx.load(os.path.join(MODELS, fixture, "model.onnx")).graph.input[0].name


def output_name(fixture):
    return onnx.load(os.path.join(MODELS, fixture, "model.onnx")).graph.output[0].name


def fixture_input(fixture):
    return triton_server.read_pb(os.path.join(MODELS, fixture, "test_data_set_0", "input_0.pb"))


def gcomp_run(fixture, x):
    """`gcomp run` of the fixture's plan on `x`: the outputs, in the plan's order."""
    return triton_server.gcomp_run(GCOMP, plan_path(fixture), input_name(fixture), x, WORK)


def assert_fp32_close(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, gcomp run gave {want.shape}"
    tol = 1e-4 * max(1.0, float(np.abs(want).max()))
    err = float(np.abs(got.astype(np.float64) - want).max())
    assert err <= tol, f"{what}: max abs error {err:.3g} > {tol:.3g}"


@pytest.fixture(scope="module")
def server():
    repo = os.path.join(WORK, "repo")
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(repo)
    for name, (fixture, extra) in SERVED.items():
        triton_server.compile_plan(GCOMP, os.path.join(MODELS, fixture, "model.onnx"), plan_path(fixture), MAX_BATCH)
        triton_server.write_model(repo, name, 'backend: "gcomp"\n' + extra, plan_from=plan_path(fixture))
    good = plan_path("tv_small_resnet_op17_dynamic")
    with open(good, "rb") as f:
        plan_bytes = f.read()
    dims = ", ".join(str(d) for d in fixture_input("tv_small_resnet_op17_dynamic").shape[1:])
    # A corrupt plan (cut short) and configs that contradict the plan.
    triton_server.write_model(repo, "corrupt", 'backend: "gcomp"\n', plan_bytes=plan_bytes[: len(plan_bytes) // 2])
    # A batching plan served without Triton's batching: the backend checks the batch itself.
    out_rank_dims = ", ".join(["-1"] + [str(d) for d in gcomp_run(SERVED["resnet"][0], fixture_input(SERVED["resnet"][0]))[0].shape[1:]])
    triton_server.write_model(
        repo, "resnet_unbatched", 'backend: "gcomp"\nmax_batch_size: 0\ninstance_group [ { kind: KIND_CPU } ]\n'
        'input [ { name: "%s" data_type: TYPE_FP32 dims: [ -1, %s ] } ]\n'
        'output [ { name: "%s" data_type: TYPE_FP32 dims: [ %s ] } ]\n'
        % (input_name(SERVED["resnet"][0]), dims, output_name(SERVED["resnet"][0]), out_rank_dims), plan_from=good)
    triton_server.write_model(repo, "too_big", 'backend: "gcomp"\nmax_batch_size: 64\n', plan_from=good)
    triton_server.write_model(
        repo, "wrong_type", 'backend: "gcomp"\nmax_batch_size: 8\ninput [ { name: "%s" data_type: TYPE_INT64 '
        'dims: [ %s ] } ]\n' % (input_name("tv_small_resnet_op17_dynamic"), dims), plan_from=good)
    triton_server.write_model(repo, "cuda_on_cpu", 'backend: "gcomp"\ninstance_group [ { kind: KIND_CPU } ]\n',
                              plan_from=compiled_cuda_plan())
    srv = triton_server.Server(repo, BACKENDS, os.path.join(WORK, "tritonserver.log"))
    try:
        srv.wait_ready(list(SERVED) + ["resnet_unbatched"])
        yield srv
    finally:
        code, leftovers = srv.stop()
        assert code == 0, f"tritonserver exited with {code}:\n" + srv.read_log()[-4000:]
        assert not leftovers, f"processes left behind: {leftovers}"


def compiled_cuda_plan():
    path = plan_path("tv_small_resnet_op17_dynamic_cuda")
    triton_server.compile_plan(GCOMP, os.path.join(MODELS, "tv_small_resnet_op17_dynamic", "model.onnx"), path,
                               MAX_BATCH, ["--target", "cuda"])
    return path


@contextlib.contextmanager
def clients(srv):
    """An HTTP and a gRPC client, closed afterwards (an open keep-alive connection holds up the server's exit)."""
    http = httpclient.InferenceServerClient(srv.http_url)
    grpc = grpcclient.InferenceServerClient(srv.grpc_url)
    try:
        yield http, grpc
    finally:
        http.close()
        grpc.close()


def served_outputs(srv, model):
    status, body = srv.get(f"/v2/models/{model}/config")
    assert status == 200, body
    return [o["name"] for o in json.loads(body)["output"]]


def infer(client_mod, client, model, name, x, outputs):
    inp = client_mod.InferInput(name, list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    req = [client_mod.InferRequestedOutput(o) for o in outputs]
    r = client.infer(model, [inp], outputs=req)
    return [r.as_numpy(o) for o in outputs]


@pytest.mark.parametrize("model", list(SERVED))
def test_http_and_grpc_equal_gcomp_run(server, model):
    fixture = SERVED[model][0]
    x = fixture_input(fixture)
    want = gcomp_run(fixture, x)
    outputs = served_outputs(server, model)
    assert len(outputs) == len(want)
    with clients(server) as (http, grpc):
        for mod, client in ((httpclient, http), (grpcclient, grpc)):
            got = infer(mod, client, model, input_name(fixture), x, outputs)
            for o, g, w in zip(outputs, got, want):
                assert_fp32_close(g, w, f"{model} {mod.__name__} {o}")


def test_config_auto_completed_from_the_plan(server):
    status, body = server.get("/v2/models/resnet/config")
    cfg = json.loads(body)
    assert cfg["max_batch_size"] == MAX_BATCH
    assert "dynamic_batching" in cfg
    [inp] = cfg["input"]
    assert inp["name"] == input_name("tv_small_resnet_op17_dynamic")
    x = fixture_input("tv_small_resnet_op17_dynamic")
    [y] = gcomp_run("tv_small_resnet_op17_dynamic", x)
    assert inp["data_type"] == "TYPE_FP32" and [int(d) for d in inp["dims"]] == list(x.shape[1:])
    assert [int(d) for d in cfg["output"][0]["dims"]] == list(y.shape[1:])
    status, body = server.get("/v2/models/resnet_static/config")
    cfg = json.loads(body)
    assert cfg["max_batch_size"] == 0
    assert "dynamic_batching" not in cfg
    assert [int(d) for d in cfg["input"][0]["dims"]] == list(fixture_input("tv_small_resnet_op17_static").shape)


def test_concurrent_clients_with_dynamic_batching(server):
    fixture = SERVED["resnet"][0]
    name = input_name(fixture)
    [out] = served_outputs(server, "resnet")
    rng = np.random.default_rng(7)
    pool = rng.standard_normal((32, *fixture_input(fixture).shape[1:])).astype(np.float32)
    # Each pool row's own output, from `gcomp run` at the plan's maximum batch.
    want = np.concatenate([gcomp_run(fixture, pool[i:i + MAX_BATCH])[0] for i in range(0, 32, MAX_BATCH)])
    stats_before = json.loads(server.get("/v2/models/resnet/stats")[1])["model_stats"][0]

    def client(c):
        failures = []
        with clients(server) as (http, grpc):
            mod, cl = (grpcclient, grpc) if c % 2 else (httpclient, http)  # half the clients on each protocol
            for i in range(100):
                rows = 2 if (c + i) % 5 == 0 else 1  # some requests carry two rows
                j = (c * 100 + i) % (32 - rows + 1)
                x = pool[j:j + rows]
                try:
                    got = infer(mod, cl, "resnet", name, x, [out])[0]
                    assert_fp32_close(got, want[j:j + rows], f"client {c} request {i}")
                except (InferenceServerException, AssertionError) as e:
                    failures.append(f"client {c} request {i}: {e}")
        return failures

    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        failures = sum(ex.map(client, range(8)), [])
    assert not failures, "\n".join(failures[:10])
    stats = json.loads(server.get("/v2/models/resnet/stats")[1])["model_stats"][0]
    requests = int(stats["inference_stats"]["success"]["count"]) - int(stats_before["inference_stats"]["success"]["count"])
    assert requests == 800
    # The dynamic batcher formed batches larger than one request's rows.
    sizes = {int(b["batch_size"]) for b in stats["batch_stats"]}
    assert max(sizes) > 2, f"batch sizes executed: {sorted(sizes)}"
    assert all(s <= MAX_BATCH for s in sizes)


def expect_error(fn, pattern):
    with pytest.raises(InferenceServerException) as e:
        fn()
    assert re.search(pattern, str(e.value)), str(e.value)


def test_malformed_requests_get_errors_and_good_ones_keep_succeeding(server):
    fixture = SERVED["resnet"][0]
    name = input_name(fixture)
    [out] = served_outputs(server, "resnet")
    x = fixture_input(fixture)
    want = gcomp_run(fixture, x)[0]
    with clients(server) as (http, grpc):
        malformed_requests(server, http, grpc, name, out, x, want)


def malformed_requests(server, http, grpc, name, out, x, want):
    c, h, w = x.shape[1:]

    def good():
        assert_fp32_close(infer(httpclient, http, "resnet", name, x, [out])[0], want, "good request")

    bad = [
        # wrong shape
        (lambda: infer(httpclient, http, "resnet", name, np.zeros((1, c, h // 2, w), np.float32), [out]), r"shape|dims"),
        (lambda: infer(grpcclient, grpc, "resnet", name, np.zeros((1, c, h), np.float32), [out]), r"shape|dims"),
        # a batch over the maximum
        (lambda: infer(httpclient, http, "resnet", name, np.zeros((MAX_BATCH + 1, c, h, w), np.float32), [out]),
         r"batch"),
        # wrong name
        (lambda: infer(grpcclient, grpc, "resnet", "no_such_input", x, [out]), r"no_such_input"),
        # wrong output name
        (lambda: infer(httpclient, http, "resnet", name, x, ["no_such_output"]), r"no_such_output"),
    ]
    for fn, pattern in bad:
        expect_error(fn, pattern)
        good()

    # wrong dtype (the client sends INT64 data)
    def wrong_dtype():
        inp = httpclient.InferInput(name, [1, c, h, w], "INT64")
        inp.set_data_from_numpy(np.zeros((1, c, h, w), np.int64))
        http.infer("resnet", [inp])
    expect_error(wrong_dtype, r"INT64|data-type|datatype")
    good()

    # A body whose binary tensor is shorter than its shape needs.
    header = json.dumps({"inputs": [{"name": name, "shape": [1, int(c), int(h), int(w)], "datatype": "FP32",
                                     "parameters": {"binary_data_size": 100}}]}).encode()
    req = urllib.request.Request(f"http://{server.http_url}/v2/models/resnet/infer", data=header + b"\0" * 100,
                                 method="POST", headers={"Inference-Header-Content-Length": str(len(header))})
    try:
        urllib.request.urlopen(req, timeout=10)
        raise AssertionError("a short tensor was accepted")
    except urllib.error.HTTPError as e:
        assert e.code == 400, e.code
        assert re.search(r"byte|size", e.read().decode()), "message should name the size"
    good()
    # The model stayed ready throughout.
    assert server.get("/v2/models/resnet/ready")[0] == 200


def test_unbatched_plan_checks_the_batch_itself(server):
    fixture = SERVED["resnet"][0]
    name, out = input_name(fixture), output_name(fixture)
    x = np.concatenate([fixture_input(fixture)] * 3)
    want = gcomp_run(fixture, x)[0]
    with clients(server) as (http, grpc):
        assert_fp32_close(infer(httpclient, http, "resnet_unbatched", name, x, [out])[0], want, "3 rows")
        nine = np.concatenate([x, x, x])
        # Triton lets dim 0 = 9 through (dims -1); the backend refuses it against the plan's maximum.
        expect_error(lambda: infer(grpcclient, grpc, "resnet_unbatched", name, nine, [out]),
                     r"input '%s' has shape \[9,.*its batch 9 is outside 1\.\.8" % name)
        assert_fp32_close(infer(grpcclient, grpc, "resnet_unbatched", name, x, [out])[0], want, "3 rows again")


def test_bad_models_are_unavailable_and_the_rest_serve(server):
    index = server.repository_index()
    for name in SERVED:
        assert index[name]["state"] == "READY", index[name]
    expected = {
        "corrupt": r"truncated plan file",
        "too_big": r"max_batch_size 64 exceeds the plan's maximum batch 8",
        "wrong_type": r"data_type TYPE_INT64, the plan's is TYPE_FP32",
        "cuda_on_cpu": r"the plan is for cuda:sm_90: serve it with instance_group \[ \{ kind: KIND_GPU \} \]",
    }
    for name, pattern in expected.items():
        assert index[name]["state"] == "UNAVAILABLE", index[name]
        assert re.search(pattern, index[name].get("reason", "")), index[name]
        assert server.get(f"/v2/models/{name}/ready")[0] != 200


def test_metrics_count_the_inferences(server):
    def count():
        status, text = server.get("/metrics", port=server.metrics_port)
        assert status == 200
        m = re.search(r'^nv_inference_count\{model="vit",version="1"\} (\d+)', text, re.M)
        return int(m.group(1)) if m else 0

    fixture = SERVED["vit"][0]
    name = input_name(fixture)
    [out] = served_outputs(server, "vit")
    before = count()
    x = fixture_input(fixture)
    with clients(server) as (http, grpc):
        for _ in range(5):
            infer(httpclient, http, "vit", name, x, [out])
        infer(grpcclient, grpc, "vit", name, np.concatenate([x, x, x]), [out])  # three inferences in one request
    deadline = time.time() + 10
    while count() < before + 8 and time.time() < deadline:
        time.sleep(0.2)
    assert count() == before + 8


def test_server_starts_and_stops_cleanly(server):
    repo = os.path.join(WORK, "repo_small")
    shutil.rmtree(repo, ignore_errors=True)
    triton_server.write_model(repo, "resnet", 'backend: "gcomp"\ninstance_group [ { kind: KIND_CPU } ]\n',
                              plan_from=plan_path(SERVED["resnet"][0]))
    srv = triton_server.Server(repo, BACKENDS, os.path.join(WORK, "tritonserver_small.log"))
    try:
        srv.wait_ready(["resnet"])
        assert "backend 'gcomp': gcomp plans; server backend API 1." in srv.read_log()
    finally:
        code, leftovers = srv.stop()
    assert code == 0, srv.read_log()[-4000:]
    assert not leftovers
