#include "core/epilogue.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gcomp {

const char* ActivationName(Activation a) {
  switch (a) {
    case Activation::kNone:
      return "none";
    case Activation::kRelu:
      return "relu";
    case Activation::kClip:
      return "clip";
    case Activation::kGelu:
      return "gelu";
    case Activation::kGeluTanh:
      return "gelu_tanh";
  }
  return "none";
}

const std::vector<Activation>& AllActivations() {
  static const std::vector<Activation> kAll = {Activation::kNone, Activation::kRelu, Activation::kClip,
                                               Activation::kGelu, Activation::kGeluTanh};
  return kAll;
}

std::optional<Activation> ParseActivation(std::string_view name) {
  for (Activation a : AllActivations()) {
    if (name == ActivationName(a)) return a;
  }
  return std::nullopt;
}

std::string ActivationNameList() {
  std::vector<std::string> names;
  for (Activation a : AllActivations()) names.push_back(ActivationName(a));
  return absl::StrJoin(names, ", ");
}

float ApplyActivation(Activation a, float x, float clip_min, float clip_max) {
  switch (a) {
    case Activation::kRelu:
      return x > 0.0f ? x : (x < 0.0f ? 0.0f : x);
    case Activation::kClip:
      return std::isnan(x) ? x : std::min(std::max(x, clip_min), clip_max);
    case Activation::kGelu:
      return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
    case Activation::kGeluTanh: {
      const float c = std::sqrt(2.0f / static_cast<float>(M_PI));
      return 0.5f * x * (1.0f + std::tanh(c * (x + 0.044715f * x * x * x)));
    }
    case Activation::kNone:
      break;
  }
  return x;
}

absl::StatusOr<Epilogue> EpilogueFromAttributes(const Attributes& attrs) {
  Epilogue e;
  if (const AttrValue* v = attrs.Find(kActivationAttr)) {
    const std::string* name = std::get_if<std::string>(v);
    if (!name) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute '", kActivationAttr, "' is ", AttrTypeName(*v), ", expected string"));
    }
    std::optional<Activation> a = ParseActivation(*name);
    if (!a) {
      return absl::InvalidArgumentError(absl::StrCat("activation '", *name, "' is not one of ", ActivationNameList()));
    }
    e.act = *a;
  }
  for (const char* bound : {kClipMinAttr, kClipMaxAttr}) {
    const AttrValue* v = attrs.Find(bound);
    if (!v) continue;
    const float* f = std::get_if<float>(v);
    if (!f) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute '", bound, "' is ", AttrTypeName(*v), ", expected float"));
    }
    (bound == kClipMinAttr ? e.clip_min : e.clip_max) = *f;
  }
  return e;
}

void SetEpilogueAttributes(const Epilogue& e, Attributes& attrs) {
  if (e.act == Activation::kNone) {
    attrs.Erase(kActivationAttr);
  } else {
    attrs.Set(kActivationAttr, std::string(ActivationName(e.act)));
  }
  if (e.act == Activation::kClip) {
    attrs.Set(kClipMinAttr, e.clip_min);
    attrs.Set(kClipMaxAttr, e.clip_max);
  }
}

std::string DescribeEpilogue(const Epilogue& e) {
  std::string s;
  if (e.has_bias) s += "+bias";
  if (e.has_residual) s += "+residual";
  if (e.act != Activation::kNone) absl::StrAppend(&s, "+", ActivationName(e.act));
  return s;
}

}  // namespace gcomp
