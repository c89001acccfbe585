// oneDNN 2.6 kernels: FusedConv as convolution_forward, FusedGemm / MatMul as matmul, the epilogue
// as the bias argument plus post-ops (sum, or for bf16 binary add, for the residual; eltwise for
// the activation, but for a bf16 matmul's erf GELU, an own pass over its f32 result: GeluPass).
//
// Weights: `pack` creates the primitive for the plan's maximum batch, reorders W (or B) into the
// layout the primitive prefers (format_tag::any) and records that memory descriptor in the
// format string ("onednn2.6:" + the hex bytes of dnnl_memory_desc_t, a plain C struct in 2.x).
// `create` rebuilds the primitive for the session's batch; when it prefers another layout than
// the packed one (or the weights are plain, format ""), it reorders once into kernel-owned memory.
// Storage types: f32, or bf16 src/weights/dst (native on AVX-512 cores, fp32 accumulation, bias
// kept in fp32). f16, and bf16 on a CPU without AVX-512 (oneDNN 2.6 has no bf16 convolution or
// matmul below avx512_core but its reference code, 4-7x slower than the f32 primitive on a Zen 3
// AVX2 core), run an f32 primitive: X (and Z) are widened into f32 blocks of the session's
// workspace, the f32 result rounded once into Y (f16 weights packed as f32; bf16 weights stored
// plain when the plan is packed on such a CPU, widened when the session starts).
// alpha is folded into the weights when they are reordered (a single scale, exact up to one
// rounding of each weight).
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/cpu/blas/backends.h"
#include "runtime/cpu/blas/entries.h"
#include "runtime/cpu/blas/fused_params.h"
#include "runtime/cpu/own/entries.h"
#include "runtime/cpu/own/gelu_avx512.h"
#include "runtime/cpu/own/simd.h"
#include "runtime/cpu/own/winograd.h"
#include "runtime/cpu/own/winograd_avx512.h"

namespace gcomp::cpu::blas {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

constexpr char kFormatPrefix[] = "onednn2.6:";

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dt ToDt(DType t) { return t == DType::kBF16 ? dt::bf16 : dt::f32; }

// Whether oneDNN runs bf16 primitives at speed on this CPU (jit kernels from avx512_core on,
// with dot products from avx512_core_bf16 on). Tests lower it with own::CapSimdLevelForTesting.
bool NativeBf16() { return own::CpuSimdLevel() >= own::SimdLevel::kAvx512; }

// The data type a primitive computes in for a storage type: bf16 where native, else f32.
dt ComputeDt(DType t) { return t == DType::kBF16 && NativeBf16() ? dt::bf16 : dt::f32; }

// Whether a storage type runs through f32 buffers around an f32 primitive.
bool ThroughF32(DType t) { return t != DType::kF32 && ComputeDt(t) == dt::f32; }

// The reason's note for a storage type that runs through f32 buffers.
std::string ThroughF32Note(DType t) {
  if (!ThroughF32(t)) return "";
  return t == DType::kBF16 ? absl::StrCat(", bf16 storage widened to an f32 primitive: this CPU (", CpuIsa(),
                                          ") has no AVX-512 bf16 path")
                           : ", f16 storage widened to an f32 primitive";
}

absl::Status DnnlError(const KernelSpec& spec, const dnnl::error& e) {
  const std::string what = absl::StrCat("node '", spec.name, "' (", spec.op, "): oneDNN: ", e.what());
  if (e.status == dnnl_out_of_memory) return absl::ResourceExhaustedError(what);
  return absl::InternalError(what);
}

// The descriptor with every padding byte zero (a struct copy need not preserve padding), so that
// the same weights always encode to the same string (plans are byte-identical across processes).
// Only blocked layouts are encoded; nullopt for the others.
std::optional<dnnl_memory_desc_t> Canonical(const dnnl_memory_desc_t& in) {
  if (in.format_kind != dnnl_blocked) return std::nullopt;
  dnnl_memory_desc_t md;
  std::memset(&md, 0, sizeof(md));
  md.ndims = in.ndims;
  std::memcpy(md.dims, in.dims, sizeof(md.dims));
  md.data_type = in.data_type;
  std::memcpy(md.padded_dims, in.padded_dims, sizeof(md.padded_dims));
  std::memcpy(md.padded_offsets, in.padded_offsets, sizeof(md.padded_offsets));
  md.offset0 = in.offset0;
  md.format_kind = in.format_kind;
  const dnnl_blocking_desc_t& b = in.format_desc.blocking;
  std::memcpy(md.format_desc.blocking.strides, b.strides, sizeof(b.strides));
  md.format_desc.blocking.inner_nblks = b.inner_nblks;
  std::memcpy(md.format_desc.blocking.inner_blks, b.inner_blks, sizeof(b.inner_blks));
  std::memcpy(md.format_desc.blocking.inner_idxs, b.inner_idxs, sizeof(b.inner_idxs));
  md.extra.flags = in.extra.flags;
  md.extra.compensation_mask = in.extra.compensation_mask;
  md.extra.scale_adjust = in.extra.scale_adjust;
  md.extra.asymm_compensation_mask = in.extra.asymm_compensation_mask;
  std::memcpy(md.extra.reserved, in.extra.reserved, sizeof(md.extra.reserved));
  return md;
}

// "onednn2.6:" + hex bytes; "" (plain) when the layout is not a blocked one.
std::string EncodeDesc(const memory::desc& d) {
  std::optional<dnnl_memory_desc_t> md = Canonical(d.data);
  if (!md) return "";
  static const char kHex[] = "0123456789abcdef";
  const auto* b = reinterpret_cast<const uint8_t*>(&*md);
  std::string s = kFormatPrefix;
  for (size_t i = 0; i < sizeof(*md); ++i) {
    s.push_back(kHex[b[i] >> 4]);
    s.push_back(kHex[b[i] & 15]);
  }
  return s;
}

// The packed layout of format `f`, when `f` is an encoded oneDNN 2.6 blocked layout with the dims
// and data type of `logical` (the layout this step's primitive wants); nullopt for anything else,
// before oneDNN sees it: a plan file is untrusted, and oneDNN trusts a descriptor's fields.
// Padding of the weight rows that PaddedWeightRows asks for, in values.
constexpr int64_t kRowPad = 16;

std::optional<memory::desc> DecodeDesc(const std::string& f, const memory::desc& logical) {
  const size_t p = sizeof(kFormatPrefix) - 1;
  if (f.compare(0, p, kFormatPrefix) != 0 || f.size() != p + 2 * sizeof(dnnl_memory_desc_t)) return std::nullopt;
  dnnl_memory_desc_t md;
  auto* b = reinterpret_cast<uint8_t*>(&md);
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < sizeof(md); ++i) {
    const int hi = nib(f[p + 2 * i]), lo = nib(f[p + 2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    b[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  const dnnl_memory_desc_t& want = logical.data;
  if (md.ndims != want.ndims || md.ndims < 1 || md.ndims > DNNL_MAX_NDIMS || md.data_type != want.data_type ||
      md.format_kind != dnnl_blocked || md.offset0 != 0) {
    return std::nullopt;
  }
  const dnnl_blocking_desc_t& blk = md.format_desc.blocking;
  if (blk.inner_nblks < 0 || blk.inner_nblks > DNNL_MAX_NDIMS) return std::nullopt;
  for (int k = 0; k < blk.inner_nblks; ++k) {
    if (blk.inner_blks[k] < 1 || blk.inner_blks[k] > 64 || blk.inner_idxs[k] < 0 || blk.inner_idxs[k] >= md.ndims) {
      return std::nullopt;
    }
  }
  if (md.extra.flags != 0) return std::nullopt;
  // A dense layout: the inner blocks divide the padded dims, and the outer strides, sorted, chain
  // from the inner block's size with no gap or overlap, so the layout's size is exactly its
  // elements and no offset it describes lies beyond them (oneDNN's size is the largest stride
  // times extent, which overlapping strides would keep small while offsets run past it).
  int64_t per_dim_block[DNNL_MAX_NDIMS];
  int64_t inner = 1;
  for (int k = 0; k < md.ndims; ++k) per_dim_block[k] = 1;
  for (int k = 0; k < blk.inner_nblks; ++k) {
    per_dim_block[blk.inner_idxs[k]] *= blk.inner_blks[k];
    inner *= blk.inner_blks[k];
    if (inner > (int64_t{1} << 20)) return std::nullopt;
  }
  std::vector<std::pair<int64_t, int64_t>> outer;  // (stride, extent) of dims with extent > 1
  for (int k = 0; k < md.ndims; ++k) {
    if (md.dims[k] != want.dims[k] || md.dims[k] < 1 || md.padded_dims[k] < md.dims[k] ||
        md.padded_dims[k] > md.dims[k] + 64 || md.padded_offsets[k] != 0 || md.padded_dims[k] % per_dim_block[k] != 0) {
      return std::nullopt;
    }
    const int64_t extent = md.padded_dims[k] / per_dim_block[k];
    if (extent > 1) outer.emplace_back(blk.strides[k], extent);
  }
  // Or [K, N] rows padded by kRowPad values (PaddedWeightRows): unblocked, N dense.
  if (md.ndims == 2 && blk.inner_nblks == 0 && md.padded_dims[0] == md.dims[0] && md.padded_dims[1] == md.dims[1] &&
      blk.strides[1] == 1 && blk.strides[0] == md.dims[1] + kRowPad) {
    return memory::desc(md);
  }
  std::sort(outer.begin(), outer.end());
  int64_t expected = inner;
  for (const auto& [stride, extent] : outer) {
    if (stride != expected || __builtin_mul_overflow(expected, extent, &expected)) return std::nullopt;
  }
  return memory::desc(md);
}

// Storage types oneDNN runs here: f32 and bf16 natively (weights converted to the activations'
// type), f16 through f32 buffers.
bool DtypesSupported(DType act) { return act == DType::kF32 || act == DType::kBF16 || act == DType::kF16; }

// Converting copy of n elements, split over `threads` OpenMP threads.
void ParallelConvert(bool load, DType t, const void* src, void* dst, int64_t n, int threads) {
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  const size_t es = DTypeSize(t);
#pragma omp parallel for num_threads(threads)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t i = c * kChunk, m = std::min(kChunk, n - i);
    if (load) {
      LoadF32(t, static_cast<const uint8_t*>(src) + i * es, static_cast<float*>(dst) + i, m);
    } else {
      StoreF32(t, static_cast<const float*>(src) + i, static_cast<uint8_t*>(dst) + i * es, m);
    }
  }
}

// Y = gelu(X) rounded to bf16 over n elements (GeluPass), split over `threads` OpenMP threads.
void ParallelGelu(const float* x, uint16_t* y, int64_t n, int threads) {
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(threads)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t i = c * kChunk;
    own::avx512::GeluF32ToBf16(x + i, y + i, std::min(kChunk, n - i));
  }
}

// Whether a residual is added as a binary post-op that reads it where it lies (`dst` is Y's
// descriptor) rather than as a sum post-op on Y: for bf16 Y. oneDNN 2.6's brgemm matmul ran its
// bf16 sum post-op at up to twice the time of the GEMM without it (ResNet-50's K-64 1x1 layers
// with a residual at batch 8: 1.2-1.9 against 0.95-1.0 ms; README, "CPU runtime and plans"),
// and the binary form at the GEMM's own speed. A bf16 Y cannot hold partial sums, so every
// implementation accumulates elsewhere and reads the residual (which may be Y itself, in place)
// element by element before it writes that element. f32 keeps the sum: an f32 primitive may
// accumulate its partial sums in Y, and with Y given memory of its own (not over the residual)
// the binary form ran no faster on ResNet-50 at batch 8 (the arena 38% larger). f16 runs on f32
// buffers (the sum).
bool ResidualAsBinary(const Epilogue& e, dt y) { return e.has_residual && y == dt::bf16; }

dnnl::primitive_attr MakeAttr(const Epilogue& e, const memory::desc& dst) {
  dnnl::post_ops ops;
  if (ResidualAsBinary(e, dst.data_type())) {
    ops.append_binary(dnnl::algorithm::binary_add, dst);
  } else if (e.has_residual) {
    ops.append_sum(1.0f);
  }
  switch (e.act) {
    case Act::kRelu:
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      break;
    case Act::kClip:
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip_v2, e.clip_min, e.clip_max);
      break;
    case Act::kGelu:
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
      break;
    case Act::kGeluTanh:
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
      break;
    case Act::kNone:
      break;
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  return attr;
}

// omp_set_num_threads is process-wide: it sets the OpenMP team size of every later parallel
// region of this thread (oneDNN's and ours), not a per-kernel pool. Kernels set it before they
// create or execute a primitive so that each step runs with its session's thread count.
void SetThreads(int threads) { omp_set_num_threads(threads > 0 ? threads : 1); }

// A primitive descriptor plus the plain layout of its weights as the graph stores them.
struct Design {
  dnnl::primitive_desc pd;
  memory::desc src, weights, dst, bias, plain_weights;
  tag plain_tag = tag::ab;
  bool has_bias = false;
  bool residual_binary = false;  // ResidualAsBinary: the residual is a post-op's SRC_1
  bool padded_weights = false;   // PaddedWeightRows
  bool gelu_pass = false;        // GeluPass: dst is f32 workspace, the GELU a pass of its own
  // GeluPass in row parts (GeluParts): primitives for `part_rows` rows and for the last part's
  // `tail_rows` (0: all parts have part_rows), the same weights layout as pd's.
  int64_t part_rows = 0, tail_rows = 0;
  dnnl::primitive_desc part_pd, tail_pd;
};

// Whether a matmul's [K, N] weights get rows of N + kRowPad values: on implementations other than
// brgemm (oneDNN 2.6's gemm:jit on CPUs without AVX-512), rows of a multiple of 4 KiB (N a multiple
// of 1024) alias in the cache while the GEMM packs them. On a Zen 3 AVX2 core, M197 K768 (ViT-B/16's
// MLP at batch 1, build/tools/bench/gemm_backends): N 2048, 3072 and 4096 ran at 74-90 GFLOP/s, N
// 3088 at 178, and N 3072 with padded weight rows at 170-176. (Padding Y's rows instead changed
// nothing.) Plans store them padded (DecodeDesc takes this one layout with gaps). Also below
// AVX-512 by the SIMD cap, so that tests run it on any CPU.
bool PaddedWeightRows(const GemmParams& p, const dnnl::primitive_desc& pd, dt a) {
  return a == dt::f32 && !p.trans_b && p.n % 1024 == 0 &&
         (std::string(pd.impl_info_str()).rfind("brg", 0) != 0 || own::CpuSimdLevel() < own::SimdLevel::kAvx512);
}

absl::StatusOr<Design> ConvDesign(const KernelSpec& spec, const ConvParams& p) {
  try {
    const dt a = ComputeDt(p.dtype);
    const tag t = p.nhwc ? tag::nhwc : tag::nchw;
    Design d;
    d.src = memory::desc({p.n, p.c, p.h, p.w}, a, t);
    d.dst = memory::desc({p.n, p.cout, p.ho, p.wo}, a, t);
    memory::desc wany;
    if (p.group == 1) {
      wany = memory::desc({p.cout, p.c, p.kh, p.kw}, a, tag::any);
      d.plain_tag = tag::oihw;
      d.plain_weights = memory::desc({p.cout, p.c, p.kh, p.kw}, ToDt(p.wdtype), d.plain_tag);
    } else {
      memory::dims wd = {p.group, p.cout / p.group, p.c / p.group, p.kh, p.kw};
      wany = memory::desc(wd, a, tag::any);
      d.plain_tag = tag::goihw;
      d.plain_weights = memory::desc(wd, ToDt(p.wdtype), d.plain_tag);
    }
    if (p.epi.has_bias) d.bias = memory::desc({p.cout}, dt::f32, tag::a);
    d.has_bias = p.epi.has_bias;
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, d.src,
                                         wany, d.bias, d.dst, {p.sh, p.sw}, {p.dh - 1, p.dw - 1}, {p.pt, p.pl},
                                         {p.pb, p.pr});
    dnnl::convolution_forward::primitive_desc pd(desc, MakeAttr(p.epi, d.dst), Engine());
    d.residual_binary = ResidualAsBinary(p.epi, a);
    d.weights = pd.weights_desc();
    d.pd = pd;
    return d;
  } catch (const dnnl::error& e) {
    return DnnlError(spec, e);
  }
}

// Whether a bf16 matmul's erf GELU runs as a pass of its own (own::avx512::GeluF32ToBf16) over an
// f32 result in the workspace instead of as oneDNN 2.6's gelu_erf post-op: that post-op took the
// bf16 brgemm matmul from 427 to 371-406 GFLOP/s on ViT-B/16's M1576 K768 N3072 (batch 8, 2
// threads, Zen 5; build/tools/bench/gemm_backends --bf16), the matmul plus the pass runs at
// 416-421; in the model the step took 17.7-18.3 ms against 18.2-19.4 with the post-op. The f32
// primitive ran as fast with the post-op as without (and as with an own pass over Y), so f32 keeps
// it. The pass rounds each element once, as the post-op does.
bool GeluPass(const GemmParams& p) {
  return p.epi.act == Act::kGelu && !p.epi.has_residual && ComputeDt(p.dtype) == dt::bf16 &&
         own::CpuSimdLevel() >= own::SimdLevel::kAvx512Bf16;
}

// The reason's note for a design whose GELU runs as the own pass.
std::string GeluPassNote(const Design& d) {
  if (!d.gelu_pass) return "";
  return absl::StrCat(", f32 result, GELU rounded to bf16 by an own AVX-512 pass",
                      d.part_rows ? absl::StrCat(", in parts of ", d.part_rows, " rows") : "");
}

// A GeluPass matmul of at least two parts' rows runs in parts of about kGeluPartBytes of f32
// result (GeluParts): a part's matmul into the workspace, then the pass over it while it is still
// in the cache, where one matmul wrote the whole f32 result (19 MB for ViT-B/16's 768->3072 at
// batch 8) and the pass read it back from memory. ViT-B/16 bf16 at batch 8 (`gcomp bench PLAN
// --batch 8 --threads 2 --profile`, three alternating pairs, each step against the 3072->768
// matmul of the same FLOPs in the same run): 0.99-1.27 ms more than that matmul before, 0.69-0.98
// in parts; the workspace falls from 19 to 3 MB (peak RSS 409.6 -> 394.0 MB).
constexpr int64_t kGeluPartBytes = 3 << 20;

void GeluParts(const GemmParams& p, const Epilogue& epi, Design& d) {
  const int64_t target = kGeluPartBytes / (p.n * static_cast<int64_t>(sizeof(float)));
  if (target < 1 || p.m < 2 * target) return;
  const int64_t parts = (p.m + target - 1) / target, rows = (p.m + parts - 1) / parts;
  const int64_t tail = p.m - (parts - 1) * rows;
  const dt a = d.src.data_type();
  auto make = [&](int64_t m) {
    memory::desc dst({m, p.n}, dt::f32, tag::ab);
    dnnl::matmul::desc desc(memory::desc({m, p.k}, a, tag::ab), memory::desc({p.k, p.n}, a, tag::any), d.bias, dst);
    return dnnl::matmul::primitive_desc(desc, MakeAttr(epi, dst), Engine());
  };
  dnnl::matmul::primitive_desc part = make(rows);
  if (part.weights_desc() != d.weights) return;
  if (tail != rows) {
    dnnl::matmul::primitive_desc last = make(tail);
    if (last.weights_desc() != d.weights) return;
    d.tail_pd = last;
    d.tail_rows = tail;
  }
  d.part_pd = part;
  d.part_rows = rows;
}

absl::StatusOr<Design> GemmDesign(const KernelSpec& spec, const GemmParams& p) {
  try {
    const dt a = ComputeDt(p.dtype);
    Design d;
    d.gelu_pass = GeluPass(p);
    Epilogue epi = p.epi;
    if (d.gelu_pass) epi.act = Act::kNone;
    d.src = memory::desc({p.m, p.k}, a, tag::ab);
    d.dst = memory::desc({p.m, p.n}, d.gelu_pass ? dt::f32 : a, tag::ab);  // f32: the pass's input
    d.plain_tag = p.trans_b ? tag::ba : tag::ab;
    d.plain_weights = memory::desc({p.k, p.n}, ToDt(p.wdtype), d.plain_tag);
    if (p.epi.has_bias) d.bias = memory::desc({1, p.n}, dt::f32, tag::ab);
    d.has_bias = p.epi.has_bias;
    dnnl::matmul::desc desc(d.src, memory::desc({p.k, p.n}, a, tag::any), d.bias, d.dst);
    dnnl::matmul::primitive_desc pd(desc, MakeAttr(epi, d.dst), Engine());
    if (PaddedWeightRows(p, pd, a)) {
      dnnl::matmul::desc padded(d.src, memory::desc({p.k, p.n}, a, memory::dims{p.n + kRowPad, 1}), d.bias, d.dst);
      pd = dnnl::matmul::primitive_desc(padded, MakeAttr(epi, d.dst), Engine());
      d.padded_weights = true;
    }
    d.residual_binary = ResidualAsBinary(p.epi, a);
    d.weights = pd.weights_desc();
    d.pd = pd;
    if (d.gelu_pass) GeluParts(p, epi, d);
    return d;
  } catch (const dnnl::error& e) {
    return DnnlError(spec, e);
  }
}

// Reorders the weights operand (plain, or packed as `from`) into d.weights at `out` (its
// get_size() bytes); plain weights are scaled by `scale` (alpha) on the way.
absl::Status ReorderWeights(const KernelSpec& spec, const Design& d, const std::optional<memory::desc>& from,
                            float scale, uint8_t* out) {
  const Operand& w = spec.inputs[1];
  try {
    std::vector<float> staged;
    memory::desc src_md = from ? *from : d.plain_weights;
    const void* src = w.constant;
    if (!from) {
      if (w.constant_bytes != NumElements(w.dims) * DTypeSize(w.dtype)) {
        return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': weights have ", w.constant_bytes,
                                                       " bytes, expected ", NumElements(w.dims) * DTypeSize(w.dtype)));
      }
      // f16, scaled, or bf16 for an f32 primitive: widened here first (oneDNN 2.6 reorders bf16 to
      // f32 across layouts element by element, 11 ms for a 512x1024 matrix on an AVX2 core).
      if (w.dtype == DType::kF16 || scale != 1.0f || (w.dtype == DType::kBF16 && d.weights.data_type() == dt::f32)) {
        ASSIGN_OR_RETURN(staged, ConstantF32(spec, 1));
        for (float& v : staged) v *= scale;
        src_md = memory::desc(d.plain_weights.dims(), dt::f32, d.plain_tag);
        src = staged.data();
      }
    } else if (w.constant_bytes != from->get_size()) {
      return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': packed weights have ", w.constant_bytes,
                                                     " bytes, their format says ", from->get_size()));
    } else if (from->data_type() == dt::bf16 && d.weights.data_type() == dt::f32) {
      // Packed as bf16 for a CPU with AVX-512: widened in their own layout, then reordered in f32.
      staged.resize(w.constant_bytes / 2);
      LoadF32(DType::kBF16, w.constant, staged.data(), static_cast<int64_t>(staged.size()));
      src_md = *from;
      src_md.data.data_type = dnnl_f32;
      src = staged.data();
    }
    memory src_mem(src_md, Engine(), const_cast<void*>(src));
    memory dst_mem(d.weights, Engine(), out);
    dnnl::stream s(Engine());
    dnnl::reorder(src_mem, dst_mem).execute(s, src_mem, dst_mem);
    s.wait();
    return absl::OkStatus();
  } catch (const dnnl::error& e) {
    return DnnlError(spec, e);
  }
}

absl::StatusOr<Packed> PackWeights(const KernelSpec& spec, size_t index, const Design& d, float scale) {
  Packed p;
  if (index != 1) {  // bias: stored plain
    const Operand& o = spec.inputs[index];
    p.bytes.assign(o.constant, o.constant + o.constant_bytes);
    return p;
  }
  // bf16 weights of a primitive that runs in f32 (no AVX-512 here): stored plain, so that the plan
  // keeps bf16 weights and a CPU with AVX-512 packs them for its bf16 primitive when it starts.
  const bool widened = spec.inputs[index].dtype == DType::kBF16 && d.weights.data_type() == dt::f32;
  p.format = widened ? "" : EncodeDesc(d.weights);
  if (p.format.empty()) {
    // Not encodable: stored plain, reordered (and scaled) by create.
    const Operand& o = spec.inputs[index];
    p.bytes.assign(o.constant, o.constant + o.constant_bytes);
    p.format.clear();
    return p;
  }
  p.bytes.assign(d.weights.get_size(), 0);
  RETURN_IF_ERROR(ReorderWeights(spec, d, std::nullopt, scale, p.bytes.data()));
  return p;
}

// A design's primitive bound to its arguments: src and dst memory objects (handles: a later
// set_data_handle on them reaches the argument map), the weights at `weights`, and the bias (fp32,
// the step's constant input) when the design has one.
struct BoundPrimitive {
  dnnl::primitive prim;
  memory src, dst, weights, bias;
  memory residual;  // when the design adds the residual as a binary post-op (its handle set per run)
  std::vector<float> bias_values;
  std::unordered_map<int, memory> args;
  dnnl::stream stream;

  absl::Status Bind(const KernelSpec& spec, const Design& d, memory src_mem, memory dst_mem, const uint8_t* w) {
    if (d.has_bias) {
      ASSIGN_OR_RETURN(bias_values, ConstantF32(spec, kBiasInput));
      bias = memory(d.bias, Engine(), bias_values.data());
    }
    prim = dnnl::primitive(d.pd);
    src = src_mem;
    dst = dst_mem;
    weights = memory(d.weights, Engine(), const_cast<uint8_t*>(w));
    stream = dnnl::stream(Engine());
    args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (d.has_bias) args.emplace(DNNL_ARG_BIAS, bias);
    if (d.residual_binary) {
      residual = memory(d.dst, Engine(), DNNL_MEMORY_NONE);
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, residual);
    }
    return absl::OkStatus();
  }
};

class OneDnnKernel : public ShapedKernel {
 public:
  absl::Status Init(const KernelSpec& spec, const Design& d, float scale, bool has_residual) {
    name_ = spec.name;
    threads_ = std::max(1, spec.threads);
    has_residual_ = has_residual;
    dst_bytes_ = d.dst.get_size();
    if (spec.inputs[0].dtype != DType::kF32 && d.src.data_type() == dt::f32) {
      storage_ = spec.inputs[0].dtype;
      through_f32_ = true;
      src_elems_ = NumElements(spec.inputs[0].dims);
      dst_elems_ = NumElements(spec.outputs[0].dims);
      src32_bytes_ = Align64(static_cast<size_t>(src_elems_) * sizeof(float));
      dst32_bytes_ = Align64(static_cast<size_t>(dst_elems_) * sizeof(float));
    }
    if (d.gelu_pass) {
      gelu_pass_ = true;
      dst_elems_ = NumElements(spec.outputs[0].dims);
      part_rows_ = d.part_rows;
      tail_rows_ = d.tail_rows;
      if (part_rows_) {
        row_elems_ = d.dst.dims()[1];
        src_row_bytes_ = d.src.dims()[1] * static_cast<int64_t>(memory::data_type_size(d.src.data_type()));
      }
      dst32_bytes_ = Align64(static_cast<size_t>(part_rows_ ? part_rows_ * row_elems_ : dst_elems_) * sizeof(float));
    }
    try {
      const Operand& w = spec.inputs[1];
      std::optional<memory::desc> from;
      if (!w.format.empty()) {
        from = DecodeDesc(w.format, d.weights);
        if (!from && d.weights.data_type() == dt::f32 && w.dtype == DType::kBF16) {
          // Packed as bf16 by a CPU with AVX-512; this one widens them into its f32 layout.
          memory::desc packed_bf16 = d.weights;
          packed_bf16.data.data_type = dnnl_bf16;
          from = DecodeDesc(w.format, packed_bf16);
        }
        if (!from) {
          return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': weights format '",
                                                         w.format.substr(0, 40),
                                                         "...' is not a oneDNN 2.6 layout of these weights"));
        }
      }
      if (from && *from == d.weights) {
        if (w.constant_bytes != d.weights.get_size()) {
          return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': packed weights have ",
                                                         w.constant_bytes, " bytes, expected ", d.weights.get_size()));
        }
        weights_ = w.constant;
      } else {
        owned_weights_ = AlignedArray<uint8_t>(d.weights.get_size());
        if (!owned_weights_) return absl::ResourceExhaustedError(absl::StrCat("node '", spec.name, "': weights"));
        RETURN_IF_ERROR(ReorderWeights(spec, d, from, from ? 1.0f : scale, owned_weights_.data()));
        weights_ = owned_weights_.data();
      }
      SetThreads(threads_);
      if (part_rows_) {  // the whole matmul's primitive would never run
        RETURN_IF_ERROR(BindPart(spec, d, d.part_pd, part_, weights_));
        if (tail_rows_) RETURN_IF_ERROR(BindPart(spec, d, d.tail_pd, tail_, weights_));
      } else {
        RETURN_IF_ERROR(p_.Bind(spec, d, memory(d.src, Engine(), DNNL_MEMORY_NONE),
                                memory(d.dst, Engine(), DNNL_MEMORY_NONE), weights_));
      }
    } catch (const dnnl::error& e) {
      return DnnlError(spec, e);
    }
    return absl::OkStatus();
  }

  int64_t WorkspaceBytes() const override {
    return through_f32_ || gelu_pass_ ? static_cast<int64_t>(src32_bytes_ + dst32_bytes_) : 0;
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    if (WorkspaceBytes() == 0) return RunWithWorkspace(inputs, outputs, {});
    if (!own_workspace_) own_workspace_ = AlignedArray<uint8_t>(src32_bytes_ + dst32_bytes_);
    if (!own_workspace_) return absl::ResourceExhaustedError(absl::StrCat("node '", name_, "': workspace"));
    return RunWithWorkspace(inputs, outputs, {own_workspace_.data(), src32_bytes_ + dst32_bytes_});
  }

  absl::Status RunWithWorkspace(std::span<const void* const> inputs, std::span<void* const> outputs,
                                std::span<uint8_t> workspace) override {
    float* src32 = nullptr;
    float* dst32 = nullptr;
    if (through_f32_ || gelu_pass_) {
      if (workspace.size() < src32_bytes_ + dst32_bytes_) {
        return absl::InternalError(absl::StrCat("node '", name_, "': workspace of ", workspace.size(),
                                                " bytes, expected ", src32_bytes_ + dst32_bytes_));
      }
      src32 = reinterpret_cast<float*>(workspace.data());
      dst32 = reinterpret_cast<float*>(workspace.data() + src32_bytes_);
    }
    if (through_f32_) {
      ParallelConvert(true, storage_, inputs[0], src32, src_elems_, threads_);
      if (has_residual_) ParallelConvert(true, storage_, inputs[kResidualInput], dst32, dst_elems_, threads_);
    } else if (has_residual_ && p_.residual) {
      p_.residual.set_data_handle(const_cast<void*>(inputs[kResidualInput]));
    } else if (has_residual_ && outputs[0] != inputs[kResidualInput]) {
      std::memcpy(outputs[0], inputs[kResidualInput], dst_bytes_);
    }
    try {
      SetThreads(threads_);
      if (part_rows_) {
        RunParts(inputs[0], dst32, static_cast<uint16_t*>(outputs[0]));
        return absl::OkStatus();
      }
      p_.src.set_data_handle(through_f32_ ? src32 : const_cast<void*>(inputs[0]));
      p_.dst.set_data_handle(through_f32_ || gelu_pass_ ? dst32 : outputs[0]);
      p_.prim.execute(p_.stream, p_.args);
      p_.stream.wait();
      if (through_f32_) ParallelConvert(false, storage_, dst32, outputs[0], dst_elems_, threads_);
      if (gelu_pass_) ParallelGelu(dst32, static_cast<uint16_t*>(outputs[0]), dst_elems_, threads_);
    } catch (const dnnl::error& e) {
      return absl::InternalError(absl::StrCat("node '", name_, "': oneDNN: ", e.what()));
    }
    return absl::OkStatus();
  }

 private:
  // A part's primitive (GeluParts): `pd` with its own src and dst handles, the kernel's weights.
  static absl::Status BindPart(const KernelSpec& spec, const Design& d, const dnnl::primitive_desc& pd,
                               BoundPrimitive& b, const uint8_t* w) {
    Design part = d;
    part.pd = pd;
    part.src = pd.src_desc();
    part.dst = pd.dst_desc();
    return b.Bind(spec, part, memory(part.src, Engine(), DNNL_MEMORY_NONE), memory(part.dst, Engine(), DNNL_MEMORY_NONE),
                  w);
  }

  // The matmul and GELU pass part by part: each part's f32 result into the same workspace rows,
  // then GELU of it into its rows of Y.
  void RunParts(const void* x, float* dst32, uint16_t* y) {
    const auto* src = static_cast<const uint8_t*>(x);
    const int64_t m = dst_elems_ / row_elems_;
    for (int64_t r = 0; r < m; r += part_rows_) {
      const bool last = tail_rows_ && r + part_rows_ > m;
      BoundPrimitive& b = last ? tail_ : part_;
      const int64_t rows = last ? tail_rows_ : part_rows_;
      b.src.set_data_handle(const_cast<uint8_t*>(src + r * src_row_bytes_));
      b.dst.set_data_handle(dst32);
      b.prim.execute(b.stream, b.args);
      b.stream.wait();
      ParallelGelu(dst32, y + r * row_elems_, rows * row_elems_, threads_);
    }
  }

  std::string name_;
  int threads_ = 1;
  bool has_residual_ = false;
  int64_t part_rows_ = 0, tail_rows_ = 0, row_elems_ = 0, src_row_bytes_ = 0;
  BoundPrimitive part_, tail_;
  size_t dst_bytes_ = 0;
  bool through_f32_ = false;  // ThroughF32: the primitive runs on f32 blocks of the workspace
  bool gelu_pass_ = false;    // GeluPass: the primitive's f32 result in the workspace, GELU into Y
  DType storage_ = DType::kF32;
  int64_t src_elems_ = 0, dst_elems_ = 0;
  size_t src32_bytes_ = 0, dst32_bytes_ = 0;
  AlignedArray<uint8_t> own_workspace_;  // Run without a session's workspace
  const uint8_t* weights_ = nullptr;
  AlignedArray<uint8_t> owned_weights_;  // weights reordered here, at a line boundary
  BoundPrimitive p_;
};

template <typename Params>
absl::StatusOr<std::unique_ptr<ShapedKernel>> MakeKernel(const KernelSpec& spec, const Params& p, const Design& d,
                                                         float scale) {
  auto k = std::make_unique<OneDnnKernel>();
  RETURN_IF_ERROR(k->Init(spec, d, scale, p.epi.has_residual));
  return std::unique_ptr<ShapedKernel>(std::move(k));
}

absl::Status Declined(const KernelSpec& spec, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "' (", spec.op, "): oneDNN kernel: ", why));
}

CpuEntry GemmLikeEntry(const std::string& id, const std::string& op) {
  CpuEntry e;
  e.id = id;
  e.ops = {op};
  e.params = GemmParamSpecs();
  e.in_place = {{0, 3}};
  e.description = absl::StrCat("oneDNN ", dnnl_version()->major, ".", dnnl_version()->minor,
                               " matmul, weights reordered to its preferred layout, epilogue as post-ops");
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<GemmParams> p = ParseGemm(spec, &why);
    if (!p || !DtypesSupported(p->dtype)) return std::nullopt;
    absl::StatusOr<Design> d = GemmDesign(spec, *p);
    if (!d.ok()) return std::nullopt;
    return absl::StrCat("oneDNN matmul ", d->pd.impl_info_str(), " (", DescribeGemm(*p), ")",
                        d->padded_weights ? absl::StrCat(", weight rows padded to ", p->n + kRowPad, " values") : "",
                        GeluPassNote(*d), ThroughF32Note(p->dtype));
  };
  e.pack = [](const KernelSpec& spec, size_t index) -> absl::StatusOr<Packed> {
    std::string why;
    std::optional<GemmParams> p = ParseGemm(spec, &why);
    if (!p) return Declined(spec, why);
    ASSIGN_OR_RETURN(Design d, GemmDesign(spec, *p));
    return PackWeights(spec, index, d, p->alpha);
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::string why;
    std::optional<GemmParams> p = ParseGemm(spec, &why);
    if (!p) return Declined(spec, why);
    SetThreads(spec.threads);
    ASSIGN_OR_RETURN(Design d, GemmDesign(spec, *p));
    return MakeKernel(spec, *p, d, p->alpha);
  };
  return e;
}

// ---- Winograd ------------------------------------------------------------------------------
// oneDNN's Winograd convolution (F(4x4, 3x3) or F(2x2, 3x3) on AVX-512 cores, fp32 only) runs on
// blocked activations (nChw16c), so the kernel reorders X into that layout and Y back to NHWC
// around it. It takes f32 NHWC 3x3 stride-1 layers without dilation, groups or residual, of at
// least 64 input and output channels and outputs of at least 14x14: on ResNet-50 those ran
// 1.2-1.6x faster than the direct convolution at batch 8, reorders included, and about as fast at
// batch 1 (README, "CPU runtime and plans"); on 7x7 outputs (ResNet-50's last stage: 4 tiles of
// F(4x4) cover 8x8) it was slower than the direct convolution (4.7 against 3.8 ms at batch 8, 0.69
// against 0.63-0.66 ms at batch 1, Zen 5, 2 threads). Its error is larger than the direct
// convolution's (transforms in fp32, within the fp32 tolerance: tests/runtime/blas_test.cc).
bool WinogradShape(const ConvParams& p) {
  return p.dtype == DType::kF32 && p.wdtype == DType::kF32 && p.nhwc && p.group == 1 && p.kh == 3 && p.kw == 3 &&
         p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 && !p.epi.has_residual && p.c >= 64 && p.cout >= 64 &&
         p.ho >= 14 && p.wo >= 14;
}

absl::StatusOr<Design> WinogradDesign(const KernelSpec& spec, const ConvParams& p) {
  try {
    Design d;
    d.src = memory::desc({p.n, p.c, p.h, p.w}, dt::f32, tag::any);
    d.dst = memory::desc({p.n, p.cout, p.ho, p.wo}, dt::f32, tag::any);
    d.plain_tag = tag::oihw;
    d.plain_weights = memory::desc({p.cout, p.c, p.kh, p.kw}, dt::f32, d.plain_tag);
    if (p.epi.has_bias) d.bias = memory::desc({p.cout}, dt::f32, tag::a);
    d.has_bias = p.epi.has_bias;
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd,
                                         d.src, memory::desc({p.cout, p.c, p.kh, p.kw}, dt::f32, tag::any), d.bias,
                                         d.dst, {p.sh, p.sw}, {p.pt, p.pl}, {p.pb, p.pr});
    dnnl::convolution_forward::primitive_desc pd(desc, MakeAttr(p.epi, d.dst), Engine());
    d.src = pd.src_desc();
    d.dst = pd.dst_desc();
    d.weights = pd.weights_desc();
    d.pd = pd;
    return d;
  } catch (const dnnl::error& e) {
    return DnnlError(spec, e);
  }
}

class WinogradKernel : public ShapedKernel {
 public:
  absl::Status Init(const KernelSpec& spec, const ConvParams& p, const Design& d) {
    name_ = spec.name;
    threads_ = std::max(1, spec.threads);
    if (!spec.inputs[1].format.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': weights format '",
                                                     spec.inputs[1].format.substr(0, 40),
                                                     "...' is not the plain layout cpu.onednn.winograd stores"));
    }
    // The Winograd weights layout depends on the implementation oneDNN picks for the session's
    // batch: the plan stores them plain and they are transformed here, once.
    weights_ = AlignedArray<uint8_t>(d.weights.get_size());
    if (!weights_) return absl::ResourceExhaustedError(absl::StrCat("node '", spec.name, "': weights"));
    RETURN_IF_ERROR(ReorderWeights(spec, d, std::nullopt, 1.0f, weights_.data()));
    try {
      SetThreads(threads_);
      // Blocked X and Y: in the workspace (their handles set per run).
      RETURN_IF_ERROR(p_.Bind(spec, d, memory(d.src, Engine(), DNNL_MEMORY_NONE),
                              memory(d.dst, Engine(), DNNL_MEMORY_NONE), weights_.data()));
      x_bytes_ = Align64(d.src.get_size());
      y_bytes_ = d.dst.get_size();
      x_mem_ = memory(memory::desc({p.n, p.c, p.h, p.w}, dt::f32, tag::nhwc), Engine(), DNNL_MEMORY_NONE);
      y_mem_ = memory(memory::desc({p.n, p.cout, p.ho, p.wo}, dt::f32, tag::nhwc), Engine(), DNNL_MEMORY_NONE);
      to_blocked_ = dnnl::reorder(x_mem_, p_.src);
      to_nhwc_ = dnnl::reorder(p_.dst, y_mem_);
    } catch (const dnnl::error& e) {
      return DnnlError(spec, e);
    }
    return absl::OkStatus();
  }

  int64_t WorkspaceBytes() const override { return static_cast<int64_t>(x_bytes_ + y_bytes_); }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    if (!own_workspace_) own_workspace_ = AlignedArray<uint8_t>(x_bytes_ + y_bytes_);
    if (!own_workspace_) return absl::ResourceExhaustedError(absl::StrCat("node '", name_, "': workspace"));
    return RunWithWorkspace(inputs, outputs, {own_workspace_.data(), x_bytes_ + y_bytes_});
  }

  absl::Status RunWithWorkspace(std::span<const void* const> inputs, std::span<void* const> outputs,
                                std::span<uint8_t> workspace) override {
    try {
      SetThreads(threads_);
      p_.src.set_data_handle(workspace.data());
      p_.dst.set_data_handle(workspace.data() + x_bytes_);
      x_mem_.set_data_handle(const_cast<void*>(inputs[0]));
      y_mem_.set_data_handle(outputs[0]);
      to_blocked_.execute(p_.stream, x_mem_, p_.src);
      p_.prim.execute(p_.stream, p_.args);
      to_nhwc_.execute(p_.stream, p_.dst, y_mem_);
      p_.stream.wait();
    } catch (const dnnl::error& e) {
      return absl::InternalError(absl::StrCat("node '", name_, "': oneDNN: ", e.what()));
    }
    return absl::OkStatus();
  }

 private:
  std::string name_;
  int threads_ = 1;
  AlignedArray<uint8_t> weights_;
  BoundPrimitive p_;
  dnnl::reorder to_blocked_, to_nhwc_;
  memory x_mem_, y_mem_;
  size_t x_bytes_ = 0, y_bytes_ = 0;     // blocked X (rounded up to 64 bytes) and Y in the workspace
  AlignedArray<uint8_t> own_workspace_;  // Run without a session's workspace (kernel tests)
};

std::optional<ConvParams> ParseWinograd(const KernelSpec& spec, std::string* why) {
  std::optional<ConvParams> p = ParseConv(spec, why);
  if (p && !WinogradShape(*p)) {
    *why = "not an f32 NHWC 3x3 stride-1 convolution of >= 64 channels and >= 14x14 outputs without residual";
    return std::nullopt;
  }
  return p;
}

// ---- bf16 Winograd --------------------------------------------------------------------------
// oneDNN has no bf16 Winograd convolution. This one is F(2x2, 3x3), in blocks of up to
// kBlockTiles output tiles: the input transform (own/winograd_avx512.cc) writes the block's V
// [16][tiles][C] in bf16, one batched oneDNN matmul multiplies each of the 16 points by the
// transformed weights U [16][C][K] (bf16, made once per session from the plan's plain weights)
// into f32 M [16][tiles][K], and the output transform adds bias, applies the activation and writes
// NHWC bf16: 2.25x fewer products than the direct convolution, and V and M stay in cache. It takes
// bf16 NHWC 3x3 stride-1 layers without dilation, groups or residual, of at least 64 input and
// output channels and kMinTilesPerImage 2x2 output tiles per image, with no activation or ReLU, and
// transforms at batches that give at least kMinTiles tiles (every batch); the f32 form
// (cpu.onednn.winograd_2x2) runs its direct convolution below kMinTilesF32 (the step's reason names
// the batches). ResNet-50 bf16 per layer, direct ->
// Winograd (Zen 5, 2 threads, medians of 3 rounds): batch 8: 56x56x64 1.96-2.09 -> 1.53-1.61 ms,
// 28x28x128 1.86-1.92 -> 1.29-1.31, 14x14x256 1.77-1.95 -> 1.23-1.29; batch 1: 56x56x64
// 0.255-0.261 -> 0.223-0.228, 28x28x128 0.242-0.249 -> 0.188-0.194. Unblocked (V and M for all
// tiles at once) the 28x28 and 56x56 layers at batch 8 were no faster than direct (0.94-1.58x);
// blocks of 800 tiles ran like 400 at batch 8 and slower at batch 1; 7x7 outputs (16 tiles per
// image) at batch 1 took twice the direct time. It transforms at every batch (kMinTiles =
// kMinTilesPerImage): the 14x14x256 layers at batch 1-3 (49-147 tiles), once left to the direct
// convolution, ran at 810-892 direct-convolution GFLOP/s against its 497-508
// (`gemm_backends --bf16 --batches 1,2,3 --conv cpu.onednn.conv,cpu.onednn.winograd_bf16`, Zen 5, 2
// threads, two runs). Its error: V and U rounded to bf16 after the transforms (within the bf16
// tolerance: tests/runtime/blas_test.cc).
constexpr int64_t kMinTilesPerImage = 40, kMinTiles = kMinTilesPerImage, kBlockTiles = 400;
// cpu.onednn.winograd_2x2 (f32 V and M: twice the bytes per tile).
constexpr int64_t kMinTilesF32 = 160, kBlockTilesF32 = 200;

int64_t WinogradTilesPerImage(const ConvParams& p) { return ((p.ho + 1) / 2) * ((p.wo + 1) / 2); }

// The layers both F(2x2, 3x3) entries take: NHWC 3x3 stride-1 convolutions without dilation, groups
// or residual, of >= 64 input and output channels and >= kMinTilesPerImage tiles per image, with no
// activation or ReLU.
bool WinogradF2Geometry(const ConvParams& p) {
  return p.nhwc && p.group == 1 && p.kh == 3 && p.kw == 3 && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 &&
         !p.epi.has_residual && p.c >= 64 && p.cout >= 64 && WinogradTilesPerImage(p) >= kMinTilesPerImage &&
         (p.epi.act == Activation::kNone || p.epi.act == Activation::kRelu) && p.wdtype == p.dtype;
}

// cpu.onednn.winograd_bf16: bf16 storage on a CPU with AVX512-BF16.
bool WinogradBf16Shape(const ConvParams& p) {
  return p.dtype == DType::kBF16 && WinogradF2Geometry(p) && own::CpuSimdLevel() >= own::SimdLevel::kAvx512Bf16;
}

// cpu.onednn.winograd_2x2: f32 storage, or bf16 run through f32 (ThroughF32), on a CPU without
// AVX-512, where oneDNN 2.6 has no Winograd convolution.
bool Winograd2x2Shape(const ConvParams& p) {
  return (p.dtype == DType::kF32 || (p.dtype == DType::kBF16 && ThroughF32(p.dtype))) && WinogradF2Geometry(p) &&
         own::CpuSimdLevel() < own::SimdLevel::kAvx512;
}

std::optional<ConvParams> ParseWinogradF2(const KernelSpec& spec, bool f32_domain, std::string* why) {
  std::optional<ConvParams> p = ParseConv(spec, why);
  if (p && !(f32_domain ? Winograd2x2Shape(*p) : WinogradBf16Shape(*p))) {
    *why = absl::StrCat("not a ", f32_domain ? "f32 (or widened bf16)" : "bf16",
                        " NHWC 3x3 stride-1 convolution of >= 64 channels and >= 40 2x2 output tiles per image "
                        "without residual, with no activation or ReLU, on a CPU ",
                        f32_domain ? "without AVX-512" : "with AVX512-BF16");
    return std::nullopt;
  }
  return p;
}

// The F(2x2, 3x3) kernel of both Winograd entries: `f32_domain` false: bf16 V and U, the AVX-512
// transforms (cpu.onednn.winograd_bf16); true: f32 V and U, the portable transforms, f32 or bf16
// storage (cpu.onednn.winograd_2x2).
class WinogradF2Kernel : public ShapedKernel {
 public:
  absl::Status Init(const KernelSpec& spec, const ConvParams& p, bool f32_domain) {
    name_ = spec.name;
    f32_ = f32_domain;
    storage_ = p.dtype;
    const char* id = f32_ ? "cpu.onednn.winograd_2x2" : "cpu.onednn.winograd_bf16";
    threads_ = std::max(1, spec.threads);
    c_ = p.c;
    k_ = p.cout;
    relu_ = p.epi.act == Activation::kRelu;
    has_bias_ = p.epi.has_bias;
    g_.h = p.h;
    g_.w = p.w;
    g_.ho = p.ho;
    g_.wo = p.wo;
    g_.pt = p.pt;
    g_.pl = p.pl;
    g_.th = (p.ho + 1) / 2;
    g_.tw = (p.wo + 1) / 2;
    g_.count = p.n * g_.th * g_.tw;
    const Operand& w = spec.inputs[1];
    if (!w.constant || !w.format.empty() || w.dtype != storage_ ||
        w.constant_bytes != static_cast<size_t>(k_ * c_ * 9) * DTypeSize(storage_)) {
      return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': ", id, " needs the plain ",
                                                     DTypeName(storage_), " weights as a constant"));
    }
    // U = G g G^T per (output, input) channel pair, from the plain weights (rounded to bf16 for a
    // bf16 domain).
    std::vector<float> g(static_cast<size_t>(k_ * c_ * 9));
    LoadF32(storage_, w.constant, g.data(), static_cast<int64_t>(g.size()));
    std::vector<float> u(static_cast<size_t>(16 * c_ * k_));
    for (int64_t o = 0; o < k_; ++o) {
      for (int64_t ch = 0; ch < c_; ++ch) {
        const float* f = &g[static_cast<size_t>((o * c_ + ch) * 9)];
        float pts[16];
        own::WinogradFilter(f, pts);
        for (int point = 0; point < 16; ++point) u[static_cast<size_t>((point * c_ + ch) * k_ + o)] = pts[point];
      }
    }
    std::vector<uint16_t> ub;
    if (!f32_) {
      ub.resize(u.size());
      StoreF32(DType::kBF16, u.data(), reinterpret_cast<uint8_t*>(ub.data()), static_cast<int64_t>(u.size()));
    }
    const dt vdt = f32_ ? dt::f32 : dt::bf16;
    // Blocks of at most kBlockTiles tiles, as even as possible: one matmul per block size.
    const int64_t max_block = f32_ ? kBlockTilesF32 : kBlockTiles;
    const int64_t blocks = (g_.count + max_block - 1) / max_block;
    block_ = (g_.count + blocks - 1) / blocks;
    const int64_t last = g_.count - (blocks - 1) * block_;
    try {
      SetThreads(threads_);
      const memory::desc plain_u({16, c_, k_}, vdt, tag::abc);
      auto make = [&](int64_t rows) {
        return dnnl::matmul::primitive_desc(
            dnnl::matmul::desc(memory::desc({16, rows, c_}, vdt, tag::abc), memory::desc({16, c_, k_}, vdt, tag::any),
                               memory::desc({16, rows, k_}, dt::f32, tag::abc)),
            Engine());
      };
      dnnl::matmul::primitive_desc full = make(block_), tail = make(last);
      if (full.weights_desc() != tail.weights_desc()) {
        return absl::InternalError(absl::StrCat("node '", spec.name, "': Winograd blocks of ", block_, " and ", last,
                                                " tiles want different weight layouts"));
      }
      u_ = AlignedArray<uint8_t>(full.weights_desc().get_size());
      if (!u_) return absl::ResourceExhaustedError(absl::StrCat("node '", spec.name, "': weights"));
      v_bytes_ = Align64(static_cast<size_t>(16 * block_ * c_) * (f32_ ? 4 : 2));
      m_bytes_ = static_cast<size_t>(16 * block_ * k_ * 4);
      dnnl::stream s(Engine());
      memory from(plain_u, Engine(), f32_ ? static_cast<void*>(u.data()) : static_cast<void*>(ub.data()));
      memory to(full.weights_desc(), Engine(), u_.data());
      dnnl::reorder(from, to).execute(s, from, to);
      s.wait();
      stream_ = dnnl::stream(Engine());
      for (const dnnl::matmul::primitive_desc* pd : {&full, &tail}) {
        Block b;
        b.prim = dnnl::matmul(*pd);
        b.args = {{DNNL_ARG_SRC, memory(pd->src_desc(), Engine(), DNNL_MEMORY_NONE)},
                  {DNNL_ARG_WEIGHTS, memory(pd->weights_desc(), Engine(), u_.data())},
                  {DNNL_ARG_DST, memory(pd->dst_desc(), Engine(), DNNL_MEMORY_NONE)}};
        matmuls_.push_back(std::move(b));
      }
    } catch (const dnnl::error& e) {
      return absl::InternalError(absl::StrCat("node '", spec.name, "': oneDNN: ", e.what()));
    }
    bias_.assign(static_cast<size_t>(k_), 0.0f);
    return absl::OkStatus();
  }

  int64_t WorkspaceBytes() const override { return static_cast<int64_t>(v_bytes_ + m_bytes_); }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    if (!own_workspace_) own_workspace_ = AlignedArray<uint8_t>(v_bytes_ + m_bytes_);
    if (!own_workspace_) return absl::ResourceExhaustedError(absl::StrCat("node '", name_, "': workspace"));
    return RunWithWorkspace(inputs, outputs, {own_workspace_.data(), v_bytes_ + m_bytes_});
  }

  absl::Status RunWithWorkspace(std::span<const void* const> inputs, std::span<void* const> outputs,
                                std::span<uint8_t> workspace) override {
    if (workspace.size() < v_bytes_ + m_bytes_) {
      return absl::InternalError(absl::StrCat("node '", name_, "': workspace of ", workspace.size(),
                                              " bytes, expected ", v_bytes_ + m_bytes_));
    }
    const void* x = inputs[0];
    void* y = outputs[0];
    if (has_bias_) LoadF32(storage_, inputs[kBiasInput], bias_.data(), k_);
    const bool bf16 = storage_ == DType::kBF16;
    const auto* m = reinterpret_cast<const float*>(workspace.data() + v_bytes_);
    for (Block& b : matmuls_) {
      b.args.at(DNNL_ARG_SRC).set_data_handle(workspace.data());
      b.args.at(DNNL_ARG_DST).set_data_handle(workspace.data() + v_bytes_);
    }
    for (int64_t base = 0; base < g_.count; base += block_) {
      const int64_t rows = std::min(block_, g_.count - base);
      const int64_t parts = std::min<int64_t>(rows, 16 * threads_);
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
      for (int64_t i = 0; i < parts; ++i) {
        const int64_t t0 = base + rows * i / parts, t1 = base + rows * (i + 1) / parts;
        if (f32_) {
          own::WinogradInputTilesF32(g_, bf16, x, c_, base, rows, t0, t1, reinterpret_cast<float*>(workspace.data()));
        } else {
          own::avx512::WinogradInputTiles(g_, static_cast<const uint16_t*>(x), c_, base, rows, t0, t1,
                                          reinterpret_cast<uint16_t*>(workspace.data()));
        }
      }
      try {
        SetThreads(threads_);
        Block& b = matmuls_[rows == block_ ? 0 : 1];
        b.prim.execute(stream_, b.args);
        stream_.wait();
      } catch (const dnnl::error& e) {
        return absl::InternalError(absl::StrCat("node '", name_, "': oneDNN: ", e.what()));
      }
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
      for (int64_t i = 0; i < parts; ++i) {
        const int64_t t0 = base + rows * i / parts, t1 = base + rows * (i + 1) / parts;
        const float* bias = has_bias_ ? bias_.data() : nullptr;
        if (f32_) {
          own::WinogradOutputTilesF32(g_, m, k_, base, rows, t0, t1, bias, relu_, bf16, y);
        } else {
          own::avx512::WinogradOutputTiles(g_, m, k_, base, rows, t0, t1, bias, relu_, static_cast<uint16_t*>(y));
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  std::string name_;
  int threads_ = 1;
  bool f32_ = false;  // f32 V and U
  DType storage_ = DType::kBF16;
  int64_t c_ = 0, k_ = 0;
  bool relu_ = false, has_bias_ = false;
  struct Block {
    dnnl::matmul prim;
    std::unordered_map<int, memory> args;
  };
  own::WinogradTiles g_;
  int64_t block_ = 0;  // tiles per block (the last may have fewer)
  std::vector<float> bias_;
  AlignedArray<uint8_t> u_;              // U for the matmuls
  size_t v_bytes_ = 0, m_bytes_ = 0;     // V (rounded up to 64 bytes) and M of one block, in the workspace
  AlignedArray<uint8_t> own_workspace_;  // Run without a session's workspace (kernel tests)
  dnnl::stream stream_;
  std::vector<Block> matmuls_;  // [0]: a full block, [1]: the last
};

}  // namespace

namespace {

CpuEntry WinogradF2Entry(bool f32_domain) {
  CpuEntry e;
  e.id = f32_domain ? "cpu.onednn.winograd_2x2" : "cpu.onednn.winograd_bf16";
  e.ops = {"FusedConv"};
  e.params = ConvParamSpecs();
  const std::string version = absl::StrCat(dnnl_version()->major, ".", dnnl_version()->minor);
  e.description =
      f32_domain ? absl::StrCat(
                       "f32 Winograd F(2x2, 3x3) for CPUs without AVX-512 (3x3 stride 1, >= 64 channels, >= 40 "
                       "tiles per image, no residual, none or ReLU; f32, or bf16 widened) at batches giving >= ",
                       kMinTilesF32, " tiles: own transforms around a batched oneDNN ", version,
                       " f32 matmul over the 16 points per block of tiles; the own AVX2 direct convolution below")
                 : absl::StrCat("bf16 Winograd F(2x2, 3x3) (3x3 stride 1, >= 64 channels, >= ", kMinTilesPerImage,
                                " tiles per image, no residual, none or ReLU) at every batch: own AVX-512 transforms "
                                "around a batched oneDNN ",
                                version, " bf16 matmul over the 16 points per block of tiles");
  const int64_t min_tiles = f32_domain ? kMinTilesF32 : kMinTiles;
  const int64_t block = f32_domain ? kBlockTilesF32 : kBlockTiles;
  e.accepts = [f32_domain, min_tiles, block](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<ConvParams> p = ParseWinogradF2(spec, f32_domain, &why);
    if (!p) return std::nullopt;
    // The batches up to this spec's (the plan's largest) at which the transform runs. A session
    // accepts the step at every batch, so whether it does cannot depend on the batch.
    const int64_t per = WinogradTilesPerImage(*p);
    const int64_t lo = (min_tiles + per - 1) / per;
    absl::StatusOr<Design> d = ConvDesign(spec, *p);
    if (!d.ok()) return std::nullopt;
    // Below those batches the direct convolution: on CPUs without AVX-512 (the f32 domain) the own
    // AVX2 one, which ran ResNet-50's 14x14x256 layer at batch 1 (49 tiles) at 188 GFLOP/s where
    // this Winograd reached 170 and oneDNN's direct convolution 176 (tools/bench/gemm_backends).
    const std::string direct =
        f32_domain ? absl::StrCat("own AVX2 implicit-GEMM convolution",
                                  p->dtype == DType::kBF16 ? ", bf16 storage widened to f32" : "")
                   : absl::StrCat("oneDNN convolution ", d->pd.impl_info_str(), ThroughF32Note(p->dtype));
    const std::string head = absl::StrCat(f32_domain ? "f32" : "bf16", " Winograd F(2x2, 3x3) in blocks of <= ", block,
                                          " tiles (", per, " per image) at batch >= ", lo);
    if (lo > p->n) {
      return absl::StrCat(head, ", so at this plan's batch", p->n > 1 ? absl::StrCat("es 1-", p->n) : " 1", ": ",
                          direct, " (", DescribeConv(*p), ")");
    }
    const std::string how =
        f32_domain ? absl::StrCat("own transforms (", CpuIsa(), ")", p->dtype == DType::kBF16 ? " widening bf16" : "",
                                  ", batched oneDNN f32 matmul")
                   : "own AVX-512 transforms, batched oneDNN matmul";
    return absl::StrCat(head, ": ", how, lo > 1 ? absl::StrCat("; batch 1-", lo - 1, ": ", direct) : "", " (",
                        DescribeConv(*p), ")");
  };
  e.pack = [f32_domain](const KernelSpec& spec, size_t index) -> absl::StatusOr<Packed> {
    std::string why;
    if (!ParseWinogradF2(spec, f32_domain, &why)) return Declined(spec, why);
    const Operand& o = spec.inputs[index];
    Packed packed;  // plain: the session transforms the weights for its batch's matmul
    packed.bytes.assign(o.constant, o.constant + o.constant_bytes);
    return packed;
  };
  e.create = [f32_domain, min_tiles](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::string why;
    std::optional<ConvParams> p = ParseWinogradF2(spec, f32_domain, &why);
    if (!p) return Declined(spec, why);
    const int64_t tiles = p->n * WinogradTilesPerImage(*p);
    if (tiles < min_tiles) {  // this batch: the direct convolution, as the reason says
      if (f32_domain) return own::Avx2ConvEntry().create(spec);
      SetThreads(spec.threads);
      ASSIGN_OR_RETURN(Design d, ConvDesign(spec, *p));
      return MakeKernel(spec, *p, d, 1.0f);
    }
    auto k = std::make_unique<WinogradF2Kernel>();
    RETURN_IF_ERROR(k->Init(spec, *p, f32_domain));
    return std::unique_ptr<ShapedKernel>(std::move(k));
  };
  return e;
}

}  // namespace

CpuEntry OneDnnWinogradBf16Entry() { return WinogradF2Entry(false); }
CpuEntry OneDnnWinograd2x2Entry() { return WinogradF2Entry(true); }

CpuEntry OneDnnConvEntry() {
  CpuEntry e;
  e.id = "cpu.onednn.conv";
  e.ops = {"FusedConv"};
  e.params = ConvParamSpecs();
  e.in_place = {{0, 3}};
  e.description = absl::StrCat("oneDNN ", dnnl_version()->major, ".", dnnl_version()->minor,
                               " convolution (NHWC/NCHW activations), weights reordered to its preferred layout, "
                               "bias + residual (sum, or binary add for bf16) + activation as post-ops");
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<ConvParams> p = ParseConv(spec, &why);
    if (!p || !DtypesSupported(p->dtype)) return std::nullopt;
    absl::StatusOr<Design> d = ConvDesign(spec, *p);
    if (!d.ok()) return std::nullopt;
    return absl::StrCat("oneDNN convolution ", d->pd.impl_info_str(), " (", DescribeConv(*p), ")",
                        ThroughF32Note(p->dtype));
  };
  e.pack = [](const KernelSpec& spec, size_t index) -> absl::StatusOr<Packed> {
    std::string why;
    std::optional<ConvParams> p = ParseConv(spec, &why);
    if (!p) return Declined(spec, why);
    ASSIGN_OR_RETURN(Design d, ConvDesign(spec, *p));
    return PackWeights(spec, index, d, 1.0f);
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::string why;
    std::optional<ConvParams> p = ParseConv(spec, &why);
    if (!p) return Declined(spec, why);
    SetThreads(spec.threads);
    ASSIGN_OR_RETURN(Design d, ConvDesign(spec, *p));
    return MakeKernel(spec, *p, d, 1.0f);
  };
  return e;
}

// ---- Patch embeddings as matmuls ------------------------------------------------------------
// A convolution whose kernel tiles its input (kernel == stride, no padding or dilation, one group:
// ViT's 16x16/16 patch embedding) is one GEMM: each output pixel's patch, gathered as kh runs of
// kw * C contiguous NHWC values into a row of the workspace, times the weights as [Cout, kh*kw*C]
// (permuted from OIHW when packed). oneDNN 2.6's direct convolution ran that layer at 290-303
// GFLOP/s in bf16 and 188-200 in f32 against 420-446 and 210-214 for its matmul on the same
// M x 768 x 768 shape (ViT-B/16, batch 1 and 8, 2 threads, Zen 5; build/tools/bench/gemm_backends).
// Only on CPUs with AVX-512 and for storage the matmul runs natively (f32, or bf16 there): the
// AVX2 entries take patch embeddings below AVX-512.
// `conv` receives the convolution's parameters.
std::optional<GemmParams> PatchGemm(const KernelSpec& spec, std::string* why, ConvParams* conv) {
  std::optional<ConvParams> p = ParseConv(spec, why);
  if (!p) return std::nullopt;
  if (!p->nhwc || p->group != 1 || p->kh != p->sh || p->kw != p->sw || p->dh != 1 || p->dw != 1 || p->pt != 0 ||
      p->pl != 0 || p->pb != 0 || p->pr != 0 || p->kh * p->kw == 1 || p->wdtype != p->dtype ||
      !DtypesSupported(p->dtype) || ThroughF32(p->dtype) || own::CpuSimdLevel() < own::SimdLevel::kAvx512) {
    *why = "not an NHWC patch embedding (kernel == stride > 1, no padding, dilation or groups) in native storage";
    return std::nullopt;
  }
  GemmParams g;
  g.m = p->n * p->ho * p->wo;
  g.k = p->kh * p->kw * p->c;
  g.n = p->cout;
  g.trans_b = true;
  g.dtype = p->dtype;
  g.wdtype = p->wdtype;
  g.epi = p->epi;
  *conv = *p;
  return g;
}

// The OIHW weights of `spec` as [Cout, kh, kw, C] (the GEMM's transposed B): `spec` with input 1
// pointing at `storage`.
KernelSpec PatchWeightsSpec(const KernelSpec& spec, const ConvParams& p, std::vector<uint8_t>* storage) {
  const Operand& w = spec.inputs[1];
  const size_t es = DTypeSize(w.dtype);
  KernelSpec out = spec;
  if (w.constant == nullptr || w.constant_bytes != static_cast<size_t>(p.cout * p.c * p.kh * p.kw) * es) return out;
  storage->resize(w.constant_bytes);
  for (int64_t o = 0; o < p.cout; ++o)
    for (int64_t ci = 0; ci < p.c; ++ci)
      for (int64_t i = 0; i < p.kh; ++i)
        for (int64_t j = 0; j < p.kw; ++j) {
          const int64_t from = ((o * p.c + ci) * p.kh + i) * p.kw + j, to = ((o * p.kh + i) * p.kw + j) * p.c + ci;
          std::memcpy(storage->data() + to * es, w.constant + from * es, es);
        }
  out.inputs[1].constant = storage->data();
  out.inputs[1].dims = {p.cout, p.kh * p.kw * p.c};
  return out;
}

class PatchKernel : public ShapedKernel {
 public:
  PatchKernel(const ConvParams& p, std::unique_ptr<ShapedKernel> gemm, int threads)
      : p_(p), gemm_(std::move(gemm)), threads_(std::max(1, threads)) {
    rows_bytes_ = Align64(static_cast<size_t>(p_.n * p_.ho * p_.wo * p_.kh * p_.kw * p_.c) * DTypeSize(p_.dtype));
  }

  int64_t WorkspaceBytes() const override { return gemm_->WorkspaceBytes() + static_cast<int64_t>(rows_bytes_); }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    if (!own_workspace_) own_workspace_ = AlignedArray<uint8_t>(static_cast<size_t>(WorkspaceBytes()));
    if (!own_workspace_) return absl::ResourceExhaustedError("patch embedding: workspace");
    return RunWithWorkspace(inputs, outputs, {own_workspace_.data(), static_cast<size_t>(WorkspaceBytes())});
  }

  absl::Status RunWithWorkspace(std::span<const void* const> inputs, std::span<void* const> outputs,
                                std::span<uint8_t> workspace) override {
    if (workspace.size() < static_cast<size_t>(WorkspaceBytes())) {
      return absl::InternalError("patch embedding: workspace too small");
    }
    uint8_t* rows = workspace.data() + gemm_->WorkspaceBytes();
    const auto* x = static_cast<const uint8_t*>(inputs[0]);
    const size_t es = DTypeSize(p_.dtype);
    const int64_t run = p_.kw * p_.c, k = p_.kh * run, patches = p_.n * p_.ho * p_.wo;
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
    for (int64_t r = 0; r < patches; ++r) {
      const int64_t b = r / (p_.ho * p_.wo), oh = r / p_.wo % p_.ho, ow = r % p_.wo;
      for (int64_t i = 0; i < p_.kh; ++i) {
        const int64_t src = ((b * p_.h + oh * p_.kh + i) * p_.w + ow * p_.kw) * p_.c;
        std::memcpy(rows + (r * k + i * run) * es, x + src * es, static_cast<size_t>(run) * es);
      }
    }
    std::vector<const void*> in(inputs.begin(), inputs.end());
    in[0] = rows;
    return gemm_->RunWithWorkspace(in, outputs, workspace.first(static_cast<size_t>(gemm_->WorkspaceBytes())));
  }

 private:
  ConvParams p_;
  std::unique_ptr<ShapedKernel> gemm_;
  int threads_;
  size_t rows_bytes_ = 0;
  AlignedArray<uint8_t> own_workspace_;
};

CpuEntry OneDnnPatchEntry() {
  CpuEntry e;
  e.id = "cpu.onednn.patch";
  e.ops = {"FusedConv"};
  e.params = ConvParamSpecs();
  e.in_place = {{0, 3}};
  e.description = absl::StrCat("oneDNN ", dnnl_version()->major, ".", dnnl_version()->minor,
                               " matmul of NHWC patch embeddings (kernel == stride): patches gathered into rows, "
                               "weights as [Cout, kh*kw*C]");
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    ConvParams p;
    std::optional<GemmParams> g = PatchGemm(spec, &why, &p);
    if (!g) return std::nullopt;
    absl::StatusOr<Design> d = GemmDesign(spec, *g);
    if (!d.ok()) return std::nullopt;
    return absl::StrCat("oneDNN matmul ", d->pd.impl_info_str(), " on patches gathered into rows (", DescribeConv(p),
                        " as ", DescribeGemm(*g), ")", GeluPassNote(*d));
  };
  e.pack = [](const KernelSpec& spec, size_t index) -> absl::StatusOr<Packed> {
    std::string why;
    ConvParams p;
    std::optional<GemmParams> g = PatchGemm(spec, &why, &p);
    if (!g) return Declined(spec, why);
    ASSIGN_OR_RETURN(Design d, GemmDesign(spec, *g));
    std::vector<uint8_t> permuted;
    return PackWeights(PatchWeightsSpec(spec, p, &permuted), index, d, 1.0f);
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::string why;
    ConvParams p;
    std::optional<GemmParams> g = PatchGemm(spec, &why, &p);
    if (!g) return Declined(spec, why);
    SetThreads(spec.threads);
    ASSIGN_OR_RETURN(Design d, GemmDesign(spec, *g));
    // Weights stored plain (not packed) are permuted here; packed ones are already [Cout, K].
    std::vector<uint8_t> permuted;
    const KernelSpec gemm_spec = spec.inputs[1].format.empty() ? PatchWeightsSpec(spec, p, &permuted) : spec;
    ASSIGN_OR_RETURN(std::unique_ptr<ShapedKernel> gemm, MakeKernel(gemm_spec, *g, d, 1.0f));
    return std::unique_ptr<ShapedKernel>(new PatchKernel(p, std::move(gemm), spec.threads));
  };
  return e;
}

CpuEntry OneDnnWinogradEntry() {
  CpuEntry e;
  e.id = "cpu.onednn.winograd";
  e.ops = {"FusedConv"};
  e.params = ConvParamSpecs();
  e.description = absl::StrCat("oneDNN ", dnnl_version()->major, ".", dnnl_version()->minor,
                               " Winograd convolution (f32 3x3 stride 1, >= 64 channels, >= 14x14 outputs, no "
                               "residual) on blocked activations reordered from and to NHWC, bias + activation as "
                               "post-ops");
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<ConvParams> p = ParseWinograd(spec, &why);
    if (!p) return std::nullopt;
    absl::StatusOr<Design> d = WinogradDesign(spec, *p);
    if (!d.ok()) return std::nullopt;
    return absl::StrCat("oneDNN Winograd convolution ", d->pd.impl_info_str(), " at batch ", p->n,
                        ", NHWC <-> blocked reorders (", DescribeConv(*p), ")");
  };
  e.pack = [](const KernelSpec& spec, size_t index) -> absl::StatusOr<Packed> {
    std::string why;
    if (!ParseWinograd(spec, &why)) return Declined(spec, why);
    const Operand& o = spec.inputs[index];
    Packed packed;  // plain: the session's implementation picks the weights layout
    packed.bytes.assign(o.constant, o.constant + o.constant_bytes);
    return packed;
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::string why;
    std::optional<ConvParams> p = ParseWinograd(spec, &why);
    if (!p) return Declined(spec, why);
    SetThreads(spec.threads);
    ASSIGN_OR_RETURN(Design d, WinogradDesign(spec, *p));
    auto k = std::make_unique<WinogradKernel>();
    RETURN_IF_ERROR(k->Init(spec, *p, d));
    return std::unique_ptr<ShapedKernel>(std::move(k));
  };
  return e;
}

CpuEntry OneDnnGemmEntry() { return GemmLikeEntry("cpu.onednn.gemm", "FusedGemm"); }
CpuEntry OneDnnMatMulEntry() { return GemmLikeEntry("cpu.onednn.matmul", "MatMul"); }

}  // namespace gcomp::cpu::blas

namespace gcomp::cpu {

std::string CpuIsa() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41:
      return "sse41";
    case dnnl_cpu_isa_avx:
      return "avx";
    case dnnl_cpu_isa_avx2:
      return "avx2";
    case dnnl_cpu_isa_avx2_vnni:
      return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic:
      return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops:
      return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core:
      return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx:
      return "avx512_core_amx";
    default:
      return absl::StrCat("isa_0x", absl::Hex(static_cast<int>(dnnl_get_effective_cpu_isa())));
  }
}

}  // namespace gcomp::cpu
