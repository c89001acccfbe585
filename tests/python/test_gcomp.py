"""The gcomp Python module, installed by `pip install .` into a fresh virtual environment.

On the small fixtures (ResNet and ViT): Session.run equals `gcomp run` on the same plan and the
stored ONNX Runtime outputs (fp32 tolerance); compile from bytes equals compile from the path; a
saved plan loads back; inspect prints the CLI's formats; bad inputs (dtype, shape, name, a corrupt
or missing plan, bad options) raise gcomp errors with the CLI's messages; two Python threads run
sessions at once (run releases the GIL) with the single-threaded results.
Environment: GCOMP_CLI (the gcomp binary), GCOMP_MODELS (the fixture folder)."""
import json
import os
import subprocess
import tempfile
import threading

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import gcomp

CLI = os.environ["GCOMP_CLI"]
MODELS = os.environ["GCOMP_MODELS"]
FIXTURES = ["tv_small_resnet_op17_dynamic", "tv_small_vit_op17_dynamic", "hf_small_vit_op13"]


def model_path(name):
    return os.path.join(MODELS, name, "model.onnx")


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def fp32_close(got, ref):
    bound = 1e-5 * np.abs(ref).max() + 1e-4 * np.abs(ref)
    return bool(np.all(np.abs(got.astype(np.float64) - ref) <= bound))


@pytest.mark.parametrize("name", FIXTURES)
def test_run_equals_cli_and_onnxruntime(name):
    plan = gcomp.compile(model_path(name), target="cpu")
    assert plan.target == "cpu" and plan.precision == "fp32"
    session = gcomp.Session(plan, threads=2)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.gplan")
        plan.save(path)
        case = os.path.join(MODELS, name, "test_data_set_0")
        _, x = read_pb(os.path.join(case, "input_0.pb"))
        _, ref = read_pb(os.path.join(case, "output_0.pb"))
        out = session.run({plan.inputs[0].name: x})
        assert list(out) == [o.name for o in plan.outputs]
        got = out[plan.outputs[0].name]
        assert got.dtype == np.float32 and got.shape == ref.shape
        assert fp32_close(got, ref), f"max |err| {np.abs(got - ref).max()}"
        cli_out = os.path.join(tmp, "out")
        subprocess.run([CLI, "run", path, "--input", f"{plan.inputs[0].name}={os.path.join(case, 'input_0.pb')}",
                        "--output-dir", cli_out], check=True, capture_output=True)
        _, cli = read_pb(os.path.join(cli_out, "output_0.pb"))
        np.testing.assert_allclose(got, cli, rtol=1e-5, atol=1e-6)


def test_plan_round_trips_and_compiles_from_bytes():
    path = model_path(FIXTURES[0])
    plan = gcomp.compile(path, batch=4)
    assert plan.max_batch == 4
    info = plan.inputs[0]
    assert info.dtype == "float32" and info.batch_dims[0] and not any(info.batch_dims[1:])
    with open(path, "rb") as f:
        from_bytes = gcomp.compile(f.read(), batch=4)
    assert from_bytes.to_bytes() == plan.to_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "a.gplan")
        plan.save(p)
        assert gcomp.load(p).to_bytes() == plan.to_bytes()
    again = gcomp.load_bytes(plan.to_bytes())
    x = np.random.default_rng(0).standard_normal([3] + info.shape[1:]).astype(np.float32)
    a = gcomp.Session(plan).run({info.name: x})
    b = gcomp.Session(again).run({info.name: x})
    assert np.array_equal(a["output"], b["output"]) and a["output"].shape == (3, 100)
    # Another dtype or layout is converted once; the numbers are the same.
    c = gcomp.Session(plan).run({info.name: np.asfortranarray(x.astype(np.float64))})
    assert np.array_equal(a["output"], c["output"])


def test_inspect_prints_the_cli_formats():
    path = model_path(FIXTURES[1])
    text = gcomp.inspect(path, level="O2", target="ref")
    assert "Attention" in text
    doc = json.loads(gcomp.inspect(path, format="json"))
    assert doc["schema_version"] == 1
    assert gcomp.inspect(path, format="html").lstrip().startswith("<!DOCTYPE html>")
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "v.gplan")
        gcomp.compile(path).save(p)
        assert "steps (" in gcomp.inspect(p)


def test_bad_inputs_raise_clear_errors():
    plan = gcomp.compile(model_path(FIXTURES[0]), batch=2)
    s = gcomp.Session(plan)
    good = np.zeros([1] + plan.inputs[0].shape[1:], np.float32)
    with pytest.raises(gcomp.InvalidArgumentError, match="no input 'nope'"):
        s.run({"nope": good})
    with pytest.raises(gcomp.InvalidArgumentError, match="expected \\[batch,3,64,64\\]"):
        s.run({"input": np.zeros([1, 3, 32, 32], np.float32)})
    with pytest.raises(gcomp.InvalidArgumentError, match="batch 5 is outside the plan's 1..2"):
        s.run({"input": np.zeros([5, 3, 64, 64], np.float32)})
    with pytest.raises(gcomp.InvalidArgumentError, match="expected numbers"):
        s.run({"input": np.full([1, 3, 64, 64], "x")})
    with pytest.raises(gcomp.InvalidArgumentError, match="not given|missing"):
        s.run({})
    with pytest.raises(gcomp.InvalidArgumentError, match="bad magic"):
        gcomp.load_bytes(b"garbage, not a plan")
    with pytest.raises(gcomp.InvalidArgumentError, match="truncated|hash|invalid plan"):
        gcomp.load_bytes(plan.to_bytes()[:-100])
    with pytest.raises(gcomp.NotFoundError):
        gcomp.load("/nonexistent/plan.gplan")
    with pytest.raises(gcomp.InvalidArgumentError, match="unknown target 'tpu'"):
        gcomp.compile(model_path(FIXTURES[0]), target="tpu")
    with pytest.raises(gcomp.InvalidArgumentError, match="--precision fp8 needs an sm_89\\+ target"):
        gcomp.compile(model_path(FIXTURES[0]), precision="fp8")
    with pytest.raises(gcomp.Error):
        gcomp.compile(b"not an onnx model")
    with pytest.raises(gcomp.InvalidArgumentError, match="threads 0"):
        gcomp.Session(plan, threads=0)


def test_cuda_plan_compiles_here_and_its_session_says_why_not():
    try:
        plan = gcomp.compile(model_path(FIXTURES[0]), target="cuda", precision="fp16")
    except gcomp.Error as e:  # a build without the CUDA parts
        pytest.skip(str(e))
    assert plan.target == "cuda:sm_90" and plan.precision == "fp16"
    try:
        gcomp.Session(plan)
    except gcomp.Error as e:
        assert "CUDA" in str(e)


def test_two_python_threads_run_at_once():
    plan = gcomp.compile(model_path(FIXTURES[1]), batch=4)
    info = plan.inputs[0]
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal([b] + info.shape[1:]).astype(np.float32) for b in (1, 2, 3, 4)]
    # The reference of each thread count, from a session of its own: on CPUs without AVX-512 a
    # result may differ in its last bits between counts (README, "Threads").
    single = {t: [gcomp.Session(plan, threads=t).run({info.name: x})[plan.outputs[0].name] for x in xs]
              for t in (1, 2)}
    results, errors = {}, []

    def worker(k):
        try:
            s = gcomp.Session(plan, threads=1 + k)
            for _ in range(5):
                for i, x in enumerate(xs):
                    y = s.run({info.name: x})[plan.outputs[0].name]
                    if not np.array_equal(y, single[1 + k][i]):
                        errors.append(f"thread {k} batch {x.shape[0]} differs")
            results[k] = True
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == {0: True, 1: True}
