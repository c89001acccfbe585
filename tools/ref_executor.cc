#include "tools/ref_executor.h"

#include "core/status_macros.h"
#include "graph/interpreter.h"

namespace gcomp::cli {
namespace {

class ReferenceExecutor : public runtime::Executor {
 public:
  ReferenceExecutor(std::unique_ptr<Graph> graph, bool emulate) : graph_(std::move(graph)), emulate_(emulate) {}

  absl::StatusOr<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& inputs) override {
    InterpreterOptions io;
    io.emulate_storage = emulate_;
    ASSIGN_OR_RETURN(auto outs, RunReference(*graph_, inputs, io));
    std::vector<Tensor> result;
    for (const Value* v : graph_->outputs()) result.push_back(outs.at(v->name));
    // The interpreter ran every node once: one "launch" of its op's reference kernel each.
    for (const Node* n : graph_->nodes()) ++launches_["ref." + n->op];
    return result;
  }
  const std::map<std::string, int64_t>& launches() const override { return launches_; }
  const std::vector<double>& step_seconds() const override { return no_steps_; }

 private:
  std::unique_ptr<Graph> graph_;
  bool emulate_;
  std::map<std::string, int64_t> launches_;
  std::vector<double> no_steps_;
};

}  // namespace

std::unique_ptr<runtime::Executor> MakeReferenceExecutor(std::unique_ptr<Graph> graph, bool emulate_storage) {
  return std::make_unique<ReferenceExecutor>(std::move(graph), emulate_storage);
}

}  // namespace gcomp::cli
