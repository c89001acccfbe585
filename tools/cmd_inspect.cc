// gcomp inspect PLAN [--format text|json] [-o FILE] [--device-code DIR]: the plan's header, memory
// figures and steps; --device-code writes each module of the kernels section as DIR/NAME.cubin and
// DIR/NAME.ptx (for cuobjdump and ptxas).
// gcomp inspect MODEL.onnx [--level O0|O1|O2] [--precision P] [--keep-fp32 REGEX] [--format text|dot|json|html] [--summary] [--explain] [-o FILE]
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "plan/plan_file.h"
#include "plan/plan_printer.h"
#include "tools/cli.h"

namespace gcomp::cli {

int Inspect(int argc, char** argv) {
  auto args = ParseArgs(argc, argv, 2, {"--level", "--format", "-o", "--target", "--passes", "--precision", "--keep-fp32", "--calibration", "--device-code"}, {"--summary", "--explain"});
  if (!args.ok()) return Report(args.status());
  if (args->positional.size() != 1) return Report(absl::InvalidArgumentError("inspect takes one MODEL.onnx or PLAN"));
  std::string format = args->Get("--format", "text");
  if (plan::LooksLikePlan(args->positional[0])) {
    for (const char* opt : {"--level", "--target", "--passes", "--precision", "--keep-fp32", "--calibration"}) {
      if (args->Has(opt)) {
        return Report(absl::InvalidArgumentError(absl::StrCat(opt, " does not apply to a plan (", args->positional[0],
                                                              " is a compiled plan)")));
      }
    }
    if (format != "text" && format != "json") {
      return Report(absl::InvalidArgumentError(absl::StrCat("a plan prints as text or json, not '", format, "'")));
    }
    auto plan = plan::ReadPlanFile(args->positional[0]);
    if (!plan.ok()) return Report(plan.status());
    if (args->Has("--device-code")) {
      const std::string dir = args->Get("--device-code");
      for (const plan::DeviceCode& c : (*plan)->device_code) {
        for (const auto& [ext, bytes] : {std::pair{".cubin", &c.cubin}, std::pair{".ptx", &c.ptx}}) {
          const std::string path = absl::StrCat(dir, "/", c.name, ext);
          std::ofstream f(path, std::ios::binary);
          if (!(f << *bytes)) return Report(absl::PermissionDeniedError(absl::StrCat(path, ": cannot write file")));
        }
      }
    }
    std::string text = format == "json" ? plan::PlanToJson(**plan) : plan::PlanToText(**plan);
    if (args->Has("-o")) {
      std::ofstream f(args->Get("-o"));
      if (!(f << text)) return Report(absl::PermissionDeniedError(absl::StrCat(args->Get("-o"), ": cannot write file")));
    } else {
      std::cout << text;
    }
    return kOk;
  }
  auto out = driver::InspectModel(*args, args->positional[0]);
  if (!out.ok()) return Report(out.status());
  if (args->Has("-o")) {
    std::ofstream f(args->Get("-o"));
    if (!(f << *out)) return Report(absl::PermissionDeniedError(absl::StrCat(args->Get("-o"), ": cannot write file")));
  } else {
    std::cout << *out;
  }
  return kOk;
}

}  // namespace gcomp::cli
