// The epilogue vocabulary, defined once: the activations a fused GEMM or convolution applies after
// its bias and residual add, their names in attributes and target files, their exact math, and how
// a fused op's attributes describe them. The passes, the op table, the printers and every
// backend's kernels use these definitions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/attribute.h"

namespace gcomp {

enum class Activation : uint8_t { kNone, kRelu, kClip, kGelu, kGeluTanh };

// The attribute names of fused ops that carry the epilogue.
inline constexpr char kActivationAttr[] = "activation";
inline constexpr char kClipMinAttr[] = "clip_min";
inline constexpr char kClipMaxAttr[] = "clip_max";

// "none", "relu", "clip", "gelu" (the exact erf form), "gelu_tanh" (the tanh approximation).
const char* ActivationName(Activation a);
std::optional<Activation> ParseActivation(std::string_view name);
// Every activation, in enum order.
const std::vector<Activation>& AllActivations();
// "none, relu, clip, gelu, gelu_tanh", for messages.
std::string ActivationNameList();

// The activation's exact math in fp32 (what the reference interpreter computes).
float ApplyActivation(Activation a, float x, float clip_min, float clip_max);

// What runs after a GEMM or convolution: + bias, + residual, then the activation.
struct Epilogue {
  Activation act = Activation::kNone;
  float clip_min = -1.0f / 0.0f;
  float clip_max = 1.0f / 0.0f;
  bool has_bias = false;
  bool has_residual = false;
};

// The activation of a fused op's attributes ("activation", "clip_min", "clip_max"), with their
// types checked; the bias and residual flags are left false (they are inputs, not attributes).
absl::StatusOr<Epilogue> EpilogueFromAttributes(const Attributes& attrs);
// Writes the activation (and clip bounds) of `e` into `attrs`; "none" is left out.
void SetEpilogueAttributes(const Epilogue& e, Attributes& attrs);
// "+bias+residual+relu" ("" for a plain GEMM).
std::string DescribeEpilogue(const Epilogue& e);

}  // namespace gcomp
