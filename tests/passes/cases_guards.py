"""Cases for fold-guards: torch's SDPA exports (dynamo exporter) around an unmasked attention."""
import numpy as np
from onnx import helper

from pass_case import case, const, model

H, S, D = 2, 5, 8
LOWEST = float(np.finfo(np.float32).min)


def f32(name, value):
    return const(name, np.asarray(value, dtype=np.float32))


def i64(name, value):
    return const(name, np.asarray(value, dtype=np.int64))


def sdpa(keep, guard=True, guard_on="p"):
    """The dynamo exporter's SDPA: q, k scaled by sqrt(scale) each, an additive mask made by
    Where(Expand(keep, [batch, 1, S, S]), 0, lowest), softmax, the NaN guard, then P V.
    `keep` is the bool constant [1, 1, S, 1] or [1, 1, S, S] the mask is expanded from."""
    half = 1.0 / np.sqrt(np.sqrt(D))
    nodes = [
        helper.make_node("Shape", ["q"], ["b"], name="batch_of_q", start=0, end=1),
        helper.make_node("Concat", ["b", "one_s_s"], ["mask_shape"], name="mask_shape", axis=0),
        helper.make_node("Expand", ["keep", "mask_shape"], ["keep_b"], name="expand_keep"),
        helper.make_node("Where", ["keep_b", "zero", "lowest"], ["bias"], name="mask_bias"),
        helper.make_node("Mul", ["q", "half"], ["qs"], name="scale_q"),
        helper.make_node("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 1, 3, 2]),
        helper.make_node("Mul", ["kt", "half"], ["kts"], name="scale_k"),
        helper.make_node("MatMul", ["qs", "kts"], ["s0"], name="qk"),
        helper.make_node("Add", ["s0", "bias"], ["scores"], name="add_mask"),
        helper.make_node("Softmax", ["scores"], ["p"], name="softmax", axis=-1),
    ]
    if guard:
        nodes += [helper.make_node("IsNaN", [guard_on], ["nan"], name="isnan"),
                  helper.make_node("Where", ["nan", "zero", guard_on], ["pg"], name="nan_guard")]
    nodes.append(helper.make_node("MatMul", ["pg" if guard and guard_on == "p" else "p", "v"], ["y"], name="pv"))
    ins = [(n, ["batch", H, S, D]) for n in ("q", "k", "v")]
    inits = [const("keep", keep), i64("one_s_s", [1, S, S]), f32("zero", 0.0), f32("lowest", LOWEST),
             f32("half", half)]
    return model(nodes, ins, [("y", ["batch", H, S, D])], inits)


@case("fold_guards_sdpa_unmasked", "fold-guards,fuse-attention,dce",
      {"Attention": 1, "Where": 0, "IsNaN": 0, "Softmax": 0, "Add": 0, "Expand": 0})
def _():
    # All-true keep mask (an unmasked SDPA call): the bias is 0 everywhere, the guard cannot fire.
    return sdpa(np.ones((1, 1, S, 1), bool))


# ---- must not fire ---------------------------------------------------------------------------

@case("fold_guards_causal_mask_kept", "fold-guards,fuse-attention,dce",
      {"Attention": 0, "Where": 2, "IsNaN": 1, "Softmax": 1, "Add": 1})
def _():
    # A causal mask: the select is not uniform, the scores carry it, so the guard stays.
    return sdpa(np.tril(np.ones((S, S), bool)).reshape(1, 1, S, S))


@case("fold_guards_guard_not_on_softmax", "fold-guards,dce", {"Where": 1, "IsNaN": 1})
def _():
    # A NaN guard on something other than a softmax (here the scores) is left alone; the uniform
    # mask still goes.
    m = sdpa(np.ones((1, 1, S, 1), bool), guard_on="scores")
    # P V reads the softmax; the guarded scores are a second output.
    m.graph.output.append(helper.make_tensor_value_info("pg", 1, ["batch", H, S, S]))
    return m


@case("fold_guards_zero_that_broadcasts", "fold-guards", {"Add": 1})
def _():
    # x [batch, S, 1] + zeros [1, S]: the sum has shape [batch, S, S], not x's.
    nodes = [helper.make_node("Add", ["x", "z"], ["y"], name="add_zero")]
    return model(nodes, [("x", ["batch", S, 1])], [("y", ["batch", S, S])],
                 [f32("z", np.zeros((1, S), np.float32))])


@case("fold_guards_zero_sign_kept", "fold-guards", {"Add": 1, "Sub": 0})
def _():
    # x + (+0) turns -0 into +0 and a Relu reader keeps it (-0 vs +0 is visible to a Div after it):
    # kept. x - (+0) is x for every x: folded.
    nodes = [helper.make_node("Add", ["x", "z"], ["a"], name="add_zero"),
             helper.make_node("Relu", ["a"], ["y"], name="relu"),
             helper.make_node("Sub", ["x", "z"], ["s"], name="sub_zero"),
             helper.make_node("Relu", ["s"], ["y2"], name="relu2")]
    return model(nodes, [("x", ["batch", S])], [("y", ["batch", S]), ("y2", ["batch", S])],
                 [f32("z", np.zeros((S,), np.float32))])


@case("fold_guards_isnan_read_elsewhere", "fold-guards,fuse-attention,dce",
      {"Attention": 0, "Softmax": 1, "Where": 0, "IsNaN": 1, "Cast": 1})
def _():
    # The guard folds; its IsNaN also feeds a second output, so it stays (and the softmax, read by
    # it, stays unfused).
    m = sdpa(np.ones((1, 1, S, 1), bool))
    m.graph.node.append(helper.make_node("Cast", ["nan"], ["nan_f"], name="nan_as_float", to=1))
    m.graph.output.append(helper.make_tensor_value_info("nan_f", 1, ["batch", H, S, S]))
    return m
