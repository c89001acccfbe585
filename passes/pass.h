// What every pass sees: the pass entry-point type, its context, and the explain log.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace gcomp::passes {

struct PassOptions {
  std::string target = "ref";
  // Record why fusion rules did not fire (`inspect --explain`).
  bool explain = false;
  // --precision: fp32 (default), tf32, fp16, bf16, fp8 (auto is refused); read by assign-precision.
  std::string precision = "fp32";
  // --calibration DIR for fp8, loaded by the CLI: one map graph-input name -> tensor per sample.
  std::string calibration_dir;
  std::vector<std::map<std::string, Tensor>> calibration;
  // --keep-fp32: nodes whose name or op matches this regex (std::regex_search) stay fp32.
  std::string keep_fp32;
};

// The precisions of --precision that this build assigns (assign_precision.cc).
enum class PrecisionMode { kFp32, kTf32, kFp16, kBf16, kFp8 };
// "fp32" | "tf32" | "fp16" | "bf16" | "fp8"; auto is Unimplemented, anything else InvalidArgument.
absl::StatusOr<PrecisionMode> ParsePrecision(const std::string& name);
// fp8's preconditions: a --target whose description lists fp8 (sm_89+) and calibration inputs;
// InvalidArgument naming the target file and its precisions, or the missing inputs, otherwise.
// With `loaded` false only --calibration's presence is checked (the CLI loads it later).
absl::Status CheckFp8(const PassOptions& options, bool loaded = true);
// InvalidArgument naming the pattern and std::regex's complaint when `pattern` is not a regex.
absl::Status ValidateKeepFp32(const std::string& pattern);

class PassContext {
 public:
  explicit PassContext(PassOptions options = {}) : options_(std::move(options)) {}
  const PassOptions& options() const { return options_; }

  // Records that `rule` looked at `at` and did not fire, and why; kept only with explain on, and
  // once (a pipeline round that looks again adds nothing).
  // Reads: "FuseConvResidual at Add_37: the conv output has 2 users".
  void Explain(const std::string& rule, const Node& at, const std::string& why) const;
  const std::vector<std::string>& explanations() const { return explanations_; }

 private:
  PassOptions options_;
  mutable std::vector<std::string> explanations_;
  mutable std::set<std::string> explained_;
};

// A pass: returns whether it changed the graph. "No match" is not an error; an error means the
// graph is wrong.
using PassFn = absl::StatusOr<bool> (*)(Graph&, const PassContext&);

struct PassInfo {
  const char* name;  // the name used by --passes and the pipeline
  PassFn run;
  const char* summary;
};

// Every pass, by name (pass_registry.cc).
const std::vector<PassInfo>& AllPasses();
const PassInfo* FindPass(const std::string& name);

}  // namespace gcomp::passes
