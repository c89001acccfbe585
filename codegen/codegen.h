// Codegen: an optimized graph (O3 for the plan's target) -> a Plan (codegen/plan.h): one step per
// node with the kernel the backend's table chooses and why, views (Reshape, Flatten, Squeeze,
// Unsqueeze, Identity) as aliases, weights packed by their kernels, and the activations placed by
// the memory planner with in-place reuse where the kernel allows it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "plan/plan.h"
#include "graph/graph.h"

namespace gcomp::codegen {

inline constexpr int64_t kDefaultMaxBatch = 64;

struct CodegenOptions {
  std::string target;     // canonical target name: the backend registry's key (runtime/backend.h)
  int64_t max_batch = 0;  // 0: kDefaultMaxBatch for a dynamic batch (a static model's is fixed)
  std::string model;      // source file name for the header
  std::string precision = "fp32";
  std::string level = "O3";
  // Kernel entries not to select (compile --exclude-kernels), e.g. to run the next entry.
  std::vector<std::string> exclude_kernels;
};

absl::StatusOr<std::unique_ptr<plan::Plan>> GeneratePlan(const Graph& graph, const CodegenOptions& options);

}  // namespace gcomp::codegen
