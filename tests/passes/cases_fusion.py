"""Cases for fuse-gelu, fuse-gemm and fuse-conv."""
import math

import numpy as np
from onnx import helper

from pass_case import case, const, model, weights

SQRT2 = np.float32(math.sqrt(2.0))
F = np.float32


def scalar(name, value):
    return const(name, np.array(value, dtype=np.float32))


# ---- fuse-gelu -------------------------------------------------------------------------------

def erf_gelu(x, y, scale_op="Div", add_order=("e", "one"), form="x_first", commute=False):
    """0.5 * x * (1 + erf(x / sqrt(2))) in one of the product orders, with optional commuted operands."""
    scale_in = ["c_scale", x] if commute and scale_op == "Mul" else [x, "c_scale"]
    nodes = [helper.make_node(scale_op, scale_in, ["d"], name="scale"),
             helper.make_node("Erf", ["d"], ["e"], name="erf"),
             helper.make_node("Add", ["c_one" if a == "one" else "e" for a in add_order], ["a"], name="add_one")]
    if form == "x_first":       # Mul(x, a) -> Mul(_, 0.5)
        nodes += [helper.make_node("Mul", ["a", x] if commute else [x, "a"], ["m"], name="mul_x"),
                  helper.make_node("Mul", ["c_half", "m"] if commute else ["m", "c_half"], [y], name="mul_half")]
    elif form == "half_first":  # Mul(a, 0.5) -> Mul(x, _)
        nodes += [helper.make_node("Mul", ["c_half", "a"] if commute else ["a", "c_half"], ["m"], name="mul_half"),
                  helper.make_node("Mul", ["m", x] if commute else [x, "m"], [y], name="mul_x")]
    else:                       # Mul(x, 0.5) -> Mul(_, a)
        nodes += [helper.make_node("Mul", ["c_half", x] if commute else [x, "c_half"], ["h"], name="mul_half"),
                  helper.make_node("Mul", ["a", "h"] if commute else ["h", "a"], [y], name="mul_a")]
    inits = [scalar("c_scale", SQRT2 if scale_op == "Div" else F(1.0 / math.sqrt(2.0))),
             scalar("c_one", 1.0), scalar("c_half", 0.5)]
    return nodes, inits


@case("fuse_gelu_erf_torchvision", "fuse-gelu", {"Gelu": 1, "Erf": 0, "Div": 0, "Add": 0, "Mul": 0})
def _():
    # torchvision: Div(x, 1.4142135) -> Erf -> Add(_, 1) -> Mul(x, _) -> Mul(_, 0.5)
    nodes, inits = erf_gelu("x", "y")
    return model(nodes, [("x", ["batch", 5, 16])], [("y", ["batch", 5, 16])], inits)


@case("fuse_gelu_erf_mul_commuted", "fuse-gelu", {"Gelu": 1, "Erf": 0, "Add": 0, "Mul": 0})
def _():
    # Mul by 1/sqrt(2) (constant first), Add(1, erf), Mul(a, x), Mul(0.5, _)
    nodes, inits = erf_gelu("x", "y", scale_op="Mul", add_order=("one", "e"), commute=True)
    return model(nodes, [("x", [2, 16])], [("y", [2, 16])], inits)


@case("fuse_gelu_erf_half_first", "fuse-gelu", {"Gelu": 1, "Erf": 0, "Add": 0, "Mul": 0, "Div": 0})
def _():
    nodes, inits = erf_gelu("x", "y", form="half_first", commute=True)
    return model(nodes, [("x", [2, 16])], [("y", [2, 16])], inits)


@case("fuse_gelu_erf_half_times_x", "fuse-gelu", {"Gelu": 1, "Erf": 0, "Add": 0, "Mul": 0, "Div": 0})
def _():
    nodes, inits = erf_gelu("x", "y", form="half_x")
    return model(nodes, [("x", [2, 16])], [("y", [2, 16])], inits)


def tanh_gelu(cube):
    if cube == "pow":
        nodes = [helper.make_node("Pow", ["x", "c_three"], ["x3"], name="cube")]
    else:  # x * (x * x), operands commuted
        nodes = [helper.make_node("Mul", ["x", "x"], ["x2"], name="square"),
                 helper.make_node("Mul", ["x2", "x"], ["x3"], name="cube")]
    nodes += [helper.make_node("Mul", ["c_cubic", "x3"], ["p"], name="coef"),
              helper.make_node("Add", ["p", "x"] if cube != "pow" else ["x", "p"], ["s"], name="inner"),
              helper.make_node("Mul", ["s", "c_k"], ["k"], name="scale"),
              helper.make_node("Tanh", ["k"], ["t"], name="tanh"),
              helper.make_node("Add", ["t", "c_one"], ["a"], name="add_one"),
              helper.make_node("Mul", ["x", "a"], ["m"], name="mul_x"),
              helper.make_node("Mul", ["m", "c_half"], ["y"], name="mul_half")]
    inits = [scalar("c_three", 3.0), scalar("c_cubic", 0.044715), scalar("c_k", math.sqrt(2.0 / math.pi)),
             scalar("c_one", 1.0), scalar("c_half", 0.5)]
    if cube != "pow":
        inits = inits[1:]
    return model(nodes, [("x", ["batch", 16])], [("y", ["batch", 16])], inits)


@case("fuse_gelu_tanh_pow", "fuse-gelu", {"Gelu": 1, "Tanh": 0, "Pow": 0, "Mul": 0, "Add": 0})
def _():
    return tanh_gelu("pow")


@case("fuse_gelu_tanh_mul_cube", "fuse-gelu", {"Gelu": 1, "Tanh": 0, "Mul": 0, "Add": 0})
def _():
    return tanh_gelu("mul")


@case("fuse_gelu_not_other_constant", "fuse-gelu", {"Gelu": 0, "Erf": 1, "Div": 1, "Mul": 2})
def _():
    nodes, inits = erf_gelu("x", "y")
    inits[0] = scalar("c_scale", 1.5)  # Div by 1.5 is not GELU
    return model(nodes, [("x", [2, 16])], [("y", [2, 16])], inits)


@case("fuse_gelu_not_shared_intermediate", "fuse-gelu", {"Gelu": 0, "Erf": 1, "Div": 1, "Mul": 2, "Add": 1})
def _():
    nodes, inits = erf_gelu("x", "y")
    # the 1 + erf value has a second user
    nodes.append(helper.make_node("Relu", ["a"], ["r"], name="other_user"))
    return model(nodes, [("x", [2, 16])], [("y", [2, 16]), ("r", [2, 16])], inits)


@case("fuse_gelu_not_pow_two", "fuse-gelu", {"Gelu": 0, "Tanh": 1, "Pow": 1})
def _():
    m = tanh_gelu("pow")
    m.graph.initializer[0].CopyFrom(scalar("c_three", 2.0))  # x^2, not x^3
    return m


# ---- fuse-gemm -------------------------------------------------------------------------------

def bias(name, n, seed):
    return const(name, (np.random.default_rng(seed).standard_normal(n) * 0.1).astype(np.float32))


@case("fuse_gemm_vit_mlp", "fuse-gelu,fuse-gemm",
      {"FusedGemm": 2, "MatMul": 0, "Add": 0, "Gelu": 0, "Erf": 0, "Mul": 0, "Div": 0})
def _():
    # ViT MLP block: MatMul + Add(bias first) + erf GELU, MatMul + Add(bias) + residual Add
    g_nodes, g_inits = erf_gelu("h", "g")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["mm1"], name="fc1"),
             helper.make_node("Add", ["b1", "mm1"], ["h"], name="fc1_bias")] + g_nodes + [
             helper.make_node("MatMul", ["g", "w2"], ["mm2"], name="fc2"),
             helper.make_node("Add", ["mm2", "b2"], ["o"], name="fc2_bias"),
             helper.make_node("Add", ["x", "o"], ["y"], name="residual")]
    inits = [weights("w1", [8, 32], 1), bias("b1", 32, 2), weights("w2", [32, 8], 3), bias("b2", 8, 4)] + g_inits
    return model(nodes, [("x", ["batch", 5, 8])], [("y", ["batch", 5, 8])], inits)


@case("fuse_gemm_gemm_transb_relu", "fuse-gemm", {"FusedGemm": 1, "Gemm": 0, "Relu": 0})
def _():
    nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["g"], name="gemm", transB=1, alpha=0.5),
             helper.make_node("Relu", ["g"], ["y"], name="relu")]
    return model(nodes, [("x", ["batch", 8])], [("y", ["batch", 12])], [weights("w", [12, 8], 5), bias("c", 12, 6)])


@case("fuse_gemm_gemm_c_row_clip", "fuse-gemm", {"FusedGemm": 1, "Gemm": 0, "Clip": 0})
def _():
    nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["g"], name="gemm"),
             helper.make_node("Clip", ["g", "lo", "hi"], ["y"], name="relu6")]
    inits = [weights("w", [8, 12], 7), const("c", (np.random.default_rng(8).standard_normal((1, 12)) * 0.1).astype(F)),
             scalar("lo", 0.0), scalar("hi", 0.5)]
    return model(nodes, [("x", [3, 8])], [("y", [3, 12])], inits)


@case("fuse_gemm_relu_of_residual", "fuse-gemm", {"FusedGemm": 1, "MatMul": 0, "Add": 0, "Relu": 0})
def _():
    # relu(x W + b + z): the activation after the residual Add folds too
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="fc"),
             helper.make_node("Add", ["mm", "b"], ["h"], name="fc_bias"),
             helper.make_node("Add", ["z", "h"], ["s"], name="residual"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    return model(nodes, [("x", ["batch", 4, 8]), ("z", ["batch", 4, 6])], [("y", ["batch", 4, 6])],
                 [weights("w", [8, 6], 9), bias("b", 6, 10)])


@case("fuse_gemm_gelu_tanh_op", "fuse-gemm", {"FusedGemm": 1, "MatMul": 0, "Add": 0, "Gelu": 0}, opset=20)
def _():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="fc"),
             helper.make_node("Add", ["mm", "b"], ["h"], name="fc_bias"),
             helper.make_node("Gelu", ["h"], ["y"], name="gelu", approximate="tanh")]
    return model(nodes, [("x", [2, 8])], [("y", [2, 16])], [weights("w", [8, 16], 11), bias("b", 16, 12)],
                 opset=20)


def vit_out_proj(k, n, shape_from_input):
    """torchvision ViT attention output projection: [4, batch, k] heads output -> Reshape [4*batch, k]
    -> Gemm -> Reshape [4, batch, n] -> Transpose(1,0,2) -> Add(residual [batch, 4, n])."""
    nodes = [helper.make_node("Transpose", ["t"], ["tt"], name="heads_t", perm=[1, 0, 2]),
             helper.make_node("Reshape", ["tt", "flat"], ["a"], name="flatten"),
             helper.make_node("Gemm", ["a", "w", "c"], ["g"], name="out_proj", transB=1)]
    inits = [const("flat", np.array([-1, k], np.int64)), weights("w", [n, k], 13), bias("c", n, 14)]
    if shape_from_input:  # the exporter's Shape -> Gather -> Unsqueeze -> Concat chain, not folded
        nodes += [helper.make_node("Shape", ["t"], ["ts"], name="shape"),
                  helper.make_node("Gather", ["ts", "i0"], ["bs"], name="batch_dim", axis=0),
                  helper.make_node("Unsqueeze", ["bs", "ax0"], ["bs1"], name="batch_1d"),
                  helper.make_node("Concat", ["four", "bs1", "n1"], ["split"], name="split_shape", axis=0)]
        inits += [const("i0", np.array(0, np.int64)), const("ax0", np.array([0], np.int64)),
                  const("four", np.array([4], np.int64)), const("n1", np.array([n], np.int64))]
    else:
        inits.append(const("split", np.array([4, -1, n], np.int64)))
    nodes += [helper.make_node("Reshape", ["g", "split"], ["r"], name="unflatten"),
              helper.make_node("Transpose", ["r"], ["rt"], name="to_batch_first", perm=[1, 0, 2]),
              helper.make_node("Add", ["rt", "z"], ["y"], name="residual")]
    return model(nodes, [("t", ["batch", 4, k]), ("z", ["batch", 4, n])], [("y", ["batch", 4, n])], inits)


@case("fuse_gemm_residual_through_layout", "fuse-gemm", {"FusedGemm": 1, "Gemm": 0, "Add": 0, "Reshape": 2, "Transpose": 2})
def _():
    return vit_out_proj(8, 12, shape_from_input=False)


@case("fuse_gemm_residual_through_layout_shape_chain", "fuse-gemm,dce",
      {"FusedGemm": 1, "Gemm": 0, "Add": 0, "Reshape": 2, "Transpose": 2})
def _():
    return vit_out_proj(8, 8, shape_from_input=True)


@case("fuse_gemm_not_attention_matmul", "fuse-gemm", {"FusedGemm": 0, "MatMul": 2, "Softmax": 1})
def _():
    # activation x activation MatMuls (scores and context) are not GEMMs with a weight
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], name="kt", perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
             helper.make_node("Softmax", ["s"], ["p"], name="softmax", axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"], name="context")]
    return model(nodes, [("q", ["batch", 5, 4]), ("k", ["batch", 5, 4]), ("v", ["batch", 5, 4])],
                 [("y", ["batch", 5, 4])], [])


@case("fuse_gemm_not_shared_output", "fuse-gemm", {"FusedGemm": 1, "MatMul": 0, "Add": 1, "Relu": 1})
def _():
    # the biased output has a second user: bias folds, residual and Relu stay
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="fc"),
             helper.make_node("Add", ["mm", "b"], ["h"], name="fc_bias"),
             helper.make_node("Add", ["h", "z"], ["s"], name="residual"),
             helper.make_node("Relu", ["h"], ["r"], name="other_user")]
    return model(nodes, [("x", [3, 8]), ("z", [3, 6])], [("s", [3, 6]), ("r", [3, 6])],
                 [weights("w", [8, 6], 15), bias("b", 6, 16)])


@case("fuse_gemm_not_residual_after_activation", "fuse-gemm", {"FusedGemm": 1, "Add": 1, "Relu": 0})
def _():
    # relu(x W) + z: the Add after the activation is not an epilogue of the GEMM
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="fc"),
             helper.make_node("Relu", ["mm"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "z"], ["y"], name="residual")]
    return model(nodes, [("x", [3, 8]), ("z", [3, 6])], [("y", [3, 6])], [weights("w", [8, 6], 17)])


@case("fuse_gemm_not_broadcast_residual", "fuse-gemm", {"FusedGemm": 1, "Add": 1})
def _():
    # z [1, 6] broadcasts over the rows: not a residual of exactly the output's shape
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="fc"),
             helper.make_node("Add", ["mm", "z"], ["y"], name="add")]
    return model(nodes, [("x", [3, 8]), ("z", [1, 6])], [("y", [3, 6])], [weights("w", [8, 6], 18)])


@case("fuse_gemm_not_beta", "fuse-gemm", {"FusedGemm": 0, "Gemm": 1})
def _():
    nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm", beta=0.5)]
    return model(nodes, [("x", [3, 8])], [("y", [3, 6])], [weights("w", [8, 6], 19), bias("c", 6, 20)])


@case("fuse_gemm_not_last_axis_transpose", "fuse-gemm", {"FusedGemm": 1, "Add": 1, "Transpose": 1})
def _():
    # a Transpose that moves the last axis does not commute with the GEMM
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="fc"),
             helper.make_node("Transpose", ["mm"], ["t"], name="swap", perm=[0, 2, 1]),
             helper.make_node("Add", ["t", "z"], ["y"], name="residual")]
    return model(nodes, [("x", [2, 6, 8]), ("z", [2, 6, 6])], [("y", [2, 6, 6])], [weights("w", [8, 6], 21)])


# ---- fuse-conv -------------------------------------------------------------------------------

def conv(name, x, w, y, b=None, **attrs):
    return helper.make_node("Conv", [x, w] + ([b] if b else []), [y], name=name, **attrs)


@case("fuse_conv_bias_residual_relu", "fuse-conv", {"FusedConv": 1, "Conv": 0, "Add": 0, "Relu": 0})
def _():
    # relu(conv(x) + bias[C,1,1] + x): bias folds into B, x is the residual
    nodes = [conv("conv", "x", "w", "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["bc", "c"], ["cb"], name="bias"),
             helper.make_node("Add", ["cb", "x"], ["s"], name="residual"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    inits = [weights("w", [4, 4, 3, 3], 22),
             const("bc", (np.random.default_rng(23).standard_normal((4, 1, 1)) * 0.1).astype(np.float32))]
    return model(nodes, [("x", ["batch", 4, 6, 6])], [("y", ["batch", 4, 6, 6])], inits)


@case("fuse_conv_downsample_block", "fuse-conv", {"FusedConv": 2, "Conv": 0, "Add": 0, "Relu": 0})
def _():
    # ResNet downsample: relu(conv3(x) + downsample(x)); the residual goes into the later conv
    nodes = [conv("downsample", "x", "wd", "d", "bd", strides=[2, 2], kernel_shape=[1, 1]),
             conv("conv3", "x", "w3", "c", "b3", strides=[2, 2], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "d"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    inits = [weights("wd", [6, 4, 1, 1], 24), bias("bd", 6, 25), weights("w3", [6, 4, 3, 3], 26), bias("b3", 6, 27)]
    return model(nodes, [("x", [1, 4, 8, 8])], [("y", [1, 6, 4, 4])], inits)


@case("fuse_conv_downsample_block_reversed", "fuse-conv", {"FusedConv": 2, "Conv": 0, "Add": 0, "Relu": 0})
def _():
    # the same block with the downsample conv after conv3 in graph order: it takes the residual
    nodes = [conv("conv3", "x", "w3", "c", "b3", strides=[2, 2], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             conv("downsample", "x", "wd", "d", "bd", strides=[2, 2], kernel_shape=[1, 1]),
             helper.make_node("Add", ["c", "d"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    inits = [weights("wd", [6, 4, 1, 1], 24), bias("bd", 6, 25), weights("w3", [6, 4, 3, 3], 26), bias("b3", 6, 27)]
    return model(nodes, [("x", ["batch", 4, 8, 8])], [("y", ["batch", 6, 4, 4])], inits)


@case("fuse_conv_bias_clip", "fuse-conv", {"FusedConv": 1, "Conv": 0, "Add": 0, "Clip": 0})
def _():
    # depthwise conv with its B, a [1,C,1,1] bias Add summed into B, Clip(0, 6)
    nodes = [conv("dw", "x", "w", "c", "b", group=4, kernel_shape=[3, 3]),
             helper.make_node("Add", ["c", "bc"], ["cb"], name="bias"),
             helper.make_node("Clip", ["cb", "lo", "hi"], ["y"], name="relu6")]
    inits = [weights("w", [4, 1, 3, 3], 28), bias("b", 4, 29),
             const("bc", (np.random.default_rng(30).standard_normal((1, 4, 1, 1)) * 0.1).astype(np.float32)),
             scalar("lo", 0.0), scalar("hi", 6.0)]
    return model(nodes, [("x", ["batch", 4, 6, 6])], [("y", ["batch", 4, 4, 4])], inits)


@case("fuse_conv_not_shared_output", "fuse-conv", {"FusedConv": 1, "Conv": 0, "Add": 1, "Relu": 1})
def _():
    # the conv output has two users: the Conv alone becomes a FusedConv, Add and Relu stay
    nodes = [conv("conv", "x", "w", "c", "b", kernel_shape=[1, 1]),
             helper.make_node("Add", ["c", "x"], ["s"], name="residual"),
             helper.make_node("Relu", ["c"], ["r"], name="relu")]
    return model(nodes, [("x", [1, 4, 5, 5])], [("s", [1, 4, 5, 5]), ("r", [1, 4, 5, 5])],
                 [weights("w", [4, 4, 1, 1], 31), bias("b", 4, 32)])


@case("fuse_conv_not_residual_after_relu", "fuse-conv", {"FusedConv": 1, "Add": 1, "Relu": 0})
def _():
    nodes = [conv("conv", "x", "w", "c", kernel_shape=[1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "x"], ["y"], name="residual")]
    return model(nodes, [("x", [1, 4, 5, 5])], [("y", [1, 4, 5, 5])], [weights("w", [4, 4, 1, 1], 33)])


@case("fuse_conv_not_spatial_bias", "fuse-conv", {"FusedConv": 1, "Add": 1})
def _():
    # a constant that varies along the width is not a per-channel bias
    nodes = [conv("conv", "x", "w", "c", kernel_shape=[1, 1]),
             helper.make_node("Add", ["c", "bw"], ["y"], name="width_bias")]
    inits = [weights("w", [4, 4, 1, 1], 34),
             const("bw", (np.random.default_rng(35).standard_normal((1, 1, 1, 5)) * 0.1).astype(F))]
    return model(nodes, [("x", [1, 4, 5, 5])], [("y", [1, 4, 5, 5])], inits)


@case("fuse_conv_not_broadcast_residual", "fuse-conv", {"FusedConv": 1, "Add": 1})
def _():
    # t [1,4,1,1] broadcasts over the conv output: not a residual of exactly its shape
    nodes = [conv("conv", "x", "w", "c", kernel_shape=[1, 1]),
             helper.make_node("Add", ["t", "c"], ["y"], name="broadcast_add")]
    return model(nodes, [("x", [1, 4, 5, 5]), ("t", [1, 4, 1, 1])], [("y", [1, 4, 5, 5])],
                 [weights("w", [4, 4, 1, 1], 36)])
