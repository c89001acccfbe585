// Runs passes by name or by optimization level, with verification, printing and timing.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "passes/pass.h"

namespace gcomp::passes {

struct RunOptions {
  bool verify_each = false;         // VerifyGraph after every pass
  std::string print_after;          // print the IR after this pass
  bool print_after_all = false;     // print the IR after every pass
  bool time_passes = false;         // report each pass's time
  std::ostream* log = nullptr;      // where printing and timing go
};

// Runs `names` in order, repeating the whole list until nothing changes (at most 8 rounds).
// Errors are prefixed with the pass: "pass 'fuse-conv': <graph source>: node ...".
absl::Status RunPasses(Graph& g, const std::vector<std::string>& names, const PassContext& ctx,
                       const RunOptions& options = {});

// The passes of a level (O0 none; O1; O2 = O1 + fusions), from pipeline.cc.
absl::StatusOr<std::vector<std::string>> PassesForLevel(const std::string& level);
absl::Status RunPipeline(Graph& g, const std::string& level, const PassContext& ctx, const RunOptions& options = {});

}  // namespace gcomp::passes
