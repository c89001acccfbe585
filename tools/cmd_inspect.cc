// gcomp inspect PLAN [--format text|json] [-o FILE] [--device-code DIR]: the plan's header, memory
// figures and steps; --device-code writes each module of the kernels section as DIR/NAME.cubin and
// DIR/NAME.ptx (for cuobjdump and ptxas).
// gcomp inspect MODEL.onnx [--level O0|O1|O2] [--precision P] [--keep-fp32 REGEX] [--format text|dot|json|html] [--summary] [--explain] [-o FILE]
#include <fstream>
#include <iostream>

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "plan/plan_file.h"
#include "plan/plan_printer.h"
#include "graph/printer.h"
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
  if (absl::Status s = CheckTargetAndLevel(*args, true, /*any_target=*/true); !s.ok()) return Report(s);
  if (format != "text" && format != "dot" && format != "json" && format != "html") {
    return Report(
        absl::InvalidArgumentError(absl::StrCat("unknown format '", format, "', expected text, dot, json or html")));
  }
  auto model = LoadAndOptimize(*args, args->positional[0]);
  if (!model.ok()) return Report(model.status());
  const Graph& graph = *model->graph;
  std::string out;
  if (args->Has("--summary")) {
    out = PrintSummary(graph);
    absl::StrAppend(&out, "  level ", args->Get("--level", "O0"), ": ", model->nodes_before, " nodes before, ",
                    graph.num_nodes(), " after\n");
    std::map<std::string, int> after;
    for (const Node* n : graph.nodes()) ++after[n->op];
    std::set<std::string> ops;
    for (const auto& [op, c] : model->ops_before) ops.insert(op);
    for (const auto& [op, c] : after) ops.insert(op);
    out += "  op counts (before -> after):\n";
    for (const std::string& op : ops) {
      int b = model->ops_before.count(op) ? model->ops_before.at(op) : 0;
      int a = after.count(op) ? after.at(op) : 0;
      if (a != b) absl::StrAppend(&out, absl::StrFormat("    %-20s %5d -> %d\n", op, b, a));
    }
  } else if (format == "dot") {
    out = GraphToDot(graph);
  } else if (format == "html") {
    // Title: the model file with its folder ("tv_vit_b_16/model.onnx at O2").
    const std::string& path = args->positional[0];
    size_t slash = path.find_last_of('/');
    size_t from = slash == std::string::npos || slash == 0 ? 0 : path.find_last_of('/', slash - 1);
    std::string name = path.substr(from == std::string::npos ? 0 : from + 1);
    out = GraphToHtml(graph, absl::StrCat(name, " at ", args->Get("--level", "O0")));
  } else if (format == "json") {
    out = GraphToJson(graph);
  } else {
    out = PrintGraph(graph);
  }
  if (args->Has("--explain") && format == "html" && !args->Has("--summary")) {
    out += "<!-- rules that did not fire:\n";
    for (const std::string& e : model->explanations) {
      absl::StrAppend(&out, absl::StrReplaceAll(e, {{"--", "- -"}}), "\n");
    }
    out += "-->\n";
  } else if (args->Has("--explain")) {
    out += "// ---- rules that did not fire ----\n";
    for (const std::string& e : model->explanations) absl::StrAppend(&out, "// ", e, "\n");
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
