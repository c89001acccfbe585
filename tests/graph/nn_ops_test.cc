// Tests of the nn op family (graph/ops/nn_ops.cc, conv_pool_ops.cc, attention_op.cc): reference
// kernels on hand-computed cases and against ONNX Runtime, symbolic shape inference, and errors.
//
// The ONNX Runtime expectations (1.23.2, CPU, opset 23 unless noted) were computed on the inputs
// that Pat() builds: element i of a tensor is ((i * a + c) % m - m / 2) / 8, the same formula
// in numpy, with the attributes written in each test. All such inputs are exact in fp32.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>

#include "graph/ops/op_helpers.h"
#include "tests/graph/op_test_util.h"

namespace gcomp::testing {
namespace {

// Whether `text` contains `part`, with both in the failure message.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

std::vector<float> Pattern(int64_t n, int64_t a = 7, int64_t c = 3, int64_t m = 17) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * a + c) % m - m / 2) / 8.0f;
  return v;
}

Tensor Pat(std::vector<int64_t> dims, int64_t a = 7, int64_t c = 3, int64_t m = 17, float mul = 1.0f) {
  std::vector<float> v = Pattern(Product(dims, 0, dims.size()), a, c, m);
  for (float& x : v) x *= mul;
  return Tensor::FromF32(std::move(dims), v);
}

Tensor F32(std::vector<int64_t> dims, std::vector<float> v) { return Tensor::FromF32(std::move(dims), v); }

Tensor Bool(std::vector<int64_t> dims, const std::vector<int>& v) {
  Tensor t = *Tensor::Zeros(DType::kBool, std::move(dims));
  for (size_t i = 0; i < v.size(); ++i) t.SetI64(static_cast<int64_t>(i), v[i]);
  return t;
}

std::vector<int64_t> Ints(std::initializer_list<int64_t> v) { return v; }

Attributes Attrs(std::initializer_list<std::pair<std::string, AttrValue>> list) {
  Attributes a;
  for (const auto& [name, value] : list) a.Set(name, value);
  return a;
}

// Element-wise |actual - expected| <= atol + rtol * |expected|; NaN matches NaN.
void ExpectValues(const Tensor& t, const std::vector<int64_t>& dims, const std::vector<float>& expected,
                  float rtol = 1e-4f, float atol = 1e-5f) {
  ASSERT_EQ(t.dims(), dims);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float a = t.GetF32(i), e = expected[i];
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(a)) << "at " << i << ": " << a << " vs NaN";
    } else {
      EXPECT_NEAR(a, e, atol + rtol * std::fabs(e)) << "at flat index " << i;
    }
  }
}

// Runs `op` and returns output k, failing the test on error.
Tensor Run1(const std::string& op, const std::vector<OpInput>& inputs, Attributes attrs, int outputs = 1, int k = 0) {
  auto r = RunOp(op, inputs, std::move(attrs), outputs);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return Tensor();
  return (*r)[k];
}

// The error text of building (and inferring) a one-node graph, or "OK".
std::string ErrorOf(const std::string& op, const std::vector<OpInput>& inputs, Attributes attrs, int outputs = 1) {
  auto g = SingleOpGraph(op, inputs, std::move(attrs), outputs);
  return g.ok() ? "OK" : std::string(g.status().message());
}

// A graph input given by shape only (dims may be symbolic); an empty name is an omitted input.
struct SymInput {
  std::string name;
  Shape shape;
  DType dtype = DType::kF32;
};

const Dim kBatch = Dim::Symbol("batch");

// Shape inference of one `op` node on symbolic input shapes: the printed output shapes.
absl::StatusOr<std::vector<std::string>> InferShapesOf(const std::string& op, const std::vector<SymInput>& inputs,
                                                       Attributes attrs, int outputs = 1) {
  Graph g;
  g.source = "test.onnx";
  std::vector<Value*> ins;
  for (const SymInput& in : inputs) {
    if (in.name.empty()) {
      ins.push_back(nullptr);
      continue;
    }
    auto v = g.AddInput(in.name, in.dtype, in.shape);
    if (!v.ok()) return v.status();
    ins.push_back(*v);
  }
  std::vector<Value*> outs;
  for (int i = 0; i < outputs; ++i) {
    auto v = g.AddValue("out" + std::to_string(i), DType::kF32, {});
    if (!v.ok()) return v.status();
    outs.push_back(*v);
  }
  auto node = g.AddNode(op, "node0", ins, outs, std::move(attrs));
  if (!node.ok()) return node.status();
  (*node)->def = FindOp(op);
  absl::Status s = InferShapes(g);
  if (!s.ok()) return s;
  std::vector<std::string> shapes;
  for (Value* o : outs) shapes.push_back(ShapeToString(o->shape));
  return shapes;
}

std::string ShapeOf(const std::string& op, const std::vector<SymInput>& inputs, Attributes attrs) {
  auto r = InferShapesOf(op, inputs, std::move(attrs));
  return r.ok() ? (*r)[0] : std::string(r.status().message());
}

// ---- expected values from ONNX Runtime ------------------------------------------------------

// shape [1, 6, 4, 3]
const std::vector<float> kConvGroupedExpected = {
    2.296875f,  -1.109375f, -1.0625f,   -0.40625f,  1.59375f,  0.40625f,  -0.546875f, -1.46875f,  -1.328125f,
    0.140625f,  0.28125f,   0.421875f,  -1.390625f, 1.015625f, 0.5f,      -0.09375f,  -0.984375f, -0.28125f,
    1.453125f,  0.046875f,  0.234375f,  -0.90625f,  0.078125f, 0.265625f, 0.203125f,  -0.71875f,  -0.578125f,
    0.421875f,  0.703125f,  0.453125f,  -0.609375f, 0.953125f, 1.1875f,   0.890625f,  -0.734375f, -0.5f,
    -0.453125f, -1.59375f,  -1.40625f,  0.609375f,  1.71875f,  -1.15625f, -1.96875f,  -1.421875f, -0.34375f,
    1.53125f,   0.21875f,   -2.15625f,  0.484375f,  0.1875f,   -0.90625f, -1.828125f, -2.28125f,  1.78125f,
    1.8125f,    -0.859375f, -1.671875f, -1.6875f,   -1.4375f,  2,         -1.21875f,  -0.671875f, 0.40625f,
    2.03125f,   0.625f,     -1.578125f, -0.90625f,  0.71875f,  2.078125f, 0.78125f,   -0.25f,     -0.75f,
};
// shape [1, 3, 3, 3]
const std::vector<float> kConvSameUpperExpected = {
    -0.578125f, 0.703125f,  1.953125f, -1.34375f, -2.0625f,   0.5625f, -0.015625f, -1.609375f, -0.15625f,
    -0.359375f, 0.375f,     1.796875f, -0.5625f,  -1.9375f,   0.3125f, 1.171875f,  -1.15625f,  -0.15625f,
    -0.546875f, -0.359375f, 0.421875f, -0.1875f,  -1.609375f, -0.75f,  1.953125f,  -0.09375f,  -0.15625f,
};
// shape [1, 1, 4, 4]
const std::vector<float> kConvSameLowerExpected = {
    0.234375f, -0.484375f, 0.53125f, -0.578125f, -0.28125f, 1.046875f,  -0.609375f, 1.1875f,
    0,         -0.796875f, 1,        -0.65625f,  0.28125f,  -0.515625f, -0.84375f,  0.953125f,
};
// shape [2, 2, 4]
const std::vector<float> kConv1dExpected = {
    0.5625f, 0.921875f,  1.296875f, 0.6875f,    -0.421875f, -1.78125f, -0.515625f, -0.71875f,
    1,       -0.984375f, -0.34375f, -1.421875f, 0.03125f,   -0.3125f,  0.953125f,  1.015625f,
};
// shape [1, 2, 2, 4, 2]
const std::vector<float> kConv3dExpected = {
    -0.328125f, 1.796875f,  -0.15625f,  -2.1875f,   -1.453125f, 0.203125f,  0.4375f,    0.46875f,
    -0.140625f, -0.46875f,  0.359375f,  0.46875f,   -1.203125f, -2.71875f,  -0.109375f, 0.46875f,
    1.109375f,  -1.296875f, -0.796875f, -1.875f,    -0.78125f,  0.90625f,   1.890625f,  -1.359375f,
    1.0625f,    1.203125f,  -0.671875f, -1.140625f, -1.453125f, -1.015625f, 0.953125f,  2.03125f,
};
// shape [1, 3, 2, 2]
const std::vector<float> kConvDepthwiseExpected = {
    0.28125f,   0.4375f,  -1.40625f, -0.421875f, -0.15625f, 0.359375f,
    -0.109375f, -1.1875f, 0.140625f, 0.421875f,  -1,        0.359375f,
};
// shape [1, 2, 4, 4]
const std::vector<float> kMaxPoolCeilExpected = {
    0.25f,  0.875f, 0.75f, 0.375f, 1,      0.875f, 0.875f, 0.875f, 0.75f,  1, 1, 0.875f, 0.25f,  0.75f, 0.75f, 0.375f,
    0.875f, 0.875f, 0.5f,  1,      0.625f, 1,      0.875f, 0.75f,  0.875f, 1, 1, 1,      0.875f, 0.5f,  1,     1,
};
// shape [1, 1, 2]
const std::vector<float> kMaxPoolCeilDropExpected = {
    0.25f,
    -0.125f,
};
// shape [1, 1, 3, 3]
const std::vector<float> kMaxPoolDilatedExpected = {
    -0.375f, 0.5f, 1, -0.25f, 0.625f, 0.875f, -0.125f, 0.75f, 1,
};
// shape [1, 1, 2, 2, 2]
const std::vector<float> kMaxPool3dExpected = {
    0.75f, 0.375f, 0.875f, 1, 0.75f, 0.75f, 0.5f, 1,
};
// shape [1, 1, 3, 3]
const std::vector<float> kMaxPoolSameUpperExpected = {
    0.375f, 0.375f, 0.875f, 0.625f, 0.625f, 1, 0.75f, 0.75f, 0.375f,
};
// shape [1, 2, 3, 4]
const std::vector<float> kAvgPoolCeilPad0Expected = {
    -0.21875f,
    -0.145833328f,
    0.1875f,
    0,
    -0.3125f,
    0.055555556f,
    0.152777776f,
    0.0833333358f,
    -0.40625f,
    0.020833334f,
    0,
    -0.1875f,
    0,
    0.25f,
    -0.125f,
    -0.3125f,
    0.0833333358f,
    0.0972222239f,
    -0.277777791f,
    -0.583333313f,
    0.34375f,
    0.0625f,
    -0.3125f,
    -0.5f,
};
// shape [1, 2, 3, 4]
const std::vector<float> kAvgPoolCeilPad1Expected = {
    -0.0972222239f,
    -0.0972222239f,
    0.125f,
    0,
    -0.208333328f,
    0.055555556f,
    0.152777776f,
    0.0416666679f,
    -0.180555552f,
    0.013888889f,
    0,
    -0.0625f,
    0,
    0.166666672f,
    -0.0833333358f,
    -0.104166664f,
    0.055555556f,
    0.0972222239f,
    -0.277777791f,
    -0.291666657f,
    0.152777776f,
    0.0416666679f,
    -0.208333328f,
    -0.166666672f,
};
// shape [1, 1, 3, 3]
const std::vector<float> kAvgPoolSameUpperPad0Expected = {
    -0.166666672f, 0.166666672f, 0.0625f, -0.055555556f, 0.277777791f, -0.0625f, 0.145833328f, 0.125f, -0.15625f,
};
// shape [1, 1, 3, 3]
// From the ONNX reference implementation (onnx 1.19.1): ONNX Runtime 1.23.2 gives 0.145833328,
// 0.125, -0.104166664 for the last row, because its 2-D AveragePool clips the window at
// height + pads[1] (the width's begin pad) instead of height + the height's end pad.
const std::vector<float> kAvgPoolSameUpperPad1Expected = {
    -0.166666672f,  0.166666672f,  0.0416666679f, -0.055555556f,  0.277777791f,
    -0.0416666679f, 0.0972222239f, 0.0833333358f, -0.0694444478f,
};
// shape [1, 1, 4]
const std::vector<float> kAvgPoolDilatedExpected = {
    0.125f,
    0.0625f,
    -0.3125f,
    -0.25f,
};
// shape [2, 3, 1, 1]
const std::vector<float> kGlobalAvgPoolExpected = {
    -0.208333328f, 0.0833333358f, 0.020833334f, -0.0416666679f, -0.104166664f, 0.1875f,
};
// shape [3, 5]
const std::vector<float> kGemmTransExpected = {
    -0.6015625f, 0.1640625f,  0.9296875f, -1.0546875f, -0.59375f, -1.03125f, -0.2890625f, 0.453125f,
    -1.5546875f, -0.1015625f, -0.53125f,  0.1875f,     0.90625f,  -1.125f,   -0.40625f,
};
// shape [3, 5]
const std::vector<float> kGemmColumnBiasExpected = {
    -0.5625f,   0.7734375f, -0.6328125f, 1.6171875f,  0.2109375f, -0.5390625f, 0.4453125f,  0.2109375f,
    0.5859375f, 0.3515625f, -1.3125f,    -0.6796875f, 0.2578125f, -1.2421875f, -0.3046875f,
};
// shape [2, 3, 3, 5]
const std::vector<float> kMatMulBroadcastExpected = {
    -0.625f,    0.265625f,  -0.671875f, 0.828125f,  -0.109375f, -0.359375f, 0.296875f,  0.140625f,  0.390625f,
    0.234375f,  -0.625f,    -0.203125f, 0.421875f,  -0.578125f, 0.046875f,  -0.484375f, 0.8125f,    0.078125f,
    -0.859375f, 0.640625f,  0.171875f,  -1,         0.265625f,  0.109375f,  0.359375f,  0.296875f,  0.109375f,
    -0.078125f, 0.546875f,  -0.453125f, 0.265625f,  -0.671875f, 0.828125f,  -0.109375f, -0.03125f,  0.296875f,
    0.140625f,  0.390625f,  0.234375f,  -1.140625f, -0.203125f, 0.421875f,  -0.578125f, 0.046875f,  0.671875f,
    0.96875f,   -0.171875f, -0.09375f,  -0.21875f,  -0.140625f, -0.359375f, 0.390625f,  -0.078125f, 0.671875f,
    0.203125f,  -0.625f,    -0.109375f, 0.203125f,  -0.296875f, 0.015625f,  -0.109375f, -0.640625f, -0.15625f,
    -0.078125f, -0.203125f, 0.015625f,  -0.859375f, 0.296875f,  -0.171875f, 0.578125f,  0.140625f,  0.25f,
    -0.046875f, 0.265625f,  -0.234375f, -0.171875f, -0.09375f,  -0.21875f,  -0.140625f, 1.15625f,   0.390625f,
    -0.078125f, 0.671875f,  0.203125f,  -1.28125f,  -0.109375f, 0.203125f,  -0.296875f, 0.015625f,  0.53125f,
};
// shape [2, 3]
const std::vector<float> kMatMulVectorLeftExpected = {
    0.40625f, -0.53125f, -0.046875f, 0.734375f, 0.40625f, -0.53125f,
};
// shape [2, 3]
const std::vector<float> kMatMulVectorRightExpected = {
    -0.1875f, 0.09375f, -0.421875f, 1.1875f, 0.140625f, -0.375f,
};
// shape [2, 3, 2, 2]
const std::vector<float> kBatchNormExpected = {
    -0.426324785f,
    -0.889900208f,
    -0.22764957f,
    -0.691225052f,
    0,
    0,
    0,
    0,
    0.558725297f,
    0.790686727f,
    0.459313273f,
    0.691274703f,
    -0.360099703f,
    -0.823675156f,
    -1.28725064f,
    -0.625f,
    0,
    0,
    0,
    0,
    0.525587976f,
    0.757549405f,
    0.426175892f,
    0.658137321f,
};
// shape [2, 3]
const std::vector<float> kBatchNormRank2Expected = {
    -0.426128209f, 0, 0.293544531f, -0.691290557f, 0, 0.426126719f,
};
// shape [2, 3, 4]
const std::vector<float> kSoftmaxAxis1Expected = {
    0.0144115826f, 0.131126598f,  0.0144115826f, 0.131126598f, 0.891613066f,   0.0138206407f,
    0.891613066f,  0.0138206407f, 0.0939753279f, 0.855052769f, 0.0939753279f,  0.855052769f,
    0.0144115826f, 0.131126598f,  0.895649433f,  0.131126598f, 0.891613066f,   0.0138206407f,
    0.0944007561f, 0.0138206407f, 0.0939753279f, 0.855052769f, 0.00994976703f, 0.855052769f,
};
// shape [2, 3, 4]
const std::vector<float> kSoftmaxLastExpected = {
    0.0509920083f,  0.703922987f,   0.0165546816f, 0.228530332f, 0.737569034f,  0.0173459612f,
    0.239453599f,   0.00563140912f, 0.0509920083f, 0.703922987f, 0.0165546816f, 0.228530332f,
    0.00476525119f, 0.0657822564f,  0.908096135f,  0.021356374f, 0.737569034f,  0.0173459612f,
    0.239453599f,   0.00563140912f, 0.0509920083f, 0.703922987f, 0.0165546816f, 0.228530332f,
};
// shape [2, 3, 4]
const std::vector<float> kLayerNormY = {
    -0.428041428f, 0, 0.132603586f, -0.703264236f, -1.09193897f,  0, 0.876428664f, 0.403231561f,
    -0.428041428f, 0, 0.132603586f, -0.703264236f, -0.167002708f, 0, 1.19291663f,  -0.100201607f,
    -1.09193897f,  0, 0.876428664f, 0.403231561f,  -0.428041428f, 0, 0.132603586f, -0.703264236f,
};
// shape [2, 3, 1]
const std::vector<float> kLayerNormMean = {
    -0.75f, -0.125f, 0.5f, 0.0625f, -0.375f, 0.25f,
};
// shape [2, 3, 1]
const std::vector<float> kLayerNormInvStd = {
    1.05044568f, 0.766258776f, 1.05044568f, 0.781648695f, 0.766258776f, 1.05044568f,
};
// shape [2, 3, 4]
const std::vector<float> kLayerNormAxis1Y = {
    0.352384269f,   0,
    -0.587307096f,  0.0652563423f,
    -0.339332998f,  -0.0913588852f,
    0.365435541f,   0.678665996f,
    -0.0130512686f, 0.391538054f,
    -0.326281726f,  -0.352384269f,
    0.455191135f,   0,
    0.62188077f,    0.245760456f,
    -0.260719806f,  -0.126085803f,
    0.213704735f,   0.812078059f,
    0.0235075224f,  0.312008947f,
    -0.502206147f,  -0.23721227f,
};
// shape [2, 1, 4]
const std::vector<float> kReduceMeanAxis1Keep = {
    0.0416666679f, 0.208333328f, -0.333333343f, -0.166666672f, -0.0833333358f, 0.0833333358f, 0.25f, -0.291666657f,
};
// shape [3]
const std::vector<float> kReduceMeanNeg = {
    -0.171875f,
    -0.125f,
    0.1875f,
};
// shape []
const std::vector<float> kReduceSumAll = {
    -0.875f,
};
// shape [1, 3, 1]
const std::vector<float> kReduceSumAxes02 = {
    -1.375f,
    -1,
    1.5f,
};

// shape [2, 2, 3, 4]
const std::vector<float> kAttnCausalMask0 = {
    -0.375f,       0,
    0.375f,        -0.625f,
    -0.25f,        0.125f,
    0.5f,          -0.5f,
    -0.247396246f, 0.12760374f,
    0.50260371f,   -0.497396231f,
    0.25f,         0.625f,
    -0.375f,       0,
    0.375f,        -0.625f,
    -0.25f,        0.125f,
    0.365898073f,  -0.215606272f,
    -0.259101897f, 0.115898088f,
    -0.5f,         -0.125f,
    0.25f,         0.625f,
    -0.444549948f, -0.069549948f,
    0.305450052f,  0.0704994798f,
    -0.375f,       0,
    0.375f,        0.0625f,
    0.125f,        0.5f,
    -0.5f,         -0.125f,
    0.21322313f,   0.5882231f,
    -0.41177687f,  -0.0367768705f,
    0.285158992f,  -0.220715374f,
    -0.339841068f, 0.0351589695f,
};
// shape [2, 3, 24]
const std::vector<float> kAttn3dGqa0 = {
    -0.0825186223f, -0.1593768f,     -0.0130098686f,  -0.103885546f,   0.0424814001f,   -0.0343767814f,  -0.10365738f,
    -0.0820739344f, -0.0406379923f,  -0.166252285f,   0.0213426184f,   0.0429260619f,   0.0760052055f,   -0.021220671f,
    0.17389515f,    0.13584742f,     -0.038796708f,   -0.0761048645f,  0.114018105f,    -0.0163350422f,  0.136939153f,
    0.146945849f,   -0.0470211431f,  -0.113060839f,   -0.187513813f,   0.00929026306f,  -0.00250038505f, -0.215051293f,
    -0.0625138134f, 0.134290278f,    -0.195643485f,   -0.0303989425f,  0.0431998223f,   -0.171214551f,   -0.070643492f,
    0.0946010575f,  0.160640717f,    -0.0646711588f,  0.0435937122f,   0.243117064f,    -0.0520713702f,  -0.206406295f,
    0.0876639932f,  -0.091225788f,   0.0990781859f,   0.247430027f,    -0.0324010849f,  -0.150921807f,   -0.192108229f,
    -0.161478594f,  0.0157661214f,   7.20843673e-05f, -0.0671082288f,  -0.0364785977f,  -0.183261514f,   -0.0843774974f,
    -0.0296776593f, -0.0901661441f,  -0.0582615174f,  0.0406224877f,   0.0781630576f,   0.059246663f,    0.11569991f,
    0.115946084f,   0.0302425809f,   -0.134300083f,   0.113140985f,    0.0811547637f,   0.0709024295f,   0.120980144f,
    0.0357607044f,  -0.179097563f,   0.00334371999f,  0.111610442f,    -0.00467070937f, 0.151263028f,    0.128343731f,
    -0.0526997f,    -0.0355338119f,  0.124248065f,    0.0259162541f,   0.16231899f,     0.0894661844f,   -0.0556841716f,
    -0.143773213f,  -0.0939095318f,  0.0181981176f,   -0.136970758f,   -0.0187732093f,  0.0310904551f,   -0.0748924464f,
    -0.111687958f,  -0.054402031f,   -0.150527284f,   0.0501075462f,   0.0133120362f,   0.162449956f,    0.107487336f,
    -0.109927371f,  0.0619726628f,   0.287449956f,    -0.0433878079f,  0.136973828f,    0.116336957f,    -0.0957057029f,
    0.0641902685f,  0.261973828f,    -0.0197547823f,  -0.174165681f,   -0.00209854543f, -0.00979805738f, -0.209155053f,
    -0.0491656959f, 0.122901455f,    -0.211190403f,   -0.010606613f,   0.0505341887f,   -0.182038218f,   -0.0861903876f,
    0.114393398f,   0.000886905938f, 0.121110998f,    0.0840764269f,   0.0601320863f,   0.125886917f,    0.031568177f,
    -0.0351284966f, 0.134886727f,    0.120206982f,    0.0619317181f,   0.0898715109f,   0.0344029553f,   -0.226258487f,
    -0.130247399f,  0.0315118171f,   -0.0104977638f,  -0.101258487f,   -0.00524740294f, -0.131793126f,   -0.130811557f,
    -0.0512225404f, -0.072688438f,   -0.00679312274f, -0.00581155717f,
};
// shape [1, 2, 3, 4]
const std::vector<float> kAttnPast0 = {
    -0.287052751f, 0.171959341f,  -0.12513724f,   -0.116992384f, -0.279825926f, 0.15974918f,
    0.0181479976f, -0.206950217f, -0.250110567f,  0.177017808f,  0.134990811f,  -0.239468694f,
    0.258293211f,  -0.056386739f, -0.0218667835f, -0.336546749f, 0.218399942f,  0.0880962163f,
    -0.153948203f, -0.284251899f, 0.233911335f,   0.172370359f,  -0.172818199f, -0.23435916f,
};
// shape [1, 2, 5, 4]
const std::vector<float> kAttnPast1 = {
    -0.25f, 0,       0.25f,   -0.375f, -0.125f, 0.125f,  0.375f, -0.25f, -0.625f, 0,
    0.625f, -0.375f, 0.25f,   -0.75f,  -0.125f, 0.5f,    -0.5f,  0.125f, 0.75f,   -0.25f,
    0,      0.25f,   -0.375f, -0.125f, 0.125f,  0.375f,  -0.25f, 0,      0.375f,  -0.625f,
    0,      0.625f,  -0.375f, 0.25f,   -0.75f,  -0.125f, 0.5f,   -0.5f,  0.125f,  0.75f,
};
// shape [1, 2, 5, 4]
const std::vector<float> kAttnPast2 = {
    -0.125f, 0.375f,  -0.25f, 0.25f,  -0.375f, 0.125f,  -0.5f,   0,      -0.375f, 0,
    0.375f,  -0.625f, -0.25f, 0.125f, 0.5f,    -0.5f,   -0.125f, 0.25f,  0.625f,  -0.375f,
    0.5f,    -0.125f, 0.375f, -0.25f, 0.25f,   -0.375f, 0.125f,  -0.5f,  0,       0.375f,
    -0.625f, -0.25f,  0.125f, 0.5f,   -0.5f,   -0.125f, 0.25f,   0.625f, -0.375f, 0,
};
// shape [1, 2, 3, 4]
const std::vector<float> kAttnQkMode0_0 = {
    0.00520735234f, 0.38020736f,   -0.203044549f,  -0.24479264f,  -0.18000637f,   0.194993615f,
    0.180845529f,   -0.430006355f, -0.0255924873f, 0.349407524f,  -0.168669313f,  -0.275592476f,
    0.184813231f,   -0.311471075f, -0.0952680707f, 0.279731929f,  0.00576799735f, -0.293454051f,
    -0.0458859019f, 0.329114109f,  0.450791955f,   -0.399616778f, -0.116375603f,  0.258624405f,
};
// shape [1, 2, 3, 5]
const std::vector<float> kAttnQkMode0_1 = {
    -0.375f,   -0.5625f,  -0.75f,    -0.9375f,  2.125f,  0.1875f,  0.15625f,  0.125f,    0.09375f, -1.15625f,
    -0.84375f, -0.71875f, -0.59375f, -0.46875f, 0.875f,  -1,       -0.78125f, -0.15625f, -0.75f,   -0.125f,
    -0.1875f,  -1.09375f, 2.875f,    -1.28125f, 2.6875f, -0.4375f, 1.25f,     -1.53125f, 1.375f,   -1.40625f,
};
// shape [1, 2, 3, 4]
const std::vector<float> kAttnQkMode1_0 = {
    0.00520735234f, 0.38020736f,   -0.203044549f,  -0.24479264f,  -0.18000637f,   0.194993615f,
    0.180845529f,   -0.430006355f, -0.0255924873f, 0.349407524f,  -0.168669313f,  -0.275592476f,
    0.184813231f,   -0.311471075f, -0.0952680707f, 0.279731929f,  0.00576799735f, -0.293454051f,
    -0.0458859019f, 0.329114109f,  0.450791955f,   -0.399616778f, -0.116375603f,  0.258624405f,
};
// shape [1, 2, 3, 5]
const std::vector<float> kAttnQkMode1_1 = {
    -0.625f,   -0.5625f,  -0.5f,     -1.3125f,  2,       0.3125f,  0.53125f,  -0.125f,   0.09375f, -0.90625f,
    -1.21875f, -0.84375f, -0.46875f, -0.09375f, 0.625f,  -1.25f,   -0.78125f, 0.09375f,  -1.125f,  -0.25f,
    -0.0625f,  -0.71875f, 2.625f,    -1.28125f, 2.9375f, -0.8125f, 1.125f,    -1.40625f, 1.75f,    -1.65625f,
};
// shape [1, 2, 3, 4]
const std::vector<float> kAttnQkMode2_0 = {
    0.00520735234f, 0.38020736f,   -0.203044549f,  -0.24479264f,  -0.18000637f,   0.194993615f,
    0.180845529f,   -0.430006355f, -0.0255924873f, 0.349407524f,  -0.168669313f,  -0.275592476f,
    0.184813231f,   -0.311471075f, -0.0952680707f, 0.279731929f,  0.00576799735f, -0.293454051f,
    -0.0458859019f, 0.329114109f,  0.450791955f,   -0.399616778f, -0.116375603f,  0.258624405f,
};
// shape [1, 2, 3, 5]
const std::vector<float> kAttnQkMode2_1 = {
    -0.591177881f, -0.537536025f,  -0.482269138f,  -1.05585837f,  1.30509245f,   0.308056027f,
    0.510098338f,  -0.124711454f,  0.0936281234f,  -0.810011864f, -1.00645053f,  -0.764744997f,
    -0.454064608f, -0.0936281234f, 0.591177881f,   -1.02339268f,  -0.717514277f, 0.0936281234f,
    -0.952723384f, -0.24771063f,   -0.0624638535f, -0.668363988f, 1.41206336f,   -1.03986001f,
    1.44144368f,   -0.741372764f,  0.952723384f,   -1.10110724f,  1.23480093f,   -1.202986f,
};
// shape [1, 2, 3, 4]
const std::vector<float> kAttnQkMode3_0 = {
    0.00520735234f, 0.38020736f,   -0.203044549f,  -0.24479264f,  -0.18000637f,   0.194993615f,
    0.180845529f,   -0.430006355f, -0.0255924873f, 0.349407524f,  -0.168669313f,  -0.275592476f,
    0.184813231f,   -0.311471075f, -0.0952680707f, 0.279731929f,  0.00576799735f, -0.293454051f,
    -0.0458859019f, 0.329114109f,  0.450791955f,   -0.399616778f, -0.116375603f,  0.258624405f,
};
// shape [1, 2, 3, 5]
const std::vector<float> kAttnQkMode3_1 = {
    0.0956068039f, 0.100875363f,  0.106607363f,  0.0600731634f, 0.636837304f,  0.249592841f,
    0.305476636f,  0.161913693f,  0.20142217f,   0.0815946013f, 0.0873861983f, 0.111279234f,
    0.151824161f,  0.217709079f,  0.431801349f,  0.115488723f,  0.156812578f,  0.352903187f,
    0.123945534f,  0.250849962f,  0.0926777348f, 0.0505634025f, 0.404906243f,  0.0348736718f,
    0.416978985f,  0.0667336881f, 0.363146394f,  0.0465708785f, 0.481489092f,  0.0420599729f,
};
// shape [1, 4, 2, 6]
const std::vector<float> kAttnGqa4d0 = {
    0.0356416702f,  -0.0473561324f, -0.109380722f, -0.21435833f,  0.16064167f,    0.0776438713f, 0.0406854451f,
    -0.0426385552f, -0.122395858f,  -0.209314555f, 0.165685445f,  0.0823614448f,  0.0454976931f, -0.0376864634f,
    -0.135414973f,  -0.204502285f,  0.170497701f,  0.0873135328f, -0.0671610758f, 0.0683707893f, -0.126612961f,
    -0.317161083f,  0.0578389317f,  0.193370789f,  -0.116410144f, -0.139831051f,  0.235168934f,  0.133321598f,
    0.00858984888f, -0.0148310512f, -0.016072046f, -0.230580941f, 0.144419014f,   0.120537348f,  0.10892795f,
    -0.105580963f,  -0.0608991459f, -0.19187814f,  0.18312186f,   0.128703073f,   0.0641008615f, -0.0668781549f,
    -0.198206946f,  -0.0431817099f, 0.331818283f,  0.113518253f,  -0.0732069612f, 0.0818182826f,
};
// shape [1, 1, 2, 4]
const std::vector<float> kAttnSoftcapBool0 = {
    -0.254011333f, 0.120988674f, 0.495988697f, -0.504011333f, -0.270475864f, 0.104524165f, 0.479524195f, -0.520475864f,
};

// ---- Conv ---------------------------------------------------------------------------------

TEST(NnConvTest, HandComputedWithBias) {
  Tensor y = Run1("Conv",
                  {{"X", F32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
                   {"W", F32({1, 1, 2, 2}, {1, 1, 1, 1}), true},
                   {"B", F32({1}, {0.5f}), true}},
                  {});
  ExpectValues(y, {1, 1, 2, 2}, {12.5f, 16.5f, 24.5f, 28.5f});
}

TEST(NnConvTest, HandComputedPaddedStride) {
  // 3x3 ones kernel, pads 1, stride 2 over 1..9: window sums at (0,0), (0,2), (2,0), (2,2).
  Tensor y = Run1("Conv",
                  {{"X", F32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
                   {"W", F32({1, 1, 3, 3}, std::vector<float>(9, 1.0f)), true}},
                  Attrs({{"pads", Ints({1, 1, 1, 1})}, {"strides", Ints({2, 2})}}));
  ExpectValues(y, {1, 1, 2, 2}, {12, 16, 24, 28});
}

TEST(NnConvTest, GroupsDilationStridePadsMatchOnnxRuntime) {
  Tensor y = Run1("Conv",
                  {{"X", Pat({1, 4, 5, 6})}, {"W", Pat({6, 2, 3, 2}, 5, 1, 13), true}, {"B", Pat({6}, 3, 2, 11), true}},
                  Attrs({{"group", int64_t{2}},
                         {"dilations", Ints({2, 1})},
                         {"strides", Ints({1, 2})},
                         {"pads", Ints({1, 0, 2, 1})}}));
  ExpectValues(y, {1, 6, 4, 3}, kConvGroupedExpected);
}

TEST(NnConvTest, SameUpperStride2MatchesOnnxRuntime) {
  Tensor y = Run1("Conv", {{"X", Pat({1, 2, 5, 5})}, {"W", Pat({3, 2, 3, 3}, 5, 1, 13), true}},
                  Attrs({{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints({2, 2})}}));
  ExpectValues(y, {1, 3, 3, 3}, kConvSameUpperExpected);
}

TEST(NnConvTest, SameLowerEvenKernelMatchesOnnxRuntime) {
  Tensor y = Run1("Conv", {{"X", Pat({1, 1, 4, 4})}, {"W", Pat({1, 1, 2, 2}, 5, 1, 13), true}},
                  Attrs({{"auto_pad", std::string("SAME_LOWER")}}));
  ExpectValues(y, {1, 1, 4, 4}, kConvSameLowerExpected);
}

TEST(NnConvTest, OneSpatialDimMatchesOnnxRuntime) {
  Tensor y = Run1("Conv", {{"X", Pat({2, 3, 7})}, {"W", Pat({2, 3, 3}, 5, 1, 13), true}},
                  Attrs({{"strides", Ints({2})}, {"pads", Ints({1, 1})}}));
  ExpectValues(y, {2, 2, 4}, kConv1dExpected);
}

TEST(NnConvTest, ThreeSpatialDimsMatchOnnxRuntime) {
  Tensor y =
      Run1("Conv",
           {{"X", Pat({1, 2, 4, 4, 4})}, {"W", Pat({2, 2, 2, 2, 2}, 5, 1, 13), true}, {"B", Pat({2}, 3, 2, 11), true}},
           Attrs({{"strides", Ints({2, 1, 2})}, {"pads", Ints({0, 1, 1, 1, 0, 0})}}));
  ExpectValues(y, {1, 2, 2, 4, 2}, kConv3dExpected);
}

TEST(NnConvTest, DepthwiseMatchesOnnxRuntime) {
  Tensor y = Run1("Conv", {{"X", Pat({1, 3, 4, 4})}, {"W", Pat({3, 1, 3, 3}, 5, 1, 13), true}},
                  Attrs({{"group", int64_t{3}}, {"pads", Ints({1, 1, 1, 1})}, {"strides", Ints({2, 2})}}));
  ExpectValues(y, {1, 3, 2, 2}, kConvDepthwiseExpected);
}

TEST(NnConvTest, HalfPrecisionInputsGiveHalfOutput) {
  Tensor x = *Tensor::Zeros(DType::kF16, {1, 1, 2, 2});
  Tensor w = *Tensor::Zeros(DType::kF16, {1, 1, 1, 1});
  for (int i = 0; i < 4; ++i) x.SetF32(i, static_cast<float>(i + 1));
  w.SetF32(0, 0.5f);
  Tensor y = Run1("Conv", {{"X", x}, {"W", w, true}}, {});
  EXPECT_EQ(y.dtype(), DType::kF16);
  ExpectValues(y, {1, 1, 2, 2}, {0.5f, 1.0f, 1.5f, 2.0f});
}

TEST(NnConvTest, SymbolicBatchShape) {
  EXPECT_EQ(ShapeOf("Conv", {{"X", {kBatch, 3, 224, 224}}, {"W", {64, 3, 7, 7}}},
                    Attrs({{"strides", Ints({2, 2})}, {"pads", Ints({3, 3, 3, 3})}})),
            "[batch,64,112,112]");
  EXPECT_EQ(ShapeOf("Conv", {{"X", {kBatch, 64, 56, 56}}, {"W", {128, 64, 3, 3}}, {"B", {128}}},
                    Attrs({{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints({2, 2})}})),
            "[batch,128,28,28]");
  EXPECT_EQ(ShapeOf("Conv", {{"X", {kBatch, 32, 10}}, {"W", {32, 1, 3}}},
                    Attrs({{"group", int64_t{32}}, {"auto_pad", std::string("VALID")}})),
            "[batch,32,8]");
}

TEST(NnConvTest, SymbolicSpatialDims) {
  const Dim h = Dim::Symbol("h"), w = Dim::Symbol("w");
  EXPECT_EQ(ShapeOf("Conv", {{"X", {kBatch, 8, h, w}}, {"W", {16, 8, 3, 3}}}, Attrs({{"pads", Ints({1, 1, 1, 1})}})),
            "[batch,16,h,w]");
  EXPECT_TRUE(Contains(ShapeOf("Conv", {{"X", {kBatch, 8, h, w}}, {"W", {16, 8, 3, 3}}},
                               Attrs({{"pads", Ints({1, 1, 1, 1})}, {"strides", Ints({2, 2})}})),
                       "input 'X' has symbolic size h along spatial axis 0"));
}

TEST(NnConvTest, Errors) {
  const OpInput x{"X", Pat({1, 4, 5, 5})};
  const OpInput w{"W", Pat({2, 4, 3, 3}), true};
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, {"W", Pat({2, 4, 3}), true}}, {}), "input 'W' has rank 3, expected 4"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {{"X", Pat({4, 5})}, w}, {}), "input 'X' has rank 2, expected 3, 4 or 5"));
  EXPECT_TRUE(Contains(
      ErrorOf("Conv", {{"X", Pat({1, 3, 5, 5})}, {"W", Pat({4, 2, 3, 3}), true}}, Attrs({{"group", int64_t{2}}})),
      "input 'X' has 3 channels, expected 4 (weight 'W' channels 2 x group 2)"));
  EXPECT_TRUE(
      Contains(ErrorOf("Conv", {x, w}, Attrs({{"group", int64_t{0}}})), "attribute 'group' is 0, expected >= 1"));
  EXPECT_TRUE(Contains(
      ErrorOf("Conv", {{"X", Pat({1, 4, 5, 5})}, {"W", Pat({6, 1, 3, 3}), true}}, Attrs({{"group", int64_t{4}}})),
      "weight 'W' has 6 output channels, expected a multiple of group 4"));
  EXPECT_TRUE(
      Contains(ErrorOf("Conv", {x, w}, Attrs({{"pads", Ints({1, 1})}})), "attribute 'pads' has 2 values, expected 4"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w}, Attrs({{"pads", Ints({1, -1, 1, 1})}})),
                       "attribute 'pads' has -1 at index 1, expected >= 0"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w}, Attrs({{"strides", Ints({1, 0})}})),
                       "attribute 'strides' has 0 at index 1, expected >= 1"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w}, Attrs({{"strides", Ints({-2, 1})}})),
                       "attribute 'strides' has -2 at index 0, expected >= 1"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w}, Attrs({{"strides", Ints({1, 1, 1})}})),
                       "attribute 'strides' has 3 values, expected 2"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w}, Attrs({{"dilations", Ints({0, 1})}})),
                       "attribute 'dilations' has 0 at index 0, expected >= 1"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, {"W", Pat({2, 4, 7, 3}), true}}, {}),
                       "input 'X' has size 5 along spatial axis 0 (5 with pads), smaller than the kernel "
                       "extent 7 (kernel 7, dilation 1)"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w}, Attrs({{"dilations", Ints({1, 3})}})),
                       "smaller than the kernel extent 7 (kernel 3, dilation 3)"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w, {"B", Pat({3}), true}}, {}),
                       "input 'B' has 3 elements, expected 2 (the output channels of weight 'W')"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w}, Attrs({{"kernel_shape", Ints({5, 5})}})),
                       "attribute 'kernel_shape' is [5,5], expected [3,3]"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w}, Attrs({{"auto_pad", std::string("SAME")}})),
                       "attribute 'auto_pad' is 'SAME', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID"));
  EXPECT_TRUE(
      Contains(ErrorOf("Conv", {x, w}, Attrs({{"auto_pad", std::string("VALID")}, {"pads", Ints({1, 1, 1, 1})}})),
               "attribute 'pads' cannot be combined with auto_pad VALID"));
  EXPECT_TRUE(
      Contains(ErrorOf("Conv", {x, w}, Attrs({{"group", 2.0f}})), "attribute 'group' has type float, expected int"));
  Tensor w16 = *Tensor::Zeros(DType::kF16, {2, 4, 3, 3});
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, {"W", w16, true}}, {}), "input 'W' has dtype f16, expected f32"));
}

TEST(NnConvTest, HostileAttributesAreRefusedWithoutOverflow) {
  const OpInput x{"X", Pat({1, 1, 5, 5})};
  const OpInput w{"W", Pat({1, 1, 3, 3}), true};
  const int64_t big = INT64_MAX / 2 + 7;
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w}, Attrs({{"dilations", Ints({big, 1})}})), "overflows int64"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w}, Attrs({{"pads", Ints({big, 0, big, 0})}})), "overflow"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w}, Attrs({{"pads", Ints({INT64_MAX - 2, 0, 0, 0})}})), "overflow"));
  EXPECT_TRUE(Contains(ErrorOf("Conv", {x, w}, Attrs({{"group", INT64_MAX}})),
                       "weight 'W' has 1 output channels, expected a multiple of group"));
  // Huge strides are fine: one output per axis.
  auto y = RunOp("Conv", {x, w}, Attrs({{"strides", Ints({INT64_MAX, INT64_MAX})}}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dims(), Ints({1, 1, 1, 1}));
}

// A grid of strides, dilations and (asymmetric, oversized) pads: the kernel's precomputed tap
// ranges agree with a per-output bounds-checked loop, and SAME padding gives ceil(in / stride).
TEST(NnConvTest, AttributeGridMatchesNaiveLoop) {
  const int64_t channels = 2, height = 5, width = 4;
  const Tensor x = Pat({1, channels, height, width});
  for (int64_t k : {1, 2, 3}) {
    const Tensor w = Pat({2, 1, k, k}, 5, 1, 13);
    for (int64_t stride : {1, 2, 3, 7}) {
      for (int64_t dil : {1, 2, 3}) {
        for (int64_t p = 0; p < 81; ++p) {
          const std::vector<int64_t> pads = {p % 3 * 2, p / 3 % 3, p / 9 % 3 * 2, p / 27 % 3};
          Attributes a = Attrs({{"group", int64_t{2}},
                                {"strides", Ints({stride, stride})},
                                {"dilations", Ints({dil, dil})},
                                {"pads", pads}});
          auto r = RunOp("Conv", {{"X", x}, {"W", w, true}}, a);
          const int64_t ext = (k - 1) * dil + 1;
          const int64_t ph = height + pads[0] + pads[2], pw = width + pads[1] + pads[3];
          if (ph < ext || pw < ext) {
            EXPECT_FALSE(r.ok());
            continue;
          }
          ASSERT_TRUE(r.ok()) << r.status();
          const int64_t oh = (ph - ext) / stride + 1, ow = (pw - ext) / stride + 1;
          ASSERT_EQ((*r)[0].dims(), Ints({1, 2, oh, ow}));
          std::vector<float> expected;
          for (int64_t m = 0; m < 2; ++m) {
            for (int64_t i = 0; i < oh; ++i) {
              for (int64_t j = 0; j < ow; ++j) {
                float sum = 0;
                for (int64_t u = 0; u < k; ++u) {
                  for (int64_t v = 0; v < k; ++v) {
                    const int64_t y = i * stride - pads[0] + u * dil, z = j * stride - pads[1] + v * dil;
                    if (y < 0 || y >= height || z < 0 || z >= width) continue;
                    sum += x.GetF32((m * height + y) * width + z) * w.GetF32((m * k + u) * k + v);
                  }
                }
                expected.push_back(sum);
              }
            }
          }
          ExpectValues((*r)[0], {1, 2, oh, ow}, expected);
        }
        for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
          auto r = RunOp("Conv", {{"X", x}, {"W", w, true}},
                         Attrs({{"group", int64_t{2}},
                                {"strides", Ints({stride, stride})},
                                {"dilations", Ints({dil, dil})},
                                {"auto_pad", std::string(mode)}}));
          ASSERT_TRUE(r.ok()) << r.status();
          EXPECT_EQ((*r)[0].dims(), Ints({1, 2, (height + stride - 1) / stride, (width + stride - 1) / stride}));
        }
      }
    }
  }
}

// ---- MaxPool ------------------------------------------------------------------------------

TEST(NnMaxPoolTest, HandComputed) {
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i + 1);
  Tensor y = Run1("MaxPool", {{"X", F32({1, 1, 4, 4}, x)}},
                  Attrs({{"kernel_shape", Ints({2, 2})}, {"strides", Ints({2, 2})}}));
  ExpectValues(y, {1, 1, 2, 2}, {6, 8, 14, 16});
}

TEST(NnMaxPoolTest, IndicesOutputRowAndColumnMajor) {
  // Two channels of 4x4 with values 1..32: each 2x2 window's maximum is its bottom-right tap.
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i + 1);
  const Attributes pool = Attrs({{"kernel_shape", Ints({2, 2})}, {"strides", Ints({2, 2})}});
  auto r = RunOp("MaxPool", {{"X", F32({1, 2, 4, 4}, x)}}, pool, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues((*r)[0], {1, 2, 2, 2}, {6, 8, 14, 16, 22, 24, 30, 32});
  EXPECT_EQ((*r)[1].dtype(), DType::kI64);
  EXPECT_EQ((*r)[1].ToI64(), Ints({5, 7, 13, 15, 21, 23, 29, 31}));  // flat index, channel offset included
  Attributes column = pool;
  column.Set("storage_order", int64_t{1});
  auto c = RunOp("MaxPool", {{"X", F32({1, 2, 4, 4}, x)}}, column, 2);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)[1].ToI64(), Ints({5, 13, 7, 15, 21, 29, 23, 31}));  // h + w * H within each channel
  // Ties keep the first maximum in window order; padding taps never win.
  auto tie = RunOp("MaxPool", {{"X", F32({1, 1, 1, 3}, {2, 2, 1})}},
                   Attrs({{"kernel_shape", Ints({1, 2})}, {"pads", Ints({0, 1, 0, 0})}}), 2);
  ASSERT_TRUE(tie.ok()) << tie.status();
  ExpectValues((*tie)[0], {1, 1, 1, 3}, {2, 2, 2});
  EXPECT_EQ((*tie)[1].ToI64(), Ints({0, 0, 1}));
}

TEST(NnMaxPoolTest, CeilModeWithPadsMatchesOnnxRuntime) {
  Tensor y = Run1("MaxPool", {{"X", Pat({1, 2, 6, 7})}},
                  Attrs({{"kernel_shape", Ints({3, 3})},
                         {"strides", Ints({2, 2})},
                         {"pads", Ints({1, 1, 1, 1})},
                         {"ceil_mode", int64_t{1}}}));
  ExpectValues(y, {1, 2, 4, 4}, kMaxPoolCeilExpected);
}

TEST(NnMaxPoolTest, CeilModeDropsWindowStartingInRightPadding) {
  // ceil((4 + 1 - 2) / 2) + 1 = 3 windows, but the third would start at 4 = in + pad_begin.
  Tensor y = Run1(
      "MaxPool", {{"X", Pat({1, 1, 4})}},
      Attrs({{"kernel_shape", Ints({2})}, {"strides", Ints({2})}, {"pads", Ints({0, 1})}, {"ceil_mode", int64_t{1}}}));
  ExpectValues(y, {1, 1, 2}, kMaxPoolCeilDropExpected);
  Tensor floor = Run1("MaxPool", {{"X", Pat({1, 1, 5})}},
                      Attrs({{"kernel_shape", Ints({2})}, {"strides", Ints({2})}, {"ceil_mode", int64_t{1}}}));
  EXPECT_EQ(floor.dims(), Ints({1, 1, 3}));  // the last window starts inside the input
}

TEST(NnMaxPoolTest, DilatedMatchesOnnxRuntime) {
  Tensor y =
      Run1("MaxPool", {{"X", Pat({1, 1, 5, 5})}}, Attrs({{"kernel_shape", Ints({2, 2})}, {"dilations", Ints({2, 2})}}));
  ExpectValues(y, {1, 1, 3, 3}, kMaxPoolDilatedExpected);
}

TEST(NnMaxPoolTest, ThreeSpatialDimsMatchOnnxRuntime) {
  Tensor y = Run1("MaxPool", {{"X", Pat({1, 1, 3, 4, 4})}},
                  Attrs({{"kernel_shape", Ints({2, 2, 2})}, {"strides", Ints({1, 2, 2})}}));
  ExpectValues(y, {1, 1, 2, 2, 2}, kMaxPool3dExpected);
}

TEST(NnMaxPoolTest, SameUpperMatchesOnnxRuntime) {
  Tensor y =
      Run1("MaxPool", {{"X", Pat({1, 1, 5, 5})}},
           Attrs({{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"auto_pad", std::string("SAME_UPPER")}}));
  ExpectValues(y, {1, 1, 3, 3}, kMaxPoolSameUpperExpected);
}

TEST(NnMaxPoolTest, SymbolicBatchShape) {
  EXPECT_EQ(ShapeOf("MaxPool", {{"X", {kBatch, 64, 112, 112}}},
                    Attrs({{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"pads", Ints({1, 1, 1, 1})}})),
            "[batch,64,56,56]");
  EXPECT_EQ(ShapeOf("MaxPool", {{"X", {kBatch, 8, 6, 7}}},
                    Attrs({{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"ceil_mode", int64_t{1}}})),
            "[batch,8,3,3]");
}

TEST(NnMaxPoolTest, Errors) {
  const OpInput x{"X", Pat({1, 1, 4, 4})};
  EXPECT_TRUE(Contains(ErrorOf("MaxPool", {x}, {}), "required attribute 'kernel_shape' is missing"));
  EXPECT_TRUE(Contains(ErrorOf("MaxPool", {x}, Attrs({{"kernel_shape", Ints({2})}})),
                       "attribute 'kernel_shape' has 1 values, expected 2"));
  EXPECT_TRUE(Contains(ErrorOf("MaxPool", {x}, Attrs({{"kernel_shape", Ints({2, 0})}})),
                       "kernel size is 0 along spatial axis 1, expected >= 1"));
  EXPECT_TRUE(Contains(ErrorOf("MaxPool", {x}, Attrs({{"kernel_shape", Ints({5, 2})}})),
                       "input 'X' has size 4 along spatial axis 0 (4 with pads), smaller than the kernel extent 5"));
  EXPECT_TRUE(Contains(ErrorOf("MaxPool", {x}, Attrs({{"kernel_shape", Ints({2, 2})}, {"ceil_mode", int64_t{2}}})),
                       "attribute 'ceil_mode' is 2, expected 0 or 1"));
  EXPECT_TRUE(Contains(ErrorOf("MaxPool", {x}, Attrs({{"kernel_shape", Ints({2, 2})}, {"storage_order", int64_t{3}}})),
                       "attribute 'storage_order' is 3, expected 0 or 1"));
  EXPECT_TRUE(Contains(ErrorOf("MaxPool", {x}, Attrs({{"kernel_shape", Ints({2, 2})}, {"strides", Ints({0, 1})}})),
                       "attribute 'strides' has 0 at index 0, expected >= 1"));
  EXPECT_TRUE(Contains(ErrorOf("MaxPool", {{"X", Pat({4, 4})}}, Attrs({{"kernel_shape", Ints({2})}})),
                       "input 'X' has rank 2, expected 3, 4 or 5"));
  EXPECT_TRUE(Contains(
      ErrorOf("MaxPool", {{"X", Tensor::FromI64({1, 1, 2, 2}, {1, 2, 3, 4})}}, Attrs({{"kernel_shape", Ints({2, 2})}})),
      "input 'X' has dtype i64, expected a float type"));
}

// ---- AveragePool / GlobalAveragePool ------------------------------------------------------

TEST(NnAveragePoolTest, HandComputedCountIncludePad) {
  const OpInput x{"X", F32({1, 1, 2, 2}, {1, 2, 3, 4})};
  Attributes a = Attrs({{"kernel_shape", Ints({2, 2})}, {"pads", Ints({1, 1, 1, 1})}});
  ExpectValues(Run1("AveragePool", {x}, a), {1, 1, 3, 3}, {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
  a.Set("count_include_pad", int64_t{1});
  ExpectValues(Run1("AveragePool", {x}, a), {1, 1, 3, 3}, {0.25f, 0.75f, 0.5f, 1, 2.5f, 1.5f, 0.75f, 1.75f, 1});
}

TEST(NnAveragePoolTest, CeilModeWithPadsMatchesOnnxRuntime) {
  for (int64_t include_pad : {0, 1}) {
    Tensor y = Run1("AveragePool", {{"X", Pat({1, 2, 5, 6})}},
                    Attrs({{"kernel_shape", Ints({3, 3})},
                           {"strides", Ints({2, 2})},
                           {"pads", Ints({1, 1, 1, 1})},
                           {"ceil_mode", int64_t{1}},
                           {"count_include_pad", include_pad}}));
    ExpectValues(y, {1, 2, 3, 4}, include_pad ? kAvgPoolCeilPad1Expected : kAvgPoolCeilPad0Expected);
  }
}

TEST(NnAveragePoolTest, SameUpperMatchesOnnxRuntime) {
  for (int64_t include_pad : {0, 1}) {
    Tensor y = Run1("AveragePool", {{"X", Pat({1, 1, 6, 6})}},
                    Attrs({{"kernel_shape", Ints({3, 3})},
                           {"strides", Ints({2, 2})},
                           {"auto_pad", std::string("SAME_UPPER")},
                           {"count_include_pad", include_pad}}));
    ExpectValues(y, {1, 1, 3, 3}, include_pad ? kAvgPoolSameUpperPad1Expected : kAvgPoolSameUpperPad0Expected);
  }
}

TEST(NnAveragePoolTest, DilatedCeilModeMatchesOnnxRuntime) {
  // Opset 19: the last window's second tap lies past the padded input and is not counted.
  Tensor y = Run1("AveragePool", {{"X", Pat({1, 1, 7})}},
                  Attrs({{"kernel_shape", Ints({2})},
                         {"strides", Ints({2})},
                         {"pads", Ints({1, 1})},
                         {"dilations", Ints({2})},
                         {"ceil_mode", int64_t{1}},
                         {"count_include_pad", int64_t{1}}}));
  ExpectValues(y, {1, 1, 4}, kAvgPoolDilatedExpected);
}

TEST(NnAveragePoolTest, ShapesAndErrors) {
  EXPECT_EQ(ShapeOf("AveragePool", {{"X", {kBatch, 16, 9, 9}}},
                    Attrs({{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"ceil_mode", int64_t{1}}})),
            "[batch,16,4,4]");
  EXPECT_TRUE(Contains(ErrorOf("AveragePool", {{"X", Pat({1, 1, 4, 4})}},
                               Attrs({{"kernel_shape", Ints({2, 2})}, {"count_include_pad", int64_t{-1}}})),
                       "attribute 'count_include_pad' is -1, expected 0 or 1"));
  EXPECT_TRUE(Contains(ErrorOf("AveragePool", {{"X", Pat({1, 1, 4, 4})}},
                               Attrs({{"kernel_shape", Ints({2, 2})}, {"pads", Ints({0, 0, 0})}})),
                       "attribute 'pads' has 3 values, expected 4"));
}

TEST(NnGlobalAveragePoolTest, MatchesOnnxRuntime) {
  ExpectValues(Run1("GlobalAveragePool", {{"X", Pat({2, 3, 2, 3})}}, {}), {2, 3, 1, 1}, kGlobalAvgPoolExpected);
  ExpectValues(Run1("GlobalAveragePool", {{"X", F32({1, 2, 3}, {1, 2, 6, -1, 0, 4})}}, {}), {1, 2, 1}, {3, 1});
}

TEST(NnGlobalAveragePoolTest, ShapesAndErrors) {
  EXPECT_EQ(ShapeOf("GlobalAveragePool", {{"X", {kBatch, 2048, 7, 7}}}, {}), "[batch,2048,1,1]");
  EXPECT_EQ(ShapeOf("GlobalAveragePool", {{"X", {kBatch, 8, 4, 4, 4}}}, {}), "[batch,8,1,1,1]");
  EXPECT_TRUE(
      Contains(ErrorOf("GlobalAveragePool", {{"X", Pat({2, 3})}}, {}), "input 'X' has rank 2, expected 3, 4 or 5"));
}

// ---- Gemm / MatMul ------------------------------------------------------------------------

TEST(NnGemmTest, HandComputed) {
  Tensor y = Run1("Gemm", {{"A", F32({2, 2}, {1, 2, 3, 4})}, {"B", F32({2, 2}, {5, 6, 7, 8}), true}}, {});
  ExpectValues(y, {2, 2}, {19, 22, 43, 50});
}

TEST(NnGemmTest, TransposesAlphaBetaMatchOnnxRuntime) {
  Tensor y = Run1("Gemm", {{"A", Pat({4, 3})}, {"B", Pat({5, 4}, 5, 1, 13), true}, {"C", Pat({5}, 3, 2, 11), true}},
                  Attrs({{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}));
  ExpectValues(y, {3, 5}, kGemmTransExpected);
}

TEST(NnGemmTest, ColumnBiasMatchesOnnxRuntime) {
  Tensor y = Run1("Gemm", {{"A", Pat({3, 4})}, {"B", Pat({4, 5}, 5, 1, 13), true}, {"C", Pat({3, 1}, 3, 2, 11), true}},
                  Attrs({{"alpha", 1.5f}, {"beta", -1.0f}}));
  ExpectValues(y, {3, 5}, kGemmColumnBiasExpected);
}

TEST(NnGemmTest, ZeroBetaIgnoresC) {
  Tensor y = Run1("Gemm", {{"A", F32({1, 2}, {1, 2})}, {"B", F32({2, 1}, {3, 4}), true}, {"C", F32({1}, {NAN}), true}},
                  Attrs({{"beta", 0.0f}}));
  ExpectValues(y, {1, 1}, {11});
}

TEST(NnGemmTest, ShapesAndErrors) {
  EXPECT_EQ(
      ShapeOf("Gemm", {{"A", {kBatch, 2048}}, {"B", {1000, 2048}}, {"C", {1000}}}, Attrs({{"transB", int64_t{1}}})),
      "[batch,1000]");
  EXPECT_TRUE(
      Contains(ErrorOf("Gemm", {{"A", Pat({2, 3, 4})}, {"B", Pat({4, 5})}}, {}), "input 'A' has rank 3, expected 2"));
  EXPECT_TRUE(Contains(ErrorOf("Gemm", {{"A", Pat({2, 3})}, {"B", Pat({4, 5})}}, {}),
                       "input 'B' has K=4 (dim 0, transB=0), expected 3 like input 'A' (dim 1, transA=0)"));
  EXPECT_TRUE(Contains(ErrorOf("Gemm", {{"A", Pat({2, 3})}, {"B", Pat({3, 5})}, {"C", Pat({3})}}, {}),
                       "input 'C' has shape [3], expected a shape that broadcasts to [2,5]"));
  EXPECT_TRUE(Contains(ErrorOf("Gemm", {{"A", Pat({2, 3})}, {"B", Pat({3, 5})}}, Attrs({{"transA", int64_t{2}}})),
                       "attribute 'transA' is 2, expected 0 or 1"));
}

TEST(NnMatMulTest, HandComputed) {
  Tensor y = Run1("MatMul", {{"A", F32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"B", F32({3, 1}, {1, 0, -1})}}, {});
  ExpectValues(y, {2, 1}, {-2, -2});
}

TEST(NnMatMulTest, BatchedBroadcastMatchesOnnxRuntime) {
  Tensor y = Run1("MatMul", {{"A", Pat({2, 1, 3, 4})}, {"B", Pat({3, 4, 5}, 5, 1, 13)}}, {});
  ExpectValues(y, {2, 3, 3, 5}, kMatMulBroadcastExpected);
}

TEST(NnMatMulTest, VectorOperandsMatchOnnxRuntime) {
  ExpectValues(Run1("MatMul", {{"A", Pat({4})}, {"B", Pat({2, 4, 3}, 5, 1, 13)}}, {}), {2, 3},
               kMatMulVectorLeftExpected);
  ExpectValues(Run1("MatMul", {{"A", Pat({2, 3, 4})}, {"B", Pat({4}, 5, 1, 13)}}, {}), {2, 3},
               kMatMulVectorRightExpected);
  ExpectValues(Run1("MatMul", {{"A", F32({3}, {1, 2, 3})}, {"B", F32({3}, {4, 5, 6})}}, {}), {}, {32});
}

TEST(NnMatMulTest, SymbolicShapes) {
  EXPECT_EQ(ShapeOf("MatMul", {{"A", {kBatch, 197, 768}}, {"B", {768, 2304}}}, {}), "[batch,197,2304]");
  EXPECT_EQ(ShapeOf("MatMul", {{"A", {kBatch, 12, 197, 64}}, {"B", {kBatch, 12, 64, 197}}}, {}), "[batch,12,197,197]");
  EXPECT_EQ(ShapeOf("MatMul", {{"A", {kBatch, 1, 5, 8}}, {"B", {12, 8, 3}}}, {}), "[batch,12,5,3]");
  EXPECT_EQ(ShapeOf("MatMul", {{"A", {8}}, {"B", {kBatch, 8, 3}}}, {}), "[batch,3]");
}

TEST(NnMatMulTest, Errors) {
  EXPECT_TRUE(Contains(ErrorOf("MatMul", {{"A", Pat({2, 3})}, {"B", Pat({4, 5})}}, {}),
                       "input 'B' has 4 rows, expected 3 (the columns of input 'A')"));
  EXPECT_TRUE(
      Contains(ErrorOf("MatMul", {{"A", Pat({2, 3})}, {"B", Pat({4})}}, {}), "input 'B' has 4 elements, expected 3"));
  EXPECT_TRUE(Contains(ErrorOf("MatMul", {{"A", Pat({2, 2, 3})}, {"B", Pat({3, 3, 4})}}, {}),
                       "batch dims [2] of input 'A' and [3] of input 'B' do not broadcast"));
  EXPECT_TRUE(Contains(ErrorOf("MatMul", {{"A", F32({}, {1})}, {"B", Pat({3})}}, {}),
                       "input 'A' has rank 0, expected at least 1"));
}

// ---- BatchNormalization / Softmax / LayerNormalization -------------------------------------

TEST(NnBatchNormTest, MatchesOnnxRuntime) {
  std::vector<OpInput> params = {{"scale", Pat({3}, 3, 2, 11), true},
                                 {"B", Pat({3}, 5, 1, 13), true},
                                 {"mean", Pat({3}, 2, 1, 7), true},
                                 {"var", F32({3}, {0.5f, 1.5f, 2.0f}), true}};
  std::vector<OpInput> in = {{"X", Pat({2, 3, 2, 2})}};
  in.insert(in.end(), params.begin(), params.end());
  ExpectValues(Run1("BatchNormalization", in, Attrs({{"epsilon", 1e-3f}})), {2, 3, 2, 2}, kBatchNormExpected);
  in[0] = {"X", Pat({2, 3})};
  ExpectValues(Run1("BatchNormalization", in, {}), {2, 3}, kBatchNormRank2Expected);
}

TEST(NnBatchNormTest, HandComputed) {
  // (x - 1) / sqrt(3 + 1) * 2 + 0.5
  Tensor y = Run1("BatchNormalization",
                  {{"X", F32({1, 1, 2}, {3, -1})},
                   {"s", F32({1}, {2}), true},
                   {"b", F32({1}, {0.5f}), true},
                   {"m", F32({1}, {1}), true},
                   {"v", F32({1}, {3}), true}},
                  Attrs({{"epsilon", 1.0f}}));
  ExpectValues(y, {1, 1, 2}, {2.5f, -1.5f});
}

TEST(NnBatchNormTest, ShapesAndErrors) {
  EXPECT_EQ(ShapeOf("BatchNormalization",
                    {{"X", {kBatch, 64, 112, 112}}, {"s", {64}}, {"b", {64}}, {"m", {64}}, {"v", {64}}}, {}),
            "[batch,64,112,112]");
  EXPECT_TRUE(Contains(
      ErrorOf("BatchNormalization",
              {{"X", Pat({1, 3, 2, 2})}, {"s", Pat({4})}, {"b", Pat({3})}, {"m", Pat({3})}, {"v", Pat({3})}}, {}),
      "input 's' has 4 elements, expected 3 (the channels of input 'X')"));
  EXPECT_TRUE(
      Contains(ErrorOf("BatchNormalization",
                       {{"X", Pat({3})}, {"s", Pat({3})}, {"b", Pat({3})}, {"m", Pat({3})}, {"v", Pat({3})}}, {}),
               "input 'X' has rank 1, expected at least 2"));
  EXPECT_TRUE(Contains(ErrorOf("BatchNormalization",
                               {{"X", Pat({1, 3})}, {"s", Pat({3})}, {"b", Pat({3})}, {"m", Pat({3})}, {"v", Pat({3})}},
                               Attrs({{"training_mode", int64_t{1}}})),
                       "attribute 'training_mode' is 1, expected 0"));
}

TEST(NnSoftmaxTest, HandComputed) {
  Tensor y = Run1("Softmax", {{"X", F32({1, 2}, {0.0f, std::log(3.0f)})}}, {});
  ExpectValues(y, {1, 2}, {0.25f, 0.75f});
  // Large inputs do not overflow.
  ExpectValues(Run1("Softmax", {{"X", F32({2}, {1000, 1000})}}, {}), {2}, {0.5f, 0.5f});
}

TEST(NnSoftmaxTest, MatchesOnnxRuntime) {
  ExpectValues(Run1("Softmax", {{"X", Pat({2, 3, 4}, 7, 3, 17, 3.0f)}}, Attrs({{"axis", int64_t{1}}})), {2, 3, 4},
               kSoftmaxAxis1Expected);
  ExpectValues(Run1("Softmax", {{"X", Pat({2, 3, 4}, 7, 3, 17, 3.0f)}}, {}), {2, 3, 4}, kSoftmaxLastExpected);
}

TEST(NnSoftmaxTest, ShapesAndErrors) {
  EXPECT_EQ(ShapeOf("Softmax", {{"X", {kBatch, 12, 197, 197}}}, {}), "[batch,12,197,197]");
  EXPECT_TRUE(Contains(ErrorOf("Softmax", {{"X", Pat({2, 3})}}, Attrs({{"axis", int64_t{2}}})),
                       "attribute 'axis' is 2, expected a value in [-2, 2)"));
}

TEST(NnLayerNormTest, WithStatisticsMatchesOnnxRuntime) {
  auto r =
      RunOp("LayerNormalization",
            {{"X", Pat({2, 3, 4}, 7, 3, 17, 2.0f)}, {"s", Pat({4}, 3, 2, 11), true}, {"b", Pat({4}, 5, 1, 13), true}},
            Attrs({{"epsilon", 1e-5f}}), 3);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues((*r)[0], {2, 3, 4}, kLayerNormY);
  ExpectValues((*r)[1], {2, 3, 1}, kLayerNormMean);
  ExpectValues((*r)[2], {2, 3, 1}, kLayerNormInvStd);
  EXPECT_EQ((*r)[1].dtype(), DType::kF32);
}

TEST(NnLayerNormTest, AxisOneMatchesOnnxRuntime) {
  Tensor y = Run1("LayerNormalization", {{"X", Pat({2, 3, 4}, 7, 3, 17, 2.0f)}, {"s", Pat({3, 4}, 3, 2, 11), true}},
                  Attrs({{"axis", int64_t{1}}, {"epsilon", 1e-3f}}));
  ExpectValues(y, {2, 3, 4}, kLayerNormAxis1Y);
}

TEST(NnLayerNormTest, HandComputed) {
  // mean 2, variance 1: (x - 2) * 1/sqrt(1 + 0) = -1, 1.
  auto r = RunOp("LayerNormalization", {{"X", F32({1, 2}, {1, 3})}, {"s", F32({2}, {1, 2}), true}},
                 Attrs({{"epsilon", 0.0f}}), 3);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues((*r)[0], {1, 2}, {-1, 2});
  ExpectValues((*r)[1], {1, 1}, {2});
  ExpectValues((*r)[2], {1, 1}, {1});
}

TEST(NnLayerNormTest, ShapesAndErrors) {
  auto shapes = InferShapesOf("LayerNormalization", {{"X", {kBatch, 197, 768}}, {"s", {768}}, {"b", {768}}},
                              Attrs({{"axis", int64_t{-1}}}), 3);
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ(*shapes, (std::vector<std::string>{"[batch,197,768]", "[batch,197,1]", "[batch,197,1]"}));
  EXPECT_TRUE(Contains(ErrorOf("LayerNormalization", {{"X", Pat({2, 4})}, {"s", Pat({3})}}, {}),
                       "input 's' has shape [3], expected a shape that broadcasts to [2,4]"));
  EXPECT_TRUE(
      Contains(ErrorOf("LayerNormalization", {{"X", Pat({2, 4})}, {"s", Pat({4})}}, Attrs({{"axis", int64_t{-3}}})),
               "attribute 'axis' is -3, expected a value in [-2, 2)"));
  EXPECT_TRUE(Contains(
      ErrorOf("LayerNormalization", {{"X", Pat({2, 4})}, {"s", Pat({4})}}, Attrs({{"stash_type", int64_t{7}}})),
      "attribute 'stash_type' is 7, expected an ONNX float type"));
}

// ---- ReduceMean / ReduceSum ---------------------------------------------------------------

TEST(NnReduceTest, MatchesOnnxRuntime) {
  const OpInput x{"X", Pat({2, 3, 4})};
  ExpectValues(Run1("ReduceMean", {x}, Attrs({{"axes", Ints({1})}})), {2, 1, 4}, kReduceMeanAxis1Keep);
  ExpectValues(Run1("ReduceMean", {x}, Attrs({{"axes", Ints({-1, 0})}, {"keepdims", int64_t{0}}})), {3},
               kReduceMeanNeg);
  ExpectValues(Run1("ReduceSum", {x}, Attrs({{"keepdims", int64_t{0}}})), {}, kReduceSumAll);
  ExpectValues(Run1("ReduceSum", {x}, Attrs({{"axes", Ints({0, 2})}})), {1, 3, 1}, kReduceSumAxes02);
}

TEST(NnReduceTest, HandComputedAndIntegers) {
  ExpectValues(Run1("ReduceMean", {{"X", F32({2, 2}, {1, 2, 3, 5})}}, {}), {1, 1}, {2.75f});
  ExpectValues(Run1("ReduceSum", {{"X", F32({2, 2}, {1, 2, 3, 5})}}, Attrs({{"noop_with_empty_axes", int64_t{1}}})),
               {2, 2}, {1, 2, 3, 5});
  Tensor s = Run1("ReduceSum", {{"X", Tensor::FromI64({2, 2}, {1, 2, 3, 4})}},
                  Attrs({{"axes", Ints({0})}, {"keepdims", int64_t{0}}}));
  EXPECT_EQ(s.dtype(), DType::kI64);
  EXPECT_EQ(s.ToI64(), Ints({4, 6}));
}

TEST(NnReduceTest, RuntimeAxesInput) {
  // Axes fed as a graph input (opset 13 ReduceSum / opset 18 ReduceMean): a data-dependent shape
  // at inference, the same values as the attribute form when run.
  const OpInput x{"X", Pat({2, 3, 4})};
  ExpectValues(Run1("ReduceSum", {x, {"axes", Tensor::FromI64({2}, {0, 2})}}, {}), {1, 3, 1}, kReduceSumAxes02);
  ExpectValues(Run1("ReduceMean", {x, {"axes", Tensor::FromI64({2}, {-1, 0})}}, Attrs({{"keepdims", int64_t{0}}})), {3},
               kReduceMeanNeg);
  const OpInput none{"axes", *Tensor::Zeros(DType::kI64, {0})};
  ExpectValues(Run1("ReduceSum", {x, none}, Attrs({{"keepdims", int64_t{0}}})), {}, kReduceSumAll);
  Tensor same = Run1("ReduceSum", {x, none}, Attrs({{"noop_with_empty_axes", int64_t{1}}}));
  EXPECT_EQ(same.ToF32(), Pat({2, 3, 4}).ToF32());
  EXPECT_EQ(
      ShapeOf("ReduceSum", {{"X", {kBatch, 3, 4}}, {"axes", {2}, DType::kI64}}, Attrs({{"keepdims", int64_t{0}}})),
      "[?node0:0:0]");
  EXPECT_EQ(ShapeOf("ReduceMean", {{"X", {kBatch, 3, 4}}, {"axes", {2}, DType::kI64}}, {}),
            "[?node0:0:0,?node0:0:1,?node0:0:2]");
  EXPECT_TRUE(Contains(ErrorOf("ReduceSum", {x, {"axes", Tensor::FromI64({4}, {0, 1, 2, 0})}}, {}),
                       "reduces 4 axes of a rank-3 input"));
}

TEST(NnReduceTest, ShapesAndErrors) {
  EXPECT_EQ(ShapeOf("ReduceMean", {{"X", {kBatch, 197, 768}}}, Attrs({{"axes", Ints({1})}, {"keepdims", int64_t{0}}})),
            "[batch,768]");
  EXPECT_EQ(ShapeOf("ReduceSum", {{"X", {kBatch, 8, 7, 7}}}, Attrs({{"axes", Ints({2, 3})}})), "[batch,8,1,1]");
  const OpInput x{"X", Pat({2, 3, 4})};
  EXPECT_TRUE(Contains(ErrorOf("ReduceSum", {x}, Attrs({{"axes", Ints({1, -2})}})),
                       "attribute 'axes' names axis 1 more than once"));
  EXPECT_TRUE(Contains(ErrorOf("ReduceMean", {x}, Attrs({{"axes", Ints({3})}})),
                       "attribute 'axes' has 3, expected a value in [-3, 3)"));
  EXPECT_TRUE(Contains(ErrorOf("ReduceMean", {x}, Attrs({{"keepdims", int64_t{2}}})),
                       "attribute 'keepdims' is 2, expected 0 or 1"));
}

// ---- Attention ----------------------------------------------------------------------------

TEST(NnAttentionTest, HandComputed) {
  // One query [1, 0] against keys [1, 0] and [0, 0] with scale 1: weights e/(e+1), 1/(e+1).
  Tensor y = Run1("Attention",
                  {{"Q", F32({1, 1, 1, 2}, {1, 0})},
                   {"K", F32({1, 1, 2, 2}, {1, 0, 0, 0})},
                   {"V", F32({1, 1, 2, 2}, {1, 2, 3, 4})}},
                  Attrs({{"scale", 1.0f}}));
  const float e = std::exp(1.0f), p0 = e / (e + 1), p1 = 1 / (e + 1);
  ExpectValues(y, {1, 1, 1, 2}, {p0 * 1 + p1 * 3, p0 * 2 + p1 * 4});
}

// The strided form reads the heads of a packed QKV projection in place: the same values as ONNX
// Attention on Q, K and V cut out of it (sequence-first [S, B, 3E] and batch-first [B, S, W] rows,
// grouped K/V heads, a K/V width other than Q's).
TEST(NnAttentionTest, StridedFormEqualsAttentionOnTheCutOutHeads) {
  for (bool seq_first : {true, false}) {
    SCOPED_TRACE(seq_first ? "SBW" : "BSW");
    const int64_t batch = 2, seq = 5, heads = 4, kv_heads = 2, d = 3, dv = 2;
    // Columns: 1 unused, Q (4 heads of 3), K (2 of 3), V (2 of 2), 2 unused.
    const int64_t width = 1 + heads * d + kv_heads * d + kv_heads * dv + 2;
    const int64_t q_off = 1, k_off = q_off + heads * d, v_off = k_off + kv_heads * d;
    const std::vector<int64_t> dims = seq_first ? std::vector<int64_t>{seq, batch, width}
                                                : std::vector<int64_t>{batch, seq, width};
    const Tensor x = Pat(dims, 5, 1, 23);
    // The cut-out operands in ONNX's 3-D form [B, S, H*D].
    auto cut = [&](int64_t offset, int64_t cols) {
      std::vector<float> v;
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t t = 0; t < seq; ++t) {
          const int64_t row = seq_first ? t * batch + b : b * seq + t;
          for (int64_t c = 0; c < cols; ++c) v.push_back(x.GetF32(row * width + offset + c));
        }
      }
      return F32({batch, seq, cols}, v);
    };
    const Tensor want = Run1("Attention", {{"Q", cut(q_off, heads * d)}, {"K", cut(k_off, kv_heads * d)},
                                           {"V", cut(v_off, kv_heads * dv)}},
                             Attrs({{"q_num_heads", heads}, {"kv_num_heads", kv_heads}, {"scale", 0.4f}}));
    const Tensor got = Run1("Attention", {{"Q", x}, {"K", x}, {"V", x}},
                            Attrs({{"qkv_layout", std::string(seq_first ? "SBW" : "BSW")},
                                   {"q_num_heads", heads},
                                   {"kv_num_heads", kv_heads},
                                   {"head_size", d},
                                   {"v_head_size", dv},
                                   {"q_offset", q_off},
                                   {"k_offset", k_off},
                                   {"v_offset", v_off},
                                   {"scale", 0.4f}}));
    // Y in the same layout: [S, B, Hq*Dv] or [B, S, Hq*Dv].
    std::vector<float> expected;
    for (int64_t i = 0; i < batch * seq; ++i) {
      const int64_t b = seq_first ? i % batch : i / seq, t = seq_first ? i / batch : i % seq;
      for (int64_t c = 0; c < heads * dv; ++c) expected.push_back(want.GetF32((b * seq + t) * heads * dv + c));
    }
    ExpectValues(got, seq_first ? std::vector<int64_t>{seq, batch, heads * dv} : std::vector<int64_t>{batch, seq, heads * dv},
                 expected, 1e-6f, 1e-7f);
  }
}

TEST(NnAttentionTest, StridedFormErrors) {
  const OpInput q{"Q", Pat({5, 2, 20})}, k{"K", Pat({5, 2, 20})}, v{"V", Pat({5, 2, 20})};
  Attributes a = Attrs({{"qkv_layout", std::string("SBW")},
                        {"q_num_heads", int64_t{2}},
                        {"kv_num_heads", int64_t{2}},
                        {"head_size", int64_t{4}},
                        {"v_head_size", int64_t{4}},
                        {"k_offset", int64_t{8}},
                        {"v_offset", int64_t{16}}});
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, k, v}, a), "has rows of 20, expected v_offset 16 + 2 heads of 4 to fit"));
  Attributes bad = a;
  bad.Set("qkv_layout", std::string("BHSD"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, k, v}, bad), "attribute 'qkv_layout' is 'BHSD', expected BSW or SBW"));
  Attributes no_size = a;
  no_size.Set("v_offset", int64_t{12});
  no_size.Set("head_size", int64_t{0});
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, k, v}, no_size), "needs attribute 'head_size' >= 1"));
  Attributes fits = a;
  fits.Set("v_offset", int64_t{12});
  EXPECT_EQ(ErrorOf("Attention", {q, k, v}, fits), "OK");
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, k, v, {"M", Pat({5, 5})}}, fits), "takes no mask or past key/value"));
}

TEST(NnAttentionTest, CausalWithBoolMaskMatchesOnnxRuntime) {
  std::vector<int> mask(30, 1);
  mask[5] = mask[17] = mask[26] = 0;
  Tensor y = Run1("Attention",
                  {{"Q", Pat({2, 2, 3, 4})},
                   {"K", Pat({2, 2, 5, 4}, 5, 1, 13)},
                   {"V", Pat({2, 2, 5, 4}, 3, 2, 11)},
                   {"M", Bool({2, 1, 3, 5}, mask)}},
                  Attrs({{"is_causal", int64_t{1}}}));
  ExpectValues(y, {2, 2, 3, 4}, kAttnCausalMask0);
}

TEST(NnAttentionTest, ThreeDimGroupedQueryWithFloatMaskMatchesOnnxRuntime) {
  Tensor y = Run1("Attention",
                  {{"Q", Pat({2, 3, 16})},
                   {"K", Pat({2, 5, 8}, 5, 1, 13)},
                   {"V", Pat({2, 5, 12}, 3, 2, 11)},
                   {"M", Pat({3, 5}, 2, 1, 7)}},
                  Attrs({{"q_num_heads", int64_t{4}}, {"kv_num_heads", int64_t{2}}, {"scale", 0.3f}}));
  ExpectValues(y, {2, 3, 24}, kAttn3dGqa0);
}

TEST(NnAttentionTest, PastKeyValueCausalMatchesOnnxRuntime) {
  auto r = RunOp("Attention",
                 {{"Q", Pat({1, 2, 3, 4})},
                  {"K", Pat({1, 2, 3, 4}, 5, 1, 13)},
                  {"V", Pat({1, 2, 3, 4}, 3, 2, 11)},
                  {"", Tensor()},
                  {"PK", Pat({1, 2, 2, 4}, 2, 1, 7)},
                  {"PV", Pat({1, 2, 2, 4}, 4, 3, 9)}},
                 Attrs({{"is_causal", int64_t{1}}}), 3);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues((*r)[0], {1, 2, 3, 4}, kAttnPast0);
  ExpectValues((*r)[1], {1, 2, 5, 4}, kAttnPast1);
  ExpectValues((*r)[2], {1, 2, 5, 4}, kAttnPast2);
}

TEST(NnAttentionTest, SoftcapAndQkOutputModesMatchOnnxRuntime) {
  const std::vector<float>* expected_y[] = {&kAttnQkMode0_0, &kAttnQkMode1_0, &kAttnQkMode2_0, &kAttnQkMode3_0};
  const std::vector<float>* expected_qk[] = {&kAttnQkMode0_1, &kAttnQkMode1_1, &kAttnQkMode2_1, &kAttnQkMode3_1};
  for (int64_t mode = 0; mode < 4; ++mode) {
    SCOPED_TRACE(mode);
    auto r = RunOp("Attention",
                   {{"Q", Pat({1, 2, 3, 4}, 7, 3, 17, 2.0f)},
                    {"K", Pat({1, 2, 5, 4}, 5, 1, 13, 2.0f)},
                    {"V", Pat({1, 2, 5, 4}, 3, 2, 11)},
                    {"M", Pat({1, 1, 3, 5}, 2, 1, 7)}},
                   Attrs({{"softcap", 1.5f}, {"qk_matmul_output_mode", mode}}), 4);
    ASSERT_TRUE(r.ok()) << r.status();
    ExpectValues((*r)[0], {1, 2, 3, 4}, *expected_y[mode]);
    ExpectValues((*r)[3], {1, 2, 3, 5}, *expected_qk[mode]);
  }
}

TEST(NnAttentionTest, FourDimGroupedQueryMatchesOnnxRuntime) {
  Tensor y =
      Run1("Attention",
           {{"Q", Pat({1, 4, 2, 4})}, {"K", Pat({1, 2, 3, 4}, 5, 1, 13)}, {"V", Pat({1, 2, 3, 6}, 3, 2, 11)}}, {});
  ExpectValues(y, {1, 4, 2, 6}, kAttnGqa4d0);
}

TEST(NnAttentionTest, SoftcapWithBoolMaskMatchesOnnxRuntime) {
  Tensor y = Run1("Attention",
                  {{"Q", Pat({1, 1, 2, 4})},
                   {"K", Pat({1, 1, 3, 4}, 5, 1, 13)},
                   {"V", Pat({1, 1, 3, 4}, 3, 2, 11)},
                   {"M", Bool({2, 3}, {1, 0, 1, 1, 1, 0})}},
                  Attrs({{"softcap", 0.5f}}));
  ExpectValues(y, {1, 1, 2, 4}, kAttnSoftcapBool0);
}

TEST(NnAttentionTest, FullyMaskedRowIsNaNAsInOnnxRuntime) {
  Tensor y = Run1(
      "Attention",
      {{"Q", Pat({1, 1, 2, 2})}, {"K", Pat({1, 1, 2, 2})}, {"V", Pat({1, 1, 2, 2})}, {"M", Bool({2, 2}, {0, 0, 1, 1})}},
      {});
  EXPECT_TRUE(std::isnan(y.GetF32(0)));
  EXPECT_FALSE(std::isnan(y.GetF32(2)));
}

TEST(NnAttentionTest, SymbolicShapes) {
  auto s = InferShapesOf(
      "Attention", {{"Q", {kBatch, 12, 197, 64}}, {"K", {kBatch, 12, 197, 64}}, {"V", {kBatch, 12, 197, 64}}}, {}, 4);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, (std::vector<std::string>{"[batch,12,197,64]", "[batch,12,197,64]", "[batch,12,197,64]",
                                          "[batch,12,197,197]"}));
  s = InferShapesOf("Attention",
                    {{"Q", {kBatch, 7, 512}},
                     {"K", {kBatch, 7, 128}},
                     {"V", {kBatch, 7, 256}},
                     {"M", {kBatch, 1, 1, 17}, DType::kBool},
                     {"PK", {kBatch, 2, 10, 64}},
                     {"PV", {kBatch, 2, 10, 128}}},
                    Attrs({{"q_num_heads", int64_t{8}}, {"kv_num_heads", int64_t{2}}}), 4);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, (std::vector<std::string>{"[batch,7,1024]", "[batch,2,17,64]", "[batch,2,17,128]", "[batch,8,7,17]"}));
}

TEST(NnAttentionTest, Errors) {
  const OpInput q{"Q", Pat({1, 4, 3, 8})}, k{"K", Pat({1, 2, 5, 8})}, v{"V", Pat({1, 2, 5, 8})};
  EXPECT_TRUE(Contains(ErrorOf("Attention", {{"Q", Pat({3, 8})}, k, v}, {}), "input 'Q' has rank 2, expected 3 or 4"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, {"K", Pat({1, 5, 16})}, v}, {}), "input 'K' has rank 3, expected 4"));
  EXPECT_TRUE(
      Contains(ErrorOf("Attention", {{"Q", Pat({1, 3, 32})}, {"K", Pat({1, 5, 16})}, {"V", Pat({1, 5, 16})}}, {}),
               "3-D inputs need attributes 'q_num_heads' and 'kv_num_heads'"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {{"Q", Pat({1, 3, 30})}, {"K", Pat({1, 5, 16})}, {"V", Pat({1, 5, 16})}},
                               Attrs({{"q_num_heads", int64_t{4}}, {"kv_num_heads", int64_t{2}}})),
                       "input 'Q' has hidden size 30, expected a multiple of q_num_heads 4"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {{"Q", Pat({1, 3, 3, 8})}, k, v}, {}),
                       "q_num_heads 3 is not a multiple of kv_num_heads 2"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, {"K", Pat({1, 2, 5, 4})}, v}, {}),
                       "input 'K' has head size 4, expected 8 like input 'Q'"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, k, {"V", Pat({1, 2, 6, 8})}}, {}),
                       "input 'V' has sequence length 6 (dim 2), expected 5"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, k, v, {"M", Pat({3, 4})}}, {}),
                       "input 'M' has shape [3,4], expected a shape that broadcasts to [1,4,3,5]"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, k, v, {"M", Tensor::FromI64({3, 5}, std::vector<int64_t>(15, 0))}}, {}),
                       "input 'M' has dtype i64, expected bool or f32"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, k, v, {"", Tensor()}, {"PK", Pat({1, 2, 2, 8})}}, {}),
                       "past_key (input 4) and past_value (input 5) must be given together"));
  EXPECT_TRUE(Contains(
      ErrorOf("Attention", {q, k, v, {"", Tensor()}, {"PK", Pat({1, 2, 2, 8})}, {"PV", Pat({1, 3, 2, 8})}}, {}),
      "input 'PV' has head count 3 (dim 1), expected 2"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, k, v}, Attrs({{"qk_matmul_output_mode", int64_t{4}}})),
                       "attribute 'qk_matmul_output_mode' is 4, expected 0, 1, 2 or 3"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, k, v}, Attrs({{"softcap", -1.0f}})),
                       "attribute 'softcap' is -1, expected a finite value >= 0"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, k, v}, Attrs({{"softmax_precision", int64_t{7}}})),
                       "attribute 'softmax_precision' is 7, expected an ONNX float type"));
  EXPECT_TRUE(Contains(ErrorOf("Attention", {q, k, v}, Attrs({{"q_num_heads", int64_t{8}}})),
                       "input 'Q' has head count 4 (dim 1), expected 8"));
}

// ---- timing (Release builds; run with --gtest_also_run_disabled_tests) ----------------------

double Seconds(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Every convolution of ResNet-50 (v1.5) on one 224x224 image: {cin, cout, kernel, stride, input size}.
TEST(NnConvTest, DISABLED_ResNet50ConvLayerTiming) {
  struct Layer {
    int64_t cin, cout, k, stride, size;
  };
  std::vector<Layer> layers = {{3, 64, 7, 2, 224}};
  const int64_t blocks[] = {3, 4, 6, 3};
  int64_t cin = 64, size = 56;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = 64 << stage, cout = width * 4;
    for (int64_t b = 0; b < blocks[stage]; ++b) {
      const int64_t stride = (b == 0 && stage > 0) ? 2 : 1;
      layers.push_back({cin, width, 1, 1, size});
      layers.push_back({width, width, 3, stride, size});
      layers.push_back({width, cout, 1, 1, size / stride});
      if (b == 0) layers.push_back({cin, cout, 1, stride, size});
      cin = cout;
      size /= stride;
    }
  }
  double total = 0, macs = 0;
  for (const Layer& l : layers) {
    const int64_t pad = l.k / 2;
    std::vector<OpInput> in = {{"X", Pat({1, l.cin, l.size, l.size})},
                               {"W", Pat({l.cout, l.cin, l.k, l.k}, 5, 1, 13, 0.05f), true},
                               {"B", Pat({l.cout}, 3, 2, 11), true}};
    Attributes a = Attrs({{"strides", Ints({l.stride, l.stride})}, {"pads", Ints({pad, pad, pad, pad})}});
    Tensor y;
    total += Seconds([&] { y = Run1("Conv", in, a); });
    macs += static_cast<double>(y.numel()) * static_cast<double>(l.cin * l.k * l.k);
  }
  std::printf("ResNet-50: %zu conv layers, %.2f GMAC, %.2f s (%.2f GMAC/s)\n", layers.size(), macs / 1e9, total,
              macs / 1e9 / total);
}

// One ViT-B/16 encoder layer (197 tokens, 768 wide, 12 heads) plus the patch embedding.
TEST(NnAttentionTest, DISABLED_VitB16Timing) {
  const OpInput tokens{"X", Pat({1, 197, 768})};
  auto matmul = [&](int64_t k, int64_t n) {
    Tensor a = Pat({1, 197, k});
    return Seconds([&] { Run1("MatMul", {{"A", a}, {"B", Pat({k, n}, 5, 1, 13, 0.05f), true}}, {}); });
  };
  double layer = 0;
  layer += 2 * Seconds([&] {
             Run1("LayerNormalization", {tokens, {"s", Pat({768}), true}, {"b", Pat({768}), true}}, {});
           });
  layer += matmul(768, 2304) + matmul(768, 768) + matmul(768, 3072) + matmul(3072, 768);
  layer += Seconds([&] {
    Run1("Attention", {{"Q", Pat({1, 197, 768})}, {"K", Pat({1, 197, 768}, 5)}, {"V", Pat({1, 197, 768}, 3)}},
         Attrs({{"q_num_heads", int64_t{12}}, {"kv_num_heads", int64_t{12}}}));
  });
  const double embed = Seconds([&] {
    Run1("Conv", {{"X", Pat({1, 3, 224, 224})}, {"W", Pat({768, 3, 16, 16}), true}},
         Attrs({{"strides", Ints({16, 16})}}));
  });
  std::printf("ViT-B/16: patch embedding %.2f s, one encoder layer %.2f s, 12 layers + embedding %.2f s\n", embed,
              layer, embed + 12 * layer);
}

}  // namespace
}  // namespace gcomp::testing
