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
#include "runtime/op_geometry.h"

namespace gcomp::cpu::own {
namespace {

constexpr int64_t kRows = 6;         // micro-kernel rows
constexpr int64_t kQueryBlock = 48;  // multiple of kRows
constexpr int64_t kKeyBlock = 64;    // multiple of 16 (micro-kernel columns)

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

using runtime::AttentionShape;
using runtime::ResolveAttention;

// Per-thread tiles: the packed K and V of one (batch, kv head) (`packed_for`, -1 for none),
// pre-scaled queries, scores / probabilities, the output accumulator, running row max and sum,
// and a row for converting reduced-precision storage.
struct Tiles {
  std::vector<float> kt, vt, q, s, o, m, l, row;
  int64_t packed_for = -1;
  void Size(const AttentionShape& a) {
    const int64_t dv = RoundUp(a.v_head, 16), key_blocks = (a.kv_seq + kKeyBlock - 1) / kKeyBlock;
    kt.assign(key_blocks * a.head * kKeyBlock, 0.0f);
    vt.assign(key_blocks * kKeyBlock * dv, 0.0f);
    q.assign(kQueryBlock * a.head, 0.0f);
    s.assign(kQueryBlock * kKeyBlock, 0.0f);
    o.assign(kQueryBlock * dv, 0.0f);
    m.assign(kQueryBlock, 0.0f);
    l.assign(kQueryBlock, 0.0f);
    row.assign(std::max(a.head, a.v_head), 0.0f);
  }
};

// Row `n` of storage type `t` at `src` in fp32: the row itself for f32, else converted into `tmp`.
const float* RowF32(DType t, const uint8_t* src, float* tmp, int64_t n) {
  if (t == DType::kF32) return reinterpret_cast<const float*>(src);
  ToF32(t, src, tmp, n);
  return tmp;
}

// s[rows x cols] = q[rows x d] * kt[d x cols] (kt row stride kKeyBlock); rows % kRows == 0, cols % 16 == 0.
void ScoreTile(const float* q, const float* kt, float* s, int64_t rows, int64_t cols, int64_t d) {
  for (int64_t i = 0; i < rows; i += kRows) {
    for (int64_t j = 0; j < cols; j += 16) {
      __m256 acc[kRows][2];
      for (auto& r : acc) r[0] = r[1] = _mm256_setzero_ps();
      for (int64_t e = 0; e < d; ++e) {
        const __m256 k0 = _mm256_loadu_ps(kt + e * kKeyBlock + j);
        const __m256 k1 = _mm256_loadu_ps(kt + e * kKeyBlock + j + 8);
        for (int r = 0; r < kRows; ++r) {
          const __m256 qb = _mm256_broadcast_ss(q + (i + r) * d + e);
          acc[r][0] = _mm256_fmadd_ps(qb, k0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(qb, k1, acc[r][1]);
        }
      }
      for (int r = 0; r < kRows; ++r) {
        _mm256_storeu_ps(s + (i + r) * kKeyBlock + j, acc[r][0]);
        _mm256_storeu_ps(s + (i + r) * kKeyBlock + j + 8, acc[r][1]);
      }
    }
  }
}

// o[rows x dv] += p[rows x keys] (row stride kKeyBlock) * v[keys x dv]; rows % kRows == 0, dv % 16 == 0.
void AccumulateTile(const float* p, const float* v, float* o, int64_t rows, int64_t keys, int64_t dv) {
  for (int64_t i = 0; i < rows; i += kRows) {
    for (int64_t e = 0; e < dv; e += 16) {
      __m256 acc[kRows][2];
      for (int r = 0; r < kRows; ++r) {
        acc[r][0] = _mm256_loadu_ps(o + (i + r) * dv + e);
        acc[r][1] = _mm256_loadu_ps(o + (i + r) * dv + e + 8);
      }
      for (int64_t j = 0; j < keys; ++j) {
        const __m256 v0 = _mm256_loadu_ps(v + j * dv + e);
        const __m256 v1 = _mm256_loadu_ps(v + j * dv + e + 8);
        for (int r = 0; r < kRows; ++r) {
          const __m256 pb = _mm256_broadcast_ss(p + (i + r) * kKeyBlock + j);
          acc[r][0] = _mm256_fmadd_ps(pb, v0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(pb, v1, acc[r][1]);
        }
      }
      for (int r = 0; r < kRows; ++r) {
        _mm256_storeu_ps(o + (i + r) * dv + e, acc[r][0]);
        _mm256_storeu_ps(o + (i + r) * dv + e + 8, acc[r][1]);
      }
    }
  }
}

// Query blocks run in parallel, in order (static schedule), so that a thread's consecutive blocks
// mostly read the same (batch, kv head): it packs that head's K and V once into its tiles, K
// transposed into [head size x kKeyBlock] tiles and V into [kKeyBlock x Dv] tiles (fp32,
// zero-padded), and reuses them until the head changes.
class AttentionKernel : public ShapedKernel {
 public:
  AttentionKernel(const AttentionShape& a, int threads) : a_(a), threads_(std::max(1, threads)) {
    tiles_.resize(threads_);
    for (Tiles& t : tiles_) t.Size(a_);
    key_blocks_ = (a_.kv_seq + kKeyBlock - 1) / kKeyBlock;
    dv_ = RoundUp(a_.v_head, 16);
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const auto* q = static_cast<const uint8_t*>(inputs[0]);
    const auto* k = static_cast<const uint8_t*>(inputs[1]);
    const auto* v = static_cast<const uint8_t*>(inputs[2]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    for (Tiles& t : tiles_) t.packed_for = -1;  // new inputs
    const int64_t q_blocks = (a_.q_seq + kQueryBlock - 1) / kQueryBlock;
    const int64_t tasks = a_.batch * a_.q_heads * q_blocks;
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t bh = t / q_blocks, qb = t % q_blocks;
      const int64_t b = bh / a_.q_heads, h = bh % a_.q_heads;
      Tiles& tiles = tiles_[omp_get_thread_num()];
      const int64_t bhk = b * a_.kv_heads + h / (a_.q_heads / a_.kv_heads);
      if (tiles.packed_for != bhk) {
        for (int64_t blk = 0; blk < key_blocks_; ++blk) PackKeyBlock(bhk, blk, tiles, k, v);
        tiles.packed_for = bhk;
      }
      QueryBlock(b, h, qb * kQueryBlock, tiles, q, y);
    }
    return absl::OkStatus();
  }

 private:

  // Packs key block `blk` of K and V of (batch, kv head) `bhk` into the tiles; padding stays zero.
  void PackKeyBlock(int64_t bhk, int64_t blk, Tiles& t, const uint8_t* k, const uint8_t* v) const {
    const int64_t d = a_.head, b = bhk / a_.kv_heads, hk = bhk % a_.kv_heads;
    const int64_t k0 = blk * kKeyBlock, nk = std::min(kKeyBlock, a_.kv_seq - k0);
    const size_t ks = DTypeSize(a_.k_type), vs = DTypeSize(a_.v_type);
    float* kt = t.kt.data() + blk * d * kKeyBlock;
    float* vt = t.vt.data() + blk * kKeyBlock * dv_;
    // Rows of a packed QKV projection lie a whole token row (or batch of them) apart, beyond the
    // hardware prefetcher's reach: fetch a few rows ahead.
    constexpr int64_t kAhead = 6;
    auto prefetch = [&](int64_t j) {
      if (j >= nk) return;
      const uint8_t* kp = k + a_.Offset(a_.k, b, hk, k0 + j, a_.kv_heads, a_.kv_seq, d) * ks;
      const uint8_t* vp = v + a_.Offset(a_.v, b, hk, k0 + j, a_.kv_heads, a_.kv_seq, a_.v_head) * vs;
      for (int64_t off = 0; off < d * static_cast<int64_t>(ks); off += 64) _mm_prefetch(reinterpret_cast<const char*>(kp + off), _MM_HINT_T0);
      for (int64_t off = 0; off < a_.v_head * static_cast<int64_t>(vs); off += 64) _mm_prefetch(reinterpret_cast<const char*>(vp + off), _MM_HINT_T0);
    };
    for (int64_t j = 0; j < kAhead; ++j) prefetch(j);
    for (int64_t j = 0; j < nk; ++j) {
      prefetch(j + kAhead);
      const float* kr = RowF32(a_.k_type, k + a_.Offset(a_.k, b, hk, k0 + j, a_.kv_heads, a_.kv_seq, d) * ks, t.row.data(), d);
      for (int64_t e = 0; e < d; ++e) kt[e * kKeyBlock + j] = kr[e];
      const float* vr =
          RowF32(a_.v_type, v + a_.Offset(a_.v, b, hk, k0 + j, a_.kv_heads, a_.kv_seq, a_.v_head) * vs, t.row.data(), a_.v_head);
      std::copy(vr, vr + a_.v_head, vt + j * dv_);
    }
  }

  void QueryBlock(int64_t b, int64_t h, int64_t q0, Tiles& t, const uint8_t* q, uint8_t* y) const {
    const int64_t d = a_.head, dv = dv_;
    const int64_t nq = std::min(kQueryBlock, a_.q_seq - q0), rows = RoundUp(nq, kRows);
    const size_t qs = DTypeSize(a_.q_type);
    constexpr int64_t kAhead = 6;  // as for K and V: strided rows, fetched ahead
    auto prefetch = [&](int64_t i) {
      if (i >= nq) return;
      const uint8_t* p = q + a_.Offset(a_.q, b, h, q0 + i, a_.q_heads, a_.q_seq, d) * qs;
      for (int64_t off = 0; off < d * static_cast<int64_t>(qs); off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + off), _MM_HINT_T0);
    };
    for (int64_t i = 0; i < kAhead; ++i) prefetch(i);
    for (int64_t i = 0; i < nq; ++i) {
      prefetch(i + kAhead);
      const float* src = RowF32(a_.q_type, q + a_.Offset(a_.q, b, h, q0 + i, a_.q_heads, a_.q_seq, d) * qs, t.row.data(), d);
      float* dst = t.q.data() + i * d;
      for (int64_t e = 0; e < d; ++e) dst[e] = src[e] * a_.scale;
    }
    std::fill(t.q.begin() + nq * d, t.q.begin() + rows * d, 0.0f);
    std::fill(t.o.begin(), t.o.begin() + rows * dv, 0.0f);
    std::fill(t.m.begin(), t.m.end(), -INFINITY);
    std::fill(t.l.begin(), t.l.end(), 0.0f);
    for (int64_t blk = 0; blk < key_blocks_; ++blk) {
      const int64_t nk = std::min(kKeyBlock, a_.kv_seq - blk * kKeyBlock), cols = RoundUp(nk, 16);
      ScoreTile(t.q.data(), t.kt.data() + blk * d * kKeyBlock, t.s.data(), rows, cols, d);
      for (int64_t i = 0; i < nq; ++i) {
        float* s = t.s.data() + i * kKeyBlock;
        float mx = t.m[i];
#pragma omp simd reduction(max : mx)
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
      AccumulateTile(t.s.data(), t.vt.data() + blk * kKeyBlock * dv, t.o.data(), rows, cols, dv);
    }
    const size_t ys = DTypeSize(a_.y_type);
    for (int64_t i = 0; i < nq; ++i) {
      float* o = t.o.data() + i * dv;
      const float inv = 1.0f / t.l[i];
      uint8_t* dst = y + a_.Offset(a_.y, b, h, q0 + i, a_.q_heads, a_.q_seq, a_.v_head) * ys;
      if (a_.y_type == DType::kF32) {
        float* yf = reinterpret_cast<float*>(dst);
        for (int64_t e = 0; e < a_.v_head; ++e) yf[e] = o[e] * inv;
      } else {
        for (int64_t e = 0; e < a_.v_head; ++e) o[e] *= inv;
        FromF32(a_.y_type, o, dst, a_.v_head);
      }
    }
  }

  AttentionShape a_;
  int threads_;
  int64_t key_blocks_ = 0, dv_ = 16;
  std::vector<Tiles> tiles_;
};

}  // namespace

CpuEntry AttentionEntry() {
  CpuEntry e;
  e.id = "cpu.attention";
  e.ops = {"Attention"};
  e.params = runtime::AttentionParamSpecs();
  e.description = "flash-style attention: Q K^T tiles with online softmax, fp32 math, no mask/causal/past";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why_not;
    std::optional<AttentionShape> a = ResolveAttention(spec, &why_not);
    if (!a) return std::nullopt;
    return absl::StrCat("own flash attention: ", a->q_heads, " heads of ", a->head, ", ", a->q_seq, "x", a->kv_seq,
                        a->q_heads != a->kv_heads ? " (grouped-query)" : "",
                        spec.params->Has("qkv_layout") ? runtime::DescribeStridedAttention(*a) : "");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::string why_not;
    std::optional<AttentionShape> a = ResolveAttention(spec, &why_not);
    if (!a) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", spec.name, "' (Attention): cpu.attention does not run this step: ", why_not));
    }
    return std::unique_ptr<ShapedKernel>(new AttentionKernel(*a, spec.threads));
  };
  return e;
}

}  // namespace gcomp::cpu::own
