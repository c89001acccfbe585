"""ResNet-50 and ViT-B/16 on the GPU: gcomp's cuda plan against PyTorch eager and torch.compile, in one run.

  gpu_vs_torch.py export DIR [--model resnet50|vit_b_16]
                                    the torchvision model (random weights, seed 0) as DIR/model.onnx
                                    (TorchScript exporter, opset 17, dynamic batch) with one stored
                                    data set (batch 2, ONNX Runtime's output), a fixture for
                                    tests/gpu/check_gpu_plans.py
  gpu_vs_torch.py bench DIR --gcomp G --cuda-bench B [--model M] [--batches 1,32,256] [--json F] [--markdown F]
                                    fp16 at each batch: gcomp (cuda plan, device-resident I/O, CUDA
                                    graph, cuda_bench's CUDA-event timing) against PyTorch eager
                                    fp16 (channels_last, inference_mode; ViT's attention is
                                    PyTorch's scaled_dot_product_attention path) and torch.compile
                                    of the same module, timed with CUDA events, medians of the runs;
                                    and gcomp's fp8 plan (sm_90, calibrated on DIR/test_data_set_0)
                                    against gcomp's own fp16 plan
Needs torch 2.x with CUDA, torchvision, onnx and onnxruntime (the GPU machine's Python)."""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


MODELS = {"resnet50": "ResNet-50", "vit_b_16": "ViT-B/16"}


def build_model(name):
    import torch
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    if hasattr(model, "heads"):
        # torchvision zero-initializes the ViT classifier (every logit 0, which any plan matches):
        # a random head makes the checks compare real outputs.
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
        torch.nn.init.normal_(model.heads.head.bias, std=0.02)
    return model


def export(out_dir, name):
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import numpy_helper

    os.makedirs(os.path.join(out_dir, "test_data_set_0"), exist_ok=True)
    model = build_model(name)
    path = os.path.join(out_dir, "model.onnx")
    x = torch.randn(2, 3, 224, 224)
    kwargs = dict(input_names=["input"], output_names=["output"], opset_version=17,
                  dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    try:
        torch.onnx.export(model, (x,), path, dynamo=False, **kwargs)
    except TypeError:  # torch before the dynamo switch
        torch.onnx.export(model, (x,), path, **kwargs)
    onnx.checker.check_model(path)
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"input": x.numpy()})[0]
    for name, arr in (("input_0.pb", x.numpy()), ("output_0.pb", ref)):
        with open(os.path.join(out_dir, "test_data_set_0", name), "wb") as f:
            f.write(numpy_helper.from_array(arr).SerializeToString())
    print(f"exported {path} ({os.path.getsize(path) / 1e6:.1f} MB), torch {torch.__version__}")


def time_torch(fn, x, warmup, iters):
    import torch

    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.inference_mode():
        for _ in range(warmup):
            fn(x)
        torch.cuda.synchronize()
        ms = []
        for _ in range(iters):
            start.record()
            fn(x)
            stop.record()
            stop.synchronize()
            ms.append(start.elapsed_time(stop))
    return float(np.median(ms))


def bench(args):
    import torch

    batches = [int(b) for b in args.batches.split(",")]
    model_path = os.path.join(args.dir, "model.onnx")
    plan = os.path.join(args.dir, f"{args.model}_fp16.gplan")
    t0 = time.time()
    r = subprocess.run([args.gcomp, "compile", model_path, "--target", "cuda", "--precision", "fp16", "--level", "O3",
                        "--batch", str(max(batches)), "-o", plan], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"gcomp compile failed: {r.stderr}")
    compile_s = time.time() - t0
    r = subprocess.run([args.cuda_bench, plan, "--batches", args.batches, "--warmup", "20", "--iterations", "100"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"cuda_bench failed: {r.stderr}")
    gcomp_rows = {row["batch"]: row for row in map(json.loads, r.stdout.splitlines())}
    # fp8: e4m3 GEMMs (lower-fp8), the rest as the fp16 plan; reported next to it, failures shown.
    fp8_rows, fp8_error = {}, ""
    plan8 = os.path.join(args.dir, f"{args.model}_fp8.gplan")
    r = subprocess.run([args.gcomp, "compile", model_path, "--target", "cuda", "--precision", "fp8", "--level", "O3",
                        "--calibration", os.path.join(args.dir, "test_data_set_0"), "--batch", str(max(batches)),
                        "-o", plan8], capture_output=True, text=True)
    if r.returncode == 0:
        r = subprocess.run([args.cuda_bench, plan8, "--batches", args.batches, "--warmup", "20", "--iterations", "100"],
                           capture_output=True, text=True, timeout=600)
    if r.returncode == 0:
        fp8_rows = {row["batch"]: row for row in map(json.loads, r.stdout.splitlines())}
    else:
        fp8_error = (r.stderr or r.stdout).strip()[:300]
    dev = torch.device("cuda")
    model = build_model(args.model).half().to(dev).to(memory_format=torch.channels_last)
    compiled = torch.compile(model)
    rows = []
    for b in batches:
        x = torch.randn(b, 3, 224, 224, device=dev).half().to(memory_format=torch.channels_last)
        eager_ms = time_torch(model, x, 10, 50)
        comp_ms = time_torch(compiled, x, 5, 50)
        g = gcomp_rows[b]
        f8 = fp8_rows.get(b)
        rows.append({"batch": b, "gcomp_ms": g["median_ms"], "eager_ms": eager_ms, "compile_ms": comp_ms,
                     "gcomp_fp8_ms": f8["median_ms"] if f8 else None,
                     "fp8_vs_fp16": g["median_ms"] / f8["median_ms"] if f8 else None,
                     "gcomp_images_per_s": b * 1000 / g["median_ms"], "eager_images_per_s": b * 1000 / eager_ms,
                     "compile_images_per_s": b * 1000 / comp_ms, "vs_eager": eager_ms / g["median_ms"],
                     "vs_compile": comp_ms / g["median_ms"]})
    result = {"model": args.model, "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "precision": "fp16", "fp8_error": fp8_error,
              "gcomp_fp8_algorithms_at_max_batch": fp8_rows[batches[-1]]["algorithms"] if fp8_rows else None,
              "plan_compile_s": compile_s, "rows": rows,
              "gcomp_memory": gcomp_rows[batches[-1]]["memory"],
              "gcomp_algorithms_at_max_batch": gcomp_rows[batches[-1]]["algorithms"]}
    lines = [f"{MODELS[args.model]} fp16 on {result['device']} (torch {result['torch']}), medians of CUDA-event timings; "
             f"gcomp: cuda plan, device-resident I/O, one CUDA graph per batch; PyTorch: channels_last, inference_mode",
             "", "| batch | gcomp ms | eager ms | torch.compile ms | gcomp img/s | vs eager | vs torch.compile "
             "| gcomp fp8 ms | fp8 vs fp16 |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        fp8 = (f"{row['gcomp_fp8_ms']:.3f} | {row['fp8_vs_fp16']:.2f}x" if row["gcomp_fp8_ms"] is not None
               else "failed | -")
        lines.append(f"| {row['batch']} | {row['gcomp_ms']:.3f} | {row['eager_ms']:.3f} | {row['compile_ms']:.3f} | "
                     f"{row['gcomp_images_per_s']:.0f} | {row['vs_eager']:.2f}x | {row['vs_compile']:.2f}x | {fp8} |")
    if fp8_error:
        lines += ["", f"fp8 plan failed: {fp8_error}"]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["export", "bench"])
    p.add_argument("dir")
    p.add_argument("--model", choices=sorted(MODELS), default="resnet50")
    p.add_argument("--gcomp")
    p.add_argument("--cuda-bench")
    p.add_argument("--batches", default="1,32,256")
    p.add_argument("--json")
    p.add_argument("--markdown")
    args = p.parse_args()
    if args.mode == "export":
        export(args.dir, args.model)
    else:
        bench(args)


if __name__ == "__main__":
    main()
