"""Builds the malformed-model corpus: models that gcomp must refuse cleanly (exit code 2 and a
message naming the file, the node, the op and what was expected) without crashing.

Usage: make_corpus.py OUT_DIR

Each case gets its own folder OUT_DIR/<case>/ holding model.onnx (and, for some cases, external
data, input tensors or links). OUT_DIR/cases.json lists, per case: the folder, the gcomp command
line, the expected exit code, the substrings the message must contain and whether the case is a
huge declaration (run again under an address-space limit by run_corpus.py). In commands and
substrings, {file} stands for the model path and {dir} for the case folder.
"""
import json
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64

CASES = []


def case(name, expect, command=("inspect", "{file}"), huge=False, exit_code=2, planned_mb=0):
    """Registers a builder `fn(case_dir)` that writes {case_dir}/model.onnx (and any extra files).
    An accepted case (exit code 0) gives `planned_mb`: its plan's arena and workspace plus three
    copies of its inputs and outputs (the tensor files read and written); the address-space pass
    grants it that much on top of the cap."""

    def register(fn):
        CASES.append({"name": name, "build": fn, "command": list(command), "expect": list(expect),
                      "huge": huge, "exit_code": exit_code, "planned_mb": planned_mb,
                      "doc": (fn.__doc__ or "").strip()})
        return fn

    return register


def model(nodes, inputs, outputs, initializers=(), opset=17, extra_opsets=(), ir_version=8):
    graph = helper.make_graph(list(nodes), "malformed", list(inputs), list(outputs), list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(graph, opset_imports=opsets, producer_name="gcomp-malformed-corpus")
    m.ir_version = ir_version
    return m


def vi(name, elem_type=F, shape=None):
    return helper.make_tensor_value_info(name, elem_type, shape)


def out(name):
    """A graph output with no declared type (gcomp infers it)."""
    v = onnx.ValueInfoProto()
    v.name = name
    return v


def f32(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def i64(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.int64), name)


def raw_tensor(name, data_type, dims, raw=b""):
    t = TensorProto()
    t.name = name
    t.data_type = data_type
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def save(m, case_dir, filename="model.onnx"):
    with open(os.path.join(case_dir, filename), "wb") as f:
        f.write(m.SerializeToString())


def relu_model(opset=17, **kw):
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F, [2, 3])], [out("y")],
                 opset=opset, **kw)


def write_tensor(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


# ---- not a model ------------------------------------------------------------------------------

@case("empty_file", ["{file}: file is empty, expected an ONNX model (ModelProto)"])
def _(d):
    """A zero-byte file."""
    open(os.path.join(d, "model.onnx"), "wb").close()


@case("truncated_file", ["{file}: not a valid ONNX model", "protobuf parse failed", "truncated"])
def _(d):
    """A valid model with a 2 KB initializer, cut in half."""
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", F, [512])], [out("y")],
              [f32("w", np.ones(512))])
    data = m.SerializeToString()
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])


@case("not_protobuf", ["{file}: not a valid ONNX model", "protobuf parse failed"])
def _(d):
    """Plain text with a .onnx name."""
    with open(os.path.join(d, "model.onnx"), "w") as f:
        f.write("this is a text file, not an ONNX model\n" * 4)


@case("random_bytes", ["{file}: not a valid ONNX model", "protobuf parse failed"])
def _(d):
    """Bytes that start like a protobuf length-delimited field with an impossible length."""
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(b"\x0a\xff\xff\xff\xff\x0f" + bytes(range(256)))


@case("tensor_proto_not_model", ["{file}: not a valid ONNX model", "not a model file"])
def _(d):
    """An input_0.pb-style TensorProto given where a model is expected."""
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(numpy_helper.from_array(np.ones((2, 2), np.float32), "input").SerializeToString())


@case("model_without_graph", ["{file}: model has no graph"])
def _(d):
    """A ModelProto with an opset import and no graph."""
    m = relu_model()
    m.ClearField("graph")
    save(m, d)


# ---- opsets, ops and domains ------------------------------------------------------------------

@case("opset_too_new", ["{file}: model imports default-domain opset 30", "expected 1 to 23", "newer than supported"])
def _(d):
    """Default-domain opset 30 (gcomp reads 1 to 23)."""
    save(relu_model(opset=30), d)


@case("opset_too_old", ["{file}: model imports default-domain opset 0", "expected 1 to 23", "older than supported"])
def _(d):
    """Default-domain opset 0 (opset versions start at 1)."""
    save(relu_model(opset=0), d)


@case("unknown_op", ["{file}: 1 unsupported node", "node 'frob' (FrobnicateTensor): unsupported op"])
def _(d):
    """An op that no ONNX opset defines."""
    save(model([helper.make_node("FrobnicateTensor", ["x"], ["y"], name="frob")], [vi("x", F, [2])], [out("y")]), d)


@case("unknown_domain", ["{file}: 1 unsupported node", "node 'scale' (Scale) in domain 'my.custom': unsupported domain"])
def _(d):
    """A custom-domain op."""
    save(model([helper.make_node("Scale", ["x"], ["y"], name="scale", domain="my.custom")], [vi("x", F, [2])],
               [out("y")], extra_opsets=[("my.custom", 1)]), d)


@case("com_microsoft_op", ["{file}: 1 unsupported node",
                           "node 'fast_gelu' (FastGelu) in domain 'com.microsoft': unsupported domain",
                           "ONNX Runtime contrib op"])
def _(d):
    """ONNX Runtime's contrib FastGelu."""
    save(model([helper.make_node("FastGelu", ["x"], ["y"], name="fast_gelu", domain="com.microsoft")],
               [vi("x", F, [2])], [out("y")], extra_opsets=[("com.microsoft", 1)]), d)


@case("several_unsupported_ops", ["{file}: 4 unsupported nodes",
                                  "node 'loop' (Loop): unsupported op",
                                  "node 'nms' (NonMaxSuppression): unsupported op",
                                  "node 'attn' (MultiHeadAttention) in domain 'com.microsoft': unsupported domain",
                                  "node 'topk' (TopK): unsupported op"])
def _(d):
    """Four unsupported nodes among supported ones: all are listed in one message."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("TopK", ["a", "k"], ["b", "bi"], name="topk"),
        helper.make_node("NonMaxSuppression", ["b", "b"], ["c"], name="nms"),
        helper.make_node("MultiHeadAttention", ["a", "a", "a"], ["e"], name="attn", domain="com.microsoft"),
        helper.make_node("Loop", ["k", ""], ["f"], name="loop"),
        helper.make_node("Sigmoid", ["a"], ["y"], name="sigmoid"),
    ]
    save(model(nodes, [vi("x", F, [1, 4, 8])], [out("y")], [i64("k", [2])],
               extra_opsets=[("com.microsoft", 1)]), d)


@case("qdq_quantized", ["{file}: 2 unsupported nodes",
                        "node 'quant' (QuantizeLinear): quantized (Q/DQ) graphs are not supported",
                        "node 'dequant' (DequantizeLinear): quantized (Q/DQ) graphs are not supported"])
def _(d):
    """A QuantizeLinear / DequantizeLinear pair."""
    zp = numpy_helper.from_array(np.zeros((), np.uint8), "zp")
    nodes = [helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"], name="quant"),
             helper.make_node("DequantizeLinear", ["q", "scale", "zp"], ["y"], name="dequant")]
    save(model(nodes, [vi("x", F, [4])], [out("y")], [f32("scale", 0.1), zp], opset=13), d)


@case("op_newer_than_model_opset", ["{file}: 1 unsupported node",
                                    "node 'gelu' (Gelu): needs opset 20, the model imports opset 17"])
def _(d):
    """Gelu (opset 20) in an opset-17 model."""
    save(model([helper.make_node("Gelu", ["x"], ["y"], name="gelu")], [vi("x", F, [4])], [out("y")], opset=17), d)


# ---- graph structure --------------------------------------------------------------------------

@case("cyclic_graph", ["{file}: the graph has a cycle through node 'first' (Add)"])
def _(d):
    """first -> second -> first."""
    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="first"),
             helper.make_node("Relu", ["a"], ["b"], name="second")]
    save(model(nodes, [vi("x", F, [2])], [out("b")]), d)


@case("duplicate_value_names", ["{file}: value 'y' is produced by both node 'relu_a' (Relu) and node 'sigmoid_b' (Sigmoid)"])
def _(d):
    """Two nodes write the same value."""
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu_a"),
             helper.make_node("Sigmoid", ["x"], ["y"], name="sigmoid_b")]
    save(model(nodes, [vi("x", F, [2])], [out("y")]), d)


@case("output_shadows_initializer", ["{file}: node 'relu' (Relu): output 'w' is already a graph input or initializer"])
def _(d):
    """A node output with the name of an initializer."""
    save(model([helper.make_node("Relu", ["x"], ["w"], name="relu")], [vi("x", F, [2])], [out("w")],
               [f32("w", [1, 2])]), d)


@case("missing_initializer", ["{file}: node 'add' (Add): input 'bias' is not produced by any node, initializer or graph input"])
def _(d):
    """Add reads an initializer the model does not contain."""
    save(model([helper.make_node("Add", ["x", "bias"], ["y"], name="add")], [vi("x", F, [2])], [out("y")]), d)


@case("missing_required_input", ["{file}: node 'conv' (Conv): has 1 inputs, expected between 2 and 3"])
def _(d):
    """Conv without its weight input."""
    save(model([helper.make_node("Conv", ["x"], ["y"], name="conv")], [vi("x", F, [1, 3, 8, 8])], [out("y")]), d)


@case("no_outputs", ["{file}: the graph has no outputs"])
def _(d):
    """A graph that declares no outputs."""
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F, [2])], []), d)


@case("output_never_produced", ["{file}: graph output 'z' is not produced by any node, initializer or input"])
def _(d):
    """The declared output is not written by any node."""
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F, [2])], [out("z")]), d)


@case("output_listed_twice", ["{file}: graph output 'y' is listed twice"])
def _(d):
    """The same graph output declared twice."""
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F, [2])], [out("y"), out("y")]), d)


@case("output_declared_type_mismatch", ["{file}: graph output 'y' is declared INT64, inferred f32"])
def _(d):
    """The output is declared int64 but Relu of a float is float."""
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F, [2])], [vi("y", I64, [2])]), d)


@case("input_without_shape", ["{file}: graph input 'x' has no shape (rank unknown)"])
def _(d):
    """A graph input with an element type but no shape."""
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F, None)], [out("y")]), d)


@case("input_string_dtype", ["{file}: graph input 'x' has element type STRING", "expected a supported type"])
def _(d):
    """A string graph input."""
    save(model([helper.make_node("Identity", ["x"], ["y"], name="id")], [vi("x", TensorProto.STRING, [2])],
               [out("y")]), d)


@case("negative_input_dim", ["{file}: graph input 'x' has negative dimension -3 at axis 1"])
def _(d):
    """A graph input of shape [2, -3]."""
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F, [2, -3])], [out("y")]), d)


# ---- initializers and constants ---------------------------------------------------------------

@case("raw_data_length_mismatch", ["{file}: tensor 'w': raw_data has 12 bytes, expected 24 for dims [2,3] of f32"])
def _(d):
    """An initializer of dims [2,3] f32 with 3 floats of raw_data."""
    w = raw_tensor("w", F, [2, 3], np.ones(3, np.float32).tobytes())
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", F, [2, 3])], [out("y")], [w]), d)


@case("zero_byte_raw_data", ["{file}: tensor 'w': raw_data has 0 bytes, expected 24 for dims [2,3] of f32"])
def _(d):
    """An initializer of dims [2,3] with an empty (but present) raw_data."""
    w = raw_tensor("w", F, [2, 3], b"")
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", F, [2, 3])], [out("y")], [w]), d)


@case("typed_data_count_mismatch", ["{file}: tensor 'w': float_data has 2 elements, expected 6 for dims [2,3]"])
def _(d):
    """float_data with 2 values for 6 declared elements."""
    w = TensorProto(name="w", data_type=F, dims=[2, 3], float_data=[1.0, 2.0])
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", F, [2, 3])], [out("y")], [w]), d)


@case("negative_initializer_dim", ["{file}: tensor 'w': has negative dimension -2 in [3,-2]"])
def _(d):
    """An initializer with dims [3, -2]."""
    w = raw_tensor("w", F, [3, -2], b"")
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", F, [3, 2])], [out("y")], [w]), d)


@case("dims_overflow_int64", ["{file}: tensor 'w': dims [4294967296,4294967296,16]", "overflow"], huge=True)
def _(d):
    """Initializer dims whose product (2^68) overflows int64."""
    w = raw_tensor("w", F, [1 << 32, 1 << 32, 16], b"\0" * 16)
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", F, [2])], [out("y")], [w]), d)


@case("trillion_element_initializer", ["{file}: tensor 'w': declares 1000000000000 elements [1000000,1000000]",
                                       "over the 4 GiB tensor limit"], huge=True)
def _(d):
    """An initializer declaring 10^12 f32 elements with 16 bytes of raw_data."""
    w = raw_tensor("w", F, [10**6, 10**6], b"\0" * 16)
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", F, [2])], [out("y")], [w]), d)


@case("large_initializer_small_payload", ["{file}: tensor 'w': raw_data has 16 bytes, expected 1073741824",
                                          "for dims [268435456] of f32"], huge=True)
def _(d):
    """1 GiB declared (under the tensor limit, over the address-space cap of the test) with 16 bytes."""
    w = raw_tensor("w", F, [1 << 28], b"\0" * 16)
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", F, [2])], [out("y")], [w]), d)


@case("string_initializer", ["{file}: tensor 'names': has data type STRING", "expected one of FLOAT"])
def _(d):
    """A string initializer."""
    t = helper.make_tensor("names", TensorProto.STRING, [2], [b"a", b"b"])
    save(model([helper.make_node("Identity", ["names"], ["y"], name="id")], [], [out("y")], [t]), d)


@case("constant_string_value", ["{file}: node 'const' (Constant): ", "has data type STRING", "expected one of FLOAT"])
def _(d):
    """A Constant node whose value is a string tensor."""
    t = helper.make_tensor("v", TensorProto.STRING, [1], [b"hello"])
    save(model([helper.make_node("Constant", [], ["y"], name="const", value=t)], [], [out("y")]), d)


@case("constant_value_strings_attr", ["{file}: node 'const' (Constant): attribute 'value_strings' is not supported"])
def _(d):
    """A Constant node with value_strings."""
    save(model([helper.make_node("Constant", [], ["y"], name="const", value_strings=["a", "b"])], [], [out("y")]), d)


# ---- external data ----------------------------------------------------------------------------

def external_tensor(name, dims, location, offset=None, length=None):
    t = TensorProto()
    t.name = name
    t.data_type = F
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            e = t.external_data.add()
            e.key = key
            e.value = str(value)
    return t


def external_model(d, location, dims=(4,)):
    w = external_tensor("w", list(dims), location)
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", F, list(dims))], [out("y")], [w]), d)


@case("external_data_dotdot", ["{file}: tensor 'w': external data location '../secret.bin' contains '..'",
                               "expected a path inside the model folder"])
def _(d):
    """External data at ../secret.bin (the file exists next to the case folder)."""
    with open(os.path.join(os.path.dirname(d), "secret.bin"), "wb") as f:
        f.write(np.ones(4, np.float32).tobytes())
    external_model(d, "../secret.bin")


@case("external_data_absolute", ["{file}: tensor 'w': external data location '/etc/passwd' is absolute",
                                 "expected a path inside the model folder"])
def _(d):
    """External data at an absolute path."""
    external_model(d, "/etc/passwd")


@case("external_data_symlink", ["{file}: tensor 'w': external data location 'weights.bin' resolves to",
                                "outside the model folder"])
def _(d):
    """External data through a link that leaves the model folder."""
    target = os.path.join(os.path.dirname(d), "outside.bin")
    with open(target, "wb") as f:
        f.write(np.ones(4, np.float32).tobytes())
    os.symlink(os.path.join("..", "outside.bin"), os.path.join(d, "weights.bin"))
    external_model(d, "weights.bin")


@case("external_data_missing_file", ["{file}: tensor 'w': external data file 'absent.bin' not found in"])
def _(d):
    """External data in a file that does not exist."""
    external_model(d, "absent.bin")


@case("external_data_too_short", ["{file}: tensor 'w': external data file 'weights.bin' has 8 bytes",
                                  "expected at least 16 from offset 0"])
def _(d):
    """External data file shorter than the declared tensor."""
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(np.ones(2, np.float32).tobytes())
    external_model(d, "weights.bin")


@case("external_data_trillion_elements", ["{file}: tensor 'w': declares 1000000000000 elements",
                                          "over the 4 GiB tensor limit"], huge=True)
def _(d):
    """External data declaring 10^12 elements, backed by a 16-byte file."""
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(np.ones(4, np.float32).tobytes())
    external_model(d, "weights.bin", dims=(10**6, 10**6))


# ---- attributes -------------------------------------------------------------------------------

@case("attribute_wrong_type", ["{file}: node 'transpose' (Transpose): attribute 'perm' has type float, expected ints"])
def _(d):
    """Transpose with a float perm."""
    save(model([helper.make_node("Transpose", ["x"], ["y"], name="transpose", perm=1.0)], [vi("x", F, [2, 3])],
               [out("y")]), d)


@case("graph_attribute", ["{file}: node 'relu' (Relu): attribute 'body' has type GRAPH",
                          "expected FLOAT, INT, STRING, TENSOR, FLOATS, INTS or STRINGS"])
def _(d):
    """A supported op carrying a subgraph attribute."""
    sub = helper.make_graph([helper.make_node("Identity", ["a"], ["b"])], "sub", [vi("a", F, [1])], [vi("b", F, [1])])
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu", body=sub)], [vi("x", F, [2])], [out("y")]), d)


@case("cast_to_string", ["{file}: node 'cast' (Cast): casts to STRING, expected a supported type"])
def _(d):
    """Cast to string."""
    save(model([helper.make_node("Cast", ["x"], ["y"], name="cast", to=TensorProto.STRING)], [vi("x", F, [2])],
               [out("y")]), d)


@case("batchnorm_training_mode", ["{file}: node 'bn' (BatchNormalization): training_mode=1 is not supported",
                                  "inference only"])
def _(d):
    """BatchNormalization with training_mode=1."""
    inits = [f32("s", np.ones(3)), f32("b", np.zeros(3)), f32("m", np.zeros(3)), f32("v", np.ones(3))]
    save(model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn", training_mode=1)],
               [vi("x", F, [1, 3, 4, 4])], [out("y")], inits, opset=15), d)


# ---- op shapes and dtypes ---------------------------------------------------------------------

@case("wrong_dtype_for_op", ["{file}: node 'add' (Add): input 'b' has dtype i64, expected f32 like input 'a'"])
def _(d):
    """Add of a float and an int64 tensor."""
    save(model([helper.make_node("Add", ["a", "b"], ["y"], name="add")], [vi("a", F, [2]), vi("b", I64, [2])],
               [out("y")]), d)


@case("softmax_int_input", ["{file}: node 'softmax' (Softmax): input 'x' has dtype i64, expected a float type"])
def _(d):
    """Softmax of an int64 tensor."""
    save(model([helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=-1)], [vi("x", I64, [2, 3])],
               [out("y")], opset=13), d)


@case("reshape_two_minus_ones", ["{file}: node 'reshape' (Reshape): shape [-1,-1] has more than one -1"])
def _(d):
    """Reshape to [-1, -1]."""
    save(model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")], [vi("x", F, [2, 3, 4])],
               [out("y")], [i64("shape", [-1, -1])]), d)


@case("reshape_count_mismatch", ["{file}: node 'reshape' (Reshape): cannot reshape [2,3] (6 elements) to [5] (5 elements)"])
def _(d):
    """Reshape of 6 elements to 5."""
    save(model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")], [vi("x", F, [2, 3])],
               [out("y")], [i64("shape", [5])]), d)


@case("matmul_inner_mismatch", ["{file}: node 'matmul' (MatMul): input 'w' has 5 rows, expected 4 (the columns of input 'x')"])
def _(d):
    """MatMul [2,4] x [5,3]."""
    save(model([helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")], [vi("x", F, [2, 4])], [out("y")],
               [f32("w", np.ones((5, 3)))]), d)


@case("conv_channel_mismatch", ["{file}: node 'conv' (Conv): input 'x' has 3 channels, expected 4",
                                "weight 'W' channels 4 x group 1"])
def _(d):
    """Conv of a 3-channel input with a weight for 4 input channels."""
    save(model([helper.make_node("Conv", ["x", "W"], ["y"], name="conv", kernel_shape=[3, 3])],
               [vi("x", F, [1, 3, 8, 8])], [out("y")], [f32("W", np.ones((8, 4, 3, 3)))]), d)


@case("conv_weight_rank", ["{file}: node 'conv' (Conv): input 'W' has rank 3, expected 4"])
def _(d):
    """Conv2d with a rank-3 weight."""
    save(model([helper.make_node("Conv", ["x", "W"], ["y"], name="conv")],
               [vi("x", F, [1, 3, 8, 8])], [out("y")], [f32("W", np.ones((8, 3, 3)))]), d)


@case("conv_group_not_dividing", ["{file}: node 'conv' (Conv): input 'x' has 3 channels, expected 2",
                                  "weight 'W' channels 1 x group 2"])
def _(d):
    """Conv with group=2 over 3 input channels."""
    save(model([helper.make_node("Conv", ["x", "W"], ["y"], name="conv", group=2)],
               [vi("x", F, [1, 3, 8, 8])], [out("y")], [f32("W", np.ones((4, 1, 3, 3)))]), d)


@case("maxpool_kernel_too_large", ["{file}: node 'pool' (MaxPool): input 'x' has size 3 along spatial axis 0",
                                   "smaller than the kernel extent 5"])
def _(d):
    """A 5x5 MaxPool window over a 3x3 input without padding."""
    save(model([helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[5, 5])],
               [vi("x", F, [1, 1, 3, 3])], [out("y")]), d)


@case("transpose_bad_perm", ["{file}: node 'transpose' (Transpose): perm [0,0,1] is not a permutation of 0..2"])
def _(d):
    """Transpose with perm [0,0,1]."""
    save(model([helper.make_node("Transpose", ["x"], ["y"], name="transpose", perm=[0, 0, 1])],
               [vi("x", F, [2, 3, 4])], [out("y")]), d)


@case("split_sizes_wrong_sum", ["{file}: node 'split' (Split): split sizes [2,3] add up to 5, expected 6"])
def _(d):
    """Split of an axis of 6 into [2, 3]."""
    save(model([helper.make_node("Split", ["x", "split"], ["a", "b"], name="split")], [vi("x", F, [6, 2])],
               [out("a"), out("b")], [i64("split", [2, 3])], opset=13), d)


@case("gather_index_out_of_range", ["{file}: node 'gather' (Gather): index 5 in input 'idx' is out of range for axis 0 of size 3"])
def _(d):
    """Gather with a constant index 5 on an axis of 3."""
    save(model([helper.make_node("Gather", ["x", "idx"], ["y"], name="gather")], [vi("x", F, [3, 4])], [out("y")],
               [i64("idx", [5])]), d)


@case("gather_index_out_of_range_at_run_time",
      ["{file}: node 'gather' (Gather): index 7", "out of range for axis 0 of size 3"],
      command=("run", "{file}", "--input", "x={dir}/x.pb", "--input", "idx={dir}/idx.pb", "--output-dir", "{dir}/out"))
def _(d):
    """Gather whose indices are a graph input: index 7 on an axis of 3 only shows when running."""
    save(model([helper.make_node("Gather", ["x", "idx"], ["y"], name="gather")], [vi("x", F, [3, 4]), vi("idx", I64, [2])],
               [out("y")]), d)
    write_tensor(os.path.join(d, "x.pb"), np.ones((3, 4), np.float32), "x")
    write_tensor(os.path.join(d, "idx.pb"), np.array([1, 7], np.int64), "idx")


@case("run_input_wrong_shape",
      ["{file}: input 'x' has shape [3,2], expected [2,3]"],
      command=("run", "{file}", "--input", "x={dir}/x.pb", "--output-dir", "{dir}/out"))
def _(d):
    """A run fed an input of the wrong shape."""
    save(relu_model(), d)
    write_tensor(os.path.join(d, "x.pb"), np.ones((3, 2), np.float32), "x")


@case("concat_rank_mismatch", ["{file}: node 'concat' (Concat): input 'b' has rank 3, expected 2"])
def _(d):
    """Concat of a rank-2 and a rank-3 tensor."""
    save(model([helper.make_node("Concat", ["a", "b"], ["y"], name="concat", axis=0)],
               [vi("a", F, [2, 3]), vi("b", F, [2, 3, 1])], [out("y")]), d)


@case("slice_step_zero", ["{file}: node 'slice' (Slice): slice step is 0"])
def _(d):
    """Slice with steps [0]."""
    save(model([helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"], name="slice")],
               [vi("x", F, [4, 4])], [out("y")],
               [i64("starts", [0]), i64("ends", [4]), i64("axes", [0]), i64("steps", [0])]), d)


@case("pad_wrong_length", ["{file}: node 'pad' (Pad): pads has 3 entries, expected 4 (2 x rank)"])
def _(d):
    """Pad of a rank-2 tensor with 3 pads."""
    save(model([helper.make_node("Pad", ["x", "pads"], ["y"], name="pad")], [vi("x", F, [2, 2])], [out("y")],
               [i64("pads", [1, 1, 1])]), d)


@case("broadcast_mismatch", ["{file}: node 'mul' (Mul): shapes [2,3] and [4] do not broadcast",
                             "3 vs 4 at output axis 1, expected equal sizes or 1"])
def _(d):
    """Mul of [2,3] and [4]."""
    save(model([helper.make_node("Mul", ["a", "b"], ["y"], name="mul")], [vi("a", F, [2, 3]), vi("b", F, [4])],
               [out("y")]), d)


@case("range_huge", ["{file}: node 'range' (Range): range of 1e+12 elements is too large, expected fewer than 1e12"],
      huge=True)
def _(d):
    """Range(0, 10^12, 1): a 4 TB output."""
    save(model([helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")], [], [out("y")],
               [i64("start", np.int64(0)), i64("limit", np.int64(10**12)), i64("delta", np.int64(1))]), d)


@case("constant_of_shape_huge", ["{file}: node 'fill' (ConstantOfShape): output 'y' has shape [1000000,1000000]",
                                 "(1000000000000 f32 elements), expected at most 4 GiB"], huge=True)
def _(d):
    """ConstantOfShape([10^6, 10^6]): a 4 TB output."""
    save(model([helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill")], [], [out("y")],
               [i64("shape", [10**6, 10**6])]), d)


@case("constant_of_shape_overflow", ["{file}: node 'fill' (ConstantOfShape): output 'y' has shape "
                                     "[1099511627776,1099511627776]",
                                     "dim 0 is 1099511627776, over the limit of 2147483647"], huge=True)
def _(d):
    """ConstantOfShape([2^40, 2^40]): the element count overflows int64."""
    save(model([helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill")], [], [out("y")],
               [i64("shape", [1 << 40, 1 << 40])]), d)


@case("expand_huge", ["{file}: node 'expand' (Expand): output 'y' has shape [1000000,1000000]",
                      "(1000000000000 f32 elements), expected at most 4 GiB"], huge=True)
def _(d):
    """Expand a [1] tensor to [10^6, 10^6]."""
    save(model([helper.make_node("Expand", ["x", "shape"], ["y"], name="expand")], [vi("x", F, [1])], [out("y")],
               [i64("shape", [10**6, 10**6])]), d)


@case("constant_of_shape_negative", ["{file}: node 'fill' (ConstantOfShape): input 'shape' has negative dimension -4"])
def _(d):
    """ConstantOfShape([-4])."""
    save(model([helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill")], [], [out("y")],
               [i64("shape", [-4])]), d)


@case("range_over_tensor_limit", ["{file}: node 'range' (Range): output 'y' has shape [600000000]",
                                  "(600000000 i64 elements), expected at most 4 GiB"], huge=True)
def _(d):
    """Range(0, 6*10^8, 1) of int64: 4.8 GB, under Range's own cap, over the tensor limit."""
    save(model([helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")], [], [out("y")],
               [i64("start", np.int64(0)), i64("limit", np.int64(6 * 10**8)), i64("delta", np.int64(1))]), d)


@case("pad_huge", ["{file}: node 'pad' (Pad): output 'y' has shape [2000000004]",
                   "(2000000004 f32 elements), expected at most 4 GiB"], huge=True)
def _(d):
    """Pad of a [4] tensor by 2*10^9 at the end."""
    save(model([helper.make_node("Pad", ["x", "pads"], ["y"], name="pad")], [vi("x", F, [4])], [out("y")],
               [i64("pads", [0, 2 * 10**9])]), d)


@case("huge_graph_input", ["{file}: graph input 'x' has shape [1000000,1000000]",
                           "(1000000000000 f32 elements), expected at most 4 GiB"], huge=True)
def _(d):
    """A graph input declared with 10^12 elements."""
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F, [10**6, 10**6])], [out("y")]), d)


@case("graph_input_dims_overflow", ["{file}: graph input 'x' has dimension 1099511627776 at axis 0, "
                                    "over the limit of 2147483647"], huge=True)
def _(d):
    """A graph input whose dims multiply past int64."""
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F, [1 << 40, 1 << 40])], [out("y")]), d)


# The resource limits (README "Limits", core/limits.h): each refused where the value enters, with
# the value, the limit and the node.

@case("limit_input_rank", ["{file}: graph input 'x' has rank 9, over the limit of 8"])
def _(d):
    """A graph input of rank 9."""
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F, [1] * 9)], [out("y")]), d)


@case("limit_input_dim", ["{file}: graph input 'x' has dimension 2147483648 at axis 2, over the limit of 2147483647"],
      huge=True)
def _(d):
    """A graph input [1, 1, 2^31] of uint8: 2 GiB, under the tensor limit, over the dim limit."""
    save(model([helper.make_node("Identity", ["x"], ["y"], name="id")], [vi("x", TensorProto.UINT8, [1, 1, 1 << 31])],
               [out("y")]), d)


@case("limit_initializer_rank", ["{file}: tensor 'w': dims [1,1,1,1,1,1,1,1,1]: rank 9, over the limit of 8"])
def _(d):
    """An initializer of rank 9."""
    save(model([helper.make_node("Relu", ["w"], ["y"], name="relu")], [], [out("y")],
               [f32("w", np.ones([1] * 9))]), d)


@case("limit_initializer_dim", ["{file}: tensor 'w': dims [0,4294967296]: dim 1 is 4294967296, over the limit of 2147483647"])
def _(d):
    """An empty initializer [0, 2^32]: no bytes, one dim over the limit."""
    save(model([helper.make_node("Relu", ["w"], ["y"], name="relu")], [], [out("y")],
               [raw_tensor("w", F, [0, 1 << 32])]), d)


@case("limit_node_count", ["{file}: the graph has 100001 nodes, over the limit of 100000"])
def _(d):
    """A chain of 100,001 Relu nodes."""
    nodes = [helper.make_node("Relu", [f"v{i}" if i else "x"], [f"v{i + 1}"]) for i in range(100001)]
    save(model(nodes, [vi("x", F, [2])], [out("v100001")]), d)


@case("limit_shape_expression", ["{file}: node 'outer' (Mul): output 'm' has shape [s0*s1*s2*s3*s4*s5*s6*s7,s8]: "
                                 "shape expression s0*s1*s2*s3*s4*s5*s6*s7*s8 has 1 term and degree 9, "
                                 "over the limits of 32 terms and degree 8"])
def _(d):
    """Flatten of a rank-8 input of symbolic dims ([s0*...*s7, 1], degree 8), its outer product with a
    ninth symbol ([s0*...*s7, s8]): its element count has degree 9."""
    dims = [f"s{i}" for i in range(8)]
    save(model([helper.make_node("Flatten", ["x"], ["f"], name="flat1", axis=8),
                helper.make_node("Unsqueeze", ["z", "axes"], ["zu"], name="unsq"),
                helper.make_node("Mul", ["f", "zu"], ["m"], name="outer"),
                helper.make_node("Flatten", ["m"], ["y"], name="flat2", axis=0)],
               [vi("x", F, dims), vi("z", F, ["s8"])], [out("y")], [i64("axes", [0])]), d)


@case("limit_tensor_at_max_batch",
      ["{file}: value 'x' has 6400000000 bytes at batch 64 (the plan's maximum), over the limit of 4294967296: "
       "compile with --batch 42 or less"],
      command=("compile", "{file}", "-o", "{dir}/model.gplan"))
def _(d):
    """Relu of [batch, 25000000] f32: 100 MB per sample, 6.4 GB at the default maximum batch of 64."""
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F, ["batch", 25000000])], [out("y")]),
         d)


@case("limit_dim_at_max_batch",
      ["{file}: value 'y' dim 1 (batch*40000000) at batch 64 (the plan's maximum), over the limit of 2147483647: "
       "compile with --batch 53 or less"],
      command=("compile", "{file}", "-o", "{dir}/model.gplan"))
def _(d):
    """Flatten of a uint8 [batch, 40000000] input: one dim of batch * 4*10^7, 2.56*10^9 at the default
    maximum batch of 64 (2.56 GB, under the tensor limit; over the dim limit)."""
    save(model([helper.make_node("Flatten", ["x"], ["f"], name="flat", axis=0),
                helper.make_node("Identity", ["f"], ["y"], name="id")],
               [vi("x", TensorProto.UINT8, ["batch", 40000000])], [out("y")]), d)


@case("accepted_large_activations", ["output 0 'y' f32[1,10000000]"],
      command=("run", "{file}", "--target", "cpu", "--input", "x={dir}/x.pb", "--output-dir", "{dir}/out"),
      exit_code=0, planned_mb=40 + 3 * 80)
def _(d):
    """Not malformed: a model within every limit whose run holds 40 MB values (the input, one in the
    40 MB arena, the output). It must run under the address-space cap plus that: run allocates its
    planned arena, not more."""
    save(model([helper.make_node("Sigmoid", ["x"], ["s"], name="sigmoid"),
                helper.make_node("Mul", ["x", "s"], ["m"], name="silu"),
                helper.make_node("Add", ["m", "x"], ["y"], name="add")],
               [vi("x", F, [1, 10000000])], [out("y")]), d)
    write_tensor(os.path.join(d, "x.pb"), np.linspace(-4, 4, 10000000, dtype=np.float32).reshape(1, -1), "x")


@case("accepted_gather_empty_rows", ["output 0 'y' f32[2,4,0]"],
      command=("run", "{file}", "--target", "cpu", "--input", "x={dir}/x.pb", "--input", "idx={dir}/idx.pb",
               "--output-dir", "{dir}/out"), exit_code=0)
def _(d):
    """Not malformed (found by fuzz_compile): Gather of rows of a [3, 4, 0] tensor, whose empty rows
    have no memory at all; the cpu kernel copied them from a null pointer."""
    save(model([helper.make_node("Gather", ["x", "idx"], ["y"], name="gather")],
               [vi("x", F, [3, 4, 0]), vi("idx", I64, [2])], [out("y")]), d)
    write_tensor(os.path.join(d, "x.pb"), np.zeros((3, 4, 0), np.float32), "x")
    write_tensor(os.path.join(d, "idx.pb"), np.array([0, 2], np.int64), "idx")


@case("accepted_gather_no_indices", ["output 0 'y' f32[0,2]"],
      command=("run", "{file}", "--target", "cpu", "--input", "x={dir}/x.pb", "--input", "idx={dir}/idx.pb",
               "--output-dir", "{dir}/out"), exit_code=0)
def _(d):
    """Not malformed (found by fuzz_compile): Gather with an empty index list; the cpu kernel copied
    the indices into an empty vector's null data pointer."""
    save(model([helper.make_node("Gather", ["x", "idx"], ["y"], name="gather")],
               [vi("x", F, [3, 2]), vi("idx", I64, [0])], [out("y")]), d)
    write_tensor(os.path.join(d, "x.pb"), np.ones((3, 2), np.float32), "x")
    write_tensor(os.path.join(d, "idx.pb"), np.zeros((0,), np.int64), "idx")


@case("accepted_gemm_c_needs_batch_value", ['%y: f32[4,batch] = Gemm["gemm"](%a, %x, %c) {transB=1}'],
      command=("inspect", "{file}", "--target", "cuda:sm_90", "--level", "O3"), exit_code=0)
def _(d):
    """Not malformed (found by fuzz_compile): Gemm of constant A [4, 3] and run-time B [batch, 3]
    (transB) with C [4]: C broadcasts to [4, batch] only when batch is 4. canonicalize's run-time-B
    rewrite failed with an internal error; the Gemm now stays a Gemm."""
    save(model([helper.make_node("Gemm", ["a", "x", "c"], ["y"], name="gemm", transB=1)],
               [vi("x", F, ["batch", 3])], [out("y")], [f32("a", np.ones((4, 3))), f32("c", np.ones(4))]), d)


@case("compile_batch_symbol_not_free",
      ["{file}: node 'matmul' (MatMul): kernel 'cpu.openblas.batched_matmul' runs it at batch 64 but not at batch 1 "
       "(operands [2,64] [1,3] [2,3]): its symbolic dim 'j' is not a free batch size"],
      command=("compile", "{file}", "-o", "{dir}/model.gplan", "--target", "cpu"))
def _(d):
    """MatMul of [2, 64] and [j, 3] (found by fuzz_compile): j is the plan's only symbol, so it became
    the batch, but the MatMul runs only at j = 64; the plan claimed batch 1..64 and the runtime
    called it invalid at batch 1."""
    save(model([helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul")], [vi("a", F, [2, 64]), vi("b", F, ["j", 3])],
               [out("y")]), d)


@case("compile_reshape_count_one_batch",
      ["{file}: node 'flat' (Reshape): output 'f' [1,8] has 8 elements at batch 2, its input 'x' [batch,8] has 16; "
       "they agree at batch 1 (compile with --batch 1); a plan for batch 1..64 needs them equal at every batch"],
      command=("compile", "{file}", "-o", "{dir}/model.gplan", "--target", "cpu"))
def _(d):
    """Reshape of a [batch, 8] input to a constant [1, 8] (as a trace at batch 1 bakes it; found by
    fuzz_compile in a ViT whose head count came from the wrong dim): shape inference takes the
    symbolic element count on trust, and the plan claimed batch 1..64 with a view the runtime
    called invalid."""
    save(reshape_one_batch_model(), d)


@case("accepted_reshape_count_at_batch_one", ["{dir}/model.gplan: cpu plan, fp32, 1 steps, batch 1..1"],
      command=("compile", "{file}", "-o", "{dir}/model.gplan", "--target", "cpu", "--batch", "1"), exit_code=0)
def _(d):
    """Not malformed: the same Reshape in a plan for batch 1 only, where the counts agree."""
    save(reshape_one_batch_model(), d)


def reshape_one_batch_model():
    return model([helper.make_node("Reshape", ["x", "shape"], ["f"], name="flat"),
                  helper.make_node("Relu", ["f"], ["y"], name="relu")],
                 [vi("x", F, ["batch", 8])], [out("y")], [i64("shape", [1, 8])])


@case("too_many_inputs", ["{file}: node 'relu' (Relu): has 2 inputs, expected 1"])
def _(d):
    """Relu with two inputs."""
    save(model([helper.make_node("Relu", ["x", "x"], ["y"], name="relu")], [vi("x", F, [2])], [out("y")]), d)


@case("run_missing_input", ["{file}: missing graph input 'x' (expected f32[2,3])"],
      command=("run", "{file}", "--output-dir", "{dir}/out"))
def _(d):
    """A run that feeds no input."""
    save(relu_model(), d)


@case("run_input_wrong_dtype", ["{file}: input 'x' has dtype i64, expected f32"],
      command=("run", "{file}", "--input", "x={dir}/x.pb", "--output-dir", "{dir}/out"))
def _(d):
    """A run fed an int64 tensor for a float input."""
    save(relu_model(), d)
    write_tensor(os.path.join(d, "x.pb"), np.ones((2, 3), np.int64), "x")


@case("run_unknown_input_name", ["{file}: 'z' is not an input of the graph, expected one of: x"],
      command=("run", "{file}", "--input", "x={dir}/x.pb", "--input", "z={dir}/x.pb", "--output-dir", "{dir}/out"))
def _(d):
    """A run fed an input the graph does not have."""
    save(relu_model(), d)
    write_tensor(os.path.join(d, "x.pb"), np.ones((2, 3), np.float32), "x")


@case("run_input_file_huge_declaration", ["{dir}/x.pb: tensor 'x': declares 1000000000000 elements [1000000,1000000]",
                                          "over the 4 GiB tensor limit"],
      command=("run", "{file}", "--input", "x={dir}/x.pb", "--output-dir", "{dir}/out"), huge=True)
def _(d):
    """A run whose input TensorProto declares 10^12 elements with 16 bytes of data."""
    save(relu_model(), d)
    with open(os.path.join(d, "x.pb"), "wb") as f:
        f.write(raw_tensor("x", F, [10**6, 10**6], b"\0" * 16).SerializeToString())


@case("run_symbolic_dim_conflict",
      ["{file}: input 'b' has shape [3,3], expected [batch,3] with batch = 2 (bound by an earlier input)"],
      command=("run", "{file}", "--input", "a={dir}/a.pb", "--input", "b={dir}/b.pb", "--output-dir", "{dir}/out"))
def _(d):
    """Two inputs of shape [batch, 3] fed with batch 2 and batch 3."""
    save(model([helper.make_node("Add", ["a", "b"], ["y"], name="add")], [vi("a", F, ["batch", 3]), vi("b", F, ["batch", 3])],
               [out("y")]), d)
    write_tensor(os.path.join(d, "a.pb"), np.ones((2, 3), np.float32), "a")
    write_tensor(os.path.join(d, "b.pb"), np.ones((3, 3), np.float32), "b")


@case("run_matmul_mismatch_at_run_time",
      ["{file}: node 'matmul' (MatMul): input 'b' has 5 rows, expected 4 (the columns of input 'a')"],
      command=("run", "{file}", "--input", "a={dir}/a.pb", "--input", "b={dir}/b.pb", "--output-dir", "{dir}/out"))
def _(d):
    """MatMul of [2, k] and [j, 3]: valid until k = 4 and j = 5 are fed."""
    save(model([helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul")], [vi("a", F, [2, "k"]), vi("b", F, ["j", 3])],
               [out("y")]), d)
    write_tensor(os.path.join(d, "a.pb"), np.ones((2, 4), np.float32), "a")
    write_tensor(os.path.join(d, "b.pb"), np.ones((5, 3), np.float32), "b")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = os.path.abspath(sys.argv[1])
    if os.path.isdir(root):
        shutil.rmtree(root)
    os.makedirs(root)
    listing = []
    for c in CASES:
        d = os.path.join(root, c["name"])
        os.makedirs(d)
        c["build"](d)
        listing.append({"name": c["name"], "dir": c["name"], "file": os.path.join(c["name"], "model.onnx"),
                        "command": c["command"], "exit_code": c["exit_code"], "expect": c["expect"],
                        "huge": c["huge"], "planned_mb": c["planned_mb"], "doc": c["doc"]})
    names = [c["name"] for c in listing]
    assert len(set(names)) == len(names), "duplicate case names"
    with open(os.path.join(root, "cases.json"), "w") as f:
        json.dump({"cases": listing}, f, indent=1)
    print(f"wrote {len(listing)} malformed-model cases to {root}")


if __name__ == "__main__":
    main()
