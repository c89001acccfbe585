"""Cases for the O1 passes: canonicalize, fold-constants, fold-batchnorm, cse."""
import numpy as np
from onnx import helper, TensorProto

from pass_case import case, const, model, rng, weights


def i64(name, values):
    return const(name, np.asarray(values, dtype=np.int64))


def f32(name, values):
    return const(name, np.asarray(values, dtype=np.float32))


def shape_dim(prefix, x, index, index_name):
    """Shape(x) -> Gather(index) -> Unsqueeze: the exporter's way to read one dim as a [1] tensor."""
    return [helper.make_node("Shape", [x], [prefix + "_shape"], name=prefix + "_Shape"),
            helper.make_node("Gather", [prefix + "_shape", index_name], [prefix + "_dim"], name=prefix + "_Gather", axis=0),
            helper.make_node("Unsqueeze", [prefix + "_dim", "axes0"], [prefix + "_dim1"], name=prefix + "_Unsqueeze")]


# ---- canonicalize ------------------------------------------------------------------------------

@case("canonicalize_constant_operand_second", "canonicalize", {"Add": 1, "Mul": 1, "MatMul": 1})
def _():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="matmul"),
             helper.make_node("Add", ["bias", "mm"], ["biased"], name="add_bias"),
             helper.make_node("Mul", ["half", "biased"], ["y"], name="mul_half")]
    return model(nodes, [("x", ["batch", 5, 8])], [("y", ["batch", 5, 6])],
                 [weights("w", [8, 6]), f32("bias", rng("bias").standard_normal(6)), f32("half", 0.5)])


@case("canonicalize_identity_shape_ops", "canonicalize",
      {"Reshape": 0, "Transpose": 0, "Flatten": 0, "Relu": 1})
def _():
    # Each op copies its input: a Reshape to [-1, 8] of [batch, 8] (same shape at every batch), a
    # Transpose with the identity perm, a Flatten(axis=1) of a rank-2 tensor.
    nodes = [helper.make_node("Reshape", ["x", "same"], ["r"], name="reshape_same"),
             helper.make_node("Transpose", ["r"], ["t"], name="transpose_identity", perm=[0, 1]),
             helper.make_node("Flatten", ["t"], ["f"], name="flatten_rank2", axis=1),
             helper.make_node("Relu", ["f"], ["y"], name="relu")]
    return model(nodes, [("x", ["batch", 8])], [("y", ["batch", 8])], [i64("same", [-1, 8])])


@case("canonicalize_must_not_fire", "canonicalize",
      {"Sub": 1, "Div": 1, "Gemm": 1, "LayerNormalization": 1, "Transpose": 1, "Reshape": 1, "Flatten": 1})
def _():
    # Sub/Div with a constant second operand, a Gemm without C (alpha = beta = 1), a
    # LayerNormalization, a real Transpose, a Reshape and a Flatten that change the shape.
    nodes = [helper.make_node("Sub", ["x", "c"], ["s"], name="sub"),
             helper.make_node("Div", ["s", "c"], ["d"], name="div"),
             helper.make_node("Gemm", ["d", "w"], ["g"], name="gemm", alpha=1.0, beta=1.0),
             helper.make_node("LayerNormalization", ["g", "gamma", "beta"], ["ln"], name="layernorm", axis=-1),
             helper.make_node("Transpose", ["ln"], ["t"], name="transpose", perm=[1, 0]),
             helper.make_node("Reshape", ["t", "shape3"], ["r"], name="reshape"),
             helper.make_node("Flatten", ["r"], ["y"], name="flatten", axis=1)]
    return model(nodes, [("x", [4, 6])], [("y", [6, 4])],
                 [f32("c", 1.5), weights("w", [6, 6]), f32("gamma", np.ones(6)), f32("beta", np.zeros(6)),
                  i64("shape3", [6, 2, 2])])


# ---- fold-constants ----------------------------------------------------------------------------

@case("fold_constants_static_chain", "fold-constants",
      {"Shape": 0, "Gather": 0, "Unsqueeze": 0, "Concat": 0, "Mul": 0, "Reshape": 1, "Add": 1})
def _():
    # Static shapes: the whole Shape -> Gather -> Unsqueeze -> Concat chain and the constant
    # Mul(scale, bias) become constants.
    nodes = shape_dim("n", "x", 0, "idx0") + [
        helper.make_node("Concat", ["n_dim1", "minus1"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"], name="reshape"),
        helper.make_node("Mul", ["scale", "bias"], ["scaled_bias"], name="const_mul"),
        helper.make_node("Add", ["flat", "scaled_bias"], ["y"], name="add")]
    return model(nodes, [("x", [2, 3, 4, 4])], [("y", [2, 48])],
                 [i64("idx0", 0), i64("axes0", [0]), i64("minus1", [-1]), f32("scale", 2.0),
                  f32("bias", rng("b").standard_normal(48))], opset=13)


@case("fold_constants_dynamic_reshape", "fold-constants",
      {"Shape": 0, "Gather": 0, "Unsqueeze": 0, "Concat": 0, "Reshape": 1})
def _():
    # Reshape(x: [batch,4,8], {batch,32}) -> Reshape(x, [0,32]): never a hard-coded batch.
    nodes = shape_dim("b", "x", 0, "idx0") + [
        helper.make_node("Concat", ["b_dim1", "c32"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape")]
    return model(nodes, [("x", ["batch", 4, 8])], [("y", ["batch", 32])],
                 [i64("idx0", 0), i64("axes0", [0]), i64("c32", [32])], opset=13)


@case("fold_constants_multihead_reshape", "fold-constants",
      {"Shape": 0, "Gather": 0, "Unsqueeze": 0, "Concat": 0, "Mul": 0, "Reshape": 2, "Transpose": 1})
def _():
    # ViT-B heads: [batch,197,768] -> [batch,197,12,64] (target [0,197,12,64]), transpose to
    # [batch,12,197,64], then fold heads into batch: [batch*12,197,64] (target [-1,197,64]).
    nodes = (shape_dim("b", "x", 0, "idx0") + shape_dim("s", "x", 1, "idx1") + [
        helper.make_node("Concat", ["b_dim1", "s_dim1", "heads", "head_dim"], ["split_target"], name="concat_split",
                         axis=0),
        helper.make_node("Reshape", ["x", "split_target"], ["split"], name="reshape_split"),
        helper.make_node("Transpose", ["split"], ["heads_first"], name="transpose", perm=[0, 2, 1, 3]),
        helper.make_node("Mul", ["b_dim", "heads_scalar"], ["bh"], name="mul_heads"),
        helper.make_node("Unsqueeze", ["bh", "axes0"], ["bh1"], name="unsqueeze_bh"),
        helper.make_node("Concat", ["bh1", "s_dim1", "head_dim"], ["fold_target"], name="concat_fold", axis=0),
        helper.make_node("Reshape", ["heads_first", "fold_target"], ["y"], name="reshape_fold")])
    return model(nodes, [("x", ["batch", 197, 768])], [("y", ["batch*12", 197, 64])],
                 [i64("idx0", 0), i64("idx1", 1), i64("axes0", [0]), i64("heads", [12]), i64("head_dim", [64]),
                  i64("heads_scalar", 12)], opset=13)


@case("fold_constants_expand_class_token", "fold-constants",
      {"Expand": 1, "Shape": 1, "Concat": 2, "Gather": 0, "Unsqueeze": 0, "Reshape": 0, "ConstantOfShape": 0,
       "Equal": 0, "Where": 0, "Mul": 0})
def _():
    # torchvision's class-token expand: {batch,-1,-1} -> Where(Equal(t, -1), 1, t) = {batch,1,1}.
    # The chain becomes Concat(Shape(x){end=1}, [1,1]) read from the graph input.
    nodes = shape_dim("b", "x", 0, "idx0") + [
        helper.make_node("Concat", ["b_dim1", "minus1", "minus1"], ["t3"], name="concat", axis=0),
        helper.make_node("Reshape", ["t3", "minus1"], ["t"], name="reshape_t"),
        helper.make_node("Shape", ["t"], ["t_len"], name="shape_t"),
        helper.make_node("ConstantOfShape", ["t_len"], ["ones"], name="ones",
                         value=helper.make_tensor("one", TensorProto.INT64, [1], [1])),
        helper.make_node("Mul", ["ones", "minus1_scalar"], ["minus_ones"], name="mul"),
        helper.make_node("Equal", ["t", "minus_ones"], ["is_minus1"], name="equal"),
        helper.make_node("Where", ["is_minus1", "ones", "t"], ["target"], name="where"),
        helper.make_node("Expand", ["cls", "target"], ["cls_b"], name="expand"),
        helper.make_node("Concat", ["cls_b", "x"], ["y"], name="concat_tokens", axis=1)]
    return model(nodes, [("x", ["batch", 16, 64])], [("y", ["batch", 17, 64])],
                 [i64("idx0", 0), i64("axes0", [0]), i64("minus1", [-1]), i64("minus1_scalar", -1),
                  f32("cls", rng("cls").standard_normal((1, 1, 64)))], opset=13)


@case("fold_constants_rebuild_shape_vector", "fold-constants",
      {"Shape": 2, "Gather": 0, "Unsqueeze": 0, "Concat": 1, "Mul": 1, "Reshape": 1, "ConstantOfShape": 1})
def _():
    # {seq,batch,8} on input [batch,seq,8]: no entry is the input dim at its position and two are
    # symbolic, so no constant 0/-1 target exists; the vector is rebuilt from Shape(x) slices.
    # {batch*3} for a ConstantOfShape becomes Mul(Shape(x){end=1}, [3]) (sharing that Shape).
    nodes = (shape_dim("b", "x", 0, "idx0") + shape_dim("s", "x", 1, "idx1") + [
        helper.make_node("Concat", ["s_dim1", "b_dim1", "c8"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y1"], name="reshape"),
        helper.make_node("Mul", ["b_dim", "three"], ["b3"], name="mul3"),
        helper.make_node("Unsqueeze", ["b3", "axes0"], ["b3_1"], name="unsqueeze_b3"),
        helper.make_node("ConstantOfShape", ["b3_1"], ["y2"], name="ones",
                         value=helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0]))])
    return model(nodes, [("x", ["batch", "seq", 8])], [("y1", ["seq", "batch", 8]), ("y2", [None])],
                 [i64("idx0", 0), i64("idx1", 1), i64("axes0", [0]), i64("c8", [8]), i64("three", 3)], opset=13)


@case("fold_constants_unknown_values", "fold-constants", {"Cast": 1, "Add": 1, "Reshape": 1, "Mul": 1})
def _():
    # The target's values depend on data (Cast of a float tensor): nothing may be folded.
    nodes = [helper.make_node("Relu", ["s"], ["s_pos"], name="relu"),
             helper.make_node("Mul", ["s_pos", "zero"], ["zeros"], name="mul_zero"),
             helper.make_node("Cast", ["zeros"], ["zeros_i"], name="cast", to=TensorProto.INT64),
             helper.make_node("Add", ["zeros_i", "shape46"], ["target"], name="add"),
             helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape")]
    return model(nodes, [("x", [2, 12]), ("s", [2])], [("y", [4, 6])],
                 [f32("zero", 0.0), i64("shape46", [4, 6])], opset=13)


# ---- fold-batchnorm ----------------------------------------------------------------------------

def bn_params(prefix, channels):
    r = rng(prefix)
    return [f32(prefix + "_gamma", r.uniform(0.5, 1.5, channels)), f32(prefix + "_beta", r.standard_normal(channels) * 0.1),
            f32(prefix + "_mean", r.standard_normal(channels) * 0.1), f32(prefix + "_var", r.uniform(0.5, 1.5, channels))]


def bn(prefix, x, y, epsilon=1e-5):
    return helper.make_node("BatchNormalization", [x] + [prefix + s for s in ("_gamma", "_beta", "_mean", "_var")],
                            [y], name=prefix, epsilon=epsilon)


@case("fold_batchnorm_into_conv", "fold-batchnorm", {"BatchNormalization": 0, "Conv": 1, "Mul": 0, "Add": 0, "Relu": 1})
def _():
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             bn("bn", "c", "n"),
             helper.make_node("Relu", ["n"], ["y"], name="relu")]
    return model(nodes, [("x", ["batch", 3, 8, 8])], [("y", ["batch", 8, 8, 8])],
                 [weights("w", [8, 3, 3, 3]), f32("b", rng("cb").standard_normal(8) * 0.1)] + bn_params("bn", 8), opset=9)


@case("fold_batchnorm_grouped_conv", "fold-batchnorm", {"BatchNormalization": 0, "Conv": 1})
def _():
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                              group=2),
             bn("bn", "c", "y", epsilon=1e-3)]
    return model(nodes, [("x", [2, 4, 6, 6])], [("y", [2, 6, 6, 6])],
                 [weights("w", [6, 2, 3, 3]), f32("b", rng("gb").standard_normal(6) * 0.1)] + bn_params("bn", 6))


@case("fold_batchnorm_conv_without_bias", "fold-batchnorm", {"BatchNormalization": 0, "Conv": 1})
def _():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1], strides=[2, 2]),
             bn("bn", "c", "y")]
    return model(nodes, [("x", ["batch", 4, 6, 6])], [("y", ["batch", 5, 3, 3])],
                 [weights("w", [5, 4, 1, 1])] + bn_params("bn", 5), opset=9)


@case("fold_batchnorm_conv_two_users", "fold-batchnorm",
      {"BatchNormalization": 0, "Conv": 1, "Mul": 1, "Add": 2, "Relu": 1})
def _():
    # The conv output also feeds a Relu: the conv must stay as it is; the BN becomes Mul + Add.
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             bn("bn", "c", "n"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Add", ["n", "r"], ["y"], name="add")]
    return model(nodes, [("x", [1, 3, 5, 5])], [("y", [1, 4, 5, 5])], [weights("w", [4, 3, 3, 3])] + bn_params("bn", 4))


@case("fold_batchnorm_graph_input", "fold-batchnorm", {"BatchNormalization": 0, "Mul": 1, "Add": 1})
def _():
    return model([bn("bn", "x", "y")], [("x", ["batch", 4, 5, 5])], [("y", ["batch", 4, 5, 5])], bn_params("bn", 4))


@case("fold_batchnorm_rank2", "fold-batchnorm", {"BatchNormalization": 0, "Mul": 1, "Add": 1, "Gemm": 1})
def _():
    # BatchNorm1d after a Linear: (N, C) input, constants of shape [C].
    nodes = [helper.make_node("Gemm", ["x", "w"], ["g"], name="gemm", transB=1), bn("bn", "g", "y")]
    return model(nodes, [("x", ["batch", 8])], [("y", ["batch", 6])], [weights("w", [6, 8])] + bn_params("bn", 6))


# ---- cse ---------------------------------------------------------------------------------------

@case("cse_duplicate_shape_chains", "cse", {"Shape": 1, "Gather": 1, "Unsqueeze": 1, "Concat": 1, "Reshape": 1})
def _():
    # Two copies of the same chain, each with its own (equal) index and axes constants, as
    # exporters write them; after merging the constants the chains and the Reshapes merge.
    nodes = (shape_dim("a", "x", 0, "idx_a") + shape_dim("b", "x", 0, "idx_b") + [
        helper.make_node("Concat", ["a_dim1", "c32_a"], ["target_a"], name="concat_a", axis=0),
        helper.make_node("Concat", ["b_dim1", "c32_b"], ["target_b"], name="concat_b", axis=0),
        helper.make_node("Reshape", ["x", "target_a"], ["ra"], name="reshape_a"),
        helper.make_node("Reshape", ["x", "target_b"], ["rb"], name="reshape_b"),
        helper.make_node("Add", ["ra", "rb"], ["y"], name="add")])
    nodes[2].input[1] = "axes_a"
    nodes[5].input[1] = "axes_b"
    return model(nodes, [("x", ["batch", 4, 8])], [("y", ["batch", 32])],
                 [i64("idx_a", 0), i64("idx_b", 0), i64("axes_a", [0]), i64("axes_b", [0]), i64("c32_a", [32]),
                  i64("c32_b", [32])], opset=13)


@case("cse_equal_constants", "cse", {"Add": 1, "Mul": 1})
def _():
    values = rng("c").standard_normal(6)
    nodes = [helper.make_node("Add", ["x", "c1"], ["a1"], name="add1"),
             helper.make_node("Add", ["x", "c2"], ["a2"], name="add2"),
             helper.make_node("Mul", ["a1", "a2"], ["y"], name="mul")]
    return model(nodes, [("x", [2, 6])], [("y", [2, 6])], [f32("c1", values), f32("c2", values)])


@case("cse_different_attributes", "cse", {"Softmax": 2, "Gemm": 2, "Add": 3})
def _():
    # Same op and inputs, different attributes (axis; alpha): nothing merges.
    nodes = [helper.make_node("Softmax", ["x"], ["s1"], name="softmax_axis0", axis=0),
             helper.make_node("Softmax", ["x"], ["s2"], name="softmax_axis1", axis=1),
             helper.make_node("Gemm", ["x", "w"], ["g1"], name="gemm_alpha1", alpha=1.0),
             helper.make_node("Gemm", ["x", "w"], ["g2"], name="gemm_alpha05", alpha=0.5),
             helper.make_node("Add", ["s1", "s2"], ["s"], name="add_s"),
             helper.make_node("Add", ["g1", "g2"], ["g"], name="add_g"),
             helper.make_node("Add", ["s", "g"], ["y"], name="add")]
    return model(nodes, [("x", [4, 4])], [("y", [4, 4])], [weights("w", [4, 4])])


@case("cse_different_output_counts", "cse", {"Dropout": 2})
def _():
    # The same op on the same input, once with its mask output and once without: not merged.
    nodes = [helper.make_node("Dropout", ["x"], ["d1"], name="dropout_one_output"),
             helper.make_node("Dropout", ["x"], ["d2", "mask"], name="dropout_with_mask"),
             helper.make_node("Cast", ["mask"], ["m"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Add", ["d1", "d2"], ["a"], name="add"),
             helper.make_node("Add", ["a", "m"], ["y"], name="add_mask")]
    return model(nodes, [("x", [2, 4])], [("y", [2, 4])], [])
