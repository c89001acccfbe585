// gcomp compile MODEL.onnx -o OUT.gplan [--target T] [--precision P] [--level O0..O3 | --passes a,b]
//               [--batch N] [--keep-fp32 REGEX] [--calibration DIR] [--max-rel-error E] [--tune]
// Optimizes the model for the target (O3 unless --level; --passes: that pass list instead, e.g. a
// level's passes with one left out to measure what it buys; --exclude-kernels ID,...: kernel
// entries not to select, so that the next entry of the table runs the step), generates the plan (kernels, memory plan,
// packed weights) and writes the plan file. --tune (cuda targets, on a machine with the device):
// times each GEMM's and convolution's candidate algorithms and stores the fastest in the plan's
// tuning section, keyed by the device and library versions.
#include <chrono>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "plan/plan_file.h"
#include "runtime/backend.h"
#include "tools/executable.h"

namespace gcomp::cli {

int Compile(int argc, char** argv) {
  auto args = ParseArgs(argc, argv, 2,
                        {"-o", "--target", "--precision", "--level", "--passes", "--batch", "--keep-fp32",
                         "--calibration", "--max-rel-error", "--exclude-kernels"},
                        {"--tune", "--explain"});
  if (!args.ok()) return Report(args.status());
  if (args->positional.size() != 1) return Report(absl::InvalidArgumentError("compile takes one MODEL.onnx"));
  if (!args->Has("-o")) return Report(absl::InvalidArgumentError("compile needs -o OUT.gplan"));
  if (!args->Has("--target")) args->options["--target"] = {"cpu"};
  if (args->Get("--target") == "ref") {
    return Report(absl::InvalidArgumentError(
        "--target ref is the reference interpreter, which runs models, not plans: compile for --target cpu"));
  }
  const bool tune = args->Has("--tune");
  if (tune && args->Get("--target").rfind("cuda", 0) != 0) {
    return Report(absl::InvalidArgumentError(
        "--tune times GPU kernel candidates on the device; a cpu plan has nothing to tune"));
  }
  if (args->Has("--max-rel-error")) {
    return Report(absl::InvalidArgumentError("--max-rel-error is the error budget of --precision auto, which this "
                                             "build does not offer yet"));
  }
  DefaultLevelForModel(*args, args->positional[0]);
  if (absl::Status s = CheckTargetAndLevel(*args, true); !s.ok()) return Report(s);
  auto t0 = std::chrono::steady_clock::now();
  auto plan = CompileModel(*args, args->positional[0]);
  if (!plan.ok()) return Report(plan.status());
  if (tune) {
    // Time every GEMM's and convolution's candidates on this machine's device, at batch 1 and at
    // the maximum batch, and store the fastest in the plan's tuning section.
    std::shared_ptr<plan::Plan> shared(std::move(*plan));
    auto backend = runtime::BackendFor(shared->target);
    if (!backend.ok()) return Report(backend.status());
    runtime::ExecutorOptions eo;
    eo.tuning = true;
    auto executor = (*backend)->CreateExecutor(shared, eo);
    if (!executor.ok()) {
      return Report(absl::Status(executor.status().code(),
                                 absl::StrCat("--tune needs the device the plan runs on: ", executor.status().message())));
    }
    std::vector<int64_t> batches = {1};
    if (shared->max_batch > 1) batches.push_back(shared->max_batch);
    auto tuning = (*executor)->Tune(batches);
    if (!tuning.ok()) return Report(tuning.status());
    executor->reset();
    shared->tuning = *std::move(tuning);
    std::cout << "tuned " << shared->tuning.choices.size() << " step choices for " << shared->tuning.key << "\n";
    *plan = std::make_unique<plan::Plan>(std::move(*shared));
  }
  if (absl::Status s = plan::WritePlanFile(**plan, args->Get("-o")); !s.ok()) return Report(s);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const plan::Plan& p = **plan;
  std::cout << absl::StrFormat(
      "%s: %s plan, %s, %d steps, batch 1..%d, weights %.1f MB, arena %.2f MB per batch item + %d bytes; "
      "compiled in %.2f s\n",
      args->Get("-o"), p.target, p.precision, p.steps.size(), p.max_batch, p.weights_bytes / 1e6,
      p.batch_arena_bytes / 1e6, p.fixed_arena_bytes, secs);
  return kOk;
}

}  // namespace gcomp::cli
