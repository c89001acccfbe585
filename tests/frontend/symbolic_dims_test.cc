// Symbolic dims: dim_params, unnamed dims, and the shape arithmetic of dynamic-batch exports.
#include "gmock/gmock.h"
#include "graph/interpreter.h"
#include "gtest/gtest.h"
#include "tests/frontend/model_builder.h"

namespace gcomp::frontend::testing {
namespace {

using ::testing::HasSubstr;

TEST(SymbolicDims, DimParamAndUnnamedDim) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {"batch", 3, DimSpec::Unnamed()});
  m.Input("z", kFloat, {"batch", 5});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Node("Relu", {"z"}, {"w"}, "relu2");
  m.Output("y").Output("w");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Graph& graph = **g;
  ASSERT_EQ(graph.inputs().size(), 2u);
  const Shape& s = graph.inputs()[0]->shape;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], Dim::Symbol("batch"));
  EXPECT_EQ(s[1], Dim(3));
  EXPECT_FALSE(s[2].IsConst());
  EXPECT_NE(s[2], Dim::Symbol("batch"));
  EXPECT_EQ(ShapeToString(s), "[batch,3," + s[2].ToString() + "]");
  // "batch" is one symbol shared by both inputs; the unnamed dim gets its own.
  EXPECT_EQ(graph.symbols.size(), 2u);
  EXPECT_EQ(graph.symbols[0], "batch");
  EXPECT_EQ(graph.symbols[1], s[2].ToString());
  EXPECT_EQ(ShapeOf(graph, "w"), "[batch,5]");
  EXPECT_THAT(PrintGraph(graph), HasSubstr("input %x: f32[batch,3," + s[2].ToString() + "]"));
}

TEST(SymbolicDims, TwoUnnamedDimsAreDistinct) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {DimSpec::Unnamed(), DimSpec::Unnamed()});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Shape& s = (*g)->inputs()[0]->shape;
  EXPECT_NE(s[0], s[1]);
  EXPECT_EQ((*g)->symbols.size(), 2u);
}

TEST(SymbolicDims, NegativeInputDimRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2, -4});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(), "model.onnx: graph input 'x' has negative dimension -4 at axis 1");
}

// x[batch,16,48] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) : [batch,768]
ModelBuilder DynamicBatchFlatten() {
  ModelBuilder m(13);
  m.Input("x", kFloat, {"batch", 16, 48});
  m.InitI64("zero", {}, {0});
  m.InitI64("axes0", {1}, {0});
  m.InitI64("minus_one", {1}, {-1});
  m.Node("Shape", {"x"}, {"shape"}, "shape");
  m.Node("Gather", {"shape", "zero"}, {"b"}, "gather");
  m.Node("Unsqueeze", {"b", "axes0"}, {"b1"}, "unsqueeze");
  AttrInt(m.Node("Concat", {"b1", "minus_one"}, {"target"}, "concat"), "axis", 0);
  m.Node("Reshape", {"x", "target"}, {"y"}, "reshape");
  m.Output("y", kFloat);
  return m;
}

TEST(SymbolicDims, DynamicBatchReshapeChain) {
  auto g = Import(DynamicBatchFlatten());
  ASSERT_TRUE(g.ok()) << g.status();
  const Graph& graph = **g;
  EXPECT_EQ(ShapeOf(graph, "shape"), "[3]");
  EXPECT_EQ(SymValuesOf(graph, "shape"), "batch,16,48");
  EXPECT_EQ(ShapeOf(graph, "b"), "[]");
  EXPECT_EQ(SymValuesOf(graph, "b"), "batch");
  EXPECT_EQ(SymValuesOf(graph, "b1"), "batch");
  EXPECT_EQ(SymValuesOf(graph, "target"), "batch,-1");
  EXPECT_EQ(ShapeOf(graph, "y"), "[batch,768]");
  EXPECT_EQ(graph.FindValue("y")->dtype, DType::kF32);
  EXPECT_TRUE(VerifyGraph(graph).ok()) << VerifyGraph(graph);
  std::string text = PrintGraph(graph);
  EXPECT_THAT(text, HasSubstr("%target: i64[2] = {batch,-1} = Concat[\"concat\"](%b1, %minus_one) {axis=0}"));
  EXPECT_THAT(text, HasSubstr("%y: f32[batch,768] = Reshape[\"reshape\"](%x, %target)"));
  EXPECT_THAT(text, HasSubstr("output %y: f32[batch,768]"));

  // The chain runs for any batch.
  std::vector<float> xs(2 * 16 * 48);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i);
  auto r = RunReference(graph, {{"x", Tensor::FromF32({2, 16, 48}, xs)}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->at("y").dims(), (std::vector<int64_t>{2, 768}));
  EXPECT_EQ(r->at("y").ToF32(), xs);
}

TEST(SymbolicDims, MultiHeadReshapeAndTranspose) {
  // [batch,197,768] -> Reshape [b, 197, 12, 64] (b from Shape/Gather) -> Transpose(0,2,1,3)
  ModelBuilder m(13);
  m.Input("x", kFloat, {"batch", 197, 768});
  m.InitI64("zero", {}, {0});
  m.InitI64("axes0", {1}, {0});
  m.InitI64("rest", {3}, {197, 12, 64});
  m.Node("Shape", {"x"}, {"shape"}, "shape");
  m.Node("Gather", {"shape", "zero"}, {"b"}, "gather");
  m.Node("Unsqueeze", {"b", "axes0"}, {"b1"}, "unsqueeze");
  AttrInt(m.Node("Concat", {"b1", "rest"}, {"target"}, "concat"), "axis", 0);
  m.Node("Reshape", {"x", "target"}, {"heads"}, "reshape");
  AttrInts(m.Node("Transpose", {"heads"}, {"y"}, "transpose"), "perm", {0, 2, 1, 3});
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(SymValuesOf(**g, "target"), "batch,197,12,64");
  EXPECT_EQ(ShapeOf(**g, "heads"), "[batch,197,12,64]");
  EXPECT_EQ(ShapeOf(**g, "y"), "[batch,12,197,64]");
}

TEST(SymbolicDims, BatchTimesHeads) {
  // [batch,12,197,64] -> Reshape [b*12, 197, 64] with b*12 computed by Mul.
  ModelBuilder m(13);
  m.Input("x", kFloat, {"batch", 12, 197, 64});
  m.InitI64("zero", {}, {0});
  m.InitI64("twelve", {}, {12});
  m.InitI64("axes0", {1}, {0});
  m.InitI64("rest", {2}, {197, 64});
  m.Node("Shape", {"x"}, {"shape"}, "shape");
  m.Node("Gather", {"shape", "zero"}, {"b"}, "gather");
  m.Node("Mul", {"b", "twelve"}, {"bh"}, "mul");
  m.Node("Unsqueeze", {"bh", "axes0"}, {"bh1"}, "unsqueeze");
  AttrInt(m.Node("Concat", {"bh1", "rest"}, {"target"}, "concat"), "axis", 0);
  m.Node("Reshape", {"x", "target"}, {"y"}, "reshape");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Value* bh = (*g)->FindValue("bh");
  ASSERT_TRUE(bh->sym_values.has_value());
  ASSERT_EQ(bh->sym_values->size(), 1u);
  auto expected = Dim::Mul(Dim::Symbol("batch"), Dim(12));
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ((*bh->sym_values)[0], *expected);
  EXPECT_EQ(SymValuesOf(**g, "bh"), expected->ToString());
  EXPECT_EQ(ShapeOf(**g, "y"), "[" + expected->ToString() + ",197,64]");
  EXPECT_THAT(PrintGraph(**g), HasSubstr("%bh: i64[] = {" + expected->ToString() + "} = Mul[\"mul\"](%b, %twelve)"));
}

TEST(SymbolicDims, ReshapeWithMinusOneFoldsHeadsIntoBatch) {
  // [batch,12,64] -> Reshape [-1, 64] folds the heads into the batch: [batch*12,64].
  ModelBuilder m(13);
  m.Input("x", kFloat, {"batch", 12, 64});
  m.InitI64("flat", {2}, {-1, 64});
  m.Node("Reshape", {"x", "flat"}, {"f"}, "flatten");
  m.Output("f");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  auto expected = Dim::Mul(Dim::Symbol("batch"), Dim(12));
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ((*g)->FindValue("f")->shape[0], *expected);
  EXPECT_EQ(ShapeOf(**g, "f"), "[" + expected->ToString() + ",64]");
}

TEST(SymbolicDims, ShapeOfSymbolicInputFeedsExpandAndConstantOfShape) {
  // ConstantOfShape(Shape(x)) and Expand(c, Shape(x)) keep the batch symbol.
  ModelBuilder m(13);
  m.Input("x", kFloat, {"batch", 4});
  m.InitF32("one", {1}, {1.0f});
  m.Node("Shape", {"x"}, {"shape"}, "shape");
  onnx::NodeProto* c = m.Node("ConstantOfShape", {"shape"}, {"zeros"}, "cos");
  AttrTensor(c, "value", F32Tensor("", {1}, {0.0f}));
  m.Node("Expand", {"one", "shape"}, {"ones"}, "expand");
  m.Node("Add", {"zeros", "ones"}, {"y"}, "add");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "zeros"), "[batch,4]");
  EXPECT_EQ(ShapeOf(**g, "ones"), "[batch,4]");
  EXPECT_EQ(ShapeOf(**g, "y"), "[batch,4]");
}

TEST(SymbolicDims, WhereEqualShapeSelect) {
  // The exporter's "0 means copy" idiom: Where(Equal(target, 0), Shape(x), target).
  ModelBuilder m(13);
  m.Input("x", kFloat, {"batch", 6});
  m.InitI64("target", {2}, {0, 6});
  m.InitI64("zeros", {2}, {0, 0});
  m.Node("Shape", {"x"}, {"shape"}, "shape");
  m.Node("Equal", {"target", "zeros"}, {"is_zero"}, "equal");
  m.Node("Where", {"is_zero", "shape", "target"}, {"resolved"}, "where");
  m.Node("Reshape", {"x", "resolved"}, {"y"}, "reshape");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindValue("is_zero")->dtype, DType::kBool);
  EXPECT_EQ(SymValuesOf(**g, "resolved"), "batch,6");
  EXPECT_EQ(ShapeOf(**g, "y"), "[batch,6]");
}

TEST(SymbolicDims, RangeFromConstants) {
  ModelBuilder m(13);
  m.Input("x", kInt64, {5});
  m.InitI64("start", {}, {0});
  m.InitI64("limit", {}, {5});
  m.InitI64("delta", {}, {1});
  m.Node("Range", {"start", "limit", "delta"}, {"r"}, "range");
  m.Node("Add", {"x", "r"}, {"y"}, "add");
  m.Output("y", kInt64);
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "r"), "[5]");
  EXPECT_EQ(SymValuesOf(**g, "r"), "0,1,2,3,4");
}

TEST(SymbolicDims, LayerNormMatMulKeepBatch) {
  ModelBuilder m(17);
  m.Input("x", kFloat, {"batch", 4, 8});
  m.InitF32("gamma", {8}, std::vector<float>(8, 1.0f));
  m.InitF32("beta", {8}, std::vector<float>(8, 0.0f));
  m.InitF32("w", {8, 16}, std::vector<float>(128, 0.5f));
  m.InitF32("b", {16}, std::vector<float>(16, 0.25f));
  AttrFloat(m.Node("LayerNormalization", {"x", "gamma", "beta"}, {"ln"}, "ln"), "epsilon", 1e-5f);
  m.Node("MatMul", {"ln", "w"}, {"mm"}, "matmul");
  m.Node("Add", {"mm", "b"}, {"y"}, "add");
  m.Output("y", kFloat);
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "ln"), "[batch,4,8]");
  EXPECT_EQ(ShapeOf(**g, "mm"), "[batch,4,16]");
  EXPECT_EQ(ShapeOf(**g, "y"), "[batch,4,16]");
}

TEST(SymbolicDims, ConvKeepsBatch) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {"N", 3, 8, 8});
  m.InitF32("w", {4, 3, 3, 3}, std::vector<float>(108, 0.1f));
  auto* c = m.Node("Conv", {"x", "w"}, {"y"}, "conv");
  AttrInts(c, "kernel_shape", {3, 3});
  AttrInts(c, "pads", {1, 1, 1, 1});
  AttrInts(c, "strides", {2, 2});
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "y"), "[N,4,4,4]");
}

TEST(SymbolicDims, Opset11AttentionScoresSoftmaxOnLastAxisStaysOneNode) {
  // PyTorch's opset-11 export writes the positive last axis (3) on MatMul output scores.
  ModelBuilder m(11);
  m.Input("q", kFloat, {"batch", 12, 197, 64});
  m.Input("k", kFloat, {"batch", 12, 197, 64});
  AttrInts(m.Node("Transpose", {"k"}, {"kt"}, "kt"), "perm", {0, 1, 3, 2});
  m.Node("MatMul", {"q", "kt"}, {"scores"}, "qk");
  AttrInt(m.Node("Softmax", {"scores"}, {"probs"}, "softmax"), "axis", 3);
  m.Output("probs");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OpSequence(**g), (std::vector<std::string>{"Transpose", "MatMul", "Softmax"}));
  EXPECT_EQ(NodesOf(**g, "Softmax")[0]->attrs.GetInt("axis", 0), -1);
  EXPECT_EQ(ShapeOf(**g, "probs"), "[batch,12,197,197]");
}

}  // namespace
}  // namespace gcomp::frontend::testing
