// The AVX-512 tiles of cpu.attention (attention.cc), compiled in attention_avx512.cc (fp32, AVX-512)
// and attention_avx512bf16.cc (bf16, AVX512-BF16); called only where CpuSimdLevel() (simd.h)
// allows. Tiles are the ones attention.cc
// keeps per thread:
// - q: [rows x d] fp32 (pre-scaled) or [rows x dq] bf16 (dq = d rounded up to even, zero-padded);
// - kt: per key block, K transposed: [d x kKeyBlock] fp32, or [dq/2 x kKeyBlock x 2] bf16 (the
//   pairs of head elements of one key next to each other, as vdpbf16ps reads them);
// - s: [rows x kKeyBlock] fp32 scores, then fp32 probabilities; p: [rows x kKeyBlock] bf16;
// - vt: per key block, [kKeyBlock x dv] fp32 or [kKeyBlock/2 x dv x 2] bf16 (pairs of keys);
// - o: [rows x dv] fp32 accumulator; m, l: running row max and sum.
// rows is a multiple of kAttentionRows, cols and dv of 16, d and dq of 2 for bf16.
#pragma once

#include <cstdint>

namespace gcomp::cpu::own {

inline constexpr int64_t kAttentionRows = 6;         // micro-kernel rows
inline constexpr int64_t kAttentionQueryBlock = 48;  // multiple of kAttentionRows
inline constexpr int64_t kAttentionKeyBlock = 64;    // multiple of 16 (micro-kernel columns)

namespace avx512 {

// s = q * kt over `cols` keys (fp32 FMA); s rows `stride` apart (kAttentionKeyBlock, or a whole row
// of keys), as for every s and p below. mx holds 16 running maxima per row (rows x 16 floats): each
// is raised to the row's scores in the first `valid` columns, so that the softmax step needs no
// pass of its own to find the row maximum.
void ScoreTileF32(const float* q, const float* kt, float* s, int64_t rows, int64_t cols, int64_t d, int64_t stride,
                  int64_t valid, float* mx);
// s = scale * (q * kt) over `cols` keys (bf16 pairs, fp32 accumulation); mx as above, of the
// scaled scores.
void ScoreTileBf16(const uint16_t* q, const uint16_t* kt, float* s, int64_t rows, int64_t cols, int64_t dq,
                   int64_t stride, float scale, int64_t valid, float* mx);
// The online-softmax step of one key block of `nk` keys (`cols` padded) for all `rows` rows:
// with x = scale * s, m' = max(m, max x), p = exp(x - m') (0 in the padding columns), l = l *
// exp(m - m') + sum p, o *= exp(m - m'); p replaces s. s rows are `stride` elements apart
// (kAttentionKeyBlock, or a whole row of keys). A row with a NaN score gets m = l = NaN. With `mx`
// (the score tiles' running maxima of this block) s is already scaled and its maxima known: one
// pass over it; null (the AMX form's scores), a first pass finds them.
void SoftmaxStep(float* s, float* m, float* l, float* o, int64_t rows, int64_t nk, int64_t cols, int64_t dv,
                 float scale, int64_t stride, const float* mx);
// The same with p rounded to bf16 into `p` (rows `stride` apart), computed to bf16 accuracy
// in base 2: p = 2^(x - m'), the caller's scale (and ScoreTileBf16's) times log2(e), so that m
// is in those units too (attention_avx512bf16.cc: AVX512-BF16 CPUs only).
void SoftmaxStepBf16(float* s, uint16_t* p, float* m, float* l, float* o, int64_t rows, int64_t nk, int64_t cols,
                     int64_t dv, float scale, int64_t stride, const float* mx);
// Interleaves rows a and b (n bf16 each; b null: zeros) into out[2n]: out[2i] = a[i],
// out[2i+1] = b[i]; the bf16 V tile's pair of keys.
void PackValuePairs(const uint16_t* a, const uint16_t* b, uint16_t* out, int64_t n);
// The K tiles' packing, 16 keys at a time: out[w * out_stride + i] = rows[i][w] for 32-bit words
// w < words and keys i < 16 (a null row: zeros), i.e. 16 rows of fp32 K, or of bf16 K pairs,
// transposed into 16 columns of a key block.
void TransposeKeys16(const uint32_t* const rows[16], int64_t words, uint32_t* out, int64_t out_stride);
// o += p * vt over `keys` keys (fp32 FMA; p is s above).
void AccumulateTileF32(const float* p, const float* vt, float* o, int64_t rows, int64_t keys, int64_t dv,
                       int64_t stride);
// y[i] = o[i] * inv rounded to bf16 (nearest even) for i < n: an output row of the bf16 forms
// (attention_avx512bf16.cc: AVX512-BF16 CPUs only).
void StoreScaledBf16(const float* o, float inv, uint16_t* y, int64_t n);
// o += p * vt over `keys` keys (bf16 pairs, fp32 accumulation).
void AccumulateTileBf16(const uint16_t* p, const uint16_t* vt, float* o, int64_t rows, int64_t keys, int64_t dv,
                        int64_t stride);

}  // namespace avx512
}  // namespace gcomp::cpu::own
