// What `run`, `check` and `bench` execute, through one code path: an executor. For a plan file,
// the executor of the plan's backend (from the registry); for a model, the model is optimized for
// --target (O3 unless --level) and then either compiled in memory into a plan for the target's
// backend, or, for --target ref (and --reference, which runs the graph lowered for another target),
// run on the reference interpreter.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/codegen.h"
#include "plan/plan.h"
#include "runtime/backend.h"
#include "tools/cli.h"

namespace gcomp::cli {

struct ValueSpec {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<plan::LinearDim> dims;  // per_batch * batch + fixed (symbolic model dims: the batch)
  std::vector<int64_t> At(int64_t batch) const {
    std::vector<int64_t> out;
    for (const plan::LinearDim& d : dims) out.push_back(d.At(batch));
    return out;
  }
};

class Executable {
 public:
  // `threads`: kernel threads for a backend's executor.
  static absl::StatusOr<std::unique_ptr<Executable>> Open(const Args& args, const std::string& path, int threads = 1,
                                                          bool profile = false);

  const std::vector<ValueSpec>& inputs() const { return inputs_; }
  const std::vector<ValueSpec>& outputs() const { return outputs_; }
  absl::StatusOr<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& feeds) { return executor_->Run(feeds); }

  runtime::Executor& executor() const { return *executor_; }
  // The plan (nullptr on the reference interpreter).
  const plan::Plan* plan() const { return plan_.get(); }
  std::string target() const { return target_; }
  std::string precision() const { return precision_; }
  double compile_seconds() const { return compile_seconds_; }
  int64_t max_batch() const { return plan_ ? plan_->max_batch : 1 << 20; }

 private:
  std::string target_;
  std::string precision_ = "fp32";
  std::shared_ptr<const plan::Plan> plan_;
  std::unique_ptr<runtime::Executor> executor_;
  std::vector<ValueSpec> inputs_, outputs_;
  double compile_seconds_ = 0;
};



}  // namespace gcomp::cli
