// cpu.attention: flash-style ONNX Attention (Y = softmax(scale * Q K^T) V) for 3-D [B, S, H*D] or
// 4-D [B, H, S, D] inputs, grouped-query heads included; no mask, causal, past K/V or softcap.
//
// Per (batch, head, block of kQueryBlock queries) one thread walks the keys in blocks of
// kKeyBlock: a [queries x keys] score tile (Q pre-scaled, K transposed into the tile), a running
// row max and sum (online softmax, the accumulated output rescaled when the max grows), and the
// P V product accumulated into a [queries x Dv] tile. Only one score tile per thread exists.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cpu/own/common.h"

namespace gcomp::cpu::own {
namespace {

constexpr int64_t kQueryBlock = 64;  // multiple of 4 (micro-kernel rows)
constexpr int64_t kKeyBlock = 64;    // multiple of 16 (micro-kernel columns)

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

struct AttentionShape {
  bool packed = false;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_seq = 0, kv_seq = 0, head = 0, v_head = 0;
  float scale = 1.0f;
  DType q_type = DType::kF32, k_type = DType::kF32, v_type = DType::kF32, y_type = DType::kF32;
};

// The attention the kernel runs, or why not.
std::optional<AttentionShape> Resolve(const KernelSpec& spec, std::string* why_not) {
  const Attributes& a = *spec.attrs;
  auto fail = [&](const char* why) -> std::optional<AttentionShape> {
    *why_not = why;
    return std::nullopt;
  };
  if (spec.inputs.size() < 3 || spec.outputs.empty() || !spec.outputs[0].present) return fail("no Y");
  for (size_t i = 3; i < spec.inputs.size(); ++i) {
    if (spec.inputs[i].present) return fail("mask or past K/V");
  }
  for (size_t i = 1; i < spec.outputs.size(); ++i) {
    if (spec.outputs[i].present) return fail("present K/V or qk outputs");
  }
  for (int i : spec.in_place) {
    if (i >= 0) return fail("in place");
  }
  if (a.GetInt("is_causal", 0) != 0) return fail("causal");
  if (a.GetFloat("softcap", 0.0f) != 0.0f) return fail("softcap");
  const Operand &q = spec.inputs[0], &k = spec.inputs[1], &v = spec.inputs[2], &y = spec.outputs[0];
  for (const Operand* o : {&q, &k, &v, &y}) {
    if (!o->present || !IsStorageFloat(o->dtype) || o->dims.size() != q.dims.size()) return fail("dtype or rank");
  }
  AttentionShape s;
  s.q_type = q.dtype;
  s.k_type = k.dtype;
  s.v_type = v.dtype;
  s.y_type = y.dtype;
  if (q.dims.size() == 3) {
    s.packed = true;
    s.q_heads = a.GetInt("q_num_heads", 0);
    s.kv_heads = a.GetInt("kv_num_heads", 0);
    if (s.q_heads < 1 || s.kv_heads < 1) return fail("heads");
    s.batch = q.dims[0];
    s.q_seq = q.dims[1];
    s.kv_seq = k.dims[1];
    if (q.dims[2] % s.q_heads || k.dims[2] % s.kv_heads || v.dims[2] % s.kv_heads) return fail("hidden size");
    s.head = q.dims[2] / s.q_heads;
    if (k.dims[2] / s.kv_heads != s.head) return fail("head size");
    s.v_head = v.dims[2] / s.kv_heads;
    if (v.dims[1] != s.kv_seq || y.dims != std::vector<int64_t>{s.batch, s.q_seq, s.q_heads * s.v_head}) {
      return fail("shapes");
    }
  } else if (q.dims.size() == 4) {
    s.batch = q.dims[0];
    s.q_heads = q.dims[1];
    s.q_seq = q.dims[2];
    s.head = q.dims[3];
    s.kv_heads = k.dims[1];
    s.kv_seq = k.dims[2];
    s.v_head = v.dims[3];
    if (k.dims[3] != s.head || v.dims[1] != s.kv_heads || v.dims[2] != s.kv_seq ||
        y.dims != std::vector<int64_t>{s.batch, s.q_heads, s.q_seq, s.v_head}) {
      return fail("shapes");
    }
  } else {
    return fail("rank");
  }
  if (k.dims[0] != s.batch || v.dims[0] != s.batch) return fail("batch");
  if (s.kv_heads < 1 || s.q_heads % s.kv_heads != 0) return fail("heads");
  if (s.head < 1 || s.v_head < 1 || s.kv_seq < 1) return fail("empty");
  s.scale = a.Has("scale") ? a.GetFloat("scale", 1.0f)
                           : static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head)));
  return s;
}

// Per-thread tiles.
struct Tiles {
  std::vector<float> q, kt, v, s, o, m, l, row;
  void Size(const AttentionShape& a) {
    const int64_t dv = RoundUp(a.v_head, 16);
    q.assign(kQueryBlock * a.head, 0.0f);
    kt.assign(a.head * kKeyBlock, 0.0f);
    v.assign(kKeyBlock * dv, 0.0f);
    s.assign(kQueryBlock * kKeyBlock, 0.0f);
    o.assign(kQueryBlock * dv, 0.0f);
    m.assign(kQueryBlock, 0.0f);
    l.assign(kQueryBlock, 0.0f);
    row.assign(std::max(a.head, a.v_head), 0.0f);
  }
};

// s[rows x cols] = q[rows x d] * kt[d x cols] (kt row stride kKeyBlock); rows % 4 == 0, cols % 16 == 0.
void ScoreTile(const float* q, const float* kt, float* s, int64_t rows, int64_t cols, int64_t d) {
  for (int64_t i = 0; i < rows; i += 4) {
    for (int64_t j = 0; j < cols; j += 16) {
      __m256 acc[4][2];
      for (auto& r : acc) r[0] = r[1] = _mm256_setzero_ps();
      for (int64_t e = 0; e < d; ++e) {
        const __m256 k0 = _mm256_loadu_ps(kt + e * kKeyBlock + j);
        const __m256 k1 = _mm256_loadu_ps(kt + e * kKeyBlock + j + 8);
        for (int r = 0; r < 4; ++r) {
          const __m256 qb = _mm256_broadcast_ss(q + (i + r) * d + e);
          acc[r][0] = _mm256_fmadd_ps(qb, k0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(qb, k1, acc[r][1]);
        }
      }
      for (int r = 0; r < 4; ++r) {
        _mm256_storeu_ps(s + (i + r) * kKeyBlock + j, acc[r][0]);
        _mm256_storeu_ps(s + (i + r) * kKeyBlock + j + 8, acc[r][1]);
      }
    }
  }
}

// o[rows x dv] += p[rows x keys] (row stride kKeyBlock) * v[keys x dv]; rows % 4 == 0, dv % 16 == 0.
void AccumulateTile(const float* p, const float* v, float* o, int64_t rows, int64_t keys, int64_t dv) {
  for (int64_t i = 0; i < rows; i += 4) {
    for (int64_t e = 0; e < dv; e += 16) {
      __m256 acc[4][2];
      for (int r = 0; r < 4; ++r) {
        acc[r][0] = _mm256_loadu_ps(o + (i + r) * dv + e);
        acc[r][1] = _mm256_loadu_ps(o + (i + r) * dv + e + 8);
      }
      for (int64_t j = 0; j < keys; ++j) {
        const __m256 v0 = _mm256_loadu_ps(v + j * dv + e);
        const __m256 v1 = _mm256_loadu_ps(v + j * dv + e + 8);
        for (int r = 0; r < 4; ++r) {
          const __m256 pb = _mm256_broadcast_ss(p + (i + r) * kKeyBlock + j);
          acc[r][0] = _mm256_fmadd_ps(pb, v0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(pb, v1, acc[r][1]);
        }
      }
      for (int r = 0; r < 4; ++r) {
        _mm256_storeu_ps(o + (i + r) * dv + e, acc[r][0]);
        _mm256_storeu_ps(o + (i + r) * dv + e + 8, acc[r][1]);
      }
    }
  }
}

class AttentionKernel : public Kernel {
 public:
  AttentionKernel(const AttentionShape& a, int threads) : a_(a), threads_(std::max(1, threads)) {
    tiles_.resize(threads_);
    for (Tiles& t : tiles_) t.Size(a_);
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const auto* q = static_cast<const uint8_t*>(inputs[0]);
    const auto* k = static_cast<const uint8_t*>(inputs[1]);
    const auto* v = static_cast<const uint8_t*>(inputs[2]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    const int64_t q_blocks = (a_.q_seq + kQueryBlock - 1) / kQueryBlock;
    const int64_t tasks = a_.batch * a_.q_heads * q_blocks;
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1) if (threads_ > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int tid = omp_get_thread_num();
      const int64_t bh = t / q_blocks, qb = t % q_blocks;
      Block(bh / a_.q_heads, bh % a_.q_heads, qb * kQueryBlock, tiles_[tid], q, k, v, y);
    }
    return absl::OkStatus();
  }

 private:
  // Element offset of row (b, h, s) of a head-structured tensor with `heads` heads of `size`.
  int64_t Row(int64_t b, int64_t h, int64_t s, int64_t heads, int64_t seq, int64_t size) const {
    return a_.packed ? ((b * seq + s) * heads + h) * size : ((b * heads + h) * seq + s) * size;
  }

  void Block(int64_t b, int64_t h, int64_t q0, Tiles& t, const uint8_t* q, const uint8_t* k, const uint8_t* v,
             uint8_t* y) const {
    const int64_t d = a_.head, dv = RoundUp(a_.v_head, 16);
    const int64_t hk = h / (a_.q_heads / a_.kv_heads);
    const int64_t nq = std::min(kQueryBlock, a_.q_seq - q0), rows = RoundUp(nq, 4);
    const size_t qs = DTypeSize(a_.q_type), ks = DTypeSize(a_.k_type), vs = DTypeSize(a_.v_type);
    std::fill(t.q.begin(), t.q.end(), 0.0f);
    for (int64_t i = 0; i < nq; ++i) {
      float* dst = t.q.data() + i * d;
      LoadF32(a_.q_type, q + Row(b, h, q0 + i, a_.q_heads, a_.q_seq, d) * qs, dst, d);
      for (int64_t e = 0; e < d; ++e) dst[e] *= a_.scale;
    }
    std::fill(t.o.begin(), t.o.begin() + rows * dv, 0.0f);
    std::fill(t.m.begin(), t.m.end(), -INFINITY);
    std::fill(t.l.begin(), t.l.end(), 0.0f);
    std::fill(t.v.begin(), t.v.end(), 0.0f);
    for (int64_t k0 = 0; k0 < a_.kv_seq; k0 += kKeyBlock) {
      const int64_t nk = std::min(kKeyBlock, a_.kv_seq - k0), cols = RoundUp(nk, 16);
      for (int64_t j = 0; j < nk; ++j) {
        LoadF32(a_.k_type, k + Row(b, hk, k0 + j, a_.kv_heads, a_.kv_seq, d) * ks, t.row.data(), d);
        for (int64_t e = 0; e < d; ++e) t.kt[e * kKeyBlock + j] = t.row[e];
        LoadF32(a_.v_type, v + Row(b, hk, k0 + j, a_.kv_heads, a_.kv_seq, a_.v_head) * vs, t.v.data() + j * dv,
                a_.v_head);
      }
      for (int64_t j = nk; j < cols; ++j) {
        for (int64_t e = 0; e < d; ++e) t.kt[e * kKeyBlock + j] = 0.0f;
        std::fill(t.v.data() + j * dv, t.v.data() + (j + 1) * dv, 0.0f);
      }
      ScoreTile(t.q.data(), t.kt.data(), t.s.data(), rows, cols, d);
      for (int64_t i = 0; i < nq; ++i) {
        float* s = t.s.data() + i * kKeyBlock;
        float mx = t.m[i];
        for (int64_t j = 0; j < nk; ++j) mx = std::max(mx, s[j]);
        const float corr = t.m[i] == -INFINITY ? 0.0f : std::exp(t.m[i] - mx);
        t.m[i] = mx;
        const float sum = ExpShiftedInPlace(s, nk, mx);
        for (int64_t j = nk; j < cols; ++j) s[j] = 0.0f;
        t.l[i] = t.l[i] * corr + sum;
        if (corr != 1.0f) {
          float* o = t.o.data() + i * dv;
          for (int64_t e = 0; e < dv; ++e) o[e] *= corr;
        }
      }
      AccumulateTile(t.s.data(), t.v.data(), t.o.data(), rows, cols, dv);
    }
    const size_t ys = DTypeSize(a_.y_type);
    for (int64_t i = 0; i < nq; ++i) {
      float* o = t.o.data() + i * dv;
      const float inv = 1.0f / t.l[i];
      for (int64_t e = 0; e < a_.v_head; ++e) o[e] *= inv;
      StoreF32(a_.y_type, o, y + Row(b, h, q0 + i, a_.q_heads, a_.q_seq, a_.v_head) * ys, a_.v_head);
    }
  }

  AttentionShape a_;
  int threads_;
  std::vector<Tiles> tiles_;
};

}  // namespace

KernelEntry AttentionEntry() {
  KernelEntry e;
  e.id = "cpu.attention";
  e.op = "Attention";
  e.description = "flash-style attention: Q K^T tiles with online softmax, fp32 math, no mask/causal/past";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why_not;
    std::optional<AttentionShape> a = Resolve(spec, &why_not);
    if (!a) return std::nullopt;
    return absl::StrCat("own flash attention: ", a->q_heads, " heads of ", a->head, ", ", a->q_seq, "x", a->kv_seq,
                        a->q_heads != a->kv_heads ? " (grouped-query)" : "");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    std::string why_not;
    std::optional<AttentionShape> a = Resolve(spec, &why_not);
    if (!a) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", spec.name, "' (Attention): cpu.attention does not run this step: ", why_not));
    }
    return std::unique_ptr<Kernel>(new AttentionKernel(*a, spec.threads));
  };
  return e;
}

}  // namespace gcomp::cpu::own
