#include <gtest/gtest.h>

#include "core/limits.h"
#include "core/slice.h"
#include "graph/ops/op_helpers.h"
#include "graph/printer.h"
#include "op_test_util.h"

namespace gcomp {
namespace {

using testing::RunOp;

std::vector<float> Iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

Attributes With(const std::string& k, AttrValue v) {
  Attributes a;
  a.Set(k, std::move(v));
  return a;
}

TEST(ShapeOpsTest, TransposeAndReshape) {
  auto x = Tensor::FromF32({2, 3}, Iota(6));
  auto t = RunOp("Transpose", {{"x", x}}, With("perm", std::vector<int64_t>{1, 0}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*t)[0].ToF32(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  auto r = RunOp("Reshape", {{"x", x}, {"s", Tensor::FromI64({2}, {-1, 2}), true}}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dims(), (std::vector<int64_t>{3, 2}));
  auto zero = RunOp("Reshape", {{"x", x}, {"s", Tensor::FromI64({3}, {0, 3, 1}), true}}, {});
  EXPECT_EQ((*zero)[0].dims(), (std::vector<int64_t>{2, 3, 1}));
  auto two = RunOp("Reshape", {{"x", x}, {"s", Tensor::FromI64({2}, {-1, -1}), true}}, {});
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("has more than one -1"), std::string::npos) << two.status();
  auto perm = RunOp("Transpose", {{"x", x}}, With("perm", std::vector<int64_t>{0, 0}));
  ASSERT_FALSE(perm.ok());
  EXPECT_NE(perm.status().message().find("perm [0,0] is not a permutation of 0..1"), std::string::npos) << perm.status();
}

TEST(ShapeOpsTest, ConcatSplitSlice) {
  auto a = Tensor::FromF32({2, 1}, {1, 2});
  auto b = Tensor::FromF32({2, 2}, {3, 4, 5, 6});
  auto c = RunOp("Concat", {{"a", a}, {"b", b}}, With("axis", int64_t{1}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)[0].ToF32(), (std::vector<float>{1, 3, 4, 2, 5, 6}));
  auto wrong_axis = RunOp("Split", {{"x", (*c)[0]}}, With("split", std::vector<int64_t>{2, 1}), 2);
  EXPECT_FALSE(wrong_axis.ok());  // axis 0 has size 2
  Attributes split_attrs = With("split", std::vector<int64_t>{2, 1});
  split_attrs.Set("axis", int64_t{1});
  auto s = RunOp("Split", {{"x", (*c)[0]}}, split_attrs, 2);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0].ToF32(), (std::vector<float>{1, 3, 2, 5}));
  EXPECT_EQ((*s)[1].ToF32(), (std::vector<float>{4, 6}));
  split_attrs.Set("split", std::vector<int64_t>{2, 2});
  auto bad = RunOp("Split", {{"x", (*c)[0]}}, split_attrs, 2);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("split sizes [2,2] add up to 4, expected 3"), std::string::npos) << bad.status();

  auto x = Tensor::FromF32({10}, Iota(10));
  auto sl = RunOp("Slice", {{"x", x}, {"st", Tensor::FromI64({1}, {8}), true}, {"en", Tensor::FromI64({1}, {1}), true},
                            {"ax", Tensor::FromI64({1}, {0}), true}, {"sp", Tensor::FromI64({1}, {-3}), true}}, {});
  ASSERT_TRUE(sl.ok()) << sl.status();
  EXPECT_EQ((*sl)[0].ToF32(), (std::vector<float>{8, 5, 2}));
  auto clamp = RunOp("Slice", {{"x", x}, {"st", Tensor::FromI64({1}, {-3}), true},
                               {"en", Tensor::FromI64({1}, {INT64_MAX}), true}}, {});
  EXPECT_EQ((*clamp)[0].ToF32(), (std::vector<float>{7, 8, 9}));
}

TEST(ShapeOpsTest, SliceStepsAtTheInt64Limits) {
  // A step past the span takes one element; no arithmetic overflows (UBSan checks it).
  auto x = Tensor::FromF32({3}, Iota(3));
  for (int64_t step : {INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1}) {
    auto sl = RunOp("Slice", {{"x", x}, {"st", Tensor::FromI64({1}, {step > 0 ? -5 : 5}), true},
                              {"en", Tensor::FromI64({1}, {step > 0 ? INT64_MAX : INT64_MIN}), true},
                              {"ax", Tensor::FromI64({1}, {0}), true}, {"sp", Tensor::FromI64({1}, {step}), true}},
                     {});
    ASSERT_TRUE(sl.ok()) << step << ": " << sl.status();
    EXPECT_EQ((*sl)[0].ToF32(), (std::vector<float>{step > 0 ? 0.0f : 2.0f})) << step;
  }
  const SliceAxis a = ResolveSlice(0, INT64_MAX, INT64_MAX, INT64_MAX);
  EXPECT_EQ(a.count, 1);
  const SliceAxis b = ResolveSlice(INT64_MAX, INT64_MIN, INT64_MIN, INT64_MAX);
  EXPECT_EQ(b.start, INT64_MAX - 1);
  EXPECT_EQ(b.count, 1);
  const SliceAxis c = ResolveSlice(1, 9, 3, 10);
  EXPECT_EQ(c.count, 3);  // 1, 4, 7
  const SliceAxis d = ResolveSlice(-1, -11, -4, 10);
  EXPECT_EQ(d.start, 9);
  EXPECT_EQ(d.count, 3);  // 9, 5, 1
}

TEST(ShapeOpsTest, GatherSqueezeUnsqueeze) {
  auto x = Tensor::FromF32({3, 2}, Iota(6));
  auto g = RunOp("Gather", {{"x", x}, {"i", Tensor::FromI64({2}, {2, -3}), true}}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)[0].ToF32(), (std::vector<float>{4, 5, 0, 1}));
  auto g1 = RunOp("Gather", {{"x", x}, {"i", Tensor::FromI64({}, {1}), true}}, With("axis", int64_t{1}));
  EXPECT_EQ((*g1)[0].dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ((*g1)[0].ToF32(), (std::vector<float>{1, 3, 5}));
  auto oob = RunOp("Gather", {{"x", x}, {"i", Tensor::FromI64({1}, {3}), true}}, {});
  ASSERT_FALSE(oob.ok());
  EXPECT_NE(oob.status().message().find("index 3 in input 'i' is out of range for axis 0 of size 3"), std::string::npos)
      << oob.status();
  auto u = RunOp("Unsqueeze", {{"x", x}}, With("axes", std::vector<int64_t>{0, -1}));
  EXPECT_EQ((*u)[0].dims(), (std::vector<int64_t>{1, 3, 2, 1}));
  auto s = RunOp("Squeeze", {{"x", (*u)[0]}}, {});
  EXPECT_EQ((*s)[0].dims(), (std::vector<int64_t>{3, 2}));
  auto bad = RunOp("Squeeze", {{"x", x}}, With("axes", std::vector<int64_t>{0}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("its size is 3, expected 1"), std::string::npos);
}

TEST(ShapeOpsTest, ExpandConstantOfShapeRange) {
  auto e = RunOp("Expand", {{"x", Tensor::FromF32({2, 1}, {1, 2})}, {"s", Tensor::FromI64({3}, {2, 2, 3}), true}}, {});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)[0].dims(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ((*e)[0].ToF32()[4], 2.0f);
  auto c = RunOp("ConstantOfShape", {{"s", Tensor::FromI64({2}, {2, 2}), true}}, With("value", Tensor::FromI64({1}, {7})));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)[0].ToI64(), (std::vector<int64_t>{7, 7, 7, 7}));
  auto r = RunOp("Range", {{"a", Tensor::FromF32({}, {1}), true}, {"b", Tensor::FromF32({}, {2}), true},
                           {"c", Tensor::FromF32({}, {0.25f}), true}}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToF32(), (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));
}

TEST(ShapeOpsTest, PadModes) {
  auto x = Tensor::FromF32({3}, {1, 2, 3});
  Attributes a = With("pads", std::vector<int64_t>{2, 1});
  a.Set("mode", std::string("reflect"));
  EXPECT_EQ((*RunOp("Pad", {{"x", x}}, a))[0].ToF32(), (std::vector<float>{3, 2, 1, 2, 3, 2}));
  a.Set("mode", std::string("edge"));
  EXPECT_EQ((*RunOp("Pad", {{"x", x}}, a))[0].ToF32(), (std::vector<float>{1, 1, 1, 2, 3, 3}));
  a.Set("mode", std::string("wrap"));
  EXPECT_EQ((*RunOp("Pad", {{"x", x}}, a))[0].ToF32(), (std::vector<float>{2, 3, 1, 2, 3, 1}));
  a.Set("mode", std::string("constant"));
  a.Set("value", 9.0f);
  EXPECT_EQ((*RunOp("Pad", {{"x", x}}, a))[0].ToF32(), (std::vector<float>{9, 9, 1, 2, 3, 9}));
  // Cropping one side and padding the other: constant mode only (ONNX Runtime crops first for the
  // other modes, which this op does not model).
  Attributes crop = With("pads", std::vector<int64_t>{-1, 2});
  EXPECT_EQ((*RunOp("Pad", {{"x", x}}, crop))[0].ToF32(), (std::vector<float>{2, 3, 0, 0}));
  crop.Set("mode", std::string("wrap"));
  absl::StatusOr<std::vector<Tensor>> refused = RunOp("Pad", {{"x", x}}, crop);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("negative pads"), std::string::npos) << refused.status();
}

// The dynamic-batch chain: Shape -> Gather(0) -> Unsqueeze -> Concat([b, 12, -1]) -> Reshape.
TEST(ShapeOpsTest, SymbolicBatchFlowsThroughShapeChain) {
  Graph g;
  g.source = "chain.onnx";
  auto add = [&](const std::string& op, std::vector<Value*> ins, Attributes attrs = {}) {
    Value* out = *g.AddValue(g.UniqueValueName(op + "_out"), DType::kF32, {});
    Node* n = *g.AddNode(op, op + std::to_string(g.num_nodes()), ins, {out}, std::move(attrs));
    n->def = FindOp(op);
    return out;
  };
  Value* x = *g.AddInput("x", DType::kF32, {Dim::Symbol("batch"), Dim(197), Dim(768)});
  Value* shape = add("Shape", {x});
  Value* b = add("Gather", {shape, *g.AddConstant("zero", Tensor::FromI64({}, {0}))});
  Value* b1 = add("Unsqueeze", {b}, With("axes", std::vector<int64_t>{0}));
  Value* bh = add("Mul", {b1, *g.AddConstant("twelve", Tensor::FromI64({1}, {12}))});
  Value* spec = add("Concat", {bh, *g.AddConstant("rest", Tensor::FromI64({2}, {197, -1}))}, With("axis", int64_t{0}));
  Value* y = add("Reshape", {x, spec});
  g.AddOutput(y);
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(ShapeToString(y->shape), "[batch*12,197,64]");
  ASSERT_TRUE(VerifyGraph(g).ok());
  EXPECT_NE(PrintGraph(g).find("= {batch*12,197,-1}"), std::string::npos) << PrintGraph(g);
  std::vector<float> data(2 * 197 * 768, 1.0f);
  auto out = RunReference(g, {{"x", Tensor::FromF32({2, 197, 768}, data)}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->at(y->name).dims(), (std::vector<int64_t>{24, 197, 64}));
  auto bad = RunReference(g, {{"x", Tensor::FromF32({2, 196, 768}, std::vector<float>(2 * 196 * 768))}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("input 'x' has shape [2,196,768], expected [batch,197,768]"), std::string::npos)
      << bad.status();
}

// Malformed-model corpus fixes (tests/malformed): Range keeps int64 bounds exact, and shape
// inference refuses outputs no tensor could hold before anything is allocated.
TEST(ShapeOpsTest, RangeInt64BoundsAreNotRoundedThroughFloat) {
  auto g = testing::SingleOpGraph("Range", {{"a", Tensor::FromI64({}, {0}), true},
                                            {"b", Tensor::FromI64({}, {16777217}), true},
                                            {"c", Tensor::FromI64({}, {1}), true}}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeToString((*g)->FindValue("out0")->shape), "[16777217]");
  auto huge = testing::SingleOpGraph("Range", {{"a", Tensor::FromI64({}, {0}), true},
                                               {"b", Tensor::FromI64({}, {1000000000000}), true},
                                               {"c", Tensor::FromI64({}, {1}), true}}, {});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().message(),
            "test.onnx: node 'node0' (Range): range of 1e+12 elements is too large, expected fewer than 1e12");
}

TEST(ShapeOpsTest, OutputsOverTheTensorLimitRefusedByShapeInference) {
  auto fill = testing::SingleOpGraph("ConstantOfShape", {{"s", Tensor::FromI64({2}, {1000000, 1000000}), true}}, {});
  ASSERT_FALSE(fill.ok());
  EXPECT_EQ(fill.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fill.status().message(),
            "test.onnx: node 'node0' (ConstantOfShape): output 'out0' has shape [1000000,1000000] "
            "(1000000000000 f32 elements), expected at most 4 GiB");
  auto overflow = testing::SingleOpGraph(
      "ConstantOfShape", {{"s", Tensor::FromI64({3}, {kMaxDim, kMaxDim, kMaxDim}), true}}, {});
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.status().message(),
            "test.onnx: node 'node0' (ConstantOfShape): output 'out0' has shape "
            "[2147483647,2147483647,2147483647] (its element count overflows int64), expected at most 4 GiB");
  auto big_dim = testing::SingleOpGraph(
      "ConstantOfShape", {{"s", Tensor::FromI64({2}, {int64_t{1} << 40, 0}), true}}, {});
  ASSERT_FALSE(big_dim.ok());
  EXPECT_EQ(big_dim.status().message(),
            "test.onnx: node 'node0' (ConstantOfShape): output 'out0' has shape [1099511627776,0]: dim 0 is "
            "1099511627776, over the limit of 2147483647");
  auto big_rank = testing::SingleOpGraph("ConstantOfShape", {{"s", Tensor::FromI64({9}, std::vector<int64_t>(9, 1)), true}}, {});
  ASSERT_FALSE(big_rank.ok());
  EXPECT_EQ(big_rank.status().message(),
            "test.onnx: node 'node0' (ConstantOfShape): output 'out0' has shape [1,1,1,1,1,1,1,1,1]: rank 9, over the "
            "limit of 8");
  auto range = testing::SingleOpGraph("Range", {{"a", Tensor::FromI64({}, {0}), true},
                                                {"b", Tensor::FromI64({}, {600000000}), true},
                                                {"c", Tensor::FromI64({}, {1}), true}}, {});
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.status().message(),
            "test.onnx: node 'node0' (Range): output 'out0' has shape [600000000] (600000000 i64 elements), "
            "expected at most 4 GiB");
  // Just under the limit (4 GiB of bytes) is still fine: nothing is allocated by inference.
  auto limit = testing::SingleOpGraph("ConstantOfShape", {{"s", Tensor::FromI64({1}, {int64_t{1} << 30}), true}}, {});
  EXPECT_TRUE(limit.ok()) << limit.status();
}

// Shape inputs known only at run time (graph inputs, as in ONNX's node tests): shape inference
// gives data-dependent symbols, and the interpreter resolves them from the data.
std::string InferredShape(const std::string& op, const std::vector<testing::OpInput>& inputs, Attributes attrs,
                          int outputs = 1, int k = 0) {
  auto g = testing::SingleOpGraph(op, inputs, std::move(attrs), outputs);
  if (!g.ok()) return std::string(g.status().message());
  return ShapeToString((*g)->FindValue("out" + std::to_string(k))->shape);
}

Tensor I32Scalar(int64_t v) {
  Tensor t = *Tensor::Zeros(DType::kI32, {});
  t.SetI64(0, v);
  return t;
}

TEST(ShapeOpsTest, RuntimeShapeInputsGiveDataDependentDims) {
  auto x = Tensor::FromF32({2, 3}, Iota(6));
  const testing::OpInput spec{"s", Tensor::FromI64({2}, {3, -1})};
  EXPECT_EQ(InferredShape("Reshape", {{"x", x}, spec}, {}), "[?node0:0:0,?node0:0:1]");
  EXPECT_TRUE(ops::IsDataDependentSymbol("?node0:0:0"));
  EXPECT_FALSE(ops::IsDataDependentSymbol("batch"));
  auto r = RunOp("Reshape", {{"x", x}, spec}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*r)[0].ToF32(), Iota(6));

  auto u = RunOp("Unsqueeze", {{"x", x}, {"a", Tensor::FromI64({2}, {-1, 0})}}, {});
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ((*u)[0].dims(), (std::vector<int64_t>{1, 2, 3, 1}));
  auto sq = RunOp("Squeeze", {{"x", (*u)[0]}, {"a", Tensor::FromI64({1}, {-1})}}, {});
  ASSERT_TRUE(sq.ok()) << sq.status();
  EXPECT_EQ((*sq)[0].dims(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(InferredShape("Squeeze", {{"x", (*u)[0]}, {"a", Tensor::FromI64({1}, {-1})}}, {}),
            "[?node0:0:0,?node0:0:1,?node0:0:2]");

  auto split = RunOp("Split", {{"x", x}, {"s", Tensor::FromI64({2}, {1, 2})}}, With("axis", int64_t{-1}), 2);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ((*split)[0].ToF32(), (std::vector<float>{0, 3}));
  EXPECT_EQ((*split)[1].ToF32(), (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(InferredShape("Split", {{"x", x}, {"s", Tensor::FromI64({2}, {1, 2})}}, With("axis", int64_t{1}), 2, 1),
            "[2,?node0:1:0]");

  auto ten = Tensor::FromF32({10}, Iota(10));
  auto sl = RunOp("Slice",
                  {{"x", ten},
                   {"st", Tensor::FromI64({1}, {1})},
                   {"en", Tensor::FromI64({1}, {8})},
                   {"ax", Tensor::FromI64({1}, {-1})},
                   {"sp", Tensor::FromI64({1}, {3})}},
                  {});
  ASSERT_TRUE(sl.ok()) << sl.status();
  EXPECT_EQ((*sl)[0].ToF32(), (std::vector<float>{1, 4, 7}));

  auto e = RunOp("Expand", {{"x", Tensor::FromF32({2, 1}, {1, 2})}, {"s", Tensor::FromI64({3}, {2, 1, 3})}}, {});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)[0].dims(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(InferredShape("Expand", {{"x", Tensor::FromF32({2, 1}, {1, 2})}, {"s", Tensor::FromI64({1}, {3})}}, {}),
            "[?node0:0:0,?node0:0:1]");  // rank max(2, 1)

  auto c = RunOp("ConstantOfShape", {{"s", Tensor::FromI64({2}, {2, 3})}}, {});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*c)[0].dtype(), DType::kF32);

  auto range = RunOp("Range", {{"a", I32Scalar(10)}, {"b", I32Scalar(4)}, {"d", I32Scalar(-3)}}, {});
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ((*range)[0].dtype(), DType::kI32);
  EXPECT_EQ((*range)[0].ToI64(), (std::vector<int64_t>{10, 7}));
}

TEST(ShapeOpsTest, PadRuntimeInputs) {
  // pads, constant_value and axes as inputs (opset 11/18 form kept when known only at run time);
  // an integer constant_value is copied exactly, not through float.
  const int64_t big = (int64_t{1} << 53) + 1;
  Tensor value = Tensor::FromI64({}, {big});
  auto p = RunOp("Pad", {{"x", Tensor::FromI64({2}, {7, 8})}, {"p", Tensor::FromI64({2}, {1, 2})}, {"v", value}}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)[0].ToI64(), (std::vector<int64_t>{big, 7, 8, big, big}));
  auto axes = RunOp("Pad",
                    {{"x", Tensor::FromF32({2, 2}, {1, 2, 3, 4})},
                     {"p", Tensor::FromI64({2}, {1, 0})},
                     {"", {}},
                     {"a", Tensor::FromI64({1}, {-1})}},
                    With("mode", std::string("edge")));
  ASSERT_TRUE(axes.ok()) << axes.status();
  EXPECT_EQ((*axes)[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*axes)[0].ToF32(), (std::vector<float>{1, 1, 2, 3, 3, 4}));
  // Constant pads give a concrete shape at once.
  EXPECT_EQ(InferredShape("Pad", {{"x", Tensor::FromF32({2}, {1, 2})}, {"p", Tensor::FromI64({2}, {1, -1}), true}}, {}),
            "[2]");
  EXPECT_EQ(InferredShape("Pad", {{"x", Tensor::FromF32({2}, {1, 2})}}, {}),
            "test.onnx: node 'node0' (Pad): pads are missing (attribute or input 1)");
}

// Zero-size pieces have no storage: the kernels must not copy from or to it (UBSan: memcpy of
// a null pointer; ONNX's test_split_zero_size_splits).
TEST(ShapeOpsTest, ZeroSizeSplitConcatGather) {
  auto x = Tensor::FromF32({3}, Iota(3));
  auto s = RunOp("Split", {{"x", x}}, With("split", std::vector<int64_t>{0, 3, 0}), 3);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0].numel(), 0);
  EXPECT_EQ((*s)[1].ToF32(), Iota(3));
  EXPECT_EQ((*s)[2].numel(), 0);
  auto c = RunOp("Concat", {{"a", (*s)[0]}, {"b", x}, {"c", (*s)[2]}}, With("axis", int64_t{0}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)[0].ToF32(), Iota(3));
  auto g = RunOp("Gather", {{"x", Tensor::FromF32({2, 0}, {})}, {"i", Tensor::FromI64({1}, {-1}), true}}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)[0].dims(), (std::vector<int64_t>{1, 0}));
}

TEST(ShapeOpsTest, SqueezeWithEmptyAxesSqueezesEverySizeOneAxis) {
  auto x = Tensor::FromF32({1, 3, 1}, Iota(3));
  auto s = RunOp("Squeeze", {{"x", x}}, With("axes", std::vector<int64_t>{}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0].dims(), (std::vector<int64_t>{3}));
  auto empty_input = RunOp("Squeeze", {{"x", x}, {"a", *Tensor::Zeros(DType::kI64, {0})}}, {});
  ASSERT_TRUE(empty_input.ok()) << empty_input.status();
  EXPECT_EQ((*empty_input)[0].dims(), (std::vector<int64_t>{3}));
}

}  // namespace
}  // namespace gcomp
