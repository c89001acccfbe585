// The oneDNN / OpenBLAS kernels (runtime/cpu/blas/) against the op table's reference kernels on
// random data: every entry that accepts a case must match; the cases every entry must accept are
// asserted, the rest (e.g. NCHW for the OpenBLAS conv) are listed as skips in the output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <tuple>

#include "runtime/cpu/blas/entries.h"
#include "runtime/cpu/own/entries.h"
#include "runtime/cpu/own/simd.h"
#include "tests/graph/op_test_util.h"

namespace gcomp::cpu {
namespace {

struct In {
  std::vector<int64_t> dims;
  std::vector<float> v;
  bool constant = false;
  bool present = true;
};

In Random(std::vector<int64_t> dims, bool constant, uint32_t seed, DType dtype = DType::kF32) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  In in;
  in.dims = std::move(dims);
  in.constant = constant;
  in.v.resize(static_cast<size_t>(NumElements(in.dims)));
  for (float& f : in.v) f = RoundToStorage(u(rng), dtype);
  return in;
}

In Absent() {
  In in;
  in.present = false;
  return in;
}

// The reference output in fp32 (inputs as given, already rounded to the storage type).
Tensor Reference(const std::string& op, const std::vector<In>& ins, const Attributes& attrs) {
  std::vector<testing::OpInput> ops;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!ins[i].present) {
      ops.push_back({"", Tensor(), false});
      continue;
    }
    ops.push_back({"in" + std::to_string(i), Tensor::FromF32(ins[i].dims, ins[i].v), ins[i].constant});
  }
  auto out = testing::RunOp(op, ops, attrs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

std::vector<uint8_t> Store(DType dtype, const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * DTypeSize(dtype));
  StoreF32(dtype, v.data(), b.data(), static_cast<int64_t>(v.size()));
  return b;
}

struct Options {
  DType dtype = DType::kF32;
  bool pack = false;
  int64_t pack_batch = 0;  // 0: pack at the run's batch
  bool in_place = false;   // output 0 overwrites input 3 (the residual)
  int threads = 2;
  // Whether the kernel takes scratch from the session's workspace (WorkspaceBytes() > 0); unset: not
  // checked.
  std::optional<bool> workspace;
  // SIMD caps (own::CapSimdLevelForTesting) while the plan is packed and while the session creates
  // and runs the kernel: a plan packed on one CPU and run on another. Unset: no cap.
  std::optional<own::SimdLevel> pack_cap, run_cap;
  // A substring the reason from `accepts` must hold.
  std::string reason_has;
};

// Sets the SIMD cap for a phase of RunKernel (none: uncapped) and lifts it on destruction.
struct ScopedCap {
  explicit ScopedCap(std::optional<own::SimdLevel> cap) {
    own::CapSimdLevelForTesting(cap.value_or(own::SimdLevel::kAmxBf16));
  }
  ~ScopedCap() { own::CapSimdLevelForTesting(own::SimdLevel::kAmxBf16); }
};

Operand MakeOperand(bool present, DType dtype, std::vector<int64_t> dims) {
  Operand o;
  o.present = present;
  o.dtype = dtype;
  o.dims = std::move(dims);
  return o;
}

const CpuEntry& Entry(const std::string& id) {
  static const std::vector<CpuEntry> entries = [] {
    std::vector<CpuEntry> t = BlasKernelEntries();  // cpu.onednn.patch included
    for (CpuEntry& e : own::GemmEntries()) t.push_back(std::move(e));
    for (CpuEntry& e : own::Avx2GemmEntries()) t.push_back(std::move(e));
    t.push_back(own::Avx2ConvEntry());
    for (CpuEntry& e : own::Avx2WinogradEntries()) t.push_back(std::move(e));
    for (CpuEntry& e : own::Avx512WinogradEntries()) t.push_back(std::move(e));
    return t;
  }();
  for (const CpuEntry& e : entries) {
    if (e.id == id) return e;
  }
  ADD_FAILURE() << "no entry " << id;
  return entries[0];
}

// Runs `e` on the case; nullopt when the entry declines it.
std::optional<std::vector<float>> RunKernel(const CpuEntry& e, const std::string& op, const std::vector<In>& ins,
                                            const Attributes& attrs, const std::vector<int64_t>& out_dims,
                                            const Options& o) {
  std::vector<std::vector<uint8_t>> bytes;
  for (const In& in : ins) bytes.push_back(in.present ? Store(o.dtype, in.v) : std::vector<uint8_t>{});
  KernelSpec spec;
  spec.name = "node0";
  spec.op = op;
  spec.params = &attrs;
  spec.threads = o.threads;
  for (size_t i = 0; i < ins.size(); ++i) {
    Operand d;
    d.present = ins[i].present;
    d.dtype = o.dtype;
    d.dims = ins[i].dims;
    if (ins[i].constant) {
      d.constant = bytes[i].data();
      d.constant_bytes = bytes[i].size();
    }
    spec.inputs.push_back(d);
  }
  spec.outputs.push_back(MakeOperand(true, o.dtype, out_dims));
  if (o.in_place) spec.in_place = {3};

  std::vector<Packed> packed(ins.size());
  std::optional<ScopedCap> cap(std::in_place, o.pack ? o.pack_cap : o.run_cap);
  if (o.pack) {
    KernelSpec max = spec;
    if (o.pack_batch) {
      for (Operand& d : max.inputs) {
        if (d.present && !d.is_constant()) d.dims[0] = o.pack_batch;
      }
      max.outputs[0].dims[0] = o.pack_batch;
    }
    std::optional<std::string> reason = e.accepts(max);
    if (!reason) return std::nullopt;
    EXPECT_NE(reason->find(o.reason_has), std::string::npos) << *reason;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!spec.inputs[i].is_constant()) continue;
      auto p = e.pack(max, i);
      EXPECT_TRUE(p.ok()) << p.status();
      if (!p.ok()) return std::vector<float>{};
      packed[i] = std::move(*p);
      spec.inputs[i].constant = packed[i].bytes.data();
      spec.inputs[i].constant_bytes = packed[i].bytes.size();
      spec.inputs[i].format = packed[i].format;
    }
  } else if (!e.accepts(spec)) {
    return std::nullopt;
  }
  cap.emplace(o.run_cap);
  // A session checks the plan's step against its entry again (on the CPU it runs on) before it
  // creates the kernel.
  if (o.pack) {
    EXPECT_TRUE(e.accepts(spec)) << e.id << ": a packed step declined at run time";
  }
  auto k = e.create(spec);
  EXPECT_TRUE(k.ok()) << k.status();
  if (!k.ok()) return std::vector<float>{};
  std::vector<uint8_t> out(static_cast<size_t>(NumElements(out_dims)) * DTypeSize(o.dtype), 0xcd);
  std::vector<const void*> in_ptrs;
  for (size_t i = 0; i < ins.size(); ++i) in_ptrs.push_back(ins[i].present ? bytes[i].data() : nullptr);
  void* out_ptr = out.data();
  if (o.in_place) out_ptr = bytes[3].data();
  std::vector<void*> out_ptrs = {out_ptr};
  // Twice: a kernel must not depend on the output's previous contents (except in place). First
  // as a session runs it, with a workspace of exactly WorkspaceBytes() holding garbage (a step's
  // scratch is what the steps before it left there), then on the kernel's own.
  const int64_t ws_bytes = (*k)->WorkspaceBytes();
  EXPECT_GE(ws_bytes, 0);
  if (o.workspace) {
    EXPECT_EQ(ws_bytes > 0, *o.workspace) << "workspace bytes " << ws_bytes;
  }
  AlignedArray<uint8_t> ws(static_cast<size_t>(std::max<int64_t>(ws_bytes, 0)));
  if (ws_bytes > 0) std::memset(ws.data(), 0xcd, static_cast<size_t>(ws_bytes));
  for (int rep = 0; rep < (o.in_place ? 1 : 2); ++rep) {
    absl::Status s = rep == 0 ? (*k)->RunWithWorkspace(in_ptrs, out_ptrs, {ws.data(), static_cast<size_t>(ws_bytes)})
                              : (*k)->Run(in_ptrs, out_ptrs);
    EXPECT_TRUE(s.ok()) << s;
  }
  std::vector<float> y(static_cast<size_t>(NumElements(out_dims)));
  LoadF32(o.dtype, out_ptr, y.data(), static_cast<int64_t>(y.size()));
  return y;
}

double Tolerance(DType t, double max_ref) {
  switch (t) {
    case DType::kBF16:
      return 1.6e-2 * max_ref + 1e-3;
    case DType::kF16:
      return 2e-3 * max_ref + 1e-3;
    default:
      return 1e-4 * max_ref + 1e-5;
  }
}

// Compares `id` against the reference; returns false when the entry declined.
bool Check(const std::string& id, const std::string& op, const std::vector<In>& ins, const Attributes& attrs,
           const Options& o, const std::string& what) {
  Tensor ref = Reference(op, ins, attrs);
  std::vector<float> r = ref.ToF32();
  std::optional<std::vector<float>> y = RunKernel(Entry(id), op, ins, attrs, ref.dims(), o);
  if (!y) {
    std::printf("[ skip ] %s declines %s (%s)\n", id.c_str(), what.c_str(), DTypeName(o.dtype));
    return false;
  }
  EXPECT_EQ(y->size(), r.size()) << id << " " << what;
  if (y->size() != r.size()) return true;
  double max_ref = 0, max_err = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    max_ref = std::max(max_ref, std::fabs(double{r[i]}));
    max_err = std::max(max_err, std::fabs(double{r[i]} - double{(*y)[i]}));
  }
  if (std::getenv("GCOMP_BLAS_TEST_VERBOSE")) {
    std::printf("%s %s %s: max err %.3g, max |ref| %.3g\n", id.c_str(), what.c_str(), DTypeName(o.dtype), max_err,
                max_ref);
  }
  EXPECT_LE(max_err, Tolerance(o.dtype, max_ref))
      << id << " " << what << " " << DTypeName(o.dtype) << " pack=" << o.pack << " pack_batch=" << o.pack_batch
      << " in_place=" << o.in_place << " threads=" << o.threads;
  return true;
}

// ---- FusedConv ----
struct ConvCase {
  std::string what;
  bool nhwc;
  int64_t c, cout, h, w, k, s, pad, dil, group;
  bool bias, residual;
  std::string act;
};

std::vector<In> ConvInputs(const ConvCase& c, int64_t batch, DType dtype, Attributes* attrs) {
  attrs->Set("kernel_shape", std::vector<int64_t>{c.k, c.k});
  attrs->Set("strides", std::vector<int64_t>{c.s, c.s});
  attrs->Set("pads", std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad});
  attrs->Set("dilations", std::vector<int64_t>{c.dil, c.dil});
  attrs->Set("group", c.group);
  attrs->Set("layout", std::string(c.nhwc ? "NHWC" : "NCHW"));
  attrs->Set("activation", c.act);
  if (c.act == "clip") {
    attrs->Set("clip_min", 0.0f);
    attrs->Set("clip_max", 0.5f);
  }
  const int64_t ho = (c.h + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.s + 1;
  const int64_t wo = (c.w + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.s + 1;
  std::vector<In> ins;
  ins.push_back(Random(c.nhwc ? std::vector<int64_t>{batch, c.h, c.w, c.c} : std::vector<int64_t>{batch, c.c, c.h, c.w},
                       false, 1, dtype));
  ins.push_back(Random({c.cout, c.c / c.group, c.k, c.k}, true, 2, dtype));
  ins.push_back(c.bias ? Random({c.cout}, true, 3, dtype) : Absent());
  if (c.residual) {
    ins.push_back(
        Random(c.nhwc ? std::vector<int64_t>{batch, ho, wo, c.cout} : std::vector<int64_t>{batch, c.cout, ho, wo},
               false, 4, dtype));
  }
  return ins;
}

const std::vector<ConvCase>& ConvCases() {
  static const std::vector<ConvCase> cases = {
      {"3x3 s1 p1 bias relu", true, 8, 16, 9, 9, 3, 1, 1, 1, 1, true, false, "relu"},
      {"3x3 s2 p1 no bias", true, 8, 12, 10, 10, 3, 2, 1, 1, 1, false, false, "none"},
      {"7x7 s2 p3 bias relu", true, 3, 16, 15, 15, 7, 2, 3, 1, 1, true, false, "relu"},
      {"1x1 bias residual relu", true, 16, 8, 6, 6, 1, 1, 0, 1, 1, true, true, "relu"},
      {"3x3 group 4 bias clip", true, 8, 16, 7, 7, 3, 1, 1, 1, 4, true, false, "clip"},
      {"3x3 dilation 2 residual gelu", true, 6, 10, 9, 9, 3, 1, 2, 2, 1, false, true, "gelu"},
      {"3x3 residual gelu_tanh", true, 5, 7, 6, 8, 3, 1, 1, 1, 1, true, true, "gelu_tanh"},
      {"16x16 s16 patch bias", true, 3, 32, 32, 32, 16, 16, 0, 1, 1, true, false, "none"},
      {"3x3 s2 many pixels bias residual relu", true, 16, 24, 40, 40, 3, 2, 1, 1, 1, true, true, "relu"},
      {"NCHW 3x3 bias residual relu", false, 8, 16, 9, 9, 3, 1, 1, 1, 1, true, true, "relu"},
  };
  return cases;
}

const char* const kConvIds[] = {"cpu.onednn.conv", "cpu.openblas.conv"};

TEST(BlasConv, Fp32MatchesReference) {
  for (const char* id : kConvIds) {
    for (const ConvCase& c : ConvCases()) {
      Attributes attrs;
      std::vector<In> ins = ConvInputs(c, 2, DType::kF32, &attrs);
      for (int threads : {1, 2}) {
        Options o;
        o.threads = threads;
        bool ran = Check(id, "FusedConv", ins, attrs, o, c.what);
        if (c.nhwc) {
          EXPECT_TRUE(ran) << id << " must accept NHWC f32 " << c.what;
        }
      }
    }
  }
}

TEST(BlasConv, PackedAtOtherBatch) {
  for (const char* id : kConvIds) {
    for (const ConvCase& c : ConvCases()) {
      Attributes attrs;
      std::vector<In> ins = ConvInputs(c, 2, DType::kF32, &attrs);
      for (int64_t pack_batch : {0, 5}) {
        Options o;
        o.pack = true;
        o.pack_batch = pack_batch;
        Check(id, "FusedConv", ins, attrs, o, c.what);
      }
    }
  }
}

// Patch embeddings (kernel == stride, no padding) as one matmul on gathered rows: against the
// reference in f32 and bf16, packed (weights permuted at pack time, at another batch) or plain
// (permuted when the kernel is created), with residual, activations, an input that the patches
// do not cover to its edge; declined for everything else.
TEST(BlasConv, PatchEmbeddingAsMatmul) {
  if (own::CpuSimdLevel() < own::SimdLevel::kAvx512) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::vector<ConvCase> cases = {
      {"16x16 s16 patch bias", true, 3, 32, 32, 32, 16, 16, 0, 1, 1, true, false, "none"},
      {"4x4 s4 uncovered edge residual relu", true, 5, 24, 18, 19, 4, 4, 0, 1, 1, true, true, "relu"},
      {"2x2 s2 no bias gelu", true, 16, 40, 8, 8, 2, 2, 0, 1, 1, false, false, "gelu"},
  };
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (const ConvCase& c : cases) {
      Attributes attrs;
      std::vector<In> ins = ConvInputs(c, 3, t, &attrs);
      for (bool pack : {false, true}) {
        for (bool in_place : {false, true}) {
          if (in_place && !c.residual) continue;
          Options o;
          o.dtype = t;
          o.pack = pack;
          o.pack_batch = pack ? 5 : 0;
          o.in_place = in_place;
          o.workspace = true;
          o.reason_has = "on patches gathered into rows";
          EXPECT_TRUE(Check("cpu.onednn.patch", "FusedConv", ins, attrs, o, c.what)) << c.what << " " << DTypeName(t);
        }
      }
    }
  }
  // What it leaves to the convolution: padding, overlapping or sparse windows, dilation, groups,
  // 1x1, NCHW.
  std::vector<ConvCase> declined = {
      {"16x16 s16 pad 1", true, 3, 8, 34, 34, 16, 16, 1, 1, 1, true, false, "none"},
      {"3x3 s2", true, 8, 12, 10, 10, 3, 2, 1, 1, 1, false, false, "none"},
      {"1x1", true, 16, 8, 6, 6, 1, 1, 0, 1, 1, true, true, "relu"},
      {"2x2 s2 group 2", true, 8, 8, 8, 8, 2, 2, 0, 1, 2, true, false, "none"},
      {"2x2 s2 dilation 2", true, 8, 8, 9, 9, 2, 2, 0, 2, 1, true, false, "none"},
      {"NCHW 4x4 s4", false, 3, 8, 16, 16, 4, 4, 0, 1, 1, true, false, "none"},
  };
  for (const ConvCase& c : declined) {
    Attributes attrs;
    std::vector<In> ins = ConvInputs(c, 2, DType::kF32, &attrs);
    EXPECT_FALSE(Check("cpu.onednn.patch", "FusedConv", ins, attrs, Options(), c.what)) << c.what;
  }
}

// Y overwrites the residual (as the memory planner places them). bf16 too: oneDNN adds a bf16
// residual as a binary post-op reading the memory it writes.
TEST(BlasConv, InPlaceResidual) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (const char* id : kConvIds) {
      for (const ConvCase& c : ConvCases()) {
        if (!c.residual) continue;
        Attributes attrs;
        std::vector<In> ins = ConvInputs(c, 2, t, &attrs);
        Options o;
        o.dtype = t;
        o.in_place = true;
        o.pack = true;
        const bool ran = Check(id, "FusedConv", ins, attrs, o, c.what);
        if (c.nhwc) {
          EXPECT_TRUE(ran) << id << " " << c.what << " " << DTypeName(t);
        }
      }
    }
  }
}

// oneDNN's Winograd convolution: f32 3x3 stride-1 layers of >= 64 channels and outputs of at least
// 14x14 (partial output tiles, odd sizes, bias or not), packed at another batch, against the
// reference within the fp32 tolerance; and what it leaves to the direct convolution.
TEST(BlasConv, WinogradMatchesReferenceAndDeclines) {
  const std::vector<ConvCase> cases = {
      {"wino 64->64 14x14 bias relu", true, 64, 64, 14, 14, 3, 1, 1, 1, 1, true, false, "relu"},
      {"wino 128->96 14x15 no bias", true, 128, 96, 14, 15, 3, 1, 1, 1, 1, false, false, "none"},
      {"wino 64->128 17x19 bias", true, 64, 128, 17, 19, 3, 1, 1, 1, 1, true, false, "none"},
  };
  // oneDNN 2.6 has Winograd kernels for AVX-512 cores only; elsewhere the entry declines them all.
  const bool avx512 = CpuIsa().rfind("avx512_core", 0) == 0;
  for (const ConvCase& c : cases) {
    Attributes attrs;
    std::vector<In> ins = ConvInputs(c, 2, DType::kF32, &attrs);
    if (!avx512) {
      EXPECT_FALSE(Check("cpu.onednn.winograd", "FusedConv", ins, attrs, Options(), c.what)) << c.what;
      continue;
    }
    for (int threads : {1, 2}) {
      for (int64_t pack_batch : {0, 5}) {
        Options o;
        o.threads = threads;
        o.pack = true;
        o.pack_batch = pack_batch;
        o.workspace = true;  // the blocked X and Y
        EXPECT_TRUE(Check("cpu.onednn.winograd", "FusedConv", ins, attrs, o, c.what)) << c.what;
      }
    }
  }
  const std::vector<ConvCase> declined = {
      {"3x3 s2", true, 64, 64, 14, 14, 3, 2, 1, 1, 1, true, false, "relu"},
      {"residual", true, 64, 64, 14, 14, 3, 1, 1, 1, 1, true, true, "relu"},
      {"32 channels", true, 32, 64, 14, 14, 3, 1, 1, 1, 1, true, false, "relu"},
      {"NCHW", false, 64, 64, 14, 14, 3, 1, 1, 1, 1, true, false, "relu"},
      {"group 2", true, 64, 64, 14, 14, 3, 1, 1, 1, 2, true, false, "relu"},
      {"dilation 2", true, 64, 64, 14, 14, 3, 1, 2, 2, 1, true, false, "relu"},
      {"7x7 output", true, 512, 512, 7, 7, 3, 1, 1, 1, 1, true, false, "relu"},
      {"13x20 output", true, 64, 64, 13, 20, 3, 1, 1, 1, 1, true, false, "relu"},
  };
  for (const ConvCase& c : declined) {
    Attributes attrs;
    std::vector<In> ins = ConvInputs(c, 2, DType::kF32, &attrs);
    EXPECT_FALSE(Check("cpu.onednn.winograd", "FusedConv", ins, attrs, Options(), c.what)) << c.what;
  }
  Attributes attrs;
  std::vector<In> ins = ConvInputs(cases[0], 2, DType::kBF16, &attrs);
  Options bf16;
  bf16.dtype = DType::kBF16;
  EXPECT_FALSE(Check("cpu.onednn.winograd", "FusedConv", ins, attrs, bf16, "bf16")) << "bf16";
}

// The F(2x2, 3x3) entries' cases (cpu.onednn.winograd_bf16 and cpu.onednn.winograd_2x2).
struct WinogradCase {
  ConvCase conv;
  int64_t batch;
  bool transforms;  // cpu.onednn.winograd_2x2: Winograd (V and M in the workspace), not its direct convolution
};

const std::vector<WinogradCase>& WinogradF2Cases() {
  static const std::vector<WinogradCase> cases = {
      {{"256->256 14x14 bias relu, 196 tiles", true, 256, 256, 14, 14, 3, 1, 1, 1, 1, true, false, "relu"}, 4, true},
      {{"144->136 13x15 no bias, 224 tiles", true, 144, 136, 13, 15, 3, 1, 1, 1, 1, false, false, "none"}, 4, true},
      {{"136->144 16x16 pad 0 bias, 196 tiles", true, 136, 144, 16, 16, 3, 1, 0, 1, 1, true, false, "none"}, 4, true},
      {{"128->128 28x28 bias relu, 196 tiles", true, 128, 128, 28, 28, 3, 1, 1, 1, 1, true, false, "relu"}, 1, true},
      {{"256->256 14x14 at 49 tiles (f32 entry: direct)", true, 256, 256, 14, 14, 3, 1, 1, 1, 1, true, false, "relu"},
       1,
       false},
      {{"128->128 28x28, 980 tiles: several blocks", true, 128, 128, 28, 28, 3, 1, 1, 1, 1, true, false, "relu"},
       5,
       true},
      {{"64->80 55x57 bias relu, 812 tiles: several blocks", true, 64, 80, 55, 57, 3, 1, 1, 1, 1, true, false, "relu"},
       1,
       true},
  };
  return cases;
}

// Layers neither F(2x2, 3x3) entry takes (but the own bf16 one takes the 7x7 outputs).
const std::vector<ConvCase>& WinogradF2Declined() {
  static const std::vector<ConvCase> declined = {
      {"3x3 s2", true, 256, 256, 14, 14, 3, 2, 1, 1, 1, true, false, "relu"},
      {"residual", true, 256, 256, 14, 14, 3, 1, 1, 1, 1, true, true, "relu"},
      {"32 channels", true, 32, 64, 14, 14, 3, 1, 1, 1, 1, true, false, "relu"},
      {"NCHW", false, 256, 256, 14, 14, 3, 1, 1, 1, 1, true, false, "relu"},
      {"group 2", true, 256, 256, 14, 14, 3, 1, 1, 1, 2, true, false, "relu"},
      {"dilation 2", true, 256, 256, 14, 14, 3, 1, 2, 2, 1, true, false, "relu"},
      {"7x7 output: 16 tiles per image", true, 512, 512, 7, 7, 3, 1, 1, 1, 1, true, false, "relu"},
      {"clip", true, 256, 256, 14, 14, 3, 1, 1, 1, 1, true, false, "clip"},
      {"5x5", true, 128, 128, 14, 14, 5, 1, 2, 1, 1, true, false, "relu"},
  };
  return declined;
}

// The bf16 Winograd F(2x2, 3x3) entries (cpu.avx512.winograd_bf16, the own one the table tries
// first, and cpu.onednn.winograd_bf16): bf16 3x3 stride-1 layers of >= 64 channels and >= 40 output
// tiles per image (the own entry: 16, 7x7 outputs), transformed at every batch (in one block or
// several; the case that the f32 entry leaves to its direct convolution included): odd sizes
// (partial tiles), channel tails, padding 0 and 1, bias or not, ReLU or none, packed at another
// batch (the own entry also from the plain weights), 1 to 3 threads, against the reference within
// the bf16 tolerance; and what they decline: f32, a CPU without AVX512-BF16 (the own entry checked
// on one capped at AVX-512), and odd input channels (the own entry: vdpbf16ps multiplies pairs of
// them).
TEST(BlasConv, WinogradBf16MatchesReferenceAndDeclines) {
  const std::vector<WinogradCase>& cases = WinogradF2Cases();
  const bool bf16_dots = own::CpuSimdLevel() >= own::SimdLevel::kAvx512Bf16;
  Options bf16;
  bf16.dtype = DType::kBF16;
  for (const char* id : {"cpu.avx512.winograd_bf16", "cpu.onednn.winograd_bf16"}) {
    const bool own_entry = std::string(id) == "cpu.avx512.winograd_bf16";
    for (const WinogradCase& c : cases) {
      Attributes attrs;
      std::vector<In> ins = ConvInputs(c.conv, c.batch, DType::kBF16, &attrs);
      if (!bf16_dots) {
        EXPECT_FALSE(Check(id, "FusedConv", ins, attrs, bf16, c.conv.what)) << id << ": " << c.conv.what;
        continue;
      }
      // (threads, pack batch (-1: plain weights, 0: the run's))
      std::vector<std::pair<int, int64_t>> runs = {{1, 0}, {1, 8}, {2, 0}, {2, 8}};
      if (own_entry) runs.insert(runs.end(), {{2, -1}, {3, c.batch + 3}});
      for (const auto& [threads, pack_batch] : runs) {
        Options o = bf16;
        o.threads = threads;
        o.pack = pack_batch >= 0;
        o.pack_batch = std::max<int64_t>(pack_batch, 0);
        o.workspace = true;  // V and M: every case transforms
        if (own_entry) o.reason_has = "own AVX512-BF16 Winograd F(2x2, 3x3)";
        EXPECT_TRUE(Check(id, "FusedConv", ins, attrs, o, c.conv.what)) << id << ": " << c.conv.what;
      }
      if (own_entry) {
        Options capped = bf16;
        capped.pack = true;
        capped.pack_cap = capped.run_cap = own::SimdLevel::kAvx512;
        EXPECT_FALSE(Check(id, "FusedConv", ins, attrs, capped, c.conv.what)) << id << ": " << c.conv.what;
      }
    }
    for (const ConvCase& c : WinogradF2Declined()) {
      Attributes attrs;
      std::vector<In> ins = ConvInputs(c, 2, DType::kBF16, &attrs);
      if (own_entry && c.what == "7x7 output: 16 tiles per image") {  // the own entry takes them
        Options o = bf16;
        o.pack = true;
        o.workspace = true;
        EXPECT_EQ(Check(id, "FusedConv", ins, attrs, o, c.what), bf16_dots) << id << ": " << c.what;
        continue;
      }
      EXPECT_FALSE(Check(id, "FusedConv", ins, attrs, bf16, c.what)) << id << ": " << c.what;
    }
    const ConvCase odd{"65->64 14x14", true, 65, 64, 14, 14, 3, 1, 1, 1, 1, true, false, "relu"};
    Attributes odd_attrs;
    std::vector<In> odd_ins = ConvInputs(odd, 2, DType::kBF16, &odd_attrs);
    Options odd_options = bf16;
    odd_options.pack = true;
    EXPECT_EQ(Check(id, "FusedConv", odd_ins, odd_attrs, odd_options, odd.what), bf16_dots && !own_entry) << id;
    Attributes attrs;
    std::vector<In> ins = ConvInputs(cases[0].conv, 4, DType::kF32, &attrs);
    EXPECT_FALSE(Check(id, "FusedConv", ins, attrs, Options(), "f32")) << id << ": f32";
  }
}

// cpu.onednn.winograd_2x2 on a CPU without AVX-512 (capped to AVX2 here): f32, and bf16 widened to
// f32 (oneDNN without its bf16 primitives); it declines where AVX-512 is there (oneDNN's own
// Winograd for f32, the bf16 one for bf16).
TEST(BlasConv, Winograd2x2MatchesReferenceAndDeclines) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    Options capped;
    capped.dtype = t;
    capped.pack_cap = own::SimdLevel::kAvx2;
    capped.run_cap = own::SimdLevel::kAvx2;
    for (const WinogradCase& c : WinogradF2Cases()) {
      Attributes attrs;
      std::vector<In> ins = ConvInputs(c.conv, c.batch, t, &attrs);
      for (int threads : {1, 2}) {
        for (int64_t pack_batch : {int64_t{0}, int64_t{8}}) {
          Options o = capped;
          o.threads = threads;
          o.pack = true;
          o.pack_batch = pack_batch;
          // The direct convolution (the own AVX2 one) pads the input (and widens bf16) there too.
          o.workspace = c.transforms || t == DType::kBF16 || c.conv.pad > 0;
          if (!c.transforms) o.reason_has = "own AVX2 implicit-GEMM convolution";
          EXPECT_TRUE(Check("cpu.onednn.winograd_2x2", "FusedConv", ins, attrs, o, c.conv.what))
              << c.conv.what << " " << DTypeName(t);
        }
      }
      if (own::CpuSimdLevel() >= own::SimdLevel::kAvx512) {
        Options o;
        o.dtype = t;
        EXPECT_FALSE(Check("cpu.onednn.winograd_2x2", "FusedConv", ins, attrs, o, c.conv.what))
            << "with AVX-512: " << c.conv.what << " " << DTypeName(t);
      }
    }
    for (const ConvCase& c : WinogradF2Declined()) {
      Attributes attrs;
      std::vector<In> ins = ConvInputs(c, 4, t, &attrs);
      EXPECT_FALSE(Check("cpu.onednn.winograd_2x2", "FusedConv", ins, attrs, capped, c.what)) << c.what;
    }
  }
}

TEST(BlasConv, ReducedPrecisionStorage) {
  for (DType t : {DType::kBF16, DType::kF16}) {
    for (const char* id : kConvIds) {
      for (const ConvCase& c : ConvCases()) {
        Attributes attrs;
        std::vector<In> ins = ConvInputs(c, 2, t, &attrs);
        Options o;
        o.dtype = t;
        o.pack = true;
        o.pack_batch = 3;
        bool ran = Check(id, "FusedConv", ins, attrs, o, c.what);
        // Both run every storage type (oneDNN: bf16 natively, f16 through f32 buffers).
        if (c.nhwc) {
          EXPECT_TRUE(ran) << id;
        }
      }
    }
  }
}

// bf16 on a CPU without AVX-512 (capped to AVX2 here): oneDNN runs an f32 primitive on widened
// copies, whether the plan was packed on such a CPU (weights stored plain) or on one with AVX-512
// (packed bf16, widened when the session starts), and the reason says so.
TEST(BlasConv, Bf16WithoutAvx512RunsThroughF32) {
  for (bool packed_with_avx512 : {false, true}) {
    for (const ConvCase& c : ConvCases()) {
      if (!c.nhwc) continue;
      Attributes attrs;
      std::vector<In> ins = ConvInputs(c, 2, DType::kBF16, &attrs);
      Options o;
      o.dtype = DType::kBF16;
      o.pack = true;
      o.pack_batch = 3;
      o.run_cap = own::SimdLevel::kAvx2;
      if (!packed_with_avx512) {
        o.pack_cap = own::SimdLevel::kAvx2;
        o.reason_has = "bf16 storage widened to an f32 primitive";
      }
      o.workspace = true;
      EXPECT_TRUE(Check("cpu.onednn.conv", "FusedConv", ins, attrs, o, c.what)) << c.what;
    }
  }
}

// ---- FusedGemm / MatMul ----
struct GemmCase {
  std::string what;
  std::vector<int64_t> a;  // A dims, last = K
  int64_t n;
  bool trans_b, bias, residual;
  std::string act;
  float alpha;
};

std::vector<In> GemmInputs(const GemmCase& c, DType dtype, Attributes* attrs) {
  const int64_t k = c.a.back();
  attrs->Set("transB", int64_t{c.trans_b});
  if (c.alpha != 1.0f) attrs->Set("alpha", c.alpha);
  attrs->Set("activation", c.act);
  if (c.act == "clip") {
    attrs->Set("clip_min", -0.25f);
    attrs->Set("clip_max", 0.5f);
  }
  std::vector<In> ins;
  ins.push_back(Random(c.a, false, 11, dtype));
  ins.push_back(Random(c.trans_b ? std::vector<int64_t>{c.n, k} : std::vector<int64_t>{k, c.n}, true, 12, dtype));
  ins.push_back(c.bias ? Random({c.n}, true, 13, dtype) : Absent());
  if (c.residual) {
    std::vector<int64_t> y = c.a;
    y.back() = c.n;
    ins.push_back(Random(y, false, 14, dtype));
  }
  return ins;
}

const std::vector<GemmCase>& GemmCases() {
  static const std::vector<GemmCase> cases = {
      {"batch dims bias gelu", {2, 5, 24}, 20, false, true, false, "gelu", 1.0f},
      {"transB bias", {7, 24}, 20, true, true, false, "none", 1.0f},
      {"residual relu", {7, 24}, 20, false, true, true, "relu", 1.0f},
      {"transB residual relu", {3, 4, 32}, 48, true, false, true, "relu", 1.0f},
      {"alpha 0.5 bias clip", {9, 16}, 12, false, true, false, "clip", 0.5f},
      {"many rows bias residual gelu_tanh", {300, 64}, 40, true, true, true, "gelu_tanh", 1.0f},
      {"wide N bias gelu", {2, 3, 40}, 1100, false, true, false, "gelu", 1.0f},
      {"long K many rows transB bias residual relu", {520, 1536}, 272, true, true, true, "relu", 1.0f},
      // Rows of 4 KiB: written at a padded stride where oneDNN runs gemm:jit (below AVX-512).
      {"N 1024 bias residual gelu", {37, 48}, 1024, false, true, true, "gelu", 1.0f},
  };
  return cases;
}

const char* const kGemmIds[] = {"cpu.onednn.gemm", "cpu.openblas.gemm"};

TEST(BlasGemm, Fp32MatchesReference) {
  for (const char* id : kGemmIds) {
    for (const GemmCase& c : GemmCases()) {
      Attributes attrs;
      std::vector<In> ins = GemmInputs(c, DType::kF32, &attrs);
      for (int threads : {1, 2}) {
        Options o;
        o.threads = threads;
        EXPECT_TRUE(Check(id, "FusedGemm", ins, attrs, o, c.what)) << id << " must accept " << c.what;
      }
    }
  }
}

TEST(BlasGemm, PackedAtOtherBatch) {
  for (const char* id : kGemmIds) {
    for (const GemmCase& c : GemmCases()) {
      Attributes attrs;
      std::vector<In> ins = GemmInputs(c, DType::kF32, &attrs);
      for (int64_t pack_batch : {0, 11}) {
        Options o;
        o.pack = true;
        o.pack_batch = pack_batch;
        EXPECT_TRUE(Check(id, "FusedGemm", ins, attrs, o, c.what));
      }
    }
  }
}

TEST(BlasGemm, InPlaceResidual) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (const char* id : kGemmIds) {
      for (const GemmCase& c : GemmCases()) {
        if (!c.residual) continue;
        Attributes attrs;
        std::vector<In> ins = GemmInputs(c, t, &attrs);
        Options o;
        o.dtype = t;
        o.in_place = true;
        o.pack = true;
        o.pack_batch = 13;
        EXPECT_TRUE(Check(id, "FusedGemm", ins, attrs, o, c.what)) << id << " " << DTypeName(t);
      }
    }
  }
}

TEST(BlasGemm, ReducedPrecisionStorage) {
  for (DType t : {DType::kBF16, DType::kF16}) {
    for (const char* id : kGemmIds) {
      for (const GemmCase& c : GemmCases()) {
        Attributes attrs;
        std::vector<In> ins = GemmInputs(c, t, &attrs);
        Options o;
        o.dtype = t;
        o.pack = true;
        o.pack_batch = 4;
        bool ran = Check(id, "FusedGemm", ins, attrs, o, c.what);
        { EXPECT_TRUE(ran) << id; }
      }
    }
  }
}

// bf16 GEMMs with the erf GELU on an AVX512-BF16 CPU: oneDNN writes the f32 result into the
// workspace and the own pass rounds GELU of it into Y (more than one chunk of the pass, and a
// masked tail, in the last case).
TEST(BlasGemm, Bf16GeluAsOwnPass) {
  if (own::CpuSimdLevel() < own::SimdLevel::kAvx512Bf16) GTEST_SKIP() << "no AVX512-BF16 on this CPU";
  std::vector<GemmCase> cases;
  for (const GemmCase& c : GemmCases()) {
    if (c.act == "gelu" && !c.residual) cases.push_back(c);
  }
  cases.push_back({"two chunks and a tail", {63, 96}, 301, false, true, false, "gelu", 1.0f});
  ASSERT_GE(cases.size(), 3u);
  for (const GemmCase& c : cases) {
    Attributes attrs;
    std::vector<In> ins = GemmInputs(c, DType::kBF16, &attrs);
    for (int threads : {1, 2}) {
      Options o;
      o.dtype = DType::kBF16;
      o.pack = true;
      o.pack_batch = 5;
      o.threads = threads;
      o.workspace = true;
      o.reason_has = "GELU rounded to bf16 by an own AVX-512 pass";
      EXPECT_TRUE(Check("cpu.onednn.gemm", "FusedGemm", ins, attrs, o, c.what)) << c.what;
    }
  }
}

// The same pass in row parts (onednn_kernels.cc, GeluParts: about 3 MiB of f32 result each): 5500
// rows of N 301 run as three parts, 1834, 1834 and a last one of 1832, each part's matmul into the
// same workspace rows and GELU of it into its rows of Y; against the reference, with the weights
// packed for this batch (the reason names the parts) and for batch 5 (one part there).
TEST(BlasGemm, Bf16GeluPassInParts) {
  if (own::CpuSimdLevel() < own::SimdLevel::kAvx512Bf16) GTEST_SKIP() << "no AVX512-BF16 on this CPU";
  const GemmCase c{"three parts, the last shorter", {5500, 64}, 301, false, true, false, "gelu", 1.0f};
  Attributes attrs;
  std::vector<In> ins = GemmInputs(c, DType::kBF16, &attrs);
  for (int64_t pack_batch : {0, 5}) {
    for (int threads : {1, 2}) {
      Options o;
      o.dtype = DType::kBF16;
      o.pack = true;
      o.pack_batch = pack_batch;
      o.threads = threads;
      o.workspace = true;
      o.reason_has = pack_batch ? "GELU rounded to bf16 by an own AVX-512 pass" : "pass, in parts of 1834 rows";
      EXPECT_TRUE(Check("cpu.onednn.gemm", "FusedGemm", ins, attrs, o, c.what)) << pack_batch << " " << threads;
    }
  }
}

// And f32 below AVX-512: [K, N] weights of N 1024 get padded rows (stored so in the plan, or
// widened into them from a bf16 or AVX-512 packing).
TEST(BlasGemm, WithoutAvx512) {
  for (DType t : {DType::kBF16, DType::kF32}) {
    for (bool packed_with_avx512 : {false, true}) {
      for (const GemmCase& c : GemmCases()) {
        Attributes attrs;
        std::vector<In> ins = GemmInputs(c, t, &attrs);
        for (bool in_place : {false, true}) {
          if (in_place && !c.residual) continue;
          Options o;
          o.dtype = t;
          o.pack = true;
          o.pack_batch = 4;
          o.in_place = in_place;
          o.run_cap = own::SimdLevel::kAvx2;
          if (!packed_with_avx512) {
            o.pack_cap = own::SimdLevel::kAvx2;
            if (t == DType::kBF16) o.reason_has = "bf16 storage widened to an f32 primitive";
            if (c.n % 1024 == 0 && !c.trans_b) o.reason_has = "weight rows padded to 1040 values";
          }
          o.workspace = t == DType::kBF16;
          EXPECT_TRUE(Check("cpu.onednn.gemm", "FusedGemm", ins, attrs, o, c.what)) << c.what << " " << DTypeName(t);
        }
      }
    }
  }
}

TEST(BlasMatMul, ConstantBMatchesReference) {
  Attributes attrs;
  std::vector<In> ins = {Random({2, 3, 24}, false, 21), Random({24, 20}, true, 22)};
  for (const char* id : {"cpu.onednn.matmul", "cpu.openblas.matmul"}) {
    for (bool pack : {false, true}) {
      Options o;
      o.pack = pack;
      o.pack_batch = pack ? 4 : 0;
      EXPECT_TRUE(Check(id, "MatMul", ins, attrs, o, "[2,3,24] x [24,20]")) << id;
    }
  }
}

TEST(BlasMatMul, RunTimeOperandsWithBroadcastBatches) {
  Attributes attrs;
  struct Shapes {
    std::vector<int64_t> a, b;
  };
  for (const Shapes& c : std::vector<Shapes>{{{2, 3, 4, 5}, {3, 5, 6}},  // B's batch broadcast over A's
                                             {{4, 1, 7, 8}, {3, 8, 2}},  // both broadcast
                                             {{6, 9}, {9, 4}},           // plain
                                             {{9}, {2, 9, 4}},           // 1-D A: a row
                                             {{2, 3, 9}, {9}}}) {        // 1-D B: a column
    std::vector<In> ins = {Random(c.a, false, 31), Random(c.b, false, 32)};
    Options o;
    EXPECT_TRUE(Check("cpu.openblas.batched_matmul", "MatMul", ins, attrs, o, "run-time A x B"));
  }
  for (DType t : {DType::kF16, DType::kBF16}) {
    std::vector<In> ins = {Random({2, 3, 7, 16}, false, 33), Random({2, 3, 16, 5}, false, 34)};
    Options o;
    o.dtype = t;
    EXPECT_TRUE(Check("cpu.openblas.batched_matmul", "MatMul", ins, attrs, o, "run-time A x B, reduced storage"));
  }
}

TEST(BlasEntries, DeclineWhatTheyDoNotRun) {
  // A non-constant B and a broadcast residual are declined by every entry.
  Attributes attrs;
  std::vector<In> ins = {Random({4, 8}, false, 1), Random({8, 6}, false, 2)};
  KernelSpec spec;
  spec.op = "FusedGemm";
  spec.params = &attrs;
  for (const In& in : ins) spec.inputs.push_back(MakeOperand(true, DType::kF32, in.dims));
  spec.outputs.push_back(MakeOperand(true, DType::kF32, {4, 6}));
  for (const char* id : kGemmIds) EXPECT_FALSE(Entry(id).accepts(spec)) << id;
  std::vector<uint8_t> b(8 * 6 * 4);
  spec.inputs[1].constant = b.data();
  spec.inputs[1].constant_bytes = b.size();
  spec.inputs.push_back(MakeOperand(false, DType::kF32, {}));
  spec.inputs.push_back(MakeOperand(true, DType::kF32, {1, 6}));
  for (const char* id : kGemmIds) EXPECT_FALSE(Entry(id).accepts(spec)) << id;
  spec.inputs[3].dims = {4, 6};
  for (const char* id : kGemmIds) EXPECT_TRUE(Entry(id).accepts(spec)) << id;
}

TEST(BlasEntries, VersionsAndIsa) {
  EXPECT_NE(BlasLibraryVersions().find("oneDNN 2."), std::string::npos) << BlasLibraryVersions();
  EXPECT_NE(BlasLibraryVersions().find("OpenBLAS"), std::string::npos) << BlasLibraryVersions();
  EXPECT_FALSE(CpuIsa().empty());
  std::printf("ISA %s; %s\n", CpuIsa().c_str(), BlasLibraryVersions().c_str());
}

}  // namespace
}  // namespace gcomp::cpu

namespace gcomp::cpu {
namespace {

TEST(BlasEntries, PackIsDeterministic) {
  Attributes attrs;
  attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
  attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  attrs.Set("layout", std::string("NHWC"));
  In w = Random({32, 16, 3, 3}, true, 5);
  KernelSpec spec;
  spec.op = "FusedConv";
  spec.params = &attrs;
  spec.inputs = {MakeOperand(true, DType::kF32, {4, 10, 10, 16}), MakeOperand(true, DType::kF32, w.dims)};
  spec.inputs[1].constant = reinterpret_cast<const uint8_t*>(w.v.data());
  spec.inputs[1].constant_bytes = w.v.size() * sizeof(float);
  spec.outputs = {MakeOperand(true, DType::kF32, {4, 10, 10, 32})};
  for (const char* id : kConvIds) {
    ASSERT_TRUE(Entry(id).accepts(spec)) << id;
    auto a = Entry(id).pack(spec, 1);
    auto b = Entry(id).pack(spec, 1);
    ASSERT_TRUE(a.ok() && b.ok()) << id;
    EXPECT_EQ(a->format, b->format) << id;
    EXPECT_TRUE(a->bytes == b->bytes) << id;
    EXPECT_FALSE(a->format.empty()) << id;
    std::printf("%s packs W as %.40s...\n", id, a->format.c_str());
  }
}

// The own AMX-BF16 GEMM (cpu.amx.gemm / cpu.amx.matmul) against the reference in bf16: row and
// column counts off its 32 x 32 blocks (the tail rows, the zero-padded last panel), fewer rows
// than one block, every activation, alpha, transB, a residual in place, weights packed at another
// batch or plain, 1 and 2 threads. On a CPU without AMX-BF16 the entries decline every case.
TEST(AmxGemm, MatchesReferenceOrDeclinesWithoutAmx) {
  const bool amx = own::CpuSimdLevel() == own::SimdLevel::kAmxBf16;
  const std::vector<GemmCase> cases = {
      {"tails bias gelu", {2, 37, 768}, 100, false, true, false, "gelu", 1.0f},
      {"197 rows transB residual relu", {197, 768}, 64, true, true, true, "relu", 1.0f},
      {"5 rows alpha clip", {5, 1024}, 48, false, true, false, "clip", 0.5f},
      {"K 512 on the tiles", {2, 100, 512}, 64, false, true, true, "relu", 1.0f},
      {"96 rows no bias gelu_tanh", {96, 800}, 33, true, false, false, "gelu_tanh", 1.0f},
      {"K 3072 residual", {40, 3072}, 70, false, true, true, "none", 1.0f},
      // K below 768 at more than 256 rows: the oneDNN form, on weights unpacked from the panels.
      {"oneDNN form transB alpha residual relu", {2, 600, 512}, 40, true, true, true, "relu", 0.5f},
      {"oneDNN form gelu", {1100, 512}, 72, false, true, false, "gelu", 1.0f},
  };
  for (const GemmCase& c : cases) {
    Attributes attrs;
    std::vector<In> ins = GemmInputs(c, DType::kBF16, &attrs);
    for (int threads : {1, 2}) {
      for (int64_t pack_batch : {int64_t{-1}, int64_t{0}, int64_t{3}}) {
        Options o;
        o.dtype = DType::kBF16;
        o.threads = threads;
        o.pack = pack_batch >= 0;
        o.pack_batch = std::max<int64_t>(pack_batch, 0);
        EXPECT_EQ(Check("cpu.amx.gemm", "FusedGemm", ins, attrs, o, c.what), amx) << c.what;
        if (c.residual && o.pack) {
          o.in_place = true;
          EXPECT_EQ(Check("cpu.amx.gemm", "FusedGemm", ins, attrs, o, c.what + " in place"), amx) << c.what;
        }
      }
    }
  }
  Attributes none;
  std::vector<In> mm = {Random({3, 7, 768}, false, 41, DType::kBF16), Random({768, 40}, true, 42, DType::kBF16)};
  for (bool pack : {false, true}) {
    Options o;
    o.dtype = DType::kBF16;
    o.pack = pack;
    EXPECT_EQ(Check("cpu.amx.matmul", "MatMul", mm, none, o, "[3,7,768] x [768,40]"), amx);
  }
}

// What the AMX entries leave to oneDNN: fp32 and f16 storage, and K not a multiple of 32 or
// below 512 (a short reduction, where oneDNN's kernels run faster).
TEST(AmxGemm, Declines) {
  const std::vector<std::pair<GemmCase, DType>> declined = {
      {{"fp32", {8, 768}, 40, false, true, false, "none", 1.0f}, DType::kF32},
      {{"f16", {8, 768}, 40, false, true, false, "none", 1.0f}, DType::kF16},
      {{"K 784", {8, 784}, 40, false, true, false, "none", 1.0f}, DType::kBF16},
      {{"K 520", {8, 520}, 40, false, true, false, "none", 1.0f}, DType::kBF16},
      {{"K 256", {8, 256}, 40, false, true, false, "none", 1.0f}, DType::kBF16},
  };
  for (const auto& [c, t] : declined) {
    Attributes attrs;
    std::vector<In> ins = GemmInputs(c, t, &attrs);
    Options o;
    o.dtype = t;
    EXPECT_FALSE(Check("cpu.amx.gemm", "FusedGemm", ins, attrs, o, c.what)) << c.what;
  }
}

// A NaN in A makes its row of Y NaN through ReLU and Clip, as in the reference (a max or min
// against a bound must not turn it into the bound).
TEST(AmxGemm, NanStaysNanThroughReluAndClip) {
  if (own::CpuSimdLevel() != own::SimdLevel::kAmxBf16) GTEST_SKIP() << "no AMX-BF16 on this CPU";
  for (const char* act : {"relu", "clip"}) {
    const GemmCase c = {"nan", {4, 512}, 40, false, true, false, act, 1.0f};
    Attributes attrs;
    std::vector<In> ins = GemmInputs(c, DType::kBF16, &attrs);
    ins[0].v[3] = std::nanf("");  // row 0
    Options o;
    o.dtype = DType::kBF16;
    std::optional<std::vector<float>> y = RunKernel(Entry("cpu.amx.gemm"), "FusedGemm", ins, attrs, {4, 40}, o);
    ASSERT_TRUE(y.has_value()) << act;
    for (int64_t j = 0; j < 40; ++j) {
      EXPECT_TRUE(std::isnan((*y)[j])) << act << " column " << j;
      EXPECT_TRUE(std::isfinite((*y)[40 + j])) << act << " column " << j;
    }
  }
}

// The AVX2 entries' runs: dtype t on `threads` threads, weights packed at `pack_batch` (-1: plain
// weights, 0: the run's batch) with the CPU capped at AVX2, the run capped where run_capped (always
// for plain weights).
Options Avx2Run(DType t, int threads, int64_t pack_batch, bool run_capped) {
  Options o;
  o.dtype = t;
  o.threads = threads;
  o.pack = pack_batch >= 0;
  o.pack_batch = std::max<int64_t>(pack_batch, 0);
  o.pack_cap = own::SimdLevel::kAvx2;
  if (run_capped || !o.pack) o.run_cap = own::SimdLevel::kAvx2;
  return o;
}

// The own AVX2 fp32 GEMM (cpu.avx2.gemm / cpu.avx2.matmul) against the reference, in f32 and bf16
// storage, the CPU capped at AVX2 while the plan is packed (where the table chooses it): rows off
// its 6-row tiles, columns off its 16-column panels (masked stores), fewer columns than one
// vector, K of 1, every activation it takes, alpha, transB, a residual in place, weights packed at
// another batch or plain, 1 and 2 threads, and run both capped and on the whole CPU (a plan made
// without AVX-512 runs on a CPU with it).
TEST(Avx2Gemm, MatchesReference) {
  const std::vector<GemmCase> cases = {
      {"tails bias relu", {2, 37, 100}, 100, false, true, false, "relu", 1.0f},
      {"197 rows transB residual relu", {197, 768}, 64, true, true, true, "relu", 1.0f},
      {"5 rows alpha clip", {5, 1024}, 48, false, true, false, "clip", 0.5f},
      {"1 row transB bias (a classifier)", {1, 2048}, 1000, true, true, false, "none", 1.0f},
      {"49 rows residual relu", {49, 512}, 2048, false, true, true, "relu", 1.0f},
      {"7 columns K 3", {13, 3}, 7, false, false, false, "none", 1.0f},
      {"gelu bias", {2, 31, 96}, 72, false, true, false, "gelu", 1.0f},
      {"gelu transB residual", {20, 200}, 40, true, true, true, "gelu", 1.0f},
      {"K 1 residual", {8, 1}, 20, true, true, true, "none", 2.0f},
  };
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (const GemmCase& c : cases) {
      Attributes attrs;
      std::vector<In> ins = GemmInputs(c, t, &attrs);
      for (int threads : {1, 2}) {
        for (int64_t pack_batch : {int64_t{-1}, int64_t{0}, int64_t{3}}) {
          for (bool run_capped : {true, false}) {
            Options o = Avx2Run(t, threads, pack_batch, run_capped);
            o.workspace = t == DType::kBF16;  // A widened
            o.reason_has = t == DType::kBF16 ? "bf16 storage widened to f32 in the tiles" : "own AVX2 fp32 GEMM";
            EXPECT_TRUE(Check("cpu.avx2.gemm", "FusedGemm", ins, attrs, o, c.what)) << c.what;
            if (c.residual && o.pack) {
              o.in_place = true;
              EXPECT_TRUE(Check("cpu.avx2.gemm", "FusedGemm", ins, attrs, o, c.what + " in place")) << c.what;
            }
          }
        }
      }
    }
    Attributes none;
    std::vector<In> mm = {Random({3, 7, 200}, false, 41, t), Random({200, 40}, true, 42, t)};
    for (bool pack : {false, true}) {
      Options o;
      o.dtype = t;
      o.pack = pack;
      o.pack_cap = o.run_cap = own::SimdLevel::kAvx2;
      EXPECT_TRUE(Check("cpu.avx2.matmul", "MatMul", mm, none, o, "[3,7,200] x [200,40]")) << DTypeName(t);
    }
  }
}

// Runs entry `id` on the case with f32 and with bf16 storage (the CPU capped at AVX2) and expects
// the bf16 output to be the f32 one rounded to bf16 once, bit for bit. Returns the bf16 run's
// output (empty where a run declined or the sizes differ).
std::vector<float> ExpectBf16IsF32RoundedOnce(const std::string& id, const std::string& op, const std::vector<In>& ins,
                                              const Attributes& attrs, const std::vector<int64_t>& out,
                                              const std::string& what) {
  Options f32;
  f32.run_cap = own::SimdLevel::kAvx2;
  Options bf16 = f32;
  bf16.dtype = DType::kBF16;
  std::optional<std::vector<float>> a = RunKernel(Entry(id), op, ins, attrs, out, f32);
  std::optional<std::vector<float>> b = RunKernel(Entry(id), op, ins, attrs, out, bf16);
  EXPECT_TRUE(a && b) << id << " " << what;
  if (!a || !b) return {};
  EXPECT_EQ(a->size(), b->size()) << id << " " << what;
  if (a->size() != b->size()) return {};
  std::vector<uint16_t> rounded(a->size());
  StoreF32(DType::kBF16, a->data(), rounded.data(), static_cast<int64_t>(a->size()));
  const std::vector<uint8_t> got = Store(DType::kBF16, *b);  // b holds bf16 values: exact
  EXPECT_EQ(got.size(), rounded.size() * 2);
  if (got.size() != rounded.size() * 2) return {};
  EXPECT_EQ(std::memcmp(got.data(), rounded.data(), got.size()), 0) << id << " " << what;
  return *b;
}

// bf16 storage computes what f32 storage does on the same (bf16-exact) values and rounds each
// result once as StoreF32 does (nearest even, ties included): the two runs agree bit for bit
// after rounding the f32 one, through bias, residual and every activation, NaN and infinity too.
TEST(Avx2Gemm, Bf16RoundsTheF32ResultOnce) {
  for (const char* act : {"none", "relu", "clip", "gelu"}) {
    const GemmCase c = {"bf16 rounding", {2, 37, 100}, 45, true, true, true, act, 1.0f};
    Attributes attrs;
    std::vector<In> ins = GemmInputs(c, DType::kBF16, &attrs);  // values exact in bf16
    ins[0].v[5] = std::nanf("");                                // row 0: NaN
    ins[0].v[100 + 7] = RoundToStorage(1e38f, DType::kBF16);    // row 1: beyond bf16's range after the sum
    ins[0].v[200 + 7] = RoundToStorage(-3e38f, DType::kBF16);
    const std::vector<float> b = ExpectBf16IsF32RoundedOnce("cpu.avx2.gemm", "FusedGemm", ins, attrs, {2, 37, 45}, act);
    ASSERT_FALSE(b.empty()) << act;
    EXPECT_TRUE(std::isnan(b[0])) << act;
  }
}

// What the AVX2 entries leave to oneDNN: f16 storage, the tanh GELU epilogue, and every
// GEMM on a CPU with AVX-512 (oneDNN's kernels use the wider registers there).
TEST(Avx2Gemm, Declines) {
  const std::vector<std::pair<GemmCase, DType>> declined = {
      {{"f16", {8, 64}, 40, false, true, false, "none", 1.0f}, DType::kF16},
      {{"gelu_tanh", {8, 64}, 40, false, true, false, "gelu_tanh", 1.0f}, DType::kF32},
  };
  for (const auto& [c, t] : declined) {
    Attributes attrs;
    std::vector<In> ins = GemmInputs(c, t, &attrs);
    Options o;
    o.dtype = t;
    o.run_cap = own::SimdLevel::kAvx2;
    EXPECT_FALSE(Check("cpu.avx2.gemm", "FusedGemm", ins, attrs, o, c.what)) << c.what;
  }
  const GemmCase c = {"fp32", {8, 64}, 40, false, true, false, "relu", 1.0f};
  Attributes attrs;
  std::vector<In> ins = GemmInputs(c, DType::kF32, &attrs);
  const bool wider = own::CpuSimdLevel() != own::SimdLevel::kAvx2;
  EXPECT_EQ(Check("cpu.avx2.gemm", "FusedGemm", ins, attrs, Options{}, "fp32 on the whole CPU"), !wider)
      << own::SimdLevelName(own::CpuSimdLevel());
}

// A NaN in A makes its row of Y NaN through ReLU, Clip and GELU, as in the reference.
TEST(Avx2Gemm, NanStaysNanThroughReluClipAndGelu) {
  for (const char* act : {"relu", "clip", "gelu"}) {
    const GemmCase c = {"nan", {4, 64}, 40, false, true, false, act, 1.0f};
    Attributes attrs;
    std::vector<In> ins = GemmInputs(c, DType::kF32, &attrs);
    ins[0].v[3] = std::nanf("");  // row 0
    Options o;
    o.run_cap = own::SimdLevel::kAvx2;
    std::optional<std::vector<float>> y = RunKernel(Entry("cpu.avx2.gemm"), "FusedGemm", ins, attrs, {4, 40}, o);
    ASSERT_TRUE(y.has_value()) << act;
    for (int64_t j = 0; j < 40; ++j) {
      EXPECT_TRUE(std::isnan((*y)[j])) << act << " column " << j;
      EXPECT_TRUE(std::isfinite((*y)[40 + j])) << act << " column " << j;
    }
  }
}

// The own AVX2 implicit-GEMM convolution (cpu.avx2.conv) against the reference, in f32 and bf16
// storage, the CPU capped at AVX2 while the plan is packed: every NHWC ungrouped case of ConvCases
// (3x3 and 7x7 with padding, strides 2 and 16, 1x1 with an in-place residual, dilation, every
// activation it takes), and asymmetric pads, a 3x1 kernel, dilation along W alone (one run per
// tap), output channels off its 16-channel panels and pixel counts off its 6-row tiles; weights
// packed at another batch or plain, 1 and 2 threads, run capped and on the whole CPU. It takes the
// session's workspace exactly where it pads or widens the input.
TEST(Avx2Conv, MatchesReference) {
  struct Extra {
    ConvCase c;
    std::vector<int64_t> pads, kernel, dilations;  // override ConvInputs' square ones where set
  };
  std::vector<Extra> cases;
  for (ConvCase c : ConvCases()) {
    if (!c.nhwc || c.group != 1 || c.act == "gelu_tanh") continue;
    // Enough input channels for runs of >= 32 floats per kernel row (fewer go to oneDNN).
    const int64_t run = c.dil == 1 ? c.k : 1;
    c.c = std::max(c.c, (32 + run - 1) / run);
    cases.push_back({c, {}, {}, {}});
  }
  cases.push_back({{"3x3 s1 pads 1,0,2,1 bias relu", true, 20, 37, 11, 13, 3, 1, 0, 1, 1, true, false, "relu"},
                   {1, 0, 2, 1},
                   {},
                   {}});
  cases.push_back({{"3x1 kernel s2 pads 1,0,1,0", true, 33, 5, 10, 7, 3, 2, 0, 1, 1, false, false, "none"},
                   {1, 0, 1, 0},
                   {3, 1},
                   {}});
  cases.push_back(
      {{"3x3 dilation 1x2 pad 2 bias clip", true, 35, 18, 9, 10, 3, 1, 2, 1, 1, true, false, "clip"}, {}, {}, {1, 2}});
  cases.push_back({{"1x1 s2 64 > 40 bias relu", true, 64, 40, 14, 14, 1, 2, 0, 1, 1, true, false, "relu"}, {}, {}, {}});
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (const Extra& x : cases) {
      Attributes attrs;
      std::vector<In> ins = ConvInputs(x.c, 2, t, &attrs);
      if (!x.pads.empty()) attrs.Set("pads", x.pads);
      if (!x.dilations.empty()) attrs.Set("dilations", x.dilations);
      if (!x.kernel.empty()) {
        attrs.Set("kernel_shape", x.kernel);
        ins[1] = Random({x.c.cout, x.c.c, x.kernel[0], x.kernel[1]}, true, 2, t);
      }
      const bool pads = !x.pads.empty() || x.c.pad > 0;
      for (int threads : {1, 2}) {
        for (int64_t pack_batch : {int64_t{-1}, int64_t{0}, int64_t{3}}) {
          for (bool run_capped : {true, false}) {
            Options o = Avx2Run(t, threads, pack_batch, run_capped);
            o.workspace = t == DType::kBF16 || pads;
            o.reason_has = t == DType::kBF16 ? "bf16 storage widened to f32" : "own AVX2 implicit-GEMM convolution";
            EXPECT_TRUE(Check("cpu.avx2.conv", "FusedConv", ins, attrs, o, x.c.what)) << x.c.what;
            if (x.c.residual && o.pack) {
              o.in_place = true;
              EXPECT_TRUE(Check("cpu.avx2.conv", "FusedConv", ins, attrs, o, x.c.what + " in place")) << x.c.what;
            }
          }
        }
      }
    }
  }
}

// What it leaves to oneDNN: NCHW, groups, gelu_tanh, runs of fewer than 32 floats per kernel row
// (the 7x7 stem on 3 channels), f16 storage, and every convolution on a CPU with AVX-512.
TEST(Avx2Conv, Declines) {
  for (const ConvCase& c : ConvCases()) {
    if (c.nhwc && c.group == 1 && c.act != "gelu_tanh" && c.c * (c.dil == 1 ? c.k : 1) >= 32) continue;
    Attributes attrs;
    std::vector<In> ins = ConvInputs(c, 2, DType::kF32, &attrs);
    Options o;
    o.run_cap = own::SimdLevel::kAvx2;
    EXPECT_FALSE(Check("cpu.avx2.conv", "FusedConv", ins, attrs, o, c.what)) << c.what;
  }
  ConvCase c = ConvCases()[0];
  c.c = 16;  // runs of 48 floats
  Attributes attrs;
  std::vector<In> ins = ConvInputs(c, 2, DType::kF16, &attrs);
  Options f16;
  f16.dtype = DType::kF16;
  f16.run_cap = own::SimdLevel::kAvx2;
  EXPECT_FALSE(Check("cpu.avx2.conv", "FusedConv", ins, attrs, f16, "f16"));
  ins = ConvInputs(c, 2, DType::kF32, &attrs);
  const bool wider = own::CpuSimdLevel() != own::SimdLevel::kAvx2;
  EXPECT_EQ(Check("cpu.avx2.conv", "FusedConv", ins, attrs, Options{}, "fp32 on the whole CPU"), !wider)
      << own::SimdLevelName(own::CpuSimdLevel());
}

// bf16 storage computes what f32 storage does on the same (bf16-exact) values and rounds each
// result once: the two runs agree bit for bit after rounding the f32 one.
TEST(Avx2Conv, Bf16RoundsTheF32ResultOnce) {
  const ConvCase c = {"bf16 rounding", true, 12, 21, 9, 9, 3, 2, 1, 1, 1, true, true, "relu"};
  Attributes attrs;
  std::vector<In> ins = ConvInputs(c, 2, DType::kBF16, &attrs);
  ExpectBf16IsF32RoundedOnce("cpu.avx2.conv", "FusedConv", ins, attrs, {2, 5, 5, 21}, c.what);
}

// The own AVX2 Winograd F(4x4, 3x3) and F(2x2, 3x3) (cpu.avx2.winograd4, cpu.avx2.winograd)
// against the reference within the fp32 tolerance (bf16: the bf16 one), the CPU capped at AVX2
// while the plan is packed: the Winograd cases above (partial output tiles, odd sizes, no padding,
// several blocks), and few channels, channels off the 8-lane vectors and the 16-channel panels,
// asymmetric pads, a 7x7 output (16 F(2x2) tiles per image, 4 of F(4x4)'s: it declines) and one
// image of one tile; weights packed at another batch or plain, 1 to 3 threads, run capped and on
// the whole CPU. F(4x4) declines layers with fewer than 16 of its tiles per image.
// The two own AVX2 Winograd entries and the words their reasons start with.
const std::pair<const char*, const char*> kAvx2Winograds[] = {
    {"cpu.avx2.winograd4", "own AVX2 Winograd F(4x4, 3x3)"},
    {"cpu.avx2.winograd", "own AVX2 Winograd F(2x2, 3x3)"},
};

// F(4x4) takes plain weights of layers with 16 or more of its tiles per image (3x3, stride 1).
bool TakenByF4(const ConvCase& c) {
  const int64_t ho = c.h + 2 * c.pad - 2, wo = c.w + 2 * c.pad - 2;
  return ((ho + 3) / 4) * ((wo + 3) / 4) >= 16;
}

// Whether cpu.avx512.winograd (f32 F(2x2)) takes the case: >= 64 channels in and out, >= 16 of its
// tiles per image and fewer than 16 F(4x4) tiles (outputs under 13x13).
bool TakenByAvx512F2(const ConvCase& c) {
  const int64_t ho = c.h + 2 * c.pad - 2, wo = c.w + 2 * c.pad - 2;
  return c.c >= 64 && c.cout >= 64 && ((ho + 1) / 2) * ((wo + 1) / 2) >= 16 && !TakenByF4(c);
}

// The own Winograd kernels' cases (the convolution and its batch).
std::vector<std::pair<ConvCase, int64_t>> OwnWinogradCases() {
  std::vector<std::pair<ConvCase, int64_t>> cases;
  for (const WinogradCase& c : WinogradF2Cases()) cases.push_back({c.conv, c.batch});
  cases.push_back({{"3->20 9x11 bias relu", true, 3, 20, 9, 11, 3, 1, 1, 1, 1, true, false, "relu"}, 2});
  cases.push_back({{"512->512 7x7 bias relu", true, 512, 512, 7, 7, 3, 1, 1, 1, 1, true, false, "relu"}, 1});
  cases.push_back({{"80->72 7x9 no bias: F(2x2) tails", true, 80, 72, 7, 9, 3, 1, 1, 1, 1, false, false, "none"}, 2});
  cases.push_back({{"17->33 2x2 pad 1 no bias", true, 17, 33, 2, 2, 3, 1, 1, 1, 1, false, false, "none"}, 3});
  cases.push_back({{"8->8 3x3 pad 0: one tile", true, 8, 8, 3, 3, 3, 1, 0, 1, 1, true, false, "relu"}, 1});
  cases.push_back({{"12->9 6x6 pad 0: one F(4x4) tile", true, 12, 9, 6, 6, 3, 1, 0, 1, 1, true, false, "none"}, 2});
  cases.push_back({{"64->64 56x56 bias relu", true, 64, 64, 56, 56, 3, 1, 1, 1, 1, true, false, "relu"}, 2});
  // Channel tails at F(4x4)'s 16 tiles per image: masked loads and stores of X, V, M and Y.
  cases.push_back({{"3->20 16x16 pad 1: tails", true, 3, 20, 16, 16, 3, 1, 1, 1, 1, true, false, "relu"}, 2});
  cases.push_back(
      {{"17->33 15x15 pad 1 no bias: tails", true, 17, 33, 15, 15, 3, 1, 1, 1, 1, false, false, "none"}, 1});
  return cases;
}

// Asymmetric pads: the output grows by one row and loses one column.
void CheckAsymmetricPads(const char* id, const Options& o) {
  const ConvCase c = {"64->40 16x18 pads 1,0,2,1 bias relu", true, 64, 40, 16, 18, 3, 1, 0, 1, 1, true, false, "relu"};
  Attributes attrs;
  std::vector<In> ins = ConvInputs(c, 2, DType::kF32, &attrs);
  attrs.Set("pads", std::vector<int64_t>{1, 0, 2, 1});
  EXPECT_TRUE(Check(id, "FusedConv", ins, attrs, o, c.what)) << id;
}

TEST(Avx2Winograd, MatchesReference) {
  const std::vector<std::pair<ConvCase, int64_t>> cases = OwnWinogradCases();
  for (const auto& [id, reason] : kAvx2Winograds) {
    for (DType t : {DType::kF32, DType::kBF16}) {
      for (const auto& [c, batch] : cases) {
        Attributes attrs;
        std::vector<In> ins = ConvInputs(c, batch, t, &attrs);
        // (threads, pack batch (-1: plain weights, 0: the run's), run capped)
        const std::tuple<int, int64_t, bool> runs[] = {
            {1, -1, true}, {2, 0, true}, {2, batch + 3, false}, {3, 0, true}};
        for (const auto& [threads, pack_batch, run_capped] : runs) {
          Options o = Avx2Run(t, threads, pack_batch, run_capped);
          o.workspace = true;  // V and M
          o.reason_has = reason;
          const bool taken = std::string(id) != "cpu.avx2.winograd4" || TakenByF4(c);
          EXPECT_EQ(Check(id, "FusedConv", ins, attrs, o, c.what), taken) << id << " " << c.what;
        }
      }
    }
  }
  Options o;
  o.pack = true;
  o.pack_cap = o.run_cap = own::SimdLevel::kAvx2;
  for (const auto& [id, reason] : kAvx2Winograds) CheckAsymmetricPads(id, o);
}

// What it leaves to the other convolutions: strides, residuals, dilation, groups, NCHW, 5x5, clip,
// and every convolution on a CPU with AVX-512 (its plain weights there: a plan packed for it is
// run wherever it is loaded).
TEST(Avx2Winograd, Declines) {
  Options capped;
  capped.run_cap = own::SimdLevel::kAvx2;
  for (const ConvCase& c : WinogradF2Declined()) {
    Attributes attrs;
    std::vector<In> ins = ConvInputs(c, 2, DType::kF32, &attrs);
    // F(2x2) takes these two; F(4x4) only the first (the 7x7 output has 4 of its tiles per image).
    const bool f2 = c.what == "32 channels" || c.what == "7x7 output: 16 tiles per image";
    EXPECT_EQ(Check("cpu.avx2.winograd", "FusedConv", ins, attrs, capped, c.what), f2) << c.what;
    EXPECT_EQ(Check("cpu.avx2.winograd4", "FusedConv", ins, attrs, capped, c.what), c.what == "32 channels") << c.what;
  }
  const ConvCase& c = WinogradF2Cases()[0].conv;
  Attributes attrs;
  std::vector<In> ins = ConvInputs(c, 1, DType::kF32, &attrs);
  const bool wider = own::CpuSimdLevel() != own::SimdLevel::kAvx2;
  for (const auto& [id, reason] : kAvx2Winograds) {
    EXPECT_EQ(Check(id, "FusedConv", ins, attrs, Options{}, "fp32 on the whole CPU"), !wider)
        << id << " " << own::SimdLevelName(own::CpuSimdLevel());
  }
}

// bf16 storage runs the f32 transforms and products on the widened values and rounds each output
// once: bit for bit the f32 run's output rounded to bf16.
TEST(Avx2Winograd, Bf16RoundsTheF32ResultOnce) {
  const ConvCase c = {"bf16 rounding", true, 40, 24, 17, 16, 3, 1, 1, 1, 1, true, false, "relu"};
  Attributes attrs;
  std::vector<In> ins = ConvInputs(c, 2, DType::kBF16, &attrs);
  for (const auto& [id, reason] : kAvx2Winograds) {
    ExpectBf16IsF32RoundedOnce(id, "FusedConv", ins, attrs, {2, 17, 16, 24}, c.what);
  }
}

// The own AVX-512 Winograd F(4x4) and F(2x2) (cpu.avx512.winograd4, cpu.avx512.winograd) against
// the reference on a CPU with AVX-512, f32: the own Winograd cases (partial output tiles, channels
// off the 16-lane vectors and the 32-column register tiles, several blocks, asymmetric pads),
// weights packed at another batch or plain, 1 to 3 threads; F(4x4) takes the layers with 16 or more
// of its tiles per image, F(2x2) those of >= 64 channels below that with 16 or more of its own
// (7x7 to 12x12 outputs). On a CPU without AVX-512, or capped at AVX2 while the plan is packed,
// they decline every layer.
TEST(Avx512Winograd, MatchesReferenceOrDeclinesWithoutAvx512) {
  const bool avx512 = own::CpuSimdLevel() != own::SimdLevel::kAvx2;
  for (const bool f4 : {true, false}) {
    const char* id = f4 ? "cpu.avx512.winograd4" : "cpu.avx512.winograd";
    for (const auto& [c, batch] : OwnWinogradCases()) {
      Attributes attrs;
      std::vector<In> ins = ConvInputs(c, batch, DType::kF32, &attrs);
      // (threads, pack batch (-1: plain weights, 0: the run's))
      const std::pair<int, int64_t> runs[] = {{1, -1}, {2, 0}, {2, batch + 3}, {3, 0}};
      for (const auto& [threads, pack_batch] : runs) {
        Options o;
        o.threads = threads;
        o.pack = pack_batch >= 0;
        o.pack_batch = std::max<int64_t>(pack_batch, 0);
        o.workspace = true;  // V and M
        o.reason_has = f4 ? "own AVX-512 Winograd F(4x4, 3x3)" : "own AVX-512 Winograd F(2x2, 3x3)";
        EXPECT_EQ(Check(id, "FusedConv", ins, attrs, o, c.what), avx512 && (f4 ? TakenByF4(c) : TakenByAvx512F2(c)))
            << id << ": " << c.what;
      }
      Options capped;
      capped.pack = true;
      capped.pack_cap = capped.run_cap = own::SimdLevel::kAvx2;
      EXPECT_FALSE(Check(id, "FusedConv", ins, attrs, capped, c.what)) << id << ": " << c.what;
    }
  }
  if (avx512) CheckAsymmetricPads("cpu.avx512.winograd4", Options{});
}

// What they leave to the other convolutions: bf16 storage (the bf16 Winograd runs it), strides,
// residuals, dilation, groups, NCHW, 5x5, clip; F(4x4) outputs under 16 of its tiles per image
// (F(2x2) takes the 7x7 ones), F(2x2) those F(4x4) takes (the 32-channel 14x14 case).
TEST(Avx512Winograd, Declines) {
  const bool avx512 = own::CpuSimdLevel() != own::SimdLevel::kAvx2;
  for (const char* id : {"cpu.avx512.winograd4", "cpu.avx512.winograd"}) {
    const bool f4 = std::string(id) == "cpu.avx512.winograd4";
    for (const ConvCase& c : WinogradF2Declined()) {
      Attributes attrs;
      std::vector<In> ins = ConvInputs(c, 2, DType::kF32, &attrs);
      const bool taken = avx512 && c.what == (f4 ? "32 channels" : "7x7 output: 16 tiles per image");
      EXPECT_EQ(Check(id, "FusedConv", ins, attrs, Options{}, c.what), taken) << id << ": " << c.what;
    }
    const ConvCase& c = WinogradF2Cases()[0].conv;
    Attributes attrs;
    std::vector<In> ins = ConvInputs(c, 1, DType::kBF16, &attrs);
    Options bf16;
    bf16.dtype = DType::kBF16;
    EXPECT_FALSE(Check(id, "FusedConv", ins, attrs, bf16, "bf16 storage")) << id;
  }
}

}  // namespace
}  // namespace gcomp::cpu
