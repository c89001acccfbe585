// gcomp opt MODEL.onnx --passes=a,b [--print-after=PASS] [--print-after-all] [--verify-each]
//           [--time-passes] [--explain] [--precision P] [--keep-fp32 REGEX] [-o FILE]
// Runs chosen passes and prints the resulting IR (golden tests compare it).
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "graph/printer.h"
#include "passes/pass_manager.h"
#include "tools/cli.h"

namespace gcomp::cli {

int Opt(int argc, char** argv) {
  auto args = ParseArgs(argc, argv, 2, {"--passes", "--print-after", "-o", "--target", "--precision", "--keep-fp32", "--calibration"},
                        {"--print-after-all", "--verify-each", "--time-passes", "--explain"});
  if (!args.ok()) return Report(args.status());
  if (args->positional.size() != 1) return Report(absl::InvalidArgumentError("opt takes one MODEL.onnx"));
  if (!args->Has("--passes")) {
    std::string names;
    for (const passes::PassInfo& p : passes::AllPasses()) absl::StrAppend(&names, "\n  ", p.name, ": ", p.summary);
    return Report(absl::InvalidArgumentError(absl::StrCat("opt needs --passes=a,b; passes:", names)));
  }
  std::vector<std::string> names = absl::StrSplit(args->Get("--passes"), ',', absl::SkipEmpty());
  for (const std::string& n : names) {
    if (!passes::FindPass(n)) return Report(absl::InvalidArgumentError(absl::StrCat("unknown pass '", n, "'")));
  }
  auto po = PassOptionsFromArgs(*args);  // --precision and --keep-fp32 are read by assign-precision
  if (!po.ok()) return Report(po.status());
  auto graph = LoadModel(args->positional[0]);
  if (!graph.ok()) return Report(graph.status());
  if (po->precision == "fp8") {
    auto cal = LoadCalibration(po->calibration_dir, **graph);
    if (!cal.ok()) return Report(cal.status());
    po->calibration = std::move(*cal);
  }
  passes::PassContext ctx(*po);
  passes::RunOptions ro;
  ro.verify_each = args->Has("--verify-each");
  ro.print_after = args->Get("--print-after");
  ro.print_after_all = args->Has("--print-after-all");
  ro.time_passes = args->Has("--time-passes");
  ro.log = &std::cerr;
  if (absl::Status s = passes::RunPasses(**graph, names, ctx, ro); !s.ok()) return Report(s);
  std::string out = PrintGraph(**graph);
  if (po->explain) {
    out += "// ---- rules that did not fire ----\n";
    for (const std::string& e : ctx.explanations()) absl::StrAppend(&out, "// ", e, "\n");
  }
  if (args->Has("-o")) {
    std::ofstream f(args->Get("-o"));
    if (!(f << out)) return Report(absl::PermissionDeniedError(absl::StrCat(args->Get("-o"), ": cannot write file")));
  } else {
    std::cout << out;
  }
  return kOk;
}

}  // namespace gcomp::cli
