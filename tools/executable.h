// What `run`, `check` and `bench` execute: a model on the reference interpreter (--target ref, or
// --reference for a graph lowered for another target), or a plan on the cpu runtime (--target cpu:
// a plan file, or a model compiled in memory first, O3 unless --level).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/codegen.h"
#include "plan/plan.h"
#include "graph/graph.h"
#include "runtime/session.h"
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
  // `threads`: kernel threads for the cpu runtime.
  static absl::StatusOr<std::unique_ptr<Executable>> Open(const Args& args, const std::string& path, int threads = 1,
                                                          bool profile = false);

  const std::vector<ValueSpec>& inputs() const { return inputs_; }
  const std::vector<ValueSpec>& outputs() const { return outputs_; }
  absl::StatusOr<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& feeds);

  // The cpu runtime's plan and session (nullptr on the reference interpreter).
  const plan::Plan* plan() const { return plan_.get(); }
  runtime::Session* session() const { return session_.get(); }
  std::string target() const { return target_; }
  std::string precision() const { return precision_; }
  double compile_seconds() const { return compile_seconds_; }
  int64_t max_batch() const { return plan_ ? plan_->max_batch : 1 << 20; }

 private:
  std::string target_ = "ref";
  std::string precision_ = "fp32";
  std::unique_ptr<Graph> graph_;  // reference interpreter
  bool emulate_ = false;
  std::shared_ptr<const plan::Plan> plan_;
  std::unique_ptr<runtime::Session> session_;
  std::vector<ValueSpec> inputs_, outputs_;
  double compile_seconds_ = 0;
};

// Compiles a model for args' --target (cpu), --precision, --level (default O3) and --batch.
absl::StatusOr<std::unique_ptr<plan::Plan>> CompileModel(const Args& args, const std::string& path);

}  // namespace gcomp::cli
