"""Runs every pass test case three ways (STYLE.md rule 10):
  golden     `gcomp opt CASE.onnx --passes=P --verify-each` must print tests/passes/golden/CASE.ir;
  structure  the op counts after the passes match the case's `expect`;
  numerics   the reference interpreter on the graph before and after the passes agrees within
             rtol 1e-4, atol 1e-5*max|ref| on random inputs (batch 1 and 3 for symbolic batch); a case
             with options (--precision fp16) and tolerance "fp16" passes them to opt and the optimized
             run and is compared with DESIGN.md's fp16 tolerance (cosine, max abs error, no inf/NaN);
             tolerance "fp8" (--precision fp8): cosine >= 0.99, no inf/NaN. A case with calibration
             gets a folder of random calibration inputs in place of "{calibration}" in its options.
Usage: run_pass_tests.py GCOMP OUT_DIR [--update] [--only NAME,...]"""
import argparse
import collections
import glob
import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pass_case  # noqa: E402


def load_cases():
    for path in sorted(glob.glob(os.path.join(HERE, "cases_*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    return pass_case.CASES


def op_counts(ir_text):
    counts = collections.Counter()
    for line in ir_text.splitlines():
        m = re.match(r"\s+%.* = (\w+)\[", line)
        if m:
            counts[m.group(1)] += 1
    return counts


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def random_inputs(model, batch, seed):
    r = np.random.default_rng(seed)
    feeds = {}
    inits = {i.name for i in model.graph.initializer}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else batch for d in inp.type.tensor_type.shape.dim]
        feeds[inp.name] = r.standard_normal(dims).astype(np.float32)
    return feeds


def has_symbolic(model):
    return any(d.HasField("dim_param") for i in model.graph.input for d in i.type.tensor_type.shape.dim)


def run_graph(gcomp, path, feeds, out_dir, passes, options=()):
    os.makedirs(out_dir, exist_ok=True)
    args = [gcomp, "run", path, "--output-dir", out_dir]
    if passes:
        args += ["--passes=" + passes, *options]
    for name, arr in feeds.items():
        f = os.path.join(out_dir, "in_" + re.sub(r"\W", "_", name) + ".pb")
        with open(f, "wb") as fh:
            fh.write(numpy_helper.from_array(arr, name).SerializeToString())
        args += ["--input", f"{name}={f}"]
    rc, out, err = run(args)
    if rc != 0:
        raise RuntimeError(f"gcomp run failed ({rc}): {err.strip()}")
    outs = []
    for k in range(len(onnx.load(path).graph.output)):
        t = onnx.TensorProto()
        with open(os.path.join(out_dir, f"output_{k}.pb"), "rb") as fh:
            t.ParseFromString(fh.read())
        outs.append(numpy_helper.to_array(t))
    return outs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gcomp")
    ap.add_argument("out")
    ap.add_argument("--update", action="store_true", help="rewrite golden files from the current output")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    failures = []
    cases = [c for c in load_cases() if not only or c["name"] in only]
    names = [c["name"] for c in cases]
    dup = [n for n, k in collections.Counter(names).items() if k > 1]
    if dup:
        print("duplicate case names:", dup)
        return 1
    for c in cases:
        name = c["name"]
        path = os.path.join(a.out, name + ".onnx")
        m = c["build"]()
        onnx.save(m, path)
        options = c.get("options", [])
        if c.get("calibration"):
            cal = os.path.join(a.out, name + "_calibration")
            for k in range(2):
                d = os.path.join(cal, f"test_data_set_{k}")
                os.makedirs(d, exist_ok=True)
                for i, (n, arr) in enumerate(random_inputs(m, 1, seed=100 + k).items()):
                    with open(os.path.join(d, f"input_{i}.pb"), "wb") as fh:
                        fh.write(numpy_helper.from_array(arr, n).SerializeToString())
            options = [o.replace("{calibration}", cal) for o in options]
        rc, ir, err = run([a.gcomp, "opt", path, "--passes=" + c["passes"], "--verify-each", *options])
        if rc != 0:
            failures.append(f"{name}: gcomp opt failed ({rc}): {err.strip()}")
            continue
        golden = os.path.join(HERE, "golden", name + ".ir")
        if a.update:
            with open(golden, "w") as fh:
                fh.write(ir)
        elif not os.path.exists(golden):
            failures.append(f"{name}: no golden file {golden} (run with --update and review it)")
        elif open(golden).read() != ir:
            failures.append(f"{name}: IR differs from {golden}:\n{ir}")
        counts = op_counts(ir)
        bad = {op: (n, counts.get(op, 0)) for op, n in c["expect"].items() if counts.get(op, 0) != n}
        if bad:
            failures.append(f"{name}: op counts (expected, actual) {bad}")
        batches = [1, 3] if has_symbolic(m) else [1]
        for batch in batches:
            feeds = random_inputs(m, batch, seed=len(name) + batch)
            try:
                ref = run_graph(a.gcomp, path, feeds, os.path.join(a.out, name, f"b{batch}_ref"), "")
                got = run_graph(a.gcomp, path, feeds, os.path.join(a.out, name, f"b{batch}_opt"), c["passes"], options)
            except RuntimeError as e:
                failures.append(f"{name}: {e}")
                continue
            for k, (r, g) in enumerate(zip(ref, got)):
                if c.get("tolerance", "fp32") == "fp8" and r.shape == g.shape:
                    cos = float(np.dot(r.ravel(), g.ravel()) / max(np.linalg.norm(r) * np.linalg.norm(g), 1e-30))
                    if not np.all(np.isfinite(g)) or cos < 0.99:
                        failures.append(f"{name}: output {k} at batch {batch} outside the fp8 tolerance (cosine {cos:.6f})")
                    continue
                if c.get("tolerance", "fp32") == "fp16" and r.shape == g.shape:
                    scale = float(np.abs(r).max()) if r.size else 0.0
                    cos = float(np.dot(r.ravel(), g.ravel()) / max(np.linalg.norm(r) * np.linalg.norm(g), 1e-30))
                    if not np.all(np.isfinite(g)) or cos < 0.999 or float(np.abs(g - r).max()) > 5e-2 * scale:
                        failures.append(f"{name}: output {k} at batch {batch} outside the fp16 tolerance (cosine {cos:.6f},"
                                        f" max abs {float(np.abs(g - r).max()):.3g}, max|ref| {scale:.3g})")
                    continue
                atol = 1e-5 * float(np.abs(r).max()) if r.size else 0.0
                if r.shape != g.shape or not np.allclose(g, r, rtol=1e-4, atol=atol):
                    err = float(np.abs(g - r).max()) if r.shape == g.shape else "shape"
                    failures.append(f"{name}: output {k} at batch {batch} differs from the unoptimized graph (max abs {err})")
        status = "ok" if not any(f.startswith(name + ":") for f in failures) else "FAIL"
        print(f"{status:4} {name:40} passes={c['passes']:30} {' '.join(c.get('options', []))} {dict(c['expect'])}")
    print(f"{len(cases)} cases, {len(failures)} failures")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
