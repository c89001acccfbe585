// assign-precision: the storage precision of every node for --precision fp16|bf16 (tf32 records
// the GEMM math only), following DESIGN.md "Mixed precision". Rules, first match wins:
//
//   no float output                      -> unchanged ("no float outputs")
//   name or op matches --keep-fp32 REGEX -> fp32 ("pinned by --keep-fp32 'REGEX'")
//   produces a graph output              -> fp32 ("model output kept fp32")
//   Cast (from the model)                -> its own `to` type
//   LayerNorm (fused) on an input in P   -> P: statistics in fp32 inside the kernel, no casts
//   LayerNorm, Softmax, reductions, ...  -> fp32 (the op's statistics or exp overflow in fp16)
//   FusedConv, FusedGemm, Conv, Gemm,
//   MatMul, Attention                    -> P: every float operand in P (weights converted,
//                                           activations through a Cast), fp32 accumulation
//   any other float op                   -> follows its inputs: P when every non-constant float
//                                           input is stored in P, else fp32
//
// Storage is typed: a P node's outputs have dtype P and Node::precision P, so the reference
// interpreter computes each op in fp32 and stores its outputs rounded to P. A Cast is inserted
// only where the storage type changes between a producer and a consumer (one per value and
// type); a Cast whose input went through a widening Cast reads the original value instead
// (Cast(Cast(x)) -> one Cast or none). Graph inputs and outputs stay fp32.
//
// fp8 (e4m3fn; needs a target whose description lists fp8, i.e. sm_89+, and calibration inputs):
// the fp16 policy above with p = fp16, except that each operand of a GEMM-rule node (A and B of
// FusedGemm/Gemm/MatMul, X and W of FusedConv/Conv, Q/K/V of Attention; not bias or residual)
// is read through a FakeQuantFp8 node: y = RoundToStorage(x * S, f8e4m3) / S, S = 448 / A
// (A = 0 -> S = 1). A constant weight with an output-channel axis gets one S per channel (A = the
// channel's max|w|), other constants one S from max|w|, and an activation one S from the max |x|
// observed when the reference interpreter runs this graph (fp32, before this pass) on the
// calibration inputs. The
// dequantized operand is held in fp16 (at most 2^-11 relative on top of the fp8 rounding); the GEMM
// accumulates in fp32 and stores fp16. GEMM nodes kept fp32 by a rule above keep fp32 operands.
//
// Whether a target's GEMM epilogue changes the math (cuBLASLt's GELU is the tanh form) is decided
// per target by lower-gemm, which runs after this pass at O3.
// Precondition: runs once, after the fusions (a graph whose nodes already carry a precision
// decision is left alone, so the pipeline's fixed-point loop stops).
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/interpreter.h"
#include "core/status_macros.h"
#include "passes/target.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {
namespace {

const std::set<std::string> kGemmOps = {"FusedConv", "FusedGemm", "Conv", "Gemm", "MatMul", "Attention"};

// Ops kept fp32 whatever the precision, with the reason.
const std::map<std::string, std::string>& Fp32Ops() {
  static const std::map<std::string, std::string> kOps = [] {
    std::map<std::string, std::string> m;
    for (const char* op : {"LayerNorm", "LayerNormalization"}) {
      m[op] = "LayerNorm statistics kept fp32: fp16 overflow risk in the variance";
    }
    for (const char* op : {"BatchNormalization", "InstanceNormalization"}) {
      m[op] = "normalization statistics kept fp32: fp16 overflow risk";
    }
    for (const char* op : {"Softmax", "LogSoftmax"}) m[op] = "softmax kept fp32: exp range and sum precision";
    for (const char* op :
         {"ReduceMean", "ReduceSum", "ReduceSumSquare", "ReduceL2", "ReduceProd", "GlobalAveragePool"}) {
      m[op] = "reduction kept fp32: long sums lose precision in fp16";
    }
    for (const char* op : {"Exp", "Log", "Pow", "Sqrt", "Reciprocal", "Erf", "Div"}) {
      m[op] = "elementwise math kept fp32: fp16 range";
    }
    return m;
  }();
  return kOps;
}

std::string PrecisionName(DType t) {
  switch (t) {
    case DType::kF16:
      return "fp16";
    case DType::kBF16:
      return "bf16";
    case DType::kF8E4M3:
      return "fp8";
    default:
      return "fp32";
  }
}

// Whether converting `from` to `to` keeps every value (a widening cast).
bool Widens(DType from, DType to) {
  if (from == to) return true;
  if (to == DType::kF64) return IsFloat(from);
  if (to == DType::kF32) return from == DType::kF16 || from == DType::kBF16 || from == DType::kF8E4M3;
  return false;
}

float MaxAbs(const Tensor& t) {
  float m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    float v = std::fabs(t.GetF32(i));
    if (std::isfinite(v)) m = std::max(m, v);
  }
  return m;
}

// fp8 calibration: max |x| of every non-constant float value over the samples, by value name.
struct Calibration {
  std::map<std::string, float> amax;
  size_t samples = 0;
};

// The operand inputs of a GEMM op that fp8 quantizes.
size_t Fp8Operands(const std::string& op) { return op == "Attention" ? 3 : 2; }

class Assigner {
 public:
  Assigner(Graph& g, DType p, const std::string& keep_pattern, const std::regex* keep,
           Calibration* fp8 = nullptr)
      : g_(g), rw_(g), p_(p), keep_pattern_(keep_pattern), keep_(keep), fp8_(fp8) {}

  absl::Status Run() {
    for (Node* n : g_.nodes()) RETURN_IF_ERROR(Assign(n));
    // Model Casts that every reader now looks through.
    for (Node* n : g_.nodes()) {
      if (n->op != "Cast" || g_.IsGraphOutput(n->output(0)) || !n->output(0)->users.empty()) continue;
      RETURN_IF_ERROR(rw_.Erase(n));
    }
    return rw_.Finish();
  }

 private:
  bool Pinned(const Node* n) const {
    return keep_ && (std::regex_search(n->name, *keep_) || std::regex_search(n->op, *keep_));
  }

  // The precision rule for `n` and its reason.
  std::pair<DType, std::string> Choose(const Node* n) const {
    const std::string p = PrecisionName(p_);
    if (Pinned(n)) return {DType::kF32, absl::StrCat("pinned by --keep-fp32 '", keep_pattern_, "'")};
    for (const Value* o : n->outputs) {
      if (o && g_.IsGraphOutput(o)) return {DType::kF32, "model output kept fp32"};
    }
    if (n->op == "LayerNorm" && n->input(0) && !n->input(0)->is_constant() && n->input(0)->dtype == p_) {
      // gcomp's fused LayerNorm kernels compute the mean and variance in fp32 whatever the storage
      // (as the reference does, stash_type float): reading and writing P removes two casts.
      return {p_, absl::StrCat("LayerNorm reads and stores ", p,
                               " (its input is stored ", p, "), mean and variance in fp32 inside the kernel")};
    }
    if (auto it = Fp32Ops().find(n->op); it != Fp32Ops().end()) return {DType::kF32, it->second};
    if (p_ == DType::kF16) {
      for (const Value* in : n->inputs) {
        if (in && in->is_constant() && IsFloat(in->dtype) && MaxAbs(*in->constant) > 65504.0f) {
          return {DType::kF32, absl::StrCat("constant '", in->name, "' exceeds the fp16 range (65504), kept fp32")};
        }
      }
    }
    if (kGemmOps.count(n->op)) {
      if (n->op == "Attention") {
        return {p_, absl::StrCat("Attention Q/K/V matmuls ", p, ", fp32 accumulation; softmax inside in fp32")};
      }
      if (n->op == "FusedConv" || n->op == "Conv") {
        return {p_, absl::StrCat("conv operands ", p, " (implicit GEMM), fp32 accumulation")};
      }
      return {p_, absl::StrCat("GEMM operands ", p, ", fp32 accumulation")};
    }
    bool any = false, all_p = true;
    for (const Value* in : n->inputs) {
      if (!in || in->is_constant() || !IsFloat(in->dtype)) continue;
      any = true;
      all_p &= in->dtype == p_;
    }
    if (any && all_p) return {p_, absl::StrCat("follows its inputs: ", p, " (no cast)")};
    if (!any) return {DType::kF32, "no non-constant float input: fp32"};
    return {DType::kF32, "follows its inputs: fp32"};
  }

  absl::StatusOr<Value*> Converted(Value* v, DType t) {
    auto key = std::make_pair(v, t);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    ASSIGN_OR_RETURN(Tensor data, Tensor::Zeros(t, v->constant->dims()));
    for (int64_t i = 0; i < data.numel(); ++i) data.SetF32(i, v->constant->GetF32(i));
    ASSIGN_OR_RETURN(Value * c, rw_.Constant(absl::StrCat(v->name, "_", DTypeName(t)), std::move(data)));
    return cache_[key] = c;
  }

  // `v` stored as `t`: itself, a converted constant, the input of a widening Cast, or a new Cast.
  absl::StatusOr<Value*> StoredAs(Value* v, DType t, const Node* reader) {
    if (v->dtype == t) return v;
    if (v->is_constant()) return Converted(v, t);
    auto key = std::make_pair(v, t);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    if (Node* c = v->producer;
        c && c->op == "Cast" && c->input(0) && IsFloat(c->input(0)->dtype) && Widens(c->input(0)->dtype, v->dtype)) {
      return StoredAs(c->input(0), t, reader);
    }
    Attributes attrs;
    attrs.Set("to", std::string(DTypeName(t)));
    ASSIGN_OR_RETURN(Node * cast, rw_.Create("Cast", absl::StrCat(v->name, "_to_", DTypeName(t)), {v}, std::move(attrs),
                                             reader->origin));
    cast->precision = t;
    cast->decisions.push_back({"precision", PrecisionName(t),
                               absl::StrCat("storage cast: '", v->name, "' is stored ", PrecisionName(v->dtype), ", ",
                                            reader->Describe(), " reads ", PrecisionName(t))});
    return cache_[key] = cast->output(0);
  }

  absl::Status Assign(Node* n) {
    bool float_out = false;
    for (const Value* o : n->outputs) float_out |= o && IsFloat(o->dtype);
    if (!float_out) {
      n->decisions.push_back({"precision", "fp32", "no float outputs: integer and bool values keep their type"});
      return absl::OkStatus();
    }
    if (n->op == "Cast") {
      DType to = n->output(0)->dtype;
      n->precision = to;
      n->decisions.push_back({"precision", PrecisionName(to), "explicit Cast of the model keeps its type"});
      return absl::OkStatus();
    }
    auto [want, reason] = Choose(n);
    std::vector<Value*> inputs = n->inputs;
    bool changed = false;
    std::string fp8_reason;
    if (fp8_ && want == p_ && kGemmOps.count(n->op)) {
      std::vector<std::string> parts;
      for (size_t i = 0; i < std::min(inputs.size(), Fp8Operands(n->op)); ++i) {
        Value*& in = inputs[i];
        if (!in || !IsFloat(in->dtype)) continue;
        ASSIGN_OR_RETURN(std::string part, QuantizedFp8(in, i, n));
        parts.push_back(part);
        changed = true;
      }
      fp8_reason = absl::StrCat("GEMM operands fp8 e4m3 (", absl::StrJoin(parts, "; "),
                                "), fp32 accumulation, output stored fp16");
    }
    for (Value*& in : inputs) {
      if (!in || !IsFloat(in->dtype) || in->dtype == DType::kF64 || in->dtype == want) continue;
      ASSIGN_OR_RETURN(in, StoredAs(in, want, n));
      changed = true;
    }
    // Outputs still typed by the old producers (uses moved to recreated nodes) are re-inferred too.
    for (const Value* o : n->outputs) changed |= o && IsFloat(o->dtype) && o->dtype != DType::kF64 && o->dtype != want;
    if (changed) {
      std::vector<std::string> old_names;
      for (const Value* o : n->outputs) old_names.push_back(o ? o->name : "");
      ASSIGN_OR_RETURN(n, rw_.RecreateWithInputs(n, inputs));
      // The recreated node's outputs carry the calibration ranges of the values they replace.
      for (size_t k = 0; fp8_ && k < n->outputs.size() && k < old_names.size(); ++k) {
        if (!n->outputs[k]) continue;
        if (auto it = fp8_->amax.find(old_names[k]); it != fp8_->amax.end()) {
          fp8_->amax[n->outputs[k]->name] = it->second;
        }
      }
    }
    DType stored = want;
    for (const Value* o : n->outputs) {
      if (o && IsFloat(o->dtype)) {
        stored = o->dtype;
        break;
      }
    }
    if (stored != want) absl::StrAppend(&reason, " (the op stores ", PrecisionName(stored), ")");
    n->precision = stored == DType::kF64 ? DType::kF32 : stored;
    if (!fp8_reason.empty()) {
      n->decisions.push_back({"precision", "fp8", fp8_reason});
    } else {
      n->decisions.push_back({"precision", PrecisionName(n->precision), reason});
    }
    return absl::OkStatus();
  }

  // The output-channel axis of constant operand `index` of `reader`, when it has one: W of a conv
  // ([Cout,Cin/g,kh,kw]) and B of a GEMM ([N,K] with transB, else [K,N]; MatMul [...,K,N]).
  static std::optional<int64_t> ChannelAxis(const Node* reader, size_t index, const Value* in) {
    if (index != 1 || !in->constant || in->constant->rank() == 0) return std::nullopt;
    const int64_t rank = in->constant->rank();
    if (reader->op == "FusedConv" || reader->op == "Conv") return 0;
    if (reader->op == "FusedGemm" || reader->op == "Gemm") {
      return rank == 2 ? std::optional<int64_t>(reader->attrs.GetInt("transB", 0) ? 0 : 1) : std::nullopt;
    }
    if (reader->op == "MatMul" && rank >= 2) return rank - 1;
    return std::nullopt;
  }

  // `in` (operand `index` of `reader`) replaced by FakeQuantFp8(in); returns the scale description.
  // Constant weights with an output-channel axis get one scale per channel (448 / max|w| of the
  // channel): BatchNorm folding leaves channels whose ranges differ by orders of magnitude, which a
  // single scale would crush into a few fp8 steps. Activations get one calibrated scale.
  absl::StatusOr<std::string> QuantizedFp8(Value*& in, size_t index, const Node* reader) {
    auto key = std::make_pair(in, DType::kF8E4M3);
    std::optional<int64_t> axis = in->is_constant() ? ChannelAxis(reader, index, in) : std::nullopt;
    if (axis) {
      const Tensor& w = *in->constant;
      const int64_t channels = w.dims()[*axis];
      int64_t inner = 1;
      for (int64_t i = *axis + 1; i < w.rank(); ++i) inner *= w.dims()[i];
      std::vector<float> amax(channels, 0.0f);
      for (int64_t i = 0; i < w.numel(); ++i) {
        const float v = std::fabs(w.GetF32(i));
        float& a = amax[(i / inner) % channels];
        if (std::isfinite(v)) a = std::max(a, v);
      }
      Tensor scales = Tensor::FromF32({channels}, std::vector<float>(channels, 1.0f));
      float lo = INFINITY, hi = 0;
      for (int64_t c = 0; c < channels; ++c) {
        if (amax[c] > 0) scales.SetF32(c, 448.0f / amax[c]);
        lo = std::min(lo, scales.GetF32(c));
        hi = std::max(hi, scales.GetF32(c));
      }
      const std::string part = absl::StrFormat("'%s': per-channel scales (axis %d, %d channels, %.4g..%.4g) from max|w|",
                                               in->name, *axis, channels, lo, hi);
      if (auto it = cache_.find(key); it != cache_.end()) {
        in = it->second;
        return part;
      }
      ASSIGN_OR_RETURN(Value * s, rw_.Constant(absl::StrCat(in->name, "_fp8_scales"), std::move(scales)));
      Attributes attrs;
      attrs.Set("axis", *axis);
      return Quantize(in, s, std::move(attrs), part, reader);
    }
    float amax = 0;
    std::string from;
    if (in->is_constant()) {
      amax = MaxAbs(*in->constant);
      from = "max|w|";
    } else {
      auto it = fp8_->amax.find(in->name);
      if (it == fp8_->amax.end()) {
        return absl::InternalError(absl::StrCat("fp8: no calibration range for '", in->name, "' (read by ",
                                                reader->Describe(), ")"));
      }
      amax = it->second;
      from = absl::StrCat("calibration amax over ", fp8_->samples, " input", fp8_->samples == 1 ? "" : "s");
    }
    const float scale = amax > 0 ? 448.0f / amax : 1.0f;
    const std::string part = absl::StrFormat("'%s': per-tensor scale %.6g from %s %.6g", in->name, scale, from, amax);
    if (auto it = cache_.find(key); it != cache_.end()) {
      in = it->second;
      return part;
    }
    Attributes attrs;
    attrs.Set("scale", scale);
    return Quantize(in, nullptr, std::move(attrs), part, reader);
  }

  absl::StatusOr<std::string> Quantize(Value*& in, Value* scales, Attributes attrs, const std::string& part,
                                       const Node* reader) {
    std::vector<Value*> inputs = {in};
    if (scales) inputs.push_back(scales);
    ASSIGN_OR_RETURN(Node * q, rw_.Create("FakeQuantFp8", absl::StrCat(in->name, "_fp8"), inputs, std::move(attrs),
                                          reader->origin));
    q->precision = DType::kF16;
    q->decisions.push_back(
        {"precision", "fp8",
         absl::StrCat("GEMM operand fp8 e4m3 (", part, "), fp32 accumulation; dequantized value held in fp16")});
    cache_[std::make_pair(in, DType::kF8E4M3)] = q->output(0);
    in = q->output(0);
    return part;
  }

  Graph& g_;
  Rewriter rw_;
  DType p_;
  std::string keep_pattern_;
  const std::regex* keep_;
  Calibration* fp8_;
  std::map<std::pair<Value*, DType>, Value*> cache_;
};

}  // namespace

absl::StatusOr<PrecisionMode> ParsePrecision(const std::string& name) {
  if (name.empty() || name == "fp32") return PrecisionMode::kFp32;
  if (name == "tf32") return PrecisionMode::kTf32;
  if (name == "fp16") return PrecisionMode::kFp16;
  if (name == "bf16") return PrecisionMode::kBf16;
  if (name == "fp8") return PrecisionMode::kFp8;
  if (name == "auto") {
    return absl::UnimplementedError(
        "precision 'auto' needs calibration inputs and an error budget, not available in this build yet: use "
        "fp16 or bf16");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown precision '", name, "', expected fp32, tf32, fp16, bf16 or fp8"));
}

absl::Status CheckFp8(const PassOptions& options, bool loaded) {
  ASSIGN_OR_RETURN(const TargetDescription* t, FindTarget(options.target));
  if (!t->HasPrecision("fp8")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--precision fp8 needs an sm_89+ target with fp8 Tensor Cores: target '", t->name, "' (", t->source,
        ") has precisions ", absl::StrJoin(t->precisions, " "), "; use --target cuda:sm_90"));
  }
  if (options.calibration_dir.empty() || (loaded && options.calibration.empty())) {
    return absl::InvalidArgumentError(
        options.calibration_dir.empty()
            ? "--precision fp8 needs calibration inputs for its per-tensor scales: --calibration DIR (input_K.pb "
              "TensorProto files, or test_data_set_*/input_K.pb)"
            : absl::StrCat("--calibration ", options.calibration_dir, ": no calibration inputs"));
  }
  return absl::OkStatus();
}

absl::Status ValidateKeepFp32(const std::string& pattern) {
  if (pattern.empty()) return absl::OkStatus();
  try {
    std::regex re(pattern);
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(absl::StrCat("--keep-fp32 '", pattern, "' is not a valid regex: ", e.what()));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> AssignPrecision(Graph& g, const PassContext& ctx) {
  ASSIGN_OR_RETURN(PrecisionMode mode, ParsePrecision(ctx.options().precision));
  if (mode == PrecisionMode::kFp32) return false;
  for (const Node* n : g.nodes()) {
    for (const Decision& d : n->decisions) {
      if (d.kind == "precision") return false;  // assigned already (fixed-point rounds)
    }
  }
  const std::string& pattern = ctx.options().keep_fp32;
  RETURN_IF_ERROR(ValidateKeepFp32(pattern));
  std::optional<std::regex> keep;
  if (!pattern.empty()) keep.emplace(pattern);
  auto pinned = [&](const Node* n) {
    return keep && (std::regex_search(n->name, *keep) || std::regex_search(n->op, *keep));
  };
  if (mode == PrecisionMode::kTf32) {
    for (Node* n : g.nodes()) {
      if (kGemmOps.count(n->op) && !pinned(n)) {
        n->decisions.push_back({"math", "tf32",
                                "tf32 math in GEMM/conv: fp32 storage, TF32 Tensor Core inputs (10-bit mantissa), "
                                "fp32 accumulation"});
        n->decisions.push_back({"precision", "fp32", "tf32: storage stays fp32"});
      } else if (kGemmOps.count(n->op)) {
        n->decisions.push_back(
            {"precision", "fp32", absl::StrCat("pinned by --keep-fp32 '", pattern, "': true fp32 math, no TF32")});
      } else {
        n->decisions.push_back({"precision", "fp32", "tf32: storage stays fp32"});
      }
    }
    return true;
  }
  if (mode == PrecisionMode::kFp8) {
    RETURN_IF_ERROR(CheckFp8(ctx.options()));
    Calibration cal;
    cal.samples = ctx.options().calibration.size();
    auto note = [&](const std::string& name, const Tensor& t) {
      if (!IsFloat(t.dtype())) return;
      float& a = cal.amax[name];
      a = std::max(a, MaxAbs(t));
    };
    InterpreterOptions io;
    io.observe = [&](const Value& v, const Tensor& t) { note(v.name, t); };
    for (const auto& feeds : ctx.options().calibration) {
      for (const auto& [name, t] : feeds) note(name, t);
      auto outs = RunReference(g, feeds, io);
      if (!outs.ok()) {
        return absl::Status(outs.status().code(), absl::StrCat("--calibration ", ctx.options().calibration_dir,
                                                               ": running the fp32 graph: ", outs.status().message()));
      }
    }
    Assigner a(g, DType::kF16, pattern, keep ? &*keep : nullptr, &cal);
    RETURN_IF_ERROR(a.Run());
    return true;
  }
  Assigner a(g, mode == PrecisionMode::kFp16 ? DType::kF16 : DType::kBF16, pattern, keep ? &*keep : nullptr);
  RETURN_IF_ERROR(a.Run());
  return true;
}

}  // namespace gcomp::passes
