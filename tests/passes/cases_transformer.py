"""Cases for fuse-layernorm and fuse-attention (the transformer fusions)."""
import math

import numpy as np
from onnx import TensorProto, helper

from pass_case import case, const, model, rng, weights

C = 16  # LayerNorm channels


def f32(name, value):
    return const(name, np.asarray(value, dtype=np.float32))


def i64(name, value):
    return const(name, np.asarray(value, dtype=np.int64))


def ln_params(name, shape=(C,)):
    r = rng(name)
    return [f32("gamma", r.uniform(0.8, 1.2, shape)), f32("beta", r.standard_normal(shape) * 0.1)]


def decomposed_ln(x="x", out="y", square="pow", eps_first=False, norm="div", affine=True, axes=(-1,),
                  axes_input=False, eps_after_sqrt=False, exponent=2.0):
    """Nodes of the decomposed LayerNorm of x over `axes`; constants 'two' and 'eps' are extra inits."""
    def reduce(name, inp, outp):
        if axes_input:
            return helper.make_node("ReduceMean", [inp, "axes"], [outp], name=name, keepdims=1)
        return helper.make_node("ReduceMean", [inp], [outp], name=name, axes=list(axes), keepdims=1)

    nodes = [reduce("mean", x, "m"), helper.make_node("Sub", [x, "m"], ["d"], name="sub")]
    if square == "pow":
        nodes.append(helper.make_node("Pow", ["d", "two"], ["sq"], name="pow"))
    else:
        nodes.append(helper.make_node("Mul", ["d", "d"], ["sq"], name="square"))
    nodes.append(reduce("var", "sq", "v"))
    if eps_after_sqrt:
        nodes += [helper.make_node("Sqrt", ["v"], ["s0"], name="sqrt"),
                  helper.make_node("Add", ["s0", "eps"], ["s"], name="add_eps")]
    else:
        nodes += [helper.make_node("Add", ["eps", "v"] if eps_first else ["v", "eps"], ["ve"], name="add_eps"),
                  helper.make_node("Sqrt", ["ve"], ["s"], name="sqrt")]
    n_out = "n" if affine else out
    if norm == "div":
        nodes.append(helper.make_node("Div", ["d", "s"], [n_out], name="div"))
    else:
        nodes += [helper.make_node("Reciprocal", ["s"], ["r"], name="recip"),
                  helper.make_node("Mul", ["r", "d"], [n_out], name="norm")]
    if affine:
        nodes += [helper.make_node("Mul", ["gamma", "n"] if eps_first else ["n", "gamma"], ["g"], name="scale"),
                  helper.make_node("Add", ["beta", "g"] if eps_first else ["g", "beta"], [out], name="shift")]
    inits = [f32("two", exponent), f32("eps", 1e-5)]
    if axes_input:
        inits.append(i64("axes", list(axes)))
    return nodes, inits


LN_OPS_GONE = {"ReduceMean": 0, "Sub": 0, "Pow": 0, "Sqrt": 0, "Div": 0, "Mul": 0, "Add": 0, "Reciprocal": 0}


# ---- fuse-layernorm: fires -------------------------------------------------------------------

@case("fuse_layernorm_decomposed", "fuse-layernorm", {"LayerNorm": 1, **LN_OPS_GONE})
def _():
    # torchvision opset-13 / HuggingFace form, dynamic batch.
    nodes, inits = decomposed_ln()
    return model(nodes, [("x", ["batch", 5, C])], [("y", ["batch", 5, C])],
                 inits + ln_params("fuse_layernorm_decomposed"))


@case("fuse_layernorm_reciprocal_commuted", "fuse-layernorm", {"LayerNorm": 1, **LN_OPS_GONE})
def _():
    # Mul(d, d), Add(eps, var), Mul(Reciprocal(std), d), Mul(gamma, n), Add(beta, g); axes=[2].
    nodes, inits = decomposed_ln(square="mul", eps_first=True, norm="reciprocal", axes=(2,))
    return model(nodes, [("x", ["batch", 5, C])], [("y", ["batch", 5, C])],
                 inits + ln_params("fuse_layernorm_reciprocal_commuted"))


@case("fuse_layernorm_no_affine", "fuse-layernorm", {"LayerNorm": 1, **LN_OPS_GONE})
def _():
    # No gamma/beta: LayerNorm gets a ones scale; the normalized value is the graph output.
    nodes, inits = decomposed_ln(affine=False)
    return model(nodes, [("x", [3, 7, C])], [("y", [3, 7, C])], inits)


@case("fuse_layernorm_axes_input_gamma_11c", "fuse-layernorm", {"LayerNorm": 1, **LN_OPS_GONE}, opset=18)
def _():
    # Opset-18 ReduceMean (axes as an input); gamma and beta stored as [1, 1, C].
    nodes, inits = decomposed_ln(axes_input=True)
    return model(nodes, [("x", ["batch", 5, C])], [("y", ["batch", 5, C])],
                 inits + ln_params("fuse_layernorm_axes_input", (1, 1, C)), opset=18)


@case("fuse_layernorm_runtime_beta_kept", "fuse-layernorm", {"LayerNorm": 1, "Add": 1, "ReduceMean": 0})
def _():
    # The Add after gamma adds a runtime tensor (a residual), not a beta: LayerNorm absorbs gamma,
    # the Add stays.
    nodes, inits = decomposed_ln()
    nodes[-1] = helper.make_node("Add", ["g", "res"], ["y"], name="residual")
    return model(nodes, [("x", ["batch", 5, C]), ("res", ["batch", 5, C])], [("y", ["batch", 5, C])],
                 inits + ln_params("fuse_layernorm_runtime_beta_kept")[:1])


@case("fuse_layernorm_onnx_op", "fuse-layernorm", {"LayerNorm": 1, "LayerNormalization": 0})
def _():
    nodes = [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], name="ln", axis=-1,
                              epsilon=1e-6)]
    return model(nodes, [("x", ["batch", 5, C])], [("y", ["batch", 5, C])], ln_params("fuse_layernorm_onnx_op"))


# ---- fuse-layernorm: must not fire -----------------------------------------------------------

@case("fuse_layernorm_eps_after_sqrt", "fuse-layernorm", {"LayerNorm": 0, "ReduceMean": 2, "Sqrt": 1, "Add": 2})
def _():
    # (x - mean) / (sqrt(var) + eps): epsilon outside the root is other math than LayerNorm's.
    nodes, inits = decomposed_ln(eps_after_sqrt=True)
    return model(nodes, [("x", ["batch", 5, C])], [("y", ["batch", 5, C])],
                 inits + ln_params("fuse_layernorm_eps_after_sqrt"))


@case("fuse_layernorm_mean_used_twice", "fuse-layernorm", {"LayerNorm": 0, "ReduceMean": 2, "Sqrt": 1})
def _():
    nodes, inits = decomposed_ln()
    return model(nodes, [("x", ["batch", 5, C])], [("y", ["batch", 5, C]), ("m", ["batch", 5, 1])],
                 inits + ln_params("fuse_layernorm_mean_used_twice"))


@case("fuse_layernorm_var_used_twice", "fuse-layernorm", {"LayerNorm": 0, "ReduceMean": 2, "Sqrt": 1})
def _():
    nodes, inits = decomposed_ln()
    nodes.append(helper.make_node("Relu", ["v"], ["vr"], name="var_user"))
    return model(nodes, [("x", ["batch", 5, C])], [("y", ["batch", 5, C]), ("vr", ["batch", 5, 1])],
                 inits + ln_params("fuse_layernorm_var_used_twice"))


@case("fuse_layernorm_centred_used_thrice", "fuse-layernorm", {"LayerNorm": 0, "ReduceMean": 2, "Sub": 1})
def _():
    nodes, inits = decomposed_ln()
    nodes.append(helper.make_node("Relu", ["d"], ["dr"], name="centred_user"))
    return model(nodes, [("x", ["batch", 5, C])], [("y", ["batch", 5, C]), ("dr", ["batch", 5, C])],
                 inits + ln_params("fuse_layernorm_centred_used_thrice"))


@case("fuse_layernorm_non_last_axis", "fuse-layernorm", {"LayerNorm": 0, "ReduceMean": 2, "Sqrt": 1})
def _():
    # Normalizing axis 1 of [batch, C, 5] (a channel norm), with a [C, 1] gamma/beta.
    nodes, inits = decomposed_ln(axes=(1,))
    return model(nodes, [("x", ["batch", C, 5])], [("y", ["batch", C, 5])],
                 inits + ln_params("fuse_layernorm_non_last_axis", (C, 1)))


@case("fuse_layernorm_multi_axis", "fuse-layernorm", {"LayerNorm": 0, "ReduceMean": 2, "Sqrt": 1})
def _():
    nodes, inits = decomposed_ln(axes=(-2, -1))
    return model(nodes, [("x", ["batch", 5, C])], [("y", ["batch", 5, C])],
                 inits + ln_params("fuse_layernorm_multi_axis"))


@case("fuse_layernorm_runtime_gamma", "fuse-layernorm", {"LayerNorm": 0, "ReduceMean": 2, "Sqrt": 1, "Mul": 1})
def _():
    nodes, inits = decomposed_ln()
    return model(nodes, [("x", ["batch", 5, C]), ("gamma", [C])], [("y", ["batch", 5, C])],
                 inits + ln_params("fuse_layernorm_runtime_gamma")[1:])


@case("fuse_layernorm_pow4", "fuse-layernorm", {"LayerNorm": 0, "ReduceMean": 2, "Pow": 1})
def _():
    nodes, inits = decomposed_ln(exponent=4.0)
    return model(nodes, [("x", ["batch", 5, C])], [("y", ["batch", 5, C])], inits + ln_params("fuse_layernorm_pow4"))


@case("fuse_layernorm_onnx_op_mean_used", "fuse-layernorm", {"LayerNorm": 0, "LayerNormalization": 1})
def _():
    nodes = [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y", "mean"], name="ln", axis=-1)]
    return model(nodes, [("x", ["batch", 5, C])], [("y", ["batch", 5, C]), ("mean", ["batch", 5, 1])],
                 ln_params("fuse_layernorm_onnx_op_mean_used"))


@case("fuse_layernorm_onnx_op_two_axes", "fuse-layernorm", {"LayerNorm": 0, "LayerNormalization": 1})
def _():
    nodes = [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], name="ln", axis=1)]
    return model(nodes, [("x", ["batch", 5, C])], [("y", ["batch", 5, C])],
                 ln_params("fuse_layernorm_onnx_op_two_axes", (5, C)))


# ---- fuse-attention --------------------------------------------------------------------------

S, H, D = 6, 2, 8   # sequence, heads, head dim
E = H * D


def mha_folded(name, batch="batch"):
    """torchvision nn.MultiheadAttention export: packed QKV, Slice, Reshape [S, batch*H, D],
    Transpose to [batch*H, S, D], K^T straight from the Reshape (perm [1,2,0]), q / sqrt(D)."""
    nodes = [
        helper.make_node("Transpose", ["x"], ["xt"], name="to_seq_first", perm=[1, 0, 2]),
        helper.make_node("MatMul", ["xt", "w_qkv"], ["qkv0"], name="in_proj"),
        helper.make_node("Add", ["b_qkv", "qkv0"], ["qkv"], name="in_proj_bias"),
    ]
    for i, t in enumerate("qkv"):
        nodes += [helper.make_node("Slice", ["qkv", f"start_{t}", f"end_{t}", "axis_last"], [f"{t}_s"], name=f"slice_{t}"),
                  helper.make_node("Reshape", [f"{t}_s", "heads_shape"], [f"{t}_r"], name=f"reshape_{t}")]
    nodes += [
        helper.make_node("Transpose", ["q_r"], ["q"], name="transpose_q", perm=[1, 0, 2]),
        helper.make_node("Transpose", ["k_r"], ["kt"], name="transpose_kt", perm=[1, 2, 0]),
        helper.make_node("Transpose", ["v_r"], ["v"], name="transpose_v", perm=[1, 0, 2]),
        helper.make_node("Div", ["q", "sqrt_d"], ["qs"], name="scale_q"),
        helper.make_node("MatMul", ["qs", "kt"], ["scores"], name="qk"),
        helper.make_node("Softmax", ["scores"], ["p"], name="Softmax", axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o"], name="pv"),
        helper.make_node("Transpose", ["o"], ["ot"], name="transpose_o", perm=[1, 0, 2]),
        helper.make_node("Reshape", ["ot", "merged_shape"], ["ctx"], name="merge_heads"),
        helper.make_node("Transpose", ["ctx"], ["y"], name="to_batch_first", perm=[1, 0, 2]),
    ]
    inits = [weights("w_qkv", [E, 3 * E], seed=1), weights("b_qkv", [3 * E], seed=2, scale=0.1),
             i64("axis_last", [-1]), i64("heads_shape", [S, -1, D]), i64("merged_shape", [S, -1, E]),
             f32("sqrt_d", math.sqrt(D))]
    for i, t in enumerate("qkv"):
        inits += [i64(f"start_{t}", [i * E]), i64(f"end_{t}", [(i + 1) * E])]
    return model(nodes, [("x", [batch, S, E])], [("y", [batch, S, E])], inits)


@case("fuse_attention_heads_in_batch", "fuse-attention",
      {"Attention": 1, "Softmax": 0, "MatMul": 1, "Div": 0, "Transpose": 6})
def _():
    # Transposes: 6 before (in, q, K^T, v, out, back); K^T's is replaced by K's [1,0,2].
    return mha_folded("fuse_attention_heads_in_batch")


def hf_attention(scale_form="scores", batch="batch", merge=True):
    """HuggingFace form: separate Q/K/V projections, Reshape [batch, S, H, D], Transpose to
    [batch, H, S, D], K^T by perm [0,2,3,1]; scale on the scores or split over q and k."""
    nodes, inits = [], [i64("split_shape", [0, S, H, D]), i64("merged_shape", [0, S, E])]
    for i, t in enumerate("qkv"):
        nodes += [helper.make_node("MatMul", ["x", f"w_{t}"], [f"{t}0"], name=f"{t}_proj"),
                  helper.make_node("Add", [f"{t}0", f"b_{t}"], [f"{t}1"], name=f"{t}_bias"),
                  helper.make_node("Reshape", [f"{t}1", "split_shape"], [f"{t}_r"], name=f"{t}_split")]
        inits += [weights(f"w_{t}", [E, E], seed=10 + i), weights(f"b_{t}", [E], seed=20 + i, scale=0.1)]
    nodes += [helper.make_node("Transpose", ["q_r"], ["q"], name="q_heads", perm=[0, 2, 1, 3]),
              helper.make_node("Transpose", ["v_r"], ["v"], name="v_heads", perm=[0, 2, 1, 3])]
    if scale_form == "scores":
        nodes += [helper.make_node("Transpose", ["k_r"], ["kt"], name="k_heads_t", perm=[0, 2, 3, 1]),
                  helper.make_node("MatMul", ["q", "kt"], ["s0"], name="qk"),
                  helper.make_node("Div", ["s0", "sqrt_d"], ["scores"], name="scale_scores")]
        inits.append(f32("sqrt_d", math.sqrt(D)))
    else:  # q * d^-1/4 and (k * d^-1/4)^T, the transpose of K taken after the scale
        nodes += [helper.make_node("Transpose", ["k_r"], ["k"], name="k_heads", perm=[0, 2, 1, 3]),
                  helper.make_node("Mul", ["q", "root_scale"], ["qs"], name="scale_q"),
                  helper.make_node("Mul", ["root_scale", "k"], ["ks"], name="scale_k"),
                  helper.make_node("Transpose", ["ks"], ["kt"], name="k_t", perm=[0, 1, 3, 2]),
                  helper.make_node("MatMul", ["qs", "kt"], ["scores"], name="qk")]
        inits.append(f32("root_scale", D ** -0.25))
    nodes += [helper.make_node("Softmax", ["scores"], ["p"], name="Softmax", axis=-1),
              helper.make_node("MatMul", ["p", "v"], ["o"], name="pv"),
              helper.make_node("Transpose", ["o"], ["ot" if merge else "y"], name="merge_t", perm=[0, 2, 1, 3])]
    if merge:
        nodes.append(helper.make_node("Reshape", ["ot", "merged_shape"], ["y"], name="merge"))
    return model(nodes, [("x", [batch, S, E])], [("y", [batch, S, E] if merge else [batch, S, H, D])], inits)


@case("fuse_attention_heads_as_dim", "fuse-attention",
      {"Attention": 1, "Softmax": 0, "MatMul": 3, "Div": 0, "Transpose": 4})
def _():
    # K^T comes from Reshape by perm [0,2,3,1]: a Transpose [0,2,1,3] is inserted to give K.
    return hf_attention("scores")


@case("fuse_attention_scale_on_q_and_k", "fuse-attention",
      {"Attention": 1, "Softmax": 0, "MatMul": 3, "Mul": 0, "Transpose": 4})
def _():
    # d^-1/4 on q and on k; K^T = Transpose(k * c, [0,1,3,2]) so K is k itself: the K^T
    # transpose goes and no new one is needed (Transposes q, k, v, merge).
    return hf_attention("q_and_k")


def bare_attention(scores_ops, kt_from_input=False, softmax_axis=-1, extra_inputs=(), outputs=(), inits=()):
    """3-D q, k, v graph inputs [batch, S, D]; `scores_ops` map 's0' (Q K^T) to 'scores' (none:
    Q K^T is 'scores')."""
    kt_nodes = [] if kt_from_input else [helper.make_node("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 2, 1])]
    qk_out = "s0" if scores_ops else "scores"
    nodes = kt_nodes + [helper.make_node("MatMul", ["q", "kt"], [qk_out], name="qk")] + scores_ops + [
        helper.make_node("Softmax", ["scores"], ["p"], name="Softmax", axis=softmax_axis),
        helper.make_node("MatMul", ["p", "v"], ["y"], name="pv")]
    ins = [("q", ["batch", S, D]), ("kt" if kt_from_input else "k", ["batch", D, S] if kt_from_input else ["batch", S, D]),
           ("v", ["batch", S, D])] + list(extra_inputs)
    return model(nodes, ins, [("y", ["batch", S, D])] + list(outputs), list(inits))


@case("fuse_attention_mul_on_scores", "fuse-attention", {"Attention": 1, "Softmax": 0, "MatMul": 0, "Mul": 0})
def _():
    return bare_attention([helper.make_node("Mul", ["c", "s0"], ["scores"], name="scale_scores")],
                          inits=[f32("c", 1.0 / math.sqrt(D))])


@case("fuse_attention_kt_input_no_scale", "fuse-attention",
      {"Attention": 1, "Softmax": 0, "MatMul": 0, "Transpose": 1})
def _():
    # K^T is a graph input (no Transpose to undo): a Transpose gives K; no factor: scale 1.
    return bare_attention([], kt_from_input=True)


@case("fuse_attention_op23", "fuse-attention", {"Attention": 1}, opset=23)
def _():
    # The opset-23 op without mask or causal flag is the core already; its scale becomes explicit.
    nodes = [helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn", q_num_heads=H, kv_num_heads=H)]
    return model(nodes, [("q", ["batch", S, E]), ("k", ["batch", S, E]), ("v", ["batch", S, E])],
                 [("y", ["batch", S, E])], [], opset=23)


# ---- fuse-attention: must not fire -----------------------------------------------------------

@case("fuse_attention_mask_add", "fuse-attention", {"Attention": 0, "Softmax": 1, "MatMul": 2, "Add": 1})
def _():
    # An additive mask before the Softmax: the core has no mask input.
    return bare_attention([helper.make_node("Div", ["s0", "sqrt_d"], ["s1"], name="scale_scores"),
                           helper.make_node("Add", ["s1", "mask"], ["scores"], name="add_mask")],
                          inits=[f32("sqrt_d", math.sqrt(D)),
                                 f32("mask", np.triu(np.full((S, S), -1e4, np.float32), 1))])


@case("fuse_attention_causal_where", "fuse-attention", {"Attention": 0, "Softmax": 1, "MatMul": 2, "Where": 1})
def _():
    return bare_attention([helper.make_node("Where", ["keep", "s0", "neg"], ["scores"], name="causal")],
                          inits=[const("keep", np.tril(np.ones((S, S), bool))), f32("neg", -1e9)])


@case("fuse_attention_softmax_other_axis", "fuse-attention", {"Attention": 0, "Softmax": 1, "MatMul": 2})
def _():
    return bare_attention([], softmax_axis=1)


@case("fuse_attention_runtime_scale", "fuse-attention", {"Attention": 0, "Softmax": 1, "MatMul": 2, "Mul": 1})
def _():
    return bare_attention([helper.make_node("Mul", ["s0", "temp"], ["scores"], name="scale_scores")],
                          extra_inputs=[("temp", [1])])


@case("fuse_attention_scores_used_twice", "fuse-attention", {"Attention": 0, "Softmax": 1, "MatMul": 2})
def _():
    return bare_attention([], outputs=[("scores", ["batch", S, S])])


@case("fuse_attention_op23_masked", "fuse-attention", {"Attention": 1}, opset=23)
def _():
    # A masked opset-23 op stays as it is (no explicit scale: it is not the fused core).
    nodes = [helper.make_node("Attention", ["q", "k", "v", "mask"], ["y"], name="attn", q_num_heads=H,
                              kv_num_heads=H)]
    return model(nodes, [("q", ["batch", S, E]), ("k", ["batch", S, E]), ("v", ["batch", S, E])],
                 [("y", ["batch", S, E])], [f32("mask", np.triu(np.full((S, S), -1e4, np.float32), 1))], opset=23)


@case("fuse_attention_op23_causal", "fuse-attention", {"Attention": 1}, opset=23)
def _():
    nodes = [helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn", q_num_heads=H, kv_num_heads=H,
                              is_causal=1)]
    return model(nodes, [("q", ["batch", S, E]), ("k", ["batch", S, E]), ("v", ["batch", S, E])],
                 [("y", ["batch", S, E])], [], opset=23)


# ---- fold-attention-layout -------------------------------------------------------------------

@case("fold_attention_layout_seq_first_qkv", "fuse-attention,fold-attention-layout,dce",
      {"Attention": 1, "Slice": 0, "Reshape": 0, "Transpose": 2})
def _():
    # torchvision: Q, K, V are column blocks of the packed [S, batch, 3E] projection, Y goes back
    # to [S, batch, E]; only the Transposes into and out of the sequence-first order stay.
    return mha_folded("fold_attention_layout_seq_first_qkv")


@case("fold_attention_layout_seq_first_projection_flipped", "fuse-attention,fuse-gemm,fold-attention-layout,dce",
      {"Attention": 1, "Slice": 0, "Reshape": 0, "Transpose": 0, "FusedGemm": 1})
def _():
    # With the projection a FusedGemm (row-wise), the Transpose into sequence-first order moves
    # through it and the attention works batch first: the Transpose back goes too.
    return mha_folded("fold_attention_layout_seq_first_projection_flipped")


@case("fold_attention_layout_seq_first_static", "fuse-attention,fold-attention-layout,dce",
      {"Attention": 1, "Slice": 0, "Reshape": 0, "Transpose": 2})
def _():
    # The same with a static batch of 2 (evaluated once, at its own shapes).
    return mha_folded("fold_attention_layout_seq_first_static", batch=2)


@case("fold_attention_layout_batch_first_projections", "fuse-attention,fold-attention-layout,dce",
      {"Attention": 1, "Reshape": 0, "Transpose": 0, "MatMul": 3})
def _():
    # HuggingFace: three [batch, S, E] projections read in place, Y written as [batch, S, E].
    return hf_attention("scores")


@case("fold_attention_layout_batch_of_one", "fuse-attention,fold-attention-layout,dce",
      {"Attention": 1, "Reshape": 0, "Transpose": 0})
def _():
    # A static batch of 1: sequence-first and batch-first rows coincide for the inputs; the output
    # ([1, S, E]) decides for batch first.
    return hf_attention("q_and_k", batch=1)


@case("fold_attention_layout_op23_packed_qkv", "fuse-attention,fold-attention-layout,dce",
      {"Attention": 1, "Slice": 0, "MatMul": 1}, opset=23)
def _():
    # An opset-23 Attention on Q, K, V sliced out of one [batch, S, 3E] projection, Y a graph output
    # with no view after it: the Slices go, Q/K/V are read from the projection's rows and Y is
    # written as it is.
    return op23_packed_qkv("fold_attention_layout_op23_packed_qkv")


def op23_packed_qkv(name):
    """An opset-23 Attention on Q, K, V sliced out of one [batch, S, 3E] MatMul projection."""
    w = rng(name).standard_normal((E, 3 * E)).astype(np.float32) / math.sqrt(E)
    nodes = [helper.make_node("MatMul", ["x", "w_qkv"], ["qkv"], name="qkv")]
    for part in "qkv":
        nodes.append(helper.make_node("Slice", ["qkv", f"{part}_start", f"{part}_end", "axis"], [part],
                                      name=f"slice_{part}"))
    nodes.append(helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn", q_num_heads=H, kv_num_heads=H))
    inits = [f32("w_qkv", w), i64("axis", [2])]
    for p, part in enumerate("qkv"):
        inits += [i64(f"{part}_start", [p * E]), i64(f"{part}_end", [(p + 1) * E])]
    return model(nodes, [("x", ["batch", S, E])], [("y", ["batch", S, E])], inits, opset=23)


@case("fold_attention_layout_output_not_rows", "fuse-attention,fold-attention-layout,dce",
      {"Attention": 1, "Reshape": 3, "Transpose": 4})
def _():
    # must not fire: Y stays [batch, S, H, D] (no merge into token rows), so the strided form,
    # which writes rows, cannot produce it.
    return hf_attention("scores", merge=False)


def narrow_rows_block(name, gathers, extra_reader=False):
    """LayerNorm -> MLP with a residual of x -> LayerNorm, read by Gathers of rows along axis 1."""
    r = rng(name)
    s, e, hidden = 5, C, 2 * C
    nodes = [helper.make_node("LayerNormalization", ["x", "g1", "b1"], ["ln1"], name="ln1", axis=-1),
             helper.make_node("MatMul", ["ln1", "w1"], ["h0"], name="fc1"),
             helper.make_node("Add", ["h0", "c1"], ["h1"], name="fc1_bias"),
             helper.make_node("Relu", ["h1"], ["h"], name="relu"),
             helper.make_node("MatMul", ["h", "w2"], ["o0"], name="fc2"),
             helper.make_node("Add", ["o0", "c2"], ["o1"], name="fc2_bias"),
             helper.make_node("Add", ["o1", "x"], ["res"], name="residual"),
             helper.make_node("LayerNormalization", ["res", "g2", "b2"], ["ln2"], name="ln2", axis=-1)]
    outputs = []
    for k, index in enumerate(gathers):
        nodes.append(helper.make_node("Gather", ["ln2", f"i{k}"], [f"t{k}"], name=f"take{k}", axis=1))
        outputs.append((f"t{k}", ["batch", e]))
    inits = [f32("g1", r.uniform(0.8, 1.2, (e,))), f32("b1", r.standard_normal(e) * 0.1),
             f32("w1", r.standard_normal((e, hidden)) / math.sqrt(e)), f32("c1", r.standard_normal(hidden) * 0.1),
             f32("w2", r.standard_normal((hidden, e)) / math.sqrt(hidden)), f32("c2", r.standard_normal(e) * 0.1),
             f32("g2", r.uniform(0.8, 1.2, (e,))), f32("b2", r.standard_normal(e) * 0.1)]
    inits += [i64(f"i{k}", index) for k, index in enumerate(gathers)]
    if extra_reader:
        nodes.append(helper.make_node("ReduceMean", ["ln2"], ["pooled"], name="pool", axes=[1], keepdims=0))
        outputs.append(("pooled", ["batch", e]))
    return model(nodes, [("x", ["batch", s, e])], outputs, inits, opset=17)


@case("narrow_rows_class_token", "fuse-layernorm,fuse-gemm,narrow-rows,dce",
      {"LayerNorm": 2, "FusedGemm": 2, "Gather": 2})
def _():
    # Only token 0 is read: both LayerNorms and both GEMMs run on that row, x is gathered once for
    # the first LayerNorm and the residual, and the reader takes position 0 of the kept row.
    return narrow_rows_block("narrow_rows_class_token", [0])


@case("narrow_rows_two_tokens", "fuse-layernorm,fuse-gemm,narrow-rows,dce",
      {"LayerNorm": 2, "FusedGemm": 2, "Gather": 3})
def _():
    # Two readers, token 0 and the last one by a negative index: rows {0, 4} are kept.
    return narrow_rows_block("narrow_rows_two_tokens", [0, -1])


@case("narrow_rows_other_reader", "fuse-layernorm,fuse-gemm,narrow-rows,dce",
      {"LayerNorm": 2, "FusedGemm": 2, "Gather": 1})
def _():
    # must not fire: a mean over the tokens also reads the last LayerNorm, so every row is needed.
    return narrow_rows_block("narrow_rows_other_reader", [0], extra_reader=True)


def class_token_head(m, extra_output=None):
    """Appends a ViT block's tail to attention model `m` (output y [batch, S, E]): out-projection
    with bias and the residual x, then the class token (Gather of token 0 along axis 1) as the
    only output; `extra_output` names a value of `m` that becomes a second graph output."""
    g = m.graph
    g.node.extend([helper.make_node("MatMul", ["y", "w_o"], ["o0"], name="out_proj"),
                   helper.make_node("Add", ["o0", "b_o"], ["o1"], name="out_proj_bias"),
                   helper.make_node("Add", ["o1", "x"], ["res"], name="residual"),
                   helper.make_node("Gather", ["res", "token"], ["t"], name="class_token", axis=1)])
    g.initializer.extend([weights("w_o", [E, E], seed=30), weights("b_o", [E], seed=31, scale=0.1),
                          i64("token", 0)])
    del g.output[:]
    g.output.append(helper.make_tensor_value_info("t", TensorProto.FLOAT, ["batch", E]))
    if extra_output:
        g.output.append(helper.make_tensor_value_info(extra_output, TensorProto.FLOAT, None))
    return m


NARROW_ATTENTION = "fuse-attention,fuse-gemm,narrow-rows,fold-attention-layout,narrow-rows,dce"


@case("narrow_rows_attention_packed_qkv", NARROW_ATTENTION,
      {"Attention": 1, "FusedGemm": 3, "Gather": 2, "Slice": 0})
def _():
    # torchvision's packed QKV, only the class token read: the out-projection takes token 0, the
    # strided attention its query only, and the packed projection splits into Q's columns (on
    # token 0) and K's and V's (every token). Gathers: token 0 of x, read by the Q projection and
    # as the out-projection's residual, and the reader's position 0 of the kept row.
    return class_token_head(mha_folded("narrow_rows_attention_packed_qkv"))


@case("narrow_rows_attention_separate_projections", NARROW_ATTENTION,
      {"Attention": 1, "FusedGemm": 4, "Gather": 2})
def _():
    # HuggingFace's separate projections: the Q projection alone takes token 0 (its input x
    # gathered once with the residual's rows), K's and V's every token.
    return class_token_head(hf_attention("scores"))


@case("narrow_rows_attention_projection_also_read", NARROW_ATTENTION,
      {"Attention": 1, "FusedGemm": 2, "Gather": 3}, opset=23)
def _():
    # The packed projection is also a graph output: it keeps every column and row (no split), the
    # attention still computes token 0's query only, gathered from the projection's rows.
    return class_token_head(op23_packed_qkv("narrow_rows_attention_projection_also_read"), extra_output="qkv")


@case("narrow_rows_per_row_scale", "fuse-layernorm,narrow-rows,dce", {"LayerNorm": 1, "Gather": 1})
def _():
    # must not fire: the LayerNorm's scale and bias hold a value per token ([S, C]), so its rows are
    # not the same function of the input's rows.
    nodes, inits = decomposed_ln("x", "y")
    inits += ln_params("narrow_rows_per_row_scale", shape=(5, C))
    nodes.append(helper.make_node("Gather", ["y", "i0"], ["t"], name="take", axis=1))
    inits.append(i64("i0", 0))
    return model(nodes, [("x", ["batch", 5, C])], [("t", ["batch", C])], inits, opset=17)
