// Import errors: every refusal names the file, the node, the op and what was expected.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "core/limits.h"
#include "tests/frontend/model_builder.h"

namespace gcomp::frontend::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

absl::StatusCode ImportCode(const ModelBuilder& m) { return Import(m).status().code(); }

// ---- unsupported nodes --------------------------------------------------------------------

TEST(ImportErrors, AllUnsupportedNodesListedAtOnce) {
  ModelBuilder m(17);
  m.Opset(1, "com.microsoft").Opset(1, "my.domain");
  m.Input("x", kFloat, {2, 3});
  m.Node("Relu", {"x"}, {"a"}, "relu_ok");
  m.Node("FrobnicateTensor", {"a"}, {"b"}, "frob");
  m.Node("Scale", {"b"}, {"c"}, "custom", "my.domain");
  m.Node("FastGelu", {"c"}, {"d"}, "fast_gelu", "com.microsoft");
  m.Node("Relu", {"d"}, {"y"}, "relu_ok2");
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  std::string msg(g.status().message());
  EXPECT_THAT(msg, StartsWith("model.onnx: 3 unsupported nodes:"));
  EXPECT_THAT(msg, HasSubstr("node 'frob' (FrobnicateTensor): unsupported op"));
  EXPECT_THAT(msg, HasSubstr("node 'custom' (Scale) in domain 'my.domain': unsupported domain"));
  EXPECT_THAT(msg, HasSubstr("node 'fast_gelu' (FastGelu) in domain 'com.microsoft': unsupported domain (ONNX Runtime "
                             "contrib op)"));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("relu_ok")));
}

TEST(ImportErrors, UnnamedNodesGetStableNames) {
  ModelBuilder m(17);
  m.Input("x", kFloat, {2});
  m.Node("Mystery", {"x"}, {"a"});
  m.Node("Mystery", {"a"}, {"y"});
  m.Output("y");
  std::string msg = ImportError(m);
  EXPECT_THAT(msg, HasSubstr("node 'Mystery_0' (Mystery): unsupported op"));
  EXPECT_THAT(msg, HasSubstr("node 'Mystery_1' (Mystery): unsupported op"));
}

TEST(ImportErrors, QuantizeLinearRefusedAsQuantized) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {4});
  m.InitF32("scale", {}, {0.1f});
  m.Initializer(RawTensor("zp", kUint8, {}, "\0", 1));
  m.Node("QuantizeLinear", {"x", "scale", "zp"}, {"q"}, "quant");
  m.Node("DequantizeLinear", {"q", "scale", "zp"}, {"y"}, "dequant");
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("model.onnx: 2 unsupported nodes"));
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("node 'quant' (QuantizeLinear): quantized (Q/DQ) graphs are not supported"));
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("node 'dequant' (DequantizeLinear): quantized (Q/DQ) graphs are not supported"));
}

TEST(ImportErrors, OpNewerThanTheModelOpset) {
  ModelBuilder m(17);
  m.Input("x", kFloat, {4});
  m.Node("Gelu", {"x"}, {"y"}, "gelu");
  m.Output("y");
  EXPECT_EQ(ImportError(m),
            "model.onnx: 1 unsupported node:\n  node 'gelu' (Gelu): needs opset 20, the model imports opset 17");

  ModelBuilder m20(20);
  m20.Input("x", kFloat, {4});
  m20.Node("Gelu", {"x"}, {"y"}, "gelu");
  m20.Output("y");
  auto g = Import(m20);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "y"), "[4]");
}

// ---- opsets -------------------------------------------------------------------------------

ModelBuilder ReluModel(int64_t opset) {
  ModelBuilder m(opset);
  m.Input("x", kFloat, {2});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("y");
  return m;
}

// A Relu model whose only opset import is `version` of `domain`.
ModelBuilder ReluModelImporting(int64_t version, const std::string& domain) {
  ModelBuilder m(0);
  m.Opset(version, domain);
  m.Input("x", kFloat, {2});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("y");
  return m;
}

TEST(ImportErrors, Opset24Refused) {
  EXPECT_EQ(ImportError(ReluModel(24)),
            "model.onnx: model imports default-domain opset 24, expected 1 to 23 (newer than supported)");
}

TEST(ImportErrors, Opset0Refused) {
  EXPECT_EQ(ImportError(ReluModelImporting(0, "")),
            "model.onnx: model imports default-domain opset 0, expected 1 to 23 (older than supported)");
}

TEST(ImportErrors, Opsets1To23Accepted) {
  for (int64_t v : {1, 5, 6, 7, 23}) EXPECT_TRUE(Import(ReluModel(v)).ok()) << v;
}

TEST(ImportErrors, AiOnnxDomainNameIsTheDefaultDomain) {
  ModelBuilder m(0);
  m.Opset(13, "ai.onnx");
  m.Input("x", kFloat, {2});
  m.Node("Relu", {"x"}, {"y"}, "relu", "ai.onnx");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->opset, 13);
}

TEST(ImportErrors, NoOpsetImportRefused) {
  ModelBuilder m = ReluModel(0);
  EXPECT_EQ(ImportError(m), "model.onnx: model imports no opset, expected the default ONNX domain at opset 1 to 23");
}

TEST(ImportErrors, OldIrVersionWithoutOpsetIsOpset1) {
  // IR versions before 3 have no opset_import: the implied opset is 1.
  ModelBuilder m = ReluModel(0);
  m.proto().clear_opset_import();
  m.proto().set_ir_version(2);
  m.graph()->mutable_node(0)->set_op_type("Identity");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->opset, 1);
}

TEST(ImportErrors, OnlyACustomDomainImportedRefused) {
  EXPECT_EQ(ImportError(ReluModelImporting(1, "com.microsoft")),
            "model.onnx: model imports no default-domain opset, expected the default ONNX domain at opset 1 to 23");
}

// ---- graph structure ----------------------------------------------------------------------

TEST(ImportErrors, CyclicGraphRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  m.Node("Add", {"x", "b"}, {"a"}, "first");
  m.Node("Relu", {"a"}, {"b"}, "second");
  m.Output("b");
  EXPECT_EQ(ImportError(m), "model.onnx: the graph has a cycle through node 'first' (Add)");
}

TEST(ImportErrors, SelfLoopRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  m.Node("Add", {"x", "a"}, {"a"}, "loop");
  m.Output("a");
  EXPECT_EQ(ImportError(m), "model.onnx: the graph has a cycle through node 'loop' (Add)");
}

TEST(ImportErrors, DuplicateOutputNamesRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  m.Node("Relu", {"x"}, {"y"}, "relu_a");
  m.Node("Sigmoid", {"x"}, {"y"}, "sigmoid_b");
  m.Output("y");
  EXPECT_EQ(ImportError(m),
            "model.onnx: value 'y' is produced by both node 'relu_a' (Relu) and node 'sigmoid_b' (Sigmoid)");
}

TEST(ImportErrors, NodeOutputShadowingAnInitializerRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  m.InitF32("w", {2}, {1, 2});
  m.Node("Relu", {"x"}, {"w"}, "relu");
  m.Output("w");
  EXPECT_EQ(ImportError(m), "model.onnx: node 'relu' (Relu): output 'w' is already a graph input or initializer");
}

TEST(ImportErrors, GraphOutputListedTwiceRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("y").Output("y");
  EXPECT_THAT(ImportError(m), HasSubstr("model.onnx: graph output 'y' is listed twice"));
}

TEST(ImportErrors, InputNotProducedByAnything) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  m.Node("Add", {"x", "ghost"}, {"y"}, "add");
  m.Output("y");
  EXPECT_EQ(ImportError(m),
            "model.onnx: node 'add' (Add): input 'ghost' is not produced by any node, initializer or graph input");
}

TEST(ImportErrors, GraphWithoutOutputsRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_EQ(ImportError(m), "model.onnx: the graph has no outputs");
}

TEST(ImportErrors, GraphOutputNotProduced) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("z");
  EXPECT_EQ(ImportError(m), "model.onnx: graph output 'z' is not produced by any node, initializer or input");
}

TEST(ImportErrors, DeclaredOutputTypeMismatch) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("y", kInt64);
  EXPECT_EQ(ImportError(m), "model.onnx: graph output 'y' is declared INT64, inferred f32");
}

TEST(ImportErrors, InputWithoutShapeRefused) {
  ModelBuilder m(13);
  auto* vi = m.graph()->add_input();
  vi->set_name("x");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(kFloat);
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("y");
  EXPECT_EQ(ImportError(m), "model.onnx: graph input 'x' has no shape (rank unknown)");
}

TEST(ImportErrors, InputWithUnsupportedElementType) {
  ModelBuilder m(13);
  m.Input("x", kUint16, {2});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("y");
  EXPECT_THAT(ImportError(m),
              HasSubstr("model.onnx: graph input 'x' has element type UINT16, expected a supported type"));
}

// ---- attributes and shapes ----------------------------------------------------------------

TEST(ImportErrors, AttributeOfTheWrongType) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2, 3});
  AttrFloat(m.Node("Transpose", {"x"}, {"y"}, "transpose"), "perm", 1.0f);
  m.Output("y");
  EXPECT_EQ(ImportError(m), "model.onnx: node 'transpose' (Transpose): attribute 'perm' has type float, expected ints");
}

TEST(ImportErrors, AttributeWithoutTypeIsInferredFromItsField) {
  // Very old exporters leave AttributeProto.type unset.
  ModelBuilder m(13);
  m.Input("x", kFloat, {2, 3});
  auto* a = m.Node("Transpose", {"x"}, {"y"}, "transpose")->add_attribute();
  a->set_name("perm");
  a->add_ints(1);
  a->add_ints(0);
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "y"), "[3,2]");
}

TEST(ImportErrors, GraphAttributeRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  auto* n = m.Node("Relu", {"x"}, {"y"}, "relu");
  NewAttr(n, "body", onnx::AttributeProto::GRAPH)->mutable_g()->set_name("sub");
  m.Output("y");
  EXPECT_EQ(ImportError(m),
            "model.onnx: node 'relu' (Relu): attribute 'body' has type GRAPH, expected FLOAT, INT, STRING, TENSOR, "
            "FLOATS, INTS or STRINGS (subgraphs, sparse tensors and type protos are not supported)");
}

TEST(ImportErrors, AttributeWithoutTypeOrValue) {
  // An unknown type number parses as UNDEFINED (proto2 keeps it as an unknown field).
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  auto* a = m.Node("Relu", {"x"}, {"y"}, "relu")->add_attribute();
  a->set_name("odd");
  a->set_type(static_cast<onnx::AttributeProto::AttributeType>(99));
  m.Output("y");
  EXPECT_THAT(ImportError(m),
              HasSubstr("model.onnx: node 'relu' (Relu): attribute 'odd' has type UNDEFINED, expected FLOAT, INT"));
}

// ---- sizes: nothing proportional to a declared size is allocated before it is validated ----

TEST(ImportErrors, GraphInputOverTheTensorLimitRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {1000000, 1000000});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("y");
  EXPECT_EQ(ImportError(m),
            "model.onnx: graph input 'x' has shape [1000000,1000000] (1000000000000 f32 elements), expected at most "
            "4 GiB");
  ModelBuilder overflow(13);
  overflow.Input("x", kFloat, {kMaxDim, kMaxDim, kMaxDim});
  overflow.Node("Relu", {"x"}, {"y"}, "relu");
  overflow.Output("y");
  EXPECT_EQ(ImportError(overflow),
            "model.onnx: graph input 'x' has shape [2147483647,2147483647,2147483647] (element count overflows "
            "int64), expected at most 4 GiB");
  ModelBuilder big_dim(13);
  big_dim.Input("x", kFloat, {int64_t{1} << 40, 1});
  big_dim.Node("Relu", {"x"}, {"y"}, "relu");
  big_dim.Output("y");
  EXPECT_EQ(ImportError(big_dim),
            "model.onnx: graph input 'x' has dimension 1099511627776 at axis 0, over the limit of 2147483647");
  ModelBuilder big_rank(13);
  big_rank.Input("x", kFloat, std::vector<DimSpec>(9, DimSpec(1)));
  big_rank.Node("Relu", {"x"}, {"y"}, "relu");
  big_rank.Output("y");
  EXPECT_EQ(ImportError(big_rank), "model.onnx: graph input 'x' has rank 9, over the limit of 8");
  ModelBuilder symbolic(13);  // symbolic dims are bound (and checked) when the model runs
  symbolic.Input("x", kFloat, {"batch", 1000000});
  symbolic.Node("Relu", {"x"}, {"y"}, "relu");
  symbolic.Output("y");
  EXPECT_TRUE(Import(symbolic).ok());
}

TEST(ImportErrors, HugeConstantOfShapeRefusedAtImport) {
  ModelBuilder m(13);
  m.InitI64("shape", {2}, {1000000, 1000000});
  m.Node("ConstantOfShape", {"shape"}, {"y"}, "fill");
  m.Output("y");
  EXPECT_EQ(ImportError(m),
            "model.onnx: node 'fill' (ConstantOfShape): output 'y' has shape [1000000,1000000] (1000000000000 f32 "
            "elements), expected at most 4 GiB");
}

TEST(ImportErrors, ReshapeWithTwoMinusOnes) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2, 3, 4});
  m.InitI64("shape", {2}, {-1, -1});
  m.Node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  m.Output("y");
  EXPECT_EQ(ImportError(m), "model.onnx: node 'reshape' (Reshape): shape [-1,-1] has more than one -1");
}

TEST(ImportErrors, ReshapeElementCountMismatch) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2, 3});
  m.InitI64("shape", {1}, {5});
  m.Node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  m.Output("y");
  EXPECT_EQ(ImportError(m),
            "model.onnx: node 'reshape' (Reshape): cannot reshape [2,3] (6 elements) to [5] (5 elements)");
}

TEST(ImportErrors, TransposeWithABadPerm) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2, 3, 4});
  AttrInts(m.Node("Transpose", {"x"}, {"y"}, "transpose"), "perm", {0, 0, 1});
  m.Output("y");
  EXPECT_EQ(ImportError(m), "model.onnx: node 'transpose' (Transpose): perm [0,0,1] is not a permutation of 0..2");
}

TEST(ImportErrors, SplitSizesDoNotAddUp) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {6, 2});
  m.InitI64("split", {2}, {2, 3});
  m.Node("Split", {"x", "split"}, {"a", "b"}, "split");
  m.Output("a").Output("b");
  EXPECT_EQ(ImportError(m),
            "model.onnx: node 'split' (Split): split sizes [2,3] add up to 5, expected 6 (the size of the split axis)");
}

TEST(ImportErrors, GatherConstantIndexOutOfRange) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {3, 4});
  m.InitI64("idx", {1}, {5});
  m.Node("Gather", {"x", "idx"}, {"y"}, "gather");
  m.Output("y");
  EXPECT_EQ(ImportError(m),
            "model.onnx: node 'gather' (Gather): index 5 in input 'idx' is out of range for axis 0 of size 3");
}

TEST(ImportErrors, MissingRequiredInputOfALoweredOp) {
  // Clip-6 and Softmax-11 are rewritten by the importer; an empty input name must not crash it.
  ModelBuilder clip(7);
  clip.Input("x", kFloat, {2});
  AttrFloat(clip.Node("Clip", {""}, {"y"}, "clip"), "max", 1.0f);
  clip.Output("y");
  EXPECT_THAT(ImportError(clip), HasSubstr("model.onnx: node 'clip' (Clip): "));

  ModelBuilder clip_no_inputs(7);
  clip_no_inputs.Input("x", kFloat, {2});
  clip_no_inputs.Node("Clip", {}, {"y"}, "clip");
  clip_no_inputs.Output("y");
  EXPECT_THAT(ImportError(clip_no_inputs), HasSubstr("model.onnx: node 'clip' (Clip): "));

  ModelBuilder slice(9);
  slice.Input("x", kFloat, {2});
  slice.Node("Slice", {}, {"y"}, "slice");
  slice.Output("y");
  EXPECT_THAT(ImportError(slice), HasSubstr("model.onnx: node 'slice' (Slice): "));

  ModelBuilder softmax(11);
  softmax.Input("x", kFloat, {2});
  softmax.Node("Softmax", {""}, {"y"}, "softmax");
  softmax.Output("y");
  EXPECT_THAT(ImportError(softmax), HasSubstr("model.onnx: node 'softmax' (Softmax): "));
}

TEST(ImportErrors, GeneratedNamesDoNotCollideWithModelNames) {
  // The importer names Clip-6's bounds after the node ("clip/min"); a model value of that name
  // converted later must not clash with them.
  ModelBuilder m(7);
  m.Input("x", kFloat, {3});
  auto* c = m.Node("Clip", {"x"}, {"clipped"}, "clip");
  AttrFloat(c, "min", 0.0f);
  AttrFloat(c, "max", 6.0f);
  m.Node("Relu", {"clipped"}, {"clip/min"}, "relu");
  m.Output("clip/min");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "clip/min"), "[3]");
  EXPECT_EQ((*g)->FindValue("clip/min")->producer->op, "Relu");
}

// ---- not a model --------------------------------------------------------------------------

TEST(ImportErrors, NotAProtobuf) {
  auto g = ImportOnnxBytes(std::string("\x0a\xff\xff\xff\xff\x0f garbage", 14), "junk.onnx", "");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "junk.onnx: not a valid ONNX model (protobuf parse failed; truncated or not a model file)");
}

TEST(ImportErrors, PlainTextIsNotAModel) {
  auto g = ImportOnnxBytes("this is not an onnx model, it is a text file\n", "notes.onnx", "");
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), StartsWith("notes.onnx: not a"));
}

TEST(ImportErrors, EmptyBytes) {
  auto g = ImportOnnxBytes("", "empty.onnx", "");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status().message(), "empty.onnx: file is empty, expected an ONNX model (ModelProto)");
}

TEST(ImportErrors, TruncatedBytes) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2, 3});
  std::vector<float> w(600, 0.5f);
  m.InitF32("w", {2, 300}, w);
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("y");
  std::string bytes = m.Bytes();
  auto g = ImportOnnxBytes(bytes.substr(0, bytes.size() / 2), "cut.onnx", "");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "cut.onnx: not a valid ONNX model (protobuf parse failed; truncated or not a model file)");
}

TEST(ImportErrors, TensorProtoInsteadOfAModel) {
  // An unnamed tensor happens to parse as a model (its empty name reads as an empty opset
  // import); it is still refused.
  onnx::TensorProto t = F32Tensor("", {2, 2}, {1, 2, 3, 4});
  auto g = ImportOnnxBytes(t.SerializeAsString(), "input_0.pb", "");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(), "input_0.pb: model has no graph");

  onnx::TensorProto no_name = t;
  no_name.clear_name();
  auto g1 = ImportOnnxBytes(no_name.SerializeAsString(), "input_2.pb", "");
  ASSERT_FALSE(g1.ok());
  EXPECT_EQ(g1.status().message(), "input_2.pb: not an ONNX model (no graph and no opset import)");

  onnx::TensorProto named = F32Tensor("input", {2}, {1, 2});
  auto g2 = ImportOnnxBytes(named.SerializeAsString(), "input_1.pb", "");
  ASSERT_FALSE(g2.ok());
  EXPECT_THAT(std::string(g2.status().message()), StartsWith("input_1.pb: not a"));
}

TEST(ImportErrors, ModelWithoutGraph) {
  ModelBuilder m(13);
  m.proto().clear_graph();
  EXPECT_EQ(ImportError(m), "model.onnx: model has no graph");
}

TEST(ImportErrors, MissingFileFromImportOnnxFile) {
  auto g = ImportOnnxFile("/nonexistent_gcomp_dir/model.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("/nonexistent_gcomp_dir/model.onnx: cannot open file"));
}

TEST(ImportErrors, ErrorsAreInvalidArgumentOrUnimplemented) {
  ModelBuilder bad_perm(13);
  bad_perm.Input("x", kFloat, {2, 3});
  AttrInts(bad_perm.Node("Transpose", {"x"}, {"y"}, "t"), "perm", {0});
  bad_perm.Output("y");
  EXPECT_EQ(ImportCode(bad_perm), absl::StatusCode::kInvalidArgument);
  ModelBuilder unknown(13);
  unknown.Input("x", kFloat, {2});
  unknown.Node("Nope", {"x"}, {"y"}, "n");
  unknown.Output("y");
  EXPECT_EQ(ImportCode(unknown), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace gcomp::frontend::testing
