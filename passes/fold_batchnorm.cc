// fold-batchnorm: inference BatchNormalization is a per-channel affine map
//   y = x * s + t,   s = gamma / sqrt(var + eps),   t = beta - mean * s
// and disappears into the conv before it, or else becomes a per-channel scale and bias.
//
// FoldBatchNormIntoConv:
//   %c = Conv(%x, %W, %B?)                     %y = Conv(%x, %W', %B')
//   %y = BatchNormalization(%c, g, b, m, v)  ->  W'[o,...] = W[o,...] * s[o]
//                                                B'[o]     = (B[o] - m[o]) * s[o] + b[o]   (B = 0 if absent)
//   Preconditions: the conv output has one user (this BatchNormalization) and is not a graph
//   output; W (and B) are f32 constants; gamma, beta, mean, var are constants with one value per
//   output channel. Grouped and depthwise convs fold the same way (W's first dim is the output
//   channel). W' and B' are computed in double and rounded once.
//
// BatchNormToScaleBias (every other inference BatchNormalization with constant parameters):
//   %y = BatchNormalization(%x: [N,C,...], g, b, m, v)  ->  %y = Add(Mul(%x, s), t)
//   with s, t constants of shape [C,1,...,1] (one 1 per spatial axis; [C] for an [N,C] input), so
//   they broadcast over any batch size.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {
namespace {

// The per-channel scale and shift of a BatchNormalization, in double.
struct Affine {
  std::vector<double> scale, shift;
};

// s and t of `bn`, or an explanation of why its parameters are not usable.
absl::StatusOr<Affine> ChannelAffine(const Node& bn) {
  for (size_t i = 1; i < 5; ++i) {
    const Value* p = bn.input(i);
    if (!p || !p->is_constant()) {
      return absl::FailedPreconditionError(absl::StrCat("parameter ", i, " is not a constant"));
    }
    if (!IsFloat(p->dtype))
      return absl::FailedPreconditionError(absl::StrCat("parameter ", i, " is not a float tensor"));
  }
  const int64_t channels = bn.input(1)->constant->numel();
  for (size_t i = 2; i < 5; ++i) {
    if (bn.input(i)->constant->numel() != channels) {
      return absl::FailedPreconditionError("the parameters differ in length");
    }
  }
  const Value* x = bn.input(0);
  if (x->shape.size() < 2 || x->shape[1] != Dim(channels)) {
    return absl::FailedPreconditionError(
        absl::StrCat("input shape ", ShapeToString(x->shape), " does not have ", channels, " channels on axis 1"));
  }
  // The reference kernel widens the float epsilon to double; so does this.
  const double eps = bn.attrs.GetFloat("epsilon", 1e-5f);
  const Tensor& gamma = *bn.input(1)->constant;
  const Tensor& beta = *bn.input(2)->constant;
  const Tensor& mean = *bn.input(3)->constant;
  const Tensor& var = *bn.input(4)->constant;
  Affine a;
  for (int64_t c = 0; c < channels; ++c) {
    const double s = static_cast<double>(gamma.GetF32(c)) / std::sqrt(static_cast<double>(var.GetF32(c)) + eps);
    a.scale.push_back(s);
    a.shift.push_back(static_cast<double>(beta.GetF32(c)) - static_cast<double>(mean.GetF32(c)) * s);
  }
  return a;
}

// Why `conv` cannot absorb `bn`, or "" when it can.
std::string ConvFoldBlocker(const Graph& g, const Node& conv, const Node& bn, int64_t channels) {
  if (SingleUser(g, conv.output(0)) != &bn) {
    return absl::StrCat("the conv output has ", conv.output(0)->users.size(), " users",
                        g.IsGraphOutput(conv.output(0)) ? " and is a graph output" : "");
  }
  const Value* w = conv.input(1);
  const Value* b = conv.input(2);
  if (!w || !w->is_constant() || w->dtype != DType::kF32) return "the conv weight is not an f32 constant";
  if (b && (!b->is_constant() || b->dtype != DType::kF32)) return "the conv bias is not an f32 constant";
  if (w->constant->rank() < 1 || w->constant->dims()[0] != channels) {
    return absl::StrCat("the conv has ", w->constant->rank() ? w->constant->dims()[0] : 0,
                        " output channels, expected ", channels);
  }
  if (b && b->constant->numel() != channels) return "the conv bias length differs from the channels";
  return "";
}

absl::Status FoldIntoConv(Rewriter& rw, Node* conv, Node* bn, const Affine& a) {
  const Tensor& w = *conv->input(1)->constant;
  const int64_t channels = static_cast<int64_t>(a.scale.size());
  const int64_t per_channel = channels ? w.numel() / channels : 0;
  ASSIGN_OR_RETURN(Tensor w2, Tensor::Zeros(DType::kF32, w.dims()));
  const float* src = w.data_as<float>();
  float* dst = w2.mutable_data_as<float>();
  for (int64_t o = 0; o < channels; ++o) {
    for (int64_t i = 0; i < per_channel; ++i) {
      const int64_t k = o * per_channel + i;
      dst[k] = static_cast<float>(static_cast<double>(src[k]) * a.scale[o]);
    }
  }
  std::vector<float> b2(channels);
  const Value* b = conv->input(2);
  for (int64_t o = 0; o < channels; ++o) {
    const double bias = b ? static_cast<double>(b->constant->GetF32(o)) : 0.0;
    b2[o] = static_cast<float>(bias * a.scale[o] + a.shift[o]);
  }
  ASSIGN_OR_RETURN(Value * wv, rw.Constant(conv->input(1)->name + "_bn", std::move(w2)));
  ASSIGN_OR_RETURN(Value * bv,
                   rw.Constant(b ? b->name + "_bn" : conv->name + "_bias_bn", Tensor::FromF32({channels}, b2)));
  const std::string name = conv->name;
  ASSIGN_OR_RETURN(Node * folded,
                   rw.Create("Conv", name, {conv->input(0), wv, bv}, conv->attrs, MergeOrigins({conv, bn})));
  folded->decisions = conv->decisions;
  folded->decisions.push_back(
      {"fold", "BatchNormalization into Conv",
       absl::StrCat("conv output has one user; W and B scaled by gamma/sqrt(var+eps) per output channel (", bn->name,
                    ")")});
  rw.ReplaceAllUses(bn->output(0), folded->output(0));
  RETURN_IF_ERROR(rw.Erase(bn));
  RETURN_IF_ERROR(rw.Erase(conv));
  folded->name = name;  // the old conv is gone, so its name is free again
  return absl::OkStatus();
}

absl::Status ToScaleBias(Rewriter& rw, Node* bn, const Affine& a, const std::string& why) {
  const int64_t channels = static_cast<int64_t>(a.scale.size());
  std::vector<int64_t> dims(bn->input(0)->shape.size() - 1, 1);
  dims[0] = channels;
  std::vector<float> s(a.scale.begin(), a.scale.end()), t(a.shift.begin(), a.shift.end());
  ASSIGN_OR_RETURN(Value * sv, rw.Constant(bn->name + "_scale", Tensor::FromF32(dims, s)));
  ASSIGN_OR_RETURN(Value * tv, rw.Constant(bn->name + "_bias", Tensor::FromF32(dims, t)));
  ASSIGN_OR_RETURN(Node * mul, rw.Create("Mul", bn->name + "_scale", {bn->input(0), sv}, {}, bn->origin));
  ASSIGN_OR_RETURN(Node * add, rw.Create("Add", bn->name + "_bias", {mul->output(0), tv}, {}, bn->origin));
  add->decisions.push_back({"fold", "BatchNormalization -> per-channel Mul + Add", why});
  rw.ReplaceAllUses(bn->output(0), add->output(0));
  return rw.Erase(bn);
}

}  // namespace

absl::StatusOr<bool> FoldBatchNorm(Graph& g, const PassContext& ctx) {
  Rewriter rw(g);
  bool changed = false;
  for (Node* bn : g.nodes()) {
    if (bn->op != "BatchNormalization") continue;
    if (bn->outputs.size() > 1) {
      bool extra_used = false;
      for (size_t k = 1; k < bn->outputs.size(); ++k) {
        extra_used |= bn->outputs[k] && (!bn->outputs[k]->users.empty() || g.IsGraphOutput(bn->outputs[k]));
      }
      if (extra_used) {
        ctx.Explain("FoldBatchNorm", *bn, "its running-statistics outputs are used (training mode)");
        continue;
      }
    }
    if (bn->input(0)->dtype != DType::kF32) {
      ctx.Explain("FoldBatchNorm", *bn, absl::StrCat("input is ", DTypeName(bn->input(0)->dtype), ", expected f32"));
      continue;
    }
    absl::StatusOr<Affine> affine = ChannelAffine(*bn);
    if (!affine.ok()) {
      ctx.Explain("FoldBatchNorm", *bn, std::string(affine.status().message()));
      continue;
    }
    Node* conv = bn->input(0)->producer;
    std::string why;
    if (conv && conv->op == "Conv") {
      why = ConvFoldBlocker(g, *conv, *bn, static_cast<int64_t>(affine->scale.size()));
      if (why.empty()) {
        RETURN_IF_ERROR(FoldIntoConv(rw, conv, bn, *affine));
        changed = true;
        continue;
      }
      ctx.Explain("FoldBatchNormIntoConv", *bn, why);
      why = absl::StrCat("not folded into the conv: ", why);
    } else {
      why = absl::StrCat("input comes from ", conv ? conv->Describe() : std::string("a graph input"), ", not a Conv");
      ctx.Explain("FoldBatchNormIntoConv", *bn, why);
    }
    RETURN_IF_ERROR(ToScaleBias(rw, bn, *affine, why));
    changed = true;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
