#include "runtime/cpu/batch_parts.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"

namespace gcomp::cpu {
namespace {

using plan::Buffer;
using plan::BufferKind;
using plan::Plan;
using plan::Step;

// Ops whose every output element reads only the same image of each input, whatever their
// parameters, given operands that hold the images one after another (checked separately):
// convolutions and pools (constant weights and bias), and elementwise ops (constant operands
// broadcast, checked in StepBlocker).
const std::set<std::string>& ConvLikeOps() {
  static const std::set<std::string> kOps = {"FusedConv", "Conv", "Pool"};
  return kOps;
}
const std::set<std::string>& ElementwiseOps() {
  static const std::set<std::string> kOps = {"Cast", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Erf", "Gelu", "Clip",
                                             "Exp",  "Sqrt", "Identity",  "Neg",     "Abs",  "Add", "Sub",  "Mul",
                                             "Div"};
  return kOps;
}

bool Constant(const Plan& plan, int32_t id) { return id >= 0 && plan.buffers[id].kind == BufferKind::kConstant; }

// Whether `b` holds its images one after another: the batch scales the outermost dim only.
bool ImagesInSequence(const Buffer& b) {
  if (b.dims.empty() || b.dims[0].per_batch <= 0 || b.dims[0].fixed != 0) return false;
  for (size_t k = 1; k < b.dims.size(); ++k) {
    if (b.dims[k].per_batch != 0) return false;
  }
  return true;
}

// Axis `a` of a rank-`rank` tensor, negative counting from the end; nullopt when out of range.
std::optional<int64_t> Normalized(int64_t a, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (a < -r || a >= r) return std::nullopt;
  return a < 0 ? a + r : a;
}

// Whether none of `axes` is the batch axis (0) of a rank-`rank` tensor (all in range).
bool AvoidsBatchAxis(const std::vector<int64_t>& axes, size_t rank) {
  for (int64_t a : axes) {
    std::optional<int64_t> n = Normalized(a, rank);
    if (!n || *n == 0) return false;
  }
  return true;
}

// The integer values of constant buffer `id` (i64 or i32), or nullopt.
std::optional<std::vector<int64_t>> ConstantInts(const Plan& plan, int32_t id) {
  if (!Constant(plan, id) || !plan.weights) return std::nullopt;
  const Buffer& b = plan.buffers[id];
  const uint8_t* p = plan.weights + b.offset;
  std::vector<int64_t> v;
  if (b.dtype == DType::kI64) {
    v.resize(static_cast<size_t>(b.bytes) / 8);
    std::memcpy(v.data(), p, v.size() * 8);
  } else if (b.dtype == DType::kI32) {
    for (int64_t i = 0; i + 4 <= b.bytes; i += 4) {
      int32_t x;
      std::memcpy(&x, p + i, 4);
      v.push_back(x);
    }
  } else {
    return std::nullopt;
  }
  return v;
}

std::optional<std::vector<int64_t>> IntsParam(const Step& s, const std::string& name) {
  const AttrValue* v = s.params.Find(name);
  if (!v) return std::nullopt;
  if (const auto* ints = std::get_if<std::vector<int64_t>>(v)) return *ints;
  if (const auto* one = std::get_if<int64_t>(v)) return std::vector<int64_t>{*one};
  return std::nullopt;
}

// Why step `s` may mix images, or "" when it does not (its operands already checked).
std::string StepBlocker(const Plan& plan, const Step& s) {
  const size_t rank = s.outputs.empty() ? 0 : plan.buffers[s.outputs[0]].dims.size();
  auto input = [&](size_t i) { return i < s.inputs.size() ? s.inputs[i] : -1; };
  auto in_rank = [&](size_t i) { return input(i) >= 0 ? plan.buffers[input(i)].dims.size() : size_t{0}; };
  if (ConvLikeOps().count(s.op)) return "";
  if (ElementwiseOps().count(s.op)) {
    // A constant operand broadcasts over the images: lower rank, or an outermost dim of 1.
    for (int32_t id : s.inputs) {
      if (!Constant(plan, id)) continue;
      const Buffer& b = plan.buffers[id];
      if (b.dims.size() >= rank && !b.dims.empty() && b.dims[0].fixed != 1) return "a constant operand spans images";
    }
    return "";
  }
  if (s.op == "FusedGemm" || s.op == "MatMul") {
    // Rows of A are images (checked as a buffer); B and the bias are constants.
    if (!Constant(plan, input(1))) return "B is not a constant";
    if (input(2) >= 0 && !Constant(plan, input(2))) return "the bias is not a constant";
    return "";
  }
  if (s.op == "Transpose") {
    std::optional<std::vector<int64_t>> perm = IntsParam(s, "perm");
    if (!perm || perm->empty() || (*perm)[0] != 0) return "it moves the batch axis";
    return "";
  }
  if (s.op == "Slice") {
    std::optional<std::vector<int64_t>> axes = ConstantInts(plan, input(3));
    if (!axes || !AvoidsBatchAxis(*axes, in_rank(0))) return "it may slice the batch axis";
    return "";
  }
  if (s.op == "ReduceMean" || s.op == "ReduceSum" || s.op == "ReduceMax") {
    std::optional<std::vector<int64_t>> axes = IntsParam(s, "axes");
    if (!axes) axes = ConstantInts(plan, input(1));
    if (!axes || axes->empty() || !AvoidsBatchAxis(*axes, in_rank(0))) return "it may reduce over the batch axis";
    return "";
  }
  if (s.op == "LayerNorm" || s.op == "Softmax" || s.op == "LogSoftmax" || s.op == "Concat") {
    std::optional<std::vector<int64_t>> axis = IntsParam(s, "axis");
    const int64_t a = axis && axis->size() == 1 ? (*axis)[0] : (s.op == "LayerNorm" || s.op == "Concat" ? 0 : -1);
    if (!AvoidsBatchAxis({a}, rank)) return "its axis is the batch axis";
    return "";
  }
  return "its op is not one known to keep images apart";
}

}  // namespace

std::string BatchPartsBlocker(const Plan& plan) {
  for (const std::vector<int32_t>* ios : {&plan.inputs, &plan.outputs}) {
    for (int32_t id : *ios) {
      if (!ImagesInSequence(plan.buffers[id])) {
        return absl::StrCat("'", plan.buffers[id].name, "' does not hold its images one after another");
      }
    }
  }
  for (const Step& s : plan.steps) {
    for (const std::vector<int32_t>* ops : {&s.inputs, &s.outputs}) {
      for (int32_t id : *ops) {
        if (id < 0 || Constant(plan, id)) continue;
        if (!ImagesInSequence(plan.buffers[id])) {
          return absl::StrCat("step '", s.name, "' (", s.op, "): '", plan.buffers[id].name,
                              "' does not hold its images one after another");
        }
      }
    }
    const std::string why = StepBlocker(plan, s);
    if (!why.empty()) return absl::StrCat("step '", s.name, "' (", s.op, "): ", why);
  }
  return "";
}

int64_t BatchPart(int64_t batch, int64_t arena_per_item, int64_t cache_bytes, int64_t max_part) {
  int64_t part = std::max<int64_t>(1, batch);
  if (cache_bytes > 0 && arena_per_item > 0) {
    const int64_t budget = cache_bytes / 2;
    int64_t arena = 0;
    while (part > 1 && (__builtin_mul_overflow(part, arena_per_item, &arena) || arena > budget)) part = (part + 1) / 2;
  }
  if (max_part > 0) part = std::min(part, max_part);
  return std::max<int64_t>(1, std::min(part, batch));
}

int64_t LastLevelCacheBytes() {
  int64_t best = 0;
  int best_level = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = absl::StrCat("/sys/devices/system/cpu/cpu0/cache/index", index, "/");
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) break;
    if (type == "Instruction" || level < best_level || size.empty()) continue;
    int64_t scale = 1;
    if (size.back() == 'K') scale = int64_t{1} << 10;
    if (size.back() == 'M') scale = int64_t{1} << 20;
    if (scale != 1) size.pop_back();
    int64_t n = 0;
    if (!absl::SimpleAtoi(size, &n) || n <= 0) continue;
    best = n * scale;
    best_level = level;
  }
  return best;
}

}  // namespace gcomp::cpu
