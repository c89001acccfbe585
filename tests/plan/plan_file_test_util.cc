#include "tests/plan/plan_file_test_util.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace gcomp::plan::testing {

void PointWeightsAtOwned(Plan* plan) {
  plan->weights = plan->owned_weights.data();
  plan->weights_bytes = static_cast<int64_t>(plan->owned_weights.size());
}

Plan MakeTestPlan() {
  Plan p;
  p.target = "cpu";
  p.isa = "avx512_core_bf16";
  p.gcomp_version = "0.1.0";
  p.library_versions = "oneDNN 2.6.3; OpenBLAS 0.3.21";
  p.model = "tiny.onnx";
  p.precision = "fp32";
  p.level = "O3";
  p.max_batch = 16;

  auto add = [&p](Buffer b) {
    p.buffers.push_back(std::move(b));
    return static_cast<int32_t>(p.buffers.size() - 1);
  };
  auto buffer = [](std::string name, DType dtype, std::vector<LinearDim> dims, BufferKind kind, int64_t offset = 0,
                   int64_t bytes = 0) {
    Buffer b;
    b.name = std::move(name);
    b.dtype = dtype;
    b.dims = std::move(dims);
    b.kind = kind;
    b.offset = offset;
    b.bytes = bytes;
    return b;
  };
  Buffer x = buffer("x", DType::kF32, {{1, 0}, {0, 3}, {0, 5}}, BufferKind::kInput);
  x.io_index = 0;
  Buffer w = buffer("w", DType::kU8, {{0, 13}}, BufferKind::kConstant, 0, 13);
  w.format = "blocked8";
  Buffer b = buffer("b\xff\x01", DType::kI8, {{0, 7}}, BufferKind::kConstant, 64, 7);
  Buffer h = buffer("h", DType::kF16, {{1, 0}, {0, 3}, {0, 5}}, BufferKind::kBatchArena, 0, 64);
  Buffer h_view = buffer("h_view", DType::kF16, {{1, 0}, {0, 15}}, BufferKind::kAlias);
  h_view.alias_of = 3;
  Buffer shape = buffer("shape", DType::kI64, {{0, 2}}, BufferKind::kFixedArena, 0, 64);
  Buffer y = buffer("y", DType::kBF16, {{1, 0}, {0, 15}}, BufferKind::kOutput);
  y.io_index = 0;
  Buffer h2 = buffer("h2", DType::kF16, {{1, 0}, {0, 15}}, BufferKind::kAlias);
  h2.alias_of = 4;
  Buffer z = buffer("z", DType::kF32, {{2, 1}}, BufferKind::kBatchArena, 64, 64);
  Buffer flag = buffer("flag", DType::kBool, {}, BufferKind::kFixedArena, 0, 1);
  Buffer scale = buffer("scale", DType::kF8E4M3, {}, BufferKind::kFixedArena, 0, 1);
  Buffer d = buffer("d", DType::kF64, {}, BufferKind::kFixedArena, 0, 8);
  Buffer i32 = buffer("i32", DType::kI32, {}, BufferKind::kFixedArena, 0, 4);
  const int32_t ix = add(x), iw = add(w), ib = add(b), ih = add(h), ihv = add(h_view), ishape = add(shape), iy = add(y),
                ih2 = add(h2), iz = add(z);
  add(flag);
  add(scale);
  add(d);
  add(i32);
  p.inputs = {ix};
  p.outputs = {iy, iz};

  auto step = [](std::string name, std::string op, std::string kernel, std::vector<int32_t> inputs,
                 std::vector<int32_t> outputs, std::vector<int32_t> in_place = {}) {
    Step s;
    s.name = std::move(name);
    s.op = std::move(op);
    s.kernel = std::move(kernel);
    s.inputs = std::move(inputs);
    s.outputs = std::move(outputs);
    s.in_place = std::move(in_place);
    return s;
  };
  Step conv = step("conv1", "Conv", "cpu.conv.onednn", {ix, iw, ib}, {ih});
  conv.reason = "oneDNN direct conv: faster on 3x3";
  conv.origin = {"Conv_0", "BatchNormalization_1"};
  conv.decisions = {"layout = nhwc: channels-last kernel", "precision = fp32: default"};
  conv.params.Set("group", int64_t{-3});
  conv.params.Set("alpha", 0.1f);
  conv.params.Set("neg_inf", -std::numeric_limits<float>::infinity());
  conv.params.Set("auto_pad", std::string("SAME_UPPER\0x", 12));
  conv.params.Set("pads", std::vector<int64_t>{1, 1, std::numeric_limits<int64_t>::min(), 0});
  conv.params.Set("scales", std::vector<float>{0.5f, -2.0f, 1e-30f});
  conv.params.Set("names", std::vector<std::string>{"a", "", "\xc3\x28"});
  conv.params.Set("empty_ints", std::vector<int64_t>{});
  conv.params.Set("value", Tensor::FromF32({2, 3}, {1, 2, 3, 4, 5, 6}));
  conv.params.Set("shape", Tensor::FromI64({2}, {-1, 15}));
  conv.params.Set("no_storage", Tensor());
  Step relu = step("relu", "Relu", "cpu.relu", {ihv, -1}, {ih2}, {0});
  Step shape_step = step("shape", "Shape", "cpu.shape", {ih}, {ishape});
  Step add_step = step("add", "Add", "cpu.add", {ih2, ishape}, {iz, iy}, {-1, -1});
  p.steps = {conv, relu, shape_step, add_step};

  p.batch_arena_bytes = 128;
  p.fixed_arena_bytes = 64;
  p.batch_peak_live_bytes = 128;
  p.fixed_peak_live_bytes = 21;

  p.owned_weights.assign(64 + 7, 0);
  for (int i = 0; i < 13; ++i) p.owned_weights[i] = static_cast<uint8_t>(17 * i + 1);
  for (int i = 0; i < 7; ++i) p.owned_weights[64 + i] = static_cast<uint8_t>(200 + i);
  PointWeightsAtOwned(&p);
  return p;
}

}  // namespace gcomp::plan::testing
