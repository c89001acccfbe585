#include "tools/executable.h"

#include <chrono>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "plan/plan_file.h"
#include "graph/interpreter.h"
#include "core/status_macros.h"

namespace gcomp::cli {
namespace {

std::vector<ValueSpec> SpecsOf(const plan::Plan& p, const std::vector<int32_t>& ids) {
  std::vector<ValueSpec> out;
  for (int32_t id : ids) {
    const plan::Buffer& b = p.buffers[id];
    ValueSpec s{b.name, b.dtype, b.dims};
    out.push_back(std::move(s));
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

absl::StatusOr<std::unique_ptr<plan::Plan>> CompileModel(const Args& args, const std::string& path) {
  Args a = args;
  if (!a.Has("--level")) a.options["--level"] = {"O3"};
  if (!a.Has("--target")) a.options["--target"] = {"cpu"};
  ASSIGN_OR_RETURN(OptimizedModel m, LoadAndOptimize(a, path));
  codegen::CodegenOptions o;
  o.target = a.Get("--target");
  if (o.target == "cuda") o.target = "cuda:sm_90";
  o.model = std::filesystem::path(path).filename().string();
  o.precision = PrecisionOf(a);
  o.level = a.Get("--level");
  if (a.Has("--batch")) {
    int64_t b = 0;
    if (!absl::SimpleAtoi(a.Get("--batch"), &b) || b < 1 || b > 4096) {
      return absl::InvalidArgumentError(absl::StrCat("--batch '", a.Get("--batch"), "', expected 1..4096"));
    }
    o.max_batch = b;
  }
  auto plan = codegen::GeneratePlan(*m.graph, o);
  if (!plan.ok()) return plan.status();
  return std::move(*plan);
}

absl::StatusOr<std::unique_ptr<Executable>> Executable::Open(const Args& args, const std::string& path, int threads,
                                                             bool profile) {
  auto e = std::make_unique<Executable>();
  const bool is_plan = plan::LooksLikePlan(path);
  e->target_ = args.Get("--target", is_plan ? "cpu" : "ref");
  e->precision_ = PrecisionOf(args);
  if (e->target_ == "ref" || args.Has("--reference") || args.Has("--passes")) {
    if (is_plan) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": a plan runs on its backend (--target ",
                                                     "cpu), not on the reference interpreter"));
    }
    ASSIGN_OR_RETURN(OptimizedModel m, LoadAndOptimize(args, path));
    e->graph_ = std::move(m.graph);
    e->emulate_ = EmulatesStorage(args);
    e->inputs_ = SpecsOf(e->graph_->inputs());
    e->outputs_ = SpecsOf(e->graph_->outputs());
    e->target_ = "ref";
    return e;
  }
  auto t0 = std::chrono::steady_clock::now();
  if (is_plan) {
    for (const char* opt : {"--level", "--precision", "--keep-fp32", "--calibration", "--batch"}) {
      if (args.Has(opt)) {
        return absl::InvalidArgumentError(
            absl::StrCat(opt, " is fixed when the plan is compiled; ", path, " is a plan"));
      }
    }
    ASSIGN_OR_RETURN(e->plan_, plan::ReadPlanFile(path));
    std::string want = e->target_ == "cuda" ? "cuda:sm_90" : e->target_;
    if (e->plan_->target != want) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": the plan was compiled for target '", e->plan_->target, "', --target is '", want, "'"));
    }
    e->precision_ = e->plan_->precision;
  } else {
    ASSIGN_OR_RETURN(std::unique_ptr<plan::Plan> p, CompileModel(args, path));
    e->plan_ = std::move(p);
  }
  e->compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  runtime::SessionOptions so;
  so.threads = threads;
  so.profile = profile;
  ASSIGN_OR_RETURN(e->session_, runtime::Session::Create(e->plan_, so));
  e->inputs_ = SpecsOf(*e->plan_, e->plan_->inputs);
  e->outputs_ = SpecsOf(*e->plan_, e->plan_->outputs);
  return e;
}

absl::StatusOr<std::vector<Tensor>> Executable::Run(const std::map<std::string, Tensor>& feeds) {
  if (session_) return session_->Run(feeds);
  InterpreterOptions io;
  io.emulate_storage = emulate_;
  ASSIGN_OR_RETURN(auto outs, RunReference(*graph_, feeds, io));
  std::vector<Tensor> result;
  for (const Value* v : graph_->outputs()) result.push_back(outs.at(v->name));
  return result;
}

}  // namespace gcomp::cli
