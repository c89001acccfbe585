"""A peer for gcomp's reduced-precision numerics: evaluates an ONNX ResNet (the ops torchvision
and the model-zoo generator write: Conv, BatchNormalization, Relu, Add, MaxPool,
GlobalAveragePool, Flatten/Reshape, Gemm; the dynamo exporter's ReduceMean pool and timm's
AveragePool downsample) with PyTorch's own operators in a given dtype, every
tensor stored in that dtype (PyTorch's CPU convolutions and GEMMs accumulate in fp32).

check_precision.py uses it to tell the model's sensitivity from gcomp's error: on the small
random-weight ResNets PyTorch's bf16 misses DESIGN.md's bf16 tolerance by as much as gcomp's does.
"""
import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

SUPPORTED = {"Conv", "BatchNormalization", "Relu", "Add", "MaxPool", "GlobalAveragePool", "Flatten", "Reshape",
             "Gemm", "AveragePool", "ReduceMean"}


def supports(model: onnx.ModelProto) -> bool:
    return all(n.op_type in SUPPORTED for n in model.graph.node)


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _symmetric_pads(node, pads, rank):
    begin, end = pads[:rank], pads[rank:]
    if begin != end:
        raise ValueError(f"node {node.name}: asymmetric pads {pads}")
    return tuple(begin)


def run(model: onnx.ModelProto, x: np.ndarray, dtype: torch.dtype) -> list[np.ndarray]:
    """The model's outputs (as fp32 numpy) for input `x`, computed with every tensor in `dtype`."""
    init = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in model.graph.initializer}
    env = {model.graph.input[0].name: torch.from_numpy(np.array(x, copy=True)).to(dtype)}

    def get(name):
        if name in env:
            return env[name]
        t = init[name]
        return t.to(dtype) if t.is_floating_point() else t

    with torch.no_grad():
        for n in model.graph.node:
            a, i = _attrs(n), [get(k) for k in n.input if k]
            op = n.op_type
            if op == "Conv":
                pads = _symmetric_pads(n, a.get("pads", [0] * 4), 2)
                y = F.conv2d(i[0], i[1], i[2] if len(i) > 2 else None, a.get("strides", 1), pads,
                             a.get("dilations", 1), a.get("group", 1))
            elif op == "BatchNormalization":
                y = F.batch_norm(i[0], i[3], i[4], i[1], i[2], False, 0.0, a.get("epsilon", 1e-5))
            elif op == "Relu":
                y = F.relu(i[0])
            elif op == "Add":
                y = i[0] + i[1]
            elif op == "MaxPool":
                pads = _symmetric_pads(n, a.get("pads", [0] * 4), 2)
                y = F.max_pool2d(i[0], a["kernel_shape"], a.get("strides", 1), pads)
            elif op == "AveragePool":  # timm's average-pool downsample (resnet50d)
                pads = _symmetric_pads(n, a.get("pads", [0] * 4), 2)
                y = F.avg_pool2d(i[0], a["kernel_shape"], a.get("strides", None), pads, bool(a.get("ceil_mode", 0)),
                                 bool(a.get("count_include_pad", 0)))
            elif op == "ReduceMean":  # the dynamo exporter's global average pool
                axes = i[1].tolist() if len(i) > 1 else a["axes"]
                y = i[0].mean(tuple(axes), keepdim=bool(a.get("keepdims", 1)))
            elif op == "GlobalAveragePool":
                y = i[0].mean((2, 3), keepdim=True)
            elif op == "Flatten":
                y = i[0].flatten(a.get("axis", 1))
            elif op == "Reshape":
                y = i[0].reshape([d if d != 0 else i[0].shape[k] for k, d in enumerate(i[1].tolist())])
            elif op == "Gemm":
                if a.get("transA", 0) or a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0:
                    raise ValueError(f"node {n.name}: Gemm form not handled")
                w = i[1] if a.get("transB", 0) else i[1].t()
                y = F.linear(i[0], w, i[2] if len(i) > 2 else None)
            else:
                raise ValueError(f"node {n.name}: op {op} not handled")
            env[n.output[0]] = y
    return [env[o.name].float().numpy() for o in model.graph.output]
