// Target descriptions: what a backend executes natively, as data (passes/targets/*.target,
// embedded into the binary at build time). The lowering and layout passes of O3 read them.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gcomp::passes {

// One GEMM epilogue activation a target's GEMM kernel applies itself.
struct GemmEpilogue {
  std::string activation;  // none, relu, clip, gelu, gelu_tanh (FusedGemm's names)
  bool exact = true;       // false: the kernel computes an approximation (`note` says which)
  std::string note;
};

struct TargetDescription {
  std::string name;                  // "cuda:sm_90"
  std::vector<std::string> aliases;  // "cuda"
  std::string description;
  std::string layout = "NCHW";  // preferred activation layout: NCHW or NHWC
  std::vector<std::string> precisions;
  std::string implicit_gemm_conv;  // the kernel that runs k x k convs as implicit GEMM; empty: none
  bool im2col = true;              // has an im2col kernel
  std::string fused_attention;     // the fused attention kernel; empty: none
  std::vector<GemmEpilogue> gemm_epilogues;
  // The kernel that runs GEMMs on fp8 e4m3 operands (the fp8 form of FusedGemm); empty: none, and
  // --precision fp8 GEMMs then read fp16 values rounded through fp8 (FakeQuantFp8).
  std::string fp8_gemm;
  // Whether the lowering passes rewrite the graph for this target (false for the reference
  // interpreter, which runs every op as it is: only the decisions are recorded).
  bool rewrite = true;
  std::string source;  // "passes/targets/cpu.target"

  bool HasPrecision(const std::string& p) const;
  // The epilogue for `activation`, or nullptr when the GEMM kernel cannot apply it.
  const GemmEpilogue* Epilogue(const std::string& activation) const;
  bool PrefersNhwc() const { return layout == "NHWC"; }
};

// Parses one description (lines "key value...", '#' comments); errors name `source` and the line.
absl::StatusOr<TargetDescription> ParseTargetDescription(const std::string& text, const std::string& source);

// The embedded descriptions, parsed once.
const std::vector<TargetDescription>& AllTargets();
// By name or alias ("cuda" = "cuda:sm_90"); InvalidArgument listing the known names otherwise.
absl::StatusOr<const TargetDescription*> FindTarget(const std::string& name);
// "ref, cpu, cuda (= cuda:sm_90), cuda:sm_80" for messages.
std::string TargetNames();

}  // namespace gcomp::passes
