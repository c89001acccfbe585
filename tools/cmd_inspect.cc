// gcomp inspect MODEL.onnx [--level O0] [--format text|dot|json] [--summary] [-o FILE]
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "graph/printer.h"
#include "tools/cli.h"

namespace gcomp::cli {

int Inspect(int argc, char** argv) {
  auto args = ParseArgs(argc, argv, 2, {"--level", "--format", "-o", "--target"}, {"--summary"});
  if (!args.ok()) return Report(args.status());
  if (args->positional.size() != 1) return Report(absl::InvalidArgumentError("inspect takes one MODEL.onnx"));
  if (absl::Status s = CheckTargetAndLevel(*args, true); !s.ok()) return Report(s);
  std::string format = args->Get("--format", "text");
  if (format != "text" && format != "dot" && format != "json") {
    return Report(absl::InvalidArgumentError(absl::StrCat("unknown format '", format, "', expected text, dot or json")));
  }
  auto graph = LoadModel(args->positional[0]);
  if (!graph.ok()) return Report(graph.status());
  std::string out;
  if (args->Has("--summary")) {
    out = PrintSummary(**graph);
  } else if (format == "dot") {
    out = GraphToDot(**graph);
  } else if (format == "json") {
    out = GraphToJson(**graph);
  } else {
    out = PrintGraph(**graph);
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
