// OpenBLAS 0.3 kernels: FusedGemm / MatMul (constant B) as cblas_sgemm over output tiles, MatMul of
// two run-time operands as one sgemm per batch, and NHWC FusedConv as
// im2col in row blocks (a block of output pixels' patches gathered into a small per-thread buffer,
// one sgemm per block and group). Each tile's epilogue runs right after its sgemm, while the tile
// is in cache: the residual enters through beta = 1 (Z copied into the tile first, or already
// there when Y overwrites Z in place), then bias and activation row by row.
//
// Threads: tiles are spread over an OpenMP team of spec.threads (a num_threads clause, so only
// these regions are affected) and each tile's sgemm runs single-threaded. That needs OpenBLAS's
// own pool set to one thread, and openblas_set_num_threads is process-wide: it also limits any
// other OpenBLAS call in the process (there is none outside these kernels).
// Storage types: f32 directly; f16/bf16 activations are converted to fp32 per tile (LoadF32) and
// the result rounded once on store (StoreF32); weights are packed as fp32.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/cpu/blas/backends.h"
#include "runtime/cpu/blas/fused_params.h"
#include "runtime/op_geometry.h"

extern "C" {
#include <cblas.h>
}

namespace gcomp::cpu::blas {
namespace {

constexpr char kGemmFormat[] = "openblas:f32:kn";          // B as [K, N] fp32
constexpr char kConvFormat[] = "openblas:f32:g.khkwc.co";  // W as [group][kh*kw*Cin/g][Cout/g] fp32

// Called by every create (cheap): something else in the process may have raised it since.
void SingleThreadedBlas() { openblas_set_num_threads(1); }

absl::Status Declined(const KernelSpec& spec, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "' (", spec.op, "): OpenBLAS kernel: ", why));
}

// Plain B ([K,N], or [N,K] with transB) -> [K,N] fp32.
absl::StatusOr<std::vector<float>> GemmWeights(const KernelSpec& spec, const GemmParams& p) {
  ASSIGN_OR_RETURN(std::vector<float> b, ConstantF32(spec, 1));
  if (!p.trans_b) return b;
  std::vector<float> t(b.size());
  for (int64_t j = 0; j < p.n; ++j)
    for (int64_t k = 0; k < p.k; ++k) t[k * p.n + j] = b[j * p.k + k];
  return t;
}

// Plain W [Cout, Cin/g, kh, kw] -> [g][(ky, kx, ci)][co] fp32.
absl::StatusOr<std::vector<float>> ConvWeights(const KernelSpec& spec, const ConvParams& p) {
  ASSIGN_OR_RETURN(std::vector<float> w, ConstantF32(spec, 1));
  const int64_t cig = p.c / p.group, cog = p.cout / p.group, kdim = p.kh * p.kw * cig;
  std::vector<float> t(w.size());
  for (int64_t g = 0; g < p.group; ++g)
    for (int64_t co = 0; co < cog; ++co)
      for (int64_t ci = 0; ci < cig; ++ci)
        for (int64_t ky = 0; ky < p.kh; ++ky)
          for (int64_t kx = 0; kx < p.kw; ++kx) {
            const float v = w[(((g * cog + co) * cig + ci) * p.kh + ky) * p.kw + kx];
            t[(g * kdim + (ky * p.kw + kx) * cig + ci) * cog + co] = v;
          }
  return t;
}

// The packed weights from the operand: either ours (format `packed_format`) or plain ("").
absl::StatusOr<std::vector<float>> ReadWeights(const KernelSpec& spec, const char* packed_format,
                                               const std::function<absl::StatusOr<std::vector<float>>()>& plain) {
  const Operand& w = spec.inputs[1];
  if (w.format.empty()) return plain();
  const size_t n = static_cast<size_t>(NumElements(w.dims));
  if (w.format != packed_format || w.constant_bytes != n * sizeof(float)) {
    return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': weights format '", w.format, "' (",
                                                   w.constant_bytes, " bytes), expected '", packed_format, "' (",
                                                   n * sizeof(float), " bytes)"));
  }
  std::vector<float> v(n);
  std::memcpy(v.data(), w.constant, n * sizeof(float));
  return v;
}

absl::StatusOr<Packed> PackFloats(const KernelSpec& spec, size_t index, const char* format,
                                  const std::function<absl::StatusOr<std::vector<float>>()>& make) {
  Packed p;
  if (index != 1) {  // bias: stored plain
    const Operand& o = spec.inputs[index];
    p.bytes.assign(o.constant, o.constant + o.constant_bytes);
    return p;
  }
  ASSIGN_OR_RETURN(std::vector<float> v, make());
  p.bytes.resize(v.size() * sizeof(float));
  std::memcpy(p.bytes.data(), v.data(), p.bytes.size());
  p.format = format;
  return p;
}

// Per-thread scratch, grown on demand.
struct Scratch {
  std::vector<float> a, c;
};

// One output tile: rows [r0, r0+mb) x columns [c0, c0+nb) of Y (row stride ldy elements).
// `a` holds the tile's fp32 A rows (stride lda), `b` the fp32 weights for these columns (stride
// ldb). Computes the sgemm and the epilogue; Y/Z are in `dtype`.
void GemmTile(const Epilogue& epi, DType dtype, float alpha, const float* bias, const float* a, int64_t lda,
              const float* b, int64_t ldb, int64_t kdim, const void* z, void* y, int64_t ldy, int64_t r0, int64_t mb,
              int64_t c0, int64_t nb, std::vector<float>& cbuf) {
  const size_t es = DTypeSize(dtype);
  float* c;
  int64_t ldc;
  if (dtype == DType::kF32) {
    c = static_cast<float*>(y) + r0 * ldy + c0;
    ldc = ldy;
  } else {
    cbuf.resize(static_cast<size_t>(mb * nb));
    c = cbuf.data();
    ldc = nb;
  }
  float beta = 0.0f;
  if (z) {
    beta = 1.0f;
    if (dtype != DType::kF32 || z != y) {
      for (int64_t i = 0; i < mb; ++i) {
        LoadF32(dtype, static_cast<const uint8_t*>(z) + ((r0 + i) * ldy + c0) * es, c + i * ldc, nb);
      }
    }
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(mb), static_cast<int>(nb),
              static_cast<int>(kdim), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
  for (int64_t i = 0; i < mb; ++i) {
    float* row = c + i * ldc;
    BiasActRow(epi, bias ? bias + c0 : nullptr, row, nb);
    if (dtype != DType::kF32) StoreF32(dtype, row, static_cast<uint8_t*>(y) + ((r0 + i) * ldy + c0) * es, nb);
  }
}

class OpenBlasGemmKernel : public ShapedKernel {
 public:
  absl::Status Init(const KernelSpec& spec, const GemmParams& p) {
    p_ = p;
    threads_ = std::max(1, spec.threads);
    ASSIGN_OR_RETURN(b_, ReadWeights(spec, kGemmFormat, [&] { return GemmWeights(spec, p); }));
    if (p.epi.has_bias) {
      ASSIGN_OR_RETURN(bias_, ConstantF32(spec, kBiasInput));
    }
    // Row blocks of up to 128 rows; columns split when there are fewer row blocks than threads.
    mb_ = std::min<int64_t>(p.m, 128);
    const int64_t row_blocks = (p.m + mb_ - 1) / mb_;
    nb_ = p.n;
    if (p.n > 1024) nb_ = 1024;
    if (row_blocks < threads_)
      nb_ = std::min(nb_, std::max<int64_t>(16, ((p.n + threads_ - 1) / threads_ + 15) / 16 * 16));
    scratch_.resize(static_cast<size_t>(threads_));
    SingleThreadedBlas();
    return absl::OkStatus();
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const int64_t row_blocks = (p_.m + mb_ - 1) / mb_, col_blocks = (p_.n + nb_ - 1) / nb_;
    const int64_t tiles = row_blocks * col_blocks;
    const void* a = inputs[0];
    const void* z = p_.epi.has_residual ? inputs[kResidualInput] : nullptr;
    void* y = outputs[0];
    const float* bias = bias_.empty() ? nullptr : bias_.data();
#pragma omp parallel for schedule(dynamic) num_threads(threads_)
    for (int64_t t = 0; t < tiles; ++t) {
      Scratch& s = scratch_[static_cast<size_t>(omp_get_thread_num())];
      const int64_t r0 = (t / col_blocks) * mb_, c0 = (t % col_blocks) * nb_;
      const int64_t mb = std::min(mb_, p_.m - r0), nb = std::min(nb_, p_.n - c0);
      const float* ap;
      if (p_.dtype == DType::kF32) {
        ap = static_cast<const float*>(a) + r0 * p_.k;
      } else {
        s.a.resize(static_cast<size_t>(mb * p_.k));
        LoadF32(p_.dtype, static_cast<const uint8_t*>(a) + r0 * p_.k * DTypeSize(p_.dtype), s.a.data(), mb * p_.k);
        ap = s.a.data();
      }
      GemmTile(p_.epi, p_.dtype, p_.alpha, bias, ap, p_.k, b_.data() + c0, p_.n, p_.k, z, y, p_.n, r0, mb, c0, nb, s.c);
    }
    return absl::OkStatus();
  }

 private:
  GemmParams p_;
  int threads_ = 1;
  int64_t mb_ = 1, nb_ = 1;
  std::vector<float> b_, bias_;
  std::vector<Scratch> scratch_;
};

class OpenBlasConvKernel : public ShapedKernel {
 public:
  absl::Status Init(const KernelSpec& spec, const ConvParams& p) {
    p_ = p;
    threads_ = std::max(1, spec.threads);
    ASSIGN_OR_RETURN(w_, ReadWeights(spec, kConvFormat, [&] { return ConvWeights(spec, p); }));
    if (p.epi.has_bias) {
      ASSIGN_OR_RETURN(bias_, ConstantF32(spec, kBiasInput));
    }
    cig_ = p.c / p.group;
    cog_ = p.cout / p.group;
    kdim_ = p.kh * p.kw * cig_;
    pixels_ = p.n * p.ho * p.wo;
    direct_ = p.dtype == DType::kF32 && p.kh == 1 && p.kw == 1 && p.sh == 1 && p.sw == 1 && p.pt == 0 && p.pl == 0 &&
              p.pb == 0 && p.pr == 0 && p.group == 1;
    // Patch blocks of 64..256 pixels, about 512 KiB of fp32 patches.
    pb_ = std::clamp<int64_t>((int64_t{1} << 17) / std::max<int64_t>(kdim_, 1), 64, 256);
    pb_ = std::min(pb_, pixels_);
    const int64_t row_blocks = (pixels_ + pb_ - 1) / pb_;
    nb_ = cog_;
    if (row_blocks < threads_ && p.group == 1) {
      nb_ = std::min(nb_, std::max<int64_t>(16, ((cog_ + threads_ - 1) / threads_ + 15) / 16 * 16));
    }
    scratch_.resize(static_cast<size_t>(threads_));
    SingleThreadedBlas();
    return absl::OkStatus();
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const int64_t row_blocks = (pixels_ + pb_ - 1) / pb_, col_blocks = (cog_ + nb_ - 1) / nb_;
    const int64_t tiles = row_blocks * col_blocks;
    const auto* x = static_cast<const uint8_t*>(inputs[0]);
    const void* z = p_.epi.has_residual ? inputs[kResidualInput] : nullptr;
    void* y = outputs[0];
    const float* bias = bias_.empty() ? nullptr : bias_.data();
    const size_t es = DTypeSize(p_.dtype);
#pragma omp parallel for schedule(dynamic) num_threads(threads_)
    for (int64_t t = 0; t < tiles; ++t) {
      Scratch& s = scratch_[static_cast<size_t>(omp_get_thread_num())];
      const int64_t r0 = (t / col_blocks) * pb_, c0 = (t % col_blocks) * nb_;
      const int64_t mb = std::min(pb_, pixels_ - r0), nb = std::min(nb_, cog_ - c0);
      for (int64_t g = 0; g < p_.group; ++g) {
        const float* ap;
        if (direct_) {
          ap = reinterpret_cast<const float*>(x) + r0 * p_.c;
        } else {
          s.a.resize(static_cast<size_t>(mb * kdim_));
          Gather(x, es, g, r0, mb, s.a.data());
          ap = s.a.data();
        }
        GemmTile(p_.epi, p_.dtype, 1.0f, bias, ap, kdim_, w_.data() + g * kdim_ * cog_ + c0, cog_, kdim_, z, y, p_.cout,
                 r0, mb, g * cog_ + c0, nb, s.c);
      }
    }
    return absl::OkStatus();
  }

 private:
  // Patches of output pixels [r0, r0+mb), group g, as fp32 rows of (ky, kx, ci).
  void Gather(const uint8_t* x, size_t es, int64_t g, int64_t r0, int64_t mb, float* dst) const {
    for (int64_t i = 0; i < mb; ++i) {
      const int64_t pix = r0 + i;
      const int64_t n = pix / (p_.ho * p_.wo), rem = pix % (p_.ho * p_.wo);
      const int64_t oy = rem / p_.wo, ox = rem % p_.wo;
      float* row = dst + i * kdim_;
      for (int64_t ky = 0; ky < p_.kh; ++ky) {
        const int64_t iy = oy * p_.sh - p_.pt + ky * p_.dh;
        for (int64_t kx = 0; kx < p_.kw; ++kx) {
          const int64_t ix = ox * p_.sw - p_.pl + kx * p_.dw;
          float* out = row + (ky * p_.kw + kx) * cig_;
          if (iy < 0 || iy >= p_.h || ix < 0 || ix >= p_.w) {
            std::fill(out, out + cig_, 0.0f);
          } else {
            LoadF32(p_.dtype, x + (((n * p_.h + iy) * p_.w + ix) * p_.c + g * cig_) * es, out, cig_);
          }
        }
      }
    }
  }

  ConvParams p_;
  int threads_ = 1;
  int64_t cig_ = 0, cog_ = 0, kdim_ = 0, pixels_ = 0, pb_ = 1, nb_ = 1;
  bool direct_ = false;
  std::vector<float> w_, bias_;
  std::vector<Scratch> scratch_;
};

CpuEntry GemmLikeEntry(const std::string& id, const std::string& op) {
  CpuEntry e;
  e.id = id;
  e.ops = {op};
  e.params = GemmParamSpecs();
  e.in_place = {{0, 3}};
  e.description = "OpenBLAS sgemm over output tiles, epilogue per tile while in cache; f16/bf16 converted per tile";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<GemmParams> p = ParseGemm(spec, &why);
    if (!p) return std::nullopt;
    return absl::StrCat("OpenBLAS sgemm tiles (", DescribeGemm(*p), ")");
  };
  e.pack = [](const KernelSpec& spec, size_t index) -> absl::StatusOr<Packed> {
    std::string why;
    std::optional<GemmParams> p = ParseGemm(spec, &why);
    if (!p) return Declined(spec, why);
    return PackFloats(spec, index, kGemmFormat, [&] { return GemmWeights(spec, *p); });
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::string why;
    std::optional<GemmParams> p = ParseGemm(spec, &why);
    if (!p) return Declined(spec, why);
    auto k = std::make_unique<OpenBlasGemmKernel>();
    RETURN_IF_ERROR(k->Init(spec, *p));
    return std::unique_ptr<ShapedKernel>(std::move(k));
  };
  return e;
}

// ---- MatMul of two run-time operands -----------------------------------------------------------
//
// A [..., M, K] x B [..., K, N] with NumPy batch broadcasting (a 1-D A or B is a row or column),
// one cblas_sgemm per batch; f16/bf16 operands go through fp32 copies.

struct BatchedMatMulPlan {
  DType a_type = DType::kF32, b_type = DType::kF32, y_type = DType::kF32;
  int64_t m = 0, k = 0, n = 0, batches = 0;
  std::vector<int64_t> a_batch, b_batch;  // element offsets of each batch's A and B (broadcast resolved)
};

using runtime::IsStorageFloat;
using runtime::PresentAndNotInPlace;

std::optional<BatchedMatMulPlan> ResolveBatchedMatMul(const KernelSpec& spec) {
  if (spec.op != "MatMul" || spec.inputs.size() != 2 || spec.outputs.size() != 1 || !PresentAndNotInPlace(spec)) {
    return std::nullopt;
  }
  const Operand &a = spec.inputs[0], &b = spec.inputs[1], &y = spec.outputs[0];
  if (!a.present || !b.present || !IsStorageFloat(a.dtype) || !IsStorageFloat(b.dtype) || y.dtype != a.dtype ||
      a.dims.empty() || b.dims.empty() || b.is_constant()) {
    return std::nullopt;  // a constant B is the packed GEMM entries' case
  }
  std::vector<int64_t> ad = a.dims, bd = b.dims;
  const bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
  if (a_vec) ad.insert(ad.begin(), 1);
  if (b_vec) bd.push_back(1);
  BatchedMatMulPlan p;
  p.a_type = a.dtype;
  p.b_type = b.dtype;
  p.y_type = y.dtype;
  p.m = ad[ad.size() - 2];
  p.k = ad.back();
  p.n = bd.back();
  constexpr int64_t kIntMax = 2147483647;  // cblas takes int dims
  if (bd[bd.size() - 2] != p.k || p.m < 0 || p.k < 0 || p.n < 0 || p.m > kIntMax || p.k > kIntMax || p.n > kIntMax) {
    return std::nullopt;
  }
  const size_t r = std::max(ad.size(), bd.size());
  std::vector<int64_t> batch(r - 2);
  std::vector<int64_t> as(r - 2, 0), bs(r - 2, 0);
  int64_t astride = p.m * p.k, bstride = p.k * p.n;
  for (size_t i = r - 2; i-- > 0;) {
    const size_t ai = i + ad.size() - r, bi = i + bd.size() - r;  // right-aligned (wraps when absent)
    const int64_t da = i + ad.size() >= r ? ad[ai] : 1, db = i + bd.size() >= r ? bd[bi] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    batch[i] = std::max(da, db);
    as[i] = da == 1 ? 0 : astride;
    bs[i] = db == 1 ? 0 : bstride;
    astride *= da;
    bstride *= db;
  }
  std::vector<int64_t> want = batch;
  if (!a_vec) want.push_back(p.m);
  if (!b_vec) want.push_back(p.n);
  if (y.dims != want) return std::nullopt;
  p.batches = NumElements(batch);
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t t = 0; t < p.batches; ++t) {
    int64_t oa = 0, ob = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      oa += idx[i] * as[i];
      ob += idx[i] * bs[i];
    }
    p.a_batch.push_back(oa);
    p.b_batch.push_back(ob);
    for (size_t i = batch.size(); i-- > 0;) {
      if (++idx[i] < batch[i]) break;
      idx[i] = 0;
    }
  }
  return p;
}

class BatchedMatMulKernel : public ShapedKernel {
 public:
  BatchedMatMulKernel(BatchedMatMulPlan p, int threads) : p_(std::move(p)), threads_(std::max(1, threads)) {
    // Row blocks: with fewer batches than threads, each batch's rows are split over the team.
    blocks_ = std::max<int64_t>(1, std::min<int64_t>(p_.m, (threads_ + p_.batches - 1) / std::max<int64_t>(1, p_.batches)));
    rows_ = (p_.m + blocks_ - 1) / blocks_;
    if (p_.a_type != DType::kF32 || p_.b_type != DType::kF32 || p_.y_type != DType::kF32) {
      scratch_.resize(static_cast<size_t>(threads_));
      for (std::vector<float>& s : scratch_) s.resize(static_cast<size_t>(rows_ * p_.k + p_.k * p_.n + rows_ * p_.n));
    }
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const auto* a = static_cast<const uint8_t*>(inputs[0]);
    const auto* b = static_cast<const uint8_t*>(inputs[1]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    const size_t as = DTypeSize(p_.a_type), bs = DTypeSize(p_.b_type), ys = DTypeSize(p_.y_type);
    const int64_t k = p_.k, n = p_.n, kn = k * n, mn = p_.m * n, tasks = p_.batches * blocks_;
    // Tasks over the kernel's OpenMP team, each sgemm single-threaded (see the file comment).
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1 && tasks > 1)
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t t = task / blocks_, r0 = (task % blocks_) * rows_, rows = std::min(rows_, p_.m - r0);
      if (rows <= 0) continue;
      const int64_t a_off = p_.a_batch[t] + r0 * k, y_off = t * mn + r0 * n;
      const float* pa = reinterpret_cast<const float*>(a + a_off * as);
      const float* pb = reinterpret_cast<const float*>(b + p_.b_batch[t] * bs);
      float* py = reinterpret_cast<float*>(y + y_off * ys);
      float* buf = scratch_.empty() ? nullptr : scratch_[omp_get_thread_num()].data();
      if (p_.a_type != DType::kF32) {
        LoadF32(p_.a_type, a + a_off * as, buf, rows * k);
        pa = buf;
      }
      if (p_.b_type != DType::kF32) {
        LoadF32(p_.b_type, b + p_.b_batch[t] * bs, buf + rows_ * k, kn);
        pb = buf + rows_ * k;
      }
      if (p_.y_type != DType::kF32) py = buf + rows_ * k + kn;
      if (k == 0) {
        std::fill(py, py + rows * n, 0.0f);
      } else if (n > 0) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(n),
                    static_cast<int>(k), 1.0f, pa, static_cast<int>(k), pb, static_cast<int>(n), 0.0f, py,
                    static_cast<int>(n));
      }
      if (p_.y_type != DType::kF32) StoreF32(p_.y_type, py, y + y_off * ys, rows * n);
    }
    return absl::OkStatus();
  }

 private:
  BatchedMatMulPlan p_;
  int threads_;
  int64_t blocks_ = 1, rows_ = 0;
  std::vector<std::vector<float>> scratch_;  // per thread: A rows, B, Y rows in fp32 (reduced storage)
};

}  // namespace

CpuEntry OpenBlasBatchedMatMulEntry() {
  CpuEntry e;
  e.id = "cpu.openblas.batched_matmul";
  e.ops = {"MatMul"};
  e.params = {};
  e.description = "MatMul of two run-time operands (NumPy batch broadcasting): one OpenBLAS sgemm per batch";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<BatchedMatMulPlan> p = ResolveBatchedMatMul(spec);
    if (!p) return std::nullopt;
    return absl::StrCat("OpenBLAS sgemm per batch: ", p->batches, " x [", p->m, ", ", p->k, "] x [", p->k, ", ", p->n,
                        "]");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<BatchedMatMulPlan> p = ResolveBatchedMatMul(spec);
    if (!p) return Declined(spec, "not a MatMul of two run-time float operands");
    SingleThreadedBlas();
    return std::unique_ptr<ShapedKernel>(new BatchedMatMulKernel(std::move(*p), spec.threads));
  };
  return e;
}

CpuEntry OpenBlasConvEntry() {
  CpuEntry e;
  e.id = "cpu.openblas.conv";
  e.ops = {"FusedConv"};
  e.params = ConvParamSpecs();
  e.in_place = {{0, 3}};
  e.description =
      "NHWC conv as im2col in row blocks + OpenBLAS sgemm, epilogue per block; f16/bf16 converted in the gather";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<ConvParams> p = ParseConv(spec, &why);
    if (!p || !p->nhwc) return std::nullopt;
    return absl::StrCat("OpenBLAS im2col row blocks + sgemm (", DescribeConv(*p), ")");
  };
  e.pack = [](const KernelSpec& spec, size_t index) -> absl::StatusOr<Packed> {
    std::string why;
    std::optional<ConvParams> p = ParseConv(spec, &why);
    if (!p) return Declined(spec, why);
    return PackFloats(spec, index, kConvFormat, [&] { return ConvWeights(spec, *p); });
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::string why;
    std::optional<ConvParams> p = ParseConv(spec, &why);
    if (!p || !p->nhwc) return Declined(spec, p ? "NCHW layout" : why);
    auto k = std::make_unique<OpenBlasConvKernel>();
    RETURN_IF_ERROR(k->Init(spec, *p));
    return std::unique_ptr<ShapedKernel>(std::move(k));
  };
  return e;
}

CpuEntry OpenBlasGemmEntry() { return GemmLikeEntry("cpu.openblas.gemm", "FusedGemm"); }
CpuEntry OpenBlasMatMulEntry() { return GemmLikeEntry("cpu.openblas.matmul", "MatMul"); }

}  // namespace gcomp::cpu::blas
