// The public runtime API (include/gcomp/gcomp.h) on a plan compiled from a small model fixture:
// load, run at several batch sizes against the reference interpreter, two sessions sharing one
// plan, kernel launch counts, and the errors a caller can cause; the cpu executor running a batch
// in parts.
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "codegen/codegen.h"
#include "frontend/onnx_import.h"
#include "gcomp/gcomp.h"
#include "graph/interpreter.h"
#include "gtest/gtest.h"
#include "passes/pass_manager.h"
#include "plan/plan_file.h"
#include "runtime/backend.h"
#include "runtime/cpu/batch_parts.h"
#include "runtime/plan_steps.h"

namespace {

// The model at `path` optimized at O3 for the cpu and compiled into a plan for batch 1..4.
std::unique_ptr<gcomp::plan::Plan> CompileForCpu(const std::string& path) {
  auto g = gcomp::frontend::ImportOnnxFile(path);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return nullptr;
  gcomp::passes::PassOptions po;
  po.target = "cpu";
  EXPECT_TRUE(gcomp::passes::RunPipeline(**g, "O3", gcomp::passes::PassContext(po)).ok());
  gcomp::codegen::CodegenOptions co;
  co.target = "cpu";
  co.max_batch = 4;
  co.model = "model.onnx";
  auto plan = gcomp::codegen::GeneratePlan(**g, co);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? std::move(*plan) : nullptr;
}

class ApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto g = gcomp::frontend::ImportOnnxFile(GCOMP_TEST_MODEL);
    ASSERT_TRUE(g.ok()) << g.status();
    reference_ = std::move(*g);
    std::unique_ptr<gcomp::plan::Plan> plan = CompileForCpu(GCOMP_TEST_MODEL);
    ASSERT_TRUE(plan);
    path_ = ::testing::TempDir() + "/api_test.gplan";
    ASSERT_TRUE(gcomp::plan::WritePlanFile(*plan, path_).ok());
    plan_ = std::move(plan);
  }

  static std::vector<float> Image(int64_t batch, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d;
    std::vector<float> v(static_cast<size_t>(batch * 3 * 64 * 64));
    for (float& x : v) x = d(rng);
    return v;
  }

  static std::vector<float> Reference(int64_t batch, const std::vector<float>& image) {
    std::map<std::string, gcomp::Tensor> feeds;
    feeds["input"] = gcomp::Tensor::FromF32({batch, 3, 64, 64}, image);
    auto out = gcomp::RunReference(*reference_, feeds);
    EXPECT_TRUE(out.ok()) << out.status();
    return out->begin()->second.ToF32();
  }

  static std::unique_ptr<gcomp::Graph> reference_;
  static std::unique_ptr<gcomp::plan::Plan> plan_;
  static std::string path_;
};

std::unique_ptr<gcomp::Graph> ApiTest::reference_;
std::unique_ptr<gcomp::plan::Plan> ApiTest::plan_;
std::string ApiTest::path_;

TEST_F(ApiTest, RunsEveryBatchUpToTheMaximumLikeTheReference) {
  auto plan = gcomp::Plan::Load(path_);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ((*plan)->target(), "cpu");
  EXPECT_EQ((*plan)->max_batch(), 4);
  ASSERT_EQ((*plan)->inputs().size(), 1u);
  EXPECT_EQ((*plan)->inputs()[0].name, "input");
  EXPECT_EQ((*plan)->inputs()[0].shape, (std::vector<int64_t>{1, 3, 64, 64}));
  EXPECT_TRUE((*plan)->inputs()[0].batch_dims[0]);
  auto session = gcomp::Session::Create(*plan, {.threads = 2});
  ASSERT_TRUE(session.ok()) << session.status().message();
  for (int64_t batch : {1, 3, 4, 2}) {
    std::vector<float> image = Image(batch, static_cast<unsigned>(batch));
    auto out = (*session)->Run({gcomp::HostTensor::Float32("input", {batch, 3, 64, 64}, image)});
    ASSERT_TRUE(out.ok()) << out.status().message();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ((*out)[0].shape, (std::vector<int64_t>{batch, 100}));
    std::vector<float> got = (*out)[0].ToFloat32(), want = Reference(batch, image);
    ASSERT_EQ(got.size(), want.size());
    float scale = 0;
    for (float w : want) scale = std::max(scale, std::fabs(w));
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-5f * scale + 1e-4f * std::fabs(want[i])) << "batch " << batch << " element " << i;
    }
  }
  // Every step launched once per run.
  int64_t launches = 0;
  for (const auto& [id, n] : (*session)->kernel_launches()) launches += n;
  EXPECT_GT(launches, 0);
  EXPECT_EQ(launches % 4, 0);
}

TEST_F(ApiTest, TwoSessionsShareOnePlan) {
  auto plan = gcomp::Plan::Load(path_);
  ASSERT_TRUE(plan.ok());
  auto a = gcomp::Session::Create(*plan);
  auto b = gcomp::Session::Create(*plan, {.threads = 2});
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<float> image = Image(2, 7);
  auto ra = (*a)->Run({gcomp::HostTensor::Float32("input", {2, 3, 64, 64}, image)});
  auto rb = (*b)->Run({gcomp::HostTensor::Float32("input", {2, 3, 64, 64}, image)});
  ASSERT_TRUE(ra.ok() && rb.ok());
  std::vector<float> fa = (*ra)[0].ToFloat32(), fb = (*rb)[0].ToFloat32();
  ASSERT_EQ(fa.size(), fb.size());
  for (size_t i = 0; i < fa.size(); ++i) EXPECT_NEAR(fa[i], fb[i], 1e-4f * (1 + std::fabs(fa[i])));
}

TEST_F(ApiTest, RefusesWhatTheCallerGetsWrong) {
  auto plan = gcomp::Plan::Load(path_);
  ASSERT_TRUE(plan.ok());
  auto s = gcomp::Session::Create(*plan);
  ASSERT_TRUE(s.ok());
  auto expect_error = [&](const std::vector<gcomp::HostTensor>& in, const std::string& needle) {
    auto r = (*s)->Run(in);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_EQ(r.status().code(), gcomp::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  };
  expect_error({gcomp::HostTensor::Float32("image", {1, 3, 64, 64}, Image(1, 1))}, "the plan has no input 'image'");
  expect_error({}, "missing input 'input'");
  expect_error({gcomp::HostTensor::Float32("input", {1, 3, 64, 64}, Image(1, 1)),
                gcomp::HostTensor::Float32("input", {1, 3, 64, 64}, Image(1, 1))},
               "given twice");
  expect_error({gcomp::HostTensor::Float32("input", {5, 3, 64, 64}, Image(5, 1))},
               "batch 5 is outside the plan's 1..4");
  expect_error({gcomp::HostTensor::Float32("input", {1, 3, 32, 64}, std::vector<float>(3 * 32 * 64, 0.5f))},
               "expected [batch,3,64,64]");
  gcomp::HostTensor short_data = gcomp::HostTensor::Float32("input", {1, 3, 64, 64}, Image(1, 1));
  short_data.data.resize(100);
  expect_error({short_data}, "bytes");
  gcomp::HostTensor wrong_type = gcomp::HostTensor::Float32("input", {1, 3, 64, 64}, Image(1, 1));
  wrong_type.dtype = gcomp::DataType::kInt32;
  expect_error({wrong_type}, "expected f32");
  auto missing = gcomp::Plan::Load(::testing::TempDir() + "/no_such.gplan");
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(gcomp::Session::Create(nullptr).status().code(), gcomp::StatusCode::kInvalidArgument);
}

// A plan file that is structurally valid but contradicts its kernels (as a crafted file could) is
// refused when the session is created or prepares its kernels for the batch, before any kernel runs.
TEST_F(ApiTest, RefusesPlansThatContradictTheirOps) {
  using gcomp::plan::Plan;
  auto refused = [&](const std::function<void(Plan&)>& edit, const std::string& needle) {
    Plan p = *plan_;
    edit(p);
    const std::string path = ::testing::TempDir() + "/edited.gplan";
    ASSERT_TRUE(gcomp::plan::WritePlanFile(p, path).ok()) << needle;
    auto loaded = gcomp::Plan::Load(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    auto s = gcomp::Session::Create(*loaded);
    gcomp::Status status = s.status();
    if (s.ok()) {
      auto r = (*s)->Run({gcomp::HostTensor::Float32("input", {1, 3, 64, 64}, Image(1, 3))});
      status = r.status();
    }
    ASSERT_FALSE(status.ok()) << needle;
    EXPECT_EQ(status.code(), gcomp::StatusCode::kInvalidArgument);
    // `needle` may list alternatives separated by '|' (which kernels packed the weights depends on
    // the CPU: oneDNN's layouts, or the own AVX2 panels where it has no AVX-512).
    bool found = false;
    for (absl::string_view alt : absl::StrSplit(needle, '|')) {
      found = found || status.message().find(std::string(alt)) != std::string::npos;
    }
    EXPECT_TRUE(found) << needle << ": " << status.message();
  };
  auto find = [](Plan& p, const std::string& op) -> gcomp::plan::Step& {
    for (auto& s : p.steps) {
      if (s.op == op) return s;
    }
    return p.steps.front();
  };
  // The input layout Transpose with a repeated axis.
  refused(
      [&](Plan& p) {
        find(p, "Transpose").params.Set("perm", std::vector<int64_t>{0, 0, 0, 0});
      },
      "invalid plan: step");
  // A conv whose output buffer claims other dims than the conv gives.
  refused([&](Plan& p) { p.buffers[find(p, "FusedConv").outputs[0]].dims.back().fixed += 1; },
          "invalid plan: buffer '/conv1/Conv_1_out' needs");
  // A conv attribute of the wrong type.
  refused([&](Plan& p) { find(p, "FusedConv").params.Set("strides", std::string("2")); }, "attribute 'strides'");
  // A step run by a kernel of another op.
  refused([&](Plan& p) { find(p, "Transpose").kernel = "cpu.layernorm"; }, "kernel 'cpu.layernorm' does not run");
  // Activations with fewer bytes than their dims need (every arena buffer at offset 0, 64 bytes).
  refused(
      [&](Plan& p) {
        for (auto& b : p.buffers) {
          if (b.kind == gcomp::plan::BufferKind::kBatchArena) b.offset = 0, b.bytes = 64;
        }
        p.batch_arena_bytes = 64;
      },
      "bytes at batch 1, its memory has");
  // A step writing through an alias into a weight.
  refused(
      [&](Plan& p) {
        int32_t weight = -1;
        for (size_t i = 0; i < p.buffers.size(); ++i) {
          if (p.buffers[i].kind == gcomp::plan::BufferKind::kConstant) weight = static_cast<int32_t>(i);
        }
        auto& out = p.buffers[p.steps.front().outputs[0]];
        out.kind = gcomp::plan::BufferKind::kAlias;
        out.alias_of = weight;
      },
      "invalid plan: buffer");
  // A Transpose step with its input list emptied (found by fuzz_plan: the kernel read input 0).
  refused([&](Plan& p) { find(p, "Transpose").inputs.clear(); }, "invalid plan: step");
  // A packed weight given another weight's layout (other dims; found by fuzz_plan, where oneDNN's
  // reorder then failed with an internal error), and a layout string that is not hex.
  refused(
      [&](Plan& p) {
        std::vector<gcomp::plan::Buffer*> packed;
        for (auto& b : p.buffers) {
          if (b.kind == gcomp::plan::BufferKind::kConstant && !b.format.empty()) packed.push_back(&b);
        }
        ASSERT_GE(packed.size(), 2u);
        for (gcomp::plan::Buffer* b : packed) {
          if (b->dims != packed[0]->dims) {
            std::swap(b->format, packed[0]->format);
            return;
          }
        }
        FAIL() << "every packed weight has the same dims";
      },
      "is not a oneDNN 2.6 layout of these weights|weights format 'avx2-f32-");
  refused(
      [&](Plan& p) {
        for (auto& b : p.buffers) {
          if (b.kind == gcomp::plan::BufferKind::kConstant && !b.format.empty()) {
            b.format.back() = 'z';
            return;
          }
        }
      },
      "is not a oneDNN 2.6 layout of these weights|weights format 'avx2-f32-");
  // A plain constant shorter than its dims.
  refused(
      [&](Plan& p) {
        for (auto& b : p.buffers) {
          if (b.kind == gcomp::plan::BufferKind::kConstant && b.format.empty() && b.bytes > 64) {
            b.bytes = 64;
            break;
          }
        }
      },
      "do not match its dims");
  // A parameter blob of another version than its kernel's, and an in-place pair its kernel does not
  // allow.
  refused([&](Plan& p) { find(p, "FusedConv").params_version += 1; }, "has parameter version");
  refused([&](Plan& p) { find(p, "Transpose").in_place = {0}; }, "does not allow");
  // A step whose output starts 64 bytes into its input's memory (found by fuzz_plan in the fixed
  // arena: a copy kernel's memcpy then had overlapping source and destination), and the same with
  // the in-place pair declared.
  // (An in-place output is an alias of its input: it becomes an arena buffer of its own.)
  auto shift_output = [](Plan& p, gcomp::plan::Step& s, size_t input) {
    const gcomp::plan::Buffer& in = p.buffers[gcomp::runtime::RootBuffer(p, s.inputs[input])];
    gcomp::plan::Buffer& out = p.buffers[s.outputs[0]];
    ASSERT_EQ(in.kind, gcomp::plan::BufferKind::kBatchArena);
    if (out.kind == gcomp::plan::BufferKind::kAlias) {
      out.kind = gcomp::plan::BufferKind::kBatchArena;
      out.alias_of = -1;
      out.bytes = in.bytes;
    }
    ASSERT_EQ(out.kind, gcomp::plan::BufferKind::kBatchArena);
    out.offset = in.offset + 64;
    p.batch_arena_bytes = std::max(p.batch_arena_bytes, out.offset + out.bytes);
  };
  refused(
      [&](Plan& p) {
        int seen = 0;
        for (auto& s : p.steps) {
          if (s.op == "FusedConv" && ++seen == 2) return shift_output(p, s, 0);
        }
        FAIL() << "the plan has fewer than two convolutions";
      },
      "over part of its input 0");
  refused(
      [&](Plan& p) {
        for (auto& s : p.steps) {
          if (!s.in_place.empty() && s.in_place[0] == 3) return shift_output(p, s, 3);
        }
        FAIL() << "the plan has no residual step writing over its residual input";
      },
      "over part of its input 3 '/layer1/layer1.0/downsample/downsample.0/Conv_1_out_0' (in place, but not at the same "
      "address)");
}

// Without the op table, each kernel checks its own operands: a step whose output claims other dims
// (one more element along any axis, the memory grown to hold them) is refused by its kernel, and a
// step whose parameters are changed is refused or runs correctly sized; no kernel reads or writes
// outside its buffers (the sanitizer build runs this too). On the ResNet plan and on a ViT plan
// (attention, LayerNorm, Gather, Expand, Shape, Concat).
void CheckEveryStep(const gcomp::plan::Plan& plan, int64_t min_refusals) {
  using gcomp::plan::Plan;
  auto outcome = [&](const Plan& p) {
    const std::string path = ::testing::TempDir() + "/perturbed.gplan";
    EXPECT_TRUE(gcomp::plan::WritePlanFile(p, path).ok());
    auto loaded = gcomp::Plan::Load(path);
    if (!loaded.ok()) return loaded.status();
    auto s = gcomp::Session::Create(*loaded);
    if (!s.ok()) return s.status();
    std::vector<gcomp::HostTensor> inputs;
    for (const gcomp::TensorInfo& info : (*loaded)->inputs()) {
      std::vector<int64_t> shape = info.shape;
      for (size_t d = 0; d < shape.size(); ++d) shape[d] *= info.batch_dims[d] ? 2 : 1;
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      std::vector<float> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) v[i] = std::sin(0.37f * static_cast<float>(i));
      inputs.push_back(gcomp::HostTensor::Float32(info.name, shape, v));
    }
    auto r = (*s)->Run(inputs);
    return r.status();
  };
  int refused_dims = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const int32_t out = plan.steps[i].outputs[0];
    for (size_t axis = 0; axis < plan.buffers[out].dims.size(); ++axis) {
      Plan p = plan;
      gcomp::plan::Buffer& b = p.buffers[out];
      if (b.kind == gcomp::plan::BufferKind::kOutput)
        continue;  // the caller's tensor: dims fixed by the plan's outputs
      b.dims[axis].fixed += 1;
      // Room for the larger output wherever it lives, so that only the kernel can object.
      for (auto& buf : p.buffers) {
        if (buf.kind == gcomp::plan::BufferKind::kBatchArena || buf.kind == gcomp::plan::BufferKind::kFixedArena) {
          buf.bytes = buf.bytes * 2 + 64;
          buf.offset *= 2;
        }
      }
      p.batch_arena_bytes = p.batch_arena_bytes * 2 + 64;
      p.fixed_arena_bytes = p.fixed_arena_bytes * 2 + 64;
      gcomp::Status st = outcome(p);
      ASSERT_FALSE(st.ok()) << "step " << plan.steps[i].name << " output axis " << axis;
      EXPECT_EQ(st.code(), gcomp::StatusCode::kInvalidArgument) << st.message();
      EXPECT_NE(st.message().find("does not run this step"), std::string::npos) << st.message();
      ++refused_dims;
    }
  }
  EXPECT_GE(refused_dims, min_refusals);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    for (const auto& [name, value] : plan.steps[i].params.all()) {
      Plan p = plan;
      gcomp::Attributes& a = p.steps[i].params;
      if (const auto* v = std::get_if<int64_t>(&value)) a.Set(name, *v + 7);
      if (const auto* v = std::get_if<std::vector<int64_t>>(&value)) {
        std::vector<int64_t> w = *v;
        if (!w.empty()) w.back() += 3;
        a.Set(name, w);
      }
      if (const auto* v = std::get_if<std::string>(&value)) a.Set(name, *v + "x");
      if (const auto* v = std::get_if<float>(&value)) a.Set(name, -*v);
      gcomp::Status st = outcome(p);
      if (!st.ok()) {
        EXPECT_EQ(st.code(), gcomp::StatusCode::kInvalidArgument) << st.message();
      }
    }
  }
}

TEST_F(ApiTest, EveryStepChecksItsOperandsAndParameters) { CheckEveryStep(*plan_, 90); }

TEST(ApiVitTest, EveryStepChecksItsOperandsAndParameters) {
  std::unique_ptr<gcomp::plan::Plan> plan = CompileForCpu(GCOMP_TEST_VIT_MODEL);
  ASSERT_TRUE(plan);
  // The small ViT's plan has 24 steps since fold-attention-layout (Q/K/V read in place): every
  // output axis of every step but the plan output's is perturbed.
  CheckEveryStep(*plan, 60);
}

// The size of the parts a batch runs in: the batch halved until a part's arena fits in half the
// cache.
TEST(BatchParts, PartsFitTheCache) {
  const int64_t mb = 1 << 20;
  EXPECT_EQ(gcomp::cpu::BatchPart(8, 5218304, 32 * mb, 0), 2);   // ResNet-50 fp32: 39.8 MB in all
  EXPECT_EQ(gcomp::cpu::BatchPart(8, 2609152, 32 * mb, 0), 4);   // bf16: 19.9 MB
  EXPECT_EQ(gcomp::cpu::BatchPart(4, 2609152, 32 * mb, 0), 4);   // 10 MB: one run
  EXPECT_EQ(gcomp::cpu::BatchPart(8, 2609152, 64 * mb, 0), 8);   // a larger cache: one run
  EXPECT_EQ(gcomp::cpu::BatchPart(7, 2609152, 32 * mb, 0), 4);   // 4 + 3
  EXPECT_EQ(gcomp::cpu::BatchPart(16, 5218304, 32 * mb, 0), 2);  // 8 parts of 2
  EXPECT_EQ(gcomp::cpu::BatchPart(8, 64 * mb, 32 * mb, 0), 1);   // one image is over the cache
  EXPECT_EQ(gcomp::cpu::BatchPart(8, 5218304, 0, 0), 8);         // the cache size unknown
  EXPECT_EQ(gcomp::cpu::BatchPart(8, 2609152, 32 * mb, 3), 3);
  EXPECT_EQ(gcomp::cpu::BatchPart(2, 2609152, 32 * mb, 3), 2);
  EXPECT_EQ(gcomp::cpu::BatchPart(0, 2609152, 32 * mb, 0), 1);
  EXPECT_EQ(gcomp::cpu::BatchPart(4096, int64_t{1} << 62, 32 * mb, 0), 1);  // no overflow
}

// The small ResNet's plan keeps images apart: a batch of 4 run as parts of 3 and 1, or of 2, gives
// what one run of 4 gives (and the reference); the memory line says how it ran. What stops it: a
// Transpose that moves the batch axis, an input that does not hold its images in sequence, and the
// small ViT's Shape step.
TEST_F(ApiTest, RunsABatchInPartsLikeOneRun) {
  std::shared_ptr<const gcomp::plan::Plan> plan = CompileForCpu(GCOMP_TEST_MODEL);
  ASSERT_TRUE(plan);
  EXPECT_EQ(gcomp::cpu::BatchPartsBlocker(*plan), "");
  auto backend = gcomp::runtime::BackendFor("cpu");
  ASSERT_TRUE(backend.ok());
  const std::vector<float> image = Image(4, 11);
  const std::vector<float> ref = Reference(4, image);
  std::map<std::string, gcomp::Tensor> feeds;
  feeds["input"] = gcomp::Tensor::FromF32({4, 3, 64, 64}, image);
  std::vector<float> whole;
  for (int64_t part : {4, 3, 2, 1}) {
    gcomp::runtime::ExecutorOptions o;
    o.threads = 2;
    o.batch_part = part;
    auto exe = (*backend)->CreateExecutor(plan, o);
    ASSERT_TRUE(exe.ok()) << exe.status();
    auto out = (*exe)->Run(feeds);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
    const std::vector<float> y = (*out)[0].ToF32();
    ASSERT_EQ(y.size(), ref.size());
    double max_ref = 0, err_ref = 0, err_whole = 0;
    if (part == 4) whole = y;
    for (size_t i = 0; i < y.size(); ++i) {
      max_ref = std::max(max_ref, std::fabs(double{ref[i]}));
      err_ref = std::max(err_ref, std::fabs(double{y[i]} - double{ref[i]}));
      err_whole = std::max(err_whole, std::fabs(double{y[i]} - double{whole[i]}));
    }
    EXPECT_LE(err_ref, 1e-4 * max_ref + 1e-5) << "parts of " << part;
    EXPECT_LE(err_whole, 1e-5 * max_ref + 1e-6) << "parts of " << part;
    const std::string info = (*exe)->memory_info();
    if (part == 4) {
      EXPECT_NE(info.find("one run"), std::string::npos) << info;
    } else {
      EXPECT_NE(info.find(absl::StrCat("batch 4 runs in parts of ", part)), std::string::npos) << info;
    }
  }
  // Not in parts: the reason names the step or buffer.
  gcomp::plan::Plan moved = *plan;
  for (gcomp::plan::Step& s : moved.steps) {
    if (s.op == "Transpose") s.params.Set("perm", std::vector<int64_t>{1, 0, 2, 3});
  }
  EXPECT_NE(gcomp::cpu::BatchPartsBlocker(moved).find("(Transpose): it moves the batch axis"), std::string::npos)
      << gcomp::cpu::BatchPartsBlocker(moved);
  gcomp::plan::Plan fixed_input = *plan;
  fixed_input.buffers[fixed_input.inputs[0]].dims[0] = {0, 4};
  EXPECT_NE(gcomp::cpu::BatchPartsBlocker(fixed_input).find("'input' does not hold its images one after another"),
            std::string::npos)
      << gcomp::cpu::BatchPartsBlocker(fixed_input);
  std::unique_ptr<gcomp::plan::Plan> vit = CompileForCpu(GCOMP_TEST_VIT_MODEL);
  ASSERT_TRUE(vit);
  EXPECT_NE(gcomp::cpu::BatchPartsBlocker(*vit), "");
}

}  // namespace
