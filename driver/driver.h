// The compile driver shared by the CLI and the library's in-process compilation
// (gcomp::Compile): options in the CLI's form (--target, --precision, --level, --batch,
// --keep-fp32, --calibration, ...), model import, the pass pipeline, fp8 calibration and codegen,
// with the CLI's messages.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "passes/pass.h"
#include "plan/plan.h"

namespace gcomp::driver {

// Parsed arguments: positional arguments, and options (--name value, --name=value or flags).
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> options;

  bool Has(const std::string& name) const { return options.count(name) > 0; }
  std::string Get(const std::string& name, const std::string& def = "") const;
  const std::vector<std::string>& All(const std::string& name) const;
};

// `flags` are options without a value; every other option takes one. Unknown options are errors.
absl::StatusOr<Args> ParseArgs(int argc, char** argv, int first, const std::vector<std::string>& value_options,
                               const std::vector<std::string>& flags);

// Loads an ONNX model (the only input form until plans exist).
absl::StatusOr<std::unique_ptr<Graph>> LoadModel(const std::string& path);
// Checks --target, --level, --precision and --keep-fp32 against what this build offers.
// Unknown targets are refused with the list; targets other than ref only with `any_target`
// (inspect shows any target's lowering; `run --reference` executes it on the interpreter).
absl::Status CheckTargetAndLevel(const Args& args, bool level_allowed, bool any_target = false);
// The pass options of --target, --explain, --precision (validated: fp8 and auto are refused) and
// --keep-fp32 (validated as a std::regex).
absl::StatusOr<passes::PassOptions> PassOptionsFromArgs(const Args& args);
// Whether --precision asks for reduced-precision storage (run and check then emulate it).
bool EmulatesStorage(const Args& args);
// The --precision of `args` ("fp32" when absent).
inline std::string PrecisionOf(const Args& args) { return args.Get("--precision", "fp32"); }

// A model imported and run through the pipeline of --level (default O0).
struct OptimizedModel {
  std::unique_ptr<Graph> graph;
  size_t nodes_before = 0;
  std::map<std::string, int> ops_before;
  std::vector<std::string> explanations;  // with --explain
};
// --calibration DIR for --precision fp8: input_K.pb TensorProto files in DIR and/or in its
// test_data_set_* folders, one sample per folder; a file's tensor name, else its K, picks the graph
// input. InvalidArgument for a missing folder, no samples, or a sample that misses an input.
absl::StatusOr<std::vector<std::map<std::string, Tensor>>> LoadCalibration(const std::string& dir, const Graph& g);
absl::StatusOr<OptimizedModel> LoadAndOptimize(const Args& args, const std::string& path);
// The same for a graph already imported.
absl::StatusOr<OptimizedModel> Optimize(const Args& args, std::unique_ptr<Graph> graph);

// run, check and bench compile a model at O3 unless --level (or an explicit --passes list) says
// otherwise, on every target, ref included; a plan's level is fixed.
void DefaultLevelForModel(Args& args, const std::string& path);

// Kernel threads for run/check: the machine's cores, at most 8.
int DefaultThreads();

// The canonical name of --target (aliases resolved by the target descriptions), `def` if absent.
absl::StatusOr<std::string> CanonicalTarget(const Args& args, const std::string& def);
// The model at `path` optimized for --target (O3 unless --level) and compiled into a plan (--batch,
// --exclude-kernels).
absl::StatusOr<std::unique_ptr<plan::Plan>> CompileModel(const Args& args, const std::string& path);
// The same for a serialized model (`name` labels it in messages and in the plan; external data is
// refused), and for an imported graph.
absl::StatusOr<std::unique_ptr<plan::Plan>> CompileModelBytes(const Args& args, const std::string& bytes,
                                                              const std::string& name);
absl::StatusOr<std::unique_ptr<plan::Plan>> CompileGraph(const Args& args, std::unique_ptr<Graph> graph,
                                                         const std::string& model_name);

// `gcomp inspect MODEL`'s output for args' --level, --target, --precision, --format
// (text|dot|json|html), --summary and --explain.
absl::StatusOr<std::string> InspectModel(const Args& args, const std::string& path);

}  // namespace gcomp::driver
