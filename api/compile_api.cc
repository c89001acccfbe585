// gcomp::Compile / CompileBytes (include/gcomp/gcomp.h): the CLI's compile driver in process. The
// options become the CLI's (--target, --precision, --level, --batch, --keep-fp32, --calibration),
// checked and reported as `gcomp compile` does; the plan reaches the caller as a public Plan
// through its file bytes.
#include <string>

#include "absl/status/status.h"
#include "driver/driver.h"
#include "include/gcomp/gcomp.h"
#include "plan/plan_file.h"
#include "plan/plan_printer.h"
#include "runtime/api_status.h"

namespace gcomp {
namespace {

absl::StatusOr<driver::Args> ArgsOf(const CompileOptions& o) {
  driver::Args a;
  a.options["--target"] = {o.target};
  a.options["--precision"] = {o.precision};
  a.options["--level"] = {o.level};
  if (o.batch != 0) a.options["--batch"] = {std::to_string(o.batch)};
  if (!o.keep_fp32.empty()) a.options["--keep-fp32"] = {o.keep_fp32};
  if (!o.calibration.empty()) a.options["--calibration"] = {o.calibration};
  if (o.target == "ref") {
    return absl::InvalidArgumentError(
        "target ref is the reference interpreter, which runs models, not plans: compile for target cpu");
  }
  if (absl::Status s = driver::CheckTargetAndLevel(a, true); !s.ok()) return s;
  return a;
}

Result<std::shared_ptr<const Plan>> ToPublic(absl::StatusOr<std::unique_ptr<plan::Plan>> compiled) {
  if (!compiled.ok()) return FromAbsl(compiled.status());
  absl::StatusOr<std::string> bytes = plan::SerializePlan(**compiled);
  if (!bytes.ok()) return FromAbsl(bytes.status());
  return Plan::LoadFromMemory(bytes->data(), bytes->size());
}

}  // namespace

Result<std::shared_ptr<const Plan>> Compile(const std::string& model_path, const CompileOptions& options) {
  absl::StatusOr<driver::Args> args = ArgsOf(options);
  if (!args.ok()) return FromAbsl(args.status());
  return ToPublic(driver::CompileModel(*args, model_path));
}

Result<std::string> Inspect(const std::string& path, const InspectOptions& options) {
  if (plan::LooksLikePlan(path)) {
    if (options.format != "text" && options.format != "json") {
      return Status(StatusCode::kInvalidArgument, "a plan prints as text or json, not '" + options.format + "'");
    }
    auto p = plan::ReadPlanFile(path);
    if (!p.ok()) return FromAbsl(p.status());
    return options.format == "json" ? plan::PlanToJson(**p) : plan::PlanToText(**p);
  }
  driver::Args a;
  a.options["--target"] = {options.target};
  a.options["--level"] = {options.level};
  a.options["--precision"] = {options.precision};
  a.options["--format"] = {options.format};
  if (!options.calibration.empty()) a.options["--calibration"] = {options.calibration};
  absl::StatusOr<std::string> out = driver::InspectModel(a, path);
  if (!out.ok()) return FromAbsl(out.status());
  return *std::move(out);
}

Result<std::shared_ptr<const Plan>> CompileBytes(const void* model, size_t size, const CompileOptions& options,
                                                 const std::string& name) {
  if (!model && size > 0) return Status(StatusCode::kInvalidArgument, "no model bytes");
  absl::StatusOr<driver::Args> args = ArgsOf(options);
  if (!args.ok()) return FromAbsl(args.status());
  const std::string bytes(static_cast<const char*>(model), size);
  return ToPublic(driver::CompileModelBytes(*args, bytes, name));
}

}  // namespace gcomp
