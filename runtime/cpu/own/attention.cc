// cpu.attention: flash-style ONNX Attention (Y = softmax(scale * Q K^T) V) for 3-D [B, S, H*D] or
// 4-D [B, H, S, D] inputs, grouped-query heads included; no mask, causal, past K/V or softcap.
//
// Per (batch, head, block of kQueryBlock queries) one thread walks the keys in blocks of
// kKeyBlock: a [queries x keys] score tile (Q pre-scaled, K transposed into the tile), a running
// row max and sum (online softmax, the accumulated output rescaled when the max grows), and the
// P V product accumulated into a [queries x Dv] tile. Only one score tile per thread exists. With
// at most kWholeRowKeys keys (ViT's 197) every form takes the whole row of scores at once: one
// softmax per row, no rescaling (on AVX2 at ViT-B/16's shape 1.8-1.9 -> 1.0-1.3 ms per layer at
// batch 1, 10-11 -> 8-9 ms at batch 8, 2 threads; own_kernel_tests OwnAttention.TimingVitB16).
//
// A thread packs a (batch, kv head)'s K and V once into its tiles (K transposed 16 keys at a time
// by vector shuffles on the AVX-512 forms) and, while it computes that head's query blocks, fetches
// the next head's K and V rows and the next block's queries into L2: in the strided form a head's
// rows lie a whole token row apart (36 KiB at ViT-B/16's batch 8), and packing them straight from
// memory stalled on every row. ViT-B/16 bf16 at batch 8 (2 threads, `gcomp bench --profile`):
// attention 73-80 -> 62-66 ms per run.
//
// The AVX-512 forms' score tiles also raise each row's 16 running maxima as they store the scores
// (scaled, for bf16), so that the softmax step makes one pass over them instead of two: ViT-B/16
// bf16 at batch 8, heads folded (own_kernel_tests OwnAttention.TimingVitB16, 2 threads) 3.57 ->
// 3.26 ms per layer.
//
// Four forms, chosen at creation by the CPU (simd.h) and the storage types:
// - AMX-BF16 and AVX512-BF16, where Q, K and V are all bf16: Q and K^T, P and V multiplied in
//   bf16 with fp32 accumulation, by AMX tiles (tdpbf16ps, 16-row blocks) or by vdpbf16ps (K and
//   V packed in pairs either way, P rounded to bf16, the scale and the softmax statistics in
//   fp32), no conversion of Q, K or V to fp32;
// - AVX-512: fp32 FMA on 16 lanes (other storage types converted to fp32 while packing);
// - AVX2: fp32 FMA on 8 lanes.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cpu/own/attention_amx.h"
#include "runtime/cpu/own/attention_avx512.h"
#include "runtime/cpu/own/common.h"
#include "runtime/cpu/own/simd.h"
#include "runtime/op_geometry.h"

namespace gcomp::cpu::own {
namespace {

constexpr int64_t kRows = kAttentionRows;
constexpr int64_t kQueryBlock = kAttentionQueryBlock;
constexpr int64_t kKeyBlock = kAttentionKeyBlock;

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

enum class Form { kAvx2, kAvx512, kAvx512Bf16, kAmxBf16 };

Form ChooseForm(const runtime::AttentionShape& a) {
  const SimdLevel level = CpuSimdLevel();
  if (level >= SimdLevel::kAvx512Bf16 && a.q_type == DType::kBF16 && a.k_type == DType::kBF16 &&
      a.v_type == DType::kBF16) {
    return level == SimdLevel::kAmxBf16 ? Form::kAmxBf16 : Form::kAvx512Bf16;
  }
  return level >= SimdLevel::kAvx512 ? Form::kAvx512 : Form::kAvx2;
}

// The bf16 forms' query row length: the head size padded to the products' reduction step.
int64_t QueryPad(const runtime::AttentionShape& a, Form form) {
  return RoundUp(a.head, form == Form::kAmxBf16 ? 32 : 2);
}

const char* FormName(Form f) {
  switch (f) {
    case Form::kAvx2:
      return "fp32 AVX2 FMA";
    case Form::kAvx512:
      return "fp32 AVX-512 FMA";
    case Form::kAvx512Bf16:
      return "bf16 AVX512-BF16 dot products, fp32 softmax";
    case Form::kAmxBf16:
      return "bf16 AMX tiles, fp32 softmax";
  }
  return "?";
}

using runtime::AttentionShape;
using runtime::ResolveAttention;

// Per-thread tiles (attention_avx512.h has their layouts): the packed K and V of one (batch, kv
// head) (`packed_for`, -1 for none), fp32 or bf16 (the `16` ones); queries (fp32 pre-scaled, or
// bf16); scores / probabilities, bf16 probabilities, the output accumulator, running row max and
// sum, and a row for converting reduced-precision storage.
struct Tiles {
  std::vector<float> kt, vt, q, s, o, m, l, row, mx;
  std::vector<uint16_t> kt16, vt16, q16, p16;
  int64_t packed_for = -1;
  void Size(const AttentionShape& a, Form form, int64_t width) {
    const int64_t dv = RoundUp(a.v_head, 16), key_blocks = (a.kv_seq + kKeyBlock - 1) / kKeyBlock;
    if (form == Form::kAvx512Bf16 || form == Form::kAmxBf16) {
      const int64_t dq = QueryPad(a, form);
      kt16.assign(key_blocks * dq * kKeyBlock, 0);
      vt16.assign(key_blocks * kKeyBlock * dv, 0);
      q16.assign(kQueryBlock * dq, 0);
      p16.assign(kQueryBlock * width, 0);
    } else {
      kt.assign(key_blocks * a.head * kKeyBlock, 0.0f);
      vt.assign(key_blocks * kKeyBlock * dv, 0.0f);
      q.assign(kQueryBlock * a.head, 0.0f);
    }
    s.assign(kQueryBlock * width, 0.0f);
    o.assign(kQueryBlock * dv, 0.0f);
    m.assign(kQueryBlock, 0.0f);
    mx.assign(kQueryBlock * 16, 0.0f);
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

// s[rows x cols] = q[rows x d] * kt[d x cols] (kt row stride kKeyBlock, s rows `stride` apart); rows % kRows
// == 0, cols % 16 == 0.
void ScoreTile(const float* q, const float* kt, float* s, int64_t rows, int64_t cols, int64_t d, int64_t stride) {
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
        _mm256_storeu_ps(s + (i + r) * stride + j, acc[r][0]);
        _mm256_storeu_ps(s + (i + r) * stride + j + 8, acc[r][1]);
      }
    }
  }
}

// o[rows x dv] += p[rows x keys] (rows `stride` apart) * v[keys x dv]; rows % kRows == 0, dv % 16 == 0.
void AccumulateTile(const float* p, const float* v, float* o, int64_t rows, int64_t keys, int64_t dv, int64_t stride) {
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
          const __m256 pb = _mm256_broadcast_ss(p + (i + r) * stride + j);
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
// transposed into [head size x kKeyBlock] tiles and V into [kKeyBlock x Dv] tiles (zero-padded;
// in pairs for bf16), and reuses them until the head changes.
class AttentionKernel : public ShapedKernel {
 public:
  AttentionKernel(const AttentionShape& a, int threads)
      : a_(a),
        threads_(std::max(1, threads)),
        form_(ChooseForm(a)),
        bf16_(form_ == Form::kAvx512Bf16 || form_ == Form::kAmxBf16),
        whole_rows_(a.kv_seq <= kWholeRowKeys) {
    key_blocks_ = (a_.kv_seq + kKeyBlock - 1) / kKeyBlock;
    tiles_.resize(threads_);
    for (Tiles& t : tiles_) t.Size(a_, form_, whole_rows_ ? key_blocks_ * kKeyBlock : kKeyBlock);
    dv_ = RoundUp(a_.v_head, 16);
    dq_ = QueryPad(a_, form_);
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const auto* q = static_cast<const uint8_t*>(inputs[0]);
    const auto* k = static_cast<const uint8_t*>(inputs[1]);
    const auto* v = static_cast<const uint8_t*>(inputs[2]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    for (Tiles& t : tiles_) t.packed_for = -1;  // new inputs
    const int64_t q_blocks = (a_.q_seq + kQueryBlock - 1) / kQueryBlock;
    const int64_t tasks = a_.batch * a_.q_heads * q_blocks;
#pragma omp parallel num_threads(threads_) if (threads_ > 1)
    {
      if (form_ == Form::kAmxBf16) amx::ConfigureTiles();
#pragma omp for schedule(static)
      for (int64_t t = 0; t < tasks; ++t) {
        const int64_t bh = t / q_blocks, qb = t % q_blocks;
        const int64_t b = bh / a_.q_heads, h = bh % a_.q_heads;
        Tiles& tiles = tiles_[omp_get_thread_num()];
        const int64_t bhk = b * a_.kv_heads + h / (a_.q_heads / a_.kv_heads);
        if (tiles.packed_for != bhk) {
          for (int64_t blk = 0; blk < key_blocks_; ++blk) PackKeyBlock(bhk, blk, tiles, k, v);
          tiles.packed_for = bhk;
        }
        WarmNext(t, tasks, bhk, qb, q_blocks, q, k, v);
        QueryBlock(b, h, qb * kQueryBlock, tiles, q, y);
      }
      if (form_ == Form::kAmxBf16) amx::ReleaseTiles();
    }
    return absl::OkStatus();
  }

 private:
  // Every form takes the scores of up to this many keys at once (a 48 x 512 fp32 tile, 96 KiB).
  static constexpr int64_t kWholeRowKeys = 512;

  // Rows of a packed QKV projection lie a whole token row (or batch of them) apart, beyond the
  // hardware prefetcher's reach: rows are fetched this many ahead.
  static constexpr int64_t kAhead = 6;

  static void Prefetch(const uint8_t* p, int64_t bytes) {
    for (int64_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + off), _MM_HINT_T0);
  }

  static void PrefetchL2(const uint8_t* p, int64_t bytes) {
    for (int64_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + off), _MM_HINT_T1);
  }

  // Called before task `t` (kv head `bhk`, query block `qb` of `q_blocks`) runs its query block:
  // fetches into L2 what comes after it, the Q rows of task t + 1 and slice `qb` of kv head bhk + 1's
  // K and V rows (the next head a thread packs: tasks run in order; a head's query blocks together
  // fetch all of its rows). Packed QKV rows lie a whole token row apart, and the packing loops are
  // too short for prefetches issued there to hide a miss to memory: at ViT-B/16's shape (batch 8,
  // bf16) loads of K rows stalled for most of the packing time.
  void WarmNext(int64_t t, int64_t tasks, int64_t bhk, int64_t qb, int64_t q_blocks, const uint8_t* q, const uint8_t* k,
                const uint8_t* v) const {
    if (t + 1 < tasks) {
      const int64_t bh = (t + 1) / q_blocks, q0 = (t + 1) % q_blocks * kQueryBlock;
      const int64_t b = bh / a_.q_heads, h = bh % a_.q_heads, nq = std::min(kQueryBlock, a_.q_seq - q0);
      const int64_t qs = static_cast<int64_t>(DTypeSize(a_.q_type));
      for (int64_t i = 0; i < nq; ++i)
        PrefetchL2(q + a_.Offset(a_.q, b, h, q0 + i, a_.q_heads, a_.q_seq, a_.head) * qs, a_.head * qs);
    }
    const int64_t next = bhk + 1;
    if (next >= a_.batch * a_.kv_heads) return;
    const int64_t b = next / a_.kv_heads, h = next % a_.kv_heads;
    const int64_t ks = static_cast<int64_t>(DTypeSize(a_.k_type)), vs = static_cast<int64_t>(DTypeSize(a_.v_type));
    for (int64_t j = qb * a_.kv_seq / q_blocks; j < (qb + 1) * a_.kv_seq / q_blocks; ++j) {
      PrefetchL2(k + a_.Offset(a_.k, b, h, j, a_.kv_heads, a_.kv_seq, a_.head) * ks, a_.head * ks);
      PrefetchL2(v + a_.Offset(a_.v, b, h, j, a_.kv_heads, a_.kv_seq, a_.v_head) * vs, a_.v_head * vs);
    }
  }

  // Packs key block `blk` of K and V of (batch, kv head) `bhk` into the tiles; padding stays zero.
  void PackKeyBlock(int64_t bhk, int64_t blk, Tiles& t, const uint8_t* k, const uint8_t* v) const {
    const int64_t d = a_.head, b = bhk / a_.kv_heads, hk = bhk % a_.kv_heads;
    const int64_t k0 = blk * kKeyBlock, nk = std::min(kKeyBlock, a_.kv_seq - k0);
    const size_t ks = DTypeSize(a_.k_type), vs = DTypeSize(a_.v_type);
    auto k_row = [&](int64_t j) { return k + a_.Offset(a_.k, b, hk, k0 + j, a_.kv_heads, a_.kv_seq, d) * ks; };
    auto v_row = [&](int64_t j) { return v + a_.Offset(a_.v, b, hk, k0 + j, a_.kv_heads, a_.kv_seq, a_.v_head) * vs; };
    auto prefetch = [&](int64_t j) {
      if (j >= nk) return;
      Prefetch(k_row(j), d * static_cast<int64_t>(ks));
      Prefetch(v_row(j), a_.v_head * static_cast<int64_t>(vs));
    };
    // K transposed 16 keys at a time by vector shuffles (AVX-512 forms; fp32 K, or bf16 K of an
    // even head size, whose pairs are whole 32-bit words): 16 rows loaded at once, where the
    // element-wise loop below waits on one row after another.
    const bool vector_k = form_ != Form::kAvx2 && (bf16_ ? d % 2 == 0 : a_.k_type == DType::kF32);
    for (int64_t j = 0; j < kAhead; ++j) prefetch(j);
    if (vector_k) {
      uint32_t* kt = bf16_ ? reinterpret_cast<uint32_t*>(t.kt16.data() + blk * dq_ * kKeyBlock)
                           : reinterpret_cast<uint32_t*>(t.kt.data() + blk * d * kKeyBlock);
      for (int64_t j0 = 0; j0 < nk; j0 += 16) {
        const uint32_t* rows[16];
        for (int64_t i = 0; i < 16; ++i) {
          rows[i] = j0 + i < nk ? reinterpret_cast<const uint32_t*>(k_row(j0 + i)) : nullptr;
          prefetch(j0 + 16 + i);  // the next group's K rows, and V rows for the packing below
        }
        avx512::TransposeKeys16(rows, bf16_ ? d / 2 : d, kt + j0, kKeyBlock);
      }
    }
    if (bf16_) {
      // K^T as pairs of head elements per key, V as pairs of keys per head element.
      uint16_t* kt = t.kt16.data() + blk * dq_ * kKeyBlock;
      uint16_t* vt = t.vt16.data() + blk * kKeyBlock * dv_;
      if (!vector_k) {
        for (int64_t j = 0; j < nk; ++j) {
          prefetch(j + kAhead);
          // Pair t of key j is the 32-bit word (t, j); an odd head size leaves the last pair's
          // second half 0.
          const auto* kr = reinterpret_cast<const uint16_t*>(k_row(j));
          uint16_t* kj = kt + j * 2;
          for (int64_t e = 0; e + 1 < d; e += 2) std::memcpy(kj + e * kKeyBlock, kr + e, 4);
          if (d % 2) kj[(d - 1) * kKeyBlock] = kr[d - 1];
        }
      }
      for (int64_t j = 0; j < nk; j += 2) {
        avx512::PackValuePairs(reinterpret_cast<const uint16_t*>(v_row(j)),
                               j + 1 < nk ? reinterpret_cast<const uint16_t*>(v_row(j + 1)) : nullptr,
                               vt + (j / 2) * dv_ * 2, a_.v_head);
      }
      return;
    }
    float* kt = t.kt.data() + blk * d * kKeyBlock;
    float* vt = t.vt.data() + blk * kKeyBlock * dv_;
    for (int64_t j = 0; j < nk; ++j) {
      prefetch(j + kAhead);
      if (!vector_k) {
        const float* kr = RowF32(a_.k_type, k_row(j), t.row.data(), d);
        for (int64_t e = 0; e < d; ++e) kt[e * kKeyBlock + j] = kr[e];
      }
      const float* vr = RowF32(a_.v_type, v_row(j), t.row.data(), a_.v_head);
      std::copy(vr, vr + a_.v_head, vt + j * dv_);
    }
  }

  // Loads queries [q0, q0 + nq) of (b, h) into the query tile (bf16 as stored, else fp32
  // pre-scaled), zero rows up to `rows`.
  void LoadQueries(int64_t b, int64_t h, int64_t q0, int64_t nq, int64_t rows, Tiles& t, const uint8_t* q) const {
    const int64_t d = a_.head;
    const size_t qs = DTypeSize(a_.q_type);
    auto q_row = [&](int64_t i) { return q + a_.Offset(a_.q, b, h, q0 + i, a_.q_heads, a_.q_seq, d) * qs; };
    for (int64_t i = 0; i < kAhead && i < nq; ++i) Prefetch(q_row(i), d * static_cast<int64_t>(qs));
    for (int64_t i = 0; i < nq; ++i) {
      if (i + kAhead < nq) Prefetch(q_row(i + kAhead), d * static_cast<int64_t>(qs));
      if (bf16_) {
        std::memcpy(t.q16.data() + i * dq_, q_row(i), d * sizeof(uint16_t));  // the pad column stays 0
        continue;
      }
      const float* src = RowF32(a_.q_type, q_row(i), t.row.data(), d);
      float* dst = t.q.data() + i * d;
      for (int64_t e = 0; e < d; ++e) dst[e] = src[e] * a_.scale;
    }
    if (bf16_) {
      std::fill(t.q16.begin() + nq * dq_, t.q16.begin() + rows * dq_, uint16_t{0});
    } else {
      std::fill(t.q.begin() + nq * d, t.q.begin() + rows * d, 0.0f);
    }
  }

  // The AVX2 form's softmax step over rows [0, nq) of `nk` keys (`cols` padded; Q is pre-scaled),
  // s rows `stride` apart; a row with a NaN score gets m = l = NaN (a NaN output) and zero
  // probabilities.
  void SoftmaxStepAvx2(Tiles& t, int64_t nq, int64_t nk, int64_t cols, int64_t stride) const {
    for (int64_t i = 0; i < nq; ++i) {
      float* s = t.s.data() + i * stride;
      // The row's max and whether it holds a NaN, 8 keys at a time (max_ps keeps a NaN only where
      // it is the second operand, so the unordered compare finds them).
      __m256 vmax = _mm256_set1_ps(-INFINITY), unordered = _mm256_setzero_ps();
      int64_t j = 0;
      for (; j + 8 <= nk; j += 8) {
        const __m256 x = _mm256_loadu_ps(s + j);
        vmax = _mm256_max_ps(vmax, x);
        unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
      }
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, vmax);
      float mx = t.m[i];
      bool nan = std::isnan(mx) || _mm256_movemask_ps(unordered) != 0;
      for (float v : lanes) mx = std::max(mx, v);
      for (; j < nk; ++j) {
        nan |= std::isnan(s[j]);
        mx = std::max(mx, s[j]);
      }
      if (nan) {
        t.m[i] = t.l[i] = NAN;
        std::fill(s, s + cols, 0.0f);
        continue;
      }
      const float corr = t.m[i] == -INFINITY ? 0.0f : std::exp(t.m[i] - mx);
      t.m[i] = mx;
      const float sum = ExpShiftedInPlace(s, nk, mx);
      for (j = nk; j < cols; ++j) s[j] = 0.0f;
      t.l[i] = t.l[i] * corr + sum;
      if (corr != 1.0f) {
        float* o = t.o.data() + i * dv_;
        for (int64_t e = 0; e < dv_; ++e) o[e] *= corr;
      }
    }
  }

  // The bf16 forms' softmax works in base 2 (2^x is cheaper than e^x): their scores are scaled by
  // scale * log2(e).
  float Base2Scale() const { return static_cast<float>(a_.scale * 1.44269504088896340736); }

  // Whether the score tiles keep the rows' running maxima (Tiles::mx) for the softmax step.
  bool TileMaxima() const { return form_ == Form::kAvx512 || form_ == Form::kAvx512Bf16; }

  // The scores of key block `blk` (`cols` keys, padded; `nk` real) into the score tile from column
  // `col`, rows `stride` apart (kKeyBlock, or a whole row of keys).
  void Scores(Tiles& t, int64_t blk, int64_t rows, int64_t nk, int64_t cols, int64_t col, int64_t stride) const {
    float* s = t.s.data() + col;
    switch (form_) {
      case Form::kAmxBf16:
        amx::ScoreTile(t.q16.data(), t.kt16.data() + blk * dq_ * kKeyBlock, s, rows, cols, dq_, stride);
        break;
      case Form::kAvx512Bf16:
        avx512::ScoreTileBf16(t.q16.data(), t.kt16.data() + blk * dq_ * kKeyBlock, s, rows, cols, dq_, stride,
                              Base2Scale(), nk, t.mx.data());
        break;
      case Form::kAvx512:
        avx512::ScoreTileF32(t.q.data(), t.kt.data() + blk * a_.head * kKeyBlock, s, rows, cols, a_.head, stride,
                             nk, t.mx.data());
        break;
      case Form::kAvx2:
        ScoreTile(t.q.data(), t.kt.data() + blk * a_.head * kKeyBlock, s, rows, cols, a_.head, stride);
        break;
    }
  }

  // The online-softmax step over `nk` keys (`cols` padded) of the score tile.
  void Softmax(Tiles& t, int64_t rows, int64_t nq, int64_t nk, int64_t cols, int64_t stride) const {
    switch (form_) {
      case Form::kAmxBf16:
      case Form::kAvx512Bf16:
        avx512::SoftmaxStepBf16(t.s.data(), t.p16.data(), t.m.data(), t.l.data(), t.o.data(), rows, nk, cols, dv_,
                                Base2Scale(), stride, TileMaxima() ? t.mx.data() : nullptr);
        break;
      case Form::kAvx512:
        avx512::SoftmaxStep(t.s.data(), t.m.data(), t.l.data(), t.o.data(), rows, nk, cols, dv_, 1.0f, stride,
                            t.mx.data());
        break;
      case Form::kAvx2:
        SoftmaxStepAvx2(t, nq, nk, cols, stride);
        break;
    }
  }

  // o += the probabilities from column `col` (`cols` keys) times V of key block `blk`.
  void Accumulate(Tiles& t, int64_t blk, int64_t rows, int64_t cols, int64_t col, int64_t stride) const {
    switch (form_) {
      case Form::kAmxBf16:
        amx::AccumulateTile(t.p16.data() + col, t.vt16.data() + blk * kKeyBlock * dv_, t.o.data(), rows, cols, dv_,
                            stride);
        break;
      case Form::kAvx512Bf16:
        avx512::AccumulateTileBf16(t.p16.data() + col, t.vt16.data() + blk * kKeyBlock * dv_, t.o.data(), rows,
                                   cols, dv_, stride);
        break;
      case Form::kAvx512:
        avx512::AccumulateTileF32(t.s.data() + col, t.vt.data() + blk * kKeyBlock * dv_, t.o.data(), rows, cols,
                                  dv_, stride);
        break;
      case Form::kAvx2:
        AccumulateTile(t.s.data() + col, t.vt.data() + blk * kKeyBlock * dv_, t.o.data(), rows, cols, dv_, stride);
        break;
    }
  }

  void QueryBlock(int64_t b, int64_t h, int64_t q0, Tiles& t, const uint8_t* q, uint8_t* y) const {
    const int64_t dv = dv_;
    const bool amx = form_ == Form::kAmxBf16;
    const int64_t nq = std::min(kQueryBlock, a_.q_seq - q0), rows = RoundUp(nq, amx ? 16 : kRows);
    LoadQueries(b, h, q0, nq, rows, t, q);
    std::fill(t.o.begin(), t.o.begin() + rows * dv, 0.0f);
    std::fill(t.m.begin(), t.m.end(), -INFINITY);
    std::fill(t.l.begin(), t.l.end(), 0.0f);
    const int64_t pad = amx ? 32 : 16;  // key columns: AMX multiplies 32 keys per step
    if (whole_rows_) {
      // All key blocks' scores side by side, one softmax over the whole row, then P V: no
      // rescaling of the accumulator between blocks.
      const int64_t width = key_blocks_ * kKeyBlock;
      int64_t cols = 0;
      if (TileMaxima()) std::fill(t.mx.begin(), t.mx.begin() + rows * 16, -INFINITY);
      for (int64_t blk = 0; blk < key_blocks_; ++blk) {
        const int64_t nk = std::min(kKeyBlock, a_.kv_seq - blk * kKeyBlock);
        cols = blk * kKeyBlock + RoundUp(nk, pad);
        Scores(t, blk, rows, nk, RoundUp(nk, pad), blk * kKeyBlock, width);
      }
      Softmax(t, rows, nq, a_.kv_seq, cols, width);
      if (amx) {
        for (int64_t blk = 0; blk < key_blocks_; ++blk) {
          const int64_t nk = std::min(kKeyBlock, a_.kv_seq - blk * kKeyBlock);
          Accumulate(t, blk, rows, RoundUp(nk, pad), blk * kKeyBlock, width);
        }
      } else {
        // The vector forms' V tiles lie one after another, key after key (pairs of keys for
        // bf16), as the probabilities do: one product over all keys, the accumulator loaded and
        // stored once instead of once per key block. It stops at the last key (pair), not at the
        // score tile's padding to 16 columns (ViT's 197 keys: 197 or 198 against 208).
        Accumulate(t, 0, rows, bf16_ ? RoundUp(a_.kv_seq, 2) : a_.kv_seq, 0, width);
      }
    } else {
      for (int64_t blk = 0; blk < key_blocks_; ++blk) {
        const int64_t nk = std::min(kKeyBlock, a_.kv_seq - blk * kKeyBlock), cols = RoundUp(nk, pad);
        if (TileMaxima()) std::fill(t.mx.begin(), t.mx.begin() + rows * 16, -INFINITY);
        Scores(t, blk, rows, nk, cols, 0, kKeyBlock);
        Softmax(t, rows, nq, nk, cols, kKeyBlock);
        Accumulate(t, blk, rows, cols, 0, kKeyBlock);
      }
    }
    const size_t ys = DTypeSize(a_.y_type);
    for (int64_t i = 0; i < nq; ++i) {
      float* o = t.o.data() + i * dv;
      const float inv = 1.0f / t.l[i];
      uint8_t* dst = y + a_.Offset(a_.y, b, h, q0 + i, a_.q_heads, a_.q_seq, a_.v_head) * ys;
      if (a_.y_type == DType::kF32) {
        float* yf = reinterpret_cast<float*>(dst);
        for (int64_t e = 0; e < a_.v_head; ++e) yf[e] = o[e] * inv;
      } else if (bf16_ && a_.y_type == DType::kBF16) {
        avx512::StoreScaledBf16(o, inv, reinterpret_cast<uint16_t*>(dst), a_.v_head);
      } else {
        for (int64_t e = 0; e < a_.v_head; ++e) o[e] *= inv;
        FromF32(a_.y_type, o, dst, a_.v_head);
      }
    }
  }

  AttentionShape a_;
  int threads_;
  Form form_;
  bool bf16_;        // the bf16 tiles (AMX-BF16 and AVX512-BF16 forms)
  bool whole_rows_;  // at most kWholeRowKeys keys: the scores of all keys at once
  int64_t key_blocks_ = 0, dv_ = 16, dq_ = 2;
  std::vector<Tiles> tiles_;
};

}  // namespace

CpuEntry AttentionEntry() {
  CpuEntry e;
  e.id = "cpu.attention";
  e.ops = {"Attention"};
  e.params = runtime::AttentionParamSpecs();
  e.description =
      "flash-style attention: Q K^T tiles with online softmax; bf16 products on AMX tiles or AVX512-BF16, or fp32 "
      "FMA (AVX-512, AVX2); no mask/causal/past";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why_not;
    std::optional<AttentionShape> a = ResolveAttention(spec, &why_not);
    if (!a) return std::nullopt;
    return absl::StrCat("own flash attention: ", a->q_heads, " heads of ", a->head, ", ", a->q_seq, "x", a->kv_seq,
                        a->q_heads != a->kv_heads ? " (grouped-query)" : "", ", ", FormName(ChooseForm(*a)),
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
