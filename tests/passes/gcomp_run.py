"""Runs `gcomp run` on an ONNX test-case's input files and reads the outputs back, and the cosine
similarity the precision checks compare; shared by the model-level checks (check_model_structure.py,
check_lowering.py, check_precision.py, tests/plans/check_cpu_plans.py)."""
import os
import subprocess

import numpy as np
import onnx
from onnx import numpy_helper


def cosine(a, b):
    """Cosine similarity of two arrays (flattened, in float64); 1 for two zero arrays."""
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(a @ b / (na * nb)) if na > 0 and nb > 0 else float(na == nb)


def read_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as fh:
        t.ParseFromString(fh.read())
    return numpy_helper.to_array(t)


def run_model(gcomp, model_path, inputs, extra, out_dir):
    """`gcomp run MODEL --input NAME=FILE ... EXTRA --output-dir OUT_DIR`; input_K.pb files map to
    the graph inputs (initializers excluded) by position. Returns the outputs as arrays."""
    model = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    args = [gcomp, "run", model_path, "--output-dir", out_dir, *extra]
    for k, f in enumerate(inputs):
        args += ["--input", f"{names[k]}={f}"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"gcomp run {' '.join(extra)} failed: {p.stderr.strip()}")
    return [read_tensor(os.path.join(out_dir, f"output_{k}.pb")) for k in range(len(model.graph.output))]
