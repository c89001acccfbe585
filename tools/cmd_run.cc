// gcomp run PLAN|MODEL.onnx --input NAME=FILE.pb ... [--target ref|cpu] [--level L] [--precision P]
//           [--keep-fp32 REGEX] [--calibration DIR] [--batch N] [--output-dir DIR] [--reference]
//           [--batch-part N] [--threads N]
// --target ref (the default for a model): the reference interpreter, which emulates each node's
// storage precision. --target cpu (the default for a plan): the cpu runtime, on the plan or on the
// model compiled in memory (O3 unless --level). --batch-part N: the cpu runtime runs the batch in
// parts of N images (0, the default: parts whose arena fits in the last-level cache). --threads N:
// the cpu runtime's thread count (default: the machine's).
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/tensor_proto.h"
#include "tools/executable.h"

namespace gcomp::cli {

int Run(int argc, char** argv) {
  auto args = ParseArgs(argc, argv, 2,
                        {"--input", "--target", "--output-dir", "--precision", "--keep-fp32", "--level", "--passes",
                         "--calibration", "--batch", "--batch-part", "--threads"},
                        {"--reference"});
  if (!args.ok()) return Report(args.status());
  if (args->positional.size() != 1) return Report(absl::InvalidArgumentError("run takes one PLAN or MODEL.onnx"));
  // --reference, or an explicit --passes list: the graph lowered for --target runs on the reference
  // interpreter (lowering tests).
  const bool any_target = args->Has("--reference") || args->Has("--passes");
  DefaultLevelForModel(*args, args->positional[0]);
  if (absl::Status s = CheckTargetAndLevel(*args, true, any_target); !s.ok()) return Report(s);
  int threads = DefaultThreads();
  if (args->Has("--threads") && (!absl::SimpleAtoi(args->Get("--threads"), &threads) || threads < 1 || threads > 256)) {
    return Report(
        absl::InvalidArgumentError(absl::StrCat("--threads '", args->Get("--threads"), "', expected 1..256")));
  }
  auto exe = Executable::Open(*args, args->positional[0], threads);
  if (!exe.ok()) return Report(exe.status());
  std::map<std::string, Tensor> feeds;
  for (const std::string& spec : args->All("--input")) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Report(absl::InvalidArgumentError(absl::StrCat("--input '", spec, "' is not NAME=FILE.pb")));
    }
    auto t = frontend::ReadTensorFile(spec.substr(eq + 1));
    if (!t.ok()) return Report(t.status());
    feeds[spec.substr(0, eq)] = std::move(*t);
  }
  auto outputs = (*exe)->Run(feeds);
  if (!outputs.ok()) return Report(outputs.status());
  std::string dir = args->Get("--output-dir", ".");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const auto& outs = (*exe)->outputs();
  for (size_t k = 0; k < outs.size(); ++k) {
    const Tensor& t = (*outputs)[k];
    std::string path = absl::StrCat(dir, "/output_", k, ".pb");
    if (absl::Status s = frontend::WriteTensorFile(path, outs[k].name, t); !s.ok()) return Report(s);
    std::cout << "output " << k << " '" << outs[k].name << "' " << DTypeName(t.dtype()) << "["
              << absl::StrJoin(t.dims(), ",") << "] -> " << path << "\n";
  }
  return kOk;
}

}  // namespace gcomp::cli
