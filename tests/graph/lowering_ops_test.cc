// The ops of O3's lowering and layout passes (graph/ops/fused_ops.cc): Im2Col, Pool, FusedConv
// with layout NHWC — hand-computed cases and agreement with the NCHW ops they replace — and
// FakeQuantFp8, the fp8 GEMM operand of assign-precision.
#include <gtest/gtest.h>

#include "graph/ops/op_helpers.h"
#include "tests/graph/op_test_util.h"

namespace gcomp::testing {
namespace {

Tensor Iota(std::vector<int64_t> dims, float scale = 1.0f) {
  std::vector<float> v(static_cast<size_t>(Product(dims, 0, dims.size())));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (static_cast<float>((i * 7) % 13) - 6.0f) * scale;
  return Tensor::FromF32(std::move(dims), v);
}

// [N,C,H,W] -> [N,H,W,C]
Tensor ToNhwc(const Tensor& t) {
  const auto& d = t.dims();
  std::vector<float> out(static_cast<size_t>(t.numel()));
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t h = 0; h < d[2]; ++h)
        for (int64_t w = 0; w < d[3]; ++w)
          out[((n * d[2] + h) * d[3] + w) * d[1] + c] = t.GetF32(((n * d[1] + c) * d[2] + h) * d[3] + w);
  return Tensor::FromF32({d[0], d[2], d[3], d[1]}, out);
}

Attributes Window(const std::string& layout) {
  Attributes a;
  a.Set("kernel_shape", std::vector<int64_t>{2, 2});
  a.Set("strides", std::vector<int64_t>{1, 1});
  a.Set("pads", std::vector<int64_t>{0, 0, 1, 1});
  a.Set("layout", layout);
  return a;
}

TEST(Im2Col, NchwPatchesByHand) {
  // X [1,1,2,2] = {a b; c d}, 2x2 window, stride 1, pad end 1: 4 patches of 4 taps
  Tensor x = Tensor::FromF32({1, 1, 2, 2}, {1, 2, 3, 4});
  auto r = RunOp("Im2Col", {{"X", x}}, Window("NCHW"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dims(), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ((*r)[0].ToF32(), (std::vector<float>{1, 2, 3, 4, 2, 0, 4, 0, 3, 4, 0, 0, 4, 0, 0, 0}));
}

TEST(Im2Col, NhwcColumnsAreTapsThenChannels) {
  Tensor x = Iota({1, 3, 3, 3});
  auto nchw = RunOp("Im2Col", {{"X", x}}, Window("NCHW"));
  auto nhwc = RunOp("Im2Col", {{"X", ToNhwc(x)}}, Window("NHWC"));
  ASSERT_TRUE(nchw.ok() && nhwc.ok());
  ASSERT_EQ((*nchw)[0].dims(), (*nhwc)[0].dims());
  const int64_t rows = (*nchw)[0].dims()[0], c = 3, taps = 4;
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t t = 0; t < taps; ++t)
        EXPECT_EQ((*nchw)[0].GetF32(row * 12 + ch * taps + t), (*nhwc)[0].GetF32(row * 12 + t * c + ch));
}

TEST(Im2Col, ShapeAndErrors) {
  auto g = SingleOpGraph("Im2Col", {{"X", Iota({2, 3, 4, 4})}}, Window("NCHW"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ShapeToString((*g)->outputs()[0]->shape), "[32,12]");
  Attributes bad = Window("NCWH");
  auto r = RunOp("Im2Col", {{"X", Iota({1, 1, 2, 2})}}, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected NCHW or NHWC"), std::string::npos) << r.status();
}

TEST(Pool, NhwcMaxAndAverageMatchTheNchwOps) {
  Tensor x = Iota({2, 3, 5, 5}, 0.5f);
  for (const char* kind : {"max", "average"}) {
    Attributes onnx;
    onnx.Set("kernel_shape", std::vector<int64_t>{3, 3});
    onnx.Set("strides", std::vector<int64_t>{2, 2});
    onnx.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    Attributes pool = onnx;
    pool.Set("kind", std::string(kind));
    pool.Set("layout", std::string("NHWC"));
    auto want = RunOp(std::string(kind) == "max" ? "MaxPool" : "AveragePool", {{"X", x}}, onnx);
    auto got = RunOp("Pool", {{"X", ToNhwc(x)}}, pool);
    ASSERT_TRUE(want.ok() && got.ok()) << got.status();
    Tensor expect = ToNhwc((*want)[0]);
    EXPECT_EQ((*got)[0].dims(), expect.dims());
    EXPECT_EQ((*got)[0].ToF32(), expect.ToF32()) << kind;
  }
}

TEST(FusedConv, NhwcMatchesNchw) {
  Tensor x = Iota({1, 4, 5, 5}, 0.25f), w = Iota({6, 2, 3, 3}, 0.1f), z = Iota({1, 6, 5, 5}, 0.5f);
  Attributes a;
  a.Set("kernel_shape", std::vector<int64_t>{3, 3});
  a.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  a.Set("group", int64_t{2});
  a.Set("activation", std::string("relu"));
  auto want = RunOp("FusedConv", {{"X", x}, {"W", w, true}, {"", {}}, {"Z", z}}, a);
  a.Set("layout", std::string("NHWC"));
  auto got = RunOp("FusedConv", {{"X", ToNhwc(x)}, {"W", w, true}, {"", {}}, {"Z", ToNhwc(z)}}, a);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  Tensor expect = ToNhwc((*want)[0]);
  ASSERT_EQ((*got)[0].dims(), expect.dims());
  for (int64_t i = 0; i < expect.numel(); ++i) EXPECT_NEAR((*got)[0].GetF32(i), expect.GetF32(i), 1e-5f);
}

Tensor AsF16(const Tensor& t) {
  Tensor h = *Tensor::Zeros(DType::kF16, t.dims());
  for (int64_t i = 0; i < t.numel(); ++i) h.SetF32(i, t.GetF32(i));
  return h;
}

TEST(FusedConv, NhwcKeepsTheStorageDtype) {
  // An fp16 NHWC conv (fp16/fp8 at O3 on cuda targets) stores f16, not the f32 of its permutation.
  Tensor x = AsF16(Iota({1, 2, 4, 4}, 0.25f)), w = AsF16(Iota({3, 2, 3, 3}, 0.1f));
  Attributes a;
  a.Set("kernel_shape", std::vector<int64_t>{3, 3});
  a.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  a.Set("layout", std::string("NHWC"));
  auto got = RunOp("FusedConv", {{"X", AsF16(ToNhwc(x))}, {"W", w, true}}, a);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].dtype(), DType::kF16);
  Attributes p;
  p.Set("kind", std::string("max"));
  p.Set("kernel_shape", std::vector<int64_t>{2, 2});
  p.Set("layout", std::string("NHWC"));
  auto pooled = RunOp("Pool", {{"X", AsF16(ToNhwc(x))}}, p);
  ASSERT_TRUE(pooled.ok()) << pooled.status();
  EXPECT_EQ((*pooled)[0].dtype(), DType::kF16);
}

TEST(FakeQuantFp8, RoundsScaledValuesToE4M3AndSaturates) {
  // scale 2: x*2 rounded to e4m3 (3 mantissa bits), then /2; 300*2 = 600 saturates to 448 -> 224.
  Tensor x = Tensor::FromF32({5}, {1.0f, 0.53f, -1.1f, 300.0f, 0.0f});
  Attributes a;
  a.Set("scale", 2.0f);
  auto r = RunOp("FakeQuantFp8", {{"X", x}}, a);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dtype(), DType::kF16);
  // 1.06 -> 1.0 (step 0.125 in [1,2)); -2.2 -> -2.25 (step 0.25 in [2,4)).
  EXPECT_EQ((*r)[0].ToF32(), (std::vector<float>{1.0f, 0.5f, -1.125f, 224.0f, 0.0f}));
  a.Set("scale", 0.0f);
  EXPECT_FALSE(RunOp("FakeQuantFp8", {{"X", x}}, a).ok());
}

TEST(FakeQuantFp8, PerChannelScalesAlongAxis) {
  // [2,3] weight, scales along axis 0: row 0 scaled by 4 (0.3*4 = 1.2 -> 1.25 -> 0.3125), row 1 by
  // 0.5 (5*0.5 = 2.5 exact; 300*0.5 = 150 -> 144 (step 16 in [128,256)) -> 288).
  Tensor x = Tensor::FromF32({2, 3}, {0.3f, 1.0f, -0.25f, 5.0f, 300.0f, 0.0f});
  Tensor scales = Tensor::FromF32({2}, {4.0f, 0.5f});
  Attributes a;
  a.Set("axis", int64_t{0});
  auto r = RunOp("FakeQuantFp8", {{"X", x}, {"scales", scales}}, a);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToF32(), (std::vector<float>{0.3125f, 1.0f, -0.25f, 5.0f, 288.0f, 0.0f}));
  // Scales along axis 1 need 3 of them; a per-tensor scale as well is refused.
  a.Set("axis", int64_t{1});
  auto wrong = RunOp("FakeQuantFp8", {{"X", x}, {"scales", scales}}, a);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("expected 3"), std::string::npos) << wrong.status();
  a.Set("axis", int64_t{0});
  a.Set("scale", 2.0f);
  EXPECT_FALSE(RunOp("FakeQuantFp8", {{"X", x}, {"scales", scales}}, a).ok());
}

}  // namespace
}  // namespace gcomp::testing
