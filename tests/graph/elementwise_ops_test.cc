#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

namespace gcomp {
namespace {

using testing::OpInput;
using testing::RunOp;

TEST(ElementwiseTest, BroadcastAdd) {
  auto out = RunOp("Add", {{"a", Tensor::FromF32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", Tensor::FromF32({3}, {10, 20, 30})}}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*out)[0].ToF32(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(ElementwiseTest, BinaryOpsAndPow) {
  auto a = Tensor::FromF32({4}, {1, 4, 9, 16});
  auto b = Tensor::FromF32({1}, {2});
  EXPECT_EQ((*RunOp("Sub", {{"a", a}, {"b", b}}, {}))[0].ToF32(), (std::vector<float>{-1, 2, 7, 14}));
  EXPECT_EQ((*RunOp("Mul", {{"a", a}, {"b", b}}, {}))[0].ToF32(), (std::vector<float>{2, 8, 18, 32}));
  EXPECT_EQ((*RunOp("Div", {{"a", a}, {"b", b}}, {}))[0].ToF32(), (std::vector<float>{0.5, 2, 4.5, 8}));
  EXPECT_EQ((*RunOp("Pow", {{"a", a}, {"b", b}}, {}))[0].ToF32(), (std::vector<float>{1, 16, 81, 256}));
}

TEST(ElementwiseTest, IntegerDivTruncates) {
  auto out = RunOp("Div", {{"a", Tensor::FromI64({2}, {7, -7})}, {"b", Tensor::FromI64({}, {2})}}, {});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].ToI64(), (std::vector<int64_t>{3, -3}));
  auto zero = RunOp("Div", {{"a", Tensor::FromI64({1}, {7})}, {"b", Tensor::FromI64({1}, {0})}}, {});
  EXPECT_FALSE(zero.ok());
}

TEST(ElementwiseTest, UnaryMath) {
  auto x = Tensor::FromF32({3}, {-1.0f, 0.0f, 2.0f});
  EXPECT_EQ((*RunOp("Relu", {{"x", x}}, {}))[0].ToF32(), (std::vector<float>{0, 0, 2}));
  EXPECT_EQ((*RunOp("Neg", {{"x", x}}, {}))[0].ToF32(), (std::vector<float>{1, 0, -2}));
  auto sig = (*RunOp("Sigmoid", {{"x", x}}, {}))[0].ToF32();
  EXPECT_NEAR(sig[0], 1.0 / (1.0 + std::exp(1.0)), 1e-7);
  auto erf = (*RunOp("Erf", {{"x", x}}, {}))[0].ToF32();
  EXPECT_NEAR(erf[2], std::erf(2.0), 1e-7);
  auto tanh = (*RunOp("Tanh", {{"x", x}}, {}))[0].ToF32();
  EXPECT_NEAR(tanh[0], std::tanh(-1.0), 1e-7);
}

TEST(ElementwiseTest, GeluBothApproximations) {
  auto x = Tensor::FromF32({2}, {1.0f, -0.5f});
  auto exact = (*RunOp("Gelu", {{"x", x}}, {}))[0].ToF32();
  EXPECT_NEAR(exact[0], 0.8413447, 1e-6);  // x * Phi(x)
  EXPECT_NEAR(exact[1], -0.1542688, 1e-6);
  Attributes tanh;
  tanh.Set("approximate", std::string("tanh"));
  auto approx = (*RunOp("Gelu", {{"x", x}}, tanh))[0].ToF32();
  EXPECT_NEAR(approx[0], 0.8411920, 1e-6);
  EXPECT_NEAR(approx[1], -0.1542859, 1e-6);
}

TEST(ElementwiseTest, ClipWithOptionalBounds) {
  auto x = Tensor::FromF32({4}, {-2, 0.5f, 3, 8});
  auto out = RunOp("Clip", {{"x", x}, {"lo", Tensor::FromF32({}, {0}), true}, {"hi", Tensor::FromF32({}, {6}), true}}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToF32(), (std::vector<float>{0, 0.5f, 3, 6}));
  auto only_max = RunOp("Clip", {{"x", x}, {"", {}}, {"hi", Tensor::FromF32({}, {1}), true}}, {});
  ASSERT_TRUE(only_max.ok()) << only_max.status();
  EXPECT_EQ((*only_max)[0].ToF32(), (std::vector<float>{-2, 0.5f, 1, 1}));
}

TEST(ElementwiseTest, ClipOnIntegers) {
  // Clip-12+ takes integer tensors; bounds compare exactly (no rounding through float).
  Tensor x = *Tensor::Zeros(DType::kI8, {4});
  x.SetI64(0, -128);
  x.SetI64(1, -3);
  x.SetI64(2, 5);
  x.SetI64(3, 127);
  Tensor lo = *Tensor::Zeros(DType::kI8, {});
  lo.SetI64(0, -4);
  Tensor hi = *Tensor::Zeros(DType::kI8, {});
  hi.SetI64(0, 4);
  auto both = RunOp("Clip", {{"x", x}, {"lo", lo, true}, {"hi", hi, true}}, {});
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ((*both)[0].dtype(), DType::kI8);
  EXPECT_EQ((*both)[0].ToI64(), (std::vector<int64_t>{-4, -3, 4, 4}));
  auto none = RunOp("Clip", {{"x", x}}, {});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ((*none)[0].ToI64(), (std::vector<int64_t>{-128, -3, 5, 127}));
  const int64_t big = (int64_t{1} << 53) + 1;
  auto wide = RunOp("Clip",
                    {{"x", Tensor::FromI64({2}, {big + 2, 0})},
                     {"lo", Tensor::FromI64({}, {1}), true},
                     {"hi", Tensor::FromI64({}, {big}), true}},
                    {});
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ((*wide)[0].ToI64(), (std::vector<int64_t>{big, 1}));
  Tensor flags = *Tensor::Zeros(DType::kBool, {1});
  EXPECT_FALSE(RunOp("Clip", {{"x", flags}}, {}).ok());
}

TEST(ElementwiseTest, WhereEqualCast) {
  auto eq = RunOp("Equal", {{"a", Tensor::FromI64({3}, {1, -1, 3})}, {"b", Tensor::FromI64({}, {-1})}}, {});
  ASSERT_TRUE(eq.ok());
  EXPECT_EQ((*eq)[0].dtype(), DType::kBool);
  EXPECT_EQ((*eq)[0].ToI64(), (std::vector<int64_t>{0, 1, 0}));
  auto where = RunOp("Where", {{"c", (*eq)[0]}, {"x", Tensor::FromF32({3}, {1, 2, 3})}, {"y", Tensor::FromF32({1}, {9})}}, {});
  ASSERT_TRUE(where.ok()) << where.status();
  EXPECT_EQ((*where)[0].ToF32(), (std::vector<float>{9, 2, 9}));
  Attributes to;
  to.Set("to", std::string("i64"));
  auto cast = RunOp("Cast", {{"x", Tensor::FromF32({3}, {1.7f, -1.7f, 3})}}, to);
  ASSERT_TRUE(cast.ok());
  EXPECT_EQ((*cast)[0].ToI64(), (std::vector<int64_t>{1, -1, 3}));
  to.Set("to", std::string("f16"));
  auto half = RunOp("Cast", {{"x", Tensor::FromF32({1}, {0.1f})}}, to);
  EXPECT_EQ((*half)[0].dtype(), DType::kF16);
  EXPECT_EQ((*half)[0].GetF32(0), RoundToStorage(0.1f, DType::kF16));
}

TEST(ElementwiseTest, IsNaNIsBoolOfTheInputShape) {
  const float nan = std::nanf("");
  auto out = RunOp("IsNaN", {{"x", Tensor::FromF32({2, 2}, {1.0f, nan, INFINITY, -nan})}}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kBool);
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ((*out)[0].ToI64(), (std::vector<int64_t>{0, 1, 0, 1}));
  auto half = RunOp("IsNaN", {{"x", *Tensor::Zeros(DType::kF16, {3})}}, {});
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ((*half)[0].ToI64(), (std::vector<int64_t>{0, 0, 0}));
  // Integers are not a valid input (ONNX: float types only).
  EXPECT_FALSE(RunOp("IsNaN", {{"x", Tensor::FromI64({1}, {1})}}, {}).ok());
}

TEST(ElementwiseTest, DropoutIsIdentityInInference) {
  auto out = RunOp("Dropout", {{"x", Tensor::FromF32({2}, {1, 2})}}, {}, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToF32(), (std::vector<float>{1, 2}));
  EXPECT_EQ((*out)[1].ToI64(), (std::vector<int64_t>{1, 1}));
}

TEST(ElementwiseTest, ErrorsNameTheInput) {
  auto bad = RunOp("Add", {{"a", Tensor::FromF32({2, 3}, std::vector<float>(6))}, {"b", Tensor::FromF32({4}, std::vector<float>(4))}}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node 'node0' (Add)"), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("[2,3] and [4] do not broadcast: 3 vs 4 at output axis 1, expected equal "
                                        "sizes or 1"),
            std::string::npos)
      << bad.status();
  auto dtype = RunOp("Add", {{"a", Tensor::FromF32({1}, {1})}, {"b", Tensor::FromI64({1}, {1})}}, {});
  ASSERT_FALSE(dtype.ok());
  EXPECT_NE(dtype.status().message().find("input 'b' has dtype i64, expected f32"), std::string::npos) << dtype.status();
  auto relu = RunOp("Relu", {{"x", Tensor::FromI64({1}, {1})}}, {});
  ASSERT_FALSE(relu.ok());
  EXPECT_NE(relu.status().message().find("input 'x' has dtype i64, expected a float type"), std::string::npos);
}

TEST(ElementwiseTest, StorageEmulationRoundsOutputs) {
  auto g = testing::SingleOpGraph("Mul", {{"a", Tensor::FromF32({1}, {0.1f})}, {"b", Tensor::FromF32({1}, {1.0f})}}, {});
  ASSERT_TRUE(g.ok());
  (*g)->nodes()[0]->precision = DType::kF16;
  std::map<std::string, Tensor> feeds = {{"a", Tensor::FromF32({1}, {0.1f})}, {"b", Tensor::FromF32({1}, {1.0f})}};
  auto exact = RunReference(**g, feeds);
  InterpreterOptions opts;
  opts.emulate_storage = true;
  auto rounded = RunReference(**g, feeds, opts);
  EXPECT_EQ(exact->at("out0").GetF32(0), 0.1f);
  EXPECT_EQ(rounded->at("out0").GetF32(0), RoundToStorage(0.1f, DType::kF16));
  EXPECT_NE(rounded->at("out0").GetF32(0), 0.1f);
}

// Binding errors of the reference interpreter name the model file (tests/malformed run cases).
TEST(ElementwiseTest, InterpreterInputErrorsNameTheFile) {
  auto g = testing::SingleOpGraph("Relu", {{"x", Tensor::FromF32({2, 3}, std::vector<float>(6))}}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  auto missing = RunReference(**g, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(missing.status().message(), "test.onnx: missing graph input 'x' (expected f32[2,3])");
  auto shape = RunReference(**g, {{"x", Tensor::FromF32({3, 2}, std::vector<float>(6))}});
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.status().message(), "test.onnx: input 'x' has shape [3,2], expected [2,3]");
  auto dtype = RunReference(**g, {{"x", Tensor::FromI64({2, 3}, std::vector<int64_t>(6))}});
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.status().message(), "test.onnx: input 'x' has dtype i64, expected f32");
  auto extra = RunReference(**g, {{"x", Tensor::FromF32({2, 3}, std::vector<float>(6))},
                                  {"z", Tensor::FromF32({1}, {0})}});
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.status().message(), "test.onnx: 'z' is not an input of the graph, expected one of: x");

  Graph sym;
  sym.source = "sym.onnx";
  ASSERT_TRUE(sym.AddInput("a", DType::kF32, {Dim::Symbol("batch"), Dim(3)}).ok());
  ASSERT_TRUE(sym.AddInput("b", DType::kF32, {Dim::Symbol("batch"), Dim(3)}).ok());
  auto conflict = RunReference(sym, {{"a", Tensor::FromF32({2, 3}, std::vector<float>(6))},
                                     {"b", Tensor::FromF32({3, 3}, std::vector<float>(9))}});
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().message(),
            "sym.onnx: input 'b' has shape [3,3], expected [batch,3] with batch = 2 (bound by an earlier input)");
}

}  // namespace
}  // namespace gcomp
