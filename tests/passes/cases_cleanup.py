"""Cases for dce and remove-identity."""
import numpy as np
from onnx import helper

from pass_case import case, const, model


@case("remove_identity_dropout", "remove-identity,dce", {"Identity": 0, "Dropout": 0, "Relu": 1})
def _():
    nodes = [helper.make_node("Identity", ["x"], ["a"], name="id"),
             helper.make_node("Dropout", ["a"], ["b"], name="drop"),
             helper.make_node("Relu", ["b"], ["y"], name="relu")]
    return model(nodes, [("x", ["batch", 4])], [("y", ["batch", 4])], [])


@case("remove_identity_keeps_used_mask", "remove-identity", {"Dropout": 1})
def _():
    nodes = [helper.make_node("Dropout", ["x"], ["y", "mask"], name="drop"),
             helper.make_node("Cast", ["mask"], ["m"], name="cast", to=1),
             helper.make_node("Add", ["y", "m"], ["z"], name="add")]
    return model(nodes, [("x", [2, 4])], [("z", [2, 4])], [])


@case("dce_removes_dead_chain", "dce", {"Relu": 1, "Sigmoid": 0, "Tanh": 0})
def _():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="live"),
             helper.make_node("Sigmoid", ["x"], ["d1"], name="dead1"),
             helper.make_node("Tanh", ["d1"], ["d2"], name="dead2")]
    return model(nodes, [("x", [2, 3])], [("y", [2, 3])], [])
