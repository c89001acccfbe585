// The gcomp command-line tool: one subcommand per file (cmd_*.cc).
#include <exception>
#include <iostream>
#include <string>

#include "tools/cli.h"

namespace {

constexpr const char* kUsage = R"(usage: gcomp <command> [options]

commands:
  compile MODEL.onnx -o OUT.gplan [--target cpu|cuda|cuda:sm_90|cuda:sm_80] [--precision P] [--level L] [--batch N]
                             [--keep-fp32 REGEX] [--calibration DIR] [--max-rel-error E] [--tune] [--explain]
                             [--passes a,b]   (a pass list instead of the level's)
                             [--exclude-kernels ID,...]   (kernel entries not to select)
  inspect MODEL.onnx|PLAN [--target T] [--level L] [--format text|dot|json|html] [--summary] [--explain] [-o FILE]
                             [--precision P] [--keep-fp32 REGEX] [--calibration DIR] [--passes a,b]
                             [--device-code DIR]   (a plan: write its generated kernels, cubin and PTX)
  opt MODEL.onnx --passes=a,b [--print-after=PASS] [--print-after-all] [--verify-each] [--time-passes] [--explain]
  run PLAN|MODEL.onnx --input NAME=FILE.pb ... [--target ref|cpu|cuda] [--level L] [--precision P] [--output-dir DIR]
                             [--batch N] [--threads N] [--batch-part N] [--reference]
  check CASE_DIR [--target ref|cpu|cuda] [--level L] [--precision P] [--rtol R] [--atol A] [--batch N] [--reference]
                             [--exclude-kernels ID,...]
  bench PLAN|MODEL.onnx [--target cpu|cuda] [--precision P] [--batch N] [--threads N] [--warmup N] [--iterations N]
                             [--batch-part N] [--profile] [--profile-top N] [--json]

exit codes: 0 ok, 1 a check mismatched, 2 bad usage or invalid/unsupported model, 3 internal error
)";

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
      std::cout << kUsage;
      return argc < 2 ? gcomp::cli::kBadInput : gcomp::cli::kOk;
    }
    std::string cmd = argv[1];
    if (cmd == "inspect") return gcomp::cli::Inspect(argc, argv);
    if (cmd == "run") return gcomp::cli::Run(argc, argv);
    if (cmd == "check") return gcomp::cli::Check(argc, argv);
    if (cmd == "opt") return gcomp::cli::Opt(argc, argv);
    if (cmd == "compile") return gcomp::cli::Compile(argc, argv);
    if (cmd == "bench") return gcomp::cli::Bench(argc, argv);
    std::cerr << "gcomp: unknown command '" << cmd << "'\n" << kUsage;
    return gcomp::cli::kBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "gcomp: internal error: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "gcomp: internal error: " << e.what() << "\n";
  }
  return gcomp::cli::kInternal;
}
