// gcomp's own CPU kernels (runtime/cpu/own/) against the op table's reference kernels: each case
// runs the reference op on random data, then the own entry (accepts, create, Run on the raw
// buffers) with threads 1 and 2, and compares: float results within
// max abs err <= rtol * max|ref| + 1e-6 (rtol 1e-5 for f32 storage), data movement bit-exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <optional>
#include <random>

#include "runtime/cpu/own/entries.h"
#include "runtime/cpu/own/gelu_avx512.h"
#include "runtime/cpu/own/simd.h"
#include "tests/graph/op_test_util.h"

namespace gcomp::testing {
namespace {

using cpu::ShapedKernel;
using cpu::CpuEntry;
using cpu::KernelSpec;
using cpu::Operand;

const CpuEntry& Entry(const std::string& id) {
  static const std::vector<CpuEntry> entries = cpu::OwnKernelEntries();
  for (const CpuEntry& e : entries) {
    if (e.id == id) return e;
  }
  ADD_FAILURE() << "no entry " << id;
  return entries.front();
}

Tensor Random(DType dtype, std::vector<int64_t> dims, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  Tensor t = *Tensor::Zeros(dtype, std::move(dims));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (IsFloat(dtype)) {
      t.SetF32(i, dist(rng));
    } else {
      t.SetI64(i, static_cast<int64_t>(rng() % 1000) - 500);
    }
  }
  return t;
}

OpInput In(const std::string& name, Tensor t) { return OpInput{name, std::move(t), false}; }
OpInput Const(const std::string& name, std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return OpInput{name, Tensor::FromI64({n}, v), true};
}

KernelSpec SpecOf(const std::string& op, const std::vector<OpInput>& inputs, const Attributes& attrs,
                  const std::vector<Tensor>& outputs, int threads) {
  KernelSpec spec;
  spec.name = "node0";
  spec.op = op;
  spec.params = &attrs;
  spec.threads = threads;
  for (const OpInput& in : inputs) {
    Operand o;
    o.present = !in.name.empty();
    if (o.present) {
      o.dtype = in.value.dtype();
      o.dims = in.value.dims();
      if (in.constant) {
        o.constant = in.value.data();
        o.constant_bytes = in.value.nbytes();
      }
    }
    spec.inputs.push_back(o);
  }
  for (const Tensor& t : outputs) {
    Operand o;
    o.dtype = t.dtype();
    o.dims = t.dims();
    spec.outputs.push_back(o);
  }
  return spec;
}

// Runs entry `id` on the case; returns its outputs.
std::vector<Tensor> RunOwn(const std::string& id, const KernelSpec& spec, const std::vector<OpInput>& inputs) {
  const CpuEntry& e = Entry(id);
  std::optional<std::string> why = e.accepts(spec);
  EXPECT_TRUE(why.has_value()) << id << " declined " << spec.op;
  if (!why) return {};
  absl::StatusOr<std::unique_ptr<ShapedKernel>> k = e.create(spec);
  EXPECT_TRUE(k.ok()) << k.status();
  if (!k.ok()) return {};
  std::vector<Tensor> outs;
  for (const Operand& o : spec.outputs) outs.push_back(*Tensor::Zeros(o.dtype, o.dims));
  std::vector<const void*> ins;
  for (const OpInput& in : inputs) ins.push_back(in.name.empty() ? nullptr : in.value.data());
  std::vector<void*> os;
  for (Tensor& t : outs) os.push_back(t.mutable_data());
  absl::Status s = (*k)->Run(ins, os);
  EXPECT_TRUE(s.ok()) << s;
  return outs;
}

double DefaultRtol(DType t) { return t == DType::kF16 ? 2e-3 : t == DType::kBF16 ? 1.6e-2 : 1e-5; }

// Compares entry `id` with the reference op for threads 1 and 2. rtol < 0: the dtype's default;
// exact: bytes must match.
void Check(const std::string& id, const std::string& op, const std::vector<OpInput>& inputs, const Attributes& attrs,
           bool exact = false, double rtol = -1) {
  absl::StatusOr<std::vector<Tensor>> ref = RunOp(op, inputs, attrs);
  ASSERT_TRUE(ref.ok()) << ref.status();
  for (int threads : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << id << " threads " << threads);
    KernelSpec spec = SpecOf(op, inputs, attrs, *ref, threads);
    std::vector<Tensor> got = RunOwn(id, spec, inputs);
    ASSERT_EQ(got.size(), ref->size());
    for (size_t k = 0; k < got.size(); ++k) {
      const Tensor &r = (*ref)[k], &g = got[k];
      ASSERT_EQ(r.dims(), g.dims());
      ASSERT_EQ(r.dtype(), g.dtype());
      if (exact) {
        EXPECT_EQ(std::memcmp(r.data(), g.data(), r.nbytes()), 0) << "data differs";
        continue;
      }
      double max_ref = 0, max_err = 0;
      int64_t worst = 0;
      for (int64_t i = 0; i < r.numel(); ++i) max_ref = std::max(max_ref, std::fabs(double{r.GetF32(i)}));
      for (int64_t i = 0; i < r.numel(); ++i) {
        const double err = std::fabs(double{r.GetF32(i)} - double{g.GetF32(i)});
        if (!(err <= max_err)) {
          max_err = err;
          worst = i;
        }
      }
      const double tol = (rtol < 0 ? DefaultRtol(r.dtype()) : rtol) * max_ref + 1e-6;
      EXPECT_LE(max_err, tol) << "at " << worst << ": ref " << r.GetF32(worst) << " got " << g.GetF32(worst)
                              << " (max|ref| " << max_ref << ")";
    }
  }
}

// Runs `body` once per SIMD level this CPU has, each kernel created under a cap at that level, so
// every form of a kernel (AVX2, AVX-512, AVX512-BF16, AMX-BF16) is checked on one machine.
void ForEachSimdLevel(const std::function<void()>& body) {
  using cpu::own::SimdLevel;
  for (SimdLevel level : {SimdLevel::kAvx2, SimdLevel::kAvx512, SimdLevel::kAvx512Bf16, SimdLevel::kAmxBf16}) {
    cpu::own::CapSimdLevelForTesting(level);
    if (cpu::own::CpuSimdLevel() != level) continue;  // beyond this CPU
    SCOPED_TRACE(cpu::own::SimdLevelName(level));
    body();
  }
  cpu::own::CapSimdLevelForTesting(SimdLevel::kAmxBf16);
}

// Check() for each SIMD level.
void CheckEveryForm(const std::string& id, const std::string& op, const std::vector<OpInput>& inputs,
                    const Attributes& attrs) {
  ForEachSimdLevel([&] { Check(id, op, inputs, attrs); });
}

// ---- Attention ----------------------------------------------------------------------------

Attributes Heads(int64_t q, int64_t kv) {
  Attributes a;
  a.Set("q_num_heads", q);
  a.Set("kv_num_heads", kv);
  return a;
}

TEST(OwnAttention, Packed3dBatch2) {
  const int64_t b = 2, s = 197, h = 3, d = 64;
  CheckEveryForm("cpu.attention", "Attention",
        {In("q", Random(DType::kF32, {b, s, h * d}, 1)), In("k", Random(DType::kF32, {b, s, h * d}, 2)),
         In("v", Random(DType::kF32, {b, s, h * d}, 3))},
        Heads(h, h));
}

TEST(OwnAttention, Heads4dCustomScale) {
  Attributes a;
  a.Set("scale", 0.3f);
  CheckEveryForm("cpu.attention", "Attention",
        {In("q", Random(DType::kF32, {2, 4, 197, 64}, 4)), In("k", Random(DType::kF32, {2, 4, 197, 64}, 5)),
         In("v", Random(DType::kF32, {2, 4, 197, 64}, 6))},
        a);
}

TEST(OwnAttention, GroupedQueryOddSizes) {
  // 4 query heads on 2 kv heads, head size 40, v head size 24, 50 queries over 131 keys.
  CheckEveryForm("cpu.attention", "Attention",
        {In("q", Random(DType::kF32, {2, 4, 50, 40}, 7)), In("k", Random(DType::kF32, {2, 2, 131, 40}, 8)),
         In("v", Random(DType::kF32, {2, 2, 131, 24}, 9))},
        Attributes());
  CheckEveryForm("cpu.attention", "Attention",
        {In("q", Random(DType::kF32, {1, 5, 4 * 40}, 10)), In("k", Random(DType::kF32, {1, 7, 2 * 40}, 11)),
         In("v", Random(DType::kF32, {1, 7, 2 * 24}, 12))},
        Heads(4, 2));
}

TEST(OwnAttention, LargeScoresStayStable) {
  // Scores of order 100: the online softmax must rescale without overflow.
  Attributes a;
  a.Set("scale", 4.0f);
  CheckEveryForm("cpu.attention", "Attention",
        {In("q", Random(DType::kF32, {1, 2, 130, 16}, 13)), In("k", Random(DType::kF32, {1, 2, 130, 16}, 14)),
         In("v", Random(DType::kF32, {1, 2, 130, 16}, 15))},
        a);
}

// Every form of cpu.attention on `ins`: NaN exactly where the reference is (`nans` elements), near
// it elsewhere.
void ExpectNanWhereReference(const std::vector<OpInput>& ins, DType t, int64_t nans) {
  absl::StatusOr<std::vector<Tensor>> ref = RunOp("Attention", ins, Attributes());
  ASSERT_TRUE(ref.ok()) << ref.status();
  ForEachSimdLevel([&] {
    std::vector<Tensor> got = RunOwn("cpu.attention", SpecOf("Attention", ins, Attributes(), *ref, 2), ins);
    ASSERT_EQ(got.size(), 1u);
    int64_t seen = 0;
    for (int64_t i = 0; i < got[0].numel(); ++i) {
      const float r = (*ref)[0].GetF32(i), g = got[0].GetF32(i);
      ASSERT_EQ(std::isnan(r), std::isnan(g)) << "element " << i;
      if (std::isnan(r)) {
        ++seen;
      } else {
        EXPECT_NEAR(g, r, DefaultRtol(t) * 4 + 1e-5) << "element " << i;
      }
    }
    EXPECT_EQ(seen, nans);
  });
}

// More keys than a whole row of scores holds (512): the online softmax over key blocks, its
// running maxima rescaling the accumulator, in fp32 and bf16, with large scores; and a NaN key in
// the second block makes its head's rows NaN there too.
TEST(OwnAttention, LongSequencesRunKeyBlocks) {
  Attributes a;
  a.Set("scale", 2.0f);
  for (DType t : {DType::kF32, DType::kBF16}) {
    CheckEveryForm("cpu.attention", "Attention",
                   {In("q", Random(t, {1, 2, 30, 32}, 51)), In("k", Random(t, {1, 2, 700, 32}, 52)),
                    In("v", Random(t, {1, 2, 700, 32}, 53))},
                   a);
  }
  for (DType t : {DType::kF32, DType::kBF16}) {
    const Tensor q = Random(t, {1, 2, 30, 32}, 54), v = Random(t, {1, 2, 700, 32}, 56);
    Tensor k = Random(t, {1, 2, 700, 32}, 55);
    k.SetF32((700 + 600) * 32 + 3, NAN);  // head 1, key 600
    ExpectNanWhereReference({In("q", q), In("k", k), In("v", v)}, t, 30 * 32);  // all of head 1
  }
}

TEST(OwnAttention, HalfAndBFloat16Storage) {
  for (DType t : {DType::kF16, DType::kBF16}) {
    CheckEveryForm("cpu.attention", "Attention",
          {In("q", Random(t, {1, 70, 2 * 64}, 16)), In("k", Random(t, {1, 70, 2 * 64}, 17)),
           In("v", Random(t, {1, 70, 2 * 64}, 18))},
          Heads(2, 2));
  }
}

// bf16 Q, K and V with odd head sizes (the pair padding of the bf16 dot products), grouped-query,
// key counts off the block size, a large scale; and the form the entry says it runs.
TEST(OwnAttention, BFloat16OddHeadSizes) {
  const DType t = DType::kBF16;
  CheckEveryForm("cpu.attention", "Attention",
                 {In("q", Random(t, {2, 4, 50, 33}, 31)), In("k", Random(t, {2, 2, 131, 33}, 32)),
                  In("v", Random(t, {2, 2, 131, 24}, 33))},
                 Attributes());
  Attributes a;
  a.Set("scale", 2.0f);
  CheckEveryForm("cpu.attention", "Attention",
                 {In("q", Random(t, {1, 3, 7, 40}, 34)), In("k", Random(t, {1, 3, 200, 40}, 35)),
                  In("v", Random(t, {1, 3, 200, 72}, 36))},
                 a);
  // More keys than the AMX form takes at once (512): its per-block online softmax.
  CheckEveryForm("cpu.attention", "Attention",
                 {In("q", Random(t, {1, 2, 37, 64}, 37)), In("k", Random(t, {1, 2, 700, 64}, 38)),
                  In("v", Random(t, {1, 2, 700, 64}, 39))},
                 Attributes());
  const std::vector<OpInput> qkv = {In("q", Random(t, {1, 2, 8, 16}, 1)), In("k", Random(t, {1, 2, 8, 16}, 2)),
                                    In("v", Random(t, {1, 2, 8, 16}, 3))};
  const Tensor y = *Tensor::Zeros(t, {1, 2, 8, 16});
  std::optional<std::string> why = Entry("cpu.attention").accepts(SpecOf("Attention", qkv, Attributes(), {y}, 1));
  ASSERT_TRUE(why.has_value());
  const cpu::own::SimdLevel level = cpu::own::CpuSimdLevel();
  const std::string want = level == cpu::own::SimdLevel::kAmxBf16      ? "bf16 AMX tiles"
                           : level == cpu::own::SimdLevel::kAvx512Bf16 ? "bf16 AVX512-BF16"
                           : level == cpu::own::SimdLevel::kAvx512   ? "fp32 AVX-512 FMA"
                                                                      : "fp32 AVX2 FMA";
  EXPECT_NE(why->find(want), std::string::npos) << *why;
}

// A NaN in Q makes that query's output NaN in every form (as the reference's); a NaN in K makes
// every query's output of that head NaN. The other outputs stay finite and match.
TEST(OwnAttention, NanScoresGiveNanRows) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    Tensor q = Random(t, {1, 2, 20, 64}, 41), k = Random(t, {1, 2, 90, 64}, 42);
    const Tensor v = Random(t, {1, 2, 90, 64}, 43);
    q.SetF32(3 * 64 + 5, NAN);              // head 0, query 3
    k.SetF32((90 + 7) * 64 + 1, NAN);       // head 1, key 7
    // Query 3 of head 0, and all of head 1.
    ExpectNanWhereReference({In("q", q), In("k", k), In("v", v)}, t, 64 + 20 * 64);
  }
}

// The strided form: Q, K and V as columns of one packed QKV tensor, sequence first and batch first,
// grouped K/V heads, fp32 and bf16.
TEST(OwnAttention, StridedQkvRowsBothLayouts) {
  for (const char* layout : {"SBW", "BSW"}) {
    for (DType t : {DType::kF32, DType::kBF16}) {
      SCOPED_TRACE(layout);
      const int64_t seq = 70, batch = 2, heads = 4, kv_heads = 2, d = 32;
      const int64_t width = 8 + heads * d + 2 * kv_heads * d;
      const std::vector<int64_t> dims = std::string(layout) == "SBW" ? std::vector<int64_t>{seq, batch, width}
                                                                     : std::vector<int64_t>{batch, seq, width};
      const Tensor x = Random(t, dims, 21);
      Attributes a = Heads(heads, kv_heads);
      a.Set("qkv_layout", std::string(layout));
      a.Set("head_size", d);
      a.Set("v_head_size", d);
      a.Set("q_offset", int64_t{8});
      a.Set("k_offset", 8 + heads * d);
      a.Set("v_offset", 8 + heads * d + kv_heads * d);
      CheckEveryForm("cpu.attention", "Attention", {In("q", x), In("k", x), In("v", x)}, a);
    }
  }
}

TEST(OwnAttention, DeclinesMaskCausalSoftcapAndExtraOutputs) {
  const std::vector<OpInput> qkv = {In("q", Random(DType::kF32, {1, 2, 8, 16}, 1)),
                                    In("k", Random(DType::kF32, {1, 2, 8, 16}, 2)),
                                    In("v", Random(DType::kF32, {1, 2, 8, 16}, 3))};
  const Tensor y = *Tensor::Zeros(DType::kF32, {1, 2, 8, 16});
  const CpuEntry& e = Entry("cpu.attention");
  Attributes plain;
  EXPECT_TRUE(e.accepts(SpecOf("Attention", qkv, plain, {y}, 1)).has_value());
  std::vector<OpInput> masked = qkv;
  masked.push_back(In("mask", Random(DType::kF32, {8, 8}, 4)));
  EXPECT_FALSE(e.accepts(SpecOf("Attention", masked, plain, {y}, 1)).has_value());
  Attributes causal;
  causal.Set("is_causal", int64_t{1});
  EXPECT_FALSE(e.accepts(SpecOf("Attention", qkv, causal, {y}, 1)).has_value());
  Attributes softcap;
  softcap.Set("softcap", 30.0f);
  EXPECT_FALSE(e.accepts(SpecOf("Attention", qkv, softcap, {y}, 1)).has_value());
  const Tensor present = *Tensor::Zeros(DType::kF32, {1, 2, 8, 16});
  EXPECT_FALSE(e.accepts(SpecOf("Attention", qkv, plain, {y, present}, 1)).has_value());
}

// Timed runs per case: under the sanitizers (own.cmake) one, which still runs every form on the
// full ViT-B/16 shapes under their checks; the times then mean nothing.
#ifndef GCOMP_TIMING_RUNS
#define GCOMP_TIMING_RUNS 30
#endif

// ViT-B/16 attention (batch 1, 12 heads, 197 tokens, head size 64), 2 threads: time per layer.
// Times cpu.attention on `qkv` (mean and best of GCOMP_TIMING_RUNS runs, CPU time per run) and
// prints it.
void TimeAttention(const std::string& what, const std::vector<OpInput>& qkv, const Attributes& a,
                   const std::vector<int64_t>& y_dims) {
  const DType dtype = qkv[0].value.dtype();
  const Tensor y = *Tensor::Zeros(dtype, y_dims);
  for (int threads : {1, 2}) {
    KernelSpec spec = SpecOf("Attention", qkv, a, {y}, threads);
    std::unique_ptr<ShapedKernel> k = *Entry("cpu.attention").create(spec);
    Tensor out = *Tensor::Zeros(dtype, y_dims);
    std::vector<const void*> ins = {qkv[0].value.data(), qkv[1].value.data(), qkv[2].value.data()};
    std::vector<void*> outs = {out.mutable_data()};
    ASSERT_TRUE(k->Run(ins, outs).ok());
    const int iters = GCOMP_TIMING_RUNS;
    timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    double total = 0, best = 1e30;
    for (int i = 0; i < iters; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      ASSERT_TRUE(k->Run(ins, outs).ok());
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      total += ms;
      best = std::min(best, ms);
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    const double cpu_ms = ((c1.tv_sec - c0.tv_sec) * 1e3 + (c1.tv_nsec - c0.tv_nsec) * 1e-6) / iters;
    std::printf("cpu.attention ViT-B/16 %s %s, %s, %d thread(s): %.3f ms per layer (best %.3f, CPU %.3f)\n",
                DTypeName(dtype), what.c_str(), cpu::own::SimdLevelName(cpu::own::CpuSimdLevel()), threads,
                total / iters, best, cpu_ms);
  }
}

// ViT-B/16's attention at batch 1 in ONNX's 3-D form, and at batch 8 in the two forms of the
// torchvision export: heads folded into the batch ([96, 197, 64], what the Transposes produce)
// and the strided form reading the packed [197, 8, 2304] QKV projection in place.
TEST(OwnAttention, TimingVitB16) {
  const cpu::own::SimdLevel best = cpu::own::CpuSimdLevel();
  ForEachSimdLevel([best] {
    const cpu::own::SimdLevel level = cpu::own::CpuSimdLevel();
    if (level != best && level != cpu::own::SimdLevel::kAvx2) return;  // the AVX2 form and the CPU's best
    for (DType t : {DType::kF32, DType::kBF16}) {
      TimeAttention("[1,197,768] 12 heads",
                    {In("q", Random(t, {1, 197, 768}, 1)), In("k", Random(t, {1, 197, 768}, 2)),
                     In("v", Random(t, {1, 197, 768}, 3))},
                    Heads(12, 12), {1, 197, 768});
      TimeAttention("batch 8 folded [96,197,64]",
                    {In("q", Random(t, {96, 197, 64}, 1)), In("k", Random(t, {96, 197, 64}, 2)),
                     In("v", Random(t, {96, 197, 64}, 3))},
                    Heads(1, 1), {96, 197, 64});
      const Tensor qkv = Random(t, {197, 8, 2304}, 4);
      Attributes strided = Heads(12, 12);
      strided.Set("qkv_layout", std::string("SBW"));
      strided.Set("head_size", int64_t{64});
      strided.Set("v_head_size", int64_t{64});
      strided.Set("k_offset", int64_t{768});
      strided.Set("v_offset", int64_t{1536});
      TimeAttention("batch 8 strided [197,8,2304]", {In("q", qkv), In("k", qkv), In("v", qkv)}, strided,
                    {197, 8, 768});
    }
  });
}

// ---- the bf16 GELU pass ----------------------------------------------------------------------

// GeluF32ToBf16 against GELU in double rounded to bf16, over [-8, 8] densely and special values:
// within 5e-3 of max(|GELU|, 1e-3) (4.5e-3 measured; bf16's own rounding is 3.9e-3), 0 for large
// negative inputs, NaN stays NaN, +-0 give 0, +inf itself, a tail of every length handled.
TEST(OwnGelu, Bf16PassAgainstDouble) {
  if (cpu::own::CpuSimdLevel() < cpu::own::SimdLevel::kAvx512Bf16) GTEST_SKIP() << "no AVX512-BF16";
  std::vector<float> x;
  for (int i = -80000; i <= 80000; ++i) x.push_back(static_cast<float>(i) * 1e-4f);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 5.65f, -5.65f, 5.66f, -5.66f, 6.0f, -6.0f, 40.0f, -40.0f, 1e4f, -1e4f,
                  1e30f, -1e30f})
    x.push_back(v);
  for (int tail = 0; tail < 33; ++tail) {
    const int64_t n = static_cast<int64_t>(x.size()) - tail;
    std::vector<uint16_t> y(x.size(), 0xffff);
    cpu::own::avx512::GeluF32ToBf16(x.data(), y.data(), n);
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = x[i], ref = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
      const double got = BFloat16ToFloat(y[i]);
      worst = std::max(worst, std::abs(got - ref) / std::max(std::abs(ref), 1e-3));
    }
    EXPECT_LE(worst, 5e-3) << "n = " << n;
    for (int64_t i = n; i < static_cast<int64_t>(y.size()); ++i) ASSERT_EQ(y[i], 0xffff) << "wrote past n at " << i;
  }
  // -inf: x / 2 * (1 + erf) is -inf * 0, NaN, as the formula (and the reference) gives it.
  const std::vector<float> special = {NAN, INFINITY, 0.0f, -0.0f, -1e30f, -INFINITY};
  std::vector<uint16_t> y(special.size());
  cpu::own::avx512::GeluF32ToBf16(special.data(), y.data(), static_cast<int64_t>(special.size()));
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(y[0])));
  EXPECT_EQ(BFloat16ToFloat(y[1]), INFINITY);
  EXPECT_EQ(BFloat16ToFloat(y[2]), 0.0f);
  EXPECT_EQ(BFloat16ToFloat(y[3]), 0.0f);
  EXPECT_EQ(BFloat16ToFloat(y[4]), 0.0f);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(y[5])));
}

// ---- LayerNorm, Softmax -------------------------------------------------------------------

Attributes Axis(int64_t axis) {
  Attributes a;
  a.Set("axis", axis);
  return a;
}

TEST(OwnLayerNorm, Rows768AndOddSizes) {
  Attributes a = Axis(-1);
  a.Set("epsilon", 1e-6f);
  CheckEveryForm("cpu.layernorm", "LayerNorm",
                 {In("x", Random(DType::kF32, {2, 197, 768}, 1, -3, 5)), In("scale", Random(DType::kF32, {768}, 2)),
         In("bias", Random(DType::kF32, {768}, 3))},
        a);
  CheckEveryForm("cpu.layernorm", "LayerNorm",
                 {In("x", Random(DType::kF32, {3, 5, 37}, 4)), In("scale", Random(DType::kF32, {37}, 5))}, Axis(-1));
  // Normalizing the last two axes, Scale given as [5, 37].
  CheckEveryForm("cpu.layernorm", "LayerNorm",
                 {In("x", Random(DType::kF32, {3, 5, 37}, 6)), In("scale", Random(DType::kF32, {5, 37}, 7)),
         In("bias", Random(DType::kF32, {1, 5, 37}, 8))},
        Axis(1));
}

TEST(OwnLayerNorm, ReducedPrecisionStorage) {
  for (DType t : {DType::kF16, DType::kBF16}) {
    CheckEveryForm("cpu.layernorm", "LayerNorm",
                   {In("x", Random(t, {7, 768}, 1)), In("scale", Random(t, {768}, 2)), In("bias", Random(t, {768}, 3))},
          Axis(-1));
  }
}

TEST(OwnLayerNorm, DeclinesPerRowScale) {
  const std::vector<OpInput> ins = {In("x", Random(DType::kF32, {4, 8}, 1)),
                                    In("scale", Random(DType::kF32, {4, 1}, 2))};
  const Attributes a = Axis(-1);
  const Tensor y = *Tensor::Zeros(DType::kF32, {4, 8});
  EXPECT_FALSE(Entry("cpu.layernorm").accepts(SpecOf("LayerNorm", ins, a, {y}, 1)).has_value());
}

TEST(OwnSoftmax, LastAxisAndMiddleAxis) {
  Check("cpu.softmax", "Softmax", {In("x", Random(DType::kF32, {2, 3, 197, 197}, 1, -8, 8))}, Axis(-1));
  Check("cpu.softmax", "Softmax", {In("x", Random(DType::kF32, {3, 50, 7}, 2, -8, 8))}, Axis(1));
  Check("cpu.softmax", "Softmax", {In("x", Random(DType::kF16, {5, 1000}, 3, -8, 8))}, Axis(-1));
}

// ---- Transpose, Slice, Concat -------------------------------------------------------------

Attributes Perm(std::vector<int64_t> p) {
  Attributes a;
  a.Set("perm", std::move(p));
  return a;
}

TEST(OwnTranspose, Permutations) {
  Check("cpu.transpose", "Transpose", {In("x", Random(DType::kF32, {2, 64, 7, 9}, 1))}, Perm({0, 2, 3, 1}), true);
  Check("cpu.transpose", "Transpose", {In("x", Random(DType::kF32, {2, 7, 9, 64}, 2))}, Perm({0, 3, 1, 2}), true);
  Check("cpu.transpose", "Transpose", {In("x", Random(DType::kF32, {197, 2, 768}, 3))}, Perm({1, 0, 2}), true);
  Check("cpu.transpose", "Transpose", {In("x", Random(DType::kF32, {2, 197, 12, 64}, 4))}, Perm({0, 2, 1, 3}), true);
  Check("cpu.transpose", "Transpose", {In("x", Random(DType::kF32, {2, 3, 4, 5, 6}, 5))}, Perm({4, 2, 0, 3, 1}), true);
  Check("cpu.transpose", "Transpose", {In("x", Random(DType::kF32, {33, 1, 70}, 6))}, Perm({2, 1, 0}), true);
  Check("cpu.transpose", "Transpose", {In("x", Random(DType::kF32, {1, 1, 5}, 7))}, Perm({2, 0, 1}), true);
}

// NCHW images of 2 to 4 channels into NHWC (the interleaving form), 4- and 2-byte elements, rows
// longer than one of its chunks, and 5 channels (the tiled form) beside them.
TEST(OwnTranspose, FewRowsInterleaved) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (int64_t c : {2, 3, 4, 5}) {
      Check("cpu.transpose", "Transpose", {In("x", Random(t, {2, c, 70, 61}, 8))}, Perm({0, 2, 3, 1}), true);
    }
    Check("cpu.transpose", "Transpose", {In("x", Random(t, {3, 5000}, 9))}, Perm({1, 0}), true);
  }
}

TEST(OwnTranspose, OtherDTypes) {
  Check("cpu.transpose", "Transpose", {In("x", Random(DType::kI64, {3, 40, 5}, 1))}, Perm({2, 0, 1}), true);
  Check("cpu.transpose", "Transpose", {In("x", Random(DType::kF16, {2, 16, 5, 5}, 2))}, Perm({0, 2, 3, 1}), true);
}

TEST(OwnSlice, StepsAndNegativeIndices) {
  const Tensor x = Random(DType::kF32, {4, 10, 12}, 1);
  Check("cpu.slice", "Slice",
        {In("x", x), Const("starts", {1, -9}), Const("ends", {10, -1}), Const("axes", {1, 2}), Const("steps", {2, 2})},
        Attributes(), true);
  Check("cpu.slice", "Slice",
        {In("x", x), Const("starts", {-1, 8}), Const("ends", {-100, 1}), Const("axes", {-1, 1}),
         Const("steps", {-3, -2})},
        Attributes(), true);
  Check("cpu.slice", "Slice", {In("x", x), Const("starts", {0, 1}), Const("ends", {2, 3})}, Attributes(), true);
  // ViT's class token: x[:, 0:1, :] of [2, 197, 768].
  Check("cpu.slice", "Slice",
        {In("x", Random(DType::kF32, {2, 197, 768}, 2)), Const("starts", {0}), Const("ends", {1}), Const("axes", {1})},
        Attributes(), true);
  Check("cpu.slice", "Slice",
        {In("x", Random(DType::kI64, {9}, 3)), Const("starts", {-7}), Const("ends", {INT64_MAX}), Const("axes", {0}),
         Const("steps", {3})},
        Attributes(), true);
}

TEST(OwnSlice, DeclinesRuntimeStarts) {
  const std::vector<OpInput> ins = {In("x", Random(DType::kF32, {4, 10}, 1)), In("starts", Tensor::FromI64({1}, {1})),
                                    Const("ends", {3})};
  const Attributes a;
  const Tensor y = *Tensor::Zeros(DType::kF32, {2, 10});
  EXPECT_FALSE(Entry("cpu.slice").accepts(SpecOf("Slice", ins, a, {y}, 1)).has_value());
}

TEST(OwnConcat, Axes) {
  Attributes a1 = Axis(1);
  Check("cpu.concat", "Concat",
        {In("a", Random(DType::kF32, {2, 1, 768}, 1)), In("b", Random(DType::kF32, {2, 196, 768}, 2))}, a1, true);
  Attributes a0 = Axis(0);
  Check("cpu.concat", "Concat",
        {In("a", Random(DType::kI64, {2}, 3)), In("b", Random(DType::kI64, {1}, 4)),
         In("c", Random(DType::kI64, {3}, 5))},
        a0, true);
  Attributes am = Axis(-1);
  Check("cpu.concat", "Concat",
        {In("a", Random(DType::kF16, {3, 4, 5}, 6)), In("b", Random(DType::kF16, {3, 4, 2}, 7))}, am, true);
}

// ---- Pooling, ReduceMean ------------------------------------------------------------------

Attributes PoolAttrs(const std::string& kind, const std::string& layout, std::vector<int64_t> k, std::vector<int64_t> s,
                     std::vector<int64_t> pads) {
  Attributes a;
  if (!kind.empty()) a.Set("kind", kind);
  if (!layout.empty()) a.Set("layout", layout);
  a.Set("kernel_shape", std::move(k));
  a.Set("strides", std::move(s));
  a.Set("pads", std::move(pads));
  return a;
}

TEST(OwnPool, MaxAndAverageNhwcNchw) {
  for (const std::string layout : {"NHWC", "NCHW"}) {
    const Tensor x =
        layout == "NHWC" ? Random(DType::kF32, {2, 15, 15, 24}, 1) : Random(DType::kF32, {2, 24, 15, 15}, 1);
    Check("cpu.pool", "Pool", {In("x", x)}, PoolAttrs("max", layout, {3, 3}, {2, 2}, {1, 1, 1, 1}));
    Attributes avg = PoolAttrs("average", layout, {3, 3}, {2, 2}, {1, 1, 1, 1});
    Check("cpu.pool", "Pool", {In("x", x)}, avg);
    avg.Set("count_include_pad", int64_t{1});
    Check("cpu.pool", "Pool", {In("x", x)}, avg);
  }
  const Tensor x = Random(DType::kF32, {1, 3, 16, 16}, 2);
  Check("cpu.pool", "MaxPool", {In("x", x)}, PoolAttrs("", "", {3, 3}, {2, 2}, {1, 1, 1, 1}));
  Attributes ceil = PoolAttrs("", "", {3, 3}, {2, 2}, {0, 1, 0, 1});
  ceil.Set("ceil_mode", int64_t{1});
  ceil.Set("count_include_pad", int64_t{1});
  Check("cpu.pool", "AveragePool", {In("x", x)}, ceil);
  Check("cpu.pool", "GlobalAveragePool", {In("x", Random(DType::kF32, {2, 64, 7, 7}, 3))}, Attributes());
  Check("cpu.pool", "Pool", {In("x", Random(DType::kBF16, {1, 9, 9, 16}, 4))},
        PoolAttrs("max", "NHWC", {3, 3}, {2, 2}, {1, 1, 1, 1}));
}

// NHWC bf16 and f32 max pooling in every form (the AVX-512 rows included): a channel tail, windows
// cut by the padding, NaN inputs winning their windows, rows narrower and wider than the prefetch
// distance; bit-exact against the reference.
TEST(OwnPool, MaxNhwcEveryForm) {
  for (DType t : {DType::kBF16, DType::kF32}) {
    for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{2, 13, 11, 70}, {1, 6, 29, 16}}) {
      Tensor x = Random(t, dims, 6);
      for (int64_t i : {5, 700, 2001, 2700}) x.SetF32(i, NAN);
      ForEachSimdLevel([&] {
        Check("cpu.pool", "Pool", {In("x", x)}, PoolAttrs("max", "NHWC", {3, 3}, {2, 2}, {1, 1, 1, 1}),
              /*exact=*/true);
        Check("cpu.pool", "Pool", {In("x", x)}, PoolAttrs("max", "NHWC", {2, 3}, {1, 2}, {0, 1, 1, 0}),
              /*exact=*/true);
      });
    }
  }
}

TEST(OwnPool, OneDimensionalAsUnitHeight) {
  const Tensor x = Random(DType::kF32, {2, 5, 17}, 5);
  Check("cpu.pool", "MaxPool", {In("x", x)}, PoolAttrs("", "", {3}, {2}, {1, 1}));
  Attributes avg = PoolAttrs("", "", {4}, {3}, {2, 1});
  Check("cpu.pool", "AveragePool", {In("x", x)}, avg);
  avg.Set("count_include_pad", int64_t{1});
  Check("cpu.pool", "AveragePool", {In("x", x)}, avg);
  // Dilated windows are declined (the kernel's windows are dense).
  Attributes dilated = PoolAttrs("", "", {3}, {1}, {0, 0});
  dilated.Set("dilations", std::vector<int64_t>{2});
  absl::StatusOr<std::vector<Tensor>> ref = RunOp("MaxPool", {In("x", x)}, dilated);
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_FALSE(Entry("cpu.pool").accepts(SpecOf("MaxPool", {In("x", x)}, dilated, *ref, 1)).has_value());
}

// ---- Pad ----------------------------------------------------------------------------------

TEST(OwnPad, EveryModeAnyRankAndType) {
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    SCOPED_TRACE(mode);
    Attributes a;
    a.Set("mode", std::string(mode));
    a.Set("pads", std::vector<int64_t>{0, 1, 2, 3, 0, 2, 1, 4});  // [N, C, H, W] begins, then ends
    if (std::string(mode) == "constant") a.Set("value", 1.5f);
    Check("cpu.pad", "Pad", {In("x", Random(DType::kF32, {2, 3, 5, 6}, 1))}, a, true);
    Check("cpu.pad", "Pad", {In("x", Random(DType::kF16, {2, 3, 5, 6}, 2))}, a, true);
    Check("cpu.pad", "Pad", {In("x", Random(DType::kI64, {2, 3, 5, 6}, 3))}, a, true);
  }
  // Negative pads crop; axes select the padded axes.
  Attributes crop;
  crop.Set("pads", std::vector<int64_t>{-1, 2, 0, -2});
  crop.Set("axes", std::vector<int64_t>{2, 3});
  Check("cpu.pad", "Pad", {In("x", Random(DType::kF32, {1, 2, 6, 7}, 4))}, crop, true);
  // Pads given as a run-time input are declined.
  const std::vector<OpInput> ins = {In("x", Random(DType::kF32, {2, 3}, 5)), In("pads", Tensor::FromI64({4}, {1, 1, 1, 1}))};
  absl::StatusOr<std::vector<Tensor>> ref = RunOp("Pad", ins, Attributes());
  ASSERT_TRUE(ref.ok()) << ref.status();
  const Attributes none;
  EXPECT_FALSE(Entry("cpu.pad").accepts(SpecOf("Pad", ins, none, *ref, 1)).has_value());
}

// ---- Copies of views at graph outputs -----------------------------------------------------

TEST(OwnCopy, ViewOpsCopyTheirData) {
  const Tensor x = Random(DType::kF32, {2, 3, 4}, 1);
  Check("cpu.copy", "Reshape", {In("x", x), Const("shape", {4, 6})}, Attributes(), true);
  Attributes axis;
  axis.Set("axis", int64_t{2});
  Check("cpu.copy", "Flatten", {In("x", x)}, axis, true);
  Check("cpu.copy", "Unsqueeze", {In("x", x), Const("axes", {0})}, Attributes(), true);
  Check("cpu.copy", "Squeeze", {In("x", Random(DType::kBF16, {2, 1, 5}, 2)), Const("axes", {1})}, Attributes(), true);
}

Attributes ReduceAttrs(std::vector<int64_t> axes, int64_t keepdims) {
  Attributes a;
  a.Set("axes", std::move(axes));
  a.Set("keepdims", keepdims);
  return a;
}

TEST(OwnReduceMean, SpatialAndLastAxes) {
  const Tensor x = Random(DType::kF32, {2, 7, 7, 2048}, 1);
  Check("cpu.reduce_mean", "ReduceMean", {In("x", x)}, ReduceAttrs({1, 2}, 0));
  Check("cpu.reduce_mean", "ReduceMean", {In("x", x)}, ReduceAttrs({1, 2}, 1));
  Check("cpu.reduce_mean", "ReduceMean", {In("x", Random(DType::kF32, {2, 64, 7, 7}, 2))}, ReduceAttrs({-1, -2}, 1));
  Check("cpu.reduce_mean", "ReduceMean", {In("x", Random(DType::kF16, {3, 197, 768}, 3))}, ReduceAttrs({2}, 1));
  Check("cpu.reduce_mean", "ReduceMean", {In("x", Random(DType::kF32, {3, 1, 5}, 4))}, ReduceAttrs({1}, 0));
}

TEST(OwnReduceMean, ReduceSumSharesTheKernel) {
  Check("cpu.reduce_mean", "ReduceSum", {In("x", Random(DType::kF32, {2, 5, 9}, 1)), Const("axes", {1})},
        ReduceAttrs({}, 1));
  Check("cpu.reduce_mean", "ReduceSum", {In("x", Random(DType::kF32, {3, 40}, 2)), Const("axes", {-1})},
        ReduceAttrs({}, 0));
}

TEST(OwnReduceMean, DeclinesSplitAxes) {
  const std::vector<OpInput> ins = {In("x", Random(DType::kF32, {2, 3, 4}, 1))};
  const Attributes a = ReduceAttrs({0, 2}, 0);
  const Tensor y = *Tensor::Zeros(DType::kF32, {3});
  EXPECT_FALSE(Entry("cpu.reduce_mean").accepts(SpecOf("ReduceMean", ins, a, {y}, 1)).has_value());
}

// ---- Elementwise, Cast --------------------------------------------------------------------

TEST(OwnElementwise, BroadcastingF32) {
  Check("cpu.elementwise", "Add",
        {In("a", Random(DType::kF32, {2, 197, 768}, 1)), In("b", Random(DType::kF32, {1, 197, 768}, 2))}, Attributes());
  Check("cpu.elementwise", "Mul", {In("a", Random(DType::kF32, {2, 197, 768}, 3)), In("b", Random(DType::kF32, {}, 4))},
        Attributes());
  Check("cpu.elementwise", "Sub", {In("a", Random(DType::kF32, {}, 5)), In("b", Random(DType::kF32, {3, 70}, 6))},
        Attributes());
  Check("cpu.elementwise", "Div",
        {In("a", Random(DType::kF32, {4, 1, 5}, 7)), In("b", Random(DType::kF32, {3, 1}, 8, 0.5f, 2.0f))},
        Attributes());
  Check("cpu.elementwise", "Add",
        {In("a", Random(DType::kF32, {2, 8, 8, 64}, 9)), In("b", Random(DType::kF32, {64}, 10))}, Attributes());
  Check("cpu.elementwise", "Relu", {In("x", Random(DType::kF32, {3, 5000}, 11))}, Attributes(), true);
}

TEST(OwnElementwise, HalfAndBFloat16) {
  for (DType t : {DType::kF16, DType::kBF16}) {
    Check("cpu.elementwise", "Add", {In("a", Random(t, {2, 197, 768}, 1)), In("b", Random(t, {1, 197, 768}, 2))},
          Attributes());
    Check("cpu.elementwise", "Mul", {In("a", Random(t, {3, 70}, 3)), In("b", Random(t, {1}, 4))}, Attributes());
    Check("cpu.elementwise", "Relu", {In("x", Random(t, {3, 50}, 5))}, Attributes(), true);
  }
}

TEST(OwnElementwise, UnaryOpsAndPow) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(DTypeName(t));
    for (const char* op : {"Sigmoid", "Tanh", "Exp", "Neg", "Erf"}) {
      Check("cpu.elementwise", op, {In("x", Random(t, {3, 2100}, 1))}, Attributes());
    }
    for (const char* op : {"Sqrt", "Reciprocal"}) {
      Check("cpu.elementwise", op, {In("x", Random(t, {7, 33}, 2, 0.1f, 4.0f))}, Attributes());
    }
    Check("cpu.elementwise", "Pow",
          {In("a", Random(t, {4, 1, 50}, 3, 0.1f, 3.0f)), In("b", Random(t, {3, 1}, 4, -2.0f, 2.0f))}, Attributes());
  }
}

TEST(OwnClip, ConstantBoundsKeepNaN) {
  Tensor x = Random(DType::kF32, {5, 301}, 1, -9.0f, 9.0f);
  x.SetF32(7, std::nanf(""));
  const OpInput lo{"min", Tensor::FromF32({}, {-1.5f}), true}, hi{"max", Tensor::FromF32({}, {6.0f}), true};
  Check("cpu.clip", "Clip", {In("x", x), lo, hi}, Attributes(), true);
  Check("cpu.clip", "Clip", {In("x", x), OpInput{"", Tensor(), false}, hi}, Attributes(), true);
  Tensor bf16_lo = *Tensor::Zeros(DType::kBF16, {});
  bf16_lo.SetF32(0, -0.75f);
  Check("cpu.clip", "Clip", {In("x", Random(DType::kBF16, {4, 77}, 2)), OpInput{"min", bf16_lo, true}}, Attributes(),
        true);
  // Bounds computed at run time are declined.
  const std::vector<OpInput> ins = {In("x", x), In("min", Tensor::FromF32({}, {0.0f}))};
  absl::StatusOr<std::vector<Tensor>> ref = RunOp("Clip", ins, Attributes());
  ASSERT_TRUE(ref.ok()) << ref.status();
  const Attributes none;
  EXPECT_FALSE(Entry("cpu.clip").accepts(SpecOf("Clip", ins, none, *ref, 1)).has_value());
}

TEST(OwnIsNaNWhere, GuardsAndMasks) {
  Tensor x = Random(DType::kF32, {3, 17}, 1);
  x.SetF32(4, std::nanf(""));
  x.SetF32(20, -std::nanf(""));
  Check("cpu.isnan", "IsNaN", {In("x", x)}, Attributes(), true);
  Check("cpu.isnan", "IsNaN", {In("x", Random(DType::kBF16, {2, 9}, 2))}, Attributes(), true);
  // The SDPA export's guard and mask forms: Where(IsNaN(p), 0, p); Where(mask [1, 1, S, S], 0, lowest).
  absl::StatusOr<std::vector<Tensor>> nan = RunOp("IsNaN", {In("x", x)}, Attributes());
  ASSERT_TRUE(nan.ok()) << nan.status();
  Check("cpu.where", "Where", {In("c", (*nan)[0]), In("zero", Tensor::FromF32({}, {0.0f})), In("p", x)}, Attributes(),
        true);
  Tensor mask = *Tensor::Zeros(DType::kBool, {1, 1, 5, 5});
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j <= i; ++j) mask.SetI64(i * 5 + j, 1);
  }
  Check("cpu.where", "Where",
        {In("c", mask), In("x", Random(DType::kF32, {2, 3, 5, 5}, 3)), In("y", Tensor::FromF32({}, {-3.4e38f}))},
        Attributes(), true);
  Check("cpu.where", "Where",
        {In("c", mask), In("x", Random(DType::kI64, {5, 1}, 4)), In("y", Random(DType::kI64, {1, 5}, 5))},
        Attributes(), true);
}

TEST(OwnElementwise, InPlaceOverFirstInput) {
  const std::vector<OpInput> ins = {In("a", Random(DType::kF32, {4, 3000}, 1)),
                                    In("b", Random(DType::kF32, {3000}, 2))};
  const Attributes a;
  absl::StatusOr<std::vector<Tensor>> ref = RunOp("Add", ins, a);
  ASSERT_TRUE(ref.ok()) << ref.status();
  KernelSpec spec = SpecOf("Add", ins, a, *ref, 2);
  spec.in_place = {0};
  ASSERT_TRUE(Entry("cpu.elementwise").accepts(spec).has_value());
  std::unique_ptr<ShapedKernel> k = *Entry("cpu.elementwise").create(spec);
  Tensor buf = *Tensor::Zeros(DType::kF32, {4, 3000});
  std::memcpy(buf.mutable_data(), ins[0].value.data(), buf.nbytes());
  std::vector<const void*> in_ptrs = {buf.data(), ins[1].value.data()};
  std::vector<void*> out_ptrs = {buf.mutable_data()};
  ASSERT_TRUE(k->Run(in_ptrs, out_ptrs).ok());
  EXPECT_EQ(std::memcmp(buf.data(), (*ref)[0].data(), buf.nbytes()), 0);
  // Data movement never runs in place.
  const std::vector<OpInput> t_in = {In("x", Random(DType::kF32, {4, 5}, 3))};
  Attributes perm;
  perm.Set("perm", std::vector<int64_t>{1, 0});
  KernelSpec t_spec = SpecOf("Transpose", t_in, perm, {*Tensor::Zeros(DType::kF32, {5, 4})}, 1);
  t_spec.in_place = {0};
  EXPECT_FALSE(Entry("cpu.transpose").accepts(t_spec).has_value());
}

TEST(OwnElementwise, DeclinesIntegers) {
  const std::vector<OpInput> ins = {In("a", Random(DType::kI64, {3}, 1)), In("b", Random(DType::kI64, {3}, 2))};
  const Attributes a;
  const Tensor y = *Tensor::Zeros(DType::kI64, {3});
  EXPECT_FALSE(Entry("cpu.elementwise").accepts(SpecOf("Add", ins, a, {y}, 1)).has_value());
}

TEST(OwnCast, FloatStorageTypes) {
  const std::vector<std::pair<DType, const char*>> cases = {
      {DType::kF32, "f16"}, {DType::kF16, "bf16"}, {DType::kBF16, "f32"}, {DType::kF32, "bf16"}, {DType::kF16, "f32"}};
  for (const auto& [from, to] : cases) {
    Attributes a;
    a.Set("to", std::string(to));
    Check("cpu.cast", "Cast", {In("x", Random(from, {3, 5000}, 1))}, a, true);
  }
}

TEST(OwnCast, SpecialValuesMatchBitForBit) {
  // NaN, infinities, overflow to inf, subnormals and ties, in blocks of 8 and a tail.
  const std::vector<float> special = {NAN,    INFINITY,   -INFINITY, 70000.0f, -65520.0f, 65504.0f, 1e-7f,
                                      -3e-8f, 1.0009766f, 2.0f,      -0.0f,    1e-40f,    3.4e38f,  -1.5f,
                                      0.33f,  1e5f,       0.1f,      -7.0f,    65519.0f};
  Tensor x = *Tensor::Zeros(DType::kF32, {static_cast<int64_t>(special.size())});
  for (size_t i = 0; i < special.size(); ++i) x.SetF32(static_cast<int64_t>(i), special[i]);
  for (const char* to : {"f16", "bf16"}) {
    Attributes a;
    a.Set("to", std::string(to));
    Check("cpu.cast", "Cast", {In("x", x)}, a, true);
    absl::StatusOr<std::vector<Tensor>> low = RunOp("Cast", {In("x", x)}, a);
    ASSERT_TRUE(low.ok());
    Attributes back;
    back.Set("to", std::string("f32"));
    Check("cpu.cast", "Cast", {In("x", (*low)[0])}, back, true);
  }
}

}  // namespace
}  // namespace gcomp::testing
