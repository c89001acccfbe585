#include "tools/executable.h"

#include <chrono>
#include <filesystem>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"
#include "passes/target.h"
#include "plan/plan_file.h"
#include "tools/ref_executor.h"

namespace gcomp::cli {
namespace {

constexpr char kReference[] = "ref";

std::vector<ValueSpec> SpecsOf(const plan::Plan& p, const std::vector<int32_t>& ids) {
  std::vector<ValueSpec> out;
  for (int32_t id : ids) {
    const plan::Buffer& b = p.buffers[id];
    out.push_back(ValueSpec{b.name, b.dtype, b.dims});
  }
  return out;
}

std::vector<ValueSpec> SpecsOf(const std::vector<Value*>& values) {
  std::vector<ValueSpec> out;
  for (const Value* v : values) {
    ValueSpec s{v->name, v->dtype, {}};
    for (const Dim& d : v->shape) {
      auto c = d.ConstValue();
      s.dims.push_back(c ? plan::LinearDim{0, *c} : plan::LinearDim{1, 0});
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Executable>> Executable::Open(const Args& args, const std::string& path, int threads,
                                                             bool profile) {
  auto e = std::make_unique<Executable>();
  const bool is_plan = plan::LooksLikePlan(path);
  e->precision_ = PrecisionOf(args);
  auto t0 = std::chrono::steady_clock::now();
  if (is_plan) {
    for (const char* opt : {"--level", "--precision", "--keep-fp32", "--calibration", "--batch", "--passes"}) {
      if (args.Has(opt)) {
        return absl::InvalidArgumentError(
            absl::StrCat(opt, " is fixed when the plan is compiled; ", path, " is a plan"));
      }
    }
    if (args.Has("--reference")) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": a plan runs on its backend, not on the reference interpreter"));
    }
    ASSIGN_OR_RETURN(e->plan_, plan::ReadPlanFile(path));
    if (args.Has("--target")) {
      ASSIGN_OR_RETURN(std::string want, CanonicalTarget(args, ""));
      if (e->plan_->target != want) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": the plan was compiled for target '", e->plan_->target,
                                                       "', --target is '", want, "'"));
      }
    }
    e->target_ = e->plan_->target;
    e->precision_ = e->plan_->precision;
  } else {
    Args a = args;
    if (!a.Has("--level") && !a.Has("--passes")) a.options["--level"] = {"O3"};
    ASSIGN_OR_RETURN(e->target_, CanonicalTarget(a, kReference));
    if (e->target_ == kReference || a.Has("--reference") || a.Has("--passes")) {
      // The graph (lowered for --target) on the reference interpreter.
      ASSIGN_OR_RETURN(OptimizedModel m, LoadAndOptimize(a, path));
      e->inputs_ = SpecsOf(m.graph->inputs());
      e->outputs_ = SpecsOf(m.graph->outputs());
      e->executor_ = MakeReferenceExecutor(std::move(m.graph), EmulatesStorage(a));
      e->target_ = kReference;
      e->compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return e;
    }
    ASSIGN_OR_RETURN(std::unique_ptr<plan::Plan> p, CompileModel(a, path));
    e->plan_ = std::move(p);
  }
  e->compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  absl::StatusOr<const runtime::Backend*> backend = runtime::BackendFor(e->plan_->target);
  if (!backend.ok() && is_plan) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": the plan was compiled for target '", e->plan_->target,
                                                   "': ", backend.status().message()));
  }
  if (!backend.ok()) return backend.status();
  runtime::ExecutorOptions eo;
  eo.threads = threads;
  eo.profile = profile;
  if (args.Has("--batch-part")) {  // cpu: images per run of a batch run in parts (0: from the cache)
    int64_t part = 0;
    if (!absl::SimpleAtoi(args.Get("--batch-part"), &part) || part < 0 || part > 4096) {
      return absl::InvalidArgumentError(absl::StrCat("--batch-part '", args.Get("--batch-part"), "', expected 0..4096"));
    }
    eo.batch_part = part;
  }
  ASSIGN_OR_RETURN(e->executor_, (*backend)->CreateExecutor(e->plan_, eo));
  for (const std::string& n : e->executor_->notices()) std::cerr << "gcomp: notice: " << n << "\n";
  e->inputs_ = SpecsOf(*e->plan_, e->plan_->inputs);
  e->outputs_ = SpecsOf(*e->plan_, e->plan_->outputs);
  return e;
}

}  // namespace gcomp::cli
