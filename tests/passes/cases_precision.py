"""Cases for assign-precision (--precision fp16|bf16|tf32|fp8, --keep-fp32): which nodes get the
reduced storage type, where Casts go, cast merging, and the GELU epilogue decision. Numerics of
fp16/bf16 cases use DESIGN.md's fp16 tolerance against the unoptimized fp32 graph, fp8 cases its
fp8 tolerance (cosine >= 0.99) with random calibration inputs written by the harness."""
import numpy as np
from onnx import helper, TensorProto

from pass_case import case, const, model, rng, weights

D, H = 16, 32  # model width, MLP width


def f32(name, value):
    return const(name, np.asarray(value, dtype=np.float32))


def mlp_block(name):
    """x -> LayerNorm -> fc1 + bias -> GELU (erf) -> fc2 + bias + x -> LayerNorm -> y (a ViT MLP block)."""
    r = rng(name)
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g1", "b1"], ["n1"], name="ln1", axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["n1", "w1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "bias1"], ["hb"], name="fc1_bias"),
        helper.make_node("Div", ["hb", "sqrt2"], ["d"], name="div"),
        helper.make_node("Erf", ["d"], ["e"], name="erf"),
        helper.make_node("Add", ["e", "one"], ["e1"], name="add_one"),
        helper.make_node("Mul", ["hb", "e1"], ["m"], name="mul_x"),
        helper.make_node("Mul", ["m", "half"], ["a"], name="mul_half"),
        helper.make_node("MatMul", ["a", "w2"], ["o"], name="fc2"),
        helper.make_node("Add", ["o", "bias2"], ["ob"], name="fc2_bias"),
        helper.make_node("Add", ["ob", "x"], ["res"], name="residual"),
        helper.make_node("LayerNormalization", ["res", "g2", "b2"], ["y"], name="ln2", axis=-1, epsilon=1e-5),
    ]
    inits = [f32("g1", r.uniform(0.8, 1.2, D)), f32("b1", r.standard_normal(D) * 0.1),
             weights("w1", [D, H], seed=1), f32("bias1", r.standard_normal(H) * 0.1),
             weights("w2", [H, D], seed=2), f32("bias2", r.standard_normal(D) * 0.1),
             f32("g2", r.uniform(0.8, 1.2, D)), f32("b2", r.standard_normal(D) * 0.1),
             f32("sqrt2", np.sqrt(2.0)), f32("one", 1.0), f32("half", 0.5)]
    return model(nodes, [("x", ["batch", 5, D])], [("y", ["batch", 5, D])], inits)


MLP_PASSES = "fuse-layernorm,fuse-gelu,fuse-gemm,dce,assign-precision"


# ---- fires -----------------------------------------------------------------------------------

@case("assign_precision_fp16_mlp", MLP_PASSES, {"FusedGemm": 2, "LayerNorm": 2, "Cast": 3},
      options=("--precision", "fp16"), tolerance="fp16")
def _():
    # ln1 fp32 (statistics) -> Cast f16 -> fc1 (gelu -> gelu_tanh, decision) -> fc2 with residual x
    # (Cast f16 of the graph input) -> Cast f32 -> ln2 fp32 (model output).
    return mlp_block("assign_precision_fp16_mlp")


@case("assign_precision_bf16_mlp", MLP_PASSES, {"FusedGemm": 2, "LayerNorm": 2, "Cast": 3},
      options=("--precision", "bf16"), tolerance="fp16")
def _():
    return mlp_block("assign_precision_bf16_mlp")


@case("assign_precision_tf32_records_math", MLP_PASSES, {"FusedGemm": 2, "LayerNorm": 2, "Cast": 0},
      options=("--precision", "tf32"))
def _():
    # tf32: storage stays fp32 (no Cast, exact numerics on the reference), GEMMs record tf32 math.
    return mlp_block("assign_precision_tf32_records_math")


@case("assign_precision_fp16_resnet_block", "fuse-conv,fuse-gemm,dce,assign-precision",
      {"FusedConv": 2, "FusedGemm": 1, "GlobalAveragePool": 1, "Cast": 2},
      options=("--precision", "fp16"), tolerance="fp16")
def _():
    # x -> Cast f16 -> conv+relu -> MaxPool (follows f16) -> conv + residual + relu -> Cast f32 ->
    # GlobalAveragePool (reduction, fp32) -> Flatten -> fc (model output, fp32).
    return resnet_block("assign_precision_fp16_resnet_block")


def resnet_block(name):
    nodes = [
        helper.make_node("Conv", ["x", "w1", "c1"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu1"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w2", "c2"], ["c2o"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2o", "p"], ["s"], name="residual"),
        helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1),
    ]
    r = rng(name)
    inits = [weights("w1", [8, 3, 3, 3], seed=3), f32("c1", r.standard_normal(8) * 0.1),
             weights("w2", [8, 8, 3, 3], seed=4), f32("c2", r.standard_normal(8) * 0.1),
             weights("wf", [10, 8], seed=5), f32("bf", r.standard_normal(10) * 0.1)]
    return model(nodes, [("x", ["batch", 3, 8, 8])], [("y", ["batch", 10])], inits)


@case("assign_precision_cast_merge", "assign-precision", {"MatMul": 3, "Cast": 2, "Relu": 1},
      options=("--precision", "fp16"), tolerance="fp16")
def _():
    # The model's own Cast(to=FLOAT) between two fp16 MatMuls widens f16 -> f32: mm2 reads mm1's
    # f16 output directly (Cast(Cast(x)) -> none) and the model Cast goes. Casts left: x -> f16 and
    # relu (f16) -> f32 for mm3, which produces the model output.
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["a"], name="mm1"),
        helper.make_node("Cast", ["a"], ["ac"], name="model_cast", to=TensorProto.FLOAT),
        helper.make_node("MatMul", ["ac", "w2"], ["b"], name="mm2"),
        helper.make_node("Relu", ["b"], ["rb"], name="relu"),
        helper.make_node("MatMul", ["rb", "w3"], ["y"], name="mm3"),
    ]
    inits = [weights("w1", [D, H], seed=6), weights("w2", [H, H], seed=7), weights("w3", [H, D], seed=8)]
    return model(nodes, [("x", [4, D])], [("y", [4, D])], inits)


@case("assign_precision_keep_fp32_by_name", MLP_PASSES, {"FusedGemm": 2, "Cast": 2},
      options=("--precision", "fp16", "--keep-fp32", "^fc2$"), tolerance="fp16")
def _():
    # fc2 pinned by name: fc1 fp16 (ln1 -> Cast f16), its output Cast back to f32 for fc2; the
    # residual x is read in fp32 without a Cast.
    return mlp_block("assign_precision_keep_fp32_by_name")


FP8 = ("--precision", "fp8", "--target", "cuda:sm_90", "--calibration", "{calibration}")


@case("assign_precision_fp8_mlp", MLP_PASSES, {"FusedGemm": 2, "LayerNorm": 2, "FakeQuantFp8": 4, "Cast": 2},
      options=FP8, tolerance="fp8", calibration=True)
def _():
    # fp8: each FusedGemm reads A and B through FakeQuantFp8 (ln1's output and fc1's output with
    # calibration scales, w1 and w2 with max|w| scales); bias and residual x in fp16 (Cast of x);
    # GEMM outputs fp16; ln2 reads fc2 through a Cast to f32 (statistics, model output).
    return mlp_block("assign_precision_fp8_mlp")


@case("assign_precision_fp8_resnet_block", "fuse-conv,fuse-gemm,dce,assign-precision",
      {"FusedConv": 2, "FusedGemm": 1, "FakeQuantFp8": 4, "Cast": 1},
      options=FP8, tolerance="fp8", calibration=True)
def _():
    # conv1 and conv2 read X and W through FakeQuantFp8 (x needs no Cast: FakeQuantFp8 reads f32);
    # the residual of conv2 is p (fp16, not quantized); one Cast to f32 for GlobalAveragePool; fc
    # produces the model output, so it stays fp32 with fp32 operands.
    return resnet_block("assign_precision_fp8_resnet_block")


@case("assign_precision_fp8_attention", "assign-precision", {"Attention": 1, "MatMul": 4, "FakeQuantFp8": 9, "Cast": 1},
      opset=23, options=FP8, tolerance="fp8", calibration=True)
def _():
    # Q/K/V projections (x quantized once, shared) and Attention's Q, K and V read fp8; o_proj too;
    # one Cast: o_proj's output to f32 for the residual Add (model output).
    return attention_block()


@case("lower_fp8_mlp", MLP_PASSES + ",lower-fp8", {"FusedGemm": 2, "QuantizeFp8": 1, "FakeQuantFp8": 0, "LayerNorm": 2},
      options=FP8, tolerance="fp8", calibration=True)
def _():
    # cuda:sm_90 has an fp8 GEMM kernel: ln1's and the GELU's FakeQuantFp8 become QuantizeFp8 (e4m3
    # bytes), w1 and w2 e4m3 constants [N,K] with per-column dequantization factors (input 4), the
    # activation scales folded into alpha; residual, bias and outputs stay fp16. ln1's QuantizeFp8
    # is its only reader, so it fuses into ln1 (LayerNorm{fp8_scale} writes e4m3); fc1's stays.
    return mlp_block("lower_fp8_mlp")


# ---- must not fire ---------------------------------------------------------------------------

@case("assign_precision_fp32_unchanged", MLP_PASSES, {"FusedGemm": 2, "LayerNorm": 2, "Cast": 0},
      options=("--precision", "fp32"))
def _():
    # fp32: nothing changes (no Cast, no precision decision, GELU stays erf); numerics exact.
    return mlp_block("assign_precision_fp32_unchanged")


@case("assign_precision_keep_fp32_by_op", MLP_PASSES, {"FusedGemm": 2, "Cast": 0},
      options=("--precision", "fp16", "--keep-fp32", "Gemm|LayerNorm"))
def _():
    # Every FusedGemm and LayerNorm pinned by op: all storage stays fp32, no Cast, exact numerics,
    # and fc1 keeps the erf GELU.
    return mlp_block("assign_precision_keep_fp32_by_op")


@case("assign_precision_fp16_attention", "assign-precision", {"Attention": 1, "MatMul": 4, "Cast": 2},
      opset=23, options=("--precision", "fp16"), tolerance="fp16")
def _():
    # Q/K/V projections, Attention (matmuls fp16, softmax inside fp32) and the output projection in
    # fp16; the residual Add produces the model output, so it reads the projection through a Cast.
    return attention_block()


def attention_block():
    S, heads = 6, 2
    nodes = [helper.make_node("MatMul", ["x", w], [o], name=n)
             for n, w, o in (("q_proj", "wq", "q"), ("k_proj", "wk", "k"), ("v_proj", "wv", "v"))]
    nodes += [helper.make_node("Attention", ["q", "k", "v"], ["a"], name="attention", q_num_heads=heads,
                               kv_num_heads=heads),
              helper.make_node("MatMul", ["a", "wo"], ["o"], name="o_proj"),
              helper.make_node("Add", ["o", "x"], ["y"], name="residual")]
    inits = [weights(w, [D, D], seed=10 + i) for i, w in enumerate(("wq", "wk", "wv", "wo"))]
    return model(nodes, [("x", ["batch", S, D])], [("y", ["batch", S, D])], inits, opset=23)


@case("assign_precision_fp16_range_kept_fp32", "assign-precision", {"MatMul": 3, "Add": 1, "Softmax": 1, "Cast": 4},
      options=("--precision", "fp16"), tolerance="fp16")
def _():
    # An additive mask of -1e9 (beyond the fp16 range) would follow the fp16 scores and become -inf;
    # the Add stays fp32 ("constant 'mask' exceeds the fp16 range") and so does the Softmax.
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["s"], name="scores"),
             helper.make_node("Add", ["s", "mask"], ["sm"], name="add_mask"),
             helper.make_node("Softmax", ["sm"], ["p"], name="softmax", axis=-1),
             helper.make_node("MatMul", ["p", "w2"], ["c"], name="mm2"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w3"], ["y"], name="mm3")]
    mask = np.zeros(H, np.float32)
    mask[H // 2:] = -1e9
    inits = [weights("w1", [D, H], seed=20), const("mask", mask), weights("w2", [H, H], seed=21),
             weights("w3", [H, D], seed=22)]
    return model(nodes, [("x", [4, D])], [("y", [4, D])], inits)


@case("lower_fp8_unaligned", MLP_PASSES + ",lower-fp8", {"FusedGemm": 2, "QuantizeFp8": 0, "FakeQuantFp8": 0,
                                                          "Cast": 4},
      options=FP8, tolerance="fp8", calibration=True)
def _():
    # K = 12 and 24: e4m3 rows of A would not start 16-byte aligned, so neither GEMM gets the fp8
    # kernel form: both become fp16 GEMMs on unrounded operands ("fp8 = fp16 operands"); x reaches
    # fc1 through a Cast to f16, the weights through Casts (folded by fold-constants at O3); fc2's
    # output reaches ln through a Cast to f32.
    r = rng("lower_fp8_unaligned")
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["a"], name="relu"),
        helper.make_node("MatMul", ["a", "w2"], ["o"], name="fc2"),
        helper.make_node("LayerNormalization", ["o", "g", "b"], ["y"], name="ln", axis=-1, epsilon=1e-5),
    ]
    inits = [weights("w1", [12, 24], seed=3), weights("w2", [24, 8], seed=4),
             f32("g", r.uniform(0.8, 1.2, 8)), f32("b", r.standard_normal(8) * 0.1)]
    return model(nodes, [("x", ["batch", 5, 12])], [("y", ["batch", 5, 8])], inits)
