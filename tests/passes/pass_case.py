"""Registry of pass test cases. A case builds a small ONNX model with onnx.helper and names the
passes to run, the op counts expected afterwards (structure) and whether the rule must fire.
Cases live in cases_*.py files next to this one; run_pass_tests.py runs them all."""
import zlib

import numpy as np
from onnx import helper, numpy_helper, TensorProto

CASES = []


def case(name, passes, expect, opset=17, options=(), tolerance="fp32", calibration=False):
    """Registers `fn` (returning an onnx ModelProto) as case `name`.

    passes: comma-separated pass list for `gcomp opt --passes=`.
    expect: {op: count} after the passes (ops not listed are not checked); a must-not-fire case
            lists the original ops that must still be there.
    options: extra gcomp arguments for `opt` and the optimized `run`, e.g. ("--precision", "fp16").
    tolerance: "fp32" (rtol 1e-4, atol 1e-5*max|ref|) or "fp16" (DESIGN.md's fp16/bf16 tolerance:
               cosine >= 0.999, max abs error <= 5e-2*max|ref|, no inf/NaN) or "fp8" (cosine >= 0.99, no
               inf/NaN) against the unoptimized graph.
    calibration: the harness writes random inputs (batch 1, two samples) as test_data_set_*/input_K.pb
                 under OUT/NAME_calibration and replaces "{calibration}" in options with that folder.
    """
    def wrap(fn):
        CASES.append({"name": name, "passes": passes, "expect": expect, "build": fn, "opset": opset,
                      "options": list(options), "tolerance": tolerance,
                      "calibration": calibration})
        return fn
    return wrap


# ---- small builders --------------------------------------------------------------------------

def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def weights(name, shape, seed=0, scale=None):
    r = np.random.default_rng(seed)
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    s = scale if scale is not None else np.sqrt(2.0 / max(fan_in, 1))
    return const(name, (r.standard_normal(shape) * s).astype(np.float32))


def model(nodes, inputs, outputs, initializers, opset=17, name="case"):
    """inputs/outputs: [(name, shape)] with float32 elements; shape entries may be strings."""
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
