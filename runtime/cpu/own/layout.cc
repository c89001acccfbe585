// Data movement: cpu.transpose (any permutation; dims of size 1 dropped and input axes that stay
// adjacent merged, then either contiguous runs copied with memcpy or 2-D tiles transposed),
// cpu.slice (constant starts/ends/axes/steps; trailing whole axes merged into contiguous runs)
// and cpu.concat (one memcpy per input and outer index). Any dtype: elements are moved as bytes.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/slice.h"
#include "runtime/cpu/own/common.h"
#include "runtime/op_geometry.h"

namespace gcomp::cpu::own {
namespace {

bool MovableSize(size_t es) { return es == 1 || es == 2 || es == 4 || es == 8; }

// ---- Transpose ----------------------------------------------------------------------------

struct TransposePlan {
  size_t es = 4;
  int64_t total = 0;
  std::vector<int64_t> in_dims, perm;  // collapsed
};

// Drops unit dims and merges input axes that stay adjacent in the output.
TransposePlan CollapseTranspose(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm, size_t es) {
  TransposePlan p;
  p.es = es;
  p.total = NumElements(dims);
  std::vector<int64_t> renumber(dims.size(), -1);
  std::vector<int64_t> kept_dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != 1) {
      renumber[i] = static_cast<int64_t>(kept_dims.size());
      kept_dims.push_back(dims[i]);
    }
  }
  std::vector<int64_t> kept_perm;
  for (int64_t a : perm) {
    if (renumber[a] >= 0) kept_perm.push_back(renumber[a]);
  }
  // Groups of output positions whose input axes are consecutive.
  std::vector<std::pair<int64_t, int64_t>> groups;  // (first input axis, last input axis), output order
  for (int64_t a : kept_perm) {
    if (!groups.empty() && groups.back().second + 1 == a) {
      groups.back().second = a;
    } else {
      groups.push_back({a, a});
    }
  }
  std::vector<size_t> by_input(groups.size());
  std::iota(by_input.begin(), by_input.end(), 0);
  std::sort(by_input.begin(), by_input.end(), [&](size_t x, size_t y) { return groups[x].first < groups[y].first; });
  std::vector<int64_t> new_axis(groups.size());
  for (size_t k = 0; k < by_input.size(); ++k) {
    const auto& g = groups[by_input[k]];
    int64_t d = 1;
    for (int64_t a = g.first; a <= g.second; ++a) d *= kept_dims[a];
    p.in_dims.push_back(d);
    new_axis[by_input[k]] = static_cast<int64_t>(k);
  }
  for (size_t g = 0; g < groups.size(); ++g) p.perm.push_back(new_axis[g]);
  return p;
}

template <typename T>
void TiledTranspose(const TransposePlan& p, const T* src, T* dst, int threads) {
  const int64_t r = static_cast<int64_t>(p.in_dims.size());
  std::vector<int64_t> od(r);
  for (int64_t k = 0; k < r; ++k) od[k] = p.in_dims[p.perm[k]];
  const std::vector<int64_t> is = RowMajorStrides(p.in_dims), os = RowMajorStrides(od);
  int64_t qa = 0;  // output position of the input's last axis
  while (p.perm[qa] != r - 1) ++qa;
  const int64_t b_axis = p.perm[r - 1];  // input axis of the output's last axis
  const int64_t na = p.in_dims[r - 1], nb = p.in_dims[b_axis];
  const int64_t a_dst_stride = os[qa], b_src_stride = is[b_axis];
  std::vector<int64_t> outer_pos;  // output positions iterated outside the tile
  for (int64_t k = 0; k < r - 1; ++k) {
    if (k != qa) outer_pos.push_back(k);
  }
  int64_t outer = 1;
  for (int64_t k : outer_pos) outer *= od[k];
  constexpr int64_t kTile = 32;
  const int64_t ta = (na + kTile - 1) / kTile, tb = (nb + kTile - 1) / kTile;
  const int64_t tasks = outer * ta * tb;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && tasks > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    int64_t o = t / (ta * tb);
    const int64_t tile = t % (ta * tb);
    const int64_t a0 = (tile / tb) * kTile, b0 = (tile % tb) * kTile;
    int64_t sbase = 0, dbase = 0;
    for (int64_t k = static_cast<int64_t>(outer_pos.size()) - 1; k >= 0; --k) {
      const int64_t pos = outer_pos[k];
      const int64_t idx = o % od[pos];
      o /= od[pos];
      sbase += idx * is[p.perm[pos]];
      dbase += idx * os[pos];
    }
    const int64_t a1 = std::min(na, a0 + kTile), b1 = std::min(nb, b0 + kTile);
    for (int64_t a = a0; a < a1; ++a) {
      T* d = dst + dbase + a * a_dst_stride;
      const T* s = src + sbase + a;
      for (int64_t b = b0; b < b1; ++b) d[b] = s[b * b_src_stride];
    }
  }
}

// [outer, NB, na] -> [outer, na, NB] for a handful of rows (an image's NCHW channels into NHWC
// pixels): NB rows read in step, each output pixel written whole. The tiled form spends a 32x3
// tile's bookkeeping on every 96 elements; this one runs ResNet-50's input at batch 8 in a third
// of its time (README, "CPU runtime and plans").
template <typename T, int NB>
void InterleaveRows(const T* src, T* dst, int64_t outer, int64_t na, int threads) {
  constexpr int64_t kChunk = 4096;
  const int64_t chunks = (na + kChunk - 1) / kChunk, tasks = outer * chunks;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && tasks > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t o = t / chunks, a0 = (t % chunks) * kChunk, a1 = std::min(na, a0 + kChunk);
    const T* s = src + o * NB * na;
    T* d = dst + o * NB * na;
    for (int64_t a = a0; a < a1; ++a) {
      for (int b = 0; b < NB; ++b) d[a * NB + b] = s[b * na + a];
    }
  }
}

// Whether RunTranspose takes InterleaveRows: the last two axes swapped, 2 to 4 rows, 2- or 4-byte
// elements.
bool Interleaves(const TransposePlan& p) {
  const int64_t r = static_cast<int64_t>(p.in_dims.size());
  if (r < 2 || (p.es != 2 && p.es != 4) || p.total == 0) return false;
  for (int64_t k = 0; k + 2 < r; ++k) {
    if (p.perm[k] != k) return false;
  }
  return p.perm[r - 1] == r - 2 && p.perm[r - 2] == r - 1 && p.in_dims[r - 2] >= 2 && p.in_dims[r - 2] <= 4;
}

template <typename T>
bool Interleave(const TransposePlan& p, const T* src, T* dst, int threads) {
  if (!Interleaves(p)) return false;
  const int64_t r = static_cast<int64_t>(p.in_dims.size());
  const int64_t nb = p.in_dims[r - 2], na = p.in_dims[r - 1], outer = p.total / (nb * na);
  switch (nb) {
    case 2:
      InterleaveRows<T, 2>(src, dst, outer, na, threads);
      return true;
    case 3:
      InterleaveRows<T, 3>(src, dst, outer, na, threads);
      return true;
    case 4:
      InterleaveRows<T, 4>(src, dst, outer, na, threads);
      return true;
    default:
      return false;
  }
}

void RunTranspose(const TransposePlan& p, const uint8_t* src, uint8_t* dst, int threads) {
  const int64_t r = static_cast<int64_t>(p.in_dims.size());
  if (p.total == 0) return;
  if (r <= 1) {
    std::memcpy(dst, src, static_cast<size_t>(p.total) * p.es);
    return;
  }
  if (p.perm[r - 1] == r - 1) {  // contiguous runs of the last axis
    std::vector<int64_t> od(r);
    for (int64_t k = 0; k < r; ++k) od[k] = p.in_dims[p.perm[k]];
    const std::vector<int64_t> is = RowMajorStrides(p.in_dims);
    const int64_t run = p.in_dims[r - 1], rows = p.total / run;
    const size_t run_bytes = static_cast<size_t>(run) * p.es;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t row = 0; row < rows; ++row) {
      int64_t o = row, off = 0;
      for (int64_t k = r - 2; k >= 0; --k) {
        off += (o % od[k]) * is[p.perm[k]];
        o /= od[k];
      }
      std::memcpy(dst + row * run_bytes, src + off * static_cast<int64_t>(p.es), run_bytes);
    }
    return;
  }
  switch (p.es) {
    case 1:
      TiledTranspose(p, src, dst, threads);
      break;
    case 2:
      if (Interleave(p, reinterpret_cast<const uint16_t*>(src), reinterpret_cast<uint16_t*>(dst), threads)) break;
      TiledTranspose(p, reinterpret_cast<const uint16_t*>(src), reinterpret_cast<uint16_t*>(dst), threads);
      break;
    case 4:
      if (Interleave(p, reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst), threads)) break;
      TiledTranspose(p, reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst), threads);
      break;
    default:
      TiledTranspose(p, reinterpret_cast<const uint64_t*>(src), reinterpret_cast<uint64_t*>(dst), threads);
  }
}

std::optional<TransposePlan> ResolveTranspose(const KernelSpec& spec) {
  if (spec.inputs.size() != 1 || spec.outputs.size() != 1 || !spec.inputs[0].present || !PresentAndNotInPlace(spec)) {
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> perm = runtime::ResolvePerm(spec);
  const size_t es = DTypeSize(spec.inputs[0].dtype);
  if (!perm || !MovableSize(es) || perm->size() > 8) return std::nullopt;
  return CollapseTranspose(spec.inputs[0].dims, *perm, es);
}

class TransposeKernel : public ShapedKernel {
 public:
  TransposeKernel(TransposePlan p, int threads) : p_(std::move(p)), threads_(std::max(1, threads)) {}
  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    RunTranspose(p_, static_cast<const uint8_t*>(inputs[0]), static_cast<uint8_t*>(outputs[0]), threads_);
    return absl::OkStatus();
  }

 private:
  TransposePlan p_;
  int threads_;
};

// ---- Slice --------------------------------------------------------------------------------

using runtime::SliceAxisPlan;

struct SlicePlan {
  size_t es = 4;
  std::vector<SliceAxisPlan> axes;  // collapsed
  int64_t total = 0;
};

std::optional<SlicePlan> ResolveSlice(const KernelSpec& spec) {
  std::optional<std::vector<SliceAxisPlan>> axes = runtime::ResolveSliceAxes(spec);
  if (!axes) return std::nullopt;
  const std::vector<SliceAxisPlan>& plan = *axes;
  const size_t es = DTypeSize(spec.inputs[0].dtype);
  if (!MovableSize(es)) return std::nullopt;
  std::vector<int64_t> out;
  for (const SliceAxisPlan& p : plan) out.push_back(p.count);
  SlicePlan s;
  s.es = es;
  s.total = NumElements(out);
  // Merge an axis sliced with step 1 with a following whole axis: one contiguous run.
  for (const SliceAxisPlan& p : plan) {
    if (p.dim == 1 && p.count == 1) continue;  // a unit axis moves nothing
    s.axes.push_back(p);
  }
  std::vector<SliceAxisPlan> merged;
  for (const SliceAxisPlan& p : s.axes) {
    if (!merged.empty() && p.start == 0 && p.step == 1 && p.count == p.dim && merged.back().step == 1) {
      SliceAxisPlan& m = merged.back();
      m = {m.dim * p.dim, m.start * p.dim, 1, m.count * p.dim};
    } else {
      merged.push_back(p);
    }
  }
  if (merged.empty()) merged.push_back({1, 0, 1, 1});
  s.axes = merged;
  return s;
}

class SliceKernel : public ShapedKernel {
 public:
  SliceKernel(SlicePlan p, int threads) : p_(std::move(p)), threads_(std::max(1, threads)) {}
  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    if (p_.total == 0) return absl::OkStatus();
    const auto* src = static_cast<const uint8_t*>(inputs[0]);
    auto* dst = static_cast<uint8_t*>(outputs[0]);
    const int64_t r = static_cast<int64_t>(p_.axes.size());
    std::vector<int64_t> dims;
    for (const SliceAxisPlan& a : p_.axes) dims.push_back(a.dim);
    const std::vector<int64_t> is = RowMajorStrides(dims);
    const SliceAxisPlan& last = p_.axes.back();
    const int64_t run = last.count, rows = p_.total / run;
    const int64_t es = static_cast<int64_t>(p_.es);
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
    for (int64_t row = 0; row < rows; ++row) {
      int64_t o = row, off = last.start;
      for (int64_t k = r - 2; k >= 0; --k) {
        const SliceAxisPlan& a = p_.axes[k];
        off += (a.start + (o % a.count) * a.step) * is[k];
        o /= a.count;
      }
      uint8_t* d = dst + row * run * es;
      const uint8_t* s = src + off * es;
      if (last.step == 1) {
        std::memcpy(d, s, static_cast<size_t>(run * es));
      } else {
        for (int64_t j = 0; j < run; ++j) std::memcpy(d + j * es, s + j * last.step * es, static_cast<size_t>(es));
      }
    }
    return absl::OkStatus();
  }

 private:
  SlicePlan p_;
  int threads_;
};

// ---- Concat -------------------------------------------------------------------------------

struct ConcatPlan {
  int64_t outer = 0;
  std::vector<int64_t> bytes;  // per input: bytes of one outer slice
  int64_t out_bytes = 0;       // bytes of one outer slice of the output
};

std::optional<ConcatPlan> ResolveConcat(const KernelSpec& spec) {
  if (!spec.params) return std::nullopt;
  if (spec.inputs.empty() || spec.outputs.size() != 1 || !PresentAndNotInPlace(spec)) return std::nullopt;
  const Operand& y = spec.outputs[0];
  const int64_t r = static_cast<int64_t>(y.dims.size());
  int64_t axis = spec.params->GetInt("axis", 0);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return std::nullopt;
  const int64_t es = static_cast<int64_t>(DTypeSize(y.dtype));
  ConcatPlan p;
  p.outer = 1;
  for (int64_t i = 0; i < axis; ++i) p.outer *= y.dims[i];
  int64_t inner = 1;
  for (int64_t i = axis + 1; i < r; ++i) inner *= y.dims[i];
  int64_t len = 0;
  for (const Operand& in : spec.inputs) {
    if (!in.present || in.dtype != y.dtype || static_cast<int64_t>(in.dims.size()) != r) return std::nullopt;
    for (int64_t i = 0; i < r; ++i) {
      if (i != axis && in.dims[i] != y.dims[i]) return std::nullopt;
    }
    len += in.dims[axis];
    p.bytes.push_back(in.dims[axis] * inner * es);
  }
  if (len != y.dims[axis]) return std::nullopt;
  p.out_bytes = len * inner * es;
  return p;
}

class ConcatKernel : public ShapedKernel {
 public:
  ConcatKernel(ConcatPlan p, int threads) : p_(std::move(p)), threads_(std::max(1, threads)) {
    int64_t off = 0;
    for (int64_t b : p_.bytes) {
      offsets_.push_back(off);
      off += b;
    }
  }
  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    auto* dst = static_cast<uint8_t*>(outputs[0]);
    const int64_t n = static_cast<int64_t>(p_.bytes.size()), tasks = p_.outer * n;
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1 && tasks > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t o = t / n, i = t % n;
      if (p_.bytes[i] == 0) continue;
      std::memcpy(dst + o * p_.out_bytes + offsets_[i], static_cast<const uint8_t*>(inputs[i]) + o * p_.bytes[i],
                  static_cast<size_t>(p_.bytes[i]));
    }
    return absl::OkStatus();
  }

 private:
  ConcatPlan p_;
  std::vector<int64_t> offsets_;
  int threads_;
};

}  // namespace

CpuEntry TransposeEntry() {
  CpuEntry e;
  e.id = "cpu.transpose";
  e.ops = {"Transpose"};
  e.params = {{"perm", AttrType::kInts}};
  e.description = "transpose: unit dims dropped, adjacent axes merged, memcpy runs, 2-4 rows interleaved or 32x32 tiles";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<TransposePlan> p = ResolveTranspose(spec);
    if (!p) return std::nullopt;
    return absl::StrCat("own transpose: collapsed to dims [", absl::StrJoin(p->in_dims, ","), "] perm [",
                        absl::StrJoin(p->perm, ","), "]", Interleaves(*p) ? ", rows interleaved" : "");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<TransposePlan> p = ResolveTranspose(spec);
    if (!p) return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.transpose does not run it"));
    return std::unique_ptr<ShapedKernel>(new TransposeKernel(std::move(*p), spec.threads));
  };
  return e;
}

CpuEntry SliceEntry() {
  CpuEntry e;
  e.id = "cpu.slice";
  e.ops = {"Slice"};
  e.params = {};
  e.description = "slice with constant starts/ends/axes/steps: strided copy of contiguous runs";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<SlicePlan> p = ResolveSlice(spec);
    if (!p) return std::nullopt;
    return absl::StrCat("own slice: runs of ", p->axes.back().count, " elements",
                        p->axes.back().step == 1 ? "" : " (strided)");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<SlicePlan> p = ResolveSlice(spec);
    if (!p) return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.slice does not run it"));
    return std::unique_ptr<ShapedKernel>(new SliceKernel(std::move(*p), spec.threads));
  };
  return e;
}

CpuEntry ConcatEntry() {
  CpuEntry e;
  e.id = "cpu.concat";
  e.ops = {"Concat"};
  e.params = {{"axis", AttrType::kInt, true}};
  e.description = "concat: one memcpy per input and outer index";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<ConcatPlan> p = ResolveConcat(spec);
    if (!p) return std::nullopt;
    return absl::StrCat("own concat: ", p->bytes.size(), " inputs, ", p->outer, " outer slices");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<ConcatPlan> p = ResolveConcat(spec);
    if (!p) return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.concat does not run it"));
    return std::unique_ptr<ShapedKernel>(new ConcatKernel(std::move(*p), spec.threads));
  };
  return e;
}

}  // namespace gcomp::cpu::own
