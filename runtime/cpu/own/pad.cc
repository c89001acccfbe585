// cpu.pad: ONNX Pad in its canonical form (attributes mode, pads, value, axes; the pads known at
// compile time) for any rank and element type: constant (negative pads crop), reflect, edge and
// wrap (non-negative pads). Each output row (all axes but the last) maps to one input row per axis, or to the constant;
// inside a row the uncovered prefix and suffix are filled and the covered middle is one memcpy
// (constant mode) or an index per element (the others).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cpu/own/common.h"

namespace gcomp::cpu::own {
namespace {

enum class Mode { kConstant, kReflect, kEdge, kWrap };

struct PadPlan {
  Mode mode = Mode::kConstant;
  size_t es = 4;
  std::vector<int64_t> in, out, begin;  // per axis
  std::vector<uint8_t> value;           // one element of the constant, es bytes
};

// Input coordinate of output coordinate `o` along an axis (extent n, `b` padded before), or -1 for
// the constant.
int64_t Source(Mode mode, int64_t o, int64_t b, int64_t n) {
  const int64_t i = o - b;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case Mode::kConstant:
      return -1;
    case Mode::kEdge:
      return std::clamp<int64_t>(i, 0, n - 1);
    case Mode::kWrap:
      return ((i % n) + n) % n;
    case Mode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < n ? m : period - m;
    }
  }
  return -1;
}

std::optional<PadPlan> ResolvePad(const KernelSpec& spec) {
  if (!spec.params || spec.inputs.size() != 1 || spec.outputs.size() != 1 || !spec.inputs[0].present ||
      !PresentAndNotInPlace(spec)) {
    return std::nullopt;  // pads, value or axes as inputs: known only at run time
  }
  const Attributes& a = *spec.params;
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  const int64_t r = static_cast<int64_t>(x.dims.size());
  if (x.dtype != y.dtype || y.dims.size() != x.dims.size() || r == 0) return std::nullopt;
  PadPlan p;
  const std::string mode = a.GetString("mode", "constant");
  if (mode == "constant") {
    p.mode = Mode::kConstant;
  } else if (mode == "reflect") {
    p.mode = Mode::kReflect;
  } else if (mode == "edge") {
    p.mode = Mode::kEdge;
  } else if (mode == "wrap") {
    p.mode = Mode::kWrap;
  } else {
    return std::nullopt;
  }
  std::vector<int64_t> axes = a.GetInts("axes", {});
  if (axes.empty()) {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  const std::vector<int64_t> given = a.GetInts("pads", {});
  if (given.size() != 2 * axes.size()) return std::nullopt;
  std::vector<int64_t> begin(r, 0), end(r, 0);
  std::vector<bool> seen(r, false);
  for (size_t j = 0; j < axes.size(); ++j) {
    const int64_t ax = axes[j] < 0 ? axes[j] + r : axes[j];
    if (ax < 0 || ax >= r || seen[ax]) return std::nullopt;
    seen[ax] = true;
    begin[ax] = given[j];
    end[ax] = given[j + axes.size()];
  }
  for (int64_t i = 0; i < r; ++i) {
    int64_t want = 0;
    if (__builtin_add_overflow(x.dims[i], begin[i], &want) || __builtin_add_overflow(want, end[i], &want) ||
        y.dims[i] != want || want < 0) {
      return std::nullopt;
    }
    // Reflect, edge and wrap read the input along a padded axis: it must not be empty. A negative
    // pad there (crop one side, pad the other) is not this kernel's: ONNX Runtime crops first.
    if (p.mode != Mode::kConstant && (begin[i] != 0 || end[i] != 0) && (x.dims[i] == 0 || begin[i] < 0 || end[i] < 0)) {
      return std::nullopt;
    }
  }
  p.es = DTypeSize(x.dtype);
  p.in = x.dims;
  p.out = y.dims;
  p.begin = begin;
  p.value.assign(p.es, 0);
  const float v = a.GetFloat("value", 0.0f);
  if (IsStorageFloat(x.dtype)) {
    FromF32(x.dtype, &v, p.value.data(), 1);
  } else if (x.dtype == DType::kI64 || x.dtype == DType::kI32) {
    if (!(std::fabs(v) < 9.0e15f)) return std::nullopt;  // NaN, inf or beyond exact integers
    const int64_t iv = static_cast<int64_t>(v);
    std::memcpy(p.value.data(), &iv, p.es);  // little endian: the low bytes
  } else if (v != 0.0f) {
    return std::nullopt;
  }
  return p;
}

class PadKernel : public ShapedKernel {
 public:
  explicit PadKernel(PadPlan p) : p_(std::move(p)) {}

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const auto* x = static_cast<const uint8_t*>(inputs[0]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    const size_t r = p_.out.size(), es = p_.es;
    const int64_t w_out = p_.out[r - 1], w_in = p_.in[r - 1], b = p_.begin[r - 1];
    const int64_t rows = NumElements(p_.out) / std::max<int64_t>(1, w_out);
    if (w_out == 0) return absl::OkStatus();
    std::vector<int64_t> idx(r, 0);
    for (int64_t row = 0; row < rows; ++row) {
      uint8_t* dst = y + row * w_out * es;
      // The input row this output row reads, or none (constant).
      int64_t src_row = 0;
      bool inside = true;
      for (size_t k = 0; k + 1 < r; ++k) {
        const int64_t s = Source(p_.mode, idx[k], p_.begin[k], p_.in[k]);
        if (s < 0) {
          inside = false;
          break;
        }
        src_row = src_row * p_.in[k] + s;
      }
      if (!inside || w_in == 0) {
        Fill(dst, w_out);
      } else {
        const uint8_t* src = x + src_row * w_in * es;
        const int64_t lo = std::clamp<int64_t>(b, 0, w_out), hi = std::clamp<int64_t>(b + w_in, 0, w_out);
        for (int64_t o = 0; o < lo; ++o) Element(src, w_in, b, o, dst);
        if (hi > lo) std::memcpy(dst + lo * es, src + (lo - b) * es, static_cast<size_t>(hi - lo) * es);
        for (int64_t o = std::max(hi, lo); o < w_out; ++o) Element(src, w_in, b, o, dst);
      }
      for (size_t k = r - 1; k-- > 0;) {
        if (++idx[k] < p_.out[k]) break;
        idx[k] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  void Fill(uint8_t* dst, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * p_.es, p_.value.data(), p_.es);
  }
  void Element(const uint8_t* src, int64_t w_in, int64_t b, int64_t o, uint8_t* dst) const {
    const int64_t s = Source(p_.mode, o, b, w_in);
    std::memcpy(dst + o * p_.es, s < 0 ? p_.value.data() : src + s * p_.es, p_.es);
  }

  PadPlan p_;
};

}  // namespace

CpuEntry PadEntry() {
  CpuEntry e;
  e.id = "cpu.pad";
  e.ops = {"Pad"};
  e.params = {{"mode", AttrType::kString}, {"pads", AttrType::kInts}, {"value", AttrType::kFloat},
              {"axes", AttrType::kInts}};
  e.description = "Pad with compile-time pads (constant, reflect, edge, wrap), any rank and element type";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<PadPlan> p = ResolvePad(spec);
    if (!p) return std::nullopt;
    return absl::StrCat("own pad: ", spec.params->GetString("mode", "constant"), ", rows of ", p->out.back());
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<PadPlan> p = ResolvePad(spec);
    if (!p) return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.pad does not run it"));
    return std::unique_ptr<ShapedKernel>(new PadKernel(std::move(*p)));
  };
  return e;
}

}  // namespace gcomp::cpu::own
