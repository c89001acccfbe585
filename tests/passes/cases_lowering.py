"""Cases for the O3 lowering and layout passes: lower-conv, lower-attention, layout-nhwc.
Each runs `fuse-conv`/`fuse-attention` first so that the lowering sees the fused ops, and passes
`--target T` to `opt` and to the optimized `run` (the reference interpreter runs the lowered graph)."""
import os

import numpy as np
from onnx import helper

from pass_case import case, const, model, weights


# A CPU without implicit-GEMM convolution or fused attention (the built-in cpu target has both).
GEMM_ONLY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "targets", "gemm_only_cpu.target")


def tgt(name):
    return ("--target", name)


def conv(x, w, y, name, kernel, stride=1, pad=0, group=1, b=None):
    ins = [x, w] + ([b] if b else [])
    return helper.make_node("Conv", ins, [y], name=name, kernel_shape=[kernel, kernel], strides=[stride, stride],
                            pads=[pad] * 4, group=group)


def bottleneck(stride=1):
    """1x1 -> relu -> 3x3 (stride) -> relu -> 1x1 + residual (1x1 stride-s downsample) -> relu."""
    nodes = [conv("x", "w1", "a", "c1", 1, b="b1"), helper.make_node("Relu", ["a"], ["ar"], name="r1"),
             conv("ar", "w2", "c", "c2", 3, stride=stride, pad=1, b="b2"), helper.make_node("Relu", ["c"], ["cr"], name="r2"),
             conv("cr", "w3", "d", "c3", 1, b="b3"),
             conv("x", "wd", "s", "down", 1, stride=stride, b="bd"),
             helper.make_node("Add", ["d", "s"], ["e"], name="add"), helper.make_node("Relu", ["e"], ["y"], name="r3")]
    inits = [weights("w1", [4, 8, 1, 1], 1), const("b1", np.linspace(-0.1, 0.1, 4).astype(np.float32)),
             weights("w2", [4, 4, 3, 3], 2), const("b2", np.linspace(-0.1, 0.1, 4).astype(np.float32)),
             weights("w3", [16, 4, 1, 1], 3), const("b3", np.linspace(-0.1, 0.1, 16).astype(np.float32)),
             weights("wd", [16, 8, 1, 1], 4), const("bd", np.linspace(-0.1, 0.1, 16).astype(np.float32))]
    ho = 6 // stride
    return model(nodes, [("x", ["batch", 8, 6, 6])], [("y", ["batch", 16, ho, ho])], inits)


def resnet_head():
    """conv -> maxpool -> conv -> global average pool -> flatten -> gemm (a ResNet's edges)."""
    nodes = [conv("x", "w1", "a", "stem", 3, stride=2, pad=1, b="b1"), helper.make_node("Relu", ["a"], ["ar"], name="r1"),
             helper.make_node("MaxPool", ["ar"], ["p"], name="pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             conv("p", "w2", "c", "c2", 1, b="b2"), helper.make_node("Relu", ["c"], ["cr"], name="r2"),
             helper.make_node("GlobalAveragePool", ["cr"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flatten", axis=1),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1)]
    inits = [weights("w1", [8, 3, 3, 3], 1), const("b1", np.linspace(-0.1, 0.1, 8).astype(np.float32)),
             weights("w2", [16, 8, 1, 1], 2), const("b2", np.linspace(-0.1, 0.1, 16).astype(np.float32)),
             weights("wf", [5, 16], 3), const("bf", np.linspace(-0.1, 0.1, 5).astype(np.float32))]
    return model(nodes, [("x", ["batch", 3, 16, 16])], [("y", ["batch", 5])], inits)


# ---- lower-conv ------------------------------------------------------------------------------

@case("lower_conv_ref_decisions_only", "fuse-conv,lower-conv", {"FusedConv": 4, "FusedGemm": 0, "Im2Col": 0},
      options=tgt("ref"))
def _():
    return bottleneck(stride=2)


@case("lower_conv_cpu_bottleneck", "fuse-conv,lower-conv",
      {"FusedConv": 0, "FusedGemm": 4, "Im2Col": 1, "Slice": 1}, options=tgt(GEMM_ONLY))
def _():
    # 1x1 -> GEMM, stride-2 1x1 downsample -> Slice + GEMM, 3x3 -> Im2Col + GEMM (no implicit GEMM on cpu)
    return bottleneck(stride=2)


@case("lower_conv_cuda_bottleneck", "fuse-conv,lower-conv",
      {"FusedConv": 1, "FusedGemm": 3, "Im2Col": 0, "Slice": 1}, options=tgt("cuda"))
def _():
    # the 3x3 stays a FusedConv with an implicit-GEMM decision (cuDNN)
    return bottleneck(stride=2)


@case("lower_conv_cpu_grouped_kept", "fuse-conv,lower-conv", {"FusedConv": 1, "Im2Col": 0, "FusedGemm": 0},
      options=tgt(GEMM_ONLY))
def _():
    # must not fire: a grouped 3x3 (ResNeXt) on a target without implicit GEMM stays a FusedConv with the decision
    nodes = [conv("x", "w", "y", "grouped", 3, pad=1, group=4)]
    return model(nodes, [("x", [1, 8, 5, 5])], [("y", [1, 8, 5, 5])], [weights("w", [8, 2, 3, 3], 1)])


@case("lower_conv_cpu_runtime_weight_kept", "fuse-conv,lower-conv", {"FusedConv": 1, "FusedGemm": 0},
      options=tgt(GEMM_ONLY))
def _():
    # must not fire: W is a graph input, not a constant to reshape into a GEMM operand
    nodes = [conv("x", "w", "y", "c", 1)]
    return model(nodes, [("x", [1, 8, 4, 4]), ("w", [4, 8, 1, 1])], [("y", [1, 4, 4, 4])], [])


# ---- layout-nhwc -----------------------------------------------------------------------------

@case("layout_nhwc_cuda_bottleneck", "fuse-conv,layout-nhwc,lower-conv,dce",
      {"Transpose": 2, "FusedConv": 1, "FusedGemm": 3}, options=tgt("cuda"))
def _():
    # one Transpose at the input, one at the output: the residual's pair cancels
    return bottleneck(stride=1)


@case("layout_nhwc_cpu_resnet_edges", "fuse-conv,fuse-gemm,layout-nhwc,lower-conv,dce",
      {"Transpose": 1, "Pool": 1, "MaxPool": 0, "GlobalAveragePool": 0, "ReduceMean": 1, "Im2Col": 1},
      options=tgt(GEMM_ONLY))
def _():
    # MaxPool runs in NHWC (Pool), GlobalAveragePool is a ReduceMean over H, W, flattened without a Transpose
    return resnet_head()


@case("layout_nhwc_ref_must_not_fire", "fuse-conv,fuse-gemm,layout-nhwc,dce",
      {"Transpose": 0, "MaxPool": 1, "GlobalAveragePool": 1, "FusedConv": 2}, options=tgt("ref"))
def _():
    return resnet_head()


# ---- lower-attention -------------------------------------------------------------------------

def attention_model():
    """Opset-23 Attention, 3-D inputs with 2 heads of size 4."""
    nodes = [helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn", q_num_heads=2, kv_num_heads=2,
                              scale=0.5)]
    shape = ["batch", 5, 8]
    return model(nodes, [("q", shape), ("k", shape), ("v", shape)], [("y", shape)], [], opset=23)


@case("lower_attention_cpu_batched_gemm", "lower-attention", {"Attention": 0, "MatMul": 2, "Softmax": 1, "Mul": 1},
      opset=23, options=tgt(GEMM_ONLY))
def _():
    return attention_model()


@case("lower_attention_cuda_fused", "lower-attention", {"Attention": 1, "MatMul": 0, "Softmax": 0},
      opset=23, options=tgt("cuda"))
def _():
    return attention_model()


@case("lower_attention_cpu_causal_kept", "lower-attention", {"Attention": 1, "MatMul": 0}, opset=23,
      options=tgt(GEMM_ONLY))
def _():
    # must not fire: a causal Attention is kept as one node (the decision says why)
    nodes = [helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn", q_num_heads=2, kv_num_heads=2,
                              is_causal=1)]
    shape = [1, 5, 8]
    return model(nodes, [("q", shape), ("k", shape), ("v", shape)], [("y", shape)], [], opset=23)


@case("layout_nhwc_cuda_patch_tokens", "fuse-conv,layout-nhwc,dce", {"Transpose": 1, "Reshape": 1, "FusedConv": 1},
      options=tgt("cuda"))
def _():
    # ViT patch embedding: Conv 4x4/4 -> Reshape [N, C, H*W] -> Transpose [0,2,1]: in NHWC one Reshape, one Transpose (input)
    nodes = [conv("x", "w", "p", "patch", 4, stride=4, b="b"),
             helper.make_node("Reshape", ["p", "s"], ["r"], name="flat"),
             helper.make_node("Transpose", ["r"], ["y"], name="tokens", perm=[0, 2, 1])]
    inits = [weights("w", [6, 3, 4, 4], 1), const("b", np.linspace(-0.1, 0.1, 6).astype(np.float32)),
             const("s", np.array([0, 6, -1], dtype=np.int64))]
    return model(nodes, [("x", ["batch", 3, 8, 8])], [("y", ["batch", 4, 6])], inits)


# ---- lower-gemm (decisions only) --------------------------------------------------------------

def mlp(approximate):
    """MatMul + bias + Gelu(approximate) -> MatMul + bias + Relu."""
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"], name="fc1"),
             helper.make_node("Add", ["m1", "b1"], ["h1"], name="fc1_bias"),
             helper.make_node("Gelu", ["h1"], ["g"], name="gelu", approximate=approximate),
             helper.make_node("MatMul", ["g", "w2"], ["m2"], name="fc2"),
             helper.make_node("Add", ["m2", "b2"], ["h2"], name="fc2_bias"),
             helper.make_node("Relu", ["h2"], ["y"], name="relu")]
    inits = [weights("w1", [8, 16], 1), const("b1", np.linspace(-0.1, 0.1, 16).astype(np.float32)),
             weights("w2", [16, 4], 2), const("b2", np.linspace(-0.1, 0.1, 4).astype(np.float32))]
    return model(nodes, [("x", [2, 8])], [("y", [2, 4])], inits, opset=20)


@case("lower_gemm_cuda_erf_gelu_separate", "fuse-gemm,lower-gemm", {"FusedGemm": 2}, opset=20, options=tgt("cuda"))
def _():
    # cuBLASLt's GELU epilogue is the tanh form: an erf GELU at fp32 runs after the GEMM; relu is fused
    return mlp("none")


@case("lower_gemm_cuda_tanh_gelu_fused", "fuse-gemm,lower-gemm", {"FusedGemm": 2}, opset=20, options=tgt("cuda"))
def _():
    return mlp("tanh")


@case("lower_gemm_cuda_fp16_erf_gelu_takes_tanh_epilogue", "fuse-gemm,assign-precision,lower-gemm", {"FusedGemm": 2},
      opset=20, options=tuple(tgt("cuda")) + ("--precision", "fp16"), tolerance="fp16")
def _():
    # In fp16 the cuda target takes cuBLASLt's GELU epilogue: the erf GELU becomes gelu_tanh, said in a decision.
    return mlp("none")


@case("lower_gemm_cpu_fp16_erf_gelu_kept", "fuse-gemm,assign-precision,lower-gemm", {"FusedGemm": 2},
      opset=20, options=tuple(tgt("cpu")) + ("--precision", "fp16"), tolerance="fp16")
def _():
    # The cpu target has no approximate GELU epilogue: the model's erf GELU stays in fp16 too.
    return mlp("none")


# ---- schedule-late ---------------------------------------------------------------------------

@case("schedule_late_bottleneck_downsample", "fuse-conv,layout-nhwc,lower-conv,dce,schedule-late",
      {"FusedGemm": 3, "FusedConv": 1}, options=tgt("cpu"))
def _():
    # A bottleneck block as exporters order it, downsample first: the downsample GEMM runs just before
    # the conv3 GEMM that adds it (order checked by tests/passes/schedule_late_test.cc); same values.
    nodes = [conv("x", "wd", "d", "down", 1, b="bd"),
             conv("x", "w1", "c1", "conv1", 1, b="b1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             conv("r1", "w2", "c2", "conv2", 3, pad=1, b="b2"),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             conv("r2", "w3", "c3", "conv3", 1, b="b3"),
             helper.make_node("Add", ["c3", "d"], ["s"], name="residual"),
             helper.make_node("Relu", ["s"], ["y"], name="relu3")]
    inits = [weights("wd", [16, 8, 1, 1], 1), weights("w1", [4, 8, 1, 1], 2), weights("w2", [4, 4, 3, 3], 3),
             weights("w3", [16, 4, 1, 1], 4)]
    inits += [const(b, np.linspace(-0.1, 0.1, n).astype(np.float32))
              for b, n in (("bd", 16), ("b1", 4), ("b2", 4), ("b3", 16))]
    return model(nodes, [("x", ["batch", 8, 6, 6])], [("y", ["batch", 16, 6, 6])], inits)
