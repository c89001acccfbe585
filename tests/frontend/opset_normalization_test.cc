// Opset normalization: every opset form of an op imports to the same canonical IR.
#include <cmath>
#include <functional>

#include "gmock/gmock.h"
#include "graph/interpreter.h"
#include "gtest/gtest.h"
#include "tests/frontend/model_builder.h"

namespace gcomp::frontend::testing {
namespace {

using ::testing::HasSubstr;

std::vector<int64_t> IntsAttr(const Node& n, const std::string& name) {
  const AttrValue* v = n.attrs.Find(name);
  if (!v || !std::holds_alternative<std::vector<int64_t>>(*v)) return {-999};
  return std::get<std::vector<int64_t>>(*v);
}

std::vector<float> RunOne(const Graph& g, const std::string& input, const Tensor& value, const std::string& output) {
  auto r = RunReference(g, {{input, value}});
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  return r->at(output).ToF32();
}

// ---- Squeeze / Unsqueeze ------------------------------------------------------------------

std::unique_ptr<Graph> SqueezeModel(int64_t opset) {
  ModelBuilder m(opset);
  m.Input("x", kFloat, {2, 1, 3, 1});
  if (opset >= 13) {
    m.InitI64("axes", {2}, {1, -1});
    m.Node("Squeeze", {"x", "axes"}, {"y"}, "sq");
  } else {
    AttrInts(m.Node("Squeeze", {"x"}, {"y"}, "sq"), "axes", {1, -1});
  }
  m.Output("y");
  auto g = Import(m);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : nullptr;
}

TEST(OpsetNormalization, SqueezeAxesAttributeAndInputGiveSameIr) {
  auto g11 = SqueezeModel(11);
  auto g13 = SqueezeModel(13);
  ASSERT_TRUE(g11 && g13);
  for (const Graph* g : {g11.get(), g13.get()}) {
    ASSERT_EQ(g->num_nodes(), 1u);
    const Node& n = *g->nodes()[0];
    EXPECT_EQ(n.op, "Squeeze");
    EXPECT_EQ(n.inputs.size(), 1u);
    EXPECT_EQ(IntsAttr(n, "axes"), (std::vector<int64_t>{1, -1}));
    EXPECT_EQ(ShapeOf(*g, "y"), "[2,3]");
  }
  EXPECT_EQ(g11->opset, 11);
  EXPECT_EQ(g13->opset, 13);
  EXPECT_EQ(PrintBody(*g11), PrintBody(*g13));
  EXPECT_THAT(PrintBody(*g13), HasSubstr("%y: f32[2,3] = Squeeze[\"sq\"](%x) {axes=[1,-1]}"));
}

std::unique_ptr<Graph> UnsqueezeModel(int64_t opset) {
  ModelBuilder m(opset);
  m.Input("x", kFloat, {2, 3});
  if (opset >= 13) {
    m.InitI64("axes", {2}, {0, 3});
    m.Node("Unsqueeze", {"x", "axes"}, {"y"}, "unsq");
  } else {
    AttrInts(m.Node("Unsqueeze", {"x"}, {"y"}, "unsq"), "axes", {0, 3});
  }
  m.Output("y");
  auto g = Import(m);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : nullptr;
}

TEST(OpsetNormalization, UnsqueezeAxesAttributeAndInputGiveSameIr) {
  auto g11 = UnsqueezeModel(11);
  auto g13 = UnsqueezeModel(13);
  ASSERT_TRUE(g11 && g13);
  for (const Graph* g : {g11.get(), g13.get()}) {
    const Node& n = *g->nodes()[0];
    EXPECT_EQ(n.inputs.size(), 1u);
    EXPECT_EQ(IntsAttr(n, "axes"), (std::vector<int64_t>{0, 3}));
    EXPECT_EQ(ShapeOf(*g, "y"), "[1,2,3,1]");
  }
  EXPECT_EQ(PrintBody(*g11), PrintBody(*g13));
}

// Axes known only at run time (a graph input, as in ONNX's node tests) stay an input: the output
// shape is data-dependent at import and concrete when the reference interpreter runs.
TEST(OpsetNormalization, UnsqueezeRuntimeAxesInputStaysAnInput) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2, 3});
  m.Input("axes", kInt64, {2});
  m.Node("Unsqueeze", {"x", "axes"}, {"y"}, "unsq");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& n = *(*g)->nodes()[0];
  EXPECT_EQ(n.inputs.size(), 2u);
  EXPECT_FALSE(n.attrs.Has("axes"));
  EXPECT_EQ(ShapeOf(**g, "y"), "[?unsq:0:0,?unsq:0:1,?unsq:0:2,?unsq:0:3]");
  auto r =
      RunReference(**g, {{"x", Tensor::FromF32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"axes", Tensor::FromI64({2}, {0, -1})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->at("y").dims(), (std::vector<int64_t>{1, 2, 3, 1}));
  EXPECT_EQ(r->at("y").ToF32(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(OpsetNormalization, ReduceSumAndSplitRuntimeInputsStayInputs) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2, 3});
  m.Input("axes", kInt64, {1});
  m.Input("split", kInt64, {2});
  AttrInt(m.Node("ReduceSum", {"x", "axes"}, {"s"}, "sum"), "keepdims", 0);
  AttrInt(m.Node("Split", {"x", "split"}, {"a", "b"}, "split"), "axis", 1);
  m.Output("s").Output("a").Output("b");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "s"), "[?sum:0:0]");
  EXPECT_EQ(ShapeOf(**g, "a"), "[2,?split:0:0]");
  auto r = RunReference(**g, {{"x", Tensor::FromF32({2, 3}, {1, 2, 3, 4, 5, 6})},
                              {"axes", Tensor::FromI64({1}, {-1})},
                              {"split", Tensor::FromI64({2}, {1, 2})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->at("s").ToF32(), (std::vector<float>{6, 15}));
  EXPECT_EQ(r->at("a").ToF32(), (std::vector<float>{1, 4}));
  EXPECT_EQ(r->at("b").ToF32(), (std::vector<float>{2, 3, 5, 6}));
}

// ---- Split --------------------------------------------------------------------------------

std::unique_ptr<Graph> SplitModel(int64_t opset) {
  ModelBuilder m(opset);
  m.Input("x", kFloat, {6, 4});
  onnx::NodeProto* n;
  if (opset >= 13) {
    m.InitI64("split", {2}, {2, 4});
    n = m.Node("Split", {"x", "split"}, {"a", "b"}, "split");
  } else {
    n = m.Node("Split", {"x"}, {"a", "b"}, "split");
    AttrInts(n, "split", {2, 4});
  }
  AttrInt(n, "axis", 0);
  m.Output("a").Output("b");
  auto g = Import(m);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : nullptr;
}

TEST(OpsetNormalization, SplitAttributeAndInputGiveSameIr) {
  auto g11 = SplitModel(11);
  auto g13 = SplitModel(13);
  ASSERT_TRUE(g11 && g13);
  for (const Graph* g : {g11.get(), g13.get()}) {
    const Node& n = *g->nodes()[0];
    EXPECT_EQ(n.inputs.size(), 1u);
    EXPECT_EQ(IntsAttr(n, "split"), (std::vector<int64_t>{2, 4}));
    EXPECT_EQ(ShapeOf(*g, "a"), "[2,4]");
    EXPECT_EQ(ShapeOf(*g, "b"), "[4,4]");
  }
  EXPECT_EQ(PrintBody(*g11), PrintBody(*g13));
}

TEST(OpsetNormalization, SplitOpset18NumOutputs) {
  ModelBuilder m(18);
  m.Input("x", kFloat, {7, 2});
  auto* n = m.Node("Split", {"x"}, {"a", "b", "c"}, "split");
  AttrInt(n, "num_outputs", 3);
  m.Output("a").Output("b").Output("c");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "a"), "[3,2]");
  EXPECT_EQ(ShapeOf(**g, "b"), "[3,2]");
  EXPECT_EQ(ShapeOf(**g, "c"), "[1,2]");
}

// ---- ReduceSum / ReduceMean ---------------------------------------------------------------

std::unique_ptr<Graph> ReduceModel(const std::string& op, int64_t opset, bool axes_as_input) {
  ModelBuilder m(opset);
  m.Input("x", kFloat, {2, 3, 4});
  onnx::NodeProto* n;
  if (axes_as_input) {
    m.InitI64("axes", {1}, {1});
    n = m.Node(op, {"x", "axes"}, {"y"}, "reduce");
  } else {
    n = m.Node(op, {"x"}, {"y"}, "reduce");
    AttrInts(n, "axes", {1});
  }
  AttrInt(n, "keepdims", 0);
  m.Output("y");
  auto g = Import(m);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : nullptr;
}

TEST(OpsetNormalization, ReduceSumAxesAttributeOpset11AndInputOpset13) {
  auto g11 = ReduceModel("ReduceSum", 11, false);
  auto g13 = ReduceModel("ReduceSum", 13, true);
  ASSERT_TRUE(g11 && g13);
  for (const Graph* g : {g11.get(), g13.get()}) {
    const Node& n = *g->nodes()[0];
    EXPECT_EQ(n.op, "ReduceSum");
    EXPECT_EQ(n.inputs.size(), 1u);
    EXPECT_EQ(IntsAttr(n, "axes"), (std::vector<int64_t>{1}));
    EXPECT_EQ(ShapeOf(*g, "y"), "[2,4]");
  }
  EXPECT_EQ(PrintBody(*g11), PrintBody(*g13));
}

TEST(OpsetNormalization, ReduceMeanAxesAttributeOpset17AndInputOpset18) {
  auto g17 = ReduceModel("ReduceMean", 17, false);
  auto g18 = ReduceModel("ReduceMean", 18, true);
  ASSERT_TRUE(g17 && g18);
  for (const Graph* g : {g17.get(), g18.get()}) {
    const Node& n = *g->nodes()[0];
    EXPECT_EQ(n.op, "ReduceMean");
    EXPECT_EQ(n.inputs.size(), 1u);
    EXPECT_EQ(IntsAttr(n, "axes"), (std::vector<int64_t>{1}));
    EXPECT_EQ(ShapeOf(*g, "y"), "[2,4]");
  }
  EXPECT_EQ(PrintBody(*g17), PrintBody(*g18));
}

TEST(OpsetNormalization, ReduceSumOpset13WithoutAxesReducesEverything) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2, 3});
  m.Node("ReduceSum", {"x"}, {"y"}, "reduce");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE(g->get()->nodes()[0]->attrs.Has("axes"));
  EXPECT_EQ(ShapeOf(**g, "y"), "[1,1]");
}

// ---- Clip ---------------------------------------------------------------------------------

TEST(OpsetNormalization, ClipAttributesOpset7BecomeConstantInputs) {
  ModelBuilder m7(7);
  m7.Input("x", kFloat, {4});
  auto* n = m7.Node("Clip", {"x"}, {"y"}, "clip");
  AttrFloat(n, "min", 0.0f);
  AttrFloat(n, "max", 6.0f);
  m7.Output("y");
  auto g7 = Import(m7);
  ASSERT_TRUE(g7.ok()) << g7.status();
  EXPECT_TRUE(VerifyGraph(**g7).ok()) << VerifyGraph(**g7);
  const Node& c = *(*g7)->nodes()[0];
  EXPECT_EQ(c.op, "Clip");
  EXPECT_TRUE(c.attrs.all().empty());
  ASSERT_EQ(c.inputs.size(), 3u);
  ASSERT_TRUE(c.inputs[1] && c.inputs[1]->is_constant());
  ASSERT_TRUE(c.inputs[2] && c.inputs[2]->is_constant());
  EXPECT_EQ(c.inputs[1]->constant->dtype(), DType::kF32);
  EXPECT_EQ(c.inputs[1]->constant->rank(), 0);
  EXPECT_EQ(c.inputs[1]->constant->GetF32(0), 0.0f);
  EXPECT_EQ(c.inputs[2]->constant->GetF32(0), 6.0f);
  EXPECT_EQ(RunOne(**g7, "x", Tensor::FromF32({4}, {-1.0f, 3.0f, 8.0f, 6.0f}), "y"),
            (std::vector<float>{0.0f, 3.0f, 6.0f, 6.0f}));

  // The opset-11 form with initializers named like the generated constants prints the same.
  ModelBuilder m11(11);
  m11.Input("x", kFloat, {4});
  m11.InitF32("clip/min", {}, {0.0f});
  m11.InitF32("clip/max", {}, {6.0f});
  m11.Node("Clip", {"x", "clip/min", "clip/max"}, {"y"}, "clip");
  m11.Output("y");
  auto g11 = Import(m11);
  ASSERT_TRUE(g11.ok()) << g11.status();
  EXPECT_EQ(PrintBody(**g7), PrintBody(**g11));
}

TEST(OpsetNormalization, ClipOpset7WithOnlyMax) {
  ModelBuilder m(7);
  m.Input("x", kFloat, {3});
  AttrFloat(m.Node("Clip", {"x"}, {"y"}, "clip"), "max", 1.0f);
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& c = *(*g)->nodes()[0];
  ASSERT_EQ(c.inputs.size(), 3u);
  EXPECT_EQ(c.inputs[1], nullptr);
  ASSERT_NE(c.inputs[2], nullptr);
  EXPECT_EQ(c.inputs[2]->constant->GetF32(0), 1.0f);
  EXPECT_EQ(RunOne(**g, "x", Tensor::FromF32({3}, {-5.0f, 0.5f, 2.0f}), "y"), (std::vector<float>{-5.0f, 0.5f, 1.0f}));
}

TEST(OpsetNormalization, ClipOpset7OnFloat16InputGetsFloat16Bounds) {
  // Clip-6 bounds are float attributes; the canonical Clip wants them in the input's dtype.
  ModelBuilder m(7);
  m.Input("x", kFloat16, {3});
  m.Node("Relu", {"x"}, {"r"}, "relu");
  auto* n = m.Node("Clip", {"r"}, {"y"}, "clip");
  AttrFloat(n, "min", 0.0f);
  AttrFloat(n, "max", 6.0f);
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& c = *NodesOf(**g, "Clip")[0];
  EXPECT_EQ(c.inputs[1]->constant->dtype(), DType::kF16);
  EXPECT_EQ(c.inputs[2]->constant->GetF32(0), 6.0f);
  EXPECT_EQ((*g)->FindValue("y")->dtype, DType::kF16);
}

// ---- Slice --------------------------------------------------------------------------------

TEST(OpsetNormalization, SliceAttributesOpset9BecomeInputs) {
  ModelBuilder m9(9);
  m9.Input("x", kFloat, {2, 5});
  auto* n = m9.Node("Slice", {"x"}, {"y"}, "sl");
  AttrInts(n, "starts", {1});
  AttrInts(n, "ends", {4});
  AttrInts(n, "axes", {1});
  m9.Output("y");
  auto g9 = Import(m9);
  ASSERT_TRUE(g9.ok()) << g9.status();
  EXPECT_TRUE(VerifyGraph(**g9).ok()) << VerifyGraph(**g9);
  const Node& s = *(*g9)->nodes()[0];
  EXPECT_TRUE(s.attrs.all().empty());
  ASSERT_EQ(s.inputs.size(), 4u);
  EXPECT_EQ(s.inputs[1]->constant->ToI64(), (std::vector<int64_t>{1}));
  EXPECT_EQ(s.inputs[2]->constant->ToI64(), (std::vector<int64_t>{4}));
  EXPECT_EQ(s.inputs[3]->constant->ToI64(), (std::vector<int64_t>{1}));
  EXPECT_EQ(s.inputs[1]->constant->dtype(), DType::kI64);
  EXPECT_EQ(ShapeOf(**g9, "y"), "[2,3]");
  EXPECT_EQ(RunOne(**g9, "x", Tensor::FromF32({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), "y"),
            (std::vector<float>{1, 2, 3, 6, 7, 8}));

  ModelBuilder m10(10);
  m10.Input("x", kFloat, {2, 5});
  m10.InitI64("sl/starts", {1}, {1});
  m10.InitI64("sl/ends", {1}, {4});
  m10.InitI64("sl/axes", {1}, {1});
  m10.Node("Slice", {"x", "sl/starts", "sl/ends", "sl/axes"}, {"y"}, "sl");
  m10.Output("y");
  auto g10 = Import(m10);
  ASSERT_TRUE(g10.ok()) << g10.status();
  EXPECT_EQ(PrintBody(**g9), PrintBody(**g10));
}

TEST(OpsetNormalization, SliceOpset9WithoutAxes) {
  ModelBuilder m(9);
  m.Input("x", kFloat, {4, 5});
  auto* n = m.Node("Slice", {"x"}, {"y"}, "sl");
  AttrInts(n, "starts", {1, 0});
  AttrInts(n, "ends", {3, -1});
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& s = *(*g)->nodes()[0];
  EXPECT_EQ(s.input(3), nullptr);
  EXPECT_EQ(ShapeOf(**g, "y"), "[2,4]");
}

// ---- Pad ----------------------------------------------------------------------------------

std::unique_ptr<Graph> PadModel(int64_t opset) {
  ModelBuilder m(opset);
  m.Input("x", kFloat, {2, 3});
  onnx::NodeProto* n;
  if (opset < 11) {
    n = m.Node("Pad", {"x"}, {"y"}, "pad");
    AttrInts(n, "pads", {0, 1, 0, 2});
    AttrFloat(n, "value", 1.5f);
  } else if (opset < 18) {
    m.InitI64("pads", {4}, {0, 1, 0, 2});
    m.InitF32("cv", {}, {1.5f});
    n = m.Node("Pad", {"x", "pads", "cv"}, {"y"}, "pad");
  } else {
    m.InitI64("pads", {2}, {1, 2});
    m.InitF32("cv", {}, {1.5f});
    m.InitI64("axes", {1}, {-1});
    n = m.Node("Pad", {"x", "pads", "cv", "axes"}, {"y"}, "pad");
  }
  AttrString(n, "mode", "constant");
  m.Output("y");
  auto g = Import(m);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : nullptr;
}

TEST(OpsetNormalization, PadOpset2AttributesAndOpset11InputsGiveSameIr) {
  auto g7 = PadModel(7);
  auto g11 = PadModel(11);
  ASSERT_TRUE(g7 && g11);
  for (const Graph* g : {g7.get(), g11.get()}) {
    const Node& n = *g->nodes()[0];
    EXPECT_EQ(n.inputs.size(), 1u);
    EXPECT_EQ(IntsAttr(n, "pads"), (std::vector<int64_t>{0, 1, 0, 2}));
    EXPECT_EQ(n.attrs.GetFloat("value", 0.0f), 1.5f);
    EXPECT_EQ(n.attrs.GetString("mode", ""), "constant");
    EXPECT_EQ(ShapeOf(*g, "y"), "[2,6]");
  }
  EXPECT_EQ(PrintBody(*g7), PrintBody(*g11));
}

TEST(OpsetNormalization, PadOpset18AxesInputBecomesAttribute) {
  auto g18 = PadModel(18);
  auto g7 = PadModel(7);
  ASSERT_TRUE(g18 && g7);
  const Node& n = *g18->nodes()[0];
  EXPECT_EQ(n.inputs.size(), 1u);
  EXPECT_EQ(IntsAttr(n, "axes"), (std::vector<int64_t>{-1}));
  EXPECT_EQ(IntsAttr(n, "pads"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(n.attrs.GetFloat("value", 0.0f), 1.5f);
  EXPECT_EQ(ShapeOf(*g18, "y"), "[2,6]");
  Tensor x = Tensor::FromF32({2, 3}, {1, 2, 3, 4, 5, 6});
  std::vector<float> expected = {1.5f, 1, 2, 3, 1.5f, 1.5f, 1.5f, 4, 5, 6, 1.5f, 1.5f};
  EXPECT_EQ(RunOne(*g18, "x", x, "y"), expected);
  EXPECT_EQ(RunOne(*g7, "x", x, "y"), expected);
}

TEST(OpsetNormalization, PadOpset11WithoutConstantValueDefaultsToZero) {
  ModelBuilder m(11);
  m.Input("x", kFloat, {2});
  m.InitI64("pads", {2}, {1, 1});
  m.Node("Pad", {"x", "pads"}, {"y"}, "pad");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->get()->nodes()[0]->attrs.GetFloat("value", -1.0f), 0.0f);
  EXPECT_EQ(RunOne(**g, "x", Tensor::FromF32({2}, {7, 8}), "y"), (std::vector<float>{0, 7, 8, 0}));
}

TEST(OpsetNormalization, PadOpset11RuntimePadsStayInputs) {
  ModelBuilder m(11);
  m.Input("x", kFloat, {2});
  m.Input("pads", kInt64, {2});
  m.InitF32("value", {}, {2.5f});
  m.Node("Pad", {"x", "pads", "value"}, {"y"}, "pad");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->nodes()[0]->inputs.size(), 3u);
  EXPECT_EQ(ShapeOf(**g, "y"), "[?pad:0:0]");
  auto r = RunReference(**g, {{"x", Tensor::FromF32({2}, {7, 8})}, {"pads", Tensor::FromI64({2}, {1, 2})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->at("y").ToF32(), (std::vector<float>{2.5f, 7, 8, 2.5f, 2.5f}));
}

// ---- Softmax ------------------------------------------------------------------------------

TEST(OpsetNormalization, SoftmaxOpset11Axis1OnRank3LowersToFlattenSoftmaxReshape) {
  ModelBuilder m(11);
  m.Input("x", kFloat, {2, 3, 4});
  AttrInt(m.Node("Softmax", {"x"}, {"y"}, "sm"), "axis", 1);
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OpSequence(**g), (std::vector<std::string>{"Flatten", "Softmax", "Shape", "Reshape"}));
  EXPECT_TRUE(VerifyGraph(**g).ok()) << VerifyGraph(**g);
  const Node& flat = *NodesOf(**g, "Flatten")[0];
  EXPECT_EQ(flat.attrs.GetInt("axis", -7), 1);
  EXPECT_EQ(ShapeToString(flat.outputs[0]->shape), "[2,12]");
  const Node& sm = *NodesOf(**g, "Softmax")[0];
  EXPECT_EQ(sm.attrs.GetInt("axis", -7), 1);
  for (const Node* n : (*g)->nodes()) EXPECT_EQ(n->origin, (std::vector<std::string>{"sm"}));
  EXPECT_EQ(ShapeOf(**g, "y"), "[2,3,4]");
  EXPECT_EQ((*g)->FindValue("y")->dtype, DType::kF32);

  // Legacy semantics: each batch row is normalized over all 3*4 trailing elements.
  std::vector<float> xs(24);
  for (int i = 0; i < 24; ++i) xs[i] = 0.25f * static_cast<float>(i % 7) - 0.5f * static_cast<float>(i / 12);
  std::vector<float> y = RunOne(**g, "x", Tensor::FromF32({2, 3, 4}, xs), "y");
  ASSERT_EQ(y.size(), 24u);
  for (int b = 0; b < 2; ++b) {
    double sum = 0.0;
    for (int j = 0; j < 12; ++j) sum += std::exp(static_cast<double>(xs[b * 12 + j]));
    for (int j = 0; j < 12; ++j) {
      double expected = std::exp(static_cast<double>(xs[b * 12 + j])) / sum;
      EXPECT_NEAR(y[b * 12 + j], expected, 1e-6) << "b=" << b << " j=" << j;
    }
  }
  // Not the opset-13 semantics (normalizing over axis 1 only): a column of 3 would sum to 1.
  EXPECT_GT(std::abs(y[0] + y[4] + y[8] - 1.0f), 0.1f);
}

TEST(OpsetNormalization, SoftmaxOpset11DefaultAxisIsOne) {
  ModelBuilder m(11);
  m.Input("x", kFloat, {2, 3, 4});
  m.Node("Softmax", {"x"}, {"y"}, "sm");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OpSequence(**g), (std::vector<std::string>{"Flatten", "Softmax", "Shape", "Reshape"}));
  EXPECT_EQ(NodesOf(**g, "Flatten")[0]->attrs.GetInt("axis", -7), 1);
}

TEST(OpsetNormalization, SoftmaxOpset11LastAxisStaysOneNode) {
  for (int64_t axis : {int64_t{-1}, int64_t{2}}) {
    ModelBuilder m(11);
    m.Input("x", kFloat, {2, 3, 4});
    AttrInt(m.Node("Softmax", {"x"}, {"y"}, "sm"), "axis", axis);
    m.Output("y");
    auto g = Import(m);
    ASSERT_TRUE(g.ok()) << g.status();
    ASSERT_EQ((*g)->num_nodes(), 1u) << "axis " << axis;
    const Node& n = *(*g)->nodes()[0];
    EXPECT_EQ(n.op, "Softmax");
    EXPECT_EQ(n.attrs.GetInt("axis", -7), -1);
    EXPECT_EQ(ShapeOf(**g, "y"), "[2,3,4]");
  }
}

TEST(OpsetNormalization, SoftmaxOpset11OnIntermediateValue) {
  // The input of Softmax is produced by a node: its rank is only known after that node's
  // shape inference (attention scores come out of a MatMul in real models).
  for (int64_t axis : {int64_t{-1}, int64_t{1}}) {
    ModelBuilder m(11);
    m.Input("x", kFloat, {2, 3, 4});
    m.Node("Relu", {"x"}, {"r"}, "relu");
    AttrInt(m.Node("Softmax", {"r"}, {"y"}, "sm"), "axis", axis);
    m.Output("y");
    auto g = Import(m);
    ASSERT_TRUE(g.ok()) << "axis " << axis << ": " << g.status();
    EXPECT_EQ((*g)->num_nodes(), axis == -1 ? 2u : 5u);
    EXPECT_EQ(ShapeOf(**g, "y"), "[2,3,4]");
  }
}

TEST(OpsetNormalization, SoftmaxOpset11AxisOutOfRange) {
  ModelBuilder m(11);
  m.Input("x", kFloat, {2, 3});
  AttrInt(m.Node("Softmax", {"x"}, {"y"}, "sm"), "axis", 2);
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("model.onnx: node 'sm' (Softmax): axis 2 is out of range for rank 2"));
}

TEST(OpsetNormalization, SoftmaxOpset13KeepsAxis) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2, 3, 4});
  AttrInt(m.Node("Softmax", {"x"}, {"y"}, "sm"), "axis", 1);
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ((*g)->num_nodes(), 1u);
  EXPECT_EQ((*g)->nodes()[0]->attrs.GetInt("axis", -7), 1);
}

// ---- BatchNormalization / Dropout ---------------------------------------------------------

ModelBuilder BatchNormModel(int64_t spatial) {
  ModelBuilder m(7);
  m.Input("x", kFloat, {1, 2, 3, 3});
  m.InitF32("scale", {2}, {1, 2}).InitF32("bias", {2}, {0, 1});
  m.InitF32("mean", {2}, {0, 0}).InitF32("var", {2}, {1, 1});
  auto* n = m.Node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn");
  AttrFloat(n, "epsilon", 1e-3f);
  AttrFloat(n, "momentum", 0.9f);
  AttrInt(n, "spatial", spatial);
  m.Output("y");
  return m;
}

TEST(OpsetNormalization, BatchNormalizationOpset7Spatial1Accepted) {
  auto g = Import(BatchNormModel(1));
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& n = *(*g)->nodes()[0];
  EXPECT_EQ(n.op, "BatchNormalization");
  EXPECT_FALSE(n.attrs.Has("spatial"));
  EXPECT_FLOAT_EQ(n.attrs.GetFloat("epsilon", 0.0f), 1e-3f);
  EXPECT_EQ(n.inputs.size(), 5u);
  EXPECT_EQ(ShapeOf(**g, "y"), "[1,2,3,3]");
}

TEST(OpsetNormalization, BatchNormalizationOpset7Spatial0Refused) {
  auto g = Import(BatchNormModel(0));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("model.onnx: node 'bn' (BatchNormalization): spatial=0"));
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("expected spatial=1"));
}

TEST(OpsetNormalization, BatchNormalizationTrainingOutputsRefused) {
  ModelBuilder m(15);
  m.Input("x", kFloat, {1, 2, 3, 3});
  m.InitF32("scale", {2}, {1, 2}).InitF32("bias", {2}, {0, 1});
  m.InitF32("mean", {2}, {0, 0}).InitF32("var", {2}, {1, 1});
  m.Node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y", "running_mean"}, "bn");
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(
      std::string(g.status().message()),
      HasSubstr("model.onnx: node 'bn' (BatchNormalization): training outputs (running mean/var) are not supported"));
}

TEST(OpsetNormalization, DropoutOpset7Imported) {
  ModelBuilder m(7);
  m.Input("x", kFloat, {2, 3});
  AttrFloat(m.Node("Dropout", {"x"}, {"y", "mask"}, "drop"), "ratio", 0.3f);
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& n = *(*g)->nodes()[0];
  EXPECT_EQ(n.op, "Dropout");
  EXPECT_EQ(n.inputs.size(), 1u);
  EXPECT_TRUE(n.attrs.all().empty());
  EXPECT_EQ(ShapeOf(**g, "y"), "[2,3]");
  EXPECT_EQ((*g)->FindValue("mask")->dtype, DType::kBool);
  EXPECT_EQ(RunOne(**g, "x", Tensor::FromF32({2, 3}, {1, 2, 3, 4, 5, 6}), "y"), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(OpsetNormalization, DropoutOpset12TrainingModeFalseImported) {
  ModelBuilder m(12);
  m.Input("x", kFloat, {2, 3});
  m.InitF32("ratio", {}, {0.5f});
  m.Initializer(BoolTensor("training_mode", {}, {0}));
  m.Node("Dropout", {"x", "ratio", "training_mode"}, {"y"}, "drop");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& n = *(*g)->nodes()[0];
  EXPECT_EQ(n.inputs.size(), 1u);
  EXPECT_EQ(ShapeOf(**g, "y"), "[2,3]");
}

TEST(OpsetNormalization, DropoutOpset12TrainingModeTrueRefused) {
  ModelBuilder m(12);
  m.Input("x", kFloat, {2, 3});
  m.InitF32("ratio", {}, {0.5f});
  m.Initializer(BoolTensor("training_mode", {}, {1}));
  m.Node("Dropout", {"x", "ratio", "training_mode"}, {"y"}, "drop");
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("model.onnx: node 'drop' (Dropout): training_mode must be a constant false"));
}

TEST(OpsetNormalization, DropoutOpset12EmptyTrainingModeRefused) {
  ModelBuilder m(12);
  m.Input("x", kFloat, {2, 3});
  m.Initializer(BoolTensor("training_mode", {0}, {}));
  m.Node("Dropout", {"x", "", "training_mode"}, {"y"}, "drop");
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("node 'drop' (Dropout): training_mode must be a constant false"));
}

// ---- MaxPool ------------------------------------------------------------------------------

TEST(OpsetNormalization, MaxPoolIndicesOutputImported) {
  ModelBuilder m(12);
  m.Input("x", kFloat, {1, 1, 2, 2});
  auto* n = m.Node("MaxPool", {"x"}, {"y", "i"}, "pool");
  AttrInts(n, "kernel_shape", {2, 2});
  AttrInt(n, "storage_order", 1);
  m.Output("y").Output("i");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "i"), "[1,1,1,1]");
  auto r = RunReference(**g, {{"x", Tensor::FromF32({1, 1, 2, 2}, {1, 2, 4, 3})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->at("y").ToF32(), (std::vector<float>{4}));
  EXPECT_EQ(r->at("i").ToI64(), (std::vector<int64_t>{1}));  // (h=1, w=0) column-major
}

// ---- Cast ---------------------------------------------------------------------------------

TEST(OpsetNormalization, CastToMappedToDTypeNames) {
  const std::vector<std::pair<int32_t, std::string>> cases = {{kFloat, "f32"},  {kFloat16, "f16"}, {kBfloat16, "bf16"},
                                                              {kDouble, "f64"}, {kInt64, "i64"},   {kInt32, "i32"},
                                                              {kInt8, "i8"},    {kUint8, "u8"},    {kBool, "bool"}};
  for (const auto& [onnx_type, name] : cases) {
    ModelBuilder m(13);
    m.Input("x", kFloat, {2});
    AttrInt(m.Node("Cast", {"x"}, {"y"}, "cast"), "to", onnx_type);
    m.Output("y", onnx_type);
    auto g = Import(m);
    ASSERT_TRUE(g.ok()) << name << ": " << g.status();
    const Node& n = *(*g)->nodes()[0];
    EXPECT_EQ(n.attrs.GetString("to", ""), name);
    EXPECT_EQ(DTypeName((*g)->FindValue("y")->dtype), name);
  }
}

TEST(OpsetNormalization, CastToUnsupportedTypeRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  AttrInt(m.Node("Cast", {"x"}, {"y"}, "cast"), "to", kString);
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("model.onnx: node 'cast' (Cast): casts to STRING, expected a supported type"));
}

TEST(OpsetNormalization, CastToOutOfInt32RangeRefused) {
  // 2^32 + 1 must not wrap around to 1 (FLOAT).
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  AttrInt(m.Node("Cast", {"x"}, {"y"}, "cast"), "to", (int64_t{1} << 32) + 1);
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("model.onnx: node 'cast' (Cast): casts to type 4294967297, expected a supported type"));
}

// ---- Constant -----------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Graph>> ConstantModel(const std::function<void(onnx::NodeProto*)>& set_value,
                                                     int64_t opset = 13) {
  ModelBuilder m(opset);
  set_value(m.Node("Constant", {}, {"c"}, "const"));
  m.Output("c");
  return Import(m);
}

TEST(OpsetNormalization, ConstantValueTensor) {
  auto g = ConstantModel([](onnx::NodeProto* n) { AttrTensor(n, "value", F32Tensor("", {2, 2}, {1, 2, 3, 4})); }, 7);
  ASSERT_TRUE(g.ok()) << g.status();
  const Value* c = (*g)->FindValue("c");
  ASSERT_TRUE(c && c->is_constant());
  EXPECT_EQ((*g)->num_nodes(), 0u);
  EXPECT_EQ(c->dtype, DType::kF32);
  EXPECT_EQ(ShapeToString(c->shape), "[2,2]");
  EXPECT_EQ(c->constant->ToF32(), (std::vector<float>{1, 2, 3, 4}));
}

TEST(OpsetNormalization, ConstantValueFloat) {
  auto g = ConstantModel([](onnx::NodeProto* n) { AttrFloat(n, "value_float", 2.5f); });
  ASSERT_TRUE(g.ok()) << g.status();
  const Value* c = (*g)->FindValue("c");
  EXPECT_EQ(c->dtype, DType::kF32);
  EXPECT_EQ(ShapeToString(c->shape), "[]");
  EXPECT_EQ(c->constant->ToF32(), (std::vector<float>{2.5f}));
}

TEST(OpsetNormalization, ConstantValueFloats) {
  auto g = ConstantModel([](onnx::NodeProto* n) { AttrFloats(n, "value_floats", {1.5f, -2.0f, 3.0f}); });
  ASSERT_TRUE(g.ok()) << g.status();
  const Value* c = (*g)->FindValue("c");
  EXPECT_EQ(c->dtype, DType::kF32);
  EXPECT_EQ(ShapeToString(c->shape), "[3]");
  EXPECT_EQ(c->constant->ToF32(), (std::vector<float>{1.5f, -2.0f, 3.0f}));
}

TEST(OpsetNormalization, ConstantValueInt) {
  auto g = ConstantModel([](onnx::NodeProto* n) { AttrInt(n, "value_int", -7); });
  ASSERT_TRUE(g.ok()) << g.status();
  const Value* c = (*g)->FindValue("c");
  EXPECT_EQ(c->dtype, DType::kI64);
  EXPECT_EQ(ShapeToString(c->shape), "[]");
  EXPECT_EQ(c->constant->ToI64(), (std::vector<int64_t>{-7}));
}

TEST(OpsetNormalization, ConstantValueInts) {
  auto g = ConstantModel([](onnx::NodeProto* n) { AttrInts(n, "value_ints", {4, 5, int64_t{1} << 40}); });
  ASSERT_TRUE(g.ok()) << g.status();
  const Value* c = (*g)->FindValue("c");
  EXPECT_EQ(c->dtype, DType::kI64);
  EXPECT_EQ(ShapeToString(c->shape), "[3]");
  EXPECT_EQ(c->constant->ToI64(), (std::vector<int64_t>{4, 5, int64_t{1} << 40}));
}

TEST(OpsetNormalization, ConstantValueStringRefused) {
  auto g = ConstantModel([](onnx::NodeProto* n) { AttrString(n, "value_string", "hello"); });
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("model.onnx: node 'const' (Constant): attribute 'value_string' is not supported"));
}

TEST(OpsetNormalization, ConstantFeedsShapeComputation) {
  // A Constant node's value is usable where a constant input is required (Reshape's shape).
  ModelBuilder m(13);
  m.Input("x", kFloat, {2, 6});
  AttrInts(m.Node("Constant", {}, {"shape"}, "shape_const"), "value_ints", {3, -1});
  m.Node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "y"), "[3,4]");
}

TEST(OpsetNormalization, ConstantWithTwoValuesRefused) {
  auto g = ConstantModel([](onnx::NodeProto* n) {
    AttrInt(n, "value_int", 1);
    AttrFloat(n, "value_float", 1.0f);
  });
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("node 'const' (Constant): has 2 attributes, expected exactly one value attribute"));
}

// ---- opsets 1-6 ---------------------------------------------------------------------------

// Add-6 with broadcast=1, axis=1: B [3,4] sits at dims 1..2 of A [2,3,4,5]; imported as B with a
// trailing unit dim under NumPy broadcasting, the elements are A[n,c,h,w] + B[c,h].
TEST(OpsetNormalization, LegacyBroadcastAxisBecomesTrailingUnitDims) {
  ModelBuilder m(6);
  m.Input("a", kFloat, {2, 3, 4, 5});
  std::vector<float> b(12);
  for (int i = 0; i < 12; ++i) b[i] = static_cast<float>(i * 10);
  m.InitF32("b", {3, 4}, b);
  onnx::NodeProto* add = m.Node("Add", {"a", "b"}, {"y"}, "add");
  AttrInt(add, "broadcast", 1);
  AttrInt(add, "axis", 1);
  AttrInts(add, "consumed_inputs", {0, 0});
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "y"), "[2,3,4,5]");
  std::vector<float> a(120, 0.5f);
  const std::vector<float> y = RunOne(**g, "a", Tensor::FromF32({2, 3, 4, 5}, a), "y");
  ASSERT_EQ(y.size(), 120u);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int h = 0; h < 4; ++h) {
        for (int w = 0; w < 5; ++w) EXPECT_EQ(y[((n * 3 + c) * 4 + h) * 5 + w], 0.5f + b[c * 4 + h]);
      }
    }
  }
  // An axis that puts B past A's last dim is refused with the shapes.
  ModelBuilder bad(6);
  bad.Input("a", kFloat, {2, 3});
  bad.InitF32("b", {3, 4}, b);
  onnx::NodeProto* n = bad.Node("Mul", {"a", "b"}, {"y"}, "mul");
  AttrInt(n, "broadcast", 1);
  AttrInt(n, "axis", 1);
  bad.Output("y");
  EXPECT_THAT(ImportError(bad), HasSubstr("broadcast axis 1 does not place B (rank 2) inside A (rank 2)"));
}

// Reshape-4's shape attribute, Concat-3 without axis, Cast-5's type name, Relu-5's
// consumed_inputs and Gemm-6's broadcast: the same IR as their later forms.
TEST(OpsetNormalization, Opset1To6AttributeFormsImport) {
  ModelBuilder m(4);
  m.Input("x", kFloat, {2, 6});
  AttrInts(m.Node("Reshape", {"x"}, {"r"}, "reshape"), "shape", {3, 4});
  AttrInts(m.Node("Relu", {"r"}, {"relu"}, "relu"), "consumed_inputs", {0});
  m.Node("Concat", {"relu", "relu"}, {"c"}, "concat");
  AttrString(m.Node("Cast", {"c"}, {"y"}, "cast"), "to", "DOUBLE");
  m.Output("y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeOf(**g, "r"), "[3,4]");
  EXPECT_EQ(ShapeOf(**g, "c"), "[3,8]");  // Concat-1..3 default axis 1
  EXPECT_THAT(PrintBody(**g), HasSubstr("Cast[\"cast\"](%c) {to=\"f64\"}"));
  EXPECT_THAT(PrintBody(**g), ::testing::Not(HasSubstr("consumed_inputs")));

  ModelBuilder gemm(6);
  gemm.Input("x", kFloat, {2, 3});
  gemm.InitF32("w", {3, 4}, std::vector<float>(12, 1.0f));
  gemm.InitF32("c", {4}, {1, 2, 3, 4});
  AttrInt(gemm.Node("Gemm", {"x", "w", "c"}, {"y"}, "gemm"), "broadcast", 1);
  gemm.Output("y");
  auto gg = Import(gemm);
  ASSERT_TRUE(gg.ok()) << gg.status();
  const std::vector<float> y = RunOne(**gg, "x", Tensor::FromF32({2, 3}, {1, 1, 1, 2, 2, 2}), "y");
  EXPECT_EQ(y, (std::vector<float>{4, 5, 6, 7, 7, 8, 9, 10}));

  ModelBuilder cast(5);
  cast.Input("x", kFloat, {2});
  AttrString(cast.Node("Cast", {"x"}, {"y"}, "cast"), "to", "COMPLEX64");
  cast.Output("y");
  EXPECT_THAT(ImportError(cast), HasSubstr("casts to 'COMPLEX64', expected an ONNX type name"));

  ModelBuilder bn(6);
  bn.Input("x", kFloat, {1, 2, 2, 2});
  for (const char* p : {"s", "b", "m", "v"}) bn.InitF32(p, {2}, {1, 1});
  AttrInt(bn.Node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, "bn"), "is_test", 0);
  bn.Output("y");
  EXPECT_THAT(ImportError(bn), HasSubstr("is_test=0 (training) is not supported"));
}

}  // namespace
}  // namespace gcomp::frontend::testing
